// Tests for the memory layer: DataPtr ownership, the caching allocator's documented policy
// (include/uma/memory/caching_allocator.h) and adoption of foreign memory
// (Note [Adopted buffers] in include/uma/memory/data_ptr.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/allocator.h"
#include "uma/memory/caching_allocator.h"
#include "uma/memory/data_ptr.h"
#include "uma/memory/device.h"

namespace uma {
namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

// A deleter that records every call it gets.
struct DeleterLog {
  int calls = 0;
  void* last_ptr = nullptr;
  std::size_t last_nbytes = 0;
};
void log_deleter(void* ctx, void* ptr, std::size_t nbytes) noexcept {
  auto* log = static_cast<DeleterLog*>(ctx);
  ++log->calls;
  log->last_ptr = ptr;
  log->last_nbytes = nbytes;
}

// ---- DataPtr -------------------------------------------------------------------------

TEST(DataPtr, DefaultIsEmpty) {
  DataPtr p;
  EXPECT_FALSE(p);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.nbytes(), 0u);
  p.reset();  // no-op on an empty pointer
  EXPECT_FALSE(p);
}

TEST(DataPtr, DeleterRunsOnceOnDestruction) {
  DeleterLog log;
  int storage[4];
  {
    DataPtr p(storage, sizeof storage, Device::cpu(), Origin::Adopted, &log_deleter, &log);
    EXPECT_TRUE(p);
    EXPECT_EQ(p.get(), storage);
    EXPECT_EQ(p.nbytes(), sizeof storage);
    EXPECT_TRUE(p.is_adopted());
    EXPECT_EQ(log.calls, 0);
  }
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last_ptr, storage);
  EXPECT_EQ(log.last_nbytes, sizeof storage);
}

TEST(DataPtr, ResetRunsDeleterOnceAndEmpties) {
  DeleterLog log;
  int storage[2];
  DataPtr p(storage, sizeof storage, Device::cpu(), Origin::Pooled, &log_deleter, &log);
  p.reset();
  EXPECT_EQ(log.calls, 1);
  EXPECT_FALSE(p);
  EXPECT_EQ(p.get(), nullptr);
  p.reset();
  EXPECT_EQ(log.calls, 1);  // never twice
}

TEST(DataPtr, MoveConstructionTransfersOwnership) {
  DeleterLog log;
  int storage[2];
  DataPtr a(storage, sizeof storage, Device::cpu(), Origin::Adopted, &log_deleter, &log);
  DataPtr b(std::move(a));
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_TRUE(b);
  EXPECT_EQ(b.get(), storage);
  EXPECT_EQ(b.nbytes(), sizeof storage);
  EXPECT_EQ(b.origin(), Origin::Adopted);
  a.reset();
  EXPECT_EQ(log.calls, 0);  // the moved-from pointer owns nothing
  b.reset();
  EXPECT_EQ(log.calls, 1);
}

TEST(DataPtr, MoveAssignmentReleasesTheOldBytesOnce) {
  DeleterLog old_log, new_log;
  int old_storage[2], new_storage[2];
  {
    DataPtr a(old_storage, sizeof old_storage, Device::cpu(), Origin::Pooled, &log_deleter, &old_log);
    DataPtr b(new_storage, sizeof new_storage, Device::cpu(), Origin::Pooled, &log_deleter, &new_log);
    a = std::move(b);
    EXPECT_EQ(old_log.calls, 1);  // a's previous bytes released at assignment
    EXPECT_EQ(new_log.calls, 0);
    EXPECT_EQ(a.get(), new_storage);
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
    auto& self = a;
    a = std::move(self);  // self-move keeps ownership
    EXPECT_TRUE(a);
    EXPECT_EQ(new_log.calls, 0);
  }
  EXPECT_EQ(old_log.calls, 1);
  EXPECT_EQ(new_log.calls, 1);
}

