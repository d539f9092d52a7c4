// RemoteBoard and RemoteGame: requests and their results through the shared
// block, a worker's failure, closing, and the step timeout; and a Context of
// remote games that stops although a worker never answers. The "workers"
// here are threads of the test: the board needs shared memory, not processes.
#include "elf/remote.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "driver.h"
#include "elf/context.h"

namespace {

using elf::RemoteBoard;

std::vector<elf::KeySpec> Keys() {
  return {{"s", elf::DType::kFloat32, {2}, "observation", elf::KeyRole::kObservation, std::nullopt},
          {"a", elf::DType::kInt64, {}, "action", elf::KeyRole::kAction, std::make_pair(0.0, 1.0)}};
}

// A board attached to zeroed memory of its own.
struct Block {
  Block(int num_games, int num_workers, double step_timeout_s = 0.0)
      : board(std::make_shared<RemoteBoard>(Keys(), num_games, num_workers, step_timeout_s)),
        memory(board->bytes() / sizeof(uint64_t) + 1, 0) {
    board->Attach(reinterpret_cast<uint8_t*>(memory.data()));
  }
  std::shared_ptr<RemoteBoard> board;
  std::vector<uint64_t> memory;
};

// Serves worker `worker`'s games until the board closes: a first request
// writes s = (0, 0); a step with action a writes s = (a, a), reward a, and
// ends the episode when a == 1. Answers at most `answers` requests in all.
// With `ready` false it does not call Ready: a worker process still starting.
void Serve(RemoteBoard& board, int worker, int answers = 1 << 30, bool ready = true) {
  if (ready) board.Ready(worker);
  while (!board.closing() && answers > 0) {
    for (int game : board.AwaitWork(worker, 20)) {
      if (answers-- == 0) break;
      const auto action = *reinterpret_cast<int64_t*>(board.Slot("action/a", game));
      auto* s = reinterpret_cast<float*>(board.Slot("obs/s", game));
      s[0] = s[1] = static_cast<float>(action);
      board.Finish(game, static_cast<float>(action), action == 1, false);
    }
  }
}

// Waits for the next batch, or the context's failure (nullopt).
std::optional<elf::BatchRef> NextOrFailure(elf::Context& ctx, std::string& failure) {
  for (;;) {
    try {
      if (auto ref = ctx.Wait(50)) return ref;
    } catch (const elf::GameError& error) {
      failure = error.what();
      return std::nullopt;
    }
  }
}

}  // namespace

TEST(a_request_comes_back_with_the_workers_result) {
  Block block(4, 2);
  RemoteBoard& board = *block.board;
  std::thread worker([&] { Serve(board, 1); });
  CHECK(!board.Pending(3));
  board.Request(3);  // the first request (a reset)
  board.AwaitDone(3);
  CHECK(!board.Pending(3));
  *reinterpret_cast<int64_t*>(board.Slot("action/a", 3)) = 1;
  board.Request(3);
  board.AwaitDone(3);
  CHECK_EQ(board.reward(3), 1.0f);
  CHECK_EQ(board.status(3), uint8_t{RemoteBoard::kTerminated});
  CHECK_EQ(reinterpret_cast<float*>(board.Slot("obs/s", 3))[1], 1.0f);
  board.Close();
  worker.join();
}

