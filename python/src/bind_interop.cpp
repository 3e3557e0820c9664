// Import: uma.asarray / uma.array / uma.from_dlpack. Every path describes the source as an
// interop::ForeignLayout and lets interop::import_foreign (the copy rules) decide.
// Note [Python owners]: adopted memory keeps its Python owner alive through a strong
// reference released by `release_pyobject` under the GIL (with_gil in common.h says when).
#include <nanobind/stl/pair.h>

#include <bit>
#include <climits>
#include <cstring>

#include "common.h"
#include "uma/error.h"
#include "uma/interop/buffer_desc.h"
#include "uma/interop/dlpack_io.h"
#include "uma/memory/cuda.h"
#include "uma/transfer.h"

namespace uma::py {

using interop::CopyMode;
using interop::ForeignLayout;

namespace {

// NumPy's ComplexWarning where an import converts complex `from` values to a `dtype` that keeps
// only their real parts (numpy.asarray(x, dtype) warns the same); none where copy=False
// refuses the conversion instead.
void warn_on_conversion(DType from, std::optional<DType> dtype, CopyMode copy) {
  if (dtype && copy != CopyMode::Never) warn_discarded_imaginary(from, *dtype);
}

// interop::import_foreign for asarray's dtype argument: warn_on_conversion first.
Array import_foreign_py(const interop::ForeignLayout& f, const std::function<DataPtr()>& adopt, std::optional<DType> dtype,
                        std::optional<Device> device, CopyMode copy, const char* api) {
  warn_on_conversion(f.dtype, dtype, copy);
  return interop::import_foreign(f, adopt, dtype, device, copy, api);
}

void release_pyobject(void* ctx, void*, std::size_t) noexcept {
  with_gil([&] { Py_DECREF(static_cast<PyObject*>(ctx)); });
}

struct HeldBuffer {
  Py_buffer view;
};
void release_buffer(void* ctx, void*, std::size_t) noexcept {
  auto* hb = static_cast<HeldBuffer*>(ctx);
  with_gil([&] {
    PyBuffer_Release(&hb->view);
    delete hb;
  });
}

// Runs a DLPack managed tensor's deleter (M: DLManagedTensor or DLManagedTensorVersioned).
// Device memory (and pinned host memory the GPU may be copying) goes back to its producer only
// after uma's stream on that device has finished the work queued on it: a producer with a
// caching allocator (torch, CuPy, JAX) may hand the block to its next kernel at once, on its
// own stream, while one of uma's kernels still reads or writes it (the hazard torch's
// Tensor.record_stream guards against). Idle streams cost one cudaStreamQuery.
template <class M>
void release_dlpack(void* ctx, void*, std::size_t) noexcept {
  auto* m = static_cast<M*>(ctx);
  const int type = static_cast<int>(m->dl_tensor.device.device_type);
  if (type == dlpack::kCUDA || type == dlpack::kCUDAManaged) cuda::finish_stream_work(m->dl_tensor.device.device_id);
  else if (type == dlpack::kCUDAHost)  // pinned host memory: any device's copies may read it
    for (int d = 0; d < cuda::device_count(); ++d) cuda::finish_stream_work(d);
  if (m->deleter) m->deleter(m);
}

int64_t extent_bytes(const ForeignLayout& f) {
  auto [lo, hi] = interop::byte_extent(f.shape, f.byte_strides, itemsize(f.dtype));
  return hi - lo;
}

nb::handle g_ndarray_type;  // numpy.ndarray once NumPy is loaded: a strong reference kept for the process's life

// Note [NumPy struct fields]: a numpy.ndarray and its dtype begin with fields whose layout is
// part of NumPy's C ABI (every compiled extension reads them through NumPy's macros; unchanged
// from NumPy 1.x to 2.x; pybind11 reads them the same way, without NumPy's headers). Reading
// them directly describes an ndarray without a Python call (the buffer protocol builds a
// format string per request). Only exact ndarrays of the builtin numeric dtypes are read, and
// only after a check against NumPy's own __array_interface__ on the first use (a NumPy whose
// layout differed would simply not take this path).
struct NdArrayFields {
  PyObject_HEAD
  char* data;
  int nd;
  Py_intptr_t* dimensions;
  Py_intptr_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
};
struct NdDescrFields {
  PyObject_HEAD
  PyTypeObject* typeobj;
  char kind;
  char type;
  char byteorder;
  char flags;
  int type_num;
};
constexpr int kNpyWriteable = 0x0400;

// NumPy's type numbers (stable since NumPy 1.0) of the dtypes uma has.
std::optional<DType> dtype_of_type_num(int n) {
  switch (n) {
    case 0: return DType::Bool;
    case 1: return DType::Int8;
    case 2: return DType::UInt8;
    case 3: return DType::Int16;
    case 4: return DType::UInt16;
    case 5: return sizeof(int) == 4 ? std::optional<DType>(DType::Int32) : std::nullopt;
    case 6: return sizeof(int) == 4 ? std::optional<DType>(DType::UInt32) : std::nullopt;
    case 7: return sizeof(long) == 8 ? DType::Int64 : DType::Int32;
    case 8: return sizeof(long) == 8 ? DType::UInt64 : DType::UInt32;
    case 9: return sizeof(long long) == 8 ? std::optional<DType>(DType::Int64) : std::nullopt;
    case 10: return sizeof(long long) == 8 ? std::optional<DType>(DType::UInt64) : std::nullopt;
    case 11: return DType::Float32;
    case 12: return DType::Float64;
    case 14: return DType::Complex64;
    case 15: return DType::Complex128;
    case 23: return DType::Float16;
    default: return std::nullopt;
  }
}

// The fields of an exact ndarray, or nullptr (another type, or a dtype not read here).
const NdArrayFields* nd_fields(nb::handle h, DType* dtype) {
  if (!g_ndarray_type.is_valid() && !is_ndarray(h)) return nullptr;  // NumPy not loaded yet: no ndarray
  if (Py_TYPE(h.ptr()) != reinterpret_cast<PyTypeObject*>(g_ndarray_type.ptr())) return nullptr;
  const auto* a = reinterpret_cast<const NdArrayFields*>(h.ptr());
  const auto* d = reinterpret_cast<const NdDescrFields*>(a->descr);
  if (d == nullptr) return nullptr;
  constexpr char native = std::endian::native == std::endian::little ? '<' : '>';
  if (d->byteorder != '=' && d->byteorder != '|' && d->byteorder != native) return nullptr;
  auto t = dtype_of_type_num(d->type_num);
  if (!t) return nullptr;
  *dtype = *t;
  return a;
}

// 1: the struct fields agree with NumPy's __array_interface__ for a probe array; 0: they do
// not (or the check failed): the fast path is off. Checked once, with the GIL held.
int g_nd_fields_ok = -1;
bool nd_fields_checked() {
  if (g_nd_fields_ok >= 0) return g_nd_fields_ok == 1;
  g_nd_fields_ok = 0;
  try {
    nb::module_ np = nb::module_::import_("numpy");
    nb::object probe = np.attr("zeros")(nb::make_tuple(2, 3), nb::arg("dtype") = "float64")[nb::make_tuple(
        nb::slice(nb::none(), nb::none(), nb::none()), nb::slice(nb::none(), nb::none(), nb::int_(2)))];
    nb::object ro = np.attr("zeros")(nb::make_tuple(4), nb::arg("dtype") = "int32");
    ro.attr("flags").attr("writeable") = false;
    DType t1 = DType::Bool, t2 = DType::Bool;
    const NdArrayFields* a = nd_fields(probe, &t1);
    const NdArrayFields* b = nd_fields(ro, &t2);
    nb::object iface = probe.attr("__array_interface__");
    const auto addr = nb::cast<unsigned long long>(iface["data"][0]);
    const bool ok = a && b && t1 == DType::Float64 && t2 == DType::Int32 && a->nd == 2 && a->dimensions[0] == 2 &&
                    a->dimensions[1] == 2 && a->strides[0] == 24 && a->strides[1] == 16 &&
                    reinterpret_cast<uintptr_t>(a->data) == addr && (a->flags & kNpyWriteable) &&
                    b->nd == 1 && b->dimensions[0] == 4 && !(b->flags & kNpyWriteable);
    g_nd_fields_ok = ok ? 1 : 0;
  } catch (const nb::python_error&) {
    g_nd_fields_ok = 0;
  }
  return g_nd_fields_ok == 1;
}

// Parses an __array_interface__ typestr ("<f4", "|b1", ">i8", "<c16") into a dtype
// (interop::dtype_from_typestr); ml_dtypes.bfloat16 arrays report '<V2' and are recognised
// by their dtype name.
std::pair<DType, bool> parse_typestr(const std::string& ts, nb::handle descr_owner) {
  return interop::dtype_from_typestr(ts, [&] {
    return descr_owner.is_valid() && nb::hasattr(descr_owner, "dtype") &&
           py_str(descr_owner.attr("dtype").attr("name")) == "bfloat16";
  });
}

// Note [Hand-made array interfaces]: __array_interface__ dicts come from any Python code, so
// every field is checked and a malformed one raises TypeError/ValueError naming it (NumPy's
// wording where it has one) instead of nanobind's bare "std::bad_cast". `data` may be a
// (pointer, read-only) tuple or, per the spec, a buffer object (None: obj itself): then the
// buffer's length is known and a view reaching outside it is refused (NumPy reads past it).
// `offset` only applies to buffer data (spec); a `mask` is refused rather than ignored.
namespace {
const char* iface_type_name(nb::handle h) { return Py_TYPE(h.ptr())->tp_name; }
int64_t iface_int(nb::handle h, const char* what, const char* api) {
  UMA_CHECK(PyIndex_Check(h.ptr()), Type, api, ": __array_interface__ ", what, " must be an integer, got ", iface_type_name(h));
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  UMA_CHECK(!overflow, Value, api, ": __array_interface__ ", what, " ", py_str(i), " is out of range for int64");
  return v;
}
std::vector<int64_t> iface_ints(nb::handle h, const char* what, const char* api) {
  UMA_CHECK(PyTuple_Check(h.ptr()), Type, api, ": __array_interface__ ", what, " must be a tuple, got ", iface_type_name(h));
  std::vector<int64_t> out;
  for (nb::handle e : nb::borrow<nb::tuple>(h)) out.push_back(iface_int(e, what, api));
  return out;
}
}  // namespace

Array import_array_interface(nb::handle obj, nb::handle iface, std::optional<DType> dtype, std::optional<Device> device,
                             CopyMode copy, const char* api) {
  UMA_CHECK(PyDict_Check(iface.ptr()), Value, api, ": __array_interface__ must be a dict, got ", iface_type_name(iface));
  nb::dict d = nb::borrow<nb::dict>(iface);
  auto field = [&](const char* k) -> nb::object {
    PyObject* v = PyDict_GetItemString(d.ptr(), k);  // borrowed; NULL when missing
    return v ? nb::borrow(v) : nb::none();
  };
  nb::object typestr = field("typestr");
  UMA_CHECK(!typestr.is_none(), Value, api, ": __array_interface__ has no typestr");
  UMA_CHECK(PyUnicode_Check(typestr.ptr()), Type, api, ": __array_interface__ typestr must be a string, got ",
            iface_type_name(typestr));
  auto [t, sw] = parse_typestr(nb::cast<std::string>(typestr), obj);
  const Shape shape = iface_ints(field("shape"), "shape", api);
  for (int64_t s : shape) UMA_CHECK(s >= 0, Value, api, ": negative dimension in shape ", shape_str(shape));
  UMA_CHECK(field("mask").is_none(), Value, api, ": __array_interface__ with a mask is not supported");
  nb::object strides = field("strides");
  std::optional<std::vector<int64_t>> byte_strides;
  if (!strides.is_none()) byte_strides = iface_ints(strides, "strides", api);
  // Validated geometry (interop/buffer_desc.h, fuzzed by fuzz/fuzz_descriptor.cpp).
  ForeignLayout f = interop::layout_of_interface(t, sw, shape, byte_strides, api);
  nb::object data = field("data");
  const int64_t offset = field("offset").is_none() ? 0 : iface_int(field("offset"), "offset", api);
  if (PyTuple_Check(data.ptr())) {
    UMA_CHECK(PyTuple_GET_SIZE(data.ptr()) == 2, Type, api, ": __array_interface__ data must be a (pointer, read-only) tuple");
    nb::handle p = PyTuple_GET_ITEM(data.ptr(), 0);
    UMA_CHECK(PyLong_Check(p.ptr()), Type, api, ": __array_interface__ data pointer must be an integer, got ", iface_type_name(p));
    unsigned long long addr = PyLong_AsUnsignedLongLong(p.ptr());
    if (addr == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      UMA_FAIL(Value, api, ": __array_interface__ data pointer ", py_str(p), " is not a valid address");
    }
    const int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data.ptr(), 1));
    if (ro < 0) throw nb::python_error();
    UMA_CHECK(offset == 0, Value, api, ": __array_interface__ offset applies only to buffer data, not to a (pointer, read-only) tuple");
    f.ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
    f.readonly = ro != 0;
    UMA_CHECK(f.ptr != nullptr || checked_size(f.shape) == 0, Value, api, ": __array_interface__ has a NULL data pointer");
    return import_foreign_py(f, [&]() {
      Py_INCREF(obj.ptr());
      return adopt(f.ptr, static_cast<std::size_t>(extent_bytes(f)), Device::cpu(), &release_pyobject, obj.ptr());
    }, dtype, device, copy, api);
  }
  // Buffer data (None: obj itself exports the buffer).
  nb::handle src = data.is_none() ? obj : nb::handle(data);
  auto hb = std::make_unique<HeldBuffer>();
  if (PyObject_GetBuffer(src.ptr(), &hb->view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    UMA_FAIL(Type, api, ": __array_interface__ data must be a (pointer, read-only) tuple or an object with the buffer "
             "protocol, got ", iface_type_name(src));
  }
  bool adopted = false;
  try {
    // Every element inside the buffer's len bytes (offset included), or ValueError.
    f = interop::layout_of_interface_buffer(t, sw, shape, byte_strides, hb->view.buf,
                                            static_cast<int64_t>(hb->view.len), offset, hb->view.readonly != 0, api);
    Array out = import_foreign_py(f, [&]() {
      adopted = true;
      HeldBuffer* raw = hb.release();
      return adopt(f.ptr, static_cast<std::size_t>(extent_bytes(f)), Device::cpu(), &release_buffer, raw);
    }, dtype, device, copy, api);
    if (!adopted) PyBuffer_Release(&hb->view);
    return out;
  } catch (...) {
    if (!adopted) PyBuffer_Release(&hb->view);
    throw;
  }
}

// Note [Shared registrations] (src/memory/cuda/registry.cpp): a NumPy view adopted onto a
// cuda device registers the buffer of the array it is a view of (the last ndarray along
// .base), so that views of one array and the array itself share one registration.
void set_alloc_base(nb::handle obj, ForeignLayout& f) {
  nb::object root = nb::borrow(obj);
  for (int i = 0; i < 64; ++i) {
    nb::object b = root.attr("base");
    if (b.is_none() || !is_ndarray(b)) break;
    root = b;
  }
  nb::object flags = root.attr("flags");
  if (!nb::cast<bool>(flags.attr("c_contiguous")) && !nb::cast<bool>(flags.attr("f_contiguous"))) return;
  nb::object data = root.attr("__array_interface__")["data"];
  f.alloc_base = reinterpret_cast<void*>(static_cast<uintptr_t>(nb::cast<unsigned long long>(data[0])));
  f.alloc_nbytes = nb::cast<std::size_t>(root.attr("nbytes"));
}

// Imports through the buffer protocol. A PyBUF_RECORDS_RO request is served by writable and
// read-only exporters alike; view.readonly then says which (PEP 3118). When `fallback` is
// set and the exporter refuses (e.g. NumPy arrays of ml_dtypes.bfloat16), returns nullopt.
std::optional<Array> import_buffer(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                                   CopyMode copy, const char* api, bool fallback = false) {
  auto hb = std::make_unique<HeldBuffer>();
  if (PyObject_GetBuffer(obj.ptr(), &hb->view, PyBUF_RECORDS_RO) != 0) {
    if (!fallback) throw nb::python_error();
    PyErr_Clear();
    return std::nullopt;
  }
  Py_buffer& v = hb->view;
  ForeignLayout f;
  try {
    // Format, suboffsets, shape vs len, strides: interop::layout_of_buffer (fuzzed by
    // fuzz/fuzz_descriptor.cpp). PEP 3118: len == product(shape) * itemsize; an exporter whose
    // elements need more than `len` bytes lies about its memory and is refused.
    static_assert(std::is_same_v<Py_ssize_t, int64_t>, "Py_buffer's shape/strides are read as int64_t");
    interop::BufferView bv;
    bv.buf = v.buf;
    bv.len = v.len;
    bv.itemsize = v.itemsize;
    bv.format = v.format;
    bv.ndim = v.ndim;
    bv.shape = v.shape;
    bv.strides = v.strides;
    bv.has_suboffsets = v.suboffsets != nullptr;
    bv.readonly = v.readonly != 0;
    f = interop::layout_of_buffer(bv, api);
  } catch (...) {
    PyBuffer_Release(&v);
    throw;
  }
  if (device && !device->is_cpu() && copy == CopyMode::Never && is_ndarray(obj)) set_alloc_base(obj, f);
  bool adopted = false;
  try {
    Array out = import_foreign_py(f, [&]() {
      adopted = true;
      HeldBuffer* raw = hb.release();
      return adopt(f.ptr, static_cast<std::size_t>(extent_bytes(f)), Device::cpu(), &release_buffer, raw);
    }, dtype, device, copy, api);
    if (!adopted) PyBuffer_Release(&v);
    return out;
  } catch (...) {
    if (!adopted) PyBuffer_Release(&v);
    throw;
  }
}

// Imports a managed tensor whose capsule was just renamed "used_...": from here on we own m
// and call its deleter exactly once — through the adopted DataPtr when memory is shared,
// right away when the import copied or failed.
template <class M>
Array import_managed(M* m, bool readonly, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy,
                     const char* api) {
  bool handed = false;
  try {
    ForeignLayout f = interop::layout_of(m->dl_tensor, readonly);
    Array out = import_foreign_py(f, [&]() {
      handed = true;
      return adopt(f.ptr, static_cast<std::size_t>(extent_bytes(f)), f.device, &release_dlpack<M>, m, f.kind);
    }, dtype, device, copy, api);
    if (!handed && m->deleter) m->deleter(m);
    return out;
  } catch (...) {
    if (!handed && m->deleter) m->deleter(m);
    throw;
  }
}

Array import_dlpack(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy,
                    const char* api) {
  // PyTorch's lazily negated views (is_neg(): the memory holds the negated values) export that
  // memory through DLPack without the negation; their values exist only in a copy,
  // resolve_neg().
  if (nb::hasattr(obj, "is_neg") && nb::hasattr(obj, "resolve_neg") && nb::cast<bool>(obj.attr("is_neg")())) {
    UMA_CHECK(copy != CopyMode::Never, Copy, api,
              ": the tensor is a negated view (is_neg() is True): its memory holds the negated values, so it cannot "
              "be shared; call resolve_neg() first, or allow a copy");
    nb::object values = obj.attr("resolve_neg")();
    UMA_CHECK(!(nb::hasattr(values, "is_neg") && nb::cast<bool>(values.attr("is_neg")())), Type, api,
              ": resolve_neg() returned another negated view");
    return import_dlpack(values, dtype, device, copy, api);
  }
  nb::object cap;
  {
    // A CUDA producer gets uma's stream on its device (Array API handshake: the producer
    // makes that stream wait for its work); CPU producers get no stream.
    nb::object stream = nb::none();
    if (cuda::is_available() && nb::hasattr(obj, "__dlpack_device__")) {
      nb::object dev = obj.attr("__dlpack_device__")();
      const int type = nb::cast<int>(dev[0]), id = nb::cast<int>(dev[1]);
      if ((type == dlpack::kCUDA || type == dlpack::kCUDAManaged) && id >= 0 && id < cuda::device_count())
        stream = nb::int_(reinterpret_cast<intptr_t>(cuda::stream(id)));
    }
    nb::object fn = obj.attr("__dlpack__");
    try {
      cap = stream.is_none() ? fn(nb::arg("max_version") = nb::make_tuple(dlpack::kMajor, dlpack::kMinor))
                             : fn(nb::arg("max_version") = nb::make_tuple(dlpack::kMajor, dlpack::kMinor),
                                  nb::arg("stream") = stream);
    } catch (nb::python_error& e) {
      // Only a plain TypeError means "unknown keyword" (producers that predate max_version:
      // NumPy < 2.1, PyTorch < 2.9). Subclasses are real refusals (pyarrow's ArrowTypeError
      // for bit-packed or nullable columns) and propagate.
      if (e.type().ptr() != PyExc_TypeError) throw;
      cap = stream.is_none() ? fn() : fn(nb::arg("stream") = stream);
    }
  }
  PyObject* c = cap.ptr();
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    auto* m = static_cast<dlpack::DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    UMA_CHECK(m != nullptr, Value, api, ": DLPack capsule holds a NULL pointer");
    if (PyCapsule_SetName(c, "used_dltensor_versioned") != 0) throw nb::python_error();
    // From here on we own m and must call its deleter exactly once.
    if (m->version.major != dlpack::kMajor || (m->flags & dlpack::kFlagIsSubbytePadded)) {
      const uint32_t major = m->version.major;
      if (m->deleter) m->deleter(m);
      UMA_CHECK(major == dlpack::kMajor, Copy, api, ": DLPack major version ", major, " is not supported (expected ",
                dlpack::kMajor, ")");
      UMA_FAIL(Type, api, ": sub-byte DLPack types are not supported");
    }
    return import_managed(m, (m->flags & dlpack::kFlagReadOnly) != 0, dtype, device, copy, api);
  }
  if (PyCapsule_IsValid(c, "dltensor")) {
    auto* m = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    UMA_CHECK(m != nullptr, Value, api, ": DLPack capsule holds a NULL pointer");
    if (PyCapsule_SetName(c, "used_dltensor") != 0) throw nb::python_error();
    // A legacy capsule cannot say whether writing is allowed: import read-only (DESIGN.md).
    return import_managed(m, /*readonly=*/true, dtype, device, copy, api);
  }
  UMA_FAIL(Type, api, ": __dlpack__ did not return an unconsumed 'dltensor' or 'dltensor_versioned' capsule");
}

