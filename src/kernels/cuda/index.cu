// Integer-array indexing, scatter and one_hot kernels (launchers in kernels/cuda/index_launch.h).
// Grid-stride loops with 64-bit index arithmetic; gathers and scatters move elements by
// itemsize (any dtype), only the accumulating scatter needs the dtype's addition.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/index_launch.h"

namespace uma::kernels::cuda_launch {

namespace {

/// A 16-byte element (complex128) moved as two 8-byte words.
struct B16 {
  unsigned long long lo, hi;
};
template <class R>
struct Cplx {
  R re, im;
};

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int last_error() { return static_cast<int>(cudaGetLastError()); }

template <class T>
struct Tag {
  using type = T;
};
// f(Tag<T>{}) with T the element type that moves `itemsize` bytes (the moves need no dtype);
// cudaErrorInvalidValue for another size.
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
// Every dtype code with the element type the accumulating scatter adds in.
#define UMA_INDEX_DTYPES(X)                                                                                    \
  X(kBool, bool8) X(kInt8, int8_t) X(kInt16, int16_t) X(kInt32, int32_t) X(kInt64, int64_t) X(kUInt8, uint8_t) \
  X(kUInt16, uint16_t) X(kUInt32, uint32_t) X(kUInt64, uint64_t) X(kFloat16, __half)                          \
  X(kBFloat16, __nv_bfloat16) X(kFloat32, float) X(kFloat64, double) X(kComplex64, Cplx<float>)              \
  X(kComplex128, Cplx<double>)

// ---- index normalisation -------------------------------------------------------------

__global__ void normalize_kernel(int64_t* __restrict__ idx, int64_t m, int64_t n, bool from_uint64,
                                 unsigned long long* first_bad) {
  for (int64_t i = global_index(); i < m; i += grid_step()) {
    const int64_t v = idx[i];
    const bool bad = (from_uint64 && v < 0) || v < -n || v >= n;
    if (bad) atomicMin(first_bad, static_cast<unsigned long long>(i));
    else if (v < 0) idx[i] = v + n;
  }
}

// ---- gather --------------------------------------------------------------------------

template <class T>
__global__ void gather_rows_kernel(const T* __restrict__ src, const int64_t* __restrict__ idx, T* __restrict__ out,
                                   int64_t total, int64_t n, int64_t m, int64_t inner) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t t = e / inner, k = e - t * inner;
    const int64_t o = t / m, j = t - o * m;
    out[e] = src[(o * n + idx[j]) * inner + k];
  }
}

template <class T>
int gather_t(const void* src, const int64_t* idx, void* out, int64_t total, int64_t n, int64_t m, int64_t inner,
             void* stream) {
  gather_rows_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T*>(src), idx, static_cast<T*>(out), total, n, m, inner);
  return last_error();
}

// ---- NumPy's advanced-indexing gather and scatter by element offsets -----------------

// Byte offset of element r (C order over g.shape) in the strided view g.
__device__ __forceinline__ int64_t view_offset(int64_t r, const StridedGeometry& g) {
  int64_t off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t q = r / g.shape[d];
    off += (r - q * g.shape[d]) * g.byte_strides[d];
    r = q;
  }
  return off;
}

// e = (i * m + j) * n_inner + k over the flat (outer, m, inner) block; rest element i * n_inner
// + k moved by offsets[j] elements.
template <class T, bool Scatter>
__global__ void picks_kernel(char* rest, const int64_t* __restrict__ offsets, const bool8* __restrict__ keep,
                             T* flat, StridedGeometry g, int64_t total, int64_t n_inner, int64_t m) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t t = e / n_inner, k = e - t * n_inner;
    const int64_t i = t / m, j = t - i * m;
    if (Scatter && keep != nullptr && !keep[j]) continue;
    T* p = reinterpret_cast<T*>(rest + view_offset(i * n_inner + k, g) + offsets[j] * static_cast<int64_t>(sizeof(T)));
    if constexpr (Scatter) *p = flat[e];
    else flat[e] = *p;
  }
}

