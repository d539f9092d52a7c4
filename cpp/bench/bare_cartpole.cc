// The physical limit of the engine benchmark: CartPole games stepped by the
// same number of threads with no engine between them. The games are the
// registered "cartpole" (same arithmetic, through the same game API); each
// thread owns a contiguous share of them, and a batch is one step of every
// game: the caller fills the actions (one xoshiro draw per game, as cheap as
// an action can be drawn), steps the first share itself while the other
// threads step theirs, and waits until every game has stepped, reset if its
// episode ended, and written its observation. With one thread the caller
// steps every game and nothing is handed off: the game's arithmetic alone.
// What the engine adds on top (tags, claiming and copying rows, replies,
// scheduling) is the gap between this loop and the engine's. Threads are
// pinned one per CPU when there is one for each CPU, as the engine's
// WorkerPool pins its workers.
//
//   bare_cartpole --games 4096 --threads 2 --milliseconds 1000
// prints one line: "steps_per_s <rate> cpu_per_wall <cores busy>".
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "elf/game.h"
#include "elf/history.h"
#include "elf/registry.h"

namespace {

// Every game's record (its keys at the spec's offsets), one after another.
struct Games {
  elf::GameSpec spec;
  elf::RecordLayout layout;
  std::vector<std::unique_ptr<elf::Game>> games;
  std::vector<elf::Rng> rngs;
  std::vector<uint64_t> arena;
  std::vector<std::vector<elf::Row>> rows;  // per game: its one seat's row
  elf::Key<int64_t> action;

  explicit Games(int n) {
    const elf::Options options;
    spec = elf::Registry::Global().Spec("cartpole", options);
    layout = elf::RecordLayout(spec.keys, std::vector<bool>(spec.keys.size(), true));
    arena.assign(layout.bytes() / 8 * n, 0);
    for (int i = 0; i < static_cast<int>(spec.keys.size()); ++i) {
      if (spec.keys[i].role == elf::KeyRole::kAction) action = elf::Key<int64_t>(i);
    }
    for (int g = 0; g < n; ++g) {
      games.push_back(elf::Registry::Global().Find("cartpole").make(options));
      rngs.emplace_back(0, g);
      rows.push_back({elf::Row(&spec.keys, &layout)});
      rows.back()[0].Point(reinterpret_cast<uint8_t*>(arena.data()) + layout.bytes() * g);
      games[g]->Reset(rngs[g]);
      games[g]->Observe(0, rows[g][0]);
    }
  }

  void StepRange(int begin, int end) {
    for (int g = begin; g < end; ++g) {
      const elf::Outcome outcome = games[g]->Step(rows[g], rngs[g]);
      if (outcome.Over()) games[g]->Reset(rngs[g]);
      games[g]->Observe(0, rows[g][0]);
    }
  }
};

// Pins the calling thread to the index-th CPU it may use, when `threads`
// covers every such CPU (the engine's WorkerPool policy).
void Pin([[maybe_unused]] int index, [[maybe_unused]] int threads) {
#ifdef __linux__
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2 || threads < static_cast<int>(cpus.size())) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[index % cpus.size()], &one);
  pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
#endif
}

// Runs a batch: the caller steps share 0, the crew's threads the others
// (they block between batches, as the engine's workers do).
class Crew {
 public:
  Crew(Games& games, int threads) : games_(games), threads_count_(threads) {
    const int n = static_cast<int>(games.games.size());
    for (int t = 1; t < threads; ++t) {
      threads_.emplace_back([this, t, threads, begin = n * t / threads, end = n * (t + 1) / threads] {
        Pin(t, threads);
        Work(begin, end);
      });
    }
    Pin(0, threads);
  }
  ~Crew() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    start_.notify_all();
    for (auto& thread : threads_) thread.join();
  }

  void Batch() {
    const int n = static_cast<int>(games_.games.size());
    if (threads_.empty()) {
      games_.StepRange(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = static_cast<int>(threads_.size());
      ++generation_;
    }
    start_.notify_all();
    games_.StepRange(0, n / threads_count_);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  void Work(int begin, int end) {
    int64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      games_.StepRange(begin, end);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--running_ == 0) done_.notify_one();
    }
  }

  Games& games_;
  int threads_count_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  int64_t generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
};

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int Arg(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = Arg(argc, argv, "--games", 4096);
  const int threads = Arg(argc, argv, "--threads", 2);
  const double seconds = Arg(argc, argv, "--milliseconds", 1000) / 1000.0;
  Games games(n);
  Crew crew(games, threads);
  elf::Rng actions(1, 0);
  auto batch = [&] {
    for (int g = 0; g < n; ++g) *games.rows[g][0].Get(games.action) = static_cast<int64_t>(actions.Next() >> 63);
    crew.Batch();
  };
  const double warm_until = Seconds() + 0.1 * seconds;
  while (Seconds() < warm_until) batch();
  const double start = Seconds();
  const std::clock_t cpu_start = std::clock();
  int64_t batches = 0;
  while (Seconds() - start < seconds) {
    batch();
    ++batches;
  }
  const double wall = Seconds() - start;
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf("steps_per_s %.0f cpu_per_wall %.2f\n", static_cast<double>(batches) * n / wall, cpu / wall);
  return 0;
}
