// src/kernels/cpu/convert.h — value conversion between element types (never reinterprets).
// A bool element (bool8) is read as byte != 0 and written as 0 or 1; `bool` itself is also a
// valid source and destination (a computed truth value, never a stored element).
// Float -> integer conversions of NaN or out-of-range values follow kernels/float_to_int.h;
// conversions to bfloat16 round once (kernels/to_bfloat16.h).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/float_to_int.h"
#include "kernels/to_bfloat16.h"
#include "uma/dtype.h"

namespace uma::kernels::cpu {

template <class T> struct is_cplx : std::false_type {};
template <class T> struct is_cplx<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_cplx_v = is_cplx<T>::value;

template <class D, class S>
inline D convert(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<S, bool8>) {  // the byte's value: byte != 0
    return convert<D>(static_cast<bool>(s));
  } else if constexpr (std::is_same_v<D, bool8>) {  // written as 0 or 1
    return bool8(convert<bool>(s));
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
  } else if constexpr (std::is_same_v<D, bfloat16>) {  // rounded once (kernels/to_bfloat16.h)
    if constexpr (std::is_same_v<S, float>) return bfloat16::from_float(s);
    else if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) return bfloat16{kernels::bfloat16_bits_of(s)};
    else return bfloat16{kernels::bfloat16_bits(static_cast<double>(s))};
  } else if constexpr (std::is_same_v<D, float16>) {
    return static_cast<float16>(s);
  } else if constexpr (is_cplx_v<D>) {
    return D(static_cast<typename D::value_type>(s), 0);
  } else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && std::is_floating_point_v<S>) {
    return kernels::float_to_int<D>(static_cast<double>(s));
  } else {
    return static_cast<D>(s);
  }
}

}  // namespace uma::kernels::cpu
