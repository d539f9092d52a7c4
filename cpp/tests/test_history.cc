// History and RecordLayout: the ring of a seat's last H steps (H rounded up
// to a power of two), in storage the caller lends.
#include "elf/history.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "check.h"

using elf::DType;
using elf::KeyRole;
using elf::KeySpec;

namespace {

std::vector<KeySpec> Keys() {
  return {
      {"s", DType::kFloat32, {3}, "12 bytes", KeyRole::kObservation, std::nullopt},
      {"terminal", DType::kBool, {}, "1 byte", KeyRole::kEngine, std::nullopt},
      {"a", DType::kInt64, {}, "8 bytes", KeyRole::kAction, std::nullopt},
      {"pi", DType::kFloat32, {5}, "20 bytes", KeyRole::kExtra, std::nullopt},
  };
}

std::vector<bool> AllStored() { return std::vector<bool>(Keys().size(), true); }

// A history of at least `min_length` steps with its own storage.
struct OwnedHistory {
  OwnedHistory(const elf::RecordLayout& layout, int min_length)
      : storage(elf::History::Words(layout, min_length) + 1, 0),
        history(&layout, min_length, storage.data()) {}
  std::vector<uint64_t> storage;  // one word more, to catch overruns below
  elf::History history;
};

}  // namespace

TEST(layout_keeps_every_key_8_byte_aligned_and_disjoint) {
  const elf::RecordLayout layout(Keys(), AllStored());
  CHECK_EQ(layout.offset(0), std::size_t{0});
  CHECK_EQ(layout.offset(1), std::size_t{16});
  CHECK_EQ(layout.offset(2), std::size_t{24});
  CHECK_EQ(layout.offset(3), std::size_t{32});
  CHECK_EQ(layout.bytes(), std::size_t{56});
  for (int key = 0; key < 4; ++key) CHECK_EQ(layout.offset(key) % 8, std::size_t{0});
  CHECK_EQ(layout.size(3), std::size_t{20});
}

TEST(keys_nobody_reads_take_no_space) {
  const elf::RecordLayout layout(Keys(), {true, false, true, false});
  CHECK_EQ(layout.offset(0), std::size_t{0});
  CHECK_EQ(layout.offset(2), std::size_t{16});
  CHECK_EQ(layout.bytes(), std::size_t{24});
}

TEST(length_is_rounded_up_to_a_power_of_two) {
  const elf::RecordLayout layout(Keys(), AllStored());
  for (auto [asked, length] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {20, 32}}) {
    OwnedHistory owned(layout, asked);
    CHECK_EQ(owned.history.length(), length);
    CHECK_EQ(elf::History::Words(layout, asked) * 8, layout.bytes() * length);
  }
}

TEST(step_s_and_step_s_plus_h_share_a_slot) {
  const elf::RecordLayout layout(Keys(), AllStored());
  OwnedHistory owned(layout, 4);
  elf::History& history = owned.history;
  CHECK_EQ(history.length(), 4);
  for (int64_t step = 0; step < 12; ++step) {
    CHECK(history.Key(step, 2) == history.Key(step + 4, 2));
    CHECK(history.Key(step, 2) != history.Key(step + 1, 2));
    CHECK_EQ(reinterpret_cast<uintptr_t>(history.Record(step)) % 8, uintptr_t{0});
  }
}

TEST(last_h_steps_are_kept_and_older_ones_overwritten) {
  const elf::RecordLayout layout(Keys(), AllStored());
  OwnedHistory owned(layout, 3);  // 4 slots
  elf::History& history = owned.history;
  for (int64_t step = 0; step < 10; ++step) {
    *static_cast<int64_t*>(history.Key(step, 2)) = step * 10;
    float* s = static_cast<float*>(history.Key(step, 0));
    for (int i = 0; i < 3; ++i) s[i] = static_cast<float>(step + i);
    *static_cast<bool*>(history.Key(step, 1)) = step % 2 == 0;
  }
  for (int64_t step = 6; step < 10; ++step) {
    CHECK_EQ(*static_cast<int64_t*>(history.Key(step, 2)), step * 10);
    CHECK_EQ(static_cast<float*>(history.Key(step, 0))[2], static_cast<float>(step + 2));
    CHECK_EQ(*static_cast<bool*>(history.Key(step, 1)), step % 2 == 0);
  }
  CHECK_EQ(*static_cast<int64_t*>(history.Key(5, 2)), int64_t{90});  // slot of step 9
  CHECK_EQ(owned.storage.back(), uint64_t{0});                       // nothing written past the end
}

TEST(writing_a_key_leaves_its_neighbours_alone) {
  const elf::RecordLayout layout(Keys(), AllStored());
  OwnedHistory owned(layout, 2);
  elf::History& history = owned.history;
  std::memset(history.Record(0), 0, layout.bytes());
  std::memset(history.Record(1), 0, layout.bytes());
  float pi[5] = {1, 2, 3, 4, 5};
  std::memcpy(history.Key(0, 3), pi, sizeof(pi));
  CHECK_EQ(*static_cast<int64_t*>(history.Key(0, 2)), int64_t{0});
  CHECK_EQ(*static_cast<float*>(history.Key(1, 0)), 0.0f);
  CHECK_EQ(static_cast<float*>(history.Key(0, 3))[4], 5.0f);
}

TEST(length_one_history_is_one_record) {
  const elf::RecordLayout layout(Keys(), AllStored());
  OwnedHistory owned(layout, 1);
  elf::History& history = owned.history;
  CHECK(history.Record(0) == history.Record(123));
  *static_cast<int64_t*>(history.Key(5, 2)) = 9;
  CHECK_EQ(*static_cast<int64_t*>(history.Key(6, 2)), int64_t{9});
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
