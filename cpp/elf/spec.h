// Specs: the name, dtype, per-row shape and one-line meaning of every key a
// game exchanges with Python, and the SpecBuilder a game author uses to state
// them. Keys come from three places: the game (observations, actions and
// episode statistics), the engine (reward, terminal, episode return and
// length, `final_` copies) and whoever replies more than the game's actions
// (extra reply keys it declares with Context::AddKey: a policy, a value, a
// recurrent state; the engine names none of them).
// Each action key states its space (Gymnasium's Discrete, MultiDiscrete or
// Box); an observation key may state a Box (its elements' bounds, as its
// Gymnasium counterpart declares them), which the engine only reports. The engine rejects integer replies outside the space and Box replies
// that are NaN or infinite; a finite Box value outside [low, high] passes
// unchanged and the game clips it to its bounds itself, as Gymnasium
// environments do.
// Immutable once a context starts; not thread-safe while being built.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "elf/dtype.h"
#include "elf/options.h"

namespace elf {

// Who writes a key.
enum class KeyRole {
  kObservation,  // the game, every step
  kAction,       // Python, as a reply the game reads in Step
  kEngine,       // the engine: reward, terminal, episode return and length, final_ copies
  kExtra,        // Python, as a reply stored in the history only (declared by its replier)
  kStatistic,    // the game, every step like an observation: an episode's outcome
                 // (e.g. won), read on terminal rows; no final_ copy
};

// The values an action key accepts (Gymnasium's spaces). Discrete: one
// integer in [bounds.first, bounds.second] (n = nvec[0] values).
// MultiDiscrete: shape [k], component c in [0, nvec[c]). Box: float values;
// low and high hold one bound for every element or one per element. An
// observation key's space, where it has one, is a Box (of any numeric dtype)
// or, for a hosted game, the Discrete or MultiDiscrete its environment states.
struct ActionSpace {
  enum class Kind { kNone, kDiscrete, kMultiDiscrete, kBox };
  Kind kind = Kind::kNone;
  std::vector<int64_t> nvec;
  std::vector<double> low, high;
};

struct KeySpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // per row; {} is a scalar
  std::string meaning;
  KeyRole role = KeyRole::kObservation;
  // Inclusive bounds of every element (for a Box or MultiDiscrete action:
  // the lowest low and the highest high).
  std::optional<std::pair<double, double>> bounds;
  ActionSpace space{};  // action keys, and observation keys that state their values

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  std::size_t Bytes() const { return static_cast<std::size_t>(NumElements()) * SizeOf(dtype); }
  bool IsReply() const { return role == KeyRole::kAction || role == KeyRole::kExtra; }
};

// Throws std::invalid_argument naming the key unless its space fits it:
// Discrete one integer with n >= 1 values (its bounds, if given, span
// them); MultiDiscrete integers, one count n >= 1 per element; Box floats,
// one low and one high or one per element, each low <= high. A space read
// from data (a hosted game's) may be anything, so every space is checked.
inline void CheckSpace(const KeySpec& key) {
  const ActionSpace& space = key.space;
  const std::string what = (key.role == KeyRole::kObservation ? "observation '" : "action '") + key.name + "'";
  const bool integer = IsInteger(key.dtype);
  const auto elements = static_cast<std::size_t>(key.NumElements());
  switch (space.kind) {
    case ActionSpace::Kind::kNone:
      return;
    case ActionSpace::Kind::kDiscrete:
      if (!integer || !key.shape.empty() || space.nvec.size() != 1 || space.nvec[0] < 1) {
        throw std::invalid_argument(what + ": a Discrete action is one integer with n >= 1 values");
      }
      if (key.bounds && key.bounds->second - key.bounds->first + 1 != static_cast<double>(space.nvec[0])) {
        throw std::invalid_argument(what + ": its bounds do not span the Discrete space's " +
                                    std::to_string(space.nvec[0]) + " values");
      }
      return;
    case ActionSpace::Kind::kMultiDiscrete:
      if (!integer) throw std::invalid_argument(what + ": a MultiDiscrete action needs an integer dtype");
      if (space.nvec.empty()) throw std::invalid_argument(what + " needs at least one component");
      if (space.nvec.size() != elements) {
        throw std::invalid_argument(what + " needs one count per element (" + std::to_string(elements) + "), got " +
                                    std::to_string(space.nvec.size()));
      }
      for (int64_t n : space.nvec) {
        if (n < 1) throw std::invalid_argument(what + " needs every component's n >= 1");
      }
      return;
    case ActionSpace::Kind::kBox:
      if ((integer && key.role == KeyRole::kAction) || key.dtype == DType::kBool) {
        throw std::invalid_argument(what + ": a Box action needs a float dtype, got " + Name(key.dtype));
      }
      if (space.low.size() != space.high.size() || (space.low.size() != 1 && space.low.size() != elements)) {
        throw std::invalid_argument(what + " needs one low and one high, or one per element (" +
                                    std::to_string(elements) + ")");
      }
      for (std::size_t i = 0; i < space.low.size(); ++i) {
        if (!(space.low[i] <= space.high[i])) throw std::invalid_argument(what + " has a low above its high");
      }
      return;
  }
}

