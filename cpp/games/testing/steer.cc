// Steer: a game for testing Box actions, not for learning. A point on a line
// moves by the action `a` (float32 [2]: a move and a scale, each in [-1, 1])
// each step: position += clip(a[0]) * (1 + clip(a[1])) / 2. As Gymnasium
// environments do, the game clips each value to its bounds itself; the
// engine passes finite values unchanged and rejects NaN and infinities.
// It observes (position, the last move as applied) and rewards -|position|;
// an episode lasts `episode_length` steps.
#include <algorithm>
#include <cmath>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Steer : public Game {
 public:
  struct Config {
    int episode_length = 8;
    Key<float> s;
    Key<float> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.episode_length = spec.Option("episode_length", 8, "steps per episode");
    config.s = spec.Observation<float>("s", {2}, "(position, the last move as applied after clipping)");
    config.a = spec.ContinuousAction("a", {2}, -1.0, 1.0, "(move, scale); values outside [-1, 1] are clipped");
    return config;
  }

  explicit Steer(const Config& config) : config_(config) {}

  void Reset(Rng&) override {
    position_ = 0.0f;
    applied_ = 0.0f;
    step_ = 0;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = position_;
    s[1] = applied_;
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const float* a = replies[0].Get(config_.a);
    applied_ = std::clamp(a[0], -1.0f, 1.0f) * (1.0f + std::clamp(a[1], -1.0f, 1.0f)) / 2.0f;
    position_ += applied_;
    ++step_;
    Outcome outcome;
    outcome.terminated = step_ >= config_.episode_length;
    return outcome;
  }

  float Reward(int) const override { return -std::abs(position_); }

 private:
  Config config_;
  float position_ = 0.0f;
  float applied_ = 0.0f;
  int step_ = 0;
};

ELF_REGISTER_GAME("steer", Steer);

}  // namespace elf::games
