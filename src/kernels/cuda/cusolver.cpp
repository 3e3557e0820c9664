// uma.linalg's factorisations on cuda devices through cuSOLVER (kernels/cuda_kernels.h).
//
// Note [cuSOLVER by dlopen]
// As cuBLAS (Note [cuBLAS by dlopen] in cublas.cpp): uma links no cuSOLVER; the library is
// opened with dlopen at the first factorisation on a GPU ($UMA_CUSOLVER first, which uma.cuda
// sets to the nvidia-cusolver wheel's library when that is installed, then libcusolver.so.12 on
// the loader's path, then /usr/local/cuda), and the legacy dense entry points used
// (cusolverDn<t>getrf/getrs/potrf/geqrf/orgqr(ungqr)/syevd(heevd)/gesvd and their
// _bufferSize queries, t = S, D, C, Z) are declared here from the cuSOLVER documentation.
// Each call works like kernels/cpu/linalg.cpp: the row-major matrices are copied to
// column-major workspaces (batched transpose kernels, kernels/cuda/linalg.cu), factorised one
// matrix after the other on uma's stream, and copied back; every matrix writes its own `info`
// word, and the host reads the words back once at the end (one wait) to raise the cpu path's
// LinAlgError, naming the first failing matrix of the stack. slogdet needs no read-back.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/linalg_launch.h"
#include "kernels/cuda/library.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

namespace L = cuda_launch;

