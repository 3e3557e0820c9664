// Eager op functions: uma.add, uma.exp, uma.sum, uma.matmul, ... (NumPy 2 semantics).
#include <nanobind/stl/pair.h>

#include <array>
#include <cmath>

#include <memory>
#include <string>

#include "common.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/transfer.h"

namespace uma::py {

// ---- axis arguments (common.h) ----

namespace {
// One axis: an integer (operator.index), not a bool (NumPy: TypeError).
int64_t axis_int(nb::handle h) {
  UMA_CHECK(!PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()), Type,
            "axis must be an integer or a tuple of integers, got ", py_repr(h));
  const std::optional<int64_t> v = index_int64(h);
  UMA_CHECK(v.has_value(), Overflow, "axis ", py_str(h), " is out of range of int64");  // NumPy: OverflowError
  return *v;
}
}  // namespace

std::optional<std::vector<int64_t>> axes_of(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  std::vector<int64_t> v;
  if (nb::isinstance<nb::tuple>(h)) {  // a tuple, not a list (NumPy: TypeError for a list)
    for (nb::handle x : h) v.push_back(axis_int(x));
  } else {
    v.push_back(axis_int(h));
  }
  return v;
}

namespace {
// One dimension: an integer (operator.index), not a bool; beyond int64 is NumPy's ValueError.
int64_t dim_int(nb::handle h) {
  UMA_CHECK(!PyBool_Check(h.ptr()), Type, "shape: expected integers, got ", py_repr(h));
  UMA_CHECK(PyIndex_Check(h.ptr()), Type, "shape: '", nb::type_name(h.type()).c_str(),
            "' object cannot be interpreted as an integer");
  const std::optional<int64_t> v = index_int64(h);
  UMA_CHECK(v.has_value(), Value, "Maximum allowed dimension exceeded: ", py_str(h));
  return *v;
}
}  // namespace

Shape shape_of(nb::handle h) {
  Shape s;
  // A sequence of integers (a tuple, a list, a range, an integer array of 1 dimension) or one
  // integer (a 0-d integer array included), as NumPy takes a shape.
  bool sequence = nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h);
  if (!sequence && !PyLong_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !PyBytes_Check(h.ptr())) {
    const nb::object ndim = nb::getattr(h, "ndim", nb::none());  // arrays: uma's, NumPy's, ...
    sequence = PyLong_Check(ndim.ptr()) ? PyLong_AsLong(ndim.ptr()) > 0 : PySequence_Check(h.ptr()) != 0;
  }
  if (sequence) {
    for (nb::handle x : h) s.push_back(dim_int(x));
  } else {
    s.push_back(dim_int(h));
  }
  return s;
}

Shape static_shape_of(nb::handle h) {
  Shape s;
  for (nb::handle d : h) {
    s.push_back(d.is_none() ? ops::kUnknownLength : dim_int(d));
    UMA_CHECK(d.is_none() || s.back() >= 0, Value, "negative dimensions are not allowed in a static shape: ",
              py_repr(h));
  }
  return s;
}

nb::tuple static_shape_object(const Shape& s) {
  nb::list out;
  for (int64_t d : s) out.append(d == ops::kUnknownLength ? nb::object(nb::none()) : nb::object(nb::int_(d)));
  return nb::tuple(out);
}

std::optional<int64_t> one_axis(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  UMA_CHECK(!nb::isinstance<nb::tuple>(h) && !nb::isinstance<nb::list>(h), Type,
            "axis must be an integer or None (one axis), got ", py_repr(h));
  return axis_int(h);
}

void check_arg_axis(ReduceOp op, nb::handle axis) {
  if ((op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) && !axis.is_none() && !PyIndex_Check(axis.ptr()))
    UMA_FAIL(Type, ops::op_name(op), ": axis must be an integer or None, got ", py_repr((axis)));
}

std::optional<std::vector<int64_t>> ufunc_axes(const Array& a, nb::handle axis) {
  if (a.ndim() == 0 && !axis.is_none() && PyIndex_Check(axis.ptr()) && !PyBool_Check(axis.ptr()) &&
      !nb::isinstance<Array>(axis)) {
    const int64_t v = nb::cast<int64_t>(axis);
    if (v == 0 || v == -1) return std::nullopt;
  }
  return axes_of(axis);
}

