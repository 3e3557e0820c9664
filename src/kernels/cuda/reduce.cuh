// src/kernels/cuda/reduce.cuh — the reduction kernel templates (internal), instantiated per
// dtype group in reduce_{int,uint,float,complex}.cu and dispatched by reduce.cu.
//
// Output element o reduces the elements at offset_kept(o) + offset_red(r). Three kernels:
// - thread per output (few reduced elements, or the innermost axis is kept and there are
//   enough outputs to fill the GPU with a thread each: coalesced);
// - columns (the innermost axis kept but too few outputs to fill the GPU with a thread each,
//   such as a bias gradient, a sum over the rows of a matrix): column_reduce.cuh's pass, which
//   finishes in the same kernel with at most 32 splits (Note [Last block finishes] in
//   last_block.cuh) and in a second kernel, a block per output, beyond;
// - `splits` blocks per output, interleaved over the reduced range (grid-stride), with four
//   16-byte loads in flight per thread on a contiguous reduced axis and a shared-memory tree
//   at the end; with splits > 1 the blocks write partial accumulators to a workspace that a
//   second kernel combines (a full reduction of a large array runs on about 4 blocks per
//   multiprocessor: reduce_splits in reduce.cu).
//
// Values are loaded as float32 for float16/bfloat16 and as bool (byte != 0) for a bool element
// (bool8). Accumulators (the cpu kernels' policy, kernels/cpu/reduce_impl.h): sums, means and
// products of bool and signed integers in int64, of unsigned integers in uint64 (both wrap, as
// NumPy), of real floats in double (float16/bfloat16 are loaded as float32; float32/float16/
// bfloat16 results are rounded once at the end), of complex in complex128. max/min/argmax/
// argmin keep (value, index): ties and NaNs go to the smaller index, so the result is the
// first occurrence of the extreme, or of the first NaN (a complex value is NaN when either
// part is), whatever order the threads combine in; complex values compare lexicographically.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"
#include "kernels/to_bfloat16.h"

namespace uma::kernels::cuda_launch {

// Per-group entry points (cudaError_t; cudaErrorInvalidValue for a dtype outside the group).
int reduce_int(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
               cudaStream_t st);
int reduce_uint(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
                cudaStream_t st);
int reduce_float(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
                 cudaStream_t st);
int reduce_complex(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
                   cudaStream_t st);

namespace red {

using namespace cuda_dev;

template <class T> struct LoadT { using type = T; };
template <> struct LoadT<__half> { using type = float; };
template <> struct LoadT<__nv_bfloat16> { using type = float; };
template <> struct LoadT<bool8> { using type = bool; };
template <class T> using V_t = typename LoadT<T>::type;

template <class T> __device__ __forceinline__ V_t<T> load_v(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(x);  // byte != 0
  else return x;
}

template <class T>
using SumAcc_t = std::conditional_t<
    is_cx_v<T>, Cx<double>,
    std::conditional_t<std::is_same_v<T, bool8> || (std::is_integral_v<T> && std::is_signed_v<T>), int64_t,
                       std::conditional_t<std::is_integral_v<T>, uint64_t, double>>>;

template <class V>
struct ArgAcc {
  V v;
  int64_t i;  // -1: empty
};

template <class V> __device__ __forceinline__ bool is_nan(V x) {
  if constexpr (is_cx_v<V>) return cnan(x);
  else if constexpr (std::is_floating_point_v<V>) return x != x;
  else return false;
}
template <class V> __device__ __forceinline__ bool greater(V a, V b) {
  if constexpr (is_cx_v<V>) return a.re > b.re || (a.re == b.re && a.im > b.im);
  else return a > b;
}
template <class V> __device__ __forceinline__ bool equal(V a, V b) {
  if constexpr (is_cx_v<V>) return a.re == b.re && a.im == b.im;
  else return a == b;
}

/// Converts an accumulator (double, Cx<double>, int64/uint64, or the load type) to the
/// output element type.
template <class O, class A> __device__ __forceinline__ O to_out(A a) {
  if constexpr (std::is_same_v<O, A>) return a;
  else if constexpr (std::is_same_v<O, __half>) return __double2half(static_cast<double>(a));
  else if constexpr (std::is_same_v<O, __nv_bfloat16>) {
    __nv_bfloat16_raw r;
    r.x = kernels::bfloat16_bits(static_cast<double>(a));  // rounded once, as the cpu's
    return __nv_bfloat16(r);
  }
  else if constexpr (is_cx_v<O>) return O{static_cast<real_t<O>>(a.re), static_cast<real_t<O>>(a.im)};
  else return static_cast<O>(a);
}

template <int OP, class T>
struct PolicyOf {
  using V = V_t<T>;
  static constexpr bool kArg = OP == RArgMax || OP == RArgMin;
  static constexpr bool kExt = kArg || OP == RMax || OP == RMin;
  static constexpr bool kMaxLike = OP == RMax || OP == RArgMax;
  static constexpr bool kLogic = OP == RAll || OP == RAny;
  static constexpr bool kIntegral = std::is_integral_v<T> || std::is_same_v<T, bool8>;  // bool included
  using Sum = SumAcc_t<T>;
  using Acc = std::conditional_t<kExt, ArgAcc<V>, std::conditional_t<kLogic, bool, Sum>>;
  using Out = std::conditional_t<
      kArg, int64_t,
      std::conditional_t<kLogic, bool8,
      std::conditional_t<OP == RMax || OP == RMin, T,
      std::conditional_t<OP == RMean, std::conditional_t<kIntegral, double, T>,
                         std::conditional_t<kIntegral, Sum, T>>>>>;

