// Elementwise op definitions: dtype rules (NumPy 2), broadcasting, dispatch.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace detail {

Array broadcast_view(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const int64_t nd = static_cast<int64_t>(shape.size()), off = nd - a.ndim();
  Strides st(nd, 0);
  for (int64_t d = 0; d < a.ndim(); ++d) st[off + d] = a.shape()[d] == 1 && shape[off + d] != 1 ? 0 : a.strides()[d];
  return a.view(a.data(), shape, st);
}

void check_compute(const char* op, DType t) {
  UMA_CHECK(is_compute_dtype(t), Type, op, ": dtype ", dtype_name(t),
            " is not supported yet (compute dtypes: bool, int32, int64, float32, float64)");
}

}  // namespace detail

using detail::broadcast_view;
using detail::check_compute;

const char* op_name(BinaryOp op) noexcept {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Subtract: return "subtract";
    case BinaryOp::Multiply: return "multiply";
    case BinaryOp::Divide: return "divide";
    case BinaryOp::Power: return "power";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    case BinaryOp::FloorDivide: return "floor_divide";
    case BinaryOp::Remainder: return "remainder";
    case BinaryOp::Equal: return "equal";
    case BinaryOp::NotEqual: return "not_equal";
    case BinaryOp::Less: return "less";
    case BinaryOp::LessEqual: return "less_equal";
    case BinaryOp::Greater: return "greater";
    case BinaryOp::GreaterEqual: return "greater_equal";
    case BinaryOp::LogicalAnd: return "logical_and";
    case BinaryOp::LogicalOr: return "logical_or";
  }
  return "?";
}

const char* op_name(UnaryOp op) noexcept {
  switch (op) {
    case UnaryOp::Negative: return "negative";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Log1p: return "log1p";
    case UnaryOp::Expm1: return "expm1";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::LogicalNot: return "logical_not";
    case UnaryOp::Square: return "square";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Floor: return "floor";
    case UnaryOp::Ceil: return "ceil";
  }
  return "?";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    UMA_CHECK(da == db || da == 1 || db == 1, Value, op, ": operands could not be broadcast together with shapes ",
              shape_str(a), " ", shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Less || op == BinaryOp::LessEqual ||
         op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
}
// (compute dtype, result dtype) of a binary op whose operands promote to `ct`.
std::pair<DType, DType> binary_types(BinaryOp op, DType ct) {
  const char* name = op_name(op);
  check_compute(name, ct);
  if (is_comparison(op)) return {ct, DType::Bool};
  if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr) return {DType::Bool, DType::Bool};
  if (op == BinaryOp::Divide) return is_float(ct) ? std::pair{ct, ct} : std::pair{DType::Float64, DType::Float64};
  if (ct == DType::Bool) {
    UMA_CHECK(op != BinaryOp::Subtract, Type,
              "subtract: boolean subtract is not supported, use logical_xor or bitwise operators instead");
    if (op == BinaryOp::Power || op == BinaryOp::FloorDivide || op == BinaryOp::Remainder)
      return {DType::Int64, DType::Int8};  // NumPy's result dtype for these on bool is int8
  }
  return {ct, ct};
}
}  // namespace

DType binary_result_dtype(BinaryOp op, DType a, DType b) { return binary_types(op, promote_types(a, b)).second; }

Array binary(BinaryOp op, const Array& a0, const Array& b0) {
  Array a = a0, b = b0;
  const Device dev = detail::common_device(op_name(op), {&a, &b});
  const auto [ct, rt] = binary_types(op, promote_types(a.dtype(), b.dtype()));
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op_name(op));
  Array A = a.dtype() == ct ? a : astype(a, ct);
  Array B = b.dtype() == ct ? b : astype(b, ct);
  if (op == BinaryOp::Power && is_integer(ct)) {
    Array neg = reduce(ReduceOp::Any, binary(BinaryOp::Less, B, scalar_array(Scalar::from_int(0), ct)), std::nullopt, false);
    UMA_CHECK(!*to_host(neg).data_as<bool>(), Value, "power: integers to negative integer powers are not allowed");
  }
  const bool boolean_out = is_comparison(op) || op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr;
  Array out = Array::empty(shape, boolean_out ? DType::Bool : ct, dev);
  kernels::binary(op, broadcast_view(A, shape), broadcast_view(B, shape), out);
  return out.dtype() == rt ? out : astype(out, rt);
}

