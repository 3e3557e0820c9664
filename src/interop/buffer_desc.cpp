// Buffer-protocol and __array_interface__ descriptors (include/uma/interop/buffer_desc.h).
#include "uma/interop/buffer_desc.h"

#include <string>

#include "uma/error.h"

namespace uma::interop {

std::pair<DType, bool> dtype_from_buffer_format(const char* fmt, int64_t isz) {
  const std::string s = fmt ? fmt : "B";
  bool standard = false, swapped = false;
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '@' || s[0] == '=' || s[0] == '<' || s[0] == '>' || s[0] == '!')) {
    standard = s[0] != '@';
    swapped = s[0] == '>' || s[0] == '!';  // little-endian host
    i = 1;
  }
  const std::string code = s.substr(i);
  auto int_of = [](bool sgn, int size) {
    if (sgn) return size == 1 ? DType::Int8 : size == 2 ? DType::Int16 : size == 4 ? DType::Int32 : DType::Int64;
    return size == 1 ? DType::UInt8 : size == 2 ? DType::UInt16 : size == 4 ? DType::UInt32 : DType::UInt64;
  };
  std::optional<DType> t;
  if (code == "?") t = DType::Bool;
  else if (code == "b") t = DType::Int8;
  else if (code == "B") t = DType::UInt8;
  else if (code == "h") t = DType::Int16;
  else if (code == "H") t = DType::UInt16;
  else if (code == "i") t = DType::Int32;
  else if (code == "I") t = DType::UInt32;
  else if (code == "l") t = int_of(true, standard ? 4 : static_cast<int>(sizeof(long)));
  else if (code == "L") t = int_of(false, standard ? 4 : static_cast<int>(sizeof(long)));
  else if (code == "q") t = DType::Int64;
  else if (code == "Q") t = DType::UInt64;
  // ssize_t / size_t exist only with native sizes ('<n' is not a format, as in struct and NumPy).
  else if (code == "n" && !standard) t = int_of(true, static_cast<int>(sizeof(int64_t)));
  else if (code == "N" && !standard) t = int_of(false, static_cast<int>(sizeof(uint64_t)));
  else if (code == "e") t = DType::Float16;
  else if (code == "f") t = DType::Float32;
  else if (code == "d") t = DType::Float64;
  else if (code == "Zf") t = DType::Complex64;
  else if (code == "Zd") t = DType::Complex128;
  UMA_CHECK(t.has_value(), Type, "buffer format '", s, "' has no uma equivalent");
  UMA_CHECK(static_cast<int64_t>(itemsize(*t)) == isz, Type, "buffer format '", s, "' does not match its itemsize ", isz);
  return {*t, swapped && itemsize(*t) > 1};
}

std::pair<DType, bool> dtype_from_typestr(std::string_view ts, const std::function<bool()>& void2_is_bfloat16) {
  const std::string shown(ts);
  UMA_CHECK(ts.size() >= 3, Type, "unsupported __array_interface__ typestr '", shown, "'");
  const char order = ts[0], kind = ts[1];
  int size = 0;
  for (std::size_t i = 2; i < ts.size(); ++i) {
    UMA_CHECK(ts[i] >= '0' && ts[i] <= '9' && size < 1000, Type, "unsupported __array_interface__ typestr '", shown, "'");
    size = size * 10 + (ts[i] - '0');
  }
  UMA_CHECK(order == '<' || order == '>' || order == '|' || order == '=', Type, "unsupported byte order in typestr '",
            shown, "'");
  std::optional<DType> t;
  switch (kind) {
    case 'b': if (size == 1) t = DType::Bool; break;
    case 'i': t = size == 1 ? DType::Int8 : size == 2 ? DType::Int16 : size == 4 ? DType::Int32 : size == 8 ? DType::Int64 : t; break;
    case 'u': t = size == 1 ? DType::UInt8 : size == 2 ? DType::UInt16 : size == 4 ? DType::UInt32 : size == 8 ? DType::UInt64 : t; break;
    case 'f': t = size == 2 ? DType::Float16 : size == 4 ? DType::Float32 : size == 8 ? DType::Float64 : t; break;
    case 'c': t = size == 8 ? DType::Complex64 : size == 16 ? DType::Complex128 : t; break;
    case 'V':
      if (size == 2 && void2_is_bfloat16 && void2_is_bfloat16()) t = DType::BFloat16;
      break;
    default: break;
  }
  UMA_CHECK(t.has_value(), Type, "dtype with typestr '", shown, "' has no uma equivalent");
  return {*t, order == '>' && itemsize(*t) > 1};
}

