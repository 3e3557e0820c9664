"""Arrow C Data Interface and PyCapsule interface, against real pyarrow and a
test-only ctypes producer (tests/python/_arrow_producer.py).

Shared memory is asserted by buffer addresses and by a write through NumPy (the owner of the
bytes) that shows in the uma view; release callbacks are counted. Imports of shared Arrow memory
are read-only (Note [Arrow is read-only], include/uma/interop/arrow.h).
"""
import decimal
import gc
import sys

import numpy as np
import pytest

import uma

pa = pytest.importorskip("pyarrow")

from _arrow_producer import (ArrowArray, ArrowOnly, ArrowProducer, ArrowSchema, ArrowStreamProducer,  # noqa: E402
                             CountingArrow, CountingStream, FixedReturn, bitmap, capsule_struct, consume,
                             read_buffers, release)

from_arrow = getattr(uma, "from_arrow", None) or uma._core.from_arrow

PRIMITIVES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
              "float64"]
FORMATS = {"bool": "b", "int8": "c", "uint8": "C", "int16": "s", "uint16": "S", "int32": "i", "uint32": "I",
           "int64": "l", "uint64": "L", "float16": "e", "float32": "f", "float64": "g"}
PA_TYPES = {"bool": pa.bool_(), "int8": pa.int8(), "uint8": pa.uint8(), "int16": pa.int16(), "uint16": pa.uint16(),
            "int32": pa.int32(), "uint32": pa.uint32(), "int64": pa.int64(), "uint64": pa.uint64(),
            "float16": pa.float16(), "float32": pa.float32(), "float64": pa.float64()}


def np_values(dtype, n=10):
    return (np.arange(n) % 100 + 1).astype(dtype)


def pa_from_numpy(n):
    """A pyarrow array over n's memory (asserted zero-copy)."""
    p = pa.array(n)
    assert p.buffers()[1].address == n.ctypes.data
    return p


def collect():
    for _ in range(3):
        gc.collect()


# ============================================================================ import: shared memory


@pytest.mark.parametrize("dtype", PRIMITIVES)
@pytest.mark.parametrize("how", ["from_arrow", "asarray_arrow_only", "asarray_copy_false"])
def test_import_every_primitive_shares_memory(dtype, how):
    n = np_values(dtype)
    p = pa_from_numpy(n)
    if how == "from_arrow":
        u = from_arrow(p)
    elif how == "asarray_arrow_only":
        u = uma.asarray(ArrowOnly(p))
    else:
        u = uma.asarray(ArrowOnly(p), copy=False)
    assert u.dtype.name == dtype and u.shape == (10,)
    assert u._data_ptr == n.ctypes.data
    assert u.is_adopted
    assert not u.writable  # Arrow data is immutable by convention
    n[3] = 77  # write through the owner ...
    assert np.asarray(u)[3] == 77  # ... and read it through uma
    np.testing.assert_array_equal(np.asarray(u), n)


@pytest.mark.parametrize("dtype", PRIMITIVES)
def test_asarray_on_pyarrow_array_shares(dtype):
    # pyarrow arrays also have __dlpack__, which uma.asarray tries first (DESIGN.md order);
    # either way the memory is shared and read-only.
    n = np_values(dtype)
    u = uma.asarray(pa_from_numpy(n))
    assert u._data_ptr == n.ctypes.data and not u.writable
    np.testing.assert_array_equal(np.asarray(u), n)


@pytest.mark.parametrize("dtype", PRIMITIVES)
@pytest.mark.parametrize("offset,length", [(0, 0), (3, 4), (9, 1), (10, 0), (1, 9)])
def test_import_slice_honours_offset(dtype, offset, length):
    n = np_values(dtype, 10)
    p = pa_from_numpy(n).slice(offset, length)
    u = from_arrow(p)
    assert u.shape == (length,)
    np.testing.assert_array_equal(np.asarray(u), n[offset:offset + length])
    if length:
        assert u._data_ptr == n.ctypes.data + offset * n.itemsize


def test_import_slice_of_slice_and_from_buffers_offset():
    n = np.arange(20, dtype=np.int64)
    p = pa_from_numpy(n).slice(2, 15).slice(3, 5)
    u = from_arrow(p)
    assert u._data_ptr == n.ctypes.data + 5 * 8
    np.testing.assert_array_equal(np.asarray(u), n[5:10])
    q = pa.Array.from_buffers(pa.int64(), 4, [None, pa.py_buffer(n)], offset=7)
    v = from_arrow(q)
    assert v._data_ptr == n.ctypes.data + 7 * 8
    np.testing.assert_array_equal(np.asarray(v), n[7:11])


def test_import_keeps_arrow_memory_alive():
    n = np.arange(1000, dtype=np.float64)
    p = pa.array(n * 2)  # pyarrow owns these bytes
    u = from_arrow(p)
    expect = np.asarray(u).copy()
    del p
    collect()
    np.testing.assert_array_equal(np.asarray(u), expect)


