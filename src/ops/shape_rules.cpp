// The shape rules of the ops, on static shapes (uma/ops.h, "shape inference"): broadcasting,
// reductions, cumulative ops, matmul, the shape ops, indexing, the diagonals and the nn helpers.
// The eager ops call them on their arrays' shapes and the symbolic graph on its types' shapes
// (uma._core._result_shape), so the two cannot disagree.
#include <algorithm>
#include <array>

#include "ops/common.h"

namespace uma::ops {

namespace {
bool known(int64_t d) { return d != kUnknownLength; }

std::string shapes_str(std::span<const Shape* const> shapes) {
  std::string all;
  for (const Shape* t : shapes) {
    if (!all.empty()) all += ' ';
    all += static_shape_str(*t);
  }
  return all;
}

// Whether static shapes `a` and `b` may be the same shape: equal ranks and no two known lengths
// that differ; `merged` receives the known length of each axis where either knows it.
bool may_equal(const Shape& a, const Shape& b, Shape* merged) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (known(a[i]) && known(b[i]) && a[i] != b[i]) return false;
    if (merged) (*merged)[i] = known(a[i]) ? a[i] : b[i];
  }
  return true;
}
}  // namespace

int64_t static_size(const Shape& shape, const char* op) {
  // As NumPy (checked_size): the product of the known lengths other than 0 must fit, a 0 or not.
  int64_t size = 1;
  bool zero = false, unknown = false;
  for (int64_t d : shape) {
    if (!known(d)) unknown = true;
    else if (d == 0) zero = true;
    else UMA_CHECK(size <= INT64_MAX / d, Value, op, ": shape ", static_shape_str(shape), " is too large");
    if (known(d) && d != 0) size *= d;
  }
  return zero ? 0 : unknown ? kUnknownLength : size;
}

std::string static_shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (known(shape[i])) s += std::to_string(shape[i]);
    else s += '?';
    if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
  }
  return s + ")";
}

Shape broadcast_shapes(std::span<const Shape* const> shapes, const char* op) {
  std::size_t n = 0;
  for (const Shape* s : shapes) n = std::max(n, s->size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    int64_t length = 1;  // the known length other than 1 on this axis, if any
    bool unknown = false;
    for (const Shape* s : shapes) {
      if (i < n - s->size()) continue;  // a missing leading axis: length 1
      const int64_t d = (*s)[i - (n - s->size())];
      if (!known(d)) {
        unknown = true;
      } else if (d != 1) {
        UMA_CHECK(length == 1 || length == d, Value, op, ": operands could not be broadcast together with shapes ",
                  shapes_str(shapes));
        length = d;
      }
    }
    // PyTensor: an unknown length broadcasts against nothing, so it stays unknown unless a
    // known length other than 1 decides the axis
    out[i] = length != 1 ? length : unknown ? kUnknownLength : 1;
  }
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::array<const Shape*, 2> shapes{&a, &b};
  return broadcast_shapes(shapes, op);
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  UMA_CHECK(axis >= -ndim && axis < ndim, Axis, op, ": axis ", axis, " is out of bounds for array of dimension ",
            ndim);
  return axis < 0 ? axis + ndim : axis;
}

std::vector<bool> reduced_axes(int64_t ndim, const std::optional<std::vector<int64_t>>& axes, const char* op) {
  std::vector<bool> reduced(static_cast<std::size_t>(ndim), !axes.has_value());
  if (axes) {
    for (int64_t ax : *axes) {
      const int64_t d = normalize_axis(ax, ndim, op);
      UMA_CHECK(!reduced[d], Value, op, ": duplicate value in 'axis'");
      reduced[d] = true;
    }
  }
  return reduced;
}

Shape reduce_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

Shape reduce_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   const char* op) {
  return reduce_shape(shape, reduced_axes(static_cast<int64_t>(shape.size()), axes, op), keepdims);
}

Shape cumulate_shape(const Shape& shape, std::optional<int64_t> axis, const char* op) {
  if (axis) {
    normalize_axis(*axis, static_cast<int64_t>(shape.size()), op);
    return shape;
  }
  const bool all_known = std::all_of(shape.begin(), shape.end(), known);
  return {all_known ? checked_size(shape) : kUnknownLength};
}

