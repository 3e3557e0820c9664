#include "uma/array.h"

#include <algorithm>

#include "uma/error.h"
#include "uma/memory/caching_allocator.h"
#include "uma/memory/cuda.h"

namespace uma {

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return s;
}

int64_t checked_size(const Shape& shape) {
  // As NumPy: the product of the non-zero dimensions must fit too, so that contiguous strides
  // (and the size) of a size-0 array such as (0, 2**62, 2**62) never overflow.
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    UMA_CHECK(d >= 0, Value, "negative dimensions are not allowed: shape ", shape_str(shape));
    if (d == 0) {
      zero = true;
      continue;
    }
    if (n > INT64_MAX / d) UMA_FAIL(Value, "array is too big: shape ", shape_str(shape));
    n *= d;
  }
  return zero ? 0 : n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
  }
  return s + ")";
}

Array::Array(std::shared_ptr<Storage> storage, void* data, Shape shape, Strides strides, DType dtype,
             bool writable)
    : storage_(std::move(storage)), data_(data), shape_(std::move(shape)), strides_(std::move(strides)),
      dtype_(dtype), writable_(writable) {
  UMA_ASSERT(shape_.size() == strides_.size());
  size_ = 1;
  if (std::find(shape_.begin(), shape_.end(), 0) != shape_.end()) size_ = 0;  // (2**62, 2**62, 0): no overflow
  else for (int64_t d : shape_) size_ *= d;
}

