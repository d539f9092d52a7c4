// Tag: row claims, commits, the ring of buffers (ownership, parking,
// release), deterministic claims and timeouts, driven directly without a
// context.
#include "elf/tag.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "check.h"
#include "elf/router.h"

using elf::BatchBuffer;
using elf::Claim;
using elf::DType;
using elf::KeyRole;
using elf::Tag;

namespace {

const std::vector<elf::KeySpec>& Keys() {
  static const std::vector<elf::KeySpec> keys = {
      {"s", DType::kFloat32, {2}, "", KeyRole::kObservation, std::nullopt},
      {"a", DType::kInt64, {}, "", KeyRole::kAction, std::nullopt},
  };
  return keys;
}

// A tag over `channels` channels with `capacity` rows per buffer.
std::unique_ptr<Tag> MakeTag(int channels, int capacity, bool deterministic = false, int timeout_ms = -1,
                             int min_batch = 1, int T = 1) {
  elf::TagConfig config;
  config.name = "actor";
  config.batch_size = capacity;
  config.inputs = {"s"};
  config.T = T;
  config.timeout_ms = timeout_ms;
  config.min_batch = min_batch;
  auto tag = std::make_unique<Tag>(config, 0);
  tag->SetKeys({0}, {1});
  for (int c = 0; c < channels; ++c) tag->AddChannel(c);
  tag->Allocate(Keys(), elf::Router::Make(deterministic)->Shape(*tag, channels));
  return tag;
}

constexpr int64_t kMs = 1000000;

// Labels a one-row claim with `id` (game, seat 0, channel) and commits it.
bool CommitRow(Tag& tag, const Claim& claim, int id) {
  Tag::Label(claim, claim.row, id, 0);
  return tag.Commit(claim, 1);
}

}  // namespace

TEST(allocation_sizes_buffers_for_every_key_and_at_least_two_buffers) {
  auto tag = MakeTag(4, 4, false, -1, 1, 3);
  CHECK_EQ(tag->num_buffers(), 2);
  CHECK_EQ(tag->capacity(), 4);
  BatchBuffer& buffer = tag->buffer(1);
  CHECK_EQ(buffer.inputs[0].size() * 8, std::size_t{8 * 3 * 4});  // s: 8 bytes, T = 3, 4 rows
  CHECK_EQ(buffer.replies[0].size() * 8, std::size_t{8 * 4});
  CHECK_EQ(buffer.owner.load(), int64_t{1});
  CHECK(tag->has_replies());
  // Buffer addressing is time-major: [T, capacity, ...].
  CHECK_EQ(static_cast<uint8_t*>(buffer.Input(0, 2, 1, 8, 4)) - static_cast<uint8_t*>(buffer.Input(0, 0, 0, 8, 4)),
           std::ptrdiff_t{(2 * 4 + 1) * 8});
  // Channels split into groups of `capacity`; first-come with replies, two
  // buffers more than groups when there are several (one when deterministic).
  CHECK_EQ(MakeTag(10, 4)->num_buffers(), 5);
  CHECK_EQ(MakeTag(10, 4)->groups(), 3);
  CHECK_EQ(MakeTag(10, 4, true)->num_buffers(), 4);
  // A tag without replies frees its buffers on release: no spare.
  elf::TagConfig train;
  train.name = "train";
  train.batch_size = 4;
  train.inputs = {"s"};
  Tag no_replies(train, 0);
  no_replies.SetKeys({0}, {});
  for (int c = 0; c < 10; ++c) no_replies.AddChannel(c);
  no_replies.Allocate(Keys(), elf::FirstComeRouter().Shape(no_replies, 10));
  CHECK_EQ(no_replies.num_buffers(), 4);
}

TEST(claims_fill_rows_in_order_and_the_last_commit_completes_the_batch) {
  auto tag = MakeTag(4, 3);
  std::vector<Claim> claims;
  for (int i = 0; i < 3; ++i) claims.push_back(tag->ClaimNext());
  for (int i = 0; i < 3; ++i) {
    CHECK(claims[i].ok);
    CHECK_EQ(claims[i].batch, int64_t{0});
    CHECK_EQ(claims[i].row, i);
    CHECK(claims[i].buffer == &tag->buffer(0));
  }
  // Out of order: only the commit that makes the batch whole completes it.
  uint8_t record[8];
  Tag::Label(claims[1], 1, 11, 1, record);
  CHECK(!CommitRow(*tag, claims[2], 12));
  CHECK(!CommitRow(*tag, claims[0], 10));
  CHECK(!tag->buffer(0).ready.load());
  CHECK(tag->Commit(claims[1], 1));
  CHECK(tag->buffer(0).ready.load());
  CHECK_EQ(tag->buffer(0).size, 3);
  CHECK_EQ(tag->buffer(0).game_ids[0], 10);
  CHECK_EQ(tag->buffer(0).game_ids[2], 12);
  CHECK_EQ(tag->buffer(0).seats[1], 1);
  CHECK(tag->buffer(0).reply_to[1] == record);
  const Claim next = tag->ClaimNext();
  CHECK(next.ok);
  CHECK_EQ(next.batch, int64_t{1});
  CHECK_EQ(next.row, 0);
  CHECK(next.buffer == &tag->buffer(1));
}

