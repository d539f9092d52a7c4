#include "elf/remote.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace elf {

namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "shared counters must be plain lock-free words");
static_assert(sizeof(std::atomic<int64_t>) == sizeof(int64_t) && std::atomic<int64_t>::is_always_lock_free,
              "shared times must be plain lock-free words");

constexpr std::size_t kAlign = 64;  // a cache line: regions written by different processes never share one
constexpr int kPollMs = 50;         // how often an engine-side waiter checks for closing

// Shared (not process-private) futex operations: the word is in a mapping
// several processes share.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeout_ms) {
  timespec timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace

RemoteBoard::RemoteBoard(std::vector<KeySpec> keys, int num_games, int num_workers, double step_timeout_s,
                         int num_seats)
    : keys_(std::move(keys)), num_games_(num_games), num_workers_(num_workers), num_seats_(num_seats),
      step_timeout_(step_timeout_s) {
  if (num_games < 1) throw std::invalid_argument("num_games must be >= 1");
  if (num_seats < 1) throw std::invalid_argument("num_seats must be >= 1, got " + std::to_string(num_seats));
  if (num_workers < 1 || num_workers > num_games) {
    throw std::invalid_argument("num_workers must be in [1, num_games], got " + std::to_string(num_workers));
  }
  if (!(step_timeout_s >= 0.0)) {
    throw std::invalid_argument("step_timeout_s must be >= 0 (0: none), got " + std::to_string(step_timeout_s));
  }
  requested_at_ = std::make_unique<std::atomic<int64_t>[]>(num_games);
  Add("closing", sizeof(uint32_t), 1);
  Add("doorbell", kAlign, num_workers);  // one cache line per worker
  Add("asleep", kAlign, num_workers);
  Add("ready_at", kAlign, num_workers);
  Add("command", sizeof(uint32_t), num_games);
  Add("done", sizeof(uint32_t), num_games);
  Add("awaited", sizeof(uint32_t), num_games);
  Add("status", sizeof(uint8_t), num_games);
  Add("error", kErrorBytes, num_games);
  const int channels = num_games * num_seats;
  Add("reward", sizeof(float), channels);
  Add("seat_status", sizeof(uint8_t), channels);
  for (const auto& key : keys_) {
    if (key.role == KeyRole::kAction) Add("action/" + key.name, key.Bytes(), channels);
    if (key.role == KeyRole::kObservation) {
      Add("obs/" + key.name, key.Bytes(), channels);
      Add("final/" + key.name, key.Bytes(), channels);
    }
  }
}

void RemoteBoard::Add(const std::string& name, std::size_t stride, int count) {
  regions_[name] = {bytes_, stride};
  bytes_ += (stride * count + kAlign - 1) / kAlign * kAlign;
}

void RemoteBoard::Attach(uint8_t* base) {
  base_ = base;
  closing_ = WordsOf("closing");
  doorbell_ = WordsOf("doorbell");
  asleep_ = WordsOf("asleep");
  command_ = WordsOf("command");
  done_ = WordsOf("done");
  awaited_ = WordsOf("awaited");
  status_ = Slot("status", 0);
  reward_ = Slot("reward", 0);
  seat_status_ = Slot("seat_status", 0);
}

RemoteBoard::Words RemoteBoard::WordsOf(const std::string& region) const {
  return {Slot(region, 0), regions_.at(region).stride};
}

int RemoteBoard::WorkerOf(int game) const {
  int worker = static_cast<int>(int64_t{game} * num_workers_ / num_games_);
  while (FirstGame(worker + 1) <= game) ++worker;  // rounding: FirstGame is the authority
  while (FirstGame(worker) > game) --worker;
  return worker;
}

uint8_t* RemoteBoard::Slot(const std::string& region, int index) const {
  auto it = regions_.find(region);
  if (it == regions_.end()) throw std::logic_error("remote board has no region '" + region + "'");
  return base_ + it->second.offset + it->second.stride * static_cast<std::size_t>(index);
}

std::atomic<int64_t>* RemoteBoard::ReadyAt(int worker) const {
  return reinterpret_cast<std::atomic<int64_t>*>(Slot("ready_at", worker));
}

// Wakes whoever sleeps on `word` after it changed, if its flag says one does.
// The store before and this load are sequentially consistent, as the
// sleeper's raising of its flag and its look at `word` are: either the
// sleeper sees the change and does not sleep, or this sees the flag.
void RemoteBoard::Wake(std::atomic<uint32_t>& word, const std::atomic<uint32_t>& sleeper_flag) {
  if (sleeper_flag.load(std::memory_order_seq_cst) == 0) return;
  wake_calls_.fetch_add(1, std::memory_order_relaxed);
  FutexWakeAll(&word);
}

