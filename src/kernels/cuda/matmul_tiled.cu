// uma's own matrix products on the GPU (launcher in kernels/cuda/index_launch.h): bool and
// integer products, and small float32/float64 ones (kernels/cuda/cublas.cpp says which; the
// others go to cuBLAS), with the tiled product of kernels/cuda/tiled_gemm.cuh.
#include <cstdint>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/index_launch.h"
#include "kernels/cuda/tiled_gemm.cuh"

namespace uma::kernels::cuda_launch {

namespace {

__device__ const float kOneF32 = 1.0f;
__device__ const double kOneF64 = 1.0;

using cuda_dev::kTile;

template <class T>
struct StoreTo {
  T* out;
  __device__ __forceinline__ void operator()(int64_t e, T v) const { out[e] = v; }
};

template <class T>
__global__ void tiled_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, TiledGemm g) {
  StoreTo<T> store{out};
  cuda_dev::tiled_gemm<T>(a, b, g, store);
}

template <class T>
int launch(const void* a, const void* b, void* out, const TiledGemm& g, void* stream) {
  const int64_t tiles = g.batch * ((g.M + kTile - 1) / kTile) * ((g.N + kTile - 1) / kTile);
  const int64_t blocks = cuda_dev::tiled_gemm_blocks(tiles, sm_count());
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

const void* device_one(bool f64) {
  void* p = nullptr;
  const cudaError_t e = f64 ? cudaGetSymbolAddress(&p, kOneF64) : cudaGetSymbolAddress(&p, kOneF32);
  if (e == cudaSuccess) return p;
  (void)cudaGetLastError();  // the failed lookup is not a later launch's error
  return nullptr;
}

}  // namespace uma::kernels::cuda_launch
