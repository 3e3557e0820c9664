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

// Host uint64 labels: the first one outside [0, nclasses) named by its own value (the int64
// cast the kernels check would show 2**64 - 1 as -1).
void check_unsigned_labels(const char* op, const Array& labels, int64_t nclasses) {
  if (labels.dtype() != DType::UInt64 || !labels.device().is_cpu()) return;
  const Array y = contiguous(labels);
  const uint64_t* v = y.data_as<uint64_t>();
  for (int64_t i = 0; i < y.size(); ++i)
    UMA_CHECK(v[i] < static_cast<uint64_t>(nclasses), Value, op, ": label ", v[i], " at position ", i,
              " is out of range [0, ", nclasses, ")");
}

}  // namespace

namespace {
// one_hot_cross_entropy where `depth` is not the logits' class count: the product the closed
// form stands for, -sum(one_hot(y, depth) * log_softmax(z, axis=1), axis=1), broadcasts only
// one_hot's single column (its static shape says 1; the logits' class axis does not), and
// its gradient is g[:, None] * (softmax(z) * rowsum(one_hot) - one_hot). Other depths are the
// product's broadcast error.
void check_product_broadcasts(const char* op, const Array& logits, int64_t depth) {
  UMA_CHECK(depth == 1, Value, op, ": operands could not be broadcast together: one_hot depth ", depth,
            " and logits of shape ", shape_str(logits.shape()));
}

Array one_hot_product(const char* op, const Array& logits, const Array& labels, int64_t depth) {
  check_product_broadcasts(op, logits, depth);
  const Array oh = one_hot(labels, depth, logits.dtype());
  const Array prod = binary(BinaryOp::Multiply, oh, softmax(logits, 1, true));
  return unary(UnaryOp::Negative, reduce(ReduceOp::Sum, prod, std::vector<int64_t>{1}, false));
}

Array one_hot_product_grad(const char* op, const Array& grad, const Array& logits, const Array& labels,
                           int64_t depth) {
  check_product_broadcasts(op, logits, depth);
  const Array oh = one_hot(labels, depth, logits.dtype());
  const Array col = grad.ndim() == 1 ? reshape(grad, {grad.shape()[0], 1}) : grad;
  const Array rows = reduce(ReduceOp::Sum, oh, std::vector<int64_t>{1}, true);
  const Array p = binary(BinaryOp::Multiply, softmax(logits, 1, false), rows);
  return binary(BinaryOp::Multiply, col, binary(BinaryOp::Subtract, p, oh));
}

// softmax_cross_entropy (depth 0: labels checked unless check_labels is false) or
// one_hot_cross_entropy (depth > 0: the logits' class count, labels outside it are zero rows).
Array xent_forward(const char* op, const Array& logits0, const Array& labels0, bool check_labels, int64_t depth) {
  Array logits = logits0, labels = labels0;
  const Device dev = detail::common_device(op, {&logits, &labels});
  if (logits.dtype() == DType::Float16 || logits.dtype() == DType::BFloat16)  // computed in float32
    return astype(xent_forward(op, astype(logits, DType::Float32), labels, check_labels, depth), logits.dtype());
  XentArgs a = check_xent(op, logits, labels);
  if (depth > 0 && depth != a.c) return one_hot_product(op, logits, labels, depth);
  if (depth == 0) check_unsigned_labels(op, labels, a.c);  // the cpu checks whatever check_labels says
  Array out = Array::empty(softmax_cross_entropy_shape(logits.shape(), labels.shape(), op), logits.dtype(), dev);
  kernels::softmax_xent(op, a.z, a.y, nullptr, 0, out, check_labels, depth > 0);
  return out;
}

Array xent_backward(const char* op, const Array& grad0, const Array& logits0, const Array& labels0, bool check_labels,
                    int64_t depth) {
  Array grad = grad0, logits = logits0, labels = labels0;
  const Device dev = detail::common_device(op, {&grad, &logits, &labels});
  if (logits.dtype() == DType::Float16 || logits.dtype() == DType::BFloat16)
    return astype(xent_backward(op, astype(grad, DType::Float32), astype(logits, DType::Float32), labels,
                                check_labels, depth),
                  logits.dtype());
  const Shape shape = softmax_cross_entropy_grad_shape(grad.shape(), logits.shape(), labels.shape());
  XentArgs a = check_xent(op, logits, labels);
  if (depth > 0 && depth != a.c) return one_hot_product_grad(op, grad, logits, labels, depth);
  if (depth == 0) check_unsigned_labels(op, labels, a.c);  // the cpu checks whatever check_labels says
  Array g = grad.dtype() == logits.dtype() ? grad : astype(grad, logits.dtype());
  const int64_t gstride = g.ndim() == 0 || g.shape()[0] == 1 ? 0 : g.strides()[0];
  Array out = Array::empty(shape, logits.dtype(), dev);
  kernels::softmax_xent(op, a.z, a.y, &g, gstride, out, check_labels, depth > 0);
  return out;
}
}  // namespace

Array softmax_cross_entropy(const Array& logits, const Array& labels, bool check_labels) {
  return xent_forward("softmax_cross_entropy", logits, labels, check_labels, 0);
}

Array softmax_cross_entropy_grad(const Array& grad, const Array& logits, const Array& labels, bool check_labels) {
  return xent_backward("softmax_cross_entropy_grad", grad, logits, labels, check_labels, 0);
}

Array one_hot_cross_entropy(const Array& logits, const Array& labels, int64_t depth) {
  UMA_CHECK(depth > 0, Value, "one_hot_cross_entropy: depth must be positive, got ", depth);
  return xent_forward("one_hot_cross_entropy", logits, labels, true, depth);
}

Array one_hot_cross_entropy_grad(const Array& grad, const Array& logits, const Array& labels, int64_t depth) {
  UMA_CHECK(depth > 0, Value, "one_hot_cross_entropy_grad: depth must be positive, got ", depth);
  return xent_backward("one_hot_cross_entropy_grad", grad, logits, labels, true, depth);
}

// ---- softmax, log_softmax, relu on every float dtype ----------------------------------------

Array softmax(const Array& x, int64_t axis, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  const DType t = x.dtype();
  UMA_CHECK(is_float(t), Type, name, ": needs a float input, got ", dtype_name(t));
  softmax_shape(x.shape(), axis, name);
  axis = normalize_axis(axis, x.ndim(), name);
  if (t == DType::Float16 || t == DType::BFloat16) return astype(softmax(astype(x, DType::Float32), axis, log), t);
  // No elements, none to normalize (torch, JAX): an empty result, not the max's error.
  if (x.size() == 0) return Array::empty(x.shape(), t, x.device());
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
  check_unsigned_labels(op, labels0, nclasses);
  const Array y = labels0.dtype() == DType::Int64 ? contiguous(labels0) : astype(labels0, DType::Int64);
  kernels::check_labels(op, y, nclasses);
}

}  // namespace uma::ops