namespace {

// The keyword parameters of _result_shape: each rule takes the ones it reads; any left over is a
// TypeError.
struct RuleParams {
  nb::dict kw;
  nb::object take(const char* key) {
    if (!kw.contains(key)) return nb::none();
    nb::object v = kw[key];
    nb::del(kw[key]);
    return v;
  }
  std::optional<int64_t> axis() { return one_axis(take("axis")); }
  bool flag(const char* key) {
    nb::object v = take(key);
    return !v.is_none() && nb::cast<bool>(v);
  }
  int64_t integer(const char* key, const char* op, std::optional<int64_t> fallback = std::nullopt) {
    nb::object v = take(key);
    if (v.is_none() && fallback) return *fallback;
    UMA_CHECK(!v.is_none(), Type, op, ": the shape rule needs the parameter '", key, "'");
    return int_arg(v, op, key);
  }
};

// The static result shape of op `name` on operands of static shapes `ss` (the rules of uma/ops.h).
Shape result_shape(const std::string& name, const std::vector<Shape>& ss, RuleParams& p) {
  const char* op = name.c_str();
  auto expect = [&](std::size_t n) {
    UMA_CHECK(ss.size() == n, Type, name, ": expected ", n, " shape", n == 1 ? "" : "s", ", got ", ss.size());
  };
  auto all = [&](std::size_t from) {
    std::vector<const Shape*> ps;
    for (std::size_t i = from; i < ss.size(); ++i) ps.push_back(&ss[i]);
    return ps;
  };
  if (ops::binary_op_named(name)) {
    expect(2);
    return ops::broadcast_shapes(ss[0], ss[1], op);
  }
  if (ops::unary_op_named(name) || name == "zeros_like" || name == "ones_like" || name == "full_like") {
    expect(1);
    return ss[0];
  }
  if (name == "where" || name == "clip") {
    expect(3);
    return ops::broadcast_shapes(all(0), op);
  }
  if (name == "matmul") {
    expect(2);
    return ops::matmul_shapes(ss[0], ss[1]).result;
  }
  if (auto r = ops::reduce_op_named(name)) {
    expect(1);
    const auto axes = axes_of(p.take("axis"));
    return ops::reduce_shape(*r, ss[0], axes, p.flag("keepdims"));
  }
  if (name == "var" || name == "std" || name == "logsumexp") {
    expect(1);
    const auto axes = axes_of(p.take("axis"));
    return ops::reduce_shape(ss[0], axes, p.flag("keepdims"), op);
  }
  if (name == "cumsum" || name == "cumprod") {
    expect(1);
    return ops::cumulate_shape(ss[0], p.axis(), op);
  }
  // shape ops
  if (name == "reshape") {
    expect(1);
    nb::object shape = p.take("shape");
    UMA_CHECK(!shape.is_none(), Type, "reshape: the shape rule needs the parameter 'shape'");
    return ops::reshape_shape(ss[0], shape_of(shape));
  }
  if (name == "reshape_like") {
    expect(2);
    return ops::reshape_like_shape(ss[0], ss[1]);
  }
  if (name == "transpose" || name == "permute_dims") {
    expect(1);
    nb::object axes = p.take("axes");
    if (axes.is_none()) return ops::transpose_shape(ss[0], std::nullopt);
    std::vector<int64_t> v;
    for (nb::handle a : axes) v.push_back(int_arg(a, "transpose", "axis"));
    return ops::transpose_shape(ss[0], v);
  }
  if (name == "expand_dims") {
    expect(1);
    return ops::expand_dims_shape(ss[0], p.integer("axis", op));
  }
  if (name == "squeeze") {
    expect(1);
    return ops::squeeze_shape(ss[0], axes_of(p.take("axis")));
  }
  if (name == "broadcast_to" || name == "broadcast_like") {
    expect(2);
    return ops::broadcast_to_shape(ss[0], ss[1], op);
  }
  if (name == "concatenate") return ops::concatenate_shape(all(0), p.integer("axis", op, 0));
  if (name == "stack") return ops::stack_shape(all(0), p.integer("axis", op, 0));
  if (name == "segment") {
    UMA_CHECK(ss.size() >= 2, Type, "segment: expected the gradient's shape and the parts', got ", ss.size(), " shapes");
    return ops::segment_shape(ss[0], all(1), p.integer("axis", op), p.integer("part", op));
  }
  // indexing
  if (name == "getitem") {
    expect(1);
    return ops::index_shape(ss[0], parse_index(p.take("index")), op);
  }
  if (name == "getitem_grad") {
    expect(2);
    return ops::embed_shape(ss[0], ops::index_shape(ss[1], parse_index(p.take("index")), op), ss[1], op);
  }
  if (name == "take") {
    expect(2);
    return ops::take_shape(ss[0], ss[1], p.axis(), op);
  }
  if (name == "mask_select") {
    expect(2);
    return ops::mask_select_shape(ss[0], ss[1], "getitem");
  }
  // linear algebra and nn helpers
  if (name == "outer") {
    expect(2);
    return ops::outer_shape(ss[0], ss[1]);
  }
  if (name == "diagonal" || name == "diagonal_embed" || name == "trace") {
    expect(name == "diagonal_embed" ? 2 : 1);
    const int64_t offset = p.integer("offset", op, 0), axis1 = p.integer("axis1", op, 0),
                  axis2 = p.integer("axis2", op, 1);
    const Shape& x = ss.back();
    Shape d = ops::diagonal_shape(x, offset, axis1, axis2, name == "trace" ? "trace" : "diagonal");
    if (name == "trace") d.pop_back();  // the diagonal's sum
    return name == "diagonal_embed" ? ops::embed_shape(ss[0], d, x, op) : d;
  }
  if (name == "diag") {
    expect(1);
    return ops::diag_shape(ss[0], p.integer("k", op, 0));
  }
  if (name == "softmax" || name == "log_softmax") {
    expect(1);
    return ops::softmax_shape(ss[0], p.integer("axis", op, -1), op);
  }
  if (name == "softmax_cross_entropy") {
    expect(2);
    return ops::softmax_cross_entropy_shape(ss[0], ss[1], op);
  }
  if (name == "softmax_cross_entropy_grad") {
    expect(3);
    return ops::softmax_cross_entropy_grad_shape(ss[0], ss[1], ss[2]);
  }
  if (name == "sort" || name == "argsort") {
    expect(1);
    return ops::sort_shape(ss[0], p.integer("axis", op, -1), op);
  }
  if (name == "nonzero") {
    expect(1);
    return ops::nonzero_shape(ss[0]);
  }
  if (name == "searchsorted") {
    UMA_CHECK(ss.size() == 2 || ss.size() == 3, Type, name, ": expected 2 or 3 shapes, got ", ss.size());
    return ops::searchsorted_shape(ss[0], ss[1], ss.size() == 3 ? std::optional<Shape>(ss[2]) : std::nullopt);
  }
  if (name == "one_hot") {
    expect(1);
    return ops::one_hot_shape(ss[0], p.integer("depth", op));
  }
  UMA_FAIL(Value, "_result_shape: '", name, "' is not an op with a shape rule");
}

}  // namespace

namespace {

std::pair<Array, Array> operands(nb::handle a, nb::handle b, const char* op) {
  if (is_python_scalar(a) && !is_python_scalar(b)) {
    Array B = operand(b, nullptr, op);
    return {operand(a, &B, op), B};
  }
  Array A = operand(a, nullptr, op);
  return {A, operand(b, &A, op)};
}

}  // namespace

Device target_device(nb::handle device, const char* op) {
  if (device.is_none()) return Device::cpu();
  Device d = to_device(device);
  if (!d.is_cpu()) cuda::require(d, op);
  return d;
}

namespace {

// The default dtype of a fill value: bool, int64, float64, complex128, or an array's own.
DType fill_dtype(nb::handle v) {
  if (is_python_scalar(v)) {
    Scalar s = to_scalar(v);
    switch (s.kind) {
      case ScalarKind::Bool: return DType::Bool;
      case ScalarKind::Int: return s.big ? DType::UInt64 : DType::Int64;
      case ScalarKind::Float: return DType::Float64;
      case ScalarKind::Complex: return DType::Complex128;
    }
  }
  return operand(v, nullptr, "full").dtype();
}

// An array of `shape` on `device` filled with `value` (a Python scalar, or an array broadcast
// to the shape and moved to the device).
Array full_impl(const Shape& shape, nb::handle value, std::optional<DType> dtype, Device device, const char* api) {
  DType t = dtype ? *dtype : fill_dtype(value);
  if (is_python_scalar(value)) return ops::full(shape, to_scalar(value, t), t, device);
  const Array v = operand(value, nullptr, api);
  (void)ops::broadcast_to_shape(v.shape(), shape, api);  // ValueError naming the op and both shapes
  Array out = Array::empty(shape, t, device);
  ops::assign(out, v);
  return out;
}

// The device of a *_like result: `device` when given (Array API standard, zeros_like), else
// the array's.
Device like_device(nb::handle device, const Array& a, const char* op) {
  return device.is_none() ? a.device() : target_device(device, op);
}

std::vector<Array> array_list(nb::handle seq, const char* op) {
  // NumPy's rule (concatenate, stack): a sequence (an array is the sequence of its rows), not
  // an iterator.
  UMA_CHECK(PySequence_Check(seq.ptr()) || nb::isinstance<Array>(seq), Type, op,
            ": arrays must be passed as a sequence (a list or tuple of arrays), got '",
            Py_TYPE(seq.ptr())->tp_name, "'");
  std::vector<Array> v;
  for (nb::handle h : seq) v.push_back(operand(h, nullptr, op));
  return v;
}


// ---- advanced indices ----------------------------------------------------

std::optional<int64_t> ufunc_axis(const Array& a, std::optional<int64_t> axis) {
  if (a.ndim() == 0 && axis && (*axis == 0 || *axis == -1)) return std::nullopt;
  return axis;
}

bool is_full_slice(nb::handle h) {
  return PySlice_Check(h.ptr()) && h.attr("start").is_none() && h.attr("stop").is_none() && h.attr("step").is_none();
}

// Optional ddof / Array-API correction of var and std (NumPy: both given is a ValueError).
// A real number: an integer (operator.index, OverflowError beyond int64, as NumPy) or a float.
double real_of(const char* op, const char* what, nb::handle h) {
  if (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())) {
    nb::object i = nb::steal(PyNumber_Index(h.ptr()));
    if (i.is_valid()) {
      const std::optional<int64_t> v = index_int64(i);
      UMA_CHECK(v.has_value(), Overflow, op, ": ", what, " ", py_str(h), " is out of range of int64");
      return static_cast<double>(*v);
    }
    PyErr_Clear();  // a 0-d float array defines __index__ and refuses it: read it as a number below
  }
  nb::object f = PyNumber_Check(h.ptr()) ? nb::steal(PyNumber_Float(h.ptr())) : nb::object();  // not float("3")
  if (!f.is_valid()) {
    PyErr_Clear();
    UMA_FAIL(Type, op, ": ", what, " must be a real number, got ", py_repr(h).substr(0, 80));
  }
  return PyFloat_AsDouble(f.ptr());
}

