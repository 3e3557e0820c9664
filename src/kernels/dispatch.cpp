// The device entry points of kernels/kernels.h that are more than a choice between the cpu
// and cuda kernel.
#include "kernels/kernels.h"

namespace uma::kernels {

void fused(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, const Array& out) {
  if (out.device().is_cpu()) {
    cpu::fused(inputs, code, out);
    return;
  }
  std::vector<Array> reg;
  reg.reserve(inputs.size() + code.size());
  for (const Array& in : inputs) reg.push_back(in.broadcast_view(out.shape()));
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    Array r = k + 1 == code.size() ? out : Array::empty(out.shape(), out.dtype(), out.device());
    if (c.binary) cuda::binary(static_cast<BinaryOp>(c.op), reg[c.a], reg[c.b], r);
    else cuda::unary(static_cast<UnaryOp>(c.op), reg[c.a], r);
    reg.push_back(r);
  }
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

void add_into(const Array& dst, const Array& src) {
  if (dst.device().is_cpu()) {
    cpu::add_into(dst, src);
    return;
  }
  // The cuda kernels compute float16/bfloat16 in float32 and round once, as cpu::add_into.
  const DType t = dst.dtype(), ct = t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t;
  auto in_ct = [&](const Array& x) {
    if (x.dtype() == ct) return x;
    Array c = Array::empty(x.shape(), ct, x.device());
    cuda::cast(x, c);
    return c;
  };
  Array sum = Array::empty(dst.shape(), ct, dst.device());
  cuda::binary(BinaryOp::Add, in_ct(dst), in_ct(src), sum);
  cast_into(sum, dst);
}

}  // namespace uma::kernels
