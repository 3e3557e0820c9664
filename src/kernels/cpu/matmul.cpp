// CPU matrix product: OpenBLAS gemm for float32/float64/complex64/complex128, plain loops for
// bool and the integer dtypes (integers wrap, as NumPy; bool is or-of-ands); float16/bfloat16
// through float32 BLAS, rounded once. matmul runs gemm once per matrix of the batch.
#include <cblas.h>

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/blas_threads.h"
#include "kernels/kernels.h"
#include "uma/ops/table.h"
#include "uma/threads.h"

namespace uma::kernels::cpu {

// OpenBLAS runs on the calling thread (blas_threads.h); a product gives the same bits on any
// team, since each block runs the one-thread kernel.
void blas_on_calling_thread() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

namespace {

// BLAS needs one unit stride per matrix and a leading dimension >= the other extent.
bool blas_layout(const Array& m, CBLAS_TRANSPOSE& trans, int64_t& ld) {
  const int64_t r = m.shape()[0], c = m.shape()[1];
  const int64_t s0 = m.strides()[0], s1 = m.strides()[1];
  if ((s1 == 1 || c == 1) && (s0 >= std::max<int64_t>(1, c) || r == 1)) {
    trans = CblasNoTrans;
    ld = r == 1 ? std::max<int64_t>(1, c) : s0;
    return ld >= std::max<int64_t>(1, c);
  }
  if ((s0 == 1 || r == 1) && (s1 >= std::max<int64_t>(1, r) || c == 1)) {
    trans = CblasTrans;
    ld = c == 1 ? std::max<int64_t>(1, r) : s1;
    return ld >= std::max<int64_t>(1, r);
  }
  return false;
}

// The multiply-adds each thread of a product gets at least (uma/threads.h, for_work): below
// 2 * 2^21 a product runs on the calling thread, where a team's start-up would cost more than
// it saves.
constexpr int64_t kGemmGrain = int64_t(1) << 21;

// Rows of C in each block of a product split across threads: a multiple of every row tile
// OpenBLAS's drivers and kernels step by (4, 8, 12, 16, 24, 32, 48, 64), so that every block, the
// last one included, is tiled as those rows of the whole product are.
constexpr int64_t kBlockAlign = 192;


// A real product with one column (n == 1) or one row (m == 1) as OpenBLAS's matrix-vector
// product, as NumPy computes it: its gemm packs the operands for a product it cannot block
// (a 20000 x 100 matrix times a vector took 7x NumPy's time). Returns false for other shapes.
template <class T, class Gemv>
bool blas_gemv(Gemv gemv, CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const T* A,
               int64_t la, const T* B, int64_t lb, T* C) {
  if (n == 1) {  // C (m) = op(A) (m x k) . op(B) (k): B's elements lb apart, or contiguous when transposed
    if (x == CblasNoTrans) gemv(CblasRowMajor, CblasNoTrans, m, k, T(1), A, la, B, y == CblasNoTrans ? lb : 1, T(0), C, 1);
    else gemv(CblasRowMajor, CblasTrans, k, m, T(1), A, la, B, y == CblasNoTrans ? lb : 1, T(0), C, 1);
    return true;
  }
  if (m == 1) {  // C (n) = op(B)^T . op(A)^T: A's elements contiguous, or la apart when transposed
    const int64_t inc = x == CblasNoTrans ? 1 : la;
    if (y == CblasNoTrans) gemv(CblasRowMajor, CblasTrans, k, n, T(1), B, lb, A, inc, T(0), C, 1);
    else gemv(CblasRowMajor, CblasNoTrans, n, k, T(1), B, lb, A, inc, T(0), C, 1);
    return true;
  }
  return false;
}

// One OpenBLAS product C = op(A) op(B) (row-major), per element type.
void blas_gemm(CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const float* A, int64_t la,
               const float* B, int64_t lb, float* C, int64_t lc) {
  if (!blas_gemv<float>(cblas_sgemv, x, y, m, n, k, A, la, B, lb, C))
    cblas_sgemm(CblasRowMajor, x, y, m, n, k, 1.0f, A, la, B, lb, 0.0f, C, lc);
}
void blas_gemm(CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const double* A, int64_t la,
               const double* B, int64_t lb, double* C, int64_t lc) {
  if (!blas_gemv<double>(cblas_dgemv, x, y, m, n, k, A, la, B, lb, C))
    cblas_dgemm(CblasRowMajor, x, y, m, n, k, 1.0, A, la, B, lb, 0.0, C, lc);
}
template <class Z, class F>
void complex_gemm(F gemm, CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const Z* A, int64_t la,
                  const Z* B, int64_t lb, Z* C, int64_t lc) {
  const Z one(1, 0), zero(0, 0);
  gemm(CblasRowMajor, x, y, m, n, k, &one, A, la, B, lb, &zero, C, lc);
}
void blas_gemm(CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const complex64* A, int64_t la,
               const complex64* B, int64_t lb, complex64* C, int64_t lc) {
  complex_gemm(cblas_cgemm, x, y, m, n, k, A, la, B, lb, C, lc);
}
void blas_gemm(CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const complex128* A, int64_t la,
               const complex128* B, int64_t lb, complex128* C, int64_t lc) {
  complex_gemm(cblas_zgemm, x, y, m, n, k, A, la, B, lb, C, lc);
}

// C (M x N, row-major, ldc N) = op(A) op(B) for one element type, split into blocks of rows
// across the policy's team. Only rows: OpenBLAS's one-thread kernel computes an element of a
// block of rows with the same instructions as in the whole product, but not always an element
// of a block of columns (the last columns of a block are tiled by the block's width).
template <class T, class Gemm>
void gemm_blocks(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T* C, int64_t work, Gemm gemm_one) {
  int nt = omp_in_parallel() ? 1 : threads::for_work(work, kGemmGrain);
  nt = static_cast<int>(std::min<int64_t>(nt, M / kBlockAlign));
  if (nt <= 1) {
    gemm_one(ta, tb, M, N, K, A, lda, B, ldb, C);
    return;
  }
  const int64_t per = (M + nt - 1) / nt;
  const int64_t block = (per + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  const int64_t nblocks = (M + block - 1) / block;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t i = 0; i < nblocks; ++i) {
    const int64_t lo = i * block, len = std::min(block, M - lo);
    gemm_one(ta, tb, len, N, K, ta == CblasNoTrans ? A + lo * lda : A + lo, lda, B, ldb, C + lo * N);
  }
}

template <class T>
void gemm_loops(const Array& a, const Array& b, const Array& out) {
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  const T* A = a.data_as<T>();
  const T* B = b.data_as<T>();
  T* C = out.data_as<T>();
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if constexpr (std::is_same_v<T, bool8>) {  // on the values: byte != 0
        bool acc = false;
        for (int64_t k = 0; k < K && !acc; ++k) acc = A[i * as0 + k * as1] && B[k * bs0 + j * bs1];
        C[i * N + j] = acc;
      } else {
        uint64_t acc = 0;  // unsigned: wraps instead of overflowing
        for (int64_t k = 0; k < K; ++k) acc += static_cast<uint64_t>(A[i * as0 + k * as1]) * static_cast<uint64_t>(B[k * bs0 + j * bs1]);
        C[i * N + j] = static_cast<T>(acc);
      }
    }
}

}  // namespace

