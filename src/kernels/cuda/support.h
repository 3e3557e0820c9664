// src/kernels/cuda/support.h — which (op, dtype) pairs have a CUDA kernel (internal). The one
// table both sides read: the .cu dispatchers instantiate exactly these pairs, and
// kernels::cuda::supports() (ops.cpp) answers the ops layer from it. Plain C++17, free of uma
// headers; op and dtype codes are the integer values of uma::BinaryOp / UnaryOp / ReduceOp
// and uma::DType (checked by static_asserts in ops.cpp).
//
// The dtype is the one the kernel computes in (the ops layer's compute dtype): float16 and
// bfloat16 elementwise ops compute in float32 and never reach a kernel in their own dtype;
// logical ops compute in bool. Reductions read every dtype directly (float16/bfloat16 loaded
// as float32).
#pragma once

#ifdef __CUDACC__
#define UMA_HD __host__ __device__
#else
#define UMA_HD
#endif

namespace uma::kernels::cuda_launch {

enum Dt : int {
  kBool, kInt8, kInt16, kInt32, kInt64, kUInt8, kUInt16, kUInt32, kUInt64, kFloat16, kBFloat16, kFloat32, kFloat64,
  kComplex64, kComplex128,
};
constexpr int kNumDt = 15;

enum Bin : int {
  Add, Subtract, Multiply, Divide, Power, Maximum, Minimum, FloorDivide, Remainder,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr,
  Arctan2, LogicalXor,
};
constexpr int kNumBin = LogicalXor + 1;
enum Un : int {
  Negative, Abs, Exp, Log, Log1p, Expm1, Sqrt, Tanh, Sigmoid, Sign, LogicalNot, Square, Sin, Cos, Floor, Ceil,
  Exp2, Log2, Log10, Reciprocal, Tan, Arcsin, Arccos, Arctan, Sinh, Cosh, Softplus, Erf, Erfc, Gammaln, Digamma, Rint,
  Trigamma, Real, Imag, Conj, Angle,
};
constexpr int kNumUn = Angle + 1;
enum Red : int { RSum, RMean, RMax, RMin, RProd, RArgMax, RArgMin, RAll, RAny };
constexpr int kNumRed = RAny + 1;

UMA_HD constexpr bool dt_int(int t) { return t >= kInt8 && t <= kUInt64; }
UMA_HD constexpr bool dt_real_float(int t) { return t == kFloat32 || t == kFloat64; }
UMA_HD constexpr bool dt_complex(int t) { return t == kComplex64 || t == kComplex128; }
/// Ops whose result is bool.
UMA_HD constexpr bool bin_bool_out(int op) { return (op >= Equal && op <= LogicalOr) || op == LogicalXor; }

/// Binary op `op` computed in dtype `t` (the cpu kernels' binary_supported, restricted to the
/// compute dtypes the ops layer sends).
UMA_HD constexpr bool binary_ok(int op, int t) {
  if (t < 0 || t >= kNumDt || t == kFloat16 || t == kBFloat16) return false;
  switch (op) {
    case LogicalAnd: case LogicalOr: case LogicalXor:
      return t == kBool;  // the ops layer converts logical operands to bool
    case Add: case Multiply: case Maximum: case Minimum:
    case Equal: case NotEqual: case Less: case LessEqual: case Greater: case GreaterEqual:
      return true;
    case Subtract: case Power:
      return t != kBool;  // bool power computes in int8 (NumPy's result dtype)
    case Divide:
      return dt_real_float(t) || dt_complex(t);
    case FloorDivide: case Remainder:
      return dt_int(t) || dt_real_float(t);
    case Arctan2:
      return dt_real_float(t);
    default:
      return false;
  }
}

/// Unary op `op` computed in dtype `t` (the cpu kernels' unary_supported; ops of float
/// results on integers are computed in the float dtype, so integers only see the ops that
/// keep their dtype).
UMA_HD constexpr bool unary_ok(int op, int t) {
  if (t < 0 || t >= kNumDt || t == kFloat16 || t == kBFloat16 || op < 0 || op >= kNumUn) return false;
  switch (op) {
    case Abs: case LogicalNot:
      return true;
    case Floor: case Ceil:
      return !dt_complex(t);
    case Negative: case Square: case Sign: case Reciprocal:
      return t != kBool;
    case Sigmoid: case Softplus: case Erf: case Erfc: case Gammaln: case Digamma: case Trigamma:
      return dt_real_float(t);
    case Real: case Imag: case Conj: case Angle:
      return dt_complex(t);  // the ops layer handles the other dtypes
    default:  // transcendental functions and rint
      return dt_real_float(t) || dt_complex(t);
  }
}

/// Every reduction on every dtype.
UMA_HD constexpr bool reduce_ok(int op, int t) { return op >= 0 && op < kNumRed && t >= 0 && t < kNumDt; }

}  // namespace uma::kernels::cuda_launch
