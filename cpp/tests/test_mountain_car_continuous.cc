// MountainCarContinuous (cpp/games/mountain_car_continuous): one step worked
// by hand, the reward on the unclipped action, the left wall, reaching the
// goal, the 999-step truncation and a NaN action as an error. The match with
// Gymnasium's MountainCarContinuous-v0 over whole episodes is tests/continuous.
#include <cmath>
#include <stdexcept>

#include "check.h"
#include "single_game.h"

using elf::Options;
using elf::testing::OneOption;
using elf::testing::SingleGame;

namespace {

bool Near(double a, double b, double tolerance = 1e-6) { return std::fabs(a - b) <= tolerance; }

}  // namespace

TEST(one_step_follows_the_equations_and_the_reward_charges_the_unclipped_action) {
  SingleGame game("mountain_car_continuous", Options(), 5);
  const float* s = game.Get<float>("s");
  const double position = s[0];
  CHECK(position >= -0.6 && position <= -0.4);
  CHECK_EQ(s[1], 0.0f);
  game.Step({2.0f});  // force clipped to 1; the reward still charges 0.1 * 2^2
  const double velocity = 0.0015 * 1.0 - 0.0025 * std::cos(3.0 * position);
  CHECK(Near(s[1], velocity));
  CHECK(Near(s[0], position + velocity));
  CHECK(Near(game.reward(), -0.4));
  game.Step({-0.5f});
  CHECK(Near(game.reward(), -0.025));
}

TEST(the_left_wall_stops_the_car_and_pushing_along_the_velocity_reaches_the_goal) {
  SingleGame game("mountain_car_continuous", Options(), 6);
  const float* s = game.Get<float>("s");
  bool hit_wall = false;
  for (int i = 0; i < 60 && !hit_wall; ++i) {
    game.Step({-1.0f});
    hit_wall = s[0] == -1.2f;
  }
  // Pushing left alone does not climb the left hill; swinging does.
  for (int i = 0; i < 200 && !hit_wall; ++i) {
    game.Step({s[1] < 0 ? -1.0f : 1.0f});
    hit_wall = s[0] == -1.2f;
  }
  CHECK(hit_wall);
  CHECK_EQ(s[1], 0.0f);  // velocity zeroed at the wall
  int steps = 0;
  bool reached = false;
  while (!reached && steps < 998) {
    const elf::Outcome outcome = game.Step({s[1] < 0 ? -1.0f : 1.0f});
    reached = outcome.terminated;
    ++steps;
  }
  CHECK(reached);
  CHECK(Near(game.reward(), 100.0 - 0.1, 1e-4));  // a float32 reward
  CHECK(s[0] >= -0.6f && s[0] <= -0.4f && s[1] == 0.0f);  // the next episode's first state
}

TEST(episodes_are_truncated_after_max_steps) {
  SingleGame game("mountain_car_continuous", Options(), 7);
  for (int step = 1; step <= 999; ++step) {
    const elf::Outcome outcome = game.Step({0.0f});  // without force the car never reaches the goal
    CHECK(!outcome.terminated);
    CHECK_EQ(outcome.truncated, step == 999);
  }
  SingleGame short_game("mountain_car_continuous", OneOption("max_steps", "2"), 7);
  CHECK(!short_game.Step({0.0f}).truncated);
  CHECK(short_game.Step({0.0f}).truncated);
}

TEST(nan_action_is_an_error) {
  SingleGame game("mountain_car_continuous");
  CHECK_THROWS(game.Step({std::nanf("")}), std::invalid_argument, "NaN");
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
