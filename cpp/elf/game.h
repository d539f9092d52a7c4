// The game API. A game is a passive state machine the engine drives; it never
// sees a thread, a queue or a buffer. The engine calls, for one game, from one
// thread at a time (never concurrently; a worker, or the caller that replied
// a small batch: see context.h):
//   Reset(rng)                 start an episode
//   Observe(seat, row)         write the seat's observation keys into `row`
//   BeginStep(replies)         only if the spec sets steps_elsewhere: the
//                              replies are in, Step comes soon
//   Step(replies, rng)         apply replies[seat] (the action keys), advance
//   Reward(seat)               the seat's reward for that Step
//   SeatOutcome(seat)          only for games whose seats may leave an episode
//                              early: whether the seat's episode ended in that
//                              Step while the game goes on (see context.h)
// Episodes reset automatically when Step reports them over. An exception
// thrown by any of these stops the context and reaches Python with the game id.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "elf/history.h"
#include "elf/rng.h"
#include "elf/spec.h"

namespace elf {

// One step of one seat: the game's keys inside a history record the engine
// owns (see history.h). A game reads and writes them through the Key handles
// its spec returned (direct); tools that do not know the game use names.
class Row {
 public:
  // The layout's offsets are read through a pointer of the row's own: a key's
  // address is then two loads from the row, not three (the action a game
  // branches on is found that much sooner). The layout must outlive the row
  // unchanged.
  Row(const std::vector<KeySpec>* keys, const RecordLayout* layout) : keys_(keys), offsets_(layout->offsets()) {}

  // The key's storage as an array of T (NumElements() of them).
  template <typename T>
  T* Get(Key<T> key) const { return reinterpret_cast<T*>(record_ + offsets_[key.index()]); }
  // The same by name, checking the dtype.
  template <typename T>
  T* Get(std::string_view name) const {
    const int index = Find(name);
    const KeySpec& key = (*keys_)[index];
    if (key.dtype != DTypeOf<T>::value) {
      throw std::logic_error("key '" + key.name + "' is " + elf::Name(key.dtype) + ", read as " +
                             elf::Name(DTypeOf<T>::value));
    }
    return reinterpret_cast<T*>(record_ + offsets_[index]);
  }
  // The key's storage as raw bytes (KeySpec::Bytes() of them), for games
  // that move keys without interpreting them.
  uint8_t* Bytes(std::string_view name) const { return record_ + offsets_[Find(name)]; }
  // First element of a scalar key, for actions: `replies[0].Scalar(config_.a)`.
  template <typename T>
  T Scalar(Key<T> key) const { return *Get(key); }
  template <typename T>
  T Scalar(std::string_view name) const { return *Get<T>(name); }

  // For the engine: point the row at another record.
  void Point(uint8_t* record) { record_ = record; }

 private:
  int Find(std::string_view name) const {
    for (std::size_t i = 0; i < keys_->size(); ++i) {
      const std::string& key = (*keys_)[i].name;
      // Length and first character first: most keys differ there.
      if (key.size() == name.size() && (name.empty() || key[0] == name[0]) && key == name) {
        return static_cast<int>(i);
      }
    }
    throw std::out_of_range("game has no key '" + std::string(name) + "'");
  }

  const std::vector<KeySpec>* keys_;
  const std::size_t* offsets_;
  uint8_t* record_ = nullptr;
};

struct Outcome {
  bool terminated = false;  // the episode reached a terminal state
  bool truncated = false;   // the episode was cut short (time limit)
  bool Over() const { return terminated || truncated; }
};

class Game {
 public:
  virtual ~Game() = default;
  virtual void Reset(Rng& rng) = 0;
  virtual void Observe(int seat, const Row& row) = 0;
  // For games whose spec sets steps_elsewhere: called for each game whose
  // replies came in before the engine steps any of them, so a game computed
  // in another process starts its step now and the games of a batch step in
  // parallel. Not called for other games.
  virtual void BeginStep(const std::vector<Row>& /*replies*/) {}
  virtual Outcome Step(const std::vector<Row>& replies, Rng& rng) = 0;
  virtual float Reward(int seat) const = 0;
  // A seat whose agent left in the last Step while the game goes on (a
  // PettingZoo agent removed from `agents`): its own outcome. The default, a
  // seat never leaves, suits every game whose seats play to the end.
  virtual Outcome SeatOutcome(int /*seat*/) const { return {}; }
};

}  // namespace elf
