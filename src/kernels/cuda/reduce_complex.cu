// Reductions of complex64 and complex128 (templates in reduce.cuh).
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kComplex64, cuda_dev::Cx<float>) X(kComplex128, cuda_dev::Cx<double>)
UMA_RED_DEFINE_GROUP(complex, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
