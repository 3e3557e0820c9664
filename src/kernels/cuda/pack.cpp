// Host side of the strided-copy kernel (kernels/cuda_kernels.h).
#include "kernels/cuda/launch.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

void pack(const Array& src, const Array& dst) {
  UMA_ASSERT(src.shape() == dst.shape() && src.dtype() == dst.dtype() && dst.is_c_contiguous());
  const int device = dst.device().index;
  const int64_t isz = static_cast<int64_t>(src.itemsize());
  if (src.size() == 0) return;
  if (src.is_c_contiguous()) {
    uma::cuda::copy_on_device(dst.data(), src.data(), static_cast<std::size_t>(src.nbytes()), device);
    return;
  }
  // Drop size-1 dimensions and merge dimensions that are contiguous with the next one.
  cuda_launch::StridedGeometry g{};
  int nd = 0;
  for (int64_t d = 0; d < src.ndim(); ++d) {
    const int64_t n = src.shape()[d], st = src.strides()[d] * isz;
    if (n == 1) continue;
    if (nd > 0 && g.byte_strides[nd - 1] == st * n) {
      g.shape[nd - 1] *= n;
      g.byte_strides[nd - 1] = st;
      continue;
    }
    UMA_CHECK(nd < cuda_launch::kMaxDims, Runtime, "copy on cuda: views of more than ", cuda_launch::kMaxDims,
              " non-mergeable dimensions are not supported");
    g.shape[nd] = n;
    g.byte_strides[nd] = st;
    ++nd;
  }
  g.ndim = nd;
  uma::cuda::detail::DeviceGuard guard(device);
  const int e = cuda_launch::strided_gather(src.data(), dst.data(), g, src.size(), static_cast<int>(isz),
                                            uma::cuda::stream(device));
  if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), "strided_gather<<<...>>>", __FILE__, __LINE__);
}

}  // namespace uma::kernels::cuda
