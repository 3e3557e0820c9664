// Set op definitions (Array API standard 2025.12, unique_all / unique_counts / unique_inverse /
// unique_values): the unique values of the flattened array, ascending (NumPy's np.unique order,
// Note [Sort order] in kernels/cpu/sort.cpp), with first indices, inverse and counts on demand,
// on every device.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

UniqueResult unique(const Array& x, bool want_indices, bool want_inverse, bool want_counts, const char* op) {
  (void)op;  // every device has a kernel
  Array flat = contiguous(reshape(x, {x.size()}));
  kernels::UniqueParts p = kernels::unique(flat, want_indices, want_inverse, want_counts);
  UniqueResult r{p.values, p.indices, p.inverse, p.counts};
  if (want_inverse) r.inverse_indices = reshape(p.inverse, x.shape());
  return r;
}

}  // namespace uma::ops
