// CPU reductions: the dispatch over dtype groups. The kernel template and its numerical rules
// are in reduce_impl.h; each dtype group is instantiated in its own translation unit.
#include "kernels/cpu/reduce_impl.h"

namespace uma::kernels::cpu {

void reduce(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  const DType t = a.dtype();
  if (is_complex(t)) red::reduce_complex(op, a, mask, out);
  else if (is_float(t)) red::reduce_real(op, a, mask, out);
  else red::reduce_bool_int(op, a, mask, out);
}

}  // namespace uma::kernels::cpu
