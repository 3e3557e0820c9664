#include "uma/memory/caching_allocator.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>

#include <sys/mman.h>

#include "uma/error.h"
#include "uma/memory/cuda.h"

namespace uma {

namespace {
constexpr std::size_t kMiB = std::size_t(1) << 20;
constexpr std::size_t kAlign = 64;

// Adopted byte counters: host memory (whatever device maps it) counts under cpu, foreign
// device and managed memory under its cuda device.
constexpr int kMaxCuda = 64;
std::atomic<int64_t> g_adopted_cpu{0};
std::atomic<int64_t> g_adopted_cuda[kMaxCuda] = {};

std::atomic<int64_t>& adopted_counter(Device device, MemoryKind kind) {
  if (device.is_cpu() || kind == MemoryKind::Host || kind == MemoryKind::Mapped || device.index < 0 ||
      device.index >= kMaxCuda)
    return g_adopted_cpu;
  return g_adopted_cuda[device.index];
}

struct Adoption {
  Deleter foreign;
  void* ctx;
  std::atomic<int64_t>* counter;
};

void adopted_release(void* ctx, void* ptr, std::size_t nbytes) noexcept {
  auto* a = static_cast<Adoption*>(ctx);
  a->counter->fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  Deleter d = a->foreign;
  void* c = a->ctx;
  delete a;
  if (d) d(c, ptr, nbytes);
}
}  // namespace

namespace {
constexpr std::size_t kHuge = std::size_t(2) << 20;

// Blocks of 4 MiB and more are aligned to 2 MiB and marked for transparent huge pages, so
// touching fresh memory costs one fault per 2 MiB instead of one per 4 KiB (a 1 GiB copy
// into new memory is otherwise dominated by page faults).
void* system_alloc(std::size_t cls) noexcept {
  if (cls >= 2 * kHuge) {
    // posix_memalign, not aligned_alloc: the size (a multiple of 1 MiB) need not be a
    // multiple of the 2 MiB alignment.
    void* p = nullptr;
    if (posix_memalign(&p, kHuge, cls) != 0) return nullptr;
    madvise(p, cls, MADV_HUGEPAGE);  // advisory: failure changes nothing
    return p;
  }
  return std::aligned_alloc(kAlign, cls);
}
}  // namespace

CachingAllocator::CachingAllocator(std::size_t cache_limit) : cache_limit_(cache_limit) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> g(mu_);
  trim_locked(0);
}

std::size_t CachingAllocator::size_class(std::size_t n) noexcept {
  if (n <= 64) return 64;
  if (n <= kMiB) return std::bit_ceil(n);
  return (n + kMiB - 1) / kMiB * kMiB;
}

std::vector<void*>& CachingAllocator::free_list(std::size_t cls) {
  if (cls <= kMiB) return small_free_[std::countr_zero(cls) - 6];
  return free_[cls];
}

DataPtr CachingAllocator::allocate(std::size_t nbytes) {
  const std::size_t cls = size_class(nbytes);
  UMA_CHECK(cls >= nbytes, Value, "allocation of ", nbytes, " bytes is too large");
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<void*>* list = nullptr;
    if (cls <= kMiB) {
      list = &small_free_[std::countr_zero(cls) - 6];
    } else if (auto it = free_.find(cls); it != free_.end()) {
      list = &it->second;
    }
    if (list && !list->empty()) {
      // A cache hit (the common case of a loop's temporaries): one critical section.
      p = list->back();
      list->pop_back();
      cached_ -= static_cast<int64_t>(cls);
      count_active(static_cast<int64_t>(cls));
      return DataPtr(p, cls, Device::cpu(), Origin::Pooled, &CachingAllocator::release, this);
    }
  }
  p = system_alloc(cls);
  if (!p) {
    clear_cache();
    p = system_alloc(cls);
  }
  UMA_CHECK(p != nullptr, Memory, "out of host memory allocating ", nbytes, " bytes");
  count_active(static_cast<int64_t>(cls));
  return DataPtr(p, cls, Device::cpu(), Origin::Pooled, &CachingAllocator::release, this);
}

