// Generated kernels for fused elementwise chains on cuda devices (kernels/cuda/ops_launch.h's
// chain_kernel).
//
// Note [Generated chain kernels]
// fused.cu's kernels interpret a chain's instructions (FusedCode): each pack decodes every
// instruction, and the registers, an array indexed at run time, live in local memory. Here the
// chain is written out as straight-line CUDA C++ instead — one call of bin_pack / un_pack /
// select_pack per instruction, every value a named register — and compiled with NVRTC at the
// chain's first launch into a kernel for the device's architecture. The generated code calls
// the same device functions as the interpreting kernel (kernels/cuda/fused_chain.cuh, the op
// table's scalar routines of device_ops.cuh) with each instruction's result settled, so the two
// give the same bits (Note [Fused chains on cuda]). NVRTC reads those headers from copies
// embedded in the library (rtc_headers.h) and CCCL's cuda/std headers from the CUDA toolkit;
// <cstdint>, <type_traits> and <cmath> are mapped to their cuda/std versions, and
// -default-device compiles the op table's unannotated constexpr functions for the device.
//
// Each (chain, dtype, index width, architecture) is compiled once per process and its kernel
// kept until exit (a cudaLibrary, loaded into every context that launches it). Its image is
// also kept on disk (Note [Kernel image cache] in kernels/disk_cache.h) under an identity made
// of the generated source, the options, NVRTC's version, the digest of the embedded headers and
// CCCL's version header, so a later process with the same identity loads it without NVRTC; an
// image that does not load is compiled again. A chain whose
// compilation fails is remembered as failed and runs on the interpreting kernel, as every chain
// does where libnvrtc (CUDA 13: $UMA_NVRTC, which uma.cuda sets to the nvidia-cuda-nvrtc
// wheel's library, then the loader's path, then the toolkit) or CCCL's headers (cccl_folder)
// are missing, or where UMA_CUDA_CHAIN_KERNELS=0. On a 2-core VM with NVRTC 13.0, a process's
// first chain compiled in about 0.75 s and each later one in 0.15-0.2 s (NVRTC's automatic
// precompiled header, -pch, keeps the parsed headers after the first).
//
// Note [Epilogue kernels]
// A product whose chain is its epilogue (ops::matmul_fused: the Program's matmul_fused steps, a
// layer's bias and activation, an SGD update of a weight) costs two launches and a round trip
// of the product through memory when the chain runs after the product. Where the product runs
// uma's tiled kernel (cuda::small_product) and every other operand is a blocked read, the
// compiler generates one kernel instead: tiled_gemm (tiled_gemm.cuh, the device function
// matmul_tiled.cu's kernels run, so each sum is the same) with a store that runs the chain,
// as straight-line scalar code, on each output element before writing it, the product in
// register 0 and the other operands read at the element's flat index. Each instruction's
// result is settled as in a chain kernel, so the result is bit for bit the product then the
// chain. It is compiled and cached as a chain kernel is (its own key and name, uma_epilogue);
// where it cannot be, the product and the chain run as two kernels.
//
// Note [Reduction epilogues]
// A column sum or mean whose chain is its epilogue (ops::reduce_fused: the Program's sum_fused
// and mean_fused steps, the SGD update of a bias after its gradient's sum over the batch) is
// generated the same way: column_reduce.cuh's pass, the one reduce.cuh's column kernel runs
// (same order of every sum, same float32/float64 policy, FloatSum), with the epilogue's store.
// The last of each column's blocks finishes the sum (Note [Last block finishes] in
// last_block.cuh) and runs the chain on it: the reduction and its chain, which were three
// kernels with a split reduction's second pass, are one (uma_reduce_epilogue), bit for bit the
// sum then the chain. Other reductions (not columns, more than 32 splits) and failures run the
// reduction, then the chain.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/cuda/library.h"
#include "kernels/cuda/ops_launch.h"
#include "kernels/cuda/rtc_headers.h"
#include "kernels/cuda_kernels.h"
#include "kernels/disk_cache.h"
#include "memory/cuda/cuda_check.h"
#include "uma/ops.h"

#ifndef UMA_CUDA_TOOLKIT_INCLUDE
#define UMA_CUDA_TOOLKIT_INCLUDE "/usr/local/cuda/include"
#endif

