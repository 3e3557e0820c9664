// uma._core.Program: the executor the `cpu` and `cuda` linkers compile function graphs into;
// uma._core.SharedCell: the host residency of a shared variable (with its lock);
// uma._core.Function: a cpu function's call path in C++ (python/uma/runtime/function.py).
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>

#include <atomic>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#include "common.h"
#include "uma/error.h"
#include "uma/runtime/function.h"
#include "uma/runtime/program.h"
#include "uma/runtime/shared_cell.h"

namespace uma::py {

namespace {
// A static shape from Python (a tuple of ints and Nones) as the C++ specs hold it (-1: any length).
std::vector<int64_t> static_shape(nb::handle shape) {
  std::vector<int64_t> s;
  for (nb::handle d : nb::borrow<nb::tuple>(shape)) s.push_back(d.is_none() ? -1 : nb::cast<int64_t>(d));
  return s;
}

runtime::OpAttrs parse_attrs(const std::string& op, nb::handle attrs) {
  runtime::OpAttrs a;
  if (attrs.is_none()) return a;
  nb::dict d = nb::borrow<nb::dict>(attrs);
  for (auto [k, v] : d) {
    std::string key = nb::cast<std::string>(k);
    if (key == "axis") {
      if (v.is_none()) {
        a.axes = std::nullopt;
      } else if (nb::isinstance<nb::tuple>(v) || nb::isinstance<nb::list>(v)) {
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
      nb::object pv = is_python_scalar(v) ? nb::borrow(v) : nb::object(v.attr("item")());  // NumPy scalars
      UMA_CHECK(is_python_scalar(pv), Type, "Program: op '", op, "' needs a scalar fill_value");
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
      UMA_FAIL(Value, "Program: op '", op, "' got an unknown attribute '", key, "'");
    }
  }
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

// ---- Function from Python --------------------------------------------------------------
// A runtime::Function plus what the Python call needs: the filter of arguments it does not
// accept as they are (Python's filter_host: the exact errors and casting rules), whether it
// returns one value or a list, and call counters (introspection for the tests).
struct PyFunction {
  runtime::Function fn;
  nb::object filter;  // filter(k, value) -> uma.Array for input k
  bool single;
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> stale{0};
};

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

// Takes the GIL back after fast_call ran a call without it. Not in a destructor (as
// nb::gil_scoped_release would): at interpreter exit CPython ends a daemon thread that asks
// for the GIL with pthread_exit, and that forced unwind aborts the process when it starts in
// a destructor. Nor may the unwind drop the call's arrays: an adopted input's owner needs the
// GIL to be released, which would end the thread a second time mid-unwind. They are left to
// the exiting process.
void take_gil_back(PyThreadState* ts, CallScratch& s) {
#if defined(__GLIBCXX__)
  try {
    PyEval_RestoreThread(ts);
  } catch (abi::__forced_unwind&) {
    auto* left = new std::vector<Array>[3];  // never freed: the process is exiting
    left[0] = std::move(s.in);
    left[1] = std::move(s.out);
    left[2] = std::move(s.keep);
    throw;
  }
#else
  PyEval_RestoreThread(ts);
#endif
}

// One call on the C++ path with the positional arguments args[0..n): the outputs (one value
// or a list), or nullopt when this path cannot run it (wrong arity, a stale host copy): the
// caller then takes the Python path.
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
  runtime::Function::Attempt r = f.fn.try_call_now(in, out, kHoldGilElements);
  if (r == runtime::Function::Attempt::NotNow) {
    PyThreadState* ts = PyEval_SaveThread();
    std::exception_ptr err;
    bool ok = false;
    try {
      ok = f.fn.try_call(in, out);
    } catch (...) {
      err = std::current_exception();
    }
    take_gil_back(ts, s);
    if (err) std::rethrow_exception(err);
    r = ok ? runtime::Function::Attempt::Done : runtime::Function::Attempt::Stale;
  }
  // The counters change only here, with the GIL held: a load and a store, no atomic add.
  auto bump = [](std::atomic<uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); };
  if (r != runtime::Function::Attempt::Done) {
    bump(f.stale);
    return std::nullopt;
  }
  bump(f.calls);
  if (f.single) return nb::cast(std::move(out[0]));
  nb::list l = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(out.size())));
  if (!l.is_valid()) throw nb::python_error();
  for (std::size_t k = 0; k < out.size(); ++k)
    PyList_SET_ITEM(l.ptr(), static_cast<Py_ssize_t>(k), nb::cast(std::move(out[k])).release().ptr());
  return nb::object(std::move(l));
}