void CachingAllocator::count_active(int64_t bytes) noexcept {
  const int64_t now = active_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

DataPtr CachingAllocator::inline_block(void* ptr, std::size_t nbytes) noexcept {
  UMA_ASSERT(nbytes <= kInlineBytes && reinterpret_cast<uintptr_t>(ptr) % kAlign == 0);
  count_active(static_cast<int64_t>(kInlineBytes));
  return DataPtr(ptr, kInlineBytes, Device::cpu(), Origin::Pooled, &CachingAllocator::release_inline, this);
}

void CachingAllocator::release_inline(void* ctx, void*, std::size_t nbytes) noexcept {
  static_cast<CachingAllocator*>(ctx)->active_.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
}

void CachingAllocator::release(void* ctx, void* ptr, std::size_t nbytes) noexcept {
  static_cast<CachingAllocator*>(ctx)->free_block(ptr, nbytes);
}

void CachingAllocator::free_block(void* ptr, std::size_t cls) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  active_.fetch_sub(static_cast<int64_t>(cls), std::memory_order_relaxed);
  // Make room by returning older cached blocks of other classes: the block freed last is
  // the one most likely to be asked for again (a loop's temporaries).
  if (cls <= cache_limit_ && cached_ + static_cast<int64_t>(cls) > static_cast<int64_t>(cache_limit_))
    trim_locked(cache_limit_ - cls);
  if (cached_ + static_cast<int64_t>(cls) <= static_cast<int64_t>(cache_limit_)) {
    try {
      free_list(cls).push_back(ptr);
      cached_ += static_cast<int64_t>(cls);
      return;
    } catch (...) {
      // Bookkeeping failed to grow: fall through and free the block.
    }
  }
  std::free(ptr);
}

void CachingAllocator::trim_locked(std::size_t limit) noexcept {
  for (int c = 0; c < kSmallClasses && cached_ > static_cast<int64_t>(limit); ++c) {
    auto& v = small_free_[c];
    while (!v.empty() && cached_ > static_cast<int64_t>(limit)) {
      std::free(v.back());
      v.pop_back();
      cached_ -= static_cast<int64_t>(std::size_t(64) << c);
    }
  }
  for (auto it = free_.begin(); it != free_.end() && cached_ > static_cast<int64_t>(limit); ++it) {
    auto& v = it->second;
    while (!v.empty() && cached_ > static_cast<int64_t>(limit)) {
      std::free(v.back());
      v.pop_back();
      cached_ -= static_cast<int64_t>(it->first);
    }
  }
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  MemoryStats s;
  s.active_bytes = active_.load(std::memory_order_relaxed);
  s.cached_bytes = cached_;
  // An allocation on another thread may have counted itself in active_ and not yet in peak_.
  s.peak_bytes = std::max(peak_.load(std::memory_order_relaxed), s.active_bytes);
  return s;
}

void CachingAllocator::clear_cache() {
  std::lock_guard<std::mutex> g(mu_);
  trim_locked(0);
}

void CachingAllocator::set_cache_limit(std::size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  cache_limit_ = bytes;
  trim_locked(bytes);
}

CachingAllocator& host_caching_allocator() {
  // Intentionally leaked: arrays may be released during static destruction.
  static CachingAllocator* a = new CachingAllocator();
  return *a;
}

Allocator& host_allocator() { return host_caching_allocator(); }

MemoryStats memory_stats(Device device) {
  if (!device.is_cpu()) {
    cuda::require(device, "memory_stats");
    MemoryStats s = cuda::memory_stats(device.index);
    s.adopted_bytes = adopted_counter(device, MemoryKind::Device).load(std::memory_order_relaxed);
    cuda::transfer_bytes(device.index, &s.host_to_device_bytes, &s.device_to_host_bytes);
    return s;
  }
  MemoryStats s = host_allocator().stats();
  s.adopted_bytes = g_adopted_cpu.load(std::memory_order_relaxed);
  return s;
}

DataPtr adopt(void* ptr, std::size_t nbytes, Device device, Deleter deleter, void* ctx) {
  return adopt(ptr, nbytes, device, deleter, ctx, device.is_cpu() ? MemoryKind::Host : MemoryKind::Device);
}

DataPtr adopt(void* ptr, std::size_t nbytes, Device device, Deleter deleter, void* ctx, MemoryKind kind) {
  std::atomic<int64_t>& counter = adopted_counter(device, kind);
  auto* a = new Adoption{deleter, ctx, &counter};
  counter.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  return DataPtr(ptr, nbytes, device, Origin::Adopted, &adopted_release, a, kind);
}

}  // namespace uma