// Python scalars and nested sequences go through NumPy's parser, then are copied into
// pooled memory (they are never shared).
Array import_sequence(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy,
                      const char* api) {
  UMA_CHECK(copy != CopyMode::Never, Copy, api, ": copy=False is impossible: a ",
            py_str((nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()))).attr("__name__"))),
            " must be copied into an array");
  if (PyLong_CheckExact(obj.ptr())) {
    // Out-of-range Python ints raise OverflowError; ints in [2**63, 2**64) are uint64 (NumPy 2).
    Scalar s = to_scalar(obj, dtype);
    DType t = dtype.value_or(s.big ? DType::UInt64 : DType::Int64);
    Array host = ops::scalar_array(s, t);
    if (!device || *device == host.device()) return host;
    cuda::require(*device, api);  // the error names the caller's function
    return uma::to_device(host, *device);
  }
  nb::module_ np = nb::module_::import_("numpy");
  // NumPy parses the sequence; with a NumPy-known dtype it also converts (raising
  // OverflowError for out-of-range Python ints, as NumPy 2 does).
  nb::object arr = dtype && *dtype != DType::BFloat16 ? np.attr("asarray")(obj, nb::arg("dtype") = dtype_name(*dtype))
                                                      : np.attr("asarray")(obj);
  std::string kind = py_str(arr.attr("dtype").attr("kind"));
  bool all_ints = kind == "O";
  if (all_ints)
    for (nb::handle x : arr.attr("flat"))
      if (!PyLong_Check(x.ptr())) {
        all_ints = false;
        break;
      }
  if (all_ints) {
    // NumPy falls back to object arrays for Python ints beyond int64; asking for int64 makes
    // it raise the precise OverflowError. Other objects (Fraction, Decimal, anything with
    // __int__) stay an object array, which is refused below: int() would truncate them.
    bool overflow = false;
    try {
      arr = np.attr("asarray")(obj, nb::arg("dtype") = "int64");
      kind = py_str(arr.attr("dtype").attr("kind"));
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_OverflowError)) throw;
      overflow = true;
    }
    if (overflow)  // NumPy's message names no value: name the first int outside int64 and uint64
      for (nb::handle x : arr.attr("flat")) {
        int over = 0;
        PyLong_AsLongLongAndOverflow(x.ptr(), &over);
        if (over > 0) {
          PyLong_AsUnsignedLongLong(x.ptr());
          if (!PyErr_Occurred()) continue;
          PyErr_Clear();
        }
        UMA_CHECK(over == 0, Overflow, api, ": Python integer ", py_str(x), " is out of bounds for int64 and uint64");
      }
  }
  UMA_CHECK(kind != "O" && kind != "U" && kind != "S", Type, api, ": cannot convert ",
            py_repr((obj)).substr(0, 80), " to an array (NumPy infers dtype ",
            py_str((arr.attr("dtype"))), ")");
  return import_array_interface(arr, arr.attr("__array_interface__"), dtype, device, CopyMode::Always, api);
}

}  // namespace