TEST(block_claim_takes_up_to_the_rows_left_in_the_batch) {
  auto tag = MakeTag(5, 5);
  const Claim first = tag->ClaimNext(3), second = tag->ClaimNext(3);
  CHECK(first.ok && second.ok);
  CHECK_EQ(first.row, 0);
  CHECK_EQ(first.rows, 3);
  CHECK_EQ(second.row, 3);
  CHECK_EQ(second.rows, 2);
  CHECK_EQ(second.batch, int64_t{0});
  const Claim third = tag->ClaimNext(4);
  CHECK_EQ(third.batch, int64_t{1});
  CHECK_EQ(third.rows, 4);
  for (int row = 0; row < 5; ++row) Tag::Label(row < 3 ? first : second, row, 100 + row, 0);
  CHECK(!tag->Commit(second, 2));
  CHECK(tag->Commit(first, 3));
  CHECK_EQ(tag->buffer(0).size, 5);
  CHECK_EQ(tag->buffer(0).game_ids[4], 104);
}

TEST(full_ring_refuses_claims_until_the_oldest_batch_is_released) {
  auto tag = MakeTag(2, 2);  // 2 buffers
  REQUIRE(tag->num_buffers() == 2);
  for (int batch = 0; batch < 2; ++batch) {
    for (int row = 0; row < 2; ++row) {
      const Claim claim = tag->ClaimNext();
      REQUIRE(claim.ok);
      CommitRow(*tag, claim, row);
    }
  }
  const Claim busy = tag->ClaimNext();
  CHECK(!busy.ok);
  CHECK_EQ(busy.batch, int64_t{2});
  CHECK(tag->Park(7, 2));  // parked: batch 0 still holds buffer 0
  CHECK(tag->Park(8, 2));
  const std::vector<int> resumed = tag->Release(0);
  CHECK_EQ(resumed.size(), std::size_t{2});
  CHECK_EQ(resumed.empty() ? -1 : resumed[0], 7);
  CHECK_EQ(tag->buffer(0).owner.load(), int64_t{2});
  CHECK(!tag->buffer(0).ready.load());
  CHECK_EQ(BatchBuffer::Count(tag->buffer(0).claims.load()), 0);
  CHECK_EQ(tag->buffer(0).committed.load(), 0);
  const Claim claim = tag->ClaimNext();
  CHECK(claim.ok);
  CHECK_EQ(claim.batch, int64_t{2});
  CHECK(tag->Release(1).empty());  // nobody parked any more
}

TEST(park_after_the_buffer_came_free_says_retry) {
  auto tag = MakeTag(2, 2);
  for (int i = 0; i < 4; ++i) CommitRow(*tag, tag->ClaimNext(), i % 2);
  const Claim busy = tag->ClaimNext();
  REQUIRE(!busy.ok);
  tag->Release(0);  // between the failed claim and Park
  CHECK(!tag->Park(7, busy.batch));
  CHECK(tag->ClaimNext().ok);
}

// A worker that read `fill_` just before the batch it names was completed,
// delivered and released finds the buffer owned by a later batch. Park must
// then say "retry": the release it would wait for has already happened, and
// no other may come (for instance when every other game waits on this one).
TEST(park_on_a_batch_whose_buffer_was_already_released_says_retry) {
  auto tag = MakeTag(1, 1);  // 2 buffers of one row
  const Claim claim = tag->ClaimNext();
  REQUIRE(claim.ok);
  REQUIRE(CommitRow(*tag, claim, 0));
  tag->Release(0);  // buffer 0 now belongs to batch 2
  REQUIRE(tag->buffer(0).owner.load() == 2);
  // What ClaimNext returns to a thread that loaded fill_ == 0 before all that:
  // {ok = false, batch = 0}. Parking it would strand the game.
  CHECK(!tag->Park(7, 0));
  CHECK(tag->Release(1).empty());
}

