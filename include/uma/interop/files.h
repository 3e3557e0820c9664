// uma/interop/files.h — .npy and .safetensors files, loaded without copies.
//
// Format facts: REFERENCE.md "File formats"; NumPy's `numpy.lib.format` (NEP 1) for .npy and
// the reference implementation (huggingface/safetensors, tensor.rs) for .safetensors.
//
// Note [Mapped files]
// load_*(path, mmap=true) maps the whole file read-only (PROT_READ, MAP_SHARED) and adopts
// the mapping as one Storage (Note [Adopted buffers]): every array of the file is a read-only
// view into it, the mapping counts file-size bytes under adopted_bytes while any view lives,
// and its deleter munmaps exactly once. Data that cannot be shared as it is (non-native byte
// order, a data offset that is not a multiple of the itemsize) raises CopyError naming the
// reason; mmap=false always reads (and byte-swaps) into pooled memory; mmap=nullopt (the
// Python default, as asarray's copy=None) maps the file when every array of it can be shared
// and reads it otherwise.
// Headers are never trusted: every length, offset and shape is checked with overflow-safe
// arithmetic against the file size before any data byte is touched, and the data must fill
// the file exactly (no truncation, no trailing bytes, no gaps or overlaps). Malformed files
// raise ValueError naming the problem and the offending value; dtypes uma cannot represent
// raise TypeError; errors of the OS (open, read, mmap, write) are thrown as std::system_error.
// Bool bytes other than 0 and 1 load as they are (read as true, byte != 0), as np.load keeps them.
// A file mapped by a live array must not be truncated by another process (the OS would kill
// the reader with SIGBUS, as with numpy.memmap); save_* therefore writes a temporary file
// in the same folder and renames it over `path`, so saving over a mapped file is safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "uma/array.h"

namespace uma::files {

/// Largest .npy header accepted (the dict; NumPy writes < 1 KiB for any supported dtype).
constexpr uint64_t kMaxNpyHeaderBytes = uint64_t(1) << 20;
/// Largest safetensors JSON header accepted (the reference implementation's MAX_HEADER_SIZE).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
/// Largest number of dimensions accepted in a header (NumPy's NPY_MAXDIMS).
constexpr std::size_t kMaxFileNdim = 64;

// ---- .npy ---------------------------------------------------------------------------------

/// A validated .npy header. Invariant: data_offset + data_nbytes == file size.
struct NpyHeader {
  int major = 1, minor = 0;   // format version: 1.0, 2.0 or 3.0
  DType dtype = DType::Float64;
  bool byteswapped = false;   // descr is big-endian ('>') with itemsize > 1
  bool fortran_order = false;
  Shape shape;
  uint64_t data_offset = 0;   // bytes from the start of the file
  uint64_t data_nbytes = 0;   // prod(shape) * itemsize
};

/// Number of leading bytes of a .npy file that hold magic, version, header length and header
/// (= data_offset). Needs the first min(12, file_size) bytes in `prefix[0, avail)`.
/// ValueError: bad magic, unknown version, header length past the end or over the limit.
uint64_t npy_header_end(const unsigned char* prefix, std::size_t avail, uint64_t file_size);

/// Parses and validates a .npy header; `prefix[0, avail)` must hold at least npy_header_end
/// bytes. The dict is the Python literal np.save writes: exactly the keys 'descr' (a
/// [<>|=][biufc]N type string), 'fortran_order' (True/False) and 'shape' (a tuple of
/// non-negative ints). ValueError for anything else; TypeError for a well-formed NumPy dtype
/// uma does not have ('<U3', '|O', '<f16', structured descr lists).
NpyHeader parse_npy_header(const unsigned char* prefix, std::size_t avail, uint64_t file_size);

/// The bytes np.save writes before the data: version 1.0 (2.0 when the dict needs more than
/// 65535 bytes), little-endian descr, padded with spaces and '\n' to a multiple of 64.
/// TypeError for bfloat16 (.npy has no such type).
std::string npy_header_bytes(DType dtype, const Shape& shape, bool fortran_order);

/// The .npy type string of a dtype ("<f8", "|b1"); TypeError for bfloat16.
std::string npy_descr(DType dtype);

// ---- .safetensors -------------------------------------------------------------------------

/// One tensor of a safetensors header. Offsets are relative to the first data byte.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // [begin, end), end - begin == prod(shape) * itemsize
};