int64_t int_arg(nb::handle h, const char* api, const char* what, int64_t min) {
  UMA_CHECK(PyIndex_Check(h.ptr()), Type, api, ": ", what, " must be an integer, got ", py_repr(h).substr(0, 80),
            " of type '", Py_TYPE(h.ptr())->tp_name, "'");
  const std::optional<int64_t> v = index_int64(h);
  UMA_CHECK(v.has_value(), Overflow, api, ": ", what, " ", py_str(h), " does not fit in int64");
  UMA_CHECK(*v >= min, Value, api, ": ", what, " must be at least ", min, ", got ", *v);
  return *v;
}

std::optional<int64_t> index_int64(nb::handle h) {
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0) return std::nullopt;
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

bool is_python_scalar(nb::handle h) {
  PyObject* o = h.ptr();
  return PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o);
}

bool is_ndarray(nb::handle h) {
  if (!g_ndarray_type.is_valid()) {
    // Not imported here: where NumPy is not loaded, no object is an ndarray.
    nb::object np = nb::steal(PyImport_GetModule(nb::str("numpy").ptr()));
    if (!np.is_valid()) {
      PyErr_Clear();
      return false;
    }
    g_ndarray_type = nb::object(np.attr("ndarray")).release();
  }
  return PyObject_TypeCheck(h.ptr(), reinterpret_cast<PyTypeObject*>(g_ndarray_type.ptr()));
}

