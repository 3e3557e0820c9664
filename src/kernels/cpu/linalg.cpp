// CPU linear algebra through OpenBLAS's LAPACK (kernels/cpu/lapack.h): LU solve, slogdet,
// Cholesky, the Hermitian and the general eigensolvers, the SVD and QR, each on a C-contiguous stack of matrices.
// Each matrix is copied into a column-major workspace (LAPACK's order), factorised, and its
// results copied back in row-major order; the workspace sizes are queried once per call
// (lwork = -1) since every matrix of a stack has the same shape. OpenBLAS runs on the calling
// thread (uma/threads.h); the stack is walked in order on that thread.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/lapack.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {

using lapack::lapack_int;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using Real = typename real_of<T>::type;
template <class T> inline constexpr bool is_cplx = !std::is_same_v<T, Real<T>>;

template <class T> T conj_of(T x) {
  if constexpr (is_cplx<T>) return std::conj(x); else return x;
}

// LAPACK sizes are 32-bit: a matrix dimension beyond that is a ValueError, never a wrap.
lapack_int lapack_dim(int64_t n, const char* op) {
  UMA_CHECK(n <= std::numeric_limits<lapack_int>::max(), Value, "uma.linalg.", op, ": a matrix dimension of ", n,
            " exceeds LAPACK's 32-bit sizes");
  return static_cast<lapack_int>(n);
}

// The optimal workspace size LAPACK wrote into work[0] by a query.
template <class T> lapack_int work_size(T w) {
  double v;
  if constexpr (is_cplx<T>) v = static_cast<double>(w.real()); else v = static_cast<double>(w);
  return std::max<lapack_int>(1, static_cast<lapack_int>(v));
}

// dst (column-major, leading dimension ld >= rows) = src (row-major rows x cols).
template <class T> void to_col_major(const T* src, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i + j * ld] = src[i * cols + j];
}
// dst (row-major rows x cols) = src (column-major, leading dimension ld).
template <class T> void from_col_major(const T* src, int64_t ld, int64_t rows, int64_t cols, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i + j * ld];
}
// dst (row-major n x n) = the identity.
template <class T> void identity(T* dst, int64_t n) {
  std::fill(dst, dst + n * n, T(0));
  for (int64_t i = 0; i < n; ++i) dst[i * n + i] = T(1);
}

// The matrices of a stack: the product of its leading axes (a stack of 0x0 matrices counts them).
/// Whether the n values at p are all finite (LAPACK's SVD and general eigensolver stop with an
/// "illegal value" on an infinity or NaN instead of reporting it).
template <class T> bool all_finite(const T* p, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (is_cplx<T>) {
      if (!std::isfinite(p[k].real()) || !std::isfinite(p[k].imag())) return false;
    } else if (!std::isfinite(p[k])) {
      return false;
    }
  }
  return true;
}

int64_t batch_count(const Array& a) {
  int64_t c = 1;
  for (int64_t d = 0; d + 2 < a.ndim(); ++d) c *= a.shape()[d];
  return c;
}

template <class F> void by_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    case DType::Complex64: f(complex64{}); break;
    case DType::Complex128: f(complex128{}); break;
    default: UMA_ASSERT(!"a LAPACK kernel got a dtype the ops layer should have converted");
  }
}

template <class T> void lu_solve_t(const char* op, const Array& a, const Array& b, const Array& out) {
  const int64_t n = a.shape()[a.ndim() - 1], k = b.shape()[b.ndim() - 1], count = batch_count(a);
  const lapack_int N = lapack_dim(n, op), K = lapack_dim(k, op), ld = std::max<lapack_int>(1, N);
  std::vector<T> wa(static_cast<size_t>(n * n)), wb(static_cast<size_t>(n * k));
  std::vector<lapack_int> ipiv(static_cast<size_t>(std::max<int64_t>(n, 1)));
  const T* A = static_cast<const T*>(a.data());
  const T* B = static_cast<const T*>(b.data());
  T* X = static_cast<T*>(out.data());
  if (n == 0 || k == 0) return;
  for (int64_t i = 0; i < count; ++i) {
    to_col_major(A + i * n * n, n, n, wa.data(), n);
    to_col_major(B + i * n * k, n, k, wb.data(), n);
    lapack_int info = 0;
    lapack::gesv(N, K, wa.data(), ld, ipiv.data(), wb.data(), ld, &info);
    UMA_CHECK(info <= 0, LinAlg, "uma.linalg.", op, ": singular matrix (matrix ", i, " of the stack; U[", info - 1, ", ",
              info - 1, "] of its LU factorisation is exactly zero)");
    UMA_ASSERT(info == 0);
    from_col_major(wb.data(), n, n, k, X + i * n * k);
  }
}

