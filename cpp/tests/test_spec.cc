// SpecBuilder and GameSpec: what a game declares about its keys, seats and
// options, and the errors a user sees for options the game does not know.
#include "elf/spec.h"

#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "check.h"

using Values = std::map<std::string, std::string>;
#include "elf/registry.h"

using elf::DType;
using elf::KeyRole;
using elf::Options;
using elf::SpecBuilder;

TEST(builder_records_keys_in_declaration_order_with_roles_and_bounds) {
  const Options options;
  SpecBuilder spec(options);
  spec.Observation("s", DType::kFloat32, {4}, "state");
  spec.DiscreteAction("a", 3, "action");
  spec.ContinuousAction("force", {2}, -1.0, 1.0, "force");
  const elf::GameSpec game = spec.Finish();
  REQUIRE(game.keys.size() == 3);
  CHECK_EQ(game.keys[0].name, "s");
  CHECK(game.keys[0].role == KeyRole::kObservation);
  CHECK_EQ(game.keys[0].Bytes(), std::size_t{16});
  CHECK_EQ(game.keys[1].name, "a");
  CHECK(game.keys[1].role == KeyRole::kAction);
  CHECK(game.keys[1].dtype == DType::kInt64);
  CHECK(game.keys[1].shape.empty());
  REQUIRE(game.keys[1].bounds.has_value());
  CHECK_EQ(game.keys[1].bounds->first, 0.0);
  CHECK_EQ(game.keys[1].bounds->second, 2.0);
  CHECK(game.keys[1].IsReply());
  CHECK(!game.keys[0].IsReply());
  CHECK_EQ(game.keys[2].NumElements(), int64_t{2});
  CHECK(game.keys[2].dtype == DType::kFloat32);
  CHECK_EQ(game.num_seats, 1);
}

TEST(action_keys_state_their_space) {
  const Options options;
  SpecBuilder spec(options);
  spec.DiscreteAction("a", 3, "discrete");
  spec.MultiDiscreteAction("m", {2, 7, 4}, "three picks");
  spec.ContinuousAction("box", {2}, std::vector<double>{-1.0, 0.0}, std::vector<double>{1.0, 5.0}, "per element");
  spec.EpisodeStatistic<int32_t>("won", {}, "outcome");
  const elf::GameSpec game = spec.Finish();
  using Kind = elf::ActionSpace::Kind;
  CHECK(game.keys[0].space.kind == Kind::kDiscrete);
  CHECK(game.keys[0].space.nvec == std::vector<int64_t>{3});
  CHECK(game.keys[1].space.kind == Kind::kMultiDiscrete);
  CHECK(game.keys[1].space.nvec == (std::vector<int64_t>{2, 7, 4}));
  CHECK(game.keys[1].shape == std::vector<int64_t>{3});
  CHECK(game.keys[1].dtype == DType::kInt64);
  CHECK_EQ(game.keys[1].bounds->second, 6.0);  // the largest component's last value
  CHECK(game.keys[2].space.kind == Kind::kBox);
  CHECK(game.keys[2].space.high == (std::vector<double>{1.0, 5.0}));
  CHECK_EQ(game.keys[2].bounds->first, -1.0);
  CHECK_EQ(game.keys[2].bounds->second, 5.0);
  CHECK(game.keys[3].role == KeyRole::kStatistic);
  CHECK(game.keys[3].dtype == DType::kInt32);
  CHECK(game.keys[3].space.kind == Kind::kNone);
  CHECK(!game.keys[3].IsReply());
  SpecBuilder bad(options);
  CHECK_THROWS(bad.MultiDiscreteAction("m", {}, ""), std::invalid_argument, "at least one component");
  CHECK_THROWS(bad.MultiDiscreteAction("m", {2, 0}, ""), std::invalid_argument, "n >= 1");
  CHECK_THROWS(bad.ContinuousAction("b", {3}, std::vector<double>{0, 0}, std::vector<double>{1, 1}, ""),
               std::invalid_argument, "one per element (3)");
  CHECK_THROWS(bad.ContinuousAction("b", {1}, 1.0, 0.0, ""), std::invalid_argument, "low above its high");
}

