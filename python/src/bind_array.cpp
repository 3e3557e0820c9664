// uma.Array: attributes, indexing, operators, and export (buffer protocol, array interface,
// __array__, DLPack).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include <cstring>

#include "common.h"
#include "uma/error.h"
#include "uma/interop/dlpack_io.h"
#include "uma/memory/cuda.h"
#include "uma/transfer.h"

namespace uma::py {

namespace {

// ---- buffer protocol export --------------------------------------------------------------

const char* pep3118_format(DType t) {
  switch (t) {
    case DType::Bool: return "?";
    case DType::Int8: return "b";
    case DType::Int16: return "h";
    case DType::Int32: return "i";
    case DType::Int64: return "q";
    case DType::UInt8: return "B";
    case DType::UInt16: return "H";
    case DType::UInt32: return "I";
    case DType::UInt64: return "Q";
    case DType::Float16: return "e";
    case DType::Float32: return "f";
    case DType::Float64: return "d";
    case DType::Complex64: return "Zf";
    case DType::Complex128: return "Zd";
    case DType::BFloat16: return nullptr;
  }
  return nullptr;
}

struct BufferInfo {
  Array array;
  std::vector<Py_ssize_t> shape, strides;
};

int array_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto fail = [&](const char* msg) {
    PyErr_SetString(PyExc_BufferError, msg);
    view->obj = nullptr;
    return -1;
  };
  // An instance made by __new__ alone (or by a subclass whose __init__ skips uma.Array's) holds
  // no array yet.
  if (!nb::inst_ready(self)) return fail("uma.Array: the array is not initialized (its __init__ did not run)");
  Array* a = nb::inst_ptr<Array>(self);
  if (!a->device().is_cpu())
    return fail("uma.Array: an array on a cuda device has no host buffer; use numpy.asarray(a) (a copy) or __dlpack__");
  const char* fmt = pep3118_format(a->dtype());
  if (!fmt) return fail("uma.Array: bfloat16 has no buffer-protocol format; use __dlpack__ or __array__");
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && !a->writable())
    return fail("uma.Array: a writable buffer was requested from a read-only array");
  const bool c = a->is_c_contiguous(), f = a->is_f_contiguous();
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c)
    return fail("uma.Array: a C-contiguous buffer was requested from a non-C-contiguous array");
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f)
    return fail("uma.Array: a Fortran-contiguous buffer was requested from a non-Fortran-contiguous array");
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f)
    return fail("uma.Array: a contiguous buffer was requested from a non-contiguous array");
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c)
    return fail("uma.Array: the request has no strides but the array is not C-contiguous");
  auto* info = new BufferInfo{*a, {}, {}};
  const int64_t isz = static_cast<int64_t>(a->itemsize());
  for (int64_t d = 0; d < a->ndim(); ++d) {
    info->shape.push_back(a->shape()[d]);
    info->strides.push_back(a->strides()[d] * isz);
  }
  view->buf = a->data();
  view->obj = self;
  Py_INCREF(self);
  view->len = a->nbytes();
  view->readonly = a->writable() ? 0 : 1;
  view->itemsize = isz;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(fmt) : nullptr;
  if ((flags & PyBUF_ND) == PyBUF_ND) {
    view->ndim = static_cast<int>(a->ndim());
    view->shape = info->shape.data();
  } else {
    view->ndim = 1;
    view->shape = nullptr;
  }
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = info;
  return 0;
}

void array_releasebuffer(PyObject*, Py_buffer* view) { delete static_cast<BufferInfo*>(view->internal); }

PyType_Slot array_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(array_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(array_releasebuffer)},
    {0, nullptr},
};

// ---- DLPack export -------------------------------------------------------------------------

void capsule_destructor_versioned(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = static_cast<dlpack::DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m && m->deleter) m->deleter(m);
  }
}
void capsule_destructor_legacy(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}

// A (int, int) keyword of __dlpack__; anything else is a TypeError naming it (nanobind's
// nb::cast would raise a bare RuntimeError "std::bad_cast").
std::pair<long long, long long> dlpack_int_pair(nb::handle h, const char* what) {
  const bool ok = PyTuple_Check(h.ptr()) && PyTuple_GET_SIZE(h.ptr()) == 2 && PyLong_Check(PyTuple_GET_ITEM(h.ptr(), 0)) &&
                  PyLong_Check(PyTuple_GET_ITEM(h.ptr(), 1));
  UMA_CHECK(ok, Type, "__dlpack__: ", what, " must be a tuple of two integers, got ", py_repr(h));
  long long a = PyLong_AsLongLong(PyTuple_GET_ITEM(h.ptr(), 0)), b = PyLong_AsLongLong(PyTuple_GET_ITEM(h.ptr(), 1));
  if (PyErr_Occurred()) throw nb::python_error();
  return {a, b};
}