template <class T> void slogdet_t(const Array& a, const Array& sign, const Array& logabs) {
  using R = Real<T>;
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  const lapack_int N = lapack_dim(n, "slogdet"), ld = std::max<lapack_int>(1, N);
  std::vector<T> w(static_cast<size_t>(n * n));
  std::vector<lapack_int> ipiv(static_cast<size_t>(std::max<int64_t>(n, 1)));
  const T* A = static_cast<const T*>(a.data());
  T* S = static_cast<T*>(sign.data());
  R* L = static_cast<R*>(logabs.data());
  for (int64_t i = 0; i < count; ++i) {
    // det(A^T) = det(A): the row-major matrix read as column-major (its transpose) is factorised as it is.
    std::copy(A + i * n * n, A + (i + 1) * n * n, w.data());
    lapack_int info = 0;
    if (n > 0) lapack::getrf(N, N, w.data(), ld, ipiv.data(), &info);
    UMA_ASSERT(info >= 0);
    if (info > 0) {  // an exactly zero pivot: det = 0
      S[i] = T(0);
      L[i] = -std::numeric_limits<R>::infinity();
      continue;
    }
    T s(1);
    R acc(0);
    for (int64_t j = 0; j < n; ++j) {
      const T d = w[static_cast<size_t>(j * n + j)];
      const R m = std::abs(d);
      if constexpr (is_cplx<T>) s *= d / m;  // NumPy's rule: a unit complex; a real pivot flips the sign when
      else if (d < 0) s = -s;                // negative, so an infinite or NaN pivot leaves it as it is
      if (ipiv[static_cast<size_t>(j)] != j + 1) s = -s;
      acc += std::log(m);
    }
    S[i] = s;
    L[i] = acc;
  }
}

template <class T> void cholesky_t(const char* op, const Array& a, bool upper, const Array& out) {
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  const lapack_int N = lapack_dim(n, op), ld = std::max<lapack_int>(1, N);
  std::vector<T> w(static_cast<size_t>(n * n));
  const T* A = static_cast<const T*>(a.data());
  T* O = static_cast<T*>(out.data());
  if (n == 0) return;
  for (int64_t i = 0; i < count; ++i) {
    to_col_major(A + i * n * n, n, n, w.data(), n);
    lapack_int info = 0;
    lapack::potrf(upper ? 'U' : 'L', N, w.data(), ld, &info);
    UMA_CHECK(info <= 0, LinAlg, "uma.linalg.", op, ": matrix ", i, " of the stack is not positive definite (its leading minor of order ",
              info, " is not positive)");
    T* o = O + i * n * n;
    from_col_major(w.data(), n, n, n, o);
    for (int64_t r = 0; r < n; ++r)  // LAPACK leaves the other triangle as it was
      for (int64_t c = 0; c < n; ++c)
        if (upper ? c < r : c > r) o[r * n + c] = T(0);
  }
}

template <class T> void eigh_t(const char* op, const Array& a, const Array& wout, const Array* v) {
  using R = Real<T>;
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  const lapack_int N = lapack_dim(n, op), ld = std::max<lapack_int>(1, N);
  if (n == 0 || count == 0) return;
  const char jobz = v ? 'V' : 'N';
  std::vector<T> w(static_cast<size_t>(n * n));
  // The workspace query: work, rwork (complex only) and iwork sizes.
  T qwork{};
  R qrwork{};
  lapack_int qiwork = 0, info = 0;
  lapack::heevd(jobz, 'L', N, w.data(), ld, static_cast<R*>(nullptr), &qwork, -1, &qrwork, -1, &qiwork, -1, &info);
  UMA_ASSERT(info == 0);
  std::vector<T> work(static_cast<size_t>(work_size(qwork)));
  std::vector<R> rwork(static_cast<size_t>(is_cplx<T> ? work_size(qrwork) : 1));
  std::vector<lapack_int> iwork(static_cast<size_t>(std::max<lapack_int>(1, qiwork)));
  const T* A = static_cast<const T*>(a.data());
  R* W = static_cast<R*>(wout.data());
  for (int64_t i = 0; i < count; ++i) {
    to_col_major(A + i * n * n, n, n, w.data(), n);
    lapack::heevd(jobz, 'L', N, w.data(), ld, W + i * n, work.data(), static_cast<lapack_int>(work.size()), rwork.data(),
                  static_cast<lapack_int>(rwork.size()), iwork.data(), static_cast<lapack_int>(iwork.size()), &info);
    UMA_ASSERT(info >= 0);
    UMA_CHECK(info == 0, LinAlg, "uma.linalg.", op, ": the eigenvalues of matrix ", i, " of the stack did not converge");
    if (v) from_col_major(w.data(), n, n, n, static_cast<T*>(v->data()) + i * n * n);
  }
}

