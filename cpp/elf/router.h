// The router: how rows of the games' sends are assigned to the batches of a
// tag, and in which order the caller gets the ready batches. The one place
// where first-come and deterministic mode differ; the context picks one at
// construction (Router::Make) and asks it, never the mode.
//
//   FirstComeRouter: a block of sends takes the next free rows of the batch
//     being filled, in arrival order; partial batches may close by timeout;
//     each tag's batches are delivered in number order, the tags interleaved
//     in completion order.
//   DeterministicRouter: a channel's k-th send to a tag goes to batch
//     k * groups + g at row p, (g, p) fixed by its position among the tag's
//     channels; no timeouts; batches are delivered in one fixed order (by
//     game step, tags with replies first, then tag, then group), so batch
//     contents and order do not depend on thread timing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "elf/mailbox.h"
#include "elf/tag.h"

namespace elf {

using Tags = std::vector<std::unique_ptr<Tag>>;

class Router {
 public:
  static std::unique_ptr<Router> Make(bool deterministic);
  virtual ~Router() = default;

  // Before wiring: rejects a tag (routed to `routed` game seats) whose
  // batches this policy could never deliver (std::invalid_argument).
  virtual void CheckDeliverable(const Tag& tag, int routed) const = 0;
  // The ring of a tag routed to `routed` channels.
  virtual RingShape Shape(const Tag& tag, int routed) const = 0;
  // After every tag has its channels (num_channels in all).
  virtual void Wire(const Tags& tags, int num_channels) = 0;
  // Rows for the sends of up to `want` consecutive channels to `tag`, the
  // first from `channel` (at least one row if ok). Called by the thread that
  // owns the channels' games.
  virtual Claim ClaimRows(Tag& tag, int channel, int want) = 0;
  // Whether a send's row depends on its channel: then only the sends of
  // consecutive channels (channel, channel + 1, ...) may share a claim.
  virtual bool FixedPlaces() const = 0;
  // Batch `batch` of `tag` became ready: hands it to the mailbox.
  virtual void Ready(Mailbox& mailbox, Tag& tag, int64_t batch) = 0;
  // Under the mailbox's lock: the next batch to deliver, if it is ready.
  virtual std::optional<BatchRef> TakeReady(const Tags& tags, std::deque<BatchRef>& ready) = 0;
  // Under the mailbox's lock, at a stall (every game waits for replies to
  // rows not yet in a delivered batch, and nothing else runs): makes a batch
  // ready as it is, adding it to `ready`; false if this policy has none.
  virtual bool CloseStalled(const Tags& tags, std::deque<BatchRef>& ready) = 0;

 protected:
  static int Groups(int routed, int capacity) { return std::max(1, (routed + capacity - 1) / capacity); }
};

class FirstComeRouter final : public Router {
 public:
  // A game seat holds at most one row of a tag with replies (it waits for
  // the reply), so a batch of such a tag never has more rows than seats.
  void CheckDeliverable(const Tag& tag, int routed) const override {
    const TagConfig& config = tag.config();
    if (!tag.has_replies()) return;
    if (config.batch_size > routed && config.timeout_ms < 0) {
      throw std::invalid_argument("tag '" + tag.name() + "': batch_size " + std::to_string(config.batch_size) +
                                  " exceeds the " + std::to_string(routed) +
                                  " game seats routed to it, so a batch could never fill; lower it or set timeout_ms");
    }
    if (config.timeout_ms >= 0 && config.min_batch > routed) {
      throw std::invalid_argument("tag '" + tag.name() + "': min_batch " + std::to_string(config.min_batch) +
                                  " exceeds the " + std::to_string(routed) +
                                  " game seats routed to it, so its timeout could never deliver a batch");
    }
  }

  // Enough buffers that a tag whose games wait for replies rarely makes a
  // game park: each channel holds at most one row, so one buffer per group
  // of channels plus the one being filled, and with several groups one
  // more: a replied batch's rows are copied out by several jobs, and the
  // games of the first jobs already send again, past the batch being
  // filled, before the last job frees the buffer (with 4096 games in
  // batches of 2048, about 10% of the sends parked without it). A tag
  // without replies frees a buffer as soon as the caller releases it.
  RingShape Shape(const Tag& tag, int routed) const override {
    const int batch_size = tag.config().batch_size;
    const int capacity = tag.has_replies() ? std::min(batch_size, routed) : batch_size;
    const int spare = tag.has_replies() && Groups(routed, capacity) > 1 ? 2 : 1;
    return {capacity, spare, true};
  }

  void Wire(const Tags&, int) override {}

  Claim ClaimRows(Tag& tag, int, int want) override { return tag.ClaimNext(want); }
  bool FixedPlaces() const override { return false; }

  void Ready(Mailbox& mailbox, Tag& tag, int64_t batch) override {
    const int index = static_cast<int>(batch % tag.num_buffers());
    mailbox.Post({tag.index(), batch, index, tag.buffer(index).size});
  }

