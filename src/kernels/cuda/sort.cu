// Sorting, searching and unique kernels (launchers in kernels/cuda/sort_launch.h): the radix
// keys of Note [Radix keys], the gathers through a sort's permutation, binary search, and the
// grouping of equal neighbours for unique. Grid-stride loops, 64-bit index arithmetic. CUB's
// sort and scan live in sort_cub.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/sort_launch.h"
#include "kernels/cuda/support.h"

namespace uma::kernels::cuda_launch {

namespace {

template <class R>
struct Cplx {
  R re, im;
};

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int last_error() { return static_cast<int>(cudaGetLastError()); }

// ---- radix keys (Note [Radix keys]) ----------------------------------------------------

__device__ __forceinline__ uint32_t float_key(float f) {
  if (f != f) return 0xffffffffu;  // every NaN: after +inf, all tied
  if (f == 0.0f) f = 0.0f;         // -0.0 ties with 0.0
  const uint32_t b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ uint64_t double_key(double f) {
  if (f != f) return ~uint64_t{0};
  if (f == 0.0) f = 0.0;
  const auto b = static_cast<uint64_t>(__double_as_longlong(f));
  return (b >> 63) ? ~b : (b | (uint64_t{1} << 63));
}

// NumPy's NaN class of a complex value: 0 for R + Rj, 1 for R + nanj, 2 for nan + Rj, 3 for
// nan + nanj (Note [Sort order] in kernels/cpu/sort.cpp: the classes come in this order).
template <class R>
__device__ __forceinline__ uint64_t nan_class(R re, R im) {
  return (re != re ? 2u : 0u) + (im != im ? 1u : 0u);
}

// complex64's one 64-bit key: (NaN class, real part, imaginary part) in order. A non-NaN float's
// key is below M = 2^32 - 1 (only NaN keys are all ones), so class 0 takes kr * M + ki < M^2,
// class 1 (ordered by its real part) M^2 + kr, class 2 (by its imaginary part) M^2 + M + ki and
// class 3 M^2 + 2M = 2^64 - 1: the 2^64 keys hold the order exactly.
__device__ __forceinline__ uint64_t complex64_key(float re, float im) {
  constexpr uint64_t M = 0xffffffffull;
  const uint64_t kr = float_key(re), ki = float_key(im);
  switch (nan_class(re, im)) {
    case 0: return kr * M + ki;
    case 1: return M * M + kr;
    case 2: return M * M + M + ki;
    default: return ~uint64_t{0};
  }
}

template <class T>
__device__ __forceinline__ float as_float(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}

// The key of one element: uint32_t or uint64_t (radix_key_bits); complex128's part `part`.
template <class T>
__device__ __forceinline__ auto key_of(const T& v, int part) {
  (void)part;
  if constexpr (std::is_same_v<T, bool8>) return static_cast<uint32_t>(static_cast<bool>(v) ? 1 : 0);
  else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) return float_key(as_float(v));
  else if constexpr (std::is_same_v<T, float>) return float_key(v);
  else if constexpr (std::is_same_v<T, double>) return double_key(v);
  else if constexpr (std::is_same_v<T, Cplx<float>>) return complex64_key(v.re, v.im);
  else if constexpr (std::is_same_v<T, Cplx<double>>)
    return part == 3 ? nan_class(v.re, v.im) : double_key(part == 2 ? v.im : v.re);
  else if constexpr (std::is_same_v<T, int64_t>) return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  else if constexpr (std::is_same_v<T, uint64_t>) return static_cast<uint64_t>(v);
  else if constexpr (std::is_signed_v<T>) return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
  else return static_cast<uint32_t>(v);
}

// The key type, spelled out: host code must not deduce it from key_of, whose return type the
// host compilation pass does not see (CUDA C++ Programming Guide, "Deduced return type"), or the
// host would launch a kernel the device code does not contain.
template <class T>
struct KeyOf {
  using type = std::conditional_t<std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                                      std::is_same_v<T, double> || std::is_same_v<T, Cplx<float>> ||
                                      std::is_same_v<T, Cplx<double>>,
                                  uint64_t, uint32_t>;
};

template <class T>
struct Tag {
  using type = T;
};

// A key of any dtype for comparisons (cls, then hi, then lo): the radix key above in hi;
// complex128's NaN class, real part's key and imaginary part's key.
struct Key2 {
  uint64_t cls, hi, lo;
};
template <class T>
__device__ __forceinline__ Key2 key2_of(const T& v) {
  if constexpr (std::is_same_v<T, Cplx<double>>) return {key_of(v, 3), key_of(v, 1), key_of(v, 2)};
  else return {0, static_cast<uint64_t>(key_of(v, 0)), 0};
}
__device__ __forceinline__ bool less(const Key2& a, const Key2& b) {
  if (a.cls != b.cls) return a.cls < b.cls;
  return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

// The standard's `==` on two elements.
template <class T>
__device__ __forceinline__ bool same(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<bool>(a) == static_cast<bool>(b);
  else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) return as_float(a) == as_float(b);
  else if constexpr (std::is_same_v<T, Cplx<float>> || std::is_same_v<T, Cplx<double>>)
    return a.re == b.re && a.im == b.im;
  else return a == b;
}

#define UMA_SORT_DTYPES(X)                                                                                     \
  X(kBool, bool8) X(kInt8, int8_t) X(kInt16, int16_t) X(kInt32, int32_t) X(kInt64, int64_t) X(kUInt8, uint8_t) \
  X(kUInt16, uint16_t) X(kUInt32, uint32_t) X(kUInt64, uint64_t) X(kFloat16, __half)                          \
  X(kBFloat16, __nv_bfloat16) X(kFloat32, float) X(kFloat64, double) X(kComplex64, Cplx<float>)              \
  X(kComplex128, Cplx<double>)

template <class F>
int by_dtype(int dtype, F&& f) {
#define UMA_SORT_CASE(CODE, T) \
  case CODE: return f(Tag<T>{});
  switch (dtype) {
    UMA_SORT_DTYPES(UMA_SORT_CASE)
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
#undef UMA_SORT_CASE
}

template <class T, class K>
__global__ void keys_kernel(const T* __restrict__ x, const int64_t* __restrict__ perm, int64_t row_len,
                            K* __restrict__ keys, int64_t n, int part) {
#ifdef __CUDA_ARCH__
  static_assert(std::is_same_v<decltype(key_of(*x, part)), K>, "KeyOf disagrees with key_of");
#endif
  for (int64_t i = global_index(); i < n; i += grid_step()) {
    const int64_t at = perm ? (i / row_len) * row_len + perm[i] : i;
    keys[i] = static_cast<K>(key_of(x[at], part));
  }
}

__global__ void row_setup_kernel(int64_t* __restrict__ offsets, int64_t rows, int64_t row_len,
                                 int64_t* __restrict__ values, int64_t n) {
  for (int64_t i = global_index(); i < n || i <= rows; i += grid_step()) {
    if (i <= rows) offsets[i] = i * row_len;
    if (i < n) values[i] = i % row_len;
  }
}

template <class T, bool AsBool>
__global__ void gather_rows_kernel(const T* __restrict__ x, const int64_t* __restrict__ perm, T* __restrict__ out,
                                   int64_t n, int64_t row_len) {
  for (int64_t i = global_index(); i < n; i += grid_step()) {
    const T v = x[(i / row_len) * row_len + perm[i]];
    if constexpr (AsBool) out[i] = static_cast<T>(v != 0 ? 1 : 0);
    else out[i] = v;
  }
}

struct B16 {
  unsigned long long lo, hi;
};

template <class F>
int by_itemsize(int itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<unsigned long long>{});
    case 16: return f(Tag<B16>{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class T>
__global__ void search_kernel(const T* __restrict__ x, const int64_t* __restrict__ sorter, int64_t n,
                              const T* __restrict__ v, int64_t m, bool right, int64_t* __restrict__ out) {
  for (int64_t j = global_index(); j < m; j += grid_step()) {
    const Key2 kv = key2_of(v[j]);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const Key2 km = key2_of(x[sorter ? sorter[mid] : mid]);
      // left: the first i with !(x[i] < v); right: the first i with v < x[i]
      const bool go_right = right ? !less(kv, km) : less(km, kv);
      if (go_right) lo = mid + 1;
      else hi = mid;
    }
    out[j] = lo;
  }
}

__global__ void first_outside_kernel(const int64_t* __restrict__ idx, int64_t m, int64_t n,
                                     unsigned long long* first_bad) {
  for (int64_t i = global_index(); i < m; i += grid_step())
    if (idx[i] < 0 || idx[i] >= n) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

template <class T>
__global__ void group_starts_kernel(const T* __restrict__ s, int64_t* __restrict__ flags, int64_t n) {
  for (int64_t p = global_index(); p < n; p += grid_step()) flags[p] = (p == 0 || !same(s[p - 1], s[p])) ? 1 : 0;
}

__global__ void group_layout_kernel(const int64_t* __restrict__ gid, const int64_t* __restrict__ perm, int64_t n,
                                    int64_t* __restrict__ starts, int64_t* __restrict__ inverse) {
  for (int64_t p = global_index(); p < n; p += grid_step()) {
    const int64_t g = gid[p] - 1;
    if (p == 0 || gid[p - 1] != gid[p]) starts[g] = p;
    if (inverse) inverse[perm[p]] = g;
  }
}

template <class T, bool AsBool>
__global__ void group_outputs_kernel(const T* __restrict__ sorted, const int64_t* __restrict__ perm,
                                     const int64_t* __restrict__ starts, int64_t groups, int64_t n,
                                     T* __restrict__ values, int64_t* __restrict__ indices,
                                     int64_t* __restrict__ counts) {
  for (int64_t g = global_index(); g < groups; g += grid_step()) {
    const int64_t s = starts[g];
    if (values) {
      if constexpr (AsBool) values[g] = static_cast<T>(sorted[s] != 0 ? 1 : 0);
      else values[g] = sorted[s];
    }
    if (indices) indices[g] = perm[s];
    if (counts) counts[g] = (g + 1 < groups ? starts[g + 1] : n) - s;
  }
}

}  // namespace

int radix_key_bits(int dtype) {
  const int bits = by_dtype(dtype, [](auto tag) {
    return static_cast<int>(8 * sizeof(typename KeyOf<typename decltype(tag)::type>::type));
  });
  return bits == 64 ? 64 : 32;  // (by_dtype's error code for a dtype it lacks: 32, as before)
}

int radix_keys(int dtype, const void* x, const int64_t* perm, int64_t row_len, void* keys, int64_t n, int part,
               void* stream) {
  if (n == 0) return 0;
  return by_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = typename KeyOf<T>::type;
    keys_kernel<T, K><<<grid_for(n), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(x), perm, row_len,
                                                                        static_cast<K*>(keys), n, part);
    return last_error();
  });
}

int row_setup(int64_t* offsets, int64_t rows, int64_t row_len, int64_t* values, void* stream) {
  const int64_t n = rows * row_len;
  row_setup_kernel<<<grid_for((n > rows ? n : rows) + 1), kThreads, 0, as_stream(stream)>>>(offsets, rows, row_len,
                                                                                           values, n);
  return last_error();
}

int gather_rows(const void* x, const int64_t* perm, void* out, int64_t n, int64_t row_len, int itemsize,
                bool as_bool, void* stream) {
  if (n == 0) return 0;
  if (as_bool) {
    gather_rows_kernel<uint8_t, true><<<grid_for(n), kThreads, 0, as_stream(stream)>>>(
        static_cast<const uint8_t*>(x), perm, static_cast<uint8_t*>(out), n, row_len);
    return last_error();
  }
  return by_itemsize(itemsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gather_rows_kernel<T, false><<<grid_for(n), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(x), perm,
                                                                                  static_cast<T*>(out), n, row_len);
    return last_error();
  });
}