void RemoteBoard::Request(int game) {
  requested_at_[game].store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  command_[game].fetch_add(1, std::memory_order_seq_cst);
  const int worker = WorkerOf(game);
  doorbell_[worker].fetch_add(1, std::memory_order_seq_cst);
  Wake(doorbell_[worker], asleep_[worker]);
}

void RemoteBoard::AwaitDone(int game) const {
  std::atomic<uint32_t>& done = done_[game];
  const uint32_t wanted = command_[game].load(std::memory_order_relaxed);
  for (int spin = 0;; ++spin) {
    uint32_t seen = done.load(std::memory_order_acquire);
    if (seen == wanted) break;
    if (closing()) throw std::runtime_error("the game's worker process was shut down");
    if (spin < 64) continue;
    awaited_[game].store(1, std::memory_order_seq_cst);
    seen = done.load(std::memory_order_seq_cst);
    if (seen != wanted) FutexWait(&done, seen, WaitMs(game));
    awaited_[game].store(0, std::memory_order_relaxed);
  }
  if (status(game) & kFailed) {
    const char* message = reinterpret_cast<const char*>(Slot("error", game));
    throw std::runtime_error(std::string(message, strnlen(message, kErrorBytes)));
  }
}

// How long a waiter for `game` may sleep before it looks again; throws once
// the pending request is late. Its clock starts at the later of its Request
// and its worker's Ready: steady_clock is CLOCK_MONOTONIC, one clock for
// every process of the machine.
int RemoteBoard::WaitMs(int game) const {
  if (step_timeout_.count() <= 0.0) return kPollMs;
  const int64_t ready = ReadyAt(WorkerOf(game))->load(std::memory_order_acquire);
  if (ready == 0) return kPollMs;  // the worker process is still starting
  const int64_t start = std::max(requested_at_[game].load(std::memory_order_relaxed), ready);
  const Clock::time_point deadline =
      Clock::time_point(Clock::duration(start)) + std::chrono::duration_cast<Clock::duration>(step_timeout_);
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) throw std::runtime_error(LateMessage(game));
  return static_cast<int>(std::min<int64_t>(kPollMs, left));
}

std::string RemoteBoard::LateMessage(int game) const {
  const int worker = WorkerOf(game);
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", step_timeout_.count());
  return "environment " + std::to_string(game) + " (worker process " + std::to_string(worker) + ", environments " +
         std::to_string(FirstGame(worker)) + "-" + std::to_string(FirstGame(worker + 1) - 1) +
         ") did not finish its " + (Requests(game) == 1 ? "first reset" : "step") + " within step_timeout_s = " +
         seconds + " s";
}

uint32_t RemoteBoard::Requests(int game) const { return command_[game].load(std::memory_order_acquire); }

bool RemoteBoard::Pending(int game) const {
  return command_[game].load(std::memory_order_acquire) != done_[game].load(std::memory_order_relaxed);
}

float RemoteBoard::reward(int game, int seat) const {
  float value;
  std::memcpy(&value, reward_ + sizeof(float) * (game * num_seats_ + seat), sizeof(float));
  return value;
}

uint8_t RemoteBoard::status(int game) const { return status_[game]; }

uint8_t RemoteBoard::seat_status(int game, int seat) const { return seat_status_[game * num_seats_ + seat]; }

void RemoteBoard::Ready(int worker) {
  ReadyAt(worker)->store(Clock::now().time_since_epoch().count(), std::memory_order_release);
}

std::vector<int> RemoteBoard::AwaitWork(int worker, int timeout_ms) const {
  std::atomic<uint32_t>& doorbell = doorbell_[worker];
  std::vector<int> pending;
  for (bool waited = false;; waited = true) {
    uint32_t rung = doorbell.load(std::memory_order_acquire);
    for (int game = FirstGame(worker); game < FirstGame(worker + 1); ++game) {
      if (Pending(game)) pending.push_back(game);
    }
    if (!pending.empty() || waited || closing()) return pending;
    asleep_[worker].store(1, std::memory_order_seq_cst);
    if (doorbell.load(std::memory_order_seq_cst) == rung) FutexWait(&doorbell, rung, timeout_ms);
    asleep_[worker].store(0, std::memory_order_relaxed);
  }
}

void RemoteBoard::Finish(int game, float reward, bool terminated, bool truncated) {
  FinishSeats(game, std::vector<float>(num_seats_, reward), std::vector<uint8_t>(num_seats_, 0), terminated,
              truncated);
}