TEST(deterministic_claims_map_each_channel_to_a_fixed_batch_and_row) {
  auto tag = MakeTag(5, 2, true);  // groups {0,1} {2,3} {4}: 3 groups, 4 buffers
  REQUIRE(tag->groups() == 3);
  REQUIRE(tag->num_buffers() == 4);
  CHECK_EQ(tag->GroupSize(0), 2);
  CHECK_EQ(tag->GroupSize(2), 1);
  CHECK_EQ(tag->GroupSize(5), 1);
  for (int position = 0; position < 5; ++position) {
    const Claim claim = tag->ClaimFixed(position, 0);
    CHECK(claim.ok);
    CHECK_EQ(claim.batch, int64_t{position / 2});
    CHECK_EQ(claim.row, position % 2);
  }
  // Message 1 of channel 4 is batch 1 * 3 + 2 = 5, in buffer 1, owned by batch 1.
  const Claim later = tag->ClaimFixed(4, 1);
  CHECK_EQ(later.batch, int64_t{5});
  CHECK(!later.ok);
  // Message 1 of channel 0 is batch 3, in the spare buffer 3.
  CHECK(tag->ClaimFixed(0, 1).ok);
  // Group completion does not depend on arrival order.
  CHECK(!CommitRow(*tag, tag->ClaimFixed(3, 0), 3));
  CHECK(CommitRow(*tag, tag->ClaimFixed(2, 0), 2));
  CHECK_EQ(tag->buffer(1).size, 2);
  CHECK_EQ(tag->buffer(1).game_ids[0], 2);
  CHECK(CommitRow(*tag, tag->ClaimFixed(4, 0), 4));  // the short group of one
  CHECK_EQ(tag->buffer(2).size, 1);
  CHECK(!tag->CloseIfTimedOut(elf::Tag::NowNs() + 1000 * kMs).has_value());  // no timeouts when deterministic
  CHECK_EQ(tag->TimeoutDeadlineNs(0), INT64_MAX);
}

TEST(deterministic_claims_do_not_depend_on_who_claims_first) {
  auto a = MakeTag(6, 4, true), b = MakeTag(6, 4, true);
  for (int count = 0; count < 3; ++count) {
    for (int position = 0; position < 6; ++position) {
      const Claim x = a->ClaimFixed(position, count), y = b->ClaimFixed(5 - position, count);
      const Claim y_same = b->ClaimFixed(position, count);
      CHECK_EQ(x.batch, y_same.batch);
      CHECK_EQ(x.row, y_same.row);
      (void)y;
    }
  }
}

TEST(without_timeout_a_partial_batch_never_closes) {
  auto tag = MakeTag(4, 4);
  CommitRow(*tag, tag->ClaimNext(), 0);
  CHECK(!tag->CloseIfTimedOut(elf::Tag::NowNs() + 3600 * 1000 * kMs).has_value());
  CHECK_EQ(tag->TimeoutDeadlineNs(5), INT64_MAX);
  CHECK(!tag->buffer(0).ready.load());
}

TEST(timeout_closes_a_partial_batch_of_at_least_min_batch_rows) {
  auto tag = MakeTag(4, 4, false, 20, 2);
  const int64_t t0 = elf::Tag::NowNs();
  // Nothing claimed: the caller should look again within a timeout.
  CHECK(tag->TimeoutDeadlineNs(t0) > t0 && tag->TimeoutDeadlineNs(t0) <= t0 + 20 * kMs);
  CommitRow(*tag, tag->ClaimNext(), 0);
  const int64_t first = tag->buffer(0).first_claim_ns.load();
  CHECK(first >= t0);
  CHECK_EQ(tag->TimeoutDeadlineNs(first), first + 20 * kMs);
  CHECK(!tag->CloseIfTimedOut(first + 100 * kMs).has_value());  // 1 row < min_batch 2
  // Time is up but min_batch is not reached: look again later, not never.
  const int64_t again = tag->TimeoutDeadlineNs(first + 100 * kMs);
  CHECK(again > first + 100 * kMs && again <= first + 120 * kMs);
  CommitRow(*tag, tag->ClaimNext(), 1);
  CHECK(!tag->CloseIfTimedOut(first + 19 * kMs).has_value());  // not waited long enough
  const auto closed = tag->CloseIfTimedOut(first + 20 * kMs);
  CHECK(closed.has_value() && *closed == 0);
  CHECK(tag->buffer(0).ready.load());
  CHECK_EQ(tag->buffer(0).size, 2);
  CHECK(!tag->CloseIfTimedOut(first + 40 * kMs).has_value());  // batch 1 is empty
  const Claim next = tag->ClaimNext();
  CHECK(next.ok);
  CHECK_EQ(next.batch, int64_t{1});
  CHECK_EQ(next.row, 0);
}

