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

// A thread runs the chain on kPack consecutive elements at a time, each instruction decoded
// once for all of them, and reads and writes them 16 bytes at a time where the memory allows.
constexpr int kPack = 4;
template <class T>
struct alignas(16) Pack {
  T v[kPack];
};

template <class T, int OP>
__device__ __forceinline__ void bin_pack(Pack<T>& o, const Pack<T>& a, const Pack<T>& b) {
#pragma unroll
  for (int j = 0; j < kPack; ++j) o.v[j] = settle(bin_value<T, OP>(a.v[j], b.v[j]));
}

template <class T, int OP>
__device__ __forceinline__ void un_pack(Pack<T>& o, const Pack<T>& a) {
#pragma unroll
  for (int j = 0; j < kPack; ++j) o.v[j] = settle(un_value<T, OP>(a.v[j]));
}

template <class T>
__device__ void run_binary(int op, Pack<T>& o, const Pack<T>& a, const Pack<T>& b) {
  switch (op) {
#define UMA_FUSED_BIN(Id, ...) case Id: bin_pack<T, Id>(o, a, b); return;
    UMA_BINARY_OPS(UMA_FUSED_BIN)
#undef UMA_FUSED_BIN
    default: __trap();
  }
}

template <class T>
__device__ void run_unary(int op, Pack<T>& o, const Pack<T>& a) {
  switch (op) {
#define UMA_FUSED_UN(Id, ...) case Id: un_pack<T, Id>(o, a); return;
    UMA_UNARY_OPS(UMA_FUSED_UN)
#undef UMA_FUSED_UN
    default: __trap();
  }
}

// The chain's instructions on the inputs in r[0, nin); r[nin + k] is instruction k's result.
template <class T>
__device__ __forceinline__ const Pack<T>& run_code(const FusedCode& code, Pack<T>* r) {
  const int nin = code.nin, ncode = code.ncode;
  for (int k = 0; k < ncode; ++k) {
    Pack<T>& o = r[nin + k];
    if (code.kind[k] == kFusedBinary) {
      run_binary<T>(code.op[k], o, r[code.a[k]], r[code.b[k]]);
    } else if (code.kind[k] == kFusedUnary) {
      run_unary<T>(code.op[k], o, r[code.a[k]]);
    } else {
      const Pack<T>&c = r[code.a[k]], &x = r[code.b[k]], &y = r[code.c[k]];
#pragma unroll
      for (int j = 0; j < kPack; ++j) o.v[j] = c.v[j] != T(0) ? x.v[j] : y.v[j];
    }
  }
  return r[nin + ncode - 1];
}

__device__ __forceinline__ void copy16(void* dst, const void* src, int bytes) {
  for (int q = 0; q < bytes / 16; ++q) static_cast<uint4*>(dst)[q] = static_cast<const uint4*>(src)[q];
}

// A dense space (every operand contiguous over it or a scalar): element i of operand k is at
// byte i * step[k] (step: the item size, or 0 for a scalar), no index arithmetic. Bit k of
// `vec` (bit kFusedInputs: the output): contiguous and 16-byte aligned.
template <class T>
__global__ void __launch_bounds__(kThreads, 4) fused_dense(FusedOperands in, FusedCode code, T* __restrict__ out, int64_t n,
                            FusedSteps step, uint32_t vec) {
  Pack<T> r[kFusedInputs + kFusedCode];
  const int nin = code.nin;
  for (int64_t i = global_index() * kPack; i < n; i += grid_step() * kPack) {
    const bool whole = i + kPack <= n;
    for (int k = 0; k < nin; ++k) {
      const char* p = in.op[k].ptr;
      if (step.bytes[k] == 0) {
        const T x = *reinterpret_cast<const T*>(p);
#pragma unroll
        for (int j = 0; j < kPack; ++j) r[k].v[j] = x;
      } else if (whole && ((vec >> k) & 1u)) {
        copy16(&r[k], p + i * static_cast<int64_t>(sizeof(T)), sizeof(Pack<T>));
      } else {
#pragma unroll
        for (int j = 0; j < kPack; ++j)
          r[k].v[j] = i + j < n ? *reinterpret_cast<const T*>(p + (i + j) * step.bytes[k]) : T(0);
      }
    }
    const Pack<T>& y = run_code(code, r);
    if (whole && ((vec >> kFusedInputs) & 1u)) {
      copy16(out + i, &y, sizeof(Pack<T>));
    } else {
#pragma unroll
      for (int j = 0; j < kPack; ++j)
        if (i + j < n) out[i + j] = y.v[j];
    }
  }
}

// A strided space: each element's coordinates are found once (I: 32-bit division where the
// space has fewer than 2^32 elements) and each operand's offset summed along them.
template <class T, class I>
__global__ void __launch_bounds__(kThreads, 4) fused_strided(FusedOperands in, FusedCode code, T* __restrict__ out, Space s) {
  Pack<T> r[kFusedInputs + kFusedCode];
  int64_t off[kFusedInputs];
  const int nin = code.nin;
  for (int64_t i = global_index() * kPack; i < s.n; i += grid_step() * kPack) {
#pragma unroll
    for (int j = 0; j < kPack; ++j) {
      for (int k = 0; k < nin; ++k) off[k] = 0;
      I rest = static_cast<I>(i + j < s.n ? i + j : i);
      for (int d = s.ndim - 1; d >= 0; --d) {
        const I extent = static_cast<I>(s.shape[d]);
        const I q = rest / extent;
        const int64_t c = static_cast<int64_t>(rest - q * extent);
        for (int k = 0; k < nin; ++k) off[k] += c * in.op[k].byte_strides[d];
        rest = q;
      }
      for (int k = 0; k < nin; ++k) r[k].v[j] = *reinterpret_cast<const T*>(in.op[k].ptr + off[k]);
    }
    const Pack<T>& y = run_code(code, r);
#pragma unroll
    for (int j = 0; j < kPack; ++j)
      if (i + j < s.n) out[i + j] = y.v[j];
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <class T>
int launch(const FusedOperands& in, const FusedCode& code, void* out, const Space& s, cudaStream_t st) {
  T* o = static_cast<T*>(out);
  const int64_t packs = (s.n + kPack - 1) / kPack;
  if (s.dense) {
    FusedSteps step{};
    uint32_t vec = aligned16(out) ? 1u << kFusedInputs : 0u;
    for (int k = 0; k < code.nin; ++k) {
      step.bytes[k] = s.ndim == 0 ? 0 : in.op[k].byte_strides[0];
      if (step.bytes[k] == static_cast<int64_t>(sizeof(T)) && aligned16(in.op[k].ptr)) vec |= 1u << k;
    }
    fused_dense<T><<<grid_for(packs), kThreads, 0, st>>>(in, code, o, s.n, step, vec);
  } else if (s.n <= static_cast<int64_t>(UINT32_MAX)) {
    fused_strided<T, uint32_t><<<grid_for(packs), kThreads, 0, st>>>(in, code, o, s);
  } else {
    fused_strided<T, int64_t><<<grid_for(packs), kThreads, 0, st>>>(in, code, o, s);
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
