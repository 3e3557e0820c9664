// CPU elementwise kernels: binary, unary, where. Integer arithmetic wraps (two's
// complement, as NumPy) and is computed in unsigned types so that overflow is defined.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {

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

template <class T, BinaryOp OP>
struct BinaryInner {
  using O = decltype(apply_binary<T, OP>(T{}, T{}));
  void operator()(const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) const {
    constexpr int64_t ts = sizeof(T), os = sizeof(O);
    O* o = reinterpret_cast<O*>(p[2]);
    if (s[2] == os) {
      const T* a = reinterpret_cast<const T*>(p[0]);
      const T* b = reinterpret_cast<const T*>(p[1]);
      if (s[0] == ts && s[1] == ts) {
        for (int64_t i = 0; i < n; ++i) o[i] = apply_binary<T, OP>(a[i], b[i]);
        return;
      }
      if (s[0] == ts && s[1] == 0) {
        const T bv = *b;
        for (int64_t i = 0; i < n; ++i) o[i] = apply_binary<T, OP>(a[i], bv);
        return;
      }
      if (s[0] == 0 && s[1] == ts) {
        const T av = *a;
        for (int64_t i = 0; i < n; ++i) o[i] = apply_binary<T, OP>(av, b[i]);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<O*>(p[2] + i * s[2]) =
          apply_binary<T, OP>(*reinterpret_cast<const T*>(p[0] + i * s[0]), *reinterpret_cast<const T*>(p[1] + i * s[1]));
  }
};

template <class T>
void binary_typed(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  std::array<const Array*, 3> ops{&a, &b, &out};
  auto L = make_loop<3>(out.shape(), ops);
  auto B = bases(ops);
  switch (op) {
#define UMA_CASE(X) case BinaryOp::X: run_loop<3>(L, B, BinaryInner<T, BinaryOp::X>{}); break;
    UMA_CASE(Add) UMA_CASE(Subtract) UMA_CASE(Multiply) UMA_CASE(Divide) UMA_CASE(Power)
    UMA_CASE(Maximum) UMA_CASE(Minimum) UMA_CASE(FloorDivide) UMA_CASE(Remainder) UMA_CASE(Equal)
    UMA_CASE(NotEqual) UMA_CASE(Less) UMA_CASE(LessEqual) UMA_CASE(Greater) UMA_CASE(GreaterEqual)
    UMA_CASE(LogicalAnd) UMA_CASE(LogicalOr)
#undef UMA_CASE
  }
}

template <class T, UnaryOp OP>
inline auto apply_unary(T x) {
  if constexpr (std::is_same_v<T, bool> && (OP == UnaryOp::Negative || OP == UnaryOp::Square)) return x;
  else if constexpr (OP == UnaryOp::Negative) return wrap_sub<T>(T(0), x);
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

template <class T, UnaryOp OP>
struct UnaryInner {
  using O = decltype(apply_unary<T, OP>(T{}));
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) const {
    if (s[0] == static_cast<int64_t>(sizeof(T)) && s[1] == static_cast<int64_t>(sizeof(O))) {
      const T* a = reinterpret_cast<const T*>(p[0]);
      O* o = reinterpret_cast<O*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = apply_unary<T, OP>(a[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<O*>(p[1] + i * s[1]) = apply_unary<T, OP>(*reinterpret_cast<const T*>(p[0] + i * s[0]));
  }
};

template <class T>
void unary_typed(UnaryOp op, const Array& a, const Array& out) {
  std::array<const Array*, 2> ops{&a, &out};
  auto L = make_loop<2>(out.shape(), ops);
  auto B = bases(ops);
  switch (op) {
#define UMA_CASE(X) case UnaryOp::X: run_loop<2>(L, B, UnaryInner<T, UnaryOp::X>{}); return;
    UMA_CASE(Negative) UMA_CASE(Abs) UMA_CASE(Sign) UMA_CASE(LogicalNot) UMA_CASE(Square)
    UMA_CASE(Floor) UMA_CASE(Ceil)
#undef UMA_CASE
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
#define UMA_CASE(X) case UnaryOp::X: run_loop<2>(L, B, UnaryInner<T, UnaryOp::X>{}); return;
      UMA_CASE(Exp) UMA_CASE(Log) UMA_CASE(Log1p) UMA_CASE(Expm1) UMA_CASE(Sqrt) UMA_CASE(Tanh)
      UMA_CASE(Sigmoid) UMA_CASE(Sin) UMA_CASE(Cos)
#undef UMA_CASE
      default: break;
    }
  }
  UMA_ASSERT(false && "unary op not supported for this dtype");
}

template <class T>
struct WhereInner {
  void operator()(const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) {
      bool c = *reinterpret_cast<const bool*>(p[0] + i * s[0]);
      *reinterpret_cast<T*>(p[3] + i * s[3]) =
          c ? *reinterpret_cast<const T*>(p[1] + i * s[1]) : *reinterpret_cast<const T*>(p[2] + i * s[2]);
    }
  }
};

template <class F>
void visit_compute(DType t, F&& f) {
  switch (t) {
    case DType::Bool: f(bool{}); return;
    case DType::Int32: f(int32_t{}); return;
    case DType::Int64: f(int64_t{}); return;
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    default: UMA_ASSERT(false && "not a compute dtype");
  }
}

}  // namespace

void binary(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  UMA_ASSERT(a.dtype() == b.dtype());
  visit_compute(a.dtype(), [&](auto t) { binary_typed<decltype(t)>(op, a, b, out); });
}

void unary(UnaryOp op, const Array& a, const Array& out) {
  visit_compute(a.dtype(), [&](auto t) { unary_typed<decltype(t)>(op, a, out); });
}

void where(const Array& cond, const Array& x, const Array& y, const Array& out) {
  std::array<const Array*, 4> ops{&cond, &x, &y, &out};
  auto L = make_loop<4>(out.shape(), ops);
  visit_dtype(out.dtype(), [&](auto t) { run_loop<4>(L, bases(ops), WhereInner<decltype(t)>{}); });
}

}  // namespace uma::kernels::cpu
