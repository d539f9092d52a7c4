// Context: games, tags and replies, driven from C++ the way the Python
// binding drives it (AddTag, Start, Wait, write replies into the buffer,
// SubmitReplies / Release, Stop).
#include "elf/context.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
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
using elf::Context;
using elf::GameError;
using elf::Options;
using elf::testing::Finish;
using elf::testing::GameIds;
using elf::testing::Input;
using elf::testing::MakeTag;
using elf::testing::NextBatch;
using elf::testing::PolicyAction;
using elf::testing::Reply;
using elf::testing::Seats;
using Values = std::map<std::string, std::string>;

namespace {

// A Wait timeout no test reaches (a day): a wait that should end by an event
// either ends or hangs, and a hang is the watchdog's to name. No test
// bounds how long an event may take, so a loaded machine cannot fail one.
constexpr int kForeverMs = 24 * 3600 * 1000;

// Rows of one batch come from distinct channels (game, seat) in range.
void CheckDistinctRows(Context& ctx, const BatchRef& ref) {
  std::set<std::pair<int, int>> seen;
  for (int row = 0; row < ref.size; ++row) {
    const int game = GameIds(ctx, ref)[row], seat = Seats(ctx, ref)[row];
    CHECK(game >= 0 && game < ctx.num_games());
    CHECK(seat >= 0 && seat < ctx.num_seats());
    if (!seen.insert({game, seat}).second) {
      elf::testing::Fail(__FILE__, __LINE__, "game " + std::to_string(game) + " twice in one batch");
    }
  }
}

// What a counter game showed last, to check the next row against.
struct CounterTrack {
  int64_t count = -1;  // -1: not seen yet
  float s1 = 0.0f;
  int64_t action = 0;
  float episode_return = 0.0f;
  int episode_length = -1;  // steps per episode, once one ended
};

}  // namespace

TEST(cartpole_runs_and_every_batch_holds_distinct_games_in_valid_states) {
  Context ctx("cartpole", 16, 2, 1, false, Options());
  ctx.AddTag(MakeTag("actor", 8, {"s", "r", "terminal"}, {"a"}));
  ctx.Start();
  int terminals = 0;
  for (int i = 0; i < 300; ++i) {
    const BatchRef ref = NextBatch(ctx);
    CHECK_EQ(ref.size, 8);
    CheckDistinctRows(ctx, ref);
    const float* s = Input<float>(ctx, ref, "s");
    const float* r = Input<float>(ctx, ref, "r");
    const bool* terminal = Input<bool>(ctx, ref, "terminal");
    int64_t* a = Reply<int64_t>(ctx, ref, "a");
    for (int row = 0; row < ref.size; ++row) {
      CHECK(std::fabs(s[row * 4 + 0]) <= 2.4f);     // cart inside the track
      CHECK(std::fabs(s[row * 4 + 2]) <= 0.2095f);  // pole within 12 degrees
      CHECK(r[row] == 0.0f || r[row] == 1.0f);
      terminals += terminal[row];
      a[row] = (i + row) % 2;
    }
    ctx.SubmitReplies(ref);
  }
  CHECK(terminals > 0);
  ctx.Stop();
}

TEST(counter_rows_follow_each_game_step_by_step) {
  const int games = 32;
  Context ctx("counter", games, 2, 7, false, Options());
  ctx.AddTag(MakeTag("actor", 8, {"s", "count", "r", "terminal", "episode_return", "episode_length"}, {"a"}));
  ctx.Start();
  std::vector<CounterTrack> track(games);
  int episodes = 0;
  for (int i = 0; i < 400; ++i) {
    const BatchRef ref = NextBatch(ctx);
    CheckDistinctRows(ctx, ref);
    const float* s = Input<float>(ctx, ref, "s");
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    const float* r = Input<float>(ctx, ref, "r");
    const bool* terminal = Input<bool>(ctx, ref, "terminal");
    const float* ret = Input<float>(ctx, ref, "episode_return");
    const int32_t* len = Input<int32_t>(ctx, ref, "episode_length");
    int64_t* a = Reply<int64_t>(ctx, ref, "a");
    for (int row = 0; row < ref.size; ++row) {
      CounterTrack& t = track[GameIds(ctx, ref)[row]];
      REQUIRE(count[row] == t.count + 1);  // one row per step, none lost or repeated
      if (t.count < 0) {
        CHECK_EQ(r[row], 0.0f);
        CHECK(!terminal[row]);
        CHECK_EQ(s[row * 2 + 1], 0.0f);
      } else {
        const float reward = (t.s1 + 1) * static_cast<float>(t.action + 1);
        CHECK_EQ(r[row], reward);
        t.episode_return += reward;
        CHECK_EQ(ret[row], t.episode_return);
        if (terminal[row]) {
          ++episodes;
          CHECK_EQ(s[row * 2 + 1], 0.0f);  // already the next episode's first state
          const int length = static_cast<int>(t.s1) + 1;
          CHECK_EQ(len[row], length);
          CHECK(length >= 5 && length <= 7);
          if (t.episode_length >= 0) CHECK_EQ(length, t.episode_length);  // fixed per game
          t.episode_length = length;
          t.episode_return = 0.0f;
        } else {
          CHECK_EQ(s[row * 2 + 1], t.s1 + 1);
          CHECK_EQ(len[row], static_cast<int32_t>(t.s1) + 1);
        }
      }
      t.count = count[row];
      t.s1 = s[row * 2 + 1];
      t.action = a[row] = PolicyAction(GameIds(ctx, ref)[row], count[row], 3);
    }
    ctx.SubmitReplies(ref);
  }
  CHECK(episodes > 50);
}