def test_import_adopted_bytes_return_to_baseline():
    n = np.arange(4096, dtype=np.float64)
    p = pa_from_numpy(n)
    base = uma.memory_stats()["adopted_bytes"]
    u = from_arrow(p)
    assert uma.memory_stats()["adopted_bytes"] == base + n.nbytes
    del u
    collect()
    assert uma.memory_stats()["adopted_bytes"] == base


def test_import_size0_and_null_values_buffer_with_length0():
    u = from_arrow(pa.array(np.zeros(0, dtype=np.int32)))
    assert u.shape == (0,) and u.dtype.name == "int32"
    prod = ArrowProducer(np.zeros(0, dtype=np.int32), b"i", length=0, null_values=True)
    v = from_arrow(prod)
    assert v.shape == (0,)
    del v
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


# ============================================================================ import: copy rules


@pytest.mark.parametrize("dtype", PRIMITIVES)
def test_import_copy_true_gives_writable_copy(dtype):
    n = np_values(dtype)
    u = uma.asarray(ArrowOnly(pa_from_numpy(n)), copy=True)
    assert u._data_ptr != n.ctypes.data and u.writable and not u.is_adopted
    np.testing.assert_array_equal(np.asarray(u), n)


def test_import_dtype_differs_converts_or_copy_error():
    n = np.arange(6, dtype=np.int32)
    u = uma.asarray(ArrowOnly(pa_from_numpy(n)), dtype="float32")
    assert u.dtype.name == "float32" and u._data_ptr != n.ctypes.data
    np.testing.assert_array_equal(np.asarray(u), n.astype(np.float32))
    with pytest.raises(uma.CopyError, match="differs"):
        uma.asarray(ArrowOnly(pa_from_numpy(n)), dtype="float32", copy=False)


def test_import_unaligned_values_copy_or_copy_error():
    raw = pa.py_buffer(np.arange(9, dtype=np.int32).tobytes() + b"\0" * 8)
    q = pa.Array.from_buffers(pa.int32(), 3, [None, raw[1:]])
    assert q.buffers()[1].address % 4 != 0
    u = from_arrow(q)  # copy=None: copied
    assert u._data_ptr % 4 == 0
    np.testing.assert_array_equal(np.asarray(u), np.frombuffer(raw.to_pybytes()[1:13], dtype=np.int32))
    with pytest.raises(uma.CopyError, match="aligned"):
        from_arrow(q, copy=False)


# ============================================================================ import: booleans


@pytest.mark.parametrize("offset,length", [(0, 37), (5, 20), (8, 16), (13, 0), (36, 1)])
def test_import_bool_unpacks(offset, length):
    rng = np.random.default_rng(offset)
    vals = rng.integers(0, 2, 37).astype(bool)
    p = pa.array(vals).slice(offset, length)
    u = from_arrow(p)
    assert u.dtype.name == "bool" and u.shape == (length,)
    assert u.writable and not u.is_adopted  # a fresh, unpacked copy
    np.testing.assert_array_equal(np.asarray(u), vals[offset:offset + length])
    v = uma.asarray(ArrowOnly(p))
    np.testing.assert_array_equal(np.asarray(v), vals[offset:offset + length])


def test_import_bool_copy_false_copy_error():
    p = pa.array([True, False, True])
    with pytest.raises(uma.CopyError, match="bit-packed"):
        from_arrow(p, copy=False)
    with pytest.raises(uma.CopyError, match="bit-packed"):
        uma.asarray(ArrowOnly(p), copy=False)
    assert isinstance(uma.CopyError("x"), ValueError)


def test_import_bool_with_dtype():
    u = uma.asarray(ArrowOnly(pa.array([True, False, True])), dtype="int32")
    assert u.dtype.name == "int32"
    np.testing.assert_array_equal(np.asarray(u), [1, 0, 1])


def test_import_bool_from_hand_made_bitmap_ignores_padding_bits():
    bits = np.array([0b10110101, 0xFF], dtype=np.uint8)  # values buffer: bits 1..5 then padding
    prod = ArrowProducer(bits, b"b", length=5, offset=1)
    u = from_arrow(prod)
    np.testing.assert_array_equal(np.asarray(u), [False, True, False, True, True])
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


def test_asarray_on_pyarrow_bool_array_unpacks():
    np.testing.assert_array_equal(np.asarray(uma.asarray(pa.array([True, False]))), [True, False])


# ============================================================================ import: nulls


@pytest.mark.parametrize("values,count", [([1, None, 3], 1), ([None, None, 3, None], 3), ([None] * 9, 9)])
def test_import_nulls_value_error_names_count(values, count):
    p = pa.array(values, type=pa.int64())
    with pytest.raises(ValueError, match=rf"\b{count} nulls?\b") as e:
        from_arrow(p)
    assert not isinstance(e.value, uma.CopyError)
    with pytest.raises(ValueError, match=rf"\b{count} nulls?\b"):
        uma.asarray(ArrowOnly(p))
    with pytest.raises(ValueError, match=rf"\b{count} nulls?\b"):
        uma.asarray(ArrowOnly(p), copy=True)


