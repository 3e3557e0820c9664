// src/kernels/cuda_kernels.h — entry points of the CUDA kernels (internal). Implemented in
// src/kernels/cuda/ (CUDA builds) and src/kernels/no_cuda/ (stubs raising RuntimeError).
// Contracts are those of the cpu kernels (kernels/kernels.h): operands are views on one cuda
// device whose shapes equal the output's, the output is C-contiguous. Every kernel is queued
// on uma's stream of the device (Note [CUDA streams]) and returns without waiting for it.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "uma/array.h"
#include "uma/ops/table.h"

namespace uma::kernels {

/// The unique values of a 1-d array with, when asked for, the int64 first indices, inverse and
/// counts (kernels::cpu::unique, kernels::cuda::unique).
struct UniqueParts {
  Array values, indices, inverse, counts;
};

}  // namespace uma::kernels

namespace uma::kernels::cuda {

/// Whether a CUDA kernel exists for the op computed in dtype `t` (the ops layer's compute
/// dtype: float16/bfloat16 elementwise ops compute in float32, logical ops in bool; reductions
/// read every dtype). The ops layer raises TypeError for the other pairs on a cuda array. The
/// table is kernels/cuda/support.h; a build without CUDA answers false.
bool supports(BinaryOp op, DType t) noexcept;
bool supports(UnaryOp op, DType t) noexcept;
bool supports(ReduceOp op, DType t) noexcept;

/// dst = src element by element, same shape and dtype, both on one cuda device; dst is
/// C-contiguous, src any strided view. Queued on uma's stream of the device.
void pack(const Array& src, const Array& dst);

/// dst = src converted (every pair of dtypes; the cpu kernels' conversions).
void cast(const Array& src, const Array& dst);
void binary(BinaryOp op, const Array& a, const Array& b, const Array& out);
void unary(UnaryOp op, const Array& a, const Array& out);
void where(const Array& cond, const Array& x, const Array& y, const Array& out);
/// out = the fused elementwise chain `code` over `inputs` (views of out's shape in out's
/// dtype; out C-contiguous) in one kernel, bit for bit the ops one by one (Note [Fused chains
/// on cuda] in kernels/cuda/fused.cu). False, having queued nothing, when the chain has no
/// fused kernel (its dtype is not int32/int64/float32/float64, or it exceeds 16 inputs or 48
/// instructions): the caller runs the ops one by one.
bool fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out);
/// out = clip(x, lo, hi) (numpy.clip's rule); all four share one kernel dtype.
void clip(const Array& x, const Array& lo, const Array& hi, const Array& out);
void reduce(ReduceOp op, const Array& a, const std::vector<bool>& reduce_mask, const Array& out);
/// out = cumulative sum (product) of `a` along `axis` (any layout); out C-contiguous with a's
/// shape and the sum's result dtype (ops/reduce.cpp), each partial result rounded to it.
void cumulate(const Array& a, int64_t axis, bool product, const Array& out);
/// out (batch..., M, N) = a (batch..., M, K) @ b (batch..., K, N). float32/float64/complex64/
/// complex128 with cuBLAS (loaded with dlopen at the first call; RuntimeError naming the
/// library when it cannot be loaded), float16/bfloat16 with float32 accumulation; bool and the
/// integer dtypes with uma's tiled kernel (kernels::cpu::gemm's wrapping accumulation). a and
/// b are broadcast views of out's dtype.
void matmul(const Array& a, const Array& b, const Array& out);
/// Whether a float32/float64 product of `outputs` elements, each a sum of K terms, runs uma's
/// tiled kernel rather than cuBLAS (kernels/cuda/cublas.cpp).
bool small_product(int64_t outputs, int64_t K);
/// out (M, N) = the chain `code` over (a @ b, rest...) (rest: broadcasting to out's shape), with the
/// product computed by uma's tiled kernel and the chain run on each element before it is
/// stored, in one kernel (Note [Epilogue kernels] in kernels/cuda/chain_compiler.cpp): bit for
/// bit matmul then fused. a (M, K), b (K, N) and out of one float dtype. False, having queued
/// nothing, where the product is not small_product, the chain is over fused()'s limits, an
/// operand is not a blocked read, or no generated kernel is available (no NVRTC).
bool matmul_chain(const Array& a, const Array& b, std::span<const Array* const> rest, const std::vector<FusedInstr>& code,
                  const Array& out);
