// uma/memory/caching_allocator.h — the host caching allocator.
//
// Policy
//  * Size classes. A request of n bytes is served by a block of class(n):
//      n <= 1 MiB : the next power of two, at least 64 bytes;
//      n >  1 MiB : n rounded up to a multiple of 1 MiB.
//    A zero-byte request gets a 64-byte block, so every array has a real address.
//  * What is cached. A freed block no larger than the cache limit is always cached: if the
//    cached total would exceed the limit, other cached blocks are returned to the system
//    first (the block freed last is the likeliest to be asked for again). A block larger
//    than the limit goes straight back. A new request first takes a free block of exactly
//    its class (most recently freed first).
//  * System memory. Blocks of 4 MiB and more are 2 MiB-aligned and advised for transparent
//    huge pages (madvise MADV_HUGEPAGE), so first touch costs one fault per 2 MiB.
//    Only Pooled memory is ever cached: Adopted memory never reaches this allocator
//    (Note [Adopted buffers] in data_ptr.h).
//  * Limits. cache_limit defaults to 1 GiB (set_cache_limit; 0 disables caching). Lowering
//    it trims the cache at once. If the system refuses memory, the cache is emptied and the
//    request retried once before RuntimeError is raised.
//  * Small blocks: see Note [Small host blocks] below (inline_block).
//  * Stats. active_bytes is the sum of class sizes of live blocks (inline ones included);
//    cached_bytes the sum of class sizes of free blocks held; peak_bytes the maximum of
//    active_bytes. Invariant: after every call, cached_bytes <= cache_limit.
//  * Threads. Every public method but inline_block takes one mutex (active and peak are
//    atomics); blocks may be freed on any thread.
//
// Note [Small host blocks]
// A block of at most kInlineBytes (64) bytes may live inside the object that owns it instead
// of coming from the free lists: Array::empty puts a host array of at most 64 bytes inside its
// Storage, so the Storage, its shared_ptr control block and the bytes are one heap allocation
// (64-byte aligned within it). inline_block() counts such a block in active_bytes as one
// 64-byte class until its DataPtr is released; it is Pooled memory (uma's own, writable, never
// adopted) but never enters this allocator's cache, and neither call takes the mutex: a scalar
// result of a compiled function's step is made and dropped without this allocator's lock.
// Each thread keeps up to 64 of those freed allocations (about 200 bytes each) for reuse, in
// a list of its own that is freed when the thread exits; they hold no array bytes, so they
// count in neither active_bytes nor cached_bytes (as memory malloc keeps for reuse does not).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "uma/memory/allocator.h"

namespace uma {

class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(std::size_t cache_limit = std::size_t(1) << 30);
  ~CachingAllocator() override;
  DataPtr allocate(std::size_t nbytes) override;
  MemoryStats stats() const override;
  void clear_cache() override;
  void set_cache_limit(std::size_t bytes) override;

  /// The class size a request of `nbytes` is served with (policy above).
  static std::size_t size_class(std::size_t nbytes) noexcept;

  /// Largest block inline_block accepts.
  static constexpr std::size_t kInlineBytes = 64;
  /// A Pooled DataPtr over `nbytes` <= kInlineBytes bytes at `ptr` (64-byte aligned), memory
  /// that lives inside an object its caller owns and frees (Note [Small host blocks]):
  /// counted in active_bytes as one 64-byte class from now until the DataPtr is released,
  /// whose release only un-counts it. No lock is taken.
  DataPtr inline_block(void* ptr, std::size_t nbytes) noexcept;

 private:
  static void release_inline(void* ctx, void* ptr, std::size_t nbytes) noexcept;
  void count_active(int64_t bytes) noexcept;
  static void release(void* ctx, void* ptr, std::size_t nbytes) noexcept;
  void free_block(void* ptr, std::size_t cls) noexcept;
  void trim_locked(std::size_t limit) noexcept;

  // Free blocks: classes up to 1 MiB (powers of two from 64 bytes) by log2(class) - 6, larger
  // ones by class size.
  static constexpr int kSmallClasses = 15;
  std::vector<void*>& free_list(std::size_t cls);
  mutable std::mutex mu_;
  std::vector<void*> small_free_[kSmallClasses];
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::size_t cache_limit_;
  int64_t cached_ = 0;                                // under mu_
  std::atomic<int64_t> active_{0}, peak_{0};          // peak_ >= every value active_ held
};

/// The process-wide host allocator as a CachingAllocator (host_allocator() is this object).
CachingAllocator& host_caching_allocator();

}  // namespace uma
