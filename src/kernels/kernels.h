// src/kernels/kernels.h — per-device kernel entry points (internal).
// Kernels assume the ops layer already checked dtypes and shapes: operands are views whose
// shapes equal the output's (broadcast dims have stride 0), compute dtypes as documented.
#pragma once
#include "uma/array.h"
#include "uma/error.h"
#include "uma/ops.h"
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
// ---- issue 4 elementwise set (appended) ----
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
void fused(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, const Array& out);
/// The chain on one element: `inputs[i]` points to input i's element (host memory, out's
/// dtype), the result goes to `*out`. The same per-instruction routines as fused() (bitwise
/// its value); no blocks, no allocation for chains of up to 64 registers. The small-operand
/// fast path of ops::fused_elementwise.
void fused_one(const void* const* inputs, int n_inputs, const std::vector<FusedInstr>& code, DType dtype, void* out);

/// out[m, n] = a[m, k] @ b[k, n] for one matrix (2-D views), out C-contiguous.
void gemm(const Array& a, const Array& b, const Array& out);

// ---- reductions, linear algebra and indexing on every dtype (reduce-linalg) ----------
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
/// out (C-contiguous) = `value`, a 0-d host array of out's dtype, in every element: on the host
/// the cast kernel over a stride-0 view, on a cuda device one fill kernel taking the element's
/// bytes as its argument (no transfer, no wait).
inline void fill(const Array& out, const Array& value) {
  if (out.device().is_cpu())
    cpu::cast(value.view(value.data(), out.shape(), Strides(out.shape().size(), 0)), out);
  else
    cuda::fill(out, value.data());
}
/// On a cuda device the chain runs op by op (one kernel per instruction, full-size
/// temporaries): the same values as the fused cpu loop, without its single pass.
void fused(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, const Array& out);

}  // namespace uma::kernels
