"""Bad input to the buffer-protocol and array-interface importers, and every PEP 3118 format
code that maps to a uma dtype.

Hand-made `__array_interface__` dicts and a ctypes buffer exporter (_buffer_exporter.py) give
what no library hands out on demand. NumPy is the oracle for dtypes and values wherever it
behaves; where NumPy itself reads out of bounds or ignores a field, the test says so and
asserts uma's clean refusal instead. Leaks are checked through the exporters: a bytearray
or mmap cannot be resized/closed while an export is alive, and the ctypes exporter counts
its gets and releases.
"""
import array
import gc
import mmap
import re
import struct
import sys

import numpy as np
import pytest

import uma
from _buffer_exporter import BufferExporter


class Iface:
    """Exposes only the given `__array_interface__` value, over memory kept alive by `keep`."""

    def __init__(self, interface, keep=None):
        self.__array_interface__ = interface
        self.keep = keep


BASE = np.arange(16, dtype=np.float64)
PTR = BASE.ctypes.data


def iface(**fields):
    d = {"version": 3, "shape": (4,), "typestr": "<f8", "data": (PTR, False)}
    d.update(fields)
    return {k: v for k, v in d.items() if v is not ...}


def stats():
    gc.collect()
    s = uma.memory_stats()
    return s["active_bytes"], s["adopted_bytes"]


# --------------------------------------------------------------------------- array interface


def test_well_formed_interface_shares():
    a = uma.asarray(Iface(iface()))
    assert a._data_ptr == PTR and a.writable
    np.testing.assert_array_equal(np.asarray(a), BASE[:4])


BAD_INTERFACES = {
    # name: (interface, exception, message fragment)
    "not a dict": ([("shape", (4,))], ValueError, "dict"),
    "None": (None, ValueError, "dict"),
    "typestr missing": (iface(typestr=...), ValueError, "typestr"),
    "typestr not a string": (iface(typestr=8), TypeError, "typestr"),
    "typestr bytes": (iface(typestr=b"<f8"), TypeError, "typestr"),
    "shape missing": (iface(shape=...), TypeError, "shape"),
    "shape not a tuple": (iface(shape=4), TypeError, "shape"),
    "shape a list": (iface(shape=[4]), TypeError, "shape"),
    "shape of floats": (iface(shape=(4.0,)), TypeError, "shape"),
    "shape entry beyond int64": (iface(shape=(2**64,)), ValueError, "shape"),
    "negative shape": (iface(shape=(-4,)), ValueError, "negative"),
    "negative shape 2-d": (iface(shape=(2, -1)), ValueError, "negative"),
    "shape product overflows": (iface(shape=(2**40, 2**40)), ValueError, "big"),
    "strides not a tuple": (iface(strides=8), TypeError, "strides"),
    "strides of floats": (iface(strides=(8.0,)), TypeError, "strides"),
    "strides and shape disagree": (iface(strides=(8, 8)), ValueError, "dimensions"),
    "strides address beyond int64": (iface(shape=(3,), strides=(2**62,)), ValueError, "address"),
    "negative strides beyond int64": (iface(shape=(3,), strides=(-(2**62),)), ValueError, "address"),
    "data missing": (iface(data=...), TypeError, "data"),
    "data an int": (iface(data=PTR), TypeError, "data"),
    "data a list": (iface(data=[PTR, False]), TypeError, "data"),
    "data tuple of 3": (iface(data=(PTR, False, 0)), TypeError, "data"),
    "data pointer a float": (iface(data=(float(PTR), False)), TypeError, "pointer"),
    "data pointer negative": (iface(data=(-8, False)), ValueError, "pointer"),
    "data pointer beyond 64 bits": (iface(data=(2**64, False)), ValueError, "pointer"),
    "NULL pointer with elements": (iface(data=(0, False)), ValueError, "NULL"),
    "NULL pointer 0-d": (iface(shape=(), data=(0, False)), ValueError, "NULL"),
    "offset with a pointer tuple": (iface(offset=8), ValueError, "offset"),
    "mask": (iface(mask=np.ones(4, dtype=bool)), ValueError, "mask"),
}


