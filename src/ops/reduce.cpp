// Reduction op definitions. Result dtypes follow NumPy 2: sum/prod of bool and signed ints
// narrower than 64 bits give int64; mean of bool/ints gives float64; max/min keep the dtype;
// argmax/argmin give int64; all/any give bool.
#include <algorithm>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

const char* op_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::All: return "all";
    case ReduceOp::Any: return "any";
  }
  return "?";
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  UMA_CHECK(axis >= -ndim && axis < ndim, Index, op, ": axis ", axis, " is out of bounds for array of dimension ",
            ndim);
  return axis < 0 ? axis + ndim : axis;
}

Array reduce(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  const char* name = op_name(op);
  detail::check_compute(name, a.dtype());
  const int64_t nd = a.ndim();
  std::vector<bool> mask(nd, !axes.has_value());
  if (axes) {
    for (int64_t ax : *axes) {
      int64_t d = normalize_axis(ax, nd, name);
      UMA_CHECK(!mask[d], Value, name, ": duplicate value in 'axis'");
      mask[d] = true;
    }
  }
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  if (arg) UMA_CHECK(!axes || axes->size() == 1, Type, name, ": axis must be an integer or None");
  int64_t rsize = 1;
  Shape out_shape, kept_shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (mask[d]) {
      rsize *= a.shape()[d];
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(a.shape()[d]);
      kept_shape.push_back(a.shape()[d]);
    }
  }
  const int64_t nout = checked_size(kept_shape);
  if (rsize == 0 && nout > 0) {
    UMA_CHECK(!(op == ReduceOp::Max || op == ReduceOp::Min), Value, "zero-size array to reduction operation ",
              op == ReduceOp::Max ? "maximum" : "minimum", " which has no identity");
    UMA_CHECK(!arg, Value, "attempt to get ", name, " of an empty sequence");
  }
  DType t = a.dtype(), rt = t;
  switch (op) {
    case ReduceOp::Sum: case ReduceOp::Prod:
      if (t == DType::Bool || t == DType::Int32) rt = DType::Int64;
      break;
    case ReduceOp::Mean:
      if (!is_float(t)) rt = DType::Float64;
      break;
    case ReduceOp::ArgMax: case ReduceOp::ArgMin: rt = DType::Int64; break;
    case ReduceOp::All: case ReduceOp::Any: rt = DType::Bool; break;
    default: break;
  }
  Array out = Array::empty(kept_shape, rt, a.device());
  kernels::reduce(op, a, mask, out);
  if (keepdims) out = out.view(out.data(), out_shape, contiguous_strides(out_shape));
  return out;
}

}  // namespace uma::ops
