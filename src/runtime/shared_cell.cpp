#include "uma/runtime/shared_cell.h"

#include <cstring>

#include "uma/error.h"

#if defined(__SANITIZE_THREAD__)
#define UMA_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UMA_UNDER_TSAN 1
#endif
#endif
#ifndef UMA_UNDER_TSAN
#define UMA_UNDER_TSAN 0
#endif

namespace uma::runtime {

namespace {
std::atomic<uint64_t> g_serial{0};
}  // namespace

SharedCell::SharedCell(Array host) : host_(std::move(host)), serial_(g_serial.fetch_add(1, std::memory_order_relaxed)) {
  UMA_CHECK(host_.defined(), Value, "SharedCell: the host value is undefined");
  UMA_CHECK(host_.device().is_cpu(), Value, "SharedCell: the host value must be on the CPU");
}

// The owner is read without the mutex only by the thread comparing it with itself: a thread
// sees its own id there only if it stored it (and has not cleared it since).
void SharedCell::lock() {
  const auto me = std::this_thread::get_id();
  if (owner_.load(std::memory_order_relaxed) == me) {
    ++depth_;
    return;
  }
  uint32_t free = 0;
  if (!state_.compare_exchange_strong(free, 1, std::memory_order_acquire)) lock_contended();
  owner_.store(me, std::memory_order_relaxed);
  depth_ = 1;
}

void SharedCell::lock_contended() {
  // Mark the lock contended and sleep until the holder lets go (then take it, still marked
  // contended: another thread may be asleep too, and the next unlock must wake it).
  while (state_.exchange(2, std::memory_order_acquire) != 0) state_.wait(2, std::memory_order_relaxed);
}

bool SharedCell::try_lock() {
  const auto me = std::this_thread::get_id();
  if (owner_.load(std::memory_order_relaxed) == me) {
    ++depth_;
    return true;
  }
  uint32_t free = 0;
  if (!state_.compare_exchange_strong(free, 1, std::memory_order_acquire)) return false;
  owner_.store(me, std::memory_order_relaxed);
  depth_ = 1;
  return true;
}

void SharedCell::unlock() {
  UMA_CHECK(held_by_this_thread(), Runtime, "SharedCell: unlock by a thread that does not hold the lock");
  if (--depth_ == 0) {
    owner_.store(std::thread::id{}, std::memory_order_relaxed);
    if (state_.exchange(0, std::memory_order_release) == 2) state_.notify_one();
  }
}

bool SharedCell::held_by_this_thread() const noexcept {
  return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
}

const Array& SharedCell::host() const {
  UMA_CHECK(host_current_, Runtime, "SharedCell: the host copy is stale (another residency was written last)");
  return host_;
}

void SharedCell::write_host(Array value) {
  host_ = std::move(value);
  host_current_ = true;
  ++epoch_;
}

void SharedCell::write_elsewhere() {
  host_ = Array();
  host_current_ = false;
  ++epoch_;
}

bool SharedCell::can_write_element(DType dtype) const noexcept {
  if (!host_current_ || !host_.defined() || host_.ndim() != 0 || host_.dtype() != dtype || !host_.writable())
    return false;
  const std::shared_ptr<Storage>& st = host_.storage();
  if (!st->data.device().is_cpu() || st->data.origin() != Origin::Pooled || st.use_count() != 1) return false;
  // Another thread's last use of the old value happens before the write below: its reference
  // was dropped with a release decrement, which this acquire fence pairs with.
#if UMA_UNDER_TSAN
  // ThreadSanitizer does not model fences; an acquire read-modify-write of the count does the
  // same in a way it sees (a copy of the reference, dropped at once).
  { std::shared_ptr<Storage> sync = st; }
#else
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return true;
}

void SharedCell::write_element(const void* bytes) noexcept {
  void* to = host_.data();
  switch (const std::size_t n = itemsize(host_.dtype())) {  // fixed sizes: no library call
    case 8: std::memcpy(to, bytes, 8); break;
    case 4: std::memcpy(to, bytes, 4); break;
    default: std::memcpy(to, bytes, n); break;
  }
  ++epoch_;
}

void SharedCell::refresh_host(Array value) {
  host_ = std::move(value);
  host_current_ = true;
}

}  // namespace uma::runtime