TEST(DataPtr, ManyMovesStillOneDeleterCall) {
  DeleterLog log;
  int storage[1];
  {
    std::vector<DataPtr> v;
    v.emplace_back(storage, sizeof storage, Device::cpu(), Origin::Adopted, &log_deleter, &log);
    for (int i = 0; i < 100; ++i) v.emplace_back(std::move(v.back()));  // reallocations move too
    EXPECT_EQ(log.calls, 0);
  }
  EXPECT_EQ(log.calls, 1);
}

// ---- Device ---------------------------------------------------------------------------

TEST(Device, StrAndParse) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_TRUE(Device::cpu().is_cpu());
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), (Device{DeviceType::CUDA, 0}));
  EXPECT_EQ(Device::parse("cuda:3"), (Device{DeviceType::CUDA, 3}));
  EXPECT_EQ((Device{DeviceType::CUDA, 3}).str(), "cuda:3");
  // DLPack device codes (dlpack.h: kDLCPU = 1, kDLCUDA = 2).
  EXPECT_EQ(static_cast<int32_t>(DeviceType::CPU), 1);
  EXPECT_EQ(static_cast<int32_t>(DeviceType::CUDA), 2);
}

TEST(Device, ParseRejectsGarbageWithValueError) {
  for (const char* bad : {"", "gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", "cpu:0x"}) {
    try {
      Device::parse(bad);
      ADD_FAILURE() << "parsed '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value) << bad;
    }
  }
}

// ---- CachingAllocator: size classes ---------------------------------------------------

TEST(CachingAllocator, SizeClasses) {
  // n <= 1 MiB: next power of two, at least 64; zero bytes get a 64-byte block.
  EXPECT_EQ(CachingAllocator::size_class(0), 64u);
  EXPECT_EQ(CachingAllocator::size_class(1), 64u);
  EXPECT_EQ(CachingAllocator::size_class(64), 64u);
  EXPECT_EQ(CachingAllocator::size_class(65), 128u);
  EXPECT_EQ(CachingAllocator::size_class(1000), 1024u);
  EXPECT_EQ(CachingAllocator::size_class(1024), 1024u);
  EXPECT_EQ(CachingAllocator::size_class(kMiB - 1), kMiB);
  EXPECT_EQ(CachingAllocator::size_class(kMiB), kMiB);
  // n > 1 MiB: rounded up to a multiple of 1 MiB.
  EXPECT_EQ(CachingAllocator::size_class(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::size_class(3 * kMiB + kMiB / 2), 4 * kMiB);
  EXPECT_EQ(CachingAllocator::size_class(5 * kMiB), 5 * kMiB);
  EXPECT_EQ(CachingAllocator::size_class(5 * kMiB + 1), 6 * kMiB);
  // Classes never shrink a request and are monotone.
  std::size_t prev = 0;
  for (std::size_t n = 0; n < 3 * kMiB; n = n * 3 / 2 + 7) {
    std::size_t c = CachingAllocator::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_GE(c, prev);
    prev = c;
  }
}

TEST(CachingAllocator, BlocksAreAlignedRealAndPooled) {
  CachingAllocator alloc;
  std::vector<DataPtr> blocks;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(4096), kMiB + 3}) {
    DataPtr p = alloc.allocate(n);
    ASSERT_TRUE(p);
    ASSERT_NE(p.get(), nullptr) << n;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 64, 0u) << n;
    EXPECT_EQ(p.nbytes(), CachingAllocator::size_class(n));
    EXPECT_EQ(p.origin(), Origin::Pooled);
    EXPECT_FALSE(p.is_adopted());
    EXPECT_TRUE(p.device().is_cpu());
    std::memset(p.get(), 0xAB, p.nbytes());  // the whole class is usable (ASAN checks)
    blocks.push_back(std::move(p));
  }
  std::set<void*> distinct;
  for (auto& b : blocks) distinct.insert(b.get());
  EXPECT_EQ(distinct.size(), blocks.size());
}

// ---- CachingAllocator: stats and reuse ------------------------------------------------

