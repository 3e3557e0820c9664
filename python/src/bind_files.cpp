// uma.load / uma.save: .npy and .safetensors files (include/uma/interop/files.h,
// Note [Mapped files]). The file work runs without the GIL; OS errors become OSError
// subclasses (FileNotFoundError, PermissionError, IsADirectoryError, ...) naming the path.
#include <nanobind/stl/pair.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <system_error>

#include "common.h"
#include "uma/error.h"
#include "uma/interop/files.h"

namespace uma::py {

namespace {

struct PathArg {
  nb::object fspath;  // os.fspath(path): str or bytes, for OSError's filename
  std::string bytes;  // the path in the filesystem encoding
  std::string ext;    // lower-case suffix of the last component, without the dot
};

PathArg to_path(nb::handle h) {
  PathArg p;
  p.fspath = nb::steal(PyOS_FSPath(h.ptr()));  // TypeError for anything but str, bytes, os.PathLike
  if (!p.fspath.is_valid()) throw nb::python_error();
  nb::object b = PyUnicode_Check(p.fspath.ptr()) ? nb::steal(PyUnicode_EncodeFSDefault(p.fspath.ptr())) : p.fspath;
  if (!b.is_valid()) throw nb::python_error();
  char* s = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &s, &n) != 0) throw nb::python_error();
  p.bytes.assign(s, static_cast<std::size_t>(n));
  UMA_CHECK(p.bytes.find('\0') == std::string::npos, Value, "embedded null byte in the path");
  const std::size_t slash = p.bytes.rfind('/');
  const std::size_t dot = p.bytes.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    p.ext = p.bytes.substr(dot + 1);
    std::transform(p.ext.begin(), p.ext.end(), p.ext.begin(), [](unsigned char c) { return std::tolower(c); });
  }
  return p;
}

[[noreturn]] void raise_os_error(const std::system_error& e, const PathArg& p) {
  errno = e.code().value();
  PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, p.fspath.ptr());
  throw nb::python_error();
}

// Runs f() without the GIL; std::system_error becomes OSError (with the GIL held again).
template <class F>
auto without_gil(const PathArg& p, F&& f) {
  try {
    nb::gil_scoped_release release;
    return f();
  } catch (const std::system_error& e) {
    raise_os_error(e, p);
  }
}

nb::str to_str(const std::string& s) { return nb::str(s.data(), s.size()); }  // validated UTF-8

nb::object load(nb::handle path, std::optional<bool> mmap, bool metadata) {
  const PathArg p = to_path(path);
  files::FileFormat fmt = p.ext == "npy"           ? files::FileFormat::Npy
                          : p.ext == "safetensors" ? files::FileFormat::Safetensors
                                                   : without_gil(p, [&] { return files::sniff_format(p.bytes); });
  UMA_CHECK(fmt != files::FileFormat::Unknown, Value, "uma.load('", p.bytes,
            "'): not a .npy or .safetensors file (its first bytes are neither \\x93NUMPY nor an 8-byte length "
            "followed by '{')");
  if (fmt == files::FileFormat::Npy) {
    UMA_CHECK(!metadata, Type, "uma.load('", p.bytes, "'): metadata=True is for .safetensors files, this is .npy");
    Array a = without_gil(p, [&] { return files::load_npy(p.bytes, mmap); });
    return nb::cast(std::move(a));
  }
  files::SafetensorsFile f = without_gil(p, [&] { return files::load_safetensors(p.bytes, mmap); });
  nb::dict d;
  for (auto& [name, a] : f.tensors) d[to_str(name)] = nb::cast(std::move(a));
  if (!metadata) return d;
  nb::object m = nb::none();
  if (f.metadata) {
    nb::dict md;
    for (const auto& [k, v] : *f.metadata) md[to_str(k)] = to_str(v);
    m = md;
  }
  return nb::make_tuple(d, m);
}

void save(nb::handle path, nb::handle value, nb::handle metadata) {
  const PathArg p = to_path(path);
  if (PyDict_Check(value.ptr())) {
    UMA_CHECK(p.ext != "npy", Type, "uma.save('", p.bytes,
              "'): a dict of arrays is saved as .safetensors, but the path ends with .npy");
    std::vector<std::pair<std::string, Array>> tensors;
    for (auto [k, v] : nb::borrow<nb::dict>(value)) {
      UMA_CHECK(PyUnicode_Check(k.ptr()), Type, "uma.save: tensor names must be str, got ", py_repr(k));
      tensors.emplace_back(nb::cast<std::string>(k), asarray(v, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "uma.save"));
    }
    std::optional<std::vector<std::pair<std::string, std::string>>> md;
    if (!metadata.is_none()) {
      UMA_CHECK(PyDict_Check(metadata.ptr()), Type, "uma.save: metadata must be a dict[str, str], got ", py_repr(metadata));
      md.emplace();
      for (auto [k, v] : nb::borrow<nb::dict>(metadata)) {
        UMA_CHECK(PyUnicode_Check(k.ptr()) && PyUnicode_Check(v.ptr()), Type,
                  "uma.save: metadata must map str to str, got ", py_repr(k), ": ", py_repr(v));
        md->emplace_back(nb::cast<std::string>(k), nb::cast<std::string>(v));
      }
    }
    without_gil(p, [&] { files::save_safetensors(p.bytes, tensors, md); });
    return;
  }
  UMA_CHECK(p.ext != "safetensors", Type, "uma.save('", p.bytes,
            "'): .safetensors holds a dict of arrays, got ", py_repr(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(value.ptr())))));
  UMA_CHECK(metadata.is_none(), Type, "uma.save: metadata= is only for .safetensors files (a dict of arrays)");
  Array a = asarray(value, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "uma.save");
  without_gil(p, [&] { files::save_npy(p.bytes, a); });
}

}  // namespace

