// src/kernels/kernels.h — per-device kernel entry points (internal): uma::kernels::cpu here,
// uma::kernels::cuda in cuda_kernels.h, and below them the one device boundary the ops call
// (uma::kernels::<name>: the kernel of the output's device).
// Kernels assume the ops layer already checked dtypes and shapes: operands are views whose
// shapes equal the output's (broadcast dims have stride 0), compute dtypes as documented.
#pragma once
#include <span>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/ops/table.h"
#include "kernels/cuda_kernels.h"

namespace uma::kernels::cpu {

/// dst = src converted elementwise (same shape; any dtypes; any layouts).
void cast(const Array& src, const Array& dst);
/// out = op(a, b); a and b share one kernel dtype (any but float16/bfloat16); out has that dtype, or bool for
/// comparisons and logical ops.
void binary(BinaryOp op, const Array& a, const Array& b, const Array& out);
/// *out = op(*a, *b) for one element of kernel dtype `t` (host pointers; out of the result
/// dtype binary() would write): the small-operand fast path of ops::binary, bitwise binary()'s value.
void binary_one(BinaryOp op, DType t, const void* a, const void* b, void* out);
/// out = op(a); out has a's dtype, or bool for LogicalNot, or the real dtype for Abs of complex.
void unary(UnaryOp op, const Array& a, const Array& out);
// ---- clipping ----
/// out = clip(x, lo, hi) (numpy.clip's scalar rule); all four share one kernel dtype.
void clip(const Array& x, const Array& lo, const Array& hi, const Array& out);
/// out = cond ? x : y; cond is bool, x/y/out share a dtype.
void where(const Array& cond, const Array& x, const Array& y, const Array& out);
/// Reduces `a` over the axes with reduce_mask[d] set into `out` (shape of the kept axes,
/// C-contiguous). Result dtypes are decided by the ops layer (see ops/reduce.cpp).
void reduce(ReduceOp op, const Array& a, const std::vector<bool>& reduce_mask, const Array& out);
/// Runs a chain of elementwise ops in one pass over memory (blocks of a few hundred
/// elements stay in cache). Inputs have out's dtype and broadcast to out's shape; the last
/// register is written to `out`. Each op rounds exactly as the unfused kernel does.
void fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out);
/// The chain on one element: `inputs[i]` points to input i's element (host memory, out's
/// dtype), the result goes to `*out`. The same per-instruction routines as fused() (bitwise
/// its value); no blocks, no allocation for chains of up to 64 registers. The small-operand
/// fast path of ops::fused_elementwise.
void fused_one(const void* const* inputs, int n_inputs, const std::vector<FusedInstr>& code, DType dtype, void* out);

/// out[m, n] = a[m, k] @ b[k, n] for one matrix (2-D views), out C-contiguous.
void gemm(const Array& a, const Array& b, const Array& out);