// First-come mode: each tag delivers its batches in number order, so a
// game's windows arrive in step order under any load (a batch completed
// before an earlier one of its tag waits for it).
TEST(train_windows_are_time_major_overlap_by_one_and_hold_the_actor_replies) {
  const int games = 16, T = 4;
  Context ctx("counter", games, 2, 3, false, Options());
  elf::testing::AddPolicyKeys(ctx, 3);
  ctx.AddTag(MakeTag("actor", 8, {"s", "count"}, {"a", "V", "pi"}));
  ctx.AddTag(MakeTag("train", 4, {"count", "s", "a", "V", "pi", "r", "terminal"}, {}, T));
  ctx.Start();
  std::vector<int64_t> last_window_end(games, -1);
  std::vector<int64_t> next_batch(ctx.num_tags(), 0);
  int windows = 0;
  while (windows < 300) {
    const BatchRef ref = NextBatch(ctx);
    CHECK_EQ(ref.batch, next_batch[ref.tag]++);
    if (ctx.tag(ref.tag).name() == "actor") {
      const int64_t* count = Input<int64_t>(ctx, ref, "count");
      int64_t* a = Reply<int64_t>(ctx, ref, "a");
      float* v = Reply<float>(ctx, ref, "V");
      float* pi = Reply<float>(ctx, ref, "pi");
      for (int row = 0; row < ref.size; ++row) {
        a[row] = PolicyAction(GameIds(ctx, ref)[row], count[row], 3);
        v[row] = static_cast<float>(count[row]) + 0.5f;
        for (int k = 0; k < 3; ++k) pi[row * 3 + k] = static_cast<float>(count[row] * 3 + k);
      }
      ctx.SubmitReplies(ref);
      continue;
    }
    CHECK_EQ(ref.size, 4);
    CheckDistinctRows(ctx, ref);
    const int capacity = ctx.tag(ref.tag).capacity();
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    const float* s = Input<float>(ctx, ref, "s");
    const int64_t* a = Input<int64_t>(ctx, ref, "a");
    const float* v = Input<float>(ctx, ref, "V");
    const float* pi = Input<float>(ctx, ref, "pi");
    const float* r = Input<float>(ctx, ref, "r");
    const bool* terminal = Input<bool>(ctx, ref, "terminal");
    for (int row = 0; row < ref.size; ++row) {
      const int game = GameIds(ctx, ref)[row];
      auto at = [&](int t) { return t * capacity + row; };  // [T, B] element index
      // Windows of a game follow each other, sharing their boundary step.
      CHECK_EQ(count[at(0)], last_window_end[game] < 0 ? int64_t{0} : last_window_end[game]);
      last_window_end[game] = count[at(T - 1)];
      for (int t = 0; t < T; ++t) {
        CHECK_EQ(count[at(t)], count[at(0)] + t);
        CHECK_EQ(a[at(t)], PolicyAction(game, count[at(t)], 3));
        CHECK_EQ(v[at(t)], static_cast<float>(count[at(t)]) + 0.5f);
        CHECK_EQ(pi[at(t) * 3 + 2], static_cast<float>(count[at(t)] * 3 + 2));
        if (t == 0) continue;
        const float s1_before = s[at(t - 1) * 2 + 1];
        CHECK_EQ(r[at(t)], (s1_before + 1) * static_cast<float>(a[at(t - 1)] + 1));
        CHECK_EQ(terminal[at(t)], s[at(t) * 2 + 1] == 0.0f);
      }
      ++windows;
    }
    ctx.Release(ref);
  }
}

// Two tags with replies for the same seat (an actor replying `a`, a critic
// replying `V`): each game waits for both before it steps, and the train tag
// reads both replies back from the history.
TEST(game_waits_for_every_tag_that_replies_to_it) {
  const int games = 24;
  Context ctx("counter", games, 2, 5, false, Options());
  elf::testing::AddPolicyKeys(ctx, 3);
  ctx.AddTag(MakeTag("actor", 8, {"count"}, {"a"}));
  ctx.AddTag(MakeTag("critic", 6, {"count"}, {"V"}));
  ctx.AddTag(MakeTag("train", 8, {"count", "a", "V"}, {}, 3));
  ctx.Start();
  std::vector<std::array<int64_t, 2>> last(games, {-1, -1});  // per game, per reply tag: last count
  int windows = 0;
  while (windows < 200) {
    const BatchRef ref = NextBatch(ctx);
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    if (ref.tag == 2) {
      const int capacity = ctx.tag(ref.tag).capacity();
      for (int row = 0; row < ref.size; ++row, ++windows) {
        for (int t = 0; t < 3; ++t) {
          const int64_t c = count[t * capacity + row];
          CHECK_EQ(Input<int64_t>(ctx, ref, "a")[t * capacity + row], PolicyAction(GameIds(ctx, ref)[row], c, 3));
          CHECK_EQ(Input<float>(ctx, ref, "V")[t * capacity + row], static_cast<float>(c) * 2.0f);
        }
      }
      ctx.Release(ref);
      continue;
    }
    for (int row = 0; row < ref.size; ++row) {
      const int game = GameIds(ctx, ref)[row];
      CHECK_EQ(count[row], last[game][ref.tag] + 1);
      last[game][ref.tag] = count[row];
      // A game cannot run ahead of the other tag that replies to it.
      CHECK(std::abs(last[game][0] - last[game][1]) <= 1);
      if (ref.tag == 0) {
        Reply<int64_t>(ctx, ref, "a")[row] = PolicyAction(game, count[row], 3);
      } else {
        Reply<float>(ctx, ref, "V")[row] = static_cast<float>(count[row]) * 2.0f;
      }
    }
    ctx.SubmitReplies(ref);
  }
}

TEST(final_observation_keys_hold_the_state_an_episode_ended_in) {
  Context ctx("counter", 8, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 8, {"s", "count", "terminal", "final_s", "final_count"}, {"a"}));
  ctx.Start();
  std::vector<CounterTrack> track(8);
  int terminals = 0;
  for (int i = 0; i < 100; ++i) {
    const BatchRef ref = NextBatch(ctx);
    const float* s = Input<float>(ctx, ref, "s");
    const float* final_s = Input<float>(ctx, ref, "final_s");
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    const int64_t* final_count = Input<int64_t>(ctx, ref, "final_count");
    const bool* terminal = Input<bool>(ctx, ref, "terminal");
    for (int row = 0; row < ref.size; ++row) {
      CounterTrack& t = track[GameIds(ctx, ref)[row]];
      if (terminal[row]) {
        ++terminals;
        CHECK_EQ(final_s[row * 2 + 1], t.s1 + 1);  // the last step of the ended episode
        CHECK_EQ(final_count[row], count[row]);
      }
      t.s1 = s[row * 2 + 1];
    }
    std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
    ctx.SubmitReplies(ref);
  }
  CHECK(terminals > 0);
}

