// matmul on cuda devices through cuBLAS (kernels/cuda_kernels.h).
//
// Note [cuBLAS by dlopen]
// uma links no cuBLAS: the library is opened with dlopen at the first GPU matmul (so builds
// need no cuBLAS headers or libraries and `import uma` never loads it; $UMA_CUBLAS first, which
// uma.cuda sets to the nvidia-cublas wheel's library when that is installed), and the few entry
// points used are declared here from the cuBLAS API documentation. Every product is one
// cublasGemmStridedBatchedEx call (batch 1 for a single matrix) on uma's stream: float32 and
// float64 with their own compute type (TF32 tensor-core passes for float32 and complex64 only
// when ops::set_cuda_matmul_precision asked for them), float16/bfloat16 with float32 compute,
// complex64/complex128 with the float32/float64 compute types (complex scalars).
// Row-major C = A @ B is computed as the column-major C^T = B^T A^T (plain transposes, no
// conjugation). Bool and integer products, and small float32/float64 ones (small_product:
// there cuBLAS's kernels take several microseconds and a split-K pass), run uma's own tiled
// kernel (kernels/cuda/matmul_tiled.cu), in every precision setting.
//
// Note [Scaled updates]
// A weight's SGD update after its gradient's product, `w + s * (a @ b)` (the graph's
// `w - lr * g` after the simplify pass, s = -lr), is a product whose chain is its epilogue
// (ops::matmul_fused). Where the product goes to cuBLAS, the chain would run after it as its
// own kernel, reading the product back from memory beside w: for a 4096 x 4096 float32 weight,
// 64 MiB written and read again, and a launch. Where the chain is exactly `C + s * P` (either
// operand order of each op; P the product, C an operand of the result's shape, dtype and
// device whose rows have unit stride, s one element of the result's dtype on its device) it is
// one cuBLASLt product instead (matmul_scaled_add): D = alpha * (a @ b) + beta * C with alpha
// read from s's memory when the kernel runs (pointer mode device, so a learning rate that a
// shared variable holds is read where it lives and a recorded graph sees its later values)
// and beta a 1 in device memory. The result is rounded once from alpha * sum + C, where the
// chain rounds the product, then s times it, then the sum: within the accuracy rule of the
// product then the chain (DESIGN.md, "Decisions"), not bit for bit. The op-by-op run and the
// recordings of a Program take the same route with the same algorithm (the heuristic's first,
// kept per shape, layout, alignment, dtype, precision and device), so they agree bit for bit.
// cuBLASLt is opened beside cuBLAS (the library that cuBLAS itself loads); where it is not
// there, or the heuristic offers no algorithm, the product and the chain run as before.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "kernels/cuda/index_launch.h"
#include "kernels/cuda/library.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/error.h"
#include "uma/ops.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