void gemm(const Array& a0, const Array& b0, const Array& out) {
  const int64_t M = a0.shape()[0], K = a0.shape()[1], N = b0.shape()[1];
  if (M == 0 || N == 0) return;
  const DType t = out.dtype();
  if (K == 0) {
    std::memset(out.data(), 0, static_cast<std::size_t>(M * N) * out.itemsize());
    return;
  }
  if (t == DType::Float32 || t == DType::Float64 || t == DType::Complex64 || t == DType::Complex128) {
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    Array acopy, bcopy;  // C-contiguous copies, made only where BLAS cannot read an operand
    const Array* pa = &a0;
    const Array* pb = &b0;
    if (!blas_layout(a0, ta, lda)) {
      acopy = Array::empty(a0.shape(), t);
      cast(a0, acopy);
      blas_layout(acopy, ta, lda);
      pa = &acopy;
    }
    if (!blas_layout(b0, tb, ldb)) {
      bcopy = Array::empty(b0.shape(), t);
      cast(b0, bcopy);
      blas_layout(bcopy, tb, ldb);
      pb = &bcopy;
    }
    const Array& a = *pa;
    const Array& b = *pb;
    blas_on_calling_thread();
    const bool cplx = t == DType::Complex64 || t == DType::Complex128;
    const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) * (cplx ? 4 : 1);
    const int64_t work = macs >= 9e18 ? INT64_MAX : static_cast<int64_t>(macs);
    const int64_t ldc = N;
    auto run = [&](auto tag) {
      using T = decltype(tag);
      gemm_blocks<T>(ta, tb, M, N, K, a.data_as<T>(), lda, b.data_as<T>(), ldb, out.data_as<T>(), work,
                     [ldc](CBLAS_TRANSPOSE x, CBLAS_TRANSPOSE y, int64_t m, int64_t n, int64_t k, const T* A,
                           int64_t la, const T* B, int64_t lb, T* C) { blas_gemm(x, y, m, n, k, A, la, B, lb, C, ldc); });
    };
    if (t == DType::Float32) run(float{});
    else if (t == DType::Float64) run(double{});
    else if (t == DType::Complex64) run(complex64{});
    else run(complex128{});
    return;
  }
  switch (t) {
    case DType::Bool: gemm_loops<bool8>(a0, b0, out); return;
    case DType::Int8: gemm_loops<int8_t>(a0, b0, out); return;
    case DType::Int16: gemm_loops<int16_t>(a0, b0, out); return;
    case DType::Int32: gemm_loops<int32_t>(a0, b0, out); return;
    case DType::Int64: gemm_loops<int64_t>(a0, b0, out); return;
    case DType::UInt8: gemm_loops<uint8_t>(a0, b0, out); return;
    case DType::UInt16: gemm_loops<uint16_t>(a0, b0, out); return;
    case DType::UInt32: gemm_loops<uint32_t>(a0, b0, out); return;
    case DType::UInt64: gemm_loops<uint64_t>(a0, b0, out); return;
    default: UMA_ASSERT(false && "gemm: not a compute dtype");
  }
}