TEST(deferred_resets_show_the_ended_state_then_reset_on_the_reply_without_a_step) {
  Context ctx("counter", 4, 2, 0, true, Options());
  ctx.DeferResets();
  ctx.AddTag(MakeTag("actor", 4, {"s", "count", "r", "terminal", "episode_length", "final_s"}, {"a"}));
  ctx.Start();
  std::vector<CounterTrack> track(4);
  std::vector<bool> ended(4, false);
  int terminals = 0, resets = 0;
  for (int i = 0; i < 40; ++i) {
    const BatchRef ref = NextBatch(ctx);
    const float* s = Input<float>(ctx, ref, "s");
    const float* final_s = Input<float>(ctx, ref, "final_s");
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    const float* r = Input<float>(ctx, ref, "r");
    const bool* terminal = Input<bool>(ctx, ref, "terminal");
    const int32_t* length = Input<int32_t>(ctx, ref, "episode_length");
    for (int row = 0; row < ref.size; ++row) {
      const int game = GameIds(ctx, ref)[row];
      CounterTrack& t = track[game];
      if (terminal[row]) {  // the state the episode ended in, not the next episode's first
        ++terminals;
        CHECK(s[row * 2 + 1] > 0.0f);
        CHECK_EQ(final_s[row * 2 + 1], s[row * 2 + 1]);
        CHECK_EQ(static_cast<float>(length[row]), s[row * 2 + 1]);
      }
      if (ended[game]) {  // the row after: the next episode's first, and the game did not step
        ++resets;
        CHECK(!terminal[row]);
        CHECK_EQ(s[row * 2 + 1], 0.0f);
        CHECK_EQ(r[row], 0.0f);
        CHECK_EQ(length[row], 0);
        CHECK_EQ(count[row], t.count);
      }
      ended[game] = terminal[row];
      t.count = count[row];
    }
    std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
    ctx.SubmitReplies(ref);
  }
  CHECK(terminals > 0);
  CHECK(resets > 0);
}

TEST(extra_reply_key_added_by_the_user_reaches_the_train_tag) {
  Context ctx("counter", 4, 1, 0, false, Options());
  ctx.AddKey({"h", elf::DType::kFloat32, {2}, "a recurrent state", elf::KeyRole::kExtra, std::nullopt});
  CHECK_THROWS(ctx.AddKey({"h", elf::DType::kFloat32, {}, "", elf::KeyRole::kExtra, std::nullopt}),
               std::invalid_argument, "'h' already exists");
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a", "h"}));
  ctx.AddTag(MakeTag("train", 4, {"count", "h"}));
  CHECK_THROWS(ctx.AddKey({"late", elf::DType::kFloat32, {}, "", elf::KeyRole::kExtra, std::nullopt}),
               std::logic_error, "before add_tag");
  ctx.Start();
  int checked = 0;
  while (checked < 40) {
    const BatchRef ref = NextBatch(ctx);
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    if (ctx.tag(ref.tag).has_replies()) {
      float* h = Reply<float>(ctx, ref, "h");
      for (int row = 0; row < ref.size; ++row) {
        Reply<int64_t>(ctx, ref, "a")[row] = 0;
        h[row * 2] = static_cast<float>(GameIds(ctx, ref)[row]);
        h[row * 2 + 1] = static_cast<float>(count[row]);
      }
    } else {
      const float* h = Input<float>(ctx, ref, "h");
      for (int row = 0; row < ref.size; ++row, ++checked) {
        CHECK_EQ(h[row * 2], static_cast<float>(GameIds(ctx, ref)[row]));
        CHECK_EQ(h[row * 2 + 1], static_cast<float>(count[row]));
      }
    }
    Finish(ctx, ref);
  }
}

TEST(seats_of_a_two_seat_game_reach_their_own_tags) {
  const int games = 12;
  Context ctx("duel", games, 2, 0, false, Options(Values{{"rounds", "4"}}));
  elf::TagConfig seat0 = MakeTag("actor0", 6, {"s", "r", "terminal"}, {"a"});
  elf::TagConfig seat1 = MakeTag("actor1", 4, {"s", "r", "terminal"}, {"a"});
  seat0.seats = {0};
  seat1.seats = {1};
  ctx.AddTag(seat0);
  ctx.AddTag(seat1);
  ctx.Start();
  // Every pick replied, per game and seat, in step order. A seat's row at
  // step n comes once both seats replied at step n - 1 (the other seat may
  // have replied at step n too by then).
  std::vector<std::array<std::vector<int64_t>, 2>> picks(games);
  for (int i = 0; i < 400; ++i) {
    const BatchRef ref = NextBatch(ctx);
    const int seat = ref.tag;  // actor0 is tag 0, actor1 tag 1
    CheckDistinctRows(ctx, ref);
    const float* s = Input<float>(ctx, ref, "s");
    const float* r = Input<float>(ctx, ref, "r");
    int64_t* a = Reply<int64_t>(ctx, ref, "a");
    for (int row = 0; row < ref.size; ++row) {
      const int game = GameIds(ctx, ref)[row];
      CHECK_EQ(Seats(ctx, ref)[row], seat);
      CHECK_EQ(s[row * 3 + 0], static_cast<float>(seat));
      const float round = s[row * 3 + 2];
      const std::size_t step = picks[game][seat].size();
      if (step > 0) {
        REQUIRE(picks[game][1 - seat].size() >= step);
        const int64_t mine = picks[game][seat][step - 1], theirs = picks[game][1 - seat][step - 1];
        CHECK_EQ(r[row], mine > theirs ? 1.0f : (mine < theirs ? -1.0f : 0.0f));
        CHECK_EQ(s[row * 3 + 1], round == 0.0f ? -1.0f : static_cast<float>(theirs));
        CHECK_EQ(round, static_cast<float>(step % 4));
      } else {
        CHECK_EQ(s[row * 3 + 1], -1.0f);
      }
      a[row] = PolicyAction(game * 2 + seat, static_cast<int64_t>(step), 3);
      picks[game][seat].push_back(a[row]);
    }
    ctx.SubmitReplies(ref);
  }
  // The two seats advance in lockstep.
  for (int game = 0; game < games; ++game) {
    CHECK(std::abs(static_cast<int>(picks[game][0].size()) - static_cast<int>(picks[game][1].size())) <= 1);
  }
}

TEST(seats_sharing_one_tag_come_with_their_seat_index) {
  Context ctx("duel", 5, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}));
  ctx.Start();
  std::vector<int> per_seat(2, 0);
  for (int i = 0; i < 100; ++i) {
    const BatchRef ref = NextBatch(ctx);
    CheckDistinctRows(ctx, ref);
    for (int row = 0; row < ref.size; ++row) {
      const int seat = Seats(ctx, ref)[row];
      CHECK_EQ(Input<float>(ctx, ref, "s")[row * 3], static_cast<float>(seat));
      ++per_seat[seat];
      Reply<int64_t>(ctx, ref, "a")[row] = seat;
    }
    ctx.SubmitReplies(ref);
  }
  CHECK(std::abs(per_seat[0] - per_seat[1]) <= 5);
}

