// Advanced indexing op definitions (NumPy semantics): integer-array take, boolean-mask reads,
// and the functional updates set/inc (PyTensor's set_subtensor / inc_subtensor), on every
// dtype. Integer-array and mask indexing gather and scatter whole contiguous runs
// (kernels/cpu/index.cpp); the updates work on a fresh copy of x, never on x itself.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {

// indices as a fresh C-contiguous int64 array with negative entries wrapped; IndexError
// naming the first bad index.
Array normalized_indices(const char* op, const Array& indices, int64_t n, int64_t axis) {
  UMA_CHECK(is_integer(indices.dtype()), Type, op, ": indices must be integers, got dtype ",
            dtype_name(indices.dtype()));
  Array idx = astype(indices, DType::Int64);
  int64_t* p = idx.data_as<int64_t>();
  for (int64_t i = 0; i < idx.size(); ++i) {
    if (indices.dtype() == DType::UInt64 && p[i] < 0)  // a uint64 index >= 2**63
      UMA_FAIL(Index, op, ": index ", static_cast<uint64_t>(p[i]), " is out of bounds for axis ", axis, " with size ", n);
    UMA_CHECK(p[i] >= -n && p[i] < n, Index, op, ": index ", p[i], " is out of bounds for axis ", axis,
              " with size ", n);
    if (p[i] < 0) p[i] += n;
  }
  return idx;
}

// Flat C-order positions of the true entries of a bool mask matching x.shape[:mask.ndim].
Array mask_positions(const char* op, const Array& x, const Array& mask) {
  UMA_CHECK(mask.dtype() == DType::Bool, Type, op, ": a boolean mask must have dtype bool, got ",
            dtype_name(mask.dtype()));
  UMA_CHECK(mask.ndim() >= 1, Index, op, ": 0-d boolean masks are not supported");
  UMA_CHECK(mask.ndim() <= x.ndim(), Index, op, ": too many indices for array: array is ", x.ndim(),
            "-dimensional, but the boolean mask is ", mask.ndim(), "-dimensional");
  for (int64_t d = 0; d < mask.ndim(); ++d)
    UMA_CHECK(mask.shape()[d] == x.shape()[d], Index, op, ": boolean index did not match indexed array along axis ",
              d, "; size of axis is ", x.shape()[d], " but size of corresponding boolean axis is ", mask.shape()[d]);
  Array m = contiguous(mask);
  const bool* mp = m.data_as<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < m.size(); ++i) count += mp[i] ? 1 : 0;
  Array pos = Array::empty({count}, DType::Int64);
  int64_t* pp = pos.data_as<int64_t>();
  for (int64_t i = 0, k = 0; i < m.size(); ++i)
    if (mp[i]) pp[k++] = i;
  return pos;
}

// x (C-contiguous) seen as (prod(x.shape[:k]),) + x.shape[k:].
Array flatten_leading(const Array& x, int64_t k) {
  Shape s{1};
  for (int64_t d = 0; d < k; ++d) s[0] *= x.shape()[d];
  for (int64_t d = k; d < x.ndim(); ++d) s.push_back(x.shape()[d]);
  return reshape(x, s);
}

// y converted to `t` (TypeError unless same_kind), broadcast to `shape`, C-contiguous.
Array update_source(const char* op, const Array& y0, DType t, const Shape& shape) {
  // NumPy's assignment rule: leading length-1 axes of the update beyond the region's rank drop.
  Array y = y0;
  while (y.ndim() > static_cast<int64_t>(shape.size()) && y.shape()[0] == 1)
    y = y.view(y.data(), Shape(y.shape().begin() + 1, y.shape().end()), Strides(y.strides().begin() + 1, y.strides().end()));
  UMA_CHECK(can_cast_same_kind(y.dtype(), t), Type, op, ": cannot cast the update of dtype ", dtype_name(y.dtype()),
            " to the array's dtype ", dtype_name(t), " with casting rule 'same_kind'");
  UMA_CHECK(static_cast<int64_t>(shape.size()) >= y.ndim() &&
                broadcast_shapes(y.shape(), shape, op) == shape,
            Value, op, ": could not broadcast the update of shape ", shape_str(y.shape()), " into shape ",
            shape_str(shape));
  Array out = Array::empty(shape, t);
  kernels::cpu::cast(detail::broadcast_view(y, shape), out);
  return out;
}

const char* update_name(bool inc) { return inc ? "inc_subtensor" : "set_subtensor"; }

}  // namespace

Array take(const Array& a0, const Array& indices, std::optional<int64_t> axis0) {
  require_host("take", a0);
  Array a = axis0 ? contiguous(a0) : reshape(a0, {a0.size()});
  const int64_t axis = axis0 ? normalize_axis(*axis0, a.ndim(), "take") : 0;
  a = contiguous(a);
  Array idx = normalized_indices("take", indices, a.shape()[axis], axis);
  Shape flat = a.shape();
  flat[axis] = idx.size();
  Array out = Array::empty(flat, a.dtype());
  kernels::cpu::take(a, idx, axis, out);
  Shape s(a.shape().begin(), a.shape().begin() + axis);
  s.insert(s.end(), indices.shape().begin(), indices.shape().end());
  s.insert(s.end(), a.shape().begin() + axis + 1, a.shape().end());
  return out.view(out.data(), s, contiguous_strides(s));
}

Array mask_select(const Array& a, const Array& mask) {
  require_host("getitem", a);
  Array pos = mask_positions("getitem", a, mask);
  return take(flatten_leading(contiguous(a), mask.ndim()), pos, 0);
}

Array update_basic(const Array& x, const std::vector<IndexItem>& index, const Array& y, bool inc) {
  require_host(inc ? "inc_subtensor" : "set_subtensor", x);
  const char* op = update_name(inc);
  Array out = copy(x);
  Array dst = getitem(out, index);
  Array src = update_source(op, y, x.dtype(), dst.shape());
  if (inc) kernels::cpu::add_into(dst, src);
  else kernels::cpu::cast(src, dst);
  return out;
}

Array update_take(const Array& x, const Array& indices, int64_t axis0, const Array& y, bool inc) {
  require_host(inc ? "inc_subtensor" : "set_subtensor", x);
  const char* op = update_name(inc);
  const int64_t axis = normalize_axis(axis0, x.ndim(), op);
  Array idx = normalized_indices(op, indices, x.shape()[axis], axis);
  Shape region(x.shape().begin(), x.shape().begin() + axis);
  region.insert(region.end(), indices.shape().begin(), indices.shape().end());
  region.insert(region.end(), x.shape().begin() + axis + 1, x.shape().end());
  Array src = update_source(op, y, x.dtype(), region);
  Array out = copy(x);
  kernels::cpu::scatter(out, idx, axis, src, inc);
  return out;
}

Array update_mask(const Array& x, const Array& mask, const Array& y, bool inc) {
  require_host(inc ? "inc_subtensor" : "set_subtensor", x);
  const char* op = update_name(inc);
  Array pos = mask_positions(op, x, mask);
  Shape region{pos.size()};
  for (int64_t d = mask.ndim(); d < x.ndim(); ++d) region.push_back(x.shape()[d]);
  Array src = update_source(op, y, x.dtype(), region);
  Array out = copy(x);
  kernels::cpu::scatter(flatten_leading(out, mask.ndim()), pos, 0, src, inc);
  return out;
}

}  // namespace uma::ops