def test_import_bool_with_nulls_value_error():
    with pytest.raises(ValueError, match=r"\b2 nulls\b"):
        from_arrow(pa.array([True, None, False, None]))


def test_import_slice_counts_only_its_nulls():
    p = pa.array([None, 1, 2, None, 5], type=pa.int32())
    np.testing.assert_array_equal(np.asarray(from_arrow(p.slice(1, 2))), [1, 2])
    with pytest.raises(ValueError, match=r"\b1 null\b"):
        from_arrow(p.slice(1, 3))


def test_import_unknown_null_count_reads_the_bitmap_with_offset():
    n = np.arange(70, dtype=np.int32)
    valid = np.ones(70, dtype=bool)
    valid[[2, 40, 69]] = False
    # null_count -1 (unknown): uma counts the cleared bits in [offset, offset + length)
    for offset, length, nulls in [(3, 30, 0), (0, 70, 3), (1, 39, 1), (41, 28, 0), (3, 67, 2)]:
        prod = ArrowProducer(n, b"i", offset=offset, length=length, null_count=-1, validity=bitmap(valid))
        if nulls:
            with pytest.raises(ValueError, match=rf"\b{nulls} nulls?\b"):
                from_arrow(prod)
        else:
            u = from_arrow(prod)
            np.testing.assert_array_equal(np.asarray(u), n[offset:offset + length])
            del u
        collect()
        assert (prod.schema_releases, prod.array_releases) == (1, 1)


def test_import_unknown_null_count_without_bitmap_has_no_nulls():
    n = np.arange(5, dtype=np.float64)
    u = from_arrow(ArrowProducer(n, b"g", null_count=-1))
    assert u._data_ptr == n.ctypes.data


def test_import_zero_null_count_ignores_bitmap():
    n = np.arange(5, dtype=np.int16)
    u = from_arrow(ArrowProducer(n, b"s", null_count=0, validity=bitmap([False] * 5)))
    np.testing.assert_array_equal(np.asarray(u), n)


def test_asarray_on_pyarrow_array_with_nulls_names_count():
    with pytest.raises(ValueError, match="1 null"):
        uma.asarray(pa.array([1, None]))


# ============================================================================ import: unsupported types


@pytest.mark.parametrize("make,fmt", [
    (lambda: pa.array(["a", "b"]), "'u'"),
    (lambda: pa.array([b"a"]), "'z'"),
    (lambda: pa.array([[1], [2, 3]]), "'+l'"),
    (lambda: pa.array([{"x": 1}]), "'+s'"),
    (lambda: pa.array([1, 2], type=pa.timestamp("us")), "'tsu:'"),
    (lambda: pa.array([1, 2], type=pa.date32()), "'tdD'"),
    (lambda: pa.array([None, None]), "'n'"),
    (lambda: pa.array([decimal.Decimal("1.5")], type=pa.decimal128(5, 2)), "'d:5,2'"),
    (lambda: pa.RecordBatch.from_pydict({"x": [1, 2]}), "'+s'"),
])
def test_import_non_primitive_type_error_names_format(make, fmt):
    obj = make()
    with pytest.raises(TypeError, match=fmt.replace("+", r"\+")):
        from_arrow(obj)
    with pytest.raises(TypeError, match=fmt.replace("+", r"\+")):
        uma.asarray(ArrowOnly(obj))


def test_import_dictionary_type_error():
    d = pa.array(["a", "b", "a"]).dictionary_encode()
    with pytest.raises(TypeError, match=r"dictionary.*'i'"):
        from_arrow(d)


def test_from_arrow_rejects_objects_without_the_protocol():
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        from_arrow(np.arange(3))
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        from_arrow(pa.Array)


# ============================================================================ import: release exactly once


def test_release_once_shared_import_at_last_view():
    n = np.arange(8, dtype=np.int32)
    prod = ArrowProducer(n, b"i")
    u = from_arrow(prod)
    assert u._data_ptr == n.ctypes.data
    assert (prod.schema_releases, prod.array_releases) == (1, 0)  # the schema goes at once
    v = u[2:5]
    del u
    collect()
    assert prod.array_releases == 0  # a view is still alive
    np.testing.assert_array_equal(np.asarray(v), n[2:5])
    del v
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


@pytest.mark.parametrize("kw", [{"copy": True}, {"dtype": "float64"}])
def test_release_once_copy_paths_release_immediately(kw):
    prod = ArrowProducer(np.arange(8, dtype=np.int32), b"i")
    u = uma.asarray(prod, **kw)
    assert (prod.schema_releases, prod.array_releases) == (1, 1)
    np.testing.assert_array_equal(np.asarray(u), np.arange(8))


def test_release_once_bool():
    prod = ArrowProducer(np.array([0b101], dtype=np.uint8), b"b", length=3)
    u = from_arrow(prod)
    assert (prod.schema_releases, prod.array_releases) == (1, 1)
    np.testing.assert_array_equal(np.asarray(u), [True, False, True])
    prod2 = ArrowProducer(np.array([0b101], dtype=np.uint8), b"b", length=3)
    with pytest.raises(uma.CopyError):
        from_arrow(prod2, copy=False)
    collect()
    assert (prod2.schema_releases, prod2.array_releases) == (1, 1)


