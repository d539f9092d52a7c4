// Stepper: the games' stage machine on a tiny game, without a context or a
// worker pool. The test plays the caller and the pool itself: it advances
// games, takes batches from the mailbox, writes replies and hands them to
// ConsumeReplies, releases batches and re-advances what `resume` got.
#include "elf/stepper.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "driver.h"

using elf::BatchRef;
using elf::DType;
using elf::KeyRole;
using elf::TagConfig;
using elf::testing::MakeTag;

namespace {

// Each seat observes s = (step within the episode, seat); an episode lasts
// `length` steps; a seat's reward is the action it replied + 1. Throws on
// its `fail_at`-th step (never if < 0).
class Tiny : public elf::Game {
 public:
  Tiny(int seats, int length, int fail_at) : seats_(seats), length_(length), fail_at_(fail_at) {}

  static elf::GameSpec Spec(int seats) {
    elf::GameSpec spec;
    spec.num_seats = seats;
    spec.keys = {{"s", DType::kFloat32, {2}, "", KeyRole::kObservation, std::nullopt},
                 {"a", DType::kInt64, {}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)}};
    return spec;
  }

  void Reset(elf::Rng&) override { episode_step_ = 0; }
  void Observe(int seat, const elf::Row& row) override {
    float* s = row.Get(s_);
    s[0] = static_cast<float>(episode_step_);
    s[1] = static_cast<float>(seat);
  }
  elf::Outcome Step(const std::vector<elf::Row>& replies, elf::Rng&) override {
    if (++steps_ == fail_at_) throw std::runtime_error("tiny failed on purpose");
    for (int seat = 0; seat < seats_; ++seat) rewards_[seat] = static_cast<float>(replies[seat].Scalar(a_) + 1);
    ++episode_step_;
    elf::Outcome outcome;
    outcome.terminated = episode_step_ >= length_;
    return outcome;
  }
  float Reward(int seat) const override { return rewards_[seat]; }

 private:
  elf::Key<float> s_{0};
  elf::Key<int64_t> a_{1};
  int seats_, length_, fail_at_;
  int episode_step_ = 0, steps_ = 0;
  float rewards_[2] = {0.0f, 0.0f};
};

// A plan, a router and a mailbox wired as Context wires them, and a stepper
// whose `resume` only collects the games (the test advances them).
struct Rig {
  elf::Plan plan;
  std::unique_ptr<elf::Router> router;
  elf::Mailbox mailbox;
  std::vector<int> resumed;
  std::unique_ptr<elf::Stepper> stepper;

  Rig(int num_games, int seats, int length, const std::vector<TagConfig>& tags, int fail_game = -1,
      int fail_at = -1)
      : plan("tiny", Tiny::Spec(seats)), router(elf::Router::Make(false)) {
    for (const auto& tag : tags) plan.AddTag(tag);
    plan.Validate(num_games, *router);
    plan.Build(num_games);
    auto make = [=](int g) { return std::make_unique<Tiny>(seats, length, g == fail_game ? fail_at : -1); };
    stepper = std::make_unique<elf::Stepper>(plan, *router, mailbox, make, num_games, 0,
                                             [this](const std::vector<int>& games) {
                                               resumed.insert(resumed.end(), games.begin(), games.end());
                                             });
    for (auto& tag : plan.tags()) {
      tag->Allocate(plan.keys(), router->Shape(*tag, static_cast<int>(tag->channels().size())));
    }
    router->Wire(plan.tags(), num_games * seats);
    std::vector<int> all(num_games);
    for (int g = 0; g < num_games; ++g) all[g] = g;
    stepper->Advance(all);
  }

  // The next ready batch, or nothing (no thread is running: what is ready
  // is in the mailbox already).
  std::optional<BatchRef> Next() {
    return mailbox.Wait(elf::Mailbox::Clock::now(), [this](std::deque<BatchRef>& ready) {
      elf::Mailbox::Poll found;
      found.ref = router->TakeReady(plan.tags(), ready);
      return found;
    });
  }
  BatchRef Take() {
    const auto ref = Next();
    REQUIRE(ref.has_value());
    return *ref;
  }

  elf::BatchBuffer& Buffer(const BatchRef& ref) { return plan.tag(ref.tag).buffer(ref.buffer); }
  // Element (t, row, e) of input `key`, as Context's caller reads it.
  template <typename V>
  V In(const BatchRef& ref, const std::string& key, int row, int e = 0, int t = 0) {
    elf::Tag& tag = plan.tag(ref.tag);
    const auto& inputs = tag.config().inputs;
    const auto i = std::find(inputs.begin(), inputs.end(), key) - inputs.begin();
    const elf::KeySpec& spec = plan.keys()[tag.input_keys()[i]];
    const auto* data = reinterpret_cast<const V*>(Buffer(ref).inputs[i].data());
    return data[(static_cast<int64_t>(t) * tag.capacity() + row) * spec.NumElements() + e];
  }
  int Game(const BatchRef& ref, int row) { return Buffer(ref).game_ids[row]; }

