// Elementwise kernels for bool and the unsigned integers (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kBool, bool8) X(kUInt8, uint8_t) X(kUInt16, uint16_t) X(kUInt32, uint32_t) X(kUInt64, uint64_t)
UMA_EW_DEFINE_GROUP(uint, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
