// src/kernels/cuda/tiled_gemm.cuh — uma's tiled matrix product as a device function (internal),
// shared by matmul_tiled.cu's kernels and the product-with-epilogue kernels that
// chain_compiler.cpp generates (Note [Epilogue kernels] there), so that both sum every output
// element in the same order and give the same bits. NVRTC reads it from the copy embedded in
// the library.
//
// A 16 x 16 output tile per block of 16 x 16 threads, one thread per output element; the K
// dimension is staged through shared memory in slabs of kSlab<T> (256 4-byte or 128 8-byte
// values: 33 KB of tiles a block): each thread issues its kSlab / kTile loads of A and of B
// together, so a product with K <= kSlab costs one round trip to memory, not K / 16. Integer
// accumulation is kernels::cpu::gemm's (unsigned 64-bit, wrapping, truncated to the dtype once;
// bool: or of ands), so results equal the cpu path exactly; floats accumulate in their own type
// with fused multiply-adds in k order, as cuBLAS's float kernels do.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/ops_launch.h"
#include "uma/bool8.h"

namespace uma::kernels::cuda_dev {

constexpr int kTile = 16;
template <class T>
constexpr int kSlab = sizeof(T) <= 4 ? 256 : 128;
constexpr int kGemmBatch = 8;

/// The blocks of a tiled product of `tiles` output tiles on `sms` multiprocessors: one per
/// tile, at most 16 per multiprocessor (the rest loop over tiles).
inline int64_t tiled_gemm_blocks(int64_t tiles, int64_t sms) {
  int64_t blocks = tiles;
  if (blocks > sms * 16) blocks = sms * 16;
  return blocks < 1 ? 1 : blocks;
}

/// Runs the block's tiles of out[b, i, j] = sum_k a[b, i, k] * b[b, k, j] (cuda_launch::TiledGemm
/// gives the element strides) and calls store(e, value) once for each output element, e its
/// flat index (b * M + i) * N + j and value the sum in T. Launch with dim3(kTile, kTile)
/// threads; every thread of the block must call it.
template <class T, class Store>
__device__ __forceinline__ void tiled_gemm(const T* __restrict__ a, const T* __restrict__ b,
                                           const cuda_launch::TiledGemm& g, Store& store) {
  constexpr int S = kSlab<T>;
  __shared__ T as[kTile][S + 1];
  __shared__ T bs[S][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tm = (g.M + kTile - 1) / kTile, tn = (g.N + kTile - 1) / kTile;
  const int64_t tiles = g.batch * tm * tn;
  // Uniform per block (depends on blockIdx only), so every thread reaches each barrier.
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t bt = tile / (tm * tn), rest = tile - bt * (tm * tn);
    const int64_t i0 = (rest / tn) * kTile, j0 = (rest % tn) * kTile;
    const int64_t i = i0 + ty, j = j0 + tx;
    const T* ab = a + bt * g.a_bs;
    const T* bb = b + bt * g.b_bs;
    constexpr bool kFloat = std::is_floating_point_v<T>;
    std::conditional_t<kFloat, T, unsigned long long> acc = 0;
    bool any = false;
    for (int64_t k0 = 0; k0 < g.K; k0 += S) {
      const int slab = static_cast<int>(g.K - k0 < S ? g.K - k0 : S);
      // Row ty of A's tile and column tx of B's, kTile apart along the slab: kGemmBatch loads
      // of each issued before they are stored.
      for (int q0 = 0; q0 < slab; q0 += kTile * kGemmBatch) {
        T va[kGemmBatch], vb[kGemmBatch];
#pragma unroll
        for (int u = 0; u < kGemmBatch; ++u) {
          const int qa = q0 + u * kTile + tx, qb = q0 + u * kTile + ty;
          va[u] = qa < slab && i < g.M ? ab[i * g.a_rs + (k0 + qa) * g.a_cs] : T(0);
          vb[u] = qb < slab && j < g.N ? bb[(k0 + qb) * g.b_rs + j * g.b_cs] : T(0);
        }
#pragma unroll
        for (int u = 0; u < kGemmBatch; ++u) {
          const int qa = q0 + u * kTile + tx, qb = q0 + u * kTile + ty;
          if (qa < slab) as[ty][qa] = va[u];
          if (qb < slab) bs[qb][tx] = vb[u];
        }
      }
      __syncthreads();
      for (int kk = 0; kk < slab; ++kk) {
        if constexpr (std::is_same_v<T, bool8>) any = any || (as[ty][kk] && bs[kk][tx]);  // byte != 0
        else if constexpr (kFloat) acc = fma(as[ty][kk], bs[kk][tx], acc);
        else acc += static_cast<unsigned long long>(as[ty][kk]) * static_cast<unsigned long long>(bs[kk][tx]);
      }
      __syncthreads();
    }
    if (i < g.M && j < g.N) {
      if constexpr (std::is_same_v<T, bool8>) store((bt * g.M + i) * g.N + j, bool8(any));
      else store((bt * g.M + i) * g.N + j, static_cast<T>(acc));
    }
  }
}

}  // namespace uma::kernels::cuda_dev
