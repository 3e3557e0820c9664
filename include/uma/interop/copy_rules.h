// uma/interop/copy_rules.h — the one function that decides whether an import shares memory
// or copies (DESIGN.md, "The copy rules"), and the importer built on it.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "uma/array.h"

namespace uma::interop {

/// The Array API `copy` argument: None, False, True.
enum class CopyMode { IfNeeded, Never, Always };

/// A foreign buffer described in bytes, before anything is adopted.
struct ForeignLayout {
  void* ptr = nullptr;        // address of element (0, ..., 0)
  DType dtype = DType::Float64;  // the values' type once byte order is native
  bool byteswapped = false;   // stored in non-native byte order
  Shape shape;
  std::vector<int64_t> byte_strides;  // may be negative or zero
  Device device = Device::cpu();
  MemoryKind kind = MemoryKind::Host;  // Device or Managed for cuda sources
  bool readonly = false;
  // The whole allocation the view lies in, when known (a NumPy view's base buffer): host
  // registration for copy=False on cuda registers this range so that views share it.
  void* alloc_base = nullptr;
  std::size_t alloc_nbytes = 0;
};

/// What decide_copy concluded.
struct CopyDecision {
  bool share = false;      // adopt the memory as a view
  std::string why_copy;    // non-empty when a copy is needed: the reason (for CopyError)
};

/// The copy rules. Sharing requires: same dtype (or none asked), native byte order, an
/// element-aligned pointer and byte strides that are multiples of the itemsize, and the
/// same device. copy=Always never shares; copy=Never throws CopyError with the reason when
/// sharing is impossible.
CopyDecision decide_copy(const ForeignLayout& src, std::optional<DType> dtype, std::optional<Device> device,
                         CopyMode copy, const char* api);

/// Imports a foreign buffer under the copy rules. `adopt` is called only when memory is
/// shared and must return an Adopted DataPtr keeping the source alive. The copy path reads
/// the source during this call only. Result is read-only iff shared and src.readonly.
/// Devices: a host source wanted on cuda is transferred (copy=None/True) or adopted as a
/// "mapped" array through host registration (copy=False; CopyError when impossible); a cuda
/// source is shared on its own device, else copied (through the host for a dtype change).
Array import_foreign(const ForeignLayout& src, const std::function<DataPtr()>& adopt, std::optional<DType> dtype,
                     std::optional<Device> device, CopyMode copy, const char* api);

/// "0x..." of an address, for error messages.
std::string address_str(const void* p);

/// byte_extent of `src`, after checking that the address of every element, ptr + offset in
/// signed 64-bit arithmetic, lies in [0, 2**63) (no wrap past 0 or 2**64): ValueError naming
/// the pointer and the offsets otherwise. import_foreign calls it before anything else.
std::pair<int64_t, int64_t> address_extent(const ForeignLayout& src, const char* api);

/// Validates shape/strides (non-negative shape, no overflow of the addressed byte range).
/// Returns the [lo, hi) byte offsets relative to ptr that the view touches (0,0 if empty).
std::pair<int64_t, int64_t> byte_extent(const Shape& shape, const std::vector<int64_t>& byte_strides, std::size_t itemsize);

}  // namespace uma::interop
