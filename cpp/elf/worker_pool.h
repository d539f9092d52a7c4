// A fixed set of worker threads running submitted tasks in FIFO order.
// Idle workers block on a condition variable: nothing spins. Submit may be
// called from any thread, including from inside a task. Stop() lets running
// tasks finish, drops queued ones, joins every thread, and is idempotent.
// Tasks must not throw: the context wraps them and records failures itself.
#pragma once

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
    for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { Work(); });
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
