// Games hosted outside the engine's threads, in worker processes (Python
// Gymnasium environments), reached through one block of shared memory.
//
// For game g of N with S seats (channel c = g * S + seat), served by worker
// w of W (worker w serves a contiguous run of games), the block holds:
//   command[g], done[g]   requests sent and finished (uint32 counters)
//   status[g]             the finished request's outcome; error[g] its message
//   reward[c]             each seat's reward for the step
//   seat_status[c]        a seat that left while the game goes on (its own
//                         terminated / truncated bits; see Game::SeatOutcome)
//   action/<key>[c]       each action key, written by the engine before a request
//   obs/<key>[c]          each observation key: the state now
//   final/<key>[c]        the state an episode ended in (a worker resets an
//                         ended game within the same request)
//   doorbell[w]           bumped with every request to worker w, so an idle
//                         worker sleeps on it
//   asleep[w]             set while worker w sleeps on its doorbell: a
//                         request makes the wake-up system call only then
//   awaited[g]            set while an engine thread sleeps on done[g]: a
//                         finish makes the wake-up system call only then
//   ready_at[w]           when worker w began serving (steady clock ticks;
//                         0 while its process is still starting)
//   closing               set on shutdown; wakes every waiter
// A game's first request is its first reset, every later one a step. Both
// sides wait on futexes, so a side with nothing to do uses no CPU; and each
// side wakes the other only when it sleeps (a Dekker handshake of sequentially
// consistent stores and loads: the sleeper raises its flag, then looks again;
// the waker publishes, then reads the flag), since a futex wake-up costs a
// system call, a microsecond or two on a VM, for every game of every batch.
//
// Nothing the engine waits on can hang it: AwaitDone returns (throwing) once
// the board closes, whoever closes it, and with a step timeout once a step's
// result is late. Whoever stops the engine closes the board first, so an
// engine thread waiting on a dead or stuck worker wakes and can be joined.
// The step timeout covers every request, a game's first reset (creating its
// environment) included; a first request is timed from when its worker
// began serving, since starting a worker process is no call into a game.
//
// The block is created and owned by the caller (Python); the board only
// lays it out and signals through it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/spec.h"

namespace elf {

class RemoteBoard {
 public:
  static constexpr std::size_t kErrorBytes = 2048;
  enum Status : uint8_t { kTerminated = 1, kTruncated = 2, kFailed = 4 };

  // Lays out the block for the game keys `keys` (observations and actions).
  // With step_timeout_s > 0, AwaitDone throws once a request's result is
  // that late, counted from its Request, or for a request sent before its
  // worker was ready (a first reset), from the worker's Ready.
  RemoteBoard(std::vector<KeySpec> keys, int num_games, int num_workers, double step_timeout_s = 0.0,
              int num_seats = 1);

  std::size_t bytes() const { return bytes_; }
  // Where each region's array ([N, ...] or [W]) lies: its byte offset, and
  // the bytes from one game's (or worker's) slot to the next.
  struct Region {
    std::size_t offset;
    std::size_t stride;
  };
  const std::map<std::string, Region>& regions() const { return regions_; }
  const std::vector<KeySpec>& keys() const { return keys_; }
  int num_games() const { return num_games_; }
  int num_workers() const { return num_workers_; }
  int num_seats() const { return num_seats_; }
  int FirstGame(int worker) const { return static_cast<int>(int64_t{worker} * num_games_ / num_workers_); }
  int WorkerOf(int game) const;
  double step_timeout_s() const { return step_timeout_.count(); }

  // Points the board at the shared block (bytes() long, zeroed by its creator).
  void Attach(uint8_t* base);
  uint8_t* Slot(const std::string& region, int index) const;

  // Engine side. Request sends the game's next request to its worker;
  // AwaitDone blocks until the worker finished it and throws
  // std::runtime_error with the worker's message if it failed, if the board
  // closes first, or if the step timeout passes first (naming the
  // environment, its worker, and whether it was the first reset or a step).
  void Request(int game);
  void AwaitDone(int game) const;
  // Whether the game's last request is not finished yet (either side).
  bool Pending(int game) const;
  float reward(int game, int seat = 0) const;
  uint8_t status(int game) const;
  uint8_t seat_status(int game, int seat) const;

