// Specs: the name, dtype, per-row shape and one-line meaning of every key a
// game exchanges with Python, and the SpecBuilder a game author uses to state
// them. Keys come from three places: the game (observations and actions), the
// engine (reward, terminal, episode statistics) and the user (extra reply keys
// such as `pi` and `V` that the actor writes and the learner reads back).
// Immutable once a context starts; not thread-safe while being built.
#pragma once

#include <cstdint>
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
  kEngine,       // the engine: reward, terminal, episode statistics
  kExtra,        // Python, as a reply stored in the history only (pi, V, ...)
};

struct KeySpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // per row; {} is a scalar
  std::string meaning;
  KeyRole role = KeyRole::kObservation;
  // Inclusive bounds; for integer actions the engine rejects replies outside.
  std::optional<std::pair<double, double>> bounds;

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  std::size_t Bytes() const { return static_cast<std::size_t>(NumElements()) * SizeOf(dtype); }
  bool IsReply() const { return role == KeyRole::kAction || role == KeyRole::kExtra; }
};

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
  explicit SpecBuilder(const Options& options) : options_(options) {}

  // An observation of C++ type T (float, double, int32_t, int64_t, uint8_t, bool).
  template <typename T>
  Key<T> Observation(const std::string& name, std::vector<int64_t> shape, const std::string& meaning) {
    return Key<T>(Add({name, DTypeOf<T>::value, std::move(shape), meaning, KeyRole::kObservation, std::nullopt}));
  }
  // The same with the dtype known only at run time (a spec read from data).
  void Observation(const std::string& name, DType dtype, std::vector<int64_t> shape,
                   const std::string& meaning) {
    Add({name, dtype, std::move(shape), meaning, KeyRole::kObservation, std::nullopt});
  }
  // A discrete action: one int64 per row in [0, num_values).
  Key<int64_t> DiscreteAction(const std::string& name, int64_t num_values, const std::string& meaning) {
    if (num_values < 1) throw std::invalid_argument("action '" + name + "' needs num_values >= 1");
    return Key<int64_t>(Add({name, DType::kInt64, {}, meaning, KeyRole::kAction,
                             std::make_pair(0.0, static_cast<double>(num_values - 1))}));
  }
  // A continuous action: float32 values in [low, high] (not clipped by the engine).
  Key<float> ContinuousAction(const std::string& name, std::vector<int64_t> shape, double low, double high,
                              const std::string& meaning) {
    return Key<float>(Add({name, DType::kFloat32, std::move(shape), meaning, KeyRole::kAction,
                           std::make_pair(low, high)}));
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
    return "unknown game option '" + name + "'; valid options: " + (valid.empty() ? "(none)" : valid);
  }

  const Options& options_;
  GameSpec spec_;
};

}  // namespace elf
