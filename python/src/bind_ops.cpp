// Eager op functions: uma.add, uma.exp, uma.sum, uma.matmul, ... (NumPy 2 semantics).
#include <nanobind/stl/pair.h>

#include "common.h"
#include "uma/error.h"

namespace uma::py {

namespace {

std::pair<Array, Array> operands(nb::handle a, nb::handle b, const char* op) {
  if (is_python_scalar(a) && !is_python_scalar(b)) {
    Array B = operand(b, nullptr, op);
    return {operand(a, &B, op), B};
  }
  Array A = operand(a, nullptr, op);
  return {A, operand(b, &A, op)};
}

std::optional<std::vector<int64_t>> axes_of(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) return nb::cast<std::vector<int64_t>>(h);
  return std::vector<int64_t>{nb::cast<int64_t>(h)};
}

// argmax/argmin take one int axis (NumPy raises TypeError for a tuple).
void check_arg_axis(ReduceOp op, nb::handle axis) {
  if ((op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) && !axis.is_none() && !PyIndex_Check(axis.ptr()))
    UMA_FAIL(Type, ops::op_name(op), ": axis must be an integer or None, got ", py_repr((axis)));
}

Shape shape_of(nb::handle h) {
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) return nb::cast<Shape>(h);
  return Shape{nb::cast<int64_t>(h)};
}

void check_cpu(nb::handle device, const char* op) {
  if (device.is_none()) return;
  Device d = to_device(device);
  UMA_CHECK(d.is_cpu(), Runtime, op, ": device ", d.str(), " is not available in this build");
}

// The default dtype of a fill value: bool, int64, float64, complex128, or an array's own.
DType fill_dtype(nb::handle v) {
  if (is_python_scalar(v)) {
    Scalar s = to_scalar(v);
    switch (s.kind) {
      case ScalarKind::Bool: return DType::Bool;
      case ScalarKind::Int: return DType::Int64;
      case ScalarKind::Float: return DType::Float64;
      case ScalarKind::Complex: return DType::Complex128;
    }
  }
  return operand(v, nullptr, "full").dtype();
}

Array full_impl(const Shape& shape, nb::handle value, std::optional<DType> dtype) {
  DType t = dtype ? *dtype : fill_dtype(value);
  if (is_python_scalar(value)) return ops::full(shape, to_scalar(value), t);
  Array out = Array::empty(shape, t);
  ops::assign(out, operand(value, nullptr, "full"));
  return out;
}

std::vector<Array> array_list(nb::handle seq, const char* op) {
  std::vector<Array> v;
  for (nb::handle h : seq) v.push_back(operand(h, nullptr, op));
  return v;
}

}  // namespace

