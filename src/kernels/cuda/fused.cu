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

namespace uma::kernels::cuda_launch {

namespace {

using namespace cuda_dev;

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

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

template <class T>
__global__ void fused_kernel(FusedOperands in, FusedCode code, T* __restrict__ out, Space s) {
  T r[kFusedInputs + kFusedCode];
  const int nin = code.nin, ncode = code.ncode;
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    for (int k = 0; k < nin; ++k) r[k] = *reinterpret_cast<const T*>(in.op[k].ptr + offset_of(i, s, in.op[k]));
    for (int k = 0; k < ncode; ++k) {
      T v;
      if (code.kind[k] == kFusedBinary) v = run_binary<T>(code.op[k], r[code.a[k]], r[code.b[k]]);
      else if (code.kind[k] == kFusedUnary) v = run_unary<T>(code.op[k], r[code.a[k]]);
      else v = r[code.a[k]] != T(0) ? r[code.b[k]] : r[code.c[k]];
      r[nin + k] = settle(v);
    }
    out[i] = r[nin + ncode - 1];
  }
}

template <class T>
int launch(const FusedOperands& in, const FusedCode& code, void* out, const Space& s, cudaStream_t st) {
  fused_kernel<T><<<grid_for(s.n), kThreads, 0, st>>>(in, code, static_cast<T*>(out), s);
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