template <class T> void eig_t(const char* op, const Array& a, const Array& wout, const Array* v) {
  using R = Real<T>;
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  if (n == 0 || count == 0) return;
  const lapack_int N = lapack_dim(n, op);
  const char jobvr = v ? 'V' : 'N';
  std::vector<T> w(static_cast<size_t>(n * n)), vr(static_cast<size_t>(v ? n * n : 1));
  std::vector<R> rwork(static_cast<size_t>(2 * n));
  T qwork{};
  lapack_int info = 0;
  lapack::geev(jobvr, N, w.data(), N, static_cast<T*>(nullptr), vr.data(), v ? N : 1, &qwork, -1, rwork.data(), &info);
  UMA_ASSERT(info == 0);
  std::vector<T> work(static_cast<size_t>(work_size(qwork)));
  const T* A = static_cast<const T*>(a.data());
  T* W = static_cast<T*>(wout.data());
  for (int64_t i = 0; i < count; ++i) {
    UMA_CHECK(all_finite(A + i * n * n, n * n), LinAlg, "uma.linalg.", op, ": matrix ", i,
              " of the stack contains an infinity or NaN");
    to_col_major(A + i * n * n, n, n, w.data(), n);
    lapack::geev(jobvr, N, w.data(), N, W + i * n, vr.data(), v ? N : 1, work.data(),
                 static_cast<lapack_int>(work.size()), rwork.data(), &info);
    UMA_ASSERT(info >= 0);
    UMA_CHECK(info == 0, LinAlg, "uma.linalg.", op, ": the eigenvalues of matrix ", i, " of the stack did not converge");
    if (v) from_col_major(vr.data(), n, n, n, static_cast<T*>(v->data()) + i * n * n);
  }
}

template <class T>
void svd_t(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full) {
  using R = Real<T>;
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(a);
  if (count == 0) return;
  const bool uv = u != nullptr;
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  if (k == 0) {  // nothing to factorise; the full bases of an empty matrix are identities
    if (uv)
      for (int64_t i = 0; i < count; ++i) {
        if (ucols == m) identity(static_cast<T*>(u->data()) + i * m * m, m);
        if (vrows == n) identity(static_cast<T*>(vh->data()) + i * n * n, n);
      }
    return;
  }
  const lapack_int M = lapack_dim(m, op), N = lapack_dim(n, op);
  const char jobz = !uv ? 'N' : full ? 'A' : 'S';
  const lapack_int lda = M, ldu = uv ? M : 1, ldvt = uv ? static_cast<lapack_int>(vrows) : 1;
  std::vector<T> w(static_cast<size_t>(m * n));
  std::vector<T> wu(static_cast<size_t>(uv ? m * ucols : 1)), wvt(static_cast<size_t>(uv ? vrows * n : 1));
  // rwork of the complex routines: LAPACK's documented minimum (it has no query).
  const int64_t mx = std::max(m, n);
  const int64_t lrwork = !is_cplx<T> ? 1 : uv ? std::max<int64_t>(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k) : 7 * k;
  std::vector<R> rwork(static_cast<size_t>(lrwork));
  std::vector<lapack_int> iwork(static_cast<size_t>(8 * k));
  T qwork{};
  lapack_int info = 0;
  lapack::gesdd(jobz, M, N, w.data(), lda, static_cast<R*>(s.data()), wu.data(), ldu, wvt.data(), ldvt, &qwork, -1,
                rwork.data(), iwork.data(), &info);
  UMA_ASSERT(info == 0);
  std::vector<T> work(static_cast<size_t>(work_size(qwork)));
  const T* A = static_cast<const T*>(a.data());
  R* S = static_cast<R*>(s.data());
  for (int64_t i = 0; i < count; ++i) {
    UMA_CHECK(all_finite(A + i * m * n, m * n), LinAlg, "uma.linalg.", op, ": the SVD of matrix ", i,
              " of the stack did not converge (it contains an infinity or NaN)");
    to_col_major(A + i * m * n, m, n, w.data(), m);
    lapack::gesdd(jobz, M, N, w.data(), lda, S + i * k, wu.data(), ldu, wvt.data(), ldvt, work.data(),
                  static_cast<lapack_int>(work.size()), rwork.data(), iwork.data(), &info);
    UMA_ASSERT(info >= 0);
    UMA_CHECK(info == 0, LinAlg, "uma.linalg.", op, ": the SVD of matrix ", i, " of the stack did not converge");
    if (uv) {
      from_col_major(wu.data(), m, m, ucols, static_cast<T*>(u->data()) + i * m * ucols);
      from_col_major(wvt.data(), vrows, vrows, n, static_cast<T*>(vh->data()) + i * vrows * n);
    }
  }
}

