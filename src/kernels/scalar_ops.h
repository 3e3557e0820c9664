// src/kernels/scalar_ops.h — elementwise ops defined once for the cpu kernels
// (cpu/elementwise_ops.h) and the cuda kernels (cuda/device_ops.cuh): NumPy 2's semantics on
// one element. Plain C++17, host and device (internal).
//
// An op of the table (uma/ops/table.h) is defined here by specialising BinaryFn<op> or
// UnaryFn<op> with a static `apply` template over the element type T the kernels instantiate
// for it (has_kernel): bool8 (a truth value, compare with bool), the signed and unsigned
// integers, float, double, and each device's complex type (is_complex<T>, with the complex
// functions Complex<T> that each device's header provides). A truth-value result is
// returned as bool (the kernels store it as bool8). Both kernels call `apply` for every op
// defined here; the ops not (yet) defined here have their scalar code in the two headers.
// Math functions are std:: on the host and CUDA's overloads on the device (UMA_MATH).
#pragma once
#include <cmath>
#include <type_traits>

#include "uma/bool8.h"
#include "uma/ops/table.h"

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

/// The complex functions of a device's complex element type T: each device's header
/// specialises Complex<T> with static re, im, acosh, asinh and atanh (and `is` = true).
template <class T> struct Complex { static constexpr bool is = false; };
template <class T> constexpr bool is_complex_v = Complex<T>::is;
template <class T> constexpr bool is_int_v = std::is_integral_v<T>;  // bool8 is not integral

/// BinaryFn<op>::apply(a, b) / UnaryFn<op>::apply(x): the op on one element; `defined` says
/// whether this header defines it.
template <BinaryOp OP> struct BinaryFn { static constexpr bool defined = false; };
template <UnaryOp OP> struct UnaryFn { static constexpr bool defined = false; };

#define UMA_BINARY_FN(Op) template <> struct BinaryFn<BinaryOp::Op> { static constexpr bool defined = true; \
  template <class T> UMA_SCALAR_HD static auto apply(T a, T b)
#define UMA_UNARY_FN(Op) template <> struct UnaryFn<UnaryOp::Op> { static constexpr bool defined = true; \
  template <class T> UMA_SCALAR_HD static auto apply(T x)

// ---- bitwise ops: bool and integers ------------------------------------------------------
UMA_BINARY_FN(BitwiseAnd) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(a) && static_cast<bool>(b);
  else return static_cast<T>(a & b);
}};
UMA_BINARY_FN(BitwiseOr) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(a) || static_cast<bool>(b);
  else return static_cast<T>(a | b);
}};
UMA_BINARY_FN(BitwiseXor) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(a) != static_cast<bool>(b);
  else return static_cast<T>(a ^ b);
}};
// x1 << x2 (NumPy's npy_lshift): 0 when x2 is negative or at least the width.
UMA_BINARY_FN(BitwiseLeftShift) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;  // no signed overflow
  if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
  return static_cast<T>(static_cast<W>(static_cast<U>(a)) << static_cast<unsigned>(b));
}};
// x1 >> x2 (NumPy's npy_rshift): arithmetic for a signed x1; when x2 is negative or at least
// the width, 0 (-1 for a negative x1).
UMA_BINARY_FN(BitwiseRightShift) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(b) >= sizeof(T) * 8) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(a >> static_cast<unsigned>(b));
}};
UMA_UNARY_FN(BitwiseInvert) {
  if constexpr (std::is_same_v<T, bool8>) return !static_cast<bool>(x);
  else return static_cast<T>(~x);
}};

// ---- real floating-point functions of two arguments ---------------------------------------
UMA_BINARY_FN(Copysign) { return UMA_MATH(copysign)(a, b); }};
UMA_BINARY_FN(Hypot) { return UMA_MATH(hypot)(a, b); }};
UMA_BINARY_FN(Nextafter) { return UMA_MATH(nextafter)(a, b); }};
// log(exp(x) + exp(y)) without overflow (NumPy's npy_logaddexp): equal arguments (infinities
// of one sign included) give x + log 2.
UMA_BINARY_FN(Logaddexp) {
  if (a == b) return a + T(0.693147180559945309417232121458176568);
  const T d = a - b;
  if (d > 0) return a + UMA_MATH(log1p)(UMA_MATH(exp)(-d));
  if (d <= 0) return b + UMA_MATH(log1p)(UMA_MATH(exp)(d));
  return d;  // NaN
}};

// ---- unary functions ----------------------------------------------------------------------
UMA_UNARY_FN(Positive) { return x; }};
UMA_UNARY_FN(Trunc) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(x);
  else if constexpr (is_int_v<T>) return x;
  else return UMA_MATH(trunc)(x);
}};
UMA_UNARY_FN(Acosh) { if constexpr (is_complex_v<T>) return Complex<T>::acosh(x); else return UMA_MATH(acosh)(x); }};
UMA_UNARY_FN(Asinh) { if constexpr (is_complex_v<T>) return Complex<T>::asinh(x); else return UMA_MATH(asinh)(x); }};
UMA_UNARY_FN(Atanh) { if constexpr (is_complex_v<T>) return Complex<T>::atanh(x); else return UMA_MATH(atanh)(x); }};
UMA_UNARY_FN(Isfinite) {
  if constexpr (is_complex_v<T>) return UMA_MATH(isfinite)(Complex<T>::re(x)) && UMA_MATH(isfinite)(Complex<T>::im(x));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<bool>(UMA_MATH(isfinite)(x));
  else return true;
}};
UMA_UNARY_FN(Isinf) {
  if constexpr (is_complex_v<T>) return UMA_MATH(isinf)(Complex<T>::re(x)) || UMA_MATH(isinf)(Complex<T>::im(x));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<bool>(UMA_MATH(isinf)(x));
  else return false;
}};
UMA_UNARY_FN(Isnan) {
  if constexpr (is_complex_v<T>) return UMA_MATH(isnan)(Complex<T>::re(x)) || UMA_MATH(isnan)(Complex<T>::im(x));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<bool>(UMA_MATH(isnan)(x));
  else return false;
}};
UMA_UNARY_FN(Signbit) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<bool>(UMA_MATH(signbit)(x));
  else if constexpr (is_int_v<T> && std::is_signed_v<T>) return x < 0;
  else return false;
}};

#undef UMA_BINARY_FN
#undef UMA_UNARY_FN

}  // namespace uma::kernels::scalar

#undef UMA_SCALAR_HD
#undef UMA_MATH