template <class T, bool Scatter>
int picks_t(void* rest, const int64_t* offsets, const bool8* keep, void* flat, const StridedGeometry& g,
            int64_t total, int64_t n_inner, int64_t m, void* stream) {
  picks_kernel<T, Scatter><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(
      static_cast<char*>(rest), offsets, keep, static_cast<T*>(flat), g, total, n_inner, m);
  return last_error();
}

__global__ void order_keys_kernel(const int64_t* __restrict__ offsets, uint64_t* __restrict__ keys, int64_t m) {
  for (int64_t i = global_index(); i < m; i += grid_step())
    keys[i] = static_cast<uint64_t>(offsets[i]) ^ (uint64_t{1} << 63);
}

__global__ void mark_last_kernel(const uint64_t* __restrict__ keys, const int64_t* __restrict__ vals,
                                 bool8* __restrict__ keep, int64_t m) {
  for (int64_t p = global_index(); p < m; p += grid_step()) keep[vals[p]] = p + 1 == m || keys[p + 1] != keys[p];
}

// ---- scatter -------------------------------------------------------------------------

// NumPy's add in the dtype, as kernels/cpu/index.cpp's add_run.
template <class T>
__device__ __forceinline__ T add_elem(T x, T y) {
  if constexpr (std::is_same_v<T, bool8>) return x || y;  // the values x != 0, y != 0
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<unsigned long long>(x) + static_cast<unsigned long long>(y));
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(__half2float(x) + __half2float(y));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(__bfloat162float(x) + __bfloat162float(y));
  else if constexpr (std::is_same_v<T, Cplx<float>> || std::is_same_v<T, Cplx<double>>) return T{x.re + y.re, x.im + y.im};
  else return x + y;
}

template <class T, bool Acc>
__global__ void scatter_kernel(T* __restrict__ dst, const T* __restrict__ src, const uint64_t* __restrict__ keys,
                               const int64_t* __restrict__ vals, int64_t total, int64_t n, int64_t m, int64_t inner) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t t = e / inner, k = e - t * inner;
    const int64_t o = t / m, p = t - o * m;
    const uint64_t key = keys[p];
    if (p > 0 && keys[p - 1] == key) continue;  // not the first entry of its segment
    T* d = dst + (o * n + static_cast<int64_t>(key)) * inner + k;
    const T* s = src + o * m * inner + k;
    if constexpr (!Acc) {
      int64_t q = p;
      while (q + 1 < m && keys[q + 1] == key) ++q;
      *d = s[(vals ? vals[q] : q) * inner];
    } else {
      T x = *d;
      for (int64_t q = p; q < m && keys[q] == key; ++q) x = add_elem(x, s[(vals ? vals[q] : q) * inner]);
      *d = x;
    }
  }
}

template <class T, bool Acc>
int scatter_t(void* dst, const void* src, const uint64_t* keys, const int64_t* vals, int64_t total, int64_t n,
              int64_t m, int64_t inner, void* stream) {
  scatter_kernel<T, Acc><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(
      static_cast<T*>(dst), static_cast<const T*>(src), keys, vals, total, n, m, inner);
  return last_error();
}

// ---- one_hot and iota ----------------------------------------------------------------

template <class T>
__global__ void one_hot_kernel(const int64_t* __restrict__ idx, int64_t total, int64_t depth, T one,
                               T* __restrict__ out) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t i = e / depth, c = e - i * depth;
    out[e] = idx[i] == c ? one : T{};
  }
}

template <class T>
int one_hot_t(const int64_t* idx, int64_t total, int64_t depth, const unsigned char* one_bytes, void* out,
              void* stream) {
  T one;
  std::memcpy(&one, one_bytes, sizeof(T));
  one_hot_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(idx, total, depth, one, static_cast<T*>(out));
  return last_error();
}

__global__ void iota_kernel(int64_t* __restrict__ v, int64_t m) {
  for (int64_t i = global_index(); i < m; i += grid_step()) v[i] = i;
}

__global__ void mask_compact_kernel(const bool8* __restrict__ mask, const int64_t* __restrict__ counts,
                                    int64_t* __restrict__ pos, int64_t n) {
  for (int64_t i = global_index(); i < n; i += grid_step())
    if (mask[i]) pos[counts[i] - 1] = i;
}

}  // namespace

