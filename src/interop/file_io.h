// Internal helpers of the file loaders (src/interop/npy.cpp, safetensors.cpp): a read-only
// input file (positional reads, or one adopted read-only mapping), an output file written
// next to its destination and renamed over it, byte swapping and bool checks.
// OS failures throw std::system_error (errno); the Python layer turns them into OSError.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "uma/array.h"
#include "uma/error.h"

namespace uma::files::detail {

/// A regular file opened read-only. Invariant: fd_ >= 0 while alive; size() is fstat's size.
class InputFile {
 public:
  /// Opens `path` (O_NONBLOCK, so a FIFO cannot block; anything but a regular file is a
  /// ValueError; a directory is EISDIR).
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const noexcept { return size_; }
  /// Reads exactly n bytes at `offset` (caller checked offset + n <= size()); ValueError if
  /// the file ends first (it shrank while loading).
  void read_at(void* dst, uint64_t n, uint64_t offset) const;
  /// The first min(n, size()) bytes.
  std::string read_prefix(uint64_t n) const;
  /// Maps the whole file read-only and adopts the mapping (Note [Mapped files]): the
  /// returned Storage's deleter munmaps exactly once. Requires size() > 0.
  std::shared_ptr<Storage> map() const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// A new file written to a temporary name in the destination's folder; commit() renames it
/// over the destination (atomic replace: a reader's mapping of the old file stays valid).
/// A destination that is a symbolic link is its target's file (the link stays); an existing
/// file keeps its permission bits, and one without write permission is refused, as open(2)
/// refuses it. Destroyed uncommitted, it removes the temporary file.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, uint64_t n);
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
};

/// Reverses the byte order of each of n elements of dtype t in place (complex: each part).
void byteswap(void* p, uint64_t n, DType t) noexcept;
/// ValueError unless prod(max(d, 1) for d in shape) * itemsize fits in int64 (what strides
/// and byte sizes need); `what` starts the message.
void check_shape_fits(const Shape& shape, DType dtype, const char* what);
/// Throws std::system_error for the current errno, naming `what`.
[[noreturn]] void throw_errno(const std::string& what);

/// Runs f(); a uma::Error escaping it is rethrown with `context` prepended to its message.
template <class F>
decltype(auto) with_context(const std::string& context, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(e.kind(), context + e.what());
  }
}

/// a * b and a + b for sizes; ValueError naming `what` on overflow.
uint64_t checked_mul(uint64_t a, uint64_t b, const char* what);
uint64_t checked_add(uint64_t a, uint64_t b, const char* what);

}  // namespace uma::files::detail
