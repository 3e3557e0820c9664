// Host side of the elementwise, reduction and cross-entropy kernels (kernels/cuda_kernels.h):
// merges the operands' axes into the fewest strided dimensions and launches.
#include <cstring>

#include "kernels/cuda/ops_launch.h"
#include "kernels/cuda/host_launch.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

using host::check;
using host::Launch;

namespace L = cuda_launch;

// The launchers' codes are the enums' values (kernels/cuda/support.h).
static_assert(static_cast<int>(DType::Float64) == L::kFloat64 && static_cast<int>(DType::BFloat16) == L::kBFloat16 &&
              static_cast<int>(DType::Int64) == L::kInt64 && static_cast<int>(DType::Bool) == L::kBool &&
              static_cast<int>(DType::UInt64) == L::kUInt64 && static_cast<int>(DType::Complex64) == L::kComplex64 &&
              static_cast<int>(DType::Complex128) == L::kComplex128 && kNumDTypes == L::kNumDt);
static_assert(static_cast<int>(ReduceOp::Any) == L::RAny && static_cast<int>(ReduceOp::ArgMax) == L::RArgMax &&
              static_cast<int>(ReduceOp::Prod) == L::RProd);

bool supports(BinaryOp op, DType t) noexcept { return L::binary_ok(static_cast<int>(op), static_cast<int>(t)); }
bool supports(UnaryOp op, DType t) noexcept { return L::unary_ok(static_cast<int>(op), static_cast<int>(t)); }
bool supports(ReduceOp op, DType t) noexcept { return L::reduce_ok(static_cast<int>(op), static_cast<int>(t)); }

namespace {


// The merged index space of `out`'s shape and the operands (views of that shape). `dense`
// means every operand is contiguous over the space, or (with `scalars`, for kernels that
// read such operands once) a scalar with all strides 0.
L::Space merge(const Array& out, const std::vector<const Array*>& in, std::vector<L::Operand>& ops,
               bool scalars = false) {
  L::Space s{};
  s.n = out.size();
  ops.assign(in.size(), L::Operand{});
  for (std::size_t k = 0; k < in.size(); ++k) ops[k].ptr = static_cast<const char*>(in[k]->data());
  int nd = 0;
  for (int64_t d = 0; d < out.ndim(); ++d) {
    const int64_t n = out.shape()[d];
    if (n == 1) continue;
    bool mergeable = nd > 0;
    for (std::size_t k = 0; k < in.size() && mergeable; ++k) {
      const int64_t st = in[k]->strides()[d] * static_cast<int64_t>(in[k]->itemsize());
      mergeable = ops[k].byte_strides[nd - 1] == st * n;
    }
    if (mergeable) {
      s.shape[nd - 1] *= n;
      for (std::size_t k = 0; k < in.size(); ++k)
        ops[k].byte_strides[nd - 1] = in[k]->strides()[d] * static_cast<int64_t>(in[k]->itemsize());
      continue;
    }
    UMA_CHECK(nd < L::kMaxDims, Runtime, "cuda kernels: views of more than ", L::kMaxDims,
              " non-mergeable dimensions are not supported");
    s.shape[nd] = n;
    for (std::size_t k = 0; k < in.size(); ++k)
      ops[k].byte_strides[nd] = in[k]->strides()[d] * static_cast<int64_t>(in[k]->itemsize());
    ++nd;
  }
  s.ndim = nd;
  s.dense = true;
  for (std::size_t k = 0; k < in.size(); ++k) {
    bool zero = true;
    for (int d = 0; d < nd; ++d) zero = zero && ops[k].byte_strides[d] == 0;
    const bool contig = nd == 0 || (nd == 1 && ops[k].byte_strides[0] == static_cast<int64_t>(in[k]->itemsize()));
    s.dense = s.dense && ((scalars && zero) || contig);
  }
  return s;
}


}  // namespace

void cast(const Array& src, const Array& dst) {
  UMA_ASSERT(src.shape() == dst.shape() && dst.is_c_contiguous());
  if (src.dtype() == dst.dtype()) {  // a copy: the bits as they are (a float16 NaN's payload too)
    if (src.size() > 0) pack(src, dst);
    return;
  }
  std::vector<L::Operand> ops;
  const L::Space s = merge(dst, {&src}, ops);
  Launch l(dst);
  check(L::cast(static_cast<int>(src.dtype()), static_cast<int>(dst.dtype()), ops[0], dst.data(), s, l.stream),
        "cast<<<...>>>");
}