// ---- reductions, linear algebra and indexing on every dtype ----------------------------
/// out = variance of `a` over the masked axes with `ddof` (sqrt of it when take_sqrt);
/// out is a C-contiguous real float array of the kept axes' shape.
void var(const Array& a, const std::vector<bool>& reduce_mask, double ddof, bool take_sqrt, const Array& out);
/// out = log(sum(exp(a))) over the masked axes (real inputs; out a real float array).
void logsumexp(const Array& a, const std::vector<bool>& reduce_mask, const Array& out);
/// out = cumulative sum (product) of `a` along `axis`; out C-contiguous, a's shape, dtype as sum's.
void cumulate(const Array& a, int64_t axis, bool product, const Array& out);
/// out = a gathered along `axis` at int64 indices `idx` (in range, non-negative); a, idx and
/// out C-contiguous, out shape a.shape[:axis] + (idx.size,) + a.shape[axis+1:].
void take(const Array& a, const Array& idx, int64_t axis, const Array& out);
/// dst[.., idx[j], ..] = src[.., j, ..] (or += when accumulate; repeated indices add up, as
/// np.add.at). dst, src, idx C-contiguous; src has dst's dtype.
void scatter(const Array& dst, const Array& idx, int64_t axis, const Array& src, bool accumulate);
/// dst += src elementwise (same dtype and shape; any layouts; NumPy's add per dtype).
void add_into(const Array& dst, const Array& src);
/// NumPy's advanced-indexing gather: out (C-contiguous, rest's dtype, shape rest.shape[:position] +
/// offsets.shape + rest.shape[position:]) at (i, j, k) = the element of `rest` (any strides) at
/// (i, k) moved by offsets[j] elements (C-contiguous int64; every element addressed is in rest's
/// storage).
void gather(const Array& rest, const Array& offsets, int64_t position, const Array& out);
/// The scatter of gather: the elements of `rest` gather reads = src (C-contiguous, gather's out
/// shape, rest's dtype), written in src's C order, so where offsets repeat the last write wins.
void scatter_at(const Array& rest, const Array& offsets, int64_t position, const Array& src);
/// Checks the C-contiguous int64 indices `idx` (converted from `src_dtype`) against an axis of
/// length n and wraps negative ones in place: IndexError naming the first index outside
/// [-n, n) (`op` names the op, `axis` the axis).
void normalize_indices(const char* op, const Array& idx, int64_t n, int64_t axis, DType src_dtype);
/// Flat C-order positions (int64 (count,)) of the true entries of the C-contiguous bool `mask`.
Array mask_positions(const Array& mask);
/// out (idx.shape + (depth,), C-contiguous, any dtype) = 1 where the last index equals the
/// C-contiguous int64 idx, else 0.
void one_hot(const Array& idx, int64_t depth, const Array& out);
/// out (batch..., M, N), C-contiguous = a (batch..., M, K) @ b (batch..., K, N), broadcast
/// views of out's dtype: gemm per matrix.
void matmul(const Array& a, const Array& b, const Array& out);
/// Softmax cross-entropy of contiguous float32/float64 logits (N, C) and int64 labels (N,):
/// the forward values into out (N,), or with `grad` (gstride 0 or 1) the gradient into out
/// (N, C). The labels are checked first (ValueError naming the first outside [0, C)), unless
/// `one_hot_rows`: then a row whose label is outside [0, C) is a zero row of one_hot (loss 0,
/// gradient 0), the value of -sum(one_hot(y, C) * log_softmax(z), axis=1).
void softmax_xent(const char* op, const Array& logits, const Array& labels, const Array* grad, int64_t gstride,
                  const Array& out, bool one_hot_rows = false);
/// ValueError naming the first of the contiguous int64 `labels` outside [0, nclasses).
void check_labels(const char* op, const Array& labels, int64_t nclasses);
/// A 0-d host array holding dtype `t`'s 1 (true, 1, 1.0, 1+0j): the bytes one_hot writes.
Array one_of(DType t);

// ---- LAPACK (OpenBLAS) on stacks of matrices (kernels/cpu/linalg.cpp) --------------------------
// Operands are C-contiguous stacks (count, ...) of one LAPACK dtype (float32, float64, complex64,
// complex128); "real" outputs have its real dtype. `op` names the uma.linalg function in errors;
// a failure of LAPACK on a matrix (singular, not positive definite, no convergence) is a
// LinAlgError naming the op and the matrix's index in the stack.
/// out[i] = the solution X of a[i] X = b[i]: a (count, n, n), b and out (count, n, k).
void lu_solve(const char* op, const Array& a, const Array& b, const Array& out);
/// sign[i] (a's dtype: +-1, a unit complex, or 0) and logabs[i] (real; -inf when singular) with
/// det(a[i]) = sign[i] * exp(logabs[i]); a (count, n, n), sign and logabs (count,).
void slogdet(const Array& a, const Array& sign, const Array& logabs);
/// out[i] = the lower Cholesky factor L of a[i] = L L^H (upper: U = L^H), the other triangle zero;
/// a reads one triangle (the lower, or the upper when `upper`).
void cholesky(const char* op, const Array& a, bool upper, const Array& out);
/// w[i] (real, (count, n)) = the eigenvalues of the Hermitian a[i] in ascending order (its lower
/// triangle read); when v is given, v[i] (a's dtype, (count, n, n)) has the eigenvectors as columns.
void eigh(const char* op, const Array& a, const Array& w, const Array* v);
/// w[i] ((count, n)) = the eigenvalues of the general matrix a[i] (complex64 or complex128, in
/// LAPACK's order); when v is given, v[i] ((count, n, n)) has the right eigenvectors (unit 2-norm)
/// as columns.
void eig(const char* op, const Array& a, const Array& w, const Array* v);
/// s[i] (real, (count, k), k = min(m, n), descending) = the singular values of a[i] (count, m, n);
/// with u and vh, a[i] = u[i] diag(s[i]) vh[i]: u (count, m, m) and vh (count, n, n) when
/// full_matrices, else (count, m, k) and (count, k, n).
void svd(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full_matrices);
/// a[i] = q[i] r[i] with orthonormal columns of q[i] and upper-triangular r[i]: q (count, m, m) and
/// r (count, m, n) when complete, else (count, m, k) and (count, k, n), k = min(m, n).
void qr(const Array& a, const Array& q, const Array& r, bool complete);