@pytest.mark.parametrize("name", list(BAD_INTERFACES))
def test_malformed_interface_clear_error_no_leak(name):
    interface, exc, frag = BAD_INTERFACES[name]
    obj = Iface(interface)
    before_refs = sys.getrefcount(obj)
    before = stats()
    with pytest.raises(exc) as info:
        uma.asarray(obj)
    assert frag.lower() in str(info.value).lower(), str(info.value)
    del info
    assert sys.getrefcount(obj) == before_refs  # the owner reference was not kept
    assert stats() == before


@pytest.mark.parametrize("name", ["negative shape", "shape not a tuple", "not a dict", "typestr missing",
                                  "typestr not a string"])
def test_numpy_refuses_the_same_way(name):
    # NumPy (the oracle) raises the same exception type for these.
    interface, exc, _ = BAD_INTERFACES[name]
    with pytest.raises(exc):
        np.asarray(Iface(interface))


UNKNOWN_TYPESTRS = ["<U4", "|S3", "|V16", "<V2", "|O8", "<M8", "<M8[ns]", "<m8[s]", "<f3", "<f16", "<i3", "<i16",
                    "<u3", "<c4", "<c32", "|b2", "<x4", "<q8", "<f", "<f4x", "<f-4", "@f4", "*i4", "i4", "", "<",
                    "<f4 ", "<f0", "<f0004x"]


@pytest.mark.parametrize("ts", UNKNOWN_TYPESTRS)
def test_unknown_typestr_type_error(ts):
    with pytest.raises(TypeError, match="typestr"):
        uma.asarray(Iface(iface(typestr=ts)))


@pytest.mark.parametrize("ts,dtype", [("|b1", "bool"), ("|i1", "int8"), ("<i2", "int16"), (">i4", "int32"),
                                      ("=i8", "int64"), ("|u1", "uint8"), (">u2", "uint16"), ("<u4", "uint32"),
                                      ("<u8", "uint64"), ("<f2", "float16"), (">f4", "float32"), ("<f8", "float64"),
                                      (">c8", "complex64"), ("<c16", "complex128")])
def test_every_typestr_against_numpy(ts, dtype):
    raw = np.arange(1, 9, dtype=np.uint8).tobytes() * 8  # 64 bytes
    src = np.frombuffer(raw, dtype=np.uint8)
    n = 64 // np.dtype(ts).itemsize
    if ts == "|b1":
        src = (src % 2).astype(np.uint8)
    obj = Iface({"version": 3, "shape": (n,), "typestr": ts, "data": (src.ctypes.data, True)}, keep=src)
    expected = np.asarray(obj)
    got = uma.asarray(obj)
    assert got.dtype == getattr(uma, "bool_" if dtype == "bool" else dtype)
    assert np.asarray(got).dtype.name == dtype
    np.testing.assert_array_equal(np.asarray(got), expected)  # byte-swapped ones are converted, never reinterpreted


@pytest.mark.parametrize("flag,writable", [(False, True), (True, False), (0, True), (1, False), ("", True),
                                           ("yes", False)])
def test_read_only_flag_is_truthiness_like_numpy(flag, writable):
    obj = Iface(iface(data=(PTR, flag)))
    assert np.asarray(obj).flags.writeable == writable  # the oracle
    assert uma.asarray(obj).writable == writable


def test_offset_with_pointer_tuple_numpy_ignores_it():
    # NumPy silently ignores `offset` next to a pointer tuple (the spec allows offset only with
    # buffer data); uma refuses rather than guess (test_malformed_interface_clear_error_no_leak).
    np.testing.assert_array_equal(np.asarray(Iface(iface(offset=8))), BASE[:4])


def test_mask_numpy_ignores_it():
    # NumPy ignores a mask (treats masked elements as valid); uma refuses it.
    np.testing.assert_array_equal(np.asarray(Iface(iface(mask=np.zeros(4, dtype=bool)))), BASE[:4])


# ---- buffer objects as `data` (length known: the view must fit)