/// A validated safetensors header: tensors in data order (they tile [0, data size) exactly).
struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;
  /// The optional "__metadata__" map (string -> string), in header order; nullopt if absent.
  std::optional<std::vector<std::pair<std::string, std::string>>> metadata;
  uint64_t data_offset = 8;  // 8 + header length
};

/// 8 + N, the header's end, from the first 8 bytes: ValueError when N exceeds the file or
/// kMaxSafetensorsHeaderBytes.
uint64_t safetensors_header_end(const unsigned char* prefix, std::size_t avail, uint64_t file_size);

/// Parses and validates a safetensors header (strict JSON: the schema of the reference
/// implementation, duplicate or unknown keys rejected, UTF-8 checked, integers only).
/// Dtype names: BOOL U8 I8 U16 I16 U32 I32 U64 I64 F16 BF16 F32 F64 C64; the FP8/FP6/FP4
/// names are known but unsupported (TypeError); any other name is a ValueError.
SafetensorsHeader parse_safetensors_header(const unsigned char* prefix, std::size_t avail, uint64_t file_size);

/// Orders tensors as the reference writer does (dtype alignment descending, then name) and
/// assigns their offsets. TypeError for dtypes safetensors lacks (complex128); ValueError for
/// a duplicate name or the reserved name "__metadata__".
SafetensorsHeader plan_safetensors(std::vector<SafetensorsTensor> tensors,
                                   std::optional<std::vector<std::pair<std::string, std::string>>> metadata);

/// The 8-byte length plus the compact JSON header of `h`, padded with spaces to a multiple
/// of 8 bytes (byte-identical to the reference writer for the same tensors; metadata keys in
/// the order given).
std::string safetensors_header_bytes(const SafetensorsHeader& h);

/// The safetensors dtype name ("F32", "BF16", ...); TypeError for complex128.
const char* safetensors_dtype_name(DType dtype);

// ---- files --------------------------------------------------------------------------------

/// What a file's first bytes say it is.
enum class FileFormat { Npy, Safetensors, Unknown };
/// Looks at the magic bytes ("\x93NUMPY", or an 8-byte length followed by '{').
FileFormat sniff_format(const std::string& path);

/// Loads a .npy file (Note [Mapped files]). Fortran-order data loads as an F-contiguous view.
/// mmap=true: a read-only view of the adopted mapping (CopyError when impossible).
/// mmap=false: a writable array in pooled memory (byte-swapped to native order).
/// mmap=nullopt: the first where the data can be shared, else the second.
Array load_npy(const std::string& path, std::optional<bool> mmap);

struct SafetensorsFile {
  std::vector<std::pair<std::string, Array>> tensors;  // data order
  std::optional<std::vector<std::pair<std::string, std::string>>> metadata;
};
/// Loads a .safetensors file; with mmap=true every tensor is a read-only view of one shared
/// mapping (it lives while any of them does); mmap=nullopt maps the file when every tensor can
/// be shared and reads it otherwise (Note [Mapped files]).
SafetensorsFile load_safetensors(const std::string& path, std::optional<bool> mmap);

/// Writes `a` (host memory) as .npy: C order, or Fortran order when `a` is F- but not
/// C-contiguous (as np.save does). TypeError for bfloat16.
void save_npy(const std::string& path, const Array& a);
/// Writes tensors as .safetensors (little-endian, C order, reference-writer order).
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Array>>& tensors,
                      const std::optional<std::vector<std::pair<std::string, std::string>>>& metadata);

}  // namespace uma::files
