// Elementwise kernels for float32 and float64 (float16 and bfloat16 are computed in float32 by the ops layer) (see elementwise_kernels.h).
#include "kernels/cpu/elementwise_kernels.h"

namespace uma::kernels::cpu {

UMA_INSTANTIATE_ELEMENTWISE(float)
UMA_INSTANTIATE_ELEMENTWISE(double)

}  // namespace uma::kernels::cpu
