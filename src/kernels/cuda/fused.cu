// Fused elementwise chains on cuda devices (launcher in kernels/cuda/ops_launch.h): one kernel
// runs a chain's instructions (uma::FusedInstr, passed as a FusedCode) on each element, in
// registers, and writes only the chain's result.
//
// Note [Fused chains on cuda]
// Each instruction computes exactly what its op's own kernel computes (apply_binary /
// apply_unary of device_ops.cuh, the same scalar routines), and each instruction's result is
// materialised as a value of the chain's dtype before the next reads it (`settle` in
// fused_chain.cuh), so neither NVVM nor ptxas can contract a product and a sum of different
// instructions into one FMA. Hence the chain's result is bit for bit the unfused ops', as on
// the host (kernels/cpu/fused.cpp). The kernels here interpret the chain; a chain over a
// blocked space usually runs a kernel generated for it instead (Note [Generated chain
// kernels] in chain_compiler.cpp), with the same results. A comparison's register holds 1 or 0 of the chain's dtype,
// read only as a where's condition (FusedInstr::select).
#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/fused_chain.cuh"
#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/tiled_gemm.cuh"

#include <cstdint>

namespace uma::kernels::cuda_launch {

namespace {

using namespace cuda_dev;

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

template <class T>
__device__ void run_binary(int op, Pack<T>& o, const Pack<T>& a, const Pack<T>& b) {
  switch (op) {
#define UMA_FUSED_BIN(Id, ...) case Id: bin_pack<T, Id>(o, a, b, 0); return;
    UMA_BINARY_OPS(UMA_FUSED_BIN)
#undef UMA_FUSED_BIN
    default: __trap();
  }
}

template <class T>
__device__ void run_unary(int op, Pack<T>& o, const Pack<T>& a) {
  switch (op) {
#define UMA_FUSED_UN(Id, ...) case Id: un_pack<T, Id>(o, a, 0); return;
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
    if (code.kind[k] == kFusedBinary) run_binary<T>(code.op[k], o, r[code.a[k]], r[code.b[k]]);
    else if (code.kind[k] == kFusedUnary) run_unary<T>(code.op[k], o, r[code.a[k]]);
    else select_pack(o, r[code.a[k]], r[code.b[k]], r[code.c[k]]);
  }
  return r[nin + ncode - 1];
}

// The operands' loads of a pack are issued before any is used (the first kPrefetch<T> operands
// into registers: 64 bytes of packs, as many as the register budget of __launch_bounds__ holds
// without spilling), so that they are in flight together.
template <class T>
constexpr int kPrefetch = 64 / static_cast<int>(sizeof(Pack<T>));

// A blocked space (every operand read as FusedBlocked says; I: 32-bit index arithmetic where
// the space has fewer than 2^32 elements). `out_vec`: the output is 16-byte aligned.
template <class T, class I>
__global__ void __launch_bounds__(kThreads, 4) fused_blocked(FusedBlocked in, FusedCode code, T* __restrict__ out, int64_t n,
                                                              bool out_vec) {
  Pack<T> r[kFusedInputs + kFusedCode];
  const int nin = code.nin;
  for (int64_t i = global_index() * kPack; i < n; i += grid_step() * kPack) {
    const bool whole = i + kPack <= n;
    Pack<T> x[kPrefetch<T>];
#pragma unroll
    for (int k = 0; k < kPrefetch<T>; ++k)
      if (k < nin) blocked_load<T, I>(x[k], in, k, i, n, whole);
    for (int k = kPrefetch<T>; k < nin; ++k) blocked_load<T, I>(r[k], in, k, i, n, whole);
#pragma unroll
    for (int k = 0; k < kPrefetch<T>; ++k)
      if (k < nin) r[k] = x[k];
    store_pack(out, run_code(code, r), i, n, whole, out_vec);
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

// Operand k of the merged space as a blocked read (FusedBlocked), or false where its strides
// are not one C-contiguous run of axes with zero strides around it.
bool as_blocked(const Operand& o, const Space& s, int64_t itemsize, FusedBlocked& b, int k) {
  int end = s.ndim;  // the run is the axes [begin, end)
  while (end > 0 && o.byte_strides[end - 1] == 0) --end;
  b.ptr[k] = o.ptr;
  b.div[k] = 1;
  b.mod[k] = 0;
  b.step[k] = end == 0 ? 0 : itemsize;
  if (end == 0) return true;  // a scalar
  if (o.byte_strides[end - 1] != itemsize) return false;
  int begin = end - 1;
  int64_t run = s.shape[end - 1];
  for (; begin > 0 && o.byte_strides[begin - 1] == itemsize * run; --begin) run *= s.shape[begin - 1];
  for (int d = 0; d < begin; ++d)
    if (o.byte_strides[d] != 0) return false;
  for (int d = end; d < s.ndim; ++d) b.div[k] *= s.shape[d];
  if (begin > 0) b.mod[k] = run;
  const bool consecutive = b.div[k] == 1 && b.mod[k] % kPack == 0;  // a pack never wraps
  if (consecutive && aligned16(o.ptr)) b.vec |= 1u << k;
  if (b.div[k] % kPack == 0) b.splat |= 1u << k;
  return true;
}

template <class T>
int launch(const FusedOperands& in, const FusedCode& code, void* out, const Space& s, cudaStream_t st) {
  T* o = static_cast<T*>(out);
  const unsigned grid = grid_for((s.n + kPack - 1) / kPack);
  const bool small = s.n <= static_cast<int64_t>(UINT32_MAX);
  bool out_vec = aligned16(out);  // a kernel argument (cudaLaunchKernel takes its address)
  FusedBlocked b{};
  bool blocked = true;
  for (int k = 0; k < code.nin && blocked; ++k) blocked = as_blocked(in.op[k], s, sizeof(T), b, k);
  if (blocked) {
    if (const void* kernel = chain_kernel(dt_of<T>(), code, !small)) {  // Note [Generated chain kernels]
      int64_t n = s.n;
      void* args[] = {&b, &o, &n, &out_vec};
      return static_cast<int>(cudaLaunchKernel(kernel, dim3(grid), dim3(kThreads), args, 0, st));
    }
  }
  if (blocked && small) {
    fused_blocked<T, uint32_t><<<grid, kThreads, 0, st>>>(b, code, o, s.n, out_vec);
  } else if (blocked) {
    fused_blocked<T, int64_t><<<grid, kThreads, 0, st>>>(b, code, o, s.n, out_vec);
  } else if (small) {
    fused_strided<T, uint32_t><<<grid, kThreads, 0, st>>>(in, code, o, s);
  } else {
    fused_strided<T, int64_t><<<grid, kThreads, 0, st>>>(in, code, o, s);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int launch_epilogue(const void* a, const void* b, const TiledGemm& g, const FusedOperands& in, const FusedCode& code,
                    void* out, const Space& s, cudaStream_t st) {
  FusedBlocked blocked{};
  for (int k = 0; k < code.nin; ++k)
    if (!as_blocked(in.op[k], s, sizeof(T), blocked, k)) return kNotFused;
  const void* kernel = epilogue_kernel(dt_of<T>(), code);
  if (!kernel) return kNotFused;
  const int64_t tiles = g.batch * ((g.M + kTile - 1) / kTile) * ((g.N + kTile - 1) / kTile);
  const unsigned blocks = static_cast<unsigned>(tiled_gemm_blocks(tiles, sm_count()));
  TiledGemm geometry = g;
  void* args[] = {&a, &b, &out, &geometry, &blocked};
  return static_cast<int>(cudaLaunchKernel(kernel, dim3(blocks), dim3(kTile, kTile), args, 0, st));
}

template <class T>
int launch_reduce_epilogue(bool mean, const char* in, const ReduceGeometry& g, int64_t splits, void* partial,
                           const FusedOperands& ops, const FusedCode& code, void* out, const Space& s,
                           cudaStream_t st) {
  if (!red::inner_kept(g, sizeof(T)) || splits < 1 || !red::finishes_in_one_kernel(g, splits) ||
      (splits > 1 && partial == nullptr))
    return kNotFused;
  FusedBlocked blocked{};
  for (int k = 0; k < code.nin; ++k)
    if (!as_blocked(ops.op[k], s, sizeof(T), blocked, k)) return kNotFused;
  const void* kernel = reduce_epilogue_kernel(dt_of<T>(), mean, code);
  if (!kernel) return kNotFused;
  ReduceGeometry geometry = g;
  void* args[] = {&in, &out, &geometry, &splits, &partial, &blocked};
  const dim3 grid(static_cast<unsigned>(red::column_blocks(g)), static_cast<unsigned>(splits));
  return static_cast<int>(cudaLaunchKernel(kernel, grid, dim3(kThreads), args, 0, st));
}

}  // namespace

int column_reduce_chain(int op, int dtype, const char* in, const ReduceGeometry& g, int64_t splits, void* partial,
                        const FusedOperands& ops, const FusedCode& code, void* out, const Space& s, void* stream) {
  if (code.nin < 1 || code.nin > kFusedInputs || code.ncode < 1 || code.ncode > kFusedCode) return kInvalid;
  if (op != RSum && op != RMean) return kNotFused;
  if (s.n == 0 || s.n != g.nout || s.n >= static_cast<int64_t>(UINT32_MAX)) return kNotFused;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kFloat32: return launch_reduce_epilogue<float>(op == RMean, in, g, splits, partial, ops, code, out, s, st);
    case kFloat64: return launch_reduce_epilogue<double>(op == RMean, in, g, splits, partial, ops, code, out, s, st);
    default: return kNotFused;
  }
}

int tiled_matmul_chain(int dtype, const void* a, const void* b, const TiledGemm& g, const FusedOperands& in,
                       const FusedCode& code, void* out, const Space& s, void* stream) {
  if (code.nin < 1 || code.nin > kFusedInputs || code.ncode < 1 || code.ncode > kFusedCode) return kInvalid;
  if (s.n == 0 || s.n >= static_cast<int64_t>(UINT32_MAX)) return kNotFused;  // the kernel indexes in 32 bits
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kFloat32: return launch_epilogue<float>(a, b, g, in, code, out, s, st);
    case kFloat64: return launch_epilogue<double>(a, b, g, in, code, out, s, st);
    default: return kNotFused;
  }
}

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