double ddof_of(const char* op, nb::handle ddof, nb::handle correction) {
  const double d = real_of(op, "ddof", ddof);
  if (correction.is_none()) return d;
  UMA_CHECK(d == 0, Value, op, ": ddof and correction can't be provided simultaneously");
  return real_of(op, "correction", correction);
}

}  // namespace

// An index item that is an array (NumPy: a list, an ndarray or a uma.Array of ndim >= 1).
bool is_index_array(nb::handle h) {
  if (nb::isinstance<nb::list>(h)) return true;
  if (nb::isinstance<Array>(h)) return nb::cast<const Array&>(h).ndim() > 0;
  if (PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PySlice_Check(h.ptr()) || h.is_none() || h.ptr() == Py_Ellipsis)
    return false;
  if (nb::hasattr(h, "__array_interface__") && nb::hasattr(h, "ndim")) return nb::cast<int64_t>(h.attr("ndim")) > 0;
  return false;
}

namespace {

// An index array's elements as a uma array; an object that has no uma dtype (object or string
// elements) is NumPy's IndexError, not the conversion's TypeError.
Array index_array(nb::handle h) {
  try {
    return asarray(h, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "index");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Type) throw;
    throw Error(ErrorKind::Index, detail::cat("arrays used as indices must be of integer (or boolean) type, got ",
                                              py_repr(h), " (", e.what(), ")"));
  }
}

}  // namespace

AnyIndex parse_any_index(nb::handle key) {
  AnyIndex r;
  std::vector<nb::handle> items;
  const bool tuple = nb::isinstance<nb::tuple>(key);
  if (tuple) for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  else items.push_back(key);
  int64_t pos = -1, count = 0;
  for (std::size_t k = 0; k < items.size(); ++k)
    if (is_index_array(items[k])) {
      pos = static_cast<int64_t>(k);
      ++count;
    }
  if (count == 0) {
    r.basic = parse_index(key);
    return r;
  }
  bool simple = count == 1;
  for (std::size_t k = 0; k < items.size() && simple; ++k)
    if (static_cast<int64_t>(k) != pos) simple = is_full_slice(items[k]);
  UMA_CHECK(simple, Index, "only one integer or boolean array, with nothing but full slices (':') before and after "
            "it (x[idx], x[:, idx], x[mask]), is supported as an advanced index, got ", py_repr(key));
  Array arr = index_array(items[pos]);
  if (arr.dtype() == DType::Bool) {
    UMA_CHECK(pos == 0, Index, "a boolean mask is supported as the first index only (x[mask]), got ", py_repr(key));
    r.kind = AnyIndex::Mask;
  } else {
    // An empty list or tuple ([] converts to float64) indexes as NumPy's intp; an array of
    // another dtype, even empty, is an IndexError, as NumPy.
    const bool empty_seq = arr.size() == 0 && (PyList_Check(items[pos].ptr()) || PyTuple_Check(items[pos].ptr()));
    UMA_CHECK(is_integer(arr.dtype()) || empty_seq, Index,
              "arrays used as indices must be of integer (or boolean) type, got ", dtype_name(arr.dtype()));
    if (!is_integer(arr.dtype())) arr = ops::astype(arr, DType::Int64);
    r.kind = AnyIndex::Take;
  }
  r.array = arr;
  r.axis = pos;
  return r;
}

namespace {

// One item of an index as NumPy reads it: None, Ellipsis, slices and integers are basic; bools,
// lists, tuples, uma and NumPy arrays of any rank, and other array objects of rank >= 1 (or 0-d
// bool) are index arrays.
IndexKey key_item(nb::handle h) {
  IndexKey k;
  bool array = false;
  if (PyBool_Check(h.ptr()) || nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h) || nb::isinstance<Array>(h) ||
      is_ndarray(h)) {
    array = true;
  } else if (!PyLong_Check(h.ptr()) && !h.is_none() && !PySlice_Check(h.ptr()) && h.ptr() != Py_Ellipsis &&
             nb::hasattr(h, "ndim") && nb::hasattr(h, "dtype") &&
             (nb::hasattr(h, "__array_interface__") || nb::hasattr(h, "__dlpack__") || nb::hasattr(h, "__array__"))) {
    // another library's array or a NumPy scalar: an integer scalar is an integer (operator.index)
    array = nb::cast<int64_t>(h.attr("ndim")) > 0 || !PyIndex_Check(h.ptr());
  }
  if (!array) {
    UMA_CHECK(h.is_none() || h.ptr() == Py_Ellipsis || PySlice_Check(h.ptr()) || PyIndex_Check(h.ptr()), Index,
              "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays "
              "are valid indices, got ", py_repr(h));
    k.item = parse_index(h)[0];
    return k;
  }
  Array arr = index_array(h);
  // An empty list or tuple ([] converts to float64) indexes as NumPy's intp; an array of another
  // dtype, even empty, is refused by the op, as NumPy.
  if (arr.size() == 0 && (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) && !is_integer(arr.dtype()) &&
      arr.dtype() != DType::Bool)
    arr = ops::astype(arr, DType::Int64);
  k.array = arr;
  return k;
}

}  // namespace

std::vector<IndexKey> parse_key(nb::handle key) {
  std::vector<IndexKey> items;
  if (nb::isinstance<nb::tuple>(key)) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(key_item(h));
  } else {
    items.push_back(key_item(key));
  }
  return items;
}

Array getitem_any(const Array& a, nb::handle key) { return ops::index(a, parse_key(key)); }

namespace {

Array update_any(const char* op, nb::handle x, nb::handle key, nb::handle y, bool inc) {
  Array X = operand(x, nullptr, op);
  Array Y = operand(y, &X, op);
  AnyIndex ix = parse_any_index(key);
  switch (ix.kind) {
    case AnyIndex::Basic: return ops::update_basic(X, ix.basic, Y, inc);
    case AnyIndex::Mask: return ops::update_mask(X, ix.array, Y, inc);
    case AnyIndex::Take:
      UMA_CHECK(ix.axis < X.ndim(), Index, op, ": too many indices for array: array is ", X.ndim(),
                "-dimensional, but ", ix.axis + 1, " were indexed");
      return ops::update_take(X, ix.array, ix.axis, Y, inc);
  }
  return Array();
}

}  // namespace

