// Reductions (launchers in kernels/cuda/ops_launch.h).
//
// Output element o reduces the elements at offset_kept(o) + offset_red(r). Two kernels:
// - thread per output (few reduced elements, or the innermost axis is kept so neighbouring
//   threads read neighbouring addresses: coalesced);
// - `splits` blocks per output, each reducing a contiguous range of r with a shared-memory
//   tree; with splits > 1 the blocks write partial accumulators to a workspace that a
//   second kernel combines (a full reduction of a large array uses the whole GPU).
// Accumulators: double for float sums/means/products, int64 (wrapping) for integers and
// bool, the element type for max/min, (value, index) for argmax/argmin (first occurrence;
// NaN wins, as in NumPy).
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/grid.cuh"

namespace uma::kernels::cuda_launch {

namespace {

enum Red : int { Sum, Mean, Max, Min, Prod, ArgMax, ArgMin, All, Any };

template <class T>
__device__ __forceinline__ bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x; else return false;
}

// The lowest / highest value of T (identities of max / min; -inf / +inf for floats).
template <class T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::is_same_v<T, bool>) return false;
  else if constexpr (std::is_same_v<T, float>) return -__int_as_float(0x7f800000);
  else if constexpr (std::is_same_v<T, double>) return -__longlong_as_double(0x7ff0000000000000LL);
  else if constexpr (std::is_same_v<T, int32_t>) return INT32_MIN;
  else return INT64_MIN;
}
template <class T>
__device__ __forceinline__ T highest() {
  if constexpr (std::is_same_v<T, bool>) return true;
  else if constexpr (std::is_same_v<T, float>) return __int_as_float(0x7f800000);
  else if constexpr (std::is_same_v<T, double>) return __longlong_as_double(0x7ff0000000000000LL);
  else if constexpr (std::is_same_v<T, int32_t>) return INT32_MAX;
  else return INT64_MAX;
}

template <class T>
struct ArgAcc {
  T v;
  int64_t i;  // -1: empty
};

template <int OP, class T>
struct Policy {
  static constexpr bool flt = std::is_floating_point_v<T>;
  using Acc = std::conditional_t<OP == ArgMax || OP == ArgMin, ArgAcc<T>,
              std::conditional_t<OP == Max || OP == Min, T,
              std::conditional_t<OP == All || OP == Any, bool, std::conditional_t<flt, double, int64_t>>>>;
  using Out = std::conditional_t<OP == ArgMax || OP == ArgMin, int64_t,
              std::conditional_t<OP == All || OP == Any, bool,
              std::conditional_t<OP == Mean, std::conditional_t<flt, T, double>,
              std::conditional_t<OP == Max || OP == Min, T, std::conditional_t<flt, T, int64_t>>>>>;

  __device__ static Acc identity() {
    if constexpr (OP == ArgMax || OP == ArgMin) return Acc{T(), -1};
    else if constexpr (OP == All) return true;
    else if constexpr (OP == Any) return false;
    else if constexpr (OP == Prod) return Acc(1);
    else if constexpr (OP == Max) return lowest<T>();
    else if constexpr (OP == Min) return highest<T>();
    else return Acc(0);
  }
  __device__ static Acc load(T x, int64_t r) {
    if constexpr (OP == ArgMax || OP == ArgMin) return Acc{x, r};
    else if constexpr (OP == All || OP == Any) return x != T(0);
    else return static_cast<Acc>(x);
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (OP == Sum || OP == Mean) {
      if constexpr (flt) return a + b;
      else return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else if constexpr (OP == Prod) {
      if constexpr (flt) return a * b;
      else return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else if constexpr (OP == Max) {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return a > b ? a : b;
    } else if constexpr (OP == Min) {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return a < b ? a : b;
    } else if constexpr (OP == All) return a && b;
    else if constexpr (OP == Any) return a || b;
    else {  // ArgMax / ArgMin: order independent (ties and NaNs go to the smaller index)
      if (a.i < 0) return b;
      if (b.i < 0) return a;
      const bool an = is_nan(a.v), bn = is_nan(b.v);
      if (an || bn) {
        if (an && bn) return a.i < b.i ? a : b;
        return an ? a : b;
      }
      if (a.v == b.v) return a.i < b.i ? a : b;
      if constexpr (OP == ArgMax) return a.v > b.v ? a : b;
      else return a.v < b.v ? a : b;
    }
  }
  __device__ static Out finish(Acc a, int64_t n) {
    if constexpr (OP == ArgMax || OP == ArgMin) return a.i < 0 ? 0 : a.i;
    else if constexpr (OP == Mean) return static_cast<Out>(static_cast<double>(a) / static_cast<double>(n));
    else return static_cast<Out>(a);
  }
};

__device__ __forceinline__ int64_t kept_offset(int64_t o, const ReduceGeometry& g) {
  int64_t off = 0;
  for (int d = g.nkept - 1; d >= 0; --d) {
    const int64_t q = o / g.kept_shape[d];
    off += (o - q * g.kept_shape[d]) * g.kept_strides[d];
    o = q;
  }
  return off;
}
__device__ __forceinline__ int64_t red_offset(int64_t r, const ReduceGeometry& g) {
  if (g.nred == 1) return r * g.red_strides[0];
  int64_t off = 0;
  for (int d = g.nred - 1; d >= 0; --d) {
    const int64_t q = r / g.red_shape[d];
    off += (r - q * g.red_shape[d]) * g.red_strides[d];
    r = q;
  }
  return off;
}

template <int OP, class T>
__global__ void reduce_per_thread(const char* __restrict__ in, typename Policy<OP, T>::Out* __restrict__ out,
                                  ReduceGeometry g) {
  using P = Policy<OP, T>;
  for (int64_t o = global_index(); o < g.nout; o += grid_step()) {
    const char* base = in + kept_offset(o, g);
    typename P::Acc acc = P::identity();
    for (int64_t r = 0; r < g.rsize; ++r)
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(base + red_offset(r, g)), r));
    out[o] = P::finish(acc, g.rsize);
  }
}

