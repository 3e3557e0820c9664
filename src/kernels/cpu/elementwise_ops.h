// src/kernels/cpu/elementwise_ops.h — the scalar definition of every elementwise op, shared by
// the elementwise kernels and the fused-elementwise executor (so fused and unfused results
// are bitwise identical). Integer arithmetic wraps (computed in unsigned types).
#pragma once
#include <cmath>
#include <type_traits>

#include "uma/ops.h"

namespace uma::kernels::cpu {

template <class T>
using U = std::make_unsigned_t<T>;

template <class T> T wrap_add(T a, T b) { if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(static_cast<U<T>>(a) + static_cast<U<T>>(b)); else return a + b; }
template <class T> T wrap_sub(T a, T b) { if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(static_cast<U<T>>(a) - static_cast<U<T>>(b)); else return a - b; }
template <class T> T wrap_mul(T a, T b) { if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(static_cast<U<T>>(a) * static_cast<U<T>>(b)); else return a * b; }

template <class T> T ipow(T base, T exp) {
  U<T> result = 1, b = static_cast<U<T>>(base);
  auto e = static_cast<U<T>>(exp);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(result);
}

template <class T> T int_floordiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_sub<T>(0, a);
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}
template <class T> T int_mod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    return a % b;
  }
}
// NumPy's npy_divmod for floats.
template <class T> T float_floordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  if (div - fl > T(0.5)) fl += 1;
  return fl;
}
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

template <class T, BinaryOp OP>
inline auto apply_binary(T a, T b) {
  // Ops the ops layer never sends for bool (it converts or raises first).
  if constexpr (std::is_same_v<T, bool> && (OP == BinaryOp::Subtract || OP == BinaryOp::Divide ||
                                            OP == BinaryOp::Power || OP == BinaryOp::FloorDivide ||
                                            OP == BinaryOp::Remainder)) { (void)b; return a; }
  else if constexpr (OP == BinaryOp::Add) { if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a || b); else return wrap_add(a, b); }
  else if constexpr (OP == BinaryOp::Subtract) return wrap_sub(a, b);
  else if constexpr (OP == BinaryOp::Multiply) { if constexpr (std::is_same_v<T, bool>) return static_cast<bool>(a && b); else return wrap_mul(a, b); }
  else if constexpr (OP == BinaryOp::Divide) return a / b;
  else if constexpr (OP == BinaryOp::Power) { if constexpr (std::is_floating_point_v<T>) return static_cast<T>(std::pow(a, b)); else return ipow(a, b); }
  else if constexpr (OP == BinaryOp::Maximum) { if constexpr (std::is_floating_point_v<T>) return (a != a || a > b) ? a : b; else return a > b ? a : b; }
  else if constexpr (OP == BinaryOp::Minimum) { if constexpr (std::is_floating_point_v<T>) return (a != a || a < b) ? a : b; else return a < b ? a : b; }
  else if constexpr (OP == BinaryOp::FloorDivide) { if constexpr (std::is_floating_point_v<T>) return float_floordiv(a, b); else return int_floordiv(a, b); }
  else if constexpr (OP == BinaryOp::Remainder) { if constexpr (std::is_floating_point_v<T>) return float_mod(a, b); else return int_mod(a, b); }
  else if constexpr (OP == BinaryOp::Equal) return a == b;
  else if constexpr (OP == BinaryOp::NotEqual) return a != b;
  else if constexpr (OP == BinaryOp::Less) return a < b;
  else if constexpr (OP == BinaryOp::LessEqual) return a <= b;
  else if constexpr (OP == BinaryOp::Greater) return a > b;
  else if constexpr (OP == BinaryOp::GreaterEqual) return a >= b;
  else if constexpr (OP == BinaryOp::LogicalAnd) return static_cast<bool>(a) && static_cast<bool>(b);
  else return static_cast<bool>(a) || static_cast<bool>(b);
}

template <class T, UnaryOp OP>
inline auto apply_unary(T x) {
  if constexpr (std::is_same_v<T, bool> && (OP == UnaryOp::Negative || OP == UnaryOp::Square)) return x;
  else if constexpr (OP == UnaryOp::Negative) {
    if constexpr (std::is_floating_point_v<T>) return -x;  // -(+0.0) is -0.0 (IEEE), unlike 0 - x
    else return wrap_sub<T>(T(0), x);
  }
  else if constexpr (OP == UnaryOp::Abs) {
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
    else return x < 0 ? wrap_sub<T>(T(0), x) : x;
  }
  else if constexpr (OP == UnaryOp::Exp) return std::exp(x);
  else if constexpr (OP == UnaryOp::Log) return std::log(x);
  else if constexpr (OP == UnaryOp::Log1p) return std::log1p(x);
  else if constexpr (OP == UnaryOp::Expm1) return std::expm1(x);
  else if constexpr (OP == UnaryOp::Sqrt) return std::sqrt(x);
  else if constexpr (OP == UnaryOp::Tanh) return std::tanh(x);
  else if constexpr (OP == UnaryOp::Sin) return std::sin(x);
  else if constexpr (OP == UnaryOp::Cos) return std::cos(x);
  else if constexpr (OP == UnaryOp::Sigmoid) {
    if (x >= 0) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
  else if constexpr (OP == UnaryOp::Sign) {
    if constexpr (std::is_floating_point_v<T>) { if (x != x) return x; }
    return static_cast<T>((x > T(0)) - (x < T(0)));
  }
  else if constexpr (OP == UnaryOp::LogicalNot) return !static_cast<bool>(x);
  else if constexpr (OP == UnaryOp::Square) return wrap_mul(x, x);
  else if constexpr (OP == UnaryOp::Floor) { if constexpr (std::is_floating_point_v<T>) return std::floor(x); else return x; }
  else { if constexpr (std::is_floating_point_v<T>) return std::ceil(x); else return x; }
}

}  // namespace uma::kernels::cpu
