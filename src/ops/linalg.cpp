// Linear algebra with NumPy semantics on every dtype. matmul: 1-D operands are promoted to
// matrices and the added axis removed from the result; leading (batch) axes broadcast; the
// result has the promoted dtype (integers wrap); float16/bfloat16 are multiplied in float32
// (BLAS) and rounded once to the dtype (on cuda: cuBLAS with float32 compute). Every dtype runs
// on cuda devices too (kernels/cuda_kernels.h). outer, diag, diagonal, trace.
//
// The factorisations of uma.linalg (namespace linalg below) take stacks of matrices: each checks
// its shape rule (shape_rules.cpp), converts the operand to its LAPACK dtype (linalg_dtype) as a
// C-contiguous stack of equal batch, and runs the LAPACK kernel of its device on it (OpenBLAS on
// the host, cuSOLVER on cuda; eig and eigvals are host only).
#include <algorithm>
#include <cmath>
#include <atomic>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace {
std::atomic<int> g_cuda_matmul_precision{static_cast<int>(MatmulPrecision::Highest)};
}

void set_cuda_matmul_precision(MatmulPrecision p) noexcept {
  g_cuda_matmul_precision.store(static_cast<int>(p), std::memory_order_relaxed);
}

MatmulPrecision cuda_matmul_precision() noexcept {
  return static_cast<MatmulPrecision>(g_cuda_matmul_precision.load(std::memory_order_relaxed));
}

Array matmul(const Array& a00, const Array& b00) {
  // Two matrices of one float dtype on one device (a layer of a model): the product without
  // the general path's views and conversions, which allocate a shape each.
  if (a00.ndim() == 2 && b00.ndim() == 2 && a00.dtype() == b00.dtype() && a00.device() == b00.device() &&
      (a00.dtype() == DType::Float32 || a00.dtype() == DType::Float64) && a00.shape()[1] == b00.shape()[0]) {
    Array out = Array::empty({a00.shape()[0], b00.shape()[1]}, a00.dtype(), a00.device());
    kernels::matmul(a00, b00, out);
    return out;
  }
  Array a0 = a00, b0 = b00;
  const Device dev = detail::common_device("matmul", {&a0, &b0});
  UMA_CHECK(a0.ndim() > 0 && b0.ndim() > 0, Value, "matmul: input operand ", a0.ndim() == 0 ? 0 : 1,
            " does not have enough dimensions (has 0, requires at least 1)");
  const DType t = promote_types(a0.dtype(), b0.dtype());
  Array a = a0.dtype() == t ? a0 : astype(a0, t);
  Array b = b0.dtype() == t ? b0 : astype(b0, t);
  // NumPy's wording of the operand errors first; then the shape rule (matmul_shapes)
  const int64_t K = a.shape()[a.ndim() - 1], K2 = b.ndim() == 1 ? b.shape()[0] : b.shape()[b.ndim() - 2];
  UMA_CHECK(K == K2, Value, "matmul: Input operand 1 has a mismatch in its core dimension 0 (size ", K2,
            " is different from ", K, "); shapes ", shape_str(a0.shape()), " and ", shape_str(b0.shape()));
  const MatmulShapes s = matmul_shapes(a.shape(), b.shape());
  if (a.ndim() == 1) a = a.view(a.data(), {1, s.k}, {0, a.strides()[0]});
  if (b.ndim() == 1) b = b.view(b.data(), {s.k, 1}, {b.strides()[0], 0});
  Shape full = s.batch, sa = s.batch, sb = s.batch;
  full.push_back(s.m); full.push_back(s.n);
  sa.push_back(s.m); sa.push_back(s.k);
  sb.push_back(s.k); sb.push_back(s.n);
  Array out = Array::empty(full, t, dev);
  kernels::matmul(a.broadcast_view(sa), b.broadcast_view(sb), out);
  return out.view(out.data(), s.result, contiguous_strides(s.result));
}

Array outer(const Array& a, const Array& b) {
  const Shape s = outer_shape(a.shape(), b.shape());
  return matmul(reshape(a, {s[0], 1}), reshape(b, {1, s[1]}));
}

