// uma._core.cuda: CUDA availability, synchronisation and test hooks (python/uma/cuda.py
// re-exports the public part).
#include "common.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"

namespace uma::py {

namespace {
int device_index(nb::handle h, const char* api) {
  if (h.is_none()) return 0;
  if (PyLong_Check(h.ptr())) return nb::cast<int>(h);
  Device d = to_device(h);
  UMA_CHECK(d.type == DeviceType::CUDA, Value, api, ": expected a cuda device, got ", d.str());
  return d.index;
}
}  // namespace

void bind_cuda(nb::module_& m) {
  nb::module_ c = m.def_submodule("cuda", "CUDA devices (uma.cuda).");
  c.def("built_with_cuda", &cuda::built_with_cuda, "True when this build of uma contains the CUDA code.");
  c.def("is_available", &cuda::is_available, "True when at least one CUDA GPU is usable.");
  c.def("device_count", &cuda::device_count, "Number of usable CUDA GPUs (0 without CUDA, driver or GPU).");
  c.def("unavailable_reason", &cuda::unavailable_reason, "Why no GPU is usable ('' when one is).");
  c.def("synchronize", [](nb::handle device) {
        const int i = device_index(device, "synchronize");
        cuda::require(Device{DeviceType::CUDA, i}, "synchronize");
        nb::gil_scoped_release nogil;
        cuda::synchronize(i);
      }, param("device") = nb::none(),
      "Waits until every GPU operation uma queued on the device (default cuda:0) has finished.\n"
      "RuntimeError naming why when CUDA is not available.");
  c.def("_stream", [](nb::handle device) {
        return reinterpret_cast<intptr_t>(cuda::stream(device_index(device, "_stream")));
      }, param("device") = nb::none(), "uma's CUDA stream on the device, as an integer (cudaStream_t).");
  c.def("_set_matmul_tf32", [](bool tf32) {
        ops::set_cuda_matmul_precision(tf32 ? ops::MatmulPrecision::TF32 : ops::MatmulPrecision::Highest);
      }, param("tf32"), "TF32 (True) or exact (False) float32/complex64 products on cuda devices.");
  c.def("_matmul_tf32", [] { return ops::cuda_matmul_precision() == ops::MatmulPrecision::TF32; },
        "Whether float32/complex64 products on cuda devices use TF32.");
  c.def("_chain_kernel_stats", [] {
        const ops::ChainKernelStats st = ops::cuda_chain_kernel_stats();
        nb::dict d;
        d["generated"] = st.generated;
        d["epilogues"] = st.epilogues;
        d["reduce_epilogues"] = st.reduce_epilogues;
        d["interpreted"] = st.interpreted;
        d["from_disk"] = st.from_disk;
        d["scaled_updates"] = st.scaled_updates;
        d["reason"] = st.reason;
        return d;
      }, "The cuda chain compiler's record (ops::cuda_chain_kernel_stats): fused chains given a generated\n"
         "kernel, small float products given a kernel that runs their chain on each output element\n"
         "('epilogues'), column sums and means given one that runs their chain on each result ('reduce_epilogues'),\n"
         "chains run by the interpreting kernel, generated kernels loaded from the on-disk image\n"
         "cache instead of compiled, products whose chain C + s * P ran as one cuBLASLt product\n"
         "('scaled_updates', Note [Scaled updates]), and why the first chain fell back ('' when none did).");
  c.def("_registration_count", &cuda::registration_count, "Live host registrations made by uma (tests).");
  c.def("_staging_bytes", &cuda::staging_bytes, "Pinned bytes held by the transfer staging pool.");
  c.def("_pointer_kind", [](uintptr_t p) {
        int dev = -1;
        switch (cuda::pointer_kind(reinterpret_cast<void*>(p), &dev)) {
          case cuda::PointerKind::Host: return nb::make_tuple("host", dev);
          case cuda::PointerKind::Device: return nb::make_tuple("device", dev);
          case cuda::PointerKind::Managed: return nb::make_tuple("managed", dev);
          default: return nb::make_tuple("unregistered", dev);
        }
      }, param("ptr"), "What CUDA knows of an address: ('host'|'device'|'managed'|'unregistered', device).");
  c.def("_empty_managed", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const int i = device_index(device, "empty_managed");
        Shape s = nb::cast<Shape>(shape);
        DType t = to_dtype(dtype).value_or(DType::Float32);
        const int64_t n = checked_size(s);
        auto st = std::make_shared<Storage>(cuda::allocate_managed(static_cast<std::size_t>(n) * itemsize(t), i));
        void* p = st->data.get();
        return Array(std::move(st), p, s, contiguous_strides(s), t, true);
      }, param("shape"), param("dtype") = nb::none(), param("device") = nb::none(),
      "A C-contiguous array in managed (unified) memory of the device (contents undefined).");
}

}  // namespace uma::py
