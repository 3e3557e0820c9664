// Advanced indexing op definitions (NumPy semantics): a[key] and a[key] = v for every NumPy index
// (index, index_assign: the layout from advanced_index_layout, the picks as element offsets, one
// gather and one scatter kernel per device), integer-array take,
// boolean-mask reads, and the functional updates set/inc (PyTensor's set_subtensor /
// inc_subtensor), on every dtype and device. Integer-array and mask indexing gather and scatter whole contiguous runs
// (kernels/cpu/index.cpp, kernels/cuda/index.cu); the updates work on a fresh copy of x, never
// on x itself, so a failed call changes nothing.
//
// Note [Index arrays and devices]
// An index array or mask may live on the indexed array's device or on the host (Python lists
// and NumPy arrays are host arrays): host indices are checked on the host and moved to a cuda
// array's device once. Indices on a cuda device are checked there; the kernel records the
// position of the first bad index and the host reads it back (one wait for the stream), so
// the IndexError names the same index as on the cpu. A mask on a cuda device costs one
// read-back too (its count is the result's length). Indices on a cuda device meeting a host
// array, or another cuda device, raise RuntimeError as other ops do for mixed devices.
#include <algorithm>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {

// RuntimeError unless an index array on `idx_dev` may index an array on `dev` (same device,
// or host indices: Note [Index arrays and devices]).
void check_index_device(const char* op, Device idx_dev, Device dev) {
  UMA_CHECK(idx_dev == dev || idx_dev.is_cpu(), Runtime, op, ": the index array is on ", idx_dev.str(),
            " but the indexed array is on ", dev.str(), " (move them to one device with .to_device(...))");
}

// indices as a fresh C-contiguous int64 array on `dev` with negative entries wrapped;
// IndexError naming the first bad index.
Array normalized_indices(const char* op, const Array& indices, int64_t n, int64_t axis, Device dev) {
  UMA_CHECK(is_integer(indices.dtype()), Type, op, ": indices must be integers, got dtype ",
            dtype_name(indices.dtype()));
  check_index_device(op, indices.device(), dev);
  Array idx = astype(indices, DType::Int64);  // always a fresh array: normalised in place below
  kernels::normalize_indices(op, idx, n, axis, indices.dtype());
  return on_device(idx, dev);
}

// Flat C-order positions (int64, on x's device) of the true entries of a bool mask matching
// x.shape[:mask.ndim].
Array mask_positions(const char* op, const Array& x, const Array& mask) {
  UMA_CHECK(mask.dtype() == DType::Bool, Type, op, ": a boolean mask must have dtype bool, got ",
            dtype_name(mask.dtype()));
  mask_select_shape(x.shape(), mask.shape(), op);  // the shape rule's checks
  check_index_device(op, mask.device(), x.device());
  return on_device(kernels::mask_positions(contiguous(mask)), x.device());
}

// x (C-contiguous) seen as (prod(x.shape[:k]),) + x.shape[k:].
Array flatten_leading(const Array& x, int64_t k) {
  Shape s{1};
  for (int64_t d = 0; d < k; ++d) s[0] *= x.shape()[d];
  for (int64_t d = k; d < x.ndim(); ++d) s.push_back(x.shape()[d]);
  return reshape(x, s);
}

// y converted to `t` (TypeError unless same_kind), broadcast to `shape`, C-contiguous, on y's
// device.
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
  Array out = Array::empty(shape, t, y.device());
  kernels::cast(y.broadcast_view(shape), out);
  return out;
}

// out = a (C-contiguous) gathered along `axis` at normalised int64 indices on a's device,
// shaped a.shape[:axis] + index_shape + a.shape[axis+1:].
Array take_normalized(const Array& a, const Array& idx, int64_t axis, const Shape& index_shape) {
  Shape flat = a.shape();
  flat[axis] = idx.size();
  Array out = Array::empty(flat, a.dtype(), a.device());
  kernels::take(a, idx, axis, out);
  const Shape s = take_shape(a.shape(), index_shape, axis, "take");
  return out.view(out.data(), s, contiguous_strides(s));
}

const char* update_name(bool inc) { return inc ? "inc_subtensor" : "set_subtensor"; }

bool has_array(const std::vector<IndexKey>& key) {
  return std::any_of(key.begin(), key.end(), [](const IndexKey& k) { return k.array.defined(); });
}

std::vector<IndexItem> basic_items(const std::vector<IndexKey>& key) {
  std::vector<IndexItem> items;
  for (const auto& k : key) items.push_back(k.item);
  return items;
}

