// The small kernels around cuSOLVER (launchers in kernels/cuda/linalg_launch.h): batched
// transposes between row-major and column-major matrices, triangle zeroing, identities,
// slogdet from LU factors, QR's R, and the finiteness check of the SVD. Grid-stride loops
// with 64-bit index arithmetic, one thread per element (per matrix for slogdet).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/linalg_launch.h"
#include "kernels/cuda/support.h"

namespace uma::kernels::cuda_launch {

namespace {

template <class R>
struct Cplx {
  R re, im;
};
template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<Cplx<R>> { using type = R; };
template <class T> constexpr bool kCplx = !std::is_same_v<T, typename RealOf<T>::type>;

template <class T>
struct Tag {
  using type = T;
};

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int last_error() { return static_cast<int>(cudaGetLastError()); }

template <class F>
int by_dtype(int dtype, F&& f) {
  switch (dtype) {
    case kFloat32: return f(Tag<float>{});
    case kFloat64: return f(Tag<double>{});
    case kComplex64: return f(Tag<Cplx<float>>{});
    case kComplex128: return f(Tag<Cplx<double>>{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class T> __device__ __forceinline__ T conj_of(T v) {
  if constexpr (kCplx<T>) return T{v.re, -v.im};
  else return v;
}
template <class T> __device__ __forceinline__ T zero_of() { return T{}; }
template <class T> __device__ __forceinline__ T one_of() {
  if constexpr (kCplx<T>) return T{1, 0};
  else return T(1);
}
template <class T> __device__ __forceinline__ bool finite(T v) {
  if constexpr (kCplx<T>) return isfinite(v.re) && isfinite(v.im);
  else return isfinite(v);
}

template <class T>
__global__ void transpose_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t total, int64_t rows,
                                 int64_t cols, bool conj) {
  const int64_t per = rows * cols;
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    // e indexes out: matrix b, out row c (< cols), out column r (< rows)
    const int64_t b = e / per, rem = e - b * per, c = rem / rows, r = rem - c * rows;
    const T v = in[b * per + r * cols + c];
    out[e] = conj ? conj_of(v) : v;
  }
}

template <class T>
__global__ void zero_triangle_kernel(T* __restrict__ a, int64_t total, int64_t n, bool upper_zero) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t rem = e % (n * n), r = rem / n, c = rem - r * n;
    if (upper_zero ? c > r : c < r) a[e] = zero_of<T>();
  }
}

template <class T>
__global__ void identity_kernel(T* __restrict__ out, int64_t total, int64_t n) {
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t rem = e % (n * n), r = rem / n, c = rem - r * n;
    out[e] = r == c ? one_of<T>() : zero_of<T>();
  }
}

template <class T>
__global__ void slogdet_kernel(const T* __restrict__ lu, const int* __restrict__ ipiv, const int* __restrict__ info,
                               int64_t count, int64_t n, T* __restrict__ sign,
                               typename RealOf<T>::type* __restrict__ logabs) {
  using R = typename RealOf<T>::type;
  for (int64_t b = global_index(); b < count; b += grid_step()) {
    if (info[b] > 0) {  // an exactly zero pivot: det = 0
      sign[b] = zero_of<T>();
      logabs[b] = -INFINITY;
      continue;
    }
    const T* m = lu + b * n * n;
    T s = one_of<T>();
    R acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T d = m[j * n + j];
      bool flip = ipiv[b * n + j] != j + 1;
      if constexpr (kCplx<T>) {
        const R a = hypot(d.re, d.im);
        const T u{d.re / a, d.im / a};  // NumPy's rule: multiply by the unit complex d / |d|
        s = T{s.re * u.re - s.im * u.im, s.re * u.im + s.im * u.re};
        acc += log(a);
      } else {
        if (d < 0) flip = !flip;  // an infinite or NaN pivot leaves the sign as it is
        acc += log(fabs(d));
      }
      if (flip) {
        if constexpr (kCplx<T>) s = T{-s.re, -s.im};
        else s = -s;
      }
    }
    sign[b] = s;
    logabs[b] = acc;
  }
}