void bind_ops(nb::module_& m) {
  // ---- creation ----
  m.def("zeros", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        check_cpu(device, "zeros");
        return ops::zeros(shape_of(shape), to_dtype(dtype).value_or(DType::Float64));
      }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("device").none() = nb::none(),
      "Array of the given shape (int or tuple) filled with 0; dtype defaults to float64.");
  m.def("ones", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        check_cpu(device, "ones");
        return ops::ones(shape_of(shape), to_dtype(dtype).value_or(DType::Float64));
      }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("device").none() = nb::none(),
      "Array of the given shape filled with 1; dtype defaults to float64.");
  m.def("empty", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        check_cpu(device, "empty");
        return Array::empty(shape_of(shape), to_dtype(dtype).value_or(DType::Float64));
      }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("device").none() = nb::none(),
      "Uninitialised array of the given shape from the caching allocator; dtype defaults to float64.");
  m.def("full", [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device) {
        check_cpu(device, "full");
        return full_impl(shape_of(shape), value, to_dtype(dtype));
      }, nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
      nb::arg("device").none() = nb::none(),
      "Array filled with fill_value; dtype defaults to that of the value (bool, int64, float64, complex128).\n"
      "OverflowError if an int does not fit the dtype.");
  m.def("zeros_like", [](nb::handle a, nb::handle dtype) {
        Array A = operand(a, nullptr, "zeros_like");
        return ops::zeros(A.shape(), to_dtype(dtype).value_or(A.dtype()));
      }, nb::arg("a"), nb::arg("dtype").none() = nb::none());
  m.def("ones_like", [](nb::handle a, nb::handle dtype) {
        Array A = operand(a, nullptr, "ones_like");
        return ops::ones(A.shape(), to_dtype(dtype).value_or(A.dtype()));
      }, nb::arg("a"), nb::arg("dtype").none() = nb::none());
  m.def("empty_like", [](nb::handle a, nb::handle dtype) {
        Array A = operand(a, nullptr, "empty_like");
        return Array::empty(A.shape(), to_dtype(dtype).value_or(A.dtype()));
      }, nb::arg("a"), nb::arg("dtype").none() = nb::none());
  m.def("full_like", [](nb::handle a, nb::handle value, nb::handle dtype) {
        Array A = operand(a, nullptr, "full_like");
        return full_impl(A.shape(), value, to_dtype(dtype).value_or(A.dtype()));
      }, nb::arg("a"), nb::arg("fill_value"), nb::arg("dtype").none() = nb::none());
  m.def("arange", [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle device) {
        check_cpu(device, "arange");
        nb::handle lo = start, hi = stop;
        nb::object zero = nb::int_(0);
        if (stop.is_none()) {
          lo = zero;
          hi = start;
        }
        auto is_int = [](nb::handle h) { return PyLong_Check(h.ptr()) != 0; };
        DType def = is_int(lo) && is_int(hi) && is_int(step) ? DType::Int64 : DType::Float64;
        return ops::arange(nb::cast<double>(lo), nb::cast<double>(hi), nb::cast<double>(step), to_dtype(dtype).value_or(def));
      }, nb::arg("start"), nb::arg("stop").none() = nb::none(), nb::arg("step") = 1, nb::arg("dtype").none() = nb::none(),
      nb::kw_only(), nb::arg("device").none() = nb::none(),
      "Evenly spaced values in [start, stop) (NumPy arange): ceil((stop - start) / step) elements;\n"
      "int64 when all arguments are ints, else float64. ValueError for step == 0.");
  m.def("eye", [](int64_t n, std::optional<int64_t> mm, int64_t k, nb::handle dtype, nb::handle device) {
        check_cpu(device, "eye");
        return ops::eye(n, mm.value_or(n), k, to_dtype(dtype).value_or(DType::Float64));
      }, nb::arg("n"), nb::arg("m").none() = nb::none(), nb::arg("k") = 0, nb::arg("dtype").none() = nb::none(), nb::kw_only(),
      nb::arg("device").none() = nb::none(), "(n, m) array with ones on diagonal k, zeros elsewhere; dtype defaults to float64.");

  // ---- elementwise ----
#define UMA_BIN(name, OP)                                                              \
  m.def(name, [](nb::handle a, nb::handle b) {                                         \
    if (auto r = compare_out_of_range(BinaryOp::OP, a, b)) return *r;                  \
    auto [A, B] = operands(a, b, name);                                                \
    return ops::binary(BinaryOp::OP, A, B);                                            \
  }, nb::arg("x1"), nb::arg("x2"),                                                     \
  "Elementwise " name " with NumPy broadcasting and NumPy 2 (NEP 50) type promotion.\n" \
  "ValueError if shapes do not broadcast; TypeError for unsupported dtypes.");
  UMA_BIN("add", Add) UMA_BIN("subtract", Subtract) UMA_BIN("multiply", Multiply) UMA_BIN("divide", Divide)
  UMA_BIN("power", Power) UMA_BIN("maximum", Maximum) UMA_BIN("minimum", Minimum)
  UMA_BIN("floor_divide", FloorDivide) UMA_BIN("remainder", Remainder) UMA_BIN("equal", Equal)
  UMA_BIN("not_equal", NotEqual) UMA_BIN("less", Less) UMA_BIN("less_equal", LessEqual)
  UMA_BIN("greater", Greater) UMA_BIN("greater_equal", GreaterEqual) UMA_BIN("logical_and", LogicalAnd)
  UMA_BIN("logical_or", LogicalOr)
  // ---- issue 4 elementwise set ----
  UMA_BIN("arctan2", Arctan2) UMA_BIN("logical_xor", LogicalXor)