  // Replies action `actions[row]` to each row (a tag whose one reply is a)
  // and lets the games go on, as Context::SubmitReplies does with one run.
  void Reply(const BatchRef& ref, const std::vector<int64_t>& actions) {
    elf::BatchBuffer& buffer = Buffer(ref);
    auto* a = static_cast<int64_t*>(buffer.Reply(0, 0, sizeof(int64_t)));
    for (int row = 0; row < ref.size; ++row) a[row] = actions[row];
    buffer.ready.store(false);
    buffer.unconsumed_replies.store(ref.size);
    stepper->ConsumeReplies(ref.tag, ref.batch, 0, ref.size);
    mailbox.HandedBack();
  }
  void Release(const BatchRef& ref) {
    stepper->ReleaseBuffer(plan.tag(ref.tag), ref.batch);
    mailbox.HandedBack();
  }
};

}  // namespace

TEST(rows_follow_each_game_through_steps_episode_ends_and_resets) {
  const int games = 2, length = 3;
  Rig rig(games, 1, length,
          {MakeTag("actor", games, {"s", "r", "terminal", "episode_return", "episode_length", "final_s"}, {"a"})});
  float returns[games] = {0.0f, 0.0f};
  int64_t last_action[games] = {0, 0};
  for (int step = 0; step < 8; ++step) {
    const BatchRef ref = rig.Take();
    REQUIRE(ref.size == games);
    CHECK(!rig.Next());  // a game sends one row per step, then waits
    std::vector<int64_t> actions(games);
    std::set<int> seen;
    for (int row = 0; row < games; ++row) {
      const int g = rig.Game(ref, row);
      seen.insert(g);
      const bool over = step > 0 && step % length == 0;
      CHECK_EQ(rig.In<float>(ref, "s", row, 0), static_cast<float>(step % length));  // reset within the step
      CHECK_EQ(rig.In<bool>(ref, "terminal", row), over);
      const float reward = step == 0 ? 0.0f : static_cast<float>(last_action[g] + 1);
      CHECK_EQ(rig.In<float>(ref, "r", row), reward);
      returns[g] += reward;
      CHECK_EQ(rig.In<float>(ref, "episode_return", row), returns[g]);
      CHECK_EQ(rig.In<int32_t>(ref, "episode_length", row), step % length == 0 && step > 0 ? length : step % length);
      if (over) {
        CHECK_EQ(rig.In<float>(ref, "final_s", row, 0), static_cast<float>(length));  // the state it ended in
        returns[g] = 0.0f;
      }
      actions[row] = last_action[g] = (g + step) % 3;
    }
    CHECK_EQ(seen.size(), std::size_t{games});
    rig.Reply(ref, actions);
  }
}

TEST(a_two_seat_game_steps_only_once_both_seats_are_replied) {
  const int games = 2;
  Rig rig(games, 2, 10, {MakeTag("p0", games, {"s"}, {"a"}, 1, {0}), MakeTag("p1", games, {"s"}, {"a"}, 1, {1})});
  BatchRef first = rig.Take(), second = rig.Take();
  if (first.tag != 0) std::swap(first, second);
  REQUIRE(first.tag == 0 && second.tag == 1);
  for (int row = 0; row < games; ++row) CHECK_EQ(rig.In<float>(second, "s", row, 1), 1.0f);  // seat 1's own view
  rig.Reply(first, {2, 2});
  CHECK(!rig.Next());  // seat 1 has not replied: nothing steps
  rig.Reply(second, {0, 0});
  BatchRef next0 = rig.Take(), next1 = rig.Take();
  if (next0.tag != 0) std::swap(next0, next1);
  for (int row = 0; row < games; ++row) {
    CHECK_EQ(rig.In<float>(next0, "s", row, 0), 1.0f);  // one step, with both replies
    CHECK_EQ(rig.In<float>(next0, "s", row, 1), 0.0f);
  }
  CHECK_EQ(next0.tag, 0);
  CHECK_EQ(next1.tag, 1);
}

TEST(seats_get_their_own_rewards_from_their_own_replies) {
  Rig rig(1, 2, 10, {MakeTag("all", 2, {"s", "r"}, {"a"})});
  BatchRef ref = rig.Take();
  std::vector<int64_t> actions(2);
  for (int row = 0; row < 2; ++row) actions[row] = rig.Buffer(ref).seats[row] == 0 ? 1 : 2;
  rig.Reply(ref, actions);
  ref = rig.Take();
  for (int row = 0; row < 2; ++row) {
    const int seat = rig.Buffer(ref).seats[row];
    CHECK_EQ(rig.In<float>(ref, "s", row, 1), static_cast<float>(seat));
    CHECK_EQ(rig.In<float>(ref, "r", row), seat == 0 ? 2.0f : 3.0f);
  }
}