// ---- FFTs (pocketfft, kernels/cpu/fft.cpp) ------------------------------------------------
// out = the transform over `axes` (distinct, in [0, ndim)) of `in`, every element times `fct`;
// `forward` picks the sign of the exponent (-1 forward, +1 backward). Operands have any strides
// (in may be a broadcast view; out must not overlap in) and one precision: float32 with
// complex64, float64 with complex128. Lengths along the axes are >= 1.
/// Complex to complex: in and out of one complex dtype and one shape.
void fft_c2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);
/// Real to half-spectrum complex: out has in's shape but n / 2 + 1 along axes.back() (the
/// transform of the last axis); the others are complex transforms.
void fft_r2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);
/// Half-spectrum complex to real, r2c's inverse: in has out's shape but n / 2 + 1 along
/// axes.back(), whose imaginary parts at frequency 0 (and n / 2 for even n) are ignored.
void fft_c2r(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);

// ---- sorting, sets and searching (kernels/cpu/sort.cpp, Note [Sort order]) ----
/// out (C-contiguous, a's shape) = `a` (C-contiguous) sorted along `axis`, row by row: the values
/// (a's dtype; bool written as 0 or 1) or, with `indices`, the int64 positions along the axis
/// that sort each row. `descending` reverses the order; `stable` keeps equal elements in their
/// original order.
void sort(const Array& a, int64_t axis, bool descending, bool stable, bool indices, const Array& out);
/// The unique values of a C-contiguous 1-d array (ascending, Note [Sort order]): `values` (a's
/// dtype), and when asked for, the int64 `indices` of their first occurrences, `inverse` (a's
/// length: the position in `values` of each element) and `counts`.
using kernels::UniqueParts;
UniqueParts unique(const Array& a, bool want_indices, bool want_inverse, bool want_counts);
/// out (int64, C-contiguous, v's size) = the insertion points of the C-contiguous `v` into the
/// C-contiguous 1-d `sorted` (of v's dtype; ascending when read through the in-range int64
/// permutation `sorter`, when given): the first i with !(x[i] < v) (left) or v < x[i] (right).
void searchsorted(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out);

}  // namespace uma::kernels::cpu

