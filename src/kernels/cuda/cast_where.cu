// Casts between every pair of dtypes and where() (launchers in kernels/cuda/ops_launch.h).
// float16/bfloat16 convert through float32 (to float16 from float64 directly; to bfloat16 from
// anything wider than float32 rounded once, kernels/to_bfloat16.h), a bool element (bool8) is
// read as byte != 0 and written as 0 or 1;
// complex to real takes the real part, complex to bool tests both parts, real to complex has
// a zero imaginary part (the cpu kernels' convert, kernels/cpu/convert.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/grid.cuh"
#include "kernels/float_to_int.h"
#include "kernels/to_bfloat16.h"

namespace uma::kernels::cuda_launch {

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class From>
__device__ __forceinline__ auto widen(From x) {
  if constexpr (std::is_same_v<From, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<From, __nv_bfloat16>) return __bfloat162float(x);
  else if constexpr (std::is_same_v<From, bool8>) return static_cast<bool>(x);  // byte != 0
  else return x;
}

// NaN or out-of-range float -> integer: kernels/float_to_int.h (the cpu kernels' rule, not the
// GPU's saturating conversions).
template <class To, class From>
__device__ __forceinline__ To convert_real(From x0) {
  const auto x = widen(x0);
  using W = decltype(x);
  if constexpr (std::is_same_v<To, bool8>) return bool8(x != W(0));
  else if constexpr (std::is_same_v<To, __half>) {
    if constexpr (std::is_same_v<W, double>) return __double2half(x);
    else return __float2half_rn(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {  // rounded once (kernels/to_bfloat16.h)
    if constexpr (std::is_same_v<W, float>) return __float2bfloat16_rn(x);
    __nv_bfloat16_raw r;
    if constexpr (std::is_integral_v<W>) r.x = kernels::bfloat16_bits_of(x);
    else r.x = kernels::bfloat16_bits(static_cast<double>(x));
    return __nv_bfloat16(r);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<W>) {
    return kernels::float_to_int<To>(static_cast<double>(x));
  } else {
    return static_cast<To>(x);
  }
}

using cuda_dev::Cx;
using cuda_dev::is_cx_v;

template <class To, class From>
__device__ __forceinline__ To convert(From x0) {
  if constexpr (is_cx_v<From>) {
    if constexpr (is_cx_v<To>) {
      using R = cuda_dev::real_t<To>;
      return To{static_cast<R>(x0.re), static_cast<R>(x0.im)};
    } else if constexpr (std::is_same_v<To, bool8>) {
      return bool8(x0.re != 0 || x0.im != 0);
    } else {
      return convert<To>(x0.re);
    }
  } else if constexpr (is_cx_v<To>) {
    using R = cuda_dev::real_t<To>;
    return To{static_cast<R>(widen(x0)), R(0)};
  } else {
    return convert_real<To>(x0);
  }
}

template <class From, class To>
__global__ void cast_kernel(Operand a, To* __restrict__ out, Space s) {
  if (s.dense) {
    const From* p = reinterpret_cast<const From*>(a.ptr);
    for (int64_t i = global_index(); i < s.n; i += grid_step()) out[i] = convert<To>(p[i]);
  } else {
    for (int64_t i = global_index(); i < s.n; i += grid_step())
      out[i] = convert<To>(*reinterpret_cast<const From*>(a.ptr + offset_of(i, s, a)));
  }
}

template <class From>
int cast_from(int to, const Operand& a, void* out, const Space& s, cudaStream_t st) {
  const unsigned g = grid_for(s.n);
  switch (to) {
#define UMA_TO(CODE, T) \
  case CODE: cast_kernel<From, T><<<g, kThreads, 0, st>>>(a, static_cast<T*>(out), s); break;
    UMA_TO(kBool, bool8) UMA_TO(kInt8, int8_t) UMA_TO(kInt16, int16_t) UMA_TO(kInt32, int32_t) UMA_TO(kInt64, int64_t)
    UMA_TO(kUInt8, uint8_t) UMA_TO(kUInt16, uint16_t) UMA_TO(kUInt32, uint32_t) UMA_TO(kUInt64, uint64_t)
    UMA_TO(kFloat16, __half) UMA_TO(kBFloat16, __nv_bfloat16) UMA_TO(kFloat32, float) UMA_TO(kFloat64, double)
    UMA_TO(kComplex64, Cx<float>) UMA_TO(kComplex128, Cx<double>)
#undef UMA_TO
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

template <class T>
__global__ void where_kernel(Operand c, Operand x, Operand y, T* __restrict__ out, Space s) {
  for (int64_t i = global_index(); i < s.n; i += grid_step()) {
    const bool cond = *reinterpret_cast<const bool8*>(c.ptr + offset_of(i, s, c));  // byte != 0
    const Operand& src = cond ? x : y;
    out[i] = *reinterpret_cast<const T*>(src.ptr + offset_of(i, s, src));
  }
}

template <int B>
struct alignas(B) Raw {
  unsigned char b[B];
};

}  // namespace

int cast(int from, int to, const Operand& a, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (from) {
    case kBool: return cast_from<bool8>(to, a, out, s, st);
    case kInt8: return cast_from<int8_t>(to, a, out, s, st);
    case kInt16: return cast_from<int16_t>(to, a, out, s, st);
    case kInt32: return cast_from<int32_t>(to, a, out, s, st);
    case kInt64: return cast_from<int64_t>(to, a, out, s, st);
    case kUInt8: return cast_from<uint8_t>(to, a, out, s, st);
    case kUInt16: return cast_from<uint16_t>(to, a, out, s, st);
    case kUInt32: return cast_from<uint32_t>(to, a, out, s, st);
    case kUInt64: return cast_from<uint64_t>(to, a, out, s, st);
    case kFloat16: return cast_from<__half>(to, a, out, s, st);
    case kBFloat16: return cast_from<__nv_bfloat16>(to, a, out, s, st);
    case kFloat32: return cast_from<float>(to, a, out, s, st);
    case kFloat64: return cast_from<double>(to, a, out, s, st);
    case kComplex64: return cast_from<Cx<float>>(to, a, out, s, st);
    case kComplex128: return cast_from<Cx<double>>(to, a, out, s, st);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int where(int itemsize, const Operand& c, const Operand& x, const Operand& y, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  const unsigned g = grid_for(s.n);
  switch (itemsize) {
    case 1: where_kernel<Raw<1>><<<g, kThreads, 0, st>>>(c, x, y, static_cast<Raw<1>*>(out), s); break;
    case 2: where_kernel<Raw<2>><<<g, kThreads, 0, st>>>(c, x, y, static_cast<Raw<2>*>(out), s); break;
    case 4: where_kernel<Raw<4>><<<g, kThreads, 0, st>>>(c, x, y, static_cast<Raw<4>*>(out), s); break;
    case 8: where_kernel<Raw<8>><<<g, kThreads, 0, st>>>(c, x, y, static_cast<Raw<8>*>(out), s); break;
    case 16: where_kernel<Raw<16>><<<g, kThreads, 0, st>>>(c, x, y, static_cast<Raw<16>*>(out), s); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace uma::kernels::cuda_launch