TEST(an_observation_may_state_the_bounds_of_its_elements) {
  const Options options;
  SpecBuilder spec(options);
  const double inf = std::numeric_limits<double>::infinity();
  spec.Observation<float>("s", {2}, {-4.8, -inf}, {4.8, inf}, "bounded position, unbounded velocity");
  spec.Observation<uint8_t>("pixels", {3}, {0.0}, {255.0}, "an integer Box");
  spec.Observation<float>("free", {2}, "no bounds stated");
  const elf::GameSpec game = spec.Finish();
  using Kind = elf::ActionSpace::Kind;
  CHECK(game.keys[0].space.kind == Kind::kBox);
  CHECK(game.keys[0].space.low == (std::vector<double>{-4.8, -inf}));
  CHECK_EQ(game.keys[0].bounds->first, -inf);
  CHECK(game.keys[1].space.kind == Kind::kBox);
  CHECK_EQ(game.keys[1].bounds->second, 255.0);
  CHECK(game.keys[2].space.kind == Kind::kNone);
  CHECK(!game.keys[2].bounds.has_value());
  SpecBuilder bad(options);
  CHECK_THROWS(bad.Observation<float>("s", {3}, {0, 0}, {1, 1}, ""), std::invalid_argument,
               "observation 's' needs one low and one high, or one per element (3)");
  CHECK_THROWS(bad.Observation<bool>("b", {1}, {0}, {1}, ""), std::invalid_argument, "float dtype");
}

TEST(a_space_read_from_data_is_kept_per_component_and_checked) {
  elf::KeySpec multi{"a", DType::kInt64, {2}, "", KeyRole::kAction, std::nullopt};
  multi.space = {elf::ActionSpace::Kind::kMultiDiscrete, {3, 2}, {}, {}};
  elf::CompleteSpace(multi);
  CHECK(multi.space.nvec == (std::vector<int64_t>{3, 2}));
  CHECK_EQ(multi.bounds->second, 2.0);
  elf::KeySpec box{"a", DType::kFloat32, {2}, "", KeyRole::kAction, std::nullopt};
  box.space = {elf::ActionSpace::Kind::kBox, {}, {-1.0, -5.0}, {1.0, 5.0}};
  elf::CompleteSpace(box);
  CHECK(box.space.low == (std::vector<double>{-1.0, -5.0}));
  CHECK_EQ(box.bounds->first, -5.0);
  CHECK_EQ(box.bounds->second, 5.0);
  elf::KeySpec counts = multi;
  counts.space.nvec = {3, 2, 4};
  CHECK_THROWS(elf::CompleteSpace(counts), std::invalid_argument, "action 'a' needs one count per element (2), got 3");
  elf::KeySpec float_counts = multi;
  float_counts.dtype = DType::kFloat32;
  CHECK_THROWS(elf::CompleteSpace(float_counts), std::invalid_argument, "MultiDiscrete action needs an integer dtype");
  elf::KeySpec sizes = box;
  sizes.space.low = {-1.0, -5.0, 0.0};
  CHECK_THROWS(elf::CompleteSpace(sizes), std::invalid_argument, "one per element (2)");
  elf::KeySpec integer_box = box;
  integer_box.dtype = DType::kInt64;
  CHECK_THROWS(elf::CompleteSpace(integer_box), std::invalid_argument, "a Box action needs a float dtype, got int64");
  elf::KeySpec discrete{"a", DType::kInt64, {}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)};
  discrete.space = {elf::ActionSpace::Kind::kDiscrete, {4}, {}, {}};
  CHECK_THROWS(elf::CompleteSpace(discrete), std::invalid_argument, "do not span the Discrete space's 4 values");
  elf::KeySpec statistic{"won", DType::kInt64, {2}, "", KeyRole::kStatistic, std::nullopt};
  statistic.space = multi.space;
  CHECK_THROWS(elf::CompleteSpace(statistic), std::invalid_argument,
               "key 'won' has a space but is neither an action nor an observation");
  elf::KeySpec observation{"s", DType::kInt64, {2}, "", KeyRole::kObservation, std::nullopt};
  observation.space = multi.space;  // a hosted environment's MultiDiscrete observation: kept, with its bounds
  elf::CompleteSpace(observation);
  CHECK(observation.space.kind == elf::ActionSpace::Kind::kMultiDiscrete);
  CHECK_EQ(observation.bounds->second, 2.0);
}