TEST(filling_rows_and_whether_the_timeout_will_deliver_them) {
  auto untimed = MakeTag(4, 4);
  CommitRow(*untimed, untimed->ClaimNext(), 0);
  CHECK_EQ(untimed->FillingRows(), 1);
  CHECK(!untimed->WillTimeOut());  // no timeout: only a full batch is delivered
  auto timed = MakeTag(4, 4, false, 20, 2);
  CHECK(!timed->WillTimeOut());  // empty
  CommitRow(*timed, timed->ClaimNext(), 0);
  CHECK(!timed->WillTimeOut());  // 1 row < min_batch 2
  CommitRow(*timed, timed->ClaimNext(), 1);
  CHECK_EQ(timed->FillingRows(), 2);
  CHECK(timed->WillTimeOut());
  CHECK(timed->CloseIfTimedOut(timed->buffer(0).first_claim_ns.load() + 20 * kMs).has_value());
  CHECK_EQ(timed->FillingRows(), 0);  // the next batch has no row yet
}

TEST(timeout_close_with_a_commit_pending_completes_on_that_commit) {
  auto tag = MakeTag(4, 4, false, 10, 1);
  const Claim a = tag->ClaimNext(), b = tag->ClaimNext();
  CommitRow(*tag, a, 0);
  const int64_t first = tag->buffer(0).first_claim_ns.load();
  CHECK(!tag->CloseIfTimedOut(first + 50 * kMs).has_value());  // closed, but row 1 is still being written
  CHECK(!tag->buffer(0).ready.load());
  CHECK(!tag->ClaimNext().buffer->ready.load());  // new claims go to batch 1
  CHECK(CommitRow(*tag, b, 1));
  CHECK_EQ(tag->buffer(0).size, 2);
}

TEST(release_resets_the_buffer_for_its_next_batch) {
  auto tag = MakeTag(4, 4, false, 10, 1);
  CommitRow(*tag, tag->ClaimNext(), 0);
  REQUIRE(tag->CloseIfTimedOut(elf::Tag::NowNs() + 50 * kMs).has_value());
  tag->Release(0);
  BatchBuffer& buffer = tag->buffer(0);
  CHECK_EQ(buffer.owner.load(), int64_t{2});
  CHECK_EQ(BatchBuffer::Count(buffer.claims.load()), 0);
  CHECK_EQ(buffer.committed.load(), 0);
  CHECK(!buffer.ready.load());
  CHECK_EQ(buffer.size, 0);
}

// A claim whose row 0 was taken but whose first_claim_ns is not yet written
// must not be closed on a stale time (from a previous batch, or 0 at start).
TEST(fresh_buffer_is_not_timed_out_by_a_stale_first_claim_time) {
  auto tag = MakeTag(4, 4, false, 1000, 1);
  // Row 0 claimed, as a worker does just before it stores first_claim_ns.
  tag->buffer(0).claims.store(BatchBuffer::Fresh(0) | 1);
  tag->CloseIfTimedOut(elf::Tag::NowNs());
  CHECK(!BatchBuffer::Closed(tag->buffer(0).claims.load()));
}

namespace {

// Producers claim rows as fast as they can and record in each row the batch
// number their claim named; a consumer takes completed batches (published as
// the context does, under a mutex) and checks every row belongs to it and no
// batch is delivered twice.
struct RingStress {
  std::unique_ptr<Tag> tag;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<int64_t, int>> ready;  // (batch, size)
  std::vector<char> parked;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> commits{0};

  void Produce(int id) {
    while (!stop.load()) {
      const Claim claim = tag->ClaimNext(1 + id % 2);  // blocks of one and two rows
      if (!claim.ok) {
        std::unique_lock<std::mutex> lock(mutex);
        if (tag->Park(id, claim.batch)) {
          parked[id] = 1;
          changed.wait(lock, [&] { return !parked[id] || stop.load(); });
        }
        continue;
      }
      ++commits;
      for (int row = claim.row; row < claim.row + claim.rows; ++row) {
        Tag::Label(claim, row, static_cast<int32_t>(claim.batch), id);
      }
      if (tag->Commit(claim, claim.rows)) {
        std::lock_guard<std::mutex> lock(mutex);
        ready.emplace_back(claim.batch, claim.buffer->size);
        changed.notify_all();
      }
    }
  }
};

}  // namespace

