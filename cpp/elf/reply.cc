#include "elf/reply.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace elf {

namespace {

// Values are checked in blocks of this many, each block first with a test
// the compiler vectorizes (no branch per value).
constexpr int64_t kCheckBlock = 64;

// Index of the first of `count` values of type V outside [low, high], or -1.
// One unsigned comparison per value: v - low, modulo 2^64, exceeds
// high - low exactly when v is outside (it wraps around when v < low). A
// block whose offsets v - low, ORed together, do not exceed high - low is
// all inside (each offset is at most their OR); only a block that fails
// this test (always, if one value is outside) is searched value by value.
template <typename V>
int64_t FirstOutOfRange(const void* data, int64_t count, int64_t low, int64_t high) {
  const V* values = static_cast<const V*>(data);
  const auto base = static_cast<uint64_t>(low);
  const uint64_t width = static_cast<uint64_t>(high) - base;
  for (int64_t begin = 0; begin < count; begin += kCheckBlock) {
    const int64_t end = std::min(count, begin + kCheckBlock);
    uint64_t any = 0;
    for (int64_t i = begin; i < end; ++i) any |= static_cast<uint64_t>(static_cast<int64_t>(values[i])) - base;
    if (any <= width) continue;
    for (int64_t i = begin; i < end; ++i) {
      if (static_cast<uint64_t>(static_cast<int64_t>(values[i])) - base > width) return i;
    }
  }
  return -1;
}

// Index of the first of `count` values of type V, components of rows of
// nvec.size() values, where component c lies outside [0, nvec[c]), or -1.
template <typename V>
int64_t FirstOutOfComponent(const void* data, int64_t count, const std::vector<int64_t>& nvec) {
  const V* values = static_cast<const V*>(data);
  const auto k = static_cast<int64_t>(nvec.size());
  for (int64_t i = 0; i < count; ++i) {
    if (static_cast<uint64_t>(static_cast<int64_t>(values[i])) >= static_cast<uint64_t>(nvec[i % k])) return i;
  }
  return -1;
}

// Index of the first of `count` values of type V that is NaN or infinite, or -1.
template <typename V>
int64_t FirstNonFinite(const void* data, int64_t count) {
  const V* values = static_cast<const V*>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return -1;
}

// The first value of an action reply outside the key's space, or -1.
int64_t FirstInvalid(const KeySpec& key, const void* data, int64_t count) {
  switch (key.space.kind) {
    case ActionSpace::Kind::kDiscrete: {
      const auto low = static_cast<int64_t>(key.bounds->first);
      const auto high = static_cast<int64_t>(key.bounds->second);
      if (key.dtype == DType::kInt64) return FirstOutOfRange<int64_t>(data, count, low, high);
      if (key.dtype == DType::kInt32) return FirstOutOfRange<int32_t>(data, count, low, high);
      if (key.dtype == DType::kUint8) return FirstOutOfRange<uint8_t>(data, count, low, high);
      return -1;
    }
    case ActionSpace::Kind::kMultiDiscrete:
      if (key.dtype == DType::kInt64) return FirstOutOfComponent<int64_t>(data, count, key.space.nvec);
      if (key.dtype == DType::kInt32) return FirstOutOfComponent<int32_t>(data, count, key.space.nvec);
      if (key.dtype == DType::kUint8) return FirstOutOfComponent<uint8_t>(data, count, key.space.nvec);
      return -1;
    case ActionSpace::Kind::kBox:
      if (key.dtype == DType::kFloat32) return FirstNonFinite<float>(data, count);
      if (key.dtype == DType::kFloat64) return FirstNonFinite<double>(data, count);
      return -1;
    case ActionSpace::Kind::kNone:
      return -1;
  }
  return -1;
}

// The end of the run of rows from `begin` whose games lie in [first_game,
// end_game), at most `limit`. Looks at blocks of rows without branching: a
// block is inside if the games' offsets from first_game, ORed together, are
// below end_game - first_game (as in FirstOutOfRange; the range is a game's
// home, never empty).
int RunEnd(const int32_t* game_ids, int begin, int limit, int first_game, int end_game) {
  constexpr int kBlock = 64;
  const auto last = static_cast<uint32_t>(end_game - first_game - 1);
  int row = begin;
  for (; row + kBlock <= limit; row += kBlock) {
    uint32_t any = 0;
    for (int i = row; i < row + kBlock; ++i) any |= static_cast<uint32_t>(game_ids[i] - first_game);
    if (any > last) break;
  }
  while (row < limit && game_ids[row] >= first_game && game_ids[row] < end_game) ++row;
  return row;
}

int64_t IntegerAt(const void* data, DType dtype, int64_t index) {
  if (dtype == DType::kInt64) return static_cast<const int64_t*>(data)[index];
  if (dtype == DType::kInt32) return static_cast<const int32_t*>(data)[index];
  return static_cast<const uint8_t*>(data)[index];
}

}  // namespace

