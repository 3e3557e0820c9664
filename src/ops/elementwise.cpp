// Elementwise op definitions: dtype rules (NumPy 2), broadcasting, dispatch.
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

namespace detail {

void check_compute(const char* op, DType t) {
  UMA_CHECK(is_compute_dtype(t), Type, op, ": dtype ", dtype_name(t),
            " is not supported yet (compute dtypes: bool, int32, int64, float32, float64)");
}

}  // namespace detail


const char* op_name(BinaryOp op) noexcept { return name_of(op); }
const char* op_name(UnaryOp op) noexcept { return name_of(op); }

std::optional<BinaryOp> binary_op_named(std::string_view name) noexcept {
  for (int k = 0; k < kNumBinaryOps; ++k)
    if (name == kBinaryRows[k].name) return static_cast<BinaryOp>(k);
  return std::nullopt;
}
std::optional<UnaryOp> unary_op_named(std::string_view name) noexcept {
  for (int k = 0; k < kNumUnaryOps; ++k)
    if (name == kUnaryRows[k].name) return static_cast<UnaryOp>(k);
  return std::nullopt;
}

namespace {
bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
// The dtype a kernel computes a result of dtype `t` in: float16 and bfloat16 in float32,
// rounded once at the end (NumPy's float16 loops and ml_dtypes' bfloat16 loops do the same).
DType kernel_dtype(DType t) { return is_half(t) ? DType::Float32 : t; }

[[noreturn]] void unsupported(const char* op, DType t) {
  UMA_FAIL(Type, op, ": not supported for dtype ", dtype_name(t), " (NumPy has no loop for it)");
}

struct BinaryTypes {
  DType compute;  // operands are converted to this dtype
  DType result;   // the op's result dtype (NumPy 2)
};
// The binary rules of uma/ops/table.h.
BinaryTypes binary_types(BinaryOp op, DType a, DType b) {
  const char* name = op_name(op);
  const DType ct = promote_types(a, b);
  const bool cplx = is_complex(ct), integral = ct == DType::Bool || is_integer(ct);
  switch (rule(op)) {
    case BinaryRule::Comparison:
      return {kernel_dtype(ct), DType::Bool};
    case BinaryRule::Logical:
      return {DType::Bool, DType::Bool};
    case BinaryRule::TrueDivide:
      if (is_float(ct) || cplx) return {kernel_dtype(ct), ct};
      return {DType::Float64, DType::Float64};
    case BinaryRule::Float: {
      if (cplx) unsupported(name, ct);
      // NumPy picks the first float loop both operands cast to safely: (int8, uint8) ->
      // float16, not the float of their promotion (int16 -> float32). bfloat16 has one loop
      // (ml_dtypes'), which every operand promoting to bfloat16 takes: (bfloat16, int8) ->
      // bfloat16.
      const DType rt = ct == DType::BFloat16 ? ct : promote_types(float_result_type(a), float_result_type(b));
      return {kernel_dtype(rt), rt};
    }
    case BinaryRule::NotBool:
      UMA_CHECK(ct != DType::Bool, Type, name, ": boolean ", name,
                " is not supported, use logical_xor or bitwise operators instead");
      break;
    case BinaryRule::Power:
      if (ct == DType::Bool) return {DType::Int8, DType::Int8};  // NumPy's result dtype on bool
      break;
    case BinaryRule::FloorDivide:
      if (cplx) unsupported(name, ct);
      if (ct == DType::Bool) return {DType::Int8, DType::Int8};
      break;
    case BinaryRule::Bitwise:
      if (!integral) unsupported(name, ct);
      break;
    case BinaryRule::Shift:
      if (!integral) unsupported(name, ct);
      if (ct == DType::Bool) return {DType::Int8, DType::Int8};
      break;
    case BinaryRule::Arithmetic:
      break;
  }
  return {kernel_dtype(ct), ct};
}

struct UnaryTypes {
  DType compute, kernel_out, result;
};
// The unary rules of uma/ops/table.h.
UnaryTypes unary_types(UnaryOp op, DType t) {
  const char* name = op_name(op);
  const bool cplx = is_complex(t);
  switch (rule(op)) {
    case UnaryRule::RealFloat:  // functions NumPy lacks (scipy.special's): real dtypes only
      UMA_CHECK(!cplx, Type, name, ": not supported for dtype ", dtype_name(t), " (defined for real dtypes only)");
      [[fallthrough]];
    case UnaryRule::Float: {
      const DType rt = float_result_type(t);
      return {kernel_dtype(rt), kernel_dtype(rt), rt};
    }
    case UnaryRule::ComplexPart: {  // kernels for complex input only; unary() handles the others
      if (!cplx) return {t, t, t};
      const DType part = t == DType::Complex64 ? DType::Float32 : DType::Float64;
      return {t, op == UnaryOp::Conj ? t : part, op == UnaryOp::Conj ? t : part};
    }
    case UnaryRule::RealPredicate:
      if (cplx) unsupported(name, t);
      [[fallthrough]];
    case UnaryRule::Predicate:
      return {kernel_dtype(t), DType::Bool, DType::Bool};
    case UnaryRule::NotBool:
      if (t == DType::Bool) {
        UMA_CHECK(op != UnaryOp::Negative, Type, "negative: boolean negative is not supported, use logical_not instead");
        UMA_FAIL(Type, name, ": not supported for dtype bool");
      }
      break;
    case UnaryRule::ToInt8:
      if (t == DType::Bool) return {DType::Int8, DType::Int8, DType::Int8};  // NumPy: bool -> int8
      break;
    case UnaryRule::Real:
      if (cplx) unsupported(name, t);
      break;
    case UnaryRule::Bitwise:
      if (t != DType::Bool && !is_integer(t)) unsupported(name, t);
      break;
    case UnaryRule::Keep:
      if (op == UnaryOp::Abs && cplx) {
        const DType part = t == DType::Complex64 ? DType::Float32 : DType::Float64;
        return {t, part, part};
      }
      break;
  }
  return {kernel_dtype(t), kernel_dtype(t), t};
}

// On a cuda device an op runs only where kernels::cuda::supports() says a kernel exists for
// it in its compute dtype; otherwise a TypeError naming op, dtype and device.
template <class Op>
void check_cuda(Op op, DType kernel_t, const Device& dev) {
  UMA_CHECK(kernels::supports(op, kernel_t, dev), Type, op_name(op), ": no ", dev.str(), " kernel for dtype ",
            dtype_name(kernel_t), "; move the array to the host with .to_device('cpu')");
}
}  // namespace

