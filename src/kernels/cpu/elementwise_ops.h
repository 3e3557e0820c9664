// src/kernels/cpu/elementwise_ops.h — the scalar definition of every elementwise op, shared by
// the elementwise kernels and the fused-elementwise executor (so fused and unfused results
// are bitwise identical). Integer arithmetic wraps (computed in unsigned types of at least
// `unsigned` width, so that no narrow type is promoted to a signed int that could overflow).
//
// Element types with kernels: bool8 (a bool element: a byte read as byte != 0, NumPy's rule,
// uma/bool8.h), the signed and unsigned integers, float, double, complex<float>,
// complex<double>. float16 and bfloat16 are computed in float32 by the ops
// layer and rounded once (what NumPy's float16 loops and ml_dtypes' bfloat16 loops do).
// Which (op, type) pairs exist is said by unary_supported / binary_supported; the ops layer
// raises TypeError for the others (or converts first: transcendental functions on integers).
// Complex semantics follow NumPy 2: plain (non-recovering) multiply, Smith's division,
// lexicographic order with NumPy's NaN rules, sign(z) = z / |z|, npy_cpow's integer powers.
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "kernels/cpu/convert.h"
#include "kernels/scalar_ops.h"
#include "uma/ops/table.h"

namespace uma::kernels::cpu {

// ---- type classes ----------------------------------------------------------------------
template <class T> constexpr bool is_real_float_v = std::is_floating_point_v<T>;
template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

/// The element type a scalar result is stored as: a truth value (bool) is stored as bool8.
template <class R> using stored_t = std::conditional_t<std::is_same_v<R, bool>, bool8, R>;

/// The unsigned type integer arithmetic of T is done in (never narrower than unsigned int).
template <class T>
using WideU = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T> T wrap_add(T a, T b) { if constexpr (is_int_v<T>) return static_cast<T>(static_cast<WideU<T>>(a) + static_cast<WideU<T>>(b)); else return a + b; }
template <class T> T wrap_sub(T a, T b) { if constexpr (is_int_v<T>) return static_cast<T>(static_cast<WideU<T>>(a) - static_cast<WideU<T>>(b)); else return a - b; }
template <class T> T wrap_mul(T a, T b) { if constexpr (is_int_v<T>) return static_cast<T>(static_cast<WideU<T>>(a) * static_cast<WideU<T>>(b)); else return a * b; }

template <class T> T ipow(T base, T exp) {
  WideU<T> result = 1, b = static_cast<WideU<T>>(base);
  auto e = static_cast<std::make_unsigned_t<T>>(exp);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e = static_cast<decltype(e)>(e >> 1);
  }
  return static_cast<T>(result);
}

template <class T> bool is_neg(T x) { if constexpr (std::is_signed_v<T>) return x < 0; else { (void)x; return false; } }

template <class T> T int_mod(T a, T b) {
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
// NumPy's npy_divmod remainder for floats (the quotient: scalar::BinaryFn<FloorDivide>).
template <class T> T float_mod(T a, T b) {
  if (b == 0) return std::fmod(a, b);
  T mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(T(0), b);
  }
  return mod;
}

/// NumPy's integer reciprocal: 1 / x in C with the double -> integer conversion of x86-64
/// (1/0 is inf, which converts to the minimum of int32/int64 and to 0 for narrower and
/// unsigned types, as NumPy shows).
template <class T> T int_reciprocal(T x) {
  if (x == 1) return 1;
  if constexpr (std::is_signed_v<T>) {
    if (x == -1) return -1;
    if (x == 0) return sizeof(T) >= 4 ? std::numeric_limits<T>::min() : T(0);
  }
  return 0;
}

/// Digamma (psi) for real x: reflection below 0, recurrence up to 10, asymptotic series.
template <class T> T digamma(T x) {
  if (std::isnan(x) || x == -std::numeric_limits<T>::infinity()) return std::numeric_limits<T>::quiet_NaN();
  if (x == 0) return std::copysign(std::numeric_limits<T>::infinity(), -x);  // scipy: psi(+-0) = -+inf
  double v = static_cast<double>(x), acc = 0;
  if (v < 0) {
    if (v == std::floor(v)) return std::numeric_limits<T>::quiet_NaN();  // poles at negative integers
    // psi(1 - x) - psi(x) = pi cot(pi x)
    const double pi = 3.14159265358979323846;
    acc -= pi / std::tan(pi * v);
    v = 1 - v;
  }
  while (v < 10) {  // the series below is then accurate to ~1e-17
    acc -= 1 / v;
    v += 1;
  }
  const double f = 1 / (v * v);
  const double series =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760 - f / 12))))));
  return static_cast<T>(acc + std::log(v) - 0.5 / v - series);
}