// The bounds of every element of an action key with a checked space: a
// Discrete's own (from 0 without), a MultiDiscrete's [0, largest n - 1], a
// Box's lowest low and highest high.
inline std::optional<std::pair<double, double>> SpaceBounds(const KeySpec& key) {
  const ActionSpace& space = key.space;
  switch (space.kind) {
    case ActionSpace::Kind::kDiscrete:
      return key.bounds ? key.bounds : std::make_pair(0.0, static_cast<double>(space.nvec[0] - 1));
    case ActionSpace::Kind::kMultiDiscrete:
      return std::make_pair(0.0, static_cast<double>(*std::max_element(space.nvec.begin(), space.nvec.end()) - 1));
    case ActionSpace::Kind::kBox:
      return std::make_pair(*std::min_element(space.low.begin(), space.low.end()),
                            *std::max_element(space.high.begin(), space.high.end()));
    case ActionSpace::Kind::kNone:
      break;
  }
  return key.bounds;
}

// The space of an action key declared without one (a key read from data):
// an integer scalar is Discrete over its bounds, an integer array
// MultiDiscrete with [0, high] for every component, a float key a Box over
// its bounds (unbounded without).
inline ActionSpace SpaceFromBounds(const KeySpec& key) {
  if (!IsInteger(key.dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return {ActionSpace::Kind::kBox, {}, {key.bounds ? key.bounds->first : -inf},
            {key.bounds ? key.bounds->second : inf}};
  }
  if (!key.bounds) throw std::invalid_argument("integer action '" + key.name + "' needs bounds");
  if (key.shape.empty()) {
    return {ActionSpace::Kind::kDiscrete, {static_cast<int64_t>(key.bounds->second - key.bounds->first) + 1}, {}, {}};
  }
  if (key.bounds->first != 0.0) {
    throw std::invalid_argument("MultiDiscrete action '" + key.name + "' must start at 0");
  }
  const auto n = static_cast<int64_t>(key.bounds->second) + 1;
  return {ActionSpace::Kind::kMultiDiscrete, std::vector<int64_t>(key.NumElements(), n), {}, {}};
}

// Makes a key's space whole: an action key without one gets it from its
// bounds (SpaceFromBounds), every space is checked (CheckSpace), and the
// key's bounds follow from its space. Only action and observation keys
// have a space; an observation's is optional.
inline void CompleteSpace(KeySpec& key) {
  if (key.role != KeyRole::kAction && key.role != KeyRole::kObservation) {
    if (key.space.kind != ActionSpace::Kind::kNone) {
      throw std::invalid_argument("key '" + key.name + "' has a space but is neither an action nor an observation");
    }
    return;
  }
  if (key.role == KeyRole::kObservation && key.space.kind == ActionSpace::Kind::kNone) return;
  if (key.space.kind == ActionSpace::Kind::kNone) key.space = SpaceFromBounds(key);
  CheckSpace(key);
  key.bounds = SpaceBounds(key);
}

// A game's own key as its spec declared it: a Row reads and writes it
// through this handle with neither a lookup by name nor a dtype check (the
// type was fixed when the key was declared).
template <typename T>
class Key {
 public:
  Key() = default;
  explicit Key(int index) : index_(index) {}
  int index() const { return index_; }

 private:
  int index_ = -1;
};

// Keys the engine writes for every seat of every game, every step.
namespace keys {
inline constexpr const char* kReward = "r";
inline constexpr const char* kTerminal = "terminal";
inline constexpr const char* kTruncated = "truncated";
inline constexpr const char* kEpisodeReturn = "episode_return";
inline constexpr const char* kEpisodeLength = "episode_length";
}  // namespace keys

struct OptionSpec {
  std::string name;
  std::string fallback;
  std::string help;
};

// What a game states about itself: its keys, seats and options.
struct GameSpec {
  std::vector<KeySpec> keys;
  std::vector<OptionSpec> options;
  int num_seats = 1;
  // The games compute in other processes: the engine calls Game::BeginStep
  // for every replied game before it steps any (native games leave it off).
  bool steps_elsewhere = false;
};

// Handed to a game's static DefineSpec(SpecBuilder&). Records keys and reads
// options; the engine then rejects options the game never asked for.
class SpecBuilder {
 public:
  // Keeps a copy of the options: a builder made from a temporary
  // (`SpecBuilder builder{Options()}`) must not outlive what it reads.
  explicit SpecBuilder(Options options) : options_(std::move(options)) {}

  // An observation of C++ type T (float, double, int32_t, int64_t, uint8_t, bool).
  template <typename T>
  Key<T> Observation(const std::string& name, std::vector<int64_t> shape, const std::string& meaning) {
    return Key<T>(Add({name, DTypeOf<T>::value, std::move(shape), meaning, KeyRole::kObservation, std::nullopt}));
  }
  // The same with the bounds of its elements (a Box, as the game's Gymnasium
  // counterpart declares it): low and high hold one bound for every element
  // or one per element; infinity is no bound.
  template <typename T>
  Key<T> Observation(const std::string& name, std::vector<int64_t> shape, std::vector<double> low,
                     std::vector<double> high, const std::string& meaning) {
    KeySpec key{name, DTypeOf<T>::value, std::move(shape), meaning, KeyRole::kObservation, std::nullopt};
    key.space = {ActionSpace::Kind::kBox, {}, std::move(low), std::move(high)};
    CompleteSpace(key);
    return Key<T>(Add(std::move(key)));
  }
  // The same with the dtype known only at run time (a spec read from data).
  void Observation(const std::string& name, DType dtype, std::vector<int64_t> shape,
                   const std::string& meaning) {
    Add({name, dtype, std::move(shape), meaning, KeyRole::kObservation, std::nullopt});
  }
  // A discrete action: one int64 per row in [0, num_values).
  Key<int64_t> DiscreteAction(const std::string& name, int64_t num_values, const std::string& meaning) {
    if (num_values < 1) throw std::invalid_argument("action '" + name + "' needs num_values >= 1");
    KeySpec key{name, DType::kInt64, {}, meaning, KeyRole::kAction,
                std::make_pair(0.0, static_cast<double>(num_values - 1))};
    key.space = {ActionSpace::Kind::kDiscrete, {num_values}, {}, {}};
    return Key<int64_t>(Add(std::move(key)));
  }
  // Several discrete choices in one reply: int64 [k], component c in [0, nvec[c]).
  Key<int64_t> MultiDiscreteAction(const std::string& name, std::vector<int64_t> nvec, const std::string& meaning) {
    KeySpec key{name, DType::kInt64, {static_cast<int64_t>(nvec.size())}, meaning, KeyRole::kAction, std::nullopt};
    key.space = {ActionSpace::Kind::kMultiDiscrete, std::move(nvec), {}, {}};
    CompleteSpace(key);
    return Key<int64_t>(Add(std::move(key)));
  }
  // A continuous (Box) action: float32 values, every element in [low, high].
  // A finite value outside passes unchanged: the game clips it (see above).
  Key<float> ContinuousAction(const std::string& name, std::vector<int64_t> shape, double low, double high,
                              const std::string& meaning) {
    return ContinuousAction(name, std::move(shape), std::vector<double>{low}, std::vector<double>{high}, meaning);
  }
  // The same with a bound per element (low and high hold NumElements() each).
  Key<float> ContinuousAction(const std::string& name, std::vector<int64_t> shape, std::vector<double> low,
                              std::vector<double> high, const std::string& meaning) {
    KeySpec key{name, DType::kFloat32, std::move(shape), meaning, KeyRole::kAction, std::nullopt};
    key.space = {ActionSpace::Kind::kBox, {}, std::move(low), std::move(high)};
    CompleteSpace(key);
    return Key<float>(Add(std::move(key)));
  }
  // An outcome of the episode (e.g. whether the seat won), written in Observe
  // like an observation and read on terminal rows; learners average it.
  template <typename T>
  Key<T> EpisodeStatistic(const std::string& name, std::vector<int64_t> shape, const std::string& meaning) {
    return Key<T>(Add({name, DTypeOf<T>::value, std::move(shape), meaning, KeyRole::kStatistic, std::nullopt}));
  }
  void Seats(int num_seats) {
    if (num_seats < 1) throw std::invalid_argument("a game needs at least one seat");
    spec_.num_seats = num_seats;
  }
  // Reads an option with its default and a help line, and records that the
  // game knows it.
  template <typename T>
  T Option(const std::string& name, const T& fallback, const std::string& help) {
    spec_.options.push_back({name, OptionText(fallback), help});
    return options_.Get<T>(name, fallback);
  }

  GameSpec Finish() const {
    for (const auto& [name, value] : options_.values()) {
      bool known = false;
      for (const auto& option : spec_.options) known = known || option.name == name;
      if (!known) throw std::invalid_argument(UnknownOption(name));
    }
    return spec_;
  }

 private:
  // Returns the key's index: game keys come first in a context, in this order.
  int Add(KeySpec key) {
    for (const auto& existing : spec_.keys) {
      if (existing.name == key.name) throw std::invalid_argument("key '" + key.name + "' declared twice");
    }
    spec_.keys.push_back(std::move(key));
    return static_cast<int>(spec_.keys.size()) - 1;
  }
  std::string UnknownOption(const std::string& name) const {
    std::string valid;
    for (const auto& option : spec_.options) valid += (valid.empty() ? "" : ", ") + option.name;
    return "unknown game option " + Quote(name) + "; valid options: " + (valid.empty() ? "(none)" : valid);
  }

  Options options_;
  GameSpec spec_;
};

}  // namespace elf