DType binary_result_dtype(BinaryOp op, DType a, DType b) { return binary_types(op, a, b).result; }
// The dtype unary() gives, by running it on an empty host array of dtype t (the complex parts
// of real dtypes are worked out by unary() itself).
DType unary_result_dtype(UnaryOp op, DType t) { return unary(op, Array::empty({0}, t)).dtype(); }

namespace {
// binary_one_dtype's answer before the table: the arithmetic ops on the kernel dtypes keep the
// dtype; other ops and dtypes qualify when binary_types computes in `t` itself and returns `t`
// (bool for comparisons and logical ops), integer power excepted (its negative-exponent check
// runs in the general path); a combination binary_types rejects does not qualify (the general
// path raises its TypeError).
std::optional<DType> compute_binary_one_dtype(BinaryOp op, DType t) {
  const bool keeps = (t == DType::Float64 || t == DType::Float32 || t == DType::Int64 || t == DType::Int32) &&
                     (op == BinaryOp::Add || op == BinaryOp::Subtract || op == BinaryOp::Multiply ||
                      op == BinaryOp::Maximum || op == BinaryOp::Minimum);
  if (keeps) return t;
  if (op == BinaryOp::Power && dtype_kind(t) == 'i') return std::nullopt;
  try {
    const BinaryTypes bt = binary_types(op, t, t);
    if (bt.compute != t || bt.result != (bool_result(op) ? DType::Bool : t)) return std::nullopt;
    return bt.result;
  } catch (const Error&) {
    return std::nullopt;
  }
}
}  // namespace

