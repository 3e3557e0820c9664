// The CUDA kernels in a build without CUDA (kernels/cuda_kernels.h): every entry point raises
// RuntimeError (cuda arrays cannot exist in such a build, so these are never reached by
// valid programs).
#include "kernels/cuda_kernels.h"
#include "uma/error.h"
#include "uma/ops.h"

namespace uma::kernels::cuda {

namespace {
[[noreturn]] void unavailable(const char* op, const Array& dst) {
  UMA_FAIL(Runtime, op, ": device ", dst.device().str(), " is not available: uma was built without CUDA support");
}
}  // namespace

bool supports(BinaryOp, DType) noexcept { return false; }
bool supports(UnaryOp, DType) noexcept { return false; }
bool supports(ReduceOp, DType) noexcept { return false; }

void pack(const Array&, const Array& dst) { unavailable("copy", dst); }
void cast(const Array&, const Array& dst) { unavailable("astype", dst); }
void binary(BinaryOp op, const Array&, const Array&, const Array& out) { unavailable(name_of(op), out); }
void unary(UnaryOp op, const Array&, const Array& out) { unavailable(name_of(op), out); }
void where(const Array&, const Array&, const Array&, const Array& out) { unavailable("where", out); }
bool fused(std::span<const Array* const>, const std::vector<FusedInstr>&, const Array& out) {
  unavailable("fused_elementwise", out);
}
void clip(const Array&, const Array&, const Array&, const Array& out) { unavailable("clip", out); }
void reduce(ReduceOp op, const Array&, const std::vector<bool>&, const Array& out) { unavailable(name_of(op), out); }
void cumulate(const Array&, int64_t, bool product, const Array& out) { unavailable(product ? "cumprod" : "cumsum", out); }
void matmul(const Array&, const Array&, const Array& out) { unavailable("matmul", out); }
bool small_product(int64_t, int64_t) { return false; }
bool matmul_chain(const Array&, const Array&, std::span<const Array* const>, const std::vector<FusedInstr>&,
                  const Array& out) {
  unavailable("matmul_fused", out);
}
bool matmul_scaled_add(const Array&, const Array&, std::span<const Array* const>, const std::vector<FusedInstr>&,
                       const Array& out) {
  unavailable("matmul_fused", out);
}
int64_t scaled_update_products() { return 0; }
bool reduce_chain(ReduceOp op, const Array&, const std::vector<bool>&, std::span<const Array* const>,
                  const std::vector<FusedInstr>&, const Array& out) {
  unavailable(op == ReduceOp::Mean ? "mean_fused" : "sum_fused", out);
}
void fft_c2c(const Array&, const Array& out, const std::vector<int64_t>&, bool, double) { unavailable("fft", out); }
void fft_r2c(const Array&, const Array& out, const std::vector<int64_t>&, bool, double) { unavailable("rfft", out); }
void fft_c2r(const Array&, const Array& out, const std::vector<int64_t>&, bool, double) { unavailable("irfft", out); }
void softmax_xent(const char* op, const Array&, const Array&, const Array*, int64_t, const Array& out, bool, bool) {
  unavailable(op, out);
}
void check_labels(const char* op, const Array& labels, int64_t) { unavailable(op, labels); }
void copy_batch(std::span<const CopyJob> jobs, int) {
  if (!jobs.empty()) UMA_FAIL(Runtime, "copy_batch: uma was built without CUDA support");
}
struct LabelFlag::Impl {};
LabelFlag::LabelFlag(Device d) {
  UMA_FAIL(Runtime, "label check: device ", d.str(), " is not available: uma was built without CUDA support");
}
LabelFlag::~LabelFlag() = default;
void LabelFlag::queue(const Array& labels, int64_t) { unavailable("label check", labels); }
bool LabelFlag::passed() const { return true; }
void LabelFlag::settle() const {}
void normalize_indices(const char* op, const Array& idx, int64_t, int64_t, DType) { unavailable(op, idx); }
void take(const Array&, const Array&, int64_t, const Array& out) { unavailable("take", out); }
void scatter(const Array& dst, const Array&, int64_t, const Array&, bool accumulate, bool) {
  unavailable(accumulate ? "inc_subtensor" : "set_subtensor", dst);
}
void gather(const Array&, const Array&, int64_t, const Array& out) { unavailable("getitem", out); }
void scatter_at(const Array& rest, const Array&, int64_t, const Array&, bool) { unavailable("setitem", rest); }
Array mask_positions(const Array& mask) { unavailable("getitem", mask); }
void one_hot(const Array&, int64_t, const Array& out) { unavailable("one_hot", out); }
void unpack(const Array&, const Array& dst) { unavailable("assign", dst); }
void fill(const Array& dst, const void*) { unavailable("full", dst); }

void sort(const Array&, int64_t, bool, bool, bool indices, const Array& out) {
  unavailable(indices ? "argsort" : "sort", out);
}
UniqueParts unique(const Array& a, bool, bool, bool) { unavailable("unique", a); }
void searchsorted(const Array&, const Array*, const Array&, bool, const Array& out) { unavailable("searchsorted", out); }
int64_t first_out_of_range(const Array& idx, int64_t, int64_t*) { unavailable("searchsorted", idx); }

void lu_solve(const char* op, const Array& a, const Array&, const Array&) { unavailable(op, a); }
void slogdet(const Array& a, const Array&, const Array&) { unavailable("slogdet", a); }
void cholesky(const char* op, const Array& a, bool, const Array&) { unavailable(op, a); }
void eigh(const char* op, const Array& a, const Array&, const Array*) { unavailable(op, a); }
void eig(const char* op, const Array& a, const Array&, const Array*) { unavailable(op, a); }
void svd(const char* op, const Array& a, const Array&, const Array*, const Array*, bool) { unavailable(op, a); }
void qr(const Array& a, const Array&, const Array&, bool) { unavailable("qr", a); }

}  // namespace uma::kernels::cuda

namespace uma::ops {

ChainKernelStats cuda_chain_kernel_stats() { return ChainKernelStats{0, 0, 0, 0, 0, 0, "uma was built without CUDA support"}; }

}  // namespace uma::ops
