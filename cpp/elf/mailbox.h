// The mailbox between the worker threads and the caller: the batches ready
// to deliver, the number the caller holds, and the failure or stop that ends
// a context.
//
// Threads. Any thread may Post, Notify, Fail and Stop. One caller thread
// Waits and hands batches back (HandedBack). Wait runs the caller's `poll`
// under the mailbox's lock; Post takes the same lock, so a poll sees every
// batch posted before it and a Post after it wakes the waiter. After Fail,
// Wait throws GameError with the first failure's message; after Stop, a
// logic_error. halted() turns true at the first of them: workers check it
// to stop advancing games.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace elf {

// An error raised inside a game or by a failed callback; names the game or tag.
class GameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A batch handed to the caller: tag `tag`, batch number `batch`, stored in
// buffer `buffer`, with `size` rows.
struct BatchRef {
  int tag = -1;
  int64_t batch = 0;
  int buffer = 0;
  int size = 0;
};

class Mailbox {
 public:
  using Clock = std::chrono::steady_clock;

  // What a poll found: a batch to deliver, else when to poll again at the
  // latest (Clock::time_point::max(): only when woken), or that nothing can
  // ever be delivered (`stuck` holds why).
  struct Poll {
    std::optional<BatchRef> ref;
    Clock::time_point wake = Clock::time_point::max();
    std::string stuck;
  };

  // A batch is ready (first-come mode: the poll takes it from `ready`).
  void Post(const BatchRef& ref) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(ref);
    }
    cv_.notify_all();
  }

  // Something a poll looks at changed outside the mailbox (a batch became
  // ready in its buffer): wake the waiter.
  void Notify() {
    { std::lock_guard<std::mutex> lock(mutex_); }  // a waiter between its poll and its sleep is asleep now
    cv_.notify_all();
  }

  // Wakes the waiter, if one waits, to poll again: the worker pool went idle,
  // which a poll may find to be a stall (Context::Poll). Cheap when nobody
  // waits.
  void NotifyWaiter() {
    if (waiting_.load()) Notify();
  }

  // Records the first failure and wakes the waiter.
  void Fail(const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_) {
        failed_ = true;
        failure_ = message;
      }
    }
    halted_.store(true);
    cv_.notify_all();
  }

  // Returns false if the mailbox was already stopped.
  bool Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return false;
      stopped_ = true;
    }
    halted_.store(true);
    cv_.notify_all();
    return true;
  }

  bool halted() const { return halted_.load(std::memory_order_acquire); }
  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

  // Batches delivered and not yet handed back. The caller calls HandedBack
  // only once the batch's games are queued again, so a poll that sees 0 and
  // no work knows nothing is in flight.
  int held() const { return held_.load(); }
  // Times Wait found no batch and put the caller to sleep.
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  void HandedBack() { --held_; }

  // The next batch `poll(ready)` finds before `deadline`, or nothing. `poll`
  // runs under the lock with the posted batches; a stuck poll fails the
  // mailbox. Throws GameError after a failure, logic_error after Stop.
  template <typename PollFn>
  std::optional<BatchRef> Wait(Clock::time_point deadline, PollFn&& poll) {
    std::unique_lock<std::mutex> lock(mutex_);
    // Set before the first poll (seq_cst), so a pool that goes idle after
    // that poll looked at it sees a waiter and notifies (NotifyWaiter).
    waiting_.store(true);
    struct Done {
      std::atomic<bool>& waiting;
      ~Done() { waiting.store(false); }
    } done{waiting_};
    for (;;) {
      if (failed_) throw GameError(failure_);
      if (stopped_) throw std::logic_error("the context is stopped");
      Poll found = poll(ready_);
      if (found.ref) {
        ++held_;
        return found.ref;
      }
      if (!found.stuck.empty()) {
        failed_ = true;
        failure_ = found.stuck;
        halted_.store(true);
        throw GameError(failure_);
      }
      if (Clock::now() >= deadline) return std::nullopt;
      sleeps_.fetch_add(1, std::memory_order_relaxed);
      cv_.wait_until(lock, std::min(deadline, found.wake));
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<BatchRef> ready_;
  std::atomic<int> held_{0};
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<bool> halted_{false};
  std::atomic<bool> waiting_{false};
  bool failed_ = false;
  bool stopped_ = false;
  std::string failure_;
};

}  // namespace elf