TEST(game_exception_surfaces_as_game_error_naming_the_game) {
  Context ctx("counter", 8, 2, 0, false, Options(Values{{"fail_at_step", "3"}}));
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.Start();
  std::string message;
  for (int i = 0; i < 100 && message.empty(); ++i) {
    try {
      const BatchRef ref = NextBatch(ctx);
      std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 1);
      ctx.SubmitReplies(ref);
    } catch (const GameError& e) {
      message = e.what();
    }
  }
  CHECK(message.find("game ") != std::string::npos);
  CHECK(message.find("('counter')") != std::string::npos);
  CHECK(message.find("counter failed on purpose at step 3") != std::string::npos);
  // Until Stop, every Wait repeats the error; Stop returns (a hang is the
  // watchdog's to name) and the failure still wins over the stop.
  CHECK_THROWS(ctx.Wait(10), GameError, "failed on purpose");
  ctx.Stop();
  CHECK_THROWS(ctx.Wait(0), GameError, "failed on purpose");
}

TEST(a_non_finite_reward_or_observation_fails_the_game_naming_seat_and_key) {
  const std::map<std::string, std::string> expected = {
      {"r", "('counter'): seat 0's reward (key 'r') is nan at step 3"},
      {"s", "('counter'): seat 0's observation 's' is inf at element 1 at step 3"}};
  for (const auto& [key, message] : expected) {
    Context ctx("counter", 4, 2, 0, false, Options(Values{{"nonfinite_at_step", "3"}, {"nonfinite_key", key}}));
    ctx.AddTag(MakeTag("actor", 4, {"s", "r"}, {"a"}));
    ctx.Start();
    std::string error;
    for (int i = 0; i < 10 && error.empty(); ++i) {
      try {
        const BatchRef ref = NextBatch(ctx);
        // No row handed out holds the spoiled value.
        for (int row = 0; row < ref.size; ++row) {
          CHECK(std::isfinite(Input<float>(ctx, ref, "r")[row]));
          CHECK(std::isfinite(Input<float>(ctx, ref, "s")[2 * row + 1]));
        }
        std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
        ctx.SubmitReplies(ref);
      } catch (const GameError& e) {
        error = e.what();
      }
    }
    CHECK(error.find(message) != std::string::npos);
    ctx.Stop();
  }
}

TEST(exception_at_the_first_reset_is_reported_too) {
  // Every game throws on its first Step, on two threads at once: one error,
  // no deadlock.
  Context ctx("counter", 64, 2, 0, false, Options(Values{{"fail_at_step", "1"}}));
  ctx.AddTag(MakeTag("actor", 64, {"count"}, {"a"}));
  ctx.Start();
  const BatchRef ref = NextBatch(ctx);
  std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
  ctx.SubmitReplies(ref);  // every game throws now, on two threads at once
  CHECK_THROWS(NextBatch(ctx), GameError, "failed on purpose at step 1");
}

TEST(out_of_range_action_is_rejected_and_no_game_resumes) {
  Context ctx("counter", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.Start();
  const BatchRef ref = NextBatch(ctx);
  int64_t* a = Reply<int64_t>(ctx, ref, "a");
  std::fill(a, a + 4, 1);
  a[2] = 3;  // counter has actions 0, 1, 2
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "tag 'actor', key 'a': row 2");
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "replied 3, valid range [0, 2]");
  a[2] = 1;
  a[0] = -1;
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "replied -1");
  // The extremes, where a check by subtraction could overflow.
  a[0] = std::numeric_limits<int64_t>::min();
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "row 0");
  a[0] = std::numeric_limits<int64_t>::max();
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "row 0");
  // The batch held all four games; none of them may have stepped.
  CHECK(!ctx.Wait(200).has_value());
  // Stop returns although the rejected batch is still held (a hang is the
  // watchdog's to name), and the context is stopped.
  ctx.Stop();
  CHECK_THROWS(ctx.Wait(0), std::logic_error, "stopped");
}

// Picks' action is MultiDiscrete {3, 5}; it observes the picks it was given.
TEST(multi_discrete_replies_are_checked_per_component) {
  Context ctx("picks", 2, 1, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 2, {"s"}, {"a"}));
  ctx.Start();
  CHECK(ctx.keys()[ctx.KeyIndex("a")].space.nvec == (std::vector<int64_t>{3, 5}));
  BatchRef ref = NextBatch(ctx);
  int64_t* a = Reply<int64_t>(ctx, ref, "a");
  const int64_t valid[4] = {2, 4, 0, 3};
  std::copy(valid, valid + 4, a);
  a[2] = 3;  // component 0 has 3 choices
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "key 'a': row 1 (game ");
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "component 0 = 3, valid range [0, 2]");
  a[2] = 0;
  a[1] = 5;  // component 1 has 5
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "row 0 (game ");
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "component 1 = 5, valid range [0, 4]");
  a[1] = -1;
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "component 1 = -1");
  CHECK(!ctx.Wait(100).has_value());  // no game stepped with a rejected reply
  std::copy(valid, valid + 4, a);
  const std::vector<int> games(GameIds(ctx, ref), GameIds(ctx, ref) + 2);
  ctx.SubmitReplies(ref);
  ref = NextBatch(ctx);
  for (int row = 0; row < 2; ++row) {
    const int was = GameIds(ctx, ref)[row] == games[0] ? 0 : 1;
    CHECK_EQ(Input<float>(ctx, ref, "s")[row * 2], static_cast<float>(valid[was * 2]));
    CHECK_EQ(Input<float>(ctx, ref, "s")[row * 2 + 1], static_cast<float>(valid[was * 2 + 1]));
  }
  ctx.Stop();
}

