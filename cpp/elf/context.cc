#include "elf/context.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "elf/registry.h"

namespace elf {

// One seat of one game: channel g * num_seats + seat. What a router keeps
// per channel (a deterministic one: its position and sends per tag) lives in
// the router, so a channel stays small.
struct Context::Channel {
  int game = 0;
  int seat = 0;
  History history;
  float episode_return = 0.0f;
  int32_t episode_length = 0;
  bool out = false;  // the seat left the game's episode (see context.h)
};

struct Context::GameSlot {
  std::unique_ptr<Game> game;
  Rng rng;
  std::vector<Row> rows;      // per seat, pointed at the current step's record
  int64_t step = 0;
  Stage stage = Stage::kStart;
  bool step_begun = false;    // BeginStep was called for the coming Step
  int cursor = 0;             // sends done in the current stage
  // Replies still to come, counted only when a game sends several rows to
  // tags with replies (with one row, its reply is the last one).
  std::atomic<int> pending{0};
};

inline int Context::ChannelId(const GameSlot& slot, int seat) const {
  return static_cast<int>(&slot - games_.get()) * num_seats() + seat;
}

namespace {

// Rows copied key by key, this many at a time: each key's copy is then one
// tight loop of a fixed size.
constexpr int kRowBlock = 64;

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

Context::~Context() { Stop(); }

// Routes the channels to the tags, shapes their rings, and creates the games
// with their histories.
void Context::Wire() {
  plan_.Build(num_games_);
  const int history_length = plan_.history_length();
  const std::size_t words = History::Words(plan_.layout(), history_length);
  history_arena_.assign(words * num_games_ * num_seats(), 0);
  num_channels_ = num_games_ * num_seats();
  games_ = std::make_unique<GameSlot[]>(num_games_);
  channels_ = std::make_unique<Channel[]>(num_channels_);
  for (int g = 0; g < num_games_; ++g) {
    GameSlot& slot = games_[g];
    slot.rng.Seed(seed_, static_cast<uint64_t>(g));
    slot.game = make_game_(g);
    for (int seat = 0; seat < num_seats(); ++seat) {
      const int id = g * num_seats() + seat;
      Channel& channel = channels_[id];
      channel.game = g;
      channel.seat = seat;
      channel.history = History(&plan_.layout(), history_length, history_arena_.data() + words * id);
      slot.rows.emplace_back(&plan_.game_spec().keys, &plan_.layout());
    }
  }
  for (auto& tag : plan_.tags()) tag->Allocate(keys(), router_->Shape(*tag, static_cast<int>(tag->channels().size())));
  router_->Wire(plan_.tags(), num_channels_);
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
  pool_ = std::make_unique<WorkerPool>(num_threads_);
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
      jobs.push_back({[this, part = std::move(part)]() mutable { AdvanceMany(std::move(part)); }, home});
    }
  }
  pool_->SubmitMany(std::move(jobs));
}

// Runs each game as far as it can go without waiting. The games due to step
// step back to back: consecutive steps of different games are independent,
// so the CPU overlaps their arithmetic (a CartPole step is one long chain of
// divisions), which the engine's work between them would otherwise keep
// apart. The rows they then send to tags with replies are claimed and
// committed in blocks: one atomic operation per block rather than per row,
// and each thread writes its own run of rows. Any exception from a game stops
// the context with the game named.
// Games stepped back to back before their steps are finished: enough for
// the CPU to overlap several steps, few enough that their data stays in L1.
constexpr std::size_t kStepBlock = 16;