  __device__ static Acc identity() {
    if constexpr (kExt) return Acc{V(), -1};
    else if constexpr (OP == RAll) return true;
    else if constexpr (OP == RAny) return false;
    else if constexpr (is_cx_v<Sum>) return Sum{OP == RProd ? 1.0 : 0.0, 0.0};
    else return Sum(OP == RProd ? 1 : 0);
  }
  __device__ static Acc load(T x0, int64_t r) {
    const V x = load_v(x0);
    if constexpr (kExt) return Acc{x, r};
    else if constexpr (kLogic) return nonzero(x);
    else if constexpr (is_cx_v<Sum>) return Sum{static_cast<double>(x.re), static_cast<double>(x.im)};
    else return static_cast<Sum>(x);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (OP == RSum || OP == RMean) {
      if constexpr (is_cx_v<Sum>) return Sum{a.re + b.re, a.im + b.im};
      else if constexpr (kIntegral) return static_cast<Sum>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      else return a + b;
    } else if constexpr (OP == RProd) {
      if constexpr (is_cx_v<Sum>) return cmul(a, b);
      else if constexpr (kIntegral) return static_cast<Sum>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      else return a * b;
    } else if constexpr (OP == RAll) {
      return a && b;
    } else if constexpr (OP == RAny) {
      return a || b;
    } else {  // extremes: order independent (ties and NaNs go to the smaller index)
      if (a.i < 0) return b;
      if (b.i < 0) return a;
      const bool an = is_nan(a.v), bn = is_nan(b.v);
      if (an || bn) {
        if (an && bn) return a.i < b.i ? a : b;
        return an ? a : b;
      }
      if (equal(a.v, b.v)) return a.i < b.i ? a : b;
      if constexpr (kMaxLike) return greater(a.v, b.v) ? a : b;
      else return greater(b.v, a.v) ? a : b;
    }
  }
  __device__ static Out finish(Acc a, int64_t n) {
    if constexpr (kArg) return a.i < 0 ? 0 : a.i;
    else if constexpr (kExt) return to_out<T>(a.v);
    else if constexpr (kLogic) return a;
    else if constexpr (OP == RMean) {
      const double dn = static_cast<double>(n);
      if constexpr (is_cx_v<Sum>) return to_out<Out>(Sum{a.re / dn, a.im / dn});
      else return to_out<Out>(static_cast<double>(a) / dn);
    } else {
      return to_out<Out>(a);
    }
  }
};

/// The accumulator policy of (OP, T): float32/float64 sums and means are column_reduce.cuh's
/// FloatSum (the one definition the generated reduction epilogues use too).
template <int OP, class T>
using Policy = std::conditional_t<(OP == RSum || OP == RMean) && (std::is_same_v<T, float> || std::is_same_v<T, double>),
                                  FloatSum<T, OP == RMean>, PolicyOf<OP, T>>;

template <int OP, class T>
__global__ void reduce_per_thread(const char* __restrict__ in, typename Policy<OP, T>::Out* __restrict__ out,
                                  ReduceGeometry g) {
  using P = Policy<OP, T>;
  for (int64_t o = global_index(); o < g.nout; o += grid_step()) {
    const char* base = in + kept_offset(o, g);
    typename P::Acc acc = P::identity();
    for (int64_t r = 0; r < g.rsize; ++r)
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(base + red_offset(r, g)), r));
    out[o] = P::finish(acc, g.rsize);
  }
}

