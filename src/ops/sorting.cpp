// Sorting and searching op definitions (Array API standard 2025.12, NumPy's order: Note [Sort
// order] in kernels/cpu/sort.cpp): sort and argsort along an axis, nonzero and searchsorted, on
// every dtype. sort, argsort and searchsorted have host kernels only; nonzero composes the mask
// and arithmetic kernels, so it runs on every device.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {
Array sorted_along(const char* op, const Array& x0, int64_t axis0, bool descending, bool stable, bool indices) {
  sort_shape(x0.shape(), axis0, op);
  detail::require_host(op, x0);
  const int64_t axis = normalize_axis(axis0, x0.ndim(), op);
  Array x = contiguous(x0);
  Array out = Array::empty(x.shape(), indices ? DType::Int64 : x.dtype());
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
  detail::require_host(op, x1);
  detail::require_host(op, x2);
  const DType t = promote_types(x1.dtype(), x2.dtype());
  Array a = astype(x1, t), v = astype(x2, t);  // fresh C-contiguous arrays in the common dtype
  std::optional<Array> perm;
  if (sorter) {
    detail::require_host(op, *sorter);
    UMA_CHECK(is_integer(sorter->dtype()), Type, op, ": sorter must have an integer dtype, got ",
              dtype_name(sorter->dtype()));
    perm = astype(*sorter, DType::Int64);
    const int64_t n = a.size();
    const int64_t* p = perm->data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i)  // NumPy: "Sorter index out of range." (a uint64 >= 2**63 reads negative)
      UMA_CHECK(p[i] >= 0 && p[i] < n, Value, op,
                ": sorter index ", p[i], " at position ", i, " is out of range for x1 of length ", n);
  }
  Array out = Array::empty(shape, DType::Int64);
  kernels::searchsorted(a, perm ? &*perm : nullptr, v, right, out);
  return out;
}

}  // namespace uma::ops
