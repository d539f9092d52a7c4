// A fixed set of worker threads running submitted tasks in FIFO order.
// Idle workers block on a condition variable: nothing spins. On Linux, a
// pool with a thread for every CPU this process may use pins worker i to the
// i-th of them: otherwise the scheduler tends to queue every worker the
// caller wakes on the caller's own CPU (wake-affine placement), and a batch
// is stepped by one core while another idles. Smaller pools are not pinned,
// so several of them (in several processes) spread over the machine. Submit may be
// called from any thread, including from inside a task. Stop() lets running
// tasks finish, drops queued ones, joins every thread, and is idempotent.
// Tasks must not throw: the context wraps them and records failures itself.
#pragma once

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace elf {

class WorkerPool {
 public:
  using Task = std::function<void()>;

  explicit WorkerPool(int num_threads) {
    const std::vector<int> cpus = AllowedCpus();
    const bool pin = cpus.size() > 1 && num_threads >= static_cast<int>(cpus.size());
    for (int i = 0; i < num_threads; ++i) {
      const int cpu = pin ? cpus[i % cpus.size()] : -1;
      threads_.emplace_back([this, cpu] {
        PinTo(cpu);
        Work();
      });
    }
  }
  ~WorkerPool() { Stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(Task task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      tasks_.clear();
    }
    wake_.notify_all();
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
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

  void Work() {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (stopping_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace elf