Array diagonal(const Array& a, int64_t offset, int64_t axis1, int64_t axis2) {
  const Shape s = diagonal_shape(a.shape(), offset, axis1, axis2);
  const int64_t d1 = normalize_axis(axis1, a.ndim(), "diagonal"), d2 = normalize_axis(axis2, a.ndim(), "diagonal");
  const int64_t len = s.back();
  Strides st;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (d != d1 && d != d2) st.push_back(a.strides()[d]);
  char* p = static_cast<char*>(a.data());
  const bool empty = len == 0 || a.size() == 0;  // an empty view's strides address nothing
  if (!empty) p += (offset >= 0 ? offset * a.strides()[d2] : -offset * a.strides()[d1]) * static_cast<int64_t>(a.itemsize());
  st.push_back(empty ? 1 : a.strides()[d1] + a.strides()[d2]);
  return a.view(p, s, st).as_readonly();
}

Array diag(const Array& a, int64_t k) {
  const Shape s = diag_shape(a.shape(), k);
  if (a.ndim() == 2) return copy(diagonal(a, k, 0, 1));
  const int64_t n = a.shape()[0], m = s[0];
  Array out = zeros(s, a.dtype(), a.device());
  if (n > 0)
    assign(out.view(static_cast<char*>(out.data()) + (k >= 0 ? k : -k * m) * static_cast<int64_t>(out.itemsize()), {n},
                    {m + 1}),
           a);
  return out;
}

Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2) {
  (void)diagonal_shape(a.shape(), offset, axis1, axis2, "trace");  // its errors name trace
  Array d = diagonal(a, offset, axis1, axis2);
  return reduce(ReduceOp::Sum, d, std::vector<int64_t>{d.ndim() - 1}, false);
}

