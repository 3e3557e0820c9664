// src/kernels/cuda/ops_launch.h — plain-C++ launchers of the elementwise, reduction and
// cross-entropy kernels (internal). Free of uma headers (nvcc compiles the .cu files in
// C++17); dtype and op codes are the integer values of uma::DType, uma::BinaryOp,
// uma::UnaryOp and uma::ReduceOp (checked by static_asserts in elementwise.cpp).
#pragma once
#include <cstdint>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/support.h"

namespace uma::kernels::cuda_launch {

/// An operand of an elementwise kernel over a common index space of `Space::shape`: element
/// i (C order) is at ptr + sum_k idx_k * byte_strides[k] (stride 0 on broadcast axes).
struct Operand {
  const char* ptr;
  int64_t byte_strides[kMaxDims];
};

/// The index space: `ndim` merged axes. `dense`: every operand is either C-contiguous over
/// the space or a scalar (all strides 0), so kernels index by i directly (and vectorise).
struct Space {
  int32_t ndim;
  int64_t shape[kMaxDims];
  int64_t n;
  bool dense;
};

/// Each returns a cudaError_t (cudaErrorInvalidValue for an (op, dtype) pair without a
/// kernel: kernels/cuda/support.h) (0 on success); the output is C-contiguous over the space.
int binary(int op, int dtype, const Operand& a, const Operand& b, void* out, const Space& s, void* stream);
int unary(int op, int dtype, const Operand& a, void* out, const Space& s, void* stream);
/// out = clip(a, lo, hi) (numpy.clip's rule), all three of kernel dtype `dtype`.
int clip(int dtype, const Operand& a, const Operand& lo, const Operand& hi, void* out, const Space& s, void* stream);
int where(int itemsize, const Operand& c, const Operand& x, const Operand& y, void* out, const Space& s, void* stream);

/// A matrix product out[b, i, j] = sum_k a[b, i, k] * b[b, k, j] of uma's tiled kernels
/// (kernels/cuda/tiled_gemm.cuh): element strides of a and b (rows, columns, batch); out
/// C-contiguous (batch, M, N).
struct TiledGemm {
  int64_t M, N, K, batch;
  int64_t a_rs, a_cs, a_bs, b_rs, b_cs, b_bs;
};

/// A fused elementwise chain (uma::FusedInstr) as the kernel reads it (Note [Fused chains on
/// cuda] in fused.cu): instruction k reads registers a[k], b[k] (and c[k] for a select) and
/// writes register nin + k; registers 0..nin-1 are the operands.
constexpr int kFusedInputs = 16, kFusedCode = 48;
enum FusedKind : unsigned char { kFusedBinary = 0, kFusedUnary = 1, kFusedSelect = 2 };
struct FusedCode {
  int32_t nin, ncode;
  int16_t op[kFusedCode];
  unsigned char kind[kFusedCode], a[kFusedCode], b[kFusedCode], c[kFusedCode];
};
struct FusedOperands {
  Operand op[kFusedInputs];
};
/// out = the chain's result over the space (int32, int64, float32, float64; every operand of
/// that dtype); cudaErrorInvalidValue for another dtype or a chain over the limits.
int fused(int dtype, const FusedOperands& in, const FusedCode& code, void* out, const Space& s, void* stream);
/// The kernel generated and compiled for the chain (Note [Generated chain kernels] in
/// chain_compiler.cpp) in dtype `dtype` over a blocked space, with 64-bit index arithmetic
/// when `wide_index`: a cudaKernel_t taking (FusedBlocked, T* out, int64_t n, bool out_vec),
/// launched with kThreads threads per block; nullptr where the interpreting kernel runs it.
const void* chain_kernel(int dtype, const FusedCode& code, bool wide_index);
/// The product kernel generated for the chain as its epilogue (Note [Epilogue kernels] in
/// chain_compiler.cpp), in float32 or float64 (dtype): a cudaKernel_t taking (const T* a,
/// const T* b, T* out, TiledGemm, FusedBlocked), launched with dim3(kTile, kTile) threads per
/// block (tiled_gemm.cuh); nullptr where none is available.
const void* epilogue_kernel(int dtype, const FusedCode& code);
/// out = the chain over the operands, register 0 the product a @ b of uma's tiled kernel (g),
/// in one kernel (epilogue_kernel), the product never written to memory. Operand 0 of `in` is
/// `out` (not read), the others views of its shape (s); float32 or float64. kNotFused, having
/// queued nothing, where an operand is not a blocked read or no kernel is available.
constexpr int kNotFused = -1;
int tiled_matmul_chain(int dtype, const void* a, const void* b, const TiledGemm& g, const FusedOperands& in,
                       const FusedCode& code, void* out, const Space& s, void* stream);
int cast(int from, int to, const Operand& a, void* out, const Space& s, void* stream);

/// Reduction geometry: output element o (C order over the kept axes) reduces the elements at
/// ptr + offset_kept(o) + offset_red(r), r over the reduced axes (C order).
struct ReduceGeometry {
  int32_t nkept, nred;
  int64_t kept_shape[kMaxDims], kept_strides[kMaxDims];  // byte strides
  int64_t red_shape[kMaxDims], red_strides[kMaxDims];
  int64_t nout, rsize;
};
/// The column reduction kernel generated for the chain as its epilogue (Note [Reduction
/// epilogues] in chain_compiler.cpp), the sum (or, with `mean`, the mean) of float32 or float64
/// (dtype) elements: a cudaKernel_t taking (const char* in, T* out, ReduceGeometry, int64_t
/// splits, double* partial, FusedBlocked), launched with kThreads threads per block on grid
/// (column blocks, splits) (column_reduce.cuh); nullptr where none is available.
const void* reduce_epilogue_kernel(int dtype, bool mean, const FusedCode& code);
/// out = the chain over the operands, register 0 the sum (op RSum) or mean (RMean) of the
/// column reduction (g, `splits` of reduce_splits, `partial` a workspace of nout * splits
/// doubles when splits > 1), in one kernel (reduce_epilogue_kernel). Operand 0 of `ops` is
/// `out` (not read), the others views of its shape (s, of g.nout elements); float32 or
/// float64. kNotFused, having queued nothing, where the reduction is not a column reduction
/// of at most 32 splits, an operand is not a blocked read or no kernel is available.
int column_reduce_chain(int op, int dtype, const char* in, const ReduceGeometry& g, int64_t splits, void* partial,
                        const FusedOperands& ops, const FusedCode& code, void* out, const Space& s, void* stream);
/// Bytes of one partial accumulator of (op, dtype): the workspace holds nout * splits of them.
int64_t reduce_acc_bytes(int op, int dtype);
/// How the reduction is split: *splits blocks per output (1: no workspace needed) or 0 for
/// the thread-per-output kernel.
int64_t reduce_splits(const ReduceGeometry& g, int itemsize);
int reduce(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* workspace,
           void* stream);

/// Lines of a cumulative sum/product: line l (C order over `shape`, the axes other than the
/// scanned one) starts at in + sum_k idx_k * in_strides[k] (bytes) and out + sum_k idx_k *
/// out_strides[k] (elements); element j of it is j * in_axis_stride bytes / out_axis_stride
/// elements further. out has the sum's result dtype (reduce.cuh's Policy<RSum>::Out).
struct ScanGeometry {
  int32_t ndim;
  int64_t shape[kMaxDims], in_strides[kMaxDims], out_strides[kMaxDims];
  int64_t nlines, len, in_axis_stride, out_axis_stride;
};
int cumulate(bool product, int dtype, const char* in, void* out, const ScanGeometry& g, void* stream);

/// Softmax cross-entropy over rows of C-contiguous logits (n, c) of float32/float64 (dtype)
/// with labels (n,) of int32/int64 (label_dtype, contiguous). Forward: out (n,). Backward:
/// out (n, c) = grad_i * (softmax - onehot), grad read with element stride gstride (0 or 1).
/// A label outside [0, c) sets *bad_flag (device int; nullptr: not reported) to 1 and its
/// row's results are NaN, or with `one_hot_rows` 0 (the row of one_hot(y, c) is zero: no loss,
/// no gradient; the closed form of one_hot_cross_entropy).
int xent(bool backward, bool one_hot_rows, int dtype, int label_dtype, const void* logits, const void* labels, const void* grad,
         int64_t gstride, void* out, int64_t n, int64_t c, int* bad_flag, void* stream);
/// Sets *bad_flag to 1 when one of the int64 labels (n,) lies outside [0, c).
int label_range(const void* labels, int64_t n, int64_t c, int* bad_flag, void* stream);
/// Writes 1 into *host_word (the device pointer of mapped pinned host memory) when one of the int64
/// labels (n,) lies outside [0, c), else 0: one block, one kernel, no other call.
int label_verdict(const void* labels, int64_t n, int64_t c, int* host_word, void* stream);

/// The number of multiprocessors of the current device (cached), for grid sizes.
int sm_count();
/// The multiprocessor count that the split rules of reductions (reduce_splits) and scans
/// assume: an H100's and an H200's. How a sum is split decides the order of its float
/// additions, so with a constant its bits depend on the shape alone, the same on every GPU;
/// a GPU with fewer multiprocessors runs the same blocks in more waves.
inline constexpr int64_t kPlanSMs = 132;

}  // namespace uma::kernels::cuda_launch
