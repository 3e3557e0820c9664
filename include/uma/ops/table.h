// uma/ops/table.h — the elementwise ops, each defined once.
//
// Every layer derives from these lists: the op identifiers (BinaryOp, UnaryOp), their names,
// the dtype rules (ops/elementwise.cpp implements each rule once), which compute dtypes have
// kernels (the cpu and cuda kernels instantiate exactly those), the Program registry, the
// eager functions of uma._core and the metadata the Python graph and linkers read
// (uma._core._op_table()). Adding an elementwise op is one row here, its scalar function (the
// cpu and cuda kernels), its gradient rule in Python and its tests: docs/adding_an_op.md.
//
// A row is X(Id, name, rule, grad, numpy, doc): Id names the enumerator, `name` the eager
// function (uma.<name> and uma.sym's), `rule` its dtype rule below, `grad` how it
// differentiates (Smooth: a rule in uma.graph.ops.elemwise; Zero: piecewise constant, gradient
// 0; None: no gradient, bool results), `numpy` the NumPy function computing it (empty where
// NumPy has none: scipy.special's functions), `doc` what it computes, for its docstring.
// Consumers take the columns they need: #define X(Id, name, ...) ignores the rest.
//
// Plain C++17 with no includes: the cuda kernels (compiled by nvcc) read it too.
#pragma once