template <int OP, class T>
__device__ typename Policy<OP, T>::Acc block_reduce(typename Policy<OP, T>::Acc acc) {
  using P = Policy<OP, T>;
  using Acc = typename P::Acc;
  __shared__ Acc sm[kThreads];
  sm[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) sm[threadIdx.x] = P::combine(sm[threadIdx.x], sm[threadIdx.x + w]);
    __syncthreads();
  }
  return sm[0];
}

// Block b reduces output b / splits over chunk b % splits of the reduced range. `dense`: one
// reduced axis of unit element stride, read 16 bytes at a time when aligned.
template <int OP, class T>
__global__ void reduce_blocks(const char* __restrict__ in, typename Policy<OP, T>::Out* __restrict__ out,
                              typename Policy<OP, T>::Acc* __restrict__ partial, ReduceGeometry g, int64_t splits,
                              bool dense) {
  using P = Policy<OP, T>;
  using Acc = typename P::Acc;
  const int64_t o = blockIdx.x / splits, s = blockIdx.x % splits;
  const int64_t chunk = (g.rsize + splits - 1) / splits;
  const int64_t lo = s * chunk, hi = lo + chunk < g.rsize ? lo + chunk : g.rsize;
  const char* base = in + kept_offset(o, g);
  Acc acc = P::identity();
  constexpr int V = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));
  if (dense && V > 1 && OP != ArgMax && OP != ArgMin) {
    const T* p = reinterpret_cast<const T*>(base);
    // Aligned middle part [vlo, vhi) read as 16-byte vectors.
    int64_t vlo = lo;
    while (vlo < hi && (reinterpret_cast<uintptr_t>(p + vlo) & 15) != 0) ++vlo;
    const int64_t nv = (hi - vlo) / V, vhi = vlo + nv * V;
    for (int64_t r = lo + threadIdx.x; r < vlo; r += blockDim.x) acc = P::combine(acc, P::load(p[r], r));
    const Vec<T, V>* pv = reinterpret_cast<const Vec<T, V>*>(p + vlo);
    for (int64_t k = threadIdx.x; k < nv; k += blockDim.x) {
      const Vec<T, V> v = pv[k];
#pragma unroll
      for (int j = 0; j < V; ++j) acc = P::combine(acc, P::load(v.v[j], vlo + k * V + j));
    }
    for (int64_t r = vhi + threadIdx.x; r < hi; r += blockDim.x) acc = P::combine(acc, P::load(p[r], r));
  } else {
    for (int64_t r = lo + threadIdx.x; r < hi; r += blockDim.x)
      acc = P::combine(acc, P::load(*reinterpret_cast<const T*>(base + red_offset(r, g)), r));
  }
  acc = block_reduce<OP, T>(acc);
  if (threadIdx.x == 0) {
    if (splits == 1) out[o] = P::finish(acc, g.rsize);
    else partial[blockIdx.x] = acc;
  }
}

