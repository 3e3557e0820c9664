// Kernel images kept on disk between processes: Note [Kernel image cache] (disk_cache.h).
#include "kernels/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

namespace uma::kernels {

namespace {

// A file: kMagic, the identity's length (8 bytes, little-endian), the identity, the image's
// length, the image; nothing after.
constexpr char kMagic[] = "uma kernel image 1\n";
constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
constexpr std::uint64_t kMaxFile = std::uint64_t{1} << 30;  // larger files are not images of ours

void put_u64(std::string& s, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

std::uint64_t get_u64(const std::string& s, std::size_t at) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + k])) << (8 * k);
  return v;
}

std::uint64_t fnv1a(const std::string& text, std::uint64_t h) {
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

// A folder this process may trust: a directory owned by its user that no one else may write.
bool safe_folder(const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Makes `folder` (mode 0700; its parents as the umask says) unless it exists; then whether it
// is safe to use.
bool make_folder(const std::string& folder) {
  std::error_code ec;
  const std::filesystem::path p(folder);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return false;
  return safe_folder(folder);
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string digest_hex(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  const std::uint64_t h[2] = {fnv1a(text, 14695981039346656037ull), fnv1a(text, 0x9e3779b97f4a7c15ull)};
  std::string s;
  for (std::uint64_t v : h)
    for (int k = 15; k >= 0; --k) s.push_back(hex[(v >> (4 * k)) & 0xf]);
  return s;
}

std::string kernel_cache_dir() {
  std::string base;
  if (const char* v = std::getenv("UMA_CACHE_DIR")) {
    if (*v == '\0') return "";
    base = v;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') {
    base = std::string(x) + "/uma";
  } else if (const char* h = std::getenv("HOME"); h && *h == '/') {
    base = std::string(h) + "/.cache/uma";
  } else {
    return "";
  }
  return base + "/kernels";
}

std::string kernel_cache_file(const std::string& folder, const std::string& identity) {
  return folder + "/" + digest_hex(identity) + ".img";
}

std::string read_kernel_image(const std::string& folder, const std::string& identity) {
  if (folder.empty() || !safe_folder(folder)) return "";
  const int fd = ::open(kernel_cache_file(folder, identity).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_size > 0 &&
      static_cast<std::uint64_t>(st.st_size) <= kMaxFile) {
    data.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    data.resize(done);
  }
  ::close(fd);
  const std::size_t head = kMagicSize + 8;
  if (data.size() < head || data.compare(0, kMagicSize, kMagic) != 0) return "";
  const std::uint64_t id_size = get_u64(data, kMagicSize);
  if (id_size != identity.size() || data.size() - head < id_size + 8) return "";
  if (data.compare(head, identity.size(), identity) != 0) return "";
  const std::size_t at = head + identity.size();
  const std::uint64_t image_size = get_u64(data, at);
  if (image_size == 0 || image_size != data.size() - at - 8) return "";
  return data.substr(at + 8);
}

bool write_kernel_image(const std::string& folder, const std::string& identity, const std::string& image) {
  if (folder.empty() || image.empty() || !make_folder(folder)) return false;
  std::string data(kMagic, kMagicSize);
  put_u64(data, identity.size());
  data += identity;
  put_u64(data, image.size());
  data += image;
  static std::atomic<unsigned> serial{0};
  const std::string target = kernel_cache_file(folder, identity);
  const std::string temp = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool written = write_all(fd, data);
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temp.c_str(), target.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace uma::kernels
