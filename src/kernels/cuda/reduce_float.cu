// Reductions of the real floats (templates in reduce.cuh).
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kFloat16, __half) X(kBFloat16, __nv_bfloat16) X(kFloat32, float) X(kFloat64, double)
UMA_RED_DEFINE_GROUP(float, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
