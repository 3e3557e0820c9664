// The Arrow PyCapsule interface (REFERENCE.md, "Arrow C Data Interface and PyCapsule
// interface"): uma.Array.__arrow_c_schema__ / __arrow_c_array__ (export), import from any
// object with __arrow_c_array__ or __arrow_c_stream__ (uma.asarray, uma.from_arrow).
//
// Capsules: "arrow_schema" and "arrow_array", each holding a heap struct that the capsule owns.
// A consumer moves the struct out (bitwise copy, then the capsule's struct is marked released:
// arrow::Owner::take); the capsule's destructor calls `release` only if it is still set, and
// frees the struct memory it allocated. So release runs exactly once whoever ends up holding
// the struct (Note [Arrow ownership], include/uma/interop/arrow.h).
#include <cstring>

#include "common.h"
#include "uma/error.h"
#include "uma/interop/arrow.h"

namespace uma::py {

using arrow::ArrowArray;
using arrow::ArrowArrayOwner;
using arrow::ArrowSchema;
using arrow::ArrowSchemaOwner;
using interop::CopyMode;

namespace {

constexpr const char* kSchemaCapsule = "arrow_schema";
constexpr const char* kArrayCapsule = "arrow_array";
constexpr const char* kStreamCapsule = "arrow_array_stream";

// ---- export (uma is the producer) ----------------------------------------------------------

void schema_capsule_destructor(PyObject* cap) noexcept {
  if (!PyCapsule_IsValid(cap, kSchemaCapsule)) return;
  auto* s = static_cast<ArrowSchema*>(PyCapsule_GetPointer(cap, kSchemaCapsule));
  if (s->release) s->release(s);
  delete s;
}

void array_capsule_destructor(PyObject* cap) noexcept {
  if (!PyCapsule_IsValid(cap, kArrayCapsule)) return;
  auto* a = static_cast<ArrowArray*>(PyCapsule_GetPointer(cap, kArrayCapsule));
  if (a->release) a->release(a);
  delete a;
}

template <class S>
nb::object make_capsule(arrow::Owner<S>& owner, const char* name, PyCapsule_Destructor dtor) {
  auto* heap = new S;
  owner.move_to(heap);
  PyObject* cap = PyCapsule_New(heap, name, dtor);
  if (!cap) {
    if (heap->release) heap->release(heap);
    delete heap;
    throw nb::python_error();
  }
  return nb::steal(cap);
}

// The dtype a consumer asks for through `requested_schema` (best effort, as the PyCapsule
// interface allows): the schema is read, never consumed. nullopt when absent or not a
// primitive uma knows (the consumer then gets the natural type and checks it itself).
std::optional<DType> requested_dtype(nb::handle requested_schema) {
  if (requested_schema.is_none()) return std::nullopt;
  UMA_CHECK(PyCapsule_IsValid(requested_schema.ptr(), kSchemaCapsule), Type,
            "__arrow_c_array__: requested_schema must be an 'arrow_schema' capsule or None, got ",
            py_repr(requested_schema).substr(0, 80));
  auto* s = static_cast<const ArrowSchema*>(PyCapsule_GetPointer(requested_schema.ptr(), kSchemaCapsule));
  if (!s->release || !s->format || s->dictionary || s->n_children != 0) return std::nullopt;
  return interop::dtype_from_arrow_format(std::string_view(s->format, strnlen(s->format, 8)));
}

// ---- import (uma is the consumer) ----------------------------------------------------------

// Note [Python owners] (common.h, with_gil): the release callback of an adopted ArrowArray may
// belong to a Python producer, so it runs with the GIL.
void release_arrow_with_gil(void* ctx, void* ptr, std::size_t nbytes) noexcept {
  with_gil([&] { interop::delete_arrow_owner(ctx, ptr, nbytes); });
}

std::string obj_type_name(nb::handle h) {
  return py_str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()))).attr("__name__"));
}

// Moves the struct out of an unconsumed capsule `name` (the capsule keeps its memory and will
// not release it again). TypeError for anything else, ValueError if already consumed.
template <class S>
arrow::Owner<S> take_capsule(nb::handle cap, const char* name, const char* api) {
  UMA_CHECK(PyCapsule_IsValid(cap.ptr(), name), Type, api, ": __arrow_c_array__ must return a pair of '",
            kSchemaCapsule, "' and '", kArrayCapsule, "' capsules; expected '", name, "', got ",
            py_repr(cap).substr(0, 80));
  auto* s = static_cast<S*>(PyCapsule_GetPointer(cap.ptr(), name));
  UMA_CHECK(s->release != nullptr, Value, api, ": the '", name, "' capsule was already consumed (released)");
  return arrow::Owner<S>::take(s);
}

Array import_capsules(nb::handle pair, nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                      CopyMode copy, const char* api) {
  UMA_CHECK(nb::isinstance<nb::tuple>(pair) && nb::len(pair) == 2, Type, api, ": ", obj_type_name(obj),
            ".__arrow_c_array__() must return a (schema, array) tuple of capsules, got ", py_repr(pair).substr(0, 80));
  nb::tuple t = nb::borrow<nb::tuple>(pair);
  // Validate both capsules before consuming either: an unconsumed capsule releases its own
  // struct when it dies.
  UMA_CHECK(PyCapsule_IsValid(t[0].ptr(), kSchemaCapsule) && PyCapsule_IsValid(t[1].ptr(), kArrayCapsule), Type, api,
            ": ", obj_type_name(obj), ".__arrow_c_array__() must return ('", kSchemaCapsule, "', '", kArrayCapsule,
            "') capsules, got ", py_repr(pair).substr(0, 120));
  ArrowSchemaOwner schema = take_capsule<ArrowSchema>(t[0], kSchemaCapsule, api);
  ArrowArrayOwner array = take_capsule<ArrowArray>(t[1], kArrayCapsule, api);
  return interop::import_arrow(std::move(schema), std::move(array), dtype, device, copy, api, &release_arrow_with_gil);
}

