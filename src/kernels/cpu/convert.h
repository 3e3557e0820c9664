// src/kernels/cpu/convert.h — value conversion between element types (never reinterprets).
// Float -> integer conversions of NaN or out-of-range values are defined here (they are UB
// in C++): signed targets get their minimum (x86's "integer indefinite", what NumPy shows),
// unsigned targets go through int64 and wrap, as NumPy does on x86-64.
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "uma/dtype.h"

namespace uma::kernels::cpu {

template <class T> struct is_cplx : std::false_type {};
template <class T> struct is_cplx<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_cplx_v = is_cplx<T>::value;

template <class D, class S>
inline D float_to_int(S s) {
  if constexpr (std::is_signed_v<D>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());
    constexpr double hi = -lo;  // 2^(bits-1)
    double v = static_cast<double>(s);
    if (!(v >= lo && v < hi)) {
      if constexpr (sizeof(D) < 8) {
        // NumPy converts narrow ints through a wider int then truncates.
        if (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
          return static_cast<D>(static_cast<int64_t>(v));
      }
      return std::numeric_limits<D>::min();
    }
    return static_cast<D>(v);
  } else {
    double v = static_cast<double>(s);
    if constexpr (sizeof(D) == 8) {
      if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<D>(v);
    }
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      return static_cast<D>(std::numeric_limits<int64_t>::min());
    return static_cast<D>(static_cast<int64_t>(v));
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
