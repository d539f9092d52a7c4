// WorkerPool: a fixed set of threads running submitted tasks.
#include "elf/worker_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "check.h"

namespace {

// Blocks until `count` reaches `target`. No time limit: a loaded machine may
// take long; a count that never comes hangs, and the watchdog names the test.
void WaitFor(const std::atomic<int>& count, int target) {
  while (count.load() < target) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST(every_submitted_task_runs) {
  elf::WorkerPool pool(2);
  std::atomic<int> done{0};
  for (int i = 0; i < 1000; ++i) pool.Submit([&] { ++done; });
  WaitFor(done, 1000);
  pool.Stop();
  CHECK_EQ(done.load(), 1000);
}

TEST(tasks_run_on_the_pool_threads_in_parallel) {
  elf::WorkerPool pool(3);
  std::mutex mutex;
  std::condition_variable all_in;
  std::set<std::thread::id> ids;
  int inside = 0;
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i) {
    pool.Submit([&] {
      std::unique_lock<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
      ++inside;
      all_in.notify_all();
      // Only returns once all three run at once: needs three threads (with
      // fewer, it hangs and the watchdog names the test).
      all_in.wait(lock, [&] { return inside == 3; });
      ++done;
    });
  }
  WaitFor(done, 3);
  std::lock_guard<std::mutex> lock(mutex);
  CHECK_EQ(ids.size(), std::size_t{3});
  CHECK(ids.count(std::this_thread::get_id()) == 0);
}

TEST(stop_joins_after_running_tasks_finish) {
  elf::WorkerPool pool(2);
  std::atomic<int> started{0}, finished{0};
  for (int i = 0; i < 2; ++i) {
    pool.Submit([&] {
      ++started;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ++finished;
    });
  }
  WaitFor(started, 2);
  pool.Stop();
  CHECK_EQ(finished.load(), 2);  // Stop waited for the running tasks
}

TEST(stop_drops_queued_tasks_and_later_submits) {
  elf::WorkerPool pool(1);
  std::atomic<int> started{0}, ran{0};
  std::atomic<bool> release{false};
  pool.Submit([&] {
    ++started;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  // Every queued task holds a copy of `token`: once Stop has dropped them
  // all, it is expired. That is the event to release the running task on
  // (released earlier, the worker could run the queue before Stop drops it).
  auto token = std::make_shared<int>(0);
  const std::weak_ptr<int> queued = token;
  for (int i = 0; i < 100; ++i) pool.Submit([&, token] { ++ran; });
  token.reset();
  WaitFor(started, 1);
  std::thread stopper([&] { pool.Stop(); });
  while (!queued.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // Stop dropped them
  release = true;
  stopper.join();
  pool.Submit([&] { ++ran; });
  CHECK_EQ(ran.load(), 0);
}

TEST(stop_is_idempotent_and_runs_in_the_destructor) {
  std::atomic<int> done{0};
  {
    elf::WorkerPool pool(2);
    pool.Submit([&] { ++done; });
    WaitFor(done, 1);
    pool.Stop();
    pool.Stop();
  }  // destructor stops a third time
  {
    elf::WorkerPool never_stopped(2);
    never_stopped.Submit([&] { ++done; });
    WaitFor(done, 2);
  }
  CHECK_EQ(done.load(), 2);
}

TEST(tasks_may_submit_tasks) {
  elf::WorkerPool pool(2);
  std::atomic<int> done{0};
  // A chain of 1000 tasks, each submitting the next, plus a fan-out.
  std::function<void(int)> chain = [&](int left) {
    ++done;
    if (left > 0) pool.Submit([&chain, left] { chain(left - 1); });
  };
  pool.Submit([&] { chain(999); });
  for (int i = 0; i < 10; ++i) {
    pool.Submit([&] {
      for (int j = 0; j < 10; ++j) pool.Submit([&] { ++done; });
    });
  }
  WaitFor(done, 1100);
  pool.Stop();
  CHECK_EQ(done.load(), 1100);
}

TEST(submit_from_a_task_while_stopping_is_dropped_not_deadlocked) {
  std::atomic<int> done{0};
  std::atomic<bool> stop{false};
  elf::WorkerPool pool(2);
  std::function<void()> again = [&] {
    ++done;
    if (!stop) pool.Submit(again);
  };
  pool.Submit(again);
  pool.Submit(again);
  WaitFor(done, 100);
  pool.Stop();  // tasks keep resubmitting themselves until now
  stop = true;
  const int after = done.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_EQ(done.load(), after);
}

TEST(jobs_run_on_their_home_worker_when_it_is_free) {
  elf::WorkerPool pool(2);
  std::mutex mutex;
  std::condition_variable all_in;
  std::thread::id seen[3][2];
  for (int round = 0; round < 3; ++round) {
    int inside = 0;
    std::atomic<int> done{0};
    std::vector<elf::WorkerPool::Job> jobs;
    for (int home = 0; home < 2; ++home) {
      jobs.push_back({[&, round, home] {
                        std::unique_lock<std::mutex> lock(mutex);
                        seen[round][home] = std::this_thread::get_id();
                        ++inside;
                        all_in.notify_all();
                        // Both jobs run at once, so neither worker can take both.
                        all_in.wait(lock, [&] { return inside == 2; });
                        ++done;
                      },
                      home});
    }
    pool.SubmitMany(std::move(jobs));
    WaitFor(done, 2);
  }
  CHECK(seen[0][0] != seen[0][1]);
  for (int round = 1; round < 3; ++round) {
    CHECK(seen[round][0] == seen[0][0]);
    CHECK(seen[round][1] == seen[0][1]);
  }
}

TEST(an_idle_worker_takes_the_jobs_of_a_busy_one) {
  elf::WorkerPool pool(2);
  std::atomic<bool> release{false};
  std::atomic<int> started{0}, stolen{0};
  pool.Submit([&] {
    ++started;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }, 0);
  WaitFor(started, 1);
  for (int i = 0; i < 5; ++i) pool.Submit([&] { ++stolen; }, 0);
  WaitFor(stolen, 5);  // worker 0 is still blocked: worker 1 ran them
  release = true;
  pool.Stop();
}

TEST(idle_means_no_task_running_or_queued) {
  elf::WorkerPool pool(1);
  CHECK(pool.Idle());
  std::atomic<bool> release{false};
  std::atomic<int> started{0}, done{0};
  pool.Submit([&] {
    ++started;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  pool.Submit([&] { ++done; });
  WaitFor(started, 1);
  CHECK(!pool.Idle());  // one running, one queued
  release = true;
  WaitFor(done, 1);
  // The worker marks itself idle just after the task returns; a pool that
  // never turns idle hangs here, and the watchdog names the test.
  while (!pool.Idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(pool.Idle());
  pool.Stop();
}

TEST(idle_workers_block_instead_of_spinning) {
  elf::WorkerPool pool(2);
  // Both threads have started (each ran a job) and gone back to wait: what
  // follows measures idle workers, however late a loaded machine started them.
  std::atomic<int> ran{0};
  std::vector<elf::WorkerPool::Job> jobs;
  for (int home = 0; home < 2; ++home) jobs.push_back({[&] { ++ran; }, home});
  pool.SubmitMany(std::move(jobs));
  WaitFor(ran, 2);
  while (!pool.Idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // CPU time, not wall-clock time: other processes' load does not add to it.
  const std::clock_t before = std::clock();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double cpu_seconds = static_cast<double>(std::clock() - before) / CLOCKS_PER_SEC;
  CHECK(cpu_seconds < 0.05);  // two spinning threads would burn about 0.6 s
}

TEST(waking_a_sleeping_worker_measures_its_wake_up_latency) {
  elf::WorkerPool pool(1);
  CHECK_EQ(pool.WakeLatencyNs(), 0.0);  // nothing woken yet
  std::atomic<int> ran{0};
  for (int i = 1; i <= 3; ++i) {
    pool.Submit([&] { ++ran; });
    WaitFor(ran, i);
    // Idle: the worker is back asleep (it marks itself so under the lock it
    // then waits with), so the next job wakes it. The first job may find the
    // thread not yet started, and wake nothing.
    while (!pool.Idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(pool.wakeups() >= 2u);
  CHECK(pool.WakeLatencyNs() > 0.0);
  pool.Stop();
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }

#ifdef __linux__
namespace {

// The number of CPUs each pool thread may run on, seen from a task per thread.
std::multiset<int> CpusPerWorker(int num_threads) {
  elf::WorkerPool pool(num_threads);
  std::mutex mutex;
  std::condition_variable all_in;
  std::multiset<int> counts;
  std::set<std::thread::id> seen;
  int arrived = 0;
  for (int i = 0; i < num_threads; ++i) {
    pool.Submit([&] {
      cpu_set_t set;
      pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
      std::unique_lock<std::mutex> lock(mutex);
      counts.insert(CPU_COUNT(&set));
      ++arrived;
      all_in.notify_all();
      // Hold this worker until every task has started, so each runs on its own thread.
      all_in.wait(lock, [&] { return arrived == num_threads; });
    });
  }
  std::unique_lock<std::mutex> lock(mutex);
  all_in.wait(lock, [&] { return arrived == num_threads; });
  return counts;
}

int AllowedCpuCount() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof(set), &set);
  return CPU_COUNT(&set);
}

}  // namespace

TEST(a_pool_spanning_every_cpu_pins_one_worker_per_cpu) {
  const int cpus = AllowedCpuCount();
  const std::multiset<int> counts = CpusPerWorker(cpus);
  const int expected = cpus > 1 ? 1 : cpus;
  CHECK_EQ(static_cast<int>(counts.count(expected)), cpus);
}

TEST(a_smaller_pool_is_not_pinned) {
  const int cpus = AllowedCpuCount();  // on one CPU, pinned or not reads the same
  const std::multiset<int> counts = CpusPerWorker(1);
  CHECK_EQ(*counts.begin(), cpus);
}
#endif

// on_idle runs once each time the pool runs out of work, after the last task
// of the burst (by then every task has run), not per task.
TEST(the_worker_that_finishes_the_last_task_reports_the_pool_idle) {
  std::atomic<int> done{0};
  std::atomic<int> idle{0};
  std::atomic<int> done_when_idle{0};
  elf::WorkerPool pool(2, [&] {
    done_when_idle = done.load();
    ++idle;
  });
  for (int burst = 1; burst <= 3; ++burst) {
    std::vector<elf::WorkerPool::Job> jobs;
    for (int i = 0; i < 50; ++i) jobs.push_back({[&] { ++done; }, i % 2});
    pool.SubmitMany(std::move(jobs));
    WaitFor(idle, burst);
    CHECK_EQ(done_when_idle.load(), 50 * burst);
  }
  CHECK_EQ(idle.load(), 3);
}