void Context::AdvanceMany(std::vector<int> games) {
  int current = -1;
  try {
    while (!games.empty() && !mailbox_.halted()) {
      if (plan_.game_spec().steps_elsewhere) {
        for (int game : games) {
          current = game;
          BeginStepIfReplied(games_[game]);
        }
      }
      std::vector<int> at_sends;
      at_sends.reserve(games.size());
      for (std::size_t begin = 0; begin < games.size(); begin += kStepBlock) {
        const std::size_t end = std::min(games.size(), begin + kStepBlock);
        int at_step[kStepBlock];
        std::size_t due = 0;
        for (std::size_t i = begin; i < end; ++i) {
          current = games[i];
          const Progress progress = RunToStepOrSends(games_[current], current);
          if (progress == Progress::kAtStep) at_step[due++] = current;
          if (progress == Progress::kAtSends) at_sends.push_back(current);
        }
        Outcome outcomes[kStepBlock];
        for (std::size_t i = 0; i < due; ++i) {
          current = at_step[i];
          outcomes[i] = Step(games_[current]);
        }
        for (std::size_t i = 0; i < due; ++i) {
          current = at_step[i];
          FinishStep(games_[current], outcomes[i]);
          at_sends.push_back(current);
        }
      }
      current = -1;
      games = SendObservations(std::move(at_sends));
    }
  } catch (const std::exception& e) {
    Fail(current < 0 ? std::string("engine: ") + e.what()
                     : "game " + std::to_string(current) + " ('" + plan_.game_name() + "'): " + e.what());
  }
}

// Lets every game of a run of replied games start its step before any of
// them is waited on (games hosted in other processes then step in parallel).
void Context::BeginStepIfReplied(GameSlot& slot) {
  if (slot.stage != Stage::kAwaitReplies || slot.step_begun) return;
  slot.game->BeginStep(slot.rows);
  slot.step_begun = true;
}

// Runs a game's stages until it is due to step (kAtStep), has observed and
// waits to send its first row to a tag with replies (kAtSends), or waits for
// replies or parked (kWaits).
Context::Progress Context::RunToStepOrSends(GameSlot& slot, int game) {
  while (!mailbox_.halted()) {
    switch (slot.stage) {
      case Stage::kStart:
        slot.game->Reset(slot.rng);
        for (int seat = 0; seat < num_seats(); ++seat) {
          WriteStepHeader(channels_[ChannelId(slot, seat)], slot.step, 0.0f, Outcome{});
        }
        Observe(slot);
        slot.stage = Stage::kSendObservation;
        ExpectReplies(slot);
        break;
      case Stage::kSendObservation:
        if (slot.cursor == 0) return Progress::kAtSends;
        // A resumed game: parked again, or its last row sent (and the game
        // handed to whoever copies its last reply).
        SendAll(game, plan_.observation_sends(), true);
        return Progress::kWaits;
      case Stage::kAwaitReplies:  // the last reply came in
        slot.stage = Stage::kSendAfterReplies;
        [[fallthrough]];
      case Stage::kSendAfterReplies:
        if (!plan_.after_reply_sends().empty() && !SendAll(game, plan_.after_reply_sends(), false)) return Progress::kWaits;
        slot.stage = Stage::kStep;
        return Progress::kAtStep;
      case Stage::kStep:
        return Progress::kAtStep;
    }
  }
  return Progress::kWaits;
}

// Before a game's first observation send. Its last row is committed only
// after the game is marked kAwaitReplies, and from that commit on the game
// belongs to the thread that copies its last reply (it may come at once):
// the sending thread leaves it alone. The commit and the batch's delivery
// order the game's state before that thread reads it.
void Context::ExpectReplies(GameSlot& slot) {
  if (plan_.observation_sends().size() > 1) {
    slot.pending.store(static_cast<int>(plan_.observation_sends().size()), std::memory_order_relaxed);
  }
}

// The game's last row to a tag with replies is written: hand the game over
// (see ExpectReplies). Call before the commit.
void Context::HandOver(GameSlot& slot) {
  slot.stage = Stage::kAwaitReplies;
  slot.cursor = 0;
}

// Sends the observation rows of games that are all at the first send. Their
// last rows hand them over to the reply copiers; returns the games that
// need no replies (there is no tag with replies), which go on at once.
std::vector<int> Context::SendObservations(std::vector<int> games) {
  const std::size_t routes = plan_.observation_sends().size();
  if (routes == 0) {
    for (int game : games) HandOver(games_[game]);
    return games;
  }
  for (std::size_t route = 0; route < routes && !games.empty(); ++route) {
    const bool last = route + 1 == routes;
    games.resize(SendRows(games.data(), static_cast<int>(games.size()), plan_.observation_sends()[route], last));
    if (last) break;
    for (int game : games) games_[game].cursor = static_cast<int>(route + 1);
  }
  return {};
}