template <int OP, class T>
__device__ typename Policy<OP, T>::Acc block_reduce(typename Policy<OP, T>::Acc acc) {
  using P = Policy<OP, T>;
  using Acc = typename P::Acc;
  __shared__ Acc sm[kThreads];
  sm[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) sm[threadIdx.x] = P::combine(sm[threadIdx.x], sm[threadIdx.x + w]);
    __syncthreads();
  }
  return sm[0];
}

// Block b reduces output b / splits: the `splits` blocks of an output interleave over its
// reduced range (thread t of split s reads elements s * blockDim + t, then every
// splits * blockDim further), so at any moment the whole grid reads one contiguous window of
// memory, which an H200 serves about 6% faster than as many separate streams as blocks
// (measured: 1 GiB float32 sum, 244 vs 258 us). `dense`: one reduced axis of unit element
// stride, read 16 bytes at a time with four loads in flight per thread.
template <int OP, class T>
__global__ void reduce_blocks(const char* __restrict__ in, typename Policy<OP, T>::Out* __restrict__ out,
                              typename Policy<OP, T>::Acc* __restrict__ partial, ReduceGeometry g, int64_t splits,
                              bool dense) {
  using P = Policy<OP, T>;
  using Acc = typename P::Acc;
  const int64_t o = blockIdx.x / splits, s = blockIdx.x % splits;
  const char* base = in + kept_offset(o, g);
  const int64_t bd = blockDim.x, step = splits * bd, t = s * bd + threadIdx.x, n = g.rsize;
  Acc acc = P::identity();
  constexpr int V = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));
  if (dense && V > 1) {
    const T* p = reinterpret_cast<const T*>(base);
    // Unaligned head [0, vlo), 16-byte vectors [vlo, vhi), tail [vhi, n). A row whose
    // elements are not aligned to their own size has no aligned vector: vlo = n.
    int64_t vlo = 0;
    while (vlo < n && (reinterpret_cast<uintptr_t>(p + vlo) & 15) != 0) ++vlo;
    const int64_t nv = (n - vlo) / V, vhi = vlo + nv * V;
    for (int64_t r = t; r < vlo; r += step) acc = P::combine(acc, P::load(p[r], r));
    const Vec<T, V>* pv = reinterpret_cast<const Vec<T, V>*>(p + vlo);
    int64_t k = t;
    for (; k + 3 * step < nv; k += 4 * step) {
      Vec<T, V> v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = pv[k + u * step];
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < V; ++j) acc = P::combine(acc, P::load(v[u].v[j], vlo + (k + u * step) * V + j));
    }
    for (; k < nv; k += step) {
      const Vec<T, V> v = pv[k];
#pragma unroll
      for (int j = 0; j < V; ++j) acc = P::combine(acc, P::load(v.v[j], vlo + k * V + j));
    }
    for (int64_t r = vhi + t; r < n; r += step) acc = P::combine(acc, P::load(p[r], r));
  } else {
    for (int64_t r = t; r < n; r += step)
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(base + red_offset(r, g)), r));
  }
  acc = block_reduce<OP, T>(acc);
  if (threadIdx.x == 0) {
    if (splits == 1) out[o] = P::finish(acc, g.rsize);
    else partial[blockIdx.x] = acc;
  }
}

template <class O>
struct StoreOut {
  O* out;
  __device__ __forceinline__ void operator()(int64_t o, O v) const { out[o] = v; }
};

