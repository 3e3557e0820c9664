// Shape ops: reshape, transpose, broadcast_to, concatenate, stack, expand_dims, squeeze, split.
// All of them are views or copies, so they work on every dtype.
#include <algorithm>

#include "ops/common.h"

namespace uma::ops {

Array reshape(const Array& a, const Shape& shape0) {
  Shape shape = shape0;
  int64_t unknown = -1, known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {  // NumPy treats any negative entry as the unknown dimension
      UMA_CHECK(unknown < 0, Value, "reshape: can only specify one unknown dimension");
      unknown = static_cast<int64_t>(i);
    } else {
      UMA_CHECK(shape[i] == 0 || known <= INT64_MAX / shape[i], Value, "reshape: shape ", shape_str(shape0), " is too large");
      known = known * shape[i];
    }
  }
  if (unknown >= 0) {
    UMA_CHECK(known != 0 && a.size() % known == 0, Value, "cannot reshape array of size ", a.size(),
              " into shape ", shape_str(shape0));
    shape[unknown] = a.size() / known;
  }
  UMA_CHECK(checked_size(shape) == a.size(), Value, "cannot reshape array of size ", a.size(), " into shape ",
            shape_str(shape0));
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
  const int64_t nd = a.ndim();
  UMA_CHECK(static_cast<int64_t>(axes.size()) == nd, Value, "transpose: axes don't match array (got ",
            axes.size(), " axes for an array of dimension ", nd, ")");
  std::vector<bool> seen(nd, false);
  Shape s(nd);
  Strides st(nd);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = normalize_axis(axes[i], nd, "transpose");
    UMA_CHECK(!seen[d], Value, "transpose: repeated axis in transpose");
    seen[d] = true;
    s[i] = a.shape()[d];
    st[i] = a.strides()[d];
  }
  return a.view(a.data(), s, st);
}

Array broadcast_to(const Array& a, const Shape& shape) {
  for (int64_t d : shape) UMA_CHECK(d >= 0, Value, "broadcast_to: negative dimensions are not allowed");
  checked_size(shape);  // ValueError when the view's size would overflow
  UMA_CHECK(static_cast<int64_t>(shape.size()) >= a.ndim() && broadcast_shapes(a.shape(), shape, "broadcast_to") == shape,
            Value, "broadcast_to: cannot broadcast an array of shape ", shape_str(a.shape()), " to shape ",
            shape_str(shape));
  return a.broadcast_view(shape).as_readonly();
}

Array concatenate(const std::vector<Array>& arrays, int64_t axis) {
  UMA_CHECK(!arrays.empty(), Value, "concatenate: need at least one array to concatenate");
  const int64_t nd = arrays[0].ndim();
  UMA_CHECK(nd > 0, Value, "concatenate: zero-dimensional arrays cannot be concatenated");
  axis = normalize_axis(axis, nd, "concatenate");
  DType t = arrays[0].dtype();
  Shape shape = arrays[0].shape();
  shape[axis] = 0;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const Array& x = arrays[i];
    UMA_CHECK(x.ndim() == nd, Value, "concatenate: all the input arrays must have the same number of dimensions, "
              "but the array at index 0 has ", nd, " dimension(s) and the array at index ", i, " has ", x.ndim(),
              " dimension(s)");
    for (int64_t d = 0; d < nd; ++d)
      UMA_CHECK(d == axis || x.shape()[d] == arrays[0].shape()[d], Value,
                "concatenate: all the input array dimensions except for the concatenation axis must match exactly, "
                "but along dimension ", d, ", the array at index 0 has size ", arrays[0].shape()[d],
                " and the array at index ", i, " has size ", x.shape()[d]);
    shape[axis] += x.shape()[axis];
    t = promote_types(t, x.dtype());
  }
  Array out = Array::empty(shape, t);
  int64_t off = 0;
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  for (const Array& x : arrays) {
    Shape s = shape;
    s[axis] = x.shape()[axis];
    Array dst = out.view(static_cast<char*>(out.data()) + off * out.strides()[axis] * isz, s, out.strides());
    assign(dst, x);
    off += x.shape()[axis];
  }
  return out;
}

Array expand_dims(const Array& a, int64_t axis) {
  const int64_t nd = a.ndim() + 1;
  axis = normalize_axis(axis, nd, "expand_dims");
  Shape s = a.shape();
  Strides st = a.strides();
  s.insert(s.begin() + axis, 1);
  st.insert(st.begin() + axis, 0);
  return a.view(a.data(), s, st);
}

Array stack(const std::vector<Array>& arrays, int64_t axis) {
  UMA_CHECK(!arrays.empty(), Value, "stack: need at least one array to stack");
  for (std::size_t i = 1; i < arrays.size(); ++i)
    UMA_CHECK(arrays[i].shape() == arrays[0].shape(), Value, "stack: all input arrays must have the same shape");
  std::vector<Array> ex;
  ex.reserve(arrays.size());
  for (const Array& x : arrays) ex.push_back(expand_dims(x, axis));
  return concatenate(ex, axis);
}