// The one send protocol: one row per game to one (seat, tag) route, claimed
// in blocks as the router grants them, written, labelled,
// handed over if `hand_over` (before the commit: see ExpectReplies) and
// committed; a game whose buffer is busy parks and resumes on its release.
// Moves the games that sent to the front of `games`, in order, and returns
// how many (none if `hand_over`: they are no longer this thread's).
int Context::SendRows(int* games, int count, const Send& send, bool hand_over) {
  Tag& tag = plan_.tag(send.tag);
  int sent = 0;
  int next = 0;
  while (next < count) {
    const Claim claim = router_->ClaimRows(tag, ChannelId(games_[games[next]], send.seat), count - next);
    if (!claim.ok) {
      if (tag.Park(games[next], claim.batch)) ++next;  // else the buffer came free: retry
      continue;
    }
    WriteRows(&games[next], claim.rows, send, claim, claim.row);
    for (int i = 0; i < claim.rows; ++i, ++next) {
      if (hand_over) {
        HandOver(games_[games[next]]);
      } else {
        games[sent++] = games[next];
      }
    }
    if (tag.Commit(claim, claim.rows)) NotifyReady(tag.index(), claim.batch);
  }
  return sent;
}

// Copies seat `send.seat` of `count` games (a T-step window each for T > 1)
// from their histories into rows [row, row + count) of a claim.
void Context::WriteRows(const int* games, int count, const Send& send, const Claim& claim, int row) {
  Tag& tag = plan_.tag(send.tag);
  const int T = tag.T();
  const auto& copies = plan_.input_copies(send.tag);
  BatchBuffer& buffer = *claim.buffer;
  const std::size_t capacity = tag.capacity();
  for (int first = 0; first < count; first += kRowBlock) {
    const int block = std::min(kRowBlock, count - first);
    int channel_ids[kRowBlock];
    uint8_t* records[kRowBlock];
    for (int i = 0; i < block; ++i) channel_ids[i] = ChannelId(games_[games[first + i]], send.seat);
    for (int t = 0; t < T; ++t) {
      for (int i = 0; i < block; ++i) {
        const int64_t step = games_[games[first + i]].step - (T - 1) + t;
        records[i] = channels_[channel_ids[i]].history.Record(step);
      }
      const std::size_t at = t * capacity + row + first;
      for (std::size_t k = 0; k < copies.size(); ++k) {
        MoveKey<true>(reinterpret_cast<uint8_t*>(buffer.inputs[k].data()) + at * copies[k].bytes, records, block,
                         copies[k].offset, copies[k].bytes);
      }
    }
    // `records` now hold the current step, where replies go.
    for (int i = 0; i < block; ++i) {
      const int id = channel_ids[i];
      Tag::Label(claim, row + first + i, channels_[id].game, channels_[id].seat, records[i]);
    }
  }
}

// One game through its sends from its cursor on (resumed games, and tags
// without replies, whose T > 1 windows are due only every T - 1 steps).
// Returns false if it parked, or if `hand_over` and it sent its last row (the
// game is no longer this thread's).
bool Context::SendAll(int game, const std::vector<Send>& sends, bool hand_over) {
  GameSlot& slot = games_[game];
  while (slot.cursor < static_cast<int>(sends.size())) {
    const Send& send = sends[slot.cursor];
    const int T = plan_.tag(send.tag).T();
    const bool due = T == 1 || (slot.step + 1 >= T && (slot.step + 1 - T) % (T - 1) == 0);
    if (due) {
      const bool last = hand_over && slot.cursor + 1 == static_cast<int>(sends.size());
      int one = game;
      if (SendRows(&one, 1, send, last) == 0) return false;  // parked, or handed over
    }
    ++slot.cursor;
  }
  slot.cursor = 0;
  return true;
}

