// src/kernels/cuda/device_ops.cuh — the scalar definition of every elementwise op on the GPU
// (internal). The same semantics as src/kernels/cpu/elementwise_ops.h (NumPy 2 results):
// integer arithmetic wraps, float floor_divide/remainder follow npy_divmod, maximum/minimum
// propagate NaN, sign(NaN) is NaN. Op codes are uma::BinaryOp / uma::UnaryOp values.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace uma::kernels::cuda_dev {

enum Bin : int {
  Add, Subtract, Multiply, Divide, Power, Maximum, Minimum, FloorDivide, Remainder,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr,
};
enum Un : int {
  Negative, Abs, Exp, Log, Log1p, Expm1, Sqrt, Tanh, Sigmoid, Sign, LogicalNot, Square, Sin, Cos, Floor, Ceil,
};

constexpr bool is_cmp(int op) { return op >= Equal; }

template <class T>
using Uns = std::make_unsigned_t<T>;

template <class T> __device__ __forceinline__ T wadd(T a, T b) { return static_cast<T>(static_cast<Uns<T>>(a) + static_cast<Uns<T>>(b)); }
template <class T> __device__ __forceinline__ T wsub(T a, T b) { return static_cast<T>(static_cast<Uns<T>>(a) - static_cast<Uns<T>>(b)); }
template <class T> __device__ __forceinline__ T wmul(T a, T b) { return static_cast<T>(static_cast<Uns<T>>(a) * static_cast<Uns<T>>(b)); }

template <class T> __device__ T ipow(T base, T exp) {
  Uns<T> r = 1, b = static_cast<Uns<T>>(base);
  auto e = static_cast<Uns<T>>(exp);
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(r);
}
template <class T> __device__ T ifloordiv(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return wsub<T>(0, a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <class T> __device__ T imod(T a, T b) {
  if (b == 0 || b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <class T> __device__ T ffloordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return copysign(T(0), a / b);
  T fl = floor(div);
  if (div - fl > T(0.5)) fl += 1;
  return fl;
}
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

/// Result type of binary op OP on T.
template <class T, int OP>
using BinOut = std::conditional_t<is_cmp(OP), bool, T>;

template <class T, int OP>
__device__ __forceinline__ BinOut<T, OP> apply_binary(T a, T b) {
  constexpr bool flt = std::is_floating_point_v<T>;
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (OP == Add || OP == Maximum || OP == LogicalOr) return a || b;
    else if constexpr (OP == Multiply || OP == Minimum || OP == LogicalAnd) return a && b;
    else if constexpr (OP == Equal) return a == b;
    else if constexpr (OP == NotEqual) return a != b;
    else if constexpr (OP == Less) return !a && b;
    else if constexpr (OP == LessEqual) return !a || b;
    else if constexpr (OP == Greater) return a && !b;
    else if constexpr (OP == GreaterEqual) return a || !b;
    else return a;  // never sent for bool (the ops layer converts or raises first)
  } else if constexpr (OP == Add) {
    if constexpr (flt) return a + b; else return wadd(a, b);
  } else if constexpr (OP == Subtract) {
    if constexpr (flt) return a - b; else return wsub(a, b);
  } else if constexpr (OP == Multiply) {
    if constexpr (flt) return a * b; else return wmul(a, b);
  } else if constexpr (OP == Divide) {
    if constexpr (flt) return a / b; else return b == 0 ? T(0) : a / b;  // never sent for ints
  } else if constexpr (OP == Power) {
    if constexpr (flt) return pow(a, b); else return ipow(a, b);
  } else if constexpr (OP == Maximum) {
    if constexpr (flt) return (a != a || a > b) ? a : b; else return a > b ? a : b;
  } else if constexpr (OP == Minimum) {
    if constexpr (flt) return (a != a || a < b) ? a : b; else return a < b ? a : b;
  } else if constexpr (OP == FloorDivide) {
    if constexpr (flt) return ffloordiv(a, b); else return ifloordiv(a, b);
  } else if constexpr (OP == Remainder) {
    if constexpr (flt) return fmodpy(a, b); else return imod(a, b);
  } else if constexpr (OP == Equal) return a == b;
  else if constexpr (OP == NotEqual) return a != b;
  else if constexpr (OP == Less) return a < b;
  else if constexpr (OP == LessEqual) return a <= b;
  else if constexpr (OP == Greater) return a > b;
  else if constexpr (OP == GreaterEqual) return a >= b;
  else if constexpr (OP == LogicalAnd) return a != T(0) && b != T(0);
  else return a != T(0) || b != T(0);
}

template <class T, int OP>
using UnOut = std::conditional_t<OP == LogicalNot, bool, T>;

template <class T, int OP>
__device__ __forceinline__ UnOut<T, OP> apply_unary(T x) {
  constexpr bool flt = std::is_floating_point_v<T>;
  if constexpr (OP == LogicalNot) return !(x != T(0));
  else if constexpr (std::is_same_v<T, bool>) return x;  // abs, floor, ceil (others never sent)
  else if constexpr (OP == Negative) {
    if constexpr (flt) return -x; else return wsub<T>(T(0), x);
  } else if constexpr (OP == Abs) {
    if constexpr (flt) return fabs(x); else return x < 0 ? wsub<T>(T(0), x) : x;
  } else if constexpr (OP == Square) {
    if constexpr (flt) return x * x; else return wmul(x, x);
  } else if constexpr (OP == Sign) {
    if constexpr (flt) { if (x != x) return x; }
    return static_cast<T>((x > T(0)) - (x < T(0)));
  } else if constexpr (!flt) {
    return x;  // floor, ceil of integers (transcendental ops are never sent for ints)
  } else if constexpr (OP == Exp) return exp(x);
  else if constexpr (OP == Log) return log(x);
  else if constexpr (OP == Log1p) return log1p(x);
  else if constexpr (OP == Expm1) return expm1(x);
  else if constexpr (OP == Sqrt) return sqrt(x);
  else if constexpr (OP == Tanh) return tanh(x);
  else if constexpr (OP == Sin) return sin(x);
  else if constexpr (OP == Cos) return cos(x);
  else if constexpr (OP == Floor) return floor(x);
  else if constexpr (OP == Ceil) return ceil(x);
  else {  // Sigmoid
    if (x >= 0) return T(1) / (T(1) + exp(-x));
    T e = exp(x);
    return e / (T(1) + e);
  }
}

}  // namespace uma::kernels::cuda_dev