void binary(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  UMA_ASSERT(a.shape() == out.shape() && b.shape() == out.shape() && out.is_c_contiguous() && a.dtype() == b.dtype());
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, {&a, &b}, ops, /*scalars=*/true);
  Launch l(out);
  check(L::binary(static_cast<int>(op), static_cast<int>(a.dtype()), ops[0], ops[1], out.data(), s, l.stream),
        "binary<<<...>>>");
}

void unary(UnaryOp op, const Array& a, const Array& out) {
  UMA_ASSERT(a.shape() == out.shape() && out.is_c_contiguous());
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, {&a}, ops);
  Launch l(out);
  check(L::unary(static_cast<int>(op), static_cast<int>(a.dtype()), ops[0], out.data(), s, l.stream),
        "unary<<<...>>>");
}

void clip(const Array& x, const Array& lo, const Array& hi, const Array& out) {
  UMA_ASSERT(x.shape() == out.shape() && lo.shape() == out.shape() && hi.shape() == out.shape() &&
             out.is_c_contiguous() && x.dtype() == out.dtype() && lo.dtype() == out.dtype() && hi.dtype() == out.dtype());
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, {&x, &lo, &hi}, ops);
  Launch l(out);
  check(L::clip(static_cast<int>(out.dtype()), ops[0], ops[1], ops[2], out.data(), s, l.stream), "clip<<<...>>>");
}

void where(const Array& cond, const Array& x, const Array& y, const Array& out) {
  UMA_ASSERT(cond.dtype() == DType::Bool && x.dtype() == out.dtype() && y.dtype() == out.dtype() && out.is_c_contiguous());
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, {&cond, &x, &y}, ops);
  Launch l(out);
  check(L::where(static_cast<int>(out.itemsize()), ops[0], ops[1], ops[2], out.data(), s, l.stream), "where<<<...>>>");
}

namespace {

// The chain as the kernels read it; false when it exceeds their limits (kFusedInputs inputs,
// kFusedCode instructions).
bool fused_code(std::size_t nin, const std::vector<FusedInstr>& code, L::FusedCode& c) {
  if (nin > static_cast<std::size_t>(L::kFusedInputs) || code.empty() ||
      code.size() > static_cast<std::size_t>(L::kFusedCode))
    return false;
  c = L::FusedCode{};
  c.nin = static_cast<int32_t>(nin);
  c.ncode = static_cast<int32_t>(code.size());
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& f = code[k];
    c.kind[k] = f.select ? L::kFusedSelect : f.binary ? L::kFusedBinary : L::kFusedUnary;
    c.op[k] = static_cast<int16_t>(f.op);
    c.a[k] = static_cast<unsigned char>(f.a);
    c.b[k] = static_cast<unsigned char>(f.b);
    c.c[k] = static_cast<unsigned char>(f.c);
  }
  return true;
}

}  // namespace

namespace {

// The geometry of reducing `a` over the axes of `mask` into `out` (C-contiguous, one element per
// output): kept axes (outer, in order) and reduced axes, each merged where contiguous.
L::ReduceGeometry reduce_geometry(const Array& a, const std::vector<bool>& mask, const Array& out) {
  UMA_ASSERT(out.is_c_contiguous());
  L::ReduceGeometry g{};
  const int64_t isz = static_cast<int64_t>(a.itemsize());
  g.nout = out.size();
  g.rsize = 1;
  auto add = [&](int32_t& nd, int64_t* shape, int64_t* strides, int64_t n, int64_t st) {
    if (n == 1) return;
    if (nd > 0 && strides[nd - 1] == st * n) {
      shape[nd - 1] *= n;
      strides[nd - 1] = st;
      return;
    }
    UMA_CHECK(nd < L::kMaxDims, Runtime, "reductions on cuda: more than ", L::kMaxDims, " non-mergeable axes");
    shape[nd] = n;
    strides[nd] = st;
    ++nd;
  };
  for (int64_t d = 0; d < a.ndim(); ++d) {
    const int64_t n = a.shape()[d], st = a.strides()[d] * isz;
    if (mask[d]) {
      g.rsize *= n;
      add(g.nred, g.red_shape, g.red_strides, n, st);
    } else {
      add(g.nkept, g.kept_shape, g.kept_strides, n, st);
    }
  }
  return g;
}

// The operands of an epilogue kernel over `out`'s space: operand 0 is `out` itself (register 0,
// the product or reduction the kernel computes: never read from memory), then `rest` as views
// of out's shape.
L::Space epilogue_operands(const Array& out, std::span<const Array* const> rest, L::FusedOperands& fo) {
  std::vector<Array> views;
  views.reserve(rest.size());
  for (const Array* r : rest) views.push_back(r->broadcast_view(out.shape()));
  std::vector<const Array*> in{&out};
  for (const Array& v : views) in.push_back(&v);
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, in, ops, /*scalars=*/true);
  for (std::size_t k = 0; k < ops.size(); ++k) fo.op[k] = ops[k];
  return s;
}

