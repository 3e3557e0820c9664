#include "uma/runtime/shared_cell.h"

#include "uma/error.h"

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
  mu_.lock();
  owner_.store(me, std::memory_order_relaxed);
  depth_ = 1;
}

bool SharedCell::try_lock() {
  const auto me = std::this_thread::get_id();
  if (owner_.load(std::memory_order_relaxed) == me) {
    ++depth_;
    return true;
  }
  if (!mu_.try_lock()) return false;
  owner_.store(me, std::memory_order_relaxed);
  depth_ = 1;
  return true;
}

void SharedCell::unlock() {
  UMA_CHECK(held_by_this_thread(), Runtime, "SharedCell: unlock by a thread that does not hold the lock");
  if (--depth_ == 0) {
    owner_.store(std::thread::id{}, std::memory_order_relaxed);
    mu_.unlock();
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

void SharedCell::refresh_host(Array value) {
  host_ = std::move(value);
  host_current_ = true;
}

}  // namespace uma::runtime