namespace uma::kernels::cuda {

namespace {

namespace L = cuda_launch;

// The NVRTC entry points used (nvrtc.h, CUDA 13), declared from its documentation.
using Program = void*;  // nvrtcProgram
using CreateFn = int (*)(Program*, const char* src, const char* name, int nheaders, const char* const* headers,
                         const char* const* include_names);
using CompileFn = int (*)(Program, int nopts, const char* const* opts);
using SizeFn = int (*)(Program, std::size_t*);
using GetFn = int (*)(Program, char*);
using DestroyFn = int (*)(Program*);
using ErrorStringFn = const char* (*)(int);
using VersionFn = int (*)(int* major, int* minor);

// std headers as NVRTC sees them: CCCL's cuda/std versions, with uma's `std::` names (always
// written inside namespace uma) resolving to cuda::std.
#define UMA_STD_ALIAS "namespace uma { namespace std = ::cuda::std; }\n"
const RtcHeader kStdHeaders[] = {
    {"cstdint", "#pragma once\n#include <cuda/std/cstdint>\n" UMA_STD_ALIAS},
    {"type_traits", "#pragma once\n#include <cuda/std/type_traits>\n" UMA_STD_ALIAS},
    {"cmath", "#pragma once\n#include <cuda/std/cmath>\n" UMA_STD_ALIAS},
    {"cuda_runtime.h", "#pragma once\n" UMA_STD_ALIAS},  // NVRTC's built-ins declare what the kernels use
};
#undef UMA_STD_ALIAS

struct Compiler {
  std::mutex mu;
  bool tried = false;
  bool enabled = false;
  std::string reason;  // why the first chain fell back ("" when none did)
  CreateFn create = nullptr;
  CompileFn compile = nullptr;
  SizeFn log_size = nullptr, cubin_size = nullptr;
  GetFn log = nullptr, cubin = nullptr;
  DestroyFn destroy = nullptr;
  ErrorStringFn error_string = nullptr;
  std::string include_option;  // -I<the folder holding cuda/std/complex>
  std::string cache_dir;       // Note [Kernel image cache]; "" when off
  std::string identity;        // what every image depends on besides its source and architecture
  std::vector<const char*> headers, names;  // kStdHeaders, then kRtcHeaders
  std::unordered_map<std::string, const void*> kernels;  // nullptr: failed, interpreted
  int arch[64] = {};                                     // per device, major * 10 + minor
  int64_t generated = 0, epilogues = 0, reduce_epilogues = 0, interpreted = 0, from_disk = 0;
};

Compiler& compiler() {
  static Compiler* c = new Compiler();  // leaked: its kernels are used until process exit
  return *c;
}

bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The folder to pass NVRTC as -I for <cuda/std/complex>: $UMA_CUDA_CCCL (which uma.cuda sets to
// the nvidia-cuda-cccl wheel's include/cccl), then the include folders of the toolkit uma was
// built with, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda (CUDA 13 keeps CCCL under
// include/cccl).
std::string cccl_folder() {
  if (const char* v = std::getenv("UMA_CUDA_CCCL"); v && *v && is_file(std::string(v) + "/cuda/std/complex")) return v;
  std::vector<std::string> roots{UMA_CUDA_TOOLKIT_INCLUDE};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v && *v) roots.push_back(std::string(v) + "/include");
  roots.emplace_back("/usr/local/cuda/include");
  for (const std::string& r : roots)
    for (const std::string& d : {r + "/cccl", r})
      if (is_file(d + "/cuda/std/complex")) return d;
  return {};
}

// libnvrtc opens its builtins library (libnvrtc-builtins.so.13.*) by name; one loaded from a
// folder outside the loader's path finds it only when that library is already loaded.
void load_builtins_beside(void* so, const char* symbol) {
  Dl_info info{};
  void* sym = dlsym(so, symbol);
  if (!sym || !dladdr(sym, &info) || !info.dli_fname) return;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("libnvrtc-builtins.so.13", 0) == 0 && name.find(".alt.") == std::string::npos)
      (void)dlopen(e.path().c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
}

// Loads NVRTC and the headers once; false (c.reason says why) when chains must be interpreted.
bool ready(Compiler& c) {
  if (c.tried) return c.enabled;
  c.tried = true;
  if (const char* v = std::getenv("UMA_CUDA_CHAIN_KERNELS"); v && std::strcmp(v, "0") == 0) {
    c.reason = "UMA_CUDA_CHAIN_KERNELS=0";
    return false;
  }
  std::string tried;
  void* so = open_library("UMA_NVRTC", {"libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"}, tried);
  if (!so) {
    c.reason = "NVRTC (libnvrtc.so.13) is not installed: pip install nvidia-cuda-nvrtc, or set UMA_NVRTC to the "
               "library's path (tried: " + tried + ")";
    return false;
  }
  c.create = reinterpret_cast<CreateFn>(dlsym(so, "nvrtcCreateProgram"));
  c.compile = reinterpret_cast<CompileFn>(dlsym(so, "nvrtcCompileProgram"));
  c.log_size = reinterpret_cast<SizeFn>(dlsym(so, "nvrtcGetProgramLogSize"));
  c.log = reinterpret_cast<GetFn>(dlsym(so, "nvrtcGetProgramLog"));
  c.cubin_size = reinterpret_cast<SizeFn>(dlsym(so, "nvrtcGetCUBINSize"));
  c.cubin = reinterpret_cast<GetFn>(dlsym(so, "nvrtcGetCUBIN"));
  c.destroy = reinterpret_cast<DestroyFn>(dlsym(so, "nvrtcDestroyProgram"));
  c.error_string = reinterpret_cast<ErrorStringFn>(dlsym(so, "nvrtcGetErrorString"));
  if (!c.create || !c.compile || !c.log_size || !c.log || !c.cubin_size || !c.cubin || !c.destroy || !c.error_string) {
    c.reason = "libnvrtc lacks one of nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetProgramLog(Size), "
               "nvrtcGetCUBIN(Size), nvrtcDestroyProgram, nvrtcGetErrorString";
    return false;
  }
  load_builtins_beside(so, "nvrtcCreateProgram");
  const std::string cccl = cccl_folder();
  if (cccl.empty()) {
    c.reason = "CCCL's headers (cuda/std/complex) were not found in $UMA_CUDA_CCCL, " UMA_CUDA_TOOLKIT_INCLUDE
               ", $CUDA_HOME/include or /usr/local/cuda/include: pip install nvidia-cuda-cccl, or install the CUDA "
               "toolkit";
    return false;
  }
  c.include_option = "-I" + cccl;
  auto add = [&](const RtcHeader& h) {
    c.names.push_back(h.name);
    c.headers.push_back(h.text);
  };
  for (const RtcHeader& h : kStdHeaders) add(h);
  for (int k = 0; k < kRtcHeaderCount; ++k) add(kRtcHeaders[k]);
  // The identity the cached images share (Note [Kernel image cache]).
  c.cache_dir = ::uma::kernels::kernel_cache_dir();
  int major = 0, minor = 0;
  auto version = reinterpret_cast<VersionFn>(dlsym(so, "nvrtcVersion"));
  if (!version || version(&major, &minor) != 0) c.cache_dir.clear();  // no version: no cache
  std::string headers;
  for (std::size_t k = 0; k < c.names.size(); ++k) headers.append(c.names[k]).append(1, '\0').append(c.headers[k]);
  c.identity = "uma chain kernel 1\nnvrtc " + std::to_string(major) + "." + std::to_string(minor) + "\nheaders " +
               ::uma::kernels::digest_hex(headers) + "\ncccl " +
               ::uma::kernels::digest_hex(file_text(cccl + "/cuda/std/__cccl/version.h")) + "\n";
  c.enabled = true;
  return true;
}

const char* type_name(int dtype) {
  switch (dtype) {
    case L::kInt32: return "int";
    case L::kInt64: return "long long";
    case L::kFloat32: return "float";
    case L::kFloat64: return "double";
    default: return nullptr;
  }
}

// The CUDA source of the chain's kernel, `uma_chain(FusedBlocked, T* out, int64_t n, bool
// out_vec)`: chain_blocked (fused_chain.cuh) with the instructions as straight-line code.
std::string chain_source(int dtype, const L::FusedCode& code, bool wide_index) {
  const std::string t = type_name(dtype);
  auto reg = [&](int r) {
    std::string name(r < code.nin ? "x[" : "r");
    name += std::to_string(r);
    if (r < code.nin) name += ']';
    return name;
  };
  std::string s = "#include \"kernels/cuda/fused_chain.cuh\"\n"
                  "namespace {\n"
                  "using namespace uma::kernels::cuda_dev;\n"
                  "using T = " + t + ";\n"
                  "struct Chain {\n"
                  "  static __device__ __forceinline__ Pack<T> run(const Pack<T>* x, unsigned long long zero) {\n";
  for (int k = 0; k < code.ncode; ++k) {
    const std::string o = reg(code.nin + k), op = std::to_string(code.op[k]);
    s += "    Pack<T> " + o + ";\n    ";
    if (code.kind[k] == L::kFusedBinary)
      s += "bin_pack<T, " + op + ">(" + o + ", " + reg(code.a[k]) + ", " + reg(code.b[k]) + ", zero);\n";
    else if (code.kind[k] == L::kFusedUnary)
      s += "un_pack<T, " + op + ">(" + o + ", " + reg(code.a[k]) + ", zero);\n";
    else
      s += "select_pack(" + o + ", " + reg(code.a[k]) + ", " + reg(code.b[k]) + ", " + reg(code.c[k]) + ");\n";
  }
  s += "    return " + reg(code.nin + code.ncode - 1) + ";\n  }\n};\n}  // namespace\n";
  s += "extern \"C\" __global__ void __launch_bounds__(uma::kernels::cuda_launch::kThreads, kChainMinBlocks) "
       "uma_chain(FusedBlocked in, T* __restrict__ out, long long n, bool out_vec) {\n"
       "  chain_blocked<T, " + std::string(wide_index ? "long long" : "unsigned int") + ", " +
       std::to_string(code.nin) + ", Chain>(in, out, n, out_vec);\n}\n";
  return s;
}

// The store of an epilogue kernel (Note [Epilogue kernels]), `Epilogue{in, out}(e, value)`: runs
// the chain on one output element, `value` its register 0 and the other operands read from
// `in` at the element's flat index e, as straight-line scalar code, and writes out[e]; after
// `includes`, in an anonymous namespace with T the chain's dtype.
std::string epilogue_store_source(int dtype, const L::FusedCode& code, const char* includes) {
  const std::string t = type_name(dtype);
  auto reg = [&](int r) {
    std::string name(r < code.nin ? "x" : "r");
    name += std::to_string(r);
    return name;
  };
  std::string s = std::string("#include \"kernels/cuda/fused_chain.cuh\"\n") + includes +
                  "namespace {\n"
                  "using namespace uma::kernels::cuda_dev;\n"
                  "using T = " + t + ";\n"
                  "struct Epilogue {\n"
                  "  const FusedBlocked& in;\n"
                  "  T* out;\n"
                  "  __device__ __forceinline__ void operator()(long long e, T value) const {\n"
                  "    const unsigned long long zero = in.zero;\n"
                  "    const T x0 = settle(value, zero);\n";
  for (int k = 1; k < code.nin; ++k)
    s += "    const T " + reg(k) + " = blocked_value<T, unsigned int>(in, " + std::to_string(k) + ", e);\n";
  for (int k = 0; k < code.ncode; ++k) {
    const std::string o = reg(code.nin + k), op = std::to_string(code.op[k]);
    s += "    const T " + o + " = ";
    if (code.kind[k] == L::kFusedBinary)
      s += "settle(bin_value<T, " + op + ">(" + reg(code.a[k]) + ", " + reg(code.b[k]) + "), zero);\n";
    else if (code.kind[k] == L::kFusedUnary)
      s += "settle(un_value<T, " + op + ">(" + reg(code.a[k]) + "), zero);\n";
    else
      s += reg(code.a[k]) + " != T(0) ? " + reg(code.b[k]) + " : " + reg(code.c[k]) + ";\n";
  }
  s += "    out[e] = " + reg(code.nin + code.ncode - 1) + ";\n  }\n};\n}  // namespace\n";
  return s;
}

// The CUDA source of a product's epilogue kernel, `uma_epilogue(const T* a, const T* b, T* out,
// TiledGemm g, FusedBlocked in)` (Note [Epilogue kernels]): tiled_gemm (tiled_gemm.cuh) with the
// epilogue's store.
std::string epilogue_source(int dtype, const L::FusedCode& code) {
  return epilogue_store_source(dtype, code, "#include \"kernels/cuda/tiled_gemm.cuh\"\n") +
         "extern \"C\" __global__ void __launch_bounds__(kTile * kTile) uma_epilogue(const T* __restrict__ a, "
         "const T* __restrict__ b, T* __restrict__ out, uma::kernels::cuda_launch::TiledGemm g, FusedBlocked in) {\n"
         "  Epilogue store{in, out};\n"
         "  tiled_gemm<T>(a, b, g, store);\n}\n";
}

// The CUDA source of a column sum's (`mean`: mean's) epilogue kernel, `uma_reduce_epilogue(const
// char* in, T* out, ReduceGeometry g, long long splits, double* partial, FusedBlocked ops)` (Note
// [Reduction epilogues]): column_reduce.cuh's pass, finished by the last block, with the
// epilogue's store.
std::string reduce_epilogue_source(int dtype, bool mean, const L::FusedCode& code) {
  return epilogue_store_source(dtype, code, "#include \"kernels/cuda/column_reduce.cuh\"\n") +
         "extern \"C\" __global__ void __launch_bounds__(uma::kernels::cuda_launch::kThreads) uma_reduce_epilogue("
         "const char* __restrict__ in, T* __restrict__ out, uma::kernels::cuda_launch::ReduceGeometry g, "
         "long long splits, double* __restrict__ partial, FusedBlocked ops) {\n"
         "  namespace red = uma::kernels::cuda_launch::red;\n"
         "  Epilogue store{ops, out};\n"
         "  red::reduce_columns_pass<red::FloatSum<T, " + std::string(mean ? "true" : "false") +
         ">, T>(in, g, splits, partial, true, store);\n}\n";
}

// The options NVRTC compiles a chain with, for sm_<arch>.
std::vector<std::string> options(const Compiler& c, int arch) {
  return {"-std=c++17", "-default-device", "-pch", "-arch=sm_" + std::to_string(arch), c.include_option};
}

// The cubin of `src`; "" with *why set on error.
std::string compile_image(Compiler& c, const std::string& src, const std::vector<std::string>& opt, std::string* why) {
  auto fail = [&](const std::string& w) {
    *why = w;
    return std::string();
  };
  Program prog = nullptr;
  int r = c.create(&prog, src.c_str(), "uma_chain.cu", static_cast<int>(c.headers.size()), c.headers.data(),
                   c.names.data());
  if (r != 0) return fail(std::string("nvrtcCreateProgram: ") + c.error_string(r));
  std::vector<const char*> opts;
  for (const std::string& o : opt) opts.push_back(o.c_str());
  r = c.compile(prog, static_cast<int>(opts.size()), opts.data());
  std::string image;
  if (r == 0) {
    std::size_t n = 0;
    if (c.cubin_size(prog, &n) == 0 && n > 0) {
      image.resize(n);
      if (c.cubin(prog, image.data()) != 0) image.clear();
    }
  } else {
    std::size_t n = 0;
    std::string log;
    if (c.log_size(prog, &n) == 0 && n > 1) {
      log.resize(n);
      if (c.log(prog, log.data()) != 0) log.clear();
    }
    (void)c.destroy(&prog);
    return fail(std::string("nvrtcCompileProgram: ") + c.error_string(r) + ": " + log.substr(0, 2000));
  }
  (void)c.destroy(&prog);
  if (image.empty()) return fail("nvrtcGetCUBIN returned no image");
  return image;
}

// The kernel `name` of a cubin, loaded; nullptr with *why set on error.
const void* load(const std::string& image, const char* name, int device, std::string* why) {
  cudaLibrary_t lib = nullptr;
  cudaKernel_t kernel = nullptr;
  cudaError_t e;
  {
    ::uma::cuda::detail::RelaxCapture relax(device);  // loading is not recorded work
    e = cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e == cudaSuccess) {
      e = cudaLibraryGetKernel(&kernel, lib, name);
      if (e != cudaSuccess) (void)cudaLibraryUnload(lib);
    }
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string("loading the generated kernel ") + name + ": " + cudaGetErrorString(e);
    return nullptr;
  }
  return reinterpret_cast<const void*>(kernel);
}

// The kernel `name` of `src` for sm_<arch>: its cached image (Note [Kernel image cache]) when
// that loads, else compiled (and cached); nullptr with c.reason set (first failure) on error.
const void* build(Compiler& c, const std::string& src, const char* name, int arch, int device) {
  const std::vector<std::string> opt = options(c, arch);
  std::string identity, why;
  if (!c.cache_dir.empty()) {
    identity = c.identity;
    for (const std::string& o : opt) identity.append(o).append(1, '\n');
    identity += src;
    const std::string cached = ::uma::kernels::read_kernel_image(c.cache_dir, identity);
    if (!cached.empty()) {
      if (const void* k = load(cached, name, device, &why)) {
        ++c.from_disk;
        return k;
      }
    }
  }
  const std::string image = compile_image(c, src, opt, &why);
  const void* k = image.empty() ? nullptr : load(image, name, device, &why);
  if (!k) {
    if (c.reason.empty()) c.reason = why;
    return nullptr;
  }
  if (!identity.empty()) (void)::uma::kernels::write_kernel_image(c.cache_dir, identity, image);
  return k;
}

}  // namespace

}  // namespace uma::kernels::cuda

