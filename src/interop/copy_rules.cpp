// The copy rules (DESIGN.md, "The copy rules") — every importer goes through here.
#include "uma/interop/copy_rules.h"

#include <cstdio>
#include <cstring>

#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma::interop {

std::pair<int64_t, int64_t> byte_extent(const Shape& shape, const std::vector<int64_t>& strides, std::size_t itemsize) {
  UMA_CHECK(shape.size() == strides.size(), Value, "shape has ", shape.size(), " dimensions but strides have ",
            strides.size());
  int64_t n = checked_size(shape);
  if (n == 0) return {0, 0};
  __int128 lo = 0, hi = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    __int128 ext = static_cast<__int128>(shape[d] - 1) * strides[d];
    (ext < 0 ? lo : hi) += ext;
  }
  hi += itemsize;
  UMA_CHECK(lo >= INT64_MIN / 2 && hi <= INT64_MAX / 2, Value, "strides ", shape_str(strides), " with shape ",
            shape_str(shape), " address more memory than exists");
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

CopyDecision decide_copy(const ForeignLayout& src, std::optional<DType> dtype, std::optional<Device> device,
                         CopyMode copy, const char* api) {
  CopyDecision d;
  const std::size_t isz = itemsize(src.dtype);
  if (device && !(*device == src.device))
    d.why_copy = "the source is on " + src.device.str() + " but device " + device->str() + " was requested";
  else if (dtype && *dtype != src.dtype)
    d.why_copy = std::string("the source dtype ") + dtype_name(src.dtype) + " differs from the requested dtype " +
                 dtype_name(*dtype) + " (values would be converted)";
  else if (src.byteswapped)
    d.why_copy = "the source is in non-native byte order";
  else if (reinterpret_cast<uintptr_t>(src.ptr) % isz != 0 && checked_size(src.shape) > 0)
    d.why_copy = "the source pointer is not aligned to its itemsize";
  else {
    for (std::size_t k = 0; k < src.byte_strides.size(); ++k)
      if (src.shape[k] > 1 && src.byte_strides[k] % static_cast<int64_t>(isz) != 0) {
        d.why_copy = "byte stride " + std::to_string(src.byte_strides[k]) + " is not a multiple of the itemsize " +
                     std::to_string(isz);
        break;
      }
  }
  if (copy == CopyMode::Always) return d;  // share stays false
  if (d.why_copy.empty()) {
    d.share = true;
    return d;
  }
  UMA_CHECK(copy != CopyMode::Never, Copy, api, ": copy=False is impossible: ", d.why_copy);
  return d;
}

namespace {
// Whether byte strides describe a C-contiguous layout (size-1 dimensions may have any stride).
bool c_contiguous_bytes(const Shape& shape, const std::vector<int64_t>& byte_strides, std::size_t isz) {
  int64_t acc = static_cast<int64_t>(isz);
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
    if (shape[k] == 0) return true;
    if (shape[k] != 1 && byte_strides[k] != acc) return false;
    acc *= shape[k];
  }
  return true;
}

// copy=False to a cuda device from host memory: register the memory (Note [Shared
// registrations]) and view it as a "mapped" cuda array.
Array adopt_mapped(const ForeignLayout& src, int64_t lo, int64_t hi, const std::function<DataPtr()>& adopt,
                   std::optional<DType> dtype, Device device, const char* api) {
  CopyDecision d = decide_copy(src, dtype, std::nullopt, CopyMode::Never, api);  // CopyError unless shareable
  (void)d;
  const int64_t isz = static_cast<int64_t>(itemsize(src.dtype));
  Strides st(src.byte_strides.size());
  for (std::size_t k = 0; k < st.size(); ++k) st[k] = src.byte_strides[k] % isz == 0 ? src.byte_strides[k] / isz : 0;
  char* first = static_cast<char*>(src.ptr) + lo;
  const std::size_t len = static_cast<std::size_t>(hi - lo);
  void* base = first;
  std::size_t base_n = len;
  if (src.alloc_base && static_cast<char*>(src.alloc_base) <= first &&
      first + len <= static_cast<char*>(src.alloc_base) + src.alloc_nbytes) {
    base = src.alloc_base;
    base_n = src.alloc_nbytes;
  }
  bool gpu_readonly = false;
  DataPtr mapped = cuda::adopt_mapped(adopt(), first, len, base, base_n, src.readonly, device.index, &gpu_readonly);
  char* data = static_cast<char*>(mapped.get()) - lo;
  auto storage = std::make_shared<Storage>(std::move(mapped));
  return Array(std::move(storage), data, src.shape, std::move(st), src.dtype, !src.readonly && !gpu_readonly);
}

// Gathers a foreign strided buffer (byte strides, any alignment, optional byte swap) into a
// fresh C-contiguous array of src.dtype.
Array gather(const ForeignLayout& src) {
  Array out = Array::empty(src.shape, src.dtype);
  const int64_t n = out.size();
  if (n == 0) return out;
  const std::size_t isz = itemsize(src.dtype);
  const int64_t nd = static_cast<int64_t>(src.shape.size());
  std::vector<int64_t> idx(nd, 0);
  const char* p = static_cast<const char*>(src.ptr);
  char* o = static_cast<char*>(out.data());
  // Complex numbers swap each part separately.
  const std::size_t part = is_complex(src.dtype) ? isz / 2 : isz;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(o, p, isz);
    if (src.byteswapped)
      for (std::size_t b = 0; b < isz; b += part)
        for (std::size_t j = 0; j < part / 2; ++j) std::swap(o[b + j], o[b + part - 1 - j]);
    o += isz;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < src.shape[d]) {
        p += src.byte_strides[d];
        break;
      }
      p -= (src.shape[d] - 1) * src.byte_strides[d];
      idx[d] = 0;
    }
  }
  return out;
}
}  // namespace

