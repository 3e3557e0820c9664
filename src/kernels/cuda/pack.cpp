// Host side of the strided-copy kernels (kernels/cuda_kernels.h): pack gathers a strided
// device view into contiguous memory, unpack scatters contiguous memory into a strided view,
// fill writes one element everywhere, copy_batch queues many small copies as one kernel.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/launch.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

namespace {

// Copies between the strided `view` and the C-contiguous `dense` (same shape, dtype and
// device): gathers `view` into `dense`, or scatters `dense` into `view`. `what` names the op
// in the error for views the kernels cannot address.
void strided_copy(const Array& view, const Array& dense, bool scatter, const char* what) {
  const int device = view.device().index;
  const int64_t isz = static_cast<int64_t>(view.itemsize());
  if (view.size() == 0) return;
  if (view.is_c_contiguous()) {
    void* dst = scatter ? view.data() : dense.data();
    const void* src = scatter ? dense.data() : view.data();
    uma::cuda::copy_on_device(dst, src, static_cast<std::size_t>(view.nbytes()), device);
    return;
  }
  // Drop size-1 dimensions and merge dimensions that are contiguous with the next one.
  cuda_launch::StridedGeometry g{};
  int nd = 0;
  for (int64_t d = 0; d < view.ndim(); ++d) {
    const int64_t n = view.shape()[d], st = view.strides()[d] * isz;
    if (n == 1) continue;
    if (nd > 0 && g.byte_strides[nd - 1] == st * n) {
      g.shape[nd - 1] *= n;
      g.byte_strides[nd - 1] = st;
      continue;
    }
    UMA_CHECK(nd < cuda_launch::kMaxDims, Runtime, what, ": views of more than ", cuda_launch::kMaxDims,
              " non-mergeable dimensions are not supported");
    g.shape[nd] = n;
    g.byte_strides[nd] = st;
    ++nd;
  }
  g.ndim = nd;
  uma::cuda::detail::DeviceGuard guard(device);
  void* stream = uma::cuda::stream(device);
  const int e = scatter ? cuda_launch::strided_scatter(dense.data(), view.data(), g, view.size(), static_cast<int>(isz), stream)
                        : cuda_launch::strided_gather(view.data(), dense.data(), g, view.size(), static_cast<int>(isz), stream);
  if (e != 0)
    uma::cuda::detail::fail(static_cast<cudaError_t>(e), scatter ? "strided_scatter<<<...>>>" : "strided_gather<<<...>>>",
                            __FILE__, __LINE__);
}

}  // namespace

void pack(const Array& src, const Array& dst) {
  UMA_ASSERT(src.shape() == dst.shape() && src.dtype() == dst.dtype() && dst.is_c_contiguous());
  strided_copy(src, dst, /*scatter=*/false, "copy on cuda");
}

void unpack(const Array& src, const Array& dst) {
  UMA_ASSERT(src.shape() == dst.shape() && src.dtype() == dst.dtype() && src.is_c_contiguous());
  strided_copy(dst, src, /*scatter=*/true, "assignment on cuda");
}

void fill(const Array& dst, const void* value) {
  UMA_ASSERT(dst.is_c_contiguous());
  if (dst.size() == 0) return;
  const int device = dst.device().index;
  uma::cuda::detail::DeviceGuard guard(device);
  const int e = cuda_launch::fill(dst.data(), value, dst.size(), static_cast<int>(dst.itemsize()), uma::cuda::stream(device));
  if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), "fill<<<...>>>", __FILE__, __LINE__);
}

void copy_batch(std::span<const CopyJob> jobs, int device) {
  uma::cuda::detail::DeviceGuard guard(device);
  void* stream = uma::cuda::stream(device);
  cuda_launch::CopyJobs batch{};
  int64_t most = 0;
  auto flush = [&] {
    const int e = cuda_launch::copy_jobs(batch, most, stream);
    if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), "copy_jobs<<<...>>>", __FILE__, __LINE__);
    batch.n = 0;
    most = 0;
  };
  for (const CopyJob& j : jobs) {
    if (j.bytes == 0) continue;
    const auto bits = reinterpret_cast<std::uintptr_t>(j.dst) | reinterpret_cast<std::uintptr_t>(j.src);
    if (j.bytes > kBatchCopyBytes || (bits & 15) != 0) {  // large, or not 16-byte aligned
      uma::cuda::copy_on_device(j.dst, j.src, j.bytes, device);
      continue;
    }
    if (batch.n == cuda_launch::kCopyJobs) flush();
    batch.src[batch.n] = j.src;
    batch.dst[batch.n] = j.dst;
    batch.bytes[batch.n] = static_cast<int64_t>(j.bytes);
    most = std::max(most, batch.bytes[batch.n]);
    ++batch.n;
  }
  if (batch.n > 0) flush();
}

}  // namespace uma::kernels::cuda
