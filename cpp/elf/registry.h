// The game registry: games register themselves by name at static
// initialisation (ELF_REGISTER_GAME in the game's .cc file), and a context
// creates them by name. Registration happens before main(); lookups after.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/options.h"
#include "elf/spec.h"

namespace elf {

struct GameEntry {
  std::function<void(SpecBuilder&)> define_spec;
  std::function<std::unique_ptr<Game>(const Options&)> make;
};

class Registry {
 public:
  static Registry& Global() {
    static Registry registry;
    return registry;
  }

  void Add(const std::string& name, GameEntry entry) { entries_[name] = std::move(entry); }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) names.push_back(name);
    return names;
  }

  // Throws std::invalid_argument listing the registered games.
  const GameEntry& Find(const std::string& name) const {
    auto it = entries_.find(name);
    if (it != entries_.end()) return it->second;
    std::string valid;
    for (const auto& known : Names()) valid += (valid.empty() ? "" : ", ") + known;
    throw std::invalid_argument("unknown game " + Quote(name) + "; registered games: " + valid);
  }

  // The game's spec for these options; throws on unknown or malformed options.
  GameSpec Spec(const std::string& name, const Options& options) const {
    SpecBuilder builder(options);
    Find(name).define_spec(builder);
    return builder.Finish();
  }

 private:
  std::map<std::string, GameEntry> entries_;
};

// A game class G provides `static G::Config DefineSpec(SpecBuilder&)`, which
// declares keys, seats and options and returns the parsed configuration, and a
// constructor taking that Config.
template <typename G>
struct Registrar {
  explicit Registrar(const std::string& name) {
    Registry::Global().Add(name, {[](SpecBuilder& spec) { G::DefineSpec(spec); },
                                  [](const Options& options) {
                                    SpecBuilder spec(options);
                                    return std::make_unique<G>(G::DefineSpec(spec));
                                  }});
  }
};

}  // namespace elf

#define ELF_REGISTER_GAME(name, GameClass) \
  static const ::elf::Registrar<GameClass> elf_registrar_##GameClass(name)