TEST(CachingAllocator, StatsTrackActiveCachedPeak) {
  CachingAllocator alloc;
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0);
  EXPECT_EQ(s.cached_bytes, 0);
  EXPECT_EQ(s.peak_bytes, 0);
  EXPECT_EQ(s.adopted_bytes, 0);  // an allocator never counts adopted bytes
  {
    DataPtr a = alloc.allocate(100);   // class 128
    DataPtr b = alloc.allocate(1000);  // class 1024
    s = alloc.stats();
    EXPECT_EQ(s.active_bytes, 128 + 1024);
    EXPECT_EQ(s.cached_bytes, 0);
    EXPECT_EQ(s.peak_bytes, 128 + 1024);
    a.reset();
    s = alloc.stats();
    EXPECT_EQ(s.active_bytes, 1024);
    EXPECT_EQ(s.cached_bytes, 128);
    EXPECT_EQ(s.peak_bytes, 128 + 1024);  // peak is a maximum, it does not fall
  }
  s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0);
  EXPECT_EQ(s.cached_bytes, 128 + 1024);
  EXPECT_EQ(s.peak_bytes, 128 + 1024);
}

TEST(CachingAllocator, FreedBlockIsReusedForTheSameClass) {
  CachingAllocator alloc;
  DataPtr a = alloc.allocate(100);
  void* first = a.get();
  a.reset();
  EXPECT_EQ(alloc.stats().cached_bytes, 128);
  DataPtr b = alloc.allocate(120);  // same class (128): served from the cache
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
  EXPECT_EQ(alloc.stats().active_bytes, 128);
  EXPECT_EQ(alloc.stats().peak_bytes, 128);  // reuse did not raise the peak
}

TEST(CachingAllocator, OtherClassesDoNotTakeCachedBlocks) {
  CachingAllocator alloc;
  DataPtr a = alloc.allocate(128);
  a.reset();
  DataPtr b = alloc.allocate(256);  // class 256: the cached 128 block stays cached
  EXPECT_EQ(alloc.stats().cached_bytes, 128);
  EXPECT_EQ(alloc.stats().active_bytes, 256);
  DataPtr c = alloc.allocate(64);  // class 64: not served by the 128 block either
  EXPECT_EQ(alloc.stats().cached_bytes, 128);
}

TEST(CachingAllocator, MostRecentlyFreedFirst) {
  CachingAllocator alloc;
  DataPtr a = alloc.allocate(500);
  DataPtr b = alloc.allocate(500);
  void* pa = a.get();
  void* pb = b.get();
  a.reset();
  b.reset();
  DataPtr c = alloc.allocate(500);
  EXPECT_EQ(c.get(), pb);
  DataPtr d = alloc.allocate(500);
  EXPECT_EQ(d.get(), pa);
}

TEST(CachingAllocator, CacheLimitSendsExtraBlocksBackToTheSystem) {
  CachingAllocator alloc(/*cache_limit=*/256);
  DataPtr a = alloc.allocate(128), b = alloc.allocate(128), c = alloc.allocate(128);
  void* pc = c.get();
  a.reset();
  b.reset();
  c.reset();  // would make 384 cached: an older block goes back to the system instead
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.cached_bytes, 256);
  EXPECT_EQ(s.active_bytes, 0);
  DataPtr d = alloc.allocate(128);  // the block freed last was kept
  EXPECT_EQ(d.get(), pc);
}

TEST(CachingAllocator, BlockLargerThanTheLimitIsNeverCached) {
  CachingAllocator alloc(/*cache_limit=*/1024);
  DataPtr small = alloc.allocate(512);
  small.reset();
  DataPtr big = alloc.allocate(4096);
  big.reset();
  EXPECT_EQ(alloc.stats().cached_bytes, 512);  // the big block went back; the small one stayed
}

TEST(CachingAllocator, ZeroLimitDisablesCaching) {
  CachingAllocator alloc(0);
  DataPtr a = alloc.allocate(1000);
  a.reset();
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
  EXPECT_EQ(alloc.stats().active_bytes, 0);
}