def test_buffer_data_shares_and_honours_offset():
    ba = bytearray(np.arange(8, dtype=np.int32).tobytes())
    obj = Iface({"version": 3, "shape": (3,), "typestr": "<i4", "data": ba, "offset": 8})
    expected = np.asarray(obj)  # NumPy applies the offset to buffer data
    a = uma.asarray(obj)
    np.testing.assert_array_equal(np.asarray(a), expected)
    assert a.writable
    a[0] = 100  # shared: the write lands in the bytearray
    assert np.frombuffer(ba, dtype=np.int32)[2] == 100
    with pytest.raises(BufferError):
        ba.extend(b"x")  # exported while the view lives
    del a
    gc.collect()
    ba.extend(b"x")  # released: resizable again


def test_buffer_data_read_only_bytes():
    raw = np.arange(4, dtype=np.float32).tobytes()
    a = uma.asarray(Iface({"version": 3, "shape": (2, 2), "typestr": "<f4", "data": raw}))
    assert not a.writable
    np.testing.assert_array_equal(np.asarray(a), np.arange(4, dtype=np.float32).reshape(2, 2))


def test_buffer_data_none_without_a_buffer_type_error():
    # data=None means "obj itself exports the buffer"; this one does not (NumPy: TypeError too).
    obj = Iface(iface(data=None))
    with pytest.raises(TypeError):
        np.asarray(obj)
    with pytest.raises(TypeError, match="buffer"):
        uma.asarray(obj)


BAD_BUFFER_VIEWS = {
    # name: (shape, strides, offset) over a 32-byte bytearray read as <f8 (4 elements)
    "shape beyond the end": ((5,), None, 0),
    "offset pushes past the end": ((4,), None, 8),
    "stride reaches past the end": ((2,), (32,), 0),
    "negative stride reaches before the start": ((2,), (-8,), 0),
    "2-d reaches past the end": ((2, 3), (16, 8), 0),
    "offset beyond the buffer": ((0,), None, 40),
    "negative offset": ((1,), None, -8),
}


@pytest.mark.parametrize("name", list(BAD_BUFFER_VIEWS))
def test_buffer_data_view_outside_the_buffer_refused(name):
    # NumPy would read past the end here (it does not check): uma refuses.
    shape, strides, offset = BAD_BUFFER_VIEWS[name]
    ba = bytearray(32)
    obj = Iface({"version": 3, "shape": shape, "typestr": "<f8", "data": ba, "strides": strides, "offset": offset})
    before = stats()
    with pytest.raises(ValueError, match="outside"):
        uma.asarray(obj)
    ba.extend(b"x")  # the buffer export was released on the error path
    assert stats() == before


@pytest.mark.parametrize("shape,strides,offset", [((4,), None, 0), ((2,), (-8,), 8), ((0,), None, 32), ((2, 2), (8, 16), 0),
                                                  ((), None, 24)])
def test_buffer_data_views_inside_the_buffer_accepted(shape, strides, offset):
    vals = np.arange(4, dtype=np.float64)
    ba = bytearray(vals.tobytes())
    obj = Iface({"version": 3, "shape": shape, "typestr": "<f8", "data": ba, "strides": strides, "offset": offset})
    np.testing.assert_array_equal(np.asarray(uma.asarray(obj)), np.asarray(obj))


def test_buffer_data_non_buffer_object_type_error():
    with pytest.raises(TypeError, match="buffer"):
        uma.asarray(Iface(iface(data=object())))


# --------------------------------------------------------------------------- buffer protocol formats

NATIVE_CODES = "?bBhHiIlLqQnNfd"  # memoryview.cast accepts these (and 'c', 'P', which map to no uma dtype)


def values_for(code, n):
    if code == "?":
        return [bool(i % 2) for i in range(n)]
    if code in "efd":
        return [i * 0.5 - 1.25 for i in range(n)]
    if code in "BHILQN":
        return [i * 3 for i in range(n)]
    return [i * 3 - 7 for i in range(n)]


