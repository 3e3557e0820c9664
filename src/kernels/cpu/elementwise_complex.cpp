// Elementwise kernels for complex64 and complex128 (see elementwise_kernels.h).
#include "kernels/cpu/elementwise_kernels.h"

namespace uma::kernels::cpu {

UMA_INSTANTIATE_ELEMENTWISE(complex64)
UMA_INSTANTIATE_ELEMENTWISE(complex128)

}  // namespace uma::kernels::cpu
