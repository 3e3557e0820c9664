// The CUDA kernels in a build without CUDA (kernels/cuda_kernels.h).
#include "kernels/cuda_kernels.h"
#include "uma/error.h"

namespace uma::kernels::cuda {

void pack(const Array&, const Array& dst) {
  UMA_FAIL(Runtime, "copy: device ", dst.device().str(), " is not available: uma was built without CUDA support");
}

}  // namespace uma::kernels::cuda
