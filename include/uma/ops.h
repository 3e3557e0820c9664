// uma/ops.h — eager ops: shape/dtype inference, broadcasting, NumPy 2 type promotion, and
// dispatch to the device kernels. Every op returns a fresh array from the allocator or a
// view; no op writes its result into an input's memory (no donation, DESIGN.md).
#pragma once
#include <complex>
#include <optional>
#include <vector>

#include "uma/array.h"

namespace uma {

/// A Python-like scalar value.
struct Scalar {
  ScalarKind kind = ScalarKind::Float;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::complex<double> c{};
  static Scalar from_bool(bool v) { Scalar s; s.kind = ScalarKind::Bool; s.b = v; return s; }
  static Scalar from_int(int64_t v) { Scalar s; s.kind = ScalarKind::Int; s.i = v; return s; }
  static Scalar from_float(double v) { Scalar s; s.kind = ScalarKind::Float; s.f = v; return s; }
  static Scalar from_complex(std::complex<double> v) { Scalar s; s.kind = ScalarKind::Complex; s.c = v; return s; }
};

enum class BinaryOp {
  Add, Subtract, Multiply, Divide, Power, Maximum, Minimum, FloorDivide, Remainder,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr,
  // ---- issue 4 elementwise set (appended) ----
  Arctan2, LogicalXor,
};
constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::LogicalXor) + 1;
enum class UnaryOp {
  Negative, Abs, Exp, Log, Log1p, Expm1, Sqrt, Tanh, Sigmoid, Sign, LogicalNot, Square,
  Sin, Cos, Floor, Ceil,
  // ---- issue 4 elementwise set (appended) ----
  Exp2, Log2, Log10, Reciprocal, Tan, Arcsin, Arccos, Arctan, Sinh, Cosh, Softplus, Erf, Erfc,
  Gammaln, Digamma, Rint,
};
constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::Rint) + 1;
enum class ReduceOp { Sum, Mean, Max, Min, Prod, ArgMax, ArgMin, All, Any };

/// One item of a basic index: an integer, a slice, None (new axis) or Ellipsis.
struct IndexItem {
  enum Kind { Int, Slice, NewAxis, Ellipsis } kind = Int;
  int64_t i = 0;
  std::optional<int64_t> start, stop, step;  // slice parts; nullopt = None
};

/// One instruction of a fused elementwise chain: register[n_inputs + k] = op(reg[a], reg[b]).
struct FusedInstr {
  bool binary = true;
  int op = 0;  // a BinaryOp or UnaryOp value
  int a = 0;
  int b = 0;   // unused for unary ops
};