nb::object dlpack_export(const Array& self0, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  Array self = self0;
  bool host_copy = false;
  int32_t code = interop::dlpack_device_code(self);
  if (!self.device().is_cpu()) {
    // Array API: stream None = legacy default stream, -1 = no synchronisation, 0 refused.
    if (!stream.is_none() && !PyLong_Check(stream.ptr())) {
      PyErr_SetString(PyExc_TypeError, "__dlpack__: stream must be an integer or None");
      throw nb::python_error();
    }
    if (!dl_device.is_none()) {
      auto [dt, id] = dlpack_int_pair(dl_device, "dl_device");
      const bool same = dt <= INT32_MAX && interop::exportable_as(self, static_cast<int32_t>(dt)) &&
                        id == self.device().index;
      if (same) {
        code = static_cast<int32_t>(dt);
      } else if (dt == dlpack::kCPU && id == 0) {
        if (copy.ptr() == Py_False) {
          PyErr_SetString(PyExc_BufferError, "__dlpack__: copy=False is impossible: the array is on a cuda device "
                                             "and dl_device asks for the host");
          throw nb::python_error();
        }
        host_copy = true;
      } else {
        PyErr_Format(PyExc_BufferError, "__dlpack__: cannot export a %s array to device (%lld, %lld)",
                     self.device().str().c_str(), dt, id);
        throw nb::python_error();
      }
    }
    if (!host_copy) {
      const int64_t s = stream.is_none() ? 1 : nb::cast<int64_t>(stream);
      if (s == 0) {
        PyErr_SetString(PyExc_ValueError, "__dlpack__: stream=0 is ambiguous for CUDA and not allowed (Array API standard)");
        throw nb::python_error();
      }
      cuda::stream_wait_for(self.device().index, s);
    }
    if (host_copy) {
      self = uma::to_device(self, Device::cpu());
      code = dlpack::kCPU;
    }
    stream = nb::none();
    dl_device = nb::none();
  }
  if (!stream.is_none()) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__: stream must be None for CPU arrays (Array API standard)");
    throw nb::python_error();
  }
  UMA_CHECK(copy.is_none() || PyBool_Check(copy.ptr()), Type, "__dlpack__: copy must be True, False or None, got ",
            py_repr(copy));
  if (!dl_device.is_none()) {
    auto [dt, id] = dlpack_int_pair(dl_device, "dl_device");
    if (!(dt == dlpack::kCPU && id == 0)) {
      PyErr_Format(PyExc_BufferError, "__dlpack__: cannot export a cpu array to device (%lld, %lld)", dt, id);
      throw nb::python_error();
    }
  }
  const bool do_copy = copy.ptr() == Py_True && !host_copy;
  bool versioned = false;
  if (!max_version.is_none()) versioned = dlpack_int_pair(max_version, "max_version").first >= 1;
  Array a = do_copy ? ops::copy(self) : self;
  if (versioned) {
    auto* mt = interop::export_versioned(a, do_copy || host_copy, code);
    PyObject* cap = PyCapsule_New(mt, "dltensor_versioned", capsule_destructor_versioned);
    if (!cap) {
      mt->deleter(mt);
      throw nb::python_error();
    }
    return nb::steal(cap);
  }
  if (!a.writable()) {
    PyErr_SetString(PyExc_BufferError,
                    "__dlpack__: a read-only array cannot be exported through a legacy (unversioned) capsule, "
                    "which has no read-only flag, and the consumer asked for one (no max_version of (1, 0) or "
                    "later); a consumer of DLPack 1.0 shares it, or export a writable copy "
                    "(uma.asarray(x, copy=True))");
    throw nb::python_error();
  }
  auto* mt = interop::export_legacy(a, code);
  PyObject* cap = PyCapsule_New(mt, "dltensor", capsule_destructor_legacy);
  if (!cap) {
    mt->deleter(mt);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

// int(a), float(a), complex(a): the element of a 0-d array converted by `convert` (a Python
// int/float/complex constructor). Arrays with dimensions follow the installed NumPy's rule,
// whatever it is (NumPy 2.0-2.3 warn and convert a size-1 array, NumPy 2.4 raises TypeError):
// the same conversion is applied first to a NumPy array of a's shape, and its error or
// warning is NumPy's own.
template <class F>
nb::object python_number(const Array& a, F convert) {
  if (a.ndim() > 0) {
    nb::module_ np = nb::module_::import_("numpy");
    nb::object probe = np.attr("broadcast_to")(np.attr("zeros")(nb::tuple(), "b"), nb::cast(a.shape()));
    nb::object r = convert(probe);
    if (!r.is_valid()) throw nb::python_error();
  }
  nb::object r = convert(scalar_to_python(a));
  if (!r.is_valid()) throw nb::python_error();
  return r;
}

// ---- indexing ------------------------------------------------------------------------------

// A slice bound: None, or an integer clamped to [PY_SSIZE_T_MIN, PY_SSIZE_T_MAX] (Python's and
// NumPy's slices clamp bounds beyond 64 bits: a[:2**64] is a[:]).
std::optional<int64_t> opt_index(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  Py_ssize_t v = PyNumber_AsSsize_t(h.ptr(), nullptr);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(v);
}

IndexItem parse_item(nb::handle h) {
  IndexItem it;
  if (h.is_none()) {
    it.kind = IndexItem::NewAxis;
  } else if (h.ptr() == Py_Ellipsis) {
    it.kind = IndexItem::Ellipsis;
  } else if (PySlice_Check(h.ptr())) {
    it.kind = IndexItem::Slice;
    nb::handle s = h;
    it.start = opt_index(s.attr("start"));
    it.stop = opt_index(s.attr("stop"));
    it.step = opt_index(s.attr("step"));
  } else if (!PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr())) {
    it.kind = IndexItem::Int;
    Py_ssize_t v = PyNumber_AsSsize_t(h.ptr(), PyExc_IndexError);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    it.i = v;
  } else {
    UMA_FAIL(Index, "only integers, slices (`:`), ellipsis (`...`) and None are valid indices (advanced "
             "indexing with arrays or booleans is not supported yet), got ",
             py_repr((h)));
  }
  return it;
}

}  // namespace