I32 = np.arange(8, dtype=np.int32)


@pytest.mark.parametrize("kw,exc,match", [
    ({"length": -1}, ValueError, "negative length"),
    ({"offset": -3}, ValueError, "negative offset"),
    ({"offset": 2**63 - 1, "length": 1}, ValueError, "overflows"),
    ({"offset": 2**62, "length": 2**62 - 1}, ValueError, "overflows"),
    ({"offset": 0, "length": 2**62}, ValueError, "overflows"),
    ({"n_buffers": 1}, ValueError, "n_buffers 1"),
    ({"n_buffers": 3}, ValueError, "n_buffers 3"),
    ({"n_buffers": 0}, ValueError, "n_buffers 0"),
    ({"null_values": True}, ValueError, "NULL values buffer with length 8"),
    ({"null_buffers": True}, ValueError, "NULL buffers"),
    ({"null_count": -2}, ValueError, "null_count -2"),
    ({"null_count": 9}, ValueError, "null_count 9"),
    ({"null_count": 2}, ValueError, r"\b2 nulls\b"),
    ({"children": 1}, ValueError, "n_children 1"),
    ({"array_dictionary": True}, ValueError, "dictionary"),
    ({"schema_children": 2}, ValueError, "n_children 2"),
    ({"schema_dictionary": True}, TypeError, "dictionary"),
    ({"fmt": None}, ValueError, "NULL format"),
    ({"fmt": b"x"}, TypeError, "'x'"),
    ({"fmt": b"ii"}, TypeError, "'ii'"),
    ({"fmt": b"\x01\xff"}, TypeError, r"'\\x01\\xff'"),
    ({"fmt": b"w:4"}, TypeError, "fixed-size binary"),
    ({"fmt": b"u"}, TypeError, "utf8"),
    ({"fmt": b"+l"}, TypeError, "nested"),
    ({"fmt": b"A" * 200}, TypeError, r"AAAA\.\.\."),
])
@pytest.mark.parametrize("entry", ["from_arrow", "asarray"])
def test_malformed_inputs_clear_error_and_release_once(kw, exc, match, entry):
    kw = dict(kw)
    fmt = kw.pop("fmt", b"i")
    prod = ArrowProducer(I32, fmt, **kw)
    with pytest.raises(exc, match=match):
        if entry == "from_arrow":
            from_arrow(prod)
        else:
            uma.asarray(prod)
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


@pytest.mark.parametrize("which", ["schema", "array"])
def test_released_struct_in_capsule_is_already_consumed(which):
    prod = ArrowProducer(I32, b"i", schema_released=which == "schema", array_released=which == "array")
    with pytest.raises(ValueError, match="already consumed"):
        from_arrow(prod)
    collect()
    # the live one of the two is released once; the released one never again
    expect = (0, 1) if which == "schema" else (1, 0)
    assert (prod.schema_releases, prod.array_releases) == expect


def test_capsules_consumed_twice():
    prod = ArrowProducer(I32, b"i")
    caps = prod.capsules()
    twice = FixedReturn(caps)
    u = from_arrow(twice, copy=True)
    with pytest.raises(ValueError, match="already consumed"):
        from_arrow(twice)
    del caps, twice
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)
    np.testing.assert_array_equal(np.asarray(u), I32)


@pytest.mark.parametrize("bad", ["not a tuple", "one", "three", "swapped", "wrong names"])
def test_bad_protocol_returns_type_error_and_capsules_release_themselves(bad):
    prod = ArrowProducer(I32, b"i")
    sc, ac = prod.capsules()
    value = {"not a tuple": [sc, ac], "one": (sc,), "three": (sc, ac, sc), "swapped": (ac, sc),
             "wrong names": (sc, np.arange(2).__dlpack__())}[bad]
    with pytest.raises(TypeError):
        from_arrow(FixedReturn(value))
    # nothing was consumed: the capsules' destructors release the structs
    assert (prod.schema_releases, prod.array_releases) == (0, 0)
    del sc, ac, value
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


def test_unconsumed_capsules_release_in_destructor():
    prod = ArrowProducer(I32, b"i")
    caps = prod.__arrow_c_array__()
    del caps
    collect()
    assert (prod.schema_releases, prod.array_releases) == (1, 1)


@pytest.mark.parametrize("case", ["shared", "slice", "copy", "bool", "bool_copy_false", "nulls", "string",
                                  "dtype_copy_false"])
def test_pyarrow_release_callbacks_run_exactly_once(case):
    n = np.arange(16, dtype=np.float32)
    src = {"shared": pa.array(n), "slice": pa.array(n).slice(3, 4), "copy": pa.array(n),
           "bool": pa.array([True, False] * 5), "bool_copy_false": pa.array([True]),
           "nulls": pa.array([1.0, None]), "string": pa.array(["x"]), "dtype_copy_false": pa.array(n)}[case]
    w = CountingArrow(src)
    if case in ("shared", "slice"):
        u = from_arrow(w)
        assert (w.schema_releases, w.array_releases) == (1, 0)
        del u
    elif case in ("copy", "bool"):
        from_arrow(w, copy=True if case == "copy" else None)
    else:
        with pytest.raises((TypeError, ValueError)):
            if case == "dtype_copy_false":
                uma.asarray(ArrowOnly(w), dtype="float64", copy=False)
            else:
                from_arrow(w, copy=False if case == "bool_copy_false" else None)
    collect()
    assert (w.schema_releases, w.array_releases) == (1, 1)


