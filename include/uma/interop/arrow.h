// uma/interop/arrow.h — the Arrow C Data and C Stream Interfaces: our own definitions of
// ArrowSchema, ArrowArray and ArrowArrayStream written from the spec (REFERENCE.md, "Arrow C
// Data Interface and PyCapsule interface"), their move-only owners, the format-string mapping,
// and export/import of 1-D uma arrays (import also from a stream of arrays). Frozen ABI:
// layouts are pinned by the static_asserts below and by tests/cpp/arrow_test.cpp.
//
// Note [Arrow ownership]
// A struct whose `release` is non-NULL is live; `release == NULL` marks it released. Whoever
// holds a live struct must call `release(&struct)` exactly once (only on the top-level struct:
// children and dictionaries are released by it). Moving a struct is a bitwise copy after which
// the source's `release` is set to NULL (ArrowSchemaOwner/ArrowArrayOwner::take do exactly
// that); the released source keeps its memory, which belongs to whoever allocated it (e.g. a
// PyCapsule). Imported memory stays valid until the ArrowArray is released, so a shared import
// keeps the ArrowArray (on the heap) as the adopted DataPtr's context and releases it in the
// deleter (Note [Adopted buffers]).
//
// Note [Arrow is read-only]
// Arrow data is immutable by the format's convention (producers share buffers between arrays
// and slices and cache statistics over them; pyarrow's own NumPy and DLPack exports are
// read-only). A shared import is therefore read-only (DESIGN.md: "a read-only source stays
// read-only"); copy=True gives a writable copy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "uma/array.h"
#include "uma/interop/copy_rules.h"

namespace uma::arrow {

constexpr int64_t kFlagDictionaryOrdered = 1;
constexpr int64_t kFlagNullable = 2;
constexpr int64_t kFlagMapKeysSorted = 4;

/// The C Data Interface's type description. Ownership: Note [Arrow ownership].
struct ArrowSchema {
  const char* format;        // e.g. "i" (int32); never NULL in a live struct
  const char* name;          // optional (may be NULL)
  const char* metadata;      // optional binary key/value map (may be NULL)
  int64_t flags;             // kFlag*
  int64_t n_children;
  ArrowSchema** children;
  ArrowSchema* dictionary;   // non-NULL for dictionary-encoded types
  void (*release)(ArrowSchema*);
  void* private_data;
};

/// The C Data Interface's data. For a fixed-width primitive: n_buffers == 2, buffers[0] is the
/// validity bitmap (LSB first, 1 = valid; may be NULL when null_count == 0), buffers[1] the
/// values; element i of the array is values[offset + i]. null_count may be -1 (unknown).
/// Ownership: Note [Arrow ownership].
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  ArrowArray** children;
  ArrowArray* dictionary;
  void (*release)(ArrowArray*);
  void* private_data;
};

static_assert(offsetof(ArrowSchema, format) == 0 && offsetof(ArrowSchema, name) == 8 &&
              offsetof(ArrowSchema, metadata) == 16 && offsetof(ArrowSchema, flags) == 24 &&
              offsetof(ArrowSchema, n_children) == 32 && offsetof(ArrowSchema, children) == 40 &&
              offsetof(ArrowSchema, dictionary) == 48 && offsetof(ArrowSchema, release) == 56 &&
              offsetof(ArrowSchema, private_data) == 64 && sizeof(ArrowSchema) == 72);
static_assert(offsetof(ArrowArray, length) == 0 && offsetof(ArrowArray, null_count) == 8 &&
              offsetof(ArrowArray, offset) == 16 && offsetof(ArrowArray, n_buffers) == 24 &&
              offsetof(ArrowArray, n_children) == 32 && offsetof(ArrowArray, buffers) == 40 &&
              offsetof(ArrowArray, children) == 48 && offsetof(ArrowArray, dictionary) == 56 &&
              offsetof(ArrowArray, release) == 64 && offsetof(ArrowArray, private_data) == 72 &&
              sizeof(ArrowArray) == 80);

/// Move-only owner of one live struct S (ArrowSchema or ArrowArray): releases it exactly once,
/// on destruction or reset(). Invariant: get().release == NULL <=> owns nothing.
template <class S>
class Owner {
 public:
  Owner() noexcept { s_.release = nullptr; }
  /// Moves `*src` in (bitwise copy) and marks `*src` released. A released or NULL src gives an
  /// empty owner.
  static Owner take(S* src) noexcept {
    Owner o;
    if (src) {
      o.s_ = *src;
      src->release = nullptr;
    }
    return o;
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner(Owner&& o) noexcept : s_(o.s_) { o.s_.release = nullptr; }
  Owner& operator=(Owner&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = o.s_;
      o.s_.release = nullptr;
    }
    return *this;
  }
  ~Owner() { reset(); }

  /// Calls release once (if live); afterwards the owner is empty.
  void reset() noexcept {
    if (s_.release) {
      s_.release(&s_);  // the callee sets release to NULL; make sure of it
      s_.release = nullptr;
    }
  }
  /// Moves the struct out to `*dst` (which must be released or uninitialised); empties this.
  void move_to(S* dst) noexcept {
    *dst = s_;
    s_.release = nullptr;
  }
  bool live() const noexcept { return s_.release != nullptr; }
  const S& get() const noexcept { return s_; }
  S* ptr() noexcept { return &s_; }

 private:
  S s_{};
};
using ArrowSchemaOwner = Owner<ArrowSchema>;
using ArrowArrayOwner = Owner<ArrowArray>;