/// out (M, N) = the chain `code` over (a @ b, rest...) where the chain is `C + s * P` (P the
/// product, C in rest of out's shape, s in rest of one element), as one cuBLASLt product
/// alpha * (a @ b) + beta * C with alpha read from s's device memory (Note [Scaled updates] in
/// kernels/cuda/cublas.cpp): within the accuracy rule of matmul then fused, not bit for bit.
/// a, b, out, C and s of one float dtype. False, having queued nothing, where the chain is not
/// of that form, the product is small_product, an operand's layout is not cuBLAS's, or
/// cuBLASLt or an algorithm for the product is not there.
bool matmul_scaled_add(const Array& a, const Array& b, std::span<const Array* const> rest,
                       const std::vector<FusedInstr>& code, const Array& out);
/// The products matmul_scaled_add ran in this process.
int64_t scaled_update_products();
/// out = the chain `code` over (the sum or mean of `a` over the axes of `mask`, rest...) (rest:
/// broadcasting to out's shape; out C-contiguous, one element per output), the reduction and
/// the chain in one kernel (Note [Reduction epilogues] in kernels/cuda/chain_compiler.cpp): bit
/// for bit reduce then fused. a and out of one float dtype. False, having queued nothing, where
/// the reduction is not a column reduction of at most 32 splits, the chain is over fused()'s
/// limits, an operand is not a blocked read, or no generated kernel is available.
bool reduce_chain(ReduceOp op, const Array& a, const std::vector<bool>& mask, std::span<const Array* const> rest,
                  const std::vector<FusedInstr>& code, const Array& out);
/// Softmax cross-entropy rows of logits (N, C) (contiguous float32/float64) with int64/int32
/// labels (N,): forward into out (N,), or with `grad` (gstride 0 or 1) the gradient into
/// out (N, C). With `check`, ValueError naming the first label outside [0, C) (`op` names the
/// op), which waits for the stream; without, rows with a bad label come out NaN and nothing
/// waits (the caller checks with check_labels). With `one_hot_rows` (one_hot_cross_entropy:
/// `check` must be false) a label outside [0, C) is a zero row of one_hot(labels, C): its loss
/// and gradient row are 0.
void softmax_xent(const char* op, const Array& logits, const Array& labels, const Array* grad, int64_t gstride,
                  const Array& out, bool check, bool one_hot_rows);
/// ValueError naming the first of the contiguous int64 `labels` (N,) outside [0, nclasses);
/// waits for the stream (reads a 4-byte status word).
void check_labels(const char* op, const Array& labels, int64_t nclasses);

/// A device -> device copy of `bytes` bytes from `src` to `dst` (not overlapping).
struct CopyJob {
  void* dst;
  const void* src;
  std::size_t bytes;
};
/// Copies of at most this many bytes go into copy_batch's one kernel; larger ones are a
/// cudaMemcpyAsync each (their time is the copy's, not the call's).
constexpr std::size_t kBatchCopyBytes = std::size_t{16} << 20;
/// The copies `jobs` on uma's stream of cuda `device`, in order with its other work: those of
/// at most kBatchCopyBytes whose pointers are 16-byte aligned in one kernel launch (per 32),
/// the others one cudaMemcpyAsync each. Waits for nothing.
void copy_batch(std::span<const CopyJob> jobs, int device);

/// A label check whose verdict the host waits for alone, not for the work queued after it
/// (Note [Lean replays] in uma/runtime/program.h): a pinned host word that a one-block
/// kernel writes, and an event recorded after the kernel, on `device`. RuntimeError in a build
/// without CUDA.
class LabelFlag {
 public:
  explicit LabelFlag(Device device);
  ~LabelFlag();  // waits for the last queued check (its copy writes the host word)
  LabelFlag(const LabelFlag&) = delete;
  LabelFlag& operator=(const LabelFlag&) = delete;
  /// Queues the check of the contiguous int64 `labels` (N,) against [0, nclasses) on a stream
  /// of its own, after the work queued on uma's stream of the device so far and beside the
  /// work queued there next: the kernel writes its verdict into the host word, then the event
  /// is recorded. Waits for nothing. The labels must stay unwritten until passed() or settle()
  /// returns.
  void queue(const Array& labels, int64_t nclasses);
  /// Waits for the event of the last queue() (so for the work queued on uma's stream before
  /// it, not after it); true when every label it checked was in range, or when nothing was
  /// queued.
  bool passed() const;
  /// Waits for the last queued check unless passed() or settle() already did: call it before
  /// the labels' memory is written again.
  void settle() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The FFT kernels of kernels::cpu (fft_c2c, fft_r2c, fft_c2r: the same contracts) with cuFFT,
/// loaded with dlopen at the first call (RuntimeError naming the library when it cannot be
/// loaded; kernels/cuda/cufft.cpp). Operands of other layouts are packed first; waits for
/// nothing.
void fft_c2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);
void fft_r2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);
void fft_c2r(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct);