@pytest.mark.parametrize("code", list(NATIVE_CODES))
def test_memoryview_cast_every_native_code(code):
    n = 6
    raw = bytearray(struct.pack("@" + code * n, *values_for(code, n)))
    mv = memoryview(raw).cast(code)
    expected = np.asarray(mv)
    got = uma.asarray(mv)
    assert np.asarray(got).dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), expected)
    assert got._data_ptr == expected.ctypes.data and got.writable  # shared
    del got, expected
    gc.collect()
    mv.release()
    raw.extend(b"x")  # no export left behind


@pytest.mark.parametrize("code", list(NATIVE_CODES))
def test_memoryview_cast_shaped(code):
    raw = bytearray(struct.pack("@" + code * 6, *values_for(code, 6)))
    mv = memoryview(raw).cast(code).cast("B").cast(code, (2, 3))
    np.testing.assert_array_equal(np.asarray(uma.asarray(mv)), np.asarray(mv))


@pytest.mark.parametrize("typecode", array.typecodes)
def test_array_module_every_typecode(typecode):
    if typecode in "uw":  # unicode characters: NumPy makes strings, uma has no such dtype
        a = array.array(typecode, "ab")
        with pytest.raises(TypeError):
            uma.asarray(a)
        return
    vals = values_for(typecode if typecode not in "bB" else typecode, 5)
    a = array.array(typecode, vals)
    expected = np.asarray(a)
    got = uma.asarray(a)
    assert np.asarray(got).dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), expected)
    a[0] = a[1]  # shared: visible through uma
    assert np.asarray(got)[0] == np.asarray(got)[1]
    del got, expected
    gc.collect()
    a.append(a[0])  # resizable again: the export was released


PREFIXES = ["@", "=", "<", ">", "!"]
STANDARD_CODES = "?bBhHiIlLqQefd"


def _export(fmt, values, n):
    isz = struct.calcsize(fmt)
    return BufferExporter(struct.pack(fmt[0] + fmt[1:] * n, *values), fmt, isz, (n,), (isz,)), isz


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("code", list(STANDARD_CODES))
def test_byte_order_prefixes_with_standard_sizes(prefix, code):
    fmt = prefix + code
    n = 5
    e, isz = _export(fmt, values_for(code, n), n)
    if prefix != "@" and code in "lL":
        assert isz == 4  # standard size: '<l' is 4 bytes, whatever sizeof(long) is
    expected = np.asarray(e)  # oracle: dtype by PEP 3118 rules, values byte-swapped as needed
    got = uma.asarray(e)
    assert np.asarray(got).dtype == expected.dtype.newbyteorder("=")
    assert got.itemsize == isz
    np.testing.assert_array_equal(np.asarray(got), expected)
    swapped = prefix in ">!" and isz > 1
    assert (got._data_ptr == e.address) == (not swapped)  # native order shares, swapped converts
    del got, expected
    gc.collect()
    assert e.gets == e.releases


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("code,npdt", [("Zf", "c8"), ("Zd", "c16")])
def test_complex_codes_with_prefixes(prefix, code, npdt):
    vals = np.array([1 + 2j, -3.5 + 0.25j, 0j])
    order = ">" if prefix in ">!" else "<"
    raw = vals.astype(order + npdt).tobytes()
    isz = np.dtype(npdt).itemsize
    e = BufferExporter(raw, prefix + code, isz, (3,), (isz,))
    got = uma.asarray(e)
    assert np.asarray(got).dtype == np.dtype(npdt)
    np.testing.assert_array_equal(np.asarray(got), vals.astype(npdt))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(e))


def test_strided_and_0d_exports():
    vals = np.arange(12, dtype=np.int32)
    e = BufferExporter(vals.tobytes(), "<i", 4, (3, 2), (16, 8), length=24)
    np.testing.assert_array_equal(np.asarray(uma.asarray(e)), vals.reshape(3, 4)[:, ::2])
    z = BufferExporter(vals.tobytes(), "<i", 4, (), None, length=4, start=8)
    got = uma.asarray(z)
    assert got.shape == () and got.item() == 2
    r = BufferExporter(vals.tobytes(), "<i", 4, (4,), (-4,), length=16, start=44)  # negative stride
    np.testing.assert_array_equal(np.asarray(uma.asarray(r)), vals[::-1][:4])


