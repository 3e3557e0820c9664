// The Arrow C Data Interface (REFERENCE.md, "Arrow C Data Interface and PyCapsule
// interface"): format strings, export of 1-D arrays, validated import of primitive columns.
// Ownership follows Note [Arrow ownership] (include/uma/interop/arrow.h).
#include "uma/interop/arrow.h"

#include <cstring>
#include <memory>
#include <vector>

#include "uma/error.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma::interop {

using arrow::ArrowArray;
using arrow::ArrowArrayOwner;
using arrow::ArrowArrayStreamOwner;
using arrow::ArrowSchema;
using arrow::ArrowSchemaOwner;

const char* arrow_format(DType t) noexcept {
  switch (t) {
    case DType::Bool: return "b";
    case DType::Int8: return "c";
    case DType::UInt8: return "C";
    case DType::Int16: return "s";
    case DType::UInt16: return "S";
    case DType::Int32: return "i";
    case DType::UInt32: return "I";
    case DType::Int64: return "l";
    case DType::UInt64: return "L";
    case DType::Float16: return "e";
    case DType::Float32: return "f";
    case DType::Float64: return "g";
    case DType::BFloat16:
    case DType::Complex64:
    case DType::Complex128: return nullptr;
  }
  return nullptr;
}

std::optional<DType> dtype_from_arrow_format(std::string_view f) noexcept {
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case 'b': return DType::Bool;
    case 'c': return DType::Int8;
    case 'C': return DType::UInt8;
    case 's': return DType::Int16;
    case 'S': return DType::UInt16;
    case 'i': return DType::Int32;
    case 'I': return DType::UInt32;
    case 'l': return DType::Int64;
    case 'L': return DType::UInt64;
    case 'e': return DType::Float16;
    case 'f': return DType::Float32;
    case 'g': return DType::Float64;
    default: return std::nullopt;
  }
}

namespace {

constexpr std::size_t kMaxFormatRead = 64;

std::string_view format_view(const char* f) noexcept { return {f, strnlen(f, kMaxFormatRead)}; }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// What a (non-primitive) Arrow format means, for error messages.
const char* format_meaning(std::string_view f) {
  if (f == "n") return "null";
  if (f == "b") return "bit-packed bool";
  if (f == "z") return "binary";
  if (f == "Z") return "large binary";
  if (f == "u") return "utf8 string";
  if (f == "U") return "large utf8 string";
  if (f == "vu") return "utf8 view";
  if (f == "vz") return "binary view";
  if (starts_with(f, "d:")) return "decimal";
  if (starts_with(f, "w:")) return "fixed-size binary";
  if (starts_with(f, "td")) return "date";
  if (starts_with(f, "tt")) return "time";
  if (starts_with(f, "ts")) return "timestamp";
  if (starts_with(f, "tD")) return "duration";
  if (starts_with(f, "ti")) return "interval";
  if (f == "+l" || f == "+L" || f == "+vl" || f == "+vL") return "list (nested)";
  if (starts_with(f, "+w:")) return "fixed-size list (nested)";
  if (f == "+s") return "struct (nested)";
  if (f == "+m") return "map (nested)";
  if (starts_with(f, "+u")) return "union (nested)";
  if (f == "+r") return "run-end encoded (nested)";
  if (auto t = dtype_from_arrow_format(f)) return dtype_name(*t);
  return nullptr;
}

}  // namespace

std::string describe_arrow_format(const char* format) {
  if (!format) return "NULL";
  std::string_view f = format_view(format);
  std::string out = "'";
  for (char c : f) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[(static_cast<unsigned char>(c) >> 4) & 15];
      out += hex[static_cast<unsigned char>(c) & 15];
    }
  }
  if (f.size() == kMaxFormatRead) out += "...";
  out += "'";
  if (const char* m = format_meaning(f)) out += std::string(" (") + m + ")";
  return out;
}

// ---- export --------------------------------------------------------------------------------

namespace {

void release_static_schema(ArrowSchema* s) noexcept {
  if (s) s->release = nullptr;  // format and name are string literals: nothing to free
}

// What an exported ArrowArray points at; its private_data.
struct ExportedArray {
  Array values;  // keeps the uma storage (or the copy / packed bits) alive
  const void* buffers[2] = {nullptr, nullptr};
};

void release_exported_array(ArrowArray* a) noexcept {
  if (!a || !a->release) return;
  delete static_cast<ExportedArray*>(a->private_data);
  a->private_data = nullptr;
  a->release = nullptr;
}

// A non-NULL, aligned address for empty buffers (GH-14805: older consumers reject NULL).
alignas(64) const unsigned char kEmptyBuffer[64] = {};

}  // namespace

