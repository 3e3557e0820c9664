// src/kernels/kernels.h — per-device kernel entry points (internal).
// Kernels assume the ops layer already checked dtypes and shapes: operands are views whose
// shapes equal the output's (broadcast dims have stride 0), compute dtypes as documented.
#pragma once
#include "uma/array.h"
#include "uma/error.h"
#include "uma/ops.h"

namespace uma::kernels::cpu {

/// dst = src converted elementwise (same shape; any dtypes; any layouts).
void cast(const Array& src, const Array& dst);
/// out = op(a, b); a and b share one kernel dtype (any but float16/bfloat16); out has that dtype, or bool for
/// comparisons and logical ops.
void binary(BinaryOp op, const Array& a, const Array& b, const Array& out);
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

/// out[m, n] = a[m, k] @ b[k, n] for one matrix (2-D views), out C-contiguous.
void gemm(const Array& a, const Array& b, const Array& out);

}  // namespace uma::kernels::cpu
