// Reply desk: the checks of action replies per space, the runs a replied
// batch is copied out in, and the scatter back into the records, on a real
// tag's buffer without a context.
#include "elf/reply.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "check.h"

using elf::BatchRef;
using elf::DType;
using elf::KeyRole;
using elf::ReplyRun;
using elf::Tag;

namespace {

// Keys: s (obs), a Discrete [0, 2], m MultiDiscrete {2, 3}, u Box [-1, 1]^2, V extra.
std::vector<elf::KeySpec> Keys() {
  std::vector<elf::KeySpec> keys = {
      {"s", DType::kFloat32, {}, "", KeyRole::kObservation, std::nullopt},
      {"a", DType::kInt64, {}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)},
      {"m", DType::kInt32, {2}, "", KeyRole::kAction, std::make_pair(0.0, 2.0)},
      {"u", DType::kFloat32, {2}, "", KeyRole::kAction, std::make_pair(-1.0, 1.0)},
      {"V", DType::kFloat32, {}, "", KeyRole::kExtra, std::nullopt},
  };
  keys[2].space = {elf::ActionSpace::Kind::kMultiDiscrete, {2, 3}, {}, {}};
  for (auto& key : keys) elf::CompleteSpace(key);
  return keys;
}

struct Fixture {
  std::vector<elf::KeySpec> keys = Keys();
  std::unique_ptr<Tag> tag;
  BatchRef ref;

  explicit Fixture(int rows = 3) : ref{0, 0, 0, rows} {
    elf::TagConfig config;
    config.name = "actor";
    config.batch_size = rows;
    config.inputs = {"s"};
    tag = std::make_unique<Tag>(config, 0);
    tag->SetKeys({0}, {1, 2, 3, 4});
    for (int c = 0; c < rows; ++c) tag->AddChannel(c);
    tag->Allocate(keys, {rows, 1, false});
    for (int row = 0; row < rows; ++row) tag->buffer(0).game_ids[row] = 10 + row;  // game 10 + row
  }
  template <typename V>
  V* Reply(int reply) {
    return static_cast<V*>(tag->buffer(0).Reply(reply, 0, sizeof(V)));
  }
};

}  // namespace

TEST(valid_replies_pass_and_box_values_out_of_bounds_are_the_games_to_clip) {
  Fixture f;
  for (int row = 0; row < 3; ++row) {
    f.Reply<int64_t>(0)[row] = row;
    f.Reply<int32_t>(1)[2 * row] = 1;
    f.Reply<int32_t>(1)[2 * row + 1] = 2;
    f.Reply<float>(2)[2 * row] = 5.0f;  // outside [-1, 1]: passes
    f.Reply<float>(2)[2 * row + 1] = -0.5f;
    f.Reply<float>(3)[row] = std::numeric_limits<float>::quiet_NaN();  // not an action: not checked
  }
  elf::CheckReplies(*f.tag, f.keys, f.ref);
  f.Reply<int64_t>(0)[2] = 3;
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument,
               "tag 'actor', key 'a': row 2 (game 12) replied 3, valid range [0, 2]");
  f.Reply<int64_t>(0)[2] = -1;
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument, "replied -1, valid range [0, 2]");
  f.ref.size = 2;  // only the rows of the batch count
  elf::CheckReplies(*f.tag, f.keys, f.ref);
}

TEST(multi_discrete_is_checked_per_component_and_box_must_be_finite) {
  Fixture f;
  f.Reply<int32_t>(1)[3] = 2;  // row 1, component 1: nvec 3, valid
  f.Reply<int32_t>(1)[2] = 2;  // row 1, component 0: nvec 2
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument,
               "key 'm': row 1 (game 11) replied component 0 = 2, valid range [0, 1]");
  f.Reply<int32_t>(1)[2] = 1;
  f.Reply<float>(2)[5] = std::numeric_limits<float>::infinity();
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument,
               "key 'u': row 2 (game 12) replied inf at element 1; a Box action must be finite");
}

