// The game context: N games, a pool of worker threads that advances them,
// and the tags that batch their states for the Python thread. A facade over
// the parts below; it builds them at Start and runs nothing itself.
//
// Threads. One "caller" thread (Python's) configures the context, then calls
// Wait / SubmitReplies / Release / Stop. Worker threads advance games. Any
// thread may call Fail. After Start, configuration calls throw.
//
// A game's life (the stage machine of stepper.h), step s, for each seat:
//   1. write r, terminal, ... and the game's observation into history step s;
//   2. send a row to every tag with replies, wait for all of them;
//   3. send a row to every tag without replies, and a [T]-step window to every
//      T > 1 tag whose window ends at s (windows overlap by one step);
//   4. Step the game with the replies; reset it if the episode ended.
// A game that finds a tag's buffer busy parks and is resumed on its release.
//
// Seats that leave. When a game's SeatOutcome(seat) says a seat's episode
// ended while the game goes on, that seat's row of the step holds terminal
// (and truncated as the seat's), its reward, its episode's final return and
// length, and its last observation in the final_ keys; its observation keys
// are zero. Until the game's episode ends the seat is out: each of its rows
// has zero observation keys (and final_ keys), r = 0, terminal = 1, truncated = 0 and
// episode_return = episode_length = 0 (a terminal row of length 0 ends no
// episode), and the game is not asked to observe it; replies for it are still
// checked and handed to the game, which ignores them. When the game's
// episode ends the seat is back, from the next episode's first row.
//
// Order. Each tag delivers its batches in the order of their numbers, in
// first-come mode too, so the rows one game sends to a tag reach the caller
// in the order it sent them: its T > 1 windows in step order, whatever the
// load. Across tags, and across games within a tag, first-come mode promises
// no order; deterministic mode fixes all of it (see router.h).
//
// Small batches step on the caller. Handing a batch's replies to the pool
// costs a worker's wake-up and, when the batch completes, the caller's: two
// futex calls and context switches, each 5 to 26 us as measured on a 2-core
// VM, against 3 us of work for 64 CartPole games. So SubmitReplies copies the
// replies and advances the games itself, on the calling thread, unless the
// pool returns the batch at least 1.1 times sooner. The caller's way is its
// measured work (the caller's thread CPU per row, sampled every few batches);
// the pool's way is measured too, as the wall time from the hand-off to the
// batch's last run done plus a wake-up (the caller's), because what it saves
// depends on whether the machine's cores really run beside each other (on a
// 2-core VM, 4096 CartPole games took as long on two workers as on the
// caller, at 1.4 times the CPU). Until the pool's way is measured, a model of
// it decides (HandoffNs); each way is tried again every 256 batches of a tag
// (two batches, the second timed, warm), so that both measures follow the
// work. Batches of under 20 us of work always step on the caller, and of over
// 200 us always go to the pool: on a loaded machine a woken worker waits for
// a CPU, which a large batch should not be stepped serially for. Which thread
// steps a game changes no batch (see router.h). Games that step elsewhere
// (hosted in other processes) have their steps posted by the caller, so their
// processes start at once, and the pool waits for the results.
//
// Failures (a game throws, Fail is called): every waiter wakes, workers stop
// advancing games, and Wait throws GameError with the message until Stop.
//
// Parts: the keys, tags, routes and every check of them in the Plan
// (plan.h); the games, their histories and their stage machine with the one
// send protocol in the Stepper (stepper.h); which rows a send claims and
// which batch is delivered next in a Router (router.h); each tag's ring of
// buffers and its claims in a Tag (tag.h); the ready batches, the failure
// and the stop in a Mailbox (mailbox.h); the checks and scatter of replies
// at the reply desk (reply.h); the threads in WorkerPool. Context keeps the
// delivery loop (Wait, stuck detection) and hands replies and releases on.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/mailbox.h"
#include "elf/options.h"
#include "elf/plan.h"
#include "elf/reply.h"
#include "elf/router.h"
#include "elf/spec.h"
#include "elf/stepper.h"
#include "elf/tag.h"
#include "elf/worker_pool.h"

namespace elf {

class Context {
 public:
  // A registered game, created by name with its options.
  Context(const std::string& game, int num_games, int num_threads, uint64_t seed, bool deterministic,
          const Options& options);
  // Any game: its spec and a factory (e.g. games hosted in other processes).
  Context(const std::string& name, GameSpec spec, GameFactory make_game, int num_games, int num_threads,
          uint64_t seed, bool deterministic);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Configuration (before Start).
  // An extra reply key (a policy, a value, a recurrent state): the engine
  // declares none itself; whoever replies one declares it here.
  void AddKey(KeySpec key);
  int AddTag(TagConfig config);
  // Resets an ended game on the replies to its terminal row instead of at
  // once (Gymnasium's next-step autoreset; see stepper.h).
  void DeferResets();

