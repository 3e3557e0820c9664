// Elementwise kernels for complex64 (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kComplex64, cuda_dev::Cx<float>)
UMA_EW_DEFINE_GROUP(c64, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
