// Elementwise binary and unary kernels (launchers in kernels/cuda/ops_launch.h).
//
// Two paths per (op, dtype): a dense one (every operand contiguous or a scalar) that moves
// 16 bytes per load when the pointers are 16-byte aligned, and a general strided one that
// computes each operand's offset from the merged shape. Both are grid-stride loops.
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"

namespace uma::kernels::cuda_launch {

using namespace cuda_dev;

namespace {

template <class T>
constexpr int vec_width() { return sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T)); }

template <class T, int OP, int V>
__global__ void binary_dense(const T* __restrict__ a, const T* __restrict__ b, bool sa, bool sb,
                             BinOut<T, OP>* __restrict__ out, int64_t n) {
  using O = BinOut<T, OP>;
  const int64_t nv = V > 1 ? n / V : 0;
  const T a0 = sa ? a[0] : T(), b0 = sb ? b[0] : T();
  for (int64_t i = global_index(); i < nv; i += grid_step()) {
    Vec<T, V> va, vb;
    if (!sa) va = reinterpret_cast<const Vec<T, V>*>(a)[i];
    if (!sb) vb = reinterpret_cast<const Vec<T, V>*>(b)[i];
    Vec<O, V> vo;
#pragma unroll
    for (int k = 0; k < V; ++k) vo.v[k] = apply_binary<T, OP>(sa ? a0 : va.v[k], sb ? b0 : vb.v[k]);
    reinterpret_cast<Vec<O, V>*>(out)[i] = vo;
  }
  for (int64_t i = nv * V + global_index(); i < n; i += grid_step())
    out[i] = apply_binary<T, OP>(sa ? a0 : a[i], sb ? b0 : b[i]);
}

template <class T, int OP>
__global__ void binary_strided(Operand a, Operand b, BinOut<T, OP>* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    const T x = *reinterpret_cast<const T*>(a.ptr + offset_of(i, s, a));
    const T y = *reinterpret_cast<const T*>(b.ptr + offset_of(i, s, b));
    out[i] = apply_binary<T, OP>(x, y);
  }
}

