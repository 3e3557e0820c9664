// Elementwise kernels for complex128 (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kComplex128, cuda_dev::Cx<double>)
UMA_EW_DEFINE_GROUP(c128, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
