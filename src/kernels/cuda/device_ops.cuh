// src/kernels/cuda/device_ops.cuh — the scalar definition of every elementwise op on the GPU
// (internal). The same semantics as src/kernels/cpu/elementwise_ops.h (NumPy 2 results):
// integer arithmetic wraps (computed in an unsigned type at least as wide as unsigned int, so
// no narrow type is promoted to a signed int that could overflow), integer floor_divide and
// remainder by zero give 0, float remainder follows npy_divmod (floor_divide, expm1 and tanh,
// with the Array API standard's special cases, are kernels/scalar_ops.h's), maximum/minimum
// propagate NaN, sign(NaN) is NaN. Complex: plain multiply, Smith's division, npy_cpow's
// integer powers, NumPy's lexicographic order and NaN rules, sign(z) = z / |z|; the
// transcendental functions are libcu++'s cuda::std::complex ones (C99 Annex G branch cuts
// and special values, as the host's libm that the cpu kernels call). A bool element is a bool8
// (uma/bool8.h): read as byte != 0, NumPy's rule, and written as 0 or 1. Op codes are the Bin /
// Un values of kernels/cuda/support.h.
#pragma once
#include <cuda/std/complex>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/support.h"
#include "kernels/scalar_ops.h"
#include "uma/bool8.h"

namespace uma::kernels::cuda_dev {

using namespace cuda_launch;  // Bin, Un, Dt codes

/// Complex storage: trivially constructible (usable in shared memory), laid out as
/// std::complex<R> (and NumPy's complex64/complex128).
template <class R>
struct alignas(2 * sizeof(R)) Cx {
  R re, im;
};

template <class T> struct is_cx : std::false_type {};
template <class R> struct is_cx<Cx<R>> : std::true_type {};
template <class T> constexpr bool is_cx_v = is_cx<T>::value;
template <class T> struct real_of { using type = T; };
template <class R> struct real_of<Cx<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;
template <class T> constexpr bool is_flt_v = std::is_floating_point_v<T>;
template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The dtype code of a kernel element type.
template <class T> UMA_HD constexpr int dt_of() {
  if constexpr (std::is_same_v<T, bool8>) return kBool;
  else if constexpr (std::is_same_v<T, int8_t>) return kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return kUInt64;
  else if constexpr (std::is_same_v<T, float>) return kFloat32;
  else if constexpr (std::is_same_v<T, double>) return kFloat64;
  else if constexpr (std::is_same_v<T, Cx<float>>) return kComplex64;
  else return kComplex128;
}

// ---- integers ------------------------------------------------------------------------
template <class T>
using WideU = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T> __device__ __forceinline__ T wadd(T a, T b) { return static_cast<T>(static_cast<WideU<T>>(a) + static_cast<WideU<T>>(b)); }
template <class T> __device__ __forceinline__ T wsub(T a, T b) { return static_cast<T>(static_cast<WideU<T>>(a) - static_cast<WideU<T>>(b)); }
template <class T> __device__ __forceinline__ T wmul(T a, T b) { return static_cast<T>(static_cast<WideU<T>>(a) * static_cast<WideU<T>>(b)); }

template <class T> __device__ T ipow(T base, T exp) {
  WideU<T> r = 1, b = static_cast<WideU<T>>(base);
  auto e = static_cast<std::make_unsigned_t<T>>(exp);
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e = static_cast<decltype(e)>(e >> 1);
  }
  return static_cast<T>(r);
}
template <class T> __device__ T imod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}
/// NumPy's integer reciprocal (1 / x in C, the double converted as x86-64 does: 1/0 is inf,
/// which gives the minimum of int32/int64 and 0 for narrower and unsigned types).
template <class T> __device__ T ireciprocal(T x) {
  if (x == 1) return 1;
  if constexpr (std::is_signed_v<T>) {
    if (x == -1) return -1;
    if (x == 0) return sizeof(T) >= 4 ? static_cast<T>(static_cast<WideU<T>>(1) << (sizeof(T) * 8 - 1)) : T(0);
  }
  return 0;
}

