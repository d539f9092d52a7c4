// The game stepper: every game's stage machine and the state it runs on.
// It owns the games (each with its rng, step count and stage) and their
// channels (one per seat: its history and episode counters), and takes a
// game through its steps. Step s, for each seat:
//   1. write r, terminal, ... and the game's observation into history step s;
//   2. send a row to every tag with replies (the observation sends) and wait
//      for all of them;
//   3. send a row to every tag without replies, and a [T]-step window to
//      every T > 1 tag whose window ends at s (windows overlap by one step);
//   4. Step the game with the replies; reset it if the episode ended (the
//      state it ended in goes to the final_ keys if a tag reads one).
// With deferred resets (Gymnasium's next-step autoreset), an ended game is
// not reset in step 4: its terminal row shows the state the episode ended
// in, and the replies to that row only reset it (the game does not step
// with them); the next row, the next episode's first, has reward 0 and is
// not terminal.
// Every row goes out through one send protocol (SendRows): rows claimed
// from the router in blocks, written from the histories, labelled and
// committed; a batch that completes goes to the router, which hands it to
// the mailbox. A game that finds a tag's buffer busy parks in the tag; the
// release of that buffer (ReleaseBuffer, or the last reply copied) hands the
// parked games to `resume`, which must have them advanced again.
//
// A game's reward and the float observation and statistic keys a tag reads
// must be finite: a NaN or infinite one fails the game, naming its seat and
// key (the reward checked at each step, the keys as each block of rows is
// written, before any batch holding them is delivered).
//
// Threads. Advance and ConsumeReplies may run on several threads at once,
// for disjoint games. A game belongs to one thread at a time: the thread
// advancing it, until its last row to a tag with replies is committed; from
// then on the thread that copies its last reply (ConsumeReplies), which
// advances it on. The commit and the batch's delivery order the game's state
// before that thread reads it. An exception from a game fails the mailbox
// with the game named; once the mailbox is halted no game advances.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/history.h"
#include "elf/mailbox.h"
#include "elf/plan.h"
#include "elf/rng.h"
#include "elf/router.h"
#include "elf/tag.h"

namespace elf {

// Creates game number `index` of a context.
using GameFactory = std::function<std::unique_ptr<Game>(int index)>;

class Stepper {
 public:
  // Takes games that parked on a buffer and was released: they must be
  // advanced again (Advance), on any thread.
  using Resume = std::function<void(const std::vector<int>& games)>;

  // Creates `num_games` games (game g seeded with (seed, g)) and their
  // channels for a plan after Build. The plan's tags must be allocated and
  // the router wired before the first Advance.
  Stepper(Plan& plan, Router& router, Mailbox& mailbox, const GameFactory& make_game, int num_games, uint64_t seed,
          Resume resume, bool defer_resets = false);
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;
  ~Stepper();

  int num_games() const { return num_games_; }

  // Runs each game as far as it can go without waiting (for replies, or for
  // a busy buffer). The first call for a game resets it.
  void Advance(std::vector<int> games);
  // Copies rows [begin, end) of replied batch `batch` of tag `tag` into the
  // records they were written from, releases the buffer once its last row
  // is copied (the buffer's unconsumed_replies counts the rows still to
  // copy), and advances each game whose replies are now all in.
  void ConsumeReplies(int tag, int64_t batch, int begin, int end);
  // For games that step elsewhere (game_spec().steps_elsewhere): copies
  // every row of replied batch `batch` as ConsumeReplies does, then begins
  // the step of each game whose replies are now all in, on the calling
  // thread, so their processes start at once; returns those games, which
  // must then be advanced (Advance, on any thread) to finish their steps.
  std::vector<int> ConsumeRepliesAndBeginSteps(int tag, int64_t batch, int size);
  // Hands a buffer to the tag's next batch and resumes the games parked on it.
  void ReleaseBuffer(Tag& tag, int64_t batch);

 private:
  struct Channel;
  struct GameSlot;
  enum class Stage { kStart, kSendObservation, kAwaitReplies, kSendAfterReplies, kStep };
  enum class Progress { kWaits, kAtStep, kAtSends };
  using Send = Plan::Send;

  int ChannelId(int game, int seat) const { return game * num_seats_ + seat; }
  void BeginStepIfReplied(GameSlot& slot);
  std::vector<int> TakeReplies(int tag, int64_t batch, int begin, int end);
  Progress RunToStepOrSends(GameSlot& slot, int game);
  void Start(GameSlot& slot, int game);
  void ExpectReplies(GameSlot& slot);
  void HandOver(GameSlot& slot);
  std::vector<int> SendObservations(std::vector<int> games);
  int SendRows(int* games, int count, const Send& send, bool hand_over);
  int Claimable(const int* games, int count) const;
  void WriteRows(const int* games, int count, const Send& send, const Claim& claim, int row);
  bool SendAll(int game, const std::vector<Send>& sends, bool hand_over);
  void WriteStepHeader(Channel& channel, int64_t step, float reward, Outcome outcome, bool counted);
  void StartDeferredEpisode(GameSlot& slot, int game);
  template <bool kOneSeat>
  void Observe(GameSlot& slot, Channel* channels, int game);
  struct FloatInput;
  void CheckFloatInputs(const int* games, int count, const Send& send, BatchBuffer& buffer, std::size_t at, int t);
  [[noreturn, gnu::noinline, gnu::cold]] void NonFiniteReward(int game, int seat, float reward);
  [[noreturn, gnu::noinline, gnu::cold]] void NonFiniteInput(const int* games, int count, const Send& send,
                                                             const FloatInput& input, const uint8_t* column, int t);
  std::string GameMessage(int game, const std::string& what) const;
  Outcome Step(GameSlot& slot);
  bool FinishSeat(Game& played, Channel& channel, int game, int seat, int64_t step, Outcome outcome);
  template <bool kOneSeat>
  void FinishStep(int game, Outcome outcome);
  void ObserveAndSeatsLeave(int game);
  void KeepFinalObservation(int game);
  void SeatLeaves(int game, int seat);
  void ZeroObservation(int game, int seat, bool final);

  Plan& plan_;
  Router& router_;
  Mailbox& mailbox_;
  Resume resume_;
  const int num_games_;
  // Copied from the plan: read for every step of every game.
  const int num_seats_;
  const Plan::HeaderOffsets header_;
  const bool steps_elsewhere_;
  const bool counts_replies_;       // several observation sends: replies counted per game (GameSlot::pending)
  const bool sends_after_replies_;  // tags without replies get rows after the replies
  const bool defer_resets_;         // an ended game resets on the replies to its terminal row
  // Per tag, its inputs that a game writes with a float dtype (observation
  // and statistic keys and their final_ copies), the ones that can be NaN or
  // infinite.
  struct FloatInput {
    int input;  // index among the tag's inputs (and input copies)
    int key;
    bool is_double;  // float64, else float32
    int64_t count;   // values per row
  };
  std::vector<std::vector<FloatInput>> float_inputs_;
  // Contiguous, so a chunk of games walks memory in order.
  std::unique_ptr<GameSlot[]> games_;
  std::unique_ptr<Channel[]> channels_;
  std::vector<uint64_t> history_arena_;
};

}  // namespace elf
