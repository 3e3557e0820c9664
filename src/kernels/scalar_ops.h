// src/kernels/scalar_ops.h — elementwise ops defined once for the cpu kernels
// (cpu/elementwise_ops.h) and the cuda kernels (cuda/device_ops.cuh): NumPy 2's semantics on
// one element, except where the Array API standard's special cases differ from NumPy's results
// (floor_divide with one infinite operand, complex expm1 and tanh: uma follows the standard).
// Plain C++17, host and device (internal).
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
/// specialises Complex<T> with static re, im, make(re, im), acosh, asinh, atanh and tanh
/// (and `is` = true).
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

// ---- floor_divide --------------------------------------------------------------------------
// Integers: NumPy's rule, the floor of the exact quotient (x // 0 is 0, x // -1 wraps).
// Real floats: the quotient of NumPy's npy_divmod (floor(x1 / x2) computed from fmod, so that
// x1 == (x1 // x2) * x2 + x1 % x2 as nearly as rounding allows; x // +-0 is x / +-0), except
// where exactly one operand is infinite. There the Array API standard's special cases
// (floor_divide, 'Special cases', 2024.12) give floor(x1 / x2) = x1 / x2: +-infinity for an
// infinite x1 and a finite x2 (NumPy: NaN), a zero of the quotient's sign for a finite x1 and
// an infinite x2 (NumPy: -1.0 when the signs differ).
UMA_BINARY_FN(FloorDivide) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0 || static_cast<bool>(UMA_MATH(isinf)(a)) != static_cast<bool>(UMA_MATH(isinf)(b))) return a / b;
    const T mod = UMA_MATH(fmod)(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return UMA_MATH(copysign)(T(0), a / b);
    T fl = UMA_MATH(floor)(div);
    if (div - fl > T(0.5)) fl += 1;
    return fl;
  } else {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;  // no signed overflow
      if (b == T(-1)) return static_cast<T>(W(0) - static_cast<W>(a));
      T q = static_cast<T>(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      return static_cast<T>(a / b);
    }
  }
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
// expm1(x) = exp(x) - 1, accurate near 0. Complex z = a + bj: NumPy's nc_expm1 for finite
// nonzero b (expm1(a) cos(b) - 2 sin^2(b/2) + exp(a) sin(b) j), and the Array API standard's
// special cases (expm1, 'For complex floating-point operands', 2024.12) elsewhere: a real z
// (b = +-0) gives expm1(a) + bj (+-0 + 0j gives +0 + 0j, +infinity + 0j gives +infinity + 0j,
// NaN + 0j gives NaN + 0j); a = -infinity gives -1 + (+0 * sin(b))j, -1 + 0j for an infinite or
// NaN b; a = +infinity gives infinity * cis(b), infinity + NaN j for an infinite or NaN b; a NaN a
// gives NaN + NaN j, as does a finite a with an infinite or NaN b.
UMA_UNARY_FN(Expm1) {
  if constexpr (is_complex_v<T>) {
    using C = Complex<T>;
    using R = decltype(C::re(x));
    const R a = C::re(x), b = C::im(x);
    if (b == 0) return C::make(a == 0 ? R(0) : UMA_MATH(expm1)(a), b);
    if (UMA_MATH(isinf)(a)) {
      if (a < 0) return C::make(R(-1), UMA_MATH(isfinite)(b) ? R(0) * UMA_MATH(sin)(b) : R(0));
      if (!UMA_MATH(isfinite)(b)) return C::make(a, R(NAN));
      return C::make(a * UMA_MATH(cos)(b), a * UMA_MATH(sin)(b));
    }
    if (UMA_MATH(isnan)(a)) return C::make(a, a);
    const R h = UMA_MATH(sin)(b / 2);
    return C::make(UMA_MATH(expm1)(a) * UMA_MATH(cos)(b) - 2 * h * h, UMA_MATH(exp)(a) * UMA_MATH(sin)(b));
  } else {
    return UMA_MATH(expm1)(x);
  }
}};
// tanh: the C library's (C99 Annex G's ctanh for complex z = a + bj), except for an infinite a,
// where the Array API standard's special cases (tanh, 'For complex floating-point operands',
// 2024.12, with tanh(-z) = -tanh(z) and tanh(conj(z)) = conj(tanh(z))) give +-1 + 0j with the
// zero taking b's sign (C99 gives 1 + 0 * sin(2b) j, whose zero's sign varies with b).
UMA_UNARY_FN(Tanh) {
  if constexpr (is_complex_v<T>) {
    using C = Complex<T>;
    using R = decltype(C::re(x));
    const R a = C::re(x), b = C::im(x);
    if (UMA_MATH(isinf)(a)) return C::make(UMA_MATH(copysign)(R(1), a), UMA_MATH(copysign)(R(0), b));
    // a zero a with an infinite or NaN b: a + NaN j (the standard's table, as glibc's ctanh;
    // CUDA's complex tanh gives NaN + NaN j)
    if (a == R(0) && !UMA_MATH(isfinite)(b)) return C::make(a, b - b);
    return C::tanh(x);
  } else {
    return UMA_MATH(tanh)(x);
  }
}};
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
