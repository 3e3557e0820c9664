// The uma._core extension: error mapping, dtype/device objects, memory functions.
#include <cstring>

#include <nanobind/stl/pair.h>

#include "common.h"
#include "uma/error.h"
#include "uma/threads.h"
#include "uma/memory/allocator.h"
#include "uma/memory/cuda.h"

namespace uma::py {

namespace {
PyObject* g_copy_error = nullptr;
PyObject* g_axis_error = nullptr;  // numpy.exceptions.AxisError (ValueError and IndexError)
PyObject* g_linalg_error = nullptr;  // uma.linalg.LinAlgError (a ValueError)
// Python objects registered by the package: strong references kept for the process's life, as
// handles (a C++ global with a destructor would release them at process exit, after the
// interpreter is gone). Set once by _register_dtypes.
nb::handle g_dtype_objects[kNumDTypes];
nb::handle g_dtype_type;      // the Python class uma.dtype
nb::handle g_dtype_resolve;   // python function resolving anything to a uma.dtype
// The Python callable (type, index) -> uma.Device: a strong reference kept for the process's
// life, like the dtype objects above.
PyObject* g_device_factory = nullptr;
}  // namespace

PyObject* copy_error_type() { return g_copy_error; }

namespace {
// Raises `type` with a C++ message: its bytes as UTF-8, any that are not escaped (\xNN), so a
// message that quotes foreign bytes (a producer's error text, a path) keeps its type and text.
void set_error_message(PyObject* type, const char* msg) {
  PyObject* text = PyUnicode_DecodeUTF8(msg, static_cast<Py_ssize_t>(std::strlen(msg)), "backslashreplace");
  if (!text) return;  // the decoder's own error (MemoryError) stands
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}
}  // namespace

void translate_exception(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const uma::Error& e) {
    PyObject* t = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::Type: t = PyExc_TypeError; break;
      case ErrorKind::Value: t = PyExc_ValueError; break;
      case ErrorKind::Index: t = PyExc_IndexError; break;
      case ErrorKind::Copy: t = g_copy_error; break;
      case ErrorKind::Overflow: t = PyExc_OverflowError; break;
      case ErrorKind::Runtime: t = PyExc_RuntimeError; break;
      case ErrorKind::Memory: t = PyExc_MemoryError; break;
      case ErrorKind::Axis: t = g_axis_error; break;
      case ErrorKind::LinAlg: t = g_linalg_error; break;
    }
    set_error_message(t, e.what());
  } catch (const nb::cast_error&) {
    // An argument nanobind could not convert inside a binding (e.g. axis=1.0, a shape of
    // strings): a TypeError, never a bare "std::bad_cast".
    PyErr_SetString(PyExc_TypeError, "an argument has the wrong type (expected an int, a tuple of ints, or an array)");
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "out of memory");
  }
}

void set_python_error(const std::exception_ptr& p) noexcept {
  try {
    translate_exception(p);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    PyObject* t = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::index_error: t = PyExc_IndexError; break;
      case nb::exception_type::key_error: t = PyExc_KeyError; break;
      case nb::exception_type::value_error: t = PyExc_ValueError; break;
      case nb::exception_type::type_error: t = PyExc_TypeError; break;
      case nb::exception_type::buffer_error: t = PyExc_BufferError; break;
      case nb::exception_type::attribute_error: t = PyExc_AttributeError; break;
      default: break;
    }
    set_error_message(t, e.what());
  } catch (const std::exception& e) {
    set_error_message(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "uma: unknown C++ exception");
  }
}

