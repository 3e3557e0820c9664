// src/kernels/cpu/lapack.h — the Fortran LAPACK routines uma calls (internal), as OpenBLAS
// exports them (Debian's libopenblas: `dgetrf_`, `zheevd_`, ...), and one C++ overload set per
// routine over the four element types.
//
// Fortran conventions: every argument by pointer; matrices in column-major order with a leading
// dimension (the callers copy each row-major matrix into a column-major workspace and back);
// LP64 integers (`lapack_int`, 32 bits: Debian's libopenblas); each CHARACTER argument adds a
// hidden length argument after the others (gfortran's ABI), passed as 1. A workspace query is
// the call with lwork = -1, which writes the optimal size into work[0].
#pragma once
#include <complex>
#include <cstddef>

namespace uma::kernels::cpu::lapack {

using lapack_int = int;
using c32 = std::complex<float>;
using c64 = std::complex<double>;

extern "C" {
// LU factorisation with partial pivoting, A = P L U.
void sgetrf_(const lapack_int* m, const lapack_int* n, float* a, const lapack_int* lda, lapack_int* ipiv, lapack_int* info);
void dgetrf_(const lapack_int* m, const lapack_int* n, double* a, const lapack_int* lda, lapack_int* ipiv, lapack_int* info);
void cgetrf_(const lapack_int* m, const lapack_int* n, c32* a, const lapack_int* lda, lapack_int* ipiv, lapack_int* info);
void zgetrf_(const lapack_int* m, const lapack_int* n, c64* a, const lapack_int* lda, lapack_int* ipiv, lapack_int* info);
// Solves A X = B through the LU factorisation of A (B overwritten by X).
void sgesv_(const lapack_int* n, const lapack_int* nrhs, float* a, const lapack_int* lda, lapack_int* ipiv, float* b,
            const lapack_int* ldb, lapack_int* info);
void dgesv_(const lapack_int* n, const lapack_int* nrhs, double* a, const lapack_int* lda, lapack_int* ipiv, double* b,
            const lapack_int* ldb, lapack_int* info);
void cgesv_(const lapack_int* n, const lapack_int* nrhs, c32* a, const lapack_int* lda, lapack_int* ipiv, c32* b,
            const lapack_int* ldb, lapack_int* info);
void zgesv_(const lapack_int* n, const lapack_int* nrhs, c64* a, const lapack_int* lda, lapack_int* ipiv, c64* b,
            const lapack_int* ldb, lapack_int* info);
// Cholesky factorisation of a Hermitian positive-definite matrix (the `uplo` triangle).
void spotrf_(const char* uplo, const lapack_int* n, float* a, const lapack_int* lda, lapack_int* info, std::size_t);
void dpotrf_(const char* uplo, const lapack_int* n, double* a, const lapack_int* lda, lapack_int* info, std::size_t);
void cpotrf_(const char* uplo, const lapack_int* n, c32* a, const lapack_int* lda, lapack_int* info, std::size_t);
void zpotrf_(const char* uplo, const lapack_int* n, c64* a, const lapack_int* lda, lapack_int* info, std::size_t);
// Eigenvalues (and vectors) of a real symmetric / complex Hermitian matrix, divide and conquer.
void ssyevd_(const char* jobz, const char* uplo, const lapack_int* n, float* a, const lapack_int* lda, float* w,
             float* work, const lapack_int* lwork, lapack_int* iwork, const lapack_int* liwork, lapack_int* info,
             std::size_t, std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const lapack_int* n, double* a, const lapack_int* lda, double* w,
             double* work, const lapack_int* lwork, lapack_int* iwork, const lapack_int* liwork, lapack_int* info,
             std::size_t, std::size_t);
void cheevd_(const char* jobz, const char* uplo, const lapack_int* n, c32* a, const lapack_int* lda, float* w,
             c32* work, const lapack_int* lwork, float* rwork, const lapack_int* lrwork, lapack_int* iwork,
             const lapack_int* liwork, lapack_int* info, std::size_t, std::size_t);
void zheevd_(const char* jobz, const char* uplo, const lapack_int* n, c64* a, const lapack_int* lda, double* w,
             c64* work, const lapack_int* lwork, double* rwork, const lapack_int* lrwork, lapack_int* iwork,
             const lapack_int* liwork, lapack_int* info, std::size_t, std::size_t);
// Singular value decomposition A = U diag(s) VT, divide and conquer.
void sgesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, float* a, const lapack_int* lda, float* s,
             float* u, const lapack_int* ldu, float* vt, const lapack_int* ldvt, float* work, const lapack_int* lwork,
             lapack_int* iwork, lapack_int* info, std::size_t);
void dgesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, double* a, const lapack_int* lda, double* s,
             double* u, const lapack_int* ldu, double* vt, const lapack_int* ldvt, double* work,
             const lapack_int* lwork, lapack_int* iwork, lapack_int* info, std::size_t);
void cgesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, c32* a, const lapack_int* lda, float* s,
             c32* u, const lapack_int* ldu, c32* vt, const lapack_int* ldvt, c32* work, const lapack_int* lwork,
             float* rwork, lapack_int* iwork, lapack_int* info, std::size_t);
void zgesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, c64* a, const lapack_int* lda, double* s,
             c64* u, const lapack_int* ldu, c64* vt, const lapack_int* ldvt, c64* work, const lapack_int* lwork,
             double* rwork, lapack_int* iwork, lapack_int* info, std::size_t);
// Eigenvalues and right eigenvectors of a general complex matrix (A VR = VR diag(w)).
void cgeev_(const char* jobvl, const char* jobvr, const lapack_int* n, c32* a, const lapack_int* lda, c32* w, c32* vl,
            const lapack_int* ldvl, c32* vr, const lapack_int* ldvr, c32* work, const lapack_int* lwork, float* rwork,
            lapack_int* info, std::size_t, std::size_t);
void zgeev_(const char* jobvl, const char* jobvr, const lapack_int* n, c64* a, const lapack_int* lda, c64* w, c64* vl,
            const lapack_int* ldvl, c64* vr, const lapack_int* ldvr, c64* work, const lapack_int* lwork, double* rwork,
            lapack_int* info, std::size_t, std::size_t);
// QR factorisation A = Q R (Householder reflectors below the diagonal, their scalars in tau) ...
void sgeqrf_(const lapack_int* m, const lapack_int* n, float* a, const lapack_int* lda, float* tau, float* work,
             const lapack_int* lwork, lapack_int* info);
void dgeqrf_(const lapack_int* m, const lapack_int* n, double* a, const lapack_int* lda, double* tau, double* work,
             const lapack_int* lwork, lapack_int* info);
void cgeqrf_(const lapack_int* m, const lapack_int* n, c32* a, const lapack_int* lda, c32* tau, c32* work,
             const lapack_int* lwork, lapack_int* info);
void zgeqrf_(const lapack_int* m, const lapack_int* n, c64* a, const lapack_int* lda, c64* tau, c64* work,
             const lapack_int* lwork, lapack_int* info);
// ... and the first n columns of Q from the k reflectors.
void sorgqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, float* a, const lapack_int* lda,
             const float* tau, float* work, const lapack_int* lwork, lapack_int* info);
void dorgqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, double* a, const lapack_int* lda,
             const double* tau, double* work, const lapack_int* lwork, lapack_int* info);
void cungqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, c32* a, const lapack_int* lda,
             const c32* tau, c32* work, const lapack_int* lwork, lapack_int* info);
void zungqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, c64* a, const lapack_int* lda,
             const c64* tau, c64* work, const lapack_int* lwork, lapack_int* info);
}

// ---- one name per routine, overloaded on the element type -----------------------------------
#define UMA_LAPACK_4(X) X(float, float, s) X(double, double, d) X(c32, float, c) X(c64, double, z)

#define UMA_GETRF(T, R, p)                                                                      \
  inline void getrf(lapack_int m, lapack_int n, T* a, lapack_int lda, lapack_int* ipiv, lapack_int* info) { \
    p##getrf_(&m, &n, a, &lda, ipiv, info);                                                     \
  }
#define UMA_GESV(T, R, p)                                                                                  \
  inline void gesv(lapack_int n, lapack_int nrhs, T* a, lapack_int lda, lapack_int* ipiv, T* b, lapack_int ldb, \
                   lapack_int* info) {                                                                     \
    p##gesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, info);                                                     \
  }
