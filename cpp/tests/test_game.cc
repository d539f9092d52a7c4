// Row (game.h): a game's typed view of the storage the engine hands it.
#include "elf/game.h"

#include <cstdint>
#include <stdexcept>

#include "check.h"

using elf::DType;
using elf::KeyRole;

TEST(row_gives_each_key_its_place_in_the_record_with_its_type) {
  const std::vector<elf::KeySpec> keys = {
      {"s", DType::kFloat32, {3}, "", KeyRole::kObservation, std::nullopt},
      {"a", DType::kInt64, {}, "", KeyRole::kAction, std::nullopt},
  };
  const elf::RecordLayout layout(keys, std::vector<bool>(keys.size(), true));
  uint64_t records[2][3] = {};  // two records of 16 + 8 bytes
  auto* first = reinterpret_cast<uint8_t*>(records[0]);
  auto* second = reinterpret_cast<uint8_t*>(records[1]);
  elf::Row row(&keys, &layout);
  row.Point(first);
  row.Get<float>("s")[1] = 3.5f;
  *row.Get<int64_t>("a") = 4;
  CHECK_EQ(reinterpret_cast<float*>(first)[1], 3.5f);
  CHECK_EQ(*reinterpret_cast<int64_t*>(first + 16), int64_t{4});
  CHECK_EQ(row.Scalar<int64_t>("a"), int64_t{4});
  row.Point(second);
  CHECK_EQ(row.Scalar<int64_t>("a"), int64_t{0});
  *row.Get<int64_t>("a") = 9;
  CHECK_EQ(*reinterpret_cast<int64_t*>(second + 16), int64_t{9});
  CHECK_EQ(*reinterpret_cast<int64_t*>(first + 16), int64_t{4});
}

// The handles a spec returns address the same storage as the names.
TEST(key_handles_from_the_spec_read_and_write_what_names_do) {
  const elf::Options options;
  elf::SpecBuilder spec(options);
  const elf::Key<float> s = spec.Observation<float>("s", {3}, "state");
  const elf::Key<int32_t> count = spec.Observation<int32_t>("count", {}, "a counter");
  const elf::Key<int64_t> a = spec.DiscreteAction("a", 2, "action");
  const elf::GameSpec game = spec.Finish();
  CHECK_EQ(s.index(), 0);
  CHECK_EQ(count.index(), 1);
  CHECK_EQ(a.index(), 2);
  CHECK(game.keys[1].dtype == DType::kInt32);
  const elf::RecordLayout layout(game.keys, std::vector<bool>(game.keys.size(), true));
  uint64_t record[4] = {};  // 16 + 8 + 8 bytes
  elf::Row row(&game.keys, &layout);
  row.Point(reinterpret_cast<uint8_t*>(record));
  row.Get(s)[2] = 1.5f;
  *row.Get(count) = 7;
  *row.Get<int64_t>("a") = 1;
  CHECK(row.Get(s) == row.Get<float>("s"));
  CHECK_EQ(row.Get<float>("s")[2], 1.5f);
  CHECK_EQ(row.Scalar<int32_t>("count"), 7);
  CHECK_EQ(row.Scalar(a), int64_t{1});
}

TEST(row_rejects_wrong_type_and_unknown_key_by_name) {
  const std::vector<elf::KeySpec> keys = {{"s", DType::kFloat32, {2}, "", KeyRole::kObservation, std::nullopt}};
  const elf::RecordLayout layout(keys, std::vector<bool>(keys.size(), true));
  uint64_t record[1] = {};
  elf::Row row(&keys, &layout);
  row.Point(reinterpret_cast<uint8_t*>(record));
  CHECK_THROWS(row.Get<double>("s"), std::logic_error, "key 's' is float32, read as float64");
  CHECK_THROWS(row.Get<float>("x"), std::out_of_range, "no key 'x'");
}

TEST(outcome_is_over_when_terminated_or_truncated) {
  CHECK(!elf::Outcome{}.Over());
  CHECK((elf::Outcome{true, false}.Over()));
  CHECK((elf::Outcome{false, true}.Over()));
}

TEST(dtype_sizes_and_numpy_names) {
  CHECK_EQ(elf::SizeOf(DType::kFloat32), std::size_t{4});
  CHECK_EQ(elf::SizeOf(DType::kFloat64), std::size_t{8});
  CHECK_EQ(elf::SizeOf(DType::kInt32), std::size_t{4});
  CHECK_EQ(elf::SizeOf(DType::kInt64), std::size_t{8});
  CHECK_EQ(elf::SizeOf(DType::kUint8), std::size_t{1});
  CHECK_EQ(elf::SizeOf(DType::kBool), std::size_t{1});
  CHECK_EQ(elf::Name(DType::kBool), "bool");
  CHECK_EQ(elf::Name(DType::kInt64), "int64");
  CHECK(elf::IsInteger(DType::kUint8));
  CHECK(!elf::IsInteger(DType::kBool));
  CHECK(elf::DTypeOf<double>::value == DType::kFloat64);
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