namespace {
// The docstring of an elementwise op, made from its table row (uma/ops/table.h): what it
// computes, the NumPy function it follows and its dtype rule. Built once per op; nanobind keeps
// the pointer.
const char* elementwise_doc(const OpRow& r, const RuleRow& rule_row, bool binary) {
  static std::vector<std::unique_ptr<std::string>> docs;
  std::string d = std::string("Elementwise ") + r.doc + (*r.numpy ? std::string(" (numpy.") + r.numpy + ")" : "") +
                  ".\nResult dtype: " + rule_row.result + ".\n" +
                  (binary ? "NumPy broadcasting and NumPy 2 (NEP 50) promotion; ValueError if shapes do not broadcast."
                          : "");
  docs.push_back(std::make_unique<std::string>(std::move(d)));
  return docs.back()->c_str();
}
const char* elementwise_doc(BinaryOp op) {
  return elementwise_doc(row(op), kBinaryRuleRows[static_cast<int>(rule(op))], true);
}
const char* elementwise_doc(UnaryOp op) {
  return elementwise_doc(row(op), kUnaryRuleRows[static_cast<int>(rule(op))], false);
}

// uma._core._op_table(): the op table as data, for the graph and the linkers.
nb::list op_table() {
  nb::list out;
  auto grad_name = [](Grad g) { return g == Grad::Smooth ? "smooth" : g == Grad::Zero ? "zero" : "none"; };
  auto add = [&](const OpRow& r, int arity, const RuleRow& rr, bool bool_out) {
    nb::dict d;
    d["name"] = r.name;
    d["arity"] = arity;
    d["rule"] = rr.name;
    d["grad"] = grad_name(r.grad);
    d["numpy"] = r.numpy;
    d["doc"] = r.doc;
    d["bool_result"] = bool_out;
    out.append(d);
  };
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const BinaryOp op = static_cast<BinaryOp>(k);
    add(row(op), 2, kBinaryRuleRows[static_cast<int>(rule(op))], bool_result(op));
  }
  for (int k = 0; k < kNumUnaryOps; ++k) {
    const UnaryOp op = static_cast<UnaryOp>(k);
    add(row(op), 1, kUnaryRuleRows[static_cast<int>(rule(op))], bool_result(op));
  }
  return out;
}
}  // namespace

void warn_discarded_imaginary(DType from, DType to) {
  if (!is_complex(from) || is_complex(to) || to == DType::Bool) return;
  nb::object category = nb::module_::import_("numpy.exceptions").attr("ComplexWarning");
  if (PyErr_WarnEx(category.ptr(), "Casting complex values to real discards the imaginary part", 1) < 0)
    throw nb::python_error();  // warnings turned into errors
}

Array astype_for_python(const Array& a, DType t, bool copy) {
  if (!copy && t == a.dtype()) return a;
  warn_discarded_imaginary(a.dtype(), t);
  return ops::astype(a, t);
}