std::vector<IndexItem> parse_index(nb::handle key) {
  std::vector<IndexItem> items;
  if (nb::isinstance<nb::tuple>(key)) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(parse_item(h));
  } else {
    items.push_back(parse_item(key));
  }
  return items;
}

namespace {

nb::object to_list(const Array& a, int64_t dim, char* p) {
  if (dim == a.ndim()) {
    Array e = a.view(p, {}, {});
    return scalar_to_python(e);
  }
  nb::list l;
  const int64_t step = a.strides()[dim] * static_cast<int64_t>(a.itemsize());
  for (int64_t i = 0; i < a.shape()[dim]; ++i) l.append(to_list(a, dim + 1, p + i * step));
  return l;
}

// NumPy's deferral rule (NEP 13): an operand whose type sets __array_ufunc__ = None (a uma
// symbolic Variable, for one) computes the operation itself, so the array's operator returns
// NotImplemented and Python calls the operand's reflected method.
bool defers_to(nb::handle other) {
  if (nb::isinstance<Array>(other) || PyFloat_Check(other.ptr()) || PyLong_Check(other.ptr()) ||
      PyComplex_Check(other.ptr()) || other.is_none())
    return false;
  PyObject* attr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(other.ptr())), "__array_ufunc__");
  if (attr == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool none = attr == Py_None;
  Py_DECREF(attr);
  return none;
}

Array binary_py(BinaryOp op, const Array& self, nb::handle other, bool reflected) {
  if (auto r = compare_out_of_range(op, nb::cast(self), other)) return *r;
  Array o = operand(other, &self, ops::op_name(op));
  return reflected ? ops::binary(op, o, self) : ops::binary(op, self, o);
}

void inplace(BinaryOp op, Array& self, nb::handle other) {
  if (defers_to(other))
    UMA_FAIL(Type, ops::op_name(op), ": an array cannot be updated in place with ", py_str(nb::repr(other)),
             " (a symbolic variable); write `a = a op x` to build a symbolic result");
  Array o = operand(other, &self, ops::op_name(op));
  UMA_CHECK(self.writable(), Value, ops::op_name(op), ": output array is read-only");
  Array r = ops::binary(op, self, o);
  UMA_CHECK(can_cast_same_kind(r.dtype(), self.dtype()), Type, "Cannot cast ufunc '", ops::op_name(op),
            "' output from ", dtype_name(r.dtype()), " to ", dtype_name(self.dtype()), " with casting rule 'same_kind'");
  UMA_CHECK(r.shape() == self.shape(), Value, ops::op_name(op), ": non-broadcastable output operand with shape ",
            shape_str(self.shape()), " doesn't match the broadcast shape ", shape_str(r.shape()));
  ops::assign(self, r);
}

