// Plan: the key catalogue, tag checks, whole-routing checks and what Build
// lays out (routes, history length, record layout, each tag's channels),
// without games or threads.
#include "elf/plan.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"

using elf::DType;
using elf::KeyRole;
using elf::Plan;
using elf::TagConfig;

namespace {

// Two seats, an observation `s` (2 floats) and an action `a` in [0, 2].
elf::GameSpec TwoSeats() {
  elf::GameSpec spec;
  spec.num_seats = 2;
  spec.keys = {{"s", DType::kFloat32, {2}, "", KeyRole::kObservation, std::nullopt},
               {"a", DType::kInt64, {}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)}};
  return spec;
}

TagConfig Tag(const std::string& name, std::vector<std::string> inputs, std::vector<std::string> replies, int T = 1,
              std::vector<int> seats = {}) {
  TagConfig config;
  config.name = name;
  config.batch_size = 2;
  config.inputs = std::move(inputs);
  config.replies = std::move(replies);
  config.T = T;
  config.seats = std::move(seats);
  return config;
}

std::vector<std::string> Names(const Plan& plan) {
  std::vector<std::string> names;
  for (const auto& key : plan.keys()) names.push_back(key.name);
  return names;
}

}  // namespace

TEST(catalogue_is_the_games_keys_then_the_engines_then_the_extra_ones) {
  Plan plan("two", TwoSeats());
  CHECK_EQ(plan.num_game_keys(), 2);
  plan.AddKey({"V", DType::kFloat32, {}, "value", KeyRole::kObservation, std::nullopt});
  const std::vector<std::string> expected = {"s", "a", "r", "terminal", "truncated", "episode_return",
                                             "episode_length", "final_s", "V"};
  CHECK(Names(plan) == expected);
  CHECK(plan.keys()[plan.KeyIndex("V")].role == KeyRole::kExtra);  // whatever role it was declared with
  CHECK((plan.keys()[plan.KeyIndex("a")].space.nvec == std::vector<int64_t>{3}));  // completed: Discrete(3)
  CHECK_THROWS(plan.AddKey({"V", DType::kFloat32, {}, "", KeyRole::kExtra, std::nullopt}), std::invalid_argument,
               "key 'V' already exists");
  CHECK_THROWS(plan.KeyIndex("pi"), std::invalid_argument, "valid keys: s, a, r,");
  plan.AddTag(Tag("actor", {"s"}, {"a"}));
  CHECK_THROWS(plan.AddKey({"Q", DType::kFloat32, {}, "", KeyRole::kExtra, std::nullopt}), std::logic_error,
               "before add_tag");
  CHECK_EQ(plan.TagIndex("actor"), 0);
  CHECK_THROWS(plan.TagIndex("train"), std::invalid_argument, "valid tags: actor");
}

TEST(add_tag_rejects_a_bad_tag_naming_it) {
  Plan plan("two", TwoSeats());
  CHECK_THROWS(plan.AddTag(Tag("actor", {"s"}, {"s"})), std::invalid_argument,
               "tag 'actor': key 's' is written by the game or engine, not a reply");
  CHECK_THROWS(plan.AddTag(Tag("actor", {"a"}, {"a"})), std::invalid_argument, "input 'a' is a reply key");
  CHECK_THROWS(plan.AddTag(Tag("actor", {"s"}, {"a"}, 2)), std::invalid_argument, "must have T = 1");
  CHECK_THROWS(plan.AddTag(Tag("actor", {"s"}, {"a"}, 1, {2})), std::invalid_argument, "seat 2 out of range");
  CHECK_THROWS(plan.AddTag(Tag("actor", {"x"}, {"a"})), std::invalid_argument, "unknown key 'x'");
  CHECK_EQ(plan.num_tags(), 0);  // nothing half added
}