// uma.Function.__call__ (python/uma/runtime/function.py) as a method written against the C API
// (METH_FASTCALL | METH_KEYWORDS: no argument tuple, no keyword dict, no overload dispatch), so
// that a call on the C++ path runs no Python frame: positional arguments with a fast path (the
// instance's `_fast`, a uma._core.Function) run here; keyword arguments, functions without a
// fast path and calls handed back go to `Function._general_call(args, kwargs)`.
// Not noexcept: a daemon thread that meets interpreter shutdown is ended by pthread_exit, whose
// forced unwind must pass through (catching it without rethrowing aborts the process).
PyObject* function_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static PyObject* const fast_name = PyUnicode_InternFromString("_fast");  // leaked: outlives Python
  try {
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nkw == 0) {
      nb::object fast = nb::steal(PyObject_GetAttr(self, fast_name));
      if (!fast.is_valid()) return nullptr;
      if (!fast.is_none()) {
        if (auto r = fast_call(nb::cast<PyFunction&>(fast), args, static_cast<std::size_t>(nargs)))
          return r->release().ptr();
      }
    }
    nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(nargs));
    if (!t.is_valid()) return nullptr;
    for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(t.ptr(), i, nb::borrow(args[i]).release().ptr());
    nb::dict kw;
    for (Py_ssize_t i = 0; i < nkw; ++i) kw[nb::handle(PyTuple_GET_ITEM(kwnames, i))] = nb::handle(args[nargs + i]);
    return nb::handle(self).attr("_general_call")(t, kw).release().ptr();
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {
    throw;
#endif
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
}

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
      }, nb::arg("name"), nb::arg("inputs"), nb::arg("attrs").none() = nb::none())
      .def("add_fused", [](runtime::Program& p, const std::vector<int>& inputs, nb::list code, nb::handle dtype) {
        std::vector<FusedInstr> instrs;
        for (nb::handle item : code) {
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) == 3, Value, "Program.add_fused: each instruction is (op_name, a, b)");
          std::string name = nb::cast<std::string>(t[0]);
          FusedInstr ins;
          ins.a = nb::cast<int>(t[1]);
          ins.b = nb::cast<int>(t[2]);
          auto bin = ops::binary_op_named(name);
          auto un = ops::unary_op_named(name);
          UMA_CHECK(bin || un, Value, "Program.add_fused: '", name, "' is not an elementwise op");
          ins.binary = bin.has_value();
          ins.op = bin ? static_cast<int>(*bin) : static_cast<int>(*un);
          instrs.push_back(ins);
        }
        return p.add_fused(inputs, std::move(instrs), *to_dtype(dtype));
      }, nb::arg("inputs"), nb::arg("code"), nb::arg("dtype"),
      "Adds a fused elementwise chain: code is a list of (op_name, a, b) over registers (inputs first,\n"
      "then one register per instruction; b is ignored for unary ops). The last register is the result.\n"
      "Every input must have `dtype`; ops must keep the dtype (see uma._core._fusable).")
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
      .def_prop_ro("num_steps", &runtime::Program::num_steps);

  nb::class_<runtime::SharedCell>(m, "SharedCell",
                                  "The host copy of a shared variable, whether it is current, and the variable's lock\n"
                                  "(include/uma/runtime/shared_cell.h). Internal: used by uma.runtime.shared.Container.")
      .def("__init__", [](runtime::SharedCell* self, nb::handle v) { new (self) runtime::SharedCell(host_array(v)); })
      .def_prop_ro("serial", &runtime::SharedCell::serial, "Creation order: the order in which locks are taken.")
      .def_prop_ro("host_current", [](runtime::SharedCell& c) { return locked(c, [&] { return c.host_current(); }); })
      .def_prop_ro("epoch", [](runtime::SharedCell& c) { return locked(c, [&] { return c.epoch(); }); },
                   "Changes whenever a write replaces the set of current copies.")
      .def_prop_ro("host", [](runtime::SharedCell& c) { return locked(c, [&] { return c.host(); }); },
                   "The host copy (RuntimeError when it is stale).")
      .def("write_host", [](runtime::SharedCell& c, nb::handle v) {
        Array a = host_array(v);
        locked(c, [&] { c.write_host(std::move(a)); });
      }, "The host copy `v` becomes the only current copy.")
      .def("write_elsewhere", [](runtime::SharedCell& c) { locked(c, [&] { c.write_elsewhere(); }); },
           "Another residency was written: the host copy is dropped.")
      .def("refresh_host", [](runtime::SharedCell& c, nb::handle v) {
        Array a = host_array(v);
        locked(c, [&] { c.refresh_host(std::move(a)); });
      }, "The host copy brought up to date (the other current copies stay current).")
      .def("acquire", [](runtime::SharedCell& c) { acquire(c); return true; },
           "Takes the lock (re-entrant), waiting with the GIL released.")
      .def("release", [](runtime::SharedCell& c) { c.unlock(); },
           "Releases the lock; RuntimeError when this thread does not hold it.")
      .def("__enter__", [](runtime::SharedCell& c) { acquire(c); })
      .def("__exit__", [](runtime::SharedCell& c, nb::handle, nb::handle, nb::handle) { c.unlock(); },
           nb::arg().none(), nb::arg().none(), nb::arg().none());

  nb::class_<PyFunction>(m, "Function",
                         "A cpu function's call path in C++ (include/uma/runtime/function.h). Internal: made and\n"
                         "called by uma.Function; a call returns `stale` (the object given) instead of\n"
                         "computing when it cannot run here (wrong arity, a stale host copy).")
      .def("__init__", [](PyFunction* self, std::shared_ptr<runtime::Program> program, nb::list specs,
                          std::vector<std::shared_ptr<runtime::SharedCell>> cells, std::vector<int> updates,
                          std::size_t n_outputs, bool allow_input_downcast, nb::object filter, nb::object shape_check,
                          bool single) {
        std::vector<runtime::InputSpec> in;
        for (nb::handle item : specs) {
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) == 3, Value, "Function: each input spec is (dtype, static shape, label)");
          runtime::InputSpec s;
          s.dtype = *to_dtype(t[0]);
          s.shape = static_shape(t[1]);
          s.label = nb::cast<std::string>(t[2]);
          in.push_back(std::move(s));
        }
        auto* f = new (self) PyFunction{runtime::Function(std::move(program), std::move(in), std::move(cells),
                                                          std::move(updates), n_outputs, allow_input_downcast),
                                        std::move(filter), single};
        if (!shape_check.is_none()) {
          f->fn.set_shape_check([shape_check](const std::vector<Array>& values) {
            nb::gil_scoped_acquire gil;
            shape_check(nb::cast(values));
          });
        }
      }, nb::arg("program"), nb::arg("specs"), nb::arg("cells"), nb::arg("updates"), nb::arg("n_outputs"),
         nb::arg("allow_input_downcast"), nb::arg("filter"), nb::arg("shape_check").none(), nb::arg("single"))
      .def("__call__", [](PyFunction& f, nb::tuple args, nb::handle stale) -> nb::object {
        if (auto r = fast_call(f, PySequence_Fast_ITEMS(args.ptr()), nb::len(args))) return std::move(*r);
        return nb::borrow(stale);
      }, nb::arg("args"), nb::arg("stale"),
      "Calls with the tuple `args`: the outputs (one value, or a list), or `stale` when this path\n"
      "cannot run the call. The GIL is released while it computes (a call on at most 4096 elements\n"
      "whose locks are all free keeps it).")
      .def("set_update_types", [](PyFunction& f, nb::list types) {
        std::vector<runtime::UpdateSpec> specs;
        for (nb::handle item : types) {
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) == 4, Value, "Function: each update type is (dtype, static shape, label, type)");
          runtime::UpdateSpec s;
          s.dtype = *to_dtype(t[0]);
          s.shape = static_shape(t[1]);
          s.label = nb::cast<std::string>(t[2]);
          s.type = nb::cast<std::string>(t[3]);
          specs.push_back(std::move(s));
        }
        f.fn.set_update_types(std::move(specs));
      }, nb::arg("types"),
      "The declared type of each update's shared variable, (dtype, static shape, label, type text)\n"
      "per update: every update's value is checked against it before any is written (TypeError).\n"
      "Called once, before the first call.")
      .def_prop_ro("calls", [](const PyFunction& f) { return f.calls.load(); }, "Calls computed here.")
      .def_prop_ro("stale_calls", [](const PyFunction& f) { return f.stale.load(); },
                   "Calls handed back because a shared variable's host copy was stale.");

  m.def("_function_call_method", [](nb::handle cls) {
    UMA_CHECK(PyType_Check(cls.ptr()), Type, "_function_call_method: expected a class");
    PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_function_call_def);
    if (!d) throw nb::python_error();
    return nb::steal(d);
  }, "uma.Function.__call__ in C++ for the class `cls` (python/uma/runtime/function.py): the C++ call\n"
     "path without a Python frame; other calls go to Function._general_call(args, kwargs).");
  m.def("_program_ops", &runtime::op_names, "Names of the ops a Program can run.");
  m.def("_fusable", [](const std::string& name, nb::handle dtype) {
    DType t = *to_dtype(dtype);
    if (auto b = ops::binary_op_named(name)) return ops::is_fusable(*b, t);
    if (auto u = ops::unary_op_named(name)) return ops::is_fusable(*u, t);
    return false;
  }, "Whether the elementwise op `name` keeps `dtype` and can join a fused chain of that dtype.");
}

}  // namespace uma::py
