// Moving arrays between devices (uma/transfer.h).
#include "uma/transfer.h"

#include "kernels/cuda_kernels.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "ops/common.h"
#include "uma/ops.h"

namespace uma {

Array to_device(const Array& a, Device to) {
  const Device from = a.device();
  if (!from.is_cpu()) cuda::require(from, "to_device");
  if (!to.is_cpu()) cuda::require(to, "to_device");
  if (from.is_cpu() && to.is_cpu()) return ops::copy(a);
  const std::size_t n = static_cast<std::size_t>(a.nbytes());
  if (from.is_cpu()) {
    // Host -> device: pack a strided host view on the host first (parallel cast kernel).
    Array src = a.is_c_contiguous() ? a : ops::copy(a);
    Array out = Array::empty(a.shape(), a.dtype(), to);
    cuda::copy_to_device(out.data(), src.data(), n, to.index);
    return out;
  }
  // From a cuda device: pack on that device.
  Array packed = a;
  if (!a.is_c_contiguous() || (to == from)) {
    packed = Array::empty(a.shape(), a.dtype(), from);
    kernels::cuda::pack(a, packed);
    if (to == from) return packed;
  }
  Array out = Array::empty(a.shape(), a.dtype(), to);
  if (to.is_cpu()) {
    cuda::copy_to_host(out.data(), packed.data(), n, from.index);
  } else {
    cuda::synchronize(from.index);
    cuda::copy_to_device(out.data(), packed.data(), n, to.index);  // peer copy (cudaMemcpyDefault)
  }
  return out;
}

Array to_device(const Array& a, Device to, DType dtype) {
  if (dtype == a.dtype()) return to_device(a, to);
  // To a cuda device: move, then convert there.
  if (!to.is_cpu()) return ops::astype(to_device(a, to), dtype);
  Array host = a.device().is_cpu() ? ops::astype(a, dtype) : ops::astype(to_device(a, Device::cpu()), dtype);
  return to.is_cpu() ? host : to_device(host, to);
}

Array on_device(const Array& a, Device to) { return a.device() == to ? a : to_device(a, to); }

Array to_host(const Array& a) { return on_device(a, Device::cpu()); }

namespace ops::detail {

Device common_device(const char* op, const std::vector<Array*>& arrays) {
  Device dev = Device::cpu();
  for (const Array* a : arrays)
    if (!a->device().is_cpu()) {
      dev = a->device();
      break;
    }
  if (dev.is_cpu()) return dev;
  for (Array* a : arrays) {
    if (a->device() == dev) continue;
    UMA_CHECK(a->device().is_cpu() && a->ndim() == 0, Runtime, op, ": expected all arrays on one device, got ",
              dev.str(), " and ", a->device().str(), " (move them with .to_device(...); only 0-d host arrays join a ",
              "cuda op)");
    *a = to_device(*a, dev);
  }
  return dev;
}

void require_host(const char* op, const Array& x) {
  UMA_CHECK(x.device().is_cpu(), Runtime, op, ": not implemented for arrays on ", x.device().str(),
            " (no CUDA kernel yet); move the array to the host first: x.to_device(\"cpu\")");
}

}  // namespace ops::detail

}  // namespace uma
