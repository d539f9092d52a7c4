// Stress: 1024 games on a few threads, several tags with random (seeded)
// batch sizes, history lengths and timeouts, a learner that sometimes holds
// its batch, and a stop in the middle while workers are busy, repeated with
// fresh contexts. Every batch is checked against what the games must have
// sent; run under AddressSanitizer and ThreadSanitizer
// (scripts/test_cpp.sh address|thread) it must report nothing.
#include <algorithm>
#include <chrono>
#include <deque>
#include <iostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "check.h"
#include "driver.h"
#include "elf/context.h"

using elf::BatchRef;
using elf::Context;
using elf::Options;
using elf::TagConfig;
using elf::testing::Finish;
using elf::testing::GameIds;
using elf::testing::Input;
using elf::testing::MakeTag;
using elf::testing::NextBatch;
using elf::testing::PolicyAction;
using elf::testing::Reply;
using elf::testing::Seats;

namespace {

constexpr int kGames = 1024;

int Uniform(std::mt19937& rng, int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); }

std::string Describe(const TagConfig& tag) {
  return tag.name + "(batch " + std::to_string(tag.batch_size) + ", T " + std::to_string(tag.T) + ", timeout " +
         std::to_string(tag.timeout_ms) + ", min " + std::to_string(tag.min_batch) + ")";
}

// Random timeout (or none) on a tag.
void MaybeTimeout(std::mt19937& rng, TagConfig& tag, bool always = false) {
  if (always || Uniform(rng, 0, 2) == 0) {
    tag.timeout_ms = Uniform(rng, 1, 8);
    tag.min_batch = Uniform(rng, 1, std::max(1, tag.batch_size / 2));
  }
}

// A game whose step needs replies from two tags waits for both. With `tag`
// timing out, delivery can always go on if its min_batch is at most
// games - other.batch_size + 1: when neither tag can deliver, the games
// outside `other`'s partial batch (at least games - other.batch_size + 1
// of them) all wait in `tag`'s. A larger min_batch can leave every game
// waiting in two partial batches that never fill, a deadlock of the
// configuration the engine cannot resolve.
void KeepReachable(TagConfig& tag, const TagConfig& other, int games) {
  tag.min_batch = std::min(tag.min_batch, games - other.batch_size + 1);
}

// Checks what counter games sent to each tag. A tag with replies holds its
// game until the reply, so a game's rows arrive in step order: counts go up
// by one. A tag without replies delivers batches in completion order, which
// may differ from batch order (a batch closed by its timeout completes when
// its last pending row lands), so its rows are checked at the end: per game,
// in count order, the batch numbers must not go down (a game claims its
// rows one after the other, and batch numbers only grow), no row may come
// twice, and windows must hold consecutive steps and the actor's replies.
class CounterChecker {
 public:
  explicit CounterChecker(int num_tags) : last_(num_tags, std::vector<int64_t>(kGames, -1)), rows_(num_tags) {}

  void Check(Context& ctx, const BatchRef& ref) {
    elf::Tag& tag = ctx.tag(ref.tag);
    const int T = tag.T(), capacity = tag.capacity();
    const int64_t* count = Input<int64_t>(ctx, ref, "count");
    const bool has_a = !tag.has_replies() && HasInput(tag, "a");
    const int64_t* a = has_a ? Input<int64_t>(ctx, ref, "a") : nullptr;
    const bool has_v = !tag.has_replies() && HasInput(tag, "V");
    const float* v = has_v ? Input<float>(ctx, ref, "V") : nullptr;
    if (!delivered_.insert({ref.tag, ref.batch}).second) {
      Report(tag.name() + ": batch " + std::to_string(ref.batch) + " delivered twice");
    }
    std::set<int> games;
    for (int row = 0; row < ref.size; ++row) {
      const int game = GameIds(ctx, ref)[row];
      if (game < 0 || game >= kGames) {
        Report(tag.name() + ": row " + std::to_string(row) + " has game id " + std::to_string(game));
        continue;
      }
      const int64_t first = count[row];
      for (int t = 0; t < T; ++t) {
        const int64_t c = count[t * capacity + row];
        if (c != first + t) Report(tag.name() + ": window counts not consecutive");
        if (a != nullptr && a[t * capacity + row] != PolicyAction(game, c, 3)) {
          Report(tag.name() + ": game " + std::to_string(game) + " step " + std::to_string(c) +
                 " holds an action the actor did not reply");
        }
        if (v != nullptr && v[t * capacity + row] != static_cast<float>(c)) {
          Report(tag.name() + ": game " + std::to_string(game) + " step " + std::to_string(c) +
                 " holds a value nobody replied");
        }
      }
      if (!tag.has_replies()) {
        rows_[ref.tag].push_back({game, first, ref.batch});
        continue;
      }
      if (!games.insert(game).second) Report(tag.name() + ": game twice in one batch");
      int64_t& last = last_[ref.tag][game];
      if (first != last + 1) {
        Report(tag.name() + " batch " + std::to_string(ref.batch) + ": game " + std::to_string(game) +
               " sent count " + std::to_string(first) + ", expected " + std::to_string(last + 1));
      }
      last = first;
    }
  }

