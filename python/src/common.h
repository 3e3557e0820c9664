// python/src/common.h — shared declarations of the nanobind bindings (internal).
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/interop/copy_rules.h"
#include "uma/ops.h"

namespace nb = nanobind;

namespace uma::py {

// ---- dtypes (module.cpp) ----
/// The uma.dtype object of `t` (registered from python/uma/_dtypes.py).
nb::object dtype_object(DType t);
/// Resolves anything accepted as a dtype (uma.dtype, NumPy dtype/scalar type, str, Python
/// type); TypeError if not understood. None -> nullopt.
std::optional<DType> to_dtype(nb::handle h);
/// A dtype argument that must be given: to_dtype(h), TypeError naming `api` for None.
DType required_dtype(nb::handle h, const char* api);
Device to_device(nb::handle h);  // None -> cpu; str or uma.Device
nb::object device_object(Device d);
/// The Python exception type uma.CopyError.
PyObject* copy_error_type();
/// The module's translation of C++ exceptions (uma::Error by kind, nanobind cast errors as
/// TypeError, bad_alloc as MemoryError); rethrows any other exception.
void translate_exception(const std::exception_ptr& p);
/// Sets the Python error for `p`, for functions written against the C API: translate_exception,
/// a nanobind python_error restored, other exceptions as RuntimeError.
void set_python_error(const std::exception_ptr& p) noexcept;

// ---- Python owners of adopted memory ----
/// Note [Python owners]: runs `release` (which touches Python objects) with the GIL held. The
/// thread that holds the GIL (its thread state is current) runs it at once, during interpreter
/// shutdown too: the main thread clearing module globals releases the arrays they hold, and
/// with them their owners, so nothing is left behind for nanobind to report as leaked. Another
/// thread takes the GIL first, except once the interpreter is finalizing: then it must not
/// touch Python (taking the GIL would end the thread), and the owner is left to the exiting
/// process. After finalization no thread state is current and nothing is run.
template <class F>
void with_gil(F&& release) noexcept {
  // PyGILState_Check compares the GIL holder's thread state with this thread's; it also says
  // 1 once the interpreter is gone, when no thread state is current any more.
#if PY_VERSION_HEX >= 0x030D0000
  const bool holds_gil = PyGILState_Check() && PyThreadState_GetUnchecked() != nullptr;
  const bool finalizing = Py_IsFinalizing();
#else
  const bool holds_gil = PyGILState_Check() && _PyThreadState_UncheckedGet() != nullptr;
  const bool finalizing = _Py_IsFinalizing();
#endif
  if (holds_gil) {
    release();
    return;
  }
  if (!Py_IsInitialized() || finalizing) return;
  PyGILState_STATE st = PyGILState_Ensure();
  release();
  PyGILState_Release(st);
}

// ---- parameters ----
/// A named parameter of a bound function. It accepts None, so the function's own parser names
/// what is wrong with a None it cannot use ("sum: cannot convert None to an array"); without
/// .none() nanobind refuses None before the function runs, with a generic "incompatible function
/// arguments" TypeError that lists the signature. Parameters of C++ types (bool, int) still
/// refuse None through their type caster.
inline auto param(const char* name) { return nb::arg(name).none(); }

/// A bool parameter read as NumPy 2 reads keepdims: True or False, or an integer (operator.index;
/// nonzero is True), and also a NumPy bool (a bool for the Array API standard, which NumPy
/// refuses). nanobind's bool takes only True and False. Other objects (floats, strings, None)
/// are refused: reading the flag raises a TypeError naming the value (the caster takes every
/// object, so the error is this one rather than nanobind's list of signatures).
struct Flag {
  bool value = false;
  std::string refused;  // the repr of an object that is not a flag, else empty
  operator bool() const {
    UMA_CHECK(refused.empty(), Type, "keepdims must be True, False or an integer, got ", refused);
    return value;
  }
};

// ---- conversion of operands (bind_interop.cpp) ----
/// An integer argument `what` of `api` (anything operator.index accepts: Python and NumPy ints,
/// bools): TypeError naming the value otherwise, OverflowError when it does not fit int64, and
/// ValueError below `min`.
int64_t int_arg(nb::handle h, const char* api, const char* what, int64_t min = INT64_MIN);
/// operator.index(h) as an int64, or nullopt when it does not fit; h must pass PyIndex_Check
/// (the Python error of __index__ propagates). The callers name the value in their errors.
std::optional<int64_t> index_int64(nb::handle h);
/// Python bool/int/float/complex (exact types: NumPy scalars are strong, NEP 50).
bool is_python_scalar(nb::handle h);
/// True for a numpy.ndarray, subclasses included (a 0-d ndarray too; a NumPy scalar is not
/// one); False without NumPy loaded (NumPy is never imported for the check).
bool is_ndarray(nb::handle h);
/// The dtype kind of a NumPy scalar (numpy.generic: 'b', 'i', 'u', 'f', 'c', ...), 0 for
/// anything else (and without NumPy imported).
char numpy_scalar_kind(nb::handle h);
/// True for a NumPy scalar (numpy.generic) of a real kind: bool, signed or unsigned integer,
/// or floating point (False without NumPy imported).
bool is_numpy_real_scalar(nb::handle h);
Scalar to_scalar(nb::handle h, std::optional<DType> target = std::nullopt);
/// True for an index item that is an array (NumPy: a list, an ndarray or a uma.Array of ndim >= 1).
bool is_index_array(nb::handle h);
/// uma.asarray(obj, dtype, device, copy) — the single import entry point.
Array asarray(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, interop::CopyMode copy,
              const char* api);
/// A function-call input: when `h` is exactly a numpy.ndarray of dtype `dtype` with `ndim`
/// dimensions (read from NumPy's struct fields, Note [NumPy struct fields]), its value as a host
/// array: copied into pooled memory when it holds at most `copy_bytes` bytes, otherwise imported
/// under the copy rules (shared when possible, holding a reference to `h`; read-only sources
/// give read-only arrays). nullopt for anything else (the caller takes the general path).
std::optional<Array> import_ndarray_input(nb::handle h, DType dtype, std::size_t ndim, std::size_t copy_bytes,
                                         const char* api);
/// NumPy's ComplexWarning when values of dtype `from` are converted to `to`, a real or integer
/// dtype that keeps only their real parts (bool keeps "nonzero": nothing is dropped). Throws the
/// Python error when warnings are errors.
void warn_discarded_imaginary(DType from, DType to);
/// `a` as dtype `t` for the Python astype (the method and the function): `a` itself when
/// `copy` is false and the dtype matches, else converted values. Complex to a real or integer
/// dtype keeps the real parts with NumPy's ComplexWarning (numpy.ndarray.astype does the same).
Array astype_for_python(const Array& a, DType t, bool copy);
/// An operand of an op: uma arrays as they are, Python scalars as 0-d arrays of the dtype
/// NEP 50 gives with `other`'s dtype (weak), anything else through asarray.
Array operand(nb::handle h, const Array* other, const char* op);

// Axis arguments of reductions (NumPy's rules): None -> all axes; an int or a tuple of ints
// (TypeError for anything else: lists and bools included). ufunc_axes: NumPy's ufunc
// reductions (sum, max, argmax, cumsum, ...) also accept axis 0 or -1 on a 0-d array, as None
// (mean, var and std do not). check_arg_axis: argmax/argmin take one int axis (TypeError for a tuple).
std::optional<std::vector<int64_t>> axes_of(nb::handle h);
std::optional<int64_t> one_axis(nb::handle h);  // None or one int (cumsum, take, ...)
std::optional<std::vector<int64_t>> ufunc_axes(const Array& a, nb::handle axis);
void check_arg_axis(ReduceOp op, nb::handle axis);
// A shape argument: an int or a tuple/list of ints (TypeError otherwise; ValueError for a
// dimension beyond int64, as NumPy's "Maximum allowed dimension exceeded").
Shape shape_of(nb::handle h);
/// The device a creation function was asked for (None: cpu); RuntimeError naming why for an
/// unusable cuda device (bind_ops.cpp).
Device target_device(nb::handle device, const char* op);
// A static shape: a sequence of lengths (integers) and Nones (a length known only at run
// time), as ops::kUnknownLength; and back, as a tuple.
Shape static_shape_of(nb::handle h);
nb::tuple static_shape_object(const Shape& s);
interop::CopyMode to_copy_mode(nb::handle h);
/// NumPy 2 compares integer arrays with Python ints outside the dtype's range exactly (the
/// result is constant); every other op raises OverflowError. Returns that constant result
/// when `op` is a comparison and one operand is such an int, else nullopt.
std::optional<Array> compare_out_of_range(BinaryOp op, nb::handle a, nb::handle b);

// ---- array export helpers (bind_array.cpp) ----
/// The NumPy array viewing `a` (shares memory; read-only if a is).
nb::object to_numpy_view(const Array& a);
nb::object scalar_to_python(const Array& a0d);
/// A basic index (int, slice, None, Ellipsis or a tuple of them); IndexError otherwise.
std::vector<IndexItem> parse_index(nb::handle key);

// ---- advanced indices (bind_ops.cpp) ----
/// An index that may hold one integer or boolean array: basic items, an integer array taken
/// along `axis` (x[idx], x[:, idx]: only full slices before it and after it), or a boolean
/// mask over the leading axes (x[mask]). IndexError for any other combination.
struct AnyIndex {
  enum Kind { Basic, Take, Mask } kind = Basic;
  std::vector<IndexItem> basic;
  Array array;  // the indices (Take) or the mask (Mask)
  int64_t axis = 0;
};
AnyIndex parse_any_index(nb::handle key);
/// A NumPy index (an item or a tuple of items) as ops::index reads it: None, Ellipsis, slices and
/// integers as basic items; bools, lists, tuples and arrays (a NumPy 0-d array too) as index
/// arrays (an empty list or tuple as int64). IndexError for anything else.
std::vector<IndexKey> parse_key(nb::handle key);
/// a[key] for any NumPy index (ops::index: a view for basic indices, else a copy).
Array getitem_any(const Array& a, nb::handle key);

/// str(h) / repr(h) as std::string (for error messages).
std::string py_str(nb::handle h);
std::string py_repr(nb::handle h);

/// Imports obj through the Arrow PyCapsule interface (`__arrow_c_array__`); nullopt when obj
/// has no such method (bind_arrow.cpp).
std::optional<Array> import_arrow(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                                  interop::CopyMode copy, const char* api);
/// Imports the arrays of obj's `__arrow_c_stream__` as one 1-D array (interop::
/// import_arrow_stream); nullopt when obj has no such method (bind_arrow.cpp).
std::optional<Array> import_arrow_stream(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                                         interop::CopyMode copy, const char* api);

void bind_array(nb::module_& m);
void bind_arrow(nb::module_& m);
void bind_interop(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_files(nb::module_& m);
void bind_cuda(nb::module_& m);

}  // namespace uma::py

namespace nanobind::detail {
template <>
struct type_caster<uma::py::Flag> {
  NB_TYPE_CASTER(uma::py::Flag, const_name("bool"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    const char* tn = Py_TYPE(o)->tp_name;
    const bool numpy_bool = std::strcmp(tn, "numpy.bool") == 0 || std::strcmp(tn, "numpy.bool_") == 0;
    const int t = PyBool_Check(o) || numpy_bool || PyIndex_Check(o) ? PyObject_IsTrue(o) : -1;
    if (t < 0) {
      PyErr_Clear();
      PyObject* r = PyObject_Repr(o);
      const char* text = r ? PyUnicode_AsUTF8(r) : nullptr;
      value.refused = std::string(text ? std::string_view(text).substr(0, 80) : std::string_view("?")) + " (" +
                      Py_TYPE(o)->tp_name + ")";
      Py_XDECREF(r);
      PyErr_Clear();
      return true;
    }
    value.value = t != 0;
    return true;
  }
  static handle from_cpp(uma::py::Flag f, rv_policy, cleanup_list*) noexcept {
    return handle(f.value ? Py_True : Py_False).inc_ref();
  }
};
}  // namespace nanobind::detail