Array unary(UnaryOp op, const Array& a) {
  const char* name = op_name(op);
  const DType t = a.dtype();
  check_compute(name, t);
  DType ct = t, rt = t;
  switch (op) {
    case UnaryOp::Negative:
      UMA_CHECK(t != DType::Bool, Type, "negative: boolean negative is not supported, use logical_not instead");
      break;
    case UnaryOp::Sign:
      UMA_CHECK(t != DType::Bool, Type, "sign: not supported for dtype bool");
      break;
    case UnaryOp::Square:
      if (t == DType::Bool) { ct = DType::Int64; rt = DType::Int8; }
      break;
    case UnaryOp::Abs: case UnaryOp::Floor: case UnaryOp::Ceil:
      break;
    case UnaryOp::LogicalNot:
      rt = DType::Bool;
      break;
    default:  // transcendental: float result (bool -> float16 computed in float32)
      rt = float_result_type(t);
      ct = rt == DType::Float16 ? DType::Float32 : rt;
      break;
  }
  Array A = t == ct ? a : astype(a, ct);
  Array out = Array::empty(a.shape(), op == UnaryOp::LogicalNot ? DType::Bool : ct, a.device());
  kernels::unary(op, A, out);
  return out.dtype() == rt ? out : astype(out, rt);
}

Array where(const Array& cond0, const Array& x0, const Array& y0) {
  Array cond = cond0, x = x0, y = y0;
  const Device dev = detail::common_device("where", {&cond, &x, &y});
  const DType t = promote_types(x.dtype(), y.dtype());
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), "where"), y.shape(), "where");
  Array C = cond.dtype() == DType::Bool ? cond : astype(cond, DType::Bool);
  Array X = x.dtype() == t ? x : astype(x, t);
  Array Y = y.dtype() == t ? y : astype(y, t);
  Array out = Array::empty(shape, t, dev);
  kernels::where(broadcast_view(C, shape), broadcast_view(X, shape), broadcast_view(Y, shape), out);
  return out;
}

bool is_fusable(BinaryOp op, DType t) noexcept {
  if (t != DType::Int32 && t != DType::Int64 && t != DType::Float32 && t != DType::Float64) return false;
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Subtract: case BinaryOp::Multiply: case BinaryOp::Maximum:
    case BinaryOp::Minimum: case BinaryOp::FloorDivide: case BinaryOp::Remainder:
      return true;
    case BinaryOp::Power: case BinaryOp::Divide:
      return is_float(t);  // integer power checks negative exponents first; int divide gives float64
    default:
      return false;
  }
}

bool is_fusable(UnaryOp op, DType t) noexcept {
  if (t != DType::Int32 && t != DType::Int64 && t != DType::Float32 && t != DType::Float64) return false;
  switch (op) {
    case UnaryOp::Negative: case UnaryOp::Abs: case UnaryOp::Sign: case UnaryOp::Square: case UnaryOp::Floor:
    case UnaryOp::Ceil:
      return true;
    case UnaryOp::LogicalNot:
      return false;
    default:
      return is_float(t);
  }
}

Array fused_elementwise(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, DType dtype) {
  std::vector<Array> moved(inputs);
  std::vector<Array*> ptrs;
  for (Array& t : moved) ptrs.push_back(&t);
  const Device dev = ptrs.empty() ? Device::cpu() : detail::common_device("fused_elementwise", ptrs);
  UMA_CHECK(!code.empty(), Value, "fused_elementwise: empty program");
  Shape shape;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    UMA_CHECK(inputs[i].dtype() == dtype, Type, "fused_elementwise: input ", i, " has dtype ",
              dtype_name(inputs[i].dtype()), ", expected ", dtype_name(dtype));
    shape = i == 0 ? inputs[i].shape() : broadcast_shapes(shape, inputs[i].shape(), "fused_elementwise");
  }
  const int nin = static_cast<int>(inputs.size());
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    const int avail = nin + static_cast<int>(k);
    UMA_CHECK(c.a >= 0 && c.a < avail && (!c.binary || (c.b >= 0 && c.b < avail)), Value,
              "fused_elementwise: instruction ", k, " reads an undefined register");
    const bool ok = c.binary ? is_fusable(static_cast<BinaryOp>(c.op), dtype) : is_fusable(static_cast<UnaryOp>(c.op), dtype);
    UMA_CHECK(ok, Type, "fused_elementwise: ",
              c.binary ? op_name(static_cast<BinaryOp>(c.op)) : op_name(static_cast<UnaryOp>(c.op)),
              " cannot be fused for dtype ", dtype_name(dtype));
  }
  Array out = Array::empty(shape, dtype, dev);
  kernels::fused(moved, code, out);
  return out;
}

Array one_hot(const Array& indices, int64_t depth, DType dtype) {
  require_host("one_hot", indices);
  UMA_CHECK(is_integer(indices.dtype()), Type, "one_hot: indices must have an integer dtype, got ",
            dtype_name(indices.dtype()));
  UMA_CHECK(depth >= 0, Value, "one_hot: depth must be non-negative, got ", depth);
  Array idx = astype(indices, DType::Int64);
  Shape shape = indices.shape();
  shape.push_back(depth);
  Array out = zeros(shape, DType::Float64);
  double* o = out.data_as<double>();
  const int64_t* p = idx.data_as<int64_t>();
  for (int64_t i = 0; i < idx.size(); ++i)
    if (p[i] >= 0 && p[i] < depth) o[i * depth + p[i]] = 1.0;
  return dtype == DType::Float64 ? out : astype(out, dtype);
}

}  // namespace uma::ops