ForeignLayout layout_of_buffer(const BufferView& v, const char* api) {
  ForeignLayout f;
  const auto [t, sw] = dtype_from_buffer_format(v.format, v.itemsize);  // itemsize > 0 from here on
  UMA_CHECK(!v.has_suboffsets, Type, api, ": buffers with suboffsets are not supported");
  UMA_CHECK(v.ndim >= 0 && v.ndim <= 64, Value, api, ": buffer has invalid ndim ", v.ndim);
  UMA_CHECK(v.len >= 0, Value, api, ": buffer has a negative len ", v.len);
  f.dtype = t;
  f.byteswapped = sw;
  f.readonly = v.readonly;
  f.ptr = v.buf;
  for (int d = 0; d < v.ndim; ++d) f.shape.push_back(v.shape ? v.shape[d] : v.len / v.itemsize);
  // PEP 3118: len == product(shape) * itemsize. An exporter whose elements need more than
  // `len` bytes lies about its memory; refuse it rather than read past the end.
  const int64_t n = checked_size(f.shape);  // ValueError for negative dimensions and overflow
  UMA_CHECK(n <= v.len / v.itemsize, Value, api, ": buffer of shape ", shape_str(f.shape), " and itemsize ", v.itemsize,
            " needs more than its len of ", v.len, " bytes");
  if (v.strides) {
    f.byte_strides.assign(v.strides, v.strides + v.ndim);
  } else {
    for (int64_t s : contiguous_strides(f.shape)) {  // elements: no overflow, checked_size passed
      int64_t b = 0;  // bytes may overflow for a size-0 shape such as (0, 2**61, 8)
      UMA_CHECK(!__builtin_mul_overflow(s, v.itemsize, &b), Value, api, ": buffer of shape ", shape_str(f.shape),
                " is too large");
      f.byte_strides.push_back(b);
    }
  }
  byte_extent(f.shape, f.byte_strides, static_cast<std::size_t>(v.itemsize));  // overflow checks
  return f;
}

ForeignLayout layout_of_interface(DType dtype, bool byteswapped, const Shape& shape,
                                  const std::optional<std::vector<int64_t>>& byte_strides, const char* api) {
  ForeignLayout f;
  f.dtype = dtype;
  f.byteswapped = byteswapped;
  f.shape = shape;
  for (int64_t s : shape) UMA_CHECK(s >= 0, Value, api, ": negative dimension in shape ", shape_str(shape));
  const int64_t isz = static_cast<int64_t>(itemsize(dtype));
  checked_size(shape);
  if (byte_strides) {
    f.byte_strides = *byte_strides;
  } else {
    for (int64_t s : contiguous_strides(shape)) {  // no overflow in elements: checked_size passed
      int64_t b = 0;
      UMA_CHECK(!__builtin_mul_overflow(s, isz, &b), Value, api, ": shape ", shape_str(shape), " is too large");
      f.byte_strides.push_back(b);
    }
  }
  byte_extent(f.shape, f.byte_strides, static_cast<std::size_t>(isz));  // shape/strides agree, no overflow
  return f;
}

ForeignLayout layout_of_interface_buffer(DType dtype, bool byteswapped, const Shape& shape,
                                         const std::optional<std::vector<int64_t>>& byte_strides, void* buf,
                                         int64_t len, int64_t offset, bool readonly, const char* api) {
  ForeignLayout f = layout_of_interface(dtype, byteswapped, shape, byte_strides, api);
  f.readonly = readonly;
  const int64_t n = checked_size(shape);
  const auto [lo, hi] = byte_extent(f.shape, f.byte_strides, itemsize(dtype));  // [lo, hi) from ptr
  UMA_CHECK(len >= 0 && offset >= 0 && offset <= len, Value, api, ": __array_interface__ offset ", offset,
            " is outside its data buffer of ", len, " bytes");
  UMA_CHECK(n == 0 || (offset + lo >= 0 && offset + hi <= len), Value, api, ": shape ", shape_str(shape),
            " with strides ", shape_str(f.byte_strides), " at offset ", offset, " reaches outside its data buffer of ",
            len, " bytes");
  f.ptr = static_cast<char*>(buf) + offset;
  return f;
}

}  // namespace uma::interop