int normalize_indices(int64_t* idx, int64_t m, int64_t n, bool from_uint64, unsigned long long* first_bad,
                      void* stream) {
  if (m == 0) return 0;
  normalize_kernel<<<grid_for(m), kThreads, 0, as_stream(stream)>>>(idx, m, n, from_uint64, first_bad);
  return last_error();
}

int gather(const void* src, const int64_t* idx, void* out, int64_t outer, int64_t n, int64_t m, int64_t inner,
           int itemsize, void* stream) {
  const int64_t total = outer * m * inner;
  if (total == 0) return 0;
  return by_itemsize(itemsize, [&](auto t) {
    return gather_t<typename decltype(t)::type>(src, idx, out, total, n, m, inner, stream);
  });
}

int scatter_segments(void* dst, const void* src, const uint64_t* keys, const int64_t* vals, int64_t outer, int64_t n,
                     int64_t m, int64_t inner, int dtype, int itemsize, bool accumulate, void* stream) {
  const int64_t total = outer * m * inner;
  if (total == 0) return 0;
  if (!accumulate)
    return by_itemsize(itemsize, [&](auto t) {
      return scatter_t<typename decltype(t)::type, false>(dst, src, keys, vals, total, n, m, inner, stream);
    });
#define UMA_SCATTER_ADD(CODE, T) \
  case CODE: return scatter_t<T, true>(dst, src, keys, vals, total, n, m, inner, stream);
  switch (dtype) {
    UMA_INDEX_DTYPES(UMA_SCATTER_ADD)
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
#undef UMA_SCATTER_ADD
}

int gather_picks(const void* rest, const int64_t* offsets, void* out, const StridedGeometry& g, int64_t n_inner,
                 int64_t m, int itemsize, void* stream) {
  int64_t outer_inner = 1;
  for (int d = 0; d < g.ndim; ++d) outer_inner *= g.shape[d];
  const int64_t total = outer_inner * m;
  if (total == 0) return 0;
  return by_itemsize(itemsize, [&](auto t) {
    return picks_t<typename decltype(t)::type, false>(const_cast<void*>(rest), offsets, nullptr, out, g, total,
                                                       n_inner, m, stream);
  });
}

int scatter_picks(void* rest, const int64_t* offsets, const bool8* keep, const void* src, const StridedGeometry& g,
                  int64_t n_inner, int64_t m, int itemsize, void* stream) {
  int64_t outer_inner = 1;
  for (int d = 0; d < g.ndim; ++d) outer_inner *= g.shape[d];
  const int64_t total = outer_inner * m;
  if (total == 0) return 0;
  return by_itemsize(itemsize, [&](auto t) {
    return picks_t<typename decltype(t)::type, true>(rest, offsets, keep, const_cast<void*>(src), g, total, n_inner,
                                                      m, stream);
  });
}

int order_keys(const int64_t* offsets, uint64_t* keys, int64_t m, void* stream) {
  if (m == 0) return 0;
  order_keys_kernel<<<grid_for(m), kThreads, 0, as_stream(stream)>>>(offsets, keys, m);
  return last_error();
}

int mark_last(const uint64_t* keys, const int64_t* vals, bool8* keep, int64_t m, void* stream) {
  if (m == 0) return 0;
  mark_last_kernel<<<grid_for(m), kThreads, 0, as_stream(stream)>>>(keys, vals, keep, m);
  return last_error();
}

int iota(int64_t* values, int64_t m, void* stream) {
  if (m == 0) return 0;
  iota_kernel<<<grid_for(m), kThreads, 0, as_stream(stream)>>>(values, m);
  return last_error();
}

int mask_compact(const bool8* mask, const int64_t* counts, int64_t* pos, int64_t n, void* stream) {
  if (n == 0) return 0;
  mask_compact_kernel<<<grid_for(n), kThreads, 0, as_stream(stream)>>>(mask, counts, pos, n);
  return last_error();
}

int one_hot(const int64_t* idx, int64_t m, int64_t depth, const unsigned char* one, int itemsize, void* out,
            void* stream) {
  const int64_t total = m * depth;
  if (total == 0) return 0;
  return by_itemsize(itemsize, [&](auto t) {
    return one_hot_t<typename decltype(t)::type>(idx, total, depth, one, out, stream);
  });
}

}  // namespace uma::kernels::cuda_launch
