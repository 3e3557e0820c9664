// uma/memory/allocator.h — the allocator interface, memory statistics and adoption.
#pragma once
#include <cstddef>
#include <cstdint>

#include "uma/memory/data_ptr.h"

namespace uma {

/// Statistics of one device, in bytes (DESIGN.md, "Decisions: memory stats").
///   active_bytes  — live pooled allocations (rounded sizes)
///   cached_bytes  — free pooled blocks held for reuse
///   peak_bytes    — max of active_bytes since start (or since reset_peak)
///   adopted_bytes — live adopted bytes (host memory counts under "cpu")
struct MemoryStats {
  int64_t active_bytes = 0;
  int64_t cached_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t adopted_bytes = 0;
  // cuda devices only: bytes copied host -> device and device -> host since the process
  // started (array transfers through uma/transfer.h and the memory layer's copies).
  int64_t host_to_device_bytes = 0;
  int64_t device_to_host_bytes = 0;
};

/// A tiny allocator interface: allocate pooled bytes of a device.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns a Pooled DataPtr of at least `nbytes` bytes (64-byte aligned).
  virtual DataPtr allocate(std::size_t nbytes) = 0;
  virtual MemoryStats stats() const = 0;
  /// Frees every cached block.
  virtual void clear_cache() = 0;
  /// Largest total of cached bytes kept; 0 disables caching.
  virtual void set_cache_limit(std::size_t bytes) = 0;
};

/// The process-wide host allocator (a CachingAllocator).
Allocator& host_allocator();

/// Stats for `device` including adopted bytes.
MemoryStats memory_stats(Device device);

/// Wraps foreign memory as an Adopted DataPtr (Note [Adopted buffers]): on release,
/// `deleter(ctx, ptr, nbytes)` runs exactly once and nothing is cached. The bytes count
/// under adopted_bytes of `device` while alive.
DataPtr adopt(void* ptr, std::size_t nbytes, Device device, Deleter deleter, void* ctx);
/// The same with an explicit memory kind: Host and Mapped bytes count under "cpu", Device and
/// Managed bytes under their cuda device.
DataPtr adopt(void* ptr, std::size_t nbytes, Device device, Deleter deleter, void* ctx, MemoryKind kind);

}  // namespace uma