def test_many_imports_do_not_leak():
    n = np.arange(1024, dtype=np.int64)
    p = pa_from_numpy(n)
    w = CountingArrow(p)
    base = uma.memory_stats()["adopted_bytes"]
    for _ in range(200):
        u = from_arrow(w)
        del u
    collect()
    assert (w.schema_releases, w.array_releases) == (200, 200)
    assert uma.memory_stats()["adopted_bytes"] == base


# ============================================================================ export


@pytest.mark.parametrize("dtype", PRIMITIVES)
def test_export_every_primitive_shares_memory(dtype):
    n = np_values(dtype)
    u = uma.asarray(n)
    p = pa.array(u)
    assert p.type == PA_TYPES[dtype]
    assert p.null_count == 0 and p.offset == 0
    assert p.buffers()[0] is None
    assert p.buffers()[1].address == u._data_ptr == n.ctypes.data
    n[2] = 55  # a write through NumPy shows in the Arrow array
    assert p[2].as_py() == 55
    np.testing.assert_array_equal(p.to_numpy(), n)


@pytest.mark.parametrize("dtype", PRIMITIVES + ["bool"])
def test_export_round_trip(dtype):
    n = np_values(dtype) if dtype != "bool" else np.array([True, False, False, True, True] * 3)
    u = uma.asarray(n)
    back = from_arrow(pa.array(u))
    assert back.dtype.name == dtype
    np.testing.assert_array_equal(np.asarray(back), n)
    if dtype != "bool":
        assert back._data_ptr == n.ctypes.data


@pytest.mark.parametrize("dtype", PRIMITIVES + ["bool"])
def test_export_schema_capsule(dtype):
    u = uma.asarray(np.zeros(3, dtype=dtype))
    sc = u.__arrow_c_schema__()
    s = capsule_struct(sc, ArrowSchema)
    import ctypes
    assert ctypes.string_at(s.format) == FORMATS[dtype].encode()
    assert s.n_children == 0 and not s.dictionary and s.flags == 0
    assert pa.DataType._import_from_c_capsule(sc) == PA_TYPES[dtype]


def test_export_bool_is_bit_packed():
    vals = np.array([True, False, True, True, False, False, False, True, True, False, True])
    p = pa.array(uma.asarray(vals))
    assert p.type == pa.bool_()
    assert p.to_pylist() == vals.tolist()
    assert p.buffers()[1].to_pybytes()[:2] == np.packbits(vals, bitorder="little").tobytes()
    strided = uma.asarray(vals)[::3]
    assert pa.array(strided).to_pylist() == vals[::3].tolist()


@pytest.mark.parametrize("index", [slice(None, None, 2), slice(None, None, -1), slice(7, 1, -3)])
def test_export_strided_view_is_a_copy(index):
    n = np.arange(10, dtype=np.float64)
    u = uma.asarray(n)[index]
    p = pa.array(u)
    assert p.buffers()[1].address != n.ctypes.data
    assert p.to_pylist() == n[index].tolist()
    n[:] = -1  # the copy does not follow the source
    assert p.to_pylist() != n[index].tolist() or len(p) == 0


def test_export_contiguous_slice_shares():
    n = np.arange(10, dtype=np.int32)
    u = uma.asarray(n)[3:8]
    p = pa.array(u)
    assert p.buffers()[1].address == n.ctypes.data + 12
    assert p.to_pylist() == [3, 4, 5, 6, 7]


def test_export_size0_and_size1():
    p = pa.array(uma.zeros(0, dtype="int32"))
    assert len(p) == 0 and p.type == pa.int32()
    s1 = uma.asarray(np.arange(10.0))[4:5]
    assert pa.array(s1).to_pylist() == [4.0]


def test_export_read_only_array():
    n = np.arange(4, dtype=np.int64)
    n.flags.writeable = False
    u = uma.asarray(n)
    assert not u.writable
    p = pa.array(u)
    assert p.buffers()[1].address == n.ctypes.data
    assert p.to_pylist() == [0, 1, 2, 3]


@pytest.mark.parametrize("make", [
    lambda: uma.zeros((2, 3), dtype="float32"),
    lambda: uma.zeros((2, 1, 2), dtype="int32"),
    lambda: uma.asarray(np.float64(1.0)),
])
@pytest.mark.parametrize("method", ["schema", "array", "pa.array"])
def test_export_other_ranks_type_error(make, method):
    u = make()
    with pytest.raises(TypeError, match="1-D"):
        if method == "schema":
            u.__arrow_c_schema__()
        elif method == "array":
            u.__arrow_c_array__()
        else:
            pa.array(u)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "bfloat16"])
