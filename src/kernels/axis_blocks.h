// src/kernels/axis_blocks.h — a shape seen around one axis (internal): the product of the
// axes before it (outer) and after it (inner), as the take and scatter kernels of every
// device walk a C-contiguous array: outer blocks of (length along axis) x inner elements.
#pragma once
#include <cstdint>

#include "uma/array.h"

namespace uma::kernels {

struct AxisBlocks {
  int64_t outer = 1, inner = 1;
};

inline AxisBlocks blocks_of(const Shape& shape, int64_t axis) {
  AxisBlocks b;
  for (int64_t d = 0; d < axis; ++d) b.outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d) b.inner *= shape[d];
  return b;
}

}  // namespace uma::kernels