namespace ops {

const char* op_name(BinaryOp op) noexcept;
const char* op_name(UnaryOp op) noexcept;
const char* op_name(ReduceOp op) noexcept;

// ---- dtype and shape inference -------------------------------------------------------
/// NumPy broadcasting of two shapes; ValueError naming `op` and both shapes on mismatch.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Result dtype of a binary op on arrays of dtypes a, b (TypeError if unsupported).
DType binary_result_dtype(BinaryOp op, DType a, DType b);
/// Normalises an axis (negative counts from the end); IndexError style AxisError -> Index.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);

// ---- creation --------------------------------------------------------------------------
Array full(const Shape& shape, const Scalar& value, DType dtype);
Array zeros(const Shape& shape, DType dtype);
Array ones(const Shape& shape, DType dtype);
/// NumPy arange: ceil((stop - start) / step) elements; ValueError for step == 0.
Array arange(double start, double stop, double step, DType dtype);
Array eye(int64_t n, int64_t m, int64_t k, DType dtype);
/// A 0-d array holding `value` converted to `dtype` (OverflowError if an int is out of range).
Array scalar_array(const Scalar& value, DType dtype);

// ---- copies and casts --------------------------------------------------------------------
/// A C-contiguous copy with dtype `dtype` (values converted, never reinterpreted).
Array astype(const Array& a, DType dtype);
/// A C-contiguous copy.
Array copy(const Array& a);
/// `a` itself if C-contiguous, else a C-contiguous copy.
Array contiguous(const Array& a);
/// dst[...] = src with broadcasting and casting; ValueError if dst is read-only or shapes
/// do not broadcast. Safe when src overlaps dst.
void assign(const Array& dst, const Array& src);

// ---- elementwise -----------------------------------------------------------------------
Array binary(BinaryOp op, const Array& a, const Array& b);
Array unary(UnaryOp op, const Array& a);
/// where(cond, x, y), broadcasting all three; cond is converted to bool.
Array where(const Array& cond, const Array& x, const Array& y);
// ---- issue 4 elementwise set (appended) ----
/// NumPy's round(a, decimals): half to even. Floats and complex: rint(a * 10**d) / 10**d
/// (d >= 0) or rint(a / 10**-d) * 10**-d (d < 0), as NumPy computes it; integers keep their
/// dtype (a copy for d >= 0; d < 0 rounds through float64); bool gives float16 (NumPy's rint
/// rule; TypeError for d != 0, as NumPy).
Array round(const Array& a, int64_t decimals);
/// NumPy's clip(a, lo, hi) with both bounds (lo, hi already of the promoted dtype rules):
/// result dtype promote(a, lo, hi); elementwise t = a < lo ? lo : a, then t > hi ? hi : t, NaN
/// in a or a bound propagates; complex order is NumPy's lexicographic one. A missing bound
/// (nullopt) makes it maximum/minimum, as numpy.clip does.
Array clip(const Array& a, const std::optional<Array>& lo, const std::optional<Array>& hi);
/// One-hot encoding: result shape indices.shape + (depth,), value 1 where index == j.
Array one_hot(const Array& indices, int64_t depth, DType dtype);

/// Whether `op` keeps dtype `t` (so it can join a fused chain of dtype t): arithmetic on
/// int32/int64/float32/float64 (divide and transcendental functions on floats only).
bool is_fusable(BinaryOp op, DType t) noexcept;
bool is_fusable(UnaryOp op, DType t) noexcept;
/// Evaluates a chain of elementwise ops in one pass over memory; every input has dtype
/// `dtype` and the inputs broadcast together. Equal, bit for bit, to running the ops one by
/// one. TypeError for a wrong input dtype or a non-fusable op; ValueError on bad registers or
/// shapes that do not broadcast.
Array fused_elementwise(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, DType dtype);

// ---- neural-network helpers --------------------------------------------------------------
/// Per-example softmax cross-entropy of logits (N, C) float32/float64 with integer labels
/// (N,): log(sum_j exp(z_ij)) - z_{i, y_i}, shape (N,), the logits' dtype. ValueError for a
/// label outside [0, C) or mismatched shapes; TypeError for non-float logits or non-integer
/// labels. (TensorFlow's sparse_softmax_cross_entropy_with_logits; PyTorch's cross_entropy
/// with reduction='none'.)
Array softmax_cross_entropy(const Array& logits, const Array& labels);
/// Its gradient with respect to the logits for an upstream gradient `grad` of shape (N,)
/// (or broadcastable to it): grad_i * (softmax(z)_ij - [j == y_i]), shape (N, C).
Array softmax_cross_entropy_grad(const Array& grad, const Array& logits, const Array& labels);

// ---- reductions --------------------------------------------------------------------------
/// Reduces over `axes` (nullopt: all axes). ArgMax/ArgMin accept one axis or none.
Array reduce(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims);

// ---- linear algebra ----------------------------------------------------------------------
/// NumPy matmul semantics (1-D promotion, batch broadcasting); BLAS for float32/float64.
Array matmul(const Array& a, const Array& b);

// ---- shape -----------------------------------------------------------------------------
/// Reshape; one dimension may be -1. A view when the layout allows, else a copy.
Array reshape(const Array& a, const Shape& shape);
/// Permute axes (empty: reverse). Always a view.
Array transpose(const Array& a, const std::vector<int64_t>& axes);
/// Broadcast view (read-only, as in NumPy).
Array broadcast_to(const Array& a, const Shape& shape);
Array concatenate(const std::vector<Array>& arrays, int64_t axis);
Array stack(const std::vector<Array>& arrays, int64_t axis);
Array expand_dims(const Array& a, int64_t axis);
/// Remove size-1 axes (all of them when axes is empty).
Array squeeze(const Array& a, const std::vector<int64_t>& axes);

// ---- indexing ----------------------------------------------------------------------------
/// Basic indexing (ints, slices, None, Ellipsis): always a view.
Array getitem(const Array& a, const std::vector<IndexItem>& index);

}  // namespace ops
}  // namespace uma
