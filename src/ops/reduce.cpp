// Reduction op definitions on every dtype. Result dtypes follow NumPy 2: sum/prod of bool and
// signed ints give int64, of unsigned ints uint64; mean of bool/ints gives float64; max/min
// keep the dtype; argmax/argmin give int64; all/any give bool; var/std give float64 for
// bool/ints and the real dtype of complex inputs; cumsum/cumprod follow sum.
#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

const char* op_name(ReduceOp op) noexcept { return name_of(op); }

std::optional<ReduceOp> reduce_op_named(std::string_view name) noexcept {
#define UMA_NAMED_R(Id, n) if (name == #n) return ReduceOp::Id;
  UMA_REDUCE_OPS(UMA_NAMED_R)
#undef UMA_NAMED_R
  return std::nullopt;
}

DType stat_result_dtype(DType t) noexcept {
  switch (t) {
    case DType::Complex64: return DType::Float32;
    case DType::Complex128: return DType::Float64;
    default: return is_float(t) ? t : DType::Float64;
  }
}

DType reduce_result_dtype(ReduceOp op, DType t) noexcept {
  switch (op) {
    case ReduceOp::Sum: case ReduceOp::Prod:
      if (t == DType::Bool || dtype_kind(t) == 'i') return DType::Int64;
      if (dtype_kind(t) == 'u') return DType::UInt64;
      return t;
    case ReduceOp::Mean: return is_float(t) || is_complex(t) ? t : DType::Float64;
    case ReduceOp::ArgMax: case ReduceOp::ArgMin: return DType::Int64;
    case ReduceOp::All: case ReduceOp::Any: return DType::Bool;
    default: return t;
  }
}

namespace {

// The axes to reduce and the result shapes.
struct Plan {
  std::vector<bool> mask;
  Shape out_shape, kept_shape;
  int64_t nout = 1;
};

Plan plan_reduce(const char* name, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  Plan p;
  p.mask = reduced_axes(a.ndim(), axes, name);
  p.out_shape = reduce_shape(a.shape(), p.mask, keepdims);
  p.kept_shape = reduce_shape(a.shape(), p.mask, false);
  p.nout = checked_size(p.kept_shape);
  return p;
}

Array finish(Array out, const Plan& p, bool keepdims) {
  if (keepdims) out = out.view(out.data(), p.out_shape, contiguous_strides(p.out_shape));
  return out;
}


Array var_impl(const char* name, const Array& a, const std::optional<std::vector<int64_t>>& axes, double ddof,
               bool keepdims, bool take_sqrt) {
  Plan p = plan_reduce(name, a, axes, keepdims);
  Array out = Array::empty(p.kept_shape, stat_result_dtype(a.dtype()), a.device());
  kernels::var(a, p.mask, ddof, take_sqrt, out);
  return finish(out, p, keepdims);
}

Array cumulate(const char* name, const Array& a0, std::optional<int64_t> axis0, bool product) {
  const Shape shape = cumulate_shape(a0.shape(), axis0, name);  // checks the axis
  const Array a = axis0 ? a0 : reshape(a0, shape);
  const int64_t axis = axis0 ? normalize_axis(*axis0, a.ndim(), name) : 0;
  Array out = Array::empty(shape, reduce_result_dtype(ReduceOp::Sum, a.dtype()), a.device());
  kernels::cumulate(a, axis, product, out);
  return out;
}

}  // namespace

Array reduce(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  const char* name = op_name(op);
  const Shape shape = reduce_shape(op, a.shape(), axes, keepdims);  // the rule's checks
  Plan p = plan_reduce(name, a, axes, keepdims);
  UMA_ASSERT(p.out_shape == shape);
  if (op == ReduceOp::Mean && (is_integer(a.dtype()) || a.dtype() == DType::Bool))
    // numpy.mean (dtype=None) accumulates integers in float64; an int64 sum would wrap
    return reduce(op, astype(a, DType::Float64), axes, keepdims);
  const DType rt = reduce_result_dtype(op, a.dtype());
  UMA_CHECK(kernels::supports(op, a.dtype(), a.device()), Type, name, ": no ", a.device().str(),
            " kernel for dtype ", dtype_name(a.dtype()), "; move the array to the host with .to_device('cpu')");
  Array out = Array::empty(p.kept_shape, rt, a.device());
  kernels::reduce(op, a, p.mask, out);
  return finish(out, p, keepdims);
}

Array var(const Array& a, const std::optional<std::vector<int64_t>>& axes, double ddof, bool keepdims) {
  return var_impl("var", a, axes, ddof, keepdims, false);
}

Array std_dev(const Array& a, const std::optional<std::vector<int64_t>>& axes, double ddof, bool keepdims) {
  return var_impl("std", a, axes, ddof, keepdims, true);
}

Array logsumexp(const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  UMA_CHECK(!is_complex(a.dtype()), Type, "logsumexp: complex input (", dtype_name(a.dtype()),
            ") is not supported");
  Plan p = plan_reduce("logsumexp", a, axes, keepdims);
  Array out = Array::empty(p.kept_shape, stat_result_dtype(a.dtype()), a.device());
  kernels::logsumexp(a, p.mask, out);
  return finish(out, p, keepdims);
}

Array cumsum(const Array& a, std::optional<int64_t> axis) { return cumulate("cumsum", a, axis, false); }
Array cumprod(const Array& a, std::optional<int64_t> axis) { return cumulate("cumprod", a, axis, true); }

}  // namespace uma::ops
