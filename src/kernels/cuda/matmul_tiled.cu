// uma's own matrix products on the GPU (launcher in kernels/cuda/index_launch.h): bool and
// integer products, and small float32/float64 ones (kernels/cuda/cublas.cpp says which; the
// others go to cuBLAS). A 16 x 16 output tile per block, the K dimension staged through
// shared memory in slabs (kSlab), one thread per output element. Integer accumulation is
// kernels::cpu::gemm's (unsigned 64-bit, wrapping, truncated to the dtype once; bool: or of
// ands), so results equal the cpu path exactly; floats accumulate in their own type with
// fused multiply-adds in k order, as cuBLAS's float kernels do.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/index_launch.h"

namespace uma::kernels::cuda_launch {

namespace {

constexpr int kTile = 16;
// The K dimension is staged through shared memory in slabs of kSlab<T> (256 4-byte or 128
// 8-byte values: 33 KB of tiles a block): each thread issues its kSlab / kTile loads of A and
// of B together, so a product with K <= kSlab costs one round trip to memory, not K / 16.
template <class T>
constexpr int kSlab = sizeof(T) <= 4 ? 256 : 128;
constexpr int kBatch = 8;

template <class T>
__global__ void tiled_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, TiledGemm g) {
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
      // Row ty of A's tile and column tx of B's, kTile apart along the slab: kBatch loads of
      // each issued before they are stored.
      for (int q0 = 0; q0 < slab; q0 += kTile * kBatch) {
        T va[kBatch], vb[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int qa = q0 + u * kTile + tx, qb = q0 + u * kTile + ty;
          va[u] = qa < slab && i < g.M ? ab[i * g.a_rs + (k0 + qa) * g.a_cs] : T(0);
          vb[u] = qb < slab && j < g.N ? bb[(k0 + qb) * g.b_rs + j * g.b_cs] : T(0);
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
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
      if constexpr (std::is_same_v<T, bool8>) out[(bt * g.M + i) * g.N + j] = any;
      else out[(bt * g.M + i) * g.N + j] = static_cast<T>(acc);
    }
  }
}

template <class T>
int launch(const void* a, const void* b, void* out, const TiledGemm& g, void* stream) {
  const int64_t tiles = g.batch * ((g.M + kTile - 1) / kTile) * ((g.N + kTile - 1) / kTile);
  int64_t blocks = tiles;
  const int64_t cap = static_cast<int64_t>(sm_count()) * 16;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  tiled_gemm_kernel<T><<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), g);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int tiled_matmul(int dtype, const void* a, const void* b, void* out, const TiledGemm& g, void* stream) {
  if (g.M == 0 || g.N == 0 || g.batch == 0) return 0;
  switch (dtype) {
    case kBool: return launch<bool8>(a, b, out, g, stream);
    case kInt8: return launch<int8_t>(a, b, out, g, stream);
    case kInt16: return launch<int16_t>(a, b, out, g, stream);
    case kInt32: return launch<int32_t>(a, b, out, g, stream);
    case kInt64: return launch<int64_t>(a, b, out, g, stream);
    case kUInt8: return launch<uint8_t>(a, b, out, g, stream);
    case kUInt16: return launch<uint16_t>(a, b, out, g, stream);
    case kUInt32: return launch<uint32_t>(a, b, out, g, stream);
    case kUInt64: return launch<uint64_t>(a, b, out, g, stream);
    case kFloat32: return launch<float>(a, b, out, g, stream);
    case kFloat64: return launch<double>(a, b, out, g, stream);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
