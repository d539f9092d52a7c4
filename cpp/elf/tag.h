// A tag: a named stream of batches ("actor", "train") with its batch size,
// input keys, reply keys and history length T, and the ring of buffers its
// batches are written into.
//
// Protocol. Batches of a tag are numbered j = 0, 1, 2, ...; batch j lives in
// buffer j % num_buffers and may only be written once the buffer's `owner`
// is j (the previous user, batch j - num_buffers, has been released).
// Worker threads claim rows (Claim*), write and Label them, then Commit. The commit that
// completes a batch marks it ready and returns true; the caller then tells
// the waiting Python thread. The Python thread delivers batches, and releases
// each one (Release) once its callback and replies are done, which hands the
// buffer to batch j + num_buffers and returns the games that were parked
// waiting for it. Claims use atomics only; parking takes `park_mutex`.
//
// Two ways to claim rows (which one a context uses is the router's choice,
// router.h):
//   ClaimNext: batch `fill` takes rows in arrival order; a partial batch may
//     be closed early by a timeout (CloseIfTimedOut), if the ring's shape
//     allows timeouts. Such a batch completes when closed or full.
//   ClaimFixed: a channel's k-th message goes to batch k * groups + g at row
//     p, where (g, p) is fixed by its position among the tag's channels; such
//     a batch completes when its group's rows are all committed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "elf/spec.h"

namespace elf {

struct TagConfig {
  std::string name;
  int batch_size = 1;
  std::vector<std::string> inputs;
  std::vector<std::string> replies;
  int T = 1;
  int timeout_ms = -1;  // < 0: no timeout; deliver only full batches
  int min_batch = 1;
  std::vector<int> seats;  // empty: every seat
};

// Storage for one batch, struct-of-arrays: per input key [T, capacity, ...]
// bytes, per reply key [capacity, ...] bytes, and per row who wrote it.
struct BatchBuffer {
  // `claims` packs the batch it counts for (high 32 bits), a closed flag and
  // the rows claimed, so a claim CAS can never land in a later batch of the
  // same buffer (no ABA after a release).
  static constexpr uint64_t kClosed = 1ull << 31;
  static constexpr uint64_t kCountMask = kClosed - 1;
  static uint64_t Fresh(int64_t batch) { return static_cast<uint64_t>(static_cast<uint32_t>(batch)) << 32; }
  static bool For(uint64_t claims, int64_t batch) { return (claims >> 32) == static_cast<uint32_t>(batch); }
  static int Count(uint64_t claims) { return static_cast<int>(claims & kCountMask); }
  static bool Closed(uint64_t claims) { return (claims & kClosed) != 0; }
  static constexpr int64_t kNoClaimYet = INT64_MAX;

  std::vector<std::vector<uint64_t>> inputs;   // uint64_t storage: 8-byte aligned
  std::vector<std::vector<uint64_t>> replies;
  std::vector<int32_t> game_ids;
  std::vector<int32_t> seats;
  std::vector<uint8_t*> reply_to;  // per row: where its replies are copied (tags with replies)

  std::atomic<int64_t> owner{0};
  std::atomic<uint64_t> claims{0};  // Fresh(batch) | kClosed once no more may join | rows claimed
  std::atomic<int> committed{0};
  // The last batch this buffer completed: elects the one thread that
  // completes a batch, by the batch's number, so a committer of an earlier
  // batch that runs late cannot complete a later one of the same buffer.
  std::atomic<int64_t> completed{-1};
  std::atomic<bool> ready{false};
  std::atomic<int64_t> first_claim_ns{kNoClaimYet};
  std::atomic<int> unconsumed_replies{0};
  int size = 0;  // rows in the batch; set when it becomes ready

