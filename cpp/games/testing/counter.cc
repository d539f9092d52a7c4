// Counter: a game for testing the engine, not for learning. Its observation
// is (a draw from the game's rng at reset, step in episode) and the game's
// total step count; the reward of the k-th step of an episode is
// k * (action + 1), and every episode of a game lasts the same number of
// steps (`episode_length` plus 0-2, drawn once per game), so each episode's
// true return is known in closed form. Option `fail_at_step` makes the game
// throw on that step, to test how failures reach Python; `nonfinite_at_step`
// makes it write a value the engine refuses on that step instead: a NaN
// reward (`nonfinite_key` "r") or an infinite s[1] ("s"). Option
// `step_cpu_ns` makes every step burn that much of its thread's CPU time, so
// that a test can give a batch a known amount of work on any machine.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "elf/clock.h"
#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Counter : public Game {
 public:
  struct Config {
    int episode_length = 5;
    int fail_at_step = -1;
    int nonfinite_at_step = -1;
    std::string nonfinite_key = "r";
    int num_actions = 3;
    int step_cpu_ns = 0;
    Key<float> s;
    Key<int64_t> count, a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.episode_length = spec.Option("episode_length", 5, "base episode length (each game adds 0-2, drawn once)");
    config.fail_at_step = spec.Option("fail_at_step", -1, "throw on this total step count (-1: never)");
    config.nonfinite_at_step =
        spec.Option("nonfinite_at_step", -1, "write a non-finite value on this total step count (-1: never)");
    config.nonfinite_key = spec.Option<std::string>(
        "nonfinite_key", "r", "what nonfinite_at_step spoils: 'r' (a NaN reward) or 's' (an infinite s[1])");
    if (config.nonfinite_key != "r" && config.nonfinite_key != "s") {
      throw std::invalid_argument("nonfinite_key must be 'r' or 's', got '" + config.nonfinite_key + "'");
    }
    config.num_actions = spec.Option("num_actions", 3, "number of discrete actions");
    config.step_cpu_ns = spec.Option("step_cpu_ns", 0, "thread CPU time every step burns, in ns");
    if (config.step_cpu_ns < 0) {
      throw std::invalid_argument("step_cpu_ns must be 0 or more, got " + std::to_string(config.step_cpu_ns));
    }
    config.s = spec.Observation<float>("s", {2}, "(draw from the game's rng at reset, step within the episode)");
    config.count = spec.Observation<int64_t>("count", {}, "total steps taken by this game");
    config.a = spec.DiscreteAction("a", config.num_actions, "any action; reward scales with it");
    return config;
  }

  explicit Counter(const Config& config) : config_(config) {}

  void Reset(Rng& rng) override {
    episode_step_ = 0;
    draw_ = static_cast<float>(rng.Uniform());
    if (length_ == 0) length_ = config_.episode_length + static_cast<int>(rng.Below(3));
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = draw_;
    s[1] = static_cast<float>(episode_step_);
    if (Spoils("s")) s[1] = std::numeric_limits<float>::infinity();
    *row.Get(config_.count) = total_steps_;
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    ++total_steps_;
    if (config_.step_cpu_ns > 0) BurnThreadCpu(config_.step_cpu_ns);
    if (total_steps_ == config_.fail_at_step) {
      throw std::runtime_error("counter failed on purpose at step " + std::to_string(total_steps_));
    }
    ++episode_step_;
    reward_ = static_cast<float>(episode_step_ * (replies[0].Scalar(config_.a) + 1));
    if (Spoils("r")) reward_ = std::numeric_limits<float>::quiet_NaN();
    Outcome outcome;
    outcome.terminated = episode_step_ >= length_;
    return outcome;
  }

  float Reward(int) const override { return reward_; }

 private:
  // Spins on the thread's CPU clock, not the wall clock: time the thread
  // spends preempted on a loaded machine does not count.
  static void BurnThreadCpu(int64_t ns) {
    const int64_t until = ThreadCpuNs() + ns;
    while (ThreadCpuNs() < until) {
    }
  }

  // Whether this step writes a non-finite value into `key`.
  bool Spoils(const char* key) const {
    return total_steps_ == config_.nonfinite_at_step && config_.nonfinite_key == key;
  }

  Config config_;
  int length_ = 0;
  int episode_step_ = 0;
  int64_t total_steps_ = 0;
  float draw_ = 0.0f;
  float reward_ = 0.0f;
};

ELF_REGISTER_GAME("counter", Counter);

}  // namespace elf::games
