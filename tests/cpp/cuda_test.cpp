// Tests for the CUDA memory layer (include/uma/memory/cuda.h): availability, the device
// caching allocator's documented policy (src/memory/cuda/device_allocator.h), transfers
// through the staging pipeline, device packing of strided views, host registration shared
// by reference count (Note [Shared registrations]) and managed memory. Without a usable GPU
// (CI) the GPU tests skip with the reason; a build without CUDA checks the stubs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/transfer.h"
#include "error_kind.h"

namespace uma {
namespace {

const Device kGpu{DeviceType::CUDA, 0};

#define NEED_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no usable CUDA GPU: " << cuda::unavailable_reason()

TEST(Cuda, AvailabilityNeverThrows) {
  EXPECT_EQ(cuda::is_available(), cuda::device_count() > 0);
  EXPECT_EQ(cuda::unavailable_reason().empty(), cuda::is_available());
  if (!cuda::built_with_cuda()) {
    EXPECT_EQ(cuda::device_count(), 0);
  }
}

TEST(Cuda, WithoutGpuEverythingRaisesRuntimeErrorNamingWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a GPU is available";
  for (auto f : {+[] { Array::empty({2}, DType::Float32, kGpu); }, +[] { memory_stats(kGpu); },
                 +[] { cuda::synchronize(0); }, +[] { to_device(Array::empty({2}, DType::Float32), kGpu); }}) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Runtime);
      EXPECT_NE(std::string(e.what()).find(cuda::unavailable_reason()), std::string::npos) << e.what();
    }
  }
}

TEST(Cuda, RoundTripThroughTheStagingPipeline) {
  NEED_GPU();
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(1000), int64_t(3) << 20, (int64_t(40) << 20) + 7}) {
    Array h = Array::empty({n}, DType::Int32);
    std::iota(h.data_as<int32_t>(), h.data_as<int32_t>() + n, 7);
    Array g = to_device(h, kGpu);
    EXPECT_EQ(g.device(), kGpu);
    EXPECT_EQ(g.storage()->data.memory_kind(), MemoryKind::Device);
    Array back = to_device(g, Device::cpu());
    ASSERT_EQ(back.size(), n);
    EXPECT_EQ(std::memcmp(back.data(), h.data(), static_cast<std::size_t>(h.nbytes())), 0) << n;
  }
}

TEST(Cuda, StridedDeviceViewsArePackedOnTheGpu) {
  NEED_GPU();
  Array h = Array::empty({6, 8}, DType::Float64);
  for (int i = 0; i < 48; ++i) h.data_as<double>()[i] = i * 0.5;
  Array g = to_device(h, kGpu);
  // g[::2, ::-3] as a view: shape (3, 3), strides (16, -3) elements.
  Array v = g.view(static_cast<double*>(g.data()) + 7, {3, 3}, {16, -3});
  Array back = to_device(v, Device::cpu());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(back.data_as<double>()[i * 3 + j], h.data_as<double>()[16 * i + 7 - 3 * j]);
}

TEST(Cuda, AllocatorCachesAndReusesBlocksByClass) {
  NEED_GPU();
  cuda::synchronize(0);
  cuda::clear_cache(0);
  MemoryStats s0 = memory_stats(kGpu);
  void* p = nullptr;
  {
    Array a = Array::empty({(3 << 20) + 1}, DType::UInt8, kGpu);  // class: 4 MiB (multiple of 2 MiB)
    p = a.data();
    EXPECT_EQ(memory_stats(kGpu).active_bytes - s0.active_bytes, 4 << 20);
  }
  MemoryStats s1 = memory_stats(kGpu);
  EXPECT_EQ(s1.active_bytes, s0.active_bytes);
  EXPECT_EQ(s1.cached_bytes - s0.cached_bytes, 4 << 20);
  Array b = Array::empty({4 << 20}, DType::UInt8, kGpu);
  EXPECT_EQ(b.data(), p);  // same class: the cached block
  cuda::clear_cache(0);
  EXPECT_EQ(memory_stats(kGpu).cached_bytes, 0);
}

TEST(Cuda, OutOfMemoryIsMemoryErrorAndLeavesNoStickyError) {
  NEED_GPU();
  try {
    Array::empty({int64_t(1) << 50}, DType::UInt8, kGpu);  // 1 PiB
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Memory) << e.what();
  }
  Array ok = Array::empty({16}, DType::Float32, kGpu);  // the next call works
  EXPECT_NE(ok.data(), nullptr);
}

int g_released = 0;
void count_release(void*, void*, std::size_t) noexcept { ++g_released; }

