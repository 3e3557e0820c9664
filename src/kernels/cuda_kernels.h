// src/kernels/cuda_kernels.h — entry points of the CUDA kernels (internal). Implemented in
// src/kernels/cuda/ (CUDA builds) and src/kernels/no_cuda/ (stubs raising RuntimeError).
#pragma once
#include "uma/array.h"

namespace uma::kernels::cuda {

/// dst = src element by element, same shape and dtype, both on one cuda device; dst is
/// C-contiguous, src any strided view. Queued on uma's stream of the device.
void pack(const Array& src, const Array& dst);

}  // namespace uma::kernels::cuda
