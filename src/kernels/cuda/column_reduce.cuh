// src/kernels/cuda/column_reduce.cuh — the column reduction as a device function (internal),
// shared by reduce.cuh's kernels and the reduction-with-epilogue kernels that
// chain_compiler.cpp generates (Note [Reduction epilogues] there), so that both combine every
// output's elements in the same order and give the same bits. NVRTC reads it from the copy
// embedded in the library, so it includes only headers embedded with it.
//
// Columns: the innermost kept axis has unit stride (neighbouring outputs are neighbouring
// addresses), such as a bias gradient, a sum over the rows of a matrix. Lane x of warp y in
// block (bx, by) reduces output bx * 32 + x over the reduced elements by * 8 + y, then every
// splits * 8 further (coalesced: a warp reads 32 neighbouring outputs); the block's 8 warps
// combine through shared memory in warp order. With splits > 1 each block writes its partial
// accumulators, and the last of a column's blocks to finish combines them in split order
// (Note [Last block finishes] in last_block.cuh).
#pragma once
#include <cstdint>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/last_block.cuh"
#include "kernels/cuda/ops_launch.h"

namespace uma::kernels::cuda_launch::red {

constexpr int kColumnLanes = 32, kColumnWarps = kThreads / kColumnLanes;

/// The sum (kMean: mean) of float32/float64 elements: accumulated in double, rounded once to T
/// at the end (kernels/cpu/reduce_impl.h's policy); reduce.cuh's Policy for those ops and dtypes.
template <class T, bool kMean>
struct FloatSum {
  using Acc = double;
  using Out = T;
  __device__ static Acc identity() { return 0.0; }
  __device__ static Acc load(T x, int64_t) { return static_cast<double>(x); }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Out finish(Acc a, int64_t n) {
    if constexpr (kMean) return static_cast<T>(a / static_cast<double>(n));
    else return static_cast<T>(a);
  }
};

/// Whether the innermost kept axis has unit element stride (neighbouring outputs read
/// neighbouring addresses): a column reduction.
__host__ __device__ inline bool inner_kept(const ReduceGeometry& g, int64_t itemsize) {
  return g.nkept > 0 && g.kept_strides[g.nkept - 1] == itemsize;
}

/// Column blocks of 32 outputs of a column reduction.
__host__ __device__ inline int64_t column_blocks(const ReduceGeometry& g) {
  return (g.nout + kColumnLanes - 1) / kColumnLanes;
}
/// Whether a column reduction of `splits` splits finishes in its own kernel, its last blocks
/// combining the partials (at most kFinishPerThread splits, a counter for each column block).
__host__ __device__ inline bool finishes_in_one_kernel(const ReduceGeometry& g, int64_t splits) {
  return splits <= kFinishPerThread && column_blocks(g) <= kArrivalCounters;
}

__device__ __forceinline__ int64_t kept_offset(int64_t o, const ReduceGeometry& g) {
  int64_t off = 0;
  for (int d = g.nkept - 1; d >= 0; --d) {
    const int64_t q = o / g.kept_shape[d];
    off += (o - q * g.kept_shape[d]) * g.kept_strides[d];
    o = q;
  }
  return off;
}
__device__ __forceinline__ int64_t red_offset(int64_t r, const ReduceGeometry& g) {
  if (g.nred == 1) return r * g.red_strides[0];
  int64_t off = 0;
  for (int d = g.nred - 1; d >= 0; --d) {
    const int64_t q = r / g.red_shape[d];
    off += (r - q * g.red_shape[d]) * g.red_strides[d];
    r = q;
  }
  return off;
}

/// The block's share of a column reduction (P: an accumulator policy, T the element type):
/// calls store(o, value) once for each output o this block finishes. With splits > 1 the
/// block writes its partials to partial[o * splits + split]; `finish_here` (splits at most
/// kFinishPerThread, gridDim.x at most kArrivalCounters) makes the last of each column's blocks
/// finish it, else a second kernel does. Launch with kThreads threads and grid (column
/// blocks, splits); every thread of the block must call it.
template <class P, class T, class Store>
__device__ __forceinline__ void reduce_columns_pass(const char* __restrict__ in, const ReduceGeometry& g,
                                                    int64_t splits, typename P::Acc* __restrict__ partial,
                                                    bool finish_here, Store& store) {
  using Acc = typename P::Acc;
  __shared__ Acc sm[kColumnWarps][kColumnLanes];
  const int x = static_cast<int>(threadIdx.x) % kColumnLanes, y = static_cast<int>(threadIdx.x) / kColumnLanes;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kColumnLanes + x, split = blockIdx.y;
  Acc acc = P::identity();
  if (o < g.nout) {
    const char* base = in + kept_offset(o, g);
    const int64_t step = splits * kColumnWarps;
    for (int64_t r = split * kColumnWarps + y; r < g.rsize; r += step)
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(base + red_offset(r, g)), r));
  }
  sm[y][x] = acc;
  __syncthreads();
  if (y == 0 && o < g.nout) {
    for (int w = 1; w < kColumnWarps; ++w) acc = P::combine(acc, sm[w][x]);
    if (splits == 1) store(o, P::finish(acc, g.rsize));
    else partial[o * splits + split] = acc;
  }
  if (splits == 1 || !finish_here || !last_block_of(blockIdx.x, splits)) return;
  if (y == 0 && o < g.nout) {
    Acc total = P::identity();
    for (int64_t s = 0; s < splits; ++s) total = P::combine(total, load_partial(partial + o * splits + s));
    store(o, P::finish(total, g.rsize));
  }
}

}  // namespace uma::kernels::cuda_launch::red