MatmulShapes matmul_shapes(const Shape& a, const Shape& b) {
  UMA_CHECK(!a.empty() && !b.empty(), Value,
            "matmul: input operand does not have enough dimensions (0-d operands are not allowed)");
  // a 1-d a is a row (1, k), a 1-d b a column (k, 1)
  const std::size_t na = a.size(), nb = b.size();
  const int64_t m = na == 1 ? 1 : a[na - 2], k1 = a[na - 1];
  const int64_t k2 = nb == 1 ? b[0] : b[nb - 2], n = nb == 1 ? 1 : b[nb - 1];
  UMA_CHECK(!known(k1) || !known(k2) || k1 == k2, Value, "matmul: mismatch in the core dimension: shapes ",
            static_shape_str(a), " and ", static_shape_str(b), " (", k1, " != ", k2, ")");
  const Shape batch_a(a.begin(), a.end() - std::min<std::size_t>(na, 2));
  const Shape batch_b(b.begin(), b.end() - std::min<std::size_t>(nb, 2));
  // The batch axes broadcast (NumPy's message quotes the operands' whole shapes).
  for (std::size_t i = 1; i <= std::min(batch_a.size(), batch_b.size()); ++i) {
    const int64_t x = batch_a[batch_a.size() - i], y = batch_b[batch_b.size() - i];
    UMA_CHECK(!known(x) || !known(y) || x == 1 || y == 1 || x == y, Value,
              "matmul: operands could not be broadcast together with shapes ", static_shape_str(a), " ",
              static_shape_str(b), " (their batch axes ", static_shape_str(batch_a), " and ", static_shape_str(batch_b),
              ")");
  }
  MatmulShapes s{broadcast_shapes(batch_a, batch_b, "matmul"), m, known(k1) ? k1 : k2, n, {}};
  s.result = s.batch;
  if (na > 1) s.result.push_back(m);
  if (nb > 1) s.result.push_back(n);
  return s;
}

Shape reduce_shape(ReduceOp op, const Shape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  const char* name = op_name(op);
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  UMA_CHECK(!arg || !axes || axes->size() == 1, Type, name, ": axis must be an integer or None");
  const std::vector<bool> reduced = reduced_axes(static_cast<int64_t>(shape.size()), axes, name);
  bool empty = false;  // a reduced axis of known length 0
  for (std::size_t d = 0; d < shape.size(); ++d) empty = empty || (reduced[d] && shape[d] == 0);
  if (empty) {  // NumPy refuses these even when the result is empty (max over (0, 0), axis=1)
    UMA_CHECK(!(op == ReduceOp::Max || op == ReduceOp::Min), Value, name, ": zero-size array to reduction operation ",
              op == ReduceOp::Max ? "maximum" : "minimum", " which has no identity");
    UMA_CHECK(!arg, Value, name, ": attempt to get ", name, " of an empty sequence");
  }
  return reduce_shape(shape, reduced, keepdims);
}

// ---- shape ops ----------------------------------------------------------------------------

Shape reshape_shape(const Shape& shape, const Shape& newshape) {
  int64_t infer = -1;  // the position of the negative entry, if any
  for (std::size_t i = 0; i < newshape.size(); ++i)
    if (newshape[i] < 0) {  // NumPy treats any negative entry as the unknown dimension
      UMA_CHECK(infer < 0, Value, "reshape: can only specify one unknown dimension");
      infer = static_cast<int64_t>(i);
    }
  Shape rest = newshape;
  if (infer >= 0) rest.erase(rest.begin() + infer);
  const int64_t other = static_size(rest, "reshape");  // rest is concrete: its size is known
  const int64_t size = static_size(shape, "reshape");
  auto fail = [&] {
    UMA_FAIL(Value, "reshape: cannot reshape array of size ", known(size) ? std::to_string(size) : "?",
             " into shape ", shape_str(newshape));
  };
  Shape out = newshape;
  if (infer >= 0) {
    if (other == 0) fail();  // NumPy: the length beside a zero length is ambiguous
    if (known(size) && size % other != 0) fail();
    out[infer] = known(size) ? size / other : kUnknownLength;
  } else if (known(size) && size != other) {
    fail();
  }
  return out;
}

Shape reshape_like_shape(const Shape& shape, const Shape& target) {
  const int64_t size = static_size(shape, "reshape_like"), to = static_size(target, "reshape_like");
  UMA_CHECK(!known(size) || !known(to) || size == to, Value, "reshape_like: cannot reshape array of shape ",
            static_shape_str(shape), " (size ", size, ") into shape ", static_shape_str(target), " (size ", to, ")");
  return target;
}

