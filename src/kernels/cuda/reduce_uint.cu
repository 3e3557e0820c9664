// Reductions of the unsigned integers (templates in reduce.cuh).
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kUInt8, uint8_t) X(kUInt16, uint16_t) X(kUInt32, uint32_t) X(kUInt64, uint64_t)
UMA_RED_DEFINE_GROUP(uint, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