std::optional<DType> binary_one_dtype(BinaryOp op, DType t) noexcept {
  // 0xff: no fast path. Built once (binary_types per pair), then one lookup per small step.
  static const auto table = [] {
    std::array<std::array<uint8_t, kNumDTypes>, kNumBinaryOps> tab{};
    for (int o = 0; o < kNumBinaryOps; ++o)
      for (int d = 0; d < kNumDTypes; ++d) {
        const auto r = compute_binary_one_dtype(static_cast<BinaryOp>(o), static_cast<DType>(d));
        tab[o][d] = r ? static_cast<uint8_t>(*r) : uint8_t{0xff};
      }
    return tab;
  }();
  const int o = static_cast<int>(op), d = static_cast<int>(t);
  if (o < 0 || o >= kNumBinaryOps || d < 0 || d >= kNumDTypes || table[o][d] == 0xff) return std::nullopt;
  return static_cast<DType>(table[o][d]);
}

void binary_one(BinaryOp op, DType t, const void* a, const void* b, void* out) {
  kernels::cpu::binary_one(op, t, a, b, out);
}

namespace {
// Small-operand fast path of binary(): both operands hold one element on the host, with one
// dtype for which binary_one_dtype is set (no conversion before or after), so the result is
// that element computed by the kernels' scalar function (bitwise the general path's value) in
// an array of the broadcast shape (all ones: the longer operand's shape). Returns an undefined
// array when the fast path does not apply.
Array binary_small(BinaryOp op, const Array& a, const Array& b) {
  const DType t = a.dtype();
  if (a.size() != 1 || b.size() != 1 || b.dtype() != t || !a.defined() || !b.defined() || !a.device().is_cpu() ||
      !b.device().is_cpu())
    return Array();
  const std::optional<DType> rt = binary_one_dtype(op, t);
  if (!rt) return Array();
  Array out = Array::empty(a.ndim() >= b.ndim() ? a.shape() : b.shape(), *rt);
  kernels::cpu::binary_one(op, t, a.data(), b.data(), out.data());
  return out;
}
}  // namespace

namespace {
// The same bytes seen as another dtype of the same itemsize (internal: the ops below compute on
// the bits of a float16/bfloat16 array they made).
Array bits_as(const Array& a, DType t) {
  return Array(a.storage(), a.data(), a.shape(), a.strides(), t, a.writable());
}

// nextafter with a float16 or bfloat16 result, on the format's bits, by C's rule for nextafter
// (that of float32 and float64, ml_dtypes' bfloat16 and NumPy 2.5's float16): NaN if either is
// NaN; y if x == y (so nextafter(0.0, -0.0) is -0.0); the smallest subnormal with y's sign if x
// is zero; else x's bits plus one (moving away from zero) or minus one. Elementwise ops on
// uint16 compute it, on any device.
Array nextafter_half(const Array& a, const Array& b, DType rt) {
  const Array x = astype(a, rt), y = astype(b, rt);
  const Array xb = bits_as(x, DType::UInt16), yb = bits_as(y, DType::UInt16);
  auto u16 = [](int64_t v) { return scalar_array(Scalar::from_int(v), DType::UInt16); };
  const Array zero = scalar_array(Scalar::from_int(0), rt);
  const Array away = binary(BinaryOp::Equal, binary(BinaryOp::Less, x, y), binary(BinaryOp::Greater, x, zero));
  const Array step = where(away, binary(BinaryOp::Add, xb, u16(1)), binary(BinaryOp::Subtract, xb, u16(1)));
  const Array tiny = binary(BinaryOp::BitwiseOr, binary(BinaryOp::BitwiseAnd, yb, u16(0x8000)), u16(1));
  const Array nan = binary(BinaryOp::LogicalOr, unary(UnaryOp::Isnan, x), unary(UnaryOp::Isnan, y));
  const Array r = where(nan, u16(rt == DType::Float16 ? 0x7e00 : 0x7fc0),
                        where(binary(BinaryOp::Equal, x, y), yb,
                              where(binary(BinaryOp::Equal, x, zero), tiny, step)));
  return bits_as(r.is_c_contiguous() ? r : copy(r), rt);
}
}  // namespace