char numpy_scalar_kind(nb::handle h) {
  if (is_python_scalar(h) || nb::isinstance<Array>(h)) return 0;
  nb::object np = nb::steal(PyImport_GetModule(nb::str("numpy").ptr()));
  if (!np.is_valid()) {
    PyErr_Clear();
    return 0;
  }
  if (!nb::isinstance(h, np.attr("generic"))) return 0;
  const std::string kind = nb::cast<std::string>(h.attr("dtype").attr("kind"));
  return kind.size() == 1 ? kind[0] : 0;
}

bool is_numpy_real_scalar(nb::handle h) {
  const char kind = numpy_scalar_kind(h);
  return kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f';
}

Scalar to_scalar(nb::handle h, std::optional<DType> target) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar::from_bool(o == Py_True);
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) {  // [2**63, 2**64) fits uint64 (NumPy 2 accepts it for uint64 arrays)
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return Scalar::from_uint(u);
      PyErr_Clear();
    }
    if (overflow && target && (is_float(*target) || is_complex(*target))) {
      // Beyond 64 bits into a float or complex dtype: its value as a double, as
      // np.asarray(value, dtype) converts it (OverflowError past the double range).
      const double d = PyLong_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        UMA_FAIL(Overflow, "Python integer ", py_str(h), " out of range for ", dtype_name(*target));
      }
      return Scalar::from_float(d);
    }
    if (overflow && target && *target == DType::Bool) return Scalar::from_bool(true);  // nonzero, as NumPy's bool()
    UMA_CHECK(!overflow || target, Overflow, "Python integer ", py_str(h),
              " is out of bounds for every integer dtype (int64 and uint64; uma has no object dtype)");
    UMA_CHECK(!overflow, Overflow, "Python integer ", py_str(h), " out of bounds for ", dtype_name(*target));
    return Scalar::from_int(v);
  }
  if (PyFloat_CheckExact(o)) return Scalar::from_float(PyFloat_AsDouble(o));
  Py_complex c = PyComplex_AsCComplex(o);
  return Scalar::from_complex({c.real, c.imag});
}