@pytest.mark.parametrize("method", ["schema", "array", "pa.array"])
def test_export_dtype_without_arrow_format_type_error(dtype, method):
    u = uma.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match=f"{dtype} has no Arrow format"):
        if method == "schema":
            u.__arrow_c_schema__()
        elif method == "array":
            u.__arrow_c_array__()
        else:
            pa.array(u)


def test_export_requested_schema_casts_best_effort():
    u = uma.asarray(np.arange(4, dtype=np.int32))
    sc, ac = u.__arrow_c_array__(pa.float64().__arrow_c_schema__())
    p = pa.Array._import_from_c_capsule(sc, ac)
    assert p.type == pa.float64() and p.to_pylist() == [0.0, 1.0, 2.0, 3.0]
    # a type uma cannot produce: the natural type comes back (the consumer checks)
    sc, ac = u.__arrow_c_array__(pa.string().__arrow_c_schema__())
    assert pa.Array._import_from_c_capsule(sc, ac).type == pa.int32()
    with pytest.raises(TypeError, match="requested_schema"):
        u.__arrow_c_array__("int64")


def test_export_struct_fields_and_manual_release_once():
    n = np.arange(6, dtype=np.int16)
    u = uma.asarray(n)
    rc = sys.getrefcount(n)
    s, a = consume(u.__arrow_c_array__())  # the capsules die here, already moved out
    collect()
    assert (a.length, a.null_count, a.offset, a.n_buffers, a.n_children) == (6, 0, 0, 2, 0)
    assert read_buffers(a) == [0, n.ctypes.data]
    assert not a.dictionary and not a.children
    del u
    collect()
    assert sys.getrefcount(n) == rc  # the exported array keeps the uma storage (and n) alive
    release(a)
    release(s)
    assert not a.release and not s.release
    collect()
    assert sys.getrefcount(n) == rc - 1


def test_export_keeps_storage_alive_until_pyarrow_releases():
    n = np.arange(100, dtype=np.float64)
    rc0 = sys.getrefcount(n)
    u = uma.asarray(n)
    p = pa.array(u)
    del u
    collect()
    assert sys.getrefcount(n) > rc0
    assert p.to_numpy()[99] == 99.0
    del p
    collect()
    assert sys.getrefcount(n) == rc0


def test_export_unconsumed_capsules_release_in_destructor():
    n = np.arange(5, dtype=np.uint32)
    rc0 = sys.getrefcount(n)
    u = uma.asarray(n)
    caps = u.__arrow_c_array__()
    del u
    collect()
    assert sys.getrefcount(n) > rc0
    del caps
    collect()
    assert sys.getrefcount(n) == rc0


def test_export_counted_by_a_consumer_exactly_once():
    n = np.arange(5, dtype=np.uint32)
    w = CountingArrow(uma.asarray(n))
    p = pa.array(ArrowOnly(w))
    assert p.buffers()[1].address == n.ctypes.data
    assert w.schema_releases == 1  # pyarrow releases the schema after reading it
    del p
    collect()
    assert (w.schema_releases, w.array_releases) == (1, 1)


def test_many_exports_do_not_leak():
    n = np.arange(256, dtype=np.int64)
    rc0 = sys.getrefcount(n)
    u = uma.asarray(n)
    for _ in range(200):
        p = pa.array(u)
        del p
        sc, ac = u.__arrow_c_array__()
        del sc, ac
    del u
    collect()
    assert sys.getrefcount(n) == rc0


# ============================================================================ import: streams (__arrow_c_stream__)


