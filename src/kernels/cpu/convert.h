// src/kernels/cpu/convert.h — value conversion between element types (never reinterprets).
// Float -> integer conversions of NaN or out-of-range values are defined here (they are UB
// in C++) as NumPy's casts give them on x86-64 (float_to_int).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "uma/dtype.h"

namespace uma::kernels::cpu {

template <class T> struct is_cplx : std::false_type {};
template <class T> struct is_cplx<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_cplx_v = is_cplx<T>::value;

// x86-64's truncating conversions (cvttsd2si), defined for every input: NaN and values out of
// range give the "integer indefinite", the minimum of the register width.
inline int32_t truncate_to_int32(double v) {
  return v >= -2147483648.0 && v < 2147483648.0 ? static_cast<int32_t>(v) : INT32_MIN;
}
inline int64_t truncate_to_int64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
}

// Float -> integer as NumPy's casts give it on x86-64 (checked against NumPy 2 for float64 and
// float32 sources; NaN, inf and out-of-range values make NumPy warn "invalid value encountered
// in cast"): 8- and 16-bit targets through int32, then truncated (NaN -> 0); int32 and int64
// their indefinite; uint64 from [2^63, inf) as int64 of v - 2^63 with the top bit flipped
// (inf -> 0), below that through int64 (negatives wrap, NaN -> 2^63); uint32 through int64,
// truncated (NaN -> 0). NumPy's own uint32 results differ between its element-at-a-time and
// its vectorised loops (NaN gives 0 or 2^31 depending on the array's length); uma gives the
// former.
template <class D, class S>
inline D float_to_int(S s) {
  constexpr double two63 = 9223372036854775808.0;
  const double v = static_cast<double>(s);
  if constexpr (sizeof(D) <= 2) {
    return static_cast<D>(truncate_to_int32(v));
  } else if constexpr (std::is_signed_v<D> && sizeof(D) == 4) {
    return truncate_to_int32(v);
  } else if constexpr (std::is_signed_v<D>) {
    return truncate_to_int64(v);
  } else if constexpr (sizeof(D) == 8) {
    return v >= two63 ? static_cast<D>(truncate_to_int64(v - two63)) ^ (D{1} << 63)
                      : static_cast<D>(truncate_to_int64(v));
  } else {
    return static_cast<D>(truncate_to_int64(v));
  }
}

template <class D, class S>
inline D convert(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<S, bfloat16>) {
    return convert<D>(s.to_float());
  } else if constexpr (std::is_same_v<S, float16>) {
    return convert<D>(static_cast<float>(s));
  } else if constexpr (is_cplx_v<S>) {
    if constexpr (is_cplx_v<D>) return D(static_cast<typename D::value_type>(s.real()), static_cast<typename D::value_type>(s.imag()));
    else if constexpr (std::is_same_v<D, bool>) return s.real() != 0 || s.imag() != 0;
    else return convert<D>(s.real());
  } else if constexpr (std::is_same_v<D, bool>) {
    return s != S(0);
  } else if constexpr (std::is_same_v<D, bfloat16>) {
    return bfloat16::from_float(static_cast<float>(s));
  } else if constexpr (std::is_same_v<D, float16>) {
    return static_cast<float16>(s);
  } else if constexpr (is_cplx_v<D>) {
    return D(static_cast<typename D::value_type>(s), 0);
  } else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && std::is_floating_point_v<S>) {
    return float_to_int<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

}  // namespace uma::kernels::cpu