std::vector<int64_t> transpose_axes(int64_t ndim, const std::vector<int64_t>& axes) {
  UMA_CHECK(static_cast<int64_t>(axes.size()) == ndim, Value, "transpose: axes don't match array (got ", axes.size(),
            " axes for an array of dimension ", ndim, ")");
  std::vector<int64_t> perm(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    perm[i] = normalize_axis(axes[i], ndim, "transpose");
    UMA_CHECK(!seen[perm[i]], Value, "transpose: repeated axis in transpose");
    seen[perm[i]] = true;
  }
  return perm;
}

Shape transpose_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes) {
  if (!axes) return Shape(shape.rbegin(), shape.rend());
  Shape out;
  for (int64_t d : transpose_axes(static_cast<int64_t>(shape.size()), *axes)) out.push_back(shape[d]);
  return out;
}

Shape expand_dims_shape(const Shape& shape, int64_t axis) {
  Shape out = shape;
  out.insert(out.begin() + normalize_axis(axis, static_cast<int64_t>(shape.size()) + 1, "expand_dims"), 1);
  return out;
}

std::vector<bool> squeezed_axes(const Shape& shape, const std::optional<std::vector<int64_t>>& axes) {
  if (!axes) {
    std::vector<bool> drop(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
    return drop;
  }
  std::vector<bool> drop = reduced_axes(static_cast<int64_t>(shape.size()), axes, "squeeze");
  for (std::size_t d = 0; d < shape.size(); ++d)
    UMA_CHECK(!drop[d] || !known(shape[d]) || shape[d] == 1, Value,
              "squeeze: cannot select an axis to squeeze out which has size not equal to one (axis ", d,
              " of shape ", static_shape_str(shape), ")");
  return drop;
}

Shape squeeze_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes) {
  const std::vector<bool> drop = squeezed_axes(shape, axes);
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!drop[d]) out.push_back(shape[d]);
  return out;
}

Shape broadcast_to_shape(const Shape& shape, const Shape& target, const char* op) {
  auto fail = [&] {
    UMA_FAIL(Value, op, ": cannot broadcast an array of shape ", static_shape_str(shape), " to shape ",
             static_shape_str(target));
  };
  if (shape.size() > target.size()) fail();
  Shape out = target;
  const std::size_t lead = target.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i], t = target[lead + i];
    if (!known(d) || d == 1) continue;
    if (known(t) && t != d) fail();
    out[lead + i] = d;
  }
  return out;
}

Shape concatenate_shape(std::span<const Shape* const> shapes, int64_t axis) {
  UMA_CHECK(!shapes.empty(), Value, "concatenate: need at least one array to concatenate");
  const Shape& first = *shapes[0];
  const int64_t nd = static_cast<int64_t>(first.size());
  UMA_CHECK(nd > 0, Value, "concatenate: zero-dimensional arrays cannot be concatenated");
  axis = normalize_axis(axis, nd, "concatenate");
  Shape out(first.size(), kUnknownLength);
  std::vector<std::size_t> source(first.size(), 0);  // the array whose length out[d] is
  out[axis] = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = *shapes[i];
    UMA_CHECK(static_cast<int64_t>(s.size()) == nd, Value, "concatenate: all the input arrays must have the same "
              "number of dimensions, but the array at index 0 has ", nd, " dimension(s) and the array at index ", i,
              " has ", s.size(), " dimension(s)");
    for (int64_t d = 0; d < nd; ++d) {
      if (d == axis) {
        if (!known(out[d]) || !known(s[d])) out[d] = kUnknownLength;
        else UMA_CHECK(!__builtin_add_overflow(out[d], s[d], &out[d]), Value, "concatenate: the result is too large");
      } else if (known(s[d])) {
        UMA_CHECK(!known(out[d]) || out[d] == s[d], Value, "concatenate: all the input array dimensions except for "
                  "the concatenation axis must match exactly, but along dimension ", d, ", the array at index ",
                  source[d], " has size ", out[d], " and the array at index ", i, " has size ", s[d]);
        out[d] = s[d];
        source[d] = i;
      }
    }
  }
  return out;
}

Shape stack_shape(std::span<const Shape* const> shapes, int64_t axis) {
  UMA_CHECK(!shapes.empty(), Value, "stack: need at least one array to stack");
  Shape common = *shapes[0];
  for (const Shape* s : shapes)
    UMA_CHECK(may_equal(common, *s, &common), Value, "stack: all input arrays must have the same shape, got ",
              shapes_str(shapes));
  common.insert(common.begin() + normalize_axis(axis, static_cast<int64_t>(common.size()) + 1, "stack"),
                static_cast<int64_t>(shapes.size()));
  static_size(common, "stack");  // ValueError when the known lengths' product overflows
  return common;
}

