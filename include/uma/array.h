// uma/array.h — the array handle: a typed, strided view of shared Storage.
//
// Layout invariants (DESIGN.md, "Decisions: strides"):
//   element (i0, ..., in-1) lives at  data() + itemsize * sum_k i_k * strides()[k]
//   strides are in elements, signed 64-bit; Python reports bytes (strides * itemsize).
//   size() == prod(shape()); a size-0 array still has a valid (possibly dangling) data().
// Views share Storage through shared_ptr: the bytes live as long as any view.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "uma/dtype.h"
#include "uma/memory/allocator.h"

namespace uma {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

/// The bytes an array's views share. Owns exactly one DataPtr.
struct Storage {
  explicit Storage(DataPtr d) : data(std::move(d)) {}
  DataPtr data;
};

class Array {
 public:
  Array() = default;
  /// A view: `data` must point into `storage`'s bytes for every reachable element.
  Array(std::shared_ptr<Storage> storage, void* data, Shape shape, Strides strides, DType dtype,
        bool writable);

  /// A fresh, C-contiguous, writable array from the host allocator (contents undefined).
  static Array empty(const Shape& shape, DType dtype, Device device = Device::cpu());

  const Shape& shape() const noexcept { return shape_; }
  const Strides& strides() const noexcept { return strides_; }
  int64_t ndim() const noexcept { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const noexcept { return size_; }
  DType dtype() const noexcept { return dtype_; }
  std::size_t itemsize() const noexcept { return uma::itemsize(dtype_); }
  int64_t nbytes() const noexcept { return size_ * static_cast<int64_t>(itemsize()); }
  Device device() const noexcept { return storage_ ? storage_->data.device() : Device::cpu(); }
  bool writable() const noexcept { return writable_; }
  bool defined() const noexcept { return storage_ != nullptr; }
  void* data() const noexcept { return data_; }
  template <class T> T* data_as() const noexcept { return static_cast<T*>(data_); }
  const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  /// True when the bytes are adopted (Note [Adopted buffers]).
  bool is_adopted() const noexcept { return storage_ && storage_->data.is_adopted(); }

  bool is_c_contiguous() const noexcept;
  bool is_f_contiguous() const noexcept;

  /// The same view, read-only.
  Array as_readonly() const;
  /// A view with new geometry over the same storage (no checks beyond ndim agreement).
  Array view(void* data, Shape shape, Strides strides) const;
  /// This array seen with `shape`, to which its shape broadcasts (NumPy's rule; unchecked):
  /// stride 0 on the new leading axes and on the length-1 axes that `shape` stretches.
  Array broadcast_view(const Shape& shape) const;

  /// Pointer to element at a multi-index (no bounds check).
  char* ptr_at(const int64_t* index) const noexcept;

 private:
  std::shared_ptr<Storage> storage_;
  void* data_ = nullptr;
  Shape shape_;
  Strides strides_;
  int64_t size_ = 1;
  DType dtype_ = DType::Float64;
  bool writable_ = true;
};

// Note [Placed results]
// A CUDA graph recording may choose the memory of one step's result (Note [Carried values]
// in uma/runtime/program.h). While a PlacedResult lives, the calling thread's next
// Array::empty on its device of exactly its byte count returns a C-contiguous, writable array
// at the start of its storage instead of fresh memory, once. A step may allocate a
// temporary of that size first: the caller checks that the step's result is over the
// storage (taken() alone does not say so).
class PlacedResult {
 public:
  /// `storage`: device memory of `device` of at least `nbytes`, which the placing code owns.
  PlacedResult(std::shared_ptr<Storage> storage, Device device, std::size_t nbytes);
  ~PlacedResult();  // withdraws the placement if no Array::empty took it
  PlacedResult(const PlacedResult&) = delete;
  PlacedResult& operator=(const PlacedResult&) = delete;
  /// True once an Array::empty on this thread took the storage.
  bool taken() const noexcept;
};

/// C-contiguous strides (elements) for a shape.
Strides contiguous_strides(const Shape& shape);
/// prod(shape) with overflow and negative checks (ValueError).
int64_t checked_size(const Shape& shape);
/// "(2, 3)" like Python.
std::string shape_str(const Shape& shape);

}  // namespace uma