ArrowSchemaOwner export_arrow_schema(DType t, const char* api) {
  const char* fmt = arrow_format(t);
  UMA_CHECK(fmt != nullptr, Type, api, ": dtype ", dtype_name(t),
            " has no Arrow format (Arrow has no bfloat16 or complex type); cast it first, e.g. astype('float32')");
  ArrowSchema s{};
  s.format = fmt;
  s.name = "";
  s.metadata = nullptr;
  s.flags = 0;  // uma arrays have no nulls
  s.n_children = 0;
  s.children = nullptr;
  s.dictionary = nullptr;
  s.release = &release_static_schema;
  s.private_data = nullptr;
  return ArrowSchemaOwner::take(&s);
}

ArrowExport export_arrow(const Array& a, const char* api) {
  UMA_CHECK(a.ndim() == 1, Type, api, ": only 1-D arrays can be exported to Arrow, got a ", a.ndim(),
            "-D array of shape ", shape_str(a.shape()));
  ArrowExport out;
  out.schema = export_arrow_schema(a.dtype(), api);
  UMA_CHECK(a.device().is_cpu(), Runtime, api, ": the Arrow C Data Interface is host-only; array is on ",
            a.device().str());
  const int64_t n = a.size();
  auto ctx = std::make_unique<ExportedArray>();
  if (a.dtype() == DType::Bool) {
    // Arrow bit-packs booleans (LSB first): always a fresh copy.
    Array packed = Array::empty({(n + 7) / 8}, DType::UInt8);
    auto* bits = packed.data_as<uint8_t>();
    if (n > 0) std::memset(bits, 0, static_cast<std::size_t>((n + 7) / 8));
    const int64_t st = a.strides()[0];
    const bool8* src = a.data_as<bool8>();
    for (int64_t i = 0; i < n; ++i)
      if (src[i * st]) bits[i >> 3] = static_cast<uint8_t>(bits[i >> 3] | (1u << (i & 7)));
    ctx->values = std::move(packed);
  } else {
    // Shared when contiguous; a strided (or reversed) view goes out as a contiguous copy.
    ctx->values = (n <= 1 || a.strides()[0] == 1) ? a : ops::contiguous(a);
  }
  ctx->buffers[0] = nullptr;  // no validity bitmap: null_count is 0
  ctx->buffers[1] = n > 0 ? ctx->values.data() : static_cast<const void*>(kEmptyBuffer);
  ArrowArray arr{};
  arr.length = n;
  arr.null_count = 0;
  arr.offset = 0;
  arr.n_buffers = 2;
  arr.n_children = 0;
  arr.buffers = ctx->buffers;
  arr.children = nullptr;
  arr.dictionary = nullptr;
  arr.release = &release_exported_array;
  arr.private_data = ctx.release();
  out.array = ArrowArrayOwner::take(&arr);
  return out;
}

// ---- import --------------------------------------------------------------------------------

void delete_arrow_owner(void* ctx, void*, std::size_t) noexcept { delete static_cast<ArrowArrayOwner*>(ctx); }

int64_t count_unset_bits(const uint8_t* bitmap, int64_t offset, int64_t length) noexcept {
  int64_t set = 0, i = offset;
  const int64_t end = offset + length;
  for (; i < end && (i & 7); ++i) set += (bitmap[i >> 3] >> (i & 7)) & 1;
  for (; i + 64 <= end; i += 64) {
    uint64_t w;
    std::memcpy(&w, bitmap + (i >> 3), 8);
    set += __builtin_popcountll(w);
  }
  for (; i + 8 <= end; i += 8) set += __builtin_popcount(bitmap[i >> 3]);
  for (; i < end; ++i) set += (bitmap[i >> 3] >> (i & 7)) & 1;
  return length - set;
}