namespace {

using Handle = void*;  // cusolverDnHandle_t
// cublasFillMode_t, cublasOperation_t and cusolverEigMode_t values (cublas_api.h, cusolver_common.h).
constexpr int kLower = 0, kUpper = 1, kOpN = 0, kEigNoVector = 0, kEigVector = 1;

using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using GetrfBufFn = int (*)(Handle, int m, int n, void* A, int lda, int* lwork);
using GetrfFn = int (*)(Handle, int m, int n, void* A, int lda, void* work, int* ipiv, int* info);
using GetrsFn = int (*)(Handle, int trans, int n, int nrhs, const void* A, int lda, const int* ipiv, void* B, int ldb,
                        int* info);
using PotrfBufFn = int (*)(Handle, int uplo, int n, void* A, int lda, int* lwork);
using PotrfFn = int (*)(Handle, int uplo, int n, void* A, int lda, void* work, int lwork, int* info);
using GeqrfBufFn = int (*)(Handle, int m, int n, void* A, int lda, int* lwork);
using GeqrfFn = int (*)(Handle, int m, int n, void* A, int lda, void* tau, void* work, int lwork, int* info);
using OrgqrBufFn = int (*)(Handle, int m, int n, int k, const void* A, int lda, const void* tau, int* lwork);
using OrgqrFn = int (*)(Handle, int m, int n, int k, void* A, int lda, const void* tau, void* work, int lwork,
                        int* info);
using SyevdBufFn = int (*)(Handle, int jobz, int uplo, int n, const void* A, int lda, const void* W, int* lwork);
using SyevdFn = int (*)(Handle, int jobz, int uplo, int n, void* A, int lda, void* W, void* work, int lwork, int* info);
using GesvdBufFn = int (*)(Handle, int m, int n, int* lwork);
using GesvdFn = int (*)(Handle, signed char jobu, signed char jobvt, int m, int n, void* A, int lda, void* S, void* U,
                        int ldu, void* VT, int ldvt, void* work, int lwork, void* rwork, int* info);

// The entry points of one dtype.
struct Fns {
  GetrfBufFn getrf_buf = nullptr;
  GetrfFn getrf = nullptr;
  GetrsFn getrs = nullptr;
  PotrfBufFn potrf_buf = nullptr;
  PotrfFn potrf = nullptr;
  GeqrfBufFn geqrf_buf = nullptr;
  GeqrfFn geqrf = nullptr;
  OrgqrBufFn orgqr_buf = nullptr;
  OrgqrFn orgqr = nullptr;
  SyevdBufFn syevd_buf = nullptr;
  SyevdFn syevd = nullptr;
  GesvdBufFn gesvd_buf = nullptr;
  GesvdFn gesvd = nullptr;
};

struct Cusolver {
  std::mutex mu;
  bool tried = false;
  std::string error;
  CreateFn create = nullptr;
  SetStreamFn set_stream = nullptr;
  Fns fns[4];  // float32, float64, complex64, complex128
  Handle handles[64] = {};
};

Cusolver& lib() {
  static Cusolver* c = new Cusolver();  // leaked: used until process exit
  return *c;
}

int type_index(DType t) {
  switch (t) {
    case DType::Float32: return 0;
    case DType::Float64: return 1;
    case DType::Complex64: return 2;
    case DType::Complex128: return 3;
    default: UMA_FAIL(Type, "uma.linalg on cuda: dtype ", dtype_name(t), " has no cuSOLVER routine");
  }
}

// Resolves every entry point; the name of the first missing one, or "".
std::string resolve(void* so, Cusolver& c) {
  auto sym = [&](const std::string& name, auto& fn) -> bool {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(so, name.c_str()));
    return fn != nullptr;
  };
  if (!sym("cusolverDnCreate", c.create)) return "cusolverDnCreate";
  if (!sym("cusolverDnSetStream", c.set_stream)) return "cusolverDnSetStream";
  const char prefix[4] = {'S', 'D', 'C', 'Z'};
  for (int t = 0; t < 4; ++t) {
    const std::string p = std::string("cusolverDn") + prefix[t];
    const bool cplx = t >= 2;
    Fns& f = c.fns[t];
    const std::string orgqr = cplx ? "ungqr" : "orgqr", syevd = cplx ? "heevd" : "syevd";
    const std::pair<std::string, bool> tried[] = {
        {p + "getrf_bufferSize", sym(p + "getrf_bufferSize", f.getrf_buf)},
        {p + "getrf", sym(p + "getrf", f.getrf)},
        {p + "getrs", sym(p + "getrs", f.getrs)},
        {p + "potrf_bufferSize", sym(p + "potrf_bufferSize", f.potrf_buf)},
        {p + "potrf", sym(p + "potrf", f.potrf)},
        {p + "geqrf_bufferSize", sym(p + "geqrf_bufferSize", f.geqrf_buf)},
        {p + "geqrf", sym(p + "geqrf", f.geqrf)},
        {p + orgqr + "_bufferSize", sym(p + orgqr + "_bufferSize", f.orgqr_buf)},
        {p + orgqr, sym(p + orgqr, f.orgqr)},
        {p + syevd + "_bufferSize", sym(p + syevd + "_bufferSize", f.syevd_buf)},
        {p + syevd, sym(p + syevd, f.syevd)},
        {p + "gesvd_bufferSize", sym(p + "gesvd_bufferSize", f.gesvd_buf)},
        {p + "gesvd", sym(p + "gesvd", f.gesvd)},
    };
    for (const auto& [name, ok] : tried)
      if (!ok) return name;
  }
  return "";
}

