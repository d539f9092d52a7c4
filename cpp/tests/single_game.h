// Drives one registered game directly, without a context: its spec from the
// registry, one record per seat for its keys, and Reset / Observe / Step /
// Reward called in order, as a worker would. For tests of a game's rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::testing {

// Options holding one `name=value`.
inline Options OneOption(const std::string& name, const std::string& value) {
  Options options;
  options.Set(name, value);
  return options;
}

class SingleGame {
 public:
  explicit SingleGame(const std::string& name, const Options& options = Options(), uint64_t seed = 0)
      : spec_(Registry::Global().Spec(name, options)),
        layout_(spec_.keys, std::vector<bool>(spec_.keys.size(), true)),
        game_(Registry::Global().Find(name).make(options)),
        rng_(seed, 0),
        record_(layout_.bytes() / 8 + 1, 0),
        row_(&spec_.keys, &layout_) {
    row_.Point(reinterpret_cast<uint8_t*>(record_.data()));
    game_->Reset(rng_);
    game_->Observe(0, row_);
  }

  // The game's key `name` in the record (its observation after the last step).
  template <typename T>
  T* Get(const std::string& name) { return row_.Get<T>(name); }

  // Writes `action` into the action key `a`, steps seat 0, observes again.
  Outcome Step(const std::vector<float>& action) {
    float* a = row_.Get<float>("a");
    for (std::size_t i = 0; i < action.size(); ++i) a[i] = action[i];
    const Outcome outcome = game_->Step({row_}, rng_);
    reward_ = game_->Reward(0);
    if (outcome.Over()) game_->Reset(rng_);
    game_->Observe(0, row_);
    return outcome;
  }
  float reward() const { return reward_; }
  const GameSpec& spec() const { return spec_; }

 private:
  GameSpec spec_;
  RecordLayout layout_;
  std::unique_ptr<Game> game_;
  Rng rng_;
  std::vector<uint64_t> record_;
  Row row_;
  float reward_ = 0.0f;
};

}  // namespace elf::testing