// A workspace for `splits` partial accumulators of each output, when there is more than one.
Array reduce_workspace(ReduceOp op, const Array& a, const L::ReduceGeometry& g, int64_t splits, Device dev) {
  if (splits <= 1) return Array();
  return Array::empty({g.nout * splits * L::reduce_acc_bytes(static_cast<int>(op), static_cast<int>(a.dtype()))},
                      DType::UInt8, dev);
}

}  // namespace

bool fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out) {
  const DType t = out.dtype();
  L::FusedCode c;
  if (!(t == DType::Int32 || t == DType::Int64 || t == DType::Float32 || t == DType::Float64) ||
      !fused_code(inputs.size(), code, c))
    return false;
  UMA_ASSERT(out.is_c_contiguous());
  std::vector<const Array*> in(inputs.begin(), inputs.end());
  std::vector<L::Operand> ops;
  const L::Space s = merge(out, in, ops, /*scalars=*/true);
  L::FusedOperands fo{};
  for (std::size_t k = 0; k < ops.size(); ++k) fo.op[k] = ops[k];
  Launch l(out);
  check(L::fused(static_cast<int>(t), fo, c, out.data(), s, l.stream), "fused_elementwise<<<...>>>");
  return true;
}

bool matmul_chain(const Array& a, const Array& b, std::span<const Array* const> rest, const std::vector<FusedInstr>& code,
                  const Array& out) {
  const DType t = out.dtype();
  L::FusedCode c;
  if (!(t == DType::Float32 || t == DType::Float64) || a.ndim() != 2 || b.ndim() != 2 || out.ndim() != 2 ||
      !small_product(out.size(), a.shape()[1]) || !fused_code(rest.size() + 1, code, c))
    return false;
  UMA_ASSERT(out.is_c_contiguous() && a.dtype() == t && b.dtype() == t);
  L::FusedOperands fo{};
  const L::Space s = epilogue_operands(out, rest, fo);
  L::TiledGemm g{};
  g.M = out.shape()[0];
  g.N = out.shape()[1];
  g.K = a.shape()[1];
  g.batch = 1;
  g.a_rs = a.strides()[0];
  g.a_cs = a.strides()[1];
  g.b_rs = b.strides()[0];
  g.b_cs = b.strides()[1];
  Launch l(out);
  const int e = L::tiled_matmul_chain(static_cast<int>(t), a.data(), b.data(), g, fo, c, out.data(), s, l.stream);
  if (e == L::kNotFused) return false;
  check(e, "matmul_fused<<<...>>>");
  return true;
}

bool reduce_chain(ReduceOp op, const Array& a, const std::vector<bool>& mask, std::span<const Array* const> rest,
                  const std::vector<FusedInstr>& code, const Array& out) {
  const DType t = out.dtype();
  L::FusedCode c;
  if (!(op == ReduceOp::Sum || op == ReduceOp::Mean) || !(t == DType::Float32 || t == DType::Float64) ||
      a.dtype() != t || a.size() == 0 || !fused_code(rest.size() + 1, code, c))
    return false;
  const L::ReduceGeometry g = reduce_geometry(a, mask, out);
  const int64_t splits = L::reduce_splits(g, static_cast<int>(a.itemsize()));
  if (g.nout == 0 || splits < 1) return false;  // the thread-per-output kernel's order: not a column pass
  L::FusedOperands fo{};
  const L::Space s = epilogue_operands(out, rest, fo);
  Launch l(out);
  const Array ws = reduce_workspace(op, a, g, splits, out.device());
  const int e = L::column_reduce_chain(static_cast<int>(op), static_cast<int>(t), static_cast<const char*>(a.data()), g,
                                       splits, splits > 1 ? ws.data() : nullptr, fo, c, out.data(), s, l.stream);
  if (e == L::kNotFused) return false;
  check(e, "reduce_fused<<<...>>>");
  return true;
}

