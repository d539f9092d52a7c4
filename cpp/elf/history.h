// The last H steps of one seat of one game: a ring of records, each record
// holding every key of the context (observations, actions, engine keys and
// extra reply keys) at a fixed offset. H is the requested length rounded up
// to a power of two; step s lives in slot s % H, so writing step s + H
// overwrites step s. Owned by one game; touched only by the worker
// currently advancing that game (and by reply copies for that seat, which the
// engine orders before the game's next step).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "elf/spec.h"

namespace elf {

// Where each key sits inside a record. Keys nobody reads take no space
// (`stored[i]` false); their offset is never used.
class RecordLayout {
 public:
  RecordLayout() = default;
  RecordLayout(const std::vector<KeySpec>& keys, const std::vector<bool>& stored) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      offsets_.push_back(bytes_);
      sizes_.push_back(keys[i].Bytes());
      if (stored[i]) bytes_ += (keys[i].Bytes() + 7) / 8 * 8;  // keep every key 8-byte aligned
    }
  }
  std::size_t offset(int key) const { return offsets_[key]; }
  const std::size_t* offsets() const { return offsets_.data(); }  // per key, as offset(key)
  std::size_t size(int key) const { return sizes_[key]; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<std::size_t> offsets_;
  std::vector<std::size_t> sizes_;
  std::size_t bytes_ = 0;
};

// Storage is lent by the caller (one arena for all histories keeps a game's
// data close together): Words(layout, min_length) 8-byte words.
class History {
 public:
  History() = default;
  History(const RecordLayout* layout, int min_length, uint64_t* storage)
      : layout_(layout), length_(RoundUpToPowerOfTwo(min_length)), record_bytes_(layout->bytes()),
        data_(reinterpret_cast<uint8_t*>(storage)) {}

  static std::size_t Words(const RecordLayout& layout, int min_length) {
    return layout.bytes() * static_cast<std::size_t>(RoundUpToPowerOfTwo(min_length)) / 8;
  }

  int length() const { return static_cast<int>(length_); }
  // Every step of a game reaches this a few times: one multiplication, no
  // load through the layout.
  uint8_t* Record(int64_t step) { return data_ + (step & (length_ - 1)) * record_bytes_; }
  void* Key(int64_t step, int key) { return Record(step) + layout_->offset(key); }

 private:
  static int RoundUpToPowerOfTwo(int n) {
    int power = 1;
    while (power < n) power *= 2;
    return power;
  }

  const RecordLayout* layout_ = nullptr;
  int64_t length_ = 1;
  std::size_t record_bytes_ = 0;
  uint8_t* data_ = nullptr;
};

}  // namespace elf
