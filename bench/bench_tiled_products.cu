// bench/bench_tiled_products.cu — the small float32 products of the 64-256-10 and digits
// training steps (issue 13) on uma's tiled kernel (kernels/cuda/tiled_gemm.cuh, as built),
// on register-tiled variants (each thread 1, 2, 4 or 8 rows of a 16-column tile; K staged in
// slabs of 256, 128 or 64 terms; K split into 1 to 16 ranges whose partials the last block of a
// tile adds) and on cuBLAS (cublasSgemm, opened with dlopen as the library does). Each kernel
// is captured 200 times in one CUDA graph and replayed: the time printed is per launch, in µs,
// the best of 7 replays, with the largest error relative to cuBLAS's result. Build and run on
// a GPU machine, from the repository root:
//
//   nvcc -std=c++20 -O3 -arch=sm_90 -I src -I include bench/bench_tiled_products.cu -o /tmp/tiled -ldl && /tmp/tiled
//
// Results: docs/benchmarks.md, "The GPU training step".
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cuda/tiled_gemm.cuh"

// cuBLAS through dlopen (no headers on the build machine).
typedef void* cublasHandle_t;
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
static int (*cublasCreate)(cublasHandle_t*);
static int (*cublasSetStream)(cublasHandle_t, cudaStream_t);
static int (*cublasSetWorkspace)(cublasHandle_t, void*, size_t);
static int (*cublasSgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                          const float*, int, const float*, int, const float*, float*, int);
static void load_cublas() {
  void* so = nullptr;
  for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"})
    if (!so) so = dlopen(n, RTLD_NOW);
  if (!so) { std::printf("no cuBLAS\n"); std::exit(1); }
  cublasCreate = (decltype(cublasCreate))dlsym(so, "cublasCreate_v2");
  cublasSetStream = (decltype(cublasSetStream))dlsym(so, "cublasSetStream_v2");
  cublasSetWorkspace = (decltype(cublasSetWorkspace))dlsym(so, "cublasSetWorkspace_v2");
  cublasSgemm = (decltype(cublasSgemm))dlsym(so, "cublasSgemm_v2");
}

