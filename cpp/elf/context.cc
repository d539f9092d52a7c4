#include "elf/context.h"

#include <algorithm>

#include "elf/clock.h"
#include "elf/registry.h"

namespace elf {

namespace {

// Below this much work (thread CPU) a batch's replies are always stepped on
// the caller: a hand-off to the pool and back costs about as much on a busy
// machine (see context.h).
constexpr double kHandoffNs = 20'000.0;
// Above this much work a batch always goes to the pool: longer measured
// hand-offs come from a loaded machine (a woken worker waits for a CPU),
// which a large batch should not be stepped serially for (see context.h).
constexpr double kMaxHandoffNs = 200'000.0;
// Every this many batches of a tag stepped on the caller, its replied rows'
// work is measured (a thread CPU clock read costs a system call or so).
constexpr uint64_t kCostSampling = 8;
// The pool's way is taken only if it is measured this many times sooner: it
// also costs two wake-ups' CPU, and at a tie (one thread, or cores that do
// not run beside each other) noise would send every other stretch of
// batches to the pool.
constexpr double kPoolSooner = 1.1;
// Every this many batches of a tag, one goes the way not chosen, so that the
// measure of each way follows the work (see StepOnCaller). Seldom: on a
// machine where the pool's way is slow, each trial costs a batch's work
// again in wake-ups and cold caches.
constexpr uint64_t kProbing = 256;

}  // namespace

Context::Context(const std::string& game, int num_games, int num_threads, uint64_t seed,
                 bool deterministic, const Options& options)
    : Context(game, Registry::Global().Spec(game, options),
              [make = Registry::Global().Find(game).make, options](int) { return make(options); }, num_games,
              num_threads, seed, deterministic) {}

Context::Context(const std::string& name, GameSpec spec, GameFactory make_game, int num_games, int num_threads,
                 uint64_t seed, bool deterministic)
    : num_games_(num_games), num_threads_(num_threads), seed_(seed), router_(Router::Make(deterministic)),
      plan_(name, std::move(spec)), make_game_(std::move(make_game)) {
  if (num_games < 1) throw std::invalid_argument("num_games must be >= 1, got " + std::to_string(num_games));
  if (num_threads < 1) throw std::invalid_argument("num_threads must be >= 1, got " + std::to_string(num_threads));
}

void Context::AddKey(KeySpec key) {
  if (started_) throw std::logic_error("add_key after start()");
  plan_.AddKey(std::move(key));
}

int Context::AddTag(TagConfig config) {
  if (started_) throw std::logic_error("add_tag after start()");
  return plan_.AddTag(std::move(config));
}

void Context::DeferResets() {
  if (started_) throw std::logic_error("defer_resets after start()");
  defer_resets_ = true;
}

Context::~Context() { Stop(); }

// Routes the channels to the tags, creates the games with their histories,
// and shapes the tags' rings.
void Context::Wire() {
  plan_.Build(num_games_);
  stepper_ = std::make_unique<Stepper>(plan_, *router_, mailbox_, make_game_, num_games_, seed_,
                                       [this](const std::vector<int>& games) { SubmitAdvance(games); },
                                       defer_resets_);
  for (auto& tag : plan_.tags()) tag->Allocate(keys(), router_->Shape(*tag, static_cast<int>(tag->channels().size())));
  router_->Wire(plan_.tags(), num_games_ * num_seats());
}

void Context::Start() {
  if (started_) throw std::logic_error("start() called twice");
  if (mailbox_.stopped()) throw std::logic_error("start() after stop(): create a new GameContext");
  if (!wiring_error_.empty()) throw std::logic_error("start() failed earlier (" + wiring_error_ + "); create a new context");
  plan_.Validate(num_games_, *router_);
  try {
    Wire();
  } catch (const std::exception& e) {
    wiring_error_ = e.what();  // e.g. a game's constructor threw: the context is half built
    throw;
  }
  started_ = true;
  costs_ = std::make_unique<TagCost[]>(plan_.num_tags());
  pool_ = std::make_unique<WorkerPool>(num_threads_, [this] { mailbox_.NotifyWaiter(); });
  std::vector<int> all(num_games_);
  for (int g = 0; g < num_games_; ++g) all[g] = g;
  SubmitAdvance(all);
}

// Splits games into a few tasks per worker, each task on the home worker of
// its games (see Home), so a game's data stays in one core's cache.
void Context::SubmitAdvance(const std::vector<int>& games) {
  const std::size_t chunk = std::max<std::size_t>(16, (games.size() + 2 * num_threads_ - 1) / (2 * num_threads_));
  std::vector<std::vector<int>> by_home(num_threads_);
  for (int game : games) by_home[Home(game)].push_back(game);
  std::vector<WorkerPool::Job> jobs;
  for (int home = 0; home < num_threads_; ++home) {
    const auto& mine = by_home[home];
    for (std::size_t begin = 0; begin < mine.size(); begin += chunk) {
      std::vector<int> part(mine.begin() + begin, mine.begin() + std::min(mine.size(), begin + chunk));
      jobs.push_back({[this, part = std::move(part)]() mutable { stepper_->Advance(std::move(part)); }, home});
    }
  }
  pool_->SubmitMany(std::move(jobs));
}

std::optional<BatchRef> Context::Wait(int timeout_ms) {
  if (!started_) throw std::logic_error("run() before start()");
  const auto deadline = Mailbox::Clock::now() + std::chrono::milliseconds(timeout_ms);
  return mailbox_.Wait(deadline, [this](std::deque<BatchRef>& ready) { return Poll(ready); });
}

// Under the mailbox's lock: closes timed-out batches, then takes the next
// batch to deliver, or says when to look again, or that nothing ever will.
Mailbox::Poll Context::Poll(std::deque<BatchRef>& ready) {
  Mailbox::Poll found;
  // Timeouts first, so a tag's partial batch is not starved by other tags
  // whose batches are always ready (first-come mode only).
  int64_t wake_ns = INT64_MAX;
  const int64_t now_ns = Tag::NowNs();
  for (auto& tag : plan_.tags()) {
    if (const auto batch = tag->CloseIfTimedOut(now_ns)) {
      const int index = static_cast<int>(*batch % tag->num_buffers());
      ready.push_back({tag->index(), *batch, index, tag->buffer(index).size});
    }
    wake_ns = std::min(wake_ns, tag->TimeoutDeadlineNs(now_ns));
  }
  // Each tag delivers its batches in the order of their numbers; the router
  // orders the tags (see router.h).
  found.ref = router_->TakeReady(plan_.tags(), ready);
  if (found.ref) return found;
  if (Stuck(ready)) {
    if (router_->CloseStalled(plan_.tags(), ready)) {
      closed_stalled_.fetch_add(1, std::memory_order_relaxed);
      found.ref = router_->TakeReady(plan_.tags(), ready);
    }
    if (found.ref) return found;
    found.stuck = StuckMessage();
  }
  if (wake_ns != INT64_MAX) found.wake = Mailbox::Clock::time_point(std::chrono::nanoseconds(wake_ns));
  return found;
}

// Nothing can happen unless a batch goes short: the caller holds no batch
// (so none will be replied or released), none is ready, no thread works or
// has work queued, and no partial batch will be delivered by its timeout.
// Every game then waits for replies to rows in batches still filling (the
// router may deliver one as it is: Router::CloseStalled) or for nothing at
// all. Runs under the mailbox's lock (the posted batches, and the order with
// the commit that completes a batch: a thread that commits counts as working
// until it has handed the batch to the mailbox).
bool Context::Stuck(const std::deque<BatchRef>& ready) {
  if (mailbox_.held() > 0 || !ready.empty() || !pool_->Idle()) return false;
  for (const auto& tag : plan_.tags()) {
    if (tag->WillTimeOut()) return false;
  }
  return true;
}

std::string Context::StuckMessage() const {
  std::string tags;
  for (const auto& tag : plan_.tags()) {
    const TagConfig& config = tag->config();
    tags += (tags.empty() ? "" : "; ") + std::string("tag '") + tag->name() + "': " +
            std::to_string(tag->FillingRows()) + " of " + std::to_string(config.batch_size) + " rows, ";
    tags += !tag->times_out() ? std::string("no timeout")
                              : "its timeout needs min_batch " + std::to_string(config.min_batch);
  }
  return "stuck: every game waits for a batch that can never be delivered, and the caller holds no batch (" + tags +
         ")";
}

// A delivered batch is handed back exactly once: its `ready` flag is taken
// here, so a second hand-back is refused instead of corrupting the ring.
void Context::TakeBack(Tag& tag, const BatchRef& ref) {
  BatchBuffer& buffer = tag.buffer(ref.buffer);
  if (buffer.owner.load() != ref.batch || !buffer.ready.exchange(false)) {
    throw std::logic_error("batch " + std::to_string(ref.batch) + " of tag '" + tag.name() +
                           "' was already handed back");
  }
}

void Context::SubmitReplies(const BatchRef& ref) {
  Tag& tag = plan_.tag(ref.tag);
  if (!tag.has_replies()) throw std::logic_error("tag '" + tag.name() + "' has no replies; release its batches");
  CheckReplies(tag, keys(), ref);
  TakeBack(tag, ref);
  BatchBuffer& buffer = tag.buffer(ref.buffer);
  buffer.unconsumed_replies.store(ref.size);
  TagCost& cost = costs_[ref.tag];
  const uint64_t n = cost.batches++;
  if (plan_.game_spec().steps_elsewhere) {
    // The caller posts the games' steps itself: their processes start now,
    // not after a worker's wake-up; the pool waits for them and goes on.
    SubmitAdvance(stepper_->ConsumeRepliesAndBeginSteps(ref.tag, ref.batch, ref.size));
    given_to_pool_.fetch_add(1, std::memory_order_relaxed);
    mailbox_.HandedBack();  // after the jobs are queued (see below)
    return;
  }
  // A trial of the way not chosen takes two batches and times the second:
  // the first finds its games' data in the other way's caches, and timed
  // cold, a caller's trial from the pool's way would keep a tag in the pool.
  // The first batches go neither way on trial: they pay first touches. A
  // tag sent to the pool before its caller's measures settled tries the
  // caller as often as the caller measures itself, so an early measure that
  // was too high does not keep it there.
  const bool on_caller = StepOnCaller(cost, ref.size);
  const uint64_t phase = n % (on_caller || cost.Settled() ? kProbing : kCostSampling);
  const bool probe = n > 1 && phase < 2 && cost.NsPerRow() * ref.size >= kHandoffNs;
  if (on_caller != probe) {
    // Only the caller's own stepping is timed. A worker's time would add what
    // a hand-off costs it (caches gone cold while it slept, waking the
    // caller), which the pool's measure holds instead.
    stepped_by_caller_.fetch_add(1, std::memory_order_relaxed);
    ConsumeTimed(ref.tag, ref.batch, ref.size, n > 0 && (probe ? phase == 1 : n % kCostSampling == 0));
    mailbox_.HandedBack();
    return;
  }
  given_to_pool_.fetch_add(1, std::memory_order_relaxed);
  pool_->SubmitMany(PoolJobs(ref, cost));
  mailbox_.HandedBack();  // only now: until the jobs are queued, a waiting thread must not think the games stuck
}

// Whether a batch of `size` rows of the tag measured in `cost` comes back
// sooner stepped on the caller (its measured work) than by the pool (its
// measured turnaround, or before one is measured, HandoffNs); see context.h.
bool Context::StepOnCaller(const TagCost& cost, int size) const {
  const double work = cost.NsPerRow() * size;
  if (work < kHandoffNs) return true;
  if (work >= kMaxHandoffNs) return false;
  const double pool = cost.pool_ns_per_row.load(std::memory_order_relaxed);
  return work <= (pool > 0.0 ? kPoolSooner * pool * size : HandoffNs());
}

// The pool's runs of a replied batch: rows claimed in runs by tasks that each
// advance games of one home worker, each run copied out on that home (see
// SplitReplies). If no batch of the tag is being timed, this one is: its
// last run to finish records the wall time since now per row, plus the
// caller's wake-up (as long as a worker's, the pool measures).
std::vector<WorkerPool::Job> Context::PoolJobs(const BatchRef& ref, TagCost& cost) {
  const std::vector<ReplyRun> runs =
      SplitReplies(plan_.tag(ref.tag).buffer(ref.buffer).game_ids.data(), ref.size, Homes{num_games_, num_threads_});
  const bool timed = cost.timed_runs.load(std::memory_order_acquire) == 0;
  if (timed) {
    cost.pool_start_ns = Tag::NowNs();
    cost.pool_rows = ref.size;
    cost.timed_runs.store(static_cast<int>(runs.size()), std::memory_order_relaxed);
  }
  std::vector<WorkerPool::Job> jobs;
  for (const ReplyRun& run : runs) {
    jobs.push_back({[this, tag = ref.tag, batch = ref.batch, run, timed, &cost] {
                      stepper_->ConsumeReplies(tag, batch, run.begin, run.end);
                      if (!timed) return;
                      const int64_t start = cost.pool_start_ns;  // read before the count-down frees them
                      const int rows = cost.pool_rows;
                      if (cost.timed_runs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
                      const double ns = static_cast<double>(Tag::NowNs() - start) + pool_->WakeLatencyNs();
                      cost.pool_ns_per_row.store(ns / rows, std::memory_order_relaxed);
                    },
                    run.home});
  }
  return jobs;
}

// The model of the pool's way, before it is measured: the work below which a
// batch is stepped faster on the caller. The pool's way costs two wake-ups
// (a worker's, then the caller's when the batch is done) and saves the share
// of the work the other threads take: with t threads, work * (t - 1) / t, so
// the break-even work is 2 wake-ups * t / (t - 1). One thread saves no work;
// it still takes batches of more than two wake-ups' work, so that the caller
// may serve other tags meanwhile. Kept between kHandoffNs and kMaxHandoffNs.
double Context::HandoffNs() const {
  const double wakeups = 2 * pool_->WakeLatencyNs();
  const double share = num_threads_ > 1 ? num_threads_ / (num_threads_ - 1.0) : 1.0;
  return std::clamp(wakeups * share, kHandoffNs, kMaxHandoffNs);
}

// Copies the `size` rows of a replied batch and advances their games on the
// calling thread; if `timed`, records the thread CPU this took per row.
void Context::ConsumeTimed(int tag, int64_t batch, int size, bool timed) {
  const int64_t start = timed ? ThreadCpuNs() : 0;
  stepper_->ConsumeReplies(tag, batch, 0, size);
  if (timed) costs_[tag].Record(static_cast<double>(ThreadCpuNs() - start) / size);
}

void Context::Release(const BatchRef& ref) {
  Tag& tag = plan_.tag(ref.tag);
  if (tag.has_replies()) throw std::logic_error("tag '" + tag.name() + "' expects replies");
  TakeBack(tag, ref);
  stepper_->ReleaseBuffer(tag, ref.batch);
  mailbox_.HandedBack();  // after the parked games are queued (see SubmitReplies)
}

Context::Handoffs Context::handoffs() const {
  Handoffs counts;
  counts.worker_wakeups = pool_ ? pool_->wakeups() : 0;
  counts.caller_sleeps = mailbox_.sleeps();
  counts.batches_stepped_by_caller = stepped_by_caller_.load(std::memory_order_relaxed);
  counts.batches_given_to_pool = given_to_pool_.load(std::memory_order_relaxed);
  counts.batches_closed_stalled = closed_stalled_.load(std::memory_order_relaxed);
  counts.wake_latency_ns = pool_ ? pool_->WakeLatencyNs() : 0;
  return counts;
}

void Context::Fail(const std::string& message) { mailbox_.Fail(message); }

void Context::Stop() {
  if (!mailbox_.Stop()) return;
  if (pool_) pool_->Stop();
}

}  // namespace elf