// The handshake of remote.h: a wake-up system call only for a side that
// sleeps (here both sides are threads of one process, so one board counts).
TEST(a_side_makes_a_wake_up_call_only_when_the_other_sleeps) {
  Block block(3, 1);
  RemoteBoard& board = *block.board;
  auto flag = [&](const char* region, int index) {
    return reinterpret_cast<std::atomic<uint32_t>*>(board.Slot(region, index))->load();
  };
  for (int game = 0; game < 3; ++game) board.Request(game);  // the worker is awake (it never slept)
  CHECK_EQ(board.AwaitWork(0, 0).size(), std::size_t{3});
  for (int game = 0; game < 3; ++game) board.Finish(game, 0.0f, false, false);  // no engine thread waits
  for (int game = 0; game < 3; ++game) board.AwaitDone(game);
  CHECK_EQ(board.wake_calls(), uint64_t{0});

  std::vector<int> got;
  std::thread worker([&] { got = board.AwaitWork(0, 60'000); });
  while (flag("asleep", 0) == 0) std::this_thread::yield();
  board.Request(2);  // the worker sleeps, or is about to: one call
  worker.join();
  CHECK_EQ(board.wake_calls(), uint64_t{1});
  CHECK_EQ(got.size(), std::size_t{1});
  CHECK_EQ(got[0], 2);

  std::thread engine([&] { board.AwaitDone(2); });
  while (flag("awaited", 2) == 0) std::this_thread::yield();
  board.Finish(2, 1.0f, false, false);  // the engine thread sleeps on it: one call
  engine.join();
  CHECK_EQ(board.wake_calls(), uint64_t{2});
  CHECK_EQ(board.reward(2), 1.0f);
}

TEST(each_seat_has_its_own_slots_reward_and_status) {
  const int seats = 3;
  auto board = std::make_shared<RemoteBoard>(Keys(), 2, 1, 0.0, seats);
  std::vector<uint64_t> memory(board->bytes() / sizeof(uint64_t) + 1, 0);
  board->Attach(reinterpret_cast<uint8_t*>(memory.data()));
  CHECK_EQ(board->num_seats(), seats);
  // Game 1's seat s lies at channel 1 * 3 + s of every per-seat region.
  CHECK(board->Slot("obs/s", 4) == board->Slot("obs/s", 3) + 2 * sizeof(float));
  board->Request(1);
  board->FinishSeats(1, {-1.0f, 2.0f, 0.5f}, {0, RemoteBoard::kTerminated, RemoteBoard::kTruncated}, false, false);
  board->AwaitDone(1);
  CHECK_EQ(board->reward(1, 0), -1.0f);
  CHECK_EQ(board->reward(1, 1), 2.0f);
  CHECK_EQ(board->reward(1, 2), 0.5f);
  CHECK_EQ(board->seat_status(1, 1), uint8_t{RemoteBoard::kTerminated});
  CHECK_EQ(board->seat_status(1, 2), uint8_t{RemoteBoard::kTruncated});
  CHECK_EQ(board->status(1), uint8_t{0});  // the game goes on
  CHECK_EQ(board->reward(0, 0), 0.0f);     // game 0's slots untouched
  CHECK_THROWS(board->FinishSeats(0, {1.0f}, {0}, false, false), std::invalid_argument, "3 seats");
}

TEST(games_are_split_into_contiguous_runs_per_worker) {
  Block block(7, 3);
  std::set<int> workers;
  for (int game = 0; game < 7; ++game) {
    const int worker = block.board->WorkerOf(game);
    CHECK(block.board->FirstGame(worker) <= game && game < block.board->FirstGame(worker + 1));
    workers.insert(worker);
  }
  CHECK_EQ(workers.size(), std::size_t{3});
}

TEST(a_failed_request_throws_the_workers_message) {
  Block block(2, 1);
  block.board->Request(0);
  block.board->Fail(0, "ValueError: bad action");
  CHECK_THROWS(block.board->AwaitDone(0), std::runtime_error, "ValueError: bad action");
}

TEST(closing_wakes_a_waiter_whose_worker_never_answers) {
  Block block(2, 1);
  block.board->Request(1);
  CHECK(block.board->Pending(1));
  std::string error;
  std::thread waiter([&] {
    try {
      block.board->AwaitDone(1);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  });
  block.board->Close();
  waiter.join();
  CHECK(error.find("shut down") != std::string::npos);
  CHECK(block.board->AwaitWork(0, 1000).size() == 1);  // an idle worker returns at once once closing
}

TEST(a_late_step_throws_naming_the_environment_and_its_worker) {
  Block block(4, 2, 0.05);
  RemoteBoard& board = *block.board;
  board.Ready(1);
  board.Request(3);
  board.Finish(3, 0.0f, false, false);  // the first request: answered
  board.AwaitDone(3);
  board.Request(3);  // a step nobody answers
  CHECK_THROWS(board.AwaitDone(3), std::runtime_error,
               "environment 3 (worker process 1, environments 2-3) did not finish its step within "
               "step_timeout_s = 0.05 s");
}

TEST(a_first_request_is_not_timed_while_its_worker_process_starts) {
  Block block(1, 1, 0.02);
  RemoteBoard& board = *block.board;
  board.Request(0);
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // starting: far beyond the step timeout
    // Answers before it reports ready, so the answer is the starting worker's
    // (after Ready, the 0.02 s would bound how soon a loaded machine runs
    // this thread, which no test may).
    Serve(board, 0, 1, false);
    board.Ready(0);
  });
  board.AwaitDone(0);  // does not throw
  worker.join();
  CHECK_EQ(board.status(0), uint8_t{0});
  CHECK_EQ(board.Requests(0), uint32_t{1});
}

TEST(a_first_reset_late_once_its_worker_is_ready_throws_naming_it) {
  Block block(4, 2, 0.05);
  RemoteBoard& board = *block.board;
  board.Request(3);
  board.Ready(1);  // worker 1 serves from now on, but never answers
  CHECK_THROWS(board.AwaitDone(3), std::runtime_error,
               "environment 3 (worker process 1, environments 2-3) did not finish its first reset within "
               "step_timeout_s = 0.05 s");
}

TEST(a_negative_step_timeout_is_rejected) {
  CHECK_THROWS(RemoteBoard(Keys(), 2, 1, -1.0), std::invalid_argument, "step_timeout_s");
  CHECK_THROWS(RemoteBoard(Keys(), 2, 3), std::invalid_argument, "num_workers");
}

// A context over remote games whose worker answers the first resets only.
struct StalledContext {
  explicit StalledContext(double step_timeout_s) : block(2, 1, step_timeout_s) {
    elf::GameSpec spec;
    spec.keys = block.board->keys();
    spec.steps_elsewhere = true;
    auto board = block.board;
    ctx = std::make_unique<elf::Context>(
        "stalled", spec, [board](int index) { return std::make_unique<elf::RemoteGame>(board, index); }, 2, 2, 0,
        false);
    // The worker answers the first resets before it reports ready: a first
    // request is not timed until then, so however late a loaded machine runs
    // this thread, no reset is late; the steps after Ready are timed.
    worker = std::thread([this] {
      Serve(*block.board, 0, 2, false);
      block.board->Ready(0);
    });
    ctx->AddTag(elf::testing::MakeTag("actor", 2, {"s"}, {"a"}));
    ctx->Start();
  }
  // Takes the first batch and replies: every game then waits for its step.
  void ReplyOnce() {
    const elf::BatchRef ref = elf::testing::NextBatch(*ctx);
    elf::testing::Reply<int64_t>(*ctx, ref, "a")[0] = 0;
    elf::testing::Reply<int64_t>(*ctx, ref, "a")[1] = 0;
    ctx->SubmitReplies(ref);
  }
  ~StalledContext() {
    block.board->Close();
    worker.join();
  }
  Block block;
  std::unique_ptr<elf::Context> ctx;
  std::thread worker;
};

TEST(closing_the_board_lets_stop_join_threads_waiting_on_a_stalled_worker) {
  StalledContext stalled(0.0);
  stalled.ReplyOnce();
  for (int game = 0; game < 2; ++game) {  // both steps requested: the engine threads wait for them
    const auto* command = reinterpret_cast<std::atomic<uint32_t>*>(stalled.block.board->Slot("command", game));
    while (command->load() < 2) std::this_thread::yield();
  }
  stalled.block.board->Close();  // what the Python source does before it stops the engine
  stalled.ctx->Stop();           // returns: the watchdog would name this test otherwise
}

TEST(a_stalled_step_fails_the_context_naming_game_and_environment) {
  StalledContext stalled(0.05);
  stalled.ReplyOnce();
  std::string failure;
  CHECK(!NextOrFailure(*stalled.ctx, failure));
  CHECK(failure.find("('stalled')") != std::string::npos);
  CHECK(failure.find("did not finish its step within step_timeout_s = 0.05 s") != std::string::npos);
  stalled.block.board->Close();
  stalled.ctx->Stop();
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