CopyMode to_copy_mode(nb::handle h) {
  if (h.is_none()) return CopyMode::IfNeeded;
  UMA_CHECK(PyBool_Check(h.ptr()), Type, "copy must be True, False or None, got ", py_repr((h)));
  return h.ptr() == Py_True ? CopyMode::Always : CopyMode::Never;
}

namespace {
// TypeError naming the NumPy dtype `dt` (as NumPy names it) when its kind is one of `kinds`, or,
// with `extended`, when it is extended precision: dtypes uma has no equivalent for.
void check_numpy_dtype(nb::handle dt, const char* kinds, bool extended, const char* api) {
  const std::string kind = py_str(dt.attr("kind"));
  const int64_t size = nb::cast<int64_t>(dt.attr("itemsize"));
  const bool wide = extended && ((kind == "f" && size > 8) || (kind == "c" && size > 16));
  UMA_CHECK(kind.find_first_of(kinds) == std::string::npos && !wide, Type, api, ": NumPy dtype ", py_str(dt),
            " has no uma equivalent (uma's dtypes: bool, int8-int64, uint8-uint64, float16, bfloat16, float32, "
            "float64, complex64, complex128)");
}

// asarray's protocols after Arrow's __arrow_c_array__: __array_interface__, __array__, then
// __arrow_c_stream__, then nested sequences and scalars.
Array import_after_arrow(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy,
                         const char* api) {
  if (nb::hasattr(obj, "__array_interface__") && !PyType_Check(obj.ptr()))
    return import_array_interface(obj, obj.attr("__array_interface__"), dtype, device, copy, api);
  if (nb::hasattr(obj, "__array__") && !PyType_Check(obj.ptr())) {
    nb::object arr;
    if (copy == CopyMode::Never) {
      // NumPy 2's protocol (NumPy asarray): __array__(copy=False) returns an array over the
      // object's memory or raises ValueError; an __array__ without the keyword cannot promise
      // that, so neither can uma.
      try {
        arr = obj.attr("__array__")(nb::arg("copy") = false);
      } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError)) throw;
        UMA_FAIL(Copy, api, ": copy=False is impossible: ", py_str(nb::handle(Py_TYPE(obj.ptr())).attr("__name__")),
                 ".__array__(copy=False) did not return an array without a copy (",
                 py_str(nb::handle(Py_TYPE(e.value().ptr())).attr("__name__")), ": ", py_str(e.value()), ")");
      }
    } else {
      arr = obj.attr("__array__")();
    }
    UMA_CHECK(is_ndarray(arr), Type, api, ": __array__ did not return a numpy.ndarray");
    return import_array_interface(arr, arr.attr("__array_interface__"), dtype, device, copy, api);
  }
  // Arrow streams last: an object that also has __array__ (a pyarrow ChunkedArray, a pandas
  // Series) converts as NumPy converts it, keeping NaN where Arrow would see nulls.
  if (auto a = import_arrow_stream(obj, dtype, device, copy, api)) return *a;
  return import_sequence(obj, dtype, device, copy, api);
}

}  // namespace

