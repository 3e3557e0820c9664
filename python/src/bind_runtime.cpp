// uma._core.Program: the executor the `cpu` and `cuda` linkers compile function graphs into;
// uma._core.Residency: where a backend keeps its values (uma's: the host and each device; a
// Python linker's, through its filters);
// uma._core.SharedCell: a shared variable's copies in every residency (with its lock);
// uma._core.Function: a compiled function's call, for every backend
// (python/uma/runtime/function.py).
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <atomic>
#include <climits>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#include "common.h"
#include "uma/error.h"
#include "uma/runtime/function.h"
#include "uma/runtime/program.h"
#include "uma/runtime/shared_cell.h"
#include "uma/transfer.h"

namespace uma::py {

namespace {
// Attribute `key` = v of an op registered as `spec` into a (nb::cast_error where v has the wrong
// type; uma::Error saying what is wrong with v, which the caller prefixes with the op and key).
void parse_attr(const runtime::OpSpec& spec, const std::string& key, nb::handle v,
                runtime::OpAttrs& a) {
  if (key == "axis") {
    const bool many = nb::isinstance<nb::tuple>(v) || nb::isinstance<nb::list>(v);
    UMA_CHECK(spec.axis == runtime::AxisAttr::Axes || !many, Type, "one axis (an int) expected, got ",
              py_str(nb::repr(v)));
    UMA_CHECK(spec.axis != runtime::AxisAttr::Int || !v.is_none(), Type, "an int expected, got None");
    if (v.is_none()) {
      a.axes = std::nullopt;
    } else if (many) {
      a.axes = nb::cast<std::vector<int64_t>>(v);
    } else {
      a.axis = nb::cast<int64_t>(v);
      a.axes = std::vector<int64_t>{a.axis};
    }
  } else if (key == "keepdims") {
    a.keepdims = nb::cast<bool>(v);
  } else if (key == "shape") {
    a.shape = nb::isinstance<nb::int_>(v) ? Shape{nb::cast<int64_t>(v)} : nb::cast<Shape>(v);
  } else if (key == "axes") {
    if (!v.is_none()) a.perm = nb::cast<std::vector<int64_t>>(v);
  } else if (key == "dtype") {
    a.dtype = to_dtype(v);
  } else if (key == "index") {
    a.index = parse_index(v);
  } else if (key == "fill_value") {
    nb::object pv = nb::borrow(v);
    if (!is_python_scalar(pv) && nb::hasattr(pv, "item") && nb::hasattr(pv, "ndim") &&
        nb::cast<int64_t>(pv.attr("ndim")) == 0)
      pv = pv.attr("item")();  // a NumPy scalar or 0-d array
    UMA_CHECK(is_python_scalar(pv), Type, "a scalar expected, got ", py_str(nb::repr(v)));
    a.fill_value = to_scalar(pv);
  } else if (key == "depth") {
    a.depth = nb::cast<int64_t>(v);
  } else if (key == "ddof") {
    a.ddof = nb::cast<double>(v);
  } else if (key == "k" || key == "offset") {
    a.offset = nb::cast<int64_t>(v);
  } else if (key == "axis1") {
    a.axis1 = nb::cast<int64_t>(v);
  } else if (key == "axis2") {
    a.axis2 = nb::cast<int64_t>(v);
  } else if (key == "decimals") {  // round
    a.decimals = nb::cast<int64_t>(v);
  } else if (key == "check_labels") {  // softmax_cross_entropy(_grad)
    a.check_labels = nb::cast<bool>(v);
  } else {
    UMA_FAIL(Value, "no such attribute");
  }
}

// True for a Python int outside int64.
bool int_overflows(nb::handle v) { return PyLong_Check(v.ptr()) && !index_int64(v).has_value(); }

// "a, b, c" (or "none") for an error message.
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

runtime::OpAttrs parse_attrs(const std::string& op, nb::handle attrs) {
  runtime::OpAttrs a;
  const runtime::OpSpec* spec = runtime::find_op(op);
  UMA_CHECK(spec != nullptr, Value, "Program: unknown op '", op, "'");
  UMA_CHECK(attrs.is_none() || nb::isinstance<nb::dict>(attrs), Type, "Program: op '", op,
            "' takes its attributes as a dict, got ", py_str(nb::repr(attrs)));
  nb::dict d = attrs.is_none() ? nb::dict() : nb::borrow<nb::dict>(attrs);
  for (auto [k, v] : d) {
    UMA_CHECK(nb::isinstance<nb::str>(k), Type, "Program: op '", op, "' got an attribute name that is not a string: ",
              py_str(nb::repr(k)));
    const std::string key = nb::cast<std::string>(k);
    UMA_CHECK(std::find(spec->attrs.begin(), spec->attrs.end(), key) != spec->attrs.end(), Value, "Program: op '", op,
              "' has no attribute '", key, "' (its attributes: ", listed(spec->attrs), ")");
    try {
      parse_attr(*spec, key, v, a);
    } catch (const nb::cast_error&) {  // a value of the wrong type for the attribute, or an int out of range
      UMA_CHECK(!int_overflows(v), Overflow, "Program: op '", op, "' attribute '", key, "': ",
                py_str(nb::repr(v)), " is out of range");
      UMA_FAIL(Type, "Program: op '", op, "' got attribute '", key, "' of the wrong type: ", py_str(nb::repr(v)));
    } catch (const Error& e) {
      throw Error(e.kind(), "Program: op '" + op + "' attribute '" + key + "': " + e.what());
    }
  }
  for (const std::string& key : spec->required)
    UMA_CHECK(d.contains(key.c_str()), Value, "Program: op '", op, "' needs attribute '", key, "'");
  return a;
}

// ---- SharedCell from Python ------------------------------------------------------------
// Every Python-side acquisition that has to wait does so with the GIL released, so a thread
// holding a cell lock may always take the GIL (the C++ call path and the Python call path
// both hold cell locks while they need the GIL: the shape check, Python linkers).
void acquire(runtime::SharedCell& c) {
  if (c.try_lock()) return;
  nb::gil_scoped_release release;
  c.lock();
}

// Runs `f` with the cell locked (re-entrant: fine when the caller holds the lock already).
template <class F>
auto locked(runtime::SharedCell& c, F&& f) {
  acquire(c);
  struct Unlock {
    runtime::SharedCell& c;
    ~Unlock() { c.unlock(); }
  } u{c};
  return f();
}

Array host_array(nb::handle v) {
  UMA_CHECK(nb::isinstance<Array>(v), Type, "SharedCell: the host value must be a uma.Array, got ",
            py_str(nb::type_name(v.type())));
  const Array& a = nb::cast<const Array&>(v);
  UMA_CHECK(a.device().is_cpu(), Value, "SharedCell: the host value must be on the CPU");
  return a;
}

// ---- values of Python backends ---------------------------------------------------------
// Drops one reference to a Python object from any thread (with_gil: with the GIL; left to the
// exiting process once the interpreter is finalizing on another thread).
void drop(PyObject* p) noexcept {
  if (p) with_gil([p] { Py_DECREF(p); });
}
void drop(nb::object& o) noexcept { drop(o.release().ptr()); }

// A backend's native value is a Python object: a NativeRef owns one reference to it.
runtime::NativeRef native_ref(nb::handle h) {
  return runtime::NativeRef(nb::borrow(h).release().ptr(), [](void* p) { drop(static_cast<PyObject*>(p)); });
}

// Note [Daemon threads at exit]
// At interpreter exit CPython ends a daemon thread that waits for the GIL (or runs Python code
// that lets go of it) with pthread_exit, whose forced unwind then passes through the C++ frames
// of a call without the GIL. There nothing may touch Python: releasing the GIL state aborts the
// process, and dropping a reference races the finalizing interpreter. So the code that calls
// Python from the call path takes the GIL with with_python and holds its Python references in
// Refs, which a forced unwind leaves to the exiting process.

// A Python reference that is dropped only by a thread holding the GIL (else left to the exiting
// process: Note [Daemon threads at exit]).
class Ref : public nb::object {
 public:
  Ref(nb::object o) : nb::object(std::move(o)) {}  // NOLINT: made from any object
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() {
    if (is_valid() && !PyGILState_Check()) release();
  }
};

// Runs f() holding the GIL (taken when this thread does not hold it), and gives it back after,
// except in a forced unwind (Note [Daemon threads at exit]).
template <class F>
decltype(auto) with_python(F&& f) {
  struct Release {
    PyGILState_STATE st;
    bool armed = true;
    ~Release() {
      if (armed) PyGILState_Release(st);
    }
  } r{PyGILState_Ensure()};
#if defined(__GLIBCXX__)
  try {
    return f();
  } catch (abi::__forced_unwind&) {
    r.armed = false;
    throw;
  }
#else
  return f();
#endif
}

nb::object to_python(const runtime::Value& v) {
  if (v.is_array()) return nb::cast(v.array);
  if (v.native) return nb::borrow(static_cast<PyObject*>(v.native.get()));
  return nb::none();
}

// `h` as a value of a residency: a uma.Array stays an Array where the residency's values are
// Arrays (uma's residencies), anything else is a native value.
runtime::Value from_python(nb::handle h, bool arrays) {
  if (arrays && nb::isinstance<Array>(h)) return runtime::Value(nb::cast<Array>(h));
  return runtime::Value(native_ref(h));
}

nb::tuple static_tuple(const std::vector<int64_t>& shape) {
  nb::list l;
  for (int64_t d : shape) l.append(d < 0 ? nb::none() : nb::object(nb::int_(d)));
  return nb::tuple(l);
}

// A Python linker's residency: its input_filter and output_filter, as
// `from_host(array, dtype, static_shape)` and `to_host(value, dtype, static_shape)` (Python
// callables made by uma.runtime.linker; to_host returns a uma.Array of the dtype). `array` and
// the uma.Array returned are on the residency's home: the host, or the device where the
// backend's values live (then conversions to and from the host add one transfer here).
class PyResidency final : public runtime::Residency {
 public:
  PyResidency(std::string name, nb::object from_host, nb::object to_host, nb::object describe, Device home)
      : Residency(std::move(name)),
        from_host_(std::move(from_host)),
        to_host_(std::move(to_host)),
        describe_(std::move(describe)),
        home_(home) {}
  ~PyResidency() override {
    drop(from_host_);
    drop(to_host_);
    drop(describe_);
  }
  Device home() const noexcept override { return home_; }
  runtime::Value from_home(const Array& a, const runtime::TypeSpec& t) const override {
    return with_python([&] {
      Ref h{nb::cast(a)}, shape{static_tuple(t.shape)};
      Ref v{from_host_(h, dtype_name(t.dtype), shape)};
      return from_python(v, false);
    });
  }
  Array to_home(const runtime::Value& v, const runtime::TypeSpec& t) const override {
    return with_python([&] {
      Ref value{to_python(v)}, shape{static_tuple(t.shape)};
      Ref h{to_host_(value, dtype_name(t.dtype), shape)};
      UMA_CHECK(nb::isinstance<Array>(h), Type, "residency ", name(), ": the ", home_.is_cpu() ? "host" : "device",
                " form of shared variable ", t.label, " is a ", py_str(nb::type_name(h.type())), ", not a uma.Array");
      return nb::cast<Array>(h);
    });
  }
  runtime::Value from_host(const Array& host, const runtime::TypeSpec& t) const override {
    return from_home(home_.is_cpu() ? host : on_device(host, home_), t);
  }
  Array to_host(const runtime::Value& v, const runtime::TypeSpec& t) const override {
    Array a = to_home(v, t);
    return home_.is_cpu() || !a.defined() ? a : uma::to_host(a);
  }
  std::optional<std::pair<std::string, Shape>> describe(const runtime::Value& v) const override {
    if (v.is_array()) return Residency::describe(v);
    return with_python([&]() -> std::optional<std::pair<std::string, Shape>> {
      Ref value{to_python(v)};
      Ref r{describe_(value)};
      if (r.is_none()) return std::nullopt;
      nb::tuple t = nb::borrow<nb::tuple>(r);
      return std::make_pair(nb::cast<std::string>(t[0]), nb::cast<Shape>(t[1]));
    });
  }