TEST(CachingAllocator, LoweringTheLimitTrimsAtOnce) {
  CachingAllocator alloc;
  {
    std::vector<DataPtr> v;
    for (int i = 0; i < 8; ++i) v.push_back(alloc.allocate(1024));
  }
  EXPECT_EQ(alloc.stats().cached_bytes, 8 * 1024);
  alloc.set_cache_limit(3000);
  EXPECT_LE(alloc.stats().cached_bytes, 3000);  // invariant: cached_bytes <= cache_limit
  EXPECT_EQ(alloc.stats().cached_bytes, 2 * 1024);
  alloc.set_cache_limit(0);
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
  // With the limit at 0 nothing is cached any more.
  DataPtr p = alloc.allocate(1024);
  p.reset();
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
  // Raising it again caches again.
  alloc.set_cache_limit(std::size_t(1) << 20);
  p = alloc.allocate(1024);
  p.reset();
  EXPECT_EQ(alloc.stats().cached_bytes, 1024);
}

TEST(CachingAllocator, ClearCacheEmptiesTheCacheOnly) {
  CachingAllocator alloc;
  DataPtr live = alloc.allocate(4096);
  {
    DataPtr a = alloc.allocate(100);
    DataPtr b = alloc.allocate(2 * kMiB);
  }
  EXPECT_EQ(alloc.stats().cached_bytes, 128 + static_cast<int64_t>(2 * kMiB));
  alloc.clear_cache();
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.cached_bytes, 0);
  EXPECT_EQ(s.active_bytes, 4096);  // live blocks are untouched
  std::memset(live.get(), 1, 4096);
  // A fresh request after clearing goes to the system and still works.
  DataPtr c = alloc.allocate(100);
  EXPECT_NE(c.get(), nullptr);
}

TEST(CachingAllocator, InvariantHoldsUnderChurn) {
  CachingAllocator alloc(64 * 1024);
  std::vector<DataPtr> live;
  unsigned state = 12345;
  auto next = [&] { state = state * 1103515245u + 12345u; return state >> 8; };
  int64_t expected_active = 0;
  for (int i = 0; i < 2000; ++i) {
    if (live.empty() || next() % 3 != 0) {
      std::size_t n = next() % 5000;
      live.push_back(alloc.allocate(n));
      expected_active += static_cast<int64_t>(CachingAllocator::size_class(n));
    } else {
      std::size_t k = next() % live.size();
      expected_active -= static_cast<int64_t>(live[k].nbytes());
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    MemoryStats s = alloc.stats();
    ASSERT_EQ(s.active_bytes, expected_active);
    ASSERT_LE(s.cached_bytes, 64 * 1024);
    ASSERT_GE(s.peak_bytes, s.active_bytes);
  }
}

TEST(CachingAllocator, HugeRequestIsAnErrorNotACrash) {
  CachingAllocator alloc;
  // Rounding this up would overflow size_t: a typed user error, never a tiny block.
  EXPECT_THROW(alloc.allocate(SIZE_MAX - 10), Error);
  EXPECT_EQ(alloc.stats().active_bytes, 0);
}

// ---- the process-wide host allocator and memory_stats -----------------------------------

TEST(HostAllocator, MemoryStatsSeesHostAllocations) {
  MemoryStats before = memory_stats(Device::cpu());
  {
    DataPtr p = host_allocator().allocate(3000);  // class 4096
    MemoryStats during = memory_stats(Device::cpu());
    EXPECT_EQ(during.active_bytes - before.active_bytes, 4096);
    EXPECT_GE(during.peak_bytes, during.active_bytes);
  }
  MemoryStats after = memory_stats(Device::cpu());
  EXPECT_EQ(after.active_bytes, before.active_bytes);
  EXPECT_EQ(after.adopted_bytes, before.adopted_bytes);
}

// Note [Small host blocks]: bytes inside their owner, counted as one 64-byte class.
TEST(CachingAllocator, InlineBlocksCountAsActiveUntilReleasedAndAreNeverCached) {
  CachingAllocator alloc;
  alignas(64) unsigned char buf[64];
  {
    DataPtr d = alloc.inline_block(buf, 8);
    EXPECT_EQ(d.get(), buf);
    EXPECT_EQ(d.nbytes(), 64u);
    EXPECT_EQ(d.origin(), Origin::Pooled);
    EXPECT_TRUE(d.device().is_cpu());
    MemoryStats s = alloc.stats();
    EXPECT_EQ(s.active_bytes, 64);
    EXPECT_EQ(s.cached_bytes, 0);
    EXPECT_EQ(s.peak_bytes, 64);
    DataPtr p = alloc.allocate(100);  // a pooled block next to it: both count
    EXPECT_EQ(alloc.stats().active_bytes, 64 + 128);
    EXPECT_EQ(alloc.stats().peak_bytes, 64 + 128);
  }
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0);
  EXPECT_EQ(s.cached_bytes, 128);  // the pooled block only: inline bytes never enter the cache
  EXPECT_EQ(s.peak_bytes, 64 + 128);
  alloc.clear_cache();
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
}

