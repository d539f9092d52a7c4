// Element types of batch arrays. A key's dtype is fixed by its spec; the
// engine copies bytes and never converts, so every type here maps to exactly
// one C++ type and one numpy dtype name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace elf {

enum class DType { kFloat32, kFloat64, kInt32, kInt64, kUint8, kBool };

inline std::size_t SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUint8: return 1;
    case DType::kBool: return 1;
  }
  return 0;
}

// Numpy's name for the dtype ("float32", ...).
inline std::string Name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUint8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "unknown";
}

inline bool IsInteger(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kUint8;
}

// DTypeOf<T>::value is the DType stored as C++ type T.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUint8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

}  // namespace elf