  // Queries.
  const std::string& game_name() const { return plan_.game_name(); }
  int num_games() const { return num_games_; }
  int num_threads() const { return num_threads_; }
  int num_seats() const { return plan_.num_seats(); }
  const std::vector<KeySpec>& keys() const { return plan_.keys(); }
  const GameSpec& game_spec() const { return plan_.game_spec(); }
  int KeyIndex(const std::string& name) const { return plan_.KeyIndex(name); }  // throws, listing the keys
  int TagIndex(const std::string& name) const { return plan_.TagIndex(name); }  // throws, listing the tags
  int num_tags() const { return plan_.num_tags(); }
  Tag& tag(int index) { return plan_.tag(index); }
  bool started() const { return started_; }

  void Start();
  // The next batch, or nothing if none came within timeout_ms (so the caller
  // can check for signals and call again). Throws GameError after a failure.
  std::optional<BatchRef> Wait(int timeout_ms);
  // After the caller wrote the reply arrays of `ref`: checks the bounds of
  // integer actions (std::invalid_argument naming tag, key, row and game; no
  // game resumes then) and lets the games go on.
  void SubmitReplies(const BatchRef& ref);
  // Returns the buffer of a batch from a tag without replies.
  void Release(const BatchRef& ref);
  void Fail(const std::string& message);
  void Stop();

  // Hand-offs between threads so far: worker wake-ups, the caller's sleeps
  // in Wait, and replied batches the caller stepped itself or gave the pool.
  // The last two are decided per batch; the first two also depend on the
  // scheduler (a worker still finishing its task takes the next without a
  // wake-up). Also the batches delivered short because every game waited
  // for rows of batches still filling (Router::CloseStalled): a user would
  // otherwise see them only as batches below batch_size.
  struct Handoffs {
    uint64_t worker_wakeups = 0;
    uint64_t caller_sleeps = 0;
    uint64_t batches_stepped_by_caller = 0;
    uint64_t batches_given_to_pool = 0;
    uint64_t batches_closed_stalled = 0;
    double wake_latency_ns = 0;  // the pool's (WorkerPool::WakeLatencyNs)
  };
  Handoffs handoffs() const;

 private:
  void Wire();
  int Home(int game) const { return Homes{num_games_, num_threads_}.Of(game); }
  void SubmitAdvance(const std::vector<int>& games);
  Mailbox::Poll Poll(std::deque<BatchRef>& ready);
  bool Stuck(const std::deque<BatchRef>& ready);
  std::string StuckMessage() const;
  void TakeBack(Tag& tag, const BatchRef& ref);
  double HandoffNs() const;
  void ConsumeTimed(int tag, int64_t batch, int size, bool timed);

  // Per tag, the caller's: the batches replied and the last few measures of
  // a replied row's work. The estimate is their minimum: noise (an interrupt,
  // a page fault) only ever adds to a measure, and one outlier must not send
  // a small tag to the pool, where it is measured only now and then.
  // And the pool's way, measured by the pool: one batch at a time is timed
  // (`timed_runs` counts its runs still to finish; the caller sets the start
  // and size only when it is 0, and the last run reads them before it counts
  // down), each measure replacing the last.
  struct TagCost {
    uint64_t batches = 0;
    std::array<double, 4> ns_per_row{};
    size_t measured = 0;  // measures recorded; the last few are in ns_per_row
    std::atomic<double> pool_ns_per_row{0.0};  // 0: not measured yet
    std::atomic<int> timed_runs{0};
    int64_t pool_start_ns = 0;
    int pool_rows = 0;

    void Record(double ns) { ns_per_row[measured++ % ns_per_row.size()] = ns; }
    // Whether the last few are all measures: an early one (first touches, a
    // loaded machine) has been outlived.
    bool Settled() const { return measured >= ns_per_row.size(); }
    double NsPerRow() const {  // 0: not measured yet
      const auto end = ns_per_row.begin() + std::min(measured, ns_per_row.size());
      return measured == 0 ? 0.0 : *std::min_element(ns_per_row.begin(), end);
    }
  };
  bool StepOnCaller(const TagCost& cost, int size) const;
  std::vector<WorkerPool::Job> PoolJobs(const BatchRef& ref, TagCost& cost);
  std::unique_ptr<TagCost[]> costs_;
  std::atomic<uint64_t> stepped_by_caller_{0};
  std::atomic<uint64_t> given_to_pool_{0};
  std::atomic<uint64_t> closed_stalled_{0};  // counted under the mailbox's lock, read by handoffs()

  int num_games_;
  int num_threads_;
  uint64_t seed_;
  std::unique_ptr<Router> router_;  // the claim policy: first-come or deterministic
  Plan plan_;                       // keys, tags, routes and their checks
  GameFactory make_game_;
  Mailbox mailbox_;  // ready batches (first-come: in completion order), failure, stop
  std::unique_ptr<Stepper> stepper_;  // the games and their stage machine, built at Start
  std::unique_ptr<WorkerPool> pool_;  // after what its tasks use: destroyed (its threads joined) first

  bool started_ = false;
  bool defer_resets_ = false;
  std::string wiring_error_;  // set if building the games failed; Start is then refused
};

}  // namespace elf