template <class T, int OP>
int launch_binary(const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) {
  using O = BinOut<T, OP>;
  constexpr int V = vec_width<T>();
  if (s.dense) {
    const bool sa = is_scalar_operand(s, a), sb = is_scalar_operand(s, b);
    const bool al = (sa || aligned16(a.ptr)) && (sb || aligned16(b.ptr)) && aligned16(out);
    if (al) {
      binary_dense<T, OP, V><<<grid_for((s.n + V - 1) / V), kThreads, 0, st>>>(
          reinterpret_cast<const T*>(a.ptr), reinterpret_cast<const T*>(b.ptr), sa, sb, static_cast<O*>(out), s.n);
    } else {
      binary_dense<T, OP, 1><<<grid_for(s.n), kThreads, 0, st>>>(
          reinterpret_cast<const T*>(a.ptr), reinterpret_cast<const T*>(b.ptr), sa, sb, static_cast<O*>(out), s.n);
    }
  } else {
    binary_strided<T, OP><<<grid_for(s.n), kThreads, 0, st>>>(a, b, static_cast<O*>(out), s);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T, int OP, int V>
__global__ void unary_dense(const T* __restrict__ a, UnOut<T, OP>* __restrict__ out, int64_t n) {
  using O = UnOut<T, OP>;
  const int64_t nv = V > 1 ? n / V : 0;
  for (int64_t i = global_index(); i < nv; i += grid_step()) {
    const Vec<T, V> va = reinterpret_cast<const Vec<T, V>*>(a)[i];
    Vec<O, V> vo;
#pragma unroll
    for (int k = 0; k < V; ++k) vo.v[k] = apply_unary<T, OP>(va.v[k]);
    reinterpret_cast<Vec<O, V>*>(out)[i] = vo;
  }
  for (int64_t i = nv * V + global_index(); i < n; i += grid_step()) out[i] = apply_unary<T, OP>(a[i]);
}

template <class T, int OP>
__global__ void unary_strided(Operand a, UnOut<T, OP>* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step())
    out[i] = apply_unary<T, OP>(*reinterpret_cast<const T*>(a.ptr + offset_of(i, s, a)));
}

template <class T, int OP>
int launch_unary(const Operand& a, void* out, const Space& s, cudaStream_t st) {
  using O = UnOut<T, OP>;
  constexpr int V = vec_width<T>();
  // A dense unary operand that is a scalar (all strides 0) has n == 1 after merging.
  if (s.dense && aligned16(a.ptr) && aligned16(out)) {
    unary_dense<T, OP, V><<<grid_for((s.n + V - 1) / V), kThreads, 0, st>>>(reinterpret_cast<const T*>(a.ptr),
                                                                           static_cast<O*>(out), s.n);
  } else if (s.dense && !is_scalar_operand(s, a)) {
    unary_dense<T, OP, 1><<<grid_for(s.n), kThreads, 0, st>>>(reinterpret_cast<const T*>(a.ptr), static_cast<O*>(out),
                                                              s.n);
  } else {
    unary_strided<T, OP><<<grid_for(s.n), kThreads, 0, st>>>(a, static_cast<O*>(out), s);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int binary_t(int op, const Operand& a, const Operand& b, void* out, const Space& s, cudaStream_t st) {
  switch (op) {
#define UMA_BIN(OPC) case OPC: return launch_binary<T, OPC>(a, b, out, s, st);
    UMA_BIN(Add) UMA_BIN(Subtract) UMA_BIN(Multiply) UMA_BIN(Maximum) UMA_BIN(Minimum)
    UMA_BIN(Equal) UMA_BIN(NotEqual) UMA_BIN(Less) UMA_BIN(LessEqual) UMA_BIN(Greater) UMA_BIN(GreaterEqual)
    UMA_BIN(LogicalAnd) UMA_BIN(LogicalOr)
#undef UMA_BIN
    default: break;
  }
  if constexpr (!std::is_same_v<T, bool>) {
    switch (op) {
      case Divide: return launch_binary<T, Divide>(a, b, out, s, st);
      case Power: return launch_binary<T, Power>(a, b, out, s, st);
      case FloorDivide: return launch_binary<T, FloorDivide>(a, b, out, s, st);
      case Remainder: return launch_binary<T, Remainder>(a, b, out, s, st);
      default: break;
    }
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

template <class T>
int unary_t(int op, const Operand& a, void* out, const Space& s, cudaStream_t st) {
  switch (op) {
#define UMA_UN(OPC) case OPC: return launch_unary<T, OPC>(a, out, s, st);
    UMA_UN(Negative) UMA_UN(Abs) UMA_UN(Sign) UMA_UN(LogicalNot) UMA_UN(Square) UMA_UN(Floor) UMA_UN(Ceil)
#undef UMA_UN
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
#define UMA_UN(OPC) case OPC: return launch_unary<T, OPC>(a, out, s, st);
      UMA_UN(Exp) UMA_UN(Log) UMA_UN(Log1p) UMA_UN(Expm1) UMA_UN(Sqrt) UMA_UN(Tanh) UMA_UN(Sigmoid) UMA_UN(Sin)
      UMA_UN(Cos)
#undef UMA_UN
      default: break;
    }
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace

int binary(int op, int dtype, const Operand& a, const Operand& b, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kBool: return binary_t<bool>(op, a, b, out, s, st);
    case kInt32: return binary_t<int32_t>(op, a, b, out, s, st);
    case kInt64: return binary_t<int64_t>(op, a, b, out, s, st);
    case kFloat32: return binary_t<float>(op, a, b, out, s, st);
    case kFloat64: return binary_t<double>(op, a, b, out, s, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int unary(int op, int dtype, const Operand& a, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kBool: return unary_t<bool>(op, a, out, s, st);
    case kInt32: return unary_t<int32_t>(op, a, out, s, st);
    case kInt64: return unary_t<int64_t>(op, a, out, s, st);
    case kFloat32: return unary_t<float>(op, a, out, s, st);
    case kFloat64: return unary_t<double>(op, a, out, s, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int sm_count() {
  static int count = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        sms <= 0)
      sms = 132;
    return sms;
  }();
  return count;
}

}  // namespace uma::kernels::cuda_launch