void bind_ops(nb::module_& m) {
  // ---- creation ----
  m.def("zeros", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "zeros");
        return ops::zeros(shape_of(shape), to_dtype(dtype).value_or(DType::Float64), dev);
      }, param("shape"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Array of the given shape (int or tuple) filled with 0; dtype defaults to float64.");
  m.def("ones", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "ones");
        return ops::ones(shape_of(shape), to_dtype(dtype).value_or(DType::Float64), dev);
      }, param("shape"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Array of the given shape filled with 1; dtype defaults to float64.");
  m.def("empty", [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "empty");
        return Array::empty(shape_of(shape), to_dtype(dtype).value_or(DType::Float64), dev);
      }, param("shape"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Uninitialised array of the given shape from the caching allocator; dtype defaults to float64.");
  m.def("full", [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "full");
        return full_impl(shape_of(shape), value, to_dtype(dtype), dev, "full");
      }, param("shape"), param("fill_value"), param("dtype") = nb::none(), nb::kw_only(),
      param("device") = nb::none(),
      "Array filled with fill_value; dtype defaults to that of the value (bool, int64, float64, complex128).\n"
      "OverflowError if an int does not fit the dtype.");
  m.def("zeros_like", [](nb::handle a, nb::handle dtype, nb::handle device) {
        Array A = operand(a, nullptr, "zeros_like");
        return ops::zeros(A.shape(), to_dtype(dtype).value_or(A.dtype()), like_device(device, A, "zeros_like"));
      }, param("a"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Zeros: Array of a's shape on a's device (or device=), of a's dtype unless dtype= is given (Array API standard).");
  m.def("ones_like", [](nb::handle a, nb::handle dtype, nb::handle device) {
        Array A = operand(a, nullptr, "ones_like");
        return ops::ones(A.shape(), to_dtype(dtype).value_or(A.dtype()), like_device(device, A, "ones_like"));
      }, param("a"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Ones: Array of a's shape on a's device (or device=), of a's dtype unless dtype= is given (Array API standard).");
  m.def("empty_like", [](nb::handle a, nb::handle dtype, nb::handle device) {
        Array A = operand(a, nullptr, "empty_like");
        return Array::empty(A.shape(), to_dtype(dtype).value_or(A.dtype()), like_device(device, A, "empty_like"));
      }, param("a"), param("dtype") = nb::none(), nb::kw_only(), param("device") = nb::none(),
      "Uninitialised, from the caching allocator: Array of a's shape on a's device (or device=), of a's dtype unless dtype= is given (Array API standard).");
  m.def("full_like", [](nb::handle a, nb::handle value, nb::handle dtype, nb::handle device) {
        Array A = operand(a, nullptr, "full_like");
        return full_impl(A.shape(), value, to_dtype(dtype).value_or(A.dtype()), like_device(device, A, "full_like"), "full_like");
      }, param("a"), param("fill_value"), param("dtype") = nb::none(), nb::kw_only(),
      param("device") = nb::none(),
      "Filled with fill_value: Array of a's shape on a's device (or device=), of a's dtype unless dtype= is given (Array API standard).\n"
      "OverflowError if an int does not fit the dtype.");
  // arange/linspace arguments: Python and NumPy integers (bools included) as exact integers,
  // other real numbers as float64, complex numbers as complex.
  auto range_arg = [](nb::handle h, const char* api) -> Scalar {
    if (is_python_scalar(h)) return to_scalar(h);
    auto not_a_number = [&]() -> Scalar {
      PyErr_Clear();
      UMA_FAIL(Type, api, ": expected a number, got ", py_repr(h).substr(0, 80));
    };
    if (!PyNumber_Check(h.ptr())) return not_a_number();  // float("3") would parse a string
    if (PyIndex_Check(h.ptr())) {
      nb::object i = nb::steal(PyNumber_Index(h.ptr()));
      if (i.is_valid()) return to_scalar(i);
      PyErr_Clear();  // a 0-d float array defines __index__ and refuses it: read it as a number below
    }
    if (PyComplex_Check(h.ptr()) || (nb::hasattr(h, "dtype") && py_str(h.attr("dtype").attr("kind")) == "c")) {
      nb::object c = nb::steal(PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyComplex_Type), h.ptr()));
      if (!c.is_valid()) return not_a_number();
      const Py_complex v = PyComplex_AsCComplex(c.ptr());
      return Scalar::from_complex({v.real, v.imag});
    }
    nb::object f = nb::steal(PyNumber_Float(h.ptr()));
    if (!f.is_valid()) return not_a_number();
    return Scalar::from_float(PyFloat_AsDouble(f.ptr()));
  };
  m.def("arange", [range_arg](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "arange");
        nb::handle first = stop.is_none() ? nb::int_(0).release() : start, last = stop.is_none() ? start : stop;
        nb::object hold_first = stop.is_none() ? nb::steal(first) : nb::borrow(first);
        Scalar lo, hi, st;
        try {
          lo = range_arg(first, "arange");
          hi = range_arg(last, "arange");
          st = range_arg(step, "arange");
        } catch (const Error& e) {
          // An integer beyond 64 bits (NumPy: an object array). A range too long for any array is
          // NumPy's ValueError; a short one has no integer dtype: the OverflowError stands.
          if (e.kind() != ErrorKind::Overflow) throw;
          const double len = std::ceil((nb::cast<double>(nb::float_(last)) - nb::cast<double>(nb::float_(first))) /
                                       nb::cast<double>(nb::float_(step)));
          UMA_CHECK(!(len >= 0x1p62), Value, "arange: Maximum allowed size exceeded");
          // Only the stop beyond 64 bits, integers, and a dtype given: NumPy stores start and
          // start + step in the dtype and takes the length from Python's integers.
          const std::optional<DType> given = to_dtype(dtype);
          if (!given || is_complex(*given) || !PyIndex_Check(first.ptr()) || !PyIndex_Check(last.ptr()) ||
              !PyIndex_Check(step.ptr()))
            throw;
          Scalar a, s;
          try {
            a = range_arg(first, "arange");
            s = range_arg(step, "arange");
          } catch (const Error&) {
            throw e;
          }
          auto index = [](nb::handle h) {
            nb::object i = nb::steal(PyNumber_Index(h.ptr()));
            if (!i.is_valid()) throw nb::python_error();
            return i;
          };
          const nb::object A = index(first), B = index(last), S = index(step);
          UMA_CHECK(PyObject_IsTrue(S.ptr()) == 1, Value, "arange: step must not be zero");
          const nb::object gap = nb::steal(PyNumber_Subtract(A.ptr(), B.ptr()));
          const nb::object q = nb::steal(PyNumber_FloorDivide(gap.ptr(), S.ptr()));  // -ceil((B - A) / S)
          int over = 0;
          const long long neg_n = PyLong_AsLongLongAndOverflow(q.ptr(), &over);
          UMA_CHECK(over >= 0 && neg_n > -(1LL << 62), Value, "arange: Maximum allowed size exceeded");
          const int64_t n = over > 0 || neg_n >= 0 ? 0 : -neg_n;
          return on_device(ops::arange_count(a, s, n, *given), dev);
        }
        const DType t = to_dtype(dtype).value_or(ops::arange_default_dtype(lo, hi, st));
        return on_device(ops::arange(lo, hi, st, t), dev);  // computed on the host (NumPy's fill rule)
      }, param("start"), param("stop") = nb::none(), param("step") = 1, param("dtype") = nb::none(),
      nb::kw_only(), param("device") = nb::none(),
      "Evenly spaced values in [start, stop) (NumPy arange): ceil((stop - start) / step) elements, exact\n"
      "for integer arguments; int64 when all arguments are integers that int64 holds, else float64.\n"
      "Element i is start + i * step computed as NumPy does (in the dtype's arithmetic from the first\n"
      "two elements). ValueError for step == 0 and for more elements than an array can hold;\n"
      "OverflowError when start or start + step does not fit an integer dtype; TypeError for\n"
      "complex arguments and bool ranges longer than 2.");
  m.def("linspace", [range_arg](nb::handle start, nb::handle stop, nb::handle num, nb::handle dtype, nb::handle device,
                                bool endpoint) {
        const Device dev = target_device(device, "linspace");
        const Scalar a = range_arg(start, "linspace"), b = range_arg(stop, "linspace");
        // NumPy's default: result_type(start, stop, float(num)), Python numbers weak (NEP 50), so
        // float32 bounds give float32 and integer ones float64.
        std::optional<DType> typed;
        for (nb::handle h : {start, stop}) {
          const char kind = numpy_scalar_kind(h);  // a NumPy number scalar: bool, int, float, complex
          if (nb::isinstance<Array>(h) || is_ndarray(h) || (kind != 0 && std::strchr("biufc", kind) != nullptr)) {
            const DType d = *to_dtype(h.attr("dtype"));
            typed = typed ? promote_types(*typed, d) : d;
          }
        }
        const ScalarKind weak = a.kind == ScalarKind::Complex || b.kind == ScalarKind::Complex ? ScalarKind::Complex
                                                                                                 : ScalarKind::Float;
        const DType fallback = typed ? promote_weak(*typed, weak) : weak == ScalarKind::Complex ? DType::Complex128 : DType::Float64;
        const DType t = to_dtype(dtype).value_or(fallback);
        return on_device(ops::linspace(a, b, int_arg(num, "linspace", "num"), endpoint, t), dev);
      }, param("start"), param("stop"), param("num") = 50, param("dtype") = nb::none(),
      nb::kw_only(), param("device") = nb::none(), nb::arg("endpoint") = true,
      "num evenly spaced values from start to stop, shape (num,) (NumPy linspace; Array API standard,\n"
      "linspace): computed in float64 (complex128 for complex bounds) as start + i * step with\n"
      "step = (stop - start) / (num - 1) (num when endpoint=False), the last value exactly stop when\n"
      "endpoint, then rounded to the dtype: by default NumPy's result_type(start, stop, float(num)) with\n"
      "Python numbers weak (float64 for Python numbers, float32 for float32 bounds); integer dtypes\n"
      "take the floor. ValueError for num < 0,\n"
      "TypeError for a non-integer num or a non-number bound.");
  m.def("eye", [](nb::handle n, nb::handle mm, nb::handle k, nb::handle dtype, nb::handle device) {
        const Device dev = target_device(device, "eye");
        const int64_t rows = int_arg(n, "eye", "N");
        return on_device(ops::eye(rows, mm.is_none() ? rows : int_arg(mm, "eye", "M"), int_arg(k, "eye", "k"),
                                  to_dtype(dtype).value_or(DType::Float64)),
                         dev);
      }, param("n"), param("m") = nb::none(), param("k") = 0, param("dtype") = nb::none(), nb::kw_only(),
      param("device") = nb::none(), "(n, m) array with ones on diagonal k, zeros elsewhere; dtype defaults to float64.");

  // ---- elementwise: every op of the op table (uma/ops/table.h), under its name ----
  m.def("_op_table", &op_table,
        "The elementwise ops (uma/ops/table.h) as a list of dicts: name, arity, rule (the dtype rule's\n"
        "name), grad ('smooth', 'zero' or 'none'), numpy (NumPy's function name or ''), doc, bool_result.");
  m.def("_result_dtype", [](const std::string& name, nb::args dtypes) -> nb::object {
        std::vector<DType> ts;
        for (nb::handle d : dtypes) ts.push_back(required_dtype(d, "_result_dtype"));
        if (auto b = ops::binary_op_named(name)) {
          UMA_CHECK(ts.size() == 2, Type, name, ": expected 2 dtypes, got ", ts.size());
          return dtype_object(ops::binary_result_dtype(*b, ts[0], ts[1]));
        }
        const auto u = ops::unary_op_named(name);
        const auto r = name == "cumsum" || name == "cumprod" ? std::optional<ReduceOp>(ReduceOp::Sum)
                                                             : ops::reduce_op_named(name);
        const bool stat = name == "var" || name == "std" || name == "logsumexp";
        UMA_CHECK(u || r || stat, Value, "_result_dtype: '", name, "' is not an elementwise op or a reduction");
        UMA_CHECK(ts.size() == 1, Type, name, ": expected 1 dtype, got ", ts.size());
        if (u) return dtype_object(ops::unary_result_dtype(*u, ts[0]));
        return dtype_object(r ? ops::reduce_result_dtype(*r, ts[0]) : ops::stat_result_dtype(ts[0]));
      }, nb::arg("name"), nb::arg("dtypes"),
      "The result dtype of op `name` on arrays of `dtypes` (NumPy 2's, the one rule the eager op\n"
      "follows): the elementwise ops of the op table, the reductions (sum ... any), cumsum, cumprod,\n"
      "var, std, logsumexp. TypeError where the op does not accept them.");
  m.def("_broadcast_shapes", [](const std::string& op, nb::args shapes) {
        std::vector<Shape> ss;
        for (nb::handle s : shapes) ss.push_back(static_shape_of(s));
        std::vector<const Shape*> ps;
        for (const Shape& s : ss) ps.push_back(&s);
        return static_shape_object(ops::broadcast_shapes(ps, op.c_str()));
      }, nb::arg("op"), nb::arg("shapes"),
      "NumPy broadcasting of static `shapes` (tuples of lengths and Nones, None: known only at run\n"
      "time) with PyTensor's rule that only static length-1 axes broadcast: an axis is its known\n"
      "length other than 1, else None where an operand's length is None, else 1. ValueError\n"
      "\"<op>: operands could not be broadcast together with shapes ...\" when known lengths differ.");
  m.def("_result_shape", [](const std::string& name, nb::args shapes, nb::kwargs params) {
        std::vector<Shape> ss;
        for (nb::handle s : shapes) ss.push_back(static_shape_of(s));
        RuleParams p{nb::dict(params)};
        const Shape out = result_shape(name, ss, p);
        UMA_CHECK(p.kw.size() == 0, Type, "_result_shape: ", name, " takes no parameter ",
                  py_repr(nb::list(p.kw.keys())));
        return static_shape_object(out);
      }, nb::arg("name"), nb::arg("shapes"), nb::arg("params"),
      "The static result shape of op `name` on operands of static `shapes` (tuples of lengths and\n"
      "Nones, None: known only at run time), by the shape rule the eager op follows (uma/ops.h,\n"
      "src/ops/shape_rules.cpp). The elementwise ops of the op table, where and clip broadcast\n"
      "(_broadcast_shapes); zeros_like, ones_like, full_like keep the shape; the reductions (sum ... any,\n"
      "argmax, argmin, var, std, logsumexp) over `axis` (None: all) with `keepdims`; cumsum and cumprod\n"
      "along `axis` (None: flattened); matmul, outer, diagonal (`offset`, `axis1`, `axis2`), diag (`k`);\n"
      "reshape (`shape`), reshape_like (x, target), transpose / permute_dims (`axes`, None: reversed),\n"
      "expand_dims (`axis`), squeeze (`axis`, None: the static length-1 axes), broadcast_to and\n"
      "broadcast_like (x, target), concatenate and stack (`axis`), segment (g, *parts; `axis`, `part`);\n"
      "getitem (`index`: a basic index), getitem_grad (g, x; `index`), take (x, indices; `axis`),\n"
      "mask_select (x, mask); softmax and log_softmax (`axis`), softmax_cross_entropy (logits, labels)\n"
      "and its _grad (g, logits, labels), one_hot (`depth`); diagonal_embed (g, x; as diagonal).\n"
      "Errors as the rule's (the eager op's): ValueError for shapes that do not fit, IndexError for a\n"
      "bad index, AxisError for a bad axis, TypeError for a wrong number of shapes or parameters.");
  m.def("_split_points", [](nb::handle shape, int64_t sections, int64_t axis) {
        return ops::split_points(static_shape_of(shape), sections, axis);
      }, param("shape"), nb::arg("sections"), nb::arg("axis"),
      "The split points of np.split of an array of static `shape` into `sections` equal parts along\n"
      "`axis` (the rule eager split follows). ValueError when the axis' length is unknown or does not\n"
      "divide; AxisError.");
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const BinaryOp op = static_cast<BinaryOp>(k);
    m.def(row(op).name, [op](nb::handle a, nb::handle b) {
      if (auto r = compare_out_of_range(op, a, b)) return *r;
      auto [A, B] = operands(a, b, ops::op_name(op));
      return ops::binary(op, A, B);
    }, param("x1"), param("x2"), elementwise_doc(op));
  }
  for (int k = 0; k < kNumUnaryOps; ++k) {
    const UnaryOp op = static_cast<UnaryOp>(k);
    m.def(row(op).name, [op](nb::handle a) { return ops::unary(op, operand(a, nullptr, ops::op_name(op))); },
          param("x"), elementwise_doc(op));
  }
  m.def("round", [](nb::handle a, nb::handle decimals) {
        return ops::round(operand(a, nullptr, "round"), int_arg(decimals, "round", "decimals"));
      },
        param("a"), param("decimals") = 0,
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
      }, param("a"), param("a_min"), param("a_max"),
      "numpy.clip(a, a_min, a_max): each element limited to [a_min, a_max] (t = a < a_min ? a_min : a;\n"
      "t > a_max ? a_max : t; NaN propagates). None drops a bound (maximum/minimum, as NumPy); an\n"
      "integer array drops a Python int bound beyond its range. Result dtype by NumPy 2 promotion.");
  m.def("where", [](nb::handle c, nb::handle x, nb::handle y) {
        Array C = operand(c, nullptr, "where");
        auto [X, Y] = operands(x, y, "where");
        return ops::where(C, X, Y);
      }, param("condition"), param("x"), param("y"),
      "Elementwise condition ? x : y, broadcasting all three; result dtype promote(x, y).");
  m.def("one_hot", [](nb::handle idx, nb::handle depth, nb::handle dtype) {
        return ops::one_hot(operand(idx, nullptr, "one_hot"), int_arg(depth, "one_hot", "depth"),
                            to_dtype(dtype).value_or(DType::Float64));
      }, param("indices"), param("depth"), param("dtype") = nb::none(),
      "One-hot encoding: shape indices.shape + (depth,), 1 where j == index, else 0 (indices outside\n"
      "[0, depth) give all-zero rows); dtype defaults to float64. TypeError for non-integer indices.");

  m.def("softmax_cross_entropy", [](nb::handle z, nb::handle y, bool check_labels) {
        Array Z = operand(z, nullptr, "softmax_cross_entropy"), Y = operand(y, nullptr, "softmax_cross_entropy");
        return ops::softmax_cross_entropy(Z, Y, check_labels);
      }, param("logits"), param("labels"), nb::kw_only(), nb::arg("check_labels") = true,
      "Per-example softmax cross-entropy: logits (N, C) float32/float64, integer labels (N,) ->\n"
      "log(sum_j exp(logits[i, j])) - logits[i, labels[i]], shape (N,), computed stably in one pass\n"
      "per row. ValueError for a label outside [0, C) or mismatched shapes; TypeError for other dtypes.\n"
      "check_labels=False (cuda only; ignored on the CPU) defers the label check: no wait for the GPU,\n"
      "rows with a bad label come out NaN, and the caller must call _check_labels before using the result.\n"
      "(TensorFlow sparse_softmax_cross_entropy_with_logits; PyTorch cross_entropy(reduction='none').)");
  m.def("softmax_cross_entropy_grad", [](nb::handle g, nb::handle z, nb::handle y, bool check_labels) {
        Array G = operand(g, nullptr, "softmax_cross_entropy_grad"), Z = operand(z, nullptr, "softmax_cross_entropy_grad"),
              Y = operand(y, nullptr, "softmax_cross_entropy_grad");
        return ops::softmax_cross_entropy_grad(G, Z, Y, check_labels);
      }, param("grad"), param("logits"), param("labels"), nb::kw_only(), nb::arg("check_labels") = true,
      "Gradient of softmax_cross_entropy with respect to the logits: grad[i] * (softmax(logits)[i, j] -\n"
      "(j == labels[i])), shape (N, C). check_labels as for softmax_cross_entropy.");
  m.def("_check_labels", [](nb::handle y, int64_t nclasses, const std::string& op) {
        Array Y = operand(y, nullptr, op.c_str());
        ops::check_labels(op.c_str(), Y, nclasses);
      }, param("labels"), nb::arg("nclasses"), nb::arg("op") = "softmax_cross_entropy",
      "ValueError naming the first of the integer labels (1-d) outside [0, nclasses) and its position\n"
      "(op names the op in the message); TypeError for non-integer labels. On a cuda device it waits for\n"
      "the device's stream (a 4-byte status read, not counted as a transfer).");

  // ---- reductions ----