// The one device boundary of the eager ops: each entry point runs the kernel of the output's
// device (operands are on that device; the ops layer moved or refused the others).
namespace uma::kernels {

inline void cast(const Array& src, const Array& dst) {
  if (dst.device().is_cpu()) cpu::cast(src, dst); else cuda::cast(src, dst);
}
inline void binary(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  if (out.device().is_cpu()) cpu::binary(op, a, b, out); else cuda::binary(op, a, b, out);
}
inline void unary(UnaryOp op, const Array& a, const Array& out) {
  if (out.device().is_cpu()) cpu::unary(op, a, out); else cuda::unary(op, a, out);
}
inline void where(const Array& cond, const Array& x, const Array& y, const Array& out) {
  if (out.device().is_cpu()) cpu::where(cond, x, y, out); else cuda::where(cond, x, y, out);
}
inline void clip(const Array& x, const Array& lo, const Array& hi, const Array& out) {
  if (out.device().is_cpu()) cpu::clip(x, lo, hi, out); else cuda::clip(x, lo, hi, out);
}
inline void reduce(ReduceOp op, const Array& a, const std::vector<bool>& reduce_mask, const Array& out) {
  if (out.device().is_cpu()) cpu::reduce(op, a, reduce_mask, out); else cuda::reduce(op, a, reduce_mask, out);
}
/// Whether `device` has a kernel for the op computed in dtype `t` (every pair on the cpu; the
/// cuda table is kernels/cuda/support.h).
template <class Op>
bool supports(Op op, DType t, const Device& device) noexcept {
  return device.is_cpu() || cuda::supports(op, t);
}
inline void cumulate(const Array& a, int64_t axis, bool product, const Array& out) {
  if (out.device().is_cpu()) cpu::cumulate(a, axis, product, out); else cuda::cumulate(a, axis, product, out);
}
inline void matmul(const Array& a, const Array& b, const Array& out) {
  if (out.device().is_cpu()) cpu::matmul(a, b, out); else cuda::matmul(a, b, out);
}
/// The LAPACK kernels of the operand's device: OpenBLAS's LAPACK on the host, cuSOLVER on cuda.
inline void lu_solve(const char* op, const Array& a, const Array& b, const Array& out) {
  if (a.device().is_cpu()) cpu::lu_solve(op, a, b, out); else cuda::lu_solve(op, a, b, out);
}
inline void slogdet(const Array& a, const Array& sign, const Array& logabs) {
  if (a.device().is_cpu()) cpu::slogdet(a, sign, logabs); else cuda::slogdet(a, sign, logabs);
}
inline void cholesky(const char* op, const Array& a, bool upper, const Array& out) {
  if (a.device().is_cpu()) cpu::cholesky(op, a, upper, out); else cuda::cholesky(op, a, upper, out);
}
inline void eigh(const char* op, const Array& a, const Array& w, const Array* v) {
  if (a.device().is_cpu()) cpu::eigh(op, a, w, v); else cuda::eigh(op, a, w, v);
}
inline void eig(const char* op, const Array& a, const Array& w, const Array* v) {
  if (a.device().is_cpu()) cpu::eig(op, a, w, v); else cuda::eig(op, a, w, v);
}
inline void svd(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full_matrices) {
  if (a.device().is_cpu()) cpu::svd(op, a, s, u, vh, full_matrices);
  else cuda::svd(op, a, s, u, vh, full_matrices);
}
inline void qr(const Array& a, const Array& q, const Array& r, bool complete) {
  if (a.device().is_cpu()) cpu::qr(a, q, r, complete); else cuda::qr(a, q, r, complete);
}
inline void fft_c2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.device().is_cpu()) cpu::fft_c2c(in, out, axes, forward, fct); else cuda::fft_c2c(in, out, axes, forward, fct);
}
inline void fft_r2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.device().is_cpu()) cpu::fft_r2c(in, out, axes, forward, fct); else cuda::fft_r2c(in, out, axes, forward, fct);
}
inline void fft_c2r(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.device().is_cpu()) cpu::fft_c2r(in, out, axes, forward, fct); else cuda::fft_c2r(in, out, axes, forward, fct);
}
inline void take(const Array& a, const Array& idx, int64_t axis, const Array& out) {
  if (out.device().is_cpu()) cpu::take(a, idx, axis, out); else cuda::take(a, idx, axis, out);
}
/// `sorted_unique`: idx is strictly increasing (mask positions), which the cuda kernel uses.
inline void scatter(const Array& dst, const Array& idx, int64_t axis, const Array& src, bool accumulate,
                    bool sorted_unique) {
  if (dst.device().is_cpu()) cpu::scatter(dst, idx, axis, src, accumulate);
  else cuda::scatter(dst, idx, axis, src, accumulate, sorted_unique);
}
/// NumPy's advanced-indexing gather and scatter on the output's (rest's) device.
inline void gather(const Array& rest, const Array& offsets, int64_t position, const Array& out) {
  if (out.device().is_cpu()) cpu::gather(rest, offsets, position, out); else cuda::gather(rest, offsets, position, out);
}
/// `distinct`: the offsets are known to be distinct (no repeated target), which the cuda kernel
/// uses to skip its sort.
inline void scatter_at(const Array& rest, const Array& offsets, int64_t position, const Array& src, bool distinct) {
  if (rest.device().is_cpu()) cpu::scatter_at(rest, offsets, position, src);
  else cuda::scatter_at(rest, offsets, position, src, distinct);
}
/// The indices checked and wrapped in place, on idx's device (IndexError as cpu's).
inline void normalize_indices(const char* op, const Array& idx, int64_t n, int64_t axis, DType src_dtype) {
  if (idx.device().is_cpu()) cpu::normalize_indices(op, idx, n, axis, src_dtype);
  else cuda::normalize_indices(op, idx, n, axis, src_dtype);
}
/// Positions on the mask's device.
inline Array mask_positions(const Array& mask) {
  return mask.device().is_cpu() ? cpu::mask_positions(mask) : cuda::mask_positions(mask);
}
inline void one_hot(const Array& idx, int64_t depth, const Array& out) {
  if (out.device().is_cpu()) cpu::one_hot(idx, depth, out); else cuda::one_hot(idx, depth, out);
}
/// `check`: a bad label raises ValueError (the cpu kernel always checks; the cuda kernel
/// without `check` leaves those rows NaN and does not wait for the device). `one_hot_rows`
/// (one_hot_cross_entropy): no label is checked, and a label outside [0, C) gives a zero row.
inline void softmax_xent(const char* op, const Array& logits, const Array& labels, const Array* grad,
                         int64_t gstride, const Array& out, bool check, bool one_hot_rows = false) {
  if (out.device().is_cpu())
    cpu::softmax_xent(op, logits, labels, grad, gstride, out, one_hot_rows);
  else
    cuda::softmax_xent(op, logits, labels, grad, gstride, out, check && !one_hot_rows, one_hot_rows);
}
inline void check_labels(const char* op, const Array& labels, int64_t nclasses) {
  if (labels.device().is_cpu()) cpu::check_labels(op, labels, nclasses); else cuda::check_labels(op, labels, nclasses);
}
/// Sorting, unique and searchsorted on the output's device; the cuda sort takes the last axis only.
inline void sort(const Array& a, int64_t axis, bool descending, bool stable, bool indices, const Array& out) {
  if (out.device().is_cpu()) cpu::sort(a, axis, descending, stable, indices, out);
  else cuda::sort(a, axis, descending, stable, indices, out);
}
inline UniqueParts unique(const Array& a, bool want_indices, bool want_inverse, bool want_counts) {
  return a.device().is_cpu() ? cpu::unique(a, want_indices, want_inverse, want_counts)
                             : cuda::unique(a, want_indices, want_inverse, want_counts);
}
inline void searchsorted(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out) {
  if (out.device().is_cpu()) cpu::searchsorted(sorted, sorter, v, right, out);
  else cuda::searchsorted(sorted, sorter, v, right, out);
}
/// The first position of the C-contiguous int64 `idx` whose value lies outside [0, n) (its value
/// in *value), or -1; on idx's device (a cuda device waits for the stream).
inline int64_t first_out_of_range(const Array& idx, int64_t n, int64_t* value) {
  if (!idx.device().is_cpu()) return cuda::first_out_of_range(idx, n, value);
  UMA_ASSERT(idx.is_c_contiguous() && idx.dtype() == DType::Int64);
  const int64_t* p = idx.data_as<int64_t>();
  for (int64_t i = 0; i < idx.size(); ++i)
    if (p[i] < 0 || p[i] >= n) {
      *value = p[i];
      return i;
    }
  return -1;
}
/// dst (any writable view on one device) = src converted; on a cuda device a strided dst is
/// written through a contiguous temporary.
void cast_into(const Array& src, const Array& dst);
/// dst += src (same dtype and shape; dst any writable view): NumPy's add per dtype.
void add_into(const Array& dst, const Array& src);
/// cpu::var's contract; on a cuda device composed of the cuda kernels (mean, subtract, square,
/// sum, divide in float64), the cpu kernel's two passes.
void var(const Array& a, const std::vector<bool>& reduce_mask, double ddof, bool take_sqrt, const Array& out);
/// cpu::logsumexp's contract; on a cuda device composed of the cuda kernels in float64.
void logsumexp(const Array& a, const std::vector<bool>& reduce_mask, const Array& out);
/// out (C-contiguous) = `value`, a 0-d host array of out's dtype, in every element: on the host
/// the cast kernel over a stride-0 view, on a cuda device one fill kernel taking the element's
/// bytes as its argument (no transfer, no wait).
inline void fill(const Array& out, const Array& value) {
  if (out.device().is_cpu())
    cpu::cast(value.broadcast_view(out.shape()), out);
  else
    cuda::fill(out, value.data());
}
/// On a cuda device the chain runs op by op (one kernel per instruction, full-size
/// temporaries): the same values as the fused cpu loop, without its single pass.
void fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out);
/// out (M, N), C-contiguous = the chain over (a @ b, inputs[1:]...) for 2-D a (M, K), b (K, N)
/// and inputs broadcasting to out's shape, all of out's dtype and device; inputs[0] is `out`
/// (register 0, the product). On a cuda device one kernel where cuda::matmul_chain allows
/// (Note [Epilogue kernels]), bit for bit matmul then fused; else one cuBLASLt product where
/// cuda::matmul_scaled_add allows (Note [Scaled updates]), within the accuracy rule of matmul
/// then fused; else the product into out, then the chain in place.
void matmul_fused(const Array& a, const Array& b, std::span<const Array* const> inputs,
                  const std::vector<FusedInstr>& code, const Array& out);
/// out (C-contiguous, one element per output) = the chain over (the sum or mean of `a` over
/// the axes of `reduce_mask`, inputs[1:]...) for inputs broadcasting to out's shape, all of
/// out's dtype and device; inputs[0] is `out` (register 0, the reduction). On a cuda device
/// one kernel where cuda::reduce_chain allows (Note [Reduction epilogues]), else the
/// reduction into out, then the chain in place; bit for bit reduce then fused.
void reduce_fused(ReduceOp op, const Array& a, const std::vector<bool>& reduce_mask,
                  std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out);

}  // namespace uma::kernels
