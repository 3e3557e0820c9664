// Elementwise kernels for signed integers (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kInt8, int8_t) X(kInt16, int16_t) X(kInt32, int32_t) X(kInt64, int64_t)
UMA_EW_DEFINE_GROUP(sint, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
