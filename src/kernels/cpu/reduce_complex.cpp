// Reductions over the complex dtypes (see reduce_impl.h).
#include "kernels/cpu/reduce_impl.h"

namespace uma::kernels::cpu::red {

void reduce_complex(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  switch (a.dtype()) {
    case DType::Complex64: return reduce_op<complex64>(op, a, mask, out);
    case DType::Complex128: return reduce_op<complex128>(op, a, mask, out);
    default: UMA_ASSERT(false && "reduce_complex: not a complex dtype");
  }
}

}  // namespace uma::kernels::cpu::red