namespace {

// The dtype of a live schema of a primitive column; TypeError or ValueError naming the format
// otherwise. `fmt` receives the format's printable rendering for later messages.
DType column_dtype(const ArrowSchema& s, std::string& fmt, const char* api) {
  UMA_CHECK(s.format != nullptr, Value, api, ": the ArrowSchema has a NULL format");
  fmt = describe_arrow_format(s.format);
  UMA_CHECK(s.dictionary == nullptr, Type, api, ": dictionary-encoded Arrow columns (index format ", fmt,
            ") are not supported; decode them first (pyarrow: arr.dictionary_decode())");
  const std::optional<DType> t = dtype_from_arrow_format(format_view(s.format));
  UMA_CHECK(t.has_value(), Type, api, ": Arrow format ", fmt,
            " has no uma equivalent (supported: fixed-width primitive columns b c C s S i I l L e f g)",
            format_view(s.format) == "+s" ? "; select a column first (pyarrow: table.column(name))" : "");
  UMA_CHECK(s.n_children == 0, Value, api, ": malformed ArrowSchema: primitive format ", fmt, " with n_children ",
            s.n_children);
  return *t;
}

// A column of dtype t (format `fmt`) from a live ArrowArray, which is released on every path.
Array import_column(DType t, const std::string& fmt, ArrowArrayOwner array, std::optional<DType> dtype,
                    std::optional<Device> device, CopyMode copy, const char* api, Deleter adopted_deleter) {
  const ArrowArray& a = array.get();
  UMA_CHECK(a.length >= 0, Value, api, ": malformed ArrowArray: negative length ", a.length);
  UMA_CHECK(a.offset >= 0, Value, api, ": malformed ArrowArray: negative offset ", a.offset);
  UMA_CHECK(a.offset <= INT64_MAX - a.length, Value, api, ": malformed ArrowArray: offset ", a.offset, " + length ",
            a.length, " overflows");
  const bool bits = t == DType::Bool;
  const int64_t isz = static_cast<int64_t>(itemsize(t));
  UMA_CHECK(bits || a.offset + a.length <= INT64_MAX / isz, Value, api, ": malformed ArrowArray: offset ", a.offset,
            " + length ", a.length, " of ", isz, "-byte values overflows");
  UMA_CHECK(a.n_buffers == 2, Value, api, ": malformed ArrowArray: a primitive column (format ", fmt,
            ") has 2 buffers, got n_buffers ", a.n_buffers);
  UMA_CHECK(a.buffers != nullptr, Value, api, ": malformed ArrowArray: NULL buffers array");
  UMA_CHECK(a.n_children == 0 && a.dictionary == nullptr, Value, api, ": malformed ArrowArray: primitive format ", fmt,
            " with n_children ", a.n_children, a.dictionary ? " and a dictionary" : "");
  UMA_CHECK(a.null_count >= -1 && a.null_count <= a.length, Value, api, ": malformed ArrowArray: null_count ",
            a.null_count, " for length ", a.length);

  // Nulls: uma arrays cannot represent missing values.
  int64_t nulls = a.null_count;
  if (nulls == -1) nulls = (a.buffers[0] && a.length > 0) ? count_unset_bits(static_cast<const uint8_t*>(a.buffers[0]), a.offset, a.length) : 0;
  UMA_CHECK(nulls == 0, Value, api, ": the Arrow column has ", nulls, " null", nulls == 1 ? "" : "s", " (length ",
            a.length, "); uma arrays cannot hold missing values: fill or drop them first (pyarrow: "
            "pyarrow.compute.fill_null / drop_null)");

  const void* values = a.buffers[1];
  UMA_CHECK(values != nullptr || a.length == 0, Value, api, ": malformed ArrowArray: NULL values buffer with length ",
            a.length);

  if (bits) {
    UMA_CHECK(copy != CopyMode::Never, Copy, api, ": copy=False is impossible: Arrow booleans are bit-packed "
              "(format 'b') and must be unpacked into one byte per value");
    UMA_CHECK(!device || device->is_cpu(), Runtime, api, ": device ", device->str(), " is not available in this build");
    Array out = Array::empty({a.length}, DType::Bool);
    auto* o = out.data_as<bool8>();
    const auto* b = static_cast<const uint8_t*>(values);
    for (int64_t i = 0; i < a.length; ++i) {
      const int64_t k = a.offset + i;
      o[i] = ((b[k >> 3] >> (k & 7)) & 1) != 0;
    }
    array.reset();
    if (dtype && *dtype != DType::Bool) out = ops::astype(out, *dtype);
    return out;
  }

  ForeignLayout f;
  f.ptr = values ? const_cast<char*>(static_cast<const char*>(values)) + a.offset * isz : nullptr;
  f.dtype = t;
  f.shape = {a.length};
  f.byte_strides = {isz};
  f.device = Device::cpu();
  f.readonly = true;  // Note [Arrow is read-only]
  const std::size_t nbytes = static_cast<std::size_t>(a.length * isz);
  Array out = import_foreign(f, [&]() {
    auto held = std::make_unique<ArrowArrayOwner>(std::move(array));
    DataPtr p = adopt(f.ptr, nbytes, Device::cpu(), adopted_deleter, held.get());
    held.release();  // now owned by p's deleter
    return p;
  }, dtype, device, copy, api);
  array.reset();  // copied (or moved out above): release now
  return out;
}

// The producer's description of its last error, at most 512 bytes, or a placeholder.
std::string stream_error(ArrowArrayStreamOwner& stream) {
  const char* m = stream.get().get_last_error ? stream.get().get_last_error(stream.ptr()) : nullptr;
  return m ? std::string(m, strnlen(m, 512)) : std::string("no message");
}

}  // namespace

