// Neural-network helpers with fused kernels: softmax cross-entropy with integer labels.
//
// softmax_cross_entropy(z, y)[i] = log(sum_j exp(z_ij)) - z_{i,y_i}
//                                = m_i + log(sum_j exp(z_ij - m_i)) - z_{i,y_i},  m_i = max_j z_ij
// Its gradient with respect to z for an upstream gradient g (shape (N,)):
//   d[i, j] = g_i * (softmax(z)_ij - [j == y_i])
// One pass per row instead of the max/subtract/exp/sum/log/one-hot chain (and its gradient
// graph) that the same loss takes when written with log_softmax.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {

struct XentArgs {
  Array z, y;  // contiguous logits (N, C) and int64 labels (N,)
  int64_t n, c;
};

XentArgs check_xent(const char* op, const Array& logits, const Array& labels) {
  softmax_cross_entropy_shape(logits.shape(), labels.shape(), op);  // the shape rule's checks
  UMA_CHECK(logits.dtype() == DType::Float32 || logits.dtype() == DType::Float64, Type, op,
            ": logits must be float16, bfloat16, float32 or float64, got ", dtype_name(logits.dtype()));
  UMA_CHECK(is_integer(labels.dtype()), Type, op, ": labels must have an integer dtype, got ",
            dtype_name(labels.dtype()));
  return {contiguous(logits), labels.dtype() == DType::Int64 ? contiguous(labels) : astype(labels, DType::Int64),
          logits.shape()[0], logits.shape()[1]};
}

}  // namespace

Array softmax_cross_entropy(const Array& logits0, const Array& labels0, bool check_labels) {
  Array logits = logits0, labels = labels0;
  const Device dev = detail::common_device("softmax_cross_entropy", {&logits, &labels});
  if (logits.dtype() == DType::Float16 || logits.dtype() == DType::BFloat16)  // computed in float32
    return astype(softmax_cross_entropy(astype(logits, DType::Float32), labels, check_labels), logits.dtype());
  XentArgs a = check_xent("softmax_cross_entropy", logits, labels);
  Array out = Array::empty(softmax_cross_entropy_shape(logits.shape(), labels.shape(), "softmax_cross_entropy"),
                           logits.dtype(), dev);
  kernels::softmax_xent("softmax_cross_entropy", a.z, a.y, nullptr, 0, out, check_labels);
  return out;
}

Array softmax_cross_entropy_grad(const Array& grad0, const Array& logits0, const Array& labels0, bool check_labels) {
  Array grad = grad0, logits = logits0, labels = labels0;
  const Device dev = detail::common_device("softmax_cross_entropy_grad", {&grad, &logits, &labels});
  if (logits.dtype() == DType::Float16 || logits.dtype() == DType::BFloat16)
    return astype(softmax_cross_entropy_grad(astype(grad, DType::Float32), astype(logits, DType::Float32), labels,
                                             check_labels),
                  logits.dtype());
  const Shape shape = softmax_cross_entropy_grad_shape(grad.shape(), logits.shape(), labels.shape());
  XentArgs a = check_xent("softmax_cross_entropy_grad", logits, labels);
  Array g = grad.dtype() == logits.dtype() ? grad : astype(grad, logits.dtype());
  const int64_t gstride = g.ndim() == 0 || g.shape()[0] == 1 ? 0 : g.strides()[0];
  Array out = Array::empty(shape, logits.dtype(), dev);
  kernels::softmax_xent("softmax_cross_entropy_grad", a.z, a.y, &g, gstride, out, check_labels);
  return out;
}

// ---- softmax, log_softmax, relu on every float dtype ----------------------------------------

Array softmax(const Array& x, int64_t axis, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  const DType t = x.dtype();
  UMA_CHECK(is_float(t), Type, name, ": needs a float input, got ", dtype_name(t));
  softmax_shape(x.shape(), axis, name);
  axis = normalize_axis(axis, x.ndim(), name);
  if (t == DType::Float16 || t == DType::BFloat16) return astype(softmax(astype(x, DType::Float32), axis, log), t);
  const std::vector<int64_t> ax{axis};
  Array z = binary(BinaryOp::Subtract, x, reduce(ReduceOp::Max, x, ax, true));
  Array e = unary(UnaryOp::Exp, z);
  Array s = reduce(ReduceOp::Sum, e, ax, true);
  return log ? binary(BinaryOp::Subtract, z, unary(UnaryOp::Log, s)) : binary(BinaryOp::Divide, e, s);
}

Array relu(const Array& x) {
  const DType t = x.dtype();
  if (t == DType::Float16 || t == DType::BFloat16) return astype(relu(astype(x, DType::Float32)), t);
  return binary(BinaryOp::Maximum, x, zeros({}, t));
}

void check_labels(const char* op, const Array& labels0, int64_t nclasses) {
  UMA_CHECK(is_integer(labels0.dtype()), Type, op, ": labels must have an integer dtype, got ",
            dtype_name(labels0.dtype()));
  UMA_CHECK(labels0.ndim() == 1, Value, op, ": labels must be 1-d, got shape ", shape_str(labels0.shape()));
  UMA_CHECK(nclasses >= 0, Value, op, ": the number of classes must be >= 0, got ", nclasses);
  const Array y = labels0.dtype() == DType::Int64 ? contiguous(labels0) : astype(labels0, DType::Int64);
  kernels::check_labels(op, y, nclasses);
}

}  // namespace uma::ops