  void* Input(int key_index, int t, int row, std::size_t key_bytes, int capacity) {
    return reinterpret_cast<uint8_t*>(inputs[key_index].data()) +
           (static_cast<std::size_t>(t) * capacity + row) * key_bytes;
  }
  void* Reply(int key_index, int row, std::size_t key_bytes) {
    return reinterpret_cast<uint8_t*>(replies[key_index].data()) + row * key_bytes;
  }
};

// Moves one key of `bytes` bytes between `count` records (at `offset` in
// each) and a column of consecutive rows: into the column (kGather) or out of
// it. `Bytes` is std::size_t, or an std::integral_constant for the common
// sizes, whose copies the compiler then inlines.
template <bool kGather, typename Bytes>
inline void MoveColumn(uint8_t* column, uint8_t* const* records, int count, std::size_t offset, Bytes bytes) {
  for (int i = 0; i < count; ++i) {
    uint8_t* row = column + i * bytes;
    uint8_t* key = records[i] + offset;
    if (kGather) {
      std::memcpy(row, key, bytes);
    } else {
      std::memcpy(key, row, bytes);
    }
  }
}

template <bool kGather>
inline void MoveKey(uint8_t* column, uint8_t* const* records, int count, std::size_t offset, std::size_t bytes) {
  switch (bytes) {
    case 1: return MoveColumn<kGather>(column, records, count, offset, std::integral_constant<std::size_t, 1>{});
    case 4: return MoveColumn<kGather>(column, records, count, offset, std::integral_constant<std::size_t, 4>{});
    case 8: return MoveColumn<kGather>(column, records, count, offset, std::integral_constant<std::size_t, 8>{});
    case 16: return MoveColumn<kGather>(column, records, count, offset, std::integral_constant<std::size_t, 16>{});
    default: return MoveColumn<kGather>(column, records, count, offset, bytes);
  }
}

// Rows [row, row + rows) of batch `batch`, or, if !ok, the batch whose
// buffer is still busy (the game must park).
struct Claim {
  bool ok = false;
  int64_t batch = 0;
  BatchBuffer* buffer = nullptr;
  int row = 0;
  int rows = 0;
  int batch_rows = 0;  // a fixed claim's batch size (complete once all are committed); 0: closed or full
};

// A tag's ring, as the router chooses it: rows per buffer, buffers beyond
// one per group of channels, and whether a partial batch may time out.
struct RingShape {
  int capacity = 1;
  int spare = 1;
  bool timeouts = false;
};

class Tag {
 public:
  Tag(TagConfig config, int index) : config_(std::move(config)), index_(index) {}

  const TagConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  int index() const { return index_; }
  int T() const { return config_.T; }
  bool has_replies() const { return !reply_keys_.empty(); }
  int capacity() const { return capacity_; }
  int groups() const { return groups_; }
  int num_buffers() const { return static_cast<int>(buffers_.size()); }
  BatchBuffer& buffer(int i) { return *buffers_[i]; }
  const std::vector<int>& input_keys() const { return input_keys_; }
  const std::vector<int>& reply_keys() const { return reply_keys_; }
  const std::vector<int>& channels() const { return channels_; }
  // Whether a partial batch may be delivered by its timeout (set by Allocate).
  bool times_out() const { return timeout_ns_ >= 0; }

  // Wiring, before start: the global key ids and the channels routed here.
  void SetKeys(std::vector<int> inputs, std::vector<int> replies) {
    input_keys_ = std::move(inputs);
    reply_keys_ = std::move(replies);
  }
  void AddChannel(int channel) { channels_.push_back(channel); }

  // Allocates the buffers, `shape.capacity` rows each, one per group of
  // channels plus `shape.spare` (at least two; see the routers for why).
  void Allocate(const std::vector<KeySpec>& keys, const RingShape& shape) {
    const int routed = static_cast<int>(channels_.size());
    timeout_ns_ = shape.timeouts && config_.timeout_ms >= 0 ? int64_t{config_.timeout_ms} * 1000000 : -1;
    capacity_ = shape.capacity;
    groups_ = std::max(1, (routed + capacity_ - 1) / capacity_);
    const int num_buffers = std::max(2, groups_ + shape.spare);
    for (int i = 0; i < num_buffers; ++i) {
      auto buffer = std::make_unique<BatchBuffer>();
      for (int key : input_keys_) buffer->inputs.emplace_back(Words(keys[key].Bytes() * T() * capacity_));
      for (int key : reply_keys_) buffer->replies.emplace_back(Words(keys[key].Bytes() * capacity_));
      buffer->game_ids.assign(capacity_, -1);
      buffer->seats.assign(capacity_, -1);
      buffer->reply_to.assign(capacity_, nullptr);
      buffer->owner = i;
      buffer->claims = BatchBuffer::Fresh(i);
      buffer->completed = i - num_buffers;
      buffers_.push_back(std::move(buffer));
    }
  }

  // Rows of fixed batch j (the last group may be smaller).
  int GroupSize(int64_t batch) const {
    const int group = static_cast<int>(batch % groups_);
    const int routed = static_cast<int>(channels_.size());
    return std::min(capacity_, routed - group * capacity_);
  }

