// src/kernels/cuda/elementwise.cuh — the elementwise kernel templates (internal), instantiated
// per dtype group in elementwise_{sint,uint,f32,f64,c64,c128}.cu (so nvcc compiles the groups
// in parallel) and dispatched by elementwise.cu.
//
// Two paths per (op, dtype): a dense one (every operand contiguous, or for binary ops a
// scalar) that moves 16 bytes per load when the pointers are 16-byte aligned, and a general
// strided one that computes each operand's offset from the merged shape (also used for dense
// operands that are not 16-byte aligned). Both are grid-stride loops over at most a few waves
// of blocks per multiprocessor. Only the (op, dtype) pairs of support.h are instantiated.
#pragma once
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"

namespace uma::kernels::cuda_launch {

// Per-group entry points: each returns a cudaError_t, cudaErrorInvalidValue for a pair
// without a kernel.
#define UMA_EW_GROUP(G)                                                                                             \
  int binary_##G(int op, int dtype, const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st); \
  int unary_##G(int op, int dtype, const Operand& a, void* out, const Space& s, cudaStream_t st);                   \
  int clip_##G(int dtype, const Operand& a, const Operand& lo, const Operand& hi, void* out, const Space& s,         \
               cudaStream_t st);
UMA_EW_GROUP(sint)
UMA_EW_GROUP(uint)
UMA_EW_GROUP(f32)
UMA_EW_GROUP(f64)
UMA_EW_GROUP(c64)
UMA_EW_GROUP(c128)
#undef UMA_EW_GROUP

namespace ew {

using namespace cuda_dev;

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

template <class T>
constexpr int vec_width() { return sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T)); }

// Dense: element i of a (or a[0] when sa) and b; the first n / V * V elements as V-wide
// vectors (16-byte aligned pointers), the rest one by one.
template <class T, int OP, int V>
__global__ void binary_dense(const T* __restrict__ a, const T* __restrict__ b, bool sa, bool sb,
                             BinOut<T, OP>* __restrict__ out, int64_t n) {
  using O = BinOut<T, OP>;
  const int64_t nv = V > 1 ? n / V : 0;
  const T a0 = sa ? a[0] : T(), b0 = sb ? b[0] : T();
  for (int64_t i = global_index(); i < nv; i += grid_step()) {
    Vec<T, V> va, vb;
    if (!sa) va = reinterpret_cast<const Vec<T, V>*>(a)[i];
    if (!sb) vb = reinterpret_cast<const Vec<T, V>*>(b)[i];
    Vec<O, V> vo;
#pragma unroll
    for (int k = 0; k < V; ++k) vo.v[k] = apply_binary<T, OP>(sa ? a0 : va.v[k], sb ? b0 : vb.v[k]);
    reinterpret_cast<Vec<O, V>*>(out)[i] = vo;
  }
  for (int64_t i = nv * V + global_index(); i < n; i += grid_step())
    out[i] = apply_binary<T, OP>(sa ? a0 : a[i], sb ? b0 : b[i]);
}

template <class T, int OP>
__global__ void binary_strided(Operand a, Operand b, BinOut<T, OP>* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    const T x = *reinterpret_cast<const T*>(a.ptr + offset_of(i, s, a));
    const T y = *reinterpret_cast<const T*>(b.ptr + offset_of(i, s, b));
    out[i] = apply_binary<T, OP>(x, y);
  }
}