namespace {
// A small host array's Storage with its bytes inside (Note [Small host blocks] in
// caching_allocator.h): the Storage, its shared_ptr control block and the bytes are one heap
// allocation, and the host allocator only counts the bytes (no lock, no free list).
struct SmallStorage final : Storage {
  static constexpr std::size_t kBytes = CachingAllocator::kInlineBytes;
  SmallStorage() : Storage(DataPtr()) {
    // operator new aligns to 16 bytes; the 64-byte aligned block starts within the first 48.
    const uintptr_t at = (reinterpret_cast<uintptr_t>(bytes) + 63) & ~uintptr_t{63};
    data = host_caching_allocator().inline_block(reinterpret_cast<void*>(at), kBytes);
  }
  alignas(16) unsigned char bytes[kBytes + 48];
};

// Per thread, at most this many freed SmallStorage allocations are kept for reuse; none under
// AddressSanitizer, which should see every allocation and free.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kKeepBlocks = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kKeepBlocks = 0;
#else
constexpr int kKeepBlocks = 64;
#endif
#else
constexpr int kKeepBlocks = 64;
#endif

// The calling thread's freed SmallStorage allocations (all of one size), a list linked
// through their first bytes. Trivially destructible, so it stays usable while the thread's
// other thread_local objects are destroyed; Drain empties it and closes it then.
struct KeptBlocks {
  void* head = nullptr;
  int count = 0;
  bool open = false;    // Drain registered, thread not exiting
  bool closed = false;  // the thread is exiting: allocate and free directly
};
thread_local KeptBlocks t_kept;

struct Drain {
  ~Drain() {
    while (t_kept.head) {
      void* p = t_kept.head;
      t_kept.head = *static_cast<void**>(p);
      ::operator delete(p);
    }
    t_kept.count = 0;
    t_kept.closed = true;
  }
};
[[gnu::noinline]] void open_kept() {
  thread_local Drain drain;  // its destructor runs at thread exit
  (void)drain;
  t_kept.open = true;
}

// The allocator of SmallStorage's shared_ptr control block (one size): reuses the calling
// thread's kept blocks. A block may be freed on another thread than the one that allocated
// it: it then joins that thread's list (the bytes are plain heap memory either way).
template <class T>
struct KeepAlloc {
  using value_type = T;
  KeepAlloc() = default;
  template <class U>
  KeepAlloc(const KeepAlloc<U>&) noexcept {}
  T* allocate(std::size_t n) {
    static_assert(sizeof(T) >= sizeof(void*));
    if (kKeepBlocks > 0 && n == 1 && t_kept.head) {
      void* p = t_kept.head;
      t_kept.head = *static_cast<void**>(p);
      --t_kept.count;
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (kKeepBlocks > 0 && n == 1 && !t_kept.closed && t_kept.count < kKeepBlocks) {
      if (!t_kept.open) open_kept();
      *reinterpret_cast<void**>(p) = t_kept.head;
      t_kept.head = p;
      ++t_kept.count;
      return;
    }
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const KeepAlloc<U>&) const noexcept { return true; }
};

std::shared_ptr<Storage> host_storage(std::size_t nbytes) {
  if (nbytes <= SmallStorage::kBytes) return std::allocate_shared<SmallStorage>(KeepAlloc<SmallStorage>());
  return std::make_shared<Storage>(host_allocator().allocate(nbytes));
}
}  // namespace

namespace {
// Note [Placed results]: the calling thread's placement (none while storage is null).
struct Placement {
  std::shared_ptr<Storage> storage;
  Device device;
  std::size_t nbytes = 0;
  bool taken = false;
};
thread_local Placement t_placement;

std::shared_ptr<Storage> device_storage(Device device, std::size_t nbytes) {
  Placement& p = t_placement;
  if (p.storage && !p.taken && p.device == device && p.nbytes == nbytes) {
    p.taken = true;
    return p.storage;
  }
  return std::make_shared<Storage>(cuda::device_allocator(device.index).allocate(nbytes));
}
}  // namespace

PlacedResult::PlacedResult(std::shared_ptr<Storage> storage, Device device, std::size_t nbytes) {
  UMA_CHECK(storage && !device.is_cpu() && storage->data.device() == device && storage->data.nbytes() >= nbytes &&
                !t_placement.storage,
            Value, "PlacedResult: expected ", nbytes, " bytes of device memory of ", device.str(),
            " and no other placement on this thread");
  t_placement = Placement{std::move(storage), device, nbytes, false};
}

PlacedResult::~PlacedResult() { t_placement = Placement{}; }

bool PlacedResult::taken() const noexcept { return t_placement.taken; }

Array Array::empty(const Shape& shape, DType dtype, Device device) {
  if (shape.empty() && device.is_cpu()) {  // 0-d on the host: a small step's result, no shape work
    Array a;  // 0-d, size 1, writable: only the storage and dtype to set
    a.storage_ = host_storage(uma::itemsize(dtype));
    a.data_ = a.storage_->data.get();
    a.dtype_ = dtype;
    return a;
  }
  int64_t n = checked_size(shape);
  UMA_CHECK(n <= INT64_MAX / 16, Value, "array is too big: shape ", shape_str(shape));
  const std::size_t nbytes = static_cast<std::size_t>(n) * uma::itemsize(dtype);
  if (!device.is_cpu()) cuda::require(device, "empty");
  std::shared_ptr<Storage> st = device.is_cpu() ? host_storage(nbytes) : device_storage(device, nbytes);
  void* p = st->data.get();
  return Array(std::move(st), p, shape, contiguous_strides(shape), dtype, true);
}

bool Array::is_c_contiguous() const noexcept {
  if (size_ <= 1) return true;
  int64_t acc = 1;
  for (int64_t i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

bool Array::is_f_contiguous() const noexcept {
  if (size_ <= 1) return true;
  int64_t acc = 1;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape_[i] != 1 && strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

Array Array::as_readonly() const {
  Array a = *this;
  a.writable_ = false;
  return a;
}

Array Array::view(void* data, Shape shape, Strides strides) const {
  return Array(storage_, data, std::move(shape), std::move(strides), dtype_, writable_);
}

Array Array::broadcast_view(const Shape& shape) const {
  if (shape_ == shape) return *this;
  const int64_t nd = static_cast<int64_t>(shape.size()), off = nd - ndim();
  Strides st(nd, 0);
  for (int64_t d = 0; d < ndim(); ++d) st[off + d] = shape_[d] == 1 && shape[off + d] != 1 ? 0 : strides_[d];
  return view(data_, shape, std::move(st));
}

char* Array::ptr_at(const int64_t* index) const noexcept {
  int64_t off = 0;
  for (int64_t i = 0; i < ndim(); ++i) off += index[i] * strides_[i];
  return static_cast<char*>(data_) + off * static_cast<int64_t>(itemsize());
}

}  // namespace uma