template <class T>
__global__ void qr_r_kernel(T* __restrict__ w, int64_t count, int64_t m, int64_t wcols, int64_t n, int64_t rrows,
                            T* __restrict__ r) {
  const int64_t per = rrows * n, total = count * per;
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t b = e / per, rem = e - b * per, row = rem / n, c = rem - row * n;
    r[e] = (c >= row && row < m) ? w[b * m * wcols + row + c * m] : zero_of<T>();
  }
}

template <class T>
__global__ void clear_columns_kernel(T* __restrict__ w, int64_t count, int64_t m, int64_t wcols, int64_t n) {
  const int64_t extra = (wcols - n) * m, total = count * extra;
  for (int64_t e = global_index(); e < total; e += grid_step()) {
    const int64_t b = e / extra, rem = e - b * extra;
    w[b * m * wcols + n * m + rem] = zero_of<T>();
  }
}

template <class T>
__global__ void nonfinite_kernel(const T* __restrict__ a, int64_t total, int64_t per, unsigned long long* first_bad) {
  for (int64_t e = global_index(); e < total; e += grid_step())
    if (!finite(a[e])) atomicMin(first_bad, static_cast<unsigned long long>(e / per));
}

}  // namespace

int transpose_batched(int dtype, const void* in, void* out, int64_t count, int64_t rows, int64_t cols, bool conj,
                      void* stream) {
  const int64_t total = count * rows * cols;
  if (total == 0) return 0;
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    transpose_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(in),
                                                                              static_cast<T*>(out), total, rows, cols,
                                                                              conj);
    return last_error();
  });
}

int zero_triangle(int dtype, void* a, int64_t count, int64_t n, bool upper_zero, void* stream) {
  const int64_t total = count * n * n;
  if (total == 0) return 0;
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    zero_triangle_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(static_cast<T*>(a), total, n,
                                                                                  upper_zero);
    return last_error();
  });
}

int identity_batched(int dtype, void* out, int64_t count, int64_t n, void* stream) {
  const int64_t total = count * n * n;
  if (total == 0) return 0;
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    identity_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(static_cast<T*>(out), total, n);
    return last_error();
  });
}

int slogdet_from_lu(int dtype, const void* lu, const int* ipiv, const int* info, int64_t count, int64_t n, void* sign,
                    void* logabs, void* stream) {
  if (count == 0) return 0;
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    using R = typename RealOf<T>::type;
    slogdet_kernel<T><<<grid_for(count), kThreads, 0, as_stream(stream)>>>(
        static_cast<const T*>(lu), ipiv, info, count, n, static_cast<T*>(sign), static_cast<R*>(logabs));
    return last_error();
  });
}

int qr_r(int dtype, void* w, int64_t count, int64_t m, int64_t wcols, int64_t n, int64_t rrows, void* r,
         void* stream) {
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    const int64_t total = count * rrows * n;
    if (total > 0)
      qr_r_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(static_cast<T*>(w), count, m, wcols, n,
                                                                           rrows, static_cast<T*>(r));
    const int64_t extra = count * (wcols - n) * m;
    if (extra > 0)
      clear_columns_kernel<T><<<grid_for(extra), kThreads, 0, as_stream(stream)>>>(static_cast<T*>(w), count, m,
                                                                                    wcols, n);
    return last_error();
  });
}

int first_nonfinite(int dtype, const void* a, int64_t count, int64_t per, unsigned long long* first_bad,
                    void* stream) {
  const int64_t total = count * per;
  if (total == 0) return 0;
  return by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    nonfinite_kernel<T><<<grid_for(total), kThreads, 0, as_stream(stream)>>>(static_cast<const T*>(a), total, per,
                                                                              first_bad);
    return last_error();
  });
}

}  // namespace uma::kernels::cuda_launch
