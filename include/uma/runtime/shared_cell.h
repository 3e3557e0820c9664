// uma/runtime/shared_cell.h — a shared variable's value in every residency (DESIGN.md
// "Shared variables: one value, many residencies"), in C++ so that a compiled function's call
// reads and writes shared state without Python, whatever its backend.
//
// A SharedCell holds the variable's declared type and its current copies: the host copy (a
// uma::Array on the CPU) and at most one copy per other residency (a device's Array, or a
// backend's native value), each tagged with its Residency. Only current copies are kept: a
// write drops every other copy (their memory is released), so "current" = "present".
//
//   host_current() == false  <=>  another residency was written last and the host copy has
//                                 not been brought up to date since.
//
// Reading in a residency without a current copy converts once, through the host copy
// (Residency::to_host of the written copy, then Residency::from_host of the reader), and keeps
// the result: a host <-> device switch costs one conversion, a second read none. A converted
// copy must have the value's dtype and shape (TypeError otherwise, and nothing is kept), and it
// is kept only if no write happened while it was made (a filter may run code that writes the
// cell: the read then starts again from the new value).
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

#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/runtime/residency.h"

namespace uma::runtime {

class SharedCell {
 public:
  /// A cell of declared type `type` whose host copy `host` (a CPU array of that type) is the
  /// only current one. Without a type: `host`'s dtype and ndim, every length open.
  explicit SharedCell(Array host);
  SharedCell(Array host, TypeSpec type);
  SharedCell(const SharedCell&) = delete;
  SharedCell& operator=(const SharedCell&) = delete;

  /// Global creation order (the order in which callers take several cells' locks).
  uint64_t serial() const noexcept { return serial_; }
  /// The declared type (fixed at creation).
  const TypeSpec& type() const noexcept { return type_; }

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
  /// The host copy, brought up to date first (once) when another residency was written last.
  /// Errors of the conversion propagate and change nothing.
  const Array& read_host();
  /// The current copy in residency `r`, converted once through the host copy when `r` has
  /// none (and kept: it is current until the next write). Errors of a conversion propagate;
  /// the cell then holds at most one more current copy (the host's), of the same value.
  Value read(const std::shared_ptr<const Residency>& r);
  /// Drops every copy (the cell then holds no value: reads are RuntimeErrors). For the
  /// garbage collector, which clears only cells no one can read any more.
  void clear() noexcept;
  /// Calls visit(native) for each native value among the copies (the garbage collector's view).
  template <class F>
  void for_each_native(F&& visit) const {
    for (const Copy& c : others_)
      if (c.value.native) visit(c.value.native.get());
  }
  /// The names of the residencies holding a current copy (the host's as "cpu").
  std::vector<std::string> current() const;
  /// The current copy in the residency named `name`, or nullptr.
  const Value* copy_in(const std::string& name) const noexcept;

  /// A write in residency `r`: `value` (of that residency) becomes the only current copy.
  void write(const std::shared_ptr<const Residency>& r, Value value);
  /// A write on the host: `value` becomes the only current copy.
  void write_host(Array value);
  /// The host copy brought up to date from the current copy elsewhere (the other copies stay
  /// current).
  void refresh_host(Array value);

  /// True when write_element may store one `dtype` element into the host copy's own
  /// buffer because no one can see that happen (Note [Updates in place]): the host copy is
  /// the only current copy, 0-d, of `dtype`, writable, uma-allocated host memory (pooled, never adopted),
  /// and this cell holds the only reference to its storage.
  bool can_write_element(DType dtype) const noexcept;
  /// A write on the host, after can_write_element(dtype) said yes (and nothing took a
  /// reference to the host copy since): copies itemsize(dtype) bytes from `bytes` into the
  /// host copy, which stays the only current copy.
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
  struct Copy {
    std::shared_ptr<const Residency> residency;
    Value value;
  };
  std::vector<Copy> others_;  // current copies outside the host, one per residency
  uint64_t writes_ = 0;       // counts writes: a conversion is kept only if none happened meanwhile
  TypeSpec type_;
  uint64_t serial_;
};

}  // namespace uma::runtime
