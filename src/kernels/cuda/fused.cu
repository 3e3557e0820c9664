// Fused elementwise chains on cuda devices (launcher in kernels/cuda/ops_launch.h): one kernel
// runs a chain's instructions (uma::FusedInstr, passed as a FusedCode) on each element, in
// registers, and writes only the chain's result.
//
// Note [Fused chains on cuda]
// Each instruction computes exactly what its op's own kernel computes (apply_binary /
// apply_unary of device_ops.cuh, the same scalar routines), and each instruction's result is
// materialised as a value of the chain's dtype before the next reads it (`settle`: an empty asm
// the value must pass through), so nvcc cannot contract a product and a sum of different
// instructions into one FMA. Hence the chain's result is bit for bit the unfused ops', as on
// the host (kernels/cpu/fused.cpp). A comparison's register holds 1 or 0 of the chain's dtype,
// read only as a where's condition (FusedInstr::select).
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"

#include <cstdint>

namespace uma::kernels::cuda_launch {

namespace {

using namespace cuda_dev;

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

struct FusedSteps {
  int64_t bytes[kFusedInputs];
};

__device__ __forceinline__ float settle(float v) {
  asm volatile("" : "+f"(v));
  return v;
}
__device__ __forceinline__ double settle(double v) {
  asm volatile("" : "+d"(v));
  return v;
}
__device__ __forceinline__ int32_t settle(int32_t v) { return v; }
__device__ __forceinline__ int64_t settle(int64_t v) { return v; }

template <class T, int OP>
__device__ __forceinline__ T bin_value(T a, T b) {
  if constexpr (binary_ok(OP, dt_of<T>())) {
    if constexpr (std::is_same_v<BinOut<T, OP>, T>) return apply_binary<T, OP>(a, b);
    else if constexpr (bin_bool_out(OP)) return apply_binary<T, OP>(a, b) ? T(1) : T(0);
  }
  __trap();  // the host checked the chain (fused_supported): never reached
  return T(0);
}

template <class T, int OP>
__device__ __forceinline__ T un_value(T x) {
  if constexpr (unary_ok(OP, dt_of<T>())) {
    if constexpr (std::is_same_v<UnOut<T, OP>, T>) return apply_unary<T, OP>(x);
  }
  __trap();
  return T(0);
}

template <class T>
__device__ T run_binary(int op, T a, T b) {
  switch (op) {
#define UMA_FUSED_BIN(Id, ...) case Id: return bin_value<T, Id>(a, b);
    UMA_BINARY_OPS(UMA_FUSED_BIN)
#undef UMA_FUSED_BIN
    default: __trap(); return T(0);
  }
}

template <class T>
__device__ T run_unary(int op, T x) {
  switch (op) {
#define UMA_FUSED_UN(Id, ...) case Id: return un_value<T, Id>(x);
    UMA_UNARY_OPS(UMA_FUSED_UN)
#undef UMA_FUSED_UN
    default: __trap(); return T(0);
  }
}

// The chain's instructions on the inputs in r[0, nin); r[nin + k] is instruction k's result.
template <class T>
__device__ __forceinline__ T run_code(const FusedCode& code, T* r) {
  const int nin = code.nin, ncode = code.ncode;
  for (int k = 0; k < ncode; ++k) {
    T v;
    if (code.kind[k] == kFusedBinary) v = run_binary<T>(code.op[k], r[code.a[k]], r[code.b[k]]);
    else if (code.kind[k] == kFusedUnary) v = run_unary<T>(code.op[k], r[code.a[k]]);
    else v = r[code.a[k]] != T(0) ? r[code.b[k]] : r[code.c[k]];
    r[nin + k] = settle(v);
  }
  return r[nin + ncode - 1];
}

// A dense space (every operand contiguous over it or a scalar): element i of operand k is at
// byte i * step[k] (step: the item size, or 0 for a scalar), no index arithmetic.
template <class T>
__global__ void fused_dense(FusedOperands in, FusedCode code, T* __restrict__ out, int64_t n,
                            FusedSteps step) {
  T r[kFusedInputs + kFusedCode];
  const int nin = code.nin;
  for (int64_t i = global_index(); i < n; i += grid_step()) {
    for (int k = 0; k < nin; ++k) r[k] = *reinterpret_cast<const T*>(in.op[k].ptr + i * step.bytes[k]);
    out[i] = run_code(code, r);
  }
}

// A strided space: the element's coordinates are found once (I: 32-bit division where the
// space has fewer than 2^32 elements) and each operand's offset summed along them.
template <class T, class I>
__global__ void fused_strided(FusedOperands in, FusedCode code, T* __restrict__ out, Space s) {
  T r[kFusedInputs + kFusedCode];
  int64_t off[kFusedInputs];
  const int nin = code.nin;
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    for (int k = 0; k < nin; ++k) off[k] = 0;
    I rest = static_cast<I>(i);
    for (int d = s.ndim - 1; d >= 0; --d) {
      const I extent = static_cast<I>(s.shape[d]);
      const I q = rest / extent;
      const int64_t c = static_cast<int64_t>(rest - q * extent);
      for (int k = 0; k < nin; ++k) off[k] += c * in.op[k].byte_strides[d];
      rest = q;
    }
    for (int k = 0; k < nin; ++k) r[k] = *reinterpret_cast<const T*>(in.op[k].ptr + off[k]);
    out[i] = run_code(code, r);
  }
}

template <class T>
int launch(const FusedOperands& in, const FusedCode& code, void* out, const Space& s, cudaStream_t st) {
  T* o = static_cast<T*>(out);
  if (s.dense) {
    FusedSteps step{};
    for (int k = 0; k < code.nin; ++k) step.bytes[k] = s.ndim == 0 ? 0 : in.op[k].byte_strides[0];
    fused_dense<T><<<grid_for(s.n), kThreads, 0, st>>>(in, code, o, s.n, step);
  } else if (s.n <= static_cast<int64_t>(UINT32_MAX)) {
    fused_strided<T, uint32_t><<<grid_for(s.n), kThreads, 0, st>>>(in, code, o, s);
  } else {
    fused_strided<T, int64_t><<<grid_for(s.n), kThreads, 0, st>>>(in, code, o, s);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int fused(int dtype, const FusedOperands& in, const FusedCode& code, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  if (code.nin < 0 || code.nin > kFusedInputs || code.ncode < 1 || code.ncode > kFusedCode) return kInvalid;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kInt32: return launch<int32_t>(in, code, out, s, st);
    case kInt64: return launch<int64_t>(in, code, out, s, st);
    case kFloat32: return launch<float>(in, code, out, s, st);
    case kFloat64: return launch<double>(in, code, out, s, st);
    default: return kInvalid;
  }
}

}  // namespace uma::kernels::cuda_launch
