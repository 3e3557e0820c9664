// uma/interop/buffer_desc.h — the descriptors of the Python buffer protocol (PEP 3118) and of
// __array_interface__, turned into a validated ForeignLayout. Pure C++ (no Python types): the
// bindings copy the fields out of Py_buffer / the interface dict, and fuzz/fuzz_descriptor.cpp
// fuzzes exactly these functions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "uma/interop/copy_rules.h"

namespace uma::interop {

/// dtype and byte order (true: non-native) of a PEP 3118 format of one item; NULL means "B".
/// The struct module's codes ? b B h H i I l L q Q n N e f d, "Zf"/"Zd" complex, with an
/// optional prefix: '@' native sizes, '=' '<' '>' '!' standard sizes ('l'/'L' are 4 bytes;
/// 'n'/'N' exist with native sizes only).
/// TypeError when the format has no uma dtype or its size differs from `itemsize`.
std::pair<DType, bool> dtype_from_buffer_format(const char* format, int64_t itemsize);

/// dtype and byte order of an __array_interface__ typestr ("<f4", "|b1", ">i8", "<c16").
/// "V2" is bfloat16 when `void2_is_bfloat16()` says so (ml_dtypes.bfloat16 reports '<V2');
/// TypeError for anything without a uma dtype.
std::pair<DType, bool> dtype_from_typestr(std::string_view typestr,
                                          const std::function<bool()>& void2_is_bfloat16 = {});

/// The geometry of a Py_buffer (PEP 3118) without Python types (Py_ssize_t is int64_t here).
struct BufferView {
  void* buf = nullptr;
  int64_t len = 0;                   // bytes; PEP 3118: prod(shape) * itemsize
  int64_t itemsize = 0;
  const char* format = nullptr;      // NULL: "B"
  int ndim = 0;
  const int64_t* shape = nullptr;    // NULL: one dimension of len / itemsize
  const int64_t* strides = nullptr;  // NULL: C-contiguous
  bool has_suboffsets = false;
  bool readonly = false;
};

/// Describes a buffer view. TypeError: no uma dtype for the format, suboffsets. ValueError:
/// ndim outside [0, 64], a negative dimension, a shape whose elements need more than `len`
/// bytes (an exporter lying about its memory). Strides are the exporter's (PEP 3118 cannot say
/// how far they may reach) and are checked for overflow only (byte_extent).
ForeignLayout layout_of_buffer(const BufferView& v, const char* api);

/// The geometry of an __array_interface__ (ptr left NULL): `byte_strides` nullopt means
/// C-contiguous. ValueError: negative dimension, sizes or byte strides that overflow.
ForeignLayout layout_of_interface(DType dtype, bool byteswapped, const Shape& shape,
                                  const std::optional<std::vector<int64_t>>& byte_strides, const char* api);

/// An __array_interface__ whose data is a buffer object of `len` bytes at `buf` (Note
/// [Hand-made array interfaces] in python/src/bind_interop.cpp): the view starts `offset`
/// bytes in; `byte_strides` nullopt means C-contiguous. ValueError: negative dimension,
/// offset outside [0, len], or any element outside the buffer.
ForeignLayout layout_of_interface_buffer(DType dtype, bool byteswapped, const Shape& shape,
                                         const std::optional<std::vector<int64_t>>& byte_strides, void* buf,
                                         int64_t len, int64_t offset, bool readonly, const char* api);

}  // namespace uma::interop