TEST(Cuda, MappedAdoptionsShareOneRegistrationAndUnregisterOnce) {
  NEED_GPU();
  std::vector<float> host(1 << 16, 1.5f);
  const std::size_t base = cuda::registration_count();
  g_released = 0;
  char* b = reinterpret_cast<char*>(host.data());
  const std::size_t n = host.size() * sizeof(float);
  bool ro = true;
  DataPtr whole = cuda::adopt_mapped(adopt(b, n, Device::cpu(), &count_release, nullptr), b, n, b, n, false, 0, &ro);
  EXPECT_FALSE(ro);
  EXPECT_EQ(whole.memory_kind(), MemoryKind::Mapped);
  DataPtr part = cuda::adopt_mapped(adopt(b + 64, 256, Device::cpu(), &count_release, nullptr), b + 64, 256, b, n,
                                    false, 0, &ro);
  EXPECT_EQ(cuda::registration_count(), base + 1);
  EXPECT_EQ(cuda::pointer_kind(b + 100, nullptr), cuda::PointerKind::Host);
  whole.reset();
  EXPECT_EQ(cuda::registration_count(), base + 1);
  EXPECT_EQ(g_released, 1);
  part.reset();
  EXPECT_EQ(cuda::registration_count(), base);
  EXPECT_EQ(g_released, 2);
  EXPECT_EQ(cuda::pointer_kind(b + 100, nullptr), cuda::PointerKind::Unregistered);
}

TEST(Cuda, PartialOverlapIsCopyErrorAndReleasesTheSource) {
  NEED_GPU();
  std::vector<char> host(1 << 16);
  char* b = host.data();
  g_released = 0;
  DataPtr first = cuda::adopt_mapped(adopt(b, 4096, Device::cpu(), &count_release, nullptr), b, 4096, b, 4096, false, 0,
                                     nullptr);
  try {
    cuda::adopt_mapped(adopt(b + 2048, 4096, Device::cpu(), &count_release, nullptr), b + 2048, 4096, b + 2048, 4096,
                       false, 0, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Copy) << e.what();
  }
  EXPECT_EQ(g_released, 1);  // the refused adoption released its source
}

TEST(Cuda, ManagedMemoryIsAddressableFromTheHost) {
  NEED_GPU();
  DataPtr m = cuda::allocate_managed(1024, 0);
  EXPECT_EQ(m.memory_kind(), MemoryKind::Managed);
  std::memset(m.get(), 7, 1024);  // CPU writes the same pages
  std::vector<char> out(1024);
  cuda::copy_to_host(out.data(), m.get(), 1024, 0);
  EXPECT_EQ(out[1023], 7);
  int dev = -1;
  EXPECT_EQ(cuda::pointer_kind(m.get(), &dev), cuda::PointerKind::Managed);
  EXPECT_EQ(dev, 0);
}

// Note [Placed results] in uma/array.h: one Array::empty of exactly the placed byte count on
// the placement's device, on the placing thread, gets the storage; nothing else does.
TEST(Cuda, PlacedResultIsTakenOnceByTheMatchingAllocation) {
  NEED_GPU();
  const Array target = Array::empty({100}, DType::Float32, kGpu);  // 400 bytes in a 512-byte block
  {
    PlacedResult placed(target.storage(), kGpu, 400);
    EXPECT_FALSE(placed.taken());
    EXPECT_NE(Array::empty({101}, DType::Float32, kGpu).storage(), target.storage());  // another size
    EXPECT_NE(Array::empty({100}, DType::Float32).storage(), target.storage());        // the host
    std::thread([&] {  // another thread
      EXPECT_NE(Array::empty({100}, DType::Float32, kGpu).storage(), target.storage());
    }).join();
    EXPECT_FALSE(placed.taken());
    const Array got = Array::empty({10, 10}, DType::Int32, kGpu);  // the same byte count
    EXPECT_TRUE(placed.taken());
    EXPECT_EQ(got.storage(), target.storage());
    EXPECT_EQ(got.data(), target.data());
    EXPECT_TRUE(got.is_c_contiguous() && got.writable());
    EXPECT_NE(Array::empty({100}, DType::Float32, kGpu).storage(), target.storage());  // once
  }
  EXPECT_NE(Array::empty({100}, DType::Float32, kGpu).storage(), target.storage());  // withdrawn
  {
    PlacedResult unused(target.storage(), kGpu, 400);
  }  // withdrawn untaken
  EXPECT_NE(Array::empty({100}, DType::Float32, kGpu).storage(), target.storage());
  using testing::error_kind;
  EXPECT_EQ(error_kind([&] { PlacedResult p(target.storage(), kGpu, 4096); }), ErrorKind::Value);  // too large
  const Array host = Array::empty({100}, DType::Float32);
  EXPECT_EQ(error_kind([&] { PlacedResult p(host.storage(), kGpu, 400); }), ErrorKind::Value);  // host memory
}

TEST(Cuda, StreamHandshakeRejectsZero) {
  NEED_GPU();
  EXPECT_THROW(cuda::stream_wait_for(0, 0), Error);
  cuda::stream_wait_for(0, -1);
  cuda::stream_wait_for(0, 1);
  cuda::stream_wait_for(0, 2);
}

}  // namespace
}  // namespace uma
