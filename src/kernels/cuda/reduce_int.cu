// Reductions of bool and the signed integers (templates in reduce.cuh).
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kBool, bool8) X(kInt8, int8_t) X(kInt16, int16_t) X(kInt32, int32_t) X(kInt64, int64_t)
UMA_RED_DEFINE_GROUP(int, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