void reduce(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  const L::ReduceGeometry g = reduce_geometry(a, mask, out);
  if (g.nout == 0) return;
  const int64_t splits = L::reduce_splits(g, static_cast<int>(a.itemsize()));
  Launch l(out);
  const Array ws = reduce_workspace(op, a, g, splits, out.device());
  check(L::reduce(static_cast<int>(op), static_cast<int>(a.dtype()), static_cast<const char*>(a.data()), out.data(), g,
                  splits, splits > 1 ? ws.data() : nullptr, l.stream),
        "reduce<<<...>>>");
  // `ws` returns to the stream-ordered cache here: later work on the stream may reuse it.
}

void cumulate(const Array& a, int64_t axis, bool product, const Array& out) {
  UMA_ASSERT(out.is_c_contiguous() && out.shape() == a.shape() && axis >= 0 && axis < a.ndim());
  if (a.size() == 0) return;
  L::ScanGeometry g{};
  const int64_t isz = static_cast<int64_t>(a.itemsize());
  const Strides oc = contiguous_strides(out.shape());
  g.len = a.shape()[axis];
  g.in_axis_stride = a.strides()[axis] * isz;
  g.out_axis_stride = oc[axis];
  g.nlines = 1;
  int nd = 0;
  for (int64_t d = 0; d < a.ndim(); ++d) {
    if (d == axis || a.shape()[d] == 1) continue;
    UMA_CHECK(nd < L::kMaxDims, Runtime, "cumsum/cumprod on cuda: more than ", L::kMaxDims, " axes");
    g.shape[nd] = a.shape()[d];
    g.in_strides[nd] = a.strides()[d] * isz;
    g.out_strides[nd] = oc[d];
    g.nlines *= a.shape()[d];
    ++nd;
  }
  g.ndim = nd;
  Launch l(out);
  check(L::cumulate(product, static_cast<int>(a.dtype()), static_cast<const char*>(a.data()), out.data(), g, l.stream),
        "cumulate<<<...>>>");
}

namespace {
// Reads the 4-byte status word `flag` (waiting for the stream) and, when a kernel set it, finds
// the first label outside [0, c) on the host for the message (the error path only).
void raise_bad_label(const char* op, const Array& flag, const Array& y, int64_t c, cudaStream_t st) {
  int bad = 0;
  uma::cuda::detail::refuse_capture(flag.device().index, op);
  // A 4-byte status word, not an array transfer (not counted in the transfer statistics).
  UMA_CUDA_CHECK(cudaMemcpyAsync(&bad, flag.data(), sizeof(int), cudaMemcpyDeviceToHost, st));
  UMA_CUDA_CHECK(cudaStreamSynchronize(st));
  if (!bad) return;
  const int64_t n = y.shape()[0];
  const std::size_t isz = y.itemsize();
  std::vector<char> raw(static_cast<std::size_t>(n) * isz);
  UMA_CUDA_CHECK(cudaMemcpy(raw.data(), y.data(), raw.size(), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    if (isz == 8) std::memcpy(&v, raw.data() + i * 8, 8);
    else { int32_t w; std::memcpy(&w, raw.data() + i * 4, 4); v = w; }
    UMA_CHECK(v >= 0 && v < c, Value, op, ": label ", v, " at position ", i, " is out of range [0, ", c, ")");
  }
}
}  // namespace

void softmax_xent(const char* op, const Array& z, const Array& y, const Array* grad, int64_t gstride, const Array& out,
                  bool check_labels_now, bool one_hot_rows) {
  UMA_ASSERT(z.is_c_contiguous() && y.is_c_contiguous() && out.is_c_contiguous() && z.ndim() == 2);
  const int64_t n = z.shape()[0], c = z.shape()[1];
  if (n == 0) return;
  Array flag;
  Launch l(out);
  auto st = static_cast<cudaStream_t>(l.stream);
  if (c == 0) {  // every label is out of range: raise whether or not the check was deferred
    if (!one_hot_rows) check_labels(op, y, c);
    else UMA_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, static_cast<std::size_t>(out.nbytes()), st));  // zero rows
    return;
  }
  if (check_labels_now) {
    flag = Array::empty({1}, DType::Int32, out.device());
    UMA_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0, sizeof(int), st));
  }
  check(L::xent(grad != nullptr, one_hot_rows, static_cast<int>(z.dtype()), static_cast<int>(y.dtype()), z.data(),
                y.data(), grad ? grad->data() : nullptr, gstride, out.data(), n, c,
                check_labels_now ? static_cast<int*>(flag.data()) : nullptr, l.stream),
        "softmax_cross_entropy<<<...>>>");
  if (check_labels_now) raise_bad_label(op, flag, y, c, st);
}