  // The order checks of tags without replies, over everything delivered.
  void Finish(Context& ctx) {
    for (int tag = 0; tag < static_cast<int>(rows_.size()); ++tag) {
      auto& rows = rows_[tag];
      std::sort(rows.begin(), rows.end());
      const int step = std::max(1, ctx.tag(tag).T() - 1);
      for (std::size_t i = 1; i < rows.size(); ++i) {
        const SentRow& before = rows[i - 1];
        const SentRow& after = rows[i];
        if (before.game != after.game) continue;
        const std::string where = ctx.tag(tag).name() + ": game " + std::to_string(after.game) + " ";
        if (after.count == before.count) {
          Report(where + "sent count " + std::to_string(after.count) + " twice");
        } else if ((after.count - before.count) % step != 0) {
          Report(where + "windows start at " + std::to_string(before.count) + " and " + std::to_string(after.count));
        } else if (after.batch < before.batch) {
          Report(where + "sent count " + std::to_string(before.count) + " in batch " + std::to_string(before.batch) +
                 " but the later count " + std::to_string(after.count) + " in the earlier batch " +
                 std::to_string(after.batch) + " (a row written into a batch it did not claim)");
        }
      }
    }
  }

 private:
  struct SentRow {
    int game;
    int64_t count;
    int64_t batch;
    bool operator<(const SentRow& other) const {
      return std::tie(game, count, batch) < std::tie(other.game, other.count, other.batch);
    }
  };

  static bool HasInput(const elf::Tag& tag, const std::string& key) {
    const auto& inputs = tag.config().inputs;
    return std::find(inputs.begin(), inputs.end(), key) != inputs.end();
  }
  void Report(const std::string& what) {
    if (reported_++ < 5) elf::testing::Fail(__FILE__, __LINE__, what);
  }

  std::vector<std::vector<int64_t>> last_;    // per tag with replies, per game: last count
  std::vector<std::vector<SentRow>> rows_;    // per tag without replies: every row delivered
  std::set<std::pair<int, int64_t>> delivered_;
  int reported_ = 0;
};

// Size bounds every delivered batch must respect.
void CheckSize(Context& ctx, const BatchRef& ref, bool deterministic) {
  elf::Tag& tag = ctx.tag(ref.tag);
  const TagConfig& config = tag.config();
  const int capacity = tag.capacity();
  bool ok;
  if (deterministic) {
    ok = ref.size == tag.GroupSize(ref.batch);
  } else if (config.timeout_ms >= 0) {
    ok = ref.size >= std::min(config.min_batch, capacity) && ref.size <= capacity;
  } else {
    ok = ref.size == capacity;
  }
  if (!ok) {
    elf::testing::Fail(__FILE__, __LINE__,
                       Describe(config) + " batch " + std::to_string(ref.batch) + " delivered with " +
                           std::to_string(ref.size) + " rows (capacity " + std::to_string(capacity) + ")");
  }
}

enum class Ending { kStopAfterReplies, kStopFromAnotherThread, kFailThenStop, kDestroy };

struct Round {
  std::string game;
  int games = kGames;
  int threads = 2;
  bool deterministic = false;
  std::vector<TagConfig> tags;
  int batches = 0;
  Ending ending = Ending::kStopAfterReplies;
};

