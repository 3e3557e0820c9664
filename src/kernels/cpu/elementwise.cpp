// CPU elementwise kernels: binary, unary, where. Integer arithmetic wraps (two's
// complement, as NumPy) and is computed in unsigned types so that overflow is defined.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {

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
struct UnaryInner {
  using O = decltype(apply_unary<T, OP>(T{}));
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) const {
    if (s[0] == static_cast<int64_t>(sizeof(T)) && s[1] == static_cast<int64_t>(sizeof(O))) {
      const T* a = reinterpret_cast<const T*>(p[0]);
      O* o = reinterpret_cast<O*>(p[1]);
      if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, O>)
        if (vmath_unary(OP, a, o, n)) return;
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
    constexpr int64_t ts = sizeof(T);
    if (s[0] == 1 && s[3] == ts && (s[1] == ts || s[1] == 0) && (s[2] == ts || s[2] == 0)) {
      // Contiguous output and condition; x and y contiguous or broadcast scalars.
      const bool* c = reinterpret_cast<const bool*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      const T* y = reinterpret_cast<const T*>(p[2]);
      T* o = reinterpret_cast<T*>(p[3]);
      const int64_t dx = s[1] ? 1 : 0, dy = s[2] ? 1 : 0;
      for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i * dx] : y[i * dy];
      return;
    }
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
