// Tests of the CUDA kernel table (kernels::cuda::supports, src/kernels/cuda/support.h): in a
// CUDA build every (op, dtype) pair the cpu kernels implement has a GPU kernel in the dtype
// the ops layer computes it in (float16/bfloat16 elementwise ops compute in float32, logical
// ops in bool); a build without CUDA has none. Runs without a GPU (the table is host code).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace uma