Array binary(BinaryOp op, const Array& a0, const Array& b0) {
  if (Array r = binary_small(op, a0, b0); r.defined()) return r;
  // Host operands are read in place; otherwise copies that common_device may move to the device.
  const bool host = a0.device().is_cpu() && b0.device().is_cpu();
  Array ad, bd;
  if (!host) ad = a0, bd = b0;
  const Device dev = host ? Device::cpu() : detail::common_device(op_name(op), {&ad, &bd});
  const Array& a = host ? a0 : ad;
  const Array& b = host ? b0 : bd;
  const auto [ct, rt] = binary_types(op, a.dtype(), b.dtype());
  if (op == BinaryOp::Nextafter && is_half(rt)) return nextafter_half(a, b, rt);
  check_cuda(op, ct, dev);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op_name(op));
  Array ac, bc;  // the operands in the compute dtype, where they are not in it already
  const Array* A = &a;
  const Array* B = &b;
  if (a.dtype() != ct) ac = astype(a, ct), A = &ac;
  if (b.dtype() != ct) bc = astype(b, ct), B = &bc;
  if (rt == DType::Float16 && (op == BinaryOp::Maximum || op == BinaryOp::Minimum)) {
    // NumPy's float16 loop keeps the first operand on ties (max(-0.0, 0.0) is -0.0); the
    // float32 kernel keeps the second, as NumPy's float32 loop does. Swapping the operands
    // gives float16's rule (NaN still propagates from either side).
    std::swap(A, B);
  }
  if (op == BinaryOp::Power && is_integer(ct) && dtype_kind(ct) == 'i' && checked_size(shape) > 0) {
    Array neg = reduce(ReduceOp::Any, binary(BinaryOp::Less, *B, scalar_array(Scalar::from_int(0), ct)), std::nullopt, false);
    UMA_CHECK(!*to_host(neg).data_as<bool8>(), Value, "power: integers to negative integer powers are not allowed");
  }
  const bool boolean_out = bool_result(op);
  Array out = Array::empty(shape, boolean_out ? DType::Bool : ct, dev);
  if (A->shape() == shape && B->shape() == shape) kernels::binary(op, *A, *B, out);
  else kernels::binary(op, A->broadcast_view(shape), B->broadcast_view(shape), out);
  return out.dtype() == rt ? out : astype(out, rt);
}

namespace {
// real / imag / conj / angle of a non-complex array, as NumPy: real and conj give the values
// (conj of bool gives int8: numpy.conjugate has no bool loop), imag zeros of a's dtype, angle
// arctan2(0, a) with the 0 a weak Python int (int64 next to bool). On a GPU the zero is one
// element moved there once, broadcast by the kernels.
Array complex_part_of_real(UnaryOp op, const Array& a) {
  auto zero = [&](DType t) {
    return on_device(scalar_array(Scalar::from_int(0), t), a.device()).broadcast_view(a.shape());
  };
  switch (op) {
    case UnaryOp::Real: return copy(a);
    case UnaryOp::Imag: return zeros(a.shape(), a.dtype(), a.device());
    case UnaryOp::Conj: return astype(a, a.dtype() == DType::Bool ? DType::Int8 : a.dtype());
    default: return binary(BinaryOp::Arctan2, zero(a.dtype() == DType::Bool ? DType::Int64 : a.dtype()), a);
  }
}
}  // namespace

Array unary(UnaryOp op, const Array& a) {
  if (rule(op) == UnaryRule::ComplexPart && !is_complex(a.dtype())) return complex_part_of_real(op, a);
  const auto [ct, kt, rt] = unary_types(op, a.dtype());
  check_cuda(op, ct, a.device());
  Array A = a.dtype() == ct ? a : astype(a, ct);
  Array out = Array::empty(a.shape(), kt, a.device());
  kernels::unary(op, A, out);
  return out.dtype() == rt ? out : astype(out, rt);
}

