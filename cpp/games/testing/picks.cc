// Picks: a game for testing MultiDiscrete actions, not for learning. Each
// step the seat replies two picks, the first in [0, 3), the second in
// [0, 5); the game observes the picks it was given last (-1 before the
// first) and rewards their sum. An episode lasts `episode_length` steps.
#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Picks : public Game {
 public:
  struct Config {
    int episode_length = 4;
    Key<float> s;
    Key<int64_t> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.episode_length = spec.Option("episode_length", 4, "steps per episode");
    config.s = spec.Observation<float>("s", {2}, "the two picks replied last (-1 before the first)");
    config.a = spec.MultiDiscreteAction("a", {3, 5}, "two picks: one of 3, one of 5");
    return config;
  }

  explicit Picks(const Config& config) : config_(config) {}

  void Reset(Rng&) override {
    last_[0] = last_[1] = -1;
    step_ = 0;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = static_cast<float>(last_[0]);
    s[1] = static_cast<float>(last_[1]);
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const int64_t* a = replies[0].Get(config_.a);
    last_[0] = a[0];
    last_[1] = a[1];
    ++step_;
    Outcome outcome;
    outcome.terminated = step_ >= config_.episode_length;
    return outcome;
  }

  float Reward(int) const override { return static_cast<float>(last_[0] + last_[1]); }

 private:
  Config config_;
  int64_t last_[2] = {-1, -1};
  int step_ = 0;
};

ELF_REGISTER_GAME("picks", Picks);

}  // namespace elf::games