// Long batches are checked in blocks, each first by a test without a branch
// per value; a block that fails it (here, 1 | 2 = 3 exceeds the width 2
// though both are valid) is searched value by value.
TEST(long_batches_find_the_first_bad_row_in_any_block) {
  Fixture f(200);
  for (int row = 0; row < 200; ++row) f.Reply<int64_t>(0)[row] = row % 3;
  elf::CheckReplies(*f.tag, f.keys, f.ref);
  f.Reply<int64_t>(0)[150] = 3;
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument,
               "key 'a': row 150 (game 160) replied 3, valid range [0, 2]");
  f.Reply<int64_t>(0)[70] = -1;
  CHECK_THROWS(elf::CheckReplies(*f.tag, f.keys, f.ref), std::invalid_argument,
               "key 'a': row 70 (game 80) replied -1, valid range [0, 2]");
  f.ref.size = 70;  // the bad rows are past the batch
  elf::CheckReplies(*f.tag, f.keys, f.ref);
}

TEST(split_cuts_runs_at_home_boundaries_past_the_minimum_job) {
  // 128 games on 2 workers: games 0..63 live on worker 0. Rows: games 0..39, then 64..127.
  std::vector<int32_t> ids;
  for (int g = 0; g < 40; ++g) ids.push_back(g);
  for (int g = 64; g < 128; ++g) ids.push_back(g);
  const auto runs = elf::SplitReplies(ids.data(), static_cast<int>(ids.size()), {128, 2});
  // Chunks of ceil(104 / 4) = 26 rows; the run from row 26 takes 16 rows
  // (the minimum, whatever their homes) and stops at the first game of worker 1.
  const std::vector<std::vector<int>> expected = {{0, 26, 0}, {26, 42, 0}, {42, 68, 1}, {68, 94, 1}, {94, 104, 1}};
  REQUIRE(runs.size() == expected.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK_EQ(runs[i].begin, expected[i][0]);
    CHECK_EQ(runs[i].end, expected[i][1]);
    CHECK_EQ(runs[i].home, expected[i][2]);
  }
  // One worker: runs of at least 16 rows covering everything.
  const auto one = elf::SplitReplies(ids.data(), 20, {128, 1});
  CHECK_EQ(one.size(), std::size_t{2});
  CHECK_EQ(one[0].end, 16);
  CHECK_EQ(one[1].end, 20);
  CHECK(elf::SplitReplies(ids.data(), 0, {128, 2}).empty());
}

TEST(split_finds_home_boundaries_when_a_home_is_not_a_power_of_two_games) {
  // 3000 games on 2 workers: games 0..1499 live on worker 0. Rows: games 200..2999.
  std::vector<int32_t> ids;
  for (int g = 200; g < 3000; ++g) ids.push_back(g);
  const auto runs = elf::SplitReplies(ids.data(), static_cast<int>(ids.size()), {3000, 2});
  // Chunks of ceil(2800 / 4) = 700 rows; the second run stops at game 1500 (row 1300).
  const std::vector<std::vector<int>> expected = {
      {0, 700, 0}, {700, 1300, 0}, {1300, 2000, 1}, {2000, 2700, 1}, {2700, 2800, 1}};
  REQUIRE(runs.size() == expected.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK_EQ(runs[i].begin, expected[i][0]);
    CHECK_EQ(runs[i].end, expected[i][1]);
    CHECK_EQ(runs[i].home, expected[i][2]);
  }
}

TEST(scatter_copies_each_reply_column_into_the_record_its_row_came_from) {
  Fixture f;
  // Three records of 32 bytes; a at offset 0 (8 bytes), m at 8 (8), u at 16 (8), V at 24 (4).
  std::vector<std::vector<uint8_t>> records(3, std::vector<uint8_t>(32, 0xAB));
  for (int row = 0; row < 3; ++row) {
    f.tag->buffer(0).reply_to[row] = records[2 - row].data();  // rows came from records in reverse
    f.Reply<int64_t>(0)[row] = 100 + row;
    f.Reply<float>(3)[row] = 0.5f * row;
  }
  const std::vector<elf::Plan::KeyCopy> copies = {{0, 8}, {8, 8}, {16, 8}, {24, 4}};
  elf::ScatterReplies(f.tag->buffer(0), copies, 1, 3);  // rows 1 and 2
  int64_t a = 0;
  float v = 0;
  std::memcpy(&a, records[1].data(), 8);
  std::memcpy(&v, records[1].data() + 24, 4);
  CHECK_EQ(a, int64_t{101});
  CHECK_EQ(v, 0.5f);
  std::memcpy(&a, records[0].data(), 8);
  CHECK_EQ(a, int64_t{102});
  CHECK_EQ(records[2][0], uint8_t{0xAB});  // row 0 was not in the run
  CHECK_EQ(records[2][28], uint8_t{0xAB});  // past V: untouched
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
