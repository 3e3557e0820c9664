// Device dispatch of the fused elementwise executor (kernels/kernels.h).
#include "kernels/kernels.h"

namespace uma::kernels {

namespace {
// `a` broadcast to `shape` (stride 0 on broadcast axes).
Array broadcast(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const int64_t nd = static_cast<int64_t>(shape.size()), off = nd - a.ndim();
  Strides st(nd, 0);
  for (int64_t d = 0; d < a.ndim(); ++d) st[off + d] = a.shape()[d] == 1 && shape[off + d] != 1 ? 0 : a.strides()[d];
  return a.view(a.data(), shape, st);
}
}  // namespace

void fused(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, const Array& out) {
  if (out.device().is_cpu()) {
    cpu::fused(inputs, code, out);
    return;
  }
  std::vector<Array> reg;
  reg.reserve(inputs.size() + code.size());
  for (const Array& in : inputs) reg.push_back(broadcast(in, out.shape()));
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    Array r = k + 1 == code.size() ? out : Array::empty(out.shape(), out.dtype(), out.device());
    if (c.binary) cuda::binary(static_cast<BinaryOp>(c.op), reg[c.a], reg[c.b], r);
    else cuda::unary(static_cast<UnaryOp>(c.op), reg[c.a], r);
    reg.push_back(r);
  }
}

}  // namespace uma::kernels