Shape segment_shape(const Shape& g, std::span<const Shape* const> parts, int64_t axis, int64_t part) {
  UMA_CHECK(part >= 0 && part < static_cast<int64_t>(parts.size()), Value, "segment: part ", part,
            " of ", parts.size(), " concatenated arrays");
  const Shape whole = concatenate_shape(parts, axis);
  UMA_CHECK(may_equal(g, whole, nullptr), Value, "segment: gradient of shape ", static_shape_str(g),
            " does not match the concatenation's shape ", static_shape_str(whole));
  Shape out = g;
  const int64_t ax = normalize_axis(axis, static_cast<int64_t>(g.size()), "segment");
  out[ax] = (*parts[part])[ax];
  return out;
}

std::vector<int64_t> split_points(const Shape& shape, int64_t sections, int64_t axis) {
  UMA_CHECK(sections > 0, Value, "split: number sections must be larger than 0, got ", sections);
  axis = normalize_axis(axis, static_cast<int64_t>(shape.size()), "split");
  const int64_t n = shape[axis];
  UMA_CHECK(known(n), Value, "split: the length of axis ", axis, " of shape ", static_shape_str(shape),
            " is unknown, so it cannot be split into ", sections, " sections (give split points instead)");
  UMA_CHECK(n % sections == 0, Value, "split: array split does not result in an equal division (axis ", axis,
            " has length ", n, ", ", sections, " sections)");
  std::vector<int64_t> points;
  for (int64_t k = 1; k < sections; ++k) points.push_back(k * (n / sections));
  return points;
}

// ---- indexing -----------------------------------------------------------------------------

SliceRange slice_range(const IndexItem& it, int64_t n) {
  int64_t step = it.step.value_or(1);
  UMA_CHECK(step != 0, Value, "slice step cannot be zero");
  if (step < -INT64_MAX) step = -INT64_MAX;  // as CPython's PySlice_Unpack: -step must not overflow
  int64_t start, stop;
  // CPython's PySlice_AdjustIndices.
  if (step > 0) {
    start = it.start.value_or(0);
    stop = it.stop.value_or(n);
    start = start < 0 ? std::max<int64_t>(start + n, 0) : std::min(start, n);
    stop = stop < 0 ? std::max<int64_t>(stop + n, 0) : std::min(stop, n);
  } else {
    start = it.start.value_or(n - 1);
    stop = it.stop.value_or(-1);
    if (it.start) start = start < 0 ? std::max<int64_t>(start + n, -1) : std::min(start, n - 1);
    if (it.stop) stop = stop < 0 ? std::max<int64_t>(stop + n, -1) : std::min(stop, n - 1);
  }
  int64_t len = 0;
  if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
  if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
  return {start, step, len};
}

Shape index_shape(const Shape& shape, const std::vector<IndexItem>& index, const char* op) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  int64_t consumed = 0, ellipses = 0;
  for (const auto& it : index) {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice) ++consumed;
    if (it.kind == IndexItem::Ellipsis) ++ellipses;
  }
  UMA_CHECK(ellipses <= 1, Index, op, ": an index can only have a single ellipsis ('...')");
  UMA_CHECK(consumed <= ndim, Index, op, ": too many indices for array: array is ", ndim, "-dimensional, but ",
            consumed, " were indexed");
  Shape out;
  int64_t d = 0;
  for (const auto& it : index) {
    switch (it.kind) {
      case IndexItem::NewAxis: out.push_back(1); break;
      case IndexItem::Ellipsis:
        for (int64_t k = consumed; k < ndim; ++k) out.push_back(shape[d++]);
        break;
      case IndexItem::Int: {
        const int64_t n = shape[d];
        UMA_CHECK(!known(n) || (it.i >= -n && it.i < n), Index, op, ": index ", it.i, " is out of bounds for axis ",
                  d, " with size ", n);
        ++d;
        break;
      }
      case IndexItem::Slice: {
        const int64_t n = shape[d++];
        if (known(n)) {
          out.push_back(slice_range(it, n).length);
        } else {
          const int64_t step = it.step.value_or(1);
          UMA_CHECK(step != 0, Value, "slice step cannot be zero");
          // bounds of one sign in the wrong order select nothing, whatever the length
          const bool empty = it.start && it.stop && (*it.start < 0) == (*it.stop < 0) &&
                             (step > 0 ? *it.start >= *it.stop : *it.start <= *it.stop);
          out.push_back(empty ? 0 : kUnknownLength);
        }
        break;
      }
    }
  }
  for (; d < ndim; ++d) out.push_back(shape[d]);
  return out;
}

