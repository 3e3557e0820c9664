// The FFT kernels on cuda devices through cuFFT (kernels/cuda_kernels.h: fft_c2c, fft_r2c,
// fft_c2r, the contracts of the cpu kernels in kernels/kernels.h).
//
// Note [cuFFT by dlopen]
// As cuBLAS (Note [cuBLAS by dlopen], kernels/cuda/cublas.cpp), cuFFT is never linked: it is
// opened with dlopen at the first GPU transform ($UMA_CUFFT first, which uma.cuda sets to the
// nvidia-cufft wheel's library when that is installed, then libcufft.so.12 (CUDA 13),
// libcufft.so.11 (CUDA 12) and /usr/local/cuda), and the few entry points used are declared here
// from the cuFFT API documentation. A library that cannot be loaded is a RuntimeError naming it.
//
// Every transform works on C-contiguous device buffers: the input is packed first where it is
// not one (always for C2R, whose cuFFT transform overwrites its input). An n-dimensional
// transform is one one-dimensional transform per axis (the DFT is separable): for an axis of
// length n with `outer` lines before it and `inner` elements after it in C order, one
// cufftPlanMany plan (advanced layout: element stride `inner`) is batched over the larger of
// outer and inner and executed once per index of the smaller one. The real transforms run along
// the last axis, on copies with their axis moved last where it is another (their buffers must be
// aligned to the complex element). A real-to-complex transform
// runs R2C/D2Z along its last transformed axis into the output and then complex transforms along the
// others in place; complex-to-real runs the complex transforms in place on the packed input
// first and C2R/Z2D along the last axis last. cuFFT computes unnormalised transforms: a factor
// other than 1 is one elementwise multiply by a broadcast device scalar (kernels::cuda::binary).
// Plans are created on the device of the data and cached per layout (cufftPlanMany is costly);
// a full cache is emptied (cufftDestroy frees the plans' work areas with cudaFree, which waits
// for the device, so no queued transform loses its work area).
#include <dlfcn.h>

#include <array>
#include <climits>
#include <complex>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "kernels/cuda/library.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"