namespace {

using Handle = void*;  // cublasHandle_t
// cublasComputeType_t values (cublas_api.h).
constexpr int kCompute32F = 68, kCompute32FFastTF32 = 77, kCompute64F = 70;
constexpr int kGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT
constexpr int kOpN = 0, kOpT = 1;

using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using GemmFn = int (*)(Handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A,
                       int Atype, int lda, long long strideA, const void* B, int Btype, int ldb, long long strideB,
                       const void* beta, void* C, int Ctype, int ldc, long long strideC, int batchCount,
                       int computeType, int algo);

struct Cublas {
  std::mutex mu;
  bool tried = false;
  std::string error;
  CreateFn create = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmFn gemm = nullptr;
  Handle handles[64] = {};
  Handle capture_handles[64] = {};  // bound to the capture stream (Note [Captured work])
};

Cublas& lib() {
  static Cublas* c = new Cublas();  // leaked: used until process exit
  return *c;
}

// Opens cuBLAS once, under c.mu; RuntimeError naming the library when it cannot load.
void load_locked(Cublas& c, int device) {
  if (!c.tried) {
    c.tried = true;
    std::string tried;
    void* so = open_library("UMA_CUBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                       "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so"}, tried);
    if (so) {
      c.create = reinterpret_cast<CreateFn>(dlsym(so, "cublasCreate_v2"));
      c.set_stream = reinterpret_cast<SetStreamFn>(dlsym(so, "cublasSetStream_v2"));
      c.gemm = reinterpret_cast<GemmFn>(dlsym(so, "cublasGemmStridedBatchedEx"));
      if (!c.create || !c.set_stream || !c.gemm) c.error = "libcublas lacks cublasGemmStridedBatchedEx";
    } else {
      c.error = "cuBLAS (libcublas.so.13, CUDA 13) is not installed: pip install nvidia-cublas, or install "
                "the CUDA toolkit's libcublas, or set UMA_CUBLAS to the library's path (tried: " + tried + ")";
    }
  }
  UMA_CHECK(c.error.empty(), Runtime, "matmul on cuda:", device, ": ", c.error);
  UMA_CHECK(device >= 0 && device < 64, Runtime, "matmul on cuda: device index ", device, " out of range");
}

// The cuBLAS handle of `device` bound to uma's stream; RuntimeError when cuBLAS cannot load.
Handle handle(int device) {
  Cublas& c = lib();
  std::lock_guard<std::mutex> lock(c.mu);
  load_locked(c, device);
  // A recording thread gets a handle of its own, bound to the capture stream: the other
  // threads' handle stays on uma's stream. One recording per device runs at a time.
  const bool recording = uma::cuda::capturing(device);
  Handle& slot = recording ? c.capture_handles[device] : c.handles[device];
  if (!slot) {
    uma::cuda::detail::DeviceGuard guard(device);
    uma::cuda::detail::RelaxCapture relax(device);  // cublasCreate allocates: outside the recording
    Handle h = nullptr;
    const int st = c.create(&h);
    UMA_CHECK(st == 0, Runtime, "matmul on cuda:", device, ": cublasCreate failed with status ", st);
    const int s2 = c.set_stream(h, static_cast<cudaStream_t>(uma::cuda::stream(device)));
    UMA_CHECK(s2 == 0, Runtime, "matmul on cuda:", device, ": cublasSetStream failed with status ", s2);
    slot = h;
  }
  return slot;
}

int cuda_type(DType t) {
  switch (t) {
    case DType::Float32: return 0;    // CUDA_R_32F
    case DType::Float64: return 1;    // CUDA_R_64F
    case DType::Float16: return 2;    // CUDA_R_16F
    case DType::BFloat16: return 14;  // CUDA_R_16BF
    case DType::Complex64: return 4;  // CUDA_C_32F
    case DType::Complex128: return 5; // CUDA_C_64F
    default: UMA_FAIL(Type, "matmul on cuda: dtype ", dtype_name(t), " is not supported by cuBLAS");
  }
}

// A matrix operand (R x C row-major view with element strides sr, sc) as cuBLAS sees it:
// the column-major C x R matrix X^T (op N, ld = sr) or, when stored transposed, op T (ld = sc).
struct Mat {
  int op = kOpN;
  int64_t ld = 0;
  bool ok = false;
};
Mat as_cublas(int64_t R, int64_t C, int64_t sr, int64_t sc) {
  Mat m;
  if ((sc == 1 || C == 1) && (R == 1 || sr >= C)) {
    m = {kOpN, R == 1 ? (C > 0 ? C : 1) : sr, true};
  } else if ((sr == 1 || R == 1) && (C == 1 || sc >= R)) {
    m = {kOpT, C == 1 ? (R > 0 ? R : 1) : sc, true};
  }
  if (m.ld < 1) m.ld = 1;
  return m;
}

// The batch stride of a view over its leading `nb` axes if one stride walks them all in C
// order (after dropping size-1 axes), else -1.
int64_t batch_stride(const Array& x, int64_t nb, int64_t matrix_elems) {
  int64_t stride = -1, expect = -1;
  for (int64_t d = nb - 1; d >= 0; --d) {
    const int64_t n = x.shape()[d], s = x.strides()[d];
    if (n == 1) continue;
    if (stride < 0) {
      stride = s;
      expect = s * n;
      continue;
    }
    if (s != expect && !(stride == 0 && s == 0)) return -1;
    expect = s * n;
  }
  (void)matrix_elems;
  return stride < 0 ? 0 : stride;
}

}  // namespace

// A float32/float64 product is small enough for the tiled kernel with at most 2^16 output
// elements (256 blocks of one tile), each a sum of at most 256 terms (one shared-memory slab of
// float32 values, two of float64: kernels/cuda/tiled_gemm.cuh). The products of a small MLP's
// training step (64 wide, batch 128) are; a 1024-row batch's first layer is not. Larger ones
// stay on cuBLAS, with their epilogue as a chain kernel: on an H100, the tiled kernel with the
// epilogue for every product of at most 16 terms made the wide step (4096-4096-10, its input
// gradient of 4M outputs and K = 10) 75 µs slower than cuBLAS and the tanh-gradient chain, and
// with products of up to 2^24 multiply-adds as well the 64-256-10 step went from 0.064 to
// 0.068 ms (docs/measurements/gpu_step/h100_tiled_rule_experiment.txt).
bool small_product(int64_t outputs, int64_t K) { return outputs <= (int64_t{1} << 16) && K <= 256; }

namespace {

// ---- cuBLASLt (Note [Scaled updates]) ----------------------------------------------------
// The entry points and enumerators used, declared from the cuBLASLt API documentation.
using LtHandle = void*;  // cublasLtHandle_t
using LtDesc = void*;    // cublasLtMatmulDesc_t
using LtLayout = void*;  // cublasLtMatrixLayout_t
using LtPref = void*;    // cublasLtMatmulPreference_t
struct LtAlgo {          // cublasLtMatmulAlgo_t
  uint64_t data[8];
};
struct LtHeuristic {     // cublasLtMatmulHeuristicResult_t
  LtAlgo algo;
  std::size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
};
constexpr int kLtDescPointerMode = 2, kLtDescTransA = 3, kLtDescTransB = 4;  // cublasLtMatmulDescAttributes_t
constexpr int kLtPointerModeDevice = 1;                                     // CUBLASLT_POINTER_MODE_DEVICE
constexpr int kLtPrefMaxWorkspace = 1, kLtPrefAlignA = 5;  // cublasLtMatmulPreferenceAttributes_t (B, C, D: 6-8)
constexpr uint64_t kLtMaxWorkspace = uint64_t{32} << 20;  // cuBLAS's default on Hopper

struct CublasLt {
  int (*create)(LtHandle*) = nullptr;
  int (*desc_create)(LtDesc*, int compute, int scale) = nullptr;
  int (*desc_set)(LtDesc, int attr, const void* buf, std::size_t n) = nullptr;
  int (*layout_create)(LtLayout*, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  int (*pref_create)(LtPref*) = nullptr;
  int (*pref_set)(LtPref, int attr, const void* buf, std::size_t n) = nullptr;
  int (*pref_destroy)(LtPref) = nullptr;
  int (*heuristic)(LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtHeuristic*,
                   int*) = nullptr;
  int (*matmul)(LtHandle, LtDesc, const void* alpha, const void* A, LtLayout, const void* B, LtLayout,
                const void* beta, const void* C, LtLayout, void* D, LtLayout, const LtAlgo*, void* workspace,
                std::size_t workspace_size, cudaStream_t) = nullptr;
  bool ok = false;
  LtHandle handles[64] = {};
  const void* ones[64][2] = {};  // per device: a float32 1 and a float64 1 in device memory
  // A product's descriptors and algorithm, made once per key and kept until exit.
  struct Plan {
    LtDesc desc = nullptr;
    LtLayout a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    LtAlgo algo{};
    std::size_t workspace = 0;
    bool ok = false;
  };
  // Key: device, dtype and precision, M, N, K, the two ops, the three leading dimensions, and
  // the four alignments (9 bits each).
  using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int, int64_t, int64_t, int64_t, uint64_t>;
  std::map<Key, Plan> plans;
  std::atomic<int64_t> products{0};
};

// The largest power of two (at most 256) dividing the address: the alignment cuBLASLt's
// heuristic is told of.
uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

// cuBLASLt, opened once (after cuBLAS, which loads it) under lib()'s mutex; null where it
// cannot be.
CublasLt* lt_locked() {
  static CublasLt* lt = [] {
    void* so = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!so) so = dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
    auto* l = new CublasLt();  // leaked: used until process exit
    if (!so) return l;
    auto sym = [so](const char* name) { return dlsym(so, name); };
    l->create = reinterpret_cast<decltype(l->create)>(sym("cublasLtCreate"));
    l->desc_create = reinterpret_cast<decltype(l->desc_create)>(sym("cublasLtMatmulDescCreate"));
    l->desc_set = reinterpret_cast<decltype(l->desc_set)>(sym("cublasLtMatmulDescSetAttribute"));
    l->layout_create = reinterpret_cast<decltype(l->layout_create)>(sym("cublasLtMatrixLayoutCreate"));
    l->pref_create = reinterpret_cast<decltype(l->pref_create)>(sym("cublasLtMatmulPreferenceCreate"));
    l->pref_set = reinterpret_cast<decltype(l->pref_set)>(sym("cublasLtMatmulPreferenceSetAttribute"));
    l->pref_destroy = reinterpret_cast<decltype(l->pref_destroy)>(sym("cublasLtMatmulPreferenceDestroy"));
    l->heuristic = reinterpret_cast<decltype(l->heuristic)>(sym("cublasLtMatmulAlgoGetHeuristic"));
    l->matmul = reinterpret_cast<decltype(l->matmul)>(sym("cublasLtMatmul"));
    l->ok = l->create && l->desc_create && l->desc_set && l->layout_create && l->pref_create && l->pref_set &&
            l->pref_destroy && l->heuristic && l->matmul;
    return l;
  }();
  return lt->ok ? lt : nullptr;
}

// Products with uma's tiled kernel; a and b keep their strides where one batch stride walks
// their leading axes, else they are packed.
void tiled_matmul(const Array& a0, const Array& b0, const Array& out) {
  const int64_t nd = out.ndim(), nb = nd - 2;
  const int64_t M = out.shape()[nd - 2], N = out.shape()[nd - 1], K = a0.shape()[nd - 1];
  cuda_launch::TiledGemm g{};
  g.M = M;
  g.N = N;
  g.K = K;
  g.batch = M * N > 0 ? out.size() / (M * N) : 0;
  if (out.size() == 0) return;
  Array a = a0, b = b0;
  int64_t sa = batch_stride(a, nb, M * K), sb = batch_stride(b, nb, K * N);
  if (sa < 0) {
    a = Array::empty(a0.shape(), a0.dtype(), out.device());
    pack(a0, a);
    sa = M * K;
  }
  if (sb < 0) {
    b = Array::empty(b0.shape(), b0.dtype(), out.device());
    pack(b0, b);
    sb = K * N;
  }
  g.a_rs = a.strides()[nd - 2];
  g.a_cs = a.strides()[nd - 1];
  g.a_bs = sa;
  g.b_rs = b.strides()[nd - 2];
  g.b_cs = b.strides()[nd - 1];
  g.b_bs = sb;
  const int dev = out.device().index;
  uma::cuda::detail::DeviceGuard guard(dev);
  const int e = cuda_launch::tiled_matmul(static_cast<int>(out.dtype()), a.data(), b.data(), out.data(), g,
                                          uma::cuda::stream(dev));
  if (e != 0) uma::cuda::detail::fail(static_cast<cudaError_t>(e), "matmul<<<...>>>", __FILE__, __LINE__);
}

}  // namespace

void matmul(const Array& a0, const Array& b0, const Array& out) {
  const DType t = out.dtype();
  if (t == DType::Bool || is_integer(t)) return tiled_matmul(a0, b0, out);
  if ((t == DType::Float32 || t == DType::Float64) && small_product(out.size(), a0.shape()[a0.ndim() - 1]))
    return tiled_matmul(a0, b0, out);
  const int ct = cuda_type(t);
  const int64_t nd = out.ndim(), nb = nd - 2;
  const int64_t M = out.shape()[nd - 2], N = out.shape()[nd - 1], K = a0.shape()[nd - 1];
  const int64_t batch = nb > 0 ? out.size() / (M * N > 0 ? M * N : 1) : 1;
  if (out.size() == 0) return;
  if (K == 0) {  // an empty sum: zeros
    uma::cuda::detail::DeviceGuard g(out.device().index);
    UMA_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, static_cast<std::size_t>(out.nbytes()),
                                   static_cast<cudaStream_t>(uma::cuda::stream(out.device().index))));
    return;
  }
  Array a = a0, b = b0;
  int64_t sa = batch_stride(a, nb, M * K), sb = batch_stride(b, nb, K * N);
  Mat ma = as_cublas(M, K, a.strides()[nd - 2], a.strides()[nd - 1]);
  Mat mb = as_cublas(K, N, b.strides()[nd - 2], b.strides()[nd - 1]);
  if (sa < 0 || !ma.ok) {
    a = Array::empty(a0.shape(), t, out.device());
    pack(a0, a);
    sa = batch > 1 ? M * K : 0;
    ma = as_cublas(M, K, K, 1);
  }
  if (sb < 0 || !mb.ok) {
    b = Array::empty(b0.shape(), t, out.device());
    pack(b0, b);
    sb = batch > 1 ? K * N : 0;
    mb = as_cublas(K, N, N, 1);
  }
  for (int64_t v : {M, N, K, ma.ld, mb.ld, batch})
    UMA_CHECK(v <= INT32_MAX, Value, "matmul on cuda: dimension ", v, " exceeds cuBLAS's 32-bit limit");
  const int dev = out.device().index;
  Handle h = handle(dev);
  uma::cuda::detail::DeviceGuard guard(dev);
  // alpha = 1, beta = 0 in the scale type: real for real dtypes, complex (re, im) for complex.
  const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  const bool f64 = t == DType::Float64 || t == DType::Complex128;
  const bool tf32 = (t == DType::Float32 || t == DType::Complex64) &&
                    ops::cuda_matmul_precision() == ops::MatmulPrecision::TF32;
  const int st = lib().gemm(h, mb.op, ma.op, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K),
                            f64 ? static_cast<const void*>(one_d) : one_f, b.data(), ct, static_cast<int>(mb.ld), sb,
                            a.data(), ct, static_cast<int>(ma.ld), sa, f64 ? static_cast<const void*>(zero_d) : zero_f,
                            out.data(), ct, static_cast<int>(N), M * N, static_cast<int>(batch),
                            f64 ? kCompute64F : tf32 ? kCompute32FFastTF32 : kCompute32F, kGemmDefault);
  UMA_CHECK(st == 0, Runtime, "matmul on cuda:", dev, ": cublasGemmStridedBatchedEx failed with status ", st,
            " (M=", M, ", N=", N, ", K=", K, ", batch=", batch, ")");
}