// The cuSOLVER handle of `device` bound to uma's stream; RuntimeError naming `op` and what is
// missing when cuSOLVER cannot load.
Handle handle(const char* op, int device) {
  Cusolver& c = lib();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.tried) {
    c.tried = true;
    std::string tried;
    void* so = open_library("UMA_CUSOLVER", {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so",
                                       "/usr/local/cuda/lib64/libcusolver.so.12", "/usr/local/cuda/lib64/libcusolver.so"}, tried);
    if (so) {
      const std::string missing = resolve(so, c);
      if (!missing.empty()) c.error = "the loaded libcusolver lacks " + missing;
    } else {
      c.error = "cuSOLVER (libcusolver.so.12, CUDA 13) is not installed: pip install nvidia-cusolver, or install the "
                "CUDA toolkit's libcusolver, or set UMA_CUSOLVER to the library's path (tried: " + tried + ")";
    }
  }
  UMA_CHECK(c.error.empty(), Runtime, "uma.linalg.", op, " on cuda:", device, ": ", c.error);
  UMA_CHECK(device >= 0 && device < 64, Runtime, "uma.linalg.", op, " on cuda: device index ", device, " out of range");
  if (!c.handles[device]) {
    uma::cuda::detail::DeviceGuard guard(device);
    Handle h = nullptr;
    const int st = c.create(&h);
    UMA_CHECK(st == 0, Runtime, "uma.linalg.", op, " on cuda:", device, ": cusolverDnCreate failed with status ", st);
    const int s2 = c.set_stream(h, static_cast<cudaStream_t>(uma::cuda::stream(device)));
    UMA_CHECK(s2 == 0, Runtime, "uma.linalg.", op, " on cuda:", device, ": cusolverDnSetStream failed with status ", s2);
    c.handles[device] = h;
  }
  return c.handles[device];
}

// One factorisation call: the device, its stream, the handle and the dtype's entry points.
struct Ctx {
  const char* op;
  Device dev;
  uma::cuda::detail::DeviceGuard guard;
  void* stream;
  Handle h;
  const Fns& f;
  int dt;
  int64_t isz;
  Ctx(const char* op_, const Array& a)
      : op(op_), dev(a.device()), guard(a.device().index), stream(uma::cuda::stream(a.device().index)),
        h(handle(op_, a.device().index)), f(lib().fns[type_index(a.dtype())]), dt(static_cast<int>(a.dtype())),
        isz(static_cast<int64_t>(a.itemsize())) {}
  cudaStream_t st() const { return static_cast<cudaStream_t>(stream); }

  // RuntimeError naming the routine for a status other than CUSOLVER_STATUS_SUCCESS.
  void ok(int status, const char* routine) const {
    UMA_CHECK(status == 0, Runtime, "uma.linalg.", op, " on cuda: ", routine, " failed with status ", status);
  }
  void launched(int e, const char* what) const {
    if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), what, __FILE__, __LINE__);
  }
  // A device buffer of `elems` elements of the dtype (or `bytes` bytes), from the stream-ordered cache.
  Array elems(int64_t n) const { return Array::empty({std::max<int64_t>(n, 1) * isz}, DType::UInt8, dev); }
  Array ints(int64_t n) const { return Array::empty({std::max<int64_t>(n, 1)}, DType::Int32, dev); }
  // out (count matrices, cols x rows) = the transposes of in (rows x cols), conjugated when `conj`.
  void transpose(const void* in, void* out, int64_t count, int64_t rows, int64_t cols, bool conj = false) const {
    launched(L::transpose_batched(dt, in, out, count, rows, cols, conj, stream), "transpose_batched<<<...>>>");
  }
  // The info words of the stack (one wait for the stream).
  std::vector<int> infos(const Array& info, int64_t count) const {
    std::vector<int> h(static_cast<std::size_t>(count));
    if (count == 0) return h;
    uma::cuda::detail::refuse_capture(dev.index, "cuSOLVER's info words");
    UMA_CUDA_CHECK(cudaMemcpyAsync(h.data(), info.data(), h.size() * sizeof(int), cudaMemcpyDeviceToHost, st()));
    UMA_CUDA_CHECK(cudaStreamSynchronize(st()));
    for (std::size_t i = 0; i < h.size(); ++i)
      UMA_CHECK(h[i] >= 0, Runtime, "uma.linalg.", op, " on cuda: cuSOLVER rejected argument ", -h[i], " (matrix ", i,
                " of the stack)");
    return h;
  }
};

// cuSOLVER's sizes are 32-bit: a matrix dimension beyond that is a ValueError, never a wrap.
int dim(int64_t n, const char* op) {
  UMA_CHECK(n <= std::numeric_limits<int>::max(), Value, "uma.linalg.", op, ": a matrix dimension of ", n,
            " exceeds cuSOLVER's 32-bit sizes");
  return static_cast<int>(n);
}

