// CPU elementwise kernels: dispatch on the dtype to the per-family instantiations
// (elementwise_{int,uint,float,complex}.cpp), and where. Integer arithmetic wraps (two's
// complement, as NumPy) and is computed in unsigned types so that overflow is defined.
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/elementwise_kernels.h"

namespace uma::kernels::cpu {

// Instantiated in elementwise_{int,uint,float,complex}.cpp.
UMA_EXTERN_ELEMENTWISE(bool8)
UMA_EXTERN_ELEMENTWISE(int8_t)
UMA_EXTERN_ELEMENTWISE(int16_t)
UMA_EXTERN_ELEMENTWISE(int32_t)
UMA_EXTERN_ELEMENTWISE(int64_t)
UMA_EXTERN_ELEMENTWISE(uint8_t)
UMA_EXTERN_ELEMENTWISE(uint16_t)
UMA_EXTERN_ELEMENTWISE(uint32_t)
UMA_EXTERN_ELEMENTWISE(uint64_t)
UMA_EXTERN_ELEMENTWISE(float)
UMA_EXTERN_ELEMENTWISE(double)
UMA_EXTERN_ELEMENTWISE(complex64)
UMA_EXTERN_ELEMENTWISE(complex128)

namespace {

// The unsigned integer of T's size, for a branchless bitwise select (nullptr_t when none).
template <class T>
using SelectBits = std::conditional_t<sizeof(T) == 8, uint64_t,
                   std::conditional_t<sizeof(T) == 4, uint32_t,
                   std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 1, uint8_t, std::nullptr_t>>>>;

// o[i] = c[i] ? x[i * dx] : y[i * dy] as a bit mask select: copies the chosen element's bytes
// exactly (NaN payloads, -0.0), with no data-dependent branch (a relu gradient's condition is
// unpredictable) so the compiler vectorizes it. dx, dy are 0 or 1 (compile-time).
template <class T, int DX, int DY>
void where_select(const bool8* c, const T* x, const T* y, T* o, int64_t n) {
  using U = SelectBits<T>;
  for (int64_t i = 0; i < n; ++i) {
    U xv, yv;  // memcpy: the bytes, without aliasing T as U (compiles to plain loads)
    std::memcpy(&xv, x + i * DX, sizeof(U));
    std::memcpy(&yv, y + i * DY, sizeof(U));
    const U m = static_cast<U>(U(0) - static_cast<U>(c[i].byte != 0));
    const U r = static_cast<U>((xv & m) | (yv & static_cast<U>(~m)));
    std::memcpy(static_cast<void*>(o + i), &r, sizeof(U));
  }
}

template <class T>
struct WhereInner {
  void operator()(const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) const {
    constexpr int64_t ts = sizeof(T);
    if constexpr (!std::is_same_v<SelectBits<T>, std::nullptr_t>) {
      if (s[0] == 1 && s[3] == ts && (s[1] == ts || s[1] == 0) && (s[2] == ts || s[2] == 0)) {
        const bool8* c = reinterpret_cast<const bool8*>(p[0]);
        const T* x = reinterpret_cast<const T*>(p[1]);
        const T* y = reinterpret_cast<const T*>(p[2]);
        T* o = reinterpret_cast<T*>(p[3]);
        if (s[1] && s[2]) where_select<T, 1, 1>(c, x, y, o, n);
        else if (s[1]) where_select<T, 1, 0>(c, x, y, o, n);
        else if (s[2]) where_select<T, 0, 1>(c, x, y, o, n);
        else where_select<T, 0, 0>(c, x, y, o, n);
        return;
      }
    }
    if (s[0] == 1 && s[3] == ts && (s[1] == ts || s[1] == 0) && (s[2] == ts || s[2] == 0)) {
      // Contiguous output and condition; x and y contiguous or broadcast scalars.
      const bool8* c = reinterpret_cast<const bool8*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      const T* y = reinterpret_cast<const T*>(p[2]);
      T* o = reinterpret_cast<T*>(p[3]);
      const int64_t dx = s[1] ? 1 : 0, dy = s[2] ? 1 : 0;
      for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i * dx] : y[i * dy];
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const bool c = *reinterpret_cast<const bool8*>(p[0] + i * s[0]);
      *reinterpret_cast<T*>(p[3] + i * s[3]) =
          c ? *reinterpret_cast<const T*>(p[1] + i * s[1]) : *reinterpret_cast<const T*>(p[2] + i * s[2]);
    }
  }
};

// The dtypes with elementwise kernels: all but float16 and bfloat16 (computed in float32).
template <class F>
void visit_compute(DType t, F&& f) {
  switch (t) {
    case DType::Bool: f(bool8{}); return;
    case DType::Int8: f(int8_t{}); return;
    case DType::Int16: f(int16_t{}); return;
    case DType::Int32: f(int32_t{}); return;
    case DType::Int64: f(int64_t{}); return;
    case DType::UInt8: f(uint8_t{}); return;
    case DType::UInt16: f(uint16_t{}); return;
    case DType::UInt32: f(uint32_t{}); return;
    case DType::UInt64: f(uint64_t{}); return;
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    case DType::Complex64: f(complex64{}); return;
    case DType::Complex128: f(complex128{}); return;
    default: UMA_ASSERT(false && "no elementwise kernels for this dtype");
  }
}

}  // namespace

void binary(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  UMA_ASSERT(a.dtype() == b.dtype());
  visit_compute(a.dtype(), [&](auto t) { binary_typed<decltype(t)>(op, a, b, out); });
}

void binary_one(BinaryOp op, DType t, const void* a, const void* b, void* out) {
  visit_compute(t, [&](auto v) { binary_one_typed<decltype(v)>(op, a, b, out); });
}

void unary(UnaryOp op, const Array& a, const Array& out) {
  visit_compute(a.dtype(), [&](auto t) { unary_typed<decltype(t)>(op, a, out); });
}

void clip(const Array& x, const Array& lo, const Array& hi, const Array& out) {
  UMA_ASSERT(x.dtype() == lo.dtype() && x.dtype() == hi.dtype() && x.dtype() == out.dtype());
  visit_compute(x.dtype(), [&](auto t) { clip_typed<decltype(t)>(x, lo, hi, out); });
}

void where(const Array& cond, const Array& x, const Array& y, const Array& out) {
  std::array<const Array*, 4> ops{&cond, &x, &y, &out};
  auto L = make_loop<4>(out.shape(), ops);
  visit_dtype(out.dtype(), [&](auto t) { run_loop<4>(L, bases(ops), WhereInner<decltype(t)>{}); });
}

}  // namespace uma::kernels::cpu