  // The first ready batch, in completion order, that is its tag's next; a
  // batch completed before an earlier one of its tag (whose last rows are
  // still being written: every row of a batch is claimed before a later
  // batch takes any) waits for it, so the rows a game sends a tag arrive in
  // the order it sent them.
  std::optional<BatchRef> TakeReady(const Tags& tags, std::deque<BatchRef>& ready) override {
    for (auto it = ready.begin(); it != ready.end(); ++it) {
      Tag& tag = *tags[it->tag];
      if (it->batch != tag.next_delivery()) continue;
      const BatchRef ref = *it;
      ready.erase(it);
      tag.AdvanceDelivery();
      return ref;
    }
    return std::nullopt;
  }

  // A game's rows can be split between two batches of a tag (a game of
  // several seats, or of several tags with replies): then every game can end
  // up waiting for its rows in batches that are filling, with no more to
  // come (3 games of 3 seats in batches of 4 can end with 3 rows there). The
  // first such batch, in the order the tags were added, goes as it is.
  bool CloseStalled(const Tags& tags, std::deque<BatchRef>& ready) override {
    for (const auto& tag : tags) {
      if (!tag->has_replies()) continue;
      if (const auto batch = tag->CloseStalled()) {
        const int index = static_cast<int>(*batch % tag->num_buffers());
        ready.push_back({tag->index(), *batch, index, tag->buffer(index).size});
        return true;
      }
    }
    return false;
  }
};

class DeterministicRouter final : public Router {
 public:
  void CheckDeliverable(const Tag&, int) const override {}  // fixed groups always fill

  // Fixed groups of channels, one buffer per group plus the one being filled.
  RingShape Shape(const Tag& tag, int routed) const override {
    return {std::min(tag.config().batch_size, routed), 1, false};
  }

  // Per (channel, tag), at channel * num_tags + tag: the channel's position
  // among the tag's channels (-1: not routed) and its sends so far.
  void Wire(const Tags& tags, int num_channels) override {
    num_tags_ = static_cast<int>(tags.size());
    num_channels_ = num_channels;
    positions_.assign(static_cast<std::size_t>(num_channels) * num_tags_, -1);
    sent_.assign(positions_.size(), 0);
    for (const auto& tag : tags) {
      const auto& channels = tag->channels();
      for (std::size_t p = 0; p < channels.size(); ++p) positions_[At(channels[p], tag->index())] = static_cast<int>(p);
    }
  }

  // Each channel has its own place: the claim takes the next channels too
  // while their places are the next rows of the same batch (consecutive
  // games of a tag routed every game are), so a block of them is written
  // and committed at once.
  Claim ClaimRows(Tag& tag, int channel, int want) override {
    const std::size_t at = At(channel, tag.index());
    Claim claim = tag.ClaimFixed(positions_[at], sent_[at]);
    if (!claim.ok) return claim;
    const int64_t count = sent_[at]++;
    const int position = positions_[at];
    while (claim.rows < want && claim.row + claim.rows < claim.batch_rows && channel + claim.rows < num_channels_) {
      const std::size_t next = At(channel + claim.rows, tag.index());
      if (positions_[next] != position + claim.rows || sent_[next] != count) break;
      ++sent_[next];
      ++claim.rows;
    }
    return claim;
  }
  bool FixedPlaces() const override { return true; }

  void Ready(Mailbox& mailbox, Tag&, int64_t) override { mailbox.Notify(); }  // TakeReady finds it in its buffer

  // A fixed order: by the game step the batches were sent at, tags with
  // replies before tags without (those are sent after the replies), then
  // tag, then group.
  std::optional<BatchRef> TakeReady(const Tags& tags, std::deque<BatchRef>&) override {
    Tag* next = nullptr;
    std::tuple<int64_t, int, int, int> best{};
    for (auto& tag : tags) {
      const int64_t batch = tag->next_delivery();
      const int64_t round = batch / tag->groups();
      const int64_t step = tag->T() == 1 ? round : (round + 1) * (tag->T() - 1);
      const std::tuple<int64_t, int, int, int> order{step, tag->has_replies() ? 0 : 1, tag->index(),
                                                      static_cast<int>(batch % tag->groups())};
      if (next == nullptr || order < best) {
        next = tag.get();
        best = order;
      }
    }
    const int64_t batch = next->next_delivery();
    const int index = static_cast<int>(batch % next->num_buffers());
    BatchBuffer& buffer = next->buffer(index);
    if (buffer.owner.load(std::memory_order_acquire) != batch || !buffer.ready.load(std::memory_order_acquire)) {
      return std::nullopt;
    }
    next->AdvanceDelivery();
    return BatchRef{next->index(), batch, index, buffer.size};
  }

  bool CloseStalled(const Tags&, std::deque<BatchRef>&) override { return false; }  // fixed groups always fill

 private:
  std::size_t At(int channel, int tag) const { return static_cast<std::size_t>(channel) * num_tags_ + tag; }

  int num_tags_ = 0;
  int num_channels_ = 0;
  std::vector<int> positions_;
  std::vector<int64_t> sent_;
};

inline std::unique_ptr<Router> Router::Make(bool deterministic) {
  if (deterministic) return std::make_unique<DeterministicRouter>();
  return std::make_unique<FirstComeRouter>();
}

}  // namespace elf