std::string address_str(const void* p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

std::pair<int64_t, int64_t> address_extent(const ForeignLayout& src, const char* api) {
  const auto ext = byte_extent(src.shape, src.byte_strides, itemsize(src.dtype));
  if (ext.second > ext.first) {
    const __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(src.ptr));
    UMA_CHECK(base + ext.first >= 0 && base + ext.second <= static_cast<__int128>(INT64_MAX), Value, api,
              ": the buffer at ", address_str(src.ptr), " with byte offsets [", ext.first, ", ", ext.second,
              ") lies outside the address space");
  }
  return ext;
}

Array import_foreign(const ForeignLayout& src, const std::function<DataPtr()>& adopt, std::optional<DType> dtype,
                     std::optional<Device> device, CopyMode copy, const char* api) {
  const auto [lo, hi] = address_extent(src, api);
  if (!src.device.is_cpu()) cuda::require(src.device, api);
  if (device && !device->is_cpu()) cuda::require(*device, api);
  if (src.device.is_cpu() && device && !device->is_cpu()) {
    if (copy == CopyMode::Never) return adopt_mapped(src, lo, hi, adopt, dtype, *device, api);
    // Transfer: a native, element-aligned, C-contiguous source goes straight to the device;
    // anything else is made a host array first (converted, gathered), then transferred.
    const bool contiguous = !src.byteswapped && (!dtype || *dtype == src.dtype) &&
                            reinterpret_cast<uintptr_t>(src.ptr) % itemsize(src.dtype) == 0 &&
                            c_contiguous_bytes(src.shape, src.byte_strides, itemsize(src.dtype));
    if (contiguous) {
      Array view(nullptr, src.ptr, src.shape, contiguous_strides(src.shape), src.dtype, false);
      return to_device(view, *device);
    }
    return to_device(import_foreign(src, adopt, dtype, std::nullopt, CopyMode::Always, api), *device);
  }
  CopyDecision d = decide_copy(src, dtype, device, copy, api);
  if (d.share) {
    const int64_t isz = static_cast<int64_t>(itemsize(src.dtype));
    Strides st(src.byte_strides.size());
    for (std::size_t k = 0; k < st.size(); ++k) st[k] = src.byte_strides[k] % isz == 0 ? src.byte_strides[k] / isz : 0;  // only size-1 dims can differ
    auto storage = std::make_shared<Storage>(adopt());
    return Array(std::move(storage), src.ptr, src.shape, std::move(st), src.dtype, !src.readonly);
  }
  if (!src.device.is_cpu()) {
    // Copy out of foreign device memory through a non-owning view of it; wait for the copy
    // before returning, since the caller releases the producer's memory next.
    UMA_CHECK(!src.byteswapped && reinterpret_cast<uintptr_t>(src.ptr) % itemsize(src.dtype) == 0, Value, api,
              ": a byte-swapped or unaligned device buffer cannot be imported");
    Strides st(src.byte_strides.size());
    for (std::size_t k = 0; k < st.size(); ++k) {
      UMA_CHECK(src.shape[k] <= 1 || src.byte_strides[k] % static_cast<int64_t>(itemsize(src.dtype)) == 0, Value,
                api, ": device buffer with byte stride ", src.byte_strides[k], " not a multiple of the itemsize");
      st[k] = src.byte_strides[k] / static_cast<int64_t>(itemsize(src.dtype));
    }
    auto none = std::make_shared<Storage>(DataPtr(src.ptr, 0, src.device, Origin::Adopted, nullptr, nullptr, src.kind));
    Array view(std::move(none), src.ptr, src.shape, std::move(st), src.dtype, false);
    Array out = to_device(view, device.value_or(src.device), dtype.value_or(src.dtype));
    cuda::synchronize(src.device.index);
    return out;
  }
  // Copy path. A native, element-aligned source is read through a temporary non-owning view
  // by the (parallel, memcpy-based) cast kernel, converting in the same pass when a dtype was
  // asked for; anything else is gathered byte-wise first.
  const std::size_t isz = itemsize(src.dtype);
  bool aligned = !src.byteswapped && reinterpret_cast<uintptr_t>(src.ptr) % isz == 0;
  for (std::size_t k = 0; k < src.byte_strides.size() && aligned; ++k)
    aligned = src.shape[k] <= 1 || src.byte_strides[k] % static_cast<int64_t>(isz) == 0;
  if (aligned) {
    Strides st(src.byte_strides.size());
    for (std::size_t k = 0; k < st.size(); ++k) st[k] = src.byte_strides[k] / static_cast<int64_t>(isz);
    Array view(nullptr, src.ptr, src.shape, std::move(st), src.dtype, false);
    return ops::astype(view, dtype.value_or(src.dtype));
  }
  Array out = gather(src);
  if (dtype && *dtype != out.dtype()) out = ops::astype(out, *dtype);
  return out;
}

}  // namespace uma::interop