AdvancedIndexLayout advanced_index_layout(const Shape& shape, const std::vector<IndexSpec>& index, const char* op) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  int64_t consumed = 0, ellipses = 0;
  bool arrays = false;
  for (const auto& s : index) {
    if (s.kind == IndexSpec::Basic) {
      consumed += s.item.kind == IndexItem::Int || s.item.kind == IndexItem::Slice;
      ellipses += s.item.kind == IndexItem::Ellipsis;
    } else {
      arrays = true;
      consumed += s.kind == IndexSpec::IntArray ? 1 : static_cast<int64_t>(s.shape.size());
    }
  }
  UMA_CHECK(ellipses <= 1, Index, op, ": an index can only have a single ellipsis ('...')");
  UMA_CHECK(consumed <= ndim, Index, op, ": too many indices for array: array is ", ndim, "-dimensional, but ",
            consumed, " were indexed");
  AdvancedIndexLayout L;
  // An integer is an advanced index when the index holds an array (NumPy: a 0-d integer array).
  auto advanced = [&](const IndexSpec& s) { return s.kind != IndexSpec::Basic || (arrays && s.item.kind == IndexItem::Int); };
  int64_t first = -1, last = -1, n_adv = 0;
  for (std::size_t k = 0; k < index.size(); ++k)
    if (advanced(index[k])) {
      if (first < 0) first = static_cast<int64_t>(k);
      last = static_cast<int64_t>(k);
      ++n_adv;
    }
  IndexItem full;
  full.kind = IndexItem::Slice;
  std::vector<Shape> shapes;  // each advanced item's index shape, in order
  int64_t d = 0, v = 0;       // the next axis of the array, of the basic view
  for (std::size_t k = 0; k < index.size(); ++k) {
    const IndexSpec& s = index[k];
    const auto item = static_cast<int64_t>(k);
    if (s.kind == IndexSpec::Basic && !advanced(s)) {
      switch (s.item.kind) {
        case IndexItem::NewAxis: L.basic.push_back(s.item); ++v; break;
        case IndexItem::Ellipsis:
          for (int64_t j = consumed; j < ndim; ++j, ++d, ++v) L.basic.push_back(full);
          break;
        case IndexItem::Int: L.basic.push_back(s.item); ++d; break;
        case IndexItem::Slice: L.basic.push_back(s.item); ++d; ++v; break;
      }
    } else if (s.kind == IndexSpec::Basic) {  // an integer among index arrays
      const int64_t n = shape[d];
      UMA_CHECK(!known(n) || (s.item.i >= -n && s.item.i < n), Index, op, ": index ", s.item.i,
                " is out of bounds for axis ", d, " with size ", n);
      L.basic.push_back(full);
      L.entries.push_back({item, 0, v++, d++});
      shapes.push_back({});
    } else if (s.kind == IndexSpec::IntArray) {
      L.basic.push_back(full);
      L.entries.push_back({item, 0, v++, d++});
      shapes.push_back(s.shape);
    } else if (s.shape.empty()) {  // a 0-d bool: a new length-1 axis
      IndexItem none;
      none.kind = IndexItem::NewAxis;
      L.basic.push_back(none);
      L.entries.push_back({item, 0, v++, -1});
      shapes.push_back({s.count});
    } else {  // a k-d bool array: its k coordinate arrays
      for (std::size_t j = 0; j < s.shape.size(); ++j, ++d) {
        // (NumPy: a bool axis of length 0 matches any length; it selects nothing)
        UMA_CHECK(!known(s.shape[j]) || !known(shape[d]) || s.shape[j] == shape[d] || s.shape[j] == 0, Index, op,
                  ": boolean index did not match indexed array along axis ", d, "; size of axis is ", shape[d],
                  " but size of corresponding boolean axis is ", s.shape[j]);
        L.basic.push_back(full);
        L.entries.push_back({item, static_cast<int64_t>(j), v++, d});
      }
      shapes.push_back({s.count});
    }
  }
  const Shape view = index_shape(shape, L.basic, op);
  if (!arrays) {
    L.shape = view;
    return L;
  }
  // NumPy's IndexError for index arrays that do not broadcast (known lengths other than 1 differ).
  std::vector<const Shape*> ptrs;
  for (const Shape& t : shapes) ptrs.push_back(&t);
  std::size_t rank = 0;
  for (const Shape& t : shapes) rank = std::max(rank, t.size());
  for (std::size_t j = 0; j < rank; ++j) {
    int64_t len = 1;
    for (const Shape& t : shapes) {
      if (j >= t.size()) continue;
      const int64_t x = t[t.size() - 1 - j];
      if (!known(x) || x == 1) continue;
      UMA_CHECK(len == 1 || len == x, Index, op, ": shape mismatch: indexing arrays could not be broadcast together "
                "with shapes ", shapes_str(ptrs));
      len = x;
    }
  }
  L.broadcast = broadcast_shapes(ptrs, op);
  const bool adjacent = last - first + 1 == n_adv;
  L.position = adjacent ? L.entries.front().view_axis : 0;
  std::vector<bool> picked(view.size(), false);
  for (const auto& e : L.entries) picked[static_cast<std::size_t>(e.view_axis)] = true;
  for (std::size_t j = 0; j < view.size(); ++j)
    if (!picked[j]) L.shape.push_back(view[j]);
  // (adjacent: no picked axis precedes the first, so its view axis counts the other axes before it)
  L.shape.insert(L.shape.begin() + L.position, L.broadcast.begin(), L.broadcast.end());
  // Index arrays broadcast together (n, 1) x (1, m) can name more elements than an int64 counts:
  // ValueError "array is too big", as for any shape, when the lengths are known.
  if (std::all_of(L.shape.begin(), L.shape.end(), [](int64_t d) { return known(d); })) checked_size(L.shape);
  return L;
}