int64_t batch_count(const Array& a) {
  int64_t c = 1;
  for (int64_t d = 0; d + 2 < a.ndim(); ++d) c *= a.shape()[d];
  return c;
}

char* at(const Array& a, int64_t elem, int64_t isz) { return static_cast<char*>(a.data()) + elem * isz; }
int* at_int(const Array& a, int64_t i) { return static_cast<int*>(a.data()) + i; }

}  // namespace

void lu_solve(const char* op, const Array& a, const Array& b, const Array& out) {
  const int64_t n = a.shape()[a.ndim() - 1], k = b.shape()[b.ndim() - 1], count = batch_count(a);
  if (n == 0 || k == 0 || count == 0) return;
  const int N = dim(n, op), K = dim(k, op);
  Ctx c(op, a);
  Array wa = c.elems(count * n * n), wb = c.elems(count * n * k);
  c.transpose(a.data(), wa.data(), count, n, n);  // column-major A, B: LAPACK's gesv
  c.transpose(b.data(), wb.data(), count, n, k);
  int lwork = 0;
  c.ok(c.f.getrf_buf(c.h, N, N, wa.data(), N, &lwork), "getrf_bufferSize");
  Array work = c.elems(lwork), ipiv = c.ints(count * n), info = c.ints(count), info2 = c.ints(count);
  for (int64_t i = 0; i < count; ++i) {
    c.ok(c.f.getrf(c.h, N, N, at(wa, i * n * n, c.isz), N, work.data(), at_int(ipiv, i * n), at_int(info, i)), "getrf");
    c.ok(c.f.getrs(c.h, kOpN, N, K, at(wa, i * n * n, c.isz), N, at_int(ipiv, i * n), at(wb, i * n * k, c.isz), N,
                   at_int(info2, i)),
         "getrs");
  }
  const std::vector<int> h = c.infos(info, count);
  for (int64_t i = 0; i < count; ++i)
    UMA_CHECK(h[static_cast<std::size_t>(i)] == 0, LinAlg, "uma.linalg.", op, ": singular matrix (matrix ", i,
              " of the stack; U[", h[static_cast<std::size_t>(i)] - 1, ", ", h[static_cast<std::size_t>(i)] - 1,
              "] of its LU factorisation is exactly zero)");
  c.transpose(wb.data(), out.data(), count, k, n);  // column-major X back to row-major
}

void slogdet(const Array& a, const Array& sign, const Array& logabs) {
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  if (count == 0) return;
  const int N = dim(n, "slogdet");
  Ctx c("slogdet", a);
  // det(A^T) = det(A): the row-major matrix read as column-major (its transpose) is factorised as it is.
  Array w = c.elems(count * n * n), ipiv = c.ints(count * n), info = c.ints(count);
  UMA_CUDA_CHECK(cudaMemsetAsync(info.data(), 0, static_cast<std::size_t>(count) * sizeof(int), c.st()));
  if (n > 0) {
    UMA_CUDA_CHECK(cudaMemcpyAsync(w.data(), a.data(), static_cast<std::size_t>(count * n * n * c.isz),
                                   cudaMemcpyDeviceToDevice, c.st()));
    int lwork = 0;
    c.ok(c.f.getrf_buf(c.h, N, N, w.data(), N, &lwork), "getrf_bufferSize");
    Array work = c.elems(lwork);
    for (int64_t i = 0; i < count; ++i)
      c.ok(c.f.getrf(c.h, N, N, at(w, i * n * n, c.isz), N, work.data(), at_int(ipiv, i * n), at_int(info, i)), "getrf");
  }
  c.launched(L::slogdet_from_lu(c.dt, w.data(), static_cast<const int*>(ipiv.data()), static_cast<const int*>(info.data()),
                                count, n, sign.data(), logabs.data(), c.stream),
             "slogdet_from_lu<<<...>>>");
}

