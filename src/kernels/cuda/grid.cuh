// src/kernels/cuda/grid.cuh — launch geometry and strided indexing shared by the .cu kernels
// (internal). Kernels use grid-stride loops; grids are capped at a few waves of the
// multiprocessors so every block stays resident and loops over the rest.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/ops_launch.h"

namespace uma::kernels::cuda_launch {

constexpr int kThreads = 256;

/// Blocks for `work` items of kThreads-thread blocks, at most `waves` blocks per multiprocessor.
inline unsigned grid_for(int64_t work, int waves = 8) {
  int64_t blocks = (work + kThreads - 1) / kThreads;
  const int64_t cap = static_cast<int64_t>(sm_count()) * waves;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

__device__ __forceinline__ int64_t global_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// Byte offset of element i (C order over s.shape) in an operand.
__device__ __forceinline__ int64_t offset_of(int64_t i, const Space& s, const Operand& a) {
  int64_t off = 0;
  for (int d = s.ndim - 1; d >= 0; --d) {
    const int64_t q = i / s.shape[d];
    off += (i - q * s.shape[d]) * a.byte_strides[d];
    i = q;
  }
  return off;
}

/// Whether an operand of a dense space is a scalar (all strides 0).
inline bool is_scalar_operand(const Space& s, const Operand& a) {
  for (int d = 0; d < s.ndim; ++d)
    if (a.byte_strides[d] != 0) return false;
  return true;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

}  // namespace uma::kernels::cuda_launch
