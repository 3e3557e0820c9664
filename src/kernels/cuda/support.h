// src/kernels/cuda/support.h — which (op, dtype) pairs have a CUDA kernel (internal), from the
// op table (uma/ops/table.h): the .cu dispatchers instantiate exactly these pairs, and
// kernels::cuda::supports() (ops.cpp) answers the ops layer from it. Plain C++17 (the table
// and nothing else of uma); op and dtype codes are the integer values of uma::BinaryOp /
// UnaryOp / ReduceOp and uma::DType (checked by static_asserts in ops.cpp).
//
// The dtype is the one the kernel computes in (the ops layer's compute dtype): float16 and
// bfloat16 elementwise ops compute in float32 and never reach a kernel in their own dtype;
// logical ops compute in bool. Reductions read every dtype directly (float16/bfloat16 loaded
// as float32).
#pragma once
#include "uma/ops/table.h"

#ifdef __CUDACC__
#define UMA_HD __host__ __device__
#else
#define UMA_HD
#endif

namespace uma::kernels::cuda_launch {

/// The dtype codes (the op table's, in DType's order).
enum Dt : int {
  kBool = ::uma::dt::Bool, kInt8 = ::uma::dt::Int8, kInt16 = ::uma::dt::Int16, kInt32 = ::uma::dt::Int32,
  kInt64 = ::uma::dt::Int64, kUInt8 = ::uma::dt::UInt8, kUInt16 = ::uma::dt::UInt16, kUInt32 = ::uma::dt::UInt32,
  kUInt64 = ::uma::dt::UInt64, kFloat16 = ::uma::dt::Float16, kBFloat16 = ::uma::dt::BFloat16,
  kFloat32 = ::uma::dt::Float32, kFloat64 = ::uma::dt::Float64, kComplex64 = ::uma::dt::Complex64,
  kComplex128 = ::uma::dt::Complex128,
};
constexpr int kNumDt = ::uma::dt::kCount;

/// The elementwise op codes, by the op table's names (uma::BinaryOp / uma::UnaryOp values).
#define UMA_CUDA_OP_CODE_B(Id, ...) constexpr int Id = static_cast<int>(::uma::BinaryOp::Id);
#define UMA_CUDA_OP_CODE_U(Id, ...) constexpr int Id = static_cast<int>(::uma::UnaryOp::Id);
UMA_BINARY_OPS(UMA_CUDA_OP_CODE_B)
UMA_UNARY_OPS(UMA_CUDA_OP_CODE_U)
#undef UMA_CUDA_OP_CODE_B
#undef UMA_CUDA_OP_CODE_U
constexpr int kNumBin = ::uma::kNumBinaryOps;
constexpr int kNumUn = ::uma::kNumUnaryOps;
enum Red : int { RSum, RMean, RMax, RMin, RProd, RArgMax, RArgMin, RAll, RAny };
constexpr int kNumRed = RAny + 1;

UMA_HD constexpr bool dt_int(int t) { return t >= kInt8 && t <= kUInt64; }
UMA_HD constexpr bool dt_real_float(int t) { return t == kFloat32 || t == kFloat64; }
UMA_HD constexpr bool dt_complex(int t) { return t == kComplex64 || t == kComplex128; }
/// Ops whose result is bool.
UMA_HD constexpr bool bin_bool_out(int op) { return ::uma::bool_result(static_cast<::uma::BinaryOp>(op)); }
UMA_HD constexpr bool un_bool_out(int op) { return ::uma::bool_result(static_cast<::uma::UnaryOp>(op)); }

/// Binary op `op` computed in dtype `t`: the op table's rule (the cpu kernels have the same).
UMA_HD constexpr bool binary_ok(int op, int t) {
  return op >= 0 && op < kNumBin && ::uma::has_kernel(static_cast<::uma::BinaryOp>(op), t);
}
/// Unary op `op` computed in dtype `t`: the op table's rule.
UMA_HD constexpr bool unary_ok(int op, int t) {
  return op >= 0 && op < kNumUn && ::uma::has_kernel(static_cast<::uma::UnaryOp>(op), t);
}

/// Every reduction on every dtype.
UMA_HD constexpr bool reduce_ok(int op, int t) { return op >= 0 && op < kNumRed && t >= 0 && t < kNumDt; }

}  // namespace uma::kernels::cuda_launch
