// Shape ops: reshape, transpose, broadcast_to, concatenate, stack, expand_dims, squeeze, split.
// All of them are views or copies, so they work on every dtype.
#include <algorithm>

#include "ops/common.h"

namespace uma::ops {

Array reshape(const Array& a, const Shape& newshape) {
  const Shape shape = reshape_shape(a.shape(), newshape);
  if (a.is_c_contiguous()) return a.view(a.data(), shape, contiguous_strides(shape));
  Array c = copy(a);
  return c.view(c.data(), shape, contiguous_strides(shape));
}

Array transpose(const Array& a) {
  const int64_t nd = a.ndim();
  std::vector<int64_t> axes(nd);
  for (int64_t i = 0; i < nd; ++i) axes[i] = nd - 1 - i;
  return transpose(a, axes);
}

Array transpose(const Array& a, const std::vector<int64_t>& axes) {
  const std::vector<int64_t> perm = transpose_axes(a.ndim(), axes);
  Strides st;
  for (int64_t d : perm) st.push_back(a.strides()[d]);
  return a.view(a.data(), transpose_shape(a.shape(), perm), st);
}

Array broadcast_to(const Array& a, const Shape& shape) {
  for (int64_t d : shape) UMA_CHECK(d >= 0, Value, "broadcast_to: negative dimensions are not allowed");
  checked_size(shape);  // ValueError when the view's size would overflow
  return a.broadcast_view(broadcast_to_shape(a.shape(), shape, "broadcast_to")).as_readonly();
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis) {
  std::vector<const Shape*> shapes;
  for (const Array& x : arrays) shapes.push_back(&x.shape());
  const Shape shape = concatenate_shape(shapes, axis);
  axis = normalize_axis(axis, static_cast<int64_t>(shape.size()), "concatenate");
  DType t = arrays[0].dtype();
  for (const Array& x : arrays) t = promote_types(t, x.dtype());
  std::vector<Array> on(arrays);  // one device for all (RuntimeError otherwise); the result is there
  std::vector<Array*> refs;
  for (Array& x : on) refs.push_back(&x);
  Array out = Array::empty(shape, t, detail::common_device("concatenate", refs));
  int64_t off = 0;
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  for (const Array& x : on) {
    Shape s = shape;
    s[axis] = x.shape()[axis];
    Array dst = out.view(static_cast<char*>(out.data()) + off * out.strides()[axis] * isz, s, out.strides());
    assign(dst, x);
    off += x.shape()[axis];
  }
  return out;
}

Array expand_dims(const Array& a, int64_t axis) {
  const Shape s = expand_dims_shape(a.shape(), axis);
  Strides st = a.strides();
  st.insert(st.begin() + normalize_axis(axis, a.ndim() + 1, "expand_dims"), 0);
  return a.view(a.data(), s, st);
}

Array stack(const std::vector<Array>& arrays, int64_t axis) {
  std::vector<const Shape*> shapes;
  for (const Array& x : arrays) shapes.push_back(&x.shape());
  const Shape shape = stack_shape(shapes, axis);
  axis = normalize_axis(axis, static_cast<int64_t>(shape.size()), "stack");
  std::vector<Array> ex;
  ex.reserve(arrays.size());
  for (const Array& x : arrays) ex.push_back(expand_dims(x, axis));
  Array out = concatenate(ex, axis);
  UMA_ASSERT(out.shape() == shape);
  return out;
}

Array squeeze(const Array& a, const std::optional<std::vector<int64_t>>& axes) {
  const std::vector<bool> drop = squeezed_axes(a.shape(), axes);
  Strides st;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!drop[d]) st.push_back(a.strides()[d]);
  return a.view(a.data(), squeeze_shape(a.shape(), axes), st);
}

Array getitem(const Array& a, const std::vector<IndexItem>& index) { return detail::getitem_named(a, index, "getitem"); }

Array detail::getitem_named(const Array& a, const std::vector<IndexItem>& index, const char* op) {
  const Shape shape = index_shape(a.shape(), index, op);  // the rule's checks and lengths
  int64_t consumed = 0;
  for (const auto& it : index) consumed += it.kind == IndexItem::Int || it.kind == IndexItem::Slice;
  Strides st;
  char* p = static_cast<char*>(a.data());
  const int64_t isz = static_cast<int64_t>(a.itemsize());
  // An empty array's strides may be anything (they address nothing): no offset or stride
  // arithmetic on them, which could overflow (a size-0 (0, 2**60, 4) reshape, a producer's
  // huge strides). Its views keep its data pointer and strides.
  const bool empty = a.size() == 0;
  int64_t d = 0;
  for (const auto& it : index) {
    switch (it.kind) {
      case IndexItem::NewAxis: st.push_back(0); break;
      case IndexItem::Ellipsis:
        for (int64_t k = consumed; k < a.ndim(); ++k, ++d) st.push_back(a.strides()[d]);
        break;
      case IndexItem::Int:
        if (!empty) p += (it.i < 0 ? it.i + a.shape()[d] : it.i) * a.strides()[d] * isz;
        ++d;
        break;
      case IndexItem::Slice: {
        const SliceRange r = slice_range(it, a.shape()[d]);
        const int64_t stride = a.strides()[d++];
        if (r.length > 0 && !empty) p += r.start * stride * isz;
        // length > 1 bounds |step| by n, so the product fits (for a non-empty array); a shorter
        // axis keeps its stride (any stride is valid for it; stride * step may overflow: a[::2**62]).
        st.push_back(r.length > 1 && !empty ? stride * r.step : stride);
        break;
      }
    }
  }
  for (; d < a.ndim(); ++d) st.push_back(a.strides()[d]);
  return a.view(p, shape, st);
}

// ---- split ----------------------------------------------------------------------------------

std::vector<Array> split_at(const Array& a, const std::vector<int64_t>& indices, int64_t axis) {
  axis = normalize_axis(axis, a.ndim(), "split");
  std::vector<Array> parts;
  parts.reserve(indices.size() + 1);
  std::vector<IndexItem> index(static_cast<std::size_t>(axis) + 1);
  for (auto& it : index) it.kind = IndexItem::Slice;
  std::optional<int64_t> start;  // None: the start of the axis
  for (std::size_t k = 0; k <= indices.size(); ++k) {
    IndexItem& it = index.back();
    it.start = start;
    it.stop = k < indices.size() ? std::optional<int64_t>(indices[k]) : std::nullopt;
    parts.push_back(getitem(a, index));
    start = it.stop;
  }
  return parts;
}

std::vector<Array> split_sections(const Array& a, int64_t sections, int64_t axis) {
  return split_at(a, split_points(a.shape(), sections, axis), axis);
}

}  // namespace uma::ops