template <class T> void qr_t(const Array& a, const Array& q, const Array& r, bool complete) {
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(a);
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  if (count == 0 || m == 0) return;  // Q and R hold no element
  const lapack_int M = lapack_dim(m, "qr"), N = lapack_dim(n, "qr"), K = static_cast<lapack_int>(k);
  const lapack_int QC = static_cast<lapack_int>(qcols);
  // The workspace holds max(n, qcols) columns: geqrf factorises A's n columns in place, then
  // orgqr turns the first qcols of them (the reflectors; zero columns beyond n) into Q.
  const int64_t wcols = std::max(n, qcols);
  std::vector<T> w(static_cast<size_t>(m * wcols)), tau(static_cast<size_t>(std::max<int64_t>(1, k)));
  T q1{}, q2{};
  lapack_int info = 0;
  lapack::geqrf(M, N, w.data(), M, tau.data(), &q1, -1, &info);
  UMA_ASSERT(info == 0);
  lapack::orgqr(M, QC, K, w.data(), M, tau.data(), &q2, -1, &info);
  UMA_ASSERT(info == 0);
  std::vector<T> work(static_cast<size_t>(std::max(work_size(q1), work_size(q2))));
  const lapack_int lwork = static_cast<lapack_int>(work.size());
  const T* A = static_cast<const T*>(a.data());
  T* Q = static_cast<T*>(q.data());
  T* Rm = static_cast<T*>(r.data());
  for (int64_t i = 0; i < count; ++i) {
    std::fill(w.begin(), w.end(), T(0));
    to_col_major(A + i * m * n, m, n, w.data(), m);
    if (n > 0) lapack::geqrf(M, N, w.data(), M, tau.data(), work.data(), lwork, &info);
    UMA_ASSERT(info == 0);
    T* ri = Rm + i * rrows * n;  // R: the upper triangle of the factorised columns
    for (int64_t row = 0; row < rrows; ++row)
      for (int64_t c = 0; c < n; ++c) ri[row * n + c] = c >= row && row < m ? w[static_cast<size_t>(row + c * m)] : T(0);
    for (int64_t c = n; c < wcols; ++c)  // columns past A's: no reflector there
      std::fill(w.begin() + c * m, w.begin() + (c + 1) * m, T(0));
    lapack::orgqr(M, QC, K, w.data(), M, tau.data(), work.data(), lwork, &info);
    UMA_ASSERT(info == 0);
    from_col_major(w.data(), m, m, qcols, Q + i * m * qcols);
  }
}

}  // namespace

void lu_solve(const char* op, const Array& a, const Array& b, const Array& out) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { lu_solve_t<decltype(t)>(op, a, b, out); });
}
void slogdet(const Array& a, const Array& sign, const Array& logabs) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { slogdet_t<decltype(t)>(a, sign, logabs); });
}
void cholesky(const char* op, const Array& a, bool upper, const Array& out) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { cholesky_t<decltype(t)>(op, a, upper, out); });
}
void eigh(const char* op, const Array& a, const Array& w, const Array* v) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { eigh_t<decltype(t)>(op, a, w, v); });
}
void eig(const char* op, const Array& a, const Array& w, const Array* v) {
  blas_on_calling_thread();
  if (a.dtype() == DType::Complex64) eig_t<complex64>(op, a, w, v);
  else if (a.dtype() == DType::Complex128) eig_t<complex128>(op, a, w, v);
  else UMA_ASSERT(!"eig takes complex stacks");
}
void svd(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full_matrices) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { svd_t<decltype(t)>(op, a, s, u, vh, full_matrices); });
}
void qr(const Array& a, const Array& q, const Array& r, bool complete) {
  blas_on_calling_thread();
  by_dtype(a.dtype(), [&](auto t) { qr_t<decltype(t)>(a, q, r, complete); });
}

}  // namespace uma::kernels::cpu
