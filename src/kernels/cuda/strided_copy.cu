// Packing a strided device view into contiguous memory (the GPU side of copies and transfers
// of non-contiguous cuda arrays), the inverse: writing contiguous elements into a strided
// view (assignment into device views), and filling contiguous memory with one element. Grid-stride loop sized to the multiprocessor count.
#include <cuda_runtime.h>

#include <cstring>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/ops_launch.h"

namespace uma::kernels::cuda_launch {

namespace {

template <int B>
struct alignas(B < 16 ? B : 16) Bytes {
  unsigned char b[B];
};

// Byte offset of element i (C order over g.shape) in the strided view.
__device__ __forceinline__ int64_t byte_offset(int64_t i, const StridedGeometry& g) {
  int64_t rem = i, off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t q = rem / g.shape[d];
    off += (rem - q * g.shape[d]) * g.byte_strides[d];
    rem = q;
  }
  return off;
}

template <class T>
__global__ void gather_kernel(const char* __restrict__ src, T* __restrict__ dst, StridedGeometry g, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    dst[i] = *reinterpret_cast<const T*>(src + byte_offset(i, g));
  }
}

template <class T>
__global__ void scatter_kernel(const T* __restrict__ src, char* __restrict__ dst, StridedGeometry g, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    *reinterpret_cast<T*>(dst + byte_offset(i, g)) = src[i];
  }
}

template <class T>
int launch(const void* src, void* dst, const StridedGeometry& g, int64_t n, void* stream, bool scatter = false) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sm_count()) * 8;  // cached: no driver query per launch
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  if (scatter)
    scatter_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(src), static_cast<char*>(dst), g, n);
  else
    gather_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const char*>(src), static_cast<T*>(dst), g, n);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
__global__ void fill_kernel(T* __restrict__ dst, T value, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = value;
}

template <class T>
int launch_fill(void* dst, const void* value, int64_t n, void* stream) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sm_count()) * 8;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  T v;
  memcpy(&v, value, sizeof(T));
  fill_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<T*>(dst),
                                                                                                     v, n);
  return static_cast<int>(cudaGetLastError());
}

// Row blockIdx.y of the grid copies job blockIdx.y: 16-byte units (grid-stride over x), then
// the last bytes (fewer than 16), one per thread of the first block.
__global__ void copy_jobs_kernel(CopyJobs jobs) {
  const int k = blockIdx.y;
  const uint4* __restrict__ src = static_cast<const uint4*>(jobs.src[k]);
  uint4* __restrict__ dst = static_cast<uint4*>(jobs.dst[k]);
  const int64_t n = jobs.bytes[k] / 16;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n; i += step) dst[i] = src[i];
  const int64_t tail = jobs.bytes[k] - n * 16;
  if (first < tail)
    reinterpret_cast<unsigned char*>(dst + n)[first] = reinterpret_cast<const unsigned char*>(src + n)[first];
}

}  // namespace

int copy_jobs(const CopyJobs& jobs, int64_t most, void* stream) {
  if (jobs.n <= 0 || most <= 0) return 0;
  if (jobs.n > kCopyJobs) return static_cast<int>(cudaErrorInvalidValue);
  const int threads = 256;
  int64_t blocks = (most / 16 + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sm_count()) * 8;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;  // a job of fewer than 16 bytes: its tail alone
  copy_jobs_kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(jobs.n)), threads, 0,
                     static_cast<cudaStream_t>(stream)>>>(jobs);
  return static_cast<int>(cudaGetLastError());
}

int fill(void* dst, const void* value, int64_t n, int itemsize, void* stream) {
  if (n == 0) return 0;
  switch (itemsize) {
    case 1: return launch_fill<unsigned char>(dst, value, n, stream);
    case 2: return launch_fill<unsigned short>(dst, value, n, stream);
    case 4: return launch_fill<unsigned int>(dst, value, n, stream);
    case 8: return launch_fill<unsigned long long>(dst, value, n, stream);
    case 16: return launch_fill<Bytes<16>>(dst, value, n, stream);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int strided_gather(const void* src, void* dst, const StridedGeometry& g, int64_t n, int itemsize, void* stream) {
  if (n == 0) return 0;
  switch (itemsize) {
    case 1: return launch<unsigned char>(src, dst, g, n, stream);
    case 2: return launch<unsigned short>(src, dst, g, n, stream);
    case 4: return launch<unsigned int>(src, dst, g, n, stream);
    case 8: return launch<unsigned long long>(src, dst, g, n, stream);
    case 16: return launch<Bytes<16>>(src, dst, g, n, stream);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int strided_scatter(const void* src, void* dst, const StridedGeometry& g, int64_t n, int itemsize, void* stream) {
  if (n == 0) return 0;
  switch (itemsize) {
    case 1: return launch<unsigned char>(src, dst, g, n, stream, true);
    case 2: return launch<unsigned short>(src, dst, g, n, stream, true);
    case 4: return launch<unsigned int>(src, dst, g, n, stream, true);
    case 8: return launch<unsigned long long>(src, dst, g, n, stream, true);
    case 16: return launch<Bytes<16>>(src, dst, g, n, stream, true);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