def test_null_format_means_unsigned_bytes():
    e = BufferExporter(b"\x01\x02\xff", None, 1, (3,), (1,))
    got = uma.asarray(e)
    assert got.dtype == uma.uint8 and np.asarray(got).tolist() == [1, 2, 255]


def test_read_only_export_imports_read_only():
    e = BufferExporter(b"\x00" * 8, "<d", 8, (1,), (8,), readonly=True)
    got = uma.asarray(e)
    assert not got.writable
    with pytest.raises(ValueError):
        got[0] = 1.0


UNSUPPORTED_FORMATS = [
    ("2i", 8), ("3B", 3), ("T{i:a:}", 4), ("T{<i:a:d:b:}", 12), ("(2)i", 8), ("(2,2)d", 32), ("i:name:", 4),
    ("ii", 8), ("c", 1), ("<c", 1), ("s", 1), ("4s", 4), ("p", 1), ("x", 1), ("xi", 5), ("P", 8), ("g", 16),
    ("Zg", 32), ("Ze", 4), ("Z", 8), ("O", 8), ("&i", 8), ("u", 2), ("w", 4), ("<", 1), ("", 1), ("?i", 5),
    ("^i", 4), ("<n", 8), ("!N", 8), ("<P", 8), ("i ", 4), ("y", 1),
]


@pytest.mark.parametrize("fmt,itemsize", UNSUPPORTED_FORMATS, ids=[f for f, _ in UNSUPPORTED_FORMATS])
def test_multi_char_and_unsupported_formats_type_error(fmt, itemsize):
    e = BufferExporter(bytes(itemsize * 2), fmt, itemsize, (2,), (itemsize,))
    before = stats()
    with pytest.raises(TypeError, match="format"):
        uma.asarray(e)
    assert e.gets == e.releases == 1  # the refused export was released
    assert stats() == before


@pytest.mark.parametrize("fmt,itemsize", [("i", 8), ("<l", 8), ("@l", 4), ("d", 4), ("?", 2), ("Zf", 16), ("e", 4)])
def test_format_itemsize_mismatch_type_error(fmt, itemsize):
    # e.g. an exporter claiming '<l' (standard size 4) with itemsize 8
    e = BufferExporter(bytes(itemsize * 2), fmt, itemsize, (2,), (itemsize,))
    with pytest.raises(TypeError, match="itemsize"):
        uma.asarray(e)
    assert e.gets == e.releases


def test_suboffsets_type_error():
    e = BufferExporter(bytes(16), "<i", 4, (4,), (4,), suboffsets=(0,))
    with pytest.raises(TypeError, match="suboffsets"):
        uma.asarray(e)
    assert e.gets == e.releases


@pytest.mark.parametrize("shape,strides,length", [((-1,), (4,), 16), ((2, -3), (12, 4), 16),
                                                  ((2**40, 2**40), (4, 4), 16), ((3,), (2**62,), 12)])
def test_impossible_exported_geometry_value_error(shape, strides, length):
    e = BufferExporter(bytes(16), "<i", 4, shape, strides, length=length)
    with pytest.raises(ValueError):
        uma.asarray(e)
    assert e.gets == e.releases


@pytest.mark.parametrize("shape,length", [((100,), 16), ((4, 4), 16), ((5,), 16)])
def test_contiguous_export_longer_than_its_len_refused(shape, length):
    # A contiguous view whose elements need more than `len` bytes: the exporter lies about its
    # memory (PEP 3118: len == product(shape) * itemsize); uma refuses instead of reading past it.
    e = BufferExporter(bytes(16), "<i", 4, shape, None, length=length)
    with pytest.raises(ValueError, match="len"):
        uma.asarray(e)
    assert e.gets == e.releases


# --------------------------------------------------------------------------- other buffer objects


def test_bytes_import_read_only_uint8_and_memoryview_slices():
    b = bytes(range(10))
    got = uma.asarray(b)
    assert got.dtype == uma.uint8 and not got.writable
    np.testing.assert_array_equal(np.asarray(got), np.frombuffer(b, dtype=np.uint8))
    mv = memoryview(bytearray(b))[2:9:3]
    np.testing.assert_array_equal(np.asarray(uma.asarray(mv)), np.asarray(mv))