using uma::kernels::cuda_launch::TiledGemm;
namespace L = uma::kernels::cuda_launch;
namespace D = uma::kernels::cuda_dev;

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e = (x);                                                             \
    if (e != cudaSuccess) {                                                          \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

struct StoreOut {
  float* out;
  __device__ void operator()(int64_t e, float v) const { out[e] = v; }
};

__global__ void base_kernel(const float* a, const float* b, float* out, TiledGemm g) {
  StoreOut s{out};
  D::tiled_gemm<float>(a, b, g, s);
}

__device__ unsigned int arrivals[8192];

// A variant's product: element strides of a and b, and the K splits.
struct G {
  int64_t M, N, K, a_rs, a_cs, b_rs, b_cs, splits, split_len;
  void* partial;
};

// Block of 16 x 16 threads; tile (16 * RM) x 16; thread (tx, ty) owns rows ty + 16 r, column tx.
// Slab S terms of K staged in shared memory; K split into `splits` ranges of split_len.
template <int RM, int S, int UNR>
__global__ void __launch_bounds__(256, 2) reg_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ out, G g) {
  constexpr int BM = 16 * RM, BN = 16;
  __shared__ float as[BM][S + 1];
  __shared__ float bs[S][BN + 1];
  __shared__ bool last;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int64_t tm = (g.M + BM - 1) / BM, tn = (g.N + BN - 1) / BN;
  const int64_t splits = g.splits > 1 ? g.splits : 1;
  const int64_t units = tm * tn * splits;
  const bool a_k_inner = g.a_cs == 1 || g.a_rs != 1, b_k_inner = g.b_rs == 1 && g.b_cs != 1;
  for (int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const int64_t tile = unit / splits, split = unit - tile * splits;
    const int64_t kb = split * g.split_len, ke = splits == 1 ? g.K : (g.K - kb < g.split_len ? g.K : kb + g.split_len);
    const int64_t i0 = (tile / tn) * BM, j0 = (tile % tn) * BN;
    float acc[RM];
#pragma unroll
    for (int r = 0; r < RM; ++r) acc[r] = 0.f;
    for (int64_t k0 = kb; k0 < ke; k0 += S) {
      const int slab = static_cast<int>(ke - k0 < S ? ke - k0 : S);
      constexpr int NA = BM * S / 256, NB = BN * S / 256;
      // Element u of a thread's loads: (row r0 + u dr, term q0 + u dq); one pointer step per u.
      const int ar0 = a_k_inner ? tid / S : tid % BM, aq0 = a_k_inner ? tid % S : tid / BM;
      const int adr = a_k_inner ? 256 / S : 0, adq = a_k_inner ? 0 : 256 / BM;
      const int bc0 = b_k_inner ? tid / S : tid % BN, bq0 = b_k_inner ? tid % S : tid / BN;
      const int bdc = b_k_inner ? 256 / S : 0, bdq = b_k_inner ? 0 : 256 / BN;
      const float* pa = a + (i0 + ar0) * g.a_rs + (k0 + aq0) * g.a_cs;
      const int64_t sa = adr * g.a_rs + adq * g.a_cs;
      const float* pb = b + (k0 + bq0) * g.b_rs + (j0 + bc0) * g.b_cs;
      const int64_t sb = bdq * g.b_rs + bdc * g.b_cs;
      const int64_t arow_lim = g.M - i0, bcol_lim = g.N - j0;
      float va[NA], vb[NB];
#pragma unroll
      for (int u = 0; u < NA; ++u)
        va[u] = aq0 + u * adq < slab && ar0 + u * adr < arow_lim ? pa[u * sa] : 0.f;
#pragma unroll
      for (int u = 0; u < NB; ++u)
        vb[u] = bq0 + u * bdq < slab && bc0 + u * bdc < bcol_lim ? pb[u * sb] : 0.f;
#pragma unroll
      for (int u = 0; u < NA; ++u) as[ar0 + u * adr][aq0 + u * adq] = va[u];
#pragma unroll
      for (int u = 0; u < NB; ++u) bs[bq0 + u * bdq][bc0 + u * bdc] = vb[u];
      __syncthreads();
      if (slab == S) {
#pragma unroll UNR
        for (int kk = 0; kk < S; ++kk) {
          const float bv = bs[kk][tx];
#pragma unroll
          for (int r = 0; r < RM; ++r) acc[r] = fmaf(as[ty + 16 * r][kk], bv, acc[r]);
        }
      } else {
        for (int kk = 0; kk < slab; ++kk) {
          const float bv = bs[kk][tx];
#pragma unroll
          for (int r = 0; r < RM; ++r) acc[r] = fmaf(as[ty + 16 * r][kk], bv, acc[r]);
        }
      }
      __syncthreads();
    }
    if (splits > 1) {
      float* part = static_cast<float*>(g.partial) + tile * splits * (BM * BN);
#pragma unroll
      for (int r = 0; r < RM; ++r) part[split * (BM * BN) + (ty + 16 * r) * BN + tx] = acc[r];
      __threadfence();
      __syncthreads();
      if (tid == 0) {
        const unsigned prior = atomicAdd(&arrivals[tile], 1u);
        last = prior == static_cast<unsigned>(splits - 1);
        if (last) arrivals[tile] = 0;
      }
      __syncthreads();
      const bool mine = last;
      __syncthreads();
      if (!mine) continue;
      __threadfence();
#pragma unroll
      for (int r = 0; r < RM; ++r) {
        const float* p = part + (ty + 16 * r) * BN + tx;
        float s = __ldcg(p);
        for (int64_t q = 1; q < splits; ++q) s += __ldcg(p + q * (BM * BN));
        acc[r] = s;
      }
    }
#pragma unroll
    for (int r = 0; r < RM; ++r) {
      const int64_t i = i0 + ty + 16 * r, j = j0 + tx;
      if (i < g.M && j < g.N) out[i * g.N + j] = acc[r];
    }
  }
}

struct Shape {
  const char* name;
  int64_t M, N, K;
  bool a_t, b_t;  // A stored as its transpose (a_rs = 1), B stored as its transpose (b_cs = K... b_rs = 1)
};

static cublasHandle_t handle;

