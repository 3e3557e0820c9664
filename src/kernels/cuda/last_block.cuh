// src/kernels/cuda/last_block.cuh — "the last block to arrive finishes" (internal): the
// arrival counters that let a kernel split a sum over blocks and combine the blocks' partial
// results in the same launch, used by column_reduce.cuh and tiled_gemm.cuh. NVRTC reads it
// from the copy embedded in the library.
//
// Note [Last block finishes]
// A sum split over blocks used to end with a second kernel that combined the blocks' partial
// results. Here each block, after writing its partials, fences (its writes are visible
// device-wide before anything it does next) and counts itself in on its group's arrival
// counter; the block that counts last fences again and combines the partials in a fixed order
// (the split order), the order a second kernel would use, so the bits do not depend on which
// block came last. It then resets the counter to zero, which leaves every counter zero between
// launches. The counters are a per-module device array (zero at load, each CUDA context its
// own copy): uma runs its kernels on one stream per device (memory/cuda/runtime.cpp), and
// graph replays on that stream, so no two launches that use the counters ever overlap.
#pragma once
#include <cstdint>

namespace uma::kernels::cuda_launch::red {

/// Groups (column blocks, product tiles) the arrival counters cover; a kernel with more
/// groups finishes in a second kernel.
constexpr int64_t kArrivalCounters = 8192;
/// The most splits whose partials one thread per output combines.
constexpr int64_t kFinishPerThread = 32;
static __device__ unsigned int block_arrivals[kArrivalCounters];

/// Whether this block is the last of the `blocks` blocks of group `group` to call it (Note
/// [Last block finishes]); called by every thread of the block after it wrote its partials, it
/// returns the same value in each, and in the last block the other blocks' partials are then
/// visible (read them with load_partial).
__device__ __forceinline__ bool last_block_of(int64_t group, int64_t blocks) {
  __shared__ bool last;
  __threadfence();  // this block's partials, visible before it counts itself in
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const unsigned prior = atomicAdd(&block_arrivals[group], 1u);
    last = prior == static_cast<unsigned>(blocks - 1);
    if (last) block_arrivals[group] = 0;  // every block of the group has counted
  }
  __syncthreads();
  const bool mine = last;
  if (mine) __threadfence();  // the other blocks' partials, seen after their counts
  __syncthreads();  // `last` is read by every thread before a later call writes it
  return mine;
}

/// A partial result written by another block, read from L2 (past this multiprocessor's L1,
/// which is not coherent with other multiprocessors' writes).
template <class A>
__device__ __forceinline__ A load_partial(const A* p) {
  A v;
  if constexpr (sizeof(A) % 8 == 0 && alignof(A) >= 8) {
    auto* w = reinterpret_cast<unsigned long long*>(&v);
    const auto* q = reinterpret_cast<const unsigned long long*>(p);
#pragma unroll
    for (unsigned k = 0; k < sizeof(A) / 8; ++k) w[k] = __ldcg(q + k);
  } else if constexpr (sizeof(A) % 4 == 0 && alignof(A) >= 4) {
    auto* w = reinterpret_cast<unsigned int*>(&v);
    const auto* q = reinterpret_cast<const unsigned int*>(p);
#pragma unroll
    for (unsigned k = 0; k < sizeof(A) / 4; ++k) w[k] = __ldcg(q + k);
  } else {
    auto* w = reinterpret_cast<unsigned char*>(&v);
    const auto* q = reinterpret_cast<const unsigned char*>(p);
#pragma unroll
    for (unsigned k = 0; k < sizeof(A); ++k) w[k] = __ldcg(q + k);
  }
  return v;
}

}  // namespace uma::kernels::cuda_launch::red
