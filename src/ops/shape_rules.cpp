// The shape rules of the ops, on static shapes (uma/ops.h, "shape inference"): broadcasting,
// reductions, cumulative ops and matmul. The eager ops call them on their arrays' shapes and
// the symbolic graph on its types' shapes (uma._core._result_shape), so the two cannot disagree.
#include <algorithm>
#include <array>

#include "ops/common.h"

namespace uma::ops {

namespace {
bool known(int64_t d) { return d != kUnknownLength; }
}  // namespace

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
        if (length != 1 && length != d) {
          std::string all;
          for (const Shape* t : shapes) {
            if (!all.empty()) all += ' ';
            all += static_shape_str(*t);
          }
          UMA_FAIL(Value, op, ": operands could not be broadcast together with shapes ", all);
        }
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
  MatmulShapes s{broadcast_shapes(batch_a, batch_b, "matmul"), m, known(k1) ? k1 : k2, n, {}};
  s.result = s.batch;
  if (na > 1) s.result.push_back(m);
  if (nb > 1) s.result.push_back(n);
  return s;
}

}  // namespace uma::ops