#undef UMA_BIN
#define UMA_UN(name, OP)                                                                      \
  m.def(name, [](nb::handle a) { return ops::unary(UnaryOp::OP, operand(a, nullptr, name)); }, \
        nb::arg("x"), "Elementwise " name " (NumPy semantics; ints and bool give floats for transcendental functions).");
  UMA_UN("negative", Negative) UMA_UN("abs", Abs) UMA_UN("exp", Exp) UMA_UN("log", Log) UMA_UN("log1p", Log1p)
  UMA_UN("expm1", Expm1) UMA_UN("sqrt", Sqrt) UMA_UN("tanh", Tanh) UMA_UN("sigmoid", Sigmoid) UMA_UN("sign", Sign)
  UMA_UN("logical_not", LogicalNot) UMA_UN("square", Square) UMA_UN("sin", Sin) UMA_UN("cos", Cos)
  UMA_UN("floor", Floor) UMA_UN("ceil", Ceil)
  // ---- issue 4 elementwise set ----
  UMA_UN("exp2", Exp2) UMA_UN("log2", Log2) UMA_UN("log10", Log10) UMA_UN("reciprocal", Reciprocal)
  UMA_UN("tan", Tan) UMA_UN("arcsin", Arcsin) UMA_UN("arccos", Arccos) UMA_UN("arctan", Arctan)
  UMA_UN("sinh", Sinh) UMA_UN("cosh", Cosh) UMA_UN("rint", Rint)
#undef UMA_UN
  // Functions NumPy lacks (scipy.special's names): real floating dtypes only, integers and
  // bool take exp's float rule (int8 -> float16, ...); complex is a TypeError.
#define UMA_UN(name, OP, what)                                                                 \
  m.def(name, [](nb::handle a) { return ops::unary(UnaryOp::OP, operand(a, nullptr, name)); }, \
        nb::arg("x"), "Elementwise " what ". Real dtypes only (TypeError for complex); bool and\n" \
        "integers give the float dtype numpy.exp gives them; float16/bfloat16 computed in float32.");
  UMA_UN("softplus", Softplus, "log(1 + exp(x)), computed without overflow")
  UMA_UN("erf", Erf, "error function (scipy.special.erf)")
  UMA_UN("erfc", Erfc, "complementary error function 1 - erf(x) (scipy.special.erfc)")
  UMA_UN("gammaln", Gammaln, "log|Gamma(x)| (scipy.special.gammaln; +inf at poles)")
  UMA_UN("digamma", Digamma, "digamma psi(x) = d/dx log Gamma(x) (scipy.special.digamma; NaN at poles)")