// A T = 3 tag without replies gets a window at steps 2, 4, 6, ...: the last
// step of one window is the first of the next, and each step holds the
// action replied at it (sent after the replies, before the step).
TEST(windows_of_a_tag_without_replies_overlap_by_one_and_hold_the_replied_actions) {
  Rig rig(1, 1, 100, {MakeTag("actor", 1, {"s"}, {"a"}), MakeTag("train", 1, {"s", "a", "r"}, {}, 3)});
  int windows = 0;
  for (int step = 0; step < 9; ++step) {
    const BatchRef actor = rig.Take();
    CHECK_EQ(actor.tag, 0);
    CHECK_EQ(rig.In<float>(actor, "s", 0), static_cast<float>(step));
    rig.Reply(actor, {step % 3});
    if (step < 2 || step % 2 != 0) continue;
    const BatchRef train = rig.Take();
    REQUIRE(train.tag == 1);
    ++windows;
    for (int t = 0; t < 3; ++t) {
      const int at = step - 2 + t;
      CHECK_EQ(rig.In<float>(train, "s", 0, 0, t), static_cast<float>(at));
      CHECK_EQ(rig.In<int64_t>(train, "a", 0, 0, t), int64_t{at % 3});
      CHECK_EQ(rig.In<float>(train, "r", 0, 0, t), at == 0 ? 0.0f : static_cast<float>((at - 1) % 3 + 1));
    }
    rig.Release(train);
  }
  CHECK_EQ(windows, 4);
}

// A tag without replies whose batches the caller holds: once its ring is
// full the game parks, and the release of a buffer hands it to `resume`.
TEST(a_game_parks_on_a_held_buffer_and_its_release_resumes_it) {
  Rig rig(1, 1, 100, {MakeTag("actor", 1, {"s"}, {"a"}), MakeTag("log", 1, {"s"}, {})});
  const int buffers = rig.plan.tag(1).num_buffers();
  std::vector<BatchRef> held;
  for (int step = 0; step < buffers; ++step) {
    rig.Reply(rig.Take(), {0});
    held.push_back(rig.Take());
    CHECK_EQ(held.back().tag, 1);
  }
  rig.Reply(rig.Take(), {0});  // its log row finds every buffer held
  CHECK(!rig.Next());
  CHECK(rig.resumed.empty());
  rig.Release(held[0]);
  CHECK((rig.resumed == std::vector<int>{0}));
  rig.stepper->Advance(rig.resumed);
  const BatchRef log = rig.Take(), actor = rig.Take();
  CHECK_EQ(log.tag, 1);
  CHECK_EQ(rig.In<float>(log, "s", 0), static_cast<float>(buffers));
  CHECK_EQ(actor.tag, 0);
  CHECK_EQ(rig.In<float>(actor, "s", 0), static_cast<float>(buffers + 1));
}

TEST(an_exception_in_a_game_fails_the_mailbox_naming_the_game) {
  Rig rig(4, 1, 100, {MakeTag("actor", 4, {"s"}, {"a"})}, 2, 2);
  rig.Reply(rig.Take(), {0, 0, 0, 0});
  CHECK(!rig.mailbox.halted());
  rig.Reply(rig.Take(), {0, 0, 0, 0});  // game 2's second step throws
  CHECK(rig.mailbox.halted());
  CHECK_THROWS(rig.Next(), elf::GameError, "game 2 ('tiny'): tiny failed on purpose");
}

// Two threads advance disjoint halves of the games into the same batches,
// and copy each batch's replies in two runs at once (ThreadSanitizer checks
// the hand-over of a game from the thread that sent its row to the one that
// copies its reply).
TEST(games_advanced_on_two_threads_fill_shared_batches) {
  const int games = 64;
  Rig rig(games, 1, 5, {MakeTag("actor", games, {"s"}, {"a"})});
  for (int round = 0; round < elf::testing::Scaled(200); ++round) {
    const BatchRef ref = rig.Take();
    REQUIRE(ref.size == games);
    std::set<int> seen;
    for (int row = 0; row < games; ++row) {
      seen.insert(rig.Game(ref, row));
      CHECK_EQ(rig.In<float>(ref, "s", row), static_cast<float>(round % 5));
    }
    CHECK_EQ(seen.size(), std::size_t{games});
    elf::BatchBuffer& buffer = rig.Buffer(ref);
    auto* a = static_cast<int64_t*>(buffer.Reply(0, 0, sizeof(int64_t)));
    for (int row = 0; row < games; ++row) a[row] = row % 3;
    buffer.ready.store(false);
    buffer.unconsumed_replies.store(games);
    std::thread other([&] { rig.stepper->ConsumeReplies(ref.tag, ref.batch, games / 2, games); });
    rig.stepper->ConsumeReplies(ref.tag, ref.batch, 0, games / 2);
    other.join();
    rig.mailbox.HandedBack();
  }
  CHECK(rig.resumed.empty());  // a spare buffer: nobody parked
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
