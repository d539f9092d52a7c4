// Router: the two claim policies on real tags without a context: the ring
// each chooses, which configurations each rejects, where a channel's sends
// land, and the order in which ready batches are taken.
#include "elf/router.h"

#include <deque>
#include <memory>
#include <stdexcept>
#include <vector>

#include "check.h"

using elf::BatchRef;
using elf::Claim;
using elf::DType;
using elf::KeyRole;
using elf::Router;
using elf::Tag;
using elf::Tags;

namespace {

const std::vector<elf::KeySpec>& Keys() {
  static const std::vector<elf::KeySpec> keys = {
      {"s", DType::kFloat32, {}, "", KeyRole::kObservation, std::nullopt},
      {"a", DType::kInt64, {}, "", KeyRole::kAction, std::nullopt},
  };
  return keys;
}

elf::TagConfig Config(const char* name, int batch_size, int timeout_ms = -1, int min_batch = 1, int T = 1) {
  elf::TagConfig config;
  config.name = name;
  config.batch_size = batch_size;
  config.inputs = {"s"};
  config.timeout_ms = timeout_ms;
  config.min_batch = min_batch;
  config.T = T;
  return config;
}

// A tag over `channels` channels (ids 0..channels-1), its ring shaped by `router`.
std::unique_ptr<Tag> Routed(Router& router, elf::TagConfig config, int index, int channels, bool replies) {
  auto tag = std::make_unique<Tag>(std::move(config), index);
  tag->SetKeys({0}, replies ? std::vector<int>{1} : std::vector<int>{});
  for (int c = 0; c < channels; ++c) tag->AddChannel(c);
  tag->Allocate(Keys(), router.Shape(*tag, channels));
  return tag;
}

bool CommitRows(Tag& tag, const Claim& claim) {
  for (int i = 0; i < claim.rows; ++i) Tag::Label(claim, claim.row + i, claim.row + i, 0);
  return tag.Commit(claim, claim.rows);
}

}  // namespace

TEST(first_come_ring_fits_the_replied_batches_and_allows_timeouts) {
  auto router = Router::Make(false);
  auto replied = Routed(*router, Config("actor", 4, 10), 0, 10, true);
  CHECK_EQ(replied->capacity(), 4);
  CHECK_EQ(replied->num_buffers(), 3 + 2);  // 3 groups, the one being filled, one for late copiers
  CHECK(replied->times_out());
  auto small = Routed(*router, Config("actor", 8, 10), 0, 3, true);
  CHECK_EQ(small->capacity(), 3);  // a replied batch never holds more rows than seats
  auto train = Routed(*router, Config("train", 8), 1, 3, false);
  CHECK_EQ(train->capacity(), 8);  // windows of several steps: any batch size
  CHECK_EQ(train->num_buffers(), 2);
  CHECK(!train->times_out());  // no timeout configured
}

TEST(deterministic_ring_is_fixed_groups_and_never_times_out) {
  auto router = Router::Make(true);
  auto tag = Routed(*router, Config("actor", 4, 10), 0, 10, true);
  CHECK_EQ(tag->capacity(), 4);
  CHECK_EQ(tag->num_buffers(), 3 + 1);
  CHECK(!tag->times_out());
  auto train = Routed(*router, Config("train", 8), 1, 3, false);
  CHECK_EQ(train->capacity(), 3);
}

TEST(first_come_rejects_replied_batches_its_games_cannot_fill) {
  auto first_come = Router::Make(false);
  auto deterministic = Router::Make(true);
  Tag big(Config("actor", 8), 0), timed(Config("actor", 8, 5, 4), 0), train(Config("train", 8), 0);
  big.SetKeys({0}, {1});
  timed.SetKeys({0}, {1});
  train.SetKeys({0}, {});
  CHECK_THROWS(first_come->CheckDeliverable(big, 3), std::invalid_argument, "batch_size 8 exceeds the 3");
  CHECK_THROWS(first_come->CheckDeliverable(timed, 3), std::invalid_argument, "min_batch 4 exceeds the 3");
  first_come->CheckDeliverable(timed, 4);
  first_come->CheckDeliverable(train, 3);  // windows are not waited on
  deterministic->CheckDeliverable(big, 3);  // fixed groups of the channels there are
}

TEST(first_come_claims_blocks_in_arrival_order) {
  auto router = Router::Make(false);
  Tags tags;
  tags.push_back(Routed(*router, Config("actor", 4), 0, 8, true));
  router->Wire(tags, 8);
  const Claim a = router->ClaimRows(*tags[0], 5, 3);  // the channel does not choose the row
  const Claim b = router->ClaimRows(*tags[0], 0, 3);
  CHECK(a.ok && b.ok);
  CHECK_EQ(a.row, 0);
  CHECK_EQ(a.rows, 3);
  CHECK_EQ(b.row, 3);
  CHECK_EQ(b.rows, 1);  // the batch had one row left
  CHECK_EQ(router->ClaimRows(*tags[0], 1, 3).batch, int64_t{1});
}

