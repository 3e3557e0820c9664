// Elementwise kernels for bool and the signed integers (see elementwise_kernels.h).
#include "kernels/cpu/elementwise_kernels.h"

namespace uma::kernels::cpu {

UMA_INSTANTIATE_ELEMENTWISE(bool8)
UMA_INSTANTIATE_ELEMENTWISE(int8_t)
UMA_INSTANTIATE_ELEMENTWISE(int16_t)
UMA_INSTANTIATE_ELEMENTWISE(int32_t)
UMA_INSTANTIATE_ELEMENTWISE(int64_t)

}  // namespace uma::kernels::cpu