int search_sorted(int dtype, const void* x, const int64_t* sorter, int64_t n, const void* v, int64_t m, bool right,
                  int64_t* out, void* stream) {
  if (m == 0) return 0;
  return by_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    search_kernel<T><<<grid_for(m), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(x), sorter, n,
                                                                       static_cast<const T*>(v), m, right, out);
    return last_error();
  });
}

int first_outside(const int64_t* idx, int64_t m, int64_t n, unsigned long long* first_bad, void* stream) {
  if (m == 0) return 0;
  first_outside_kernel<<<grid_for(m), kThreads, 0, as_stream(stream)>>>(idx, m, n, first_bad);
  return last_error();
}

int group_starts(int dtype, const void* sorted, int64_t* flags, int64_t n, void* stream) {
  if (n == 0) return 0;
  return by_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    group_starts_kernel<T><<<grid_for(n), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(sorted), flags, n);
    return last_error();
  });
}

int group_layout(const int64_t* gid, const int64_t* perm, int64_t n, int64_t* starts, int64_t* inverse, void* stream) {
  if (n == 0) return 0;
  group_layout_kernel<<<grid_for(n), kThreads, 0, as_stream(stream)>>>(gid, perm, n, starts, inverse);
  return last_error();
}

int group_outputs(const void* sorted, const int64_t* perm, const int64_t* starts, int64_t groups, int64_t n,
                  void* values, int itemsize, bool as_bool, int64_t* indices, int64_t* counts, void* stream) {
  if (groups == 0) return 0;
  if (as_bool) {
    group_outputs_kernel<uint8_t, true><<<grid_for(groups), kThreads, 0, as_stream(stream)>>>(
        static_cast<const uint8_t*>(sorted), perm, starts, groups, n, static_cast<uint8_t*>(values), indices, counts);
    return last_error();
  }
  return by_itemsize(itemsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    group_outputs_kernel<T, false><<<grid_for(groups), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T*>(sorted), perm, starts, groups, n, static_cast<T*>(values), indices, counts);
    return last_error();
  });
}

}  // namespace uma::kernels::cuda_launch