/// Trigamma psi'(x) = d/dx digamma(x) for real x (scipy.special.polygamma(1, x)): +inf at the
/// poles (0 and the negative integers), 0 at +inf, NaN at -inf (no limit) and NaN. Reflection
/// below 0 (psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)), the recurrence psi'(x) = psi'(x + 1) +
/// 1 / x^2 up to 10, then the asymptotic series 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
template <class T> T trigamma(T x) {
  const T inf = std::numeric_limits<T>::infinity();
  if (std::isnan(x) || x == -inf) return std::numeric_limits<T>::quiet_NaN();
  double v = static_cast<double>(x), reflected = 0;
  const bool reflect = v <= 0;
  if (reflect) {
    if (v == std::floor(v)) return inf;  // poles at 0 and the negative integers
    // sin(pi x) from the offset to the nearest integer (exact), so pi * x loses nothing
    const double pi = 3.14159265358979323846, s = std::sin(pi * (v - std::nearbyint(v)));
    reflected = pi * pi / (s * s);
    v = 1 - v;
  }
  double sum = 0;
  while (v < 10) {  // the series below is then accurate to ~1e-17
    sum += 1 / (v * v);
    v += 1;
  }
  const double f = 1 / (v * v);
  sum += (1 + f * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * (5.0 / 66 - f * (691.0 / 2730 - f * 7.0 / 6))))))) / v +
         f / 2;
  return static_cast<T>(reflect ? reflected - sum : sum);
}

template <class T> T softplus(T x) {
  // log(1 + exp(x)) without overflow: x + log1p(exp(-x)) for x > 0.
  if (x > 0) return x + std::log1p(std::exp(-x));
  return std::log1p(std::exp(x));
}

template <class T> T sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

template <class T> T lgamma_threadsafe(T x) {
  int sign;  // lgamma writes the global signgam: the _r variants do not (OpenMP threads)
  if constexpr (std::is_same_v<T, float>) return ::lgammaf_r(x, &sign);
  else return ::lgamma_r(x, &sign);
}