#define UMA_RED(name, OP)                                                                              \
  m.def(name, [](nb::handle a, nb::handle axis, Flag keepdims) {                                       \
    check_arg_axis(ReduceOp::OP, axis);                                                                \
    Array A = operand(a, nullptr, name);                                                               \
    return ops::reduce(ReduceOp::OP, A, ufunc_axes(A, axis), keepdims);                               \
  }, param("a"), param("axis") = nb::none(), param("keepdims") = false,                          \
  "Reduction " name " over axis (None: all; int or tuple), NumPy 2 result dtypes. IndexError for a\n" \
  "bad axis.");
  UMA_RED("sum", Sum)
  m.def("mean", [](nb::handle a, nb::handle axis, Flag keepdims) {  // mean: no 0-d axis quirk (NumPy)
    return ops::reduce(ReduceOp::Mean, operand(a, nullptr, "mean"), axes_of(axis), keepdims);
  }, param("a"), param("axis") = nb::none(), param("keepdims") = false,
  "Arithmetic mean over axis (None: all; int or tuple): float64 for bool/ints, else the input's dtype.");
  UMA_RED("max", Max) UMA_RED("min", Min) UMA_RED("prod", Prod)
  UMA_RED("argmax", ArgMax) UMA_RED("argmin", ArgMin) UMA_RED("all", All) UMA_RED("any", Any)