  // First-come claim of up to `want` consecutive rows (at least one) in the
  // batch being filled: one atomic operation per block, and each thread
  // writes its own run of rows.
  Claim ClaimNext(int want = 1) {
    for (;;) {
      const int64_t batch = fill_.load(std::memory_order_acquire);
      BatchBuffer& buffer = *buffers_[batch % buffers_.size()];
      uint64_t claims = buffer.claims.load(std::memory_order_acquire);
      if (!BatchBuffer::For(claims, batch)) return {false, batch, &buffer, 0, 0};
      const int claimed = BatchBuffer::Count(claims);
      if (BatchBuffer::Closed(claims) || claimed >= capacity_) {
        int64_t expected = batch;
        fill_.compare_exchange_strong(expected, batch + 1);
        continue;
      }
      const int rows = std::min(want, capacity_ - claimed);
      if (!buffer.claims.compare_exchange_weak(claims, claims + rows)) continue;
      if (claimed == 0 && times_out()) buffer.first_claim_ns = NowNs();
      if (claimed + rows == capacity_) {
        int64_t expected = batch;
        fill_.compare_exchange_strong(expected, batch + 1);
      }
      return {true, batch, &buffer, claimed, rows};
    }
  }

  // Fixed claim: the channel at `position` among this tag's channels sends
  // its `count`-th message.
  Claim ClaimFixed(int position, int64_t count) {
    const int64_t batch = count * groups_ + position / capacity_;
    BatchBuffer& buffer = *buffers_[batch % buffers_.size()];
    const bool ok = buffer.owner.load(std::memory_order_acquire) == batch;
    return {ok, batch, &buffer, position % capacity_, 1, GroupSize(batch)};
  }

  // Records who wrote row `row` of a claim (before Commit).
  static void Label(const Claim& claim, int row, int game_id, int seat, uint8_t* reply_to = nullptr) {
    claim.buffer->game_ids[row] = game_id;
    claim.buffer->seats[row] = seat;
    claim.buffer->reply_to[row] = reply_to;
  }

  // Publishes `rows` written rows of a claim. Returns true when this commit
  // completes the batch (it is then ready to deliver).
  bool Commit(const Claim& claim, int rows) {
    claim.buffer->committed.fetch_add(rows);  // seq_cst: see MarkReadyIfComplete
    return MarkReadyIfComplete(claim.batch, *claim.buffer, claim.batch_rows);
  }

  // Closes the batch being filled if it has waited `timeout_ms` and holds at
  // least `min_batch` rows. Returns the batch if that made it ready (else a
  // pending commit will). Only for rings with timeouts, claimed by ClaimNext.
  std::optional<int64_t> CloseIfTimedOut(int64_t now_ns) {
    if (!times_out()) return std::nullopt;
    return CloseFilling(config_.min_batch, now_ns - timeout_ns_);
  }

  // Closes the batch being filled with whatever rows it holds (at least
  // one), timeout or not: for a stall, when every game waits on rows already
  // in it, so no more can come (Context::Poll). Only for rings claimed by
  // ClaimNext.
  std::optional<int64_t> CloseStalled() { return CloseFilling(1, BatchBuffer::kNoClaimYet); }

  // Rows claimed in the batch being filled (0 while its buffer still holds
  // an earlier batch).
  int FillingRows() const {
    const int64_t batch = fill_.load(std::memory_order_acquire);
    const uint64_t claims = buffers_[batch % buffers_.size()]->claims.load(std::memory_order_acquire);
    return BatchBuffer::For(claims, batch) ? BatchBuffer::Count(claims) : 0;
  }

  // Whether the batch being filled will be delivered by its timeout with the
  // rows it has.
  bool WillTimeOut() const {
    return times_out() && FillingRows() >= std::max(1, config_.min_batch);
  }

  // When to check the batch being filled for a timeout again (INT64_MAX:
  // never). No event says when a first row or the min_batch-th row arrives,
  // so until the time is known and ahead, poll every quarter timeout (>= 1 ms).
  int64_t TimeoutDeadlineNs(int64_t now_ns) const {
    if (!times_out()) return INT64_MAX;
    const int64_t batch = fill_.load(std::memory_order_acquire);
    const BatchBuffer& buffer = *buffers_[batch % buffers_.size()];
    const int64_t first_claim = buffer.first_claim_ns.load();
    const int64_t poll = now_ns + std::max<int64_t>(1000000, timeout_ns_ / 4);
    if (first_claim == BatchBuffer::kNoClaimYet) return poll;
    const int64_t deadline = first_claim + timeout_ns_;
    return deadline > now_ns ? deadline : poll;
  }