// The real or imaginary part of a complex array as a strided view of its floats (the layout
// of complex numbers: real then imaginary); the .imag of another array is read-only zeros
// (numpy.ndarray.real / .imag; .real of a real array is the array itself).
Array complex_part(const Array& a, bool imag) {
  if (!is_complex(a.dtype())) {
    UMA_ASSERT(imag);
    Array z = ops::zeros(a.shape(), a.dtype());
    if (!a.device().is_cpu()) z = uma::to_device(z, a.device());
    return Array(z.storage(), z.data(), z.shape(), z.strides(), z.dtype(), false);
  }
  const DType t = a.dtype() == DType::Complex64 ? DType::Float32 : DType::Float64;
  Strides st;
  for (int64_t s : a.strides()) st.push_back(2 * s);
  char* p = static_cast<char*>(a.data()) + (imag ? itemsize(t) : 0);
  return Array(a.storage(), p, a.shape(), st, t, a.writable());
}

}  // namespace

nb::object scalar_to_python(const Array& a0) {
  UMA_ASSERT(a0.size() == 1);
  const Array a = to_host(a0);
  const char* p = static_cast<const char*>(a.data());
  return visit_dtype(a.dtype(), [&](auto t) -> nb::object {
    using T = decltype(t);
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_same_v<T, bool8>) return nb::bool_(static_cast<bool>(v));  // byte != 0
    else if constexpr (std::is_same_v<T, bfloat16>) return nb::float_(static_cast<double>(v.to_float()));
    else if constexpr (std::is_same_v<T, float16>) return nb::float_(static_cast<double>(v));
    else if constexpr (std::is_integral_v<T>) return nb::int_(v);
    else if constexpr (std::is_floating_point_v<T>) return nb::float_(static_cast<double>(v));
    else return nb::steal(PyComplex_FromDoubles(static_cast<double>(v.real()), static_cast<double>(v.imag())));
  });
}

nb::object to_numpy_view(const Array& a0) {
  const Array a = to_host(a0);  // a cuda array: a host copy (callers decide whether a copy is allowed)
  nb::module_ np = nb::module_::import_("numpy");
  if (a.dtype() == DType::BFloat16) {
    nb::object mld;
    try {
      mld = nb::module_::import_("ml_dtypes");
    } catch (nb::python_error&) {
      throw nb::import_error(
          "a bfloat16 array goes to NumPy as ml_dtypes.bfloat16, and ml_dtypes is not installed "
          "(a dependency of uma: pip install ml_dtypes)");
    }
    // Internal uint16 view only to hand the bytes to NumPy; the result is typed bfloat16.
    Array bits(a.storage(), a.data(), a.shape(), a.strides(), DType::UInt16, a.writable());
    nb::object arr = np.attr("asarray")(nb::cast(bits));
    return arr.attr("view")(mld.attr("bfloat16"));
  }
  return np.attr("asarray")(nb::cast(a));
}

