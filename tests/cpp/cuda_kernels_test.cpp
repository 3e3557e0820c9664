// Tests of the CUDA kernel table (kernels::cuda::supports, src/kernels/cuda/support.h): in a
// CUDA build every (op, dtype) pair the cpu kernels implement has a GPU kernel in the dtype
// the ops layer computes it in (float16/bfloat16 elementwise ops compute in float32, logical
// ops in bool); a build without CUDA has none. Runs without a GPU (the table is host code).
// And kernels::cuda::copy_batch, on a GPU (skipped without one).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/elementwise_ops.h"
#include "kernels/cuda_kernels.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"

namespace uma {
namespace {

bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
bool is_logical(BinaryOp op) {
  return op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr || op == BinaryOp::LogicalXor;
}

// Whether the cpu kernels have (op, t), for a dtype the ops layer computes in.
bool cpu_has(BinaryOp op, DType t) {
  return visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    return kernels::cpu::binary_supported<T>(op);
  });
}
bool cpu_has(UnaryOp op, DType t) {
  return visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    return kernels::cpu::unary_supported<T>(op);
  });
}

TEST(CudaKernels, EveryCpuElementwisePairHasAGpuKernelInItsComputeDtype) {
  const bool cuda = cuda::built_with_cuda();
  for (int d = 0; d < kNumDTypes; ++d) {
    const auto t = static_cast<DType>(d);
    for (int o = 0; o < kNumBinaryOps; ++o) {
      const auto op = static_cast<BinaryOp>(o);
      // Logical ops compute in bool; float16/bfloat16 in float32: never sent in those dtypes.
      const bool sent = !is_half(t) && (!is_logical(op) || t == DType::Bool);
      const bool want = cuda && sent && cpu_has(op, t);
      EXPECT_EQ(kernels::cuda::supports(op, t), want) << ops::op_name(op) << " on " << dtype_name(t);
    }
    for (int o = 0; o < kNumUnaryOps; ++o) {
      const auto op = static_cast<UnaryOp>(o);
      const bool want = cuda && !is_half(t) && cpu_has(op, t);
      EXPECT_EQ(kernels::cuda::supports(op, t), want) << ops::op_name(op) << " on " << dtype_name(t);
    }
  }
}

TEST(CudaKernels, EveryReductionOnEveryDtype) {
  const bool cuda = cuda::built_with_cuda();
  for (int d = 0; d < kNumDTypes; ++d)
    for (int o = 0; o <= static_cast<int>(ReduceOp::Any); ++o)
      EXPECT_EQ(kernels::cuda::supports(static_cast<ReduceOp>(o), static_cast<DType>(d)), cuda)
          << ops::op_name(static_cast<ReduceOp>(o)) << " on " << dtype_name(static_cast<DType>(d));
}

// kernels::cuda::copy_batch: every size from 1 byte up, aligned and misaligned, more jobs than
// one launch takes (kCopyJobs = 32), each copy exactly its bytes (the bytes around it untouched).
TEST(CudaKernels, CopyBatchCopiesEveryJobExactly) {
  if (!cuda::is_available()) GTEST_SKIP() << "no usable CUDA GPU: " << cuda::unavailable_reason();
  const Device dev{DeviceType::CUDA, 0};
  std::vector<std::size_t> sizes;
  for (std::size_t n = 1; n <= 40; ++n) sizes.push_back(n);
  for (std::size_t n : {255u, 256u, 4099u, 65536u}) sizes.push_back(n);
  std::size_t total = 0;
  for (std::size_t n : sizes) total += 2 * (n + 64);
  std::vector<unsigned char> pattern(total);
  for (std::size_t i = 0; i < total; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + 7);
  Array src = Array::empty({static_cast<int64_t>(total)}, DType::UInt8, dev);
  Array dst = Array::empty({static_cast<int64_t>(total)}, DType::UInt8, dev);
  cuda::copy_to_device(src.data(), pattern.data(), total, 0);
  std::vector<unsigned char> zeros(total, 0);
  cuda::copy_to_device(dst.data(), zeros.data(), total, 0);
  std::vector<kernels::cuda::CopyJob> jobs;
  std::vector<unsigned char> want(total, 0);
  std::size_t at = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t n = sizes[k];
    const std::size_t skew = (k % 3 == 2) ? 4 : 0;  // every third job 4 bytes off 16-byte alignment
    const std::size_t s = at + 16 + skew, d = at + n + 64 + 16;
    jobs.push_back({static_cast<unsigned char*>(dst.data()) + d, static_cast<const unsigned char*>(src.data()) + s, n});
    std::memcpy(want.data() + d, pattern.data() + s, n);
    at += 2 * (n + 64);
  }
  kernels::cuda::copy_batch(jobs, 0);
  std::vector<unsigned char> got(total);
  cuda::copy_to_host(got.data(), dst.data(), total, 0);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace uma