#define UMA_POTRF(T, R, p) \
  inline void potrf(char uplo, lapack_int n, T* a, lapack_int lda, lapack_int* info) { p##potrf_(&uplo, &n, a, &lda, info, 1); }
#define UMA_GEQRF(T, R, p)                                                                                    \
  inline void geqrf(lapack_int m, lapack_int n, T* a, lapack_int lda, T* tau, T* work, lapack_int lwork,      \
                    lapack_int* info) {                                                                       \
    p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                                      \
  }
UMA_LAPACK_4(UMA_GETRF) UMA_LAPACK_4(UMA_GESV) UMA_LAPACK_4(UMA_POTRF) UMA_LAPACK_4(UMA_GEQRF)
#undef UMA_GETRF
#undef UMA_GESV
#undef UMA_POTRF
#undef UMA_GEQRF
#undef UMA_LAPACK_4

inline void orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda, const float* tau, float* work,
                  lapack_int lwork, lapack_int* info) { sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda, const double* tau, double* work,
                  lapack_int lwork, lapack_int* info) { dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(lapack_int m, lapack_int n, lapack_int k, c32* a, lapack_int lda, const c32* tau, c32* work,
                  lapack_int lwork, lapack_int* info) { cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }
inline void orgqr(lapack_int m, lapack_int n, lapack_int k, c64* a, lapack_int lda, const c64* tau, c64* work,
                  lapack_int lwork, lapack_int* info) { zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info); }

// Symmetric/Hermitian eigensolver: rwork and lrwork are used by the complex routines only.
inline void heevd(char jobz, char uplo, lapack_int n, float* a, lapack_int lda, float* w, float* work, lapack_int lwork,
                  float*, lapack_int, lapack_int* iwork, lapack_int liwork, lapack_int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void heevd(char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w, double* work,
                  lapack_int lwork, double*, lapack_int, lapack_int* iwork, lapack_int liwork, lapack_int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void heevd(char jobz, char uplo, lapack_int n, c32* a, lapack_int lda, float* w, c32* work, lapack_int lwork,
                  float* rwork, lapack_int lrwork, lapack_int* iwork, lapack_int liwork, lapack_int* info) {
  cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
inline void heevd(char jobz, char uplo, lapack_int n, c64* a, lapack_int lda, double* w, c64* work, lapack_int lwork,
                  double* rwork, lapack_int lrwork, lapack_int* iwork, lapack_int liwork, lapack_int* info) {
  zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}

// Divide-and-conquer SVD: rwork is used by the complex routines only.
inline void gesdd(char jobz, lapack_int m, lapack_int n, float* a, lapack_int lda, float* s, float* u, lapack_int ldu,
                  float* vt, lapack_int ldvt, float* work, lapack_int lwork, float*, lapack_int* iwork,
                  lapack_int* info) {
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s, double* u,
                  lapack_int ldu, double* vt, lapack_int ldvt, double* work, lapack_int lwork, double*,
                  lapack_int* iwork, lapack_int* info) {
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, lapack_int m, lapack_int n, c32* a, lapack_int lda, float* s, c32* u, lapack_int ldu,
                  c32* vt, lapack_int ldvt, c32* work, lapack_int lwork, float* rwork, lapack_int* iwork,
                  lapack_int* info) {
  cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
inline void gesdd(char jobz, lapack_int m, lapack_int n, c64* a, lapack_int lda, double* s, c64* u, lapack_int ldu,
                  c64* vt, lapack_int ldvt, c64* work, lapack_int lwork, double* rwork, lapack_int* iwork,
                  lapack_int* info) {
  zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}

// General eigensolver, complex routines only (a real matrix is computed as a complex one); the
// left eigenvectors are not computed. rwork holds 2n reals.
inline void geev(char jobvr, lapack_int n, c32* a, lapack_int lda, c32* w, c32* vr, lapack_int ldvr, c32* work,
                 lapack_int lwork, float* rwork, lapack_int* info) {
  const char no = 'N';
  const lapack_int one = 1;
  cgeev_(&no, &jobvr, &n, a, &lda, w, nullptr, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}
inline void geev(char jobvr, lapack_int n, c64* a, lapack_int lda, c64* w, c64* vr, lapack_int ldvr, c64* work,
                 lapack_int lwork, double* rwork, lapack_int* info) {
  const char no = 'N';
  const lapack_int one = 1;
  zgeev_(&no, &jobvr, &n, a, &lda, w, nullptr, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}

}  // namespace uma::kernels::cpu::lapack