void cholesky(const char* op, const Array& a, bool upper, const Array& out) {
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  if (n == 0 || count == 0) return;
  const int N = dim(n, op);
  Ctx c(op, a);
  // The row-major Hermitian A read as column-major is conj(A): its upper Cholesky factor U
  // (conj(A) = U^H U) read back as row-major is A's lower factor L = U^T, and the other way
  // round; the triangle potrf reads is the one asked for.
  UMA_CUDA_CHECK(cudaMemcpyAsync(out.data(), a.data(), static_cast<std::size_t>(count * n * n * c.isz),
                                 cudaMemcpyDeviceToDevice, c.st()));
  const int uplo = upper ? kLower : kUpper;
  int lwork = 0;
  c.ok(c.f.potrf_buf(c.h, uplo, N, out.data(), N, &lwork), "potrf_bufferSize");
  Array work = c.elems(lwork), info = c.ints(count);
  for (int64_t i = 0; i < count; ++i)
    c.ok(c.f.potrf(c.h, uplo, N, at(out, i * n * n, c.isz), N, work.data(), lwork, at_int(info, i)), "potrf");
  const std::vector<int> h = c.infos(info, count);
  for (int64_t i = 0; i < count; ++i)
    UMA_CHECK(h[static_cast<std::size_t>(i)] == 0, LinAlg, "uma.linalg.", op, ": matrix ", i,
              " of the stack is not positive definite (its leading minor of order ", h[static_cast<std::size_t>(i)],
              " is not positive)");
  // cuSOLVER leaves the other triangle as it was
  c.launched(L::zero_triangle(c.dt, out.data(), count, n, /*upper_zero=*/!upper, c.stream), "zero_triangle<<<...>>>");
}

void eigh(const char* op, const Array& a, const Array& w, const Array* v) {
  const int64_t n = a.shape()[a.ndim() - 1], count = batch_count(a);
  if (n == 0 || count == 0) return;
  const int N = dim(n, op);
  Ctx c(op, a);
  const int jobz = v ? kEigVector : kEigNoVector;
  Array wa = c.elems(count * n * n);
  c.transpose(a.data(), wa.data(), count, n, n);  // column-major: the lower triangle read is A's
  const int64_t rsz = c.isz / (c.dt == static_cast<int>(DType::Complex64) || c.dt == static_cast<int>(DType::Complex128) ? 2 : 1);
  int lwork = 0;
  c.ok(c.f.syevd_buf(c.h, jobz, kLower, N, wa.data(), N, w.data(), &lwork), "syevd_bufferSize");
  Array work = c.elems(lwork), info = c.ints(count);
  for (int64_t i = 0; i < count; ++i)
    c.ok(c.f.syevd(c.h, jobz, kLower, N, at(wa, i * n * n, c.isz), N, at(w, i * n, rsz), work.data(), lwork,
                   at_int(info, i)),
         "syevd");
  const std::vector<int> h = c.infos(info, count);
  for (int64_t i = 0; i < count; ++i)
    UMA_CHECK(h[static_cast<std::size_t>(i)] == 0, LinAlg, "uma.linalg.", op, ": the eigenvalues of matrix ", i,
              " of the stack did not converge");
  if (v) c.transpose(wa.data(), v->data(), count, n, n);  // the eigenvectors as columns, row-major
}

void eig(const char* op, const Array& a, const Array&, const Array*) {
  UMA_FAIL(Runtime, "uma.linalg.", op, " is not supported on cuda devices (no general eigensolver on the GPU; got an "
           "array on ", a.device().str(), "); move the array with to_device('cpu')");
}