namespace {

// The operands of a chain `C + s * P` over (P, rest...) (Note [Scaled updates]): two
// instructions, s * P (either order) then C + that (either order).
bool scaled_add(std::span<const Array* const> rest, const std::vector<FusedInstr>& code, const Array& out,
                const Array*& c, const Array*& s) {
  const int n = static_cast<int>(rest.size()) + 1;  // registers 0 .. n-1: P, then rest
  if (code.size() != 2) return false;
  const FusedInstr& mul = code[0];
  const FusedInstr& add = code[1];
  if (mul.select || add.select || !mul.binary || !add.binary || mul.op != static_cast<int>(BinaryOp::Multiply) ||
      add.op != static_cast<int>(BinaryOp::Add))
    return false;
  const int rs = mul.a == 0 ? mul.b : mul.b == 0 ? mul.a : -1;
  const int rc = add.a == n ? add.b : add.b == n ? add.a : -1;
  if (rs < 1 || rs >= n || rc < 1 || rc >= n || rs == rc) return false;
  s = rest[rs - 1];
  c = rest[rc - 1];
  return s->dtype() == out.dtype() && s->size() == 1 && s->device() == out.device() && c->dtype() == out.dtype() &&
         c->shape() == out.shape() && c->device() == out.device();
}

}  // namespace