Array round(const Array& a, int64_t decimals) {
  const DType t = a.dtype();
  if (is_integer(t)) {
    if (decimals >= 0) return copy(a);
    // NumPy: a / 10**-d, rint, * 10**-d in float64, converted back to the integer dtype.
    Array f = scalar_array(Scalar::from_float(std::pow(10.0, static_cast<double>(-decimals))), DType::Float64);
    Array r = unary(UnaryOp::Rint, binary(BinaryOp::Divide, astype(a, DType::Float64), f));
    return astype(binary(BinaryOp::Multiply, r, f), t);
  }
  UMA_CHECK(!(t == DType::Bool && decimals != 0), Type, "round: cannot round a bool array to decimals=", decimals,
            " (NumPy cannot cast the float64 result back to bool)");
  if (decimals == 0) return unary(UnaryOp::Rint, a);
  if (t == DType::BFloat16) return astype(round(astype(a, DType::Float32), decimals), t);  // rounded once
  const DType rt = t;
  const DType ft = is_complex(rt) ? (rt == DType::Complex64 ? DType::Float32 : DType::Float64) : rt;
  // 10**|d| in the result's precision (a weak Python float in NumPy's implementation).
  Array f = scalar_array(Scalar::from_float(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals))), ft);
  Array x = t == rt ? a : astype(a, rt);
  if (decimals > 0) return binary(BinaryOp::Divide, unary(UnaryOp::Rint, binary(BinaryOp::Multiply, x, f)), f);
  return binary(BinaryOp::Multiply, unary(UnaryOp::Rint, binary(BinaryOp::Divide, x, f)), f);
}

Array clip(const Array& a0, const std::optional<Array>& lo0, const std::optional<Array>& hi0) {
  Array a = a0;
  std::optional<Array> lo = lo0, hi = hi0;
  if (lo && hi && !(a.device().is_cpu() && lo->device().is_cpu() && hi->device().is_cpu()))
    detail::common_device("clip", {&a, &*lo, &*hi});
  if (!lo && !hi) {  // numpy.clip(a, None, None) is positive(a), which has no bool loop
    UMA_CHECK(a.dtype() != DType::Bool, Type, "clip: not supported for dtype bool without bounds (numpy.positive)");
    return copy(a);
  }
  if (!lo) return binary(BinaryOp::Minimum, a, *hi);
  if (!hi) return binary(BinaryOp::Maximum, a, *lo);
  const DType t = promote_types(promote_types(a.dtype(), lo->dtype()), hi->dtype());
  const DType ct = kernel_dtype(t);
  const Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), lo->shape(), "clip"), hi->shape(), "clip");
  auto conv = [&](const Array& x) { return (x.dtype() == ct ? x : astype(x, ct)).broadcast_view(shape); };
  Array out = Array::empty(shape, ct, a.device());
  kernels::clip(conv(a), conv(*lo), conv(*hi), out);
  return out.dtype() == t ? out : astype(out, t);
}

Array where(const Array& cond0, const Array& x0, const Array& y0) {
  Array cond = cond0, x = x0, y = y0;
  const Device dev = cond.device().is_cpu() && x.device().is_cpu() && y.device().is_cpu()
                         ? Device::cpu()
                         : detail::common_device("where", {&cond, &x, &y});
  const DType t = promote_types(x.dtype(), y.dtype());
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), "where"), y.shape(), "where");
  Array C = cond.dtype() == DType::Bool ? cond : astype(cond, DType::Bool);
  Array X = x.dtype() == t ? x : astype(x, t);
  Array Y = y.dtype() == t ? y : astype(y, t);
  Array out = Array::empty(shape, t, dev);
  kernels::where(C.broadcast_view(shape), X.broadcast_view(shape), Y.broadcast_view(shape), out);
  return out;
}

namespace {
bool fusable_dtype(DType t) {
  return t == DType::Int32 || t == DType::Int64 || t == DType::Float32 || t == DType::Float64;
}
}  // namespace

