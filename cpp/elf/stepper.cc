#include "elf/stepper.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "elf/finite.h"
#include "elf/reply.h"

namespace elf {

// One seat of one game: channel g * num_seats + seat. What a router keeps
// per channel (a deterministic one: its position and sends per tag) lives in
// the router, so a channel stays small.
struct Stepper::Channel {
  History history;
  // The current step's record (its header is written first: WriteStepHeader
  // points this there), which Observe and the rows to tags read.
  uint8_t* record = nullptr;
  float episode_return = 0.0f;
  int32_t episode_length = 0;
  bool out = false;  // the seat left the game's episode (see context.h)
};

struct Stepper::GameSlot {
  std::unique_ptr<Game> game;
  Rng rng;
  std::vector<Row> rows;      // per seat, pointed at the current step's record
  int64_t step = 0;
  Stage stage = Stage::kStart;
  bool step_begun = false;    // BeginStep was called for the coming Step
  bool reset_due = false;     // deferred resets: the episode ended, the replies reset the game
  int cursor = 0;             // sends done in the current stage
  // Replies still to come, counted only when a game sends several rows to
  // tags with replies (with one row, its reply is the last one).
  std::atomic<int> pending{0};
};

namespace {

// A fault of game `game` found outside its own calls (a non-finite value in
// the rows it sends): Advance names that game, not the one at hand.
struct GameFault : std::runtime_error {
  GameFault(int game, const std::string& what) : std::runtime_error(what), game(game) {}
  int game;
};

// Rows copied key by key, this many at a time: each key's copy is then one
// tight loop of a fixed size.
constexpr int kRowBlock = 64;

// Games stepped back to back before their steps are finished: enough for
// the CPU to overlap several steps, few enough that their data stays in L1.
// 32 rather than 16 took a CartPole step from 35.5 to 34.9 ns of CPU
// (engine_loop, 256 games, 1 thread); 8 was slower, 64 no faster.
constexpr std::size_t kStepBlock = 32;

}  // namespace

Stepper::Stepper(Plan& plan, Router& router, Mailbox& mailbox, const GameFactory& make_game, int num_games,
                 uint64_t seed, Resume resume, bool defer_resets)
    : plan_(plan), router_(router), mailbox_(mailbox), resume_(std::move(resume)), num_games_(num_games),
      num_seats_(plan.num_seats()), header_(plan.header()), steps_elsewhere_(plan.game_spec().steps_elsewhere),
      counts_replies_(plan.observation_sends().size() > 1), sends_after_replies_(!plan.after_reply_sends().empty()),
      defer_resets_(defer_resets) {
  std::vector<bool> game_float(plan_.keys().size(), false);  // written by the game, with a float dtype
  for (int key = 0; key < plan_.num_game_keys(); ++key) {
    const KeySpec& spec = plan_.keys()[key];
    const bool observed = spec.role == KeyRole::kObservation || spec.role == KeyRole::kStatistic;
    if (!observed || (spec.dtype != DType::kFloat32 && spec.dtype != DType::kFloat64)) continue;
    game_float[key] = true;
    if (plan_.final_keys()[key] >= 0) game_float[plan_.final_keys()[key]] = true;
  }
  float_inputs_.resize(plan_.num_tags());
  for (int tag = 0; tag < plan_.num_tags(); ++tag) {
    const std::vector<int>& inputs = plan_.tag(tag).input_keys();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!game_float[inputs[i]]) continue;
      const KeySpec& spec = plan_.keys()[inputs[i]];
      const bool is_double = spec.dtype == DType::kFloat64;
      float_inputs_[tag].push_back({static_cast<int>(i), inputs[i], is_double, spec.NumElements()});
    }
  }
  const int history_length = plan_.history_length();
  const std::size_t words = History::Words(plan_.layout(), history_length);
  history_arena_.assign(words * num_games_ * num_seats_, 0);
  games_ = std::make_unique<GameSlot[]>(num_games_);
  channels_ = std::make_unique<Channel[]>(num_games_ * num_seats_);
  for (int g = 0; g < num_games_; ++g) {
    GameSlot& slot = games_[g];
    slot.rng.Seed(seed, static_cast<uint64_t>(g));
    slot.game = make_game(g);
    for (int seat = 0; seat < num_seats_; ++seat) {
      const int id = g * num_seats_ + seat;
      channels_[id].history = History(&plan_.layout(), history_length, history_arena_.data() + words * id);
      slot.rows.emplace_back(&plan_.game_spec().keys, &plan_.layout());
    }
  }
}