// Steer's action is a Box [2] in [-1, 1]: NaN and infinities are rejected
// before any game steps; a finite value outside the bounds reaches the game
// unchanged and the game clips it.
TEST(box_replies_must_be_finite_and_out_of_bounds_values_reach_the_game) {
  Context ctx("steer", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}));
  ctx.Start();
  const elf::KeySpec& key = ctx.keys()[ctx.KeyIndex("a")];
  CHECK(key.space.kind == elf::ActionSpace::Kind::kBox);
  BatchRef ref = NextBatch(ctx);
  float* a = Reply<float>(ctx, ref, "a");
  std::fill(a, a + 8, 0.5f);
  a[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "tag 'actor', key 'a': row 2 (game ");
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "at element 1; a Box action must be finite");
  a[5] = -std::numeric_limits<float>::infinity();
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "row 2");
  a[5] = 0.5f;
  a[0] = std::numeric_limits<float>::infinity();
  CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "row 0");
  CHECK(!ctx.Wait(100).has_value());  // no game stepped
  for (int row = 0; row < 4; ++row) {
    a[row * 2] = row == 0 ? 7.0f : -0.5f;  // 7: out of bounds, clipped by the game to 1
    a[row * 2 + 1] = 1.0f;
  }
  const std::vector<int> rows_games(GameIds(ctx, ref), GameIds(ctx, ref) + 4);
  ctx.SubmitReplies(ref);
  ref = NextBatch(ctx);
  for (int row = 0; row < 4; ++row) {
    const int game = GameIds(ctx, ref)[row];
    const float expected = game == rows_games[0] ? 1.0f : -0.5f;
    CHECK_EQ(Input<float>(ctx, ref, "s")[row * 2 + 1], expected);  // the move as applied
  }
  ctx.Stop();
}

TEST(start_rejects_a_tag_reading_a_reply_key_no_tag_replies) {
  Context ctx("counter", 4, 1, 0, false, Options());
  elf::testing::AddPolicyKeys(ctx, 3);
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a", "pi"}));
  ctx.AddTag(MakeTag("train", 4, {"count", "a", "pi", "V"}, {}, 3));
  CHECK_THROWS(ctx.Start(), std::invalid_argument, "tag 'train' reads key 'V', which no tag with replies replies");
  // Per seat: seat 1's rows of a train tag need a tag that replies V for seat 1.
  Context duel("duel", 4, 1, 0, false, Options());
  elf::testing::AddPolicyKeys(duel, 3);
  elf::TagConfig seat0 = MakeTag("actor0", 4, {"s"}, {"a", "V"});
  elf::TagConfig seat1 = MakeTag("actor1", 4, {"s"}, {"a"});
  seat0.seats = {0};
  seat1.seats = {1};
  duel.AddTag(seat0);
  duel.AddTag(seat1);
  duel.AddTag(MakeTag("train", 4, {"s", "V"}, {}, 2));
  CHECK_THROWS(duel.Start(), std::invalid_argument, "tag 'train' reads key 'V', which no tag with replies replies for seat 1");
}

TEST(the_engine_declares_no_reply_key_beyond_the_games_actions) {
  Context ctx("cartpole", 1, 1, 0, false, Options());
  std::vector<std::string> names;
  for (const auto& key : ctx.keys()) names.push_back(key.name);
  CHECK(names == (std::vector<std::string>{"s", "a", "r", "terminal", "truncated", "episode_return",
                                           "episode_length", "final_s"}));
}

TEST(a_batch_handed_back_twice_is_refused) {
  Context ctx("counter", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.AddTag(MakeTag("log", 4, {"count"}, {}));
  ctx.Start();
  bool replied_twice = false, released_twice = false;
  while (!replied_twice || !released_twice) {
    const BatchRef ref = NextBatch(ctx);
    if (ctx.tag(ref.tag).has_replies()) {
      std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
      ctx.SubmitReplies(ref);
      CHECK_THROWS(ctx.SubmitReplies(ref), std::logic_error, "was already handed back");
      replied_twice = true;
    } else {
      ctx.Release(ref);
      CHECK_THROWS(ctx.Release(ref), std::logic_error, "was already handed back");
      released_twice = true;
    }
  }
  ctx.Stop();
}

TEST(stop_wakes_a_caller_blocked_in_wait) {
  Context ctx("counter", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.Start();
  NextBatch(ctx);  // never replied: nothing else will come
  std::string error;
  bool timed_out = false;
  std::thread waiter([&] {
    try {
      // Only Stop can end this wait: a missed wake-up hangs, and the watchdog
      // names the test.
      timed_out = !ctx.Wait(kForeverMs).has_value();
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  });
  // Gives the waiter time to block first. On a loaded machine it may not be
  // blocked yet; then it meets the stop on entry and the test still passes,
  // checking less: the sleep can weaken the test, never turn it red.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ctx.Stop();
  waiter.join();
  CHECK(!timed_out);
  CHECK(error.find("stopped") != std::string::npos);
}

TEST(fail_wakes_a_caller_blocked_in_wait_with_the_message) {
  Context ctx("counter", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.Start();
  NextBatch(ctx);
  std::string error;
  std::thread waiter([&] {
    try {
      ctx.Wait(kForeverMs);  // only the failure ends it (else the watchdog names the test)
    } catch (const GameError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // to block first; see the test above
  ctx.Fail("callback of tag 'actor' raised ZeroDivisionError");
  waiter.join();
  CHECK_EQ(error, "callback of tag 'actor' raised ZeroDivisionError");
  ctx.Fail("a second failure does not replace the first");
  CHECK_THROWS(ctx.Wait(0), GameError, "ZeroDivisionError");
}

TEST(stop_while_workers_are_busy_returns_and_frees_everything) {
  for (int round = 0; round < elf::testing::Scaled(20); ++round) {
    Context ctx("cartpole", 256, 2, round, false, Options());
    ctx.AddTag(MakeTag("actor", 64, {"s"}, {"a"}));
    ctx.AddTag(MakeTag("train", 32, {"s", "a", "r"}, {}, 5));
    ctx.Start();
    for (int i = 0; i < round % 5; ++i) {
      const BatchRef ref = NextBatch(ctx);
      if (ctx.tag(ref.tag).has_replies()) std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 1);
      Finish(ctx, ref);  // the workers start on the replies...
    }
    ctx.Stop();  // ...and are stopped in the middle
    CHECK_THROWS(ctx.Wait(0), std::logic_error, "stopped");
  }
}

TEST(destroying_a_running_context_stops_it) {
  auto ctx = std::make_unique<Context>("counter", 64, 2, 0, false, Options());
  ctx->AddTag(MakeTag("actor", 16, {"count"}, {"a"}));
  ctx->Start();
  const BatchRef ref = NextBatch(*ctx);
  std::fill(Reply<int64_t>(*ctx, ref, "a"), Reply<int64_t>(*ctx, ref, "a") + ref.size, 0);
  ctx->SubmitReplies(ref);
  ctx.reset();  // no Stop: the destructor stops and joins
  Context never_started("counter", 4, 1, 0, false, Options());
}

TEST(unknown_game_key_tag_and_option_errors_list_the_valid_names) {
  CHECK_THROWS(Context("cartpol", 4, 1, 0, false, Options()), std::invalid_argument,
               "unknown game 'cartpol'; registered games: ");
  CHECK_THROWS(Context("cartpol", 4, 1, 0, false, Options()), std::invalid_argument, "cartpole");
  CHECK_THROWS(Context("cartpole", 4, 1, 0, false, Options(Values{{"max_step", "3"}})), std::invalid_argument,
               "valid options: max_steps");
  Context ctx("cartpole", 4, 1, 0, false, Options());
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s", "obs"}, {"a"})), std::invalid_argument,
               "unknown key 'obs' for game 'cartpole'; valid keys: s, a, r, terminal");
  CHECK_THROWS(ctx.KeyIndex("x"), std::invalid_argument, "valid keys: s, a, r");
  CHECK_EQ(ctx.KeyIndex("terminal"), 3);
  CHECK_THROWS(ctx.TagIndex("actor"), std::invalid_argument, "unknown tag 'actor'; valid tags: (none)");
  ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}));
  ctx.AddTag(MakeTag("train", 4, {"s", "a"}, {}, 3));
  CHECK_THROWS(ctx.TagIndex("learn"), std::invalid_argument, "valid tags: actor, train");
  CHECK_EQ(ctx.TagIndex("train"), 1);
}

TEST(bad_tag_configurations_say_what_is_wrong) {
  Context ctx("duel", 4, 1, 0, false, Options());
  elf::testing::AddPolicyKeys(ctx, 3);
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 0, {"s"}, {"a"})), std::invalid_argument, "batch_size must be >= 1");
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}, 0)), std::invalid_argument, "T must be >= 1");
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {}, {"a"})), std::invalid_argument, "at least one input");
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}, 5)), std::invalid_argument, "must have T = 1");
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s"}, {"r"})), std::invalid_argument, "'r' is written by the game");
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s", "V"}, {"a"})), std::invalid_argument, "input 'V' is a reply key");
  elf::TagConfig min_batch = MakeTag("actor", 4, {"s"}, {"a"});
  min_batch.min_batch = 5;
  CHECK_THROWS(ctx.AddTag(min_batch), std::invalid_argument, "min_batch must be in [1, batch_size]");
  elf::TagConfig seat = MakeTag("actor", 4, {"s"}, {"a"});
  seat.seats = {2};
  CHECK_THROWS(ctx.AddTag(seat), std::invalid_argument, "seat 2 out of range; game 'duel' has 2 seat(s)");
  seat.seats = {1, 0, 1};
  CHECK_THROWS(ctx.AddTag(seat), std::invalid_argument, "seat 1 listed twice");
  ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"}));
  CHECK_THROWS(ctx.AddTag(MakeTag("actor", 4, {"s"}, {"a"})), std::invalid_argument, "tag 'actor': added twice");
  CHECK_THROWS(Context("counter", 0, 1, 0, false, Options()), std::invalid_argument, "num_games must be >= 1");
  CHECK_THROWS(Context("counter", 1, 0, 0, false, Options()), std::invalid_argument, "num_threads must be >= 1");
}

