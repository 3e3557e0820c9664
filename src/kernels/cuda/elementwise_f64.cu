// Elementwise kernels for float64 (templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

#define UMA_LIST(X) X(kFloat64, double)
UMA_EW_DEFINE_GROUP(f64, UMA_LIST)
#undef UMA_LIST

}  // namespace uma::kernels::cuda_launch
