// Internal file helpers of the loaders (see file_io.h and Note [Mapped files] in
// include/uma/interop/files.h).
#include "file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "uma/memory/allocator.h"

namespace uma::files::detail {

static_assert(std::endian::native == std::endian::little,
              "uma's file formats (.npy '<', .safetensors) are read and written on little-endian hosts only");

[[noreturn]] void throw_errno(const std::string& what) {
  int e = errno;
  throw std::system_error(e, std::generic_category(), what);
}

uint64_t checked_mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  UMA_CHECK(!__builtin_mul_overflow(a, b, &r), Value, what, " overflows 64 bits (", a, " * ", b, ")");
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  UMA_CHECK(!__builtin_add_overflow(a, b, &r), Value, what, " overflows 64 bits (", a, " + ", b, ")");
  return r;
}

void check_shape_fits(const Shape& shape, DType dtype, const char* what) {
  uint64_t acc = itemsize(dtype);
  for (int64_t d : shape) {
    UMA_CHECK(d >= 0, Value, what, " negative dimension in shape ", shape_str(shape));
    UMA_CHECK(!__builtin_mul_overflow(acc, static_cast<uint64_t>(d > 0 ? d : 1), &acc) && acc <= uint64_t(INT64_MAX),
              Value, what, " shape ", shape_str(shape), " is too big (its byte size overflows 64 bits)");
  }
}

// ---- InputFile ---------------------------------------------------------------------------

InputFile::InputFile(const std::string& path) {
  do {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw_errno("open");
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    int e = errno;
    ::close(fd_);
    errno = e;
    throw_errno("fstat");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    errno = EISDIR;
    throw_errno("open");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    UMA_FAIL(Value, "not a regular file (a device, FIFO or socket cannot be loaded)");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(void* dst, uint64_t n, uint64_t offset) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    std::size_t chunk = static_cast<std::size_t>(std::min<uint64_t>(n, uint64_t(1) << 30));
    ssize_t r = ::pread(fd_, p, chunk, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw_errno("read");
    }
    UMA_CHECK(r > 0, Value, "the file ended at byte ", offset, " while ", n,
              " more bytes were expected (it changed while loading)");
    p += r;
    n -= static_cast<uint64_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

std::string InputFile::read_prefix(uint64_t n) const {
  std::string s(static_cast<std::size_t>(std::min(n, size_)), '\0');
  read_at(s.data(), s.size(), 0);
  return s;
}

namespace {
void unmap(void*, void* ptr, std::size_t nbytes) noexcept { ::munmap(ptr, nbytes); }
}  // namespace

std::shared_ptr<Storage> InputFile::map() const {
  UMA_ASSERT(size_ > 0);
  void* p = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) throw_errno("mmap");
  DataPtr d;
  try {
    d = adopt(p, static_cast<std::size_t>(size_), Device::cpu(), &unmap, nullptr);
    return std::make_shared<Storage>(std::move(d));
  } catch (...) {
    if (!d) ::munmap(p, static_cast<std::size_t>(size_));  // adopt itself failed
    throw;  // otherwise d's destructor unmaps
  }
}

// ---- OutputFile --------------------------------------------------------------------------

namespace {
// The file a write to `path` reaches, as open(2) follows symbolic links (a dangling link's
// target included): each link's target, relative ones read from the link's folder.
std::string link_target(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat ls;
    if (::lstat(path.c_str(), &ls) != 0 || !S_ISLNK(ls.st_mode)) return path;
    std::string to(static_cast<std::size_t>(ls.st_size > 0 ? ls.st_size : 4096), '\0');
    const ssize_t n = ::readlink(path.c_str(), to.data(), to.size());
    if (n < 0) return path;
    to.resize(static_cast<std::size_t>(n));
    const std::size_t slash = path.find_last_of('/');
    path = (to.empty() || to[0] == '/' || slash == std::string::npos) ? to : path.substr(0, slash + 1) + to;
  }
  errno = ELOOP;
  throw_errno("open");
}
}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(link_target(path)) {
  // What open(path, O_WRONLY | O_CREAT | O_TRUNC) would refuse is refused before anything is
  // written, with its error: a directory (or a name ending in '/'), an existing file without
  // write permission. An existing file keeps its permission bits, and a symbolic link stays a
  // link to the rewritten file (numpy.save writes through it).
  struct stat st;
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if ((!path.empty() && path.back() == '/') || (exists && S_ISDIR(st.st_mode))) {
    errno = EISDIR;
    throw_errno("open");
  }
  if (exists && ::access(path_.c_str(), W_OK) != 0) throw_errno("open");
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_ = path_ + ".uma-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    do {
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // umask applies
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ >= 0) {
      if (exists && S_ISREG(st.st_mode)) ::fchmod(fd_, st.st_mode & 07777);
      return;
    }
    if (errno != EEXIST) break;
  }
  tmp_.clear();
  throw_errno("open");
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::write(const void* data, uint64_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    std::size_t chunk = static_cast<std::size_t>(std::min<uint64_t>(n, uint64_t(1) << 30));
    ssize_t r = ::write(fd_, p, chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw_errno("write");
    }
    p += r;
    n -= static_cast<uint64_t>(r);
  }
}

void OutputFile::commit() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_errno("close");
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) throw_errno("rename");
  tmp_.clear();
}

// ---- data helpers ------------------------------------------------------------------------

void byteswap(void* p, uint64_t n, DType t) noexcept {
  const std::size_t isz = itemsize(t);
  const std::size_t part = is_complex(t) ? isz / 2 : isz;
  if (part == 1) return;
  unsigned char* b = static_cast<unsigned char*>(p);
  const uint64_t parts = n * (isz / part);
  for (uint64_t i = 0; i < parts; ++i, b += part) std::reverse(b, b + part);
}

}  // namespace uma::files::detail