namespace linalg {

namespace {

// The real dtype of a LAPACK dtype (float32 for complex64, float64 for complex128).
DType real_dtype(DType t) { return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t; }

// x (already broadcast to its full shape) as a C-contiguous stack of dtype t: x itself when it
// is one, else a copy.
Array stack_of(const Array& x, DType t) { return x.dtype() == t ? contiguous(x) : astype(x, t); }

// The checks every factorisation starts with, in the order a user meets them: the shape, the
// dtype. Returns the operand as a LAPACK stack on x's device.
Array lapack_operand(const Array& x, bool square, const char* op) {
  linalg_batch_shape(x.shape(), square, op);
  return stack_of(x, linalg_dtype(x.dtype(), op));
}

Shape with_tail(Shape batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

}  // namespace

Array solve(const Array& a00, const Array& b00) {
  Array a0 = a00, b0 = b00;
  const Device dev = detail::common_device("solve", {&a0, &b0});
  const SolveShapes s = solve_shapes(a0.shape(), b0.shape());
  const DType t = linalg_dtype(promote_types(a0.dtype(), b0.dtype()), "solve");
  const Array a = stack_of(a0.broadcast_view(with_tail(s.batch, {s.m, s.m})), t);
  const Shape bshape = with_tail(s.batch, {s.m, s.k});
  const Array b = stack_of(s.vector ? reshape(b0, {s.m, 1}).broadcast_view(bshape) : b0.broadcast_view(bshape), t);
  Array out = Array::empty(bshape, t, dev);
  kernels::lu_solve("solve", a, b, out);
  return s.vector ? reshape(out, s.result) : out;
}

Array inv(const Array& x) {
  const Array a = lapack_operand(x, true, "inv");
  const int64_t n = a.shape().back();
  const Array b = contiguous(on_device(eye(n, n, 0, a.dtype()), a.device()).broadcast_view(a.shape()));
  Array out = Array::empty(a.shape(), a.dtype(), a.device());
  kernels::lu_solve("inv", a, b, out);
  return out;
}

namespace {
/// (sign, logabsdet) of each matrix of x; `op` names the uma.linalg function in errors.
std::pair<Array, Array> sign_logdet(const Array& x, const char* op) {
  const Array a = lapack_operand(x, true, op);
  const Shape batch = linalg_batch_shape(a.shape(), true, op);
  Array sign = Array::empty(batch, a.dtype(), a.device());
  Array logabs = Array::empty(batch, real_dtype(a.dtype()), a.device());
  kernels::slogdet(a, sign, logabs);
  if (!a.device().is_cpu() && a.size() > 0) {
    // cuSOLVER's pivot search passes over a NaN (LAPACK's keeps it), and its LU can then end
    // with finite factors: the log|det| of a matrix holding a NaN is NaN, as NumPy's.
    const Array nan_in = reduce(ReduceOp::Any, unary(UnaryOp::Isnan, a), std::vector<int64_t>{-2, -1}, false);
    logabs = where(nan_in, scalar_array(Scalar::from_float(std::nan("")), logabs.dtype()), logabs);
  }
  return {sign, logabs};
}
}  // namespace

std::pair<Array, Array> slogdet(const Array& x) { return sign_logdet(x, "slogdet"); }

Array det(const Array& x) {
  auto [sign, logabs] = sign_logdet(x, "det");
  return binary(BinaryOp::Multiply, sign, unary(UnaryOp::Exp, logabs));
}

Array cholesky(const Array& x, bool upper) {
  const Array a = lapack_operand(x, true, "cholesky");
  Array out = zeros(a.shape(), a.dtype(), a.device());
  kernels::cholesky("cholesky", a, upper, out);
  return out;
}

std::pair<Array, Array> eigh(const Array& x) {
  const Array a = lapack_operand(x, true, "eigh");
  const int64_t n = a.shape().back();
  Array w = Array::empty(with_tail(linalg_batch_shape(a.shape(), true, "eigh"), {n}), real_dtype(a.dtype()), a.device());
  Array v = Array::empty(a.shape(), a.dtype(), a.device());
  kernels::eigh("eigh", a, w, &v);
  return {w, v};
}

Array eigvalsh(const Array& x) {
  const Array a = lapack_operand(x, true, "eigvalsh");
  const int64_t n = a.shape().back();
  Array w = Array::empty(with_tail(linalg_batch_shape(a.shape(), true, "eigvalsh"), {n}), real_dtype(a.dtype()),
                         a.device());
  kernels::eigh("eigvalsh", a, w, nullptr);
  return w;
}

namespace {
// eig's operand: the stack in the complex dtype of its LAPACK dtype's precision.
Array complex_operand(const Array& x, const char* op) {
  UMA_CHECK(x.device().is_cpu(), Runtime, "uma.linalg.", op, " runs on the cpu device only (no general eigensolver "
            "on cuda; got an array on ", x.device().str(), "); move the array with to_device('cpu')");
  const Array a = lapack_operand(x, true, op);
  const DType c = is_complex(a.dtype()) ? a.dtype() : a.dtype() == DType::Float32 ? DType::Complex64 : DType::Complex128;
  return stack_of(a, c);
}
}  // namespace

std::pair<Array, Array> eig(const Array& x) {
  const Array a = complex_operand(x, "eig");
  const int64_t n = a.shape().back();
  Array w = Array::empty(with_tail(linalg_batch_shape(a.shape(), true, "eig"), {n}), a.dtype());
  Array v = Array::empty(a.shape(), a.dtype());
  kernels::eig("eig", a, w, &v);
  return {w, v};
}

Array eigvals(const Array& x) {
  const Array a = complex_operand(x, "eigvals");
  const int64_t n = a.shape().back();
  Array w = Array::empty(with_tail(linalg_batch_shape(a.shape(), true, "eigvals"), {n}), a.dtype());
  kernels::eig("eigvals", a, w, nullptr);
  return w;
}

std::tuple<Array, Array, Array> svd(const Array& x, bool full_matrices) {
  const Array a = lapack_operand(x, false, "svd");
  const SvdShapes s = svd_shapes(a.shape(), full_matrices);
  Array u = Array::empty(s.u, a.dtype(), a.device()), vh = Array::empty(s.vh, a.dtype(), a.device());
  Array sv = Array::empty(s.s, real_dtype(a.dtype()), a.device());
  kernels::svd("svd", a, sv, &u, &vh, full_matrices);
  return {u, sv, vh};
}

Array svdvals(const Array& x) {
  const Array a = lapack_operand(x, false, "svdvals");
  Array sv = Array::empty(svd_shapes(a.shape(), false).s, real_dtype(a.dtype()), a.device());
  kernels::svd("svdvals", a, sv, nullptr, nullptr, false);
  return sv;
}

std::pair<Array, Array> qr(const Array& x, std::string_view mode) {
  UMA_CHECK(mode == "reduced" || mode == "complete", Value, "uma.linalg.qr: mode must be 'reduced' or 'complete', got '",
            mode, "'");
  const bool complete = mode == "complete";
  const Array a = lapack_operand(x, false, "qr");
  auto [qs, rs] = qr_shapes(a.shape(), complete);
  Array q = Array::empty(qs, a.dtype(), a.device()), r = Array::empty(rs, a.dtype(), a.device());
  kernels::qr(a, q, r, complete);
  return {q, r};
}

}  // namespace linalg

}  // namespace uma::ops