 private:
  nb::object from_host_, to_host_, describe_;
  Device home_;
};

// A Python linker's thunk: `thunk(values) -> [outputs..., updates...]`, and `describe(value)
// -> (dtype name, shape) | None` (uma.runtime.filters.value_type).
class PyThunk final : public runtime::Thunk {
 public:
  PyThunk(nb::object thunk, nb::object describe, bool arrays, std::string backend, std::size_t n)
      : thunk_(std::move(thunk)), describe_(std::move(describe)), arrays_(arrays), backend_(std::move(backend)), n_(n) {}
  ~PyThunk() override {
    drop(thunk_);
    drop(describe_);
  }
  // The garbage collector's view of the Python objects it holds (one reference each).
  int traverse(visitproc visit, void* arg) const {
    Py_VISIT(thunk_.ptr());
    Py_VISIT(describe_.ptr());
    return 0;
  }
  void clear() {
    drop(thunk_);
    drop(describe_);
  }
  void run(const std::vector<runtime::Value>& values, std::vector<runtime::Value>& outputs) const override {
    run_checked(values, outputs);
  }
  // The thunk's attribute `checks_updates` (read after each run, with the GIL): true when the
  // thunk checked its update values against their shared variables' types itself.
  bool run_checked(const std::vector<runtime::Value>& values, std::vector<runtime::Value>& outputs) const override {
    static PyObject* const checks_name = PyUnicode_InternFromString("checks_updates");  // leaked: outlives Python
    bool checked = false;
    with_python([&] {
      UMA_CHECK(thunk_.is_valid(), Runtime, "function: backend '", backend_, "': the thunk was released");
      Ref in{nb::steal(PyList_New(static_cast<Py_ssize_t>(values.size())))};
      if (!in.is_valid()) throw nb::python_error();
      for (std::size_t i = 0; i < values.size(); ++i)
        PyList_SET_ITEM(in.ptr(), static_cast<Py_ssize_t>(i), to_python(values[i]).release().ptr());
      Ref out{thunk_(in)};
      const bool seq = PyList_Check(out.ptr()) || PyTuple_Check(out.ptr());
      const std::size_t n = seq ? static_cast<std::size_t>(PySequence_Fast_GET_SIZE(out.ptr())) : 0;
      if (!seq || n != n_) {
        std::string got = seq ? std::to_string(n) + " values" : py_repr(out).substr(0, 80);
        UMA_FAIL(Type, "function: backend '", backend_, "''s thunk returned ", got, ", expected a list of ", n_,
                 " (one per output and update); no shared variable was changed");
      }
      outputs.reserve(n_);
      PyObject** items = PySequence_Fast_ITEMS(out.ptr());
      for (std::size_t i = 0; i < n; ++i) outputs.push_back(from_python(items[i], arrays_));
      PyObject* flag = nullptr;  // no AttributeError made for a thunk without it
#if PY_VERSION_HEX >= 0x030D0000
      const int found = PyObject_GetOptionalAttr(thunk_.ptr(), checks_name, &flag);
#else
      const int found = _PyObject_LookupAttr(thunk_.ptr(), checks_name, &flag);
#endif
      if (found < 0) throw nb::python_error();
      checked = found > 0 && flag == Py_True;
      Py_XDECREF(flag);
    });
    return checked;
  }
  std::optional<std::pair<std::string, Shape>> describe(const runtime::Value& v) const override {
    return with_python([&]() -> std::optional<std::pair<std::string, Shape>> {
      if (!describe_.is_valid()) return std::nullopt;
      Ref value{to_python(v)};
      Ref r{describe_(value)};
      if (r.is_none()) return std::nullopt;
      nb::tuple t = nb::borrow<nb::tuple>(r);
      return std::make_pair(nb::cast<std::string>(t[0]), nb::cast<Shape>(t[1]));
    });
  }
  std::string kind(const runtime::Value& v) const override {
    return with_python([&] {
      Ref value{to_python(v)};
      return py_str(nb::type_name(value.type()));
    });
  }
  Array to_array(const runtime::Value& v) const override {
    if (v.is_array()) return v.array;
    return with_python([&] {
      Ref value{to_python(v)};
      return asarray(value, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "function");
    });
  }