#undef UMA_RED

  // ---- linear algebra ----
  m.def("matmul", [](nb::handle a, nb::handle b) {
        auto [A, B] = operands(a, b, "matmul");
        return ops::matmul(A, B);
      }, param("x1"), param("x2"),
      "Matrix product with NumPy matmul semantics (1-D promotion, broadcast batch axes); OpenBLAS gemm\n"
      "for float32/float64. ValueError on mismatched core dimensions.");
  m.def("dot", [](nb::handle a, nb::handle b) {
        auto [A, B] = operands(a, b, "dot");
        UMA_CHECK(A.ndim() <= 2 && B.ndim() <= 2, Value, "dot: only arrays of up to 2 dimensions are supported, use matmul");
        if (A.ndim() == 0 || B.ndim() == 0) return ops::binary(BinaryOp::Multiply, A, B);
        return ops::matmul(A, B);
      }, param("a"), param("b"), "Dot product of arrays of up to 2 dimensions (NumPy dot).");

  // ---- shape ----
  m.def("reshape", [](nb::handle a, nb::handle shape) { return ops::reshape(operand(a, nullptr, "reshape"), shape_of(shape)); },
        param("a"), param("shape"), "New shape (one entry may be -1); a view when the layout allows, else a copy.");
  m.def("transpose", [](nb::handle a, nb::handle axes) {
        const Array x = operand(a, nullptr, "transpose");
        return axes.is_none() ? ops::transpose(x) : ops::transpose(x, nb::cast<std::vector<int64_t>>(axes));
      }, param("a"), param("axes") = nb::none(), "Permuted view (axes=None reverses them).");
  m.def("broadcast_to", [](nb::handle a, nb::handle shape) { return ops::broadcast_to(operand(a, nullptr, "broadcast_to"), shape_of(shape)); },
        param("a"), param("shape"), "Read-only broadcast view (NumPy broadcast_to).");
  m.def("concatenate", [](nb::handle arrays, nb::handle axis) {
        std::vector<Array> v = array_list(arrays, "concatenate");
        UMA_CHECK(!PyBool_Check(axis.ptr()), Type, "concatenate: axis must be an integer, got ", py_repr(axis));  // NumPy
        if (!axis.is_none()) return ops::concatenate(v, int_arg(axis, "concatenate", "axis", INT64_MIN));
        for (Array& a : v) a = ops::reshape(a, {a.size()});  // axis=None: the flattened arrays
        return ops::concatenate(v, 0);
      }, param("arrays"), param("axis") = 0,
      "Joins arrays along an existing axis (None: the flattened arrays, NumPy and the Array API\n"
      "standard); dtype by promotion.");
  m.def("stack", [](nb::handle arrays, int64_t axis) { return ops::stack(array_list(arrays, "stack"), axis); },
        param("arrays"), nb::arg("axis") = 0, "Joins same-shaped arrays along a new axis.");
  m.def("expand_dims", [](nb::handle a, int64_t axis) { return ops::expand_dims(operand(a, nullptr, "expand_dims"), axis); },
        param("a"), nb::arg("axis"), "View with a new size-1 axis at position axis.");
  m.def("squeeze", [](nb::handle a, nb::handle axis) {
        return ops::squeeze(operand(a, nullptr, "squeeze"), axes_of(axis));
      }, param("a"), param("axis") = nb::none(), "View without size-1 axes (all, or those named).");
  m.def("astype", [](nb::handle a, nb::handle dtype, bool copy) {
        return astype_for_python(operand(a, nullptr, "astype"), required_dtype(dtype, "astype"), copy);
      }, param("x"), param("dtype"), nb::kw_only(), nb::arg("copy") = true,
      "Values converted to dtype (Array API astype); never reinterprets bits. TypeError when dtype\n"
      "is None or not a dtype uma knows.");

  // ---- statistics, cumulative ops, linear algebra, split, indexing, nn ----
#define UMA_STAT(name, FN)                                                                               \
  m.def(name, [](nb::handle a, nb::handle axis, nb::handle ddof, Flag keepdims, nb::handle correction) { \
    return ops::FN(operand(a, nullptr, name), axes_of(axis), ddof_of(name, ddof, correction), keepdims); \
  }, param("a"), param("axis") = nb::none(), param("ddof") = 0, param("keepdims") = false,          \
  nb::kw_only(), param("correction") = nb::none(),                                              \
  "NumPy " name " over axis (None: all; int or tuple) with ddof (or the Array API's correction):\n"       \
  "var = sum(|x - mean|**2) / max(n - ddof, 0), std = sqrt(var). Result float64 for bool/ints, the\n"     \
  "real dtype for complex inputs, else the input's dtype. IndexError for a bad axis; ValueError if\n"    \
  "both ddof and correction are given; TypeError if ddof or correction is not a number (a 0-d array\n"  \
  "is one); OverflowError for an integer ddof beyond int64.");
  UMA_STAT("var", var) UMA_STAT("std", std_dev)