namespace uma::kernels::cuda {

namespace {

using Plan = int;  // cufftHandle
// cufftType values (cufft.h).
constexpr int kR2C = 0x2a, kC2R = 0x2c, kC2C = 0x29, kD2Z = 0x6a, kZ2D = 0x6c, kZ2Z = 0x69;
constexpr int kForward = -1, kInverse = 1;  // CUFFT_FORWARD, CUFFT_INVERSE

using PlanManyFn = int (*)(Plan*, int rank, int* n, int* inembed, int istride, int idist, int* onembed, int ostride,
                           int odist, int type, int batch);
using SetStreamFn = int (*)(Plan, cudaStream_t);
using ExecDirFn = int (*)(Plan, void* in, void* out, int direction);  // cufftExecC2C, cufftExecZ2Z
using ExecFn = int (*)(Plan, void* in, void* out);                    // R2C, C2R, D2Z, Z2D
using DestroyFn = int (*)(Plan);

struct Cufft {
  std::mutex mu;
  bool tried = false;
  std::string error;
  PlanManyFn plan_many = nullptr;
  SetStreamFn set_stream = nullptr;
  ExecDirFn c2c = nullptr, z2z = nullptr;
  ExecFn r2c = nullptr, c2r = nullptr, d2z = nullptr, z2d = nullptr;
  DestroyFn destroy = nullptr;
  // (device, type, n, istride, idist, ostride, odist, batch) -> plan
  std::map<std::array<long long, 8>, Plan> plans;
};

Cufft& lib() {
  static Cufft* c = new Cufft();  // leaked: used until process exit
  return *c;
}

// Loads cuFFT once (c.mu held); RuntimeError naming `op` and what is missing when it cannot.
void load(Cufft& c, const char* op, int device) {
  if (!c.tried) {
    c.tried = true;
    std::string tried;
    void* so = open_library("UMA_CUFFT", {"libcufft.so.12", "libcufft.so.11", "libcufft.so",
                                       "/usr/local/cuda/lib64/libcufft.so.12", "/usr/local/cuda/lib64/libcufft.so"}, tried);
    if (so) {
      c.plan_many = reinterpret_cast<PlanManyFn>(dlsym(so, "cufftPlanMany"));
      c.set_stream = reinterpret_cast<SetStreamFn>(dlsym(so, "cufftSetStream"));
      c.c2c = reinterpret_cast<ExecDirFn>(dlsym(so, "cufftExecC2C"));
      c.z2z = reinterpret_cast<ExecDirFn>(dlsym(so, "cufftExecZ2Z"));
      c.r2c = reinterpret_cast<ExecFn>(dlsym(so, "cufftExecR2C"));
      c.c2r = reinterpret_cast<ExecFn>(dlsym(so, "cufftExecC2R"));
      c.d2z = reinterpret_cast<ExecFn>(dlsym(so, "cufftExecD2Z"));
      c.z2d = reinterpret_cast<ExecFn>(dlsym(so, "cufftExecZ2D"));
      c.destroy = reinterpret_cast<DestroyFn>(dlsym(so, "cufftDestroy"));
      if (!c.plan_many || !c.set_stream || !c.c2c || !c.z2z || !c.r2c || !c.c2r || !c.d2z || !c.z2d || !c.destroy)
        c.error = "libcufft lacks one of cufftPlanMany, cufftSetStream, cufftExec*, cufftDestroy";
    } else {
      c.error = "cuFFT (libcufft.so.12, CUDA 13) is not installed: pip install nvidia-cufft, or install the CUDA "
                "toolkit's libcufft, or set UMA_CUFFT to the library's path (tried: " + tried + ")";
    }
  }
  UMA_CHECK(c.error.empty(), Runtime, "uma.fft.", op, " on cuda:", device, ": ", c.error);
}

int as_int(int64_t v, const char* op) {
  UMA_CHECK(v <= INT_MAX, Value, "uma.fft.", op, " on cuda: size ", v, " exceeds cuFFT's 32-bit limit");
  return static_cast<int>(v);
}

/// One batched one-dimensional transform of cuFFT type `type` along an axis of a C-contiguous
/// buffer: `outer` lines of length `in_len` (input) / `out_len` (output) elements, each element
/// `inner` elements from the next; `n` the transform length. in and out are the buffers' starts
/// (the same for an in-place complex transform); in_size and out_size their element sizes.
struct AxisRun {
  int type;
  int64_t outer, inner, n, in_len, out_len;
  char* in;
  char* out;
  int64_t in_size, out_size;
};

void run_axis(const AxisRun& r, int direction, int device, const char* op) {
  if (r.outer == 0 || r.inner == 0) return;
  Cufft& c = lib();
  std::lock_guard<std::mutex> lock(c.mu);
  load(c, op, device);
  // batch over the larger of outer and inner, loop over the other
  const bool batch_inner = r.inner >= r.outer;
  const int64_t batch = batch_inner ? r.inner : r.outer, loops = batch_inner ? r.outer : r.inner;
  const int64_t idist = batch_inner ? 1 : r.in_len * r.inner, odist = batch_inner ? 1 : r.out_len * r.inner;
  const int64_t in_step = batch_inner ? r.in_len * r.inner : 1, out_step = batch_inner ? r.out_len * r.inner : 1;
  const std::array<long long, 8> key{device, r.type, r.n, r.inner, idist, r.inner, odist, batch};
  uma::cuda::detail::DeviceGuard guard(device);
  auto it = c.plans.find(key);
  if (it == c.plans.end()) {
    if (c.plans.size() >= 64) {  // cufftDestroy waits for the device (cudaFree): no queued work loses its plan
      for (auto& [k, p] : c.plans) c.destroy(p);
      c.plans.clear();
    }
    int n = as_int(r.n, op), inembed = as_int(r.in_len, op), onembed = as_int(r.out_len, op);
    Plan p = 0;
    const int st = c.plan_many(&p, 1, &n, &inembed, as_int(r.inner, op), as_int(idist, op), &onembed,
                               as_int(r.inner, op), as_int(odist, op), r.type, as_int(batch, op));
    UMA_CHECK(st == 0, Runtime, "uma.fft.", op, " on cuda:", device, ": cufftPlanMany failed with status ", st,
              " (n=", r.n, ", batch=", batch, ", stride=", r.inner, ")");
    it = c.plans.emplace(key, p).first;
  }
  const Plan p = it->second;
  const int s = c.set_stream(p, static_cast<cudaStream_t>(uma::cuda::stream(device)));
  UMA_CHECK(s == 0, Runtime, "uma.fft.", op, " on cuda:", device, ": cufftSetStream failed with status ", s);
  for (int64_t l = 0; l < loops; ++l) {
    void* in = r.in + l * in_step * r.in_size;
    void* out = r.out + l * out_step * r.out_size;
    int st = 0;
    switch (r.type) {
      case kC2C: st = c.c2c(p, in, out, direction); break;
      case kZ2Z: st = c.z2z(p, in, out, direction); break;
      case kR2C: st = c.r2c(p, in, out); break;
      case kD2Z: st = c.d2z(p, in, out); break;
      case kC2R: st = c.c2r(p, in, out); break;
      case kZ2D: st = c.z2d(p, in, out); break;
      default: UMA_ASSERT(!"unknown cufftType");
    }
    UMA_CHECK(st == 0, Runtime, "uma.fft.", op, " on cuda:", device, ": cufftExec failed with status ", st);
  }
}

/// outer (the product of the lengths before axis d) and inner (after it) of a C-order shape.
std::pair<int64_t, int64_t> outer_inner(const Shape& s, int64_t d) {
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < static_cast<int64_t>(s.size()); ++k) {
    if (k < d) outer *= s[static_cast<std::size_t>(k)];
    if (k > d) inner *= s[static_cast<std::size_t>(k)];
  }
  return {outer, inner};
}

/// In-place complex transforms of the C-contiguous buf along each of `axes`.
void c2c_axes(const Array& buf, const std::vector<int64_t>& axes, bool forward, const char* op) {
  const bool f64 = buf.dtype() == DType::Complex128;
  char* p = static_cast<char*>(buf.data());
  const auto item = static_cast<int64_t>(buf.itemsize());
  for (int64_t d : axes) {
    const auto [outer, inner] = outer_inner(buf.shape(), d);
    const int64_t n = buf.shape()[static_cast<std::size_t>(d)];
    run_axis({f64 ? kZ2Z : kC2C, outer, inner, n, n, n, p, p, item, item}, forward ? kForward : kInverse,
             buf.device().index, op);
  }
}

bool c_contiguous(const Array& a) {
  int64_t expect = 1;
  for (int64_t d = a.ndim() - 1; d >= 0; --d) {
    const int64_t n = a.shape()[static_cast<std::size_t>(d)];
    if (n != 1 && a.strides()[static_cast<std::size_t>(d)] != expect) return false;
    expect *= n;
  }
  return true;
}

/// A C-contiguous copy of a on its device.
Array packed(const Array& a) {
  Array t = Array::empty(a.shape(), a.dtype(), a.device());
  pack(a, t);
  return t;
}

/// out *= fct (out C-contiguous, real or complex), skipped for fct == 1.
void scale(const Array& out, double fct) {
  if (fct == 1.0 || out.size() == 0) return;
  Array s = Array::empty({}, out.dtype(), out.device());
  const std::complex<double> cd(fct, 0.0);
  const std::complex<float> cf(static_cast<float>(fct), 0.0f);
  const float f = static_cast<float>(fct);
  switch (out.dtype()) {
    case DType::Complex128: fill(s, &cd); break;
    case DType::Complex64: fill(s, &cf); break;
    case DType::Float64: fill(s, &fct); break;
    default: fill(s, &f); break;
  }
  binary(BinaryOp::Multiply, out, s.broadcast_view(out.shape()), out);
}

/// One real transform (R2C/D2Z from `src`, or C2R/Z2D) along axis d of C-contiguous buffers, of
/// length n, with h complex elements (n / 2 + 1) along d. Along the last axis it is one batched
/// call; along another axis it runs on copies with the axis moved last: cuFFT's real transforms
/// want their buffers aligned to the complex element, which a per-line offset of the batched
/// strided layout is not.
void real_axis(const Array& src, const Array& out, int64_t d, int64_t n, int64_t h, bool to_complex) {
  const bool f64 = (to_complex ? out.dtype() : src.dtype()) == DType::Complex128;  // the complex side
  const int type = to_complex ? (f64 ? kD2Z : kR2C) : (f64 ? kZ2D : kC2R);
  const char* op = to_complex ? "rfft" : "irfft";
  const int direction = to_complex ? kForward : kInverse;
  const int64_t in_len = to_complex ? n : h, out_len = to_complex ? h : n;
  const auto [outer, inner] = outer_inner(src.shape(), d);
  if (inner == 1) {
    run_axis({type, outer, 1, n, in_len, out_len, static_cast<char*>(src.data()), static_cast<char*>(out.data()),
              static_cast<int64_t>(src.itemsize()), static_cast<int64_t>(out.itemsize())},
             direction, out.device().index, op);
    return;
  }
  std::vector<int64_t> last, back(static_cast<std::size_t>(src.ndim()));  // axis d moved last, and back
  for (int64_t k = 0; k < src.ndim(); ++k)
    if (k != d) last.push_back(k);
  last.push_back(d);
  for (std::size_t k = 0; k < last.size(); ++k) back[static_cast<std::size_t>(last[k])] = static_cast<int64_t>(k);
  const Array a = packed(ops::transpose(src, last));
  const Array b = Array::empty(ops::transpose(out, last).shape(), out.dtype(), out.device());
  run_axis({type, outer * inner, 1, n, in_len, out_len, static_cast<char*>(a.data()), static_cast<char*>(b.data()),
            static_cast<int64_t>(a.itemsize()), static_cast<int64_t>(b.itemsize())},
           direction, out.device().index, op);
  pack(ops::transpose(b, back), out);
}

}  // namespace