// Rejects action replies outside their space before any game sees them:
// integers outside their range, Box values that are NaN or infinite.
void CheckReplies(Tag& tag, const std::vector<KeySpec>& keys, const BatchRef& ref) {
  BatchBuffer& buffer = tag.buffer(ref.buffer);
  const auto& replies = tag.reply_keys();
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const KeySpec& key = keys[replies[i]];
    if (key.role != KeyRole::kAction) continue;
    const void* data = buffer.Reply(static_cast<int>(i), 0, key.Bytes());
    const int64_t count = ref.size * key.NumElements();
    const int64_t bad = FirstInvalid(key, data, count);
    if (bad < 0) continue;
    const int64_t row = bad / key.NumElements();
    std::string what = "tag '" + tag.name() + "', key '" + key.name + "': row " + std::to_string(row) + " (game " +
                       std::to_string(buffer.game_ids[row]) + ") replied ";
    if (key.space.kind == ActionSpace::Kind::kBox) {
      const double value = key.dtype == DType::kFloat64 ? static_cast<const double*>(data)[bad]
                                                        : static_cast<const float*>(data)[bad];
      throw std::invalid_argument(what + std::to_string(value) + " at element " +
                                  std::to_string(bad % key.NumElements()) + "; a Box action must be finite");
    }
    int64_t low = static_cast<int64_t>(key.bounds ? key.bounds->first : 0);
    int64_t high = static_cast<int64_t>(key.bounds ? key.bounds->second : 0);
    if (key.space.kind == ActionSpace::Kind::kMultiDiscrete) {
      const auto component = static_cast<std::size_t>(bad % key.NumElements());
      what += "component " + std::to_string(component) + " = ";
      low = 0;
      high = key.space.nvec[component] - 1;
    }
    throw std::invalid_argument(what + std::to_string(IntegerAt(data, key.dtype, bad)) + ", valid range [" +
                                std::to_string(low) + ", " + std::to_string(high) + "]");
  }
}

std::vector<ReplyRun> SplitReplies(const int32_t* game_ids, int size, const Homes& homes) {
  // A job takes the rows of one run (or a piece of a long one) to their
  // home, so no game's data moves to another core; runs shorter than
  // kMinJob rows join the job before them rather than make a job each.
  constexpr int kMinJob = 16;
  const int chunk = std::max(kMinJob, (size + 2 * homes.num_threads - 1) / (2 * homes.num_threads));
  std::vector<ReplyRun> runs;
  for (int begin = 0; begin < size;) {
    const int home = homes.Of(game_ids[begin]);
    const int end = RunEnd(game_ids, std::min(size, begin + kMinJob), std::min(size, begin + chunk),
                           homes.FirstGame(home), homes.FirstGame(home + 1));
    runs.push_back({begin, end, home});
    begin = end;
  }
  return runs;
}

void ScatterReplies(BatchBuffer& buffer, const std::vector<Plan::KeyCopy>& copies, int begin, int end) {
  for (std::size_t k = 0; k < copies.size(); ++k) {
    MoveKey<false>(static_cast<uint8_t*>(buffer.Reply(static_cast<int>(k), begin, copies[k].bytes)),
                   &buffer.reply_to[begin], end - begin, copies[k].offset, copies[k].bytes);
  }
}

}  // namespace elf