// A random scenario; the same seed gives the same one.
Round MakeRound(unsigned seed) {
  std::mt19937 rng(seed);
  Round round;
  round.threads = Uniform(rng, 1, 4);
  round.batches = elf::testing::Scaled(Uniform(rng, 200, 2000), 4);
  round.ending = static_cast<Ending>(Uniform(rng, 0, 3));
  const int kind = seed % 4;
  if (kind == 0 || kind == 1) {  // counter: actor + train window + a log tag
    round.game = "counter";
    round.deterministic = kind == 1;
    // Either the actor replies a and V, or a separate critic tag replies V:
    // then each game waits for two replies per step.
    const bool critic = Uniform(rng, 0, 1) == 1;
    TagConfig actor = MakeTag("actor", Uniform(rng, 1, kGames), {"s", "count", "r", "terminal"},
                              critic ? std::vector<std::string>{"a"} : std::vector<std::string>{"a", "V"});
    TagConfig value = MakeTag("critic", Uniform(rng, 1, kGames), {"count", "s"}, {"V"});
    TagConfig train = MakeTag("train", Uniform(rng, 1, 2 * kGames), {"count", "a", "V", "r", "terminal"}, {},
                              Uniform(rng, 2, 6));
    TagConfig log = MakeTag("log", Uniform(rng, 1, 3 * kGames), {"count", "episode_return", "episode_length"});
    if (!round.deterministic) {
      MaybeTimeout(rng, actor);
      MaybeTimeout(rng, value, critic);
      MaybeTimeout(rng, train);
      MaybeTimeout(rng, log, true);  // at least one tag always times out
      if (critic) KeepReachable(value, actor, kGames);
    }
    round.tags = {actor, train, log};
    if (critic) round.tags.push_back(value);
  } else if (kind == 2) {  // duel: one reply tag per seat, a shared train tag
    round.game = "duel";
    round.games = kGames / 2;  // 1024 seats
    TagConfig seat0 = MakeTag("actor0", Uniform(rng, 1, kGames / 2), {"s", "r"}, {"a"});
    TagConfig seat1 = MakeTag("actor1", Uniform(rng, 1, kGames / 2), {"s", "r"}, {"a"});
    seat0.seats = {0};
    seat1.seats = {1};
    TagConfig train = MakeTag("train", Uniform(rng, 1, kGames), {"s", "a", "r", "terminal"}, {}, Uniform(rng, 1, 4));
    MaybeTimeout(rng, seat1, true);
    KeepReachable(seat1, seat0, round.games);
    MaybeTimeout(rng, train);
    round.tags = {seat0, seat1, train};
  } else {  // cartpole: actor + train
    round.game = "cartpole";
    TagConfig actor = MakeTag("actor", Uniform(rng, 1, kGames), {"s", "r", "terminal"}, {"a", "pi", "V"});
    TagConfig train = MakeTag("train", Uniform(rng, 1, kGames), {"s", "a", "pi", "V", "r", "terminal"}, {},
                              Uniform(rng, 2, 8));
    MaybeTimeout(rng, actor, true);
    round.tags = {actor, train};
  }
  return round;
}

std::string Describe(const Round& round, unsigned seed) {
  std::string text = "seed " + std::to_string(seed) + ": " + round.game + " x" + std::to_string(round.games) +
                     ", " + std::to_string(round.threads) + " thread(s)" +
                     (round.deterministic ? ", deterministic" : "") + ", " + std::to_string(round.batches) +
                     " batches, ending " + std::to_string(static_cast<int>(round.ending)) + ";";
  for (const auto& tag : round.tags) text += " " + Describe(tag);
  return text;
}

// Writes valid replies: counter/duel actions from PolicyAction, a uniform pi.
void WriteReplies(Context& ctx, const BatchRef& ref) {
  elf::Tag& tag = ctx.tag(ref.tag);
  const auto& replies = tag.config().replies;
  const bool counter = ctx.game_name() == "counter";
  const int64_t* count = counter ? Input<int64_t>(ctx, ref, "count") : nullptr;
  const int actions = ctx.game_name() == "cartpole" ? 2 : 3;
  for (const auto& key : replies) {
    if (key == "a") {
      int64_t* a = Reply<int64_t>(ctx, ref, "a");
      for (int row = 0; row < ref.size; ++row) {
        const int game = GameIds(ctx, ref)[row];
        a[row] = counter ? PolicyAction(game, count[row], actions) : PolicyAction(game, ref.batch + row, actions);
      }
    } else if (key == "pi") {
      float* pi = Reply<float>(ctx, ref, "pi");
      std::fill(pi, pi + ref.size * actions, 1.0f / static_cast<float>(actions));
    } else if (key == "V") {
      float* v = Reply<float>(ctx, ref, "V");
      for (int row = 0; row < ref.size; ++row) v[row] = counter ? static_cast<float>(count[row]) : 0.5f;
    }
  }
}

