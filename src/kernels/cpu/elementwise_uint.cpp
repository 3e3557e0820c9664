// Elementwise kernels for the unsigned integers (see elementwise_kernels.h).
#include "kernels/cpu/elementwise_kernels.h"

namespace uma::kernels::cpu {

UMA_INSTANTIATE_ELEMENTWISE(uint8_t)
UMA_INSTANTIATE_ELEMENTWISE(uint16_t)
UMA_INSTANTIATE_ELEMENTWISE(uint32_t)
UMA_INSTANTIATE_ELEMENTWISE(uint64_t)

}  // namespace uma::kernels::cpu