void matmul(const Array& a, const Array& b, const Array& out) {
  const int64_t nbd = out.ndim() - 2;
  const int64_t M = out.shape()[nbd], N = out.shape()[nbd + 1], K = a.shape()[nbd + 1];
  const DType t = out.dtype();
  if (t == DType::Float16 || t == DType::BFloat16) {  // BLAS in float32, rounded once
    Array a32 = Array::empty(a.shape(), DType::Float32), b32 = Array::empty(b.shape(), DType::Float32);
    Array o32 = Array::empty(out.shape(), DType::Float32);
    cast(a, a32);
    cast(b, b32);
    matmul(a32, b32, o32);
    cast(o32, out);
    return;
  }
  if (nbd == 0) {  // one product: no per-matrix views (each would allocate its shape)
    gemm(a, b, out);
    return;
  }
  const Shape batch(out.shape().begin(), out.shape().begin() + nbd);
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  const Strides bc = contiguous_strides(batch);
  const int64_t isz = static_cast<int64_t>(itemsize(t));
  for (int64_t i = 0; i < nb; ++i) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < nbd; ++d) {
      const int64_t idx = (i / bc[d]) % batch[d];
      oa += idx * a.strides()[d];
      ob += idx * b.strides()[d];
    }
    Array am = a.view(static_cast<char*>(a.data()) + oa * isz, {M, K}, {a.strides()[nbd], a.strides()[nbd + 1]});
    Array bm = b.view(static_cast<char*>(b.data()) + ob * isz, {K, N}, {b.strides()[nbd], b.strides()[nbd + 1]});
    Array om = out.view(static_cast<char*>(out.data()) + i * M * N * isz, {M, N}, {N, 1});
    gemm(am, bm, om);
  }
}

}  // namespace uma::kernels::cpu