TEST(start_checks_the_routing_of_actions) {
  Context no_tags("counter", 4, 1, 0, false, Options());
  CHECK_THROWS(no_tags.Start(), std::invalid_argument, "add at least one tag");
  Context no_actor("counter", 4, 1, 0, false, Options());
  no_actor.AddTag(MakeTag("train", 4, {"s"}, {}, 2));
  CHECK_THROWS(no_actor.Start(), std::invalid_argument, "needs action 'a' from exactly one tag, but 0");
  Context two_actors("counter", 4, 1, 0, false, Options());
  two_actors.AddTag(MakeTag("actor", 4, {"s"}, {"a"}));
  two_actors.AddTag(MakeTag("actor2", 4, {"s"}, {"a"}));
  CHECK_THROWS(two_actors.Start(), std::invalid_argument, "but 2 tag(s)");
  Context duel("duel", 4, 1, 0, false, Options());
  elf::TagConfig seat0 = MakeTag("actor0", 4, {"s"}, {"a"});
  seat0.seats = {0};
  duel.AddTag(seat0);
  CHECK_THROWS(duel.Start(), std::invalid_argument, "seat 1 of game 'duel' needs action 'a'");
  Context too_big("counter", 4, 1, 0, false, Options());
  too_big.AddTag(MakeTag("actor", 6, {"s"}, {"a"}));
  CHECK_THROWS(too_big.Start(), std::invalid_argument, "batch_size 6 exceeds the 4 game seats");
  // A timeout may deliver partial batches, but never below the seats there are.
  Context unreachable("counter", 4, 1, 0, false, Options());
  elf::TagConfig timed = MakeTag("actor", 6, {"s"}, {"a"});
  timed.timeout_ms = 5;
  timed.min_batch = 5;
  unreachable.AddTag(timed);
  CHECK_THROWS(unreachable.Start(), std::invalid_argument, "min_batch 5 exceeds the 4 game seats");
  timed.min_batch = 4;  // reachable: delivered by the timeout with all 4 rows
  Context reachable("counter", 4, 1, 0, false, Options());
  reachable.AddTag(timed);
  reachable.Start();
  CHECK_EQ(NextBatch(reachable).size, 4);
}

// A Start that threw must leave the context as it was: calling it again
// gives the same error, not a context wired twice.
TEST(start_that_threw_throws_again_rather_than_wiring_twice) {
  Context ctx("counter", 4, 1, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 6, {"count"}, {"a"}));
  CHECK_THROWS(ctx.Start(), std::invalid_argument, "batch_size 6 exceeds the 4 game seats");
  CHECK_THROWS(ctx.Start(), std::invalid_argument, "batch_size 6 exceeds the 4 game seats");
  CHECK(!ctx.started());
}

