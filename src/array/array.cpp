#include "uma/array.h"

#include <algorithm>

#include "uma/error.h"
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

Array Array::empty(const Shape& shape, DType dtype, Device device) {
  if (shape.empty() && device.is_cpu()) {  // 0-d on the host: a small step's result, no shape work
    auto st = std::make_shared<Storage>(host_allocator().allocate(uma::itemsize(dtype)));
    void* p = st->data.get();
    return Array(std::move(st), p, Shape{}, Strides{}, dtype, true);
  }
  int64_t n = checked_size(shape);
  UMA_CHECK(n <= INT64_MAX / 16, Value, "array is too big: shape ", shape_str(shape));
  const std::size_t nbytes = static_cast<std::size_t>(n) * uma::itemsize(dtype);
  if (!device.is_cpu()) cuda::require(device, "empty");
  auto st = std::make_shared<Storage>(device.is_cpu() ? host_allocator().allocate(nbytes)
                                                      : cuda::device_allocator(device.index).allocate(nbytes));
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

char* Array::ptr_at(const int64_t* index) const noexcept {
  int64_t off = 0;
  for (int64_t i = 0; i < ndim(); ++i) off += index[i] * strides_[i];
  return static_cast<char*>(data_) + off * static_cast<int64_t>(itemsize());
}

}  // namespace uma
