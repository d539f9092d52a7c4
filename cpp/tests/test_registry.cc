// Registry: games by name, created from options.
#include "elf/registry.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "check.h"

using Values = std::map<std::string, std::string>;

TEST(shipped_games_are_registered) {
  const auto names = elf::Registry::Global().Names();
  for (const char* game : {"cartpole", "counter", "duel"}) {
    CHECK(std::find(names.begin(), names.end(), game) != names.end());
  }
}

TEST(unknown_game_error_lists_registered_games) {
  CHECK_THROWS(elf::Registry::Global().Find("cartpol"), std::invalid_argument, "unknown game 'cartpol'");
  CHECK_THROWS(elf::Registry::Global().Find("cartpol"), std::invalid_argument, "cartpole, counter, duel");
}

TEST(make_creates_a_game_that_plays) {
  const elf::Options options(Values{{"episode_length", "2"}});
  auto game = elf::Registry::Global().Find("counter").make(options);
  REQUIRE(game != nullptr);
  elf::Rng rng(0, 0);
  game->Reset(rng);
  elf::GameSpec spec = elf::Registry::Global().Spec("counter", options);
  const elf::RecordLayout layout(spec.keys, std::vector<bool>(spec.keys.size(), true));  // s, count, a
  std::vector<uint64_t> record(layout.bytes() / 8, 0);
  elf::Row row(&spec.keys, &layout);
  row.Point(reinterpret_cast<uint8_t*>(record.data()));
  game->Observe(0, row);
  CHECK_EQ(row.Get<float>("s")[1], 0.0f);
  CHECK_EQ(row.Scalar<int64_t>("count"), int64_t{0});
  *row.Get<int64_t>("a") = 1;
  const elf::Outcome outcome = game->Step({row}, rng);
  CHECK(!outcome.Over());
  CHECK_EQ(game->Reward(0), 2.0f);  // step 1 of the episode, action 1: 1 * (1 + 1)
}

TEST(spec_depends_on_options) {
  const elf::GameSpec spec = elf::Registry::Global().Spec("counter", elf::Options(Values{{"num_actions", "7"}}));
  bool found = false;
  for (const auto& key : spec.keys) {
    if (key.name == "a") {
      found = true;
      CHECK_EQ(key.bounds->second, 6.0);
    }
  }
  CHECK(found);
  CHECK_EQ(elf::Registry::Global().Spec("duel", elf::Options()).num_seats, 2);
  CHECK_THROWS(elf::Registry::Global().Spec("cartpole", elf::Options(Values{{"max_steps", "0"}})), std::invalid_argument,
               "max_steps");
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
