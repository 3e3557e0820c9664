// Sorting and searching op definitions (Array API standard 2025.12, NumPy's order: Note [Sort
// order] in kernels/cpu/sort.cpp): sort and argsort along an axis, nonzero and searchsorted, on
// every dtype and device (the cuda kernels sort the last axis: another axis moves there and
// back); nonzero composes the mask and arithmetic kernels.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {
Array sorted_along(const char* op, const Array& x0, int64_t axis0, bool descending, bool stable, bool indices) {
  sort_shape(x0.shape(), axis0, op);
  const int64_t axis = normalize_axis(axis0, x0.ndim(), op);
  const DType t = indices ? DType::Int64 : x0.dtype();
  if (!x0.device().is_cpu() && axis != x0.ndim() - 1) {
    // The device sorts rows of the last axis: swap the axis with the last one, sort, swap back.
    std::vector<int64_t> perm(static_cast<std::size_t>(x0.ndim()));
    for (std::size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
    std::swap(perm[static_cast<std::size_t>(axis)], perm.back());
    Array x = contiguous(transpose(x0, perm));
    Array out = Array::empty(x.shape(), t, x.device());
    kernels::sort(x, x.ndim() - 1, descending, stable, indices, out);
    return contiguous(transpose(out, perm));
  }
  Array x = contiguous(x0);
  Array out = Array::empty(x.shape(), t, x.device());
  kernels::sort(x, axis, descending, stable, indices, out);
  return out;
}
}  // namespace

Array sort(const Array& x, int64_t axis, bool descending, bool stable) {
  return sorted_along("sort", x, axis, descending, stable, false);
}

Array argsort(const Array& x, int64_t axis, bool descending, bool stable) {
  return sorted_along("argsort", x, axis, descending, stable, true);
}

std::vector<Array> nonzero(const Array& x) {
  nonzero_shape(x.shape());
  // The flat C-order positions of the non-zero elements, then one coordinate array per axis:
  // (position // stride) % length, stride the product of the later lengths.
  Array mask = x.dtype() == DType::Bool ? x : binary(BinaryOp::NotEqual, x, zeros({}, x.dtype()));
  Array pos = kernels::mask_positions(contiguous(mask));
  std::vector<Array> out(static_cast<std::size_t>(x.ndim()));
  int64_t stride = 1;
  for (int64_t d = x.ndim() - 1; d >= 0; --d) {
    Array c = stride == 1 ? pos : binary(BinaryOp::FloorDivide, pos, scalar_array(Scalar::from_int(stride), DType::Int64));
    out[d] = d == 0 ? c
                    : binary(BinaryOp::Remainder, c, scalar_array(Scalar::from_int(x.shape()[d]), DType::Int64));
    stride *= x.shape()[d];
  }
  return out;
}

Array searchsorted(const Array& x1, const Array& x2, bool right, const std::optional<Array>& sorter) {
  const char* op = "searchsorted";
  const Shape shape = searchsorted_shape(x1.shape(), x2.shape(),
                                         sorter ? std::optional<Shape>(sorter->shape()) : std::nullopt);
  Array y1 = x1, y2 = x2;
  Array s = sorter ? *sorter : Array();
  if (sorter) detail::common_device(op, {&y1, &y2, &s});
  else detail::common_device(op, {&y1, &y2});
  const DType t = promote_types(x1.dtype(), x2.dtype());
  Array a = astype(y1, t), v = astype(y2, t);  // fresh C-contiguous arrays in the common dtype
  std::optional<Array> perm;
  if (sorter) {
    UMA_CHECK(is_integer(sorter->dtype()), Type, op, ": sorter must have an integer dtype, got ",
              dtype_name(sorter->dtype()));
    perm = astype(s, DType::Int64);
    const int64_t n = a.size();
    // NumPy: "Sorter index out of range." (a uint64 >= 2**63 reads negative)
    int64_t value = 0;
    const int64_t bad = kernels::first_out_of_range(*perm, n, &value);
    UMA_CHECK(bad < 0, Value, op, ": sorter index ", value, " at position ", bad, " is out of range for x1 of length ", n);
  }
  Array out = Array::empty(shape, DType::Int64, a.device());
  kernels::searchsorted(a, perm ? &*perm : nullptr, v, right, out);
  return out;
}

}  // namespace uma::ops