TEST(lifecycle_misuse_gives_clear_errors) {
  Context ctx("counter", 4, 1, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  ctx.AddTag(MakeTag("train", 4, {"count"}, {}));
  CHECK_THROWS(ctx.Wait(0), std::logic_error, "run() before start()");
  ctx.Start();
  CHECK(ctx.started());
  CHECK_THROWS(ctx.Start(), std::logic_error, "start() called twice");
  CHECK_THROWS(ctx.AddTag(MakeTag("late", 4, {"count"})), std::logic_error, "add_tag after start()");
  CHECK_THROWS(ctx.AddKey({"h", elf::DType::kFloat32, {}, "", elf::KeyRole::kExtra, std::nullopt}), std::logic_error,
               "add_key after start()");
  const BatchRef ref = NextBatch(ctx);
  CHECK_EQ(ctx.tag(ref.tag).name(), "actor");
  CHECK_THROWS(ctx.Release(ref), std::logic_error, "tag 'actor' expects replies");
  ctx.Stop();
  ctx.Stop();  // a no-op
  CHECK_THROWS(ctx.Wait(0), std::logic_error, "stopped");
  CHECK_THROWS(ctx.Start(), std::logic_error, "start() called twice");
  Context stopped_first("counter", 4, 1, 0, false, Options());
  stopped_first.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  stopped_first.Stop();
  CHECK_THROWS(stopped_first.Start(), std::logic_error, "after stop()");
}

TEST(timeout_delivers_partial_batches_of_at_least_min_batch_rows) {
  Context ctx("counter", 4, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", 4, {"count"}, {"a"}));
  elf::TagConfig train = MakeTag("train", 64, {"count"});
  train.timeout_ms = 30;
  train.min_batch = 3;
  ctx.AddTag(train);
  ctx.Start();
  int partial = 0, delivered = 0;
  for (int i = 0; i < 60; ++i) {
    const BatchRef ref = NextBatch(ctx);
    if (ctx.tag(ref.tag).has_replies()) {
      std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
      if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(40));  // let the train batch time out
    } else {
      ++delivered;
      CHECK(ref.size >= 3 && ref.size <= 64);
      partial += ref.size < 64;
    }
    Finish(ctx, ref);
  }
  CHECK(delivered > 0);
  CHECK(partial > 0);
}

TEST(reply_tag_batches_larger_than_its_games_need_a_timeout_and_then_work) {
  Context ctx("counter", 3, 1, 0, false, Options());
  elf::TagConfig actor = MakeTag("actor", 8, {"count"}, {"a"});
  actor.timeout_ms = 5;
  ctx.AddTag(actor);
  ctx.Start();
  CHECK_EQ(ctx.tag(0).capacity(), 3);
  for (int i = 0; i < 20; ++i) {
    const BatchRef ref = NextBatch(ctx);
    CHECK(ref.size >= 1 && ref.size <= 3);
    std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 2);
    ctx.SubmitReplies(ref);
  }
}

// Python holds a train batch (a learner still busy with it): games keep
// stepping into the tag's other buffer, then wait for a free one.
TEST(held_train_batch_lets_games_step_until_its_buffers_run_out) {
  const int games = 8;
  Context ctx("counter", games, 2, 0, false, Options());
  ctx.AddTag(MakeTag("actor", games, {"count"}, {"a"}));
  ctx.AddTag(MakeTag("train", games, {"count"}));  // one batch per step, 2 buffers
  ctx.Start();
  REQUIRE(ctx.tag(1).num_buffers() == 2);
  std::optional<BatchRef> held;
  std::vector<int64_t> actor_counts, train_counts;
  auto take = [&](const BatchRef& ref) {
    const int64_t count = Input<int64_t>(ctx, ref, "count")[0];
    if (ctx.tag(ref.tag).has_replies()) {
      actor_counts.push_back(count);
      std::fill(Reply<int64_t>(ctx, ref, "a"), Reply<int64_t>(ctx, ref, "a") + ref.size, 0);
      ctx.SubmitReplies(ref);
    } else {
      train_counts.push_back(count);
      if (!held) {
        held = ref;
      } else {
        ctx.Release(ref);
      }
    }
  };
  // Holding train batch 0 (count 0): actor steps 0, 1, 2 and train batch 1
  // (count 1) still come; the train row of step 2 then has no buffer.
  while (actor_counts.size() < 3 || train_counts.size() < 2) take(NextBatch(ctx));
  while (auto ref = ctx.Wait(300)) take(*ref);
  CHECK_EQ(actor_counts.size(), std::size_t{3});
  CHECK_EQ(train_counts.size(), std::size_t{2});
  ctx.Release(*held);  // frees the buffer: everything flows again
  while (actor_counts.size() < 10) take(NextBatch(ctx));
  for (std::size_t i = 0; i < actor_counts.size(); ++i) CHECK_EQ(actor_counts[i], static_cast<int64_t>(i));
}

namespace {

// Every batch of a deterministic run: tag, number, size, rows and bytes.
std::vector<std::string> DeterministicRun(int num_threads, int batches) {
  Context ctx("counter", 40, num_threads, 11, true, Options());
  ctx.AddTag(MakeTag("actor", 16, {"s", "count", "r"}, {"a"}));  // groups of 16, 16, 8
  ctx.AddTag(MakeTag("train", 12, {"s", "count", "a", "terminal"}, {}, 3));
  ctx.Start();
  std::vector<std::string> record;
  for (int i = 0; i < batches; ++i) {
    const BatchRef ref = NextBatch(ctx);
    elf::Tag& tag = ctx.tag(ref.tag);
    CHECK_EQ(ref.size, tag.GroupSize(ref.batch));
    std::string text = tag.name() + "#" + std::to_string(ref.batch) + "/" + std::to_string(ref.size) + ":";
    for (int row = 0; row < ref.size; ++row) text += std::to_string(GameIds(ctx, ref)[row]) + ",";
    elf::BatchBuffer& buffer = tag.buffer(ref.buffer);
    for (std::size_t k = 0; k < buffer.inputs.size(); ++k) {
      const std::size_t bytes = ctx.keys()[tag.input_keys()[k]].Bytes();
      for (int t = 0; t < tag.T(); ++t) {
        text.append(static_cast<const char*>(buffer.Input(static_cast<int>(k), t, 0, bytes, tag.capacity())),
                    bytes * ref.size);
      }
    }
    if (tag.has_replies()) {
      const int64_t* count = Input<int64_t>(ctx, ref, "count");
      for (int row = 0; row < ref.size; ++row) {
        Reply<int64_t>(ctx, ref, "a")[row] = PolicyAction(GameIds(ctx, ref)[row], count[row], 3);
      }
    }
    Finish(ctx, ref);
    record.push_back(std::move(text));
  }
  return record;
}

}  // namespace