Array squeeze(const Array& a, const std::vector<int64_t>& axes) {
  std::vector<bool> drop(a.ndim(), false);
  if (axes.empty()) {
    for (int64_t d = 0; d < a.ndim(); ++d) drop[d] = a.shape()[d] == 1;
  } else {
    for (int64_t ax : axes) {
      int64_t d = normalize_axis(ax, a.ndim(), "squeeze");
      UMA_CHECK(a.shape()[d] == 1, Value, "squeeze: cannot select an axis to squeeze out which has size not equal to one");
      drop[d] = true;
    }
  }
  Shape s;
  Strides st;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!drop[d]) {
      s.push_back(a.shape()[d]);
      st.push_back(a.strides()[d]);
    }
  return a.view(a.data(), s, st);
}

Array getitem(const Array& a, const std::vector<IndexItem>& index) {
  int64_t consumed = 0, ellipses = 0;
  for (const auto& it : index) {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice) ++consumed;
    if (it.kind == IndexItem::Ellipsis) ++ellipses;
  }
  UMA_CHECK(ellipses <= 1, Index, "an index can only have a single ellipsis ('...')");
  UMA_CHECK(consumed <= a.ndim(), Index, "too many indices for array: array is ", a.ndim(),
            "-dimensional, but ", consumed, " were indexed");
  Shape s;
  Strides st;
  char* p = static_cast<char*>(a.data());
  const int64_t isz = static_cast<int64_t>(a.itemsize());
  // An empty array's strides may be anything (they address nothing): no offset or stride
  // arithmetic on them, which could overflow (a size-0 (0, 2**60, 4) reshape, a producer's
  // huge strides). Its views keep its data pointer and strides.
  const bool empty = a.size() == 0;
  int64_t d = 0;
  auto take_dim = [&](const IndexItem& it) {
    const int64_t n = a.shape()[d], stride = a.strides()[d];
    if (it.kind == IndexItem::Int) {
      int64_t i = it.i < 0 ? it.i + n : it.i;
      UMA_CHECK(i >= 0 && i < n, Index, "index ", it.i, " is out of bounds for axis ", d, " with size ", n);
      if (!empty) p += i * stride * isz;
    } else {
      int64_t step = it.step.value_or(1);
      UMA_CHECK(step != 0, Value, "slice step cannot be zero");
      if (step < -INT64_MAX) step = -INT64_MAX;  // as CPython's PySlice_Unpack: -step must not overflow
      int64_t start, stop;
      // CPython's PySlice_AdjustIndices.
      if (step > 0) {
        start = it.start.value_or(0);
        stop = it.stop.value_or(n);
        if (start < 0) start = std::max<int64_t>(start + n, 0);
        else start = std::min(start, n);
        if (stop < 0) stop = std::max<int64_t>(stop + n, 0);
        else stop = std::min(stop, n);
      } else {
        start = it.start.value_or(n - 1);
        stop = it.stop.has_value() ? *it.stop : -1;
        if (it.start) {
          if (start < 0) start = std::max<int64_t>(start + n, -1);
          else start = std::min(start, n - 1);
        }
        if (it.stop) {
          if (stop < 0) stop = std::max<int64_t>(stop + n, -1);
          else stop = std::min(stop, n - 1);
        }
      }
      int64_t len = 0;
      if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
      if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
      if (len > 0 && !empty) p += start * stride * isz;
      s.push_back(len);
      // len > 1 bounds |step| by n, so the product fits (for a non-empty array); a shorter
      // axis keeps its stride (any stride is valid for it; stride * step may overflow: a[::2**62]).
      st.push_back(len > 1 && !empty ? stride * step : stride);
    }
    ++d;
  };
  for (const auto& it : index) {
    switch (it.kind) {
      case IndexItem::NewAxis:
        s.push_back(1);
        st.push_back(0);
        break;
      case IndexItem::Ellipsis: {
        int64_t fill = a.ndim() - consumed;
        for (int64_t k = 0; k < fill; ++k, ++d) {
          s.push_back(a.shape()[d]);
          st.push_back(a.strides()[d]);
        }
        break;
      }
      default:
        take_dim(it);
    }
  }
  for (; d < a.ndim(); ++d) {
    s.push_back(a.shape()[d]);
    st.push_back(a.strides()[d]);
  }
  return a.view(p, s, st);
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
  UMA_CHECK(sections > 0, Value, "split: number sections must be larger than 0, got ", sections);
  axis = normalize_axis(axis, a.ndim(), "split");
  const int64_t n = a.shape()[axis];
  UMA_CHECK(n % sections == 0, Value, "split: array split does not result in an equal division (axis ", axis,
            " has length ", n, ", ", sections, " sections)");
  std::vector<int64_t> idx;
  for (int64_t k = 1; k < sections; ++k) idx.push_back(k * (n / sections));
  return split_at(a, idx, axis);
}

}  // namespace uma::ops