Shape take_shape(const Shape& shape, const Shape& indices, std::optional<int64_t> axis, const char* op) {
  if (!axis) return indices;
  const int64_t ax = normalize_axis(*axis, static_cast<int64_t>(shape.size()), op);
  Shape out(shape.begin(), shape.begin() + ax);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), shape.begin() + ax + 1, shape.end());
  return out;
}

Shape mask_select_shape(const Shape& shape, const Shape& mask, const char* op) {
  UMA_CHECK(!mask.empty(), Index, op, ": 0-d boolean masks are not supported");
  UMA_CHECK(mask.size() <= shape.size(), Index, op, ": too many indices for array: array is ", shape.size(),
            "-dimensional, but the boolean mask is ", mask.size(), "-dimensional");
  for (std::size_t d = 0; d < mask.size(); ++d)
    UMA_CHECK(!known(mask[d]) || !known(shape[d]) || mask[d] == shape[d] || mask[d] == 0, Index, op,
              ": boolean index did not match indexed array along axis ", d, "; size of axis is ", shape[d],
              " but size of corresponding boolean axis is ", mask[d]);
  Shape out{kUnknownLength};
  out.insert(out.end(), shape.begin() + static_cast<std::ptrdiff_t>(mask.size()), shape.end());
  return out;
}

Shape embed_shape(const Shape& g, const Shape& region, const Shape& x, const char* op) {
  UMA_CHECK(may_equal(g, region, nullptr), Value, op, ": gradient of shape ", static_shape_str(g),
            " does not match the region's shape ", static_shape_str(region));
  return x;
}

// ---- linear algebra and nn helpers --------------------------------------------------------

FftShapes fft_shapes(const Shape& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
                     FftKind kind, const char* op) {
  const auto nd = static_cast<int64_t>(x.size());
  FftShapes r;
  if (axes) {
    for (int64_t a : *axes) {
      const int64_t d = normalize_axis(a, nd, op);
      UMA_CHECK(std::find(r.axes.begin(), r.axes.end(), d) == r.axes.end(), Value, "uma.fft.", op, ": repeated axis ",
                a, " in axes ", shape_str(*axes));
      r.axes.push_back(d);
    }
    UMA_CHECK(!s || s->size() == axes->size(), Value, "uma.fft.", op, ": s and axes must have the same length, got s=",
              shape_str(*s), " and axes=", shape_str(*axes));
  } else {
    const int64_t k = s ? static_cast<int64_t>(s->size()) : nd;
    UMA_CHECK(k <= nd, Value, "uma.fft.", op, ": s has ", k, " entries but x has only ", nd, " dimensions");
    for (int64_t d = nd - k; d < nd; ++d) r.axes.push_back(d);
  }
  UMA_CHECK(kind == FftKind::C2C || !r.axes.empty(), Value, "uma.fft.", op, ": needs at least one axis");
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    const int64_t m = x[static_cast<std::size_t>(r.axes[i])];
    const bool last_c2r = kind == FftKind::C2R && i + 1 == r.axes.size();
    const bool given = s && (*s)[i] != -1;
    const int64_t n = given ? (*s)[i] : !known(m) ? kUnknownLength : last_c2r ? 2 * (m - 1) : m;
    UMA_CHECK(n >= 1 || (!given && !known(m)), Value, "uma.fft.", op, ": Invalid number of FFT data points (", n,
              ") specified.");
    r.lens.push_back(n);
  }
  r.input = x;
  r.result = x;
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    const auto d = static_cast<std::size_t>(r.axes[i]);
    const int64_t n = r.lens[i];
    const int64_t half = known(n) ? n / 2 + 1 : kUnknownLength;
    const bool last = i + 1 == r.axes.size();
    r.input[d] = kind == FftKind::C2R && last ? half : n;
    r.result[d] = kind == FftKind::R2C && last ? half : n;
  }
  return r;
}