// ---- real floats ---------------------------------------------------------------------
// npy_divmod's remainder (the quotient: scalar::BinaryFn<FloorDivide>).
template <class T> __device__ T fmodpy(T a, T b) {
  if (b == 0) return fmod(a, b);
  T mod = fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = copysign(T(0), b);
  }
  return mod;
}
template <class T> __device__ T sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + exp(-x));
  T e = exp(x);
  return e / (T(1) + e);
}
template <class T> __device__ T softplus(T x) {
  if (x > 0) return x + log1p(exp(-x));
  return log1p(exp(x));
}
/// Digamma: the cpu kernels' algorithm (reflection below 0, recurrence up to 10, asymptotic
/// series), in double.
template <class T> __device__ T digamma(T x) {
  const double nan = __longlong_as_double(0x7ff8000000000000LL), inf = __longlong_as_double(0x7ff0000000000000LL);
  if (x != x || static_cast<double>(x) == -inf) return static_cast<T>(nan);
  if (x == 0) return static_cast<T>(copysign(inf, -static_cast<double>(x)));
  double v = static_cast<double>(x), acc = 0;
  if (v < 0) {
    if (v == floor(v)) return static_cast<T>(nan);
    const double pi = 3.14159265358979323846;
    acc -= pi / tan(pi * v);
    v = 1 - v;
  }
  while (v < 10) {
    acc -= 1 / v;
    v += 1;
  }
  const double f = 1 / (v * v);
  const double series =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760 - f / 12))))));
  return static_cast<T>(acc + log(v) - 0.5 / v - series);
}
/// Trigamma: the cpu kernels' algorithm (reflection at or below 0 with sin of the exact offset
/// to the nearest integer, recurrence up to 10, asymptotic series), in double.
template <class T> __device__ T trigamma(T x) {
  const double nan = __longlong_as_double(0x7ff8000000000000LL), inf = __longlong_as_double(0x7ff0000000000000LL);
  if (x != x || static_cast<double>(x) == -inf) return static_cast<T>(nan);
  double v = static_cast<double>(x), reflected = 0;
  const bool reflect = v <= 0;
  if (reflect) {
    if (v == floor(v)) return static_cast<T>(inf);
    const double pi = 3.14159265358979323846, s = sin(pi * (v - rint(v)));
    reflected = pi * pi / (s * s);
    v = 1 - v;
  }
  double sum = 0;
  while (v < 10) {
    sum += 1 / (v * v);
    v += 1;
  }
  const double f = 1 / (v * v);
  sum += (1 + f * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * (5.0 / 66 - f * (691.0 / 2730 - f * 7.0 / 6))))))) / v +
         f / 2;
  return static_cast<T>(reflect ? reflected - sum : sum);
}

// ---- complex -------------------------------------------------------------------------
template <class R> __device__ __forceinline__ cuda::std::complex<R> to_std(Cx<R> a) { return {a.re, a.im}; }
template <class R> __device__ __forceinline__ Cx<R> from_std(cuda::std::complex<R> a) { return {a.real(), a.imag()}; }
}  // namespace uma::kernels::cuda_dev

namespace uma::kernels::scalar {
/// Cx as the device's complex element type (kernels/scalar_ops.h).
template <class R> struct Complex<cuda_dev::Cx<R>> {
  using C = cuda_dev::Cx<R>;
  static constexpr bool is = true;
  __host__ __device__ static R re(C z) { return z.re; }
  __host__ __device__ static R im(C z) { return z.im; }
  __host__ __device__ static C acosh(C z) { return of(cuda::std::acosh(cuda::std::complex<R>(z.re, z.im))); }
  __host__ __device__ static C asinh(C z) { return of(cuda::std::asinh(cuda::std::complex<R>(z.re, z.im))); }
  __host__ __device__ static C atanh(C z) { return of(cuda::std::atanh(cuda::std::complex<R>(z.re, z.im))); }
  __host__ __device__ static C tanh(C z) { return of(cuda::std::tanh(cuda::std::complex<R>(z.re, z.im))); }
  __host__ __device__ static C make(R re, R im) { return C{re, im}; }
  __host__ __device__ static C of(cuda::std::complex<R> w) { return C{w.real(), w.imag()}; }
};
}  // namespace uma::kernels::scalar

