// Pendulum (cpp/games/pendulum): one step worked by hand from the state the
// first observation shows, the game's own clipping of the torque, the
// 200-step truncation, the options, and a NaN torque as an error. The match
// with Gymnasium's Pendulum-v1 over whole episodes is tests/continuous.
#include <cmath>
#include <stdexcept>

#include "check.h"
#include "single_game.h"

using elf::Options;
using elf::testing::OneOption;
using elf::testing::SingleGame;

namespace {

bool Near(double a, double b, double tolerance = 1e-5) { return std::fabs(a - b) <= tolerance; }

}  // namespace

TEST(one_step_follows_the_equations_with_the_torque_clipped_to_two) {
  SingleGame game("pendulum", Options(), 3);
  const float* s = game.Get<float>("s");
  const double theta = std::atan2(s[1], s[0]);
  const double theta_dot = s[2];
  CHECK(Near(s[0] * s[0] + s[1] * s[1], 1.0));
  CHECK(std::fabs(theta_dot) <= 1.0);
  game.Step({5.0f});  // clipped to 2
  // thdot' = thdot + (3 g / 2 l sin(th) + 3 u / (m l^2)) dt = thdot + (15 sin(th) + 6) 0.05
  const double next_dot = theta_dot + (15.0 * std::sin(theta) + 6.0) * 0.05;
  const double next_theta = theta + next_dot * 0.05;
  CHECK(Near(s[2], next_dot));
  CHECK(Near(s[0], std::cos(next_theta)));
  CHECK(Near(s[1], std::sin(next_theta)));
  // r = -(th^2 + 0.1 thdot^2 + 0.001 u^2) of the state before the step, u clipped.
  CHECK(Near(game.reward(), -(theta * theta + 0.1 * theta_dot * theta_dot + 0.004)));
}

TEST(velocity_is_clipped_to_eight_and_the_angle_normalised_in_the_reward) {
  SingleGame game("pendulum", Options(), 1);
  const float* s = game.Get<float>("s");
  for (int i = 0; i < 150; ++i) {
    game.Step({s[2] >= 0 ? 2.0f : -2.0f});  // pump energy: the pendulum spins faster and faster
    CHECK(std::fabs(s[2]) <= 8.0f);
    CHECK(game.reward() <= 0.0f && game.reward() >= -16.2736045f);  // -(pi^2 + 0.1 8^2 + 0.001 2^2)
  }
  CHECK(Near(std::fabs(s[2]), 8.0));
}

TEST(episodes_are_truncated_after_max_steps_and_never_terminate) {
  SingleGame game("pendulum", Options(), 2);
  for (int step = 1; step <= 400; ++step) {
    const elf::Outcome outcome = game.Step({0.0f});
    CHECK(!outcome.terminated);
    CHECK_EQ(outcome.truncated, step % 200 == 0);
  }
  SingleGame short_game("pendulum", OneOption("max_steps", "3"), 2);
  CHECK(!short_game.Step({0.0f}).truncated);
  CHECK(!short_game.Step({0.0f}).truncated);
  CHECK(short_game.Step({0.0f}).truncated);
}

TEST(gravity_option_changes_the_swing_and_bad_options_are_rejected) {
  SingleGame light("pendulum", OneOption("g", "0"), 4);
  const float dot = light.Get<float>("s")[2];
  light.Step({1.0f});
  CHECK(Near(light.Get<float>("s")[2], dot + 3.0 * 0.05));  // only the torque accelerates
  CHECK_THROWS(SingleGame("pendulum", OneOption("max_steps", "0")), std::invalid_argument, "max_steps");
  CHECK_THROWS(SingleGame("pendulum", OneOption("gravity", "9.8")), std::invalid_argument,
               "unknown game option 'gravity'");
}

TEST(action_spec_is_a_box_of_one_torque_in_plus_minus_two) {
  SingleGame game("pendulum");
  const elf::KeySpec& a = game.spec().keys[1];
  CHECK_EQ(a.name, std::string("a"));
  CHECK(a.role == elf::KeyRole::kAction && a.dtype == elf::DType::kFloat32);
  CHECK_EQ(a.shape.size(), std::size_t{1});
  CHECK(a.bounds && a.bounds->first == -2.0 && a.bounds->second == 2.0);
}

TEST(nan_torque_is_an_error) {
  SingleGame game("pendulum");
  CHECK_THROWS(game.Step({std::nanf("")}), std::invalid_argument, "NaN");
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
