// src/memory/cuda/cuda_check.h — the one checking macro for CUDA runtime calls and the RAII
// handles of the CUDA code (internal; CUDA builds only).
#pragma once
#include <cuda_runtime_api.h>

#include "uma/error.h"

namespace uma::cuda::detail {

/// Throws uma::Error naming `call` and the CUDA error (MemoryError for out-of-memory,
/// RuntimeError otherwise) and clears the runtime's last-error state, so a failure never
/// leaves a sticky error behind for the next call.
[[noreturn]] void fail(cudaError_t e, const char* call, const char* file, int line);

/// Sets the current device for the scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

/// An owned CUDA event (timing disabled).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return ev_; }

 private:
  cudaEvent_t ev_ = nullptr;
};

/// RuntimeError naming `what` when the calling thread records a CUDA graph for `device`: for
/// work that waits for the device (a read-back, a host transfer), which a graph cannot record.
/// Called before the first CUDA call of such work, so the recording fails with uma's error
/// and no CUDA call is refused (Note [Captured work]).
void refuse_capture(int device, const char* what);

/// Lets the calling thread make capture-unsafe calls (cudaMalloc) for its scope while it
/// records a graph for `device`: they run at once, outside the recording.
class RelaxCapture {
 public:
  explicit RelaxCapture(int device) noexcept;
  ~RelaxCapture();
  RelaxCapture(const RelaxCapture&) = delete;
  RelaxCapture& operator=(const RelaxCapture&) = delete;

 private:
  bool active_ = false;
  int mode_ = 0;  // the thread's previous cudaStreamCaptureMode
};

}  // namespace uma::cuda::detail

/// Every CUDA runtime call goes through this macro; the message names the call.
#define UMA_CUDA_CHECK(call)                                                    \
  do {                                                                          \
    cudaError_t uma_cuda_err_ = (call);                                         \
    if (uma_cuda_err_ != cudaSuccess)                                           \
      ::uma::cuda::detail::fail(uma_cuda_err_, #call, __FILE__, __LINE__);      \
  } while (0)