bool is_fusable(BinaryOp op, DType t) noexcept {
  if (!fusable_dtype(t) || !has_kernel(op, static_cast<int>(t))) return false;
  switch (rule(op)) {
    case BinaryRule::Comparison: case BinaryRule::Logical:
      return false;  // bool results
    case BinaryRule::Power: case BinaryRule::TrueDivide: case BinaryRule::Float:
      return is_float(t);  // integer power checks negative exponents first; int divide gives float64
    default:
      return true;
  }
}

bool is_fusable_condition(BinaryOp op, DType t) noexcept {
  return fusable_dtype(t) && has_kernel(op, static_cast<int>(t)) && rule(op) == BinaryRule::Comparison;
}

bool is_fusable(UnaryOp op, DType t) noexcept {
  if (!fusable_dtype(t) || !has_kernel(op, static_cast<int>(t))) return false;
  switch (rule(op)) {
    case UnaryRule::Predicate: case UnaryRule::RealPredicate: case UnaryRule::ComplexPart:
      return false;  // bool results; complex kernels only
    case UnaryRule::Float: case UnaryRule::RealFloat:
      return is_float(t);
    default:
      return true;
  }
}

// The checks of fused_elementwise that do not depend on the inputs (only on their number).
void check_fused_code(int nin, const std::vector<FusedInstr>& code, DType dtype) {
  UMA_CHECK(!code.empty(), Value, "fused_elementwise: empty program");
  const int nregs = nin + static_cast<int>(code.size());
  // Registers holding a comparison's 0/1 (FusedInstr): read only as a select's condition.
  std::vector<char> truth(static_cast<std::size_t>(nregs), 0);
  for (std::size_t k = 0; k < code.size(); ++k) {
    const FusedInstr& c = code[k];
    const int avail = nin + static_cast<int>(k);
    auto defined = [&](int r) { return r >= 0 && r < avail; };
    const bool reads_ok = c.select ? defined(c.a) && defined(c.b) && defined(c.c)
                                   : defined(c.a) && (!c.binary || defined(c.b));
    if (!reads_ok) {
      const int bad = !defined(c.a) ? c.a : !defined(c.b) ? c.b : c.c;
      UMA_FAIL(Value, "fused_elementwise: instruction ", k, " reads register ", bad, ", which is not defined there (",
               avail == 0 ? std::string("no register is") : "registers 0 to " + std::to_string(avail - 1) + " are",
               ": one per input, then one per instruction before it)");
    }
    const bool truth_misread = c.select ? truth[c.b] || truth[c.c] : truth[c.a] || (c.binary && truth[c.b]);
    UMA_CHECK(!truth_misread, Value, "fused_elementwise: instruction ", k,
              " reads a comparison's result as a number (only a where's condition may)");
    if (c.select) {
      UMA_CHECK(truth[c.a], Value, "fused_elementwise: the condition of where (instruction ", k,
                ") must be a comparison of the chain");
      continue;
    }
    if (c.binary && is_fusable_condition(static_cast<BinaryOp>(c.op), dtype)) {
      UMA_CHECK(k + 1 < code.size(), Value, "fused_elementwise: a chain cannot end with the comparison ",
                op_name(static_cast<BinaryOp>(c.op)));
      truth[avail] = 1;
      continue;
    }
    const bool ok = c.binary ? is_fusable(static_cast<BinaryOp>(c.op), dtype) : is_fusable(static_cast<UnaryOp>(c.op), dtype);
    UMA_CHECK(ok, Type, "fused_elementwise: ",
              c.binary ? op_name(static_cast<BinaryOp>(c.op)) : op_name(static_cast<UnaryOp>(c.op)),
              " cannot be fused for dtype ", dtype_name(dtype));
  }
}

namespace {
// The checks of fused_elementwise that do not depend on devices or shapes.
void check_fused(ArrayRefs inputs, const std::vector<FusedInstr>& code, DType dtype) {
  UMA_CHECK(!code.empty(), Value, "fused_elementwise: empty program");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    UMA_CHECK(inputs[i]->dtype() == dtype, Type, "fused_elementwise: input ", i, " has dtype ",
              dtype_name(inputs[i]->dtype()), ", expected ", dtype_name(dtype));
  check_fused_code(static_cast<int>(inputs.size()), code, dtype);
}
}  // namespace