 private:
  nb::object thunk_, describe_;
  bool arrays_;
  std::string backend_;
  std::size_t n_;
};

// uma._core.SharedCell takes part in garbage collection: a native value it keeps (a Python
// backend's array) may reach back to the shared variable (through its linker, say). The
// collector sees each native value once (a cell's copy holds one reference to it); a cell
// locked by another thread's call reports nothing (it is reachable: that call holds it).
int cell_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  runtime::SharedCell* c = nb::inst_ptr<runtime::SharedCell>(self);
  if (!c->try_lock()) return 0;
  int r = 0;
  c->for_each_native([&](void* p) {
    if (r == 0) r = visit(static_cast<PyObject*>(p), arg);
  });
  c->unlock();
  return r;
}

int cell_clear(PyObject* self) {
  if (!nb::inst_ready(self)) return 0;
  runtime::SharedCell* c = nb::inst_ptr<runtime::SharedCell>(self);
  if (!c->try_lock()) return 0;
  c->clear();
  c->unlock();
  return 0;
}

PyType_Slot g_cell_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&cell_traverse)},
                              {Py_tp_clear, reinterpret_cast<void*>(&cell_clear)},
                              {0, nullptr}};

// ---- Function from Python --------------------------------------------------------------
// A runtime::Function plus what the Python call needs: the filter of arguments a Program
// function does not accept as they are (Python's filter_host and the linker's input_filter:
// the exact errors and casting rules), whether it returns one value or a list, and a call
// counter (introspection for the tests).
struct PyFunction {
  runtime::Function fn;
  nb::object filter;  // filter(k, value) -> uma.Array for input k (a Program function)
  bool single;
  std::atomic<uint64_t> calls{0};
  nb::object shape_check;    // shape_check(values), called by fn's shape check
  PyThunk* thunk = nullptr;  // fn's thunk (owned by fn), or null for a Program function
};

// uma._core.Function takes part in garbage collection: the thunk a Python linker compiled, the
// filter and the shape check may reach back to the uma.Function holding this object (through
// a linker's globals, say), a cycle that only the collector can break.
int function_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  const PyFunction* f = nb::inst_ptr<PyFunction>(self);
  Py_VISIT(f->filter.ptr());
  Py_VISIT(f->shape_check.ptr());
  return f->thunk ? f->thunk->traverse(visit, arg) : 0;
}

int function_clear(PyObject* self) {
  if (!nb::inst_ready(self)) return 0;
  PyFunction* f = nb::inst_ptr<PyFunction>(self);
  f->filter.reset();
  f->shape_check.reset();
  if (f->thunk) f->thunk->clear();
  return 0;
}

PyType_Slot g_function_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&function_traverse)},
                                  {Py_tp_clear, reinterpret_cast<void*>(&function_clear)},
                                  {0, nullptr}};

PyTypeObject* ndarray_type() {
  // A strong reference kept for the process's life (a static nb::object would release it at
  // process exit, after the interpreter is gone).
  static PyObject* const t = nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr();
  return reinterpret_cast<PyTypeObject*>(t);
}

// NumPy inputs of at most this many bytes are copied into pooled memory at the call instead
// of adopted: cheaper than an adoption for small arrays, and nothing to release later.
constexpr std::size_t kCopyInputBytes = 1024;
// Calls whose inputs and shared values hold at most this many elements run with the GIL held.
constexpr int64_t kHoldGilElements = 4096;