void Context::WriteStepHeader(Channel& channel, int64_t step, float reward, const Outcome& outcome) {
  uint8_t* record = channel.history.Record(step);
  channel.episode_return += reward;
  if (step > 0 && !channel.out) ++channel.episode_length;
  const bool over = outcome.Over();
  const bool truncated = over && !outcome.terminated;
  std::memcpy(record + plan_.header().reward, &reward, sizeof reward);
  std::memcpy(record + plan_.header().terminal, &over, sizeof over);
  std::memcpy(record + plan_.header().truncated, &truncated, sizeof truncated);
  std::memcpy(record + plan_.header().episode_return, &channel.episode_return, sizeof channel.episode_return);
  std::memcpy(record + plan_.header().episode_length, &channel.episode_length, sizeof channel.episode_length);
  if (over) {
    channel.episode_return = 0.0f;
    channel.episode_length = 0;
  }
}

void Context::Observe(GameSlot& slot) {
  for (int seat = 0; seat < num_seats(); ++seat) {
    Row& row = slot.rows[seat];
    Channel& channel = channels_[ChannelId(slot, seat)];
    row.Point(channel.history.Record(slot.step));
    if (channel.out) {
      ZeroObservation(slot, seat, true);
    } else {
      slot.game->Observe(seat, row);
    }
  }
}

// The game keys a game writes in Observe (observations and statistics)
// zeroed, and with `final` their final_ copies too.
void Context::ZeroObservation(GameSlot& slot, int seat, bool final) {
  History& history = channels_[ChannelId(slot, seat)].history;
  for (int key = 0; key < plan_.num_game_keys(); ++key) {
    if (keys()[key].role == KeyRole::kAction) continue;
    std::memset(history.Key(slot.step, key), 0, keys()[key].Bytes());
    const int copy = plan_.final_keys()[key];
    if (final && plan_.keep_final() && copy >= 0) std::memset(history.Key(slot.step, copy), 0, keys()[key].Bytes());
  }
}

// A seat left while its game goes on: its last observation (just observed)
// goes to the final_ keys, its observation keys are zeroed, and it is out.
void Context::SeatLeaves(GameSlot& slot, int seat) {
  Channel& channel = channels_[ChannelId(slot, seat)];
  if (plan_.keep_final()) {
    for (int key = 0; key < plan_.num_game_keys(); ++key) {
      if (plan_.final_keys()[key] < 0) continue;
      std::memcpy(channel.history.Key(slot.step, plan_.final_keys()[key]), channel.history.Key(slot.step, key),
                  keys()[key].Bytes());
    }
  }
  ZeroObservation(slot, seat, false);
  channel.out = true;
}

Outcome Context::Step(GameSlot& slot) {
  if (plan_.game_spec().steps_elsewhere && !slot.step_begun) slot.game->BeginStep(slot.rows);
  slot.step_begun = false;
  return slot.game->Step(slot.rows, slot.rng);
}

// After Step: the step's header, a reset if the episode is over, and the next
// observation; the game then goes to its observation sends.
void Context::FinishStep(GameSlot& slot, const Outcome& outcome) {
  ++slot.step;
  Channel* channels = &channels_[ChannelId(slot, 0)];
  std::vector<int> leaving;  // seats whose episode ended in this step while the game goes on (rare: no allocation)
  for (int seat = 0; seat < num_seats(); ++seat) {
    Channel& channel = channels[seat];
    if (channel.out) {
      WriteStepHeader(channel, slot.step, 0.0f, Outcome{true, false});
      continue;
    }
    const Outcome own = slot.game->SeatOutcome(seat);
    WriteStepHeader(channel, slot.step, slot.game->Reward(seat), own.Over() ? own : outcome);
    if (own.Over() && !outcome.Over()) leaving.push_back(seat);
  }
  if (outcome.Over()) {
    if (plan_.keep_final()) KeepFinalObservation(slot);
    for (int seat = 0; seat < num_seats(); ++seat) channels[seat].out = false;
    slot.game->Reset(slot.rng);
  }
  Observe(slot);
  for (int seat : leaving) SeatLeaves(slot, seat);
  slot.stage = Stage::kSendObservation;
  ExpectReplies(slot);
}

