// The device entry points of kernels/kernels.h that are more than a choice between the cpu
// and cuda kernel.
#include <cmath>

#include "kernels/kernels.h"

namespace uma::kernels {

void fused(std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out) {
  if (out.device().is_cpu()) {
    cpu::fused(inputs, code, out);
    return;
  }
  std::vector<Array> reg;
  reg.reserve(inputs.size() + code.size());
  for (const Array* in : inputs) reg.push_back(in->broadcast_view(out.shape()));
  {
    std::vector<const Array*> views;
    for (const Array& r : reg) views.push_back(&r);
    if (cuda::fused(views, code, out)) return;  // one kernel (Note [Fused chains on cuda])
  }
  // Otherwise the ops one by one, each into an array of its own.
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    // A comparison's register holds its bool array here (read only as a where's condition).
    const bool truth = !c.select && c.binary && rule(static_cast<BinaryOp>(c.op)) == BinaryRule::Comparison;
    Array r = k + 1 == code.size() ? out
                                   : Array::empty(out.shape(), truth ? DType::Bool : out.dtype(), out.device());
    if (c.select) cuda::where(reg[c.a], reg[c.b], reg[c.c], r);
    else if (c.binary) cuda::binary(static_cast<BinaryOp>(c.op), reg[c.a], reg[c.b], r);
    else cuda::unary(static_cast<UnaryOp>(c.op), reg[c.a], r);
    reg.push_back(r);
  }
}

void matmul_fused(const Array& a, const Array& b, std::span<const Array* const> inputs,
                  const std::vector<FusedInstr>& code, const Array& out) {
  if (!out.device().is_cpu() && (cuda::matmul_chain(a, b, inputs.subspan(1), code, out) ||
                                 cuda::matmul_scaled_add(a, b, inputs.subspan(1), code, out)))
    return;
  matmul(a, b, out);
  // Register 0 is the product, which the chain overwrites in place: on the host every
  // instruction of a block reads its registers before the last one writes that block; on a
  // device each thread reads its elements' registers before it writes those elements (one
  // kernel, Note [Fused chains on cuda]), or only the last of the ops one by one writes it.
  fused(inputs, code, out);
}

void reduce_fused(ReduceOp op, const Array& a, const std::vector<bool>& reduce_mask,
                  std::span<const Array* const> inputs, const std::vector<FusedInstr>& code, const Array& out) {
  if (!out.device().is_cpu() && cuda::reduce_chain(op, a, reduce_mask, inputs.subspan(1), code, out)) return;
  reduce(op, a, reduce_mask, out);
  fused(inputs, code, out);  // in place, register 0 the reduction (as matmul_fused)
}

void cast_into(const Array& src, const Array& dst) {
  if (dst.device().is_cpu()) {
    cpu::cast(src, dst);
  } else if (dst.is_c_contiguous()) {
    cuda::cast(src, dst);
  } else {  // convert into contiguous memory, then scatter into the view
    Array tmp = Array::empty(dst.shape(), dst.dtype(), dst.device());
    cuda::cast(src, tmp);
    cuda::unpack(tmp, dst);
  }
}

namespace {
// The compositions of cuda kernels below: each step one cuda kernel on full-size arrays.
Array device_empty(const Shape& shape, DType t, const Array& like) { return Array::empty(shape, t, like.device()); }

Array device_cast(const Array& a, DType t) {
  if (a.dtype() == t) return a;
  Array c = device_empty(a.shape(), t, a);
  cuda::cast(a, c);
  return c;
}

// `kept` (the C-contiguous result of reducing `a` over `mask`) seen with a's shape: stride 0 on
// the reduced axes.
Array expand_kept(const Array& kept, const Array& a, const std::vector<bool>& mask) {
  Strides st(a.ndim(), 0);
  const Strides ks = contiguous_strides(kept.shape());
  for (int64_t d = 0, k = 0; d < a.ndim(); ++d)
    if (!mask[d]) st[d] = ks[k++];
  return kept.view(kept.data(), a.shape(), st);
}

// A 0-d float64 array on a's device holding v, seen with `shape` (stride 0).
Array device_scalar(double v, const Shape& shape, const Array& a) {
  Array s = device_empty({}, DType::Float64, a);
  cuda::fill(s, &v);
  return s.broadcast_view(shape);
}

Array unary_to(UnaryOp op, const Array& x, DType t) {
  Array r = device_empty(x.shape(), t, x);
  cuda::unary(op, x, r);
  return r;
}

Array binary_to(BinaryOp op, const Array& x, const Array& y, DType t) {
  Array r = device_empty(x.shape(), t, x);
  cuda::binary(op, x, y, r);
  return r;
}

Array reduce_to(ReduceOp op, const Array& x, const std::vector<bool>& mask, const Shape& kept) {
  Array r = device_empty(kept, x.dtype(), x);
  cuda::reduce(op, x, mask, r);
  return r;
}
}  // namespace

