// kernels/cuda/host_launch.h — what the host side of the cuda kernels shares: the launch
// context (the device made current, uma's stream of it), a kernel-status check, a read-back of
// a few bytes that decide an error or a size, and device workspaces.
#pragma once
#include <cstddef>

#include "memory/cuda/cuda_check.h"
#include "uma/array.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda::host {

/// Raises uma's CUDA error for a launcher's status `e` (a cudaError_t; 0 is success).
inline void check(int e, const char* what) {
  if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), what, __FILE__, __LINE__);
}

/// The device of `on` made current for the scope, and uma's stream of that device.
struct Launch {
  uma::cuda::detail::DeviceGuard guard;
  void* stream;
  int device;
  explicit Launch(const Array& on)
      : guard(on.device().index), stream(uma::cuda::stream(on.device().index)), device(on.device().index) {}
  cudaStream_t st() const { return static_cast<cudaStream_t>(stream); }
};

/// Reads `n` bytes of device memory at `src` (waits for the stream): a status word or one
/// value, not an array transfer (not counted in the transfer statistics).
inline void read_back(void* dst, const void* src, std::size_t n, const Launch& l) {
  uma::cuda::detail::refuse_capture(l.device, "a read-back of a status word");
  UMA_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, l.st()));
  UMA_CUDA_CHECK(cudaStreamSynchronize(l.st()));
}

/// A device workspace of at least `bytes` bytes (never a null pointer, which CUB would read as
/// a size query); it returns to the stream-ordered cache when released.
inline Array workspace(std::size_t bytes, Device dev) {
  return Array::empty({static_cast<int64_t>(bytes < 16 ? 16 : bytes)}, DType::UInt8, dev);
}

}  // namespace uma::kernels::cuda::host