@pytest.mark.parametrize("access", [mmap.ACCESS_WRITE, mmap.ACCESS_READ])
def test_mmap_shares_and_releases(tmp_path, access):
    path = tmp_path / "data.bin"
    path.write_bytes(np.arange(8, dtype=np.uint8).tobytes())
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0, access=access)
        got = uma.asarray(m)
        assert got.dtype == uma.uint8
        assert got.writable == (access == mmap.ACCESS_WRITE)
        np.testing.assert_array_equal(np.asarray(got), np.arange(8))
        if access == mmap.ACCESS_WRITE:
            got[3] = 200
            assert m[3] == 200
        with pytest.raises(BufferError):
            m.close()  # exported pointers exist
        del got
        gc.collect()
        m.close()  # no export left


def test_numpy_float8_of_ml_dtypes_refused_cleanly():
    mld = pytest.importorskip("ml_dtypes")
    x = np.zeros(4, dtype=mld.float8_e4m3fn)
    with pytest.raises(TypeError):
        uma.asarray(x)


@pytest.mark.parametrize("fn", [uma.asarray, uma.array])
@pytest.mark.parametrize("value, shown", [(None, "None"), (object(), "<object object"), ({1: 2}, r"\{1: 2\}"),
                                          ([1, object()], r"\[1, <object object")])
def test_non_numbers_are_a_type_error_naming_the_value(fn, value, shown):
    with pytest.raises(TypeError, match=rf"{fn.__name__}: cannot convert {shown}"):
        fn(value)


def test_python_ints_beyond_64_bits_name_the_value_in_function_inputs_and_set_value():
    x = uma.sym.scalar("x", dtype="int8")
    f = uma.function([x], x + 1)
    for v in (2**64, -2**70, [1, 2**70]):
        with pytest.raises(TypeError, match=r"input 0 \('x'\): value .*1180591620717411303424.* is out of range for "
                                            r"int8|input 0 \('x'\): value 18446744073709551616 is out of range"):
            f(v)
    s = uma.shared(np.int8(3), "s")
    with pytest.raises(TypeError, match="set_value of 's': value 1180591620717411303424 is out of range for int8"):
        s.set_value(2**70)
    assert s.get_value().item() == 3


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_python_ints_beyond_64_bits_convert_to_float_inputs_as_numpy(dtype):
    """A float or complex input takes a Python int beyond 64 bits while it is finite there
    (np.asarray(value, dtype)); one beyond the dtype's range is out of range, named."""
    x = uma.sym.vector("x", dtype=dtype)
    f = uma.function([x], x * 2)
    for v in ([2**64, 1], [-2**70], [2**100]):
        np.testing.assert_array_equal(np.asarray(f(v)), np.asarray(v, dtype=dtype) * 2)
    big = 10**400 if dtype != "float32" else 2**200
    with pytest.raises(TypeError, match=rf"input 0 \('x'\): value \[{str(big)[:20]}.* is out of range for {dtype}"):
        f([big])


def test_eager_python_ints_beyond_64_bits_into_float_dtypes():
    """asarray, full and item assignment take a Python int beyond 64 bits for a float or complex
    dtype as np.asarray(value, dtype) does; beyond the double range it is an OverflowError naming it."""
    for dt in ("float64", "float32", "complex128"):
        np.testing.assert_array_equal(np.asarray(uma.asarray(2**70, dtype=dt)), np.asarray(2**70, dtype=dt))
        np.testing.assert_array_equal(np.asarray(uma.full((2,), -2**70, dtype=dt)), np.full((2,), -2**70, dtype=dt))
        a = uma.zeros(2, dtype=dt)
        a[0] = 2**70
        assert np.asarray(a)[0] == np.asarray(2**70, dtype=dt)
    with pytest.raises(OverflowError, match=f"Python integer {10**400} out of range for float64"):
        uma.asarray(10**400, dtype="float64")
    with pytest.raises(OverflowError, match=re.escape(f"Python integer {2**70} is out of bounds for every integer "
                                                      "dtype (int64 and uint64; uma has no object dtype)")):
        uma.asarray(2**70)  # no dtype: NumPy would make an object array
    with pytest.raises(OverflowError):
        np.asarray(2**70, dtype=np.uint64)  # NumPy too, for the widest integer dtype