TEST(deterministic_runs_give_the_same_batches_whatever_the_thread_count) {
  const int batches = elf::testing::Scaled(300, 2);
  const auto one = DeterministicRun(1, batches);
  const auto three = DeterministicRun(3, batches);
  REQUIRE(one.size() == three.size());
  int differ = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    if (one[i] != three[i] && differ++ < 3) {
      elf::testing::Fail(__FILE__, __LINE__, "batch " + std::to_string(i) + " differs: " +
                                                 one[i].substr(0, one[i].find(':')) + " vs " +
                                                 three[i].substr(0, three[i].find(':')));
    }
  }
  CHECK_EQ(differ, 0);
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }

namespace {

// Two seats; seat 1 leaves (terminated) after 2 steps, the game ends after 4.
// Seat s observes (s + 1) * 10 + step; its reward is step + s.
class Leaving : public elf::Game {
 public:
  static elf::GameSpec Spec() {
    elf::SpecBuilder builder{Options()};
    builder.Observation<float>("s", {1}, "seat and step");
    builder.DiscreteAction("a", 2, "ignored");
    builder.Seats(2);
    return builder.Finish();
  }
  void Reset(elf::Rng&) override { step_ = 0; }
  void Observe(int seat, const elf::Row& row) override {
    CHECK(!(seat == 1 && step_ > 2 && step_ < 4));  // the engine does not ask a seat that left
    *row.Get<float>("s") = static_cast<float>((seat + 1) * 10 + step_);
  }
  elf::Outcome Step(const std::vector<elf::Row>&, elf::Rng&) override {
    ++step_;
    return {step_ == 4, false};
  }
  float Reward(int seat) const override { return static_cast<float>(step_ + seat); }
  elf::Outcome SeatOutcome(int seat) const override { return {seat == 1 && step_ == 2, false}; }

 private:
  int step_ = 0;
};

}  // namespace

TEST(a_seat_that_leaves_gets_a_terminal_row_then_empty_terminal_rows_until_the_game_ends) {
  Context ctx("leaving", Leaving::Spec(), [](int) { return std::make_unique<Leaving>(); }, 1, 1, 0, true);
  ctx.AddTag(MakeTag("actor", 2, {"s", "final_s", "r", "terminal", "episode_return", "episode_length"}, {"a"}));
  ctx.Start();
  // Rows of seat 1 by step: s, final_s (terminal rows), r, terminal, episode_return, episode_length.
  struct Want { float s, final_s, r; bool terminal; float ret; int32_t length; };
  const Want seat1[] = {{20, -1, 0, false, 0, 0}, {21, -1, 2, false, 2, 1}, {0, 22, 3, true, 5, 2},
                        {0, 0, 0, true, 0, 0}, {20, 0, 0, true, 0, 0}, {21, -1, 2, false, 2, 1}};
  for (int step = 0; step < 6; ++step) {
    const BatchRef ref = NextBatch(ctx);
    REQUIRE(ref.size == 2);
    for (int row = 0; row < 2; ++row) {
      const int seat = Seats(ctx, ref)[row];
      const float s = Input<float>(ctx, ref, "s")[row];
      const float r = Input<float>(ctx, ref, "r")[row];
      const bool terminal = Input<bool>(ctx, ref, "terminal")[row];
      const int32_t length = Input<int32_t>(ctx, ref, "episode_length")[row];
      if (seat == 0) {  // plays on: step 4 ends its episode
        const int t = step % 4 + (step == 4 ? 4 : 0);
        CHECK_EQ(s, static_cast<float>(10 + step % 4));
        CHECK_EQ(terminal, step == 4);
        CHECK_EQ(length, step == 4 ? 4 : step % 4);
        CHECK_EQ(r, step == 0 ? 0.0f : static_cast<float>(t));
        continue;
      }
      const Want& want = seat1[step];
      CHECK_EQ(s, want.s);
      CHECK_EQ(r, want.r);
      CHECK_EQ(terminal, want.terminal);
      CHECK_EQ(Input<float>(ctx, ref, "episode_return")[row], want.ret);
      CHECK_EQ(length, want.length);
      if (want.final_s >= 0) CHECK_EQ(Input<float>(ctx, ref, "final_s")[row], want.final_s);
    }
    Finish(ctx, ref);
  }
  ctx.Stop();
}

namespace {

// Three seats that observe s = 10 * seat + step and step once all three replied.
class Trio : public elf::Game {
 public:
  static elf::GameSpec Spec() {
    elf::SpecBuilder builder{Options()};
    builder.Observation<float>("s", {1}, "seat and step");
    builder.DiscreteAction("a", 2, "ignored");
    builder.Seats(3);
    return builder.Finish();
  }
  void Reset(elf::Rng&) override { step_ = 0; }
  void Observe(int seat, const elf::Row& row) override { *row.Get<float>("s") = static_cast<float>(10 * seat + step_); }
  elf::Outcome Step(const std::vector<elf::Row>&, elf::Rng&) override {
    ++step_;
    return {};
  }
  float Reward(int) const override { return 0.0f; }

 private:
  int step_ = 0;
};

}  // namespace

// One game of three seats in batches of two: after the first batch, the game
// waits for its third seat, whose row is alone in the batch being filled and
// no other row can come. That batch goes as it is, every step, on the caller
// or in the pool (whose going idle wakes a caller waiting with no time limit).
TEST(a_batch_that_can_never_fill_goes_as_it_is_when_every_game_waits_on_it) {
  for (const int threads : {1, 2}) {
    Context ctx("trio", Trio::Spec(), [](int) { return std::make_unique<Trio>(); }, 1, threads, 0, false);
    ctx.AddTag(MakeTag("actor", 2, {"s"}, {"a"}));
    ctx.Start();
    for (int step = 0; step < 20; ++step) {
      std::vector<float> seen;
      while (seen.size() < 3) {
        const std::optional<BatchRef> ref = ctx.Wait(kForeverMs);
        REQUIRE(ref.has_value());
        CHECK_EQ(ref->size, seen.empty() ? 2 : 1);
        for (int row = 0; row < ref->size; ++row) seen.push_back(Input<float>(ctx, *ref, "s")[row]);
        Finish(ctx, *ref);
      }
      std::sort(seen.begin(), seen.end());
      CHECK(seen == (std::vector<float>{0.0f + step, 10.0f + step, 20.0f + step}));
    }
    ctx.Stop();
  }
}
