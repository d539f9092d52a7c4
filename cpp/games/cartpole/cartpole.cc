// CartPole, with the dynamics of Gymnasium's CartPole-v1: the same constants,
// Euler integration, termination at |x| > 2.4 or |theta| > 12 degrees, reward
// 1 per step, and truncation after `max_steps` (500) steps. The state is kept
// in double precision, as Gymnasium does; reset draws it uniformly in
// [-0.05, 0.05] and rounds it to float32 so the first observation is exact.
#include <array>
#include <cmath>
#include <limits>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class CartPole : public Game {
 public:
  struct Config {
    int max_steps = 500;
    Key<float> s;
    Key<int64_t> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.max_steps = spec.Option("max_steps", 500, "steps before an episode is truncated");
    if (config.max_steps < 1) throw std::invalid_argument("option 'max_steps' must be >= 1");
    // Gymnasium's bounds: twice the termination thresholds, the velocities unbounded.
    const double inf = std::numeric_limits<double>::infinity();
    config.s = spec.Observation<float>("s", {4}, {-2 * kXThreshold, -inf, -2 * kThetaThreshold, -inf},
                                       {2 * kXThreshold, inf, 2 * kThetaThreshold, inf},
                                       "cart position, cart velocity, pole angle, pole angular velocity");
    config.a = spec.DiscreteAction("a", 2, "push the cart left (0) or right (1)");
    return config;
  }

  explicit CartPole(const Config& config) : config_(config) {}

  void Reset(Rng& rng) override {
    for (double& value : state_) value = static_cast<float>(rng.Uniform(-0.05, 0.05));
    steps_ = 0;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    for (int i = 0; i < 4; ++i) s[i] = static_cast<float>(state_[i]);
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const double force = replies[0].Scalar(config_.a) == 1 ? kForceMag : -kForceMag;
    auto& [x, x_dot, theta, theta_dot] = state_;
    const double cos_theta = std::cos(theta);
    const double sin_theta = std::sin(theta);
    // Grouped exactly as Gymnasium writes it (square first), so both round alike.
    const double temp = (force + kPoleMassLength * (theta_dot * theta_dot) * sin_theta) / kTotalMass;
    const double theta_acc = (kGravity * sin_theta - cos_theta * temp) /
                             (kLength * (4.0 / 3.0 - kMassPole * (cos_theta * cos_theta) / kTotalMass));
    const double x_acc = temp - kPoleMassLength * theta_acc * cos_theta / kTotalMass;
    x = x + kTau * x_dot;
    x_dot = x_dot + kTau * x_acc;
    theta = theta + kTau * theta_dot;
    theta_dot = theta_dot + kTau * theta_acc;
    ++steps_;
    Outcome outcome;
    outcome.terminated = x < -kXThreshold || x > kXThreshold || theta < -kThetaThreshold || theta > kThetaThreshold;
    outcome.truncated = steps_ >= config_.max_steps;
    return outcome;
  }

  float Reward(int) const override { return 1.0f; }

 private:
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;
  static constexpr double kThetaThreshold = 12 * 2 * M_PI / 360;
  static constexpr double kXThreshold = 2.4;

  Config config_;
  std::array<double, 4> state_{};
  int steps_ = 0;
};

ELF_REGISTER_GAME("cartpole", CartPole);

}  // namespace elf::games