Stepper::~Stepper() = default;

// Runs each game as far as it can go without waiting. The games due to step
// step back to back: consecutive steps of different games are independent,
// so the CPU overlaps their arithmetic (a CartPole step is one long chain of
// divisions), which the engine's work between them would otherwise keep
// apart. The rows they then send to tags with replies are claimed and
// committed in blocks: one atomic operation per block rather than per row,
// and each thread writes its own run of rows. Any exception from a game
// fails the mailbox with the game named.
void Stepper::Advance(std::vector<int> games) {
  int current = -1;
  try {
    while (!games.empty() && !mailbox_.halted()) {
      if (steps_elsewhere_) {
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
          if (num_seats_ == 1) {
            FinishStep<true>(current, outcomes[i]);
          } else {
            FinishStep<false>(current, outcomes[i]);
          }
          at_sends.push_back(current);
        }
      }
      current = -1;
      games = SendObservations(std::move(at_sends));
    }
  } catch (const GameFault& e) {  // a game's fault found in the rows it sends
    mailbox_.Fail(GameMessage(e.game, e.what()));
  } catch (const std::exception& e) {
    mailbox_.Fail(current < 0 ? std::string("engine: ") + e.what() : GameMessage(current, e.what()));
  }
}

std::string Stepper::GameMessage(int game, const std::string& what) const {
  return "game " + std::to_string(game) + " ('" + plan_.game_name() + "'): " + what;
}

// Lets every game of a run of replied games start its step before any of
// them is waited on (games hosted in other processes then step in parallel).
void Stepper::BeginStepIfReplied(GameSlot& slot) {
  if (slot.stage != Stage::kAwaitReplies || slot.step_begun || slot.reset_due) return;
  slot.game->BeginStep(slot.rows);
  slot.step_begun = true;
}

// Runs a game's stages until it is due to step (kAtStep), has observed and
// waits to send its first row to a tag with replies (kAtSends), or waits for
// replies or parked (kWaits).
// Inline in Advance: it runs for every step of every game.
inline Stepper::Progress Stepper::RunToStepOrSends(GameSlot& slot, int game) {
  switch (slot.stage) {
    case Stage::kStart:
      Start(slot, game);
      return Progress::kAtSends;
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
      if (sends_after_replies_ && !SendAll(game, plan_.after_reply_sends(), false)) return Progress::kWaits;
      slot.stage = Stage::kStep;
      return Progress::kAtStep;
    case Stage::kStep:
      break;
  }
  return Progress::kAtStep;
}

// An episode of the game starts (its first, or a deferred reset's): reset, observed, and at its
// observation sends.
void Stepper::Start(GameSlot& slot, int game) {
  slot.game->Reset(slot.rng);
  for (int seat = 0; seat < num_seats_; ++seat) {
    WriteStepHeader(channels_[ChannelId(game, seat)], slot.step, 0.0f, Outcome{}, false);
  }
  Observe<false>(slot, &channels_[ChannelId(game, 0)], game);
  slot.stage = Stage::kSendObservation;
  ExpectReplies(slot);
}

// Before a game's first observation send. Its last row is committed only
// after the game is marked kAwaitReplies, and from that commit on the game
// belongs to the thread that copies its last reply (it may come at once):
// the sending thread leaves it alone. The commit and the batch's delivery
// order the game's state before that thread reads it.
void Stepper::ExpectReplies(GameSlot& slot) {
  if (counts_replies_) {
    slot.pending.store(static_cast<int>(plan_.observation_sends().size()), std::memory_order_relaxed);
  }
}