void svd(const char* op, const Array& a, const Array& s, const Array* u, const Array* vh, bool full) {
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(a);
  if (count == 0) return;
  const bool uv = u != nullptr;
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  Ctx c(op, a);
  if (k == 0) {  // nothing to factorise; the full bases of an empty matrix are identities
    if (uv && ucols == m) c.launched(L::identity_batched(c.dt, u->data(), count, m, c.stream), "identity<<<...>>>");
    if (uv && vrows == n) c.launched(L::identity_batched(c.dt, vh->data(), count, n, c.stream), "identity<<<...>>>");
    return;
  }
  {  // LAPACK (and cuSOLVER) stop on an infinity or NaN instead of reporting it: the cpu path's error
    Array flag = Array::empty({1}, DType::UInt64, c.dev);
    UMA_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0xff, sizeof(unsigned long long), c.st()));
    c.launched(L::first_nonfinite(c.dt, a.data(), count, m * n, static_cast<unsigned long long*>(flag.data()), c.stream),
               "first_nonfinite<<<...>>>");
    unsigned long long first = 0;
    uma::cuda::detail::refuse_capture(c.dev.index, "the SVD's finiteness check");
    UMA_CUDA_CHECK(cudaMemcpyAsync(&first, flag.data(), sizeof(first), cudaMemcpyDeviceToHost, c.st()));
    UMA_CUDA_CHECK(cudaStreamSynchronize(c.st()));
    UMA_CHECK(first == std::numeric_limits<unsigned long long>::max(), LinAlg, "uma.linalg.", op, ": the SVD of matrix ",
              first, " of the stack did not converge (it contains an infinity or NaN)");
  }
  // cuSOLVER's gesvd takes rows >= columns. m >= n: the column-major A itself (a transpose);
  // m < n: the column-major A^H (n x m), which is the row-major buffer conjugated, and
  // A = (A^H)^H swaps the roles: u = conj(VT') and vh = conj(U'), both read as they lie.
  const bool tall = m >= n;
  const int64_t M = tall ? m : n, Nc = tall ? n : m;  // the factorised column-major matrix
  const int64_t uc = tall ? ucols : vrows, vr = tall ? vrows : ucols;  // its U' columns and VT' rows
  const int Mi = dim(M, op), Ni = dim(Nc, op);
  Array wa = c.elems(count * m * n);
  if (tall) c.transpose(a.data(), wa.data(), count, m, n);
  else c.transpose(a.data(), wa.data(), count, 1, m * n, /*conj=*/true);
  const signed char job = !uv ? 'N' : full ? 'A' : 'S';
  Array wu = c.elems(uv ? count * M * uc : 1), wvt = c.elems(uv ? count * vr * Nc : 1);
  const int64_t rsz = c.isz / (c.dt == static_cast<int>(DType::Complex64) || c.dt == static_cast<int>(DType::Complex128) ? 2 : 1);
  Array rwork = Array::empty({k * 8}, DType::UInt8, c.dev);
  int lwork = 0;
  c.ok(c.f.gesvd_buf(c.h, Mi, Ni, &lwork), "gesvd_bufferSize");
  Array work = c.elems(lwork), info = c.ints(count);
  for (int64_t i = 0; i < count; ++i)
    c.ok(c.f.gesvd(c.h, job, job, Mi, Ni, at(wa, i * m * n, c.isz), Mi, at(s, i * k, rsz),
                   uv ? at(wu, i * M * uc, c.isz) : nullptr, uv ? Mi : 1, uv ? at(wvt, i * vr * Nc, c.isz) : nullptr,
                   uv ? static_cast<int>(vr) : 1, work.data(), lwork, rwork.data(), at_int(info, i)),
         "gesvd");
  const std::vector<int> h = c.infos(info, count);
  for (int64_t i = 0; i < count; ++i)
    UMA_CHECK(h[static_cast<std::size_t>(i)] == 0, LinAlg, "uma.linalg.", op, ": the SVD of matrix ", i,
              " of the stack did not converge");
  if (!uv) return;
  if (tall) {
    c.transpose(wu.data(), u->data(), count, ucols, m);   // U (column-major m x ucols) to row-major
    c.transpose(wvt.data(), vh->data(), count, n, vrows); // VT (column-major vrows x n) to row-major
  } else {
    c.transpose(wvt.data(), u->data(), count, 1, m * ucols, /*conj=*/true);
    c.transpose(wu.data(), vh->data(), count, 1, vrows * n, /*conj=*/true);
  }
}