int64_t scaled_update_products() {
  CublasLt* l = nullptr;
  {
    std::lock_guard<std::mutex> lock(lib().mu);
    if (lib().tried && lib().error.empty()) l = lt_locked();
  }
  return l ? l->products.load() : 0;
}

bool matmul_scaled_add(const Array& a, const Array& b, std::span<const Array* const> rest,
                       const std::vector<FusedInstr>& code, const Array& out) {
  const DType t = out.dtype();
  const Array* c = nullptr;
  const Array* s = nullptr;
  if (!(t == DType::Float32 || t == DType::Float64) || a.ndim() != 2 || b.ndim() != 2 || out.ndim() != 2 ||
      a.dtype() != t || b.dtype() != t || !out.is_c_contiguous() || !scaled_add(rest, code, out, c, s))
    return false;
  const int64_t M = out.shape()[0], N = out.shape()[1], K = a.shape()[1];
  if (M == 0 || N == 0 || K == 0 || small_product(out.size(), K)) return false;
  const Mat ma = as_cublas(M, K, a.strides()[0], a.strides()[1]);
  const Mat mb = as_cublas(K, N, b.strides()[0], b.strides()[1]);
  const Mat mc = as_cublas(M, N, c->strides()[0], c->strides()[1]);
  if (!ma.ok || !mb.ok || !mc.ok || mc.op != kOpN) return false;
  for (int64_t v : {M, N, K, ma.ld, mb.ld, mc.ld})
    if (v > INT32_MAX) return false;
  const int dev = out.device().index;
  const bool f64 = t == DType::Float64;
  const bool tf32 = !f64 && ops::cuda_matmul_precision() == ops::MatmulPrecision::TF32;
  const uint32_t align[4] = {alignment(a.data()), alignment(b.data()), alignment(c->data()), alignment(out.data())};
  Cublas& cb = lib();
  std::unique_lock<std::mutex> lock(cb.mu);
  load_locked(cb, dev);  // cuBLAS (RuntimeError naming it where it cannot), and with it cuBLASLt
  CublasLt* l = lt_locked();
  if (!l) return false;
  if (!l->handles[dev]) {
    uma::cuda::detail::DeviceGuard guard(dev);
    uma::cuda::detail::RelaxCapture relax(dev);  // cublasLtCreate and the symbol lookups: outside a recording
    LtHandle h = nullptr;
    for (int k = 0; k < 2; ++k) l->ones[dev][k] = cuda_launch::device_one(k == 1);
    if (!l->ones[dev][0] || !l->ones[dev][1] || l->create(&h) != 0) return false;
    l->handles[dev] = h;
  }
  // Column-major, as cuBLAS sees row-major arrays: D^T (N x M) = B^T (N x K) A^T (K x M) + C^T.
  uint64_t packed = 0;
  for (uint32_t x : align) packed = packed << 9 | x;
  const CublasLt::Key key{dev, static_cast<int>(f64) + 2 * static_cast<int>(tf32), M, N, K, mb.op + 2 * ma.op,
                          mb.ld, ma.ld, mc.ld, packed};
  CublasLt::Plan& p = l->plans[key];
  if (!p.desc) {
    const int type = cuda_type(t);
    const int trans[2] = {mb.op, ma.op};
    bool ok = l->desc_create(&p.desc, f64 ? kCompute64F : tf32 ? kCompute32FFastTF32 : kCompute32F, type) == 0;
    const int mode = kLtPointerModeDevice;
    ok = ok && l->desc_set(p.desc, kLtDescPointerMode, &mode, sizeof mode) == 0 &&
         l->desc_set(p.desc, kLtDescTransA, &trans[0], sizeof(int)) == 0 &&
         l->desc_set(p.desc, kLtDescTransB, &trans[1], sizeof(int)) == 0;
    // A stored as it is: op N is N x K (ld mb.ld), op T is K x N.
    ok = ok && l->layout_create(&p.a, type, mb.op == kOpN ? N : K, mb.op == kOpN ? K : N, mb.ld) == 0 &&
         l->layout_create(&p.b, type, ma.op == kOpN ? K : M, ma.op == kOpN ? M : K, ma.ld) == 0 &&
         l->layout_create(&p.c, type, N, M, mc.ld) == 0 && l->layout_create(&p.d, type, N, M, N) == 0;
    LtPref pref = nullptr;
    ok = ok && l->pref_create(&pref) == 0;
    const uint64_t ws = kLtMaxWorkspace;
    ok = ok && l->pref_set(pref, kLtPrefMaxWorkspace, &ws, sizeof ws) == 0;
    // The heuristic's operands are A = b and B = a in cuBLAS's terms.
    const uint32_t lt_align[4] = {align[1], align[0], align[2], align[3]};
    for (int k = 0; k < 4 && ok; ++k) ok = l->pref_set(pref, kLtPrefAlignA + k, &lt_align[k], sizeof(uint32_t)) == 0;
    LtHeuristic h{};
    int found = 0;
    ok = ok && l->heuristic(l->handles[dev], p.desc, p.a, p.b, p.c, p.d, pref, 1, &h, &found) == 0 && found > 0;
    if (pref) l->pref_destroy(pref);
    p.ok = ok;
    if (ok) {
      p.algo = h.algo;
      p.workspace = h.workspace_size;
    }
  }
  if (!p.ok) return false;
  const void* one = l->ones[dev][f64 ? 1 : 0];
  LtHandle h = l->handles[dev];
  lock.unlock();
  Array workspace = p.workspace > 0 ? Array::empty({static_cast<int64_t>(p.workspace)}, DType::UInt8, out.device())
                                    : Array();
  uma::cuda::detail::DeviceGuard guard(dev);
  const int st = l->matmul(h, p.desc, s->data(), b.data(), p.a, a.data(), p.b, one, c->data(), p.c, out.data(), p.d,
                           &p.algo, p.workspace > 0 ? workspace.data() : nullptr, p.workspace,
                           static_cast<cudaStream_t>(uma::cuda::stream(dev)));
  UMA_CHECK(st == 0, Runtime, "matmul_fused on cuda:", dev, ": cublasLtMatmul failed with status ", st, " (M=", M,
            ", N=", N, ", K=", K, ")");
  ++l->products;
  return true;
}

}  // namespace uma::kernels::cuda
