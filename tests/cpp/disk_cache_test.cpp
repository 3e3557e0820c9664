// Tests of the kernel image cache (src/kernels/disk_cache.h, Note [Kernel image cache]):
// round trips, misses for every kind of bad file, the folder's safety rule and the folder
// chosen from the environment.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "kernels/disk_cache.h"

namespace uma::kernels {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder {
  fs::path root;
  TempFolder() {
    std::string templ = (fs::temp_directory_path() / "uma-cache-test-XXXXXX").string();
    root = ::mkdtemp(templ.data());
  }
  ~TempFolder() {
    std::error_code ec;
    fs::permissions(root, fs::perms::owner_all, ec);
    fs::remove_all(root, ec);
  }
  std::string kernels() const { return (root / "kernels").string(); }
};

// Sets an environment variable for the test's duration (unset: nullopt), restoring it after.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(const char* n, std::optional<std::string> value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    if (value) ::setenv(n, value->c_str(), 1);
    else ::unsetenv(n);
  }
  ~EnvVar() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spill(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

TEST(KernelCache, RoundTripMakesThePrivateFolder) {
  TempFolder t;
  const std::string id = "source\0options sm_90"s, image("\x7f" "ELF\0\x01 image bytes"s);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");  // no folder yet: a miss
  ASSERT_TRUE(write_kernel_image(t.kernels(), id, image));
  struct stat st {};
  ASSERT_EQ(::stat(t.kernels().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), image);
  // another identity is another file; rewriting one replaces it
  EXPECT_EQ(read_kernel_image(t.kernels(), id + "x"), "");
  ASSERT_TRUE(write_kernel_image(t.kernels(), id, image + "2"));
  EXPECT_EQ(read_kernel_image(t.kernels(), id), image + "2");
  // no temporary file is left behind
  int files = 0;
  for (const auto& e : fs::directory_iterator(t.kernels())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
}

TEST(KernelCache, EveryBadFileIsAMiss) {
  TempFolder t;
  const std::string id = "identity A", image = "image of A";
  ASSERT_TRUE(write_kernel_image(t.kernels(), id, image));
  const std::string file = kernel_cache_file(t.kernels(), id), good = slurp(file);
  ASSERT_FALSE(good.empty());
  // the file of another identity under this one's name (what a hash collision would give)
  ASSERT_TRUE(write_kernel_image(t.kernels(), "identity B", "image of B"));
  spill(file, slurp(kernel_cache_file(t.kernels(), "identity B")));
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");
  // every truncation, a byte more, a wrong magic
  for (std::size_t n = 0; n < good.size(); ++n) {
    spill(file, good.substr(0, n));
    EXPECT_EQ(read_kernel_image(t.kernels(), id), "") << "truncated to " << n << " bytes";
  }
  spill(file, good + "!");
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");
  std::string bad = good;
  bad[0] = 'U';
  spill(file, bad);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");
  spill(file, good);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), image);
  // a symbolic link in place of the file is not followed
  fs::remove(file);
  const std::string elsewhere = (t.root / "elsewhere").string();
  spill(elsewhere, good);
  fs::create_symlink(elsewhere, file);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");
}

TEST(KernelCache, AFolderOthersMayWriteIsNotUsed) {
  TempFolder t;
  const std::string id = "id", image = "img";
  ASSERT_TRUE(write_kernel_image(t.kernels(), id, image));
  fs::permissions(t.kernels(), fs::perms::group_write | fs::perms::others_write, fs::perm_options::add);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), "");
  EXPECT_FALSE(write_kernel_image(t.kernels(), id, image));
  fs::permissions(t.kernels(), fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove);
  EXPECT_EQ(read_kernel_image(t.kernels(), id), image);
  // a file in place of the folder, and nothing to write
  const std::string not_folder = (t.root / "plain").string();
  spill(not_folder, "x");
  EXPECT_FALSE(write_kernel_image(not_folder, id, image));
  EXPECT_EQ(read_kernel_image(not_folder, id), "");
  EXPECT_FALSE(write_kernel_image(t.kernels(), id, ""));
  EXPECT_FALSE(write_kernel_image("", id, image));
  EXPECT_EQ(read_kernel_image("", id), "");
}

TEST(KernelCache, FolderFromTheEnvironment) {
  {
    EnvVar dir("UMA_CACHE_DIR", "/some/where");
    EXPECT_EQ(kernel_cache_dir(), "/some/where/kernels");
  }
  {
    EnvVar dir("UMA_CACHE_DIR", "");
    EXPECT_EQ(kernel_cache_dir(), "");  // off
  }
  EnvVar dir("UMA_CACHE_DIR", std::nullopt);
  {
    EnvVar xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(kernel_cache_dir(), "/xdg/uma/kernels");
  }
  EnvVar xdg("XDG_CACHE_HOME", "relative");  // not absolute: ignored
  {
    EnvVar home("HOME", "/home/someone");
    EXPECT_EQ(kernel_cache_dir(), "/home/someone/.cache/uma/kernels");
  }
  EnvVar home("HOME", std::nullopt);
  EXPECT_EQ(kernel_cache_dir(), "");
}

TEST(KernelCache, DigestIsStableAndSpreads) {
  EXPECT_EQ(digest_hex("abc"), digest_hex("abc"));
  EXPECT_EQ(digest_hex("abc").size(), 32u);
  EXPECT_NE(digest_hex("abc"), digest_hex("abd"));
  EXPECT_NE(digest_hex(""), digest_hex(std::string(1, '\0')));
}

}  // namespace
}  // namespace uma::kernels