TEST(a_key_read_from_data_gets_its_space_from_dtype_shape_and_bounds) {
  elf::KeySpec discrete{"a", DType::kInt64, {}, "", KeyRole::kAction, std::make_pair(0.0, 5.0)};
  elf::CompleteSpace(discrete);
  CHECK(discrete.space.kind == elf::ActionSpace::Kind::kDiscrete);
  CHECK(discrete.space.nvec == std::vector<int64_t>{6});
  elf::KeySpec multi{"a", DType::kInt64, {2}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)};
  elf::CompleteSpace(multi);
  CHECK(multi.space.nvec == (std::vector<int64_t>{3, 3}));
  elf::KeySpec box{"a", DType::kFloat32, {1}, "", KeyRole::kAction, std::make_pair(-2.0, 2.0)};
  elf::CompleteSpace(box);
  CHECK(box.space.kind == elf::ActionSpace::Kind::kBox);
  CHECK(box.space.low == std::vector<double>{-2.0});
  elf::KeySpec observation{"s", DType::kFloat32, {1}, "", KeyRole::kObservation, std::nullopt};
  elf::CompleteSpace(observation);
  CHECK(observation.space.kind == elf::ActionSpace::Kind::kNone);
  elf::KeySpec unbounded{"a", DType::kInt64, {}, "", KeyRole::kAction, std::nullopt};
  CHECK_THROWS(elf::CompleteSpace(unbounded), std::invalid_argument, "integer action 'a' needs bounds");
}

TEST(scalar_key_has_one_element) {
  const elf::KeySpec key{"r", DType::kFloat64, {}, "reward", KeyRole::kEngine, std::nullopt};
  CHECK_EQ(key.NumElements(), int64_t{1});
  CHECK_EQ(key.Bytes(), std::size_t{8});
  const elf::KeySpec image{"img", DType::kUint8, {3, 4, 5}, "pixels", KeyRole::kObservation, std::nullopt};
  CHECK_EQ(image.Bytes(), std::size_t{60});
}

TEST(key_declared_twice_is_rejected) {
  const Options options;
  SpecBuilder spec(options);
  spec.Observation("s", DType::kFloat32, {4}, "state");
  CHECK_THROWS(spec.Observation("s", DType::kFloat32, {1}, "again"), std::invalid_argument, "'s' declared twice");
}

TEST(bad_action_and_seat_counts_are_rejected) {
  const Options options;
  SpecBuilder spec(options);
  CHECK_THROWS(spec.DiscreteAction("a", 0, "none"), std::invalid_argument, "num_values");
  CHECK_THROWS(spec.Seats(0), std::invalid_argument, "seat");
  spec.Seats(3);
  CHECK_EQ(spec.Finish().num_seats, 3);
}

TEST(option_reads_the_given_value_and_records_default_and_help) {
  const Options options(Values{{"max_steps", "7"}});
  SpecBuilder spec(options);
  CHECK_EQ(spec.Option("max_steps", 500, "steps per episode"), 7);
  CHECK_EQ(spec.Option("gravity", 9.8, "m/s^2"), 9.8);
  const elf::GameSpec game = spec.Finish();
  REQUIRE(game.options.size() == 2);
  CHECK_EQ(game.options[0].name, "max_steps");
  CHECK_EQ(game.options[0].fallback, "500");
  CHECK_EQ(game.options[0].help, "steps per episode");
  CHECK_EQ(game.options[1].fallback, "9.8");
}

TEST(unknown_option_error_lists_the_valid_ones) {
  const Options options(Values{{"max_step", "7"}});
  SpecBuilder spec(options);
  spec.Option("max_steps", 500, "steps");
  spec.Option("gravity", 9.8, "m/s^2");
  CHECK_THROWS(spec.Finish(), std::invalid_argument, "unknown game option 'max_step'");
  CHECK_THROWS(spec.Finish(), std::invalid_argument, "valid options: max_steps, gravity");
}

TEST(unknown_option_of_a_game_without_options_says_none) {
  const Options options(Values{{"x", "1"}});
  SpecBuilder spec(options);
  CHECK_THROWS(spec.Finish(), std::invalid_argument, "valid options: (none)");
}

TEST(registered_game_spec_rejects_unknown_option_by_name) {
  const Options options(Values{{"max_step", "7"}});
  CHECK_THROWS(elf::Registry::Global().Spec("cartpole", options), std::invalid_argument, "valid options: max_steps");
  const Options good(Values{{"max_steps", "7"}});
  CHECK_EQ(elf::Registry::Global().Spec("cartpole", good).keys.size(), std::size_t{2});
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