// Observes the state an episode ended in and copies it into the `final_`
// keys of the record (the next Observe overwrites the game's own keys).
void Context::KeepFinalObservation(GameSlot& slot) {
  Observe(slot);
  for (int seat = 0; seat < num_seats(); ++seat) {
    History& history = channels_[ChannelId(slot, seat)].history;
    for (int key = 0; key < plan_.num_game_keys(); ++key) {
      if (plan_.final_keys()[key] < 0) continue;
      std::memcpy(history.Key(slot.step, plan_.final_keys()[key]), history.Key(slot.step, key), keys()[key].Bytes());
    }
  }
}

void Context::NotifyReady(int tag, int64_t batch) { router_->Ready(mailbox_, plan_.tag(tag), batch); }

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
  if (Stuck(ready)) found.stuck = StuckMessage();
  if (wake_ns != INT64_MAX) found.wake = Mailbox::Clock::time_point(std::chrono::nanoseconds(wake_ns));
  return found;
}

// Nothing can ever happen again: the caller holds no batch (so none will be
// replied or released), none is ready, no thread works or has work queued,
// and no partial batch will be delivered by its timeout. Every game then
// waits for a batch that cannot complete: a configuration in which, for
// example, each game waits for replies from two tags and the rows left to
// each are fewer than its batch (or its min_batch) needs. Runs under the
// mailbox's lock (the posted batches, and the order with NotifyReady: a
// thread that completes a batch counts as working until it has taken it).
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
         "). When each game waits for replies from several tags, the rows left to a tag can be fewer than it "
         "needs: lower the batch sizes, or add timeouts with a min_batch these rows reach";
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
  // Rows are claimed in runs by tasks that each advance games of one home
  // worker; each run is copied out on that home (see SplitReplies).
  std::vector<WorkerPool::Job> jobs;
  for (const ReplyRun& run : SplitReplies(buffer.game_ids.data(), ref.size, Homes{num_games_, num_threads_})) {
    jobs.push_back({[this, tag_index = ref.tag, batch = ref.batch, run] {
                      ConsumeReplies(tag_index, batch, run.begin, run.end);
                    },
                    run.home});
  }
  pool_->SubmitMany(std::move(jobs));
  mailbox_.HandedBack();  // only now: until the jobs are queued, a waiting thread must not think the games stuck
}

// Copies rows [begin, end) of a replied batch into their games' histories and
// carries on each game whose replies are now all in.
void Context::ConsumeReplies(int tag_index, int64_t batch, int begin, int end) {
  Tag& tag = plan_.tag(tag_index);
  BatchBuffer& buffer = tag.buffer(static_cast<int>(batch % tag.num_buffers()));
  const auto& copies = plan_.reply_copies(tag_index);
  const bool counted = plan_.observation_sends().size() > 1;
  std::vector<int> ready_games;
  ready_games.reserve(end - begin);
  ScatterReplies(buffer, copies, begin, end);
  for (int row = begin; row < end; ++row) {
    const int game = buffer.game_ids[row];
    if (!counted || games_[game].pending.fetch_sub(1, std::memory_order_acq_rel) == 1) ready_games.push_back(game);
  }
  // The rows are copied out: the buffer may go to the next batch before the
  // games run on (they may want to write into it).
  if (buffer.unconsumed_replies.fetch_sub(end - begin) == end - begin) ReleaseBuffer(tag, batch);
  AdvanceMany(std::move(ready_games));
}

void Context::Release(const BatchRef& ref) {
  Tag& tag = plan_.tag(ref.tag);
  if (tag.has_replies()) throw std::logic_error("tag '" + tag.name() + "' expects replies");
  TakeBack(tag, ref);
  ReleaseBuffer(tag, ref.batch);
  mailbox_.HandedBack();  // after the parked games are queued (see SubmitReplies)
}

void Context::ReleaseBuffer(Tag& tag, int64_t batch) { Resume(tag.Release(batch)); }

void Context::Resume(const std::vector<int>& games) {
  if (!games.empty()) SubmitAdvance(games);
}

void Context::Fail(const std::string& message) { mailbox_.Fail(message); }

void Context::Stop() {
  if (!mailbox_.Stop()) return;
  if (pool_) pool_->Stop();
}

}  // namespace elf
