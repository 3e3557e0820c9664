// src/kernels/cpu/vmath.h — vectorised transcendental functions for contiguous float32 /
// float64 runs, through glibc's libmvec (its AVX2 variants; glibc documents at most 4 ULP
// of error, within DESIGN.md's "a few ULP of NumPy"). Chosen at run time: on a CPU without
// AVX2+FMA, or for an op libmvec lacks, `vmath_unary` returns false and the caller uses
// scalar libm. The scalar tail of a run goes through the same vector routine (padded), so a
// result never depends on where an element falls in a block: fused and unfused kernels agree
// bit for bit.
#pragma once
#include <cstdint>

#include "uma/ops/table.h"

namespace uma::kernels::cpu {

/// o[i] = op(a[i]) for i < n if libmvec serves (op, T) on this CPU; false otherwise (nothing
/// written). a and o may be the same buffer.
bool vmath_unary(UnaryOp op, const double* a, double* o, int64_t n) noexcept;
bool vmath_unary(UnaryOp op, const float* a, float* o, int64_t n) noexcept;

}  // namespace uma::kernels::cpu