template <int OP, class T>
__global__ void reduce_finish(const typename Policy<OP, T>::Acc* __restrict__ partial,
                              typename Policy<OP, T>::Out* __restrict__ out, int64_t nout, int64_t splits, int64_t rsize) {
  using P = Policy<OP, T>;
  const int64_t o = blockIdx.x;
  typename P::Acc acc = P::identity();
  for (int64_t s = threadIdx.x; s < splits; s += blockDim.x) acc = P::combine(acc, partial[o * splits + s]);
  acc = block_reduce<OP, T>(acc);
  if (threadIdx.x == 0 && o < nout) out[o] = P::finish(acc, rsize);
}

template <int OP, class T>
int launch(const char* in, void* out0, const ReduceGeometry& g, int64_t splits, void* ws, cudaStream_t st) {
  using P = Policy<OP, T>;
  auto* out = static_cast<typename P::Out*>(out0);
  if (splits == 0) {
    reduce_per_thread<OP, T><<<grid_for(g.nout), kThreads, 0, st>>>(in, out, g);
  } else {
    const bool dense = g.nred == 1 && g.red_strides[0] == static_cast<int64_t>(sizeof(T));
    auto* partial = static_cast<typename P::Acc*>(ws);
    reduce_blocks<OP, T><<<static_cast<unsigned>(g.nout * splits), kThreads, 0, st>>>(in, out, partial, g, splits, dense);
    if (splits > 1)
      reduce_finish<OP, T><<<static_cast<unsigned>(g.nout), kThreads, 0, st>>>(partial, out, g.nout, splits, g.rsize);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int by_op(int op, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws, cudaStream_t st) {
  switch (op) {
    case Sum: return launch<Sum, T>(in, out, g, splits, ws, st);
    case Mean: return launch<Mean, T>(in, out, g, splits, ws, st);
    case Max: return launch<Max, T>(in, out, g, splits, ws, st);
    case Min: return launch<Min, T>(in, out, g, splits, ws, st);
    case Prod: return launch<Prod, T>(in, out, g, splits, ws, st);
    case ArgMax: return launch<ArgMax, T>(in, out, g, splits, ws, st);
    case ArgMin: return launch<ArgMin, T>(in, out, g, splits, ws, st);
    case All: return launch<All, T>(in, out, g, splits, ws, st);
    case Any: return launch<Any, T>(in, out, g, splits, ws, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class T>
int64_t acc_bytes(int op) {
  switch (op) {
    case Max: case Min: return sizeof(typename Policy<Max, T>::Acc);
    case ArgMax: case ArgMin: return sizeof(typename Policy<ArgMax, T>::Acc);
    case All: case Any: return sizeof(bool);
    default: return sizeof(typename Policy<Sum, T>::Acc);
  }
}

}  // namespace

int64_t reduce_acc_bytes(int op, int dtype) {
  switch (dtype) {
    case kBool: return acc_bytes<bool>(op);
    case kInt32: return acc_bytes<int32_t>(op);
    case kInt64: return acc_bytes<int64_t>(op);
    case kFloat32: return acc_bytes<float>(op);
    default: return acc_bytes<double>(op);
  }
}

int64_t reduce_splits(const ReduceGeometry& g, int itemsize) {
  if (g.nout == 0 || g.rsize == 0) return 0;
  const int64_t sms = sm_count();
  // Innermost axis kept (neighbouring outputs are neighbouring addresses) and enough outputs
  // to fill the GPU, or short rows: one thread per output.
  const bool inner_kept = g.nkept > 0 && g.kept_strides[g.nkept - 1] == itemsize;
  if (g.rsize <= 32 || (inner_kept && g.nout >= sms * 256)) return 0;
  // Otherwise blocks: enough of them for ~4 waves, each with at least 4096 elements.
  const int64_t target = sms * 8;
  int64_t splits = g.nout >= target ? 1 : (target + g.nout - 1) / g.nout;
  const int64_t max_by_size = (g.rsize + 4095) / 4096;
  if (splits > max_by_size) splits = max_by_size;
  if (splits < 1) splits = 1;
  return splits;
}

int reduce(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
           void* stream) {
  if (g.nout == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  // An empty reduced range: the per-thread kernel writes the identities.
  if (g.rsize == 0) splits = 0;
  switch (dtype) {
    case kBool: return by_op<bool>(op, in, out, g, splits, ws, st);
    case kInt32: return by_op<int32_t>(op, in, out, g, splits, ws, st);
    case kInt64: return by_op<int64_t>(op, in, out, g, splits, ws, st);
    case kFloat32: return by_op<float>(op, in, out, g, splits, ws, st);
    case kFloat64: return by_op<double>(op, in, out, g, splits, ws, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