namespace uma::kernels::cuda_launch {

namespace {

// The generated kernel of `kind` ('c': a chain over a blocked space, with 64-bit index
// arithmetic when `wide_index`; 'e': a product's epilogue; 's' and 'm': a column sum's and
// mean's epilogue) for (code, dtype) on the current device: compiled once per process and
// architecture; nullptr where it is not available.
const void* generated_kernel(char kind, int dtype, const FusedCode& code, bool wide_index) {
  namespace C = ::uma::kernels::cuda;
  auto& c = C::compiler();
  if (!C::type_name(dtype)) return nullptr;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) {
    (void)cudaGetLastError();
    return nullptr;
  }
  // The key: the kind, the chain's code, dtype, index width and the device's architecture.
  std::string key;
  key.reserve(16 + 6 * static_cast<std::size_t>(code.ncode));
  key.push_back(kind);
  key.push_back(static_cast<char>(dtype));
  key.push_back(wide_index ? 'w' : 'n');
  key.push_back(static_cast<char>(code.nin));
  key.push_back(static_cast<char>(code.ncode));
  for (int k = 0; k < code.ncode; ++k) {
    key.push_back(static_cast<char>(code.kind[k]));
    key.append(reinterpret_cast<const char*>(&code.op[k]), sizeof(code.op[k]));
    key.push_back(static_cast<char>(code.a[k]));
    key.push_back(static_cast<char>(code.b[k]));
    key.push_back(static_cast<char>(code.c[k]));
  }
  std::lock_guard<std::mutex> lock(c.mu);
  const bool ok = C::ready(c);
  if (ok) {
    int& arch = c.arch[device];
    if (arch == 0) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
      }
      arch = major * 10 + minor;
    }
    key += std::to_string(arch);
  }
  auto it = c.kernels.find(key);
  if (it != c.kernels.end()) return it->second;
  const void* k = nullptr;
  if (ok && kind == 'e')
    k = C::build(c, C::epilogue_source(dtype, code), "uma_epilogue", c.arch[device], device);
  else if (ok && (kind == 's' || kind == 'm'))
    k = C::build(c, C::reduce_epilogue_source(dtype, kind == 'm', code), "uma_reduce_epilogue", c.arch[device],
                 device);
  else if (ok)
    k = C::build(c, C::chain_source(dtype, code, wide_index), "uma_chain", c.arch[device], device);
  // Without an epilogue kernel, the product or reduction and its chain run as two kernels.
  if (kind == 'c') ++(k ? c.generated : c.interpreted);
  else if (k) ++(kind == 'e' ? c.epilogues : c.reduce_epilogues);
  c.kernels.emplace(std::move(key), k);
  return k;
}

}  // namespace

const void* chain_kernel(int dtype, const FusedCode& code, bool wide_index) {
  return generated_kernel('c', dtype, code, wide_index);
}

const void* epilogue_kernel(int dtype, const FusedCode& code) { return generated_kernel('e', dtype, code, false); }

const void* reduce_epilogue_kernel(int dtype, bool mean, const FusedCode& code) {
  return generated_kernel(mean ? 'm' : 's', dtype, code, false);
}

}  // namespace uma::kernels::cuda_launch

namespace uma::ops {

ChainKernelStats cuda_chain_kernel_stats() {
  auto& c = ::uma::kernels::cuda::compiler();
  std::lock_guard<std::mutex> lock(c.mu);
  return ChainKernelStats{c.generated, c.epilogues, c.reduce_epilogues, c.interpreted, c.from_disk,
                          ::uma::kernels::cuda::scaled_update_products(), c.reason};
}

}  // namespace uma::ops
