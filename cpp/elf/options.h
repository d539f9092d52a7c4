// Game options: the keyword arguments a user passes when creating a game
// (`GameContext("cartpole", ..., max_steps=200)`), as strings. A game reads
// each option once, with a default and a help line, through SpecBuilder; any
// option the game did not ask for is an error that lists the valid ones.
// Not thread-safe; only used while a context is being configured.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace elf {

class Options {
 public:
  Options() = default;
  explicit Options(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  void Set(const std::string& name, const std::string& value) { values_[name] = value; }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  const std::map<std::string, std::string>& values() const { return values_; }

  // The option's value parsed as T, or `fallback` when it was not given.
  // Throws std::invalid_argument naming the option when it does not parse.
  template <typename T>
  T Get(const std::string& name, const T& fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    return Parse<T>(name, it->second);
  }

 private:
  template <typename T>
  static T Parse(const std::string& name, const std::string& text) {
    if constexpr (std::is_same_v<T, std::string>) {
      return text;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (text == "true" || text == "True" || text == "1") return true;
      if (text == "false" || text == "False" || text == "0") return false;
      throw std::invalid_argument("option '" + name + "' must be a bool, got '" + text + "'");
    } else {
      std::istringstream in(text);
      T value{};
      in >> value;
      if (in.fail() || !in.eof()) {
        throw std::invalid_argument("option '" + name + "' must be a number, got '" + text + "'");
      }
      return value;
    }
  }

  std::map<std::string, std::string> values_;
};

}  // namespace elf
