// Reductions over the real floating dtypes (see reduce_impl.h).
#include "kernels/cpu/reduce_impl.h"

namespace uma::kernels::cpu::red {

void reduce_real(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  switch (a.dtype()) {
    case DType::Float16: return reduce_op<float16>(op, a, mask, out);
    case DType::BFloat16: return reduce_op<bfloat16>(op, a, mask, out);
    case DType::Float32: return reduce_op<float>(op, a, mask, out);
    case DType::Float64: return reduce_op<double>(op, a, mask, out);
    default: UMA_ASSERT(false && "reduce_real: not a real float dtype");
  }
}

}  // namespace uma::kernels::cpu::red