void fft_c2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.size() == 0) return;
  pack(in, out);
  c2c_axes(out, axes, forward, forward ? "fft" : "ifft");
  scale(out, fct);
}

void fft_r2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  UMA_CHECK(forward, Runtime, "uma.fft: a backward real-to-complex transform has no cuFFT kernel");
  if (out.size() == 0) return;
  const Array src = c_contiguous(in) ? in : packed(in);
  const int64_t d = axes.back();
  const int64_t n = src.shape()[static_cast<std::size_t>(d)], h = out.shape()[static_cast<std::size_t>(d)];
  real_axis(src, out, d, n, h, true);
  c2c_axes(out, std::vector<int64_t>(axes.begin(), axes.end() - 1), true, "rfftn");
  scale(out, fct);
}

void fft_c2r(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  UMA_CHECK(!forward, Runtime, "uma.fft: a forward complex-to-real transform has no cuFFT kernel");
  if (out.size() == 0) return;
  const Array src = packed(in);  // cuFFT's C2R overwrites its input
  c2c_axes(src, std::vector<int64_t>(axes.begin(), axes.end() - 1), false, "irfftn");
  const int64_t d = axes.back();
  const int64_t n = out.shape()[static_cast<std::size_t>(d)], h = src.shape()[static_cast<std::size_t>(d)];
  real_axis(src, out, d, n, h, false);
  scale(out, fct);
}

}  // namespace uma::kernels::cuda
