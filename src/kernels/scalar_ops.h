// src/kernels/scalar_ops.h — scalar definitions of elementwise ops written once for the cpu
// kernels (cpu/elementwise_ops.h) and the cuda kernels (cuda/device_ops.cuh): NumPy 2's
// semantics on one element of a real type (integers, float, double). Plain C++17, host and
// device (internal). Math functions are std:: on the host and CUDA's overloads on the device.
#pragma once
#include <cmath>
#include <type_traits>

#ifdef __CUDACC__
#define UMA_SCALAR_HD __host__ __device__ __forceinline__
#else
#define UMA_SCALAR_HD inline
#endif
#ifdef __CUDA_ARCH__
#define UMA_MATH(f) ::f
#else
#define UMA_MATH(f) std::f
#endif

namespace uma::kernels::scalar {

/// x1 << x2 for integers (NumPy's npy_lshift): 0 when x2 is negative or at least the width.
template <class T>
UMA_SCALAR_HD T left_shift(T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr unsigned bits = sizeof(T) * 8;
  if (static_cast<U>(b) >= bits) return T(0);
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;  // no signed overflow
  return static_cast<T>(static_cast<W>(static_cast<U>(a)) << static_cast<unsigned>(b));
}

/// x1 >> x2 for integers (NumPy's npy_rshift): arithmetic for signed x1; when x2 is negative
/// or at least the width, 0 (-1 for a negative x1).
template <class T>
UMA_SCALAR_HD T right_shift(T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr unsigned bits = sizeof(T) * 8;
  if (static_cast<U>(b) >= bits) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(a >> static_cast<unsigned>(b));
}

/// log(exp(x) + exp(y)) without overflow (NumPy's npy_logaddexp): equal arguments (infinities
/// of one sign included) give x + log 2.
template <class T>
UMA_SCALAR_HD T logaddexp(T x, T y) {
  if (x == y) return x + T(0.693147180559945309417232121458176568);
  const T d = x - y;
  if (d > 0) return x + UMA_MATH(log1p)(UMA_MATH(exp)(-d));
  if (d <= 0) return y + UMA_MATH(log1p)(UMA_MATH(exp)(d));
  return d;  // NaN
}

template <class T> UMA_SCALAR_HD T copysign(T x, T y) { return UMA_MATH(copysign)(x, y); }
template <class T> UMA_SCALAR_HD T hypot(T x, T y) { return UMA_MATH(hypot)(x, y); }
template <class T> UMA_SCALAR_HD T nextafter(T x, T y) { return UMA_MATH(nextafter)(x, y); }
template <class T> UMA_SCALAR_HD T trunc(T x) { return UMA_MATH(trunc)(x); }
template <class T> UMA_SCALAR_HD bool isfinite(T x) { return UMA_MATH(isfinite)(x); }
template <class T> UMA_SCALAR_HD bool isinf(T x) { return UMA_MATH(isinf)(x); }
template <class T> UMA_SCALAR_HD bool isnan(T x) { return UMA_MATH(isnan)(x); }
template <class T> UMA_SCALAR_HD bool signbit(T x) { return UMA_MATH(signbit)(x); }

}  // namespace uma::kernels::scalar

#undef UMA_SCALAR_HD
#undef UMA_MATH