#undef UMA_UN
  m.def("round", [](nb::handle a, int64_t decimals) { return ops::round(operand(a, nullptr, "round"), decimals); },
        nb::arg("a"), nb::arg("decimals") = 0,
        "Round half to even to `decimals` places (numpy.round): floats/complex keep their dtype, integers\n"
        "keep theirs (decimals < 0 rounds through float64), bool gives float16 (TypeError for bool with\n"
        "decimals != 0, as NumPy).");
  m.def("clip", [](nb::handle a, nb::handle lo, nb::handle hi) {
        Array A = operand(a, nullptr, "clip");
        // numpy.clip: an out-of-range Python int bound of an integer array is dropped.
        auto drop = [&](nb::handle b, bool low) {
          if (!is_integer(A.dtype()) || !PyLong_CheckExact(b.ptr())) return false;
          int overflow = 0;
          long long v = PyLong_AsLongLongAndOverflow(b.ptr(), &overflow);
          const DType t = A.dtype();
          if (overflow > 0 && !low && t == DType::UInt64) {  // 2**63 <= v: compare with 2**64 - 1
            unsigned long long u = PyLong_AsUnsignedLongLong(b.ptr());
            if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
              PyErr_Clear();
              return true;  // beyond 2**64 - 1
            }
            return u == UINT64_MAX;
          }
          if (overflow != 0) return low ? overflow < 0 : overflow > 0;
          const bool sgn = dtype_kind(t) == 'i';
          const int bits = static_cast<int>(itemsize(t)) * 8;
          if (sgn) {
            const long long mn = bits == 64 ? INT64_MIN : -(1LL << (bits - 1));
            const long long mx = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
            return low ? v <= mn : v >= mx;
          }
          if (low) return v <= 0;
          if (bits == 64) return false;  // fits long long: below 2**64 - 1
          return v >= (1LL << bits) - 1;
        };
        const bool use_lo = !lo.is_none() && !drop(lo, true), use_hi = !hi.is_none() && !drop(hi, false);
        // Weak Python scalars take the dtype of the strong operands (NEP 50), as in binary ops.
        std::optional<Array> L, H;
        DType strong = A.dtype();
        if (use_lo && !is_python_scalar(lo)) strong = promote_types(strong, (L = operand(lo, nullptr, "clip"))->dtype());
        if (use_hi && !is_python_scalar(hi)) strong = promote_types(strong, (H = operand(hi, nullptr, "clip"))->dtype());
        const Array ref = Array::empty({}, strong);
        if (use_lo && !L) L = operand(lo, &ref, "clip");
        if (use_hi && !H) H = operand(hi, &ref, "clip");
        return ops::clip(A, L, H);
      }, nb::arg("a"), nb::arg("a_min").none(), nb::arg("a_max").none(),
      "numpy.clip(a, a_min, a_max): each element limited to [a_min, a_max] (t = a < a_min ? a_min : a;\n"
      "t > a_max ? a_max : t; NaN propagates). None drops a bound (maximum/minimum, as NumPy); an\n"
      "integer array drops a Python int bound beyond its range. Result dtype by NumPy 2 promotion.");
  // ---- end issue 4 elementwise set ----
  m.def("where", [](nb::handle c, nb::handle x, nb::handle y) {
        Array C = operand(c, nullptr, "where");
        auto [X, Y] = operands(x, y, "where");
        return ops::where(C, X, Y);
      }, nb::arg("condition"), nb::arg("x"), nb::arg("y"),
      "Elementwise condition ? x : y, broadcasting all three; result dtype promote(x, y).");
  m.def("one_hot", [](nb::handle idx, int64_t depth, nb::handle dtype) {
        return ops::one_hot(operand(idx, nullptr, "one_hot"), depth, to_dtype(dtype).value_or(DType::Float64));
      }, nb::arg("indices"), nb::arg("depth"), nb::arg("dtype").none() = nb::none(),
      "One-hot encoding: shape indices.shape + (depth,), 1 where j == index, else 0 (indices outside\n"
      "[0, depth) give all-zero rows); dtype defaults to float64. TypeError for non-integer indices.");

  m.def("softmax_cross_entropy", [](nb::handle z, nb::handle y) {
        return ops::softmax_cross_entropy(operand(z, nullptr, "softmax_cross_entropy"), operand(y, nullptr, "softmax_cross_entropy"));
      }, nb::arg("logits"), nb::arg("labels"),
      "Per-example softmax cross-entropy: logits (N, C) float32/float64, integer labels (N,) ->\n"
      "log(sum_j exp(logits[i, j])) - logits[i, labels[i]], shape (N,), computed stably in one pass\n"
      "per row. ValueError for a label outside [0, C) or mismatched shapes; TypeError for other dtypes.\n"
      "(TensorFlow sparse_softmax_cross_entropy_with_logits; PyTorch cross_entropy(reduction='none').)");
  m.def("softmax_cross_entropy_grad", [](nb::handle g, nb::handle z, nb::handle y) {
        return ops::softmax_cross_entropy_grad(operand(g, nullptr, "softmax_cross_entropy_grad"),
                                               operand(z, nullptr, "softmax_cross_entropy_grad"),
                                               operand(y, nullptr, "softmax_cross_entropy_grad"));
      }, nb::arg("grad"), nb::arg("logits"), nb::arg("labels"),
      "Gradient of softmax_cross_entropy with respect to the logits: grad[i] * (softmax(logits)[i, j] -\n"
      "(j == labels[i])), shape (N, C).");

  // ---- reductions ----
#define UMA_RED(name, OP)                                                                              \
  m.def(name, [](nb::handle a, nb::handle axis, bool keepdims) {                                       \
    check_arg_axis(ReduceOp::OP, axis);                                                                \
    return ops::reduce(ReduceOp::OP, operand(a, nullptr, name), axes_of(axis), keepdims);             \
  }, nb::arg("a"), nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false,                          \
  "Reduction " name " over axis (None: all; int or tuple), NumPy 2 result dtypes. IndexError for a\n" \
  "bad axis.");
  UMA_RED("sum", Sum) UMA_RED("mean", Mean) UMA_RED("max", Max) UMA_RED("min", Min) UMA_RED("prod", Prod)
  UMA_RED("argmax", ArgMax) UMA_RED("argmin", ArgMin) UMA_RED("all", All) UMA_RED("any", Any)