Array call_argument(const PyFunction& f, std::size_t k, nb::handle h) {
  static PyTypeObject* const array_type = reinterpret_cast<PyTypeObject*>(nb::type<Array>().ptr());
  if (Py_TYPE(h.ptr()) == array_type && nb::inst_ready(h)) {  // no type-map lookup for the common cases
    const Array& a = *nb::inst_ptr<Array>(h);
    if (f.fn.accepts(k, a)) return a;
  } else if (Py_TYPE(h.ptr()) == ndarray_type()) {
    // The declared dtype and ndim: read from NumPy's struct fields (no Python call); other
    // arrays (a cast, a byte-swapped or exotic dtype) go through asarray and the filter.
    const runtime::InputSpec& spec = f.fn.input_specs()[k];
    if (auto a = import_ndarray_input(h, spec.dtype, spec.shape.size(), kCopyInputBytes, "function")) {
      if (f.fn.accepts(k, *a)) return std::move(*a);
    }
    // Zero-copy import (the rules of uma.asarray); anything unusual goes to the filter.
    std::optional<Array> a;
    try {
      a = asarray(h, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "function");
    } catch (const Error&) {
    } catch (const nb::python_error&) {
    }
    if (a && f.fn.accepts(k, *a)) return std::move(*a);
  } else if (nb::isinstance<Array>(h)) {  // a subclass of uma.Array
    const Array& a = nb::cast<const Array&>(h);
    if (f.fn.accepts(k, a)) return a;
  }
  UMA_CHECK(f.filter.is_valid() && !f.filter.is_none(), Runtime, "function: no input filter");
  nb::object r = f.filter(k, h);
  UMA_CHECK(nb::isinstance<Array>(r), Type, "function: the input filter returned ", py_str(nb::type_name(r.type())),
            ", not a uma.Array");
  return nb::cast<Array>(r);
}
// The calling thread's argument and result vectors for fast_call (no allocation per call once
// they have grown). A call made while one is running on this thread (the shape check or an
// input filter may run Python that calls a function) uses vectors of its own.
struct CallScratch {
  std::vector<Array> in, keep, out;
  bool busy = false;
};
[[gnu::noinline]] CallScratch& call_scratch() {
  thread_local CallScratch scratch;
  return scratch;
}

// Runs body() with the GIL released and takes it back after, not in a destructor (as
// nb::gil_scoped_release would): at interpreter exit CPython ends a daemon thread that asks
// for the GIL with pthread_exit, and that forced unwind aborts the process when it starts in
// a destructor. Nor may the unwind drop the call's values: an adopted input's owner needs the
// GIL to be released, which would end the thread a second time mid-unwind. `leave()` then
// moves them where nothing frees them (the process is exiting). Errors of body() propagate
// once the GIL is back.
template <class Body, class Leave>
void without_gil(Body&& body, Leave&& leave) {
  PyThreadState* ts = PyEval_SaveThread();
  std::exception_ptr err;
  try {
    body();
  } catch (...) {
    err = std::current_exception();
  }
#if defined(__GLIBCXX__)
  try {
    PyEval_RestoreThread(ts);
  } catch (abi::__forced_unwind&) {
    leave();
    throw;
  }
#else
  PyEval_RestoreThread(ts);
#endif
  if (err) std::rethrow_exception(err);
}

// Leaves `vectors` to the exiting process (see without_gil).
template <class... V>
void leave_to_exit(V&... vectors) {
  (new std::remove_reference_t<V>(std::move(vectors)), ...);  // never freed
}

// Builds the Python result of a call: one value, or a list.
template <class V, class Cast>
nb::object result(bool single, std::vector<V>& out, Cast&& cast) {
  if (single) return cast(out[0]);
  nb::list l = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(out.size())));
  if (!l.is_valid()) throw nb::python_error();
  for (std::size_t k = 0; k < out.size(); ++k)
    PyList_SET_ITEM(l.ptr(), static_cast<Py_ssize_t>(k), cast(out[k]).release().ptr());
  return nb::object(std::move(l));
}