bool fused_code_ok(int n_inputs, const std::vector<FusedInstr>& code, DType dtype) noexcept {
  try {
    check_fused_code(n_inputs, code, dtype);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void fused_one(const void* const* inputs, int n_inputs, const std::vector<FusedInstr>& code, DType dtype, void* out) {
  kernels::cpu::fused_one(inputs, n_inputs, code, dtype, out);
}

Array fused_elementwise(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, DType dtype) {
  std::vector<const Array*> refs;
  refs.reserve(inputs.size());
  for (const Array& a : inputs) refs.push_back(&a);
  return fused_elementwise(ArrayRefs(refs), code, dtype);
}

Array fused_elementwise(ArrayRefs inputs, const std::vector<FusedInstr>& code, DType dtype) {
  check_fused(inputs, code, dtype);
  // Small-operand fast path: every input holds one element on the host (a scalar chain). The
  // broadcast shape is then all ones, as long as the longest input's; the value is the
  // kernels' per-element routine (bitwise the general path's).
  constexpr std::size_t kOneMax = 16;
  bool host = true;
  for (const Array* a : inputs) host = host && a->defined() && a->device().is_cpu();
  if (!inputs.empty() && inputs.size() <= kOneMax && host) {
    const void* ptrs[kOneMax];
    std::size_t longest = 0;
    bool one = true;
    for (std::size_t i = 0; i < inputs.size() && one; ++i) {
      const Array& a = *inputs[i];
      one = a.size() == 1;
      ptrs[i] = a.data();
      if (a.ndim() > inputs[longest]->ndim()) longest = i;
    }
    if (one) {
      Array out = Array::empty(inputs[longest]->shape(), dtype);
      kernels::cpu::fused_one(ptrs, static_cast<int>(inputs.size()), code, dtype, out.data());
      return out;
    }
  }
  Shape shape;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    shape = i == 0 ? inputs[i]->shape() : broadcast_shapes(shape, inputs[i]->shape(), "fused_elementwise");
  if (host) {  // host arrays are read in place
    Array out = Array::empty(shape, dtype);
    kernels::fused(inputs, code, out);
    return out;
  }
  std::vector<Array> moved;  // the device's arrays (common_device moves host scalars there)
  for (const Array* a : inputs) moved.push_back(*a);
  std::vector<Array*> ptrs;
  for (Array& t : moved) ptrs.push_back(&t);
  const Device dev = ptrs.empty() ? Device::cpu() : detail::common_device("fused_elementwise", ptrs);
  std::vector<const Array*> refs;
  for (const Array& t : moved) refs.push_back(&t);
  Array out = Array::empty(shape, dtype, dev);
  kernels::fused(ArrayRefs(refs), code, out);
  return out;
}

Array one_hot(const Array& indices, int64_t depth, DType dtype) {
  UMA_CHECK(is_integer(indices.dtype()), Type, "one_hot: indices must have an integer dtype, got ",
            dtype_name(indices.dtype()));
  const Shape shape = one_hot_shape(indices.shape(), depth);
  Array idx = astype(indices, DType::Int64);
  Array out = Array::empty(shape, dtype, idx.device());
  kernels::one_hot(idx, depth, out);
  return out;
}

namespace {

// The inputs of a chain that is the epilogue of another step (a product, a reduction): entry 0
// the step's result (register 0, set once it exists), then the chain's other operands.
class EpilogueInputs {
 public:
  explicit EpilogueInputs(ArrayRefs rest) : n_(rest.size() + 1) {
    if (n_ > kInline) big_.resize(n_);
    refs_ = big_.empty() ? small_ : big_.data();
    for (std::size_t i = 0; i < rest.size(); ++i) refs_[i + 1] = rest[i];
  }
  void set_head(const Array* head) { refs_[0] = head; }
  ArrayRefs refs() const { return ArrayRefs(refs_, n_); }

 private:
  static constexpr std::size_t kInline = 8;
  const Array* small_[kInline] = {};
  std::vector<const Array*> big_;
  const Array** refs_;
  std::size_t n_;
};

// Whether the chain (result dtype `dtype`) can write its head's memory: the head (of `shape`,
// dtype t, on `dev`) has the chain's dtype and every other operand is on its device and
// broadcasts to its shape. The result is then the head's memory, the step's only allocation
// (Note [Placed results] in uma/array.h).
bool epilogue_in_place(const Shape& shape, DType t, Device dev, ArrayRefs rest, DType dtype, const char* name) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  bool ok = t == dtype && n > 1;
  for (std::size_t i = 0; i < rest.size() && ok; ++i)
    ok = rest[i]->device() == dev && rest[i]->ndim() <= static_cast<int64_t>(shape.size()) &&
         broadcast_shapes(shape, rest[i]->shape(), name) == shape;
  return ok;
}

// The chain over (head, rest...) written into `head` when epilogue_in_place allows, else into
// a new array.
Array chain_after(const Array& head, EpilogueInputs& in, ArrayRefs rest, const std::vector<FusedInstr>& code,
                  DType dtype, const char* name) {
  in.set_head(&head);
  if (!(head.is_c_contiguous() && epilogue_in_place(head.shape(), head.dtype(), head.device(), rest, dtype, name)))
    return fused_elementwise(in.refs(), code, dtype);
  check_fused(in.refs(), code, dtype);
  kernels::fused(in.refs(), code, head);  // in place, as the kernels' fused epilogues' second half
  return head;
}

}  // namespace

Array matmul_fused(const Array& a, const Array& b, ArrayRefs rest, const std::vector<FusedInstr>& code, DType dtype) {
  EpilogueInputs in(rest);
  // Two matrices of the chain's dtype on one device (ops::matmul's fast path): one kernel on a
  // cuda device where it can (kernels::matmul_fused).
  if (a.ndim() == 2 && b.ndim() == 2 && a.dtype() == b.dtype() && a.device() == b.device() &&
      (a.dtype() == DType::Float32 || a.dtype() == DType::Float64) && a.shape()[1] == b.shape()[0]) {
    const Shape shape{a.shape()[0], b.shape()[1]};
    if (epilogue_in_place(shape, a.dtype(), a.device(), rest, dtype, "matmul_fused")) {
      Array out = Array::empty(shape, dtype, a.device());
      in.set_head(&out);
      check_fused(in.refs(), code, dtype);
      kernels::matmul_fused(a, b, in.refs(), code, out);
      return out;
    }
  }
  return chain_after(matmul(a, b), in, rest, code, dtype, "matmul_fused");
}

Array reduce_fused(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   ArrayRefs rest, const std::vector<FusedInstr>& code, DType dtype) {
  EpilogueInputs in(rest);
  const char* name = op == ReduceOp::Mean ? "mean_fused" : "sum_fused";
  // A sum or mean that keeps the dtype, on a device with its kernel: one kernel on a cuda device
  // where it can (kernels::reduce_fused).
  if ((op == ReduceOp::Sum || op == ReduceOp::Mean) && reduce_result_dtype(op, a.dtype()) == a.dtype() &&
      kernels::supports(op, a.dtype(), a.device())) {
    const Shape shape = reduce_shape(op, a.shape(), axes, keepdims);  // the rule's checks
    if (epilogue_in_place(shape, a.dtype(), a.device(), rest, dtype, name)) {
      const std::vector<bool> mask = reduced_axes(a.ndim(), axes, op_name(op));
      Array out = Array::empty(shape, dtype, a.device());
      in.set_head(&out);
      check_fused(in.refs(), code, dtype);
      kernels::reduce_fused(op, a, mask, in.refs(), code, out);
      return out;
    }
  }
  return chain_after(reduce(op, a, axes, keepdims), in, rest, code, dtype, name);
}

}  // namespace uma::ops