template <class F>
float time_graph(cudaStream_t st, F launch) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  launch();  // warm (and first-use allocations) outside capture
  CK(cudaStreamSynchronize(st));
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 200; ++i) launch();
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaGraphLaunch(exec, st));
  float best = 1e30f;
  for (int rep = 0; rep < 7; ++rep) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(exec, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    best = std::fmin(best, ms * 1000.f / 200.f);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  return best;
}

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  load_cublas();
  cublasCreate(&handle);
  cublasSetStream(handle, st);
  void* ws;
  CK(cudaMalloc(&ws, 32 << 20));
  cublasSetWorkspace(handle, ws, 32 << 20);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const Shape shapes[] = {
      {"logits 1024x10 K256", 1024, 10, 256, false, false},
      {"dW2 256x10 K1024 (A=h.T)", 256, 10, 1024, true, false},
      {"dW1 64x256 K1024 (A=x.T)", 64, 256, 1024, true, false},
      {"fwd1 1024x256 K64", 1024, 256, 64, false, false},
      {"dh 1024x256 K10 (B=W2.T)", 1024, 256, 10, false, true},
      {"digits logits 128x10 K64", 128, 10, 64, false, false},
      {"digits dW1 64x64 K128 (A=x.T)", 64, 64, 128, true, false},
      {"digits dW2 64x10 K128 (A=h.T)", 64, 10, 128, true, false},
  };
  std::printf("%-32s %9s %9s   %s\n", "shape", "cuBLAS", "uma base", "variants (us; max rel err vs cuBLAS)");
  for (const Shape& s : shapes) {
    std::vector<float> ha(s.M * s.K), hb(s.K * s.N);
    for (auto& x : ha) x = (std::rand() % 2001 - 1000) / 1000.f;
    for (auto& x : hb) x = (std::rand() % 2001 - 1000) / 1000.f;
    float *a, *b, *c, *ref, *part;
    CK(cudaMalloc(&a, ha.size() * 4));
    CK(cudaMalloc(&b, hb.size() * 4));
    CK(cudaMalloc(&c, s.M * s.N * 4));
    CK(cudaMalloc(&ref, s.M * s.N * 4));
    CK(cudaMalloc(&part, 64 << 20));
    CK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    G g{};
    g.M = s.M, g.N = s.N, g.K = s.K;
    if (s.a_t) g.a_rs = 1, g.a_cs = s.M; else g.a_rs = s.K, g.a_cs = 1;
    if (s.b_t) g.b_rs = 1, g.b_cs = s.K; else g.b_rs = s.N, g.b_cs = 1;
    // cuBLAS, column-major: C^T (N x M) = op(B_cm) * op(A_cm).
    const cublasOperation_t opB = s.b_t ? CUBLAS_OP_T : CUBLAS_OP_N, opA = s.a_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = s.b_t ? (int)s.K : (int)s.N, lda = s.a_t ? (int)s.M : (int)s.K;
    const float one = 1.f, zero = 0.f;
    auto cub = [&]() {
      cublasSgemm(handle, opB, opA, (int)s.N, (int)s.M, (int)s.K, &one, b, ldb, a, lda, &zero, ref, (int)s.N);
    };
    const float t_cublas = time_graph(st, cub);
    std::vector<float> want(s.M * s.N), got(s.M * s.N);
    CK(cudaMemcpy(want.data(), ref, want.size() * 4, cudaMemcpyDeviceToHost));
    auto err = [&]() {
      CK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
      double e = 0;
      for (size_t i = 0; i < got.size(); ++i) e = std::fmax(e, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
      CK(cudaMemset(c, 0, got.size() * 4));
      return e;
    };
    // uma's kernel as built (main: unsplit, any K).
    TiledGemm gb{};
    gb.M = s.M, gb.N = s.N, gb.K = s.K, gb.batch = 1;
    gb.a_rs = g.a_rs, gb.a_cs = g.a_cs, gb.b_rs = g.b_rs, gb.b_cs = g.b_cs;
    const int64_t tiles = ((s.M + 15) / 16) * ((s.N + 15) / 16);
    auto base = [&]() {
      base_kernel<<<(unsigned)D::tiled_gemm_blocks(tiles, sms), dim3(16, 16), 0, st>>>(a, b, c, gb);
    };
    const float t_base = time_graph(st, base);
    std::printf("%-32s %9.2f %9.2f (err %.1e)\n", s.name, t_cublas, t_base, err());
    auto run_var = [&](auto kern, int bm, int slab, const char* label) {
      for (int64_t splits : {1, 2, 4, 8, 16}) {
        if (splits > 1 && s.K / splits < 32) continue;
        G gv = g;
        gv.splits = splits;
        gv.split_len = splits > 1 ? (s.K + splits - 1) / splits : s.K;
        gv.split_len = (gv.split_len + 31) / 32 * 32;
        gv.splits = (s.K + gv.split_len - 1) / gv.split_len;
        gv.partial = part;
        const int64_t units = ((s.M + bm - 1) / bm) * ((s.N + 15) / 16) * gv.splits;
        auto go = [&]() { kern<<<(unsigned)units, dim3(16, 16), 0, st>>>(a, b, c, gv); };
        const float t = time_graph(st, go);
        std::printf("      %-10s slab %3d splits %2lld units %5lld: %7.2f us  err %.1e\n", label, slab,
                    (long long)gv.splits, (long long)units, t, err());
        (void)slab;
      }
    };
    run_var(reg_kernel<1, 256, 8>, 16, 256, "RM1 u8");
    run_var(reg_kernel<2, 128, 8>, 32, 128, "RM2 u8");
    run_var(reg_kernel<4, 128, 8>, 64, 128, "RM4 u8");
    run_var(reg_kernel<4, 64, 8>, 64, 64, "RM4 s64");
    run_var(reg_kernel<8, 64, 8>, 128, 64, "RM8 s64");
    cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref), cudaFree(part);
  }
  return 0;
}