def test_bad_input_errors_name_the_function_that_was_called():
    # errors of one op made by another name the op called, not the one underneath
    x = uma.asarray(np.ones(3))
    with pytest.raises(np.exceptions.AxisError, match="^count_nonzero: axis 3 is out of bounds"):
        uma.count_nonzero(x, axis=3)
    with pytest.raises(np.exceptions.AxisError):
        np.count_nonzero(np.ones(3), axis=3)
    with pytest.raises(IndexError, match="^setitem: too many indices for array"):
        x[0, 0] = 1.0
    np.testing.assert_array_equal(np.asarray(x), np.ones(3))
    for reduce in (lambda: x.sum(axis=2**70), lambda: uma.sum(x, axis=(0, 2**70))):
        with pytest.raises(OverflowError, match=f"axis {2**70} is out of range of int64"):
            reduce()
    with pytest.raises(OverflowError):
        np.ones(3).sum(axis=2**70)  # NumPy: OverflowError too


def test_symbolic_names_and_shapes_of_the_wrong_type_are_refused_by_name():
    for make in (lambda: uma.shared(np.ones(3), name=5), lambda: uma.sym.vector(5), lambda: uma.sym.scalar(b"x")):
        with pytest.raises(TypeError, match="a variable's name is a str or None, got"):
            make()
    for make, what in ((lambda: uma.shared(np.ones(3), shape=3), "shared: shape"),
                       (lambda: uma.sym.vector("v", shape=3), "vector: shape"),
                       (lambda: uma.sym.tensor("t", shape=2.5), "tensor: shape")):
        with pytest.raises(TypeError, match=f"^{what} must be a tuple of ints or None \\(one per axis\\), got"):
            make()
    assert uma.shared(np.ones(3), name="s", shape=[3]).type.shape == (3,)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_mixed_int64_and_uint64_python_ints_into_integer_inputs_are_exact(backend):
    """A list mixing ints of int64's and uint64's ranges (NumPy's probe rounds them through
    float64) reaches an integer input exactly where each fits its dtype; where one does not, it
    is out of range (named), or with allow_input_downcast wraps as NumPy's astype wraps."""
    x = uma.sym.vector("x", dtype="uint64")
    f = uma.function([x], x, backend=backend)
    for v in ([2**64 - 1, 0], [1, 2**63 + 1], [2**63, 2**64 - 1, 7]):
        got = np.asarray(f(v))
        assert got.dtype == np.uint64 and got.tolist() == v
    with pytest.raises(TypeError, match=r"input 0 \('x'\): value \[9223372036854775808, -1\] is out of range for uint64"):
        f([2**63, -1])
    down = uma.function([x], x, backend=backend, allow_input_downcast=True)
    assert np.asarray(down([2**63, -1])).tolist() == [2**63, 2**64 - 1]
    y = uma.sym.vector("y", dtype="int8")
    g = uma.function([y], y, backend=backend, allow_input_downcast=True)
    want = np.array([2**63 % 256, 2**64 - 1, 300], dtype=np.uint64).astype(np.int8)
    np.testing.assert_array_equal(np.asarray(g([2**63, -1, 300])), want)
    s = uma.shared(np.zeros(2, np.uint64), "s")
    s.set_value([2**64 - 1, 0])
    assert s.get_value().tolist() == [2**64 - 1, 0]


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint64", "bool", "float32"])
def test_an_empty_list_is_an_empty_input_of_any_dtype(dtype):
    """[] (NumPy's float64 default) is an empty array of the input's dtype, as
    np.asarray([], dtype) is; a nested empty list keeps its shape."""
    x = uma.sym.vector("x", dtype=dtype)
    got = np.asarray(uma.function([x], x)([]))
    assert got.dtype == np.dtype(dtype) and got.shape == (0,)
    m = uma.sym.matrix("m", dtype=dtype)
    assert np.asarray(uma.function([m], m)([[]])).shape == (1, 0)


