// cumsum / cumprod (launcher in kernels/cuda/ops_launch.h). Two kernels, both accumulating
// in the reductions' sum accumulator (reduce.cuh: integers wrap in int64/uint64, real floats
// in double, complex in complex128) and rounding each partial result to the output dtype, as
// the cpu kernel does:
// - thread per line (many short lines): each thread walks its line in order; neighbouring
//   threads take neighbouring lines, so the reads coalesce when the axis is not innermost;
// - block per line (few long lines): tiles of kThreads * kScanK elements, each thread an
//   inclusive scan of its kScanK consecutive elements in registers, a shared-memory
//   (Hillis-Steele) scan of the thread totals, and the running total of the earlier tiles.
//   Integer results equal the sequential ones (wrapping addition and multiplication are
//   associative); float results differ from them by double rounding only.
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
      // the first element as it is (NumPy's accumulate: no 1 * x or 0 + x)
      const auto v = P::load(*reinterpret_cast<const T*>(in + ia + k * g.in_axis_stride), k);
      acc = k == 0 ? v : P::combine(acc, v);
      out[oa + k * g.out_axis_stride] = red::to_out<typename P::Out>(acc);
    }
  }
}

constexpr int kScanK = 4;

template <int OP, class T>
__global__ void scan_block_kernel(const char* __restrict__ in, typename red::Policy<OP, T>::Out* __restrict__ out,
                                  ScanGeometry g) {
  using P = red::Policy<OP, T>;
  using Acc = typename P::Acc;
  using Out = typename P::Out;
  __shared__ Acc sm[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t l = blockIdx.x; l < g.nlines; l += gridDim.x) {
    int64_t rem = l, ia = 0, oa = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t q = rem / g.shape[d], i = rem - q * g.shape[d];
      ia += i * g.in_strides[d];
      oa += i * g.out_strides[d];
      rem = q;
    }
    Acc carry = P::identity();  // the combined elements of the earlier tiles
    for (int64_t base = 0; base < g.len; base += static_cast<int64_t>(kThreads) * kScanK) {
      const int64_t j0 = base + static_cast<int64_t>(tid) * kScanK;
      Acc v[kScanK];
      Acc run = P::identity();
#pragma unroll
      for (int k = 0; k < kScanK; ++k) {
        const int64_t j = j0 + k;
        if (j < g.len) run = P::combine(run, P::load(*reinterpret_cast<const T*>(in + ia + j * g.in_axis_stride), j));
        v[k] = run;
      }
      sm[tid] = run;
      __syncthreads();
      for (int off = 1; off < kThreads; off <<= 1) {
        const Acc t = tid >= off ? sm[tid - off] : P::identity();
        __syncthreads();
        if (tid >= off) sm[tid] = P::combine(t, sm[tid]);
        __syncthreads();
      }
      const Acc prefix = P::combine(carry, tid > 0 ? sm[tid - 1] : P::identity());
#pragma unroll
      for (int k = 0; k < kScanK; ++k) {
        const int64_t j = j0 + k;
        if (j < g.len) out[oa + j * g.out_axis_stride] = red::to_out<Out>(P::combine(prefix, v[k]));
      }
      carry = P::combine(carry, sm[kThreads - 1]);
      __syncthreads();  // every thread has read sm before the next tile writes it
    }
  }
}

template <int OP, class T>
void launch_scan(const char* in, void* out0, const ScanGeometry& g, cudaStream_t st) {
  auto* out = static_cast<typename red::Policy<OP, T>::Out*>(out0);
  // The kernel (so the order of the additions) depends on the shape alone (kPlanSMs); the
  // block count of the block kernel, which only spreads whole lines, on the device.
  const int64_t sms = sm_count();
  if (g.len >= 512 && g.nlines < kPlanSMs * 512) {
    const int64_t blocks = g.nlines < sms * 8 ? g.nlines : sms * 8;
    scan_block_kernel<OP, T><<<static_cast<unsigned>(blocks), kThreads, 0, st>>>(in, out, g);
  } else {
    scan_kernel<OP, T><<<grid_for(g.nlines), kThreads, 0, st>>>(in, out, g);
  }
}

template <class T>
int scan_t(bool product, const char* in, void* out, const ScanGeometry& g, cudaStream_t st) {
  if (product) launch_scan<RProd, T>(in, out, g, st);
  else launch_scan<RSum, T>(in, out, g, st);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int cumulate(bool product, int dtype, const char* in, void* out, const ScanGeometry& g, void* stream) {
  if (g.nlines == 0 || g.len == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
#define UMA_SCAN(CODE, T) case CODE: return scan_t<T>(product, in, out, g, st);
    UMA_SCAN(kBool, bool8) UMA_SCAN(kInt8, int8_t) UMA_SCAN(kInt16, int16_t) UMA_SCAN(kInt32, int32_t)
    UMA_SCAN(kInt64, int64_t) UMA_SCAN(kUInt8, uint8_t) UMA_SCAN(kUInt16, uint16_t) UMA_SCAN(kUInt32, uint32_t)
    UMA_SCAN(kUInt64, uint64_t) UMA_SCAN(kFloat16, __half) UMA_SCAN(kBFloat16, __nv_bfloat16) UMA_SCAN(kFloat32, float)
    UMA_SCAN(kFloat64, double) UMA_SCAN(kComplex64, cuda_dev::Cx<float>) UMA_SCAN(kComplex128, cuda_dev::Cx<double>)
#undef UMA_SCAN
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