std::string py_str(nb::handle h) {
  nb::object s = nb::steal(PyObject_Str(h.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  const char* c = PyUnicode_AsUTF8(s.ptr());
  if (!c) throw nb::python_error();
  return c;
}

std::string py_repr(nb::handle h) {
  nb::object s = nb::steal(PyObject_Repr(h.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  const char* c = PyUnicode_AsUTF8(s.ptr());
  if (!c) throw nb::python_error();
  return c;
}

nb::object dtype_object(DType t) {
  nb::handle o = g_dtype_objects[static_cast<int>(t)];
  if (!o.is_valid()) return nb::str(dtype_name(t));
  return nb::borrow(o);
}

std::optional<DType> to_dtype(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (g_dtype_type.is_valid() && Py_TYPE(h.ptr()) == reinterpret_cast<PyTypeObject*>(g_dtype_type.ptr()))
    return static_cast<DType>(nb::cast<int>(h.attr("_code")));
  if (nb::isinstance<nb::str>(h)) {
    auto t = dtype_from_name(nb::cast<std::string>(h));
    if (t) return t;
  }
  UMA_CHECK(g_dtype_resolve.is_valid(), Type, "data type not understood");
  nb::object d = g_dtype_resolve(h);  // raises TypeError itself
  return static_cast<DType>(nb::cast<int>(d.attr("_code")));
}

DType required_dtype(nb::handle h, const char* api) {
  UMA_CHECK(!h.is_none(), Type, api, ": dtype must be a dtype (uma.float32, 'int64', numpy.float64, ...), got None");
  return *to_dtype(h);
}

Device to_device(nb::handle h) {
  if (h.is_none()) return Device::cpu();
  if (nb::isinstance<nb::str>(h)) return Device::parse(nb::cast<std::string>(h));
  if (nb::hasattr(h, "_uma_device")) {
    auto [t, i] = nb::cast<std::pair<int, int>>(h.attr("_uma_device"));
    return Device{static_cast<DeviceType>(t), i};
  }
  UMA_FAIL(Type, "device must be a string like 'cpu' or 'cuda:0', or a uma.Device, got ",
           py_repr((h)));
}

nb::object device_object(Device d) {
  if (g_device_factory) return nb::handle(g_device_factory)(static_cast<int>(d.type), d.index);
  return nb::str(d.str().c_str());
}

}  // namespace uma::py

using namespace uma;
using namespace uma::py;

NB_MODULE(_core, m) {
  m.doc() = "uma core: arrays, memory, interop and the compiled-program executor (C++).";

  // CopyError subclasses both ValueError and BufferError (DESIGN.md, "The copy rules").
  {
    PyObject* bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_BufferError);
    g_copy_error = PyErr_NewExceptionWithDoc(
        "uma.CopyError",
        "Raised when copy=False was requested but the import cannot share memory (Python Array API "
        "standard, asarray/from_dlpack). Subclass of ValueError and BufferError.",
        bases, nullptr);
    Py_DECREF(bases);
    m.attr("CopyError") = nb::handle(g_copy_error);
  }
  // LinAlgError subclasses numpy.linalg.LinAlgError (itself a ValueError), so code written for
  // NumPy catches it.
  nb::object np_linalg_error = nb::module_::import_("numpy").attr("linalg").attr("LinAlgError");
  g_linalg_error = PyErr_NewExceptionWithDoc(
      "uma.linalg.LinAlgError",
      "Raised by uma.linalg when a matrix cannot be factorised: singular (inv, solve), not positive\n"
      "definite (cholesky), or a factorisation that did not converge (eigh, eigvalsh, svd, svdvals).\n"
      "Subclass of numpy.linalg.LinAlgError, and so of ValueError.",
      np_linalg_error.ptr(), nullptr);
  m.attr("LinAlgError") = nb::handle(g_linalg_error);
  g_axis_error = nb::object(nb::module_::import_("numpy").attr("exceptions").attr("AxisError")).release().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) { translate_exception(p); });

  m.def("_register_dtypes", [](nb::list objs, nb::object type, nb::object resolve) {
    UMA_CHECK(nb::len(objs) == kNumDTypes, Value, "expected ", kNumDTypes, " dtype objects");
    UMA_CHECK(!g_dtype_type.is_valid(), Runtime, "_register_dtypes: the dtypes are registered already");
    for (int i = 0; i < kNumDTypes; ++i) g_dtype_objects[i] = nb::object(objs[i]).release();
    g_dtype_type = type.release();
    g_dtype_resolve = resolve.release();
  });
  m.def("_register_device_factory", [](nb::object f) {
    Py_XDECREF(g_device_factory);
    g_device_factory = f.release().ptr();
  });
  m.def("_dtype_info", []() {
    nb::list l;
    for (int i = 0; i < kNumDTypes; ++i) {
      DType t = static_cast<DType>(i);
      l.append(nb::make_tuple(dtype_name(t), itemsize(t), nb::str(std::string(1, dtype_kind(t)).c_str())));
    }
    return l;
  });
  m.def("_promote_types", [](int a, int b) { return static_cast<int>(promote_types(static_cast<DType>(a), static_cast<DType>(b))); });
  m.def("_promote_weak", [](int a, int kind) { return static_cast<int>(promote_weak(static_cast<DType>(a), static_cast<ScalarKind>(kind))); });
  m.def("_can_cast", [](int a, int b, const std::string& casting) {
    DType f = static_cast<DType>(a), t = static_cast<DType>(b);
    if (casting == "no" || casting == "equiv") return f == t;
    if (casting == "safe") return can_cast_safe(f, t);
    if (casting == "same_kind") return can_cast_same_kind(f, t);
    if (casting == "unsafe") return true;
    UMA_FAIL(Value, "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe', got '", casting, "'");
  });

  m.def("memory_stats", [](nb::handle device) {
        MemoryStats s = uma::memory_stats(to_device(device));
        nb::dict d;
        d["active_bytes"] = s.active_bytes;
        d["cached_bytes"] = s.cached_bytes;
        d["peak_bytes"] = s.peak_bytes;
        d["adopted_bytes"] = s.adopted_bytes;
        if (!to_device(device).is_cpu()) {
          d["host_to_device_bytes"] = s.host_to_device_bytes;
          d["device_to_host_bytes"] = s.device_to_host_bytes;
        }
        return d;
      }, nb::arg("device") = "cpu",
      "Memory statistics of a device as a dict of ints, in bytes (DESIGN.md, memory stats):\n"
      "active_bytes (live pooled allocations, rounded sizes), cached_bytes (free pooled blocks held),\n"
      "peak_bytes (max of active_bytes), adopted_bytes (live adopted foreign memory); for a cuda\n"
      "device also host_to_device_bytes / device_to_host_bytes (bytes transferred since start).\n"
      "RuntimeError if the device is not available in this build.");
  m.def("clear_cache", [](nb::handle device) {
        const Device d = to_device(device);
        if (!d.is_cpu()) {
          cuda::require(d, "clear_cache");
          cuda::clear_cache(d.index);
          return;
        }
        host_allocator().clear_cache();
      }, nb::arg("device") = "cpu", "Returns every cached free block of the device's allocator to the system.");
  m.def("set_cache_limit", [](nb::handle nbytes) {
        host_allocator().set_cache_limit(static_cast<std::size_t>(int_arg(nbytes, "set_cache_limit", "nbytes", 0)));
      }, param("nbytes"),
      "Largest number of bytes (an int) the host allocator keeps cached (default 1 GiB; 0 disables\n"
      "caching). TypeError for a non-integer, OverflowError beyond int64, ValueError if negative.");

  m.def("get_num_threads", &threads::max_threads,
        "The most host threads (an int >= 1) one uma kernel or matrix product uses (uma/threads.h). Default:\n"
        "the environment variable UMA_NUM_THREADS, else OMP_NUM_THREADS (its first entry), else the\n"
        "CPUs this process may run on (affinity mask, cgroup CPU quota). A kernel uses fewer: only as\n"
        "many as its work fills (each thread gets at least 65536 elements, a matrix product 2**21\n"
        "multiply-adds and 192 rows) and as there are cores not busy with other processes (sampled from\n"
        "/proc/stat every 100 ms). Results are the same bits on any number of threads. ValueError if\n"
        "UMA_NUM_THREADS is set but not a positive integer.");
  m.def("set_num_threads", [](nb::handle n) {
          UMA_CHECK(!n.is_none(), Type, "set_num_threads: n must be an int, got None");
          const int64_t v = int_arg(n, "set_num_threads", "n");
          UMA_CHECK(v >= 0 && v <= 65536, Value,
                    "set_num_threads: the number of threads must be between 1 and 65536 (0: the default), got ", v);
          threads::set_max_threads(static_cast<int>(v));
        },
        param("n"),
        "Sets get_num_threads() to n (an int >= 1; 0 restores the default), for every thread of the\n"
        "process. TypeError for a non-integer, OverflowError beyond int64, ValueError if negative or over\n"
        "65536.");
  m.def("_threads_available", &threads::available,
        "The cores free for this process now (uma/threads.h, available): between 1 and get_num_threads().");
  m.def("_free_cores", &threads::free_cores, nb::arg("idle_ticks"), nb::arg("total_ticks"), nb::arg("tick_s"),
        nb::arg("own_cpu_s"), nb::arg("cpus"), "The free-core rule of _threads_available on one sampling window.");

  bind_array(m);
  bind_arrow(m);
  bind_interop(m);
  bind_ops(m);
  bind_linalg(m);
  bind_fft(m);
  bind_runtime(m);
  bind_files(m);
  bind_cuda(m);
}
