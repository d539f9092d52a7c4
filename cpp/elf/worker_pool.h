// A fixed set of worker threads running submitted tasks. Each worker has its
// own FIFO queue: a task submitted with a `home` worker runs there unless that
// worker is still busy when another runs out of work, which then takes
// (steals) it from the back of the home queue. Giving the same games the same
// home keeps their data in one core's cache from one batch to the next.
// Idle workers block on a condition variable: nothing spins. On Linux, a
// pool with a thread for every CPU this process may use pins worker i to the
// i-th of them: otherwise the scheduler tends to queue every worker the
// caller wakes on the caller's own CPU (wake-affine placement), and a batch
// is stepped by one core while another idles. Smaller pools are not pinned,
// so several of them (in several processes) spread over the machine. The pool
// measures how long a sleeping worker takes to start once woken (a futex
// wake-up: from a few microseconds to tens, with the machine and its load),
// so that callers can weigh a hand-off against doing the work themselves
// (WakeLatencyNs). The worker that finishes the last task runs `on_idle`
// (if given), so that whoever waits on the pool's results learns it has
// nothing more coming. Submit may be called from any thread, including from
// inside a task. Stop() lets running
// tasks finish, drops queued ones, joins every thread, and is idempotent.
// Tasks must not throw: the context wraps them and records failures itself.
#pragma once

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace elf {

class WorkerPool {
 public:
  using Task = std::function<void()>;
  // A task and the worker it should run on (kAnyWorker: round robin).
  struct Job {
    Task task;
    int home;
  };
  static constexpr int kAnyWorker = -1;

  explicit WorkerPool(int num_threads, std::function<void()> on_idle = {})
      : workers_(num_threads), on_idle_(std::move(on_idle)) {
    const std::vector<int> cpus = AllowedCpus();
    const bool pin = cpus.size() > 1 && num_threads >= static_cast<int>(cpus.size());
    for (int i = 0; i < num_threads; ++i) {
      const int cpu = pin ? cpus[i % cpus.size()] : -1;
      threads_.emplace_back([this, cpu, i] {
        PinTo(cpu);
        Work(i);
      });
    }
  }
  ~WorkerPool() { Stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }
  // Sleeping workers woken by SubmitMany so far (each a futex wake-up and a
  // context switch): the cost of handing work to the pool, counted.
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }
  // The least of the last few measured wake-up latencies (from SubmitMany's
  // wake to the worker running), in ns; 0 until a worker was woken. The
  // least, because a worker that also waited for a busy CPU measures the
  // machine's load, not the hand-off.
  double WakeLatencyNs() const { return wake_latency_ns_.load(std::memory_order_relaxed); }

  void Submit(Task task, int home = kAnyWorker) {
    std::vector<Job> jobs;
    jobs.push_back({std::move(task), home});
    SubmitMany(std::move(jobs));
  }

  // Queues every job at once, then wakes their home workers, so a worker
  // woken for its own job does not steal a job another worker is about to
  // start. A job whose home is busy running a task also wakes one worker
  // that is asleep and got nothing: an idle core takes the work.
  void SubmitMany(std::vector<Job> jobs) {
    std::vector<int> wake;
    const int64_t now = NowNs();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      for (auto& job : jobs) {
        int home = job.home;
        if (home < 0 || home >= size()) home = static_cast<int>(next_++ % workers_.size());
        workers_[home].queue.push_back(std::move(job.task));
        workers_[home].given = true;
      }
      bool home_busy = false;
      for (auto& worker : workers_) {
        if (!worker.given) continue;
        if (worker.asleep) {
          worker.asleep = false;
          worker.woken_at_ns = now;
          wake.push_back(static_cast<int>(&worker - workers_.data()));
        } else if (worker.running) {
          home_busy = true;
        }
      }
      for (auto& worker : workers_) {
        if (home_busy && worker.asleep && !worker.given) {
          worker.asleep = false;
          worker.woken_at_ns = now;
          wake.push_back(static_cast<int>(&worker - workers_.data()));
          home_busy = false;
        }
        worker.given = false;
      }
    }
    wakeups_.fetch_add(wake.size(), std::memory_order_relaxed);
    for (int i : wake) workers_[i].wake.notify_one();
  }

  // True when no task runs and none is queued: nothing will happen until
  // something is submitted.
  bool Idle() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& worker : workers_) {
      if (worker.running || !worker.queue.empty()) return false;
    }
    return true;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      for (auto& worker : workers_) {
        worker.queue.clear();
        worker.asleep = false;
      }
    }
    for (auto& worker : workers_) worker.wake.notify_all();
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  struct Worker {
    std::deque<Task> queue;
    std::condition_variable wake;
    bool asleep = false;   // waiting on `wake` with nothing to do
    bool running = false;  // running a task
    bool given = false;    // scratch for SubmitMany
    int64_t woken_at_ns = 0;  // when SubmitMany woke it; 0: not since it ran
  };

  static int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Needs the lock.
  void RecordWakeLatency(int64_t ns) {
    if (latencies_ns_[0] == 0.0) latencies_ns_.fill(static_cast<double>(ns));
    latencies_ns_[next_latency_++ % latencies_ns_.size()] = static_cast<double>(ns);
    wake_latency_ns_.store(*std::min_element(latencies_ns_.begin(), latencies_ns_.end()), std::memory_order_relaxed);
  }

  static std::vector<int> AllowedCpus() {
    std::vector<int> cpus;
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
#endif
    return cpus;
  }

  // Best effort: a failure leaves the thread where the scheduler puts it.
  static void PinTo([[maybe_unused]] int cpu) {
#ifdef __linux__
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
#endif
  }

  // The front of worker `self`'s queue, else the back of the fullest other
  // queue. Needs the lock.
  bool Take(int self, Task& task) {
    auto& own = workers_[self].queue;
    if (!own.empty()) {
      task = std::move(own.front());
      own.pop_front();
      return true;
    }
    Worker* victim = nullptr;
    for (auto& worker : workers_) {
      if (!worker.queue.empty() && (victim == nullptr || worker.queue.size() > victim->queue.size())) {
        victim = &worker;
      }
    }
    if (victim == nullptr) return false;
    task = std::move(victim->queue.back());
    victim->queue.pop_back();
    return true;
  }

  void Work(int self) {
    Worker& me = workers_[self];
    bool ran = false;  // a task since this worker last looked for the pool going idle
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        me.running = false;
        for (;;) {
          if (stopping_) return;
          if (Take(self, task)) break;
          if (ran && on_idle_ && NoneRunning()) {
            ran = false;
            lock.unlock();
            on_idle_();
            lock.lock();
            continue;  // something may have been submitted meanwhile
          }
          // Either this worker has reported, or another still runs a task
          // and the last to finish will. Forgetting `ran` keeps this one,
          // if woken later to find its task stolen, from reporting the same
          // idle spell twice.
          ran = false;
          me.asleep = true;
          me.wake.wait(lock, [&] { return stopping_ || !me.asleep; });
          me.asleep = false;
          if (me.woken_at_ns != 0) RecordWakeLatency(NowNs() - me.woken_at_ns);
          me.woken_at_ns = 0;
        }
        me.running = true;
      }
      task();
      ran = true;
    }
  }

  // Needs the lock.
  bool NoneRunning() const {
    return std::none_of(workers_.begin(), workers_.end(), [](const Worker& worker) { return worker.running; });
  }

  std::mutex mutex_;
  std::vector<Worker> workers_;
  const std::function<void()> on_idle_;
  std::size_t next_ = 0;
  bool stopping_ = false;
  std::atomic<uint64_t> wakeups_{0};
  std::array<double, 4> latencies_ns_{};  // 0.0: none measured yet
  std::size_t next_latency_ = 0;
  std::atomic<double> wake_latency_ns_{0.0};
  std::vector<std::thread> threads_;
};

}  // namespace elf