void bind_array(nb::module_& m) {
  auto cls = nb::class_<Array>(m, "Array", nb::type_slots(array_slots),
                               "An n-dimensional array of one dtype on one device (uma.Array).\n"
                               "Views share memory; see DESIGN.md for the copy rules.");
  cls.def_prop_ro("shape", [](const Array& a) { return nb::tuple(nb::cast(a.shape())); }, "Tuple of ints.")
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("size", &Array::size)
      .def_prop_ro("dtype", [](const Array& a) { return dtype_object(a.dtype()); })
      .def_prop_ro("itemsize", [](const Array& a) { return a.itemsize(); })
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro("strides",
                   [](const Array& a) {
                     nb::list l;
                     for (int64_t s : a.strides()) l.append(s * static_cast<int64_t>(a.itemsize()));
                     return nb::tuple(l);
                   },
                   "Strides in bytes, like NumPy.")
      .def_prop_ro("device", [](const Array& a) { return device_object(a.device()); })
      .def_prop_ro("real", [](nb::handle self) -> nb::object {
                     const Array& a = nb::cast<const Array&>(self);
                     if (!is_complex(a.dtype())) return nb::borrow(self);
                     return nb::cast(complex_part(a, false));
                   },
                   "Real part (numpy.ndarray.real): of a complex array a view (float32 for complex64,\n"
                   "float64 for complex128) sharing its memory and writability; of another array the array itself.")
      .def_prop_ro("imag", [](const Array& a) { return complex_part(a, true); },
                   "Imaginary part (numpy.ndarray.imag): of a complex array a view like .real; of another\n"
                   "array a new read-only array of zeros of its dtype and shape.")
      .def_prop_ro("memory_kind", [](const Array& a) {
        return memory_kind_name(a.defined() ? a.storage()->data.memory_kind() : MemoryKind::Host);
      }, "Where the bytes live: 'host' (cpu arrays), 'device' (GPU memory), 'managed' (unified memory)\n"
         "or 'mapped' (registered host memory the GPU reads over the bus).")
      .def("to_device", [](const Array& a, nb::handle device, nb::handle stream) {
        UMA_CHECK(stream.is_none(), Value, "to_device: stream must be None (uma orders its work on its own stream)");
        const Device d = to_device(device);
        if (d == a.device()) return a;
        return uma::to_device(a, d);
      }, nb::arg("device"), nb::kw_only(), param("stream") = nb::none(),
      "A copy of the array on `device` ('cpu', 'cuda', 'cuda:N' or a uma.Device); the array itself\n"
      "when it is already there (Array API standard, to_device). RuntimeError when the device is\n"
      "not available (names why).")
      .def_prop_ro("writable", &Array::writable, "False for read-only arrays (writes raise ValueError).")
      .def_prop_ro("is_adopted", &Array::is_adopted, "True when the bytes belong to another library (zero-copy import).")
      .def_prop_ro("_data_ptr", [](const Array& a) { return reinterpret_cast<uintptr_t>(a.data()); })
      .def_prop_ro("T", [](const Array& a) { return ops::transpose(a); })
      .def("__len__", [](const Array& a) {
        UMA_CHECK(a.ndim() > 0, Type, "len() of unsized object");
        return a.shape()[0];
      })
      .def("item", [](const Array& a) {
        UMA_CHECK(a.size() == 1, Value, "can only convert an array of size 1 to a Python scalar");
        return scalar_to_python(a);
      })
      .def("tolist", [](const Array& a0) {
        const Array a = to_host(a0);
        return to_list(a, 0, static_cast<char*>(a.data()));
      })
      .def("__bool__", [](const Array& a) {
        UMA_CHECK(a.size() != 0, Value, "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                  "that an array is not empty.");
        UMA_CHECK(a.size() == 1, Value, "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
        return nb::cast<bool>(nb::bool_(scalar_to_python(a)));
      })
      .def("__float__", [](const Array& a) {
        return python_number(a, [](nb::handle x) { return nb::steal(PyNumber_Float(x.ptr())); });
      })
      .def("__int__", [](const Array& a) {
        return python_number(a, [](nb::handle x) { return nb::steal(PyNumber_Long(x.ptr())); });
      })
      .def("__complex__", [](const Array& a) {
        return python_number(a, [](nb::handle x) {
          return nb::steal(PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyComplex_Type), x.ptr()));
        });
      })
      .def("__index__", [](const Array& a) {
        UMA_CHECK(a.ndim() == 0 && is_integer(a.dtype()), Type, "only integer scalar arrays can be converted to a scalar index");
        return scalar_to_python(a);
      })
      .def("astype", [](const Array& a, nb::handle dtype, bool copy) {
        return astype_for_python(a, required_dtype(dtype, "astype"), copy);
      }, param("dtype"), nb::arg("copy") = true,
      "Values converted to dtype (never reinterpreted). copy=False returns self when the dtype already matches.\n"
      "TypeError when dtype is None or not a dtype uma knows.")
      .def("copy", [](const Array& a) { return ops::copy(a); })
      .def("reshape", [](const Array& a, nb::args shape) {
        if (shape.size() == 1 && !nb::isinstance<nb::int_>(shape[0])) return ops::reshape(a, shape_of(shape[0]));
        return ops::reshape(a, shape_of(shape));
      })
      .def("transpose", [](const Array& a, nb::args axes) {
        if (axes.size() == 1 && !axes[0].is_none() && !nb::isinstance<nb::int_>(axes[0]))
          return ops::transpose(a, nb::cast<std::vector<int64_t>>(axes[0]));
        if ((axes.size() == 1 && axes[0].is_none()) || axes.size() == 0) return ops::transpose(a);
        return ops::transpose(a, nb::cast<std::vector<int64_t>>(axes));
      })
      .def("__getitem__", [](const Array& a, nb::handle key) { return getitem_any(a, key); },
           param("key"),
           "a[key], NumPy's indexing (numpy.org, 'Indexing on ndarrays'): ints, slices, None and ... give a\n"
           "view; integer arrays (any integer dtype, lists too), bool arrays of any rank and 0-d bools,\n"
           "mixed with the others, give a copy (a's dtype) whose shape is the arrays' broadcast shape in\n"
           "place of the advanced indices when they are adjacent, else first. IndexError for an index out\n"
           "of range (naming it and the axis), arrays that do not broadcast, a bool array whose shape does\n"
           "not match, too many indices, non-integer arrays. The same on a cuda array (index arrays on its\n"
           "device or on the host; the bounds check waits for the device once).")
      .def("__setitem__", [](Array& a, nb::handle key, nb::handle value) {
        std::vector<IndexKey> k = parse_key(key);
        // NumPy's assignment converts Python numbers, the elements of a Python sequence and a
        // real NumPy scalar into an integer array as numbers (OverflowError out of range, ValueError
        // for NaN), and casts arrays unsafely.
        nb::object v = nb::borrow(value);
        if (is_integer(a.dtype()) && is_numpy_real_scalar(v)) v = v.attr("item")();
        const bool sequence = nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v);
        Array src = is_python_scalar(v) ? ops::scalar_array(to_scalar(v, a.dtype()), a.dtype())
                    : sequence ? asarray(v, a.dtype(), std::nullopt, interop::CopyMode::IfNeeded, "__setitem__")
                               : operand(v, nullptr, "__setitem__");
        warn_discarded_imaginary(src.dtype(), a.dtype());  // before anything is written
        ops::index_assign(a, k, src);
      }, param("key"), param("value"),
      "a[key] = value in place, for every key a[key] reads (NumPy's indexing): value broadcasts to the\n"
      "region's shape (ValueError otherwise) and is converted to a's dtype as NumPy's assignment does\n"
      "(unsafe casting of arrays; complex into a real or integer dtype keeps the real parts with NumPy's\n"
      "ComplexWarning; a Python number, the elements of a list or tuple, and a real NumPy scalar into an\n"
      "integer array convert as numbers: OverflowError out of range, ValueError for NaN, where NumPy 2\n"
      "wraps a NumPy scalar into an unsigned array); repeated indices: the last write\n"
      "wins. ValueError for a read-only array. Every device: on a cuda array the indices are checked\n"
      "before anything is written, so a failed assignment leaves a unchanged.")
      .def("__dlpack__", &dlpack_export, nb::kw_only(), param("stream") = nb::none(),
           param("max_version") = nb::none(), param("dl_device") = nb::none(), param("copy") = nb::none(),
           "Exports a DLPack capsule (Array API standard, __dlpack__): 'dltensor_versioned' when max_version >= (1, 0),\n"
           "else the legacy 'dltensor' (BufferError for read-only arrays). copy=True exports a copy (IS_COPIED set).\n"
           "stream must be None for CPU arrays; dl_device other than (1, 0) raises BufferError.")
      .def("__dlpack_device__", [](const Array& a) {
        return nb::make_tuple(interop::dlpack_device_code(a), a.device().index);
      })
      .def("__array__", [](const Array& a, nb::handle dtype, nb::handle copy) {
        bool want_copy = !copy.is_none() && nb::cast<bool>(copy);
        const bool never = !copy.is_none() && !nb::cast<bool>(copy);
        if (!a.device().is_cpu()) {
          if (never) {
            PyErr_Format(copy_error_type(), "__array__: copy=False is impossible: the array is on %s; NumPy needs "
                         "a host copy", a.device().str().c_str());
            throw nb::python_error();
          }
          want_copy = false;  // the host copy is already a new array
        }
        nb::object v = to_numpy_view(a);
        if (!dtype.is_none()) {
          nb::module_ np = nb::module_::import_("numpy");
          nb::object dt = np.attr("dtype")(dtype);
          if (!dt.equal(v.attr("dtype"))) {
            if (never) {
              PyErr_SetString(copy_error_type(), "__array__: copy=False is impossible: the dtype differs");
              throw nb::python_error();
            }
            return v.attr("astype")(dt);
          }
        }
        if (want_copy) return v.attr("copy")();
        return v;
      }, param("dtype") = nb::none(), nb::kw_only(), param("copy") = nb::none(),
      "NumPy view of the array (shares memory); copy=True returns a copy; a dtype conversion copies.")
      .def("__deepcopy__", [](const Array& a, nb::handle) { return ops::copy(a); })
      .def("__copy__", [](const Array& a) { return ops::copy(a); });

  // __array_interface__ is a property that raises AttributeError for bfloat16 so that NumPy
  // falls back to __array__ (which hands out an ml_dtypes.bfloat16 view).
  cls.def_prop_ro("__array_interface__", [](const Array& a) -> nb::object {
    const char* fmt = nullptr;
    switch (dtype_kind(a.dtype())) {
      case 'b': fmt = "|b1"; break;
      default: break;
    }
    if (!a.device().is_cpu()) {
      PyErr_SetString(PyExc_AttributeError, "arrays on a cuda device have no __array_interface__; use __array__ or __dlpack__");
      throw nb::python_error();
    }
    if (a.dtype() == DType::BFloat16) {
      PyErr_SetString(PyExc_AttributeError, "bfloat16 arrays have no __array_interface__; use __array__ or __dlpack__");
      throw nb::python_error();
    }
    std::string ts = fmt ? fmt : std::string("<") + dtype_kind(a.dtype()) + std::to_string(a.itemsize());
    if (a.itemsize() == 1 && a.dtype() != DType::Bool) ts = std::string("|") + dtype_kind(a.dtype()) + "1";
    nb::dict d;
    d["version"] = 3;
    d["shape"] = nb::tuple(nb::cast(a.shape()));
    d["typestr"] = ts;
    nb::list descr;
    descr.append(nb::make_tuple("", ts));
    d["descr"] = descr;
    d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), !a.writable());
    if (a.is_c_contiguous()) {
      d["strides"] = nb::none();
    } else {
      nb::list l;
      for (int64_t s : a.strides()) l.append(s * static_cast<int64_t>(a.itemsize()));
      d["strides"] = nb::tuple(l);
    }
    return d;
  });

  // Arithmetic and comparison operators (NumPy broadcasting, NEP 50 promotion).
