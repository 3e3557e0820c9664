// src/kernels/cpu/elementwise_kernels.h — the strided loops of the elementwise kernels, as
// templates over the element type. Each dtype family instantiates them in its own file
// (elementwise_{int,uint,float,complex}.cpp) so that a parallel build compiles them at once;
// elementwise.cpp dispatches on the dtype.
#pragma once
#include <type_traits>

#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

// The per-type entry points (explicitly instantiated in the family files).
template <class T> void binary_typed(BinaryOp op, const Array& a, const Array& b, const Array& out);
template <class T> void unary_typed(UnaryOp op, const Array& a, const Array& out);
template <class T> void clip_typed(const Array& x, const Array& lo, const Array& hi, const Array& out);
template <class T> void binary_one_typed(BinaryOp op, const void* a, const void* b, void* out);

namespace detail {

template <class T, BinaryOp OP>
struct BinaryInner {
  using O = stored_t<decltype(apply_binary<T, OP>(T{}, T{}))>;
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

template <class T, UnaryOp OP>
struct UnaryInner {
  using O = stored_t<decltype(apply_unary<T, OP>(T{}))>;
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
struct ClipInner {
  void operator()(const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<T*>(p[3] + i * s[3]) = apply_clip<T>(*reinterpret_cast<const T*>(p[0] + i * s[0]),
                                                             *reinterpret_cast<const T*>(p[1] + i * s[1]),
                                                             *reinterpret_cast<const T*>(p[2] + i * s[2]));
  }
};

template <class T, BinaryOp OP>
void run_binary(const Loop<3>& L, const std::array<char*, 3>& B) {
  if constexpr (binary_supported<T>(OP)) run_loop<3>(L, B, BinaryInner<T, OP>{});
  else UMA_ASSERT(false && "binary op has no kernel for this dtype");
}

template <class T, BinaryOp OP>
void one_binary(const void* a, const void* b, void* out) {
  if constexpr (binary_supported<T>(OP)) {
    using O = stored_t<decltype(apply_binary<T, OP>(T{}, T{}))>;
    *static_cast<O*>(out) = apply_binary<T, OP>(*static_cast<const T*>(a), *static_cast<const T*>(b));
  } else {
    UMA_ASSERT(false && "binary op has no kernel for this dtype");
  }
}

template <class T, UnaryOp OP>
void run_unary(const Loop<2>& L, const std::array<char*, 2>& B) {
  if constexpr (unary_supported<T>(OP)) run_loop<2>(L, B, UnaryInner<T, OP>{});
  else UMA_ASSERT(false && "unary op has no kernel for this dtype");
}

}  // namespace detail

template <class T>
void binary_typed(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  std::array<const Array*, 3> ops{&a, &b, &out};
  auto L = make_loop<3>(out.shape(), ops);
  auto B = bases(ops);
  switch (op) {
#define UMA_CASE(Id, ...) case BinaryOp::Id: detail::run_binary<T, BinaryOp::Id>(L, B); return;
    UMA_BINARY_OPS(UMA_CASE)
#undef UMA_CASE
  }
}

// One element: the same scalar function as the loop (bitwise the same result), no loop set-up.
template <class T>
void binary_one_typed(BinaryOp op, const void* a, const void* b, void* out) {
  switch (op) {
#define UMA_CASE(Id, ...) case BinaryOp::Id: detail::one_binary<T, BinaryOp::Id>(a, b, out); return;
    UMA_BINARY_OPS(UMA_CASE)
#undef UMA_CASE
  }
}

template <class T>
void unary_typed(UnaryOp op, const Array& a, const Array& out) {
  std::array<const Array*, 2> ops{&a, &out};
  auto L = make_loop<2>(out.shape(), ops);
  auto B = bases(ops);
  switch (op) {
#define UMA_CASE(Id, ...) case UnaryOp::Id: detail::run_unary<T, UnaryOp::Id>(L, B); return;
    UMA_UNARY_OPS(UMA_CASE)
#undef UMA_CASE
  }
}

template <class T>
void clip_typed(const Array& x, const Array& lo, const Array& hi, const Array& out) {
  std::array<const Array*, 4> ops{&x, &lo, &hi, &out};
  run_loop<4>(make_loop<4>(out.shape(), ops), bases(ops), detail::ClipInner<T>{});
}

// Declared in elementwise.cpp for every kernel type, so that the dispatcher does not
// instantiate the kernels a second time.
#define UMA_EXTERN_ELEMENTWISE(T)                                                                 \
  extern template void binary_typed<T>(BinaryOp, const Array&, const Array&, const Array&);       \
  extern template void unary_typed<T>(UnaryOp, const Array&, const Array&);                       \
  extern template void clip_typed<T>(const Array&, const Array&, const Array&, const Array&);      \
  extern template void binary_one_typed<T>(BinaryOp, const void*, const void*, void*);

#define UMA_INSTANTIATE_ELEMENTWISE(T)                                                        \
  template void binary_typed<T>(BinaryOp, const Array&, const Array&, const Array&);          \
  template void unary_typed<T>(UnaryOp, const Array&, const Array&);                          \
  template void clip_typed<T>(const Array&, const Array&, const Array&, const Array&);          \
  template void binary_one_typed<T>(BinaryOp, const void*, const void*, void*);

}  // namespace uma::kernels::cpu