namespace uma {

/// The dtype codes, in DType's order (uma/dtype.h checks that they agree).
namespace dt {
enum Code : int {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, BFloat16, Float32, Float64,
  Complex64, Complex128,
};
constexpr int kCount = 15;
#ifdef __CUDACC__
#define UMA_DT_HD __host__ __device__
#else
#define UMA_DT_HD
#endif
UMA_DT_HD constexpr bool is_int(int t) { return t >= Int8 && t <= UInt64; }
UMA_DT_HD constexpr bool is_real_float(int t) { return t == Float32 || t == Float64; }
UMA_DT_HD constexpr bool is_complex(int t) { return t == Complex64 || t == Complex128; }
#undef UMA_DT_HD
}  // namespace dt

/// How a binary op's operands promote and what it returns (NumPy 2; ops/elementwise.cpp,
/// binary_types, implements each): X(Rule, result) with the result rule as docstrings state it.
#define UMA_BINARY_RULES(X)                                                                                 \
  X(Arithmetic, "the promoted dtype (bool: add is or, multiply and)")                                      \
  X(NotBool, "the promoted dtype; TypeError for bool")                                                      \
  X(Power, "the promoted dtype, bool gives int8; ValueError for integers to negative integer powers")      \
  X(TrueDivide, "floats and complex keep their dtype, bool and integers give float64")                     \
  X(FloorDivide, "the promoted dtype, bool gives int8; TypeError for complex")                              \
  X(Float, "the float dtype both operands cast to safely (int8 and uint8 give float16, not the float of "  \
           "their promotion); TypeError for complex")                                                       \
  X(Comparison, "bool, compared in the promoted dtype (complex: NumPy's lexicographic order)")             \
  X(Logical, "bool; the operands are taken as truth values (nonzero is true)")                              \
  X(Bitwise, "the promoted dtype; bool and integers only (TypeError for floats and complex)")              \
  X(Shift, "the promoted dtype, bool gives int8; integers only (TypeError for floats and complex)")

/// How a unary op's result dtype follows its input's (NumPy 2; ops/elementwise.cpp,
/// unary_types, implements each).
#define UMA_UNARY_RULES(X)                                                                                   \
  X(Keep, "x's dtype (abs: a complex x gives its real dtype)")                                               \
  X(NotBool, "x's dtype; TypeError for bool")                                                                \
  X(ToInt8, "x's dtype, bool gives int8")                                                                    \
  X(Real, "x's dtype; TypeError for complex")                                                                \
  X(Float, "bool and integers give the float dtype numpy.exp gives them (bool, int8, uint8 -> float16; "     \
           "int16, uint16 -> float32; wider -> float64), floats and complex keep theirs; float16 and "       \
           "bfloat16 are computed in float32")                                                               \
  X(RealFloat, "as exp's: bool and integers give the float dtype numpy.exp gives them; real dtypes only "    \
               "(TypeError for complex); float16 and bfloat16 are computed in float32")                     \
  X(ComplexPart, "the parts of complex numbers, with NumPy's dtypes")                                        \
  X(Predicate, "bool, for every dtype")                                                                      \
  X(RealPredicate, "bool; TypeError for complex")                                                            \
  X(Bitwise, "x's dtype; bool and integers only (TypeError for floats and complex)")

#define UMA_RULE_ENUMERATOR(Rule, text) Rule,
enum class BinaryRule : unsigned char { UMA_BINARY_RULES(UMA_RULE_ENUMERATOR) };
enum class UnaryRule : unsigned char { UMA_UNARY_RULES(UMA_RULE_ENUMERATOR) };
#undef UMA_RULE_ENUMERATOR

/// A rule's name and result text.
struct RuleRow {
  const char* name;
  const char* result;
};
#define UMA_RULE_ROW(Rule, text) RuleRow{#Rule, text},
inline constexpr RuleRow kBinaryRuleRows[] = {UMA_BINARY_RULES(UMA_RULE_ROW)};
inline constexpr RuleRow kUnaryRuleRows[] = {UMA_UNARY_RULES(UMA_RULE_ROW)};
#undef UMA_RULE_ROW

/// How an op differentiates.
enum class Grad : unsigned char { Smooth, Zero, None };

// clang-format off
#define UMA_BINARY_OPS(X)                                                        \
  X(Add,          add,                 Arithmetic,  Smooth, add, "x1 + x2") \
  X(Subtract,     subtract,            NotBool,     Smooth, subtract, "x1 - x2") \
  X(Multiply,     multiply,            Arithmetic,  Smooth, multiply, "x1 * x2") \
  X(Divide,       divide,              TrueDivide,  Smooth, divide, "x1 / x2 (true division)") \
  X(Power,        power,               Power,       Smooth, power, "x1 ** x2") \
  X(Maximum,      maximum,             Arithmetic,  Smooth, maximum, "the larger of x1 and x2 (NaN propagates)") \
  X(Minimum,      minimum,             Arithmetic,  Smooth, minimum, "the smaller of x1 and x2 (NaN propagates)") \
  X(FloorDivide,  floor_divide,        FloorDivide, Zero,   floor_divide, "floor(x1 / x2); with exactly one infinite operand x1 / x2, +-infinity or a signed zero (Array API standard, floor_divide, Special cases; NumPy gives NaN or -1.0 there)") \
  X(Remainder,    remainder,           FloorDivide, Smooth, remainder, "x1 - floor(x1 / x2) * x2 (the sign of x2, as Python)") \
  X(Equal,        equal,               Comparison,  None,   equal, "x1 == x2") \
  X(NotEqual,     not_equal,           Comparison,  None,   not_equal, "x1 != x2") \
  X(Less,         less,                Comparison,  None,   less, "x1 < x2") \
  X(LessEqual,    less_equal,          Comparison,  None,   less_equal, "x1 <= x2") \
  X(Greater,      greater,             Comparison,  None,   greater, "x1 > x2") \
  X(GreaterEqual, greater_equal,       Comparison,  None,   greater_equal, "x1 >= x2") \
  X(LogicalAnd,   logical_and,         Logical,     None,   logical_and, "x1 and x2 as truth values") \
  X(LogicalOr,    logical_or,          Logical,     None,   logical_or, "x1 or x2 as truth values") \
  X(LogicalXor,   logical_xor,         Logical,     None,   logical_xor, "x1 xor x2 as truth values") \
  X(Arctan2,      arctan2,             Float,       Smooth, arctan2, "the angle of the point (x2, x1) in radians, in [-pi, pi]") \
  X(Copysign,     copysign,            Float,       Smooth, copysign, "|x1| with the sign of x2") \
  X(Hypot,        hypot,               Float,       Smooth, hypot, "sqrt(x1**2 + x2**2), without overflow") \
  X(Logaddexp,    logaddexp,           Float,       Smooth, logaddexp, "log(exp(x1) + exp(x2)), without overflow") \
  X(Nextafter,    nextafter,           Float,       Smooth, nextafter, "the next value of x1's dtype after x1 toward x2") \
  X(BitwiseAnd,   bitwise_and,         Bitwise,     None,   bitwise_and, "x1 & x2 (bool: and)") \
  X(BitwiseOr,    bitwise_or,          Bitwise,     None,   bitwise_or, "x1 | x2 (bool: or)") \
  X(BitwiseXor,   bitwise_xor,         Bitwise,     None,   bitwise_xor, "x1 ^ x2 (bool: xor)") \
  X(BitwiseLeftShift, bitwise_left_shift, Shift,    None,   left_shift, "x1 << x2 (0 where x2 is negative or at least the bit width)") \
  X(BitwiseRightShift, bitwise_right_shift, Shift,  None,   right_shift, "x1 >> x2, arithmetic for signed x1 (0, or -1 for a negative x1, where x2 is negative or at least the bit width)")

#define UMA_UNARY_OPS(X)                                                         \
  X(Negative,     negative,            NotBool,     Smooth, negative, "-x") \
  X(Abs,          abs,                 Keep,        Smooth, abs, "|x| (a complex x gives its magnitude, in its real dtype)") \
  X(Sign,         sign,                NotBool,     Smooth, sign, "-1, 0 or 1 by the sign of x (complex: x / |x|)") \
  X(Square,       square,              ToInt8,      Smooth, square, "x * x") \
  X(Reciprocal,   reciprocal,          ToInt8,      Smooth, reciprocal, "1 / x") \
  X(Floor,        floor,               Real,        Zero,   floor, "the largest integer <= x") \
  X(Ceil,         ceil,                Real,        Zero,   ceil, "the smallest integer >= x") \
  X(LogicalNot,   logical_not,         Predicate,   None,   logical_not, "not x as a truth value") \
  X(Exp,          exp,                 Float,       Smooth, exp, "e ** x") \
  X(Exp2,         exp2,                Float,       Smooth, exp2, "2 ** x") \
  X(Expm1,        expm1,               Float,       Smooth, expm1, "exp(x) - 1, accurate near 0; complex zeros, infinities and NaNs as the Array API standard's special cases (expm1, complex operands: e.g. +infinity + 0j gives +infinity + 0j, NaN + 0j gives NaN + 0j, where NumPy gives NaN parts)") \
  X(Log,          log,                 Float,       Smooth, log, "the natural logarithm") \
  X(Log2,         log2,                Float,       Smooth, log2, "the base-2 logarithm") \
  X(Log10,        log10,               Float,       Smooth, log10, "the base-10 logarithm") \
  X(Log1p,        log1p,               Float,       Smooth, log1p, "log(1 + x), accurate near 0") \
  X(Sqrt,         sqrt,                Float,       Smooth, sqrt, "the square root") \
  X(Sin,          sin,                 Float,       Smooth, sin, "the sine") \
  X(Cos,          cos,                 Float,       Smooth, cos, "the cosine") \
  X(Tan,          tan,                 Float,       Smooth, tan, "the tangent") \
  X(Arcsin,       arcsin,              Float,       Smooth, arcsin, "the inverse sine") \
  X(Arccos,       arccos,              Float,       Smooth, arccos, "the inverse cosine") \
  X(Arctan,       arctan,              Float,       Smooth, arctan, "the inverse tangent") \
  X(Sinh,         sinh,                Float,       Smooth, sinh, "the hyperbolic sine") \
  X(Cosh,         cosh,                Float,       Smooth, cosh, "the hyperbolic cosine") \
  X(Tanh,         tanh,                Float,       Smooth, tanh, "the hyperbolic tangent; a complex x with an infinite real part gives +-1 + 0j with the sign of imag(x) on the zero (Array API standard, tanh, complex operands)") \
  X(Rint,         rint,                Float,       Zero,   rint, "x rounded to the nearest integer, half to even") \
  X(Sigmoid,      sigmoid,             RealFloat,   Smooth, , "1 / (1 + exp(-x)) (scipy.special.expit)") \
  X(Softplus,     softplus,            RealFloat,   Smooth, , "log(1 + exp(x)), computed without overflow") \
  X(Erf,          erf,                 RealFloat,   Smooth, , "the error function (scipy.special.erf)") \
  X(Erfc,         erfc,                RealFloat,   Smooth, , "the complementary error function 1 - erf(x) (scipy.special.erfc)") \
  X(Gammaln,      gammaln,             RealFloat,   Smooth, , "log|Gamma(x)| (scipy.special.gammaln; +inf at the poles)") \
  X(Digamma,      digamma,             RealFloat,   Smooth, , "digamma psi(x) = d/dx log Gamma(x) (scipy.special.digamma; NaN at the poles)") \
  X(Trigamma,     trigamma,            RealFloat,   Smooth, , "trigamma psi'(x) = d/dx digamma(x) (scipy.special.polygamma(1, x); +inf at the poles 0, -1, -2, ..., 0 at +inf, NaN at -inf)") \
  X(Real,         real,                ComplexPart, Smooth, real, "the real part: complex64 -> float32, complex128 -> float64, other dtypes a copy of x (a new array; NumPy returns a view)") \
  X(Imag,         imag,                ComplexPart, Smooth, imag, "the imaginary part: complex64 -> float32, complex128 -> float64, other dtypes zeros of x's dtype (a new array)") \
  X(Conj,         conj,                ComplexPart, Smooth, conj, "the complex conjugate, same dtype; other dtypes a copy (bool gives int8, as numpy.conjugate)") \
  X(Angle,        angle,               ComplexPart, Smooth, angle, "the argument of x in radians, in [-pi, pi] (arctan2(imag, real)): complex64 -> float32, complex128 -> float64; real dtypes arctan2(0, x) with arctan2's float dtype") \
  X(Positive,     positive,            NotBool,     Smooth, positive, "+x (a copy of x)") \
  X(Trunc,        trunc,               Real,        Zero,   trunc, "x rounded toward zero") \
  X(Acosh,        acosh,               Float,       Smooth, arccosh, "the inverse hyperbolic cosine") \
  X(Asinh,        asinh,               Float,       Smooth, arcsinh, "the inverse hyperbolic sine") \
  X(Atanh,        atanh,               Float,       Smooth, arctanh, "the inverse hyperbolic tangent") \
  X(Isfinite,     isfinite,            Predicate,   None,   isfinite, "whether x is finite (complex: both parts)") \
  X(Isinf,        isinf,               Predicate,   None,   isinf, "whether x is infinite (complex: either part)") \
  X(Isnan,        isnan,               Predicate,   None,   isnan, "whether x is NaN (complex: either part)") \
  X(Signbit,      signbit,             RealPredicate, None, signbit, "whether the sign bit of x is set (-0.0 included)") \
  X(BitwiseInvert, bitwise_invert,     Bitwise,     None,   invert, "~x (bool: not)")
// clang-format on

#define UMA_OP_ENUMERATOR(Id, ...) Id,
/// The binary elementwise ops (UMA_BINARY_OPS).
enum class BinaryOp : int { UMA_BINARY_OPS(UMA_OP_ENUMERATOR) };
/// The unary elementwise ops (UMA_UNARY_OPS).
enum class UnaryOp : int { UMA_UNARY_OPS(UMA_OP_ENUMERATOR) };
#undef UMA_OP_ENUMERATOR

#define UMA_OP_COUNT(Id, ...) +1
constexpr int kNumBinaryOps = 0 UMA_BINARY_OPS(UMA_OP_COUNT);
constexpr int kNumUnaryOps = 0 UMA_UNARY_OPS(UMA_OP_COUNT);
#undef UMA_OP_COUNT

/// A row of the table, as data.
struct OpRow {
  const char* name;
  int rule;   // a BinaryRule or UnaryRule value
  Grad grad;
  const char* numpy;
  const char* doc;
};

#define UMA_OP_ROW_B(Id, name, rule, grad, numpy, doc) OpRow{#name, static_cast<int>(BinaryRule::rule), Grad::grad, #numpy, doc},
#define UMA_OP_ROW_U(Id, name, rule, grad, numpy, doc) OpRow{#name, static_cast<int>(UnaryRule::rule), Grad::grad, #numpy, doc},
inline constexpr OpRow kBinaryRows[] = {UMA_BINARY_OPS(UMA_OP_ROW_B)};
inline constexpr OpRow kUnaryRows[] = {UMA_UNARY_OPS(UMA_OP_ROW_U)};
#undef UMA_OP_ROW_B
#undef UMA_OP_ROW_U

constexpr const OpRow& row(BinaryOp op) { return kBinaryRows[static_cast<int>(op)]; }
constexpr const OpRow& row(UnaryOp op) { return kUnaryRows[static_cast<int>(op)]; }

// The functions below are also used by device code (as constants: kernels are instantiated
// from them).
#ifdef __CUDACC__
#define UMA_TABLE_HD __host__ __device__
#else
#define UMA_TABLE_HD
#endif

#define UMA_NAME_CASE_B(Id, name, ...) case BinaryOp::Id: return #name;
#define UMA_NAME_CASE_U(Id, name, ...) case UnaryOp::Id: return #name;
/// The op's name (its eager function's).
UMA_TABLE_HD constexpr const char* name_of(BinaryOp op) {
  switch (op) { UMA_BINARY_OPS(UMA_NAME_CASE_B) }
  return "?";
}
UMA_TABLE_HD constexpr const char* name_of(UnaryOp op) {
  switch (op) { UMA_UNARY_OPS(UMA_NAME_CASE_U) }
  return "?";
}
#undef UMA_NAME_CASE_B
#undef UMA_NAME_CASE_U

#define UMA_RULE_CASE_B(Id, name, rule_, ...) case BinaryOp::Id: return BinaryRule::rule_;
#define UMA_RULE_CASE_U(Id, name, rule_, ...) case UnaryOp::Id: return UnaryRule::rule_;
UMA_TABLE_HD constexpr BinaryRule rule(BinaryOp op) {
  switch (op) { UMA_BINARY_OPS(UMA_RULE_CASE_B) }
  return BinaryRule::Arithmetic;
}
UMA_TABLE_HD constexpr UnaryRule rule(UnaryOp op) {
  switch (op) { UMA_UNARY_OPS(UMA_RULE_CASE_U) }
  return UnaryRule::Keep;
}
#undef UMA_RULE_CASE_B
#undef UMA_RULE_CASE_U

/// Whether a binary op has a kernel computing in dtype code `t` (the compute dtype the ops
/// layer converts the operands to: float16 and bfloat16 compute in float32, logical ops in
/// bool, so neither reaches a kernel).
UMA_TABLE_HD constexpr bool has_kernel(BinaryOp op, int t) {
  if (t < 0 || t >= dt::kCount || t == dt::Float16 || t == dt::BFloat16) return false;
  switch (rule(op)) {
    case BinaryRule::Arithmetic: case BinaryRule::Comparison: return true;
    case BinaryRule::NotBool: case BinaryRule::Power: return t != dt::Bool;
    case BinaryRule::TrueDivide: return dt::is_real_float(t) || dt::is_complex(t);
    case BinaryRule::FloorDivide: return dt::is_int(t) || dt::is_real_float(t);
    case BinaryRule::Float: return dt::is_real_float(t);
    case BinaryRule::Logical: return t == dt::Bool;
    case BinaryRule::Bitwise: return t == dt::Bool || dt::is_int(t);
    case BinaryRule::Shift: return dt::is_int(t);
  }
  return false;
}

/// Whether a unary op has a kernel computing in dtype code `t` (integers and bool reach the
/// Float rules' kernels converted to their float dtype; the ComplexPart ops of real dtypes
/// are done by the ops layer).
UMA_TABLE_HD constexpr bool has_kernel(UnaryOp op, int t) {
  if (t < 0 || t >= dt::kCount || t == dt::Float16 || t == dt::BFloat16) return false;
  switch (rule(op)) {
    case UnaryRule::Keep: case UnaryRule::Predicate: return true;
    case UnaryRule::NotBool: case UnaryRule::ToInt8: return t != dt::Bool;
    case UnaryRule::Real: case UnaryRule::RealPredicate: return !dt::is_complex(t);
    case UnaryRule::Float: return dt::is_real_float(t) || dt::is_complex(t);
    case UnaryRule::RealFloat: return dt::is_real_float(t);
    case UnaryRule::ComplexPart: return dt::is_complex(t);
    case UnaryRule::Bitwise: return t == dt::Bool || dt::is_int(t);
  }
  return false;
}

/// Whether a binary op's result is bool.
UMA_TABLE_HD constexpr bool bool_result(BinaryOp op) {
  return rule(op) == BinaryRule::Comparison || rule(op) == BinaryRule::Logical;
}
/// Whether a unary op's result is bool.
UMA_TABLE_HD constexpr bool bool_result(UnaryOp op) {
  return rule(op) == UnaryRule::Predicate || rule(op) == UnaryRule::RealPredicate;
}

#undef UMA_TABLE_HD

// ---- reductions ----------------------------------------------------------------------------
// A row is X(Id, name): the enumerator and the eager function (uma.<name>, the Program op).
// Their result dtypes are ops/reduce.cpp's reduce_result_dtype.
// clang-format off
#define UMA_REDUCE_OPS(X) \
  X(Sum, sum) X(Mean, mean) X(Max, max) X(Min, min) X(Prod, prod) \
  X(ArgMax, argmax) X(ArgMin, argmin) X(All, all) X(Any, any)
// clang-format on

#define UMA_OP_ENUMERATOR(Id, ...) Id,
/// The reductions (UMA_REDUCE_OPS).
enum class ReduceOp : int { UMA_REDUCE_OPS(UMA_OP_ENUMERATOR) };
#undef UMA_OP_ENUMERATOR

#define UMA_NAME_CASE_R(Id, name) case ReduceOp::Id: return #name;
/// The reduction's name (its eager function's).
constexpr const char* name_of(ReduceOp op) {
  switch (op) { UMA_REDUCE_OPS(UMA_NAME_CASE_R) }
  return "?";
}
#undef UMA_NAME_CASE_R

/// One instruction of a fused elementwise chain of table ops over registers of the chain's
/// dtype T: register[n_inputs + k] = op(reg[a], reg[b]) (a BinaryOp), op(reg[a]) (a
/// UnaryOp), or, with `select`, reg[a] != 0 ? reg[b] : reg[c] (`where`). A comparison
/// (BinaryRule::Comparison) stores T(1) or T(0); it may only be read as a select's condition
/// `a`, so no register of a chain ever holds a truth value where a number is read.
struct FusedInstr {
  bool binary = true;
  int op = 0;  // a BinaryOp or UnaryOp value; unused for select
  int a = 0;
  int b = 0;   // unused for unary ops
  bool select = false;
  int c = 0;   // select only
};

}  // namespace uma