Array asarray(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy, const char* api) {
  UMA_CHECK(!obj.is_none(), Type, api, ": cannot convert None to an array (NumPy would make an object array; "
            "uma has no object dtype)");
  if (nb::isinstance<Array>(obj)) {
    const Array& a = nb::cast<const Array&>(obj);
    ForeignLayout f;
    warn_on_conversion(a.dtype(), dtype, copy);
    f.ptr = a.data();
    f.dtype = a.dtype();
    f.shape = a.shape();
    for (int64_t s : a.strides()) f.byte_strides.push_back(s * static_cast<int64_t>(a.itemsize()));
    f.device = a.device();
    f.readonly = !a.writable();
    if (device && !(*device == a.device())) {
      // Another device: copy=False from the host adopts the array's memory as "mapped"
      // (the adoption holds a reference to its storage); otherwise transfer.
      if (a.device().is_cpu() && copy == CopyMode::Never) {
        auto keep = std::make_unique<std::shared_ptr<Storage>>(a.storage());
        f.alloc_base = a.storage()->data.get();
        f.alloc_nbytes = a.storage()->data.nbytes();
        return import_foreign_py(f, [&]() {
          const auto [lo, hi] = interop::byte_extent(f.shape, f.byte_strides, a.itemsize());
          return adopt(static_cast<char*>(f.ptr) + lo, static_cast<std::size_t>(hi - lo), Device::cpu(),
                       [](void* ctx, void*, std::size_t) noexcept { delete static_cast<std::shared_ptr<Storage>*>(ctx); },
                       keep.release());
        }, dtype, device, copy, api);
      }
      interop::decide_copy(f, dtype, device, copy, api);  // CopyError for copy=False
      return uma::to_device(a, *device, dtype.value_or(a.dtype()));
    }
    interop::CopyDecision dec = interop::decide_copy(f, dtype, device, copy, api);
    if (dec.share) return a;
    return ops::astype(a, dtype.value_or(a.dtype()));
  }
  if (is_ndarray(obj)) {
    // NumPy arrays: the buffer protocol carries layout and the read-only flag at a third of
    // the cost of building __array_interface__; dtypes without a PEP 3118 format (bfloat16)
    // fall back to the array interface.
    try {
      if (auto a = import_buffer(obj, dtype, device, copy, api, /*fallback=*/true)) return *a;
      return import_array_interface(obj, obj.attr("__array_interface__"), dtype, device, copy, api);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Type) throw;
      // Dtypes without a uma equivalent, named as NumPy names them (not by their buffer format
      // or typestr): objects, strings, datetimes, structured and other void dtypes (ml_dtypes'
      // types other than bfloat16 among them), extended precision.
      check_numpy_dtype(obj.attr("dtype"), "OUSMmV", true, api);
      throw;
    }
  }
  if (nb::hasattr(obj, "__dlpack__") && !PyType_Check(obj.ptr())) {
    // A producer that also speaks the Arrow PyCapsule interface may refuse DLPack for what
    // only Arrow can describe (bit-packed booleans, columns with nulls): then the Arrow
    // importer decides (unpacking booleans, or a ValueError naming the null count).
    if (!nb::hasattr(obj, "__arrow_c_array__")) return import_dlpack(obj, dtype, device, copy, api);
    try {
      return import_dlpack(obj, dtype, device, copy, api);
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_BufferError) && !e.matches(PyExc_ValueError)) throw;
      if (e.matches(copy_error_type())) throw;
    }
  }
  if (PyObject_CheckBuffer(obj.ptr())) {
    // A NumPy scalar of a dtype uma has no equivalent for (datetime64 exports its bytes as
    // format 'B'): the dtype's TypeError, never its bytes reinterpreted.
    if (nb::hasattr(obj, "dtype") && nb::hasattr(obj.attr("dtype"), "kind") && nb::hasattr(obj, "__array_interface__"))
      check_numpy_dtype(obj.attr("dtype"), "OUSMm", false, api);
    // Exporters that refuse a strided, formatted request (e.g. NumPy scalars of ml_dtypes
    // types) fall through to the array interface and __array__.
    const bool has_alternative = nb::hasattr(obj, "__array_interface__") || nb::hasattr(obj, "__array__");
    if (auto a = import_buffer(obj, dtype, device, copy, api, has_alternative)) return *a;
  }
  try {
    if (auto a = import_arrow(obj, dtype, device, copy, api)) return *a;
  } catch (const Error& e) {
    // A type that is no 1-D column (a RecordBatch's struct, strings, timestamps) converts as
    // NumPy converts it where the object offers that (a RecordBatch's 2-D array); where that
    // fails for its type too, Arrow's error names the type.
    if (e.kind() != ErrorKind::Type || PyType_Check(obj.ptr()) ||
        !(nb::hasattr(obj, "__array_interface__") || nb::hasattr(obj, "__array__")))
      throw;
    try {
      return import_after_arrow(obj, dtype, device, copy, api);
    } catch (const Error& numpy_error) {
      if (numpy_error.kind() == ErrorKind::Type) throw e;
      throw;
    }
  }
  return import_after_arrow(obj, dtype, device, copy, api);
}