// ---- indexing, one_hot, assignment into views ----------------------------------------------
/// Checks the C-contiguous int64 indices `idx` (converted from `src_dtype`) against axis
/// `axis` of length n and wraps negative ones in place (+ n): IndexError naming the first
/// index outside [-n, n) (`op` names the op; a uint64 index >= 2**63 is printed unsigned), as
/// the cpu path. Waits for the stream (reads an 8-byte status word).
void normalize_indices(const char* op, const Array& idx, int64_t n, int64_t axis, DType src_dtype);
/// kernels::cpu::take's contract on the device: out = a gathered along `axis` at in-range
/// int64 indices; a, idx, out C-contiguous.
void take(const Array& a, const Array& idx, int64_t axis, const Array& out);
/// kernels::cpu::scatter's contract on the device, with the same results bit for bit: repeated
/// indices take the last source (set) or add up in index order (accumulate), deterministically
/// (a stable sort groups them; no atomics). `sorted_unique`: idx is strictly increasing (mask
/// positions), so the sort is skipped.
void scatter(const Array& dst, const Array& idx, int64_t axis, const Array& src, bool accumulate, bool sorted_unique);
/// kernels::cpu::gather's contract on the device (NumPy's advanced-indexing read by element
/// offsets): rest any strided view, offsets and out C-contiguous, all on one cuda device.
void gather(const Array& rest, const Array& offsets, int64_t position, const Array& out);
/// kernels::cpu::scatter_at's contract on the device: where offsets repeat, the last write in
/// src's C order wins (a stable sort by offset marks it; no two threads write one element).
/// `distinct`: the offsets are known to be distinct, so the sort is skipped.
void scatter_at(const Array& rest, const Array& offsets, int64_t position, const Array& src, bool distinct);
/// Flat C-order positions (int64 (count,), on the mask's device) of the true entries of the
/// C-contiguous bool `mask`. Waits for the stream once (the count decides the result's shape).
Array mask_positions(const Array& mask);
/// out (idx.shape + (depth,), C-contiguous, any dtype) = 1 where the last index equals the
/// C-contiguous int64 idx, else 0 (rows of indices outside [0, depth) are all 0).
void one_hot(const Array& idx, int64_t depth, const Array& out);
/// dst (C-contiguous) = the element at host address `value` (dst's itemsize bytes, passed to
/// the kernel by value) in every position.
void fill(const Array& dst, const void* value);
/// dst (any non-overlapping view) = src (C-contiguous, same shape and dtype): pack's inverse.
void unpack(const Array& src, const Array& dst);

// ---- sorting, sets and searching (kernels/cuda/sort.cpp, Note [Radix keys]) ----------------
/// kernels::cpu::sort's contract along the last axis only (axis == a.ndim() - 1; the ops layer
/// moves another axis there): always stable (CUB's segmented radix sort, one segment per row).
void sort(const Array& a, int64_t axis, bool descending, bool stable, bool indices, const Array& out);
/// kernels::cpu::unique's contract on the device; waits for the stream once (the count of
/// values decides the results' length).
UniqueParts unique(const Array& a, bool want_indices, bool want_inverse, bool want_counts);
/// kernels::cpu::searchsorted's contract on the device (all operands on it).
void searchsorted(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out);
/// The first position of the C-contiguous int64 `idx` whose value lies outside [0, n), its
/// value in *value; -1 when none. Waits for the stream.
int64_t first_out_of_range(const Array& idx, int64_t n, int64_t* value);

// ---- uma.linalg through cuSOLVER (kernels/cuda/cusolver.cpp, Note [cuSOLVER by dlopen]) ----
// kernels::cpu's LAPACK contracts (kernels/kernels.h) on the device: the same operands, results
// and LinAlgError messages (each waits for the stream once to read the matrices' info words;
// slogdet does not wait). RuntimeError naming the function when cuSOLVER cannot be loaded.
void lu_solve(const char* op, const Array& a, const Array& b, const Array& out);
void slogdet(const Array& a, const Array& sign, const Array& logabs);
void cholesky(const char* op, const Array& a, bool upper, const Array& out);
void eigh(const char* op, const Array& a, const Array& w, const Array* v);
/// RuntimeError naming `op`: no general eigensolver on cuda devices.
void eig(const char* op, const Array& a, const Array& w, const Array* v);
void svd(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full_matrices);
void qr(const Array& a, const Array& q, const Array& r, bool complete);

}  // namespace uma::kernels::cuda
