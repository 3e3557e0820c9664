// src/kernels/cuda/fused_chain.cuh — the pieces of a fused elementwise chain kernel (internal),
// shared by fused.cu's instruction-interpreting kernels and the straight-line kernels that
// chain_compiler.cpp generates per chain and compiles with NVRTC (which reads this header and
// its includes from the copies embedded in the library). Note [Fused chains on cuda] in
// fused.cu says why each instruction's result passes through `settle`.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"

namespace uma::kernels::cuda_dev {

// How a blocked space reads operand k at flat output index i: the element e = (i / div[k]) %
// mod[k] (div 1: no division; mod 0: no wrap) at ptr[k] + e * step[k] bytes (step 0: one
// scalar). A contiguous operand is (div 1, mod 0), a bias row repeated over rows (mod = the row
// length), a per-row value repeated along each row (div = the row length). Bit k of `vec`: its
// kPack elements from a pack's start are consecutive and 16-byte aligned; of `splat`: they are
// one element (div a multiple of kPack). `zero` is 0 (settle's opaque zero).
struct FusedBlocked {
  const char* ptr[kFusedInputs];
  int64_t step[kFusedInputs], div[kFusedInputs], mod[kFusedInputs];
  uint32_t vec, splat;
  uint64_t zero;
};

// An instruction's result v, materialised as a value of the chain's dtype (Note [Fused chains
// on cuda]) with its bits unchanged, NaN payloads included. The empty asm is opaque to NVVM,
// which cannot contract across it; but NVVM writes products and sums as PTX mul/add without a
// rounding mode, which ptxas may still fuse into an FMA, so where the code between
// instructions is straight-line (a generated kernel) `zero` is a kernel argument whose value
// (0) ptxas cannot know, added to v's bits: the next instruction reads an integer sum, never
// the product. The interpreting kernel passes a literal 0 (its registers are local memory).
__device__ __forceinline__ float settle(float v, uint64_t zero) {
  asm volatile("" : "+f"(v));
  return __uint_as_float(__float_as_uint(v) + static_cast<uint32_t>(zero));
}
__device__ __forceinline__ double settle(double v, uint64_t zero) {
  asm volatile("" : "+d"(v));
  return __longlong_as_double(static_cast<long long>(static_cast<uint64_t>(__double_as_longlong(v)) + zero));
}
__device__ __forceinline__ int32_t settle(int32_t v, uint64_t) { return v; }
__device__ __forceinline__ int64_t settle(int64_t v, uint64_t) { return v; }

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
__device__ __forceinline__ void bin_pack(Pack<T>& o, const Pack<T>& a, const Pack<T>& b, uint64_t zero) {
#pragma unroll
  for (int j = 0; j < kPack; ++j) o.v[j] = settle(bin_value<T, OP>(a.v[j], b.v[j]), zero);
}

template <class T, int OP>
__device__ __forceinline__ void un_pack(Pack<T>& o, const Pack<T>& a, uint64_t zero) {
#pragma unroll
  for (int j = 0; j < kPack; ++j) o.v[j] = settle(un_value<T, OP>(a.v[j]), zero);
}

// A select: c's lanes hold 1 or 0 of the chain's dtype (a comparison's result).
template <class T>
__device__ __forceinline__ void select_pack(Pack<T>& o, const Pack<T>& c, const Pack<T>& x, const Pack<T>& y) {
#pragma unroll
  for (int j = 0; j < kPack; ++j) o.v[j] = c.v[j] != T(0) ? x.v[j] : y.v[j];
}

__device__ __forceinline__ void copy16(void* dst, const void* src, int bytes) {
  for (int q = 0; q < bytes / 16; ++q) static_cast<uint4*>(dst)[q] = static_cast<const uint4*>(src)[q];
}

template <class I>
__device__ __forceinline__ int64_t blocked_element(const FusedBlocked& in, int k, int64_t i) {
  I e = static_cast<I>(i);
  if (in.div[k] != 1) e /= static_cast<I>(in.div[k]);
  if (in.mod[k] != 0) e %= static_cast<I>(in.mod[k]);
  return static_cast<int64_t>(e);
}

// The element of operand k at flat index i.
template <class T, class I>
__device__ __forceinline__ T blocked_value(const FusedBlocked& in, int k, int64_t i) {
  const int64_t step = in.step[k];
  return *reinterpret_cast<const T*>(in.ptr[k] + (step == 0 ? 0 : blocked_element<I>(in, k, i) * step));
}

// The pack of operand k at flat index i (elements past n read as 0).
template <class T, class I>
__device__ __forceinline__ void blocked_load(Pack<T>& x, const FusedBlocked& in, int k, int64_t i, int64_t n, bool whole) {
  const char* p = in.ptr[k];
  const int64_t step = in.step[k];
  if (step == 0) {
    const T v = *reinterpret_cast<const T*>(p);
#pragma unroll
    for (int j = 0; j < kPack; ++j) x.v[j] = v;
  } else if (whole && ((in.vec >> k) & 1u)) {
    copy16(&x, p + blocked_element<I>(in, k, i) * step, sizeof(Pack<T>));
  } else if (whole && ((in.splat >> k) & 1u)) {
    const T v = *reinterpret_cast<const T*>(p + blocked_element<I>(in, k, i) * step);
#pragma unroll
    for (int j = 0; j < kPack; ++j) x.v[j] = v;
  } else {
#pragma unroll
    for (int j = 0; j < kPack; ++j)
      x.v[j] = i + j < n ? *reinterpret_cast<const T*>(p + blocked_element<I>(in, k, i + j) * step) : T(0);
  }
}

// Writes the pack of the result at flat index i (`out_vec`: the output is 16-byte aligned).
template <class T>
__device__ __forceinline__ void store_pack(T* __restrict__ out, const Pack<T>& y, int64_t i, int64_t n, bool whole,
                                           bool out_vec) {
  if (whole && out_vec) {
    copy16(out + i, &y, sizeof(Pack<T>));
  } else {
#pragma unroll
    for (int j = 0; j < kPack; ++j)
      if (i + j < n) out[i + j] = y.v[j];
  }
}

/// The minimum resident blocks per multiprocessor that a generated chain kernel is compiled for
/// (__launch_bounds__): its straight-line code holds every operand's pack in registers, which
/// the interpreting kernel's budget of 4 would spill.
constexpr int kChainMinBlocks = 2;

/// The body of a generated chain kernel over a blocked space (I: 32-bit index arithmetic where
/// the space has fewer than 2^32 elements): every operand's pack is loaded into registers, then
/// Chain::run(x, zero) computes the result pack from them in straight-line code.
template <class T, class I, int NIN, class Chain>
__device__ __forceinline__ void chain_blocked(const FusedBlocked& in, T* __restrict__ out, int64_t n, bool out_vec) {
  for (int64_t i = cuda_launch::global_index() * kPack; i < n; i += cuda_launch::grid_step() * kPack) {
    const bool whole = i + kPack <= n;
    Pack<T> x[NIN > 0 ? NIN : 1];
#pragma unroll
    for (int k = 0; k < NIN; ++k) blocked_load<T, I>(x[k], in, k, i, n, whole);
    store_pack(out, Chain::run(x, in.zero), i, n, whole, out_vec);
  }
}

}  // namespace uma::kernels::cuda_dev