class StreamOnly:
    """Exposes only another object's `__arrow_c_stream__` (a pyarrow ChunkedArray also has
    __array__, which uma.asarray prefers)."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_stream__(self, requested_schema=None):
        return self.inner.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("dtype", PRIMITIVES)
@pytest.mark.parametrize("entry", ["from_arrow", "asarray"])
def test_stream_of_one_chunk_shares_it(dtype, entry):
    n = np_values(dtype, 12)
    chunked = pa.chunked_array([pa_from_numpy(n).slice(2, 7)])
    u = from_arrow(chunked, copy=False) if entry == "from_arrow" else uma.asarray(StreamOnly(chunked), copy=False)
    assert u.dtype == uma.dtype(dtype) and u.shape == (7,)
    assert u._data_ptr == n.ctypes.data + 2 * n.itemsize
    n[3] = n[3] + 1  # a write by the owner of the bytes shows in the import
    np.testing.assert_array_equal(np.asarray(u), n[2:9])
    assert not np.asarray(u).flags.writeable  # Note [Arrow is read-only]


@pytest.mark.parametrize("dtype", PRIMITIVES + ["bool"])
def test_stream_of_several_chunks_is_their_concatenation(dtype):
    rng = np.random.default_rng(7)
    parts = [(rng.integers(0, 50, size=k) % 2 == 0) if dtype == "bool" else rng.integers(0, 50, size=k).astype(dtype)
             for k in (3, 0, 5, 1)]
    chunked = pa.chunked_array([pa.array(p, type=PA_TYPES[dtype]) for p in parts], type=PA_TYPES[dtype])
    u = from_arrow(chunked)
    want = np.concatenate(parts)
    assert u.dtype == uma.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(u), want)
    assert np.asarray(u).flags.writeable  # a new array
    for c in chunked.chunks:
        if c.buffers()[1] is not None and len(c):
            assert not (c.buffers()[1].address <= u._data_ptr < c.buffers()[1].address + c.buffers()[1].size)


def test_stream_of_several_chunks_with_copy_false_names_the_count():
    chunked = pa.chunked_array([[1.0, 2.0], [3.0], [4.0]])
    with pytest.raises(uma.CopyError, match=r"copy=False is impossible: the Arrow stream holds 3 arrays"):
        from_arrow(chunked, copy=False)
    with pytest.raises(uma.CopyError, match="combine_chunks"):
        uma.asarray(StreamOnly(chunked), copy=False)


def test_stream_of_one_chunk_copy_true_is_a_writable_copy():
    n = np.arange(6.0)
    u = from_arrow(pa.chunked_array([pa_from_numpy(n)]), copy=True)
    assert u._data_ptr != n.ctypes.data
    u[0] = 9.0
    assert n[0] == 0.0 and np.asarray(u)[0] == 9.0


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_empty_stream_gives_an_empty_array_of_its_type(dtype):
    u = from_arrow(pa.chunked_array([], type=PA_TYPES[dtype]))
    assert u.shape == (0,) and u.dtype == uma.dtype(dtype)
    assert from_arrow(pa.chunked_array([], type=PA_TYPES[dtype]), copy=False).shape == (0,)
    # another dtype with copy=False is a CopyError, as for a stream of one array
    for chunks in ([], [pa.array(np.array([1, 0]).astype(dtype), type=PA_TYPES[dtype])]):
        src = StreamOnly(pa.chunked_array(chunks, type=PA_TYPES[dtype]))
        with pytest.raises(uma.CopyError):
            uma.asarray(src, dtype="complex128", copy=False)


def test_asarray_dtype_on_streams_converts_as_numpy():
    chunked = pa.chunked_array([[1, 2], [3]], type=pa.int32())
    for src in (chunked, pa.chunked_array([[1, 2, 3]], type=pa.int32()), pa.chunked_array([], type=pa.int32())):
        u = uma.asarray(StreamOnly(src), dtype="float64")
        assert u.dtype == uma.float64
        np.testing.assert_array_equal(np.asarray(u), np.asarray(src.to_numpy(), dtype=np.float64))


def test_asarray_of_chunked_array_keeps_numpys_route():
    """A ChunkedArray has __array__: uma.asarray converts it as NumPy does (its __array__),
    from_arrow through Arrow."""
    chunked = pa.chunked_array([[1.5], [2.5]])
    np.testing.assert_array_equal(np.asarray(uma.asarray(chunked)), np.asarray(chunked))
    np.testing.assert_array_equal(np.asarray(from_arrow(chunked)), np.asarray(chunked))


def test_stream_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"\(array 1 of the stream's 2\): the Arrow column has 2 nulls \(length 3\)"):
        from_arrow(pa.chunked_array([[1, 2], [None, 3, None]]))
    with pytest.raises(TypeError, match=r"'\+s'.*select a column first"):
        from_arrow(pa.table({"a": [1, 2]}))
    with pytest.raises(TypeError, match="utf8"):
        from_arrow(pa.chunked_array([["x"], ["y"]]))
    with pytest.raises(TypeError, match="dictionary"):
        from_arrow(pa.chunked_array([pa.array(["a", "b"]).dictionary_encode()]))
    with pytest.raises(TypeError, match="neither __arrow_c_array__ nor __arrow_c_stream__"):
        from_arrow([1, 2])


@pytest.mark.parametrize("case", ["one", "several", "empty", "copy_false", "nulls"])
def test_pyarrow_stream_releases_run_exactly_once(case):
    n = np.arange(8.0)
    src = {"one": pa.chunked_array([pa_from_numpy(n)]), "several": pa.chunked_array([[1.0], [2.0, 3.0]]),
           "empty": pa.chunked_array([], type=pa.float64()), "copy_false": pa.chunked_array([[1.0], [2.0]]),
           "nulls": pa.chunked_array([[1.0], [None]])}[case]
    w = CountingStream(src)
    if case == "one":
        u = from_arrow(w)
        collect()
        assert (w.stream_releases, w.arrays_out, w.array_releases) == (1, 1, 0)  # the array lives in u
        np.testing.assert_array_equal(np.asarray(u), n)
        del u
    elif case in ("several", "empty"):
        from_arrow(w)
    else:
        with pytest.raises((uma.CopyError, ValueError)):
            from_arrow(w, copy=False if case == "copy_false" else None)
    collect()
    assert w.stream_releases == 1
    assert w.array_releases == w.arrays_out == {"one": 1, "several": 2, "empty": 0, "copy_false": 2, "nulls": 2}[case]


def test_hand_made_stream_releases_everything_once():
    chunks = [ArrowProducer(np.arange(3, dtype=np.int32), b"i"), ArrowProducer(np.arange(4, dtype=np.int32), b"i")]
    prod = ArrowStreamProducer(chunks)
    u = from_arrow(prod)
    np.testing.assert_array_equal(np.asarray(u), [0, 1, 2, 0, 1, 2, 3])
    collect()
    assert prod.stream_releases == 1
    assert [(c.schema_releases, c.array_releases) for c in chunks] == [(1, 1), (0, 1)]  # chunk 0 gave the schema


@pytest.mark.parametrize("how,exc,match", [
    ({"schema_error": 22}, RuntimeError, r"get_schema failed with code 22 \(producer says no\)"),
    ({"next_error": (0, 5)}, RuntimeError, r"get_next failed with code 5 after 0 arrays \(producer says no\)"),
    ({"next_error": (2, 12)}, RuntimeError, r"get_next failed with code 12 after 2 arrays"),
    ({"null_get_next": True}, ValueError, "NULL get_schema or get_next"),
    ({"schema_format": b"u"}, TypeError, "utf8"),
    ({"schema_format": None}, ValueError, "NULL format"),
    ({"bad_chunk": {"n_buffers": 3}}, ValueError, "n_buffers 3"),
    ({"bad_chunk": {"null_count": 1}}, ValueError, r"\b1 null\b"),
    ({"bad_chunk": {"offset": -1}}, ValueError, "negative offset"),
])
def test_hand_made_stream_failures_clear_error_and_release_once(how, exc, match):
    how = dict(how)
    chunks = [ArrowProducer(np.arange(3, dtype=np.int32), b"i"), ArrowProducer(np.arange(3, dtype=np.int32), b"i",
                                                                               **how.pop("bad_chunk", {}))]
    schema = None
    if "schema_format" in how:
        schema = ArrowProducer(np.arange(1, dtype=np.int32), how.pop("schema_format"))
    prod = ArrowStreamProducer(chunks, schema, **how)
    with pytest.raises(exc, match=match):
        from_arrow(prod)
    collect()
    assert prod.stream_releases == 1
    handed = prod.handed_out
    assert [c.array_releases for c in chunks] == [1 if i < handed else 0 for i in range(len(chunks))]
    src = schema if schema is not None else chunks[0]
    assert src.schema_releases == prod.get_schema_calls - (1 if how.get("schema_error") else 0)


def test_stream_capsule_consumed_twice_and_wrong_returns():
    prod = ArrowStreamProducer([ArrowProducer(np.arange(2, dtype=np.int32), b"i")])
    cap = prod.__arrow_c_stream__()

    class Fixed:
        def __init__(self, value):
            self.value = value

        def __arrow_c_stream__(self, requested_schema=None):
            return self.value

    u = from_arrow(Fixed(cap), copy=True)
    np.testing.assert_array_equal(np.asarray(u), [0, 1])
    with pytest.raises(ValueError, match="already consumed"):
        from_arrow(Fixed(cap))
    with pytest.raises(TypeError, match=r"__arrow_c_stream__\(\) must return an 'arrow_array_stream' capsule"):
        from_arrow(Fixed(np.arange(2).__dlpack__()))
    with pytest.raises(TypeError, match="must return an 'arrow_array_stream' capsule, got 3"):
        uma.asarray(Fixed(3))
    del cap
    collect()
    assert prod.stream_releases == 1


def test_unconsumed_stream_capsule_releases_in_destructor():
    prod = ArrowStreamProducer([ArrowProducer(np.arange(2, dtype=np.int32), b"i")])
    cap = prod.__arrow_c_stream__()
    del cap
    collect()
    assert prod.stream_releases == 1


@pytest.mark.parametrize("message,shown", [(b"bad \xff schema", "bad \\xff schema"),
                                           (b"a" * 511 + "\u00e9".encode(), "a" * 60 + "\\xc3")])
def test_producer_messages_that_are_not_utf8_keep_the_error_type(message, shown):
    """A producer's bytes are quoted as they are; those that are not UTF-8 show escaped (the
    RuntimeError must not become a UnicodeDecodeError)."""
    prod = ArrowStreamProducer([ArrowProducer(np.arange(2, dtype=np.int32), b"i")], schema_error=5, message=message)
    with pytest.raises(RuntimeError, match="get_schema failed with code 5") as e:
        from_arrow(prod)
    assert shown in str(e.value)


def test_asarray_of_a_record_batch_converts_as_numpy_and_arrow_names_other_types():
    """An Arrow object whose type is no 1-D column converts through __array__ where it has one
    (a RecordBatch: NumPy's 2-D array); where that fails too, Arrow's TypeError names the type."""
    rb = pa.record_batch({"a": [1, 2], "b": [3, 4]})
    np.testing.assert_array_equal(np.asarray(uma.asarray(rb)), np.asarray(rb))
    with pytest.raises(TypeError, match=r"Arrow format 'u' \(utf8 string\) has no uma equivalent"):
        uma.asarray(pa.array(["x"]))
    with pytest.raises(TypeError, match="select a column first"):
        from_arrow(rb)