void RunRound(unsigned seed) {
  const Round round = MakeRound(seed);
  std::cerr << "  " << Describe(round, seed) << std::endl;
  std::mt19937 rng(seed * 7919u + 1);
  auto ctx = std::make_unique<Context>(round.game, round.games, round.threads, seed, round.deterministic, Options());
  elf::testing::AddPolicyKeys(*ctx, round.game == "cartpole" ? 2 : 3);
  for (const auto& tag : round.tags) ctx->AddTag(tag);
  ctx->Start();
  CounterChecker checker(ctx->num_tags());
  std::deque<BatchRef> held;  // batches of tags without replies the "learner" still holds
  for (int i = 0; i < round.batches; ++i) {
    std::optional<BatchRef> next = ctx->Wait(10);
    if (!next) {
      // Nothing ready: perhaps the games wait for a buffer we hold.
      if (!held.empty()) {
        ctx->Release(held.front());
        held.pop_front();
      }
      next = NextBatch(*ctx);
    }
    const BatchRef ref = *next;
    elf::Tag& tag = ctx->tag(ref.tag);
    CheckSize(*ctx, ref, round.deterministic);
    if (round.game == "counter") checker.Check(*ctx, ref);
    if (!tag.config().seats.empty()) {
      for (int row = 0; row < ref.size; ++row) {
        if (Seats(*ctx, ref)[row] != tag.config().seats[0]) {
          elf::testing::Fail(__FILE__, __LINE__, tag.name() + " got a row of another seat");
          break;
        }
      }
    }
    if (tag.has_replies()) {
      WriteReplies(*ctx, ref);
      ctx->SubmitReplies(ref);
    } else if (!round.deterministic && held.empty() && Uniform(rng, 0, 3) == 0) {
      held.push_back(ref);  // release it later
    } else {
      ctx->Release(ref);
      if (!held.empty() && Uniform(rng, 0, 1) == 0) {
        ctx->Release(held.front());
        held.pop_front();
      }
    }
  }
  if (round.game == "counter") checker.Finish(*ctx);
  // Stop in the middle: replies were just handed over and the workers are
  // busy copying them and stepping games. Each ending must return (a hang is
  // the watchdog's to name, however long a loaded machine takes) and leave
  // the context stopped; no ending is timed.
  switch (round.ending) {
    case Ending::kStopAfterReplies:
      ctx->Stop();
      break;
    case Ending::kStopFromAnotherThread: {
      std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(rng, 0, 5)));
        ctx->Stop();
      });
      try {
        for (;;) {  // keep consuming until the stop lands
          if (auto ref = ctx->Wait(5)) {
            if (ctx->tag(ref->tag).has_replies()) WriteReplies(*ctx, *ref);
            Finish(*ctx, *ref);
          }
        }
      } catch (const std::logic_error&) {
      }
      stopper.join();
      break;
    }
    case Ending::kFailThenStop:
      ctx->Fail("stress: the learner gave up");
      CHECK_THROWS(ctx->Wait(0), elf::GameError, "the learner gave up");
      ctx->Stop();
      break;
    case Ending::kDestroy:
      ctx.reset();
      break;
  }
  if (ctx) {
    if (round.ending == Ending::kFailThenStop) {
      CHECK_THROWS(ctx->Wait(0), elf::GameError, "the learner gave up");  // the failure outlives the stop
    } else {
      CHECK_THROWS(ctx->Wait(0), std::logic_error, "stopped");
    }
  }
}

}  // namespace

TEST(thousand_games_random_tags_and_batch_sizes_stop_in_the_middle) {
  const unsigned rounds = elf::testing::kSanitized ? 24 : 32;
  for (unsigned seed = 1; seed <= rounds; ++seed) RunRound(seed);
}

TEST(repeated_start_stop_with_no_batch_taken) {
  for (int i = 0; i < elf::testing::Scaled(20); ++i) {
    Context ctx("counter", kGames, 2, i, i % 2 == 1, Options());
    ctx.AddTag(MakeTag("actor", 128, {"count"}, {"a"}));
    ctx.AddTag(MakeTag("train", 256, {"count"}, {}, 3));
    ctx.Start();
    if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ctx.Stop();
  }
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