template <class T, int OP>
int launch_binary(const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) {
  using O = BinOut<T, OP>;
  constexpr int V = vec_width<T>();
  const bool sa = s.dense && is_scalar_operand(s, a), sb = s.dense && is_scalar_operand(s, b);
  if (s.dense && (V == 1 || ((sa || aligned16(a.ptr)) && (sb || aligned16(b.ptr)) && aligned16(out)))) {
    binary_dense<T, OP, V><<<grid_for((s.n + V - 1) / V), kThreads, 0, st>>>(
        reinterpret_cast<const T*>(a.ptr), reinterpret_cast<const T*>(b.ptr), sa, sb, static_cast<O*>(out), s.n);
  } else {
    binary_strided<T, OP><<<grid_for(s.n), kThreads, 0, st>>>(a, b, static_cast<O*>(out), s);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T, int OP, int V>
__global__ void unary_dense(const T* __restrict__ a, UnOut<T, OP>* __restrict__ out, int64_t n) {
  using O = UnOut<T, OP>;
  const int64_t nv = V > 1 ? n / V : 0;
  for (int64_t i = global_index(); i < nv; i += grid_step()) {
    const Vec<T, V> va = reinterpret_cast<const Vec<T, V>*>(a)[i];
    Vec<O, V> vo;
#pragma unroll
    for (int k = 0; k < V; ++k) vo.v[k] = apply_unary<T, OP>(va.v[k]);
    reinterpret_cast<Vec<O, V>*>(out)[i] = vo;
  }
  for (int64_t i = nv * V + global_index(); i < n; i += grid_step()) out[i] = apply_unary<T, OP>(a[i]);
}

template <class T, int OP>
__global__ void unary_strided(Operand a, UnOut<T, OP>* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step())
    out[i] = apply_unary<T, OP>(*reinterpret_cast<const T*>(a.ptr + offset_of(i, s, a)));
}

template <class T, int OP>
int launch_unary(const Operand& a, void* out, const Space& s, cudaStream_t st) {
  using O = UnOut<T, OP>;
  constexpr int V = vec_width<T>();
  // Unary spaces are dense only when the operand is contiguous (never a broadcast scalar).
  if (s.dense && (V == 1 || (aligned16(a.ptr) && aligned16(out)))) {
    unary_dense<T, OP, V><<<grid_for((s.n + V - 1) / V), kThreads, 0, st>>>(reinterpret_cast<const T*>(a.ptr),
                                                                           static_cast<O*>(out), s.n);
  } else {
    unary_strided<T, OP><<<grid_for(s.n), kThreads, 0, st>>>(a, static_cast<O*>(out), s);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
__global__ void clip_kernel(Operand a, Operand lo, Operand hi, T* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    const T x = *reinterpret_cast<const T*>(a.ptr + offset_of(i, s, a));
    const T l = *reinterpret_cast<const T*>(lo.ptr + offset_of(i, s, lo));
    const T h = *reinterpret_cast<const T*>(hi.ptr + offset_of(i, s, hi));
    out[i] = apply_clip(x, l, h);
  }
}

template <class T, int OP>
int bin_case(const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) {
  if constexpr (binary_ok(OP, dt_of<T>())) return launch_binary<T, OP>(a, b, out, s, st);
  else return kInvalid;
}
template <class T, int OP>
int un_case(const Operand& a, void* out, const Space& s, cudaStream_t st) {
  if constexpr (unary_ok(OP, dt_of<T>())) return launch_unary<T, OP>(a, out, s, st);
  else return kInvalid;
}

template <class T>
int binary_t(int op, const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) {
  switch (op) {
#define UMA_BIN(Id, ...) case Id: return bin_case<T, Id>(a, b, out, s, st);
    UMA_BINARY_OPS(UMA_BIN)
#undef UMA_BIN
    default: return kInvalid;
  }
}

template <class T>
int unary_t(int op, const Operand& a, void* out, const Space& s, cudaStream_t st) {
  switch (op) {
#define UMA_UN(Id, ...) case Id: return un_case<T, Id>(a, out, s, st);
    UMA_UNARY_OPS(UMA_UN)
#undef UMA_UN
    default: return kInvalid;
  }
}

template <class T>
int clip_t(const Operand& a, const Operand& lo, const Operand& hi, void* out, const Space& s, cudaStream_t st) {
  clip_kernel<T><<<grid_for(s.n), kThreads, 0, st>>>(a, lo, hi, static_cast<T*>(out), s);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace ew

// Defines the three entry points of a group; LIST(X) calls X(code, type) for its dtypes.
#define UMA_EW_DEFINE_GROUP(G, LIST)                                                                                \
  int binary_##G(int op, int dtype, const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) { \
    switch (dtype) {                                                                                               \
      LIST(UMA_EW_BIN_CASE)                                                                                        \
      default: return ew::kInvalid;                                                                                \
    }                                                                                                              \
  }                                                                                                                \
  int unary_##G(int op, int dtype, const Operand& a, void* out, const Space& s, cudaStream_t st) {                  \
    switch (dtype) {                                                                                               \
      LIST(UMA_EW_UN_CASE)                                                                                         \
      default: return ew::kInvalid;                                                                                \
    }                                                                                                              \
  }                                                                                                                \
  int clip_##G(int dtype, const Operand& a, const Operand& lo, const Operand& hi, void* out, const Space& s,         \
               cudaStream_t st) {                                                                                  \
    switch (dtype) {                                                                                               \
      LIST(UMA_EW_CLIP_CASE)                                                                                       \
      default: return ew::kInvalid;                                                                                \
    }                                                                                                              \
  }
#define UMA_EW_BIN_CASE(CODE, T) case CODE: return ew::binary_t<T>(op, a, b, out, s, st);
#define UMA_EW_UN_CASE(CODE, T) case CODE: return ew::unary_t<T>(op, a, out, s, st);
#define UMA_EW_CLIP_CASE(CODE, T) case CODE: return ew::clip_t<T>(a, lo, hi, out, s, st);

}  // namespace uma::kernels::cuda_launch