// ---- complex helpers (NumPy's npy_math conventions) -------------------------------------
template <class C> C cmul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
// Smith's division, as NumPy's complex divide loop.
template <class C> C cdiv(C a, C b) {
  using R = typename C::value_type;
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const R abr = std::fabs(br), abi = std::fabs(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return C(ar / abr, ai / abi);
    const R rat = bi / br, scl = R(1) / (br + bi * rat);
    return C((ar + ai * rat) * scl, (ai - ar * rat) * scl);
  }
  const R rat = br / bi, scl = R(1) / (bi + br * rat);
  return C((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}
template <class C> C cpow(C a, C b) {
  using R = typename C::value_type;
  const R br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return C(1, 0);
  if (a.real() == 0 && a.imag() == 0) {
    if (br > 0) return C(0, 0);  // NumPy 2: 0 ** b is 0 whenever Re(b) > 0
    return C(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  }
  if (bi == 0 && br == std::trunc(br) && std::fabs(br) < 100) {
    auto n = static_cast<int>(br);
    if (n == 1) return a;
    if (n == 2) return cmul(a, a);
    if (n == 3) return cmul(cmul(a, a), a);
    int m = n < 0 ? -n : n;
    C acc(1, 0), p = a;
    for (int mask = 1;; mask <<= 1) {
      if (m & mask) acc = cmul(acc, p);
      if (m < (mask << 1)) break;
      p = cmul(p, p);
    }
    return n < 0 ? cdiv(C(1, 0), acc) : acc;
  }
  return std::pow(a, b);
}
template <class C> bool cnan(C a) { return std::isnan(a.real()) || std::isnan(a.imag()); }
// NumPy's lexicographic complex order (CLT/CLE/CGT/CGE of loops.c.src).
template <class C> bool clt(C x, C y) { return (x.real() < y.real() && !std::isnan(x.imag()) && !std::isnan(y.imag())) || (x.real() == y.real() && x.imag() < y.imag()); }
template <class C> bool cle(C x, C y) { return (x.real() < y.real() && !std::isnan(x.imag()) && !std::isnan(y.imag())) || (x.real() == y.real() && x.imag() <= y.imag()); }
template <class C> bool cgt(C x, C y) { return clt(y, x); }
template <class C> bool cge(C x, C y) { return cle(y, x); }
template <class C> C csign(C z) {
  using R = typename C::value_type;
  const R r = z.real(), i = z.imag(), nan = std::numeric_limits<R>::quiet_NaN();
  if (std::isnan(r) || std::isnan(i)) return C(nan, nan);
  if (std::isinf(r)) return std::isinf(i) ? C(nan, nan) : C(r > 0 ? 1 : -1, 0);
  if (std::isinf(i)) return C(0, i > 0 ? 1 : -1);
  if (r == 0 && i == 0) return C(0, 0);
  const R m = std::hypot(r, i);
  return C(r / m, i / m);
}

}  // namespace uma::kernels::cpu

namespace uma::kernels::scalar {
/// std::complex as the host's complex element type (kernels/scalar_ops.h).
template <class R> struct Complex<std::complex<R>> {
  static constexpr bool is = true;
  static R re(std::complex<R> z) { return z.real(); }
  static R im(std::complex<R> z) { return z.imag(); }
  static std::complex<R> acosh(std::complex<R> z) { return std::acosh(z); }
  static std::complex<R> asinh(std::complex<R> z) { return std::asinh(z); }
  static std::complex<R> atanh(std::complex<R> z) { return std::atanh(z); }
  static std::complex<R> tanh(std::complex<R> z) { return std::tanh(z); }
  static std::complex<R> make(R re, R im) { return {re, im}; }
};
}  // namespace uma::kernels::scalar

namespace uma::kernels::cpu {

// ---- which (op, type) pairs have kernels: the op table's rule (uma/ops/table.h) -------------
template <class T>
constexpr bool binary_supported(BinaryOp op) { return has_kernel(op, static_cast<int>(dtype_of<T>::value)); }
template <class T>
constexpr bool unary_supported(UnaryOp op) { return has_kernel(op, static_cast<int>(dtype_of<T>::value)); }

// ---- the scalar ops ----------------------------------------------------------------------
template <class T, BinaryOp OP>
inline auto apply_binary(T a, T b) {
  static_assert(binary_supported<T>(OP), "binary op has no kernel for this type");
  if constexpr (scalar::BinaryFn<OP>::defined) return scalar::BinaryFn<OP>::apply(a, b);
  else if constexpr (OP == BinaryOp::Equal) return a == b;
  else if constexpr (OP == BinaryOp::NotEqual) return a != b;
  else if constexpr (OP == BinaryOp::LogicalAnd) return a != T(0) && b != T(0);
  else if constexpr (OP == BinaryOp::LogicalOr) return a != T(0) || b != T(0);
  else if constexpr (OP == BinaryOp::LogicalXor) return (a != T(0)) != (b != T(0));
  else if constexpr (is_cplx_v<T>) {
    if constexpr (OP == BinaryOp::Add) return a + b;
    else if constexpr (OP == BinaryOp::Subtract) return a - b;
    else if constexpr (OP == BinaryOp::Multiply) return cmul(a, b);
    else if constexpr (OP == BinaryOp::Divide) return cdiv(a, b);
    else if constexpr (OP == BinaryOp::Power) return cpow(a, b);
    else if constexpr (OP == BinaryOp::Maximum) return (cnan(a) || cge(a, b)) ? a : b;
    else if constexpr (OP == BinaryOp::Minimum) return (cnan(a) || cle(a, b)) ? a : b;
    else if constexpr (OP == BinaryOp::Less) return clt(a, b);
    else if constexpr (OP == BinaryOp::LessEqual) return cle(a, b);
    else if constexpr (OP == BinaryOp::Greater) return cgt(a, b);
    else return cge(a, b);
  } else if constexpr (std::is_same_v<T, bool8>) {  // on the values a != 0, b != 0
    if constexpr (OP == BinaryOp::Add || OP == BinaryOp::Maximum) return static_cast<bool>(a || b);
    else if constexpr (OP == BinaryOp::Multiply || OP == BinaryOp::Minimum) return static_cast<bool>(a && b);
    else if constexpr (OP == BinaryOp::Less) return !a && b;
    else if constexpr (OP == BinaryOp::LessEqual) return !a || b;
    else if constexpr (OP == BinaryOp::Greater) return a && !b;
    else return a || !b;
  } else {
    if constexpr (OP == BinaryOp::Add) return wrap_add(a, b);
    else if constexpr (OP == BinaryOp::Subtract) return wrap_sub(a, b);
    else if constexpr (OP == BinaryOp::Multiply) return wrap_mul(a, b);
    else if constexpr (OP == BinaryOp::Divide) return a / b;
    else if constexpr (OP == BinaryOp::Power) {
      // x ** 2 is the correctly rounded x * x, as NumPy's float power loops give it (glibc's pow
      // is off by an ulp in rare cases there), and a multiply instead of a call of pow.
      if constexpr (is_real_float_v<T>) return b == T(2) ? a * a : static_cast<T>(std::pow(a, b));
      else return ipow(a, b);
    }
    else if constexpr (OP == BinaryOp::Maximum) { if constexpr (is_real_float_v<T>) return (a != a || a > b) ? a : b; else return a > b ? a : b; }
    else if constexpr (OP == BinaryOp::Minimum) { if constexpr (is_real_float_v<T>) return (a != a || a < b) ? a : b; else return a < b ? a : b; }
    else if constexpr (OP == BinaryOp::Remainder) { if constexpr (is_real_float_v<T>) return float_mod(a, b); else return int_mod(a, b); }
    else if constexpr (OP == BinaryOp::Less) return a < b;
    else if constexpr (OP == BinaryOp::LessEqual) return a <= b;
    else if constexpr (OP == BinaryOp::Greater) return a > b;
    else if constexpr (OP == BinaryOp::GreaterEqual) return a >= b;
    else return std::atan2(a, b);
  }
}

template <class T, UnaryOp OP>
inline auto apply_unary(T x) {
  static_assert(unary_supported<T>(OP), "unary op has no kernel for this type");
  if constexpr (scalar::UnaryFn<OP>::defined) return scalar::UnaryFn<OP>::apply(x);
  else if constexpr (OP == UnaryOp::LogicalNot) return x == T(0);
  else if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(x);  // abs, floor, ceil: x != 0
  else if constexpr (is_int_v<T>) {
    if constexpr (OP == UnaryOp::Negative) return wrap_sub<T>(T(0), x);
    else if constexpr (OP == UnaryOp::Abs) return is_neg(x) ? wrap_sub<T>(T(0), x) : x;
    else if constexpr (OP == UnaryOp::Sign) return static_cast<T>((x > T(0)) - static_cast<int>(is_neg(x)));
    else if constexpr (OP == UnaryOp::Square) return wrap_mul(x, x);
    else if constexpr (OP == UnaryOp::Reciprocal) return int_reciprocal(x);
    else return x;  // floor, ceil
  } else if constexpr (is_cplx_v<T>) {
    using R = real_t<T>;
    const R ln2 = R(0.693147180559945309417232121458176568);
    if constexpr (OP == UnaryOp::Negative) return -x;
    else if constexpr (OP == UnaryOp::Abs) return std::hypot(x.real(), x.imag());
    else if constexpr (OP == UnaryOp::Sign) return csign(x);
    else if constexpr (OP == UnaryOp::Square) return cmul(x, x);
    else if constexpr (OP == UnaryOp::Reciprocal) return cdiv(T(1, 0), x);
    else if constexpr (OP == UnaryOp::Rint) return T(std::nearbyint(x.real()), std::nearbyint(x.imag()));
    else if constexpr (OP == UnaryOp::Exp) return std::exp(x);
    else if constexpr (OP == UnaryOp::Exp2) return std::exp(T(x.real() * ln2, x.imag() * ln2));
    else if constexpr (OP == UnaryOp::Log) return std::log(x);
    else if constexpr (OP == UnaryOp::Log2 || OP == UnaryOp::Log10) {
      const R k = OP == UnaryOp::Log2 ? R(1.44269504088896340735992468100189214) : R(0.434294481903251827651128918916605082);
      T l = std::log(x);
      return T(l.real() * k, l.imag() * k);
    }
    else if constexpr (OP == UnaryOp::Log1p) {  // NumPy's nc_log1p
      const R re = x.real() + 1;
      return T(std::log(std::hypot(re, x.imag())), std::atan2(x.imag(), re));
    }
    else if constexpr (OP == UnaryOp::Sqrt) return std::sqrt(x);
    else if constexpr (OP == UnaryOp::Sin) return std::sin(x);
    else if constexpr (OP == UnaryOp::Cos) return std::cos(x);
    else if constexpr (OP == UnaryOp::Tan) return std::tan(x);
    else if constexpr (OP == UnaryOp::Arcsin) return std::asin(x);
    else if constexpr (OP == UnaryOp::Arccos) return std::acos(x);
    else if constexpr (OP == UnaryOp::Arctan) return std::atan(x);
    else if constexpr (OP == UnaryOp::Sinh) return std::sinh(x);
    else if constexpr (OP == UnaryOp::Real) return x.real();
    else if constexpr (OP == UnaryOp::Imag) return x.imag();
    else if constexpr (OP == UnaryOp::Conj) return T(x.real(), -x.imag());
    else if constexpr (OP == UnaryOp::Angle) return std::atan2(x.imag(), x.real());
    else return std::cosh(x);  // Cosh
  } else {  // float, double
    if constexpr (OP == UnaryOp::Negative) return -x;  // -(+0.0) is -0.0 (IEEE), unlike 0 - x
    else if constexpr (OP == UnaryOp::Abs) return std::fabs(x);
    else if constexpr (OP == UnaryOp::Sign) { if (x != x) return x; return static_cast<T>((x > T(0)) - (x < T(0))); }
    else if constexpr (OP == UnaryOp::Square) return x * x;
    else if constexpr (OP == UnaryOp::Reciprocal) return T(1) / x;
    else if constexpr (OP == UnaryOp::Floor) return std::floor(x);
    else if constexpr (OP == UnaryOp::Ceil) return std::ceil(x);
    else if constexpr (OP == UnaryOp::Rint) return std::nearbyint(x);
    else if constexpr (OP == UnaryOp::Exp) return std::exp(x);
    else if constexpr (OP == UnaryOp::Exp2) return std::exp2(x);
    else if constexpr (OP == UnaryOp::Log) return std::log(x);
    else if constexpr (OP == UnaryOp::Log2) return std::log2(x);
    else if constexpr (OP == UnaryOp::Log10) return std::log10(x);
    else if constexpr (OP == UnaryOp::Log1p) return std::log1p(x);
    else if constexpr (OP == UnaryOp::Sqrt) return std::sqrt(x);
    else if constexpr (OP == UnaryOp::Sin) return std::sin(x);
    else if constexpr (OP == UnaryOp::Cos) return std::cos(x);
    else if constexpr (OP == UnaryOp::Tan) return std::tan(x);
    else if constexpr (OP == UnaryOp::Arcsin) return std::asin(x);
    else if constexpr (OP == UnaryOp::Arccos) return std::acos(x);
    else if constexpr (OP == UnaryOp::Arctan) return std::atan(x);
    else if constexpr (OP == UnaryOp::Sinh) return std::sinh(x);
    else if constexpr (OP == UnaryOp::Cosh) return std::cosh(x);
    else if constexpr (OP == UnaryOp::Sigmoid) return sigmoid(x);
    else if constexpr (OP == UnaryOp::Softplus) return softplus(x);
    else if constexpr (OP == UnaryOp::Erf) return std::erf(x);
    else if constexpr (OP == UnaryOp::Erfc) return std::erfc(x);
    else if constexpr (OP == UnaryOp::Gammaln) return lgamma_threadsafe(x);
    else if constexpr (OP == UnaryOp::Digamma) return digamma(x);
    else return trigamma(x);
  }
}

/// clip's scalar rule (numpy.clip): t = x < lo ? lo : x; t > hi ? hi : t, NaN propagating.
template <class T>
inline T apply_clip(T x, T lo, T hi) {
  if constexpr (is_real_float_v<T>) {
    T t = (x != x) ? x : (lo != lo) ? lo : (x < lo ? lo : x);
    return (t != t) ? t : (hi != hi) ? hi : (t > hi ? hi : t);
  } else if constexpr (is_cplx_v<T>) {
    T t = cnan(x) ? x : cnan(lo) ? lo : (clt(x, lo) ? lo : x);
    return cnan(t) ? t : cnan(hi) ? hi : (cgt(t, hi) ? hi : t);
  } else if constexpr (std::is_same_v<T, bool8>) {
    const bool t = x || lo;
    return bool8(t && hi);
  } else {
    T t = x < lo ? lo : x;
    return t > hi ? hi : t;
  }
}

}  // namespace uma::kernels::cpu