  // Hands a delivered batch's buffer to batch j + num_buffers. Returns the
  // games parked waiting for a buffer of this tag; the caller resumes them.
  std::vector<int> Release(int64_t batch) {
    BatchBuffer& buffer = *buffers_[batch % buffers_.size()];
    const int64_t next = batch + num_buffers();
    buffer.committed.store(0);
    buffer.ready.store(false);
    buffer.size = 0;
    buffer.first_claim_ns.store(BatchBuffer::kNoClaimYet);
    std::lock_guard<std::mutex> lock(park_mutex_);
    buffer.claims.store(BatchBuffer::Fresh(next), std::memory_order_release);
    buffer.owner.store(next, std::memory_order_release);
    std::vector<int> parked;
    parked.swap(parked_);
    return parked;
  }

  // Parks a game that found batch `batch`'s buffer busy. Returns false (and
  // does not park) unless the buffer still serves an older batch: if it was
  // released meanwhile (owner == batch) or `batch` is stale (owner > batch,
  // the release already happened), retry the claim.
  bool Park(int game, int64_t batch) {
    std::lock_guard<std::mutex> lock(park_mutex_);
    if (buffers_[batch % buffers_.size()]->owner.load(std::memory_order_acquire) >= batch) return false;
    parked_.push_back(game);
    return true;
  }

  // The next batch to deliver (batches are delivered in number order), and its advance.
  int64_t next_delivery() const { return next_delivery_; }
  void AdvanceDelivery() { ++next_delivery_; }

  static int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  // Closes the batch being filled if it holds at least `min_rows` rows and
  // its first row was claimed at `first_claim_by_ns` or earlier.
  std::optional<int64_t> CloseFilling(int min_rows, int64_t first_claim_by_ns) {
    const int64_t batch = fill_.load(std::memory_order_acquire);
    BatchBuffer& buffer = *buffers_[batch % buffers_.size()];
    uint64_t claims = buffer.claims.load(std::memory_order_acquire);
    if (!BatchBuffer::For(claims, batch)) return std::nullopt;
    const int rows = BatchBuffer::Count(claims);
    if (BatchBuffer::Closed(claims) || rows < min_rows) return std::nullopt;
    // kNoClaimYet: row 0 is claimed but its time not yet written; wait for it.
    if (buffer.first_claim_ns.load() > first_claim_by_ns) return std::nullopt;
    if (!buffer.claims.compare_exchange_strong(claims, claims | BatchBuffer::kClosed)) return std::nullopt;
    int64_t expected = batch;
    fill_.compare_exchange_strong(expected, batch + 1);
    if (!MarkReadyIfComplete(batch, buffer, 0)) return std::nullopt;
    return batch;
  }

  static std::size_t Words(std::size_t bytes) { return (bytes + 7) / 8; }

  // Called after a commit and after a timeout close. Both sides use seq_cst
  // (the commit's add, the close's CAS, and the loads here), so at least one
  // of two racing callers sees the other's write: a closed batch whose last
  // row is committed at that moment is always marked ready by someone.
  // `fixed_rows`: the batch's size for a fixed claim, else 0.
  bool MarkReadyIfComplete(int64_t batch, BatchBuffer& buffer, int fixed_rows) {
    const uint64_t claims = buffer.claims.load();
    int rows = fixed_rows;
    if (rows == 0) {
      rows = BatchBuffer::Count(claims);
      const bool closed = BatchBuffer::Closed(claims) || rows == capacity_;
      if (!closed) return false;
    }
    if (buffer.committed.load() != rows) return false;
    int64_t previous = batch - num_buffers();
    if (!buffer.completed.compare_exchange_strong(previous, batch)) return false;  // someone completed it
    buffer.size = rows;
    buffer.ready.store(true, std::memory_order_release);  // after size: readers of ready see it
    return true;
  }

  TagConfig config_;
  int index_;
  int64_t timeout_ns_ = -1;  // < 0: partial batches never time out
  int capacity_ = 0;
  int groups_ = 1;
  std::vector<int> input_keys_;
  std::vector<int> reply_keys_;
  std::vector<int> channels_;
  std::vector<std::unique_ptr<BatchBuffer>> buffers_;
  std::atomic<int64_t> fill_{0};
  int64_t next_delivery_ = 0;
  std::mutex park_mutex_;
  std::vector<int> parked_;
};

}  // namespace elf