// The counters change only with the GIL held: a load and a store, no atomic add.
void bump(std::atomic<uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

// One call of a Program function with the positional arguments args[0..n): the outputs (one
// value or a list), or nullopt for the wrong number of arguments (the caller's Python path
// then raises the error naming the inputs).
std::optional<nb::object> fast_call(PyFunction& f, PyObject* const* args, std::size_t n) {
  if (n != f.fn.num_inputs()) return std::nullopt;
  CallScratch& shared = call_scratch();
  CallScratch mine;
  CallScratch& s = shared.busy ? mine : shared;
  s.busy = true;
  struct Done {  // every array the vectors hold is released before the call returns or throws
    CallScratch& s;
    ~Done() {
      s.in.clear();
      s.out.clear();
      s.keep.clear();  // the adopted inputs last, with the GIL held (see below)
      s.busy = false;
    }
  } done{s};
  std::vector<Array>& in = s.in;
  in.reserve(n + f.fn.shared().size());
  for (std::size_t k = 0; k < n; ++k) in.push_back(call_argument(f, k, args[k]));
  // Adopted inputs (NumPy memory) are released here, with the GIL held, not inside the
  // call, whose last use of an input would otherwise take the GIL to drop its owner.
  for (const Array& a : in)
    if (a.is_adopted()) s.keep.push_back(a);
  std::vector<Array>& out = s.out;
  // A small call keeps the GIL (releasing and retaking it would cost more than the call): it
  // runs only if every cell lock is free at once, so it never waits while holding the GIL.
  // Otherwise the GIL is released and the call waits for its locks.
  if (!f.fn.call_now(in, out, kHoldGilElements))
    without_gil([&] { f.fn.call(in, out); }, [&] { leave_to_exit(s.in, s.out, s.keep); });
  bump(f.calls);
  return result(f.single, out, [](Array& a) { return nb::cast(std::move(a)); });
}

// One call of a Thunk function on `values`, already in its residency (uma.Function filters
// them in Python: is_native, the host filter, the linker's input_filter). The thunk and the
// residencies' conversions take the GIL when they run; the call keeps the GIL when every
// lock it needs is free, and otherwise waits for them without it.
nb::object thunk_call(PyFunction& f, nb::handle values) {
  const bool arrays = f.fn.options().residency->device().has_value();
  std::vector<runtime::Value> in, out;
  for (nb::handle h : values) in.push_back(from_python(h, arrays));
  if (!f.fn.call_now(in, out)) without_gil([&] { f.fn.call(in, out); }, [&] { leave_to_exit(in, out); });
  bump(f.calls);
  return result(f.single, out, [](runtime::Value& v) { return to_python(v); });
}

// Runs the body of a function written against the C API: its result, or nullptr with the
// Python error set for a C++ exception. A forced unwind (Note [Daemon threads at exit]) passes.
template <class F>
PyObject* c_api(F&& body) {
  try {
    return body();
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {
    throw;
#endif
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
}

// uma.Function.__call__ (python/uma/runtime/function.py) as a method written against the C API
// (METH_FASTCALL | METH_KEYWORDS: no argument tuple, no keyword dict, no overload dispatch), so
// that a call of a Program function runs no Python frame: positional arguments of a function
// whose `_fast` is a Program function (a uma._core.Function) run here; keyword arguments, the
// wrong number of arguments and Thunk functions go to `Function._bound_call(args, kwargs)`,
// which binds and filters them in Python and calls the same C++ Function.
// Not noexcept: a daemon thread that meets interpreter shutdown is ended by pthread_exit, whose
// forced unwind must pass through (catching it without rethrowing aborts the process).
PyObject* function_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static PyObject* const fast_name = PyUnicode_InternFromString("_fast");  // leaked: outlives Python
  static PyObject* const native_name = PyUnicode_InternFromString("_native_args");
  return c_api([&]() -> PyObject* {
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    nb::object t;  // the argument tuple, made once
    if (nkw == 0) {
      nb::object fast = nb::steal(PyObject_GetAttr(self, fast_name));
      if (!fast.is_valid()) return nullptr;
      if (!fast.is_none() && nb::cast<PyFunction&>(fast).fn.program()) {
        if (auto r = fast_call(nb::cast<PyFunction&>(fast), args, static_cast<std::size_t>(nargs)))
          return r->release().ptr();
      } else if (!fast.is_none()) {
        // A thunk that takes the backend's own values as they are (`Function._native_args(args)`
        // true): called here, without the Python frame of _bound_call. A call that fails wrote
        // nothing; _bound_call then runs it again on the checked path, which raises the error.
        nb::object native = nb::steal(PyObject_GetAttr(self, native_name));
        if (!native.is_valid()) return nullptr;
        if (!native.is_none() && static_cast<std::size_t>(nargs) == nb::cast<PyFunction&>(fast).fn.num_inputs()) {
          t = nb::steal(PyTuple_New(nargs));
          if (!t.is_valid()) return nullptr;
          for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(t.ptr(), i, nb::borrow(args[i]).release().ptr());
          bool yes = nargs == 0;  // no argument to check
          if (!yes) {
            PyObject* ok = PyObject_CallOneArg(native.ptr(), t.ptr());
            if (ok == nullptr) return nullptr;
            yes = ok == Py_True;
            Py_DECREF(ok);
          }
          if (yes) {
            try {
              return thunk_call(nb::cast<PyFunction&>(fast), t).release().ptr();
#if defined(__GLIBCXX__)
            } catch (abi::__forced_unwind&) {
              throw;
#endif
            } catch (const nb::python_error& e) {
              if (!e.matches(PyExc_Exception)) throw;
            } catch (...) {
            }
          }
        }
      }
    }
    if (!t.is_valid()) {
      t = nb::steal(PyTuple_New(nargs));
      if (!t.is_valid()) return nullptr;
      for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(t.ptr(), i, nb::borrow(args[i]).release().ptr());
    }
    nb::dict kw;
    for (Py_ssize_t i = 0; i < nkw; ++i) kw[nb::handle(PyTuple_GET_ITEM(kwnames, i))] = nb::handle(args[nargs + i]);
    return nb::handle(self).attr("_bound_call")(t, kw).release().ptr();
  });
}

// uma._core._call_thunk(fast, values): thunk_call for uma.Function._bound_call, written against
// the C API like __call__ above, so that a forced unwind passes through (nanobind's dispatcher
// would catch it: Note [Daemon threads at exit]).
PyObject* call_thunk(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return c_api([&]() -> PyObject* {
    if (nargs != 2) {
      PyErr_SetString(PyExc_TypeError, "_call_thunk(fast, values) takes 2 arguments");
      return nullptr;
    }
    return thunk_call(nb::cast<PyFunction&>(nb::handle(args[0])), args[1]).release().ptr();
  });
}

// uma._core._program_run(program, inputs): Program.run for the Program segments that a linker's
// thunk runs between Python steps, written against the C API so that a forced unwind passes
// through (Note [Daemon threads at exit]); the GIL is released while it runs.
PyObject* program_run(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return c_api([&]() -> PyObject* {
    if (nargs != 2) {
      PyErr_SetString(PyExc_TypeError, "_program_run(program, inputs) takes 2 arguments");
      return nullptr;
    }
    const runtime::Program& p = nb::cast<const runtime::Program&>(nb::handle(args[0]));
    std::vector<Array> in, out;  // released with the GIL, or left in a forced unwind
    for (nb::handle h : nb::handle(args[1])) in.push_back(nb::cast<Array>(h));
    without_gil([&] { p.run_into(in, out); }, [&] { leave_to_exit(in, out); });
    nb::list l;
    for (Array& a : out) l.append(nb::cast(std::move(a)));
    return l.release().ptr();
  });
}

PyMethodDef g_program_run_def = {
    "_program_run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&program_run)), METH_FASTCALL,
    "Runs the Program `program` on the uma.Arrays `inputs` (a list of the results); the GIL is released."};

PyMethodDef g_call_thunk_def = {
    "_call_thunk", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call_thunk)), METH_FASTCALL,
    "Calls the thunk function `fast` (a uma._core.Function) on `values`, already in its residency."};

