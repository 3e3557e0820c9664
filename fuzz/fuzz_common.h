// fuzz/fuzz_common.h — helpers shared by the libFuzzer targets (fuzz/README.md).
//
// A target treats uma::Error (a user error: the input was rejected with a clear message) as a
// normal outcome. Anything else is a finding: a sanitizer report, a crash, another exception
// (libFuzzer reports it as a deadly signal after std::terminate), an UMA_ASSERT abort, or a
// FUZZ_CHECK of the target failing (an invariant the importer promised, e.g. "an accepted
// view lies inside the buffer it was given").
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/interop/copy_rules.h"
#include "uma/memory/allocator.h"
#include "uma/ops.h"

#define FUZZ_CHECK(cond)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant violated: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace fuzz {

/// Reads little-endian fields off the front of the input; past the end every field is 0.
struct Reader {
  const uint8_t* p;
  std::size_t n;

  bool empty() const { return n == 0; }
  uint64_t bytes_le(int k) {
    uint64_t v = 0;
    for (int i = 0; i < k; ++i) {
      uint64_t b = 0;
      if (n) {
        b = *p++;
        --n;
      }
      v |= b << (8 * i);
    }
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(bytes_le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(bytes_le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(bytes_le(4)); }
  uint64_t u64() { return bytes_le(8); }
  int64_t i64() { return static_cast<int64_t>(bytes_le(8)); }
  /// A dimension: one byte 0x00-0x7f is d & 15 (small, often 0 or 1); 0x80-0xff is followed
  /// by a raw int64 (huge and negative values).
  int64_t dim() {
    uint8_t b = u8();
    return b < 0x80 ? (b & 15) : i64();
  }
  /// A stride (in elements or bytes): one byte 0x00-0x7f is (b & 31) - 16; 0x80-0xff is
  /// followed by a raw int64.
  int64_t stride() {
    uint8_t b = u8();
    return b < 0x80 ? (b & 31) - 16 : i64();
  }
  /// The rest of the input.
  std::vector<uint8_t> rest() {
    std::vector<uint8_t> v(p, p + n);
    p += n;
    n = 0;
    return v;
  }
};

/// Every dtype, indexed by a byte of the input.
inline uma::DType dtype_at(uint8_t b) {
  static const uma::DType all[] = {
      uma::DType::Bool,    uma::DType::Int8,    uma::DType::Int16,    uma::DType::Int32,   uma::DType::Int64,
      uma::DType::UInt8,   uma::DType::UInt16,  uma::DType::UInt32,   uma::DType::UInt64,  uma::DType::Float16,
      uma::DType::BFloat16, uma::DType::Float32, uma::DType::Float64, uma::DType::Complex64, uma::DType::Complex128};
  return all[b % (sizeof all / sizeof all[0])];
}

/// Process-wide set-up: no caching, so every freed block goes back to malloc and ASAN sees
/// a use after free at once (a cached block would hide it); one OpenMP thread.
inline void init_once() {
  static bool done = [] {
    uma::host_allocator().set_cache_limit(0);
    setenv("OMP_NUM_THREADS", "1", 0);
    return true;
  }();
  (void)done;
}

/// The [lo, hi) byte range a view addresses relative to its data pointer, by a 128-bit
/// computation of its own (independent of uma::interop::byte_extent). Empty views: {0, 0}.
struct Extent {
  __int128 lo = 0, hi = 0;
  bool empty = true;
};
inline Extent reference_extent(const uma::Shape& shape, const std::vector<__int128>& byte_strides, std::size_t isz) {
  Extent e;
  for (int64_t d : shape)
    if (d == 0) return e;
  e.empty = false;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    __int128 t = static_cast<__int128>(shape[k] - 1) * byte_strides[k];
    (t < 0 ? e.lo : e.hi) += t;
  }
  e.hi += isz;
  return e;
}

/// FUZZ_CHECKs that every element of `a` lies inside the bytes of its storage
/// ([storage begin, storage begin + nbytes)): no view may reach outside what it owns.
inline void check_inside_storage(const uma::Array& a) {
  if (a.size() == 0 || !a.storage()) return;
  std::vector<__int128> bs;
  for (int64_t s : a.strides()) bs.push_back(static_cast<__int128>(s) * static_cast<__int128>(a.itemsize()));
  Extent e = reference_extent(a.shape(), bs, a.itemsize());
  const char* base = static_cast<const char*>(a.storage()->data.get());
  const __int128 off = static_cast<const char*>(a.data()) - base;
  FUZZ_CHECK(off + e.lo >= 0);
  FUZZ_CHECK(off + e.hi <= static_cast<__int128>(a.storage()->data.nbytes()));
}

/// Reads every element of `a` (a copy through the kernels): ASAN checks each read. A bool
/// view may hold any bytes (a producer's uint8 seen as bool); kernels read them as byte != 0.
inline void touch(const uma::Array& a, int64_t max_elements = int64_t(1) << 16) {
  if (a.size() > max_elements) return;
  uma::Array c = uma::ops::copy(a);
  FUZZ_CHECK(c.shape() == a.shape() && c.dtype() == a.dtype() && c.is_c_contiguous());
}

/// An in-memory file (memfd) holding `data`, so that the real loaders (open, fstat, pread,
/// mmap) run on fuzz input. path() names it through /proc/self/fd.
class MemFile {
 public:
  MemFile(const uint8_t* data, std::size_t n) {
    fd_ = memfd_create("uma-fuzz", MFD_CLOEXEC);
    FUZZ_CHECK(fd_ >= 0);
    std::size_t off = 0;
    while (off < n) {
      ssize_t w = write(fd_, data + off, n - off);
      FUZZ_CHECK(w > 0);
      off += static_cast<std::size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

/// Whether importing (copying) `f` allocates a reasonable amount: a zero-stride view of a few
/// bytes may describe 2**59 elements; copying it is correct (or a clean out-of-memory error)
/// but not what a fuzzer should spend its time and memory on.
inline bool small_enough_to_copy(const uma::interop::ForeignLayout& f) {
  int64_t n = 0;
  try {
    n = uma::checked_size(f.shape);
  } catch (const uma::Error&) {
    return true;  // the importer must refuse it
  }
  return n <= (int64_t(1) << 24) / static_cast<int64_t>(uma::itemsize(f.dtype));
}

/// Runs f(); a uma::Error (a clean rejection) is swallowed, anything else propagates.
template <class F>
bool accepts(F&& f) {
  try {
    f();
    return true;
  } catch (const uma::Error&) {
    return false;
  }
}

}  // namespace fuzz
