#include "uma/runtime/shared_cell.h"

#include <cstring>
#include <optional>

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

SharedCell::SharedCell(Array host) : SharedCell(host, host.defined() ? TypeSpec::of(host) : TypeSpec{}) {}

SharedCell::SharedCell(Array host, TypeSpec type)
    : host_(std::move(host)), type_(std::move(type)), serial_(g_serial.fetch_add(1, std::memory_order_relaxed)) {
  UMA_CHECK(host_.defined(), Value, "SharedCell: the host value is undefined");
  UMA_CHECK(host_.device().is_cpu(), Value, "SharedCell: the host value must be on the CPU");
  UMA_CHECK(type_.admits(host_.dtype(), host_.shape()), Type, "SharedCell: the host value (",
            dtype_name(host_.dtype()), " of shape ", shape_str(host_.shape()), ") does not have the declared type ",
            type_.text);
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

namespace {
// A conversion may run code (a Python linker's filter) that writes the cell; the read then
// starts again from the new value, this many times at most.
constexpr int kConversionAttempts = 8;
}  // namespace

const Array& SharedCell::read_host() {
  for (int attempt = 0; !host_current_; ++attempt) {
    UMA_CHECK(!others_.empty(), Runtime, "shared variable ", type_.label, " holds no value (it was cleared)");
    UMA_CHECK(attempt < kConversionAttempts, Runtime, "shared variable ", type_.label,
              ": every conversion to the host was overtaken by a write");
    const Copy c = others_.front();  // a write elsewhere left exactly one current copy there
    const uint64_t seen = writes_;
    Array h = host_form(*c.residency, c.value, type_);
    if (writes_ != seen) continue;  // the filter wrote the cell: convert the new value
    count_conversion(c.residency->name(), host_residency()->name(), h.nbytes());
    refresh_host(std::move(h));
  }
  return host_;
}

Value SharedCell::read(const std::shared_ptr<const Residency>& r) {
  if (r->is_host()) return read_host();
  for (int attempt = 0;; ++attempt) {
    for (const Copy& c : others_)
      if (c.residency->name() == r->name()) return c.value;
    UMA_CHECK(attempt < kConversionAttempts, Runtime, "shared variable ", type_.label, ": every conversion to ",
              r->name(), " was overtaken by a write");
    // A current copy with the same device home converts through an array there; any other
    // through the host copy.
    std::optional<Copy> near;  // a copy, not a reference: a filter may write the cell
    if (const Device home = r->home(); !home.is_cpu())
      for (const Copy& c : others_)
        if (c.residency->home() == home) near = c;
    const std::string from = near ? near->residency->name() : host_residency()->name();
    uint64_t seen = writes_;
    const Array host = near ? home_form(*near->residency, near->value, type_) : read_host();
    if (writes_ != seen) continue;  // the filter wrote the cell: convert the new value
    seen = writes_;
    Value v = near ? r->from_home(host, type_) : r->from_host(host, type_);
    auto d = r->describe(v);
    UMA_CHECK(d.has_value(), Type, "residency ", r->name(), ": input_filter gave a value without dtype and shape for "
              "shared variable ", type_.label, " (nothing was kept)");
    UMA_CHECK(d->first == dtype_name(host.dtype()) && d->second == host.shape(), Type, "residency ", r->name(),
              ": input_filter gave ", d->first, " of shape ", shape_str(d->second), " for shared variable ",
              type_.label, ", which holds ", dtype_name(host.dtype()), " of shape ", shape_str(host.shape()),
              " (nothing was kept)");
    if (auto dev = r->device())
      UMA_CHECK(v.is_array() && v.array.device() == *dev, Type, "residency ", r->name(),
                ": input_filter gave a value that is not a uma array on ", dev->str(), " for shared variable ",
                type_.label);
    if (writes_ != seen) continue;  // the filter wrote the cell: read the new value
    count_conversion(from, r->name(), host.nbytes());
    others_.push_back(Copy{r, v});
    return v;
  }
}

void SharedCell::clear() noexcept {
  host_ = Array();
  host_current_ = false;
  others_.clear();
  ++writes_;
}

std::vector<std::string> SharedCell::current() const {
  std::vector<std::string> names;
  if (host_current_) names.emplace_back("cpu");
  for (const Copy& c : others_) names.push_back(c.residency->name());
  return names;
}

const Value* SharedCell::copy_in(const std::string& name) const noexcept {
  for (const Copy& c : others_)
    if (c.residency->name() == name) return &c.value;
  return nullptr;
}

void SharedCell::write(const std::shared_ptr<const Residency>& r, Value value) {
  if (r->is_host()) {
    write_host(std::move(value.array));
    return;
  }
  host_ = Array();
  host_current_ = false;
  others_.clear();
  others_.push_back(Copy{r, std::move(value)});
  ++writes_;
}

void SharedCell::write_host(Array value) {
  host_ = std::move(value);
  host_current_ = true;
  others_.clear();
  ++writes_;
}

bool SharedCell::can_write_element(DType dtype) const noexcept {
  if (!host_current_ || !others_.empty() || !host_.defined() || host_.ndim() != 0 || host_.dtype() != dtype || !host_.writable())
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
  ++writes_;
}

void SharedCell::refresh_host(Array value) {
  host_ = std::move(value);
  host_current_ = true;
}

}  // namespace uma::runtime