TEST(validate_checks_the_routing_as_a_whole) {
  auto first_come = elf::Router::Make(false);
  Plan none("two", TwoSeats());
  CHECK_THROWS(none.Validate(4, *first_come), std::invalid_argument, "add at least one tag");

  Plan seat0_only("two", TwoSeats());
  seat0_only.AddTag(Tag("actor", {"s"}, {"a"}, 1, {0}));
  CHECK_THROWS(seat0_only.Validate(4, *first_come), std::invalid_argument,
               "seat 1 of game 'two' needs action 'a' from exactly one tag, but 0 tag(s) reply it");

  Plan twice("two", TwoSeats());
  twice.AddTag(Tag("actor", {"s"}, {"a"}));
  twice.AddTag(Tag("other", {"s"}, {"a"}, 1, {1}));
  CHECK_THROWS(twice.Validate(4, *first_come), std::invalid_argument, "seat 1 of game 'two' needs action 'a'");

  Plan unreplied("two", TwoSeats());
  unreplied.AddKey({"V", DType::kFloat32, {}, "", KeyRole::kExtra, std::nullopt});
  unreplied.AddTag(Tag("actor", {"s"}, {"a"}));
  unreplied.AddTag(Tag("train", {"s", "V"}, {}, 3));
  CHECK_THROWS(unreplied.Validate(4, *first_come), std::invalid_argument,
               "tag 'train' reads key 'V', which no tag with replies replies for seat 0");

  Plan big("two", TwoSeats());
  auto actor = Tag("actor", {"s"}, {"a"});
  actor.batch_size = 9;  // 4 games x 2 seats
  big.AddTag(actor);
  CHECK_THROWS(big.Validate(4, *first_come), std::invalid_argument, "batch_size 9 exceeds the 8");
  big.Validate(4, *elf::Router::Make(true));  // the router decides
  big.Validate(5, *first_come);
}

TEST(build_routes_each_seat_and_lays_out_what_the_tags_need) {
  Plan plan("two", TwoSeats());
  plan.AddTag(Tag("train", {"s", "a", "r"}, {}, 4, {1}));
  plan.AddTag(Tag("actor", {"s"}, {"a"}));
  plan.AddTag(Tag("log", {"episode_return"}, {}, 1, {0}));
  plan.Validate(3, *elf::Router::Make(false));
  plan.Build(3);
  // Tags with replies get the observation, in (tag, seat) order; the others
  // come after the replies.
  CHECK_EQ(plan.observation_sends().size(), std::size_t{2});
  CHECK_EQ(plan.observation_sends()[1].tag, 1);
  CHECK_EQ(plan.observation_sends()[1].seat, 1);
  CHECK_EQ(plan.after_reply_sends().size(), std::size_t{2});
  CHECK_EQ(plan.after_reply_sends()[0].tag, 0);
  CHECK_EQ(plan.after_reply_sends()[0].seat, 1);
  CHECK_EQ(plan.history_length(), 4);  // train's windows
  // Channel g * 2 + seat of 3 games.
  CHECK((plan.tag(0).channels() == std::vector<int>{1, 3, 5}));
  CHECK((plan.tag(1).channels() == std::vector<int>{0, 1, 2, 3, 4, 5}));
  CHECK((plan.tag(2).channels() == std::vector<int>{0, 2, 4}));
  // Copies follow the layout; nobody reads final_s, so it takes no space.
  const auto& copies = plan.input_copies(0);
  CHECK_EQ(copies.size(), std::size_t{3});
  CHECK_EQ(copies[1].offset, plan.layout().offset(plan.KeyIndex("a")));
  CHECK_EQ(copies[2].bytes, std::size_t{4});
  CHECK_EQ(plan.reply_copies(1)[0].offset, plan.layout().offset(plan.KeyIndex("a")));
  CHECK(!plan.keep_final());
  CHECK_EQ(plan.header().reward, plan.layout().offset(plan.KeyIndex("r")));
  // s (8) a (8) r terminal truncated episode_return episode_length (8 each, aligned).
  CHECK_EQ(plan.layout().bytes(), std::size_t{7 * 8});
}

TEST(reading_a_final_key_keeps_them_all) {
  Plan plan("two", TwoSeats());
  plan.AddTag(Tag("actor", {"s", "final_s"}, {"a"}));
  plan.Validate(1, *elf::Router::Make(false));
  plan.Build(1);
  CHECK(plan.keep_final());
  CHECK_EQ(plan.final_keys()[0], plan.KeyIndex("final_s"));
  CHECK_EQ(plan.final_keys()[1], -1);  // an action has no final_ key
  CHECK_EQ(plan.layout().bytes(), std::size_t{8 * 8});
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
