// Pendulum, with the dynamics of Gymnasium's Pendulum-v1 step for step: the
// same constants, semi-implicit Euler integration, the angular velocity
// clipped to [-8, 8], the reward -(angle^2 + 0.1 thdot^2 + 0.001 u^2) of the
// state before the step (angle normalised to [-pi, pi)), no termination, and
// truncation after `max_steps` (200) steps. The torque `a` is clipped to
// [-2, 2] by the game itself, as Gymnasium does (the platform's rule for Box
// actions: the game clips); a NaN torque is an error. The state is kept in
// double precision as Gymnasium does, and the torque terms are computed in
// float32 as NumPy does with a float32 action. Reset draws the angle in
// [-pi, pi] and the velocity in [-1, 1], rounded to float32.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Pendulum : public Game {
 public:
  struct Config {
    int max_steps = 200;
    double gravity = 10.0;
    Key<float> s;
    Key<float> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.max_steps = spec.Option("max_steps", 200, "steps before an episode is truncated");
    if (config.max_steps < 1) throw std::invalid_argument("option 'max_steps' must be >= 1");
    config.gravity = spec.Option("g", 10.0, "acceleration of gravity (Gymnasium's g)");
    config.s = spec.Observation<float>("s", {3}, {-1.0, -1.0, -kMaxSpeed}, {1.0, 1.0, kMaxSpeed},
                                       "cos(angle), sin(angle), angular velocity (angle 0: upright)");
    config.a = spec.ContinuousAction("a", {1}, -kMaxTorque, kMaxTorque, "torque, clipped to [-2, 2] by the game");
    return config;
  }

  explicit Pendulum(const Config& config) : config_(config) {}

  void Reset(Rng& rng) override {
    theta_ = static_cast<float>(rng.Uniform(-M_PI, M_PI));
    theta_dot_ = static_cast<float>(rng.Uniform(-1.0, 1.0));
    steps_ = 0;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = static_cast<float>(std::cos(theta_));
    s[1] = static_cast<float>(std::sin(theta_));
    s[2] = static_cast<float>(theta_dot_);
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const float torque = replies[0].Scalar(config_.a);
    if (std::isnan(torque)) throw std::invalid_argument("pendulum: torque 'a' is NaN");
    const float u = std::clamp(torque, -kMaxTorque, kMaxTorque);
    const double angle = NormalizedAngle(theta_);
    // u * u and 3 u are float32 products in NumPy (a float32 action times Python floats).
    const float u_cost = 0.001f * (u * u);
    cost_ = angle * angle + 0.1 * (theta_dot_ * theta_dot_) + static_cast<double>(u_cost);
    const float u_accel = 3.0f * u;  // 3 / (m l^2) u
    double theta_dot = theta_dot_ + (3.0 * config_.gravity / 2.0 * std::sin(theta_) + u_accel) * kDt;
    theta_dot = std::clamp(theta_dot, -kMaxSpeed, kMaxSpeed);
    theta_ = theta_ + theta_dot * kDt;
    theta_dot_ = theta_dot;
    ++steps_;
    return {/*terminated=*/false, /*truncated=*/steps_ >= config_.max_steps};
  }

  float Reward(int) const override { return static_cast<float>(-cost_); }

 private:
  static constexpr float kMaxTorque = 2.0f;
  static constexpr double kMaxSpeed = 8.0;
  static constexpr double kDt = 0.05;

  // Gymnasium's angle_normalize: ((x + pi) mod 2 pi) - pi, with Python's
  // floored modulo (the result takes the sign of the divisor).
  static double NormalizedAngle(double x) {
    double wrapped = std::fmod(x + M_PI, 2.0 * M_PI);
    if (wrapped < 0) wrapped += 2.0 * M_PI;
    return wrapped - M_PI;
  }

  Config config_;
  double theta_ = 0.0;
  double theta_dot_ = 0.0;
  double cost_ = 0.0;
  int steps_ = 0;
};

ELF_REGISTER_GAME("pendulum", Pendulum);

}  // namespace elf::games