// Columns (`inner_kept`): column_reduce.cuh's pass.
template <int OP, class T>
__global__ void reduce_columns(const char* __restrict__ in, typename Policy<OP, T>::Out* __restrict__ out,
                               typename Policy<OP, T>::Acc* __restrict__ partial, ReduceGeometry g, int64_t splits,
                               bool finish_here) {
  StoreOut<typename Policy<OP, T>::Out> store{out};
  reduce_columns_pass<Policy<OP, T>, T>(in, g, splits, partial, finish_here, store);
}

// The second pass: block o combines the `splits` partial accumulators of output o.
template <int OP, class T>
__global__ void reduce_finish(const typename Policy<OP, T>::Acc* __restrict__ partial,
                              typename Policy<OP, T>::Out* __restrict__ out, int64_t nout, int64_t splits, int64_t rsize) {
  using P = Policy<OP, T>;
  const int64_t o = blockIdx.x;
  typename P::Acc acc = P::identity();
  for (int64_t s = threadIdx.x; s < splits; s += blockDim.x) acc = P::combine(acc, partial[o * splits + s]);
  acc = block_reduce<OP, T>(acc);
  if (threadIdx.x == 0 && o < nout) out[o] = P::finish(acc, rsize);
}

template <int OP, class T>
int launch(const char* in, void* out0, const ReduceGeometry& g, int64_t splits, void* ws, cudaStream_t st) {
  using P = Policy<OP, T>;
  auto* out = static_cast<typename P::Out*>(out0);
  auto* partial = static_cast<typename P::Acc*>(ws);
  if (splits == 0) {
    reduce_per_thread<OP, T><<<grid_for(g.nout), kThreads, 0, st>>>(in, out, g);
  } else if (inner_kept(g, sizeof(T))) {
    const bool finish_here = finishes_in_one_kernel(g, splits);
    const dim3 grid(static_cast<unsigned>(column_blocks(g)), static_cast<unsigned>(splits));
    reduce_columns<OP, T><<<grid, kThreads, 0, st>>>(in, out, partial, g, splits, finish_here);
    if (splits > 1 && !finish_here)
      reduce_finish<OP, T><<<static_cast<unsigned>(g.nout), kThreads, 0, st>>>(partial, out, g.nout, splits, g.rsize);
  } else {
    const bool dense = g.nred == 1 && g.red_strides[0] == static_cast<int64_t>(sizeof(T));
    reduce_blocks<OP, T><<<static_cast<unsigned>(g.nout * splits), kThreads, 0, st>>>(in, out, partial, g, splits, dense);
    if (splits > 1)
      reduce_finish<OP, T><<<static_cast<unsigned>(g.nout), kThreads, 0, st>>>(partial, out, g.nout, splits, g.rsize);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int by_op(int op, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws, cudaStream_t st) {
  switch (op) {
    case RSum: return launch<RSum, T>(in, out, g, splits, ws, st);
    case RMean: return launch<RMean, T>(in, out, g, splits, ws, st);
    case RMax: return launch<RMax, T>(in, out, g, splits, ws, st);
    case RMin: return launch<RMin, T>(in, out, g, splits, ws, st);
    case RProd: return launch<RProd, T>(in, out, g, splits, ws, st);
    case RArgMax: return launch<RArgMax, T>(in, out, g, splits, ws, st);
    case RArgMin: return launch<RArgMin, T>(in, out, g, splits, ws, st);
    case RAll: return launch<RAll, T>(in, out, g, splits, ws, st);
    case RAny: return launch<RAny, T>(in, out, g, splits, ws, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class T>
int64_t acc_bytes(int op) {
  switch (op) {
    case RMax: case RMin: case RArgMax: case RArgMin: return sizeof(typename Policy<RArgMax, T>::Acc);
    case RAll: case RAny: return sizeof(bool);
    default: return sizeof(typename Policy<RSum, T>::Acc);
  }
}

}  // namespace red

#define UMA_RED_DEFINE_GROUP(G, LIST)                                                                       \
  int reduce_##G(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws, \
                 cudaStream_t st) {                                                                         \
    switch (dtype) {                                                                                        \
      LIST(UMA_RED_CASE)                                                                                    \
      default: return static_cast<int>(cudaErrorInvalidValue);                                              \
    }                                                                                                       \
  }
#define UMA_RED_CASE(CODE, T) case CODE: return red::by_op<T>(op, in, out, g, splits, ws, st);

}  // namespace uma::kernels::cuda_launch
