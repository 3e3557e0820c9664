// src/kernels/cuda/linalg_launch.h — plain-C++ launchers of the small kernels around cuSOLVER
// (kernels/cuda/cusolver.cpp): layout changes between uma's row-major stacks and LAPACK's
// column-major matrices, and the finishing steps of the factorisations. dtype codes are the
// integer values of uma::DType (float32, float64, complex64, complex128 only). Each returns a
// cudaError_t (0 on success) and queues its work on `stream` without waiting.
#pragma once
#include <cstdint>

namespace uma::kernels::cuda_launch {

/// out[b] (cols x rows, C order) = the transpose of in[b] (rows x cols, C order), conjugated
/// when `conj` (complex dtypes), for b < count: a row-major matrix to column-major and back.
int transpose_batched(int dtype, const void* in, void* out, int64_t count, int64_t rows, int64_t cols, bool conj,
                      void* stream);

/// Zeros the strict upper (`upper_zero`) or strict lower triangle of each row-major n x n matrix.
int zero_triangle(int dtype, void* a, int64_t count, int64_t n, bool upper_zero, void* stream);

/// out[b] = the n x n identity (row-major), for b < count.
int identity_batched(int dtype, void* out, int64_t count, int64_t n, void* stream);

/// From LU factors (getrf's column-major lu[b], pivots ipiv[b] 1-based, info[b]) of count n x n
/// matrices: sign[b] (the dtype: +-1 or a unit complex; 0 when info[b] > 0) and logabs[b] (the
/// real dtype; -inf when info[b] > 0), NumPy's slogdet rule as kernels/cpu/linalg.cpp.
int slogdet_from_lu(int dtype, const void* lu, const int* ipiv, const int* info, int64_t count, int64_t n, void* sign,
                    void* logabs, void* stream);

/// r[b] (rrows x n, row-major) = the upper triangle of geqrf's column-major w[b] (m x wcols,
/// leading dimension m), zeros elsewhere; then w[b]'s columns n..wcols-1 are set to zero (no
/// reflector there) for orgqr.
int qr_r(int dtype, void* w, int64_t count, int64_t m, int64_t wcols, int64_t n, int64_t rrows, void* r,
         void* stream);

/// *first_bad (preset to UINT64_MAX) = the smallest b < count whose matrix a[b] (per elements)
/// holds an infinity or NaN.
int first_nonfinite(int dtype, const void* a, int64_t count, int64_t per, unsigned long long* first_bad,
                    void* stream);

}  // namespace uma::kernels::cuda_launch
