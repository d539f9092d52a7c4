// MountainCarContinuous, with the dynamics of Gymnasium's
// MountainCarContinuous-v0 step for step: force = clip(a, -1, 1), velocity +=
// 0.0015 force - 0.0025 cos(3 position) clipped to [-0.07, 0.07], position +=
// velocity clipped to [-1.2, 0.6] (velocity zeroed at the left wall),
// termination at position >= 0.45 with velocity >= 0, reward 100 on reaching
// the goal minus 0.1 a^2 (of the action as replied, unclipped, as Gymnasium
// does), and truncation after `max_steps` (999) steps. The game clips the
// action itself (the platform's rule for Box actions); a NaN action is an
// error. Gymnasium keeps the state in float32 and NumPy computes the step in
// float32 arithmetic, except that a clipped force is a Python float; both are
// reproduced so equal states give equal rows. Reset draws the position in
// [-0.6, -0.4] (rounded to float32) with velocity 0.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class MountainCarContinuous : public Game {
 public:
  struct Config {
    int max_steps = 999;
    Key<float> s;
    Key<float> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.max_steps = spec.Option("max_steps", 999, "steps before an episode is truncated");
    if (config.max_steps < 1) throw std::invalid_argument("option 'max_steps' must be >= 1");
    config.s = spec.Observation<float>("s", {2}, {kMinPosition, -kMaxSpeed}, {kMaxPosition, kMaxSpeed},
                                       "car position, car velocity");
    config.a = spec.ContinuousAction("a", {1}, -1.0, 1.0, "force, clipped to [-1, 1] by the game");
    return config;
  }

  explicit MountainCarContinuous(const Config& config) : config_(config) {}

  void Reset(Rng& rng) override {
    position_ = static_cast<float>(rng.Uniform(-0.6, -0.4));
    velocity_ = 0.0f;
    steps_ = 0;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = position_;
    s[1] = velocity_;
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const float action = replies[0].Scalar(config_.a);
    if (std::isnan(action)) throw std::invalid_argument("mountain_car_continuous: action 'a' is NaN");
    const double slope = 0.0025 * std::cos(static_cast<double>(3.0f * position_));
    float change;
    if (action < -1.0f || action > 1.0f) {  // Gymnasium's clipped force is a Python float: double arithmetic
      const double force = action < -1.0f ? -1.0 : 1.0;
      change = static_cast<float>(force * kPower - slope);
    } else {
      change = action * static_cast<float>(kPower) - static_cast<float>(slope);
    }
    velocity_ = std::clamp(velocity_ + change, -kMaxSpeed, kMaxSpeed);
    position_ = std::clamp(position_ + velocity_, kMinPosition, kMaxPosition);
    if (position_ == kMinPosition && velocity_ < 0.0f) velocity_ = 0.0f;
    ++steps_;
    const bool reached = position_ >= kGoalPosition && velocity_ >= 0.0f;
    const double action_d = action;
    reward_ = (reached ? 100.0 : 0.0) - action_d * action_d * 0.1;
    return {/*terminated=*/reached, /*truncated=*/steps_ >= config_.max_steps};
  }

  float Reward(int) const override { return static_cast<float>(reward_); }

 private:
  static constexpr double kPower = 0.0015;
  static constexpr float kMaxSpeed = 0.07f;
  static constexpr float kMinPosition = -1.2f;
  static constexpr float kMaxPosition = 0.6f;
  static constexpr float kGoalPosition = 0.45f;

  Config config_;
  float position_ = 0.0f;
  float velocity_ = 0.0f;
  double reward_ = 0.0;
  int steps_ = 0;
};

ELF_REGISTER_GAME("mountain_car_continuous", MountainCarContinuous);

}  // namespace elf::games
