// Fused elementwise chains for the cpu linker: one pass over memory, blocks in L1.
#include <omp.h>

#include <memory>
#include <numeric>
#include <vector>

#include "kernels/cpu/elementwise_kernels.h"
#include "ops/common.h"

namespace uma::kernels::cpu {

namespace {

constexpr int64_t kBlock = 512;

template <class T>
struct Gather {
  T* dst;
  void operator()(const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    if (s[0] == static_cast<int64_t>(sizeof(T))) {
      const T* a = reinterpret_cast<const T*>(p[0]);
      for (int64_t i = 0; i < n; ++i) dst[i] = a[i];
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = *reinterpret_cast<const T*>(p[0] + i * s[0]);
    }
    dst += n;
  }
};

template <class T, BinaryOp OP>
bool run_bin(T* d, const T* a, const T* b, int64_t n) {
  if constexpr (binary_supported<T>(OP)) {
    using R = decltype(apply_binary<T, OP>(T{}, T{}));
    if constexpr (std::is_same_v<R, T>) {
      for (int64_t j = 0; j < n; ++j) d[j] = apply_binary<T, OP>(a[j], b[j]);
      return true;
    } else if constexpr (std::is_same_v<R, bool>) {  // a comparison: a select's condition, 1 or 0
      for (int64_t j = 0; j < n; ++j) d[j] = apply_binary<T, OP>(a[j], b[j]) ? T(1) : T(0);
      return true;
    }
  }
  return false;
}
template <class T, UnaryOp OP>
bool run_un(T* d, const T* a, int64_t n) {
  if constexpr (unary_supported<T>(OP)) {
    if constexpr (std::is_same_v<decltype(apply_unary<T, OP>(T{})), T>) {
      if constexpr (std::is_floating_point_v<T>)
        if (vmath_unary(OP, a, d, n)) return true;  // the same routine as the unfused kernel
      for (int64_t j = 0; j < n; ++j) d[j] = apply_unary<T, OP>(a[j]);
      return true;
    }
  }
  return false;
}

// where: the condition register holds a comparison's 1 or 0 (FusedInstr).
template <class T>
void run_select(T* d, const T* cond, const T* x, const T* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {  // both operands read: a blend the compiler vectorizes
    const T xv = x[j], yv = y[j];
    d[j] = cond[j] != T(0) ? xv : yv;
  }
}

template <class T>
void exec(const FusedInstr& ins, T* d, const T* a, const T* b, int64_t n) {
  bool done = false;
  if (ins.binary) {
    switch (static_cast<BinaryOp>(ins.op)) {
#define UMA_CASE(Id, ...) case BinaryOp::Id: done = run_bin<T, BinaryOp::Id>(d, a, b, n); break;
      UMA_BINARY_OPS(UMA_CASE)
#undef UMA_CASE
    }
  } else {
    switch (static_cast<UnaryOp>(ins.op)) {
#define UMA_CASE(Id, ...) case UnaryOp::Id: done = run_un<T, UnaryOp::Id>(d, a, n); break;
      UMA_UNARY_OPS(UMA_CASE)
#undef UMA_CASE
    }
  }
  UMA_ASSERT(done && "fused: op not fusable for this dtype");
}

// The period of input `v` (a broadcast view of the output's shape) along the output's
// elements: P when the view repeats one C-contiguous block of its trailing P elements (a bias
// broadcast over rows: P is the row length), else 0.
int64_t period(const Array& v) {
  int64_t p = 1, d = v.ndim() - 1;
  for (; d >= 0 && v.shape()[d] == 1; --d) {
  }
  for (; d >= 0 && v.strides()[d] == p; --d) p *= v.shape()[d];  // the contiguous trailing block
  for (; d >= 0; --d)
    if (v.strides()[d] != 0 && v.shape()[d] != 1) return 0;  // not repeated: not periodic
  return p;
}

// Scratch of one thread's fused chains, kept between calls (a chain's registers and tables
// would otherwise be allocated at every call).
template <class T>
struct FusedScratch {
  std::vector<T> regs;
  std::vector<const T*> ptr;
};
template <class T>
FusedScratch<T>& fused_scratch() {
  thread_local FusedScratch<T> s;
  return s;
}

template <class T>
void fused_typed(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out) {
  const int64_t N = out.size();
  if (N == 0) return;
  const int nin = static_cast<int>(inputs.size());
  const int nregs = nin + static_cast<int>(code.size());
  // Scalar: one value; Contig: read in place; Periodic: one block of the input repeats along
  // the output (filled into its register once, blocks being whole periods); Strided: gathered
  // into its register per block. Only the last two need a broadcast view and a loop.
  enum Kind { Scalar, Contig, Periodic, Strided };
  constexpr int kInline = 8;
  Kind kind_small[kInline];
  std::vector<Kind> kind_big(nin > kInline ? nin : 0);
  Kind* kind = nin > kInline ? kind_big.data() : kind_small;
  std::vector<Array> views(nin);
  std::vector<Loop<1>> loops;
  const T* base[kInline];
  std::vector<const T*> base_big(nin > kInline ? nin : 0);
  const T** data = nin > kInline ? base_big.data() : base;
  int64_t B = std::min(kBlock, N);  // register length (small arrays: one short block)
  int64_t lcm = 1;
  for (int i = 0; i < nin; ++i) {
    const Array& in = *inputs[i];
    const bool aligned = reinterpret_cast<uintptr_t>(in.data()) % alignof(T) == 0;
    data[i] = static_cast<const T*>(in.data());
    if (in.size() == 1) {
      kind[i] = Scalar;
      continue;
    }
    if (in.shape() == out.shape() && in.is_c_contiguous() && aligned) {
      kind[i] = Contig;
      continue;
    }
    views[i] = in.broadcast_view(out.shape());
    data[i] = static_cast<const T*>(views[i].data());
    if (views[i].is_c_contiguous() && aligned) {
      kind[i] = Contig;
      continue;
    }
    const int64_t p = aligned ? period(views[i]) : 0;
    const int64_t l = p > 0 ? std::lcm(lcm, p) : 0;
    if (l > 0 && l <= kBlock) {
      kind[i] = Periodic;
      lcm = l;
    } else {
      kind[i] = Strided;
    }
  }
  if (lcm > 1 && B < N) B = kBlock / lcm * lcm;  // every block starts at a whole period
  for (int i = 0; i < nin; ++i)
    if (kind[i] == Strided || kind[i] == Periodic) {
      if (loops.empty()) loops.resize(nin);
      loops[i] = make_loop<1>(out.shape(), {&views[i]});
    }
  auto work = [&](int64_t blo, int64_t bhi) {
    // Registers are the calling thread's scratch (not zeroed: every one is written first).
    FusedScratch<T>& scratch = fused_scratch<T>();
    if (scratch.regs.size() < static_cast<std::size_t>(nregs * B)) scratch.regs.resize(static_cast<std::size_t>(nregs * B));
    if (scratch.ptr.size() < static_cast<std::size_t>(nregs)) scratch.ptr.resize(static_cast<std::size_t>(nregs));
    T* regs = scratch.regs.data();
    const T** ptr = scratch.ptr.data();
    for (int i = 0; i < nin; ++i)
      if (kind[i] == Scalar) {
        T v = *static_cast<const T*>(inputs[i]->data());
        for (int64_t j = 0; j < B; ++j) regs[i * B + j] = v;
        ptr[i] = &regs[i * B];
      } else if (kind[i] == Periodic) {  // the first B elements are every block's
        Gather<T> g{&regs[i * B]};
        run_range<1>(loops[i], {const_cast<char*>(reinterpret_cast<const char*>(data[i]))}, 0, std::min(B, N), g);
        ptr[i] = &regs[i * B];
      }
    for (int64_t blk = blo; blk < bhi; ++blk) {
      const int64_t b = blk * B, n = std::min(B, N - b);
      for (int i = 0; i < nin; ++i) {
        if (kind[i] == Contig) {
          ptr[i] = data[i] + b;
        } else if (kind[i] == Strided) {
          Gather<T> g{&regs[i * B]};
          run_range<1>(loops[i], {const_cast<char*>(reinterpret_cast<const char*>(data[i]))}, b, b + n, g);
          ptr[i] = &regs[i * B];
        }
      }
      for (std::size_t k = 0; k < code.size(); ++k) {
        const int r = nin + static_cast<int>(k);
        T* d = k + 1 == code.size() ? out.data_as<T>() + b : &regs[r * B];
        const FusedInstr& c = code[k];
        if (c.select) run_select<T>(d, ptr[c.a], ptr[c.b], ptr[c.c], n);
        else exec<T>(c, d, ptr[c.a], c.binary ? ptr[c.b] : nullptr, n);
        ptr[r] = d;
      }
    }
  };
  const int64_t nblocks = (N + B - 1) / B;
  const int nth = omp_in_parallel() ? 1 : threads::for_work(N, kGrain);
  if (nth > 1) {
#pragma omp parallel num_threads(nth)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t per = (nblocks + nt - 1) / nt;
      int64_t lo = t * per, hi = std::min(nblocks, lo + per);
      if (lo < hi) work(lo, hi);
    }
  } else {
    work(0, nblocks);
  }
}

template <class T>
void fused_one_typed(const void* const* inputs, int nin, const std::vector<FusedInstr>& code, void* out) {
  constexpr int kMaxRegs = 64;
  const int nregs = nin + static_cast<int>(code.size());
  T small[kMaxRegs];
  std::unique_ptr<T[]> big;
  T* regs = small;
  if (nregs > kMaxRegs) {
    big.reset(new T[static_cast<std::size_t>(nregs)]);
    regs = big.get();
  }
  for (int i = 0; i < nin; ++i) regs[i] = *static_cast<const T*>(inputs[i]);
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    if (c.select) run_select<T>(&regs[nin + k], &regs[c.a], &regs[c.b], &regs[c.c], 1);
    else exec<T>(c, &regs[nin + k], &regs[c.a], c.binary ? &regs[c.b] : nullptr, 1);
  }
  *static_cast<T*>(out) = regs[nregs - 1];
}

}  // namespace

void fused_one(const void* const* inputs, int n_inputs, const std::vector<FusedInstr>& code, DType dtype, void* out) {
  UMA_ASSERT(!code.empty());
  switch (dtype) {
    case DType::Int32: fused_one_typed<int32_t>(inputs, n_inputs, code, out); return;
    case DType::Int64: fused_one_typed<int64_t>(inputs, n_inputs, code, out); return;
    case DType::Float32: fused_one_typed<float>(inputs, n_inputs, code, out); return;
    case DType::Float64: fused_one_typed<double>(inputs, n_inputs, code, out); return;
    default: UMA_ASSERT(false && "fused_one: unsupported dtype");
  }
}

void fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out) {
  UMA_ASSERT(!code.empty());
  switch (out.dtype()) {
    case DType::Int32: fused_typed<int32_t>(inputs, code, out); return;
    case DType::Int64: fused_typed<int64_t>(inputs, code, out); return;
    case DType::Float32: fused_typed<float>(inputs, code, out); return;
    case DType::Float64: fused_typed<double>(inputs, code, out); return;
    default: UMA_ASSERT(false && "fused: unsupported dtype");
  }
}

}  // namespace uma::kernels::cpu
