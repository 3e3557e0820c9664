// src/memory/cuda/device_allocator.h — the stream-ordered caching allocator of one GPU.
//
// Policy
//  * Size classes. A request of n bytes is served by a block of class(n):
//      n <= 1 MiB : the next power of two, at least 512 bytes;
//      n >  1 MiB : n rounded up to a multiple of 2 MiB.
//    A zero-byte request gets a 512-byte block, so every array has a real device address.
//  * Stream association. A block belongs to the stream it was allocated for: uma's stream of
//    the device (Note [CUDA streams] in uma/memory/cuda.h). Freeing a block returns it to the
//    cache at once, without waiting for the GPU: every later use of it is queued on the same
//    stream, so it runs after every earlier use (stream-ordered reuse). Blocks are cached by
//    (stream, class); uma queues all of a device's work on one stream today.
//  * What is cached. Every freed block while the cached total stays within the cache limit
//    (default: unlimited, as the GPU is uma's to use); beyond it older blocks go back to the
//    driver first. A request takes a cached block of exactly its class, most recently freed first.
//  * Out of memory. When cudaMalloc fails, the allocator synchronises the device, returns
//    every cached block (its own) to the driver and retries once; if that fails too it raises
//    MemoryError naming the request and the device. The failed cudaMalloc leaves no error state.
//  * Stats. active_bytes: class sizes of live blocks; cached_bytes: class sizes of free
//    blocks held; peak_bytes: maximum of active_bytes. After every call cached <= limit.
//  * Graph capture. A block freed by a thread that records a CUDA graph for this device is
//    kept by that graph (still active) instead of cached, and comes back through give_back
//    when the graph is destroyed (Note [Captured work] in uma/memory/cuda.h); cudaMalloc
//    runs outside the recording.
//  * Threads. One mutex per allocator; blocks may be freed on any thread. Releasing runs no
//    CUDA call unless the cache must shrink (cudaFree), and ignores errors at process exit.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "uma/memory/allocator.h"

namespace uma::cuda {

class DeviceCachingAllocator final : public Allocator {
 public:
  DeviceCachingAllocator(int device, cudaStream_t stream);
  DataPtr allocate(std::size_t nbytes) override;
  MemoryStats stats() const override;
  void clear_cache() override;
  void set_cache_limit(std::size_t bytes) override;

  /// The class size a request of `nbytes` is served with (policy above).
  static std::size_t size_class(std::size_t nbytes) noexcept;
  /// Returns a block that a graph kept (Note [Captured work]) to the cache.
  void give_back(void* ptr, std::size_t cls) noexcept;

 private:
  static void release(void* ctx, void* ptr, std::size_t nbytes) noexcept;
  void free_block(void* ptr, std::size_t cls) noexcept;
  void trim_locked(std::size_t limit) noexcept;

  const int device_;
  const cudaStream_t stream_;
  mutable std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;  // class size -> blocks (of stream_)
  std::size_t cache_limit_ = SIZE_MAX;
  int64_t active_ = 0, cached_ = 0, peak_ = 0;
};

namespace detail {
/// True when the calling thread records a graph for `device` and the graph now keeps the
/// freed block (ptr, cls) (Note [Captured work]).
bool keep_for_capture(int device, void* ptr, std::size_t cls) noexcept;
}  // namespace detail

}  // namespace uma::cuda
