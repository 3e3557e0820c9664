// uma/memory/data_ptr.h — an owning pointer to bytes on a device.
//
// Note [Adopted buffers]
// A DataPtr has one of two origins, fixed at construction:
//  * Pooled: the bytes came from a uma Allocator; release hands them back to it, and the
//    allocator may cache them for reuse.
//  * Adopted: the bytes belong to someone else (a NumPy array, a DLPack capsule, a Python
//    buffer). Release runs the foreign deleter exactly once and the bytes never enter any
//    cache. No op writes a result into adopted memory (DESIGN.md, "Memory").
// There is no raw pointer plus "owns" flag anywhere: ownership is in this type.
#pragma once
#include <cstddef>
#include <utility>

#include "uma/memory/device.h"

namespace uma {

enum class Origin : unsigned char { Pooled, Adopted };

/// Releases `ptr` (of `nbytes` bytes); `ctx` is the deleter's state. Must not throw.
using Deleter = void (*)(void* ctx, void* ptr, std::size_t nbytes) noexcept;

/// Move-only owner of a byte range. Invariant: deleter != nullptr  <=>  owns bytes;
/// the deleter runs exactly once (reset() or destruction), never twice.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, std::size_t nbytes, Device device, Origin origin, Deleter deleter, void* ctx) noexcept
      : ptr_(ptr), nbytes_(nbytes), device_(device), origin_(origin), deleter_(deleter), ctx_(ctx),
        kind_(device.is_cpu() ? MemoryKind::Host : MemoryKind::Device) {}
  /// The same with an explicit memory kind (managed and mapped memory of a cuda device).
  DataPtr(void* ptr, std::size_t nbytes, Device device, Origin origin, Deleter deleter, void* ctx,
          MemoryKind kind) noexcept
      : ptr_(ptr), nbytes_(nbytes), device_(device), origin_(origin), deleter_(deleter), ctx_(ctx), kind_(kind) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { swap(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  ~DataPtr() { reset(); }

  void* get() const noexcept { return ptr_; }
  std::size_t nbytes() const noexcept { return nbytes_; }
  Device device() const noexcept { return device_; }
  Origin origin() const noexcept { return origin_; }
  MemoryKind memory_kind() const noexcept { return kind_; }
  bool is_adopted() const noexcept { return origin_ == Origin::Adopted; }
  explicit operator bool() const noexcept { return deleter_ != nullptr; }

  /// Runs the deleter (once) and leaves this DataPtr empty.
  void reset() noexcept {
    if (deleter_) {
      Deleter d = deleter_;
      deleter_ = nullptr;
      d(ctx_, ptr_, nbytes_);
    }
    ptr_ = nullptr;
    nbytes_ = 0;
    ctx_ = nullptr;
  }

 private:
  void swap(DataPtr& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(nbytes_, o.nbytes_);
    std::swap(device_, o.device_);
    std::swap(origin_, o.origin_);
    std::swap(deleter_, o.deleter_);
    std::swap(ctx_, o.ctx_);
    std::swap(kind_, o.kind_);
  }
  void* ptr_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_{};
  Origin origin_ = Origin::Pooled;
  Deleter deleter_ = nullptr;
  void* ctx_ = nullptr;
  MemoryKind kind_ = MemoryKind::Host;
};

}  // namespace uma