void add_into(const Array& dst, const Array& src) {
  if (dst.device().is_cpu()) {
    cpu::add_into(dst, src);
    return;
  }
  // The cuda kernels compute float16/bfloat16 in float32 and round once, as cpu::add_into.
  const DType t = dst.dtype(), ct = t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t;
  Array sum = device_empty(dst.shape(), ct, dst);
  cuda::binary(BinaryOp::Add, device_cast(dst, ct), device_cast(src, ct), sum);
  cast_into(sum, dst);
}

void var(const Array& a, const std::vector<bool>& mask, double ddof, bool take_sqrt, const Array& out) {
  if (out.device().is_cpu()) {
    cpu::var(a, mask, ddof, take_sqrt, out);
    return;
  }
  if (out.size() == 0) return;
  // The cpu kernel's two passes, in float64 (complex128 for complex input):
  // sum(|x - mean|^2) / max(n - ddof, 0), then sqrt for std.
  const bool cplx = a.dtype() == DType::Complex64 || a.dtype() == DType::Complex128;
  const DType wt = cplx ? DType::Complex128 : DType::Float64;
  const Shape& kept = out.shape();
  int64_t n = 1;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (mask[d]) n *= a.shape()[d];
  Array x = device_cast(a, wt);
  Array mean = reduce_to(ReduceOp::Mean, x, mask, kept);
  Array d = binary_to(BinaryOp::Subtract, x, expand_kept(mean, x, mask), wt);
  Array sq = unary_to(UnaryOp::Square, cplx ? unary_to(UnaryOp::Abs, d, DType::Float64) : d, DType::Float64);
  const double denom = static_cast<double>(n) - ddof > 0 ? static_cast<double>(n) - ddof : 0.0;
  Array r = binary_to(BinaryOp::Divide, reduce_to(ReduceOp::Sum, sq, mask, kept), device_scalar(denom, kept, sq),
                      DType::Float64);
  if (take_sqrt) r = unary_to(UnaryOp::Sqrt, r, DType::Float64);
  cuda::cast(r, out);
}

void logsumexp(const Array& a, const std::vector<bool>& mask, const Array& out) {
  if (out.device().is_cpu()) {
    cpu::logsumexp(a, mask, out);
    return;
  }
  // The cpu kernel's rule, in float64: m = max(x); shift = m where m is finite, else 0;
  // log(sum(exp(x - shift))) + shift (all -inf gives -inf, a +inf gives +inf, a NaN gives NaN;
  // an empty reduction gives -inf).
  const Shape& kept = out.shape();
  if (out.size() == 0) return;
  if (a.size() == 0) {
    const double ninf = -INFINITY;
    Array r = device_empty(kept, DType::Float64, out);
    cuda::fill(r, &ninf);
    cuda::cast(r, out);
    return;
  }
  Array x = device_cast(a, DType::Float64);
  Array m = reduce_to(ReduceOp::Max, x, mask, kept);
  Array finite = binary_to(BinaryOp::Less, unary_to(UnaryOp::Abs, m, DType::Float64),
                           device_scalar(INFINITY, kept, m), DType::Bool);
  Array shift = device_empty(kept, DType::Float64, m);
  cuda::where(finite, m, device_scalar(0.0, kept, m), shift);
  Array e = unary_to(UnaryOp::Exp, binary_to(BinaryOp::Subtract, x, expand_kept(shift, x, mask), DType::Float64),
                     DType::Float64);
  Array r = binary_to(BinaryOp::Add, unary_to(UnaryOp::Log, reduce_to(ReduceOp::Sum, e, mask, kept), DType::Float64),
                      shift, DType::Float64);
  cuda::cast(r, out);
}

}  // namespace uma::kernels
