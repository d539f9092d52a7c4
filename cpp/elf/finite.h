// Finite checks of float values, cheap enough for every key of every step:
// the engine refuses a game's NaN or infinite reward or float observation
// (stepper.cc), since one such value silently poisons whatever learns from
// it. Pure functions, callable from any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "elf/dtype.h"

namespace elf {

namespace finite_detail {

// A float is NaN or infinite exactly when its exponent bits are all ones.
// Testing the bits rather than std::isfinite keeps the loop branch-free, so
// the compiler vectorizes it; the result does not depend on -ffast-math.
template <typename T, typename Bits, Bits kExponent>
bool AllFinite(const void* data, int64_t count) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  Bits bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, bytes + i * sizeof(T), sizeof bits);
    bad |= static_cast<Bits>((bits & kExponent) == kExponent);
  }
  return bad == 0;
}

}  // namespace finite_detail

// Whether `count` values of `dtype` at `data` are all finite; values of an
// integer or bool dtype always are.
inline bool AllFinite(const void* data, DType dtype, int64_t count) {
  if (dtype == DType::kFloat32) return finite_detail::AllFinite<float, uint32_t, 0x7f800000u>(data, count);
  if (dtype == DType::kFloat64) {
    return finite_detail::AllFinite<double, uint64_t, 0x7ff0000000000000ull>(data, count);
  }
  return true;
}

// The first value of a float array that is not finite, as "nan at element 3"
// (for error messages; call after AllFinite said false).
inline std::string FirstNonFinite(const void* data, DType dtype, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    double value;
    if (dtype == DType::kFloat32) {
      float single;
      std::memcpy(&single, static_cast<const uint8_t*>(data) + i * sizeof single, sizeof single);
      value = single;
    } else {
      std::memcpy(&value, static_cast<const uint8_t*>(data) + i * sizeof value, sizeof value);
    }
    if (!AllFinite(&value, DType::kFloat64, 1)) {
      const std::string text = value != value ? "nan" : (value > 0 ? "inf" : "-inf");
      return count == 1 ? text : text + " at element " + std::to_string(i);
    }
  }
  return "finite";
}

}  // namespace elf