void check_labels(const char* op, const Array& y, int64_t c) {
  UMA_ASSERT(y.is_c_contiguous() && y.ndim() == 1 && y.dtype() == DType::Int64);
  const int64_t n = y.shape()[0];
  if (n == 0) return;
  Array flag = Array::empty({1}, DType::Int32, y.device());
  Launch l(flag);
  auto st = static_cast<cudaStream_t>(l.stream);
  UMA_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0, sizeof(int), st));
  check(L::label_range(y.data(), n, c, static_cast<int*>(flag.data()), l.stream), "check_labels<<<...>>>");
  raise_bad_label(op, flag, y, c, st);
}

struct LabelFlag::Impl {
  int device;
  int* host = nullptr;               // pinned and mapped: the verdict, as the host reads it
  int* mapped = nullptr;             // the same word, as the check kernel writes it
  cudaStream_t side = nullptr;       // the check's stream, beside uma's (made with the device current)
  uma::cuda::detail::Event staged;   // recorded on uma's stream when the labels are in place
  uma::cuda::detail::Event done;     // recorded on `side` after the kernel
  bool queued = false;
  bool pending = false;  // a queued check the host has not waited for
  explicit Impl(int d) : device(d) {}
  ~Impl() {
    if (queued) (void)cudaEventSynchronize(done.get());  // the kernel no longer writes `host`
    if (side) (void)cudaStreamDestroy(side);
    if (host) (void)cudaFreeHost(host);
  }
};

LabelFlag::LabelFlag(Device d) {
  uma::cuda::detail::DeviceGuard guard(d.index);
  impl_ = std::make_unique<Impl>(d.index);
  void* h = nullptr;
  UMA_CUDA_CHECK(cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  impl_->host = static_cast<int*>(h);
  *impl_->host = 0;
  void* dev = nullptr;
  UMA_CUDA_CHECK(cudaHostGetDevicePointer(&dev, h, 0));
  impl_->mapped = static_cast<int*>(dev);
  UMA_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->side, cudaStreamNonBlocking));
}

LabelFlag::~LabelFlag() = default;

void LabelFlag::queue(const Array& y, int64_t c) {
  UMA_ASSERT(y.is_c_contiguous() && y.ndim() == 1 && y.dtype() == DType::Int64 && y.device().index == impl_->device);
  Launch l(y);
  // The check waits for the work queued on uma's stream so far (the labels' copy) and runs
  // beside what is queued there next (the step).
  UMA_CUDA_CHECK(cudaEventRecord(impl_->staged.get(), l.st()));
  UMA_CUDA_CHECK(cudaStreamWaitEvent(impl_->side, impl_->staged.get(), 0));
  check(L::label_verdict(y.data(), y.shape()[0], c, impl_->mapped, impl_->side), "label_verdict<<<...>>>");
  UMA_CUDA_CHECK(cudaEventRecord(impl_->done.get(), impl_->side));
  impl_->queued = impl_->pending = true;
}

bool LabelFlag::passed() const {
  if (!impl_->queued) return true;
  settle();
  return *static_cast<volatile int*>(impl_->host) == 0;
}

void LabelFlag::settle() const {
  if (!impl_->pending) return;
  UMA_CUDA_CHECK(cudaEventSynchronize(impl_->done.get()));
  impl_->pending = false;
}

}  // namespace uma::kernels::cuda