std::optional<Array> import_ndarray_input(nb::handle h, DType dtype, std::size_t ndim, std::size_t copy_bytes,
                                         const char* api) {
  DType t = DType::Bool;
  const NdArrayFields* a = nd_fields(h, &t);
  if (a == nullptr || t != dtype || static_cast<std::size_t>(a->nd) != ndim || !nd_fields_checked()) return std::nullopt;
  const std::size_t isz = itemsize(t);
  if (reinterpret_cast<uintptr_t>(a->data) % isz == 0) {
    // Small and C-contiguous (a 0-d scalar above all): copied straight from the struct fields,
    // the same array as the copy below makes, without building the layout description.
    bool contiguous = true;
    int64_t n = 1, expect = static_cast<int64_t>(isz);
    for (int k = a->nd; k-- > 0;) {
      const int64_t d = a->dimensions[k];
      contiguous = contiguous && (d <= 1 || a->strides[k] == expect);
      expect *= d;
      n *= d;  // NumPy keeps sizes within intp
    }
    if (contiguous && static_cast<std::size_t>(n) * isz <= copy_bytes) {
      static const Shape kScalar;
      Array out = a->nd == 0 ? Array::empty(kScalar, t) : Array::empty(Shape(a->dimensions, a->dimensions + a->nd), t);
      if (n) std::memcpy(out.data(), a->data, static_cast<std::size_t>(n) * isz);
      return out;
    }
  }
  ForeignLayout f;
  f.ptr = a->data;
  f.dtype = t;
  f.shape.assign(a->dimensions, a->dimensions + a->nd);
  f.byte_strides.assign(a->strides, a->strides + a->nd);
  f.readonly = (a->flags & kNpyWriteable) == 0;
  int64_t n = 1;
  for (int64_t d : f.shape) n *= d;  // NumPy keeps sizes within intp
  const std::size_t nbytes = static_cast<std::size_t>(n) * itemsize(t);
  if (nbytes <= copy_bytes) {
    // Small: a copy in pooled memory now (no adoption, nothing to release later).
    const std::size_t isz = itemsize(t);
    bool contiguous = reinterpret_cast<uintptr_t>(f.ptr) % isz == 0;
    int64_t expect = static_cast<int64_t>(isz);
    for (std::size_t k = f.shape.size(); k-- > 0 && contiguous;) {
      contiguous = f.shape[k] <= 1 || f.byte_strides[k] == expect;
      expect *= f.shape[k];
    }
    if (contiguous) {
      Array out = Array::empty(f.shape, t);
      if (nbytes) std::memcpy(out.data(), f.ptr, nbytes);
      return out;
    }
    return interop::import_foreign(f, [&]() -> DataPtr { UMA_FAIL(Runtime, api, ": unexpected adoption"); },
                                   std::nullopt, std::nullopt, CopyMode::Always, api);
  }
  return interop::import_foreign(f, [&]() {
    Py_INCREF(h.ptr());
    return adopt(f.ptr, static_cast<std::size_t>(extent_bytes(f)), Device::cpu(), &release_pyobject, h.ptr());
  }, std::nullopt, std::nullopt, CopyMode::IfNeeded, api);
}

namespace {
// +1 / -1 when h is a Python int outside the range of integer dtype t, else 0.
int int_out_of_range(nb::handle h, DType t) {
  if (!PyLong_CheckExact(h.ptr()) || !is_integer(t)) return 0;
  Scalar s;
  try {
    s = to_scalar(h);  // ints beyond uint64 / below int64 are out of every integer dtype's range
  } catch (const Error&) {
    return PyObject_RichCompareBool(h.ptr(), nb::int_(0).ptr(), Py_LT) == 1 ? -1 : 1;
  }
  try {
    ops::scalar_array(s, t);
  } catch (const Error&) {
    return !s.big && s.i < 0 ? -1 : 1;
  }
  return 0;
}
}  // namespace

