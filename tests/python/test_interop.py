"""Interop: asarray / array / from_dlpack follow every row of DESIGN.md's copy-rule table;
export through the buffer protocol (request flags honoured), __array_interface__, __array__
and __dlpack__; DLPack round trips with NumPy and PyTorch. Sharing is always proved by
aliasing: write through one side, read the other."""
import array as pyarray
import gc
import re
import sys

import numpy as np
import pytest

import uma
import _producers as P
from conftest import ALL_DTYPES, NUMPY_DTYPES, assert_matches, np_dtype, stats

NATIVE = "<" if sys.byteorder == "little" else ">"
SWAPPED = ">" if NATIVE == "<" else "<"


# --------------------------------------------------------------------------- aliasing helpers

def _at(nested, idx):
    for i in idx:
        nested = nested[i]
    return nested


def _two_values(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return True, False
    return 3, 5


def _pos(shape):
    """The multi-index of the last element (exercises strides on every axis)."""
    return tuple(s - 1 for s in shape)


def assert_shares(n, u, writer=None):
    """`n` (NumPy) and `u` (uma) are views of the same bytes: a write through either side shows
    on the other. `writer` is a writable NumPy view with n's layout when n is read-only."""
    assert n.size > 0
    w = n if writer is None else writer
    idx = _pos(n.shape)
    a, b = _two_values(n.dtype)
    for val in (a, b):
        w[idx] = val
        got = _at(u.tolist(), idx)
        assert got == n[idx].item() == w[idx].item(), (got, n[idx])
    if u.writable:
        u[idx] = a
        assert w[idx].item() == np.asarray(a).astype(w.dtype).item()
        u[idx] = b
        assert w[idx].item() == np.asarray(b).astype(w.dtype).item()


def assert_independent(n, u):
    """Writes on either side do not show on the other (a copy)."""
    assert n.size > 0
    idx = _pos(n.shape)
    before_u = _at(u.tolist(), idx)
    a, b = _two_values(n.dtype)
    if n.flags.writeable:
        n[idx] = a if before_u != a else b
        assert _at(u.tolist(), idx) == before_u
    if u.writable:
        before_n = n[idx].item()
        u[idx] = b if before_n != b else a
        assert n[idx].item() == before_n


def _source(dtype, shape, layout):
    """A NumPy array of `dtype` in a layout: (view, writable base view with the same layout)."""
    dt = np_dtype(dtype)
    if layout == "contiguous":
        n = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 7
        n = n.astype(dt)
    elif layout == "negative_stride":
        big = np.arange(int(np.prod(shape)) * 4, dtype=np.int64).reshape(shape[0] * 2, -1) % 7
        n = big.astype(dt)[::-2, ::-2][:, : shape[1]]
    elif layout == "transposed":
        n = (np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape[::-1]) % 7).astype(dt).T
    elif layout == "strided":
        n = (np.arange(int(np.prod(shape)) * 3, dtype=np.int64).reshape(shape[0], -1) % 7).astype(dt)[:, 1::3]
    elif layout == "0d":
        n = np.asarray(np.array(3).astype(dt))
    else:
        raise ValueError(layout)
    return n


SHARE_LAYOUTS = ["contiguous", "negative_stride", "transposed", "strided", "0d"]


# --------------------------------------------------------------------------- CopyError

def test_copy_error_is_value_error_and_buffer_error():
    assert issubclass(uma.CopyError, ValueError)
    assert issubclass(uma.CopyError, BufferError)
    with pytest.raises(ValueError):
        raise uma.CopyError("x")
    with pytest.raises(BufferError):
        raise uma.CopyError("x")


# --------------------------------------------------------------------------- asarray: row 1 (share)

@pytest.mark.parametrize("layout", SHARE_LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("copy", [None, False])
def test_asarray_numpy_shares(copy, dtype, layout):
    n = _source(dtype, (3, 4), layout)
    u = uma.asarray(n, copy=copy)
    assert u.dtype.name == dtype
    assert u.shape == n.shape
    assert u.strides == n.strides
    assert u.writable
    assert_shares(n, u)


@pytest.mark.parametrize("layout", SHARE_LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_numpy_copy_true_copies(dtype, layout):
    n = _source(dtype, (3, 4), layout)
    u = uma.asarray(n, copy=True)
    assert u.dtype.name == dtype and u.shape == n.shape and u.writable
    assert u.tolist() == n.tolist()
    assert_independent(n, u)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_asarray_same_dtype_given_explicitly_still_shares(dtype):
    n = _source(dtype, (3, 4), "contiguous")
    for spec in (dtype, np.dtype(dtype), uma.dtype(dtype)):
        assert_shares(n, uma.asarray(n, dtype=spec, copy=False))


def test_asarray_device_cpu_shares():
    n = np.arange(6.0)
    u = uma.asarray(n, device="cpu")
    assert str(u.device) == "cpu"
    assert_shares(n, u)
    assert_shares(n, uma.asarray(n, device=u.device))


def test_asarray_zero_strides_share():
    base = np.arange(4.0)
    n = np.broadcast_to(base, (3, 4))  # read-only, strides (0, 8)
    u = uma.asarray(n)
    assert u.strides == n.strides
    assert not u.writable
    base[2] = 42.0
    assert [row[2] for row in u.tolist()] == [42.0] * 3


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 3)], ids=str)
@pytest.mark.parametrize("copy", [None, False, True])
def test_asarray_size0(shape, copy):
    n = np.zeros(shape, dtype=np.float32)
    u = uma.asarray(n, copy=copy)
    assert u.shape == shape and u.dtype == np.float32 and u.size == 0
    assert u.tolist() == n.tolist()


# --------------------------------------------------------------------------- row 2: read-only

@pytest.mark.parametrize("layout", ["contiguous", "negative_stride", "0d"])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64", "bfloat16"])
@pytest.mark.parametrize("copy", [None, False])
def test_asarray_read_only_shares_read_only(copy, dtype, layout):
    w = _source(dtype, (3, 4), layout)
    n = w.view()
    n.flags.writeable = False
    u = uma.asarray(n, copy=copy)
    assert u.writable is False
    assert_shares(n, u, writer=w)
    with pytest.raises(ValueError):
        u[...] = 0
    if dtype in ("float64", "int32", "bool"):  # compute dtypes: in-place ops exist
        with pytest.raises(ValueError):
            u += u


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_asarray_read_only_copy_true_is_writable_copy(dtype):
    w = _source(dtype, (3, 4), "contiguous")
    n = w.view()
    n.flags.writeable = False
    u = uma.asarray(n, copy=True)
    assert u.writable
    assert u.tolist() == n.tolist()
    assert_independent(w, u)


# --------------------------------------------------------------------------- row 3: dtype differs

CONVERSIONS = [("int32", "float32"), ("float32", "int32"), ("float64", "float32"), ("int64", "float64"),
               ("uint8", "int16"), ("bool", "float64"), ("int32", "int64"), ("float32", "float16"),
               ("float32", "bfloat16"), ("int16", "complex64"), ("uint32", "int32")]


@pytest.mark.parametrize("src,dst", CONVERSIONS, ids=[f"{a}->{b}" for a, b in CONVERSIONS])
def test_asarray_dtype_differs_converts_never_reinterprets(src, dst):
    for copy in (None, True):
        n = np.array([[1, 2, 3], [4, 5, 0]]).astype(np_dtype(src))
        expected = n.astype(np_dtype(dst))
        u = uma.asarray(n, dtype=dst, copy=copy)
        assert_matches(u, expected, rtol=0, atol=0)
        assert u.writable
        assert_independent(n, u)