namespace uma::kernels::cuda_dev {

template <class R> __device__ __forceinline__ bool cnan(Cx<R> a) { return a.re != a.re || a.im != a.im; }
template <class R> __device__ __forceinline__ Cx<R> cmul(Cx<R> a, Cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R> __device__ Cx<R> cdiv(Cx<R> a, Cx<R> b) {  // Smith's division (NumPy's loop)
  const R ar = a.re, ai = a.im, br = b.re, bi = b.im;
  const R abr = fabs(br), abi = fabs(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return {ar / abr, ai / abi};
    const R rat = bi / br, scl = R(1) / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  const R rat = br / bi, scl = R(1) / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}
template <class R> __device__ Cx<R> cpow(Cx<R> a, Cx<R> b) {  // npy_cpow
  const R br = b.re, bi = b.im;
  if (br == 0 && bi == 0) return {R(1), R(0)};
  if (a.re == 0 && a.im == 0) {
    if (br > 0) return {R(0), R(0)};  // NumPy 2: 0 ** b is 0 whenever Re(b) > 0
    const R nan = R(__longlong_as_double(0x7ff8000000000000LL));
    return {nan, nan};
  }
  if (bi == 0 && br == trunc(br) && fabs(br) < 100) {
    const int n = static_cast<int>(br);
    if (n == 1) return a;
    if (n == 2) return cmul(a, a);
    if (n == 3) return cmul(cmul(a, a), a);
    const int m = n < 0 ? -n : n;
    Cx<R> acc{R(1), R(0)}, p = a;
    for (int mask = 1;; mask <<= 1) {
      if (m & mask) acc = cmul(acc, p);
      if (m < (mask << 1)) break;
      p = cmul(p, p);
    }
    return n < 0 ? cdiv(Cx<R>{R(1), R(0)}, acc) : acc;
  }
  return from_std(cuda::std::pow(to_std(a), to_std(b)));
}
// NumPy's lexicographic order (CLT/CLE of loops.c.src).
template <class R> __device__ __forceinline__ bool clt(Cx<R> x, Cx<R> y) {
  return (x.re < y.re && x.im == x.im && y.im == y.im) || (x.re == y.re && x.im < y.im);
}
template <class R> __device__ __forceinline__ bool cle(Cx<R> x, Cx<R> y) {
  return (x.re < y.re && x.im == x.im && y.im == y.im) || (x.re == y.re && x.im <= y.im);
}
template <class R> __device__ Cx<R> csign(Cx<R> z) {
  const R r = z.re, i = z.im, nan = R(__longlong_as_double(0x7ff8000000000000LL));
  if (r != r || i != i) return {nan, nan};
  if (isinf(r)) return isinf(i) ? Cx<R>{nan, nan} : Cx<R>{R(r > 0 ? 1 : -1), R(0)};
  if (isinf(i)) return {R(0), R(i > 0 ? 1 : -1)};
  if (r == 0 && i == 0) return {R(0), R(0)};
  const R m = hypot(r, i);
  return {r / m, i / m};
}

// ---- the ops -------------------------------------------------------------------------
/// Result element type of binary op OP on T (bool8 for a truth value).
template <class T, int OP>
using BinOut = std::conditional_t<bin_bool_out(OP), bool8, T>;

template <class T> __device__ __forceinline__ bool nonzero(T x) {
  if constexpr (is_cx_v<T>) return x.re != 0 || x.im != 0;
  else return x != T(0);
}

template <class T, int OP>
__device__ __forceinline__ BinOut<T, OP> apply_binary(T a, T b) {
  static_assert(binary_ok(OP, dt_of<T>()), "binary op has no cuda kernel for this type");
  if constexpr (scalar::BinaryFn<static_cast<BinaryOp>(OP)>::defined)
    return static_cast<BinOut<T, OP>>(scalar::BinaryFn<static_cast<BinaryOp>(OP)>::apply(a, b));
  else if constexpr (OP == LogicalAnd) return a && b;  // bool only
  else if constexpr (OP == LogicalOr) return a || b;
  else if constexpr (OP == LogicalXor) return a != b;
  else if constexpr (is_cx_v<T>) {
    if constexpr (OP == Add) return T{a.re + b.re, a.im + b.im};
    else if constexpr (OP == Subtract) return T{a.re - b.re, a.im - b.im};
    else if constexpr (OP == Multiply) return cmul(a, b);
    else if constexpr (OP == Divide) return cdiv(a, b);
    else if constexpr (OP == Power) return cpow(a, b);
    else if constexpr (OP == Maximum) return (cnan(a) || cle(b, a)) ? a : b;
    else if constexpr (OP == Minimum) return (cnan(a) || cle(a, b)) ? a : b;
    else if constexpr (OP == Equal) return a.re == b.re && a.im == b.im;
    else if constexpr (OP == NotEqual) return !(a.re == b.re && a.im == b.im);
    else if constexpr (OP == Less) return clt(a, b);
    else if constexpr (OP == LessEqual) return cle(a, b);
    else if constexpr (OP == Greater) return clt(b, a);
    else return cle(b, a);  // GreaterEqual
  } else if constexpr (std::is_same_v<T, bool8>) {  // on the values a != 0, b != 0
    if constexpr (OP == Add || OP == Maximum) return a || b;
    else if constexpr (OP == Multiply || OP == Minimum) return a && b;
    else if constexpr (OP == Equal) return a == b;
    else if constexpr (OP == NotEqual) return a != b;
    else if constexpr (OP == Less) return !a && b;
    else if constexpr (OP == LessEqual) return !a || b;
    else if constexpr (OP == Greater) return a && !b;
    else return a || !b;  // GreaterEqual
  } else {
    constexpr bool flt = is_flt_v<T>;
    if constexpr (OP == Add) { if constexpr (flt) return a + b; else return wadd(a, b); }
    else if constexpr (OP == Subtract) { if constexpr (flt) return a - b; else return wsub(a, b); }
    else if constexpr (OP == Multiply) { if constexpr (flt) return a * b; else return wmul(a, b); }
    else if constexpr (OP == Divide) return a / b;
    else if constexpr (OP == Power) {  // x ** 2 is x * x, as on the cpu (elementwise_ops.h)
      if constexpr (flt) return b == T(2) ? a * a : pow(a, b);
      else return ipow(a, b);
    }
    else if constexpr (OP == Maximum) { if constexpr (flt) return (a != a || a > b) ? a : b; else return a > b ? a : b; }
    else if constexpr (OP == Minimum) { if constexpr (flt) return (a != a || a < b) ? a : b; else return a < b ? a : b; }
    else if constexpr (OP == Remainder) { if constexpr (flt) return fmodpy(a, b); else return imod(a, b); }
    else if constexpr (OP == Equal) return a == b;
    else if constexpr (OP == NotEqual) return a != b;
    else if constexpr (OP == Less) return a < b;
    else if constexpr (OP == LessEqual) return a <= b;
    else if constexpr (OP == Greater) return a > b;
    else if constexpr (OP == GreaterEqual) return a >= b;
    else return atan2(a, b);  // Arctan2
  }
}

/// Result element type of unary op OP on T: bool8 for logical_not, the real type for abs of
/// complex.
template <class T, int OP>
using UnOut = std::conditional_t<un_bool_out(OP), bool8,
                                 std::conditional_t<OP == Abs || OP == Real || OP == Imag || OP == Angle, real_t<T>, T>>;

template <class T, int OP>
__device__ __forceinline__ UnOut<T, OP> apply_unary(T x) {
  static_assert(unary_ok(OP, dt_of<T>()), "unary op has no cuda kernel for this type");
  if constexpr (scalar::UnaryFn<static_cast<UnaryOp>(OP)>::defined)
    return static_cast<UnOut<T, OP>>(scalar::UnaryFn<static_cast<UnaryOp>(OP)>::apply(x));
  else if constexpr (OP == LogicalNot) return !nonzero(x);
  else if constexpr (std::is_same_v<T, bool8>) return bool8(static_cast<bool>(x));  // abs, floor, ceil: x != 0
  else if constexpr (is_int_v<T>) {
    if constexpr (OP == Negative) return wsub<T>(T(0), x);
    else if constexpr (OP == Abs) { if constexpr (std::is_signed_v<T>) return x < 0 ? wsub<T>(T(0), x) : x; else return x; }
    else if constexpr (OP == Sign) { if constexpr (std::is_signed_v<T>) return static_cast<T>((x > 0) - (x < 0)); else return static_cast<T>(x > 0); }
    else if constexpr (OP == Square) return wmul(x, x);
    else if constexpr (OP == Reciprocal) return ireciprocal(x);
    else return x;  // floor, ceil
  } else if constexpr (is_cx_v<T>) {
    using R = real_t<T>;
    const auto z = to_std(x);
    if constexpr (OP == Negative) return T{-x.re, -x.im};
    else if constexpr (OP == Abs) return hypot(x.re, x.im);
    else if constexpr (OP == Real) return x.re;
    else if constexpr (OP == Imag) return x.im;
    else if constexpr (OP == Conj) return T{x.re, -x.im};
    else if constexpr (OP == Angle) return atan2(x.im, x.re);
    else if constexpr (OP == Sign) return csign(x);
    else if constexpr (OP == Square) return cmul(x, x);
    else if constexpr (OP == Reciprocal) return cdiv(T{R(1), R(0)}, x);
    else if constexpr (OP == Rint) return T{rint(x.re), rint(x.im)};
    else if constexpr (OP == Exp) return from_std(cuda::std::exp(z));
    else if constexpr (OP == Exp2) {
      const R ln2 = R(0.693147180559945309417232121458176568);
      return from_std(cuda::std::exp(cuda::std::complex<R>(x.re * ln2, x.im * ln2)));
    } else if constexpr (OP == Log) return from_std(cuda::std::log(z));
    else if constexpr (OP == Log2 || OP == Log10) {
      const R k = OP == Log2 ? R(1.44269504088896340735992468100189214) : R(0.434294481903251827651128918916605082);
      const auto l = cuda::std::log(z);
      return T{l.real() * k, l.imag() * k};
    } else if constexpr (OP == Log1p) {  // NumPy's nc_log1p
      const R re = x.re + 1;
      return T{log(hypot(re, x.im)), atan2(x.im, re)};
    } else if constexpr (OP == Sqrt) return from_std(cuda::std::sqrt(z));
    else if constexpr (OP == Sin) return from_std(cuda::std::sin(z));
    else if constexpr (OP == Cos) return from_std(cuda::std::cos(z));
    else if constexpr (OP == Tan) return from_std(cuda::std::tan(z));
    else if constexpr (OP == Arcsin) return from_std(cuda::std::asin(z));
    else if constexpr (OP == Arccos) return from_std(cuda::std::acos(z));
    else if constexpr (OP == Arctan) return from_std(cuda::std::atan(z));
    else if constexpr (OP == Sinh) return from_std(cuda::std::sinh(z));
    else return from_std(cuda::std::cosh(z));  // Cosh
  } else {  // float, double
    if constexpr (OP == Negative) return -x;
    else if constexpr (OP == Abs) return fabs(x);
    else if constexpr (OP == Sign) { if (x != x) return x; return static_cast<T>((x > T(0)) - (x < T(0))); }
    else if constexpr (OP == Square) return x * x;
    else if constexpr (OP == Reciprocal) return T(1) / x;
    else if constexpr (OP == Floor) return floor(x);
    else if constexpr (OP == Ceil) return ceil(x);
    else if constexpr (OP == Rint) return rint(x);
    else if constexpr (OP == Exp) return exp(x);
    else if constexpr (OP == Exp2) return exp2(x);
    else if constexpr (OP == Log) return log(x);
    else if constexpr (OP == Log2) return log2(x);
    else if constexpr (OP == Log10) return log10(x);
    else if constexpr (OP == Log1p) return log1p(x);
    else if constexpr (OP == Sqrt) return sqrt(x);
    else if constexpr (OP == Sin) return sin(x);
    else if constexpr (OP == Cos) return cos(x);
    else if constexpr (OP == Tan) return tan(x);
    else if constexpr (OP == Arcsin) return asin(x);
    else if constexpr (OP == Arccos) return acos(x);
    else if constexpr (OP == Arctan) return atan(x);
    else if constexpr (OP == Sinh) return sinh(x);
    else if constexpr (OP == Cosh) return cosh(x);
    else if constexpr (OP == Sigmoid) return sigmoid(x);
    else if constexpr (OP == Softplus) return softplus(x);
    else if constexpr (OP == Erf) return erf(x);
    else if constexpr (OP == Erfc) return erfc(x);
    else if constexpr (OP == Gammaln) return lgamma(x);
    else if constexpr (OP == Digamma) return digamma(x);
    else return trigamma(x);  // Trigamma
  }
}

/// numpy.clip's scalar rule (the cpu kernels' apply_clip): t = x < lo ? lo : x, then
/// t > hi ? hi : t, NaN (in x or a bound) propagating.
template <class T>
__device__ __forceinline__ T apply_clip(T x, T lo, T hi) {
  if constexpr (is_flt_v<T>) {
    T t = (x != x) ? x : (lo != lo) ? lo : (x < lo ? lo : x);
    return (t != t) ? t : (hi != hi) ? hi : (t > hi ? hi : t);
  } else if constexpr (is_cx_v<T>) {
    T t = cnan(x) ? x : cnan(lo) ? lo : (clt(x, lo) ? lo : x);
    return cnan(t) ? t : cnan(hi) ? hi : (clt(hi, t) ? hi : t);
  } else if constexpr (std::is_same_v<T, bool8>) {
    const bool t = x || lo;
    return bool8(t && hi);
  } else {
    T t = x < lo ? lo : x;
    return t > hi ? hi : t;
  }
}

}  // namespace uma::kernels::cuda_dev