Shape linalg_batch_shape(const Shape& x, bool square, const char* op) {
  const std::size_t nd = x.size();
  // LinAlgError (a ValueError) for both, as numpy.linalg raises.
  UMA_CHECK(nd >= 2, LinAlg, "uma.linalg.", op, ": x must have at least 2 dimensions (a stack of matrices), got shape ",
            static_shape_str(x));
  UMA_CHECK(!square || !known(x[nd - 1]) || !known(x[nd - 2]) || x[nd - 1] == x[nd - 2], LinAlg, "uma.linalg.", op,
            ": the last two dimensions must be square, got shape ", static_shape_str(x));
  return Shape(x.begin(), x.end() - 2);
}

SolveShapes solve_shapes(const Shape& a, const Shape& b) {
  const Shape batch_a = linalg_batch_shape(a, true, "solve");
  const int64_t m = known(a.back()) ? a.back() : a[a.size() - 2];
  UMA_CHECK(!b.empty(), Value, "uma.linalg.solve: x2 must have at least 1 dimension, got shape ", static_shape_str(b));
  const bool vector = b.size() == 1;
  const int64_t bm = vector ? b[0] : b[b.size() - 2];
  UMA_CHECK(!known(m) || !known(bm) || m == bm, Value, "uma.linalg.solve: x2 of shape ", static_shape_str(b),
            " does not match the ", static_shape_str(a), " matrices of x1 (", bm, " != ", m, " rows)");
  SolveShapes s;
  s.m = known(m) ? m : bm;
  s.vector = vector;
  s.k = vector ? 1 : b.back();
  s.batch = vector ? batch_a : broadcast_shapes(batch_a, Shape(b.begin(), b.end() - 2), "uma.linalg.solve");
  s.result = s.batch;
  s.result.push_back(s.m);
  if (!vector) s.result.push_back(s.k);
  return s;
}

namespace {
// min(M, N) of static lengths: 0 when either is 0, unknown when one is unknown.
int64_t min_length(int64_t m, int64_t n) {
  if (m == 0 || n == 0) return 0;
  return known(m) && known(n) ? std::min(m, n) : kUnknownLength;
}
Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}
}  // namespace

SvdShapes svd_shapes(const Shape& x, bool full_matrices) {
  const Shape batch = linalg_batch_shape(x, false, "svd");
  const int64_t m = x[x.size() - 2], n = x.back(), k = min_length(m, n);
  Shape s = batch;
  s.push_back(k);
  return {with_matrix(batch, m, full_matrices ? m : k), s, with_matrix(batch, full_matrices ? n : k, n)};
}

std::pair<Shape, Shape> qr_shapes(const Shape& x, bool complete) {
  const Shape batch = linalg_batch_shape(x, false, "qr");
  const int64_t m = x[x.size() - 2], n = x.back(), k = min_length(m, n);
  return {with_matrix(batch, m, complete ? m : k), with_matrix(batch, complete ? m : k, n)};
}

DType linalg_dtype(DType t, const char* op) {
  UMA_CHECK(t != DType::Float16 && t != DType::BFloat16, Type, "uma.linalg.", op, ": array type ", dtype_name(t),
            " is unsupported in linalg (use float32 or float64)");
  return is_float(t) || is_complex(t) ? t : DType::Float64;
}

Shape outer_shape(const Shape& a, const Shape& b) { return {static_size(a, "outer"), static_size(b, "outer")}; }