// The game's last row to a tag with replies is written: hand the game over
// (see ExpectReplies). Call before the commit.
void Stepper::HandOver(GameSlot& slot) {
  slot.stage = Stage::kAwaitReplies;
  slot.cursor = 0;
}

// Sends the observation rows of games that are all at the first send. Their
// last rows hand them over to the reply copiers; returns the games that
// need no replies (there is no tag with replies), which go on at once.
std::vector<int> Stepper::SendObservations(std::vector<int> games) {
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
int Stepper::SendRows(int* games, int count, const Send& send, bool hand_over) {
  Tag& tag = plan_.tag(send.tag);
  int sent = 0;
  int next = 0;
  while (next < count) {
    const int want = Claimable(games + next, count - next);
    const Claim claim = router_.ClaimRows(tag, ChannelId(games[next], send.seat), want);
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
    if (tag.Commit(claim, claim.rows)) router_.Ready(mailbox_, tag, claim.batch);
  }
  return sent;
}

// How many of `count` games' sends one claim may take: all of them, unless a
// send's row depends on its channel (the deterministic router); then the
// games whose channels follow the first's one by one (consecutive games of a
// single-seat game).
int Stepper::Claimable(const int* games, int count) const {
  if (!router_.FixedPlaces()) return count;
  if (num_seats_ > 1) return 1;
  int run = 1;
  while (run < count && games[run] == games[0] + run) ++run;
  return run;
}

// Copies seat `send.seat` of `count` games (a T-step window each for T > 1)
// from their histories into rows [row, row + count) of a claim.
void Stepper::WriteRows(const int* games, int count, const Send& send, const Claim& claim, int row) {
  Tag& tag = plan_.tag(send.tag);
  const int T = tag.T();
  const auto& copies = plan_.input_copies(send.tag);
  BatchBuffer& buffer = *claim.buffer;
  const std::size_t capacity = tag.capacity();
  for (int first = 0; first < count; first += kRowBlock) {
    const int block = std::min(kRowBlock, count - first);
    uint8_t* records[kRowBlock];
    for (int t = 0; t < T; ++t) {
      // The current step's record is the channel's; an earlier one is found from the game's step.
      const bool current = t == T - 1;
      for (int i = 0; i < block; ++i) {
        Channel& channel = channels_[ChannelId(games[first + i], send.seat)];
        records[i] = current ? channel.record : channel.history.Record(games_[games[first + i]].step - (T - 1) + t);
      }
      const std::size_t at = t * capacity + row + first;
      for (std::size_t k = 0; k < copies.size(); ++k) {
        MoveKey<true>(reinterpret_cast<uint8_t*>(buffer.inputs[k].data()) + at * copies[k].bytes, records, block,
                         copies[k].offset, copies[k].bytes);
      }
      if (!float_inputs_[send.tag].empty()) CheckFloatInputs(&games[first], block, send, buffer, at, t);
    }
    // `records` now hold the current step, where replies go.
    for (int i = 0; i < block; ++i) Tag::Label(claim, row + first + i, games[first + i], send.seat, records[i]);
  }
}

// Throws, naming the game, seat and key, unless the float inputs of the rows
// just written (time step t of `count` games' rows, from row `at` of the
// buffer) are finite. One vectorized pass over each such column of a block
// costs a few instructions a row: with the reward's check, a CartPole step
// took 522 instructions against 504 without (cpp/bench/engine_loop, 1024
// games, under callgrind); checking each observation as the game wrote it
// took 60 to 90 more, its short loops' set-up dominating.
void Stepper::CheckFloatInputs(const int* games, int count, const Send& send, BatchBuffer& buffer, std::size_t at,
                               int t) {
  for (const FloatInput& input : float_inputs_[send.tag]) {
    const uint8_t* column = reinterpret_cast<const uint8_t*>(buffer.inputs[input.input].data()) +
                            at * plan_.input_copies(send.tag)[input.input].bytes;
    const int64_t values = count * input.count;
    const bool finite = input.is_double ? AllFinite(reinterpret_cast<const double*>(column), values)
                                        : AllFinite(reinterpret_cast<const float*>(column), values);
    if (!finite) NonFiniteInput(games, count, send, input, column, t);
  }
}

// The failed check's message, out of line so that the steps' path stays short.
void Stepper::NonFiniteInput(const int* games, int count, const Send& send, const FloatInput& input,
                             const uint8_t* column, int t) {
  const KeySpec& spec = plan_.keys()[input.key];
  const std::size_t bytes = spec.Bytes();
  const auto finite = [&](int i) {
    return input.is_double ? AllFinite(reinterpret_cast<const double*>(column + i * bytes), input.count)
                           : AllFinite(reinterpret_cast<const float*>(column + i * bytes), input.count);
  };
  int i = 0;
  while (i + 1 < count && finite(i)) ++i;
  const int game = games[i];
  const int64_t step = games_[game].step - (plan_.tag(send.tag).T() - 1) + t;
  // (a final_ copy has the engine's role; it is an observation)
  const char* what = spec.role == KeyRole::kStatistic ? "statistic '" : "observation '";
  throw GameFault(game, "seat " + std::to_string(send.seat) + "'s " + what + spec.name + "' is " +
                            FirstNonFinite(column + i * bytes, spec.dtype, input.count) + " at step " +
                            std::to_string(step) + "; a game's rewards and float observations must be finite");
}

// One game through its sends from its cursor on (resumed games, and tags
// without replies, whose T > 1 windows are due only every T - 1 steps).
// Returns false if it parked, or if `hand_over` and it sent its last row (the
// game is no longer this thread's).
bool Stepper::SendAll(int game, const std::vector<Send>& sends, bool hand_over) {
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

// The engine's keys of one seat's step, in its record: the reward, whether
// the step ended the episode and how, and the episode's return and length so
// far (on a terminal row, those of the episode that ended; they then start
// again). A step counts toward the length unless it starts an episode or the
// seat is out.
inline void Stepper::WriteStepHeader(Channel& channel, int64_t step, float reward, Outcome outcome, bool counted) {
  // The offsets in registers: a store into the record could alias a member.
  const Plan::HeaderOffsets header = header_;
  uint8_t* record = channel.history.Record(step);
  channel.record = record;
  // Bitwise, not short-circuit: no branch between the stores.
  const bool over = outcome.terminated | outcome.truncated;
  const bool truncated = outcome.truncated & !outcome.terminated;
  const float episode_return = channel.episode_return + reward;
  const int32_t episode_length = channel.episode_length + static_cast<int32_t>(counted);
  std::memcpy(record + header.reward, &reward, sizeof reward);
  std::memcpy(record + header.terminal, &over, sizeof over);
  std::memcpy(record + header.truncated, &truncated, sizeof truncated);
  std::memcpy(record + header.episode_return, &episode_return, sizeof episode_return);
  std::memcpy(record + header.episode_length, &episode_length, sizeof episode_length);
  channel.episode_return = over ? 0.0f : episode_return;
  channel.episode_length = over ? 0 : episode_length;
}

// Observes every seat of a game into its current record. Inline in
// FinishStep: it runs for every step of every game. kOneSeat: the game has
// one seat (num_seats_ is 1), so the loop over seats is unrolled.
template <bool kOneSeat>
inline void Stepper::Observe(GameSlot& slot, Channel* channels, int game) {
  const int num_seats = kOneSeat ? 1 : num_seats_;
  for (int seat = 0; seat < num_seats; ++seat) {
    Row& row = slot.rows[seat];
    row.Point(channels[seat].record);
    if (channels[seat].out) {
      ZeroObservation(game, seat, true);
    } else {
      slot.game->Observe(seat, row);
    }
  }
}

// Out of line, as NonFiniteInput: the steps' path stays short.
void Stepper::NonFiniteReward(int game, int seat, float reward) {
  throw std::runtime_error("seat " + std::to_string(seat) + "'s reward (key '" + keys::kReward + "') is " +
                           FirstNonFinite(&reward, DType::kFloat32, 1) + " at step " +
                           std::to_string(games_[game].step) +
                           "; a game's rewards and float observations must be finite");
}

// The game keys a game writes in Observe (observations and statistics)
// zeroed, and with `final` their final_ copies too.
void Stepper::ZeroObservation(int game, int seat, bool final) {
  const int64_t step = games_[game].step;
  History& history = channels_[ChannelId(game, seat)].history;
  for (int key = 0; key < plan_.num_game_keys(); ++key) {
    const KeySpec& spec = plan_.keys()[key];
    if (spec.role == KeyRole::kAction) continue;
    std::memset(history.Key(step, key), 0, spec.Bytes());
    const int copy = plan_.final_keys()[key];
    if (final && plan_.keep_final() && copy >= 0) std::memset(history.Key(step, copy), 0, spec.Bytes());
  }
}

// A seat left while its game goes on: its last observation (just observed)
// goes to the final_ keys, its observation keys are zeroed, and it is out.
void Stepper::SeatLeaves(int game, int seat) {
  const int64_t step = games_[game].step;
  Channel& channel = channels_[ChannelId(game, seat)];
  if (plan_.keep_final()) {
    for (int key = 0; key < plan_.num_game_keys(); ++key) {
      if (plan_.final_keys()[key] < 0) continue;
      std::memcpy(channel.history.Key(step, plan_.final_keys()[key]), channel.history.Key(step, key),
                  plan_.keys()[key].Bytes());
    }
  }
  ZeroObservation(game, seat, false);
  channel.out = true;
}

Outcome Stepper::Step(GameSlot& slot) {
  if (slot.reset_due) return {};  // the replies to a terminal row only reset the game (FinishStep)
  if (steps_elsewhere_ && !slot.step_begun) slot.game->BeginStep(slot.rows);
  slot.step_begun = false;
  return slot.game->Step(slot.rows, slot.rng);
}

// One seat's part of FinishStep: its step header, with its reward checked.
// Returns whether the seat left in this step while the game goes on.
// Inline in FinishStep: it runs for every step of every game.
inline bool Stepper::FinishSeat(Game& played, Channel& channel, int game, int seat, int64_t step, Outcome outcome) {
  if (channel.out) {
    WriteStepHeader(channel, step, 0.0f, Outcome{true, false}, false);
    return false;
  }
  const Outcome own = played.SeatOutcome(seat);
  const float reward = played.Reward(seat);
  if (!AllFinite(&reward, 1)) NonFiniteReward(game, seat, reward);
  const bool own_over = own.terminated | own.truncated;
  WriteStepHeader(channel, step, reward, own_over ? own : outcome, true);
  return own_over & !(outcome.terminated | outcome.truncated);
}

// After Step: the step's header, a reset if the episode is over, and the next
// observation; the game then goes to its observation sends. kOneSeat: as in
// Observe. Unrolled for one seat, with the header written without branches,
// a CartPole step took 492 instructions against 521 (engine_loop, 4096
// games, under callgrind).
template <bool kOneSeat>
void Stepper::FinishStep(int game, Outcome outcome) {
  GameSlot& slot = games_[game];
  const int64_t step = ++slot.step;
  if (slot.reset_due) {
    StartDeferredEpisode(slot, game);
    return;
  }
  Game& played = *slot.game;
  const int num_seats = kOneSeat ? 1 : num_seats_;  // in a register: a store into a record could alias it
  Channel* channels = &channels_[game * num_seats];
  bool seats_left = false;  // a seat's episode ended in this step while the game goes on (rare)
  for (int seat = 0; seat < num_seats; ++seat) {
    seats_left |= FinishSeat(played, channels[seat], game, seat, step, outcome);
  }
  if (outcome.Over()) {
    if (plan_.keep_final()) KeepFinalObservation(game);
    for (int seat = 0; seat < num_seats; ++seat) channels[seat].out = false;
    if (defer_resets_) {
      slot.reset_due = true;  // the terminal row shows the state it ended in (Observe below)
    } else {
      played.Reset(slot.rng);
    }
  }
  if (seats_left) {
    ObserveAndSeatsLeave(game);
  } else {
    Observe<kOneSeat>(slot, channels, game);
  }
  slot.stage = Stage::kSendObservation;
  ExpectReplies(slot);
}

// Deferred resets: the replies to a terminal row came in. The game resets,
// and its row (the next episode's first) has reward 0 and no outcome.
void Stepper::StartDeferredEpisode(GameSlot& slot, int game) {
  slot.reset_due = false;
  Start(slot, game);  // as a first episode starts
}

// The next observation of a game some of whose seats left in its last step
// (their own outcome is over, the game's is not): they leave after it (see
// SeatLeaves). Their outcome is asked again: nothing ran since.
void Stepper::ObserveAndSeatsLeave(int game) {
  GameSlot& slot = games_[game];
  std::vector<int> leaving;
  for (int seat = 0; seat < num_seats_; ++seat) {
    if (!channels_[ChannelId(game, seat)].out && slot.game->SeatOutcome(seat).Over()) leaving.push_back(seat);
  }
  Observe<false>(slot, &channels_[ChannelId(game, 0)], game);
  for (int seat : leaving) SeatLeaves(game, seat);
}

// Observes the state an episode ended in and copies it into the `final_`
// keys of the record (the next Observe overwrites the game's own keys).
void Stepper::KeepFinalObservation(int game) {
  GameSlot& slot = games_[game];
  Observe<false>(slot, &channels_[ChannelId(game, 0)], game);
  for (int seat = 0; seat < num_seats_; ++seat) {
    History& history = channels_[ChannelId(game, seat)].history;
    for (int key = 0; key < plan_.num_game_keys(); ++key) {
      if (plan_.final_keys()[key] < 0) continue;
      std::memcpy(history.Key(slot.step, plan_.final_keys()[key]), history.Key(slot.step, key), plan_.keys()[key].Bytes());
    }
  }
}

// Copies rows [begin, end) of a replied batch into their games' histories and
// carries on each game whose replies are now all in.
void Stepper::ConsumeReplies(int tag_index, int64_t batch, int begin, int end) {
  Advance(TakeReplies(tag_index, batch, begin, end));
}

std::vector<int> Stepper::ConsumeRepliesAndBeginSteps(int tag, int64_t batch, int size) {
  std::vector<int> ready_games = TakeReplies(tag, batch, 0, size);
  int current = -1;
  try {
    for (int game : ready_games) {
      current = game;
      BeginStepIfReplied(games_[game]);
    }
  } catch (const std::exception& e) {
    mailbox_.Fail(GameMessage(current, e.what()));
  }
  return ready_games;
}

// Copies rows [begin, end) of a replied batch into their records, releases
// the buffer once its last row is copied, and returns the games whose
// replies are now all in.
std::vector<int> Stepper::TakeReplies(int tag_index, int64_t batch, int begin, int end) {
  Tag& tag = plan_.tag(tag_index);
  BatchBuffer& buffer = tag.buffer(static_cast<int>(batch % tag.num_buffers()));
  ScatterReplies(buffer, plan_.reply_copies(tag_index), begin, end);
  // With one row per game, every game of the rows is ready.
  std::vector<int> ready_games;
  if (!counts_replies_) {
    ready_games.assign(buffer.game_ids.begin() + begin, buffer.game_ids.begin() + end);
  } else {
    ready_games.reserve(end - begin);
    for (int row = begin; row < end; ++row) {
      const int game = buffer.game_ids[row];
      if (games_[game].pending.fetch_sub(1, std::memory_order_acq_rel) == 1) ready_games.push_back(game);
    }
  }
  // The rows are copied out: the buffer may go to the next batch before the
  // games run on (they may want to write into it).
  if (buffer.unconsumed_replies.fetch_sub(end - begin) == end - begin) ReleaseBuffer(tag, batch);
  return ready_games;
}

void Stepper::ReleaseBuffer(Tag& tag, int64_t batch) {
  std::vector<int> parked = tag.Release(batch);
  if (!parked.empty()) resume_(parked);
}

}  // namespace elf
