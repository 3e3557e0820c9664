// DLPack export and import (REFERENCE.md, "DLPack C ABI").
#include <memory>

#include "uma/error.h"
#include "uma/interop/dlpack_io.h"

namespace uma::interop {

using namespace dlpack;

DLDataType to_dlpack_dtype(DType t) {
  const uint8_t bits = static_cast<uint8_t>(itemsize(t) * 8);
  switch (dtype_kind(t)) {
    case 'b': return {kBool, 8, 1};
    case 'i': return {kInt, bits, 1};
    case 'u': return {kUInt, bits, 1};
    case 'c': return {kComplex, bits, 1};
    default: return {t == DType::BFloat16 ? kBfloat : kFloat, bits, 1};
  }
}

DType from_dlpack_dtype(DLDataType t) {
  UMA_CHECK(t.lanes == 1, Type, "DLPack dtype with lanes=", t.lanes, " is not supported (only lanes=1)");
  auto bad = [&]() {
    UMA_FAIL(Type, "DLPack dtype (code=", int(t.code), ", bits=", int(t.bits), ") has no uma equivalent");
  };
  switch (t.code) {
    case kBool:
      if (t.bits == 8) return DType::Bool;
      break;
    case kInt:
      switch (t.bits) { case 8: return DType::Int8; case 16: return DType::Int16; case 32: return DType::Int32; case 64: return DType::Int64; }
      break;
    case kUInt:
      switch (t.bits) { case 8: return DType::UInt8; case 16: return DType::UInt16; case 32: return DType::UInt32; case 64: return DType::UInt64; }
      break;
    case kFloat:
      switch (t.bits) { case 16: return DType::Float16; case 32: return DType::Float32; case 64: return DType::Float64; }
      break;
    case kBfloat:
      if (t.bits == 16) return DType::BFloat16;
      break;
    case kComplex:
      switch (t.bits) { case 64: return DType::Complex64; case 128: return DType::Complex128; }
      break;
    default:
      break;
  }
  bad();
  __builtin_unreachable();
}

int32_t dlpack_device_code(const Array& a) { return a.device().is_cpu() ? kCPU : kCUDA; }

bool exportable_as(const Array& a, int32_t code) {
  if (code == dlpack_device_code(a)) return true;
  return code == kCUDAManaged && a.defined() && a.storage()->data.memory_kind() == MemoryKind::Managed;
}

namespace {
// Owns what an exported tensor points at: a reference to the storage plus shape/strides.
struct ExportCtx {
  Array array;
  std::vector<int64_t> shape, strides;
};

template <class M>
void fill(M* m, ExportCtx* ctx, int32_t code) {
  const Array& a = ctx->array;
  DLTensor& t = m->dl_tensor;
  t.data = a.size() == 0 ? nullptr : a.data();
  UMA_ASSERT(exportable_as(a, code));
  t.device = {code, a.device().index};
  t.ndim = static_cast<int32_t>(a.ndim());
  t.dtype = to_dlpack_dtype(a.dtype());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  m->manager_ctx = ctx;
}

template <class M>
void delete_export(M* m) noexcept {
  if (!m) return;
  delete static_cast<ExportCtx*>(m->manager_ctx);
  delete m;
}
}  // namespace

DLManagedTensorVersioned* export_versioned(const Array& a, bool copied, int32_t code) {
  auto ctx = std::make_unique<ExportCtx>(ExportCtx{a, a.shape(), a.strides()});
  auto m = std::make_unique<DLManagedTensorVersioned>();
  m->version = {kMajor, kMinor};
  m->flags = (a.writable() ? 0 : kFlagReadOnly) | (copied ? kFlagIsCopied : 0);
  m->deleter = &delete_export<DLManagedTensorVersioned>;
  fill(m.get(), ctx.release(), code);
  return m.release();
}

DLManagedTensor* export_legacy(const Array& a, int32_t code) {
  auto ctx = std::make_unique<ExportCtx>(ExportCtx{a, a.shape(), a.strides()});
  auto m = std::make_unique<DLManagedTensor>();
  m->deleter = &delete_export<DLManagedTensor>;
  fill(m.get(), ctx.release(), code);
  return m.release();
}

ForeignLayout layout_of(const DLTensor& t, bool readonly) {
  UMA_CHECK(t.ndim >= 0 && t.ndim <= 64, Value, "DLPack tensor has invalid ndim ", t.ndim);
  ForeignLayout f;
  f.dtype = from_dlpack_dtype(t.dtype);
  switch (t.device.device_type) {
    case kCPU: case kCUDAHost: f.device = Device::cpu(); break;
    case kCUDA: f.device = {DeviceType::CUDA, t.device.device_id}; f.kind = MemoryKind::Device; break;
    case kCUDAManaged: f.device = {DeviceType::CUDA, t.device.device_id}; f.kind = MemoryKind::Managed; break;
    default: UMA_FAIL(Runtime, "DLPack device type ", t.device.device_type, " is not supported");
  }
  UMA_CHECK(t.ndim == 0 || t.shape != nullptr, Value, "DLPack tensor has ndim ", t.ndim, " but a NULL shape");
  f.shape.assign(t.shape, t.shape + t.ndim);
  for (int64_t d : f.shape) UMA_CHECK(d >= 0, Value, "DLPack tensor has a negative dimension: ", shape_str(f.shape));
  const int64_t n = checked_size(f.shape);
  const int64_t isz = static_cast<int64_t>(itemsize(f.dtype));
  f.byte_strides.resize(t.ndim);
  if (t.strides) {
    for (int32_t d = 0; d < t.ndim; ++d) {
      UMA_CHECK(t.strides[d] <= INT64_MAX / isz && t.strides[d] >= INT64_MIN / isz, Value,
                "DLPack stride ", t.strides[d], " overflows");
      f.byte_strides[d] = t.strides[d] * isz;
    }
  } else {
    Strides c = contiguous_strides(f.shape);  // no overflow: checked_size passed
    for (int32_t d = 0; d < t.ndim; ++d)
      UMA_CHECK(!__builtin_mul_overflow(c[d], isz, &f.byte_strides[d]), Value, "DLPack tensor of shape ",
                shape_str(f.shape), " is too large");
  }
  UMA_CHECK(n == 0 || t.data != nullptr, Value, "DLPack tensor of size ", n, " has a NULL data pointer");
  // data + byte_offset is element (0, ..., 0); it must be an address (import_foreign then
  // checks that every element's address is one too).
  uint64_t first = 0;
  UMA_CHECK(!__builtin_add_overflow(reinterpret_cast<uint64_t>(t.data), t.byte_offset, &first) &&
                first <= static_cast<uint64_t>(INT64_MAX),
            Value, "DLPack byte_offset ", t.byte_offset, " moves the data pointer ", address_str(t.data),
            " outside the address space");
  f.ptr = t.data ? reinterpret_cast<void*>(first) : nullptr;
  f.readonly = readonly;
  return f;
}

}  // namespace uma::interop
