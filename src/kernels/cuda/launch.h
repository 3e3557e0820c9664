// src/kernels/cuda/launch.h — plain-C++ launchers of the .cu kernels (internal). Kept free of
// uma headers so that nvcc compiles the kernels in C++17 without the C++20 host headers.
#pragma once
#include <cstdint>

namespace uma::kernels::cuda_launch {

constexpr int kMaxDims = 16;

/// Geometry of a strided source: element i (C order over shape) is at
/// src + sum_k idx_k * byte_strides[k].
struct StridedGeometry {
  int32_t ndim;
  int64_t shape[kMaxDims];
  int64_t byte_strides[kMaxDims];
};

/// dst[i] = element i of the strided source, for n elements of `itemsize` bytes (1, 2, 4, 8
/// or 16); dst is contiguous. Queued on `stream` (a cudaStream_t). Returns a cudaError_t.
int strided_gather(const void* src, void* dst, const StridedGeometry& g, int64_t n, int itemsize, void* stream);
/// dst (a strided view: element i, C order over g.shape, at dst + offset of i) = src[i]
/// (contiguous) for n elements of `itemsize` bytes (1, 2, 4, 8 or 16). The inverse of
/// strided_gather; dst's elements must not overlap.
int strided_scatter(const void* src, void* dst, const StridedGeometry& g, int64_t n, int itemsize, void* stream);

/// dst[i] = the element at host address `value`, for n contiguous elements of `itemsize` bytes
/// (1, 2, 4, 8 or 16); the element is passed to the kernel by value. Queued on `stream`.
/// Returns a cudaError_t.
int fill(void* dst, const void* value, int64_t n, int itemsize, void* stream);

/// Copies queued as one kernel (copy_batch in kernels/cuda_kernels.h): per job, bytes[k] bytes
/// from src[k] to dst[k], both 16-byte aligned and not overlapping (16-byte units, then the
/// last bytes one by one).
constexpr int kCopyJobs = 32;
struct CopyJobs {
  const void* src[kCopyJobs];
  void* dst[kCopyJobs];
  int64_t bytes[kCopyJobs];
  int n;
};
/// Queues the `jobs.n` copies of `jobs` on `stream` (one block row per job; `most` is the
/// largest byte count). Returns a cudaError_t.
int copy_jobs(const CopyJobs& jobs, int64_t most, void* stream);

}  // namespace uma::kernels::cuda_launch
