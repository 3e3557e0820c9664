// Elementwise binary, unary and clip entry points (launchers in kernels/cuda/ops_launch.h):
// dispatch to the dtype groups (kernel templates in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace uma::kernels::cuda_launch {

int binary(int op, int dtype, const Operand& a, const Operand& b, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  if (!binary_ok(op, dtype)) return ew::kInvalid;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kInt8: case kInt16: case kInt32: case kInt64: return binary_sint(op, dtype, a, b, out, s, st);
    case kBool: case kUInt8: case kUInt16: case kUInt32: case kUInt64: return binary_uint(op, dtype, a, b, out, s, st);
    case kFloat32: return binary_f32(op, dtype, a, b, out, s, st);
    case kFloat64: return binary_f64(op, dtype, a, b, out, s, st);
    case kComplex64: return binary_c64(op, dtype, a, b, out, s, st);
    case kComplex128: return binary_c128(op, dtype, a, b, out, s, st);
    default: return ew::kInvalid;
  }
}

int unary(int op, int dtype, const Operand& a, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  if (!unary_ok(op, dtype)) return ew::kInvalid;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kInt8: case kInt16: case kInt32: case kInt64: return unary_sint(op, dtype, a, out, s, st);
    case kBool: case kUInt8: case kUInt16: case kUInt32: case kUInt64: return unary_uint(op, dtype, a, out, s, st);
    case kFloat32: return unary_f32(op, dtype, a, out, s, st);
    case kFloat64: return unary_f64(op, dtype, a, out, s, st);
    case kComplex64: return unary_c64(op, dtype, a, out, s, st);
    case kComplex128: return unary_c128(op, dtype, a, out, s, st);
    default: return ew::kInvalid;
  }
}

int clip(int dtype, const Operand& a, const Operand& lo, const Operand& hi, void* out, const Space& s, void* stream) {
  if (s.n == 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kInt8: case kInt16: case kInt32: case kInt64: return clip_sint(dtype, a, lo, hi, out, s, st);
    case kBool: case kUInt8: case kUInt16: case kUInt32: case kUInt64: return clip_uint(dtype, a, lo, hi, out, s, st);
    case kFloat32: return clip_f32(dtype, a, lo, hi, out, s, st);
    case kFloat64: return clip_f64(dtype, a, lo, hi, out, s, st);
    case kComplex64: return clip_c64(dtype, a, lo, hi, out, s, st);
    case kComplex128: return clip_c128(dtype, a, lo, hi, out, s, st);
    default: return ew::kInvalid;
  }
}

int sm_count() {
  static int count = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        sms <= 0)
      sms = 132;
    return sms;
  }();
  return count;
}

}  // namespace uma::kernels::cuda_launch