Array import_arrow(ArrowSchemaOwner schema, ArrowArrayOwner array, std::optional<DType> dtype,
                   std::optional<Device> device, CopyMode copy, const char* api, Deleter adopted_deleter) {
  // Both owners release on every exit from here on (Note [Arrow ownership]).
  UMA_CHECK(schema.live(), Value, api, ": the ArrowSchema is released (already consumed)");
  UMA_CHECK(array.live(), Value, api, ": the ArrowArray is released (already consumed)");
  std::string fmt;
  const DType t = column_dtype(schema.get(), fmt, api);
  schema.reset();  // the type is all we needed
  return import_column(t, fmt, std::move(array), dtype, device, copy, api, adopted_deleter);
}

Array import_arrow_stream(ArrowArrayStreamOwner stream, std::optional<DType> dtype, std::optional<Device> device,
                          CopyMode copy, const char* api, Deleter adopted_deleter) {
  // The stream, the schema and every array taken release on every exit (Note [Arrow ownership]).
  UMA_CHECK(stream.live(), Value, api, ": the ArrowArrayStream is released (already consumed)");
  UMA_CHECK(stream.get().get_schema && stream.get().get_next, Value, api,
            ": malformed ArrowArrayStream: NULL get_schema or get_next callback");
  ArrowSchemaOwner schema;
  if (const int rc = stream.get().get_schema(stream.ptr(), schema.ptr()); rc != 0)
    UMA_FAIL(Runtime, api, ": the Arrow stream's get_schema failed with code ", rc, " (", stream_error(stream), ")");
  UMA_CHECK(schema.live(), Value, api, ": malformed ArrowArrayStream: get_schema returned a released ArrowSchema");
  std::string fmt;
  const DType t = column_dtype(schema.get(), fmt, api);
  schema.reset();
  std::vector<ArrowArrayOwner> chunks;
  for (;;) {
    ArrowArrayOwner next;
    if (const int rc = stream.get().get_next(stream.ptr(), next.ptr()); rc != 0)
      UMA_FAIL(Runtime, api, ": the Arrow stream's get_next failed with code ", rc, " after ", chunks.size(),
               " array", chunks.size() == 1 ? "" : "s", " (", stream_error(stream), ")");
    if (!next.live()) break;  // the end of the stream
    chunks.push_back(std::move(next));
  }
  stream.reset();  // the arrays taken do not depend on it
  const DType want = dtype.value_or(t);
  if (chunks.empty()) {
    UMA_CHECK(copy != CopyMode::Never || want == t, Copy, api, ": copy=False is impossible: the Arrow stream's type ",
              fmt, " is ", dtype_name(t), ", not ", dtype_name(want));
    Array empty = Array::empty({0}, want);
    return device && !device->is_cpu() ? to_device(empty, *device) : empty;
  }
  if (chunks.size() == 1)
    return import_column(t, fmt, std::move(chunks[0]), dtype, device, copy, api, adopted_deleter);
  UMA_CHECK(copy != CopyMode::Never, Copy, api, ": copy=False is impossible: the Arrow stream holds ", chunks.size(),
            " arrays (e.g. a pyarrow ChunkedArray of ", chunks.size(),
            " chunks), which are not one buffer; combine them first (pyarrow: combine_chunks())");
  std::vector<Array> parts;
  parts.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {  // shared (read-only) host views, or unpacked booleans
    const std::string where = std::string(api) + " (array " + std::to_string(i) + " of the stream's " +
                              std::to_string(chunks.size()) + ")";  // errors name the array
    parts.push_back(import_column(t, fmt, std::move(chunks[i]), std::nullopt, std::nullopt, CopyMode::IfNeeded,
                                  where.c_str(), adopted_deleter));
  }
  Array whole = ops::concatenate(parts, 0);  // a new array
  parts.clear();                              // releases the shared chunks
  if (device && !device->is_cpu()) return want == t ? to_device(whole, *device) : to_device(whole, *device, want);
  return want == t ? whole : ops::astype(whole, want);
}

}  // namespace uma::interop