/// The C Stream Interface: a producer of ArrowArrays of one schema (a pyarrow ChunkedArray's
/// chunks, a RecordBatchReader's batches). get_schema and get_next return 0 or an errno value
/// (then get_last_error may describe it, valid until the next call or the release); get_next
/// hands out a released ArrowArray at the end of the stream. The arrays it hands out are
/// independent of it: releasing the stream does not release them. Ownership: Note [Arrow
/// ownership].
struct ArrowArrayStream {
  int (*get_schema)(ArrowArrayStream*, ArrowSchema* out);
  int (*get_next)(ArrowArrayStream*, ArrowArray* out);
  const char* (*get_last_error)(ArrowArrayStream*);
  void (*release)(ArrowArrayStream*);
  void* private_data;
};
static_assert(offsetof(ArrowArrayStream, get_schema) == 0 && offsetof(ArrowArrayStream, get_next) == 8 &&
              offsetof(ArrowArrayStream, get_last_error) == 16 && offsetof(ArrowArrayStream, release) == 24 &&
              offsetof(ArrowArrayStream, private_data) == 32 && sizeof(ArrowArrayStream) == 40);
using ArrowArrayStreamOwner = Owner<ArrowArrayStream>;

}  // namespace uma::arrow

namespace uma::interop {

/// The Arrow format string of a dtype ("b" for bool, which Arrow bit-packs; "c"/"C", "s"/"S",
/// "i"/"I", "l"/"L" for int8..uint64; "e"/"f"/"g" for float16/32/64), or NULL for dtypes with
/// no Arrow primitive (bfloat16, complex64, complex128).
const char* arrow_format(DType t) noexcept;
/// The dtype of a primitive Arrow format string (inverse of arrow_format); nullopt otherwise.
std::optional<DType> dtype_from_arrow_format(std::string_view format) noexcept;
/// A printable rendering of a format string from a producer (at most 64 characters read,
/// control bytes escaped), and what it means when uma knows ("u" -> "'u' (utf8 string)").
std::string describe_arrow_format(const char* format);

/// Exported schema + array of a 1-D uma array (Note [Arrow ownership]).
struct ArrowExport {
  arrow::ArrowSchemaOwner schema;
  arrow::ArrowArrayOwner array;
};

/// The schema of `t`'s Arrow type (format, name "", no metadata, flags 0: uma arrays have no
/// nulls). TypeError naming the dtype when it has no Arrow format.
arrow::ArrowSchemaOwner export_arrow_schema(DType t, const char* api);

/// Exports a 1-D array. TypeError for other ranks and for dtypes with no Arrow format;
/// RuntimeError off the host. A contiguous array (stride 1, or size <= 1) is shared and the
/// exported ArrowArray keeps its storage alive until released; a strided view is exported as
/// a contiguous copy, and bool as a freshly bit-packed copy. null_count 0, buffers[0] NULL,
/// offset 0; a size-0 array gets a non-NULL empty values buffer (older consumers reject NULL).
ArrowExport export_arrow(const Array& a, const char* api);

/// Deleter of adopted Arrow memory: `ctx` is a heap ArrowArrayOwner*, deleted (so released)
/// here. Bindings may pass their own (e.g. one that takes a language runtime's lock first).
void delete_arrow_owner(void* ctx, void* ptr, std::size_t nbytes) noexcept;

/// Imports a primitive column, taking ownership of both structs: each is released exactly
/// once on every path (the schema before returning; the array before returning, or when the
/// last view of shared memory dies). Validates everything (ValueError on malformed structs:
/// released structs, negative length/offset, offset+length overflow, n_buffers != 2, NULL
/// values buffer with length > 0, null_count < -1 or > length). Dictionary, nested and
/// non-primitive formats: TypeError naming the format. A column with nulls (null_count > 0,
/// or -1 and a validity bitmap with cleared bits): ValueError naming the null count.
/// Fixed-width values share memory under the copy rules (interop::import_foreign), honouring
/// `offset`, read-only (Note [Arrow is read-only]); bit-packed booleans are unpacked into a new
/// bool array (copy=False: CopyError).
Array import_arrow(arrow::ArrowSchemaOwner schema, arrow::ArrowArrayOwner array, std::optional<DType> dtype,
                   std::optional<Device> device, CopyMode copy, const char* api,
                   Deleter adopted_deleter = &delete_arrow_owner);

/// Imports the arrays of an Arrow stream as one 1-D array, taking ownership of the stream
/// (released before returning, on every path). Each array is validated as import_arrow
/// validates a column, against the stream's one schema. One array: shared as import_arrow
/// shares it. No arrays: an empty array of the schema's dtype (copy=False with another dtype:
/// CopyError, as for one array). Several: their concatenation, a new array (copy=False:
/// CopyError naming the count, as they are not one buffer). A
/// producer error (get_schema or get_next returning non-zero): RuntimeError naming the call,
/// the code and the producer's message; a stream without callbacks: ValueError.
Array import_arrow_stream(arrow::ArrowArrayStreamOwner stream, std::optional<DType> dtype,
                          std::optional<Device> device, CopyMode copy, const char* api,
                          Deleter adopted_deleter = &delete_arrow_owner);

/// Number of cleared (null) bits among bits [offset, offset + length) of an LSB-first bitmap.
int64_t count_unset_bits(const uint8_t* bitmap, int64_t offset, int64_t length) noexcept;

}  // namespace uma::interop