def test_python_ints_beyond_64_bits_name_the_target_dtype_or_are_true_for_bool():
    """asarray of a Python int beyond 64 bits: OverflowError naming the dtype asked for (NumPy's
    message), and True for bool (NumPy's bool(), any nonzero int)."""
    for v, dt in ((-2**63 - 1, "int8"), (2**64, "uint64"), (2**70, "int32")):
        with pytest.raises(OverflowError, match=f"Python integer {v} out of bounds for {dt}"):
            uma.asarray(v, dtype=dt)
        with pytest.raises(OverflowError):
            np.asarray(v, dtype=dt)
    for v in (2**64, -2**63 - 1, 2**100):
        assert np.asarray(uma.asarray(v, dtype="bool")).item() is np.asarray(v, dtype=bool).item() is True


def _float8():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return ml_dtypes.float8_e4m3fn


@pytest.mark.parametrize("make", [
    lambda: np.array(["a", "bc"]), lambda: np.array([b"x"]), lambda: np.array([object(), 1], dtype=object),
    lambda: np.array(["2020-01-01"], dtype="datetime64[s]"), lambda: np.array([1], dtype="timedelta64[ms]"),
    lambda: np.zeros(2, dtype="V4"), lambda: np.zeros(2, dtype=[("a", "i4"), ("b", "f8")]),
    lambda: np.zeros(2, dtype=_float8()),
] + ([lambda: np.zeros(2, dtype=np.longdouble), lambda: np.zeros(2, dtype=np.clongdouble)]
     if np.dtype(np.longdouble).itemsize > 8 else []),
    ids=lambda f: "")
def test_numpy_arrays_of_other_dtypes_name_their_dtype(make):
    """A NumPy array whose dtype uma lacks is refused with NumPy's name of that dtype, not its
    buffer format or typestr."""
    n = make()
    for call in (lambda: uma.asarray(n), lambda: uma.array(n), lambda: uma.shared(n)):
        with pytest.raises(TypeError, match=f"NumPy dtype {re.escape(str(n.dtype))} has no uma equivalent"):
            call()


def test_from_dlpack_of_none_says_so():
    with pytest.raises(TypeError, match="from_dlpack: <class 'NoneType'> does not implement __dlpack__"):
        uma.from_dlpack(None)


def test_array_copy_keyword_is_numpys():
    """uma.array copies by default; copy=None and copy=False are numpy.array's (NumPy 2): share
    when possible, and copy=False raises CopyError when a copy is needed."""
    n = np.arange(4.0)
    assert not np.shares_memory(np.asarray(uma.array(n)), n)
    assert not np.shares_memory(np.asarray(uma.array(n, copy=True)), n)
    for copy in (None, False):
        assert np.shares_memory(np.asarray(uma.array(n, copy=copy)), n)
        assert np.shares_memory(np.array(n, copy=copy), n)  # the oracle
    with pytest.raises(ValueError):
        np.array([1, 2], copy=False)
    with pytest.raises(uma.CopyError, match="copy=False is impossible: a list must be copied"):
        uma.array([1, 2], copy=False)
    with pytest.raises(TypeError, match="copy must be True, False or None, got 1"):
        uma.array(n, copy=1)


@pytest.mark.filterwarnings("ignore:nanobind. attempted to access an uninitialized instance:RuntimeWarning")
def test_an_uninitialized_array_refuses_its_buffer():
    """uma.Array.__new__ without __init__ (or a subclass whose __init__ skips uma.Array's)
    holds no array: its buffer is a BufferError, and conversions raise instead of crashing."""
    bare = uma.Array.__new__(uma.Array)

    class Skips(uma.Array):
        def __init__(self):
            pass

    for a in (bare, Skips()):
        with pytest.raises(BufferError, match="not initialized"):
            memoryview(a)
        with pytest.raises((TypeError, BufferError)):
            np.asarray(a)