std::optional<Array> compare_out_of_range(BinaryOp op, nb::handle a, nb::handle b) {
  if (op != BinaryOp::Equal && op != BinaryOp::NotEqual && op != BinaryOp::Less && op != BinaryOp::LessEqual &&
      op != BinaryOp::Greater && op != BinaryOp::GreaterEqual)
    return std::nullopt;
  const bool left_int = PyLong_CheckExact(a.ptr()) && nb::isinstance<Array>(b);
  const bool right_int = PyLong_CheckExact(b.ptr()) && nb::isinstance<Array>(a);
  if (!left_int && !right_int) return std::nullopt;
  const Array& arr = nb::cast<const Array&>(left_int ? b : a);
  int sign = int_out_of_range(left_int ? a : b, arr.dtype());
  if (sign == 0) return std::nullopt;
  // Every array value is below the int when sign > 0, above it when sign < 0.
  bool arr_less = sign > 0;
  bool r = false;
  switch (op) {
    case BinaryOp::Equal: r = false; break;
    case BinaryOp::NotEqual: r = true; break;
    case BinaryOp::Less: r = left_int ? !arr_less : arr_less; break;        // int < arr  |  arr < int
    case BinaryOp::LessEqual: r = left_int ? !arr_less : arr_less; break;
    case BinaryOp::Greater: r = left_int ? arr_less : !arr_less; break;
    case BinaryOp::GreaterEqual: r = left_int ? arr_less : !arr_less; break;
    default: break;
  }
  return ops::full(arr.shape(), Scalar::from_bool(r), DType::Bool);
}

Array operand(nb::handle h, const Array* other, const char* op) {
  if (nb::isinstance<Array>(h)) return nb::cast<Array>(h);
  if (other && PyLong_CheckExact(h.ptr())) {
    // A Python int meeting a float or complex array converts to that dtype (NEP 50), however large.
    DType t = promote_weak(other->dtype(), ScalarKind::Int);
    if (is_float(t) || is_complex(t)) {
      double v = PyLong_AsDouble(h.ptr());
      if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
      return ops::scalar_array(Scalar::from_float(v), t);
    }
  }
  if (other && PyLong_CheckExact(h.ptr())) {
    // The ops whose dtype rule computes integers in a float loop (true division: float64; the
    // Float rule's functions, arctan2 hypot ...: the smallest float holding the integer dtype):
    // NumPy converts the Python int to that loop's dtype, so divide(int8 array, 1000) is 0.001
    // and hypot(int8 array, 1000) 1000.0, not an OverflowError.
    const std::optional<BinaryOp> b = ops::binary_op_named(op);
    const bool float_loop = b && (rule(*b) == BinaryRule::TrueDivide || rule(*b) == BinaryRule::Float);
    if (float_loop && int_out_of_range(h, promote_weak(other->dtype(), ScalarKind::Int)) != 0) {
      double v = PyLong_AsDouble(h.ptr());
      if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
      const DType t = rule(*b) == BinaryRule::TrueDivide ? DType::Float64
                                                          : float_result_type(promote_weak(other->dtype(), ScalarKind::Int));
      return ops::scalar_array(Scalar::from_float(v), t);
    }
  }
  if (is_python_scalar(h)) {
    Scalar s = to_scalar(h);
    DType t = other ? promote_weak(other->dtype(), s.kind)
                    : (s.kind == ScalarKind::Bool ? DType::Bool
                       : s.kind == ScalarKind::Int ? (s.big ? DType::UInt64 : DType::Int64)
                       : s.kind == ScalarKind::Float ? DType::Float64 : DType::Complex128);
    return ops::scalar_array(s, t);
  }
  // NumPy reads a bytes operand as a string (dtype 'S'), which uma has no dtype for; its bytes
  // as uint8 values would be another number (b'3' is 51). uma.asarray(b) gives those bytes.
  UMA_CHECK(!PyBytes_Check(h.ptr()), Type, op, ": cannot convert ", py_repr(h).substr(0, 80),
            " to an array (NumPy infers dtype |S", PyBytes_GET_SIZE(h.ptr()),
            "; uma has no string dtype: uma.asarray(bytes) gives the bytes as uint8)");
  return asarray(h, std::nullopt, std::nullopt, CopyMode::IfNeeded, op);
}

void bind_interop(nb::module_& m) {
  m.def("asarray", [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy) {
        std::optional<Device> dev;
        if (!device.is_none()) dev = to_device(device);
        return asarray(obj, to_dtype(dtype), dev, to_copy_mode(copy), "asarray");
      }, param("obj"), param("dtype") = nb::none(), param("device") = nb::none(), param("copy") = nb::none(),
      "Converts obj to a uma.Array, sharing memory whenever dtype, layout, device and mutability allow\n"
      "(Python Array API standard, asarray; rules in DESIGN.md 'The copy rules').\n"
      "obj: uma.Array, numpy.ndarray, any __dlpack__ producer, buffer-protocol object,\n"
      "__array_interface__/__array__ object, nested sequence or Python scalar.\n"
      "copy=None shares when possible, copy=True always copies, copy=False raises uma.CopyError\n"
      "(a ValueError and BufferError) when a copy would be needed. Read-only sources give read-only results.");
  m.def("array", [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy) {
        std::optional<Device> dev;
        if (!device.is_none()) dev = to_device(device);
        return asarray(obj, to_dtype(dtype), dev, to_copy_mode(copy), "array");
      }, param("obj"), param("dtype") = nb::none(), param("device") = nb::none(),
      nb::kw_only(), param("copy") = nb::bool_(true),
      "A uma.Array of obj's values; by default a new, writable copy (copy=True). As numpy.array\n"
      "(NumPy 2): copy=None copies only when needed (asarray's sharing), copy=False raises\n"
      "uma.CopyError when a copy would be needed.");
  m.def("from_dlpack", [](nb::handle x, nb::handle device, nb::handle copy) {
        UMA_CHECK(nb::hasattr(x, "__dlpack__"), Type, "from_dlpack: ", py_repr((nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr()))))),
                  " does not implement __dlpack__");
        std::optional<Device> dev;
        if (!device.is_none()) dev = to_device(device);
        return import_dlpack(x, std::nullopt, dev, to_copy_mode(copy), "from_dlpack");
      }, param("x"), nb::kw_only(), param("device") = nb::none(), param("copy") = nb::none(),
      "Imports a DLPack producer (Python Array API standard, from_dlpack). Calls\n"
      "x.__dlpack__(max_version=(1, 1)), falling back to x.__dlpack__() on TypeError. Shares memory\n"
      "unless copy=True; legacy capsules import read-only; copy=False raises uma.CopyError when\n"
      "sharing is impossible. The producer's deleter runs exactly once, on every path.");
}

}  // namespace uma::py