TEST(deterministic_claims_one_row_at_the_channels_place_and_counts_only_granted_sends) {
  auto router = Router::Make(true);
  Tags tags;
  tags.push_back(Routed(*router, Config("actor", 2), 0, 4, true));  // groups {0,1} {2,3}, 3 buffers
  router->Wire(tags, 4);
  const Claim c3 = router->ClaimRows(*tags[0], 3, 4);
  CHECK(c3.ok);
  CHECK_EQ(c3.rows, 1);
  CHECK_EQ(c3.batch, int64_t{1});
  CHECK_EQ(c3.row, 1);
  // Channel 0's sends 0 and 1 (batches 0 and 2); its send 2 is batch 4,
  // whose buffer (4 % 3 = 1) still holds batch 1: refused, not counted.
  CHECK_EQ(router->ClaimRows(*tags[0], 0, 1).batch, int64_t{0});
  CHECK_EQ(router->ClaimRows(*tags[0], 0, 1).batch, int64_t{2});
  const Claim busy = router->ClaimRows(*tags[0], 0, 1);
  CHECK(!busy.ok);
  CHECK_EQ(busy.batch, int64_t{4});
  CHECK_EQ(router->ClaimRows(*tags[0], 0, 1).batch, int64_t{4});  // the same send again
}

TEST(first_come_delivers_each_tags_batches_in_number_order_across_tags_by_completion) {
  auto router = Router::Make(false);
  Tags tags;
  tags.push_back(Routed(*router, Config("actor", 2), 0, 4, true));
  tags.push_back(Routed(*router, Config("train", 2), 1, 4, false));
  router->Wire(tags, 4);
  elf::Mailbox mailbox;
  const Claim first = router->ClaimRows(*tags[0], 0, 2);   // actor batch 0, not yet committed
  const Claim second = router->ClaimRows(*tags[0], 2, 2);  // actor batch 1
  REQUIRE(CommitRows(*tags[0], second));
  router->Ready(mailbox, *tags[0], second.batch);
  const Claim train = router->ClaimRows(*tags[1], 0, 2);
  REQUIRE(CommitRows(*tags[1], train));
  router->Ready(mailbox, *tags[1], train.batch);
  REQUIRE(CommitRows(*tags[0], first));
  router->Ready(mailbox, *tags[0], first.batch);
  std::vector<std::pair<int, int64_t>> taken;
  for (int i = 0; i < 3; ++i) {
    const auto ref = mailbox.Wait(elf::Mailbox::Clock::now(), [&](std::deque<BatchRef>& ready) {
      elf::Mailbox::Poll found;
      found.ref = router->TakeReady(tags, ready);
      return found;
    });
    REQUIRE(ref.has_value());
    taken.emplace_back(ref->tag, ref->batch);
  }
  // Actor batch 1 completed first but waits for batch 0; train goes in between.
  const std::vector<std::pair<int, int64_t>> expected = {{1, 0}, {0, 0}, {0, 1}};
  CHECK(taken == expected);
}

TEST(deterministic_delivers_by_step_then_replied_tags_then_tag_then_group) {
  auto router = Router::Make(true);
  Tags tags;
  tags.push_back(Routed(*router, Config("train", 2, -1, 1, 2), 0, 2, false));  // windows end at steps 1, 2, ...
  tags.push_back(Routed(*router, Config("actor", 1), 1, 2, true));             // two groups of one
  router->Wire(tags, 2);
  auto send = [&](Tag& tag, int channel) {
    const Claim claim = router->ClaimRows(tag, channel, 1);
    REQUIRE(claim.ok);
    Tag::Label(claim, claim.row, channel, 0);
    tag.Commit(claim, 1);
  };
  std::deque<BatchRef> unused;
  auto take = [&] {
    std::vector<std::pair<int, int64_t>> taken;
    while (const auto ref = router->TakeReady(tags, unused)) {
      taken.emplace_back(ref->tag, ref->batch);
      tags[ref->tag]->Release(ref->batch);
    }
    return taken;
  };
  // Step 0, channel 1 first: its batch (group 1) waits for group 0's.
  send(*tags[1], 1);
  CHECK(take().empty());
  send(*tags[1], 0);
  CHECK((take() == std::vector<std::pair<int, int64_t>>{{1, 0}, {1, 1}}));
  // Step 1: the train window is complete before the actor rows, but a tag
  // with replies comes first at the same step.
  send(*tags[0], 0);
  send(*tags[0], 1);
  CHECK(take().empty());
  send(*tags[1], 1);
  send(*tags[1], 0);
  CHECK((take() == std::vector<std::pair<int, int64_t>>{{1, 2}, {1, 3}, {0, 0}}));
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
