// Game options: the keyword arguments a user passes when creating a game
// (`GameContext("cartpole", ..., max_steps=200)`), as strings. A game reads
// each option once, with a default and a help line, through SpecBuilder; any
// option the game did not ask for is an error that lists the valid ones.
// Not thread-safe; only used while a context is being configured.
//
// Numbers are converted with <charconv>, not iostreams: the result never
// depends on a locale, and the module needs none of libstdc++'s stream
// machinery (which crashed the module at its first use under one Python
// that loads its own C++ runtime).
#pragma once

#include <charconv>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace elf {

// A user's text quoted for an error message: at most 60 characters of it, then
// "...", so a huge value (a pasted file, a generated name) cannot flood the
// message. Python's messages quote the same prefix (rlpytorch's short_repr).
inline std::string Quote(const std::string& text) {
  constexpr std::size_t kPrefix = 60;
  return "'" + (text.size() <= kPrefix ? text : text.substr(0, kPrefix) + "...") + "'";
}

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
      throw std::invalid_argument("option " + Quote(name) + " must be a bool, got " + Quote(text));
    } else {
      const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
      const char* end = text.data() + text.size();
      T value{};
      const auto [stop, error] = std::from_chars(begin, end, value);
      if (error == std::errc::result_out_of_range) {
        throw std::invalid_argument("option " + Quote(name) + " is out of range, got " + Quote(text));
      }
      if (error != std::errc() || stop != end || begin == end) {
        const std::string kind = std::is_integral_v<T> ? "an integer" : "a number";
        throw std::invalid_argument("option " + Quote(name) + " must be " + kind + ", got " + Quote(text));
      }
      return value;
    }
  }

  std::map<std::string, std::string> values_;
};

// An option's default as text (for help): numbers in their shortest form,
// bools as true/false.
template <typename T>
std::string OptionText(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else {
    char text[64];
    const auto result = std::to_chars(text, text + sizeof(text), value);
    return std::string(text, result.ptr);
  }
}

}  // namespace elf