TEST(concurrent_claims_never_write_into_a_batch_they_did_not_claim) {
  RingStress stress;
  const int capacity = 2;
  stress.tag = MakeTag(capacity, capacity);  // 2 buffers: the ring wraps constantly
  const int producers = 6;                   // more threads than cores: preemption anywhere
  stress.parked.assign(producers, 0);
  std::vector<std::thread> threads;
  for (int id = 0; id < producers; ++id) threads.emplace_back([&, id] { stress.Produce(id); });
  std::set<int64_t> seen;
  // A count of batches, not a span of time: a loaded machine takes longer
  // but checks as many. Producers that get stuck hang the wait below, and
  // the watchdog names the test.
  const int64_t batches = elf::testing::Scaled(100000);  // about 2 s alone, plain or under a sanitizer
  int64_t delivered = 0;
  while (delivered < batches) {
    std::pair<int64_t, int> item;
    {
      std::unique_lock<std::mutex> lock(stress.mutex);
      stress.changed.wait(lock, [&] { return !stress.ready.empty(); });
      item = stress.ready.front();
      stress.ready.pop_front();
    }
    const auto [batch, size] = item;
    ++delivered;
    if (!seen.insert(batch).second) {
      elf::testing::Fail(__FILE__, __LINE__, "batch " + std::to_string(batch) + " completed twice");
      break;
    }
    BatchBuffer& buffer = stress.tag->buffer(static_cast<int>(batch % stress.tag->num_buffers()));
    CHECK_EQ(size, capacity);
    CHECK_EQ(buffer.owner.load(), batch);
    for (int row = 0; row < size; ++row) {
      if (buffer.game_ids[row] != static_cast<int32_t>(batch)) {
        elf::testing::Fail(__FILE__, __LINE__,
                           "row " + std::to_string(row) + " of batch " + std::to_string(batch) +
                               " was claimed for batch " + std::to_string(buffer.game_ids[row]));
      }
    }
    std::vector<int> resumed = stress.tag->Release(batch);
    std::lock_guard<std::mutex> lock(stress.mutex);
    for (int id : resumed) stress.parked[id] = 0;
    stress.changed.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(stress.mutex);
    stress.stop = true;
    stress.changed.notify_all();
  }
  for (auto& thread : threads) thread.join();
  std::cerr << "  " << delivered << " batches, " << stress.commits.load() << " commits" << std::endl;
  CHECK_EQ(delivered, batches);  // no check broke the loop early
}

// The context's deterministic mode polls `ready` and then reads `size`
// (Context::TakeReady), without waiting for the committing worker's notify.
// `size` must therefore be published before `ready` is.
TEST(deterministic_batch_seen_ready_already_has_its_size) {
  const int channels = 6, capacity = 3;
  auto tag = MakeTag(channels, capacity, true);
  const int rounds = elf::testing::Scaled(2000);
  std::atomic<bool> stop{false};
  // One thread per channel, each sending `rounds` messages; a busy buffer
  // makes it yield and retry (a stand-in for parking).
  std::vector<std::thread> threads;
  for (int position = 0; position < channels; ++position) {
    threads.emplace_back([&, position] {
      for (int64_t count = 0; count < rounds && !stop.load(); ++count) {
        Claim claim = tag->ClaimFixed(position, count);
        while (!claim.ok && !stop.load()) {
          std::this_thread::yield();
          claim = tag->ClaimFixed(position, count);
        }
        if (stop.load()) return;
        CommitRow(*tag, claim, position);
      }
    });
  }
  const int64_t total = int64_t{rounds} * tag->groups();
  int bad = 0;
  for (int64_t batch = 0; batch < total && bad == 0;) {
    BatchBuffer& buffer = tag->buffer(static_cast<int>(batch % tag->num_buffers()));
    if (buffer.owner.load(std::memory_order_acquire) != batch || !buffer.ready.load(std::memory_order_acquire)) {
      std::this_thread::yield();  // a batch that never becomes ready hangs here: the watchdog names the test
      continue;
    }
    const int size = buffer.size;  // what TakeReady reads
    if (size != tag->GroupSize(batch)) {
      ++bad;
      elf::testing::Fail(__FILE__, __LINE__,
                         "batch " + std::to_string(batch) + " seen ready with size " + std::to_string(size) +
                             ", expected " + std::to_string(tag->GroupSize(batch)));
    }
    tag->Release(batch);
    ++batch;
  }
  stop = true;
  for (auto& thread : threads) thread.join();
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
