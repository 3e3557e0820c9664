// Elementwise kernels for float32 (and float16/bfloat16, computed in float32 by the ops layer) (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kFloat32, float)
UMA_EW_DEFINE_GROUP(f32, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