// The stream of an object's __arrow_c_stream__(): an 'arrow_array_stream' capsule, consumed
// here; TypeError naming the type for any other return.
Array import_stream(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device, CopyMode copy,
                    const char* api) {
  nb::object cap = obj.attr("__arrow_c_stream__")();
  UMA_CHECK(PyCapsule_IsValid(cap.ptr(), kStreamCapsule), Type, api, ": ", obj_type_name(obj),
            ".__arrow_c_stream__() must return an '", kStreamCapsule, "' capsule, got ", py_repr(cap).substr(0, 80));
  auto* s = static_cast<arrow::ArrowArrayStream*>(PyCapsule_GetPointer(cap.ptr(), kStreamCapsule));
  UMA_CHECK(s->release != nullptr, Value, api, ": the '", kStreamCapsule, "' capsule was already consumed (released)");
  return interop::import_arrow_stream(arrow::ArrowArrayStreamOwner::take(s), dtype, device, copy, api,
                                      &release_arrow_with_gil);
}

bool has_method(nb::handle obj, const char* name) { return !PyType_Check(obj.ptr()) && nb::hasattr(obj, name); }

}  // namespace

std::optional<Array> import_arrow_stream(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                                         CopyMode copy, const char* api) {
  if (!has_method(obj, "__arrow_c_stream__")) return std::nullopt;
  return import_stream(obj, dtype, device, copy, api);
}

std::optional<Array> import_arrow(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
                                  CopyMode copy, const char* api) {
  if (!has_method(obj, "__arrow_c_array__")) return std::nullopt;
  nb::object pair = obj.attr("__arrow_c_array__")();
  return import_capsules(pair, obj, dtype, device, copy, api);
}

void bind_arrow(nb::module_& m) {
  nb::handle cls = nb::type<Array>();
  cls.attr("__arrow_c_schema__") = nb::cpp_function(
      [](const Array& a) {
        UMA_CHECK(a.ndim() == 1, Type, "__arrow_c_schema__: only 1-D arrays can be exported to Arrow, got a ",
                  a.ndim(), "-D array of shape ", shape_str(a.shape()));
        ArrowSchemaOwner s = interop::export_arrow_schema(a.dtype(), "__arrow_c_schema__");
        return make_capsule(s, kSchemaCapsule, schema_capsule_destructor);
      },
      nb::is_method(), nb::name("__arrow_c_schema__"), nb::scope(cls),
      "Arrow PyCapsule interface: an 'arrow_schema' capsule with this 1-D array's Arrow type\n"
      "(b c C s S i I l L e f g). TypeError for other ranks and for bfloat16/complex.");
  cls.attr("__arrow_c_array__") = nb::cpp_function(
      [](const Array& self, nb::handle requested_schema) {
        Array a = self;
        if (auto want = requested_dtype(requested_schema); want && *want != a.dtype() && a.ndim() == 1 &&
                                                           interop::arrow_format(a.dtype()) != nullptr)
          a = ops::astype(a, *want);
        interop::ArrowExport e = interop::export_arrow(a, "__arrow_c_array__");
        nb::object sc = make_capsule(e.schema, kSchemaCapsule, schema_capsule_destructor);
        nb::object ac = make_capsule(e.array, kArrayCapsule, array_capsule_destructor);
        return nb::make_tuple(sc, ac);
      },
      nb::is_method(), nb::name("__arrow_c_array__"), nb::scope(cls), param("requested_schema") = nb::none(),
      "Arrow PyCapsule interface: ('arrow_schema', 'arrow_array') capsules for this 1-D array.\n"
      "A contiguous array is shared (the capsule keeps it alive until Arrow releases it); a strided\n"
      "view is exported as a contiguous copy and bool as bit-packed copy. TypeError for other ranks\n"
      "and for bfloat16/complex. requested_schema (an 'arrow_schema' capsule) is honoured best-effort\n"
      "by a cast when it names another primitive type.");

  m.def("from_arrow", [](nb::handle obj, nb::handle copy) {
        const CopyMode mode = to_copy_mode(copy);
        if (has_method(obj, "__arrow_c_array__"))
          return import_capsules(obj.attr("__arrow_c_array__")(), obj, std::nullopt, std::nullopt, mode, "from_arrow");
        UMA_CHECK(has_method(obj, "__arrow_c_stream__"), Type, "from_arrow: ", obj_type_name(obj),
                  " implements neither __arrow_c_array__ nor __arrow_c_stream__ (the Arrow PyCapsule interface)");
        return import_stream(obj, std::nullopt, std::nullopt, mode, "from_arrow");
      }, param("obj"), nb::kw_only(), param("copy") = nb::none(),
      "Imports a 1-D Arrow column from any object with __arrow_c_array__, or the arrays of one with\n"
      "__arrow_c_stream__ (a pyarrow ChunkedArray), as a 1-D array (Arrow PyCapsule interface).\n"
      "Fixed-width primitive columns without nulls share memory (read-only, honouring offset);\n"
      "bit-packed booleans are unpacked (copy=False: uma.CopyError); a column with nulls raises\n"
      "ValueError naming the null count; dictionary, nested and other types raise TypeError.\n"
      "A stream of one array shares it as above; of none gives an empty array of its type; of\n"
      "several, their concatenation (a new array; copy=False: uma.CopyError naming the count).\n"
      "A producer's stream error raises RuntimeError with its message. The producer's release\n"
      "callbacks run exactly once.");
}

}  // namespace uma::py