PyMethodDef g_function_call_def = {
    "__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&function_call)),
    METH_FASTCALL | METH_KEYWORDS,
    "Calls the compiled function (uma.Function.__call__ written in C++, python/src/bind_runtime.cpp)."};
}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<runtime::Program>(m, "Program",
                               "A straight-line program of uma ops executed in C++ (what the cpu and cuda linkers compile to).")
      .def(nb::init<>())
      .def("add_input", &runtime::Program::add_input, "Adds an input slot (run() arguments in this order).")
      .def("add_constant", [](runtime::Program& p, nb::handle v) {
        return p.add_constant(asarray(v, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "Program.add_constant"));
      })
      .def("add_op", [](runtime::Program& p, const std::string& name, const std::vector<int>& inputs, nb::handle attrs) {
        return p.add_op(name, inputs, parse_attrs(name, attrs));
      }, nb::arg("name"), nb::arg("inputs"), param("attrs") = nb::none())
      .def("add_fused", [](runtime::Program& p, const std::vector<int>& inputs, nb::list code, nb::handle dtype,
                           bool matmul, const std::string& head, nb::handle head_attrs) {
        UMA_CHECK(!matmul || head.empty(), Value, "Program.add_fused: give matmul=True or head='", head, "', not both");
        UMA_CHECK(head_attrs.is_none() || head == "sum" || head == "mean", Value,
                  "Program.add_fused: head_attrs are the attributes of a 'sum' or 'mean' head, got head '", head, "'");
        std::vector<FusedInstr> instrs;
        // Register i of instruction t: TypeError for a value that is not an int, ValueError for
        // one beyond int (check_fused_code names the registers that are not defined).
        auto reg = [&](const nb::tuple& t, std::size_t i) {
          nb::handle r = t[i];
          UMA_CHECK(PyLong_Check(r.ptr()) && !PyBool_Check(r.ptr()), Type, "Program.add_fused: instruction ",
                    instrs.size(), " ", py_str(nb::repr(t)), ": a register is an int, got ", py_str(nb::repr(r)));
          const std::optional<int64_t> v = index_int64(r);
          UMA_CHECK(v && *v >= INT_MIN && *v <= INT_MAX, Value, "Program.add_fused: instruction ",
                    instrs.size(), " ", py_str(nb::repr(t)), " reads register ", py_str(nb::repr(r)),
                    ", which is not defined there");
          return static_cast<int>(*v);
        };
        for (nb::handle item : code) {
          UMA_CHECK(nb::isinstance<nb::tuple>(item), Type,
                    "Program.add_fused: an instruction is a tuple (op_name, a, b) or ('where', condition, x, y), got ",
                    py_str(nb::repr(item)));
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) >= 1, Value, "Program.add_fused: empty instruction");
          UMA_CHECK(nb::isinstance<nb::str>(t[0]), Type, "Program.add_fused: instruction ", instrs.size(), " ",
                    py_str(nb::repr(t)), " does not start with an op name");
          std::string name = nb::cast<std::string>(t[0]);
          FusedInstr ins;
          if (name == "where") {
            UMA_CHECK(nb::len(t) == 4, Value, "Program.add_fused: where is ('where', condition, x, y)");
            ins.select = true;
            ins.a = reg(t, 1);
            ins.b = reg(t, 2);
            ins.c = reg(t, 3);
            instrs.push_back(ins);
            continue;
          }
          UMA_CHECK(nb::len(t) == 3, Value, "Program.add_fused: each instruction is (op_name, a, b)");
          ins.a = reg(t, 1);
          ins.b = reg(t, 2);
          auto bin = ops::binary_op_named(name);
          auto un = ops::unary_op_named(name);
          UMA_CHECK(bin || un, Value, "Program.add_fused: '", name, "' is not an elementwise op");
          ins.binary = bin.has_value();
          ins.op = bin ? static_cast<int>(*bin) : static_cast<int>(*un);
          instrs.push_back(ins);
        }
        const std::string h = matmul ? std::string("matmul") : head;
        runtime::OpAttrs attrs = h == "sum" || h == "mean" ? parse_attrs(h, head_attrs) : runtime::OpAttrs{};
        return p.add_fused(inputs, std::move(instrs), required_dtype(dtype, "Program.add_fused"), h, std::move(attrs));
      }, nb::arg("inputs"), nb::arg("code"), param("dtype"), nb::arg("matmul") = false, nb::arg("head") = "",
      param("head_attrs") = nb::none(),
      "Adds a fused elementwise chain: code is a list of (op_name, a, b) over registers (inputs first,\n"
      "then one register per instruction; b is ignored for unary ops) and ('where', cond, x, y), whose\n"
      "condition is a comparison of the chain. The last register is the result. Every input must have\n"
      "`dtype`; ops must keep the dtype or be a where's comparison (see uma._core._fusable).\n"
      "matmul=True (or head='matmul'): inputs[0] @ inputs[1] is register 0 (the chain is the product's\n"
      "epilogue, run in place in the product), the other inputs registers 1, 2, ...; head='sum' or 'mean':\n"
      "that reduction of inputs[0] (head_attrs: the op's axis and keepdims) is register 0.")
      .def("set_outputs", &runtime::Program::set_outputs)
      .def("add_label_check", &runtime::Program::add_label_check, nb::arg("labels"), nb::arg("logits"), nb::arg("op"),
           "Checks the labels in slot `labels` against the class count of the logits in slot `logits` after\n"
           "every step, before run() returns (ops queued with check_labels=False; Note [Deferred label checks]).")
      .def("run", [](const runtime::Program& p, const std::vector<Array>& inputs) {
        nb::gil_scoped_release release;
        return p.run(inputs);
      }, "Runs the program on uma.Array inputs; returns a list of uma.Array. The GIL is released.")
      .def("profile", [](const runtime::Program& p, const std::vector<Array>& inputs, int repeat) {
        nb::gil_scoped_release release;
        return p.profile(inputs, repeat);
      }, nb::arg("inputs"), nb::arg("repeat") = 100,
      "Runs the program `repeat` times; returns [(op name, mean ns per run)] per step (profiling aid).")
      .def("runs_on_elements", &runtime::Program::runs_on_elements, nb::arg("inputs"),
           "Whether a call with these inputs runs on their elements (Note [Scalar programs]: 0-d host arrays only).")
      .def_prop_ro("element_plan", &runtime::Program::element_plan)
      .def_prop_ro("num_label_checks", &runtime::Program::num_label_checks)
      .def_prop_ro("num_steps", &runtime::Program::num_steps)
      .def("fixed_steps", &runtime::Program::fixed_steps,
           "Names of the steps, in order, whose values depend on the input signature alone and are not "
           "outputs: a CUDA graph recording computes them once and its replays skip them (Note [Fixed "
           "steps] in runtime/program.h).")
      .def_prop_rw("graphs", &runtime::Program::graphs, &runtime::Program::set_graphs,
                   "CUDA graphs (Note [Program graphs] in runtime/program.h): True records a run per input "
                   "signature of C-contiguous cuda arrays and replays it; setting it drops every recording and the "
                   "statistics (safe while other threads run the program).")
      .def_prop_rw("lean_replay", &runtime::Program::lean_replay,
                   &runtime::Program::set_lean_replay,
                   "Lean replays of CUDA graph recordings (Note [Lean replays] in runtime/program.h): True "
                   "copies the arguments with one kernel and waits for the label checks alone, queued before "
                   "each launch, not for the step; setting it drops every recording and the statistics.")
      .def("graph_stats", [](const runtime::Program& p) {
        const runtime::Program::GraphStats s = p.graph_stats();
        nb::dict d;
        d["recorded"] = s.recorded;
        d["replayed"] = s.replayed;
        d["early_checked"] = s.early_checked;
        d["failed"] = s.failed;
        d["copied_bytes"] = s.copied_bytes;
        d["fixed_steps"] = s.fixed_steps;
        d["dropped"] = s.dropped;
        d["kept_bytes"] = s.kept_bytes;
        d["last_failure"] = s.last_failure;
        return d;
      }, "What the CUDA graphs did: recordings made ('recorded'), runs replayed ('replayed'), replays whose "
         "label checks the host waited for alone ('early_checked': Note [Lean replays]), recordings "
         "that failed ('failed'; their signatures run op by op), argument bytes the replays copied into "
         "the recordings' buffers ('copied_bytes': Note [Carried values]), steps the kept recordings computed "
         "once instead of in every replay ('fixed_steps': Note [Fixed steps]), recordings dropped because an "
         "argument they read in place could not be overwritten ('dropped': Note [Steady arguments]), device "
         "bytes the recordings keep "
         "('kept_bytes') and the last failure's reason ('last_failure').");

  nb::class_<runtime::Residency>(m, "Residency",
                                 "Where a backend keeps its values (include/uma/runtime/residency.h). Internal: made by\n"
                                 "uma.Linker.core_residency().")
      .def_prop_ro("name", &runtime::Residency::name)
      .def_prop_ro("is_host", &runtime::Residency::is_host)
      .def_prop_ro("device", [](const runtime::Residency& r) -> nb::object {
        auto d = r.device();
        return d ? device_object(*d) : nb::none();
      }, "The device of its values when they are uma arrays (the host or a device), else None.");
  m.def("conversion_stats", [](bool reset) {
        nb::dict d;
        for (const runtime::ConversionCount& c : runtime::conversion_counts(reset)) {
          nb::dict e;
          e["conversions"] = c.conversions;
          e["bytes"] = c.bytes;
          d[nb::make_tuple(c.from, c.to)] = e;
        }
        return d;
      }, nb::arg("reset") = false,
      "The conversions of shared variables' values between residencies since the process started (or\n"
      "the last reset=True): {(from, to): {'conversions': int, 'bytes': int}}, residencies by name\n"
      "('cpu' is the host, 'cuda:0', 'numpy', 'torch', ...). A conversion is counted when a read\n"
      "(a function of another backend, get_value) keeps the value in a residency where it was stale,\n"
      "or when update_policy='eager' keeps the host copy current; bytes are the host copy's size,\n"
      "whether the conversion copied or shared memory. A switch between two residencies on one\n"
      "device counts once: ('jax-cuda:0', 'cuda:0') is a conversion on the GPU; any other switch\n"
      "goes through the host, so a torch -> cuda switch counts ('torch', 'cpu') and\n"
      "('cpu', 'cuda:0'). reset=True\n"
      "sets the counts back to zero after reading them.");
  m.def("_array_residency", [](nb::handle device) { return runtime::array_residency(to_device(device)); }, param("device"),
        "uma's residency of `device` (values are uma.Arrays there; 'cpu' for the host).");
  m.def("_python_residency", [](std::string name, nb::object from_host, nb::object to_host, nb::object describe,
                                 nb::handle home) {
    UMA_CHECK(name != "cpu", Value, "a Python residency cannot be named 'cpu' (the host residency is uma's)");
    return std::shared_ptr<const runtime::Residency>(std::make_shared<PyResidency>(
        std::move(name), std::move(from_host), std::move(to_host), std::move(describe),
        home.is_none() ? Device::cpu() : to_device(home)));
  }, nb::arg("name"), nb::arg("from_host"), nb::arg("to_host"), nb::arg("describe"), param("home") = nb::none(),
  "A Python backend's residency: from_host(array, dtype, static_shape) -> native value,\n"
  "to_host(value, dtype, static_shape) -> uma.Array (its linker's filters), and\n"
  "describe(value) -> (dtype name, shape) | None (uma.runtime.filters.value_type). `home`: the\n"
  "device (default the host) of the uma.Arrays the filters take and give; two residencies with\n"
  "the same device home convert through an array there, never through host memory.");

  nb::class_<runtime::SharedCell>(m, "SharedCell",
                                  "A shared variable's declared type, its copies in every residency and its lock\n"
                                  "(include/uma/runtime/shared_cell.h). Internal: used by uma.runtime.shared.Container.",
                                  nb::type_slots(g_cell_slots))
      .def("__init__", [](runtime::SharedCell* self, nb::handle v, nb::handle dtype, nb::handle shape,
                          std::string label, std::string text) {
        Array host = host_array(v);
        runtime::TypeSpec t;
        t.dtype = required_dtype(dtype, "SharedCell");
        t.shape = static_shape_of(shape);
        t.label = std::move(label);
        t.text = std::move(text);
        new (self) runtime::SharedCell(std::move(host), std::move(t));
      }, param("host"), param("dtype"), param("shape"), nb::arg("label"), nb::arg("text"))
      .def_prop_ro("serial", &runtime::SharedCell::serial, "Creation order: the order in which locks are taken.")
      .def_prop_ro("host_current", [](runtime::SharedCell& c) { return locked(c, [&] { return c.host_current(); }); })
      .def_prop_ro("current", [](runtime::SharedCell& c) { return locked(c, [&] { return c.current(); }); },
                   "The names of the residencies holding a current copy.")
      .def("copy_in", [](runtime::SharedCell& c, const std::string& name) -> nb::object {
        return locked(c, [&]() -> nb::object {
          if (name == "cpu") return c.host_current() ? nb::cast(c.host()) : nb::none();
          const runtime::Value* v = c.copy_in(name);
          return v ? to_python(*v) : nb::none();
        });
      }, "The current copy in the residency named `name`, or None.")
      .def("read_host", [](runtime::SharedCell& c) { return locked(c, [&] { return c.read_host(); }); },
           "The host copy, converted once from the copy written last when it is stale.")
      .def("read", [](runtime::SharedCell& c, const std::shared_ptr<const runtime::Residency>& r) {
        return locked(c, [&] { return to_python(c.read(r)); });
      }, "The current copy in residency `r`, converted once (through the host copy) when there is none.")
      .def("write_host", [](runtime::SharedCell& c, nb::handle v) {
        Array a = host_array(v);
        UMA_CHECK(c.type().admits(a.dtype(), a.shape()), Type, "SharedCell: a value of ", dtype_name(a.dtype()),
                  " and shape ", shape_str(a.shape()), " does not have the type ", c.type().text);
        locked(c, [&] { c.write_host(std::move(a)); });
      }, "The host copy `v` becomes the only current copy.")
      .def("acquire", [](runtime::SharedCell& c) { acquire(c); return true; },
           "Takes the lock (re-entrant), waiting with the GIL released.")
      .def("release", [](runtime::SharedCell& c) { c.unlock(); },
           "Releases the lock; RuntimeError when this thread does not hold it.")
      .def("__enter__", [](runtime::SharedCell& c) { acquire(c); })
      .def("__exit__", [](runtime::SharedCell& c, nb::handle, nb::handle, nb::handle) { c.unlock(); },
           nb::arg().none(), nb::arg().none(), nb::arg().none());

  nb::class_<PyFunction>(m, "Function",
                         "A compiled function's call in C++, for every backend (include/uma/runtime/function.h).\n"
                         "Internal: made and called by uma.Function.", nb::type_slots(g_function_slots))
      .def("__init__", [](PyFunction* self, nb::object compiled, nb::list specs,
                          std::vector<std::shared_ptr<runtime::SharedCell>> cells, std::vector<int> updates,
                          std::size_t n_outputs, bool allow_input_downcast, nb::object filter, nb::object shape_check,
                          bool single, std::string backend, std::shared_ptr<const runtime::Residency> residency,
                          bool eager, nb::object describe, bool hold_reads) {
        std::vector<runtime::InputSpec> in;
        for (nb::handle item : specs) {
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) == 3, Value, "Function: each input spec is (dtype, static shape, label)");
          runtime::InputSpec s;
          s.dtype = required_dtype(t[0], "Function");
          s.shape = static_shape_of(t[1]);
          s.label = nb::cast<std::string>(t[2]);
          in.push_back(std::move(s));
        }
        UMA_CHECK(residency != nullptr, Value, "Function: no residency");
        runtime::FunctionOptions opts{backend, residency, allow_input_downcast, eager, hold_reads};
        const std::size_t n_values = n_outputs + updates.size();
        PyFunction* f;
        if (nb::isinstance<runtime::Program>(compiled)) {
          f = new (self) PyFunction{
              runtime::Function(nb::cast<std::shared_ptr<runtime::Program>>(compiled), std::move(in), std::move(cells),
                                std::move(updates), n_outputs, std::move(opts)),
              std::move(filter), single, {0}, nb::object(), nullptr};
          if (!shape_check.is_none()) {
            f->fn.set_shape_check(runtime::Function::ShapeCheck([f](const std::vector<Array>& values) {
              with_python([&] {
                if (!f->shape_check.is_valid()) return;
                Ref v{nb::cast(values)};
                Ref r{f->shape_check(v)};
              });
            }));
          }
        } else {
          const bool arrays = residency->device().has_value();
          auto thunk = std::make_shared<PyThunk>(compiled, describe, arrays, backend, n_values);
          PyThunk* raw = thunk.get();
          f = new (self) PyFunction{runtime::Function(std::shared_ptr<const runtime::Thunk>(std::move(thunk)),
                                                      std::move(in), std::move(cells), std::move(updates), n_outputs,
                                                      std::move(opts)),
                                    std::move(filter), single, {0}, nb::object(), nullptr};
          f->thunk = raw;
          if (!shape_check.is_none()) {
            f->fn.set_shape_check(runtime::Function::ValueShapeCheck([f](const std::vector<runtime::Value>& values) {
              with_python([&] {
                if (!f->shape_check.is_valid()) return;
                Ref l{nb::steal(PyList_New(static_cast<Py_ssize_t>(values.size())))};
                if (!l.is_valid()) throw nb::python_error();
                for (std::size_t i = 0; i < values.size(); ++i)
                  PyList_SET_ITEM(l.ptr(), static_cast<Py_ssize_t>(i), to_python(values[i]).release().ptr());
                Ref r{f->shape_check(l)};
              });
            }));
          }
        }
        if (!shape_check.is_none()) f->shape_check = std::move(shape_check);
      }, param("compiled"), nb::arg("specs"), nb::arg("cells"), nb::arg("updates"), nb::arg("n_outputs"),
         nb::arg("allow_input_downcast"), param("filter"), param("shape_check"), nb::arg("single"),
         nb::arg("backend"), nb::arg("residency"), nb::arg("eager"), param("describe"),
         nb::arg("hold_reads") = false,
         "`compiled`: a Program (run in C++ on uma arrays of the residency's device) or a thunk\n"
         "(values -> [outputs..., updates...], called with the GIL). `hold_reads`: keep the locks of the\n"
         "variables a call only reads until the thunk returns (FunctionOptions::hold_reads).")
      .def("__call__", [](PyFunction& f, nb::tuple args) -> nb::object {
        if (f.fn.program()) {
          auto r = fast_call(f, PySequence_Fast_ITEMS(args.ptr()), nb::len(args));
          UMA_CHECK(r.has_value(), Type, "function takes ", f.fn.num_inputs(), " argument(s), got ", nb::len(args));
          return std::move(*r);
        }
        return thunk_call(f, args);  // uma.Function calls _call_thunk instead (a forced unwind passes)
      }, nb::arg("args"),
      "Calls with the tuple `args` (for a Program function: arguments filtered here; for a thunk:\n"
      "values already in the residency): the outputs (one value, or a list). A Program's call\n"
      "releases the GIL while it computes (one on at most 4096 elements whose locks are all free keeps it).")
      .def("set_open_axes", [](PyFunction& f, std::vector<std::vector<int64_t>> axes) { f.fn.set_open_axes(std::move(axes)); },
           nb::arg("axes"),
           "Per update, the static axes of its variable that the update expression leaves open (a length\n"
           "that differs there is a ValueError; elsewhere a TypeError). Called once, before the first call.")
      .def_prop_ro("runs_program", [](const PyFunction& f) { return f.fn.program() != nullptr; },
                   "True when calls run a Program (no Python per call).")
      .def_prop_ro("calls", [](const PyFunction& f) { return f.calls.load(); }, "Calls computed so far.");

  m.def("_function_call_method", [](nb::handle cls) {
    UMA_CHECK(PyType_Check(cls.ptr()), Type, "_function_call_method: expected a class");
    PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_function_call_def);
    if (!d) throw nb::python_error();
    return nb::steal(d);
  }, "uma.Function.__call__ in C++ for the class `cls` (python/uma/runtime/function.py): the C++ call\n"
     "path without a Python frame; other calls go to Function._bound_call(args, kwargs).");
  m.attr("_call_thunk") = nb::steal(PyCFunction_NewEx(&g_call_thunk_def, nullptr, nullptr));
  m.attr("_program_run") = nb::steal(PyCFunction_NewEx(&g_program_run_def, nullptr, nullptr));
  m.def("_program_ops", &runtime::op_names, "Names of the ops a Program can run.");
  m.def("_shape_inputs", &runtime::shape_inputs, nb::arg("name"),
        "The inputs (positions) that the Program op `name` reads only for their shape, dtype and device "
        "(ones_like's 0, broadcast_like's 1); empty for other ops.");
  m.def("_fusable", [](const std::string& name, nb::handle dtype, bool condition) {
    DType t = required_dtype(dtype, "_fusable");
    if (auto b = ops::binary_op_named(name)) return condition ? ops::is_fusable_condition(*b, t) : ops::is_fusable(*b, t);
    if (auto u = ops::unary_op_named(name)) return !condition && ops::is_fusable(*u, t);
    return false;
  }, nb::arg("name"), param("dtype"), nb::arg("condition") = false,
  "Whether the elementwise op `name` keeps `dtype` and can join a fused chain of that dtype; with\n"
  "condition=True, whether it is a comparison of `dtype` operands that can be a fused where's condition.");
}

}  // namespace uma::py