void bind_files(nb::module_& m) {
  m.def("load", &load, param("path"), nb::kw_only(), nb::arg("mmap") = nb::none(), nb::arg("metadata") = false,
        "Loads a .npy file (-> uma.Array) or a .safetensors file (-> dict[str, uma.Array] in file order).\n"
        "The format comes from the extension (.npy / .safetensors), else from the magic bytes.\n"
        "\n"
        "mmap=None (the default, as asarray's copy=None) shares the file as mmap=True does when every\n"
        "array of it can be shared, and reads it as mmap=False does otherwise.\n"
        "mmap=True maps the file read-only and shares it (zero-copy): the arrays are read-only (writes\n"
        "raise ValueError), adopted (is_adopted, counted in memory_stats()['adopted_bytes'] as the file\n"
        "size), and all tensors of a safetensors file share one mapping that lives while any of them\n"
        "does. Data that cannot be shared raises uma.CopyError naming the reason: big-endian .npy data\n"
        "('>f8'), or a data offset that is not a multiple of the itemsize. No writer, in this process or\n"
        "another, may truncate or rewrite a mapped file in place while its arrays live (the OS kills the\n"
        "reader with SIGBUS, as with numpy.memmap); numpy.save to the same path does so. uma.save writes\n"
        "a new file and renames it over the old one, so arrays mapped from the old file keep its data.\n"
        "mmap=False reads into fresh writable pooled memory, byte-swapping to native order.\n"
        "Fortran-order .npy data loads as an F-contiguous view (no transpose copy).\n"
        "metadata=True (safetensors only) returns (tensors, metadata) where metadata is the\n"
        "'__metadata__' dict[str, str], or None when the file has none.\n"
        "\n"
        "dtypes: .npy '|b1' '|i1'..'<i8' '|u1'..'<u8' '<f2' '<f4' '<f8' '<c8' '<c16' (and '>'/'=' forms);\n"
        "safetensors BOOL U8 I8 U16 I16 U32 I32 U64 I64 F16 BF16 F32 F64 C64.\n"
        "Errors: ValueError for a malformed file, naming the problem and the byte offset or value (bad\n"
        "magic, unknown version, truncated header or data, header lengths or shapes or data_offsets that\n"
        "disagree with the file size, gaps/overlaps/trailing bytes, bad JSON or header dict, unknown\n"
        "descr or dtype name); nothing past the end of the file is ever read. Bool bytes other than 0/1\n"
        "are kept as they are and read as true (byte != 0), as np.load keeps them.\n"
        "TypeError for dtypes uma lacks ('<U3', '|O', structured, FP8). OSError (FileNotFoundError, ...)\n"
        "from the OS. Format rules: NumPy's numpy.lib.format (NEP 1) and the reference safetensors\n"
        "implementation (huggingface/safetensors); see REFERENCE.md 'File formats'.");
  m.def("save", &save, param("path"), param("value"), nb::kw_only(), param("metadata") = nb::none(),
        "Writes an array (uma.Array or anything uma.asarray accepts) as .npy, or a dict[str, array] as\n"
        ".safetensors (the value picks the format; a contradicting .npy/.safetensors extension is a\n"
        "TypeError). metadata: dict[str, str] stored as safetensors '__metadata__'.\n"
        "\n"
        ".npy: exactly the bytes np.save writes (version 1.0, or 2.0 for huge headers; header padded to\n"
        "64 bytes; little-endian; C order, or Fortran order for an F- but not C-contiguous array).\n"
        ".safetensors: the bytes the reference writer produces (tensors ordered by dtype alignment then\n"
        "name, compact JSON padded with spaces to a multiple of 8, little-endian, C order).\n"
        "The file is written under a temporary name in the same folder and renamed over `path`, so\n"
        "saving over a file that loaded arrays still map is safe. As numpy.save's open(2): a symbolic\n"
        "link stays a link and its target gets the data; an existing file keeps its permission bits,\n"
        "and one without write permission is refused (PermissionError) before anything is written.\n"
        "Errors: TypeError for bfloat16 in .npy, complex128 in .safetensors, non-str names or metadata;\n"
        "ValueError for the name '__metadata__'; OSError from the OS.");
}

}  // namespace uma::py