#define UMA_BIN(pyname, rpyname, OP)                                                                         \
  cls.def(pyname, [](const Array& a, nb::handle o) -> nb::object {                                         \
    if (defers_to(o)) return nb::borrow(Py_NotImplemented);                                                \
    return nb::cast(binary_py(BinaryOp::OP, a, o, false));                                                 \
  }, param("other"));                                                                             \
  cls.def(rpyname, [](const Array& a, nb::handle o) { return binary_py(BinaryOp::OP, a, o, true); },        \
          param("other"));
  UMA_BIN("__add__", "__radd__", Add)
  UMA_BIN("__sub__", "__rsub__", Subtract)
  UMA_BIN("__mul__", "__rmul__", Multiply)
  UMA_BIN("__truediv__", "__rtruediv__", Divide)
  UMA_BIN("__floordiv__", "__rfloordiv__", FloorDivide)
  UMA_BIN("__mod__", "__rmod__", Remainder)
  UMA_BIN("__pow__", "__rpow__", Power)
  // NumPy's bitwise operators: on bool arrays they are the logical ops (same values).
  UMA_BIN("__and__", "__rand__", BitwiseAnd)
  UMA_BIN("__or__", "__ror__", BitwiseOr)
  UMA_BIN("__xor__", "__rxor__", BitwiseXor)
  UMA_BIN("__lshift__", "__rlshift__", BitwiseLeftShift)
  UMA_BIN("__rshift__", "__rrshift__", BitwiseRightShift)
