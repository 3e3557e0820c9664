// uma/runtime/shared_cell.h — the host residency of a shared variable (DESIGN.md "Shared
// variables: one value, many residencies"), in C++ so that a compiled function's call can read
// and write shared state without Python.
//
// A SharedCell holds the host copy (a uma::Array on the CPU) and whether it is current, plus
// an `epoch` that changes whenever a write replaces the set of current copies: the Python
// Container keeps the copies of other residencies and drops them when the epoch it stamped
// them with is no longer the cell's (a C++ call wrote the host copy meanwhile).
//
//   host_current() == false  <=>  another residency (kept by the Python Container) was written
//                                 last and the host copy has not been brought up to date.
//
// Threads: every accessor below `lock()` expects its caller to hold the cell's lock. The lock
// is re-entrant (like Python's RLock) and knows its owner: unlock() by another thread is a
// RuntimeError, not undefined behaviour. Locks are taken in `serial()` order (creation order)
// by every caller that holds more than one, so two calls never wait for each other in a cycle.
//
// Note [Updates in place]
// An update writes a new buffer (DESIGN.md "updates"), except one case in which no one can
// tell: a scalar update (Note [Scalar programs]) whose cell holds the only reference to a
// 0-d, writable, uma-allocated host buffer of the value's dtype is copied into that buffer.
// Every other holder of the old value (a get_value(borrow=True) view, a DLPack capsule, an
// output, another cell, a call still reading it) holds a reference to its storage, and a
// reference is taken only under the cell's lock, which the writer holds: seeing the count at
// 1 under the lock means the count stays 1. Adopted memory is never written (DESIGN.md: no
// donation into adopted memory). This saves a scalar update its allocation, its free and
// four atomic reference-count operations (most of a scalar call's cost from C++).
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

#include "uma/array.h"

namespace uma::runtime {

class SharedCell {
 public:
  /// A cell whose host copy `host` (a CPU array) is the only current one.
  explicit SharedCell(Array host);
  SharedCell(const SharedCell&) = delete;
  SharedCell& operator=(const SharedCell&) = delete;

  /// Global creation order (the order in which callers take several cells' locks).
  uint64_t serial() const noexcept { return serial_; }

  // ---- the lock ------------------------------------------------------------------------
  void lock();
  bool try_lock();
  /// RuntimeError when the calling thread does not hold the lock.
  void unlock();
  /// True when the calling thread holds the lock.
  bool held_by_this_thread() const noexcept;

  // ---- state (caller holds the lock) ----------------------------------------------------
  bool host_current() const noexcept { return host_current_; }
  /// The host copy; RuntimeError when it is stale (host_current() is false).
  const Array& host() const;
  /// Changes whenever a write replaces the set of current copies.
  uint64_t epoch() const noexcept { return epoch_; }
  /// A write on the host: `value` becomes the only current copy (epoch advances).
  void write_host(Array value);
  /// A write in another residency: that copy (kept by the caller) becomes the only current
  /// one, the host copy is dropped (epoch advances).
  void write_elsewhere();
  /// The host copy brought up to date from the current copy elsewhere (epoch unchanged).
  void refresh_host(Array value);

  /// True when write_element may store one `dtype` element into the host copy's own
  /// buffer because no one can see that happen (Note [Updates in place]): the host copy is
  /// current, 0-d, of `dtype`, writable, uma-allocated host memory (pooled, never adopted),
  /// and this cell holds the only reference to its storage.
  bool can_write_element(DType dtype) const noexcept;
  /// A write on the host, after can_write_element(dtype) said yes (and nothing took a
  /// reference to the host copy since): copies itemsize(dtype) bytes from `bytes` into the
  /// host copy, which stays the only current copy (epoch advances, as in write_host).
  void write_element(const void* bytes) noexcept;

 private:
  void lock_contended();
  // The lock word: 0 free, 1 held, 2 held and a thread may be waiting (it sleeps in
  // std::atomic::wait, a futex on Linux; unlock wakes one).
  std::atomic<uint32_t> state_{0};
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;  // re-entrant acquisitions by owner_
  Array host_;
  bool host_current_ = true;
  uint64_t epoch_ = 0;
  uint64_t serial_;
};

}  // namespace uma::runtime
