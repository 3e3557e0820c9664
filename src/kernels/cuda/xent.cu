// Softmax cross-entropy forward and backward (launchers in kernels/cuda/ops_launch.h): one
// warp per row; the row's max and sum of exponentials are warp-shuffle reductions.
#include <cstdint>

#include "kernels/cuda/grid.cuh"

namespace uma::kernels::cuda_launch {

namespace {

template <class T>
__device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) {
    const T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = (v != v || v > w) ? v : w;
  }
  return v;
}
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T, class L>
__global__ void xent_kernel(bool backward, bool one_hot_rows, const T* __restrict__ z, const L* __restrict__ y,
                            const T* __restrict__ g, int64_t gstride, T* __restrict__ out, int64_t n, int64_t c, int* bad) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t i = global_index() / 32; i < n; i += warps) {
    const T* row = z + i * c;
    const int64_t label = static_cast<int64_t>(y[i]);
    const bool ok = label >= 0 && label < c;
    if (!ok && lane == 0 && bad != nullptr) *bad = 1;
    T m = row[0];
    for (int64_t j = lane; j < c; j += 32) m = (m != m || m > row[j]) ? m : row[j];
    m = warp_max(m);
    T s = 0;
    for (int64_t j = lane; j < c; j += 32) s += exp(row[j] - m);
    s = warp_sum(s);
    // A bad label's row is NaN, or with one_hot_rows the zero row of one_hot: 0, NaN where the
    // product it stands for is (kernels/cpu/xent.cpp): s is NaN, or the gradient is not finite.
    const T nan = T(0) / T(0);
    if (!backward) {
      if (lane == 0) out[i] = ok ? m + log(s) - row[label] : one_hot_rows && s == s ? T(0) : nan;
    } else {
      const T gi = g[i * gstride];
      const T bad_row = one_hot_rows && s == s && gi - gi == T(0) ? T(0) : nan;
      T* o = out + i * c;
      for (int64_t j = lane; j < c; j += 32)
        o[j] = ok ? gi * (exp(row[j] - m) / s - (j == label ? T(1) : T(0))) : bad_row;
    }
  }
}

template <class T>
int launch_t(bool backward, bool one_hot_rows, int label_dtype, const void* z, const void* y, const void* g,
             int64_t gstride, void* out, int64_t n, int64_t c, int* bad, cudaStream_t st) {
  const unsigned grid = grid_for(n * 32);
  if (label_dtype == kInt64)
    xent_kernel<T, int64_t><<<grid, kThreads, 0, st>>>(backward, one_hot_rows, static_cast<const T*>(z),
                                                       static_cast<const int64_t*>(y), static_cast<const T*>(g), gstride,
                                                       static_cast<T*>(out), n, c, bad);
  else if (label_dtype == kInt32)
    xent_kernel<T, int32_t><<<grid, kThreads, 0, st>>>(backward, one_hot_rows, static_cast<const T*>(z),
                                                       static_cast<const int32_t*>(y), static_cast<const T*>(g), gstride,
                                                       static_cast<T*>(out), n, c, bad);
  else
    return static_cast<int>(cudaErrorInvalidValue);
  return static_cast<int>(cudaGetLastError());
}

__global__ void label_range_kernel(const int64_t* __restrict__ y, int64_t n, int64_t c, int* bad) {
  for (int64_t i = global_index(); i < n; i += grid_step())
    if (y[i] < 0 || y[i] >= c) *bad = 1;
}

// One block: every thread scans a stride of the labels, the block ORs their findings, and
// thread 0 writes the verdict (0 or 1) into *word, host memory the device may write (pinned).
__global__ void label_verdict_kernel(const int64_t* __restrict__ y, int64_t n, int64_t c, int* word) {
  int bad = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) bad |= (y[i] < 0 || y[i] >= c) ? 1 : 0;
  bad = __syncthreads_or(bad);
  if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(word) = bad ? 1 : 0;
}

}  // namespace

int label_verdict(const void* labels, int64_t n, int64_t c, int* host_word, void* stream) {
  label_verdict_kernel<<<1, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const int64_t*>(labels), n,
                                                                             c, host_word);
  return static_cast<int>(cudaGetLastError());
}

int label_range(const void* labels, int64_t n, int64_t c, int* bad_flag, void* stream) {
  if (n == 0) return 0;
  label_range_kernel<<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const int64_t*>(labels), n, c, bad_flag);
  return static_cast<int>(cudaGetLastError());
}

int xent(bool backward, bool one_hot_rows, int dtype, int label_dtype, const void* logits, const void* labels, const void* grad,
         int64_t gstride, void* out, int64_t n, int64_t c, int* bad_flag, void* stream) {
  if (n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  if (dtype == kFloat32)
    return launch_t<float>(backward, one_hot_rows, label_dtype, logits, labels, grad, gstride, out, n, c, bad_flag, st);
  if (dtype == kFloat64)
    return launch_t<double>(backward, one_hot_rows, label_dtype, logits, labels, grad, gstride, out, n, c, bad_flag, st);
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace uma::kernels::cuda_launch