def test_int32_to_float32_copy_none_converts_values():
    """Same width, different dtype: the values are converted, never the bits reinterpreted."""
    n = np.array([1, 2, -3, 1 << 20], dtype=np.int32)
    u = uma.asarray(n, dtype="float32")
    assert u.dtype == np.float32
    assert u.tolist() == [1.0, 2.0, -3.0, float(1 << 20)]
    assert u.tolist() != n.view(np.float32).tolist()
    n[0] = 77
    assert u.tolist()[0] == 1.0  # a copy


@pytest.mark.parametrize("src,dst", CONVERSIONS, ids=[f"{a}->{b}" for a, b in CONVERSIONS])
def test_asarray_dtype_differs_copy_false_copy_error(src, dst):
    n = np.array([1, 2, 3]).astype(np_dtype(src))
    with pytest.raises(uma.CopyError):
        uma.asarray(n, dtype=dst, copy=False)
    with pytest.raises(ValueError):
        uma.asarray(n, dtype=dst, copy=False)
    with pytest.raises(BufferError):
        uma.asarray(n, dtype=dst, copy=False)


# --------------------------------------------------------------------------- row 4: byte order, alignment, odd strides

BYTESWAP_DTYPES = ["int16", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64",
                   "complex128"]


@pytest.mark.parametrize("dtype", BYTESWAP_DTYPES)
def test_asarray_byte_swapped_copies_with_correct_values(dtype):
    native = (np.arange(12).reshape(3, 4) - 5).astype(dtype) if np.dtype(dtype).kind != "u" else \
        np.arange(12).reshape(3, 4).astype(dtype)
    for copy in (None, True):
        n = native.astype(np.dtype(dtype).newbyteorder(SWAPPED))
        assert not n.dtype.isnative
        u = uma.asarray(n, copy=copy)
        assert u.dtype.name == dtype  # native dtype, same values
        assert u.tolist() == native.tolist()
        assert_independent(n, u)
    with pytest.raises(uma.CopyError):
        uma.asarray(n, copy=False)
    # a byte-swapped strided view too
    u = uma.asarray(n[::-1, ::2])
    assert u.tolist() == native[::-1, ::2].tolist()


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64", "complex128"])
def test_asarray_unaligned_pointer_copies(dtype):
    dt = np.dtype(dtype)
    for copy in (None, True):
        raw = np.zeros(dt.itemsize * 6 + 1, dtype=np.uint8)
        n = np.ndarray((6,), dtype=dt, buffer=raw, offset=1)
        n[...] = np.arange(6)
        assert not n.flags.aligned
        u = uma.asarray(n, copy=copy)
        assert u.tolist() == n.tolist()
        assert_independent(n, u)
    with pytest.raises(uma.CopyError):
        uma.asarray(n, copy=False)


def test_asarray_byte_stride_not_multiple_of_itemsize_copies():
    s = np.zeros(5, dtype=[("a", "<f8"), ("b", "u1")])  # packed: itemsize 9
    s["a"] = np.arange(5) * 1.5
    s["b"] = np.arange(5) + 10
    n = s["a"]
    assert n.strides == (9,) and n.__array_interface__["data"][0] % 8 == 0
    u = uma.asarray(n)
    assert u.tolist() == n.tolist()
    assert_independent(n, u)
    with pytest.raises(uma.CopyError):
        uma.asarray(n, copy=False)
    # uint8 field: stride 9 is a multiple of its itemsize 1, so it is shared
    b = s["b"]
    ub = uma.asarray(b, copy=False)
    assert ub.strides == (9,)
    assert_shares(b, ub)


def test_asarray_unaligned_field_copies():
    s = np.zeros(4, dtype=[("a", "u1"), ("b", "<i4")])  # packed: field b at offset 1, stride 5
    s["b"] = [7, -8, 9, -10]
    n = s["b"]
    u = uma.asarray(n)
    assert u.tolist() == [7, -8, 9, -10]
    with pytest.raises(uma.CopyError):
        uma.asarray(n, copy=False)


# --------------------------------------------------------------------------- scalars, lists

@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_numpy_scalar(dtype):
    s = np.dtype(dtype).type(1)
    u = uma.asarray(s)
    assert u.shape == () and u.dtype.name == dtype
    assert u.tolist() == s.item()


def test_asarray_bfloat16_scalar():
    mld = pytest.importorskip("ml_dtypes")
    u = uma.asarray(mld.bfloat16(3.125))
    assert u.shape == () and u.dtype == uma.bfloat16 and u.item() == 3.125


PY_SCALARS = [True, False, 0, 7, -3, 1.5, -0.0, 1 + 2j, 2**62, float("inf")]


@pytest.mark.parametrize("value", PY_SCALARS, ids=repr)
def test_asarray_python_scalar(value):
    expected = np.asarray(value)
    u = uma.asarray(value)
    assert u.shape == () and u.dtype.name == expected.dtype.name
    assert u.item() == expected.item() and type(u.item()) is type(expected.item())


@pytest.mark.parametrize("value,dtype", [(1, "float32"), (True, "int32"), (2.5, "float16"), (3, "uint8"), (1, "bfloat16")])
def test_asarray_python_scalar_with_dtype(value, dtype):
    u = uma.asarray(value, dtype=dtype)
    assert u.dtype.name == dtype
    assert u.item() == np.asarray(value, dtype=np_dtype(dtype)).item()


@pytest.mark.parametrize("value", [2**70, -2**64, [1, 2**70]], ids=repr)
def test_asarray_out_of_range_python_int_overflow_error(value):
    with pytest.raises(OverflowError):
        uma.asarray(value)


def test_asarray_out_of_range_python_int_for_dtype():
    with pytest.raises(OverflowError):
        np.asarray([1, 300], dtype=np.int8)  # the oracle (NumPy 2)
    with pytest.raises(OverflowError):
        uma.asarray([1, 300], dtype="int8")


