// cumsum / cumprod (launcher in kernels/cuda/ops_launch.h): one thread per line along the
// axis, a grid-stride loop over the lines. Each thread walks its line in order, accumulating
// in the reductions' sum accumulator (reduce.cuh: integers wrap in int64/uint64, real floats
// in double, complex in complex128) and rounding each partial result to the output dtype, as
// the cpu kernel does. Neighbouring threads take neighbouring lines, so the reads coalesce
// when the axis is not the innermost one; a single long line runs on one thread (simple, not
// fast).
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

namespace {

template <int OP, class T>
__global__ void scan_kernel(const char* __restrict__ in, typename red::Policy<OP, T>::Out* __restrict__ out,
                            ScanGeometry g) {
  using P = red::Policy<OP, T>;
  for (int64_t l = global_index(); l < g.nlines; l += grid_step()) {
    int64_t rem = l, ia = 0, oa = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t q = rem / g.shape[d], i = rem - q * g.shape[d];
      ia += i * g.in_strides[d];
      oa += i * g.out_strides[d];
      rem = q;
    }
    typename P::Acc acc = P::identity();
    for (int64_t k = 0; k < g.len; ++k) {
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(in + ia + k * g.in_axis_stride), k));
      out[oa + k * g.out_axis_stride] = red::to_out<typename P::Out>(acc);
    }
  }
}

template <class T>
int scan_t(bool product, const char* in, void* out, const ScanGeometry& g, cudaStream_t st) {
  const unsigned blocks = grid_for(g.nlines);
  if (product)
    scan_kernel<RProd, T><<<blocks, kThreads, 0, st>>>(in, static_cast<typename red::Policy<RProd, T>::Out*>(out), g);
  else
    scan_kernel<RSum, T><<<blocks, kThreads, 0, st>>>(in, static_cast<typename red::Policy<RSum, T>::Out*>(out), g);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int cumulate(bool product, int dtype, const char* in, void* out, const ScanGeometry& g, void* stream) {
  if (g.nlines == 0 || g.len == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
#define UMA_SCAN(CODE, T) case CODE: return scan_t<T>(product, in, out, g, st);
    UMA_SCAN(kBool, bool) UMA_SCAN(kInt8, int8_t) UMA_SCAN(kInt16, int16_t) UMA_SCAN(kInt32, int32_t)
    UMA_SCAN(kInt64, int64_t) UMA_SCAN(kUInt8, uint8_t) UMA_SCAN(kUInt16, uint16_t) UMA_SCAN(kUInt32, uint32_t)
    UMA_SCAN(kUInt64, uint64_t) UMA_SCAN(kFloat16, __half) UMA_SCAN(kBFloat16, __nv_bfloat16) UMA_SCAN(kFloat32, float)
    UMA_SCAN(kFloat64, double) UMA_SCAN(kComplex64, cuda_dev::Cx<float>) UMA_SCAN(kComplex128, cuda_dev::Cx<double>)
#undef UMA_SCAN
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