Shape diagonal_shape(const Shape& shape, int64_t offset, int64_t axis1, int64_t axis2, const char* op) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  UMA_CHECK(nd >= 2, Value, op, ": the array must have at least two dimensions, got shape ", static_shape_str(shape));
  const int64_t d1 = normalize_axis(axis1, nd, op), d2 = normalize_axis(axis2, nd, op);
  UMA_CHECK(d1 != d2, Value, op, ": axis1 and axis2 cannot be the same (both are ", d1, ")");
  // rows r and columns r + offset: min(n1, n2 - offset) for offset >= 0, min(n1 + offset, n2) below
  const int64_t n1 = shape[d1], n2 = shape[d2];
  const int64_t below = offset == INT64_MIN ? INT64_MAX : -offset;  // -offset without overflow
  const int64_t rows = !known(n1) ? kUnknownLength : offset >= 0 ? n1 : n1 - std::min(below, n1);
  const int64_t cols = !known(n2) ? kUnknownLength : offset >= 0 ? n2 - std::min(offset, n2) : n2;
  int64_t len;
  if (rows == 0 || cols == 0) len = 0;  // decided by one known length
  else if (!known(rows) || !known(cols)) len = kUnknownLength;
  else len = std::min(rows, cols);
  Shape out;
  for (int64_t d = 0; d < nd; ++d)
    if (d != d1 && d != d2) out.push_back(shape[d]);
  out.push_back(len);
  return out;
}

Shape diag_shape(const Shape& shape, int64_t k) {
  if (shape.size() == 2) return diagonal_shape(shape, k, 0, 1);
  UMA_CHECK(shape.size() == 1, Value, "diag: input must be 1-d or 2-d, got shape ", static_shape_str(shape));
  const int64_t n = shape[0];
  UMA_CHECK(k > -INT64_MAX / 2 && k < INT64_MAX / 2, Value, "diag: offset ", k, " is too large");
  const int64_t ak = k < 0 ? -k : k;
  if (!known(n)) return {kUnknownLength, kUnknownLength};
  UMA_CHECK(n <= INT64_MAX / 2 - ak, Value, "diag: offset ", k, " is too large");
  return {n + ak, n + ak};
}

Shape softmax_shape(const Shape& shape, int64_t axis, const char* op) {
  UMA_CHECK(!shape.empty(), Value, op, ": needs at least 1 dimension");
  normalize_axis(axis, static_cast<int64_t>(shape.size()), op);
  return shape;
}

Shape softmax_cross_entropy_shape(const Shape& logits, const Shape& labels, const char* op) {
  UMA_CHECK(logits.size() == 2, Value, op, ": logits must be 2-d (batch, classes), got shape ",
            static_shape_str(logits));
  const int64_t n = logits[0];
  UMA_CHECK(labels.size() == 1 && (!known(n) || !known(labels[0]) || labels[0] == n), Value, op,
            ": labels must have shape (", known(n) ? std::to_string(n) : "?", ",) to match logits ",
            static_shape_str(logits), ", got ", static_shape_str(labels));
  return {known(n) ? n : labels[0]};
}

Shape softmax_cross_entropy_grad_shape(const Shape& g, const Shape& logits, const Shape& labels) {
  const char* op = "softmax_cross_entropy_grad";
  const Shape n = softmax_cross_entropy_shape(logits, labels, op);
  UMA_CHECK(g.size() <= 1 && (g.empty() || !known(g[0]) || !known(n[0]) || g[0] == 1 || g[0] == n[0]), Value, op,
            ": gradient of shape ", static_shape_str(g), " does not broadcast to ", static_shape_str(n));
  Shape out = logits;
  out[0] = n[0];
  return out;
}

Shape one_hot_shape(const Shape& indices, int64_t depth) {
  UMA_CHECK(depth >= 0, Value, "one_hot: depth must be non-negative, got ", depth);
  Shape out = indices;
  out.push_back(depth);
  return out;
}

Shape sort_shape(const Shape& shape, int64_t axis, const char* op) {
  normalize_axis(axis, static_cast<int64_t>(shape.size()), op);  // a 0-d array has no axis to sort
  return shape;
}

Shape nonzero_shape(const Shape& shape) {
  UMA_CHECK(!shape.empty(), Value,
            "nonzero: a 0-d array has no axes to index; use an array of one or more dimensions (x[None])");
  return {kUnknownLength};
}

Shape searchsorted_shape(const Shape& x1, const Shape& x2, const std::optional<Shape>& sorter) {
  UMA_CHECK(x1.size() == 1, Value, "searchsorted: x1 must be 1-d, got shape ", static_shape_str(x1));
  UMA_CHECK(!sorter || may_equal(*sorter, x1, nullptr), Value, "searchsorted: sorter of shape ",
            static_shape_str(*sorter), " must have the shape of x1, ", static_shape_str(x1));
  return x2;
}

}  // namespace uma::ops
