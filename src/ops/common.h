// src/ops/common.h — helpers shared by the op definitions (internal).
#pragma once
#include "uma/error.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma::ops::detail {

/// TypeError unless `t` has compute kernels.
void check_compute(const char* op, DType t);
/// The device an op runs on: that of its operands. 0-d host arrays (scalars) join an op on a
/// cuda device (moved there); RuntimeError naming `op` and both devices for any other mix.
/// Updates the moved arrays in place.
Device common_device(const char* op, const std::vector<Array*>& arrays);
/// RuntimeError naming `op` and x's device unless x is on the host (ops with host kernels only;
/// the message says to move the array to the cpu).
void require_host(const char* op, const Array& x);

// getitem (a basic index: a view) whose errors name `op` (setitem's region).
Array getitem_named(const Array& a, const std::vector<IndexItem>& index, const char* op);

}  // namespace uma::ops::detail