void RemoteBoard::FinishSeats(int game, const std::vector<float>& rewards, const std::vector<uint8_t>& seat_status,
                              bool terminated, bool truncated) {
  if (static_cast<int>(rewards.size()) != num_seats_ || static_cast<int>(seat_status.size()) != num_seats_) {
    throw std::invalid_argument("finish: " + std::to_string(num_seats_) + " seats, got " +
                                std::to_string(rewards.size()) + " rewards and " +
                                std::to_string(seat_status.size()) + " seat statuses");
  }
  std::memcpy(reward_ + sizeof(float) * game * num_seats_, rewards.data(), sizeof(float) * num_seats_);
  std::memcpy(seat_status_ + game * num_seats_, seat_status.data(), num_seats_);
  status_[game] = (terminated ? kTerminated : 0) | (truncated ? kTruncated : 0);
  MarkDone(game);
}

void RemoteBoard::MarkDone(int game) {
  done_[game].store(command_[game].load(std::memory_order_acquire), std::memory_order_seq_cst);
  Wake(done_[game], awaited_[game]);
}

void RemoteBoard::FinishMany(const int32_t* games, const float* rewards, const uint8_t* status,
                             std::size_t count) {
  if (num_seats_ != 1) throw std::invalid_argument("finish_many: the board has several seats; use finish_seats");
  for (std::size_t i = 0; i < count; ++i) {
    if (games[i] < 0 || games[i] >= num_games_) {
      throw std::invalid_argument("finish_many: game " + std::to_string(games[i]) + " is not in [0, " +
                                  std::to_string(num_games_) + ")");
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const int game = games[i];
    std::memcpy(reward_ + sizeof(float) * game, &rewards[i], sizeof(float));
    seat_status_[game] = 0;
    status_[game] = status[i] & (kTerminated | kTruncated);
    MarkDone(game);
  }
}

void RemoteBoard::Fail(int game, const std::string& message) {
  char* text = reinterpret_cast<char*>(Slot("error", game));
  const std::size_t length = std::min(message.size(), kErrorBytes - 1);
  std::memcpy(text, message.data(), length);
  text[length] = '\0';
  status_[game] = kFailed;
  MarkDone(game);
}

// Wakes every sleeper, flag or not: closing happens once. (A waiter about to
// sleep when this runs wakes within kPollMs and sees `closing`.)
void RemoteBoard::Close() {
  closing_[0].store(1, std::memory_order_seq_cst);
  for (int worker = 0; worker < num_workers_; ++worker) {
    doorbell_[worker].fetch_add(1, std::memory_order_seq_cst);
    FutexWakeAll(&doorbell_[worker]);
  }
  for (int game = 0; game < num_games_; ++game) FutexWakeAll(&done_[game]);
}

bool RemoteBoard::closing() const { return closing_[0].load(std::memory_order_acquire) != 0; }

RemoteGame::RemoteGame(std::shared_ptr<RemoteBoard> board, int index) : board_(std::move(board)), index_(index) {
  const int first_channel = index_ * board_->num_seats();
  for (const auto& key : board_->keys()) {
    if (key.role == KeyRole::kObservation) {
      observations_.push_back({key.name, key.Bytes(), board_->Slot("obs/" + key.name, first_channel),
                               board_->Slot("final/" + key.name, first_channel)});
    }
    if (key.role == KeyRole::kAction) {
      actions_.push_back({key.name, key.Bytes(), board_->Slot("action/" + key.name, first_channel), nullptr});
    }
  }
  board_->Request(index_);  // the first reset: every game's runs while the engine wires the others
}

void RemoteGame::Reset(Rng&) {
  if (!started_) {
    board_->AwaitDone(index_);
    started_ = true;
  }
  showing_final_ = false;  // the worker already reset an ended game
}

void RemoteGame::Observe(int seat, const Row& row) {
  for (const auto& key : observations_) {
    std::memcpy(row.Bytes(key.name), (showing_final_ ? key.ended : key.now) + seat * key.bytes, key.bytes);
  }
}

void RemoteGame::BeginStep(const std::vector<Row>& replies) {
  for (const auto& key : actions_) {
    for (std::size_t seat = 0; seat < replies.size(); ++seat) {
      std::memcpy(key.now + seat * key.bytes, replies[seat].Bytes(key.name), key.bytes);
    }
  }
  board_->Request(index_);
}

Outcome RemoteGame::SeatOutcome(int seat) const {
  const uint8_t status = board_->seat_status(index_, seat);
  return {(status & RemoteBoard::kTerminated) != 0, (status & RemoteBoard::kTruncated) != 0};
}

Outcome RemoteGame::Step(const std::vector<Row>&, Rng&) {
  board_->AwaitDone(index_);
  const uint8_t status = board_->status(index_);
  Outcome outcome{(status & RemoteBoard::kTerminated) != 0, (status & RemoteBoard::kTruncated) != 0};
  showing_final_ = outcome.Over();
  return outcome;
}

}  // namespace elf
