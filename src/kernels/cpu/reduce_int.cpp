// Reductions over bool and the integer dtypes (see reduce_impl.h).
#include "kernels/cpu/reduce_impl.h"

namespace uma::kernels::cpu::red {

void reduce_bool_int(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  switch (a.dtype()) {
    case DType::Bool: return reduce_op<bool8>(op, a, mask, out);
    case DType::Int8: return reduce_op<int8_t>(op, a, mask, out);
    case DType::Int16: return reduce_op<int16_t>(op, a, mask, out);
    case DType::Int32: return reduce_op<int32_t>(op, a, mask, out);
    case DType::Int64: return reduce_op<int64_t>(op, a, mask, out);
    case DType::UInt8: return reduce_op<uint8_t>(op, a, mask, out);
    case DType::UInt16: return reduce_op<uint16_t>(op, a, mask, out);
    case DType::UInt32: return reduce_op<uint32_t>(op, a, mask, out);
    case DType::UInt64: return reduce_op<uint64_t>(op, a, mask, out);
    default: UMA_ASSERT(false && "reduce_bool_int: not a bool/integer dtype");
  }
}

}  // namespace uma::kernels::cpu::red