void qr(const Array& a, const Array& q, const Array& r, bool complete) {
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(a);
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  if (count == 0 || m == 0) return;  // Q and R hold no element
  const int M = dim(m, "qr"), N = dim(n, "qr"), K = static_cast<int>(k), QC = static_cast<int>(qcols);
  Ctx c("qr", a);
  if (k == 0) {  // no column (n == 0): R is empty, Q the identity (complete) or empty (reduced)
    if (qcols == m) c.launched(L::identity_batched(c.dt, q.data(), count, m, c.stream), "identity<<<...>>>");
    return;
  }
  // The workspace holds max(n, qcols) columns per matrix: geqrf factorises A's n columns in
  // place, then orgqr turns the first qcols of them (zero columns beyond n) into Q.
  const int64_t wcols = std::max(n, qcols);
  Array w = c.elems(count * m * wcols), tau = c.elems(count * std::max<int64_t>(k, 1));
  {
    Array wa = c.elems(count * m * n);
    c.transpose(a.data(), wa.data(), count, m, n);
    UMA_CUDA_CHECK(cudaMemcpy2DAsync(w.data(), static_cast<std::size_t>(m * wcols * c.isz), wa.data(),
                                       static_cast<std::size_t>(m * n * c.isz), static_cast<std::size_t>(m * n * c.isz),
                                       static_cast<std::size_t>(count), cudaMemcpyDeviceToDevice, c.st()));
  }
  int l1 = 0, l2 = 0;
  c.ok(c.f.geqrf_buf(c.h, M, N, w.data(), M, &l1), "geqrf_bufferSize");
  c.ok(c.f.orgqr_buf(c.h, M, QC, K, w.data(), M, tau.data(), &l2), "orgqr_bufferSize");
  const int lwork = std::max(l1, l2);
  Array work = c.elems(lwork), info = c.ints(count);
  for (int64_t i = 0; i < count; ++i)
    c.ok(c.f.geqrf(c.h, M, N, at(w, i * m * wcols, c.isz), M, at(tau, i * std::max<int64_t>(k, 1), c.isz),
                     work.data(), lwork, at_int(info, i)),
           "geqrf");
  // R: the upper triangle of the factorised columns; then the columns past A's are cleared
  c.launched(L::qr_r(c.dt, w.data(), count, m, wcols, n, rrows, r.data(), c.stream), "qr_r<<<...>>>");
  for (int64_t i = 0; i < count; ++i)
    c.ok(c.f.orgqr(c.h, M, QC, K, at(w, i * m * wcols, c.isz), M, at(tau, i * std::max<int64_t>(k, 1), c.isz),
                   work.data(), lwork, at_int(info, i)),
         "orgqr");
  c.infos(info, count);  // only argument errors are possible
  // Q: the first qcols columns of each column-major workspace, to row-major
  if (wcols == qcols) {
    c.transpose(w.data(), q.data(), count, qcols, m);
  } else {
    Array wq = c.elems(count * m * qcols);
    UMA_CUDA_CHECK(cudaMemcpy2DAsync(wq.data(), static_cast<std::size_t>(m * qcols * c.isz), w.data(),
                                     static_cast<std::size_t>(m * wcols * c.isz),
                                     static_cast<std::size_t>(m * qcols * c.isz), static_cast<std::size_t>(count),
                                     cudaMemcpyDeviceToDevice, c.st()));
    c.transpose(wq.data(), q.data(), count, qcols, m);
  }
}

}  // namespace uma::kernels::cuda