#undef UMA_STAT
  m.def("logsumexp", [](nb::handle a, nb::handle axis, Flag keepdims) {
        Array A = operand(a, nullptr, "logsumexp");
        return ops::logsumexp(A, ufunc_axes(A, axis), keepdims);
      }, param("a"), param("axis") = nb::none(), param("keepdims") = false,
      "log(sum(exp(a), axis)) computed stably (scipy.special.logsumexp): float64 for bool/ints, else\n"
      "the input's float dtype (float16/bfloat16 computed in double and rounded). TypeError for complex.");
  m.def("cumsum", [](nb::handle a, nb::handle axis) { Array A = operand(a, nullptr, "cumsum");
        return ops::cumsum(A, ufunc_axis(A, one_axis(axis))); },
        param("a"), param("axis") = nb::none(),
        "Cumulative sum along axis (None: of the flattened array), NumPy's dtype rule (bool/small ints\n"
        "-> int64, unsigned -> uint64).");
  m.def("cumprod", [](nb::handle a, nb::handle axis) { Array A = operand(a, nullptr, "cumprod");
        return ops::cumprod(A, ufunc_axis(A, one_axis(axis))); },
        param("a"), param("axis") = nb::none(), "Cumulative product along axis (as cumsum).");
  m.def("outer", [](nb::handle a, nb::handle b) {
        auto [A, B] = operands(a, b, "outer");
        return ops::outer(A, B);
      }, param("a"), param("b"), "Outer product of the flattened inputs, shape (a.size, b.size) (NumPy outer).");
  m.def("diag", [](nb::handle v, int64_t k) { return ops::diag(operand(v, nullptr, "diag"), k); },
        param("v"), nb::arg("k") = 0,
        "NumPy diag: 1-d v -> 2-d array with v on diagonal k; 2-d v -> a copy of its diagonal k.\n"
        "ValueError for other ranks.");
  m.def("diagonal", [](nb::handle a, int64_t offset, int64_t axis1, int64_t axis2) {
        return ops::diagonal(operand(a, nullptr, "diagonal"), offset, axis1, axis2);
      }, param("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      "Read-only view of a diagonal, appended as the last axis (NumPy diagonal).");
  m.def("trace", [](nb::handle a, int64_t offset, int64_t axis1, int64_t axis2) {
        return ops::trace(operand(a, nullptr, "trace"), offset, axis1, axis2);
      }, param("a"), nb::arg("offset") = 0, nb::arg("axis1") = 0, nb::arg("axis2") = 1,
      "Sum along a diagonal (NumPy trace); dtype as sum's. ValueError if ndim < 2.");
  m.def("split", [](nb::handle a, nb::handle ios, int64_t axis) {
        Array A = operand(a, nullptr, "split");
        if (PyIndex_Check(ios.ptr()) && !PyBool_Check(ios.ptr()) && !nb::isinstance<Array>(ios))
          return ops::split_sections(A, nb::cast<int64_t>(ios), axis);
        return ops::split_at(A, nb::cast<std::vector<int64_t>>(ios), axis);
      }, param("ary"), param("indices_or_sections"), nb::arg("axis") = 0,
      "NumPy split: an int N gives N equal views along axis (ValueError if the axis does not divide);\n"
      "a sequence of split points gives len+1 views (points clamp like slice bounds).");
  m.def("take", [](nb::handle a, nb::handle indices, nb::handle axis) {
        Array idx = asarray(indices, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "take");
        if (idx.size() == 0 && !is_integer(idx.dtype()) && (PyList_Check(indices.ptr()) || PyTuple_Check(indices.ptr())))
          idx = ops::astype(idx, DType::Int64);  // [] as NumPy's intp; an empty float array stays a TypeError
        Array A = operand(a, nullptr, "take");
        return ops::take(A, idx, ufunc_axis(A, one_axis(axis)));
      }, param("a"), param("indices"), param("axis") = nb::none(),
      "NumPy take: elements at integer indices along axis (None: of the flattened array), shape\n"
      "a.shape[:axis] + indices.shape + a.shape[axis+1:]. IndexError naming an out-of-bounds index.");
  m.def("set_subtensor", [](nb::handle x, nb::handle index, nb::handle y) { return update_any("set_subtensor", x, index, y, false); },
        param("x"), param("index"), param("y"),
        "Functional update (PyTensor's set_subtensor, eager three-argument form): a copy of x with x[index]\n"
        "replaced by y. index: basic (ints, slices, None, ...), one integer array after full slices, or a\n"
        "boolean mask. y broadcasts to x[index] and is cast to x's dtype (TypeError unless same_kind).");
  m.def("inc_subtensor", [](nb::handle x, nb::handle index, nb::handle y) { return update_any("inc_subtensor", x, index, y, true); },
        param("x"), param("index"), param("y"),
        "Functional increment (PyTensor's inc_subtensor): a copy of x with y added at x[index]; repeated\n"
        "integer indices accumulate (np.add.at).");
  m.def("softmax", [](nb::handle x, int64_t axis) { return ops::softmax(operand(x, nullptr, "softmax"), axis, false); },
        param("x"), nb::arg("axis") = -1,
        "exp(x) / sum(exp(x), axis), stable; float inputs only (float16/bfloat16 computed in float32).");
  m.def("log_softmax", [](nb::handle x, int64_t axis) { return ops::softmax(operand(x, nullptr, "log_softmax"), axis, true); },
        param("x"), nb::arg("axis") = -1, "x - logsumexp(x, axis), stable; float inputs only.");
  // ---- sorting, sets and searching (Array API standard 2025.12; uma/ops.h) ----
  m.def("sort", [](nb::handle x, nb::handle axis, bool descending, bool stable) {
        return ops::sort(operand(x, nullptr, "sort"), axis_int(axis), descending, stable);
      }, param("x"), nb::kw_only(), param("axis") = -1, nb::arg("descending") = false, nb::arg("stable") = true,
      "A sorted copy of x along axis (uma.sort documents the order).");
  m.def("argsort", [](nb::handle x, nb::handle axis, bool descending, bool stable) {
        return ops::argsort(operand(x, nullptr, "argsort"), axis_int(axis), descending, stable);
      }, param("x"), nb::kw_only(), param("axis") = -1, nb::arg("descending") = false, nb::arg("stable") = true,
      "The int64 positions along axis that sort x (uma.argsort documents the order).");
  m.def("_unique", [](nb::handle x, bool indices, bool inverse, bool counts, const std::string& op) {
        ops::UniqueResult r = ops::unique(operand(x, nullptr, op.c_str()), indices, inverse, counts, op.c_str());
        auto opt = [](const Array& a, bool want) { return want ? nb::cast(a) : nb::none(); };
        return nb::make_tuple(r.values, opt(r.indices, indices), opt(r.inverse_indices, inverse), opt(r.counts, counts));
      }, param("x"), nb::arg("indices"), nb::arg("inverse"), nb::arg("counts"), nb::arg("op"),
      "(values, indices, inverse_indices, counts) of the flattened x, None for those not asked for\n"
      "(the uma.unique_* functions).");
  m.def("nonzero", [](nb::handle x) {
        nb::list out;
        for (const Array& a : ops::nonzero(operand(x, nullptr, "nonzero"))) out.append(a);
        return nb::tuple(out);
      }, param("x"), "The int64 indices of the non-zero elements, one array per axis (uma.nonzero).");
  m.def("searchsorted", [](nb::handle x1, nb::handle x2, nb::handle side, nb::handle sorter) {
        const char* op = "searchsorted";
        UMA_CHECK(nb::isinstance<nb::str>(side) && (nb::cast<std::string>(side) == "left" || nb::cast<std::string>(side) == "right"),
                  Value, op, ": side must be 'left' or 'right', got ", py_repr(side));
        Array A = operand(x1, nullptr, op);
        std::optional<Array> S;
        if (!sorter.is_none()) S = operand(sorter, nullptr, op);
        return ops::searchsorted(A, operand(x2, &A, op), nb::cast<std::string>(side) == "right", S);
      }, param("x1"), param("x2"), nb::kw_only(), param("side") = "left", param("sorter") = nb::none(),
      "The int64 insertion points of x2 into the sorted 1-d x1 (uma.searchsorted).");
  m.def("relu", [](nb::handle x) { return ops::relu(operand(x, nullptr, "relu")); }, param("x"),
        "maximum(x, 0) (NaN propagates; float16/bfloat16 computed in float32).");

}

}  // namespace uma::py