TEST(HostAllocator, SmallArraysCountAsOneBlockAndAreAlignedPooledAndWritable) {
  host_allocator().clear_cache();
  const MemoryStats before = memory_stats(Device::cpu());
  ASSERT_EQ(before.cached_bytes, 0);
  {
    // 8 and 64 bytes live inside their Storage (one 64-byte class each); 72 bytes are a
    // pooled 128-byte block; a zero-byte array still has a real address.
    std::vector<Array> arrays = {Array::empty({}, DType::Float64), Array::empty({2, 4}, DType::Float64),
                                 Array::empty({9}, DType::Float64), Array::empty({0}, DType::Int8),
                                 Array::empty({}, DType::Complex128)};
    const MemoryStats during = memory_stats(Device::cpu());
    EXPECT_EQ(during.active_bytes - before.active_bytes, 64 + 64 + 128 + 64 + 64);
    EXPECT_GE(during.peak_bytes, during.active_bytes);
    EXPECT_EQ(during.adopted_bytes, before.adopted_bytes);
    for (const Array& a : arrays) {
      ASSERT_NE(a.data(), nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u);
      EXPECT_EQ(a.data(), a.storage()->data.get());
      EXPECT_GE(a.storage()->data.nbytes(), static_cast<std::size_t>(a.nbytes()));
      EXPECT_FALSE(a.is_adopted());
      EXPECT_TRUE(a.writable());
      std::memset(a.data(), 0x5a, a.storage()->data.nbytes());  // every byte is there (ASAN checks)
    }
    // The bytes are the array's own: distinct arrays, distinct bytes.
    std::set<void*> distinct;
    for (const Array& a : arrays) distinct.insert(a.data());
    EXPECT_EQ(distinct.size(), arrays.size());
  }
  const MemoryStats after = memory_stats(Device::cpu());
  EXPECT_EQ(after.active_bytes, before.active_bytes);
  EXPECT_EQ(after.cached_bytes, 128);  // only the pooled block went to the cache
}

TEST(HostAllocator, AViewKeepsASmallArraysBytesAlive) {
  const int64_t active0 = memory_stats(Device::cpu()).active_bytes;
  Array view;
  {
    Array a = Array::empty({4}, DType::Float64);
    for (int i = 0; i < 4; ++i) a.data_as<double>()[i] = i + 0.5;
    view = a.view(a.data_as<double>() + 2, {2}, {1});
  }
  EXPECT_EQ(memory_stats(Device::cpu()).active_bytes - active0, 64);
  EXPECT_EQ(view.data_as<double>()[0], 2.5);
  EXPECT_EQ(view.data_as<double>()[1], 3.5);
  view = Array();
  EXPECT_EQ(memory_stats(Device::cpu()).active_bytes, active0);
}