#undef UMA_BIN
  // divmod(a, b): NumPy's (a // b, a % b), the two ops' own results.
  cls.def("__divmod__", [](const Array& a, nb::handle o) -> nb::object {
    if (defers_to(o)) return nb::borrow(Py_NotImplemented);
    return nb::make_tuple(binary_py(BinaryOp::FloorDivide, a, o, false), binary_py(BinaryOp::Remainder, a, o, false));
  }, param("other"));
  cls.def("__rdivmod__", [](const Array& a, nb::handle o) {
    return nb::make_tuple(binary_py(BinaryOp::FloorDivide, a, o, true), binary_py(BinaryOp::Remainder, a, o, true));
  }, param("other"));
#define UMA_IOP(pyname, OP) \
  cls.def(pyname, [](nb::handle self, nb::handle o) { inplace(BinaryOp::OP, nb::cast<Array&>(self), o); return nb::borrow(self); });
  UMA_IOP("__iadd__", Add)
  UMA_IOP("__isub__", Subtract)
  UMA_IOP("__imul__", Multiply)
  UMA_IOP("__itruediv__", Divide)
  UMA_IOP("__ifloordiv__", FloorDivide)
  UMA_IOP("__imod__", Remainder)
  UMA_IOP("__ipow__", Power)
#undef UMA_IOP
  // `a == None` / `a != None` compare every element with None (all False / all True), as NumPy's
  // object comparison does; the order comparisons with None are a TypeError.