  // How many requests the game was sent, its first reset included.
  uint32_t Requests(int game) const;
  // The wake-up system calls this process's side of the board made for
  // requests and finishes (not for closing): one only when the other side
  // sleeps.
  uint64_t wake_calls() const { return wake_calls_.load(std::memory_order_relaxed); }

  // Worker side. Ready marks the worker as serving from now on (once, before
  // its first AwaitWork). AwaitWork returns the games of `worker` with a
  // pending request, waiting up to timeout_ms for one (empty on timeout or
  // closing).
  void Ready(int worker);
  std::vector<int> AwaitWork(int worker, int timeout_ms) const;
  // `rewards` and `seat_status` hold one entry per seat (Finish: one seat).
  void Finish(int game, float reward, bool terminated, bool truncated);
  void FinishSeats(int game, const std::vector<float>& rewards, const std::vector<uint8_t>& seat_status,
                   bool terminated, bool truncated);
  void Fail(int game, const std::string& message);
  // Finish for many games of a one-seat board at once (a vectorized source
  // such as envpool finishes a whole batch): games[i] gets rewards[i] and
  // status[i] (kTerminated | kTruncated bits). Throws std::invalid_argument,
  // finishing none, if a game is out of range or the board has several seats.
  void FinishMany(const int32_t* games, const float* rewards, const uint8_t* status, std::size_t count);

  // Either side: shut down, waking every waiter.
  void Close();
  bool closing() const;

 private:
  using Clock = std::chrono::steady_clock;
  // A word of a region found at Attach: `stride` bytes from one slot to the next.
  struct Words {
    uint8_t* base = nullptr;
    std::size_t stride = 0;
    std::atomic<uint32_t>& operator[](int index) const {
      return *reinterpret_cast<std::atomic<uint32_t>*>(base + stride * static_cast<std::size_t>(index));
    }
  };
  Words WordsOf(const std::string& region) const;
  void Add(const std::string& name, std::size_t stride, int count);
  std::atomic<int64_t>* ReadyAt(int worker) const;
  void Wake(std::atomic<uint32_t>& word, const std::atomic<uint32_t>& sleeper_flag);
  // A finished request: done[g] catches up with command[g], and the engine
  // thread waiting on it (if any) wakes.
  void MarkDone(int game);
  int WaitMs(int game) const;
  std::string LateMessage(int game) const;

  std::vector<KeySpec> keys_;
  int num_games_;
  int num_workers_;
  int num_seats_;
  std::map<std::string, Region> regions_;
  std::size_t bytes_ = 0;
  uint8_t* base_ = nullptr;
  // The regions read for every request, found once (not by name per call).
  Words closing_, doorbell_, asleep_, command_, done_, awaited_;
  uint8_t* status_ = nullptr;
  uint8_t* reward_ = nullptr;
  uint8_t* seat_status_ = nullptr;
  std::chrono::duration<double> step_timeout_;
  // Engine-side only (not in the shared block): when each game's pending
  // request was sent, in Clock ticks.
  std::unique_ptr<std::atomic<int64_t>[]> requested_at_;
  std::atomic<uint64_t> wake_calls_{0};
};

// A game whose state lives in a worker process: Observe copies the worker's
// observation, BeginStep posts the action, Step waits for the outcome.
class RemoteGame : public Game {
 public:
  RemoteGame(std::shared_ptr<RemoteBoard> board, int index);
  void Reset(Rng& rng) override;
  void Observe(int seat, const Row& row) override;
  void BeginStep(const std::vector<Row>& replies) override;
  Outcome Step(const std::vector<Row>& replies, Rng& rng) override;
  float Reward(int seat) const override { return board_->reward(index_, seat); }
  Outcome SeatOutcome(int seat) const override;

 private:
  // This game's slots in the shared block, found once (not per step).
  struct KeySlot {
    std::string name;
    std::size_t bytes;
    uint8_t* now;    // obs/<key> or action/<key> of seat 0; seat s's is s * bytes further
    uint8_t* ended;  // final/<key> (observations only)
  };

  std::shared_ptr<RemoteBoard> board_;
  int index_;
  std::vector<KeySlot> observations_;
  std::vector<KeySlot> actions_;
  bool started_ = false;
  bool showing_final_ = false;  // between an episode's end and the engine's Reset
};

}  // namespace elf