TEST(HostAllocator, CudaStatsRaiseRuntimeErrorInACpuBuild) {
  try {
    memory_stats(Device{DeviceType::CUDA, 0});
    GTEST_SKIP() << "this build has CUDA";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
}

// ---- adoption -------------------------------------------------------------------------

TEST(Adopt, CountsAdoptedBytesAndCallsTheForeignDeleterOnce) {
  DeleterLog log;
  std::vector<char> foreign(1000, 7);
  MemoryStats before = memory_stats(Device::cpu());
  {
    DataPtr p = adopt(foreign.data(), foreign.size(), Device::cpu(), &log_deleter, &log);
    EXPECT_TRUE(p);
    EXPECT_TRUE(p.is_adopted());
    EXPECT_EQ(p.origin(), Origin::Adopted);
    EXPECT_EQ(p.get(), foreign.data());
    EXPECT_EQ(p.nbytes(), 1000u);  // exact size: adopted bytes are not rounded to a class
    MemoryStats during = memory_stats(Device::cpu());
    EXPECT_EQ(during.adopted_bytes - before.adopted_bytes, 1000);
    EXPECT_EQ(during.active_bytes, before.active_bytes);  // adopted bytes are not pooled
    DataPtr q = std::move(p);  // moving keeps one owner
    EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes - before.adopted_bytes, 1000);
    EXPECT_EQ(log.calls, 0);
  }
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last_ptr, foreign.data());
  EXPECT_EQ(log.last_nbytes, 1000u);
  MemoryStats after = memory_stats(Device::cpu());
  EXPECT_EQ(after.adopted_bytes, before.adopted_bytes);
  EXPECT_EQ(after.cached_bytes, before.cached_bytes);  // never cached
  EXPECT_EQ(after.active_bytes, before.active_bytes);
}

TEST(Adopt, AdoptedMemoryIsNeverRecycled) {
  // The bug class the design forbids: a freed adopted buffer handed out again by the pool.
  std::vector<std::vector<char>> owners;
  std::vector<DeleterLog> logs(200);
  std::set<void*> foreign;
  for (int i = 0; i < 200; ++i) {
    owners.emplace_back(256, static_cast<char>(i));
    foreign.insert(owners.back().data());
  }
  MemoryStats before = memory_stats(Device::cpu());
  std::vector<DataPtr> pooled;
  for (int i = 0; i < 200; ++i) {
    {
      DataPtr a = adopt(owners[i].data(), 256, Device::cpu(), &log_deleter, &logs[i]);
    }
    EXPECT_EQ(logs[i].calls, 1);
    DataPtr p = host_allocator().allocate(256);  // same size as the adopted buffer
    EXPECT_EQ(foreign.count(p.get()), 0u) << "pool served adopted memory";
    std::memset(p.get(), 0, 256);
    pooled.push_back(std::move(p));
  }
  for (int i = 0; i < 200; ++i) {
    for (char ch : owners[i]) ASSERT_EQ(ch, static_cast<char>(i)) << "adopted source overwritten";
  }
  pooled.clear();
  MemoryStats after = memory_stats(Device::cpu());
  EXPECT_EQ(after.adopted_bytes, before.adopted_bytes);
  EXPECT_EQ(after.active_bytes, before.active_bytes);
}

}  // namespace
}  // namespace uma


TEST(CachingAllocator, LargeBlocksAre2MiBAlignedWhateverTheirSize) {
  // 5 MiB is a 1 MiB multiple but not a 2 MiB one: the large-block path must still serve it
  // (aligned_alloc would require size % alignment == 0; ASAN checks that).
  uma::CachingAllocator alloc;
  for (std::size_t mib : {4, 5, 7, 9}) {
    uma::DataPtr p = alloc.allocate(mib << 20);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % (std::size_t(2) << 20), 0u);
    std::memset(p.get(), 1, mib << 20);  // writable over its whole size
  }
}