NESTED = [
    [1, 2, 3], [[1, 2], [3, 4]], [[1.0, 2], [3, 4]], [True, False], [True, 2], [1, 2.5], [1, 2 + 1j], [],
    [[]], [[[1]], [[2]]], (1, 2), ((1.5, 2.5), (3.5, 4.5)), [(1, 2), [3, 4]], [np.float32(1), np.float32(2)],
    [np.int8(1), 2], [[1, 2], np.array([3, 4])], [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [[True], [False]],
]


@pytest.mark.parametrize("value", NESTED, ids=repr)
def test_asarray_nested_sequences(value):
    expected = np.asarray(value)
    u = uma.asarray(value)
    assert_matches(u, expected, rtol=0, atol=0)
    assert u.writable


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128", "int8"])
def test_asarray_nested_with_dtype(dtype):
    value = [[0, 1, 2], [3, 4, 5]]
    assert_matches(uma.asarray(value, dtype=dtype), np.asarray(value, dtype=dtype))


def test_asarray_list_of_uma_arrays():
    a, b = uma.asarray(np.arange(3.0)), uma.asarray(np.arange(3.0) + 10)
    assert_matches(uma.asarray([a, b]), np.asarray([np.arange(3.0), np.arange(3.0) + 10]))


@pytest.mark.parametrize("value", [[1, [2, 3]], [[1, 2], [3]], [[1], 2]], ids=repr)
def test_asarray_ragged_value_error(value):
    with pytest.raises(ValueError):
        np.asarray(value)  # the oracle
    with pytest.raises(ValueError):
        uma.asarray(value)


@pytest.mark.parametrize("value", [[1, 2], 3.5, (1, 2)], ids=repr)
def test_asarray_copy_false_on_python_objects_copy_error(value):
    with pytest.raises(ValueError):
        np.asarray(value, copy=False)  # the oracle: a copy would be needed
    with pytest.raises(uma.CopyError):
        uma.asarray(value, copy=False)


def test_asarray_rejects_unconvertible_objects():
    with pytest.raises((TypeError, ValueError)):
        uma.asarray(object())
    with pytest.raises((TypeError, ValueError)):
        uma.asarray(["a", "b"])


# --------------------------------------------------------------------------- buffer-protocol sources

def test_asarray_bytes_read_only_uint8():
    b = bytes(range(10))
    u = uma.asarray(b)
    assert u.dtype == np.uint8 and u.shape == (10,)
    assert u.tolist() == list(range(10))
    assert not u.writable
    with pytest.raises(ValueError):
        u[0] = 1


def test_asarray_bytearray_shares_writable():
    ba = bytearray(range(8))
    u = uma.asarray(ba)
    assert u.dtype == np.uint8 and u.writable
    ba[3] = 200
    assert u.tolist()[3] == 200
    u[5] = 77
    assert ba[5] == 77
    c = uma.asarray(ba, copy=True)
    c[0] = 9
    assert ba[0] == 0


@pytest.mark.parametrize("fmt", ["b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "f", "d"])
def test_asarray_array_array_shares(fmt):
    arr = pyarray.array(fmt, [1, 2, 3, 4])
    expected_dtype = np.asarray(memoryview(arr)).dtype  # NumPy's reading of the format
    u = uma.asarray(arr)
    assert u.dtype.name == expected_dtype.name
    assert u.tolist() == arr.tolist()
    arr[2] = 42
    assert u.tolist()[2] == 42
    u[1] = 9
    assert arr[1] == 9


def test_asarray_memoryview_cast_shapes():
    ba = bytearray(np.arange(6, dtype=np.int32).tobytes())
    mv = memoryview(ba).cast("i", shape=[2, 3])
    u = uma.asarray(mv)
    assert u.shape == (2, 3) and u.dtype == np.int32
    assert u.tolist() == [[0, 1, 2], [3, 4, 5]]
    u[1, 2] = -1
    assert np.frombuffer(ba, dtype=np.int32)[5] == -1
    d = uma.asarray(memoryview(bytearray(16)).cast("d"))
    assert d.dtype == np.float64 and d.shape == (2,)


def test_asarray_read_only_memoryview_read_only():
    mv = memoryview(np.arange(4, dtype=np.int64).tobytes()).cast("q")
    assert mv.readonly
    u = uma.asarray(mv)
    assert not u.writable and u.tolist() == [0, 1, 2, 3]
    w = uma.asarray(mv, copy=True)
    assert w.writable


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_memoryview_formats(dtype):
    """Every PEP 3118 format NumPy exports is read back as the same dtype, shared."""
    n = _source(dtype, (3, 4), "contiguous")
    mv = memoryview(n)
    u = uma.asarray(mv)
    assert u.dtype.name == dtype, mv.format
    assert_shares(n, u)


@pytest.mark.parametrize("layout", ["negative_stride", "transposed", "strided"])
def test_asarray_strided_memoryview_shares(layout):
    n = _source("float64", (3, 4), layout)
    u = uma.asarray(memoryview(n))
    assert u.strides == n.strides
    assert_shares(n, u)


def test_asarray_byte_swapped_memoryview_copies():
    native = np.arange(5, dtype=np.float64)
    n = native.astype(native.dtype.newbyteorder(SWAPPED))
    mv = memoryview(n)
    assert mv.format[0] in "<>!"
    u = uma.asarray(mv)
    assert u.tolist() == native.tolist()
    with pytest.raises(uma.CopyError):
        uma.asarray(mv, copy=False)


def test_asarray_buffer_with_dtype_converts_values():
    ba = bytearray(b"\x01\x02\x03")
    expected = np.asarray(memoryview(ba), dtype=np.float32)  # oracle: values, not bytes
    u = uma.asarray(ba, dtype="float32")
    assert_matches(u, expected)


# --------------------------------------------------------------------------- __array_interface__ / __array__ sources

def test_asarray_array_interface_object_shares():
    owner = np.arange(12.0)
    obj = P.ArrayInterfaceObject(owner, shape=(3, 2), typestr=NATIVE + "f8", strides=(32, -8), offset=8)
    expected = np.asarray(obj)  # the oracle reads the same interface
    u = uma.asarray(obj)
    assert u.tolist() == expected.tolist()
    assert u.strides == (32, -8)
    owner[5] = -1.0
    assert u.tolist() == np.asarray(obj).tolist()
    u[0, 0] = 99.0
    assert owner[1] == 99.0


def test_asarray_array_interface_read_only_flag():
    owner = np.arange(4.0)
    obj = P.ArrayInterfaceObject(owner, shape=(4,), typestr=NATIVE + "f8", readonly=True)
    u = uma.asarray(obj)
    assert not u.writable
    owner[0] = 5.0
    assert u.tolist()[0] == 5.0


def test_asarray_array_interface_swapped_typestr_converts():
    owner = np.arange(4.0).astype(SWAPPED + "f8")
    obj = P.ArrayInterfaceObject(owner, shape=(4,), typestr=SWAPPED + "f8")
    u = uma.asarray(obj)
    assert u.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(uma.CopyError):
        uma.asarray(obj, copy=False)


def test_asarray_array_method_object():
    obj = P.ArrayMethodObject(np.arange(6).reshape(2, 3))
    u = uma.asarray(obj)
    assert obj.calls, "__array__ was not used"
    assert u.tolist() == [[0, 1, 2], [3, 4, 5]] and u.dtype == np.int64


class _OldStyleArray:
    """__array__ without NumPy 2's keywords."""

    def __array__(self):
        return np.arange(3.0)


class _RefusingArray:
    """__array__ that cannot avoid a copy (NumPy 2's protocol: ValueError for copy=False)."""

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("Unable to avoid copy")
        return np.arange(2.0)


def test_asarray_copy_false_through_array_method_shares_or_raises():
    """NumPy asarray's __array__ protocol: copy=False asks __array__(copy=False), which shares
    or raises; an __array__ without the keyword cannot promise it. A refusal is uma.CopyError
    naming the type; without copy=False the object converts."""
    base = np.arange(4.0)
    obj = P.ArrayMethodObject(base)
    u = uma.asarray(obj, copy=False)
    assert obj.calls[-1] == (None, False)
    base[0] = 7.0
    assert u.tolist()[0] == 7.0
    for o, why in ((_OldStyleArray(), "TypeError"), (_RefusingArray(), "ValueError: Unable to avoid copy")):
        with pytest.raises(uma.CopyError, match=rf"copy=False is impossible: {type(o).__name__}\.__array__.*{why}"):
            uma.asarray(o, copy=False)
        assert uma.asarray(o).tolist() == np.asarray(o).tolist()
    pa = pytest.importorskip("pyarrow")
    chunked = pa.chunked_array([[1, 2], [3]])
    with pytest.raises(uma.CopyError, match="ChunkedArray"):
        uma.asarray(chunked, copy=False)
    assert uma.asarray(chunked).tolist() == [1, 2, 3]


@pytest.mark.parametrize("scalar", [np.datetime64(1, "s"), np.timedelta64(3, "ms"), np.str_("ab"), np.bytes_(b"x")])
def test_numpy_scalars_of_dtypes_without_an_equivalent_raise(scalar):
    """Never their bytes reinterpreted (a datetime64 scalar exports its buffer as bytes)."""
    with pytest.raises(TypeError, match=rf"NumPy dtype {re.escape(str(scalar.dtype))} has no uma equivalent"):
        uma.asarray(scalar)


def test_asarray_prefers_dlpack_over_array_interface():
    base = np.arange(6.0)
    obj = P.DLPackAndInterface(base, (6,), (1,), "float64")
    u = uma.asarray(obj)
    assert obj.calls, "__dlpack__ was not tried first"
    assert u.tolist() == base.tolist()
    base[0] = 8.0
    assert u.tolist()[0] == 8.0


# --------------------------------------------------------------------------- uma.Array sources, uma.array

def test_asarray_of_uma_array():
    u = uma.asarray(np.arange(6.0))
    for copy in (None, False):
        v = uma.asarray(u, copy=copy)
        v[0] = 50.0
        assert u.tolist()[0] == 50.0
    c = uma.asarray(u, copy=True)
    c[1] = -4.0
    assert u.tolist()[1] == 1.0
    f = uma.asarray(u, dtype="float32")
    assert f.dtype == np.float32 and f.tolist() == u.tolist()
    with pytest.raises(uma.CopyError):
        uma.asarray(u, dtype="float32", copy=False)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert not uma.asarray(uma.asarray(ro)).writable


def _array_source(kind):
    """(source, function reading the source's values as a list)."""
    if kind == "numpy":
        return np.arange(6.0), lambda s: s.tolist()
    if kind == "uma":
        return uma.asarray(np.arange(6.0)), lambda s: s.tolist()
    if kind == "bytearray":
        return bytearray(range(6)), lambda s: list(s)
    if kind == "torch":
        torch = _torch()
        return torch.arange(6.0, dtype=torch.float64), lambda s: s.tolist()
    if kind == "list":
        return [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], lambda s: list(s)
    if kind == "array.array":
        return pyarray.array("d", range(6)), lambda s: s.tolist()
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["numpy", "uma", "bytearray", "torch", "list", "array.array"])
def test_array_always_copies(kind):
    src, read = _array_source(kind)
    before = read(src)
    u = uma.array(src)
    assert u.writable
    assert u.tolist() == before
    u[0] = 77
    assert read(src) == before  # the source did not change
    if kind != "list":
        if kind == "bytearray":
            src[1] = 99
        else:
            src[1] = 99.0
        assert u.tolist()[1] == before[1]  # and the copy does not see the source change


def test_array_with_dtype_and_read_only_source():
    n = np.arange(4, dtype=np.int32)
    n.flags.writeable = False
    u = uma.array(n)
    assert u.writable and u.dtype == np.int32
    f = uma.array(n, dtype="float64")
    assert f.dtype == np.float64 and f.tolist() == [0.0, 1.0, 2.0, 3.0]


# --------------------------------------------------------------------------- from_dlpack: NumPy producer

@pytest.mark.parametrize("layout", SHARE_LAYOUTS)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("copy", [None, False])
def test_from_dlpack_numpy_shares(copy, dtype, layout):
    n = _source(dtype, (3, 4), layout)
    u = uma.from_dlpack(n, copy=copy)
    assert u.dtype.name == dtype and u.shape == n.shape and u.strides == n.strides
    assert u.writable
    assert_shares(n, u)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex128"])
def test_from_dlpack_copy_true(dtype):
    n = _source(dtype, (3, 4), "negative_stride")
    u = uma.from_dlpack(n, copy=True)
    assert u.writable and u.tolist() == n.tolist()
    assert_independent(n, u)


def test_from_dlpack_size0():
    n = np.zeros((0, 3), dtype=np.float32)
    u = uma.from_dlpack(n)
    assert u.shape == (0, 3) and u.dtype == np.float32


def test_from_dlpack_read_only_numpy_is_read_only():
    w = np.arange(6.0)
    n = w.view()
    n.flags.writeable = False
    u = uma.from_dlpack(n)
    assert not u.writable
    assert_shares(n, u, writer=w)
    c = uma.from_dlpack(n, copy=True)
    assert c.writable
    assert_independent(w, c)


def test_from_dlpack_asks_for_versioned_first():
    n = np.arange(4.0)
    rec = P.RecordingDLPack(n)
    u = uma.from_dlpack(rec)
    assert rec.calls and tuple(rec.calls[0].get("max_version")) == (1, 1)
    assert_shares(n, u)


def test_from_dlpack_legacy_producer_falls_back_and_is_read_only():
    """DESIGN.md: a legacy capsule cannot say whether writing is allowed -> read-only."""
    n = np.arange(6.0).reshape(2, 3)
    legacy = P.LegacyDLPack(n)
    u = uma.from_dlpack(legacy)
    assert len(legacy.calls) >= 2
    assert "max_version" in legacy.calls[0]  # tried the new keywords first ...
    assert set(legacy.calls[-1]) <= {"stream"}  # ... then fell back to none on TypeError
    assert not u.writable
    assert_shares(n, u)  # still zero-copy: writes by the owner show
    with pytest.raises(ValueError):
        u[0, 0] = 1.0
    c = uma.from_dlpack(P.LegacyDLPack(n), copy=True)
    assert c.writable
    assert_independent(n, c)


def test_from_dlpack_byte_swapped_numpy_refused_by_producer():
    n = np.arange(3.0).astype(SWAPPED + "f8")
    with pytest.raises(BufferError):
        n.__dlpack__()  # NumPy refuses to export it
    with pytest.raises(BufferError):
        uma.from_dlpack(n)


def test_from_dlpack_of_uma_array_shares():
    u = uma.asarray(np.arange(5.0))
    v = uma.from_dlpack(u)
    v[0] = 9.0
    assert u.tolist()[0] == 9.0


def test_from_dlpack_object_without_dlpack_type_error():
    with pytest.raises((TypeError, AttributeError)):
        uma.from_dlpack([1, 2, 3])


# --------------------------------------------------------------------------- from_dlpack: hand-made capsules

def test_capsule_byte_offset_and_negative_strides():
    base = np.arange(20.0)
    prod = P.DLPackProducer(base, (3, 2), (-4, 1), "float64", first_element_offset=8 * 12, byte_offset=40)
    expected = np.from_dlpack(P.DLPackProducer(base, (3, 2), (-4, 1), "float64", first_element_offset=8 * 12,
                                               byte_offset=40))  # NumPy reads the same capsule
    u = uma.from_dlpack(prod)
    assert u.tolist() == expected.tolist() == [[12.0, 13.0], [8.0, 9.0], [4.0, 5.0]]
    assert u.strides == (-32, 8)
    base[8] = -1.0
    assert u.tolist()[1][0] == -1.0
    u[2, 1] = 55.0
    assert base[5] == 55.0


def test_capsule_null_strides_mean_c_contiguous():
    base = np.arange(6, dtype=np.int32)
    u = uma.from_dlpack(P.DLPackProducer(base, (2, 3), None, "int32"))
    assert u.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert u.strides == (12, 4)


def test_capsule_deleter_runs_exactly_once_after_last_view():
    base = np.arange(10.0)
    prod = P.DLPackProducer(base, (10,), (1,), "float64")
    u = uma.from_dlpack(prod)
    v = u[2:4]
    w = v * 2.0
    del u
    gc.collect()
    assert prod.deleted == 0  # v still uses the memory
    assert v.tolist() == [2.0, 3.0]
    del v
    gc.collect()
    assert prod.deleted == 1
    gc.collect()
    assert prod.deleted == 1
    assert w.tolist() == [4.0, 6.0]


def test_capsule_legacy_deleter_runs_once_and_result_read_only():
    base = np.arange(4.0)
    prod = P.DLPackProducer(base, (4,), (1,), "float64", legacy_only=True)
    u = uma.from_dlpack(prod)
    assert not u.writable
    assert u.tolist() == [0.0, 1.0, 2.0, 3.0]
    del u
    gc.collect()
    assert prod.deleted == 1


def test_capsule_read_only_flag():
    base = np.arange(4.0)
    prod = P.DLPackProducer(base, (4,), (1,), "float64", flags=P.FLAG_READ_ONLY)
    u = uma.from_dlpack(prod)
    assert not u.writable
    base[1] = 10.0
    assert u.tolist()[1] == 10.0
    c = uma.from_dlpack(P.DLPackProducer(base, (4,), (1,), "float64", flags=P.FLAG_READ_ONLY), copy=True)
    assert c.writable
    c[0] = 3.0
    assert base[0] == 0.0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_capsule_every_dtype_code(dtype):
    n = _source(dtype, (2, 3), "contiguous")
    prod = P.DLPackProducer(n, (2, 3), (3, 1), dtype)
    u = uma.from_dlpack(prod)
    assert u.dtype.name == dtype
    assert_shares(n, u)
    del u
    gc.collect()
    assert prod.deleted == 1


def test_capsule_0d_and_size0_with_null_data():
    base = np.array([2.5])
    u = uma.from_dlpack(P.DLPackProducer(base, (), None, "float64"))
    assert u.shape == () and u.item() == 2.5
    e = uma.from_dlpack(P.DLPackProducer(base, (0, 4), (4, 1), "float64", null_data=True))
    assert e.shape == (0, 4) and e.size == 0


@pytest.mark.parametrize("code_bits", [(7, 8), (2, 8), (0, 12), (5, 32), (6, 16)])
def test_capsule_unsupported_dtype_rejected(code_bits):
    base = np.zeros(4, dtype=np.uint8)
    prod = P.DLPackProducer(base, (4,), (1,), "uint8", code_bits=code_bits)
    with pytest.raises((TypeError, BufferError)):
        uma.from_dlpack(prod)
    gc.collect()
    assert prod.deleted <= 1


@pytest.mark.parametrize("shift", ["data", "byte_offset"])
def test_capsule_unaligned_address_copies(shift):
    """Copy rules apply to DLPack too: an unaligned element address is copied (copy=None) and
    refused with copy=False; the producer's deleter still runs exactly once either way."""
    raw = np.zeros(8 * 4 + 1, dtype=np.uint8)
    view = np.ndarray((4,), dtype=np.float64, buffer=raw, offset=1)
    view[...] = [1.5, 2.5, 3.5, 4.5]
    kw = {"first_element_offset": 1} if shift == "data" else {"first_element_offset": 1, "byte_offset": 1}
    prod = P.DLPackProducer(raw, (4,), (1,), "float64", **kw)
    u = uma.from_dlpack(prod)
    assert u.tolist() == [1.5, 2.5, 3.5, 4.5]
    view[0] = -1.0
    assert u.tolist()[0] == 1.5  # a copy
    del u
    gc.collect()
    assert prod.deleted == 1
    prod2 = P.DLPackProducer(raw, (4,), (1,), "float64", **kw)
    with pytest.raises(uma.CopyError):
        uma.from_dlpack(prod2, copy=False)
    gc.collect()
    assert prod2.deleted <= 1


def test_from_dlpack_device_cpu_and_torch_copy_true():
    torch = _torch()
    t = torch.arange(4.0)
    u = uma.from_dlpack(t, device="cpu")
    _torch_assert_shares(t, u)
    c = uma.from_dlpack(t, copy=True)
    t[0] = 100.0
    assert c.tolist()[0] != 100.0
    c[1] = -9.0
    assert t[1].item() != -9.0


def test_capsule_unknown_major_version_rejected():
    base = np.zeros(4)
    prod = P.DLPackProducer(base, (4,), (1,), "float64", version=(2, 0))
    with pytest.raises((BufferError, ValueError, TypeError)):
        uma.from_dlpack(prod)
    gc.collect()
    assert prod.deleted <= 1
    assert base.tolist() == [0.0] * 4


# --------------------------------------------------------------------------- PyTorch both ways

TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                "bfloat16", "float32", "float64", "complex64", "complex128"]


def _torch():
    return pytest.importorskip("torch")


def _torch_assert_shares(t, u):
    """Write through the tensor, read uma; write through uma, read the tensor."""
    torch = _torch()
    idx = _pos(tuple(t.shape))
    vals = (True, False) if t.dtype == torch.bool else (3, 5)
    for v in vals:
        t[idx] = v
        assert _at(u.tolist(), idx) == t[idx].item()
    if u.writable:
        for v in vals:
            u[idx] = v
            assert t[idx].item() == v


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_to_uma_shares(dtype):
    torch = _torch()
    t = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    for u in (uma.from_dlpack(t), uma.asarray(t)):
        assert u.dtype.name == dtype and u.shape == (3, 4)
        _torch_assert_shares(t, u)


@pytest.mark.parametrize("view", ["T", "step", "offset", "expand", "0d", "narrow"])
def test_torch_views_to_uma_share(view):
    torch = _torch()
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    t = {"T": lambda: base.T, "step": lambda: base[:, ::2], "offset": lambda: base[1:, 2:],
         "expand": lambda: base[0:1, :].expand(3, 6), "0d": lambda: base[2, 3],
         "narrow": lambda: base.narrow(1, 1, 3)}[view]()
    u = uma.from_dlpack(t)
    assert u.shape == tuple(t.shape)
    assert u.tolist() == t.tolist()
    assert u.strides == tuple(s * 8 for s in t.stride())
    if view != "expand":
        _torch_assert_shares(t, u)
    else:
        base[0, 4] = -2.0
        assert [r[4] for r in u.tolist()] == [-2.0] * 3


def test_torch_negated_view_imports_its_values():
    """A negated view (is_neg(): the imaginary part of a conjugate) holds -x in its memory and
    DLPack exports that memory as is; uma imports its values through a copy (resolve_neg) and
    refuses copy=False with CopyError."""
    torch = _torch()
    z = torch.tensor([1 + 2j, 3 - 4j, -5 + 0.5j], dtype=torch.complex128)
    t = z.conj().imag
    assert t.is_neg()
    want = np.imag(np.conj(z.numpy()))
    for u in (uma.asarray(t), uma.from_dlpack(t), uma.array(t), uma.asarray(t, copy=True),
              uma.shared(t).get_value()):
        np.testing.assert_array_equal(np.asarray(u), want)
    x = uma.sym.vector("x", dtype="float64")
    np.testing.assert_array_equal(np.asarray(uma.function([x], x * 1.0, backend="cpu")(t)), want)
    for call in (lambda: uma.asarray(t, copy=False), lambda: uma.from_dlpack(t, copy=False)):
        with pytest.raises(uma.CopyError, match=r"negated view \(is_neg\(\) is True\)"):
            call()
    assert t.is_neg() and z.tolist() == [1 + 2j, 3 - 4j, -5 + 0.5j]  # the source is as it was

    class Stuck:  # a producer whose resolve_neg() never resolves: an error, not endless recursion
        def is_neg(self):
            return True

        def resolve_neg(self):
            return self

        def __dlpack__(self, **kwargs):
            raise AssertionError("never exported")

    with pytest.raises(TypeError, match="resolve_neg\\(\\) returned another negated view"):
        uma.asarray(Stuck())


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_uma_to_torch_shares(dtype):
    torch = _torch()
    u = uma.zeros((3, 4), dtype=dtype)
    t = torch.from_dlpack(u)
    assert t.dtype == getattr(torch, dtype) and tuple(t.shape) == (3, 4)
    _torch_assert_shares(t, u)


@pytest.mark.parametrize("view", ["T", "step", "offset", "0d"])
def test_uma_views_to_torch_share(view):
    torch = _torch()
    u = uma.asarray(np.arange(24.0).reshape(4, 6))
    v = {"T": lambda: u.T, "step": lambda: u[:, ::2], "offset": lambda: u[1:, 2:], "0d": lambda: u[2, 3, ...]}[view]()
    t = torch.from_dlpack(v)
    assert t.tolist() == v.tolist()
    assert tuple(s * 8 for s in t.stride()) == v.strides
    _torch_assert_shares(t, v)


def test_torch_uma_torch_round_trip_same_memory():
    torch = _torch()
    t = torch.arange(10, dtype=torch.float32)
    t2 = torch.from_dlpack(uma.from_dlpack(t))
    assert t2.data_ptr() == t.data_ptr()
    t2[3] = -7.0
    assert t[3].item() == -7.0


def test_numpy_uma_torch_uma_numpy_chain_shares():
    torch = _torch()
    n = np.arange(8.0)
    out = np.from_dlpack(uma.from_dlpack(torch.from_dlpack(uma.asarray(n))))
    out[5] = 123.0
    assert n[5] == 123.0
    n[6] = -1.0
    assert out[6] == -1.0


def test_torch_source_survives_the_tensor_object():
    torch = _torch()
    t = torch.arange(100, dtype=torch.int64)
    u = uma.from_dlpack(t)
    del t
    gc.collect()
    junk = [torch.full((100,), -1, dtype=torch.int64) for _ in range(20)]
    assert u.tolist() == list(range(100))
    del junk


# --------------------------------------------------------------------------- export to NumPy

EXPORT_LAYOUTS = ["contiguous", "transposed", "negative_stride", "strided", "broadcast", "0d"]


def _uma_view(dtype, layout):
    """(uma view in a layout made with uma's own view machinery, its NumPy twin, the uma base)."""
    dt = np_dtype(dtype)
    base_np = (np.arange(48, dtype=np.int64).reshape(6, 8) % 7).astype(dt)
    u = uma.asarray(base_np.copy())
    n = base_np.copy()
    if layout == "contiguous":
        return u, n, u
    if layout == "transposed":
        return u.T, n.T, u
    if layout == "negative_stride":
        return u[::-1, ::-3], n[::-1, ::-3], u
    if layout == "strided":
        return u[1::2, 2:7:2], n[1::2, 2:7:2], u
    if layout == "broadcast":
        return uma.broadcast_to(u[2], (3, 8)), np.broadcast_to(n[2], (3, 8)), u
    if layout == "0d":
        return u[1, 2, ...], n[1, 2, ...], u  # a 0-d view (with Ellipsis NumPy returns an array too)
    raise ValueError(layout)


def _assert_uma_numpy_alias(u, out):
    """`out` (NumPy) is a view of `u`'s memory: write each side, read the other."""
    idx = _pos(out.shape)
    a, b = _two_values(out.dtype)
    if out.flags.writeable:
        out[idx] = a
        assert _at(u.tolist(), idx) == out[idx].item()
    if u.writable:
        u[idx] = b
        assert out[idx].item() == np.asarray(b).astype(out.dtype).item()


def _assert_broadcast_alias(base, out):
    """`out` exports the broadcast of base[2]: a write into base[2] shows in every row."""
    for v in _two_values(out.dtype):
        base[2, 7] = v
        assert [row[7] for row in out.tolist()] == [np.asarray(v).astype(out.dtype).item()] * out.shape[0]


@pytest.mark.parametrize("layout", EXPORT_LAYOUTS)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_np_asarray_shares(dtype, layout):
    u, n, base = _uma_view(dtype, layout)
    out = np.asarray(u)
    assert out.dtype == n.dtype and out.shape == n.shape
    assert out.tolist() == n.tolist()
    if n.size:
        assert out.strides == n.strides
    assert out.flags.writeable == u.writable
    _assert_uma_numpy_alias(u, out)
    if layout == "broadcast":
        _assert_broadcast_alias(base, out)


@pytest.mark.parametrize("layout", EXPORT_LAYOUTS)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_np_from_dlpack_shares(dtype, layout):
    u, n, base = _uma_view(dtype, layout)
    out = np.from_dlpack(u)
    assert out.dtype == n.dtype and out.shape == n.shape
    assert out.tolist() == n.tolist()
    if n.size:
        assert out.strides == n.strides
    _assert_uma_numpy_alias(u, out)
    if layout == "broadcast":
        _assert_broadcast_alias(base, out)


def test_bfloat16_exports_to_numpy_as_ml_dtypes_zero_copy():
    mld = pytest.importorskip("ml_dtypes")
    u = uma.asarray(np.arange(6, dtype=np.float32)).astype("bfloat16")
    out = np.asarray(u)
    assert out.dtype == np.dtype(mld.bfloat16)
    assert out.astype(np.float32).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    out[2] = 7.5
    assert u.tolist()[2] == 7.5
    u[3] = -1.0
    assert float(out[3]) == -1.0


def test_np_array_copies():
    u = uma.asarray(np.arange(5.0))
    out = np.array(u)
    out[0] = 100.0
    assert u.tolist()[0] == 0.0
    u[1] = -3.0
    assert out[1] == 1.0
    c = np.asarray(u, copy=True)
    c[2] = 9.0
    assert u.tolist()[2] == 2.0
    s = np.array(u, copy=False)  # NumPy 2: never copy -> shares
    s[4] = 44.0
    assert u.tolist()[4] == 44.0


def test_read_only_uma_exports_read_only():
    n = np.arange(4.0)
    n.flags.writeable = False
    u = uma.asarray(n)
    for out in (np.asarray(u), np.from_dlpack(u), np.asarray(memoryview(u))):
        assert not out.flags.writeable
        with pytest.raises(ValueError):
            out[0] = 1.0
    assert u.__array_interface__["data"][1] is True
    assert memoryview(u).readonly


def test_array_interface_contents():
    u, n, _ = _uma_view("float32", "negative_stride")
    ai = u.__array_interface__
    assert ai["version"] == 3
    assert tuple(ai["shape"]) == n.shape
    assert np.dtype(ai["typestr"]) == np.float32
    assert ai["strides"] is None or tuple(ai["strides"]) == n.strides
    assert ai["data"][1] is False
    # another consumer reading only this dict sees the same memory
    obj = P.ArrayInterfaceObject(u, shape=ai["shape"], typestr=ai["typestr"], strides=ai["strides"],
                                 ptr=ai["data"][0])
    out = np.asarray(obj)
    assert out.tolist() == n.tolist()
    out[0, 0] = 42.0
    assert u.tolist()[0][0] == 42.0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_array_interface_typestr_every_dtype(dtype):
    u = uma.zeros((2, 2), dtype=dtype)
    ai = u.__array_interface__
    assert np.dtype(ai["typestr"]) == np.dtype(dtype)
    assert ai["strides"] is None or tuple(ai["strides"]) == np.zeros((2, 2), dtype=dtype).strides


def test_dunder_array():
    u = uma.asarray(np.arange(4.0))
    a = u.__array__()
    assert isinstance(a, np.ndarray) and a.dtype == np.float64
    a[0] = 5.0
    assert u.tolist()[0] == 5.0  # shares by default
    c = u.__array__(copy=True)
    c[1] = -5.0
    assert u.tolist()[1] == 1.0
    f = u.__array__(dtype=np.float32)
    assert f.dtype == np.float32 and f.tolist() == [5.0, 1.0, 2.0, 3.0]
    s = u.__array__(dtype=np.float64, copy=False)
    s[2] = 8.0
    assert u.tolist()[2] == 8.0
    with pytest.raises(ValueError):
        u.__array__(dtype=np.float32, copy=False)
    assert np.asarray(u, dtype=np.int32).tolist() == [5, 1, 8, 3]


# --------------------------------------------------------------------------- buffer protocol export

@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative_stride", "strided", "0d"])
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_memoryview_export(dtype, layout):
    u, n, _ = _uma_view(dtype, layout)
    mv = memoryview(u)
    assert mv.ndim == n.ndim and mv.shape == n.shape and mv.itemsize == n.itemsize
    assert mv.strides == n.strides
    assert mv.readonly is (not u.writable)
    back = np.asarray(mv)  # NumPy parses the format
    assert back.dtype == n.dtype
    assert back.tolist() == n.tolist()
    if n.size and u.writable:
        _assert_uma_numpy_alias(u, back)


def test_memoryview_tobytes_matches_numpy():
    u, n, _ = _uma_view("int16", "negative_stride")
    assert memoryview(u).tobytes() == n.tobytes()
    u, n, _ = _uma_view("float64", "transposed")
    assert memoryview(u).tobytes() == n.tobytes()


FLAG_CASES = {
    "SIMPLE": P.PyBUF_SIMPLE, "ND": P.PyBUF_ND, "STRIDES": P.PyBUF_STRIDES, "C_CONTIGUOUS": P.PyBUF_C_CONTIGUOUS,
    "F_CONTIGUOUS": P.PyBUF_F_CONTIGUOUS, "ANY_CONTIGUOUS": P.PyBUF_ANY_CONTIGUOUS,
    "WRITABLE": P.PyBUF_WRITABLE, "FULL_RO": P.PyBUF_FULL_RO, "FULL": P.PyBUF_FULL,
    "RECORDS_RO": P.PyBUF_RECORDS_RO, "FORMAT|ND": P.PyBUF_FORMAT | P.PyBUF_ND,
    "STRIDES|WRITABLE": P.PyBUF_STRIDES | P.PyBUF_WRITABLE,
}
BUF_LAYOUTS = ["c", "f", "strided", "negative", "readonly", "0d", "1d"]


def _buf_pair(layout):
    base = np.arange(24.0).reshape(4, 6)
    u = uma.asarray(base.copy())
    if layout == "c":
        return u, base
    if layout == "f":
        return u.T, base.T
    if layout == "strided":
        return u[:, ::2], base[:, ::2]
    if layout == "negative":
        return u[::-1], base[::-1]
    if layout == "readonly":
        ro = base.copy()
        ro.flags.writeable = False
        return uma.asarray(ro), ro
    if layout == "0d":
        return uma.asarray(np.array(2.5)), np.array(2.5)
    if layout == "1d":
        return u[1], base[1]
    raise ValueError(layout)


def _request_ok(n, flags):
    """PEP 3118: can an exporter of `n`'s layout satisfy `flags`?"""
    if flags & P.PyBUF_WRITABLE and not n.flags.writeable:
        return False
    c, f = n.flags.c_contiguous, n.flags.f_contiguous
    contig = flags & ~(P.PyBUF_STRIDES | P.PyBUF_FORMAT | P.PyBUF_WRITABLE | 0x100)
    if contig == 0x20:
        return c
    if contig == 0x40:
        return f
    if contig == 0x80:
        return c or f
    if (flags & P.PyBUF_STRIDES) == P.PyBUF_STRIDES:
        return True
    return c  # no strides requested: the consumer assumes C order


@pytest.mark.parametrize("layout", BUF_LAYOUTS)
@pytest.mark.parametrize("flag_name", list(FLAG_CASES))
def test_buffer_request_flags(flag_name, layout):
    flags = FLAG_CASES[flag_name]
    u, n = _buf_pair(layout)
    ok = _request_ok(n, flags)
    # the rule above is what NumPy (a flag-honouring exporter) does with the same layout
    try:
        with P.get_buffer(n, flags):
            numpy_ok = True
    except (BufferError, ValueError):
        numpy_ok = False
    assert numpy_ok == ok
    if not ok:
        with pytest.raises(BufferError):
            with P.get_buffer(u, flags):
                pass
        return
    with P.get_buffer(u, flags) as view:
        ptr = u.__array_interface__["data"][0]
        assert view["buf"] == ptr
        assert view["len"] == n.nbytes
        assert view["readonly"] == (not n.flags.writeable)
        assert view["suboffsets"] is None
        if flags & P.PyBUF_ND:
            assert view["ndim"] == n.ndim and (view["shape"] or ()) == n.shape
        else:
            assert view["shape"] is None
        if (flags & P.PyBUF_STRIDES) == P.PyBUF_STRIDES:
            assert (view["strides"] or ()) == n.strides or (view["strides"] is None and n.flags.c_contiguous)
        else:
            assert view["strides"] is None
        if flags & P.PyBUF_FORMAT:
            assert view["format"] is not None
            assert np.dtype(view["format"].lstrip("@=")) == n.dtype
            assert view["itemsize"] == n.itemsize
        else:
            assert view["format"] is None
        # what the consumer reads is the array
        if n.flags.c_contiguous:
            assert P.read_bytes(view["buf"], view["len"]) == n.tobytes()
        elif view["strides"] is not None and n.size:
            idx = _pos(n.shape)
            addr = view["buf"] + sum(i * s for i, s in zip(idx, view["strides"]))
            assert P.element_at(addr, n.dtype) == n[idx]


def test_buffer_export_keeps_memory_alive():
    u = uma.asarray(np.arange(8.0)) * 2.0  # pooled memory
    expected = (np.arange(8.0) * 2.0).tobytes()
    with P.get_buffer(u, P.PyBUF_SIMPLE) as view:
        del u
        gc.collect()
        junk = [uma.full((8,), -1.0) for _ in range(20)]
        assert P.read_bytes(view["buf"], view["len"]) == expected
        del junk


# --------------------------------------------------------------------------- __dlpack__ export

def test_dlpack_capsule_names():
    u = uma.zeros(3)
    assert P.capsule_name(u.__dlpack__()) == "dltensor"
    assert P.capsule_name(u.__dlpack__(max_version=(1, 1))) == "dltensor_versioned"
    assert P.capsule_name(u.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert P.capsule_name(u.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert P.capsule_name(u.__dlpack__(stream=None, max_version=(2, 3))) == "dltensor_versioned"


def test_dlpack_device():
    assert uma.zeros(2).__dlpack_device__() == np.zeros(2).__dlpack_device__() == (P.KDL_CPU, 0)


def test_dlpack_read_only_legacy_export_buffer_error():
    n = np.arange(3.0)
    n.flags.writeable = False
    u = uma.asarray(n)
    with pytest.raises(BufferError):
        u.__dlpack__()
    with pytest.raises(BufferError):
        u.__dlpack__(max_version=(0, 8))
    info = P.read_versioned_capsule(u.__dlpack__(max_version=(1, 1)))
    assert info["flags"] & P.FLAG_READ_ONLY


@pytest.mark.parametrize("layout", ["contiguous", "negative_stride", "transposed", "strided", "0d"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_versioned_struct_contents(dtype, layout):
    u, n, _ = _uma_view(dtype, layout)
    t = P.read_versioned_capsule(u.__dlpack__(max_version=(1, 1)))
    assert t["version"][0] == 1
    assert not (t["flags"] & P.FLAG_READ_ONLY) and not (t["flags"] & P.FLAG_IS_COPIED)
    assert t["device"] == (P.KDL_CPU, 0)
    assert t["dtype"] == (*P.DL_DTYPES[dtype], 1)
    assert t["ndim"] == n.ndim and t["shape"] == n.shape
    if t["ndim"]:
        assert t["strides"] is not None  # DLPack >= 1.2: producers fill them in
        assert tuple(s * n.itemsize for s in t["strides"]) == n.strides
    if dtype != "bfloat16":  # (NumPy's array interface has no bfloat16 typestr)
        assert t["data"] + t["byte_offset"] == u.__array_interface__["data"][0]


def test_dlpack_legacy_struct_contents():
    u, n, _ = _uma_view("int32", "negative_stride")
    t = P.read_legacy_capsule(u.__dlpack__())
    assert t["shape"] == n.shape and t["dtype"] == (P.KDL_INT, 32, 1) and t["device"] == (P.KDL_CPU, 0)
    assert tuple(s * 4 for s in t["strides"]) == n.strides
    assert t["data"] + t["byte_offset"] == u.__array_interface__["data"][0]


def test_dlpack_copy_true_sets_is_copied():
    u = uma.asarray(np.arange(4.0))
    t = P.read_versioned_capsule(u.__dlpack__(max_version=(1, 1), copy=True))
    assert t["flags"] & P.FLAG_IS_COPIED
    assert t["data"] + t["byte_offset"] != u.__array_interface__["data"][0]
    out = np.from_dlpack(u, copy=True)
    out[0] = 9.0
    assert u.tolist()[0] == 0.0


def test_dlpack_dl_device():
    u = uma.zeros(3)
    assert P.capsule_name(u.__dlpack__(max_version=(1, 1), dl_device=(P.KDL_CPU, 0))) == "dltensor_versioned"
    with pytest.raises(BufferError):
        u.__dlpack__(max_version=(1, 1), dl_device=(2, 0))  # CUDA: this producer cannot serve it


def test_dlpack_unconsumed_capsule_releases_memory(mem_baseline):
    base = stats()["active_bytes"]
    u = uma.empty(100_000)
    c = u.__dlpack__(max_version=(1, 1))
    cl = uma.empty(100_000).__dlpack__()
    del u
    gc.collect()
    assert stats()["active_bytes"] > base  # the capsules hold the memory
    del c, cl
    gc.collect()
    assert stats()["active_bytes"] == base


def test_np_asarray_keeps_memory_alive():
    u = uma.asarray(np.arange(6.0)) * 3.0  # pooled memory
    out = np.asarray(u)
    del u
    gc.collect()
    junk = [uma.full((6,), -9.0) for _ in range(20)]
    assert out.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]
    del junk


def test_dlpack_consumer_keeps_memory_alive():
    u = uma.asarray(np.arange(6.0)) + 1.0
    out = np.from_dlpack(u)
    del u
    gc.collect()
    junk = [uma.full((6,), -9.0) for _ in range(20)]
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    del junk


# ---- bool buffers whose bytes are not 0/1 (a uint8 buffer reinterpreted as bool) ----
# Shared as NumPy shares them; every op reads a byte as byte != 0 (tests/python/test_bool_bytes.py).

def _odd_bools():
    # NumPy reads any non-zero byte as True: [T, F, T, T, F, T]
    return np.frombuffer(b"\x02\x00\xff\x01\x00\x80", dtype=np.bool_)


def test_non_canonical_bool_bytes_are_shared():
    n = _odd_bools()
    u = uma.asarray(n)
    assert np.shares_memory(np.asarray(u), n)
    np.testing.assert_array_equal(np.asarray(u), n)
    np.testing.assert_array_equal(np.asarray(uma.logical_not(u)), np.logical_not(n))
    np.testing.assert_array_equal(np.asarray(u.astype("int64")), n.astype(np.int64))
    assert int(uma.sum(u)) == int(np.sum(n)) == 4
    np.testing.assert_array_equal(np.asarray(uma.arange(6)[u]), np.arange(6)[n])


def test_non_canonical_bool_bytes_copy_false_shares():
    n = _odd_bools()
    u = uma.asarray(n, copy=False)
    assert np.shares_memory(np.asarray(u), n)
    assert u.tolist() == n.tolist()


def test_canonical_bool_bytes_still_shared():
    n = np.frombuffer(b"\x01\x00\x01", dtype=np.bool_)
    u = uma.asarray(n, copy=False)
    assert np.shares_memory(np.asarray(u), n)


def test_non_canonical_bool_view_strided_and_large():
    raw = np.frombuffer(bytes([0, 2, 1, 7]) * 1000, dtype=np.bool_)
    view = raw[1::3]
    u = uma.asarray(view)
    assert np.shares_memory(np.asarray(u), raw)
    np.testing.assert_array_equal(np.asarray(u), view)
    np.testing.assert_array_equal(np.asarray(uma.arange(view.size)[u]), np.arange(view.size)[view])
    assert int(uma.sum(u)) == int(np.sum(view))


def test_non_canonical_bool_from_torch_dlpack():
    torch = pytest.importorskip("torch")
    t = torch.tensor([2, 0, 3, 1], dtype=torch.uint8).view(torch.bool)
    u = uma.from_dlpack(t)
    assert np.shares_memory(np.asarray(u), t.numpy())
    np.testing.assert_array_equal(np.asarray(u), np.array([True, False, True, True]))
    np.testing.assert_array_equal(np.asarray(uma.arange(4)[u]), np.array([0, 2, 3]))
    assert int(uma.sum(u)) == 3


def test_non_canonical_bool_function_input():
    x = uma.sym.vector("x", dtype="bool")
    f = uma.function([x], uma.logical_not(x))
    raw = np.frombuffer(bytes([0, 2]) * 4096, dtype=np.bool_)  # beyond the small-input copy
    np.testing.assert_array_equal(np.asarray(f(raw)), np.logical_not(raw))