#undef UMA_RED

  // ---- linear algebra ----
  m.def("matmul", [](nb::handle a, nb::handle b) {
        auto [A, B] = operands(a, b, "matmul");
        return ops::matmul(A, B);
      }, nb::arg("x1"), nb::arg("x2"),
      "Matrix product with NumPy matmul semantics (1-D promotion, broadcast batch axes); OpenBLAS gemm\n"
      "for float32/float64. ValueError on mismatched core dimensions.");
  m.def("dot", [](nb::handle a, nb::handle b) {
        auto [A, B] = operands(a, b, "dot");
        UMA_CHECK(A.ndim() <= 2 && B.ndim() <= 2, Value, "dot: only arrays of up to 2 dimensions are supported, use matmul");
        if (A.ndim() == 0 || B.ndim() == 0) return ops::binary(BinaryOp::Multiply, A, B);
        return ops::matmul(A, B);
      }, nb::arg("a"), nb::arg("b"), "Dot product of arrays of up to 2 dimensions (NumPy dot).");

  // ---- shape ----
  m.def("reshape", [](nb::handle a, nb::handle shape) { return ops::reshape(operand(a, nullptr, "reshape"), shape_of(shape)); },
        nb::arg("a"), nb::arg("shape"), "New shape (one entry may be -1); a view when the layout allows, else a copy.");
  m.def("transpose", [](nb::handle a, nb::handle axes) {
        return ops::transpose(operand(a, nullptr, "transpose"), axes.is_none() ? std::vector<int64_t>{} : nb::cast<std::vector<int64_t>>(axes));
      }, nb::arg("a"), nb::arg("axes").none() = nb::none(), "Permuted view (axes=None reverses them).");
  m.def("broadcast_to", [](nb::handle a, nb::handle shape) { return ops::broadcast_to(operand(a, nullptr, "broadcast_to"), shape_of(shape)); },
        nb::arg("a"), nb::arg("shape"), "Read-only broadcast view (NumPy broadcast_to).");
  m.def("concatenate", [](nb::handle arrays, int64_t axis) { return ops::concatenate(array_list(arrays, "concatenate"), axis); },
        nb::arg("arrays"), nb::arg("axis") = 0, "Joins arrays along an existing axis; dtype by promotion.");
  m.def("stack", [](nb::handle arrays, int64_t axis) { return ops::stack(array_list(arrays, "stack"), axis); },
        nb::arg("arrays"), nb::arg("axis") = 0, "Joins same-shaped arrays along a new axis.");
  m.def("expand_dims", [](nb::handle a, int64_t axis) { return ops::expand_dims(operand(a, nullptr, "expand_dims"), axis); },
        nb::arg("a"), nb::arg("axis"), "View with a new size-1 axis at position axis.");
  m.def("squeeze", [](nb::handle a, nb::handle axis) {
        return ops::squeeze(operand(a, nullptr, "squeeze"), axes_of(axis).value_or(std::vector<int64_t>{}));
      }, nb::arg("a"), nb::arg("axis").none() = nb::none(), "View without size-1 axes (all, or those named).");
  m.def("astype", [](nb::handle a, nb::handle dtype, bool copy) {
        Array A = operand(a, nullptr, "astype");
        DType t = *to_dtype(dtype);
        if (!copy && t == A.dtype()) return A;
        return ops::astype(A, t);
      }, nb::arg("x"), nb::arg("dtype"), nb::kw_only(), nb::arg("copy") = true,
      "Values converted to dtype (Array API astype); never reinterprets bits.");
  m.def("_op_result_dtype", [](const std::string& op, int a, int b) {
        static const std::pair<const char*, BinaryOp> table[] = {
            {"add", BinaryOp::Add}, {"subtract", BinaryOp::Subtract}, {"multiply", BinaryOp::Multiply},
            {"divide", BinaryOp::Divide}, {"power", BinaryOp::Power}, {"maximum", BinaryOp::Maximum},
            {"minimum", BinaryOp::Minimum}, {"floor_divide", BinaryOp::FloorDivide}, {"remainder", BinaryOp::Remainder},
            {"equal", BinaryOp::Equal}, {"not_equal", BinaryOp::NotEqual}, {"less", BinaryOp::Less},
            {"less_equal", BinaryOp::LessEqual}, {"greater", BinaryOp::Greater}, {"greater_equal", BinaryOp::GreaterEqual},
            {"logical_and", BinaryOp::LogicalAnd}, {"logical_or", BinaryOp::LogicalOr},
            {"arctan2", BinaryOp::Arctan2}, {"logical_xor", BinaryOp::LogicalXor}};
        for (const auto& [n, o] : table)
          if (op == n) return static_cast<int>(ops::binary_result_dtype(o, static_cast<DType>(a), static_cast<DType>(b)));
        UMA_FAIL(Value, "unknown binary op '", op, "'");
      }, "Result dtype code of a binary op on two dtype codes (raises as the op would).");
}

}  // namespace uma::py