// A 0-d int64 array holding v (host).
Array int64_scalar(int64_t v) { return scalar_array(Scalar::from_int(v), DType::Int64); }

// Coordinate `dim` of the flat C-order positions `pos` in an array of shape `shape`.
Array coordinate(const Array& pos, const Shape& shape, int64_t dim) {
  int64_t inner = 1;
  for (auto d = static_cast<std::size_t>(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  Array c = inner == 1 ? pos : binary(BinaryOp::FloorDivide, pos, int64_scalar(inner));
  return dim == 0 ? c : binary(BinaryOp::Remainder, c, int64_scalar(shape[static_cast<std::size_t>(dim)]));
}

// a[key] (a key with index arrays) as its parts: the layout, the basic view, that view's axes the
// arrays do not pick (`rest`, a's memory) and the element offsets of the picks (int64, C-contiguous,
// the arrays' broadcast shape), which kernels::gather and kernels::scatter_at read.
struct Picks {
  AdvancedIndexLayout layout;
  Array view, rest, offsets;
};

Picks resolve(const char* op, const Array& a, const std::vector<IndexKey>& key) {
  std::vector<IndexSpec> specs;
  std::vector<Array> positions(key.size());  // a bool array's true entries
  for (std::size_t k = 0; k < key.size(); ++k) {
    const Array& arr = key[k].array;
    if (!arr.defined()) {
      specs.push_back({IndexSpec::Basic, key[k].item, {}, kUnknownLength});
      continue;
    }
    check_index_device(op, arr.device(), a.device());
    if (arr.dtype() == DType::Bool) {
      positions[k] = kernels::mask_positions(contiguous(arr));  // (a 0-d bool: (1,) or (0,))
      specs.push_back({IndexSpec::BoolArray, {}, arr.shape(), positions[k].size()});
    } else {
      UMA_CHECK(is_integer(arr.dtype()), Index, op, ": arrays used as indices must be of integer (or boolean) type, got ",
                dtype_name(arr.dtype()));
      specs.push_back({IndexSpec::IntArray, {}, arr.shape(), kUnknownLength});
    }
  }
  Picks p;
  p.layout = advanced_index_layout(a.shape(), specs, op);
  p.view = getitem(a, p.layout.basic);
  int64_t size = 1, picks = 1;
  for (int64_t len : p.layout.shape) size *= len;
  for (int64_t len : p.layout.broadcast) picks *= len;
  Array off;
  for (const auto& e : p.layout.entries) {
    const IndexKey& k = key[static_cast<std::size_t>(e.item)];
    const int64_t n = p.view.shape()[static_cast<std::size_t>(e.view_axis)];
    // NumPy checks the values of integer arrays of rank >= 1 only when they pick something (a
    // broadcast of size 0 reads none of them); a 0-d one is an integer, always checked.
    if (picks == 0 && !(k.array.defined() && k.array.ndim() == 0 && k.array.dtype() != DType::Bool)) continue;
    Array idx;
    if (!k.array.defined()) idx = int64_scalar(k.item.i < 0 ? k.item.i + n : k.item.i);  // checked by the layout
    else if (k.array.dtype() != DType::Bool) idx = normalized_indices(op, k.array, n, e.source_axis, a.device());
    else if (k.array.ndim() == 0)
      idx = on_device(zeros({positions[static_cast<std::size_t>(e.item)].size()}, DType::Int64), a.device());
    else idx = on_device(coordinate(positions[static_cast<std::size_t>(e.item)], k.array.shape(), e.dim), a.device());
    if (size == 0) continue;  // the values are still checked, as NumPy does
    const int64_t stride = p.view.strides()[static_cast<std::size_t>(e.view_axis)];
    Array term = stride == 1 ? idx : binary(BinaryOp::Multiply, idx, int64_scalar(stride));
    off = off.defined() ? binary(BinaryOp::Add, off, term) : term;
  }
  // (0-d host terms join a device array; offsets of 0-d index arrays alone move once)
  p.offsets = size == 0 ? Array::empty(p.layout.broadcast, DType::Int64, a.device()) : on_device(contiguous(off), a.device());
  UMA_ASSERT(p.offsets.shape() == p.layout.broadcast);
  std::vector<bool> picked(static_cast<std::size_t>(p.view.ndim()), false);
  for (const auto& e : p.layout.entries) picked[static_cast<std::size_t>(e.view_axis)] = true;
  Shape shape;
  Strides strides;
  for (std::size_t d = 0; d < picked.size(); ++d)
    if (!picked[d]) {
      shape.push_back(p.view.shape()[d]);
      strides.push_back(p.view.strides()[d]);
    }
  p.rest = p.view.view(p.view.data(), shape, strides);
  return p;
}

}  // namespace

Array index(const Array& a, const std::vector<IndexKey>& key) {
  if (!has_array(key)) return getitem(a, basic_items(key));
  Picks p = resolve("getitem", a, key);
  Array out = Array::empty(p.layout.shape, a.dtype(), a.device());
  kernels::gather(p.rest, p.offsets, p.layout.position, out);
  return out;
}

void index_assign(const Array& a, const std::vector<IndexKey>& key, const Array& value) {
  if (!has_array(key)) return assign(detail::getitem_named(a, basic_items(key), "setitem"), value);
  UMA_CHECK(a.writable(), Value, "assignment destination is read-only");
  Picks p = resolve("setitem", a, key);
  Array src = Array::empty(p.layout.shape, a.dtype(), a.device());
  assign(src, value);  // NumPy's assignment rule: broadcasting, unsafe casting
  // The picks address distinct elements when the only index arrays of rank >= 1 are the
  // coordinates of one bool array (its true positions are distinct; integers are constants).
  bool distinct = true;
  int64_t bool_item = -1;
  for (const auto& e : p.layout.entries) {
    const Array& arr = key[static_cast<std::size_t>(e.item)].array;
    if (!arr.defined() || arr.ndim() == 0) continue;
    if (arr.dtype() != DType::Bool || (bool_item >= 0 && bool_item != e.item)) distinct = false;
    bool_item = e.item;
  }
  kernels::scatter_at(p.rest, p.offsets, p.layout.position, src, distinct);
}

Array take(const Array& a0, const Array& indices, std::optional<int64_t> axis0) {
  const Shape shape = take_shape(a0.shape(), indices.shape(), axis0, "take");  // checks the axis
  Array a = axis0 ? contiguous(a0) : reshape(a0, {a0.size()});
  const int64_t axis = axis0 ? normalize_axis(*axis0, a.ndim(), "take") : 0;
  a = contiguous(a);
  Array idx = normalized_indices("take", indices, a.shape()[axis], axis, a.device());
  Array out = take_normalized(a, idx, axis, indices.shape());
  UMA_ASSERT(out.shape() == shape);
  return out;
}

Array mask_select(const Array& a, const Array& mask) {
  Array pos = mask_positions("getitem", a, mask);
  return take_normalized(flatten_leading(contiguous(a), mask.ndim()), pos, 0, pos.shape());
}

Array update_basic(const Array& x0, const std::vector<IndexItem>& index, const Array& y0, bool inc) {
  const char* op = update_name(inc);
  Array x = x0, y = y0;
  detail::common_device(op, {&x, &y});
  index_shape(x.shape(), index, op);  // the index's errors name this op
  Array out = copy(x);
  Array dst = getitem(out, index);
  Array src = update_source(op, y, x.dtype(), dst.shape());
  if (inc) kernels::add_into(dst, src);  // NumPy's add in the dtype
  else kernels::cast_into(src, dst);
  return out;
}

Array update_take(const Array& x0, const Array& indices, int64_t axis0, const Array& y0, bool inc) {
  const char* op = update_name(inc);
  Array x = x0, y = y0;
  detail::common_device(op, {&x, &y});
  const Shape region = take_shape(x.shape(), indices.shape(), axis0, op);
  const int64_t axis = normalize_axis(axis0, x.ndim(), op);
  Array idx = normalized_indices(op, indices, x.shape()[axis], axis, x.device());
  Array src = update_source(op, y, x.dtype(), region);
  Array out = copy(x);
  kernels::scatter(out, idx, axis, src, inc, /*sorted_unique=*/false);
  return out;
}

Array update_mask(const Array& x0, const Array& mask, const Array& y0, bool inc) {
  const char* op = update_name(inc);
  Array x = x0, y = y0;
  detail::common_device(op, {&x, &y});
  Array pos = mask_positions(op, x, mask);
  Shape region = mask_select_shape(x.shape(), mask.shape(), op);
  region[0] = pos.size();  // the count, known now
  Array src = update_source(op, y, x.dtype(), region);
  Array out = copy(x);
  kernels::scatter(flatten_leading(out, mask.ndim()), pos, 0, src, inc, /*sorted_unique=*/true);
  return out;
}

}  // namespace uma::ops
