// Finite checks of float values, cheap enough for every reward and every
// float row the engine writes into a batch: the engine refuses a game's NaN
// or infinite reward or float observation (stepper.cc), since one such value
// silently poisons whatever learns from it. They test bits, not arithmetic,
// so -ffast-math cannot fold them away. Pure functions, any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "elf/dtype.h"

namespace elf {

// A float is NaN or infinite exactly when its exponent bits are all ones.
// Or-ing that test over the values keeps the loop free of branches and of
// unsigned maxima (which SSE2 lacks), so the compiler vectorizes it with
// plain ands, compares and ors: well under an instruction a value over a
// batch's column, and three instructions for one value.
template <typename Float, typename Bits, Bits kExponent>
bool AllFiniteBits(const Float* values, int64_t count) {
  Bits bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, values + i, sizeof bits);
    bad |= (bits & kExponent) == kExponent ? ~Bits{0} : Bits{0};
  }
  return bad == 0;
}

inline bool AllFinite(const float* values, int64_t count) {
  return AllFiniteBits<float, uint32_t, 0x7f800000u>(values, count);
}

inline bool AllFinite(const double* values, int64_t count) {
  return AllFiniteBits<double, uint64_t, uint64_t{0x7ff0000000000000}>(values, count);
}

// The first value of a float32 or float64 array that is not finite, as
// "nan at element 3" (for error messages; call after AllFinite said false).
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
    if (!AllFinite(&value, 1)) {
      const std::string text = value != value ? "nan" : (value > 0 ? "inf" : "-inf");
      return count == 1 ? text : text + " at element " + std::to_string(i);
    }
  }
  return "finite";
}

}  // namespace elf
