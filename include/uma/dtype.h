// uma/dtype.h — element types, their sizes and names, and NumPy 2 (NEP 50) promotion.
#pragma once
#include <cstdint>
#include <cstring>
#include <complex>
#include <optional>
#include <string>

#include "uma/bool8.h"

namespace uma {

/// Element types. Storage, astype and interop cover all of them; compute ops cover the
/// subset that `is_compute_dtype` names.
enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
constexpr int kNumDTypes = 15;

/// NumPy's kind characters: 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex.
char dtype_kind(DType t) noexcept;
std::size_t itemsize(DType t) noexcept;
/// NumPy names: "bool", "int32", "bfloat16", "complex64", ...
const char* dtype_name(DType t) noexcept;
/// Inverse of dtype_name; nullopt if unknown.
std::optional<DType> dtype_from_name(const std::string& name);
bool is_float(DType t) noexcept;    // float16, bfloat16, float32, float64
bool is_integer(DType t) noexcept;  // signed or unsigned
bool is_complex(DType t) noexcept;

/// Types every compute op has kernels for (bool, int32, int64, float32, float64). Elementwise
/// ops (uma/ops.h) take every dtype on which NumPy defines them.
bool is_compute_dtype(DType t) noexcept;

/// NumPy 2 promotion of two array dtypes (NEP 50; bfloat16 as ml_dtypes promotes it).
DType promote_types(DType a, DType b) noexcept;

/// Kinds of Python scalars, which are "weak" under NEP 50.
enum class ScalarKind : uint8_t { Bool, Int, Float, Complex };
/// Result dtype of an array of dtype `a` combined with a weak Python scalar of `kind`.
DType promote_weak(DType a, ScalarKind kind) noexcept;

/// np.can_cast(from, to, "safe") and "same_kind".
bool can_cast_safe(DType from, DType to) noexcept;
bool can_cast_same_kind(DType from, DType to) noexcept;

/// The float type ufuncs like exp return for an input dtype (NumPy: bool->float16,
/// int8/uint8->float16, int16/uint16->float32, wider ints->float64, floats keep theirs).
DType float_result_type(DType t) noexcept;

/// bfloat16 storage: the upper 16 bits of an IEEE float32, round-to-nearest-even.
struct bfloat16 {
  uint16_t bits;
  static bfloat16 from_float(float f) noexcept {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{static_cast<uint16_t>((u >> 16) | 0x40)};  // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return bfloat16{static_cast<uint16_t>(u >> 16)};
  }
  float to_float() const noexcept {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

using float16 = _Float16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

/// Calls f(T{}) with the C++ type of `t` (bool8 for bool: a byte read as byte != 0, uma/bool8.h).
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool8{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::UInt32: return f(uint32_t{});
    case DType::UInt64: return f(uint64_t{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: return f(complex64{});
    case DType::Complex128: return f(complex128{});
  }
  __builtin_unreachable();
}

template <class T> struct dtype_of;
#define UMA_DTYPE_OF(T, D) template <> struct dtype_of<T> { static constexpr DType value = DType::D; };
UMA_DTYPE_OF(bool8, Bool) UMA_DTYPE_OF(int8_t, Int8) UMA_DTYPE_OF(int16_t, Int16)
UMA_DTYPE_OF(int32_t, Int32) UMA_DTYPE_OF(int64_t, Int64) UMA_DTYPE_OF(uint8_t, UInt8)
UMA_DTYPE_OF(uint16_t, UInt16) UMA_DTYPE_OF(uint32_t, UInt32) UMA_DTYPE_OF(uint64_t, UInt64)
UMA_DTYPE_OF(float16, Float16) UMA_DTYPE_OF(bfloat16, BFloat16) UMA_DTYPE_OF(float, Float32)
UMA_DTYPE_OF(double, Float64) UMA_DTYPE_OF(complex64, Complex64) UMA_DTYPE_OF(complex128, Complex128)
#undef UMA_DTYPE_OF

}  // namespace uma