#define UMA_CMP(pyname, OP)                                                                                \
  cls.def(pyname, [](const Array& a, nb::handle o) -> nb::object {                                         \
    if (o.is_none() && (BinaryOp::OP == BinaryOp::Equal || BinaryOp::OP == BinaryOp::NotEqual))             \
      return nb::cast(ops::full(a.shape(), Scalar::from_bool(BinaryOp::OP == BinaryOp::NotEqual), DType::Bool, a.device())); \
    if (defers_to(o)) {                                                                                    \
      /* a Variable's == is identity (uma.sym, PyTensor): never a silent bool for an array */               \
      UMA_CHECK(BinaryOp::OP != BinaryOp::Equal && BinaryOp::OP != BinaryOp::NotEqual, Type, "an array ",      \
                BinaryOp::OP == BinaryOp::Equal ? "==" : "!=", " ", py_str(nb::repr(o)),                      \
                " (a symbolic variable) is not elementwise: use uma.sym.", ops::op_name(BinaryOp::OP),        \
                "(array, x)");                                                                              \
      return nb::borrow(Py_NotImplemented);                                                                 \
    }                                                                                                       \
    return nb::cast(binary_py(BinaryOp::OP, a, o, false));                                                   \
  }, param("other"));
  UMA_CMP("__eq__", Equal)
  UMA_CMP("__ne__", NotEqual)
  UMA_CMP("__lt__", Less)
  UMA_CMP("__le__", LessEqual)
  UMA_CMP("__gt__", Greater)
  UMA_CMP("__ge__", GreaterEqual)
#undef UMA_CMP
  cls.def("__contains__", [](const Array& a, nb::handle v) {
    if (v.is_none()) return false;  // no element equals None (as a == None above)
    const Array found = ops::reduce(ReduceOp::Any, binary_py(BinaryOp::Equal, a, v, false), std::nullopt, false);
    return nb::cast<bool>(nb::bool_(scalar_to_python(to_host(found))));
  }, param("value"),
  "`value in a`: whether any element equals value (NumPy's ndarray.__contains__, (a == value).any());\n"
  "value broadcasts against a (ValueError otherwise).");
  cls.def("__matmul__", [](const Array& a, nb::handle o) -> nb::object {
    if (defers_to(o)) return nb::borrow(Py_NotImplemented);
    return nb::cast(ops::matmul(a, operand(o, &a, "matmul")));
  }, param("other"));
  cls.def("__rmatmul__", [](const Array& a, nb::handle o) { return ops::matmul(operand(o, &a, "matmul"), a); },
          param("other"));
  cls.def("__neg__", [](const Array& a) { return ops::unary(UnaryOp::Negative, a); });
  cls.def("__pos__", [](const Array& a) { return ops::copy(a); });
  cls.def("__abs__", [](const Array& a) { return ops::unary(UnaryOp::Abs, a); });
  cls.def("__invert__", [](const Array& a) { return ops::unary(UnaryOp::BitwiseInvert, a); });
  cls.attr("__hash__") = nb::none();
  // NumPy's ufuncs and operators with a uma operand: __array_ufunc__ (uma/_api.py).

  // Reductions as methods.
#define UMA_RED(name, OP)                                                                        \
  cls.def(name, [](const Array& a, nb::handle axis, Flag keepdims) {                            \
    check_arg_axis(ReduceOp::OP, axis);                                                          \
    return ops::reduce(ReduceOp::OP, a,                                                          \
                       ReduceOp::OP == ReduceOp::Mean ? axes_of(axis) : ufunc_axes(a, axis), keepdims); \
  }, param("axis") = nb::none(), param("keepdims") = false);
  UMA_RED("sum", Sum) UMA_RED("mean", Mean) UMA_RED("max", Max) UMA_RED("min", Min) UMA_RED("prod", Prod)
  UMA_RED("argmax", ArgMax) UMA_RED("argmin", ArgMin) UMA_RED("all", All) UMA_RED("any", Any)
#undef UMA_RED
}

}  // namespace uma::py
