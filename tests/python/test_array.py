"""uma.Array: attributes, repr, item/tolist, astype over all 15 dtypes, basic indexing
(views), __setitem__ with broadcasting and casting, in-place operators, read-only arrays.
NumPy 2 decides every expected value."""
import gc
import operator

import warnings

import numpy as np
import pytest

import uma
from conftest import (
    ALL_DTYPES, INVALID_CAST_FLOATS, NUMPY_DTYPES, assert_matches, check_like_numpy, np_dtype, numpy_cast_each,
    numpy_error_type, numpy_quiet, random_data,
)

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1), (4, 3, 2)]


# --------------------------------------------------------------------------- attributes

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_attributes(dtype, shape):
    a = uma.zeros(shape, dtype=dtype)
    n = np.zeros(shape, dtype=np_dtype(dtype))
    assert isinstance(a.shape, tuple) and a.shape == n.shape
    assert a.ndim == n.ndim
    assert a.size == n.size
    assert a.dtype.name == dtype
    assert a.itemsize == n.itemsize
    assert a.nbytes == n.nbytes
    assert isinstance(a.strides, tuple) and len(a.strides) == n.ndim
    if n.size > 0:  # NumPy's strides of size-0 arrays are arbitrary (2.x reports zeros)
        assert a.strides == n.strides
    assert str(a.device) == "cpu"
    assert a.writable is True
    if n.ndim == 0:
        with pytest.raises(TypeError):
            len(a)
    else:
        assert len(a) == len(n)


def test_attribute_types_are_python_ints():
    a = uma.zeros((2, 3), dtype="float32")
    for v in (a.ndim, a.size, a.itemsize, a.nbytes, *a.shape, *a.strides):
        assert type(v) is int


# --------------------------------------------------------------------------- repr

REPR_CASES = [
    (np.array([1.0, 2.0], dtype=np.float32)), (np.array([1.0, 2.5])), (np.array([1, 2], dtype=np.int32)),
    (np.array([True, False])), (np.array(1.5, dtype=np.float32)), (np.arange(6).reshape(2, 3)),
    (np.array([], dtype=np.float64)), (np.array([1 + 2j], dtype=np.complex64)), (np.array([7], dtype=np.uint8)),
]


@pytest.mark.parametrize("n", REPR_CASES, ids=lambda n: f"{n.dtype}{n.shape}")
def test_repr_numpy_like(n):
    r = repr(uma.asarray(n))
    assert r.startswith("uma.array("), r
    assert r.endswith(")")
    # the values, formatted as NumPy formats them (line breaks and indentation aside)
    assert "".join(np.array2string(n, separator=", ").split()) in "".join(r.split()), r
    if "dtype=" in repr(n):  # NumPy shows non-default dtypes; so must uma
        assert f"dtype={n.dtype.name}" in r, r


def test_repr_api_example():
    assert repr(uma.asarray(np.array([1.0, 2.0], dtype=np.float32))) == "uma.array([1., 2.], dtype=float32)"


def test_repr_of_view_and_bfloat16():
    n = np.arange(12.0).reshape(3, 4)
    r = repr(uma.asarray(n)[::-1, 1::2])
    assert "".join(np.array2string(n[::-1, 1::2], separator=", ").split()) in "".join(r.split()), r
    assert "bfloat16" in repr(uma.zeros(2, dtype="bfloat16"))


def test_str_and_repr_of_bfloat16_print_the_same_digits():
    x = uma.asarray(np.array([1.5, 3.14159, -2.0e-3], np.float32)).astype(uma.bfloat16)
    try:
        import ml_dtypes
        want = np.array([1.5, 3.14159, -2.0e-3], np.float32).astype(ml_dtypes.bfloat16)
    except ImportError:  # printed as float32 without ml_dtypes
        want = np.asarray(x.astype("float32"))
    assert str(x) == str(want)
    assert np.array2string(want, separator=", ", prefix="uma.array(") in repr(x)


def test_repr_and_str_of_more_dimensions_than_numpy_takes():
    # NumPy holds at most 64 dimensions; uma's arrays may have more and still print
    with pytest.raises(ValueError):
        np.zeros((1,) * 65)  # the oracle's limit
    a = uma.zeros((1,) * 65, dtype="int8")
    for text in (repr(a), str(a)):
        assert text == f"uma.array(<1 elements>, shape={(1,) * 65}, dtype=int8)"


def test_one_axis_functions_name_a_tuple_axis():
    for fn in (uma.cumsum, uma.cumprod):
        with pytest.raises(TypeError, match=r"axis must be an integer or None \(one axis\), got \(0, 1\)"):
            fn(uma.ones((2, 3)), axis=(0, 1))
        with pytest.raises(TypeError):
            getattr(np, fn.__name__)(np.ones((2, 3)), axis=(0, 1))  # NumPy refuses too


# --------------------------------------------------------------------------- item / tolist

def _values(dtype, shape, rng):
    """A NumPy array (never a NumPy scalar, even for shape ()) of exactly representable values."""
    dt = np_dtype(dtype)
    if dt.kind == "b":
        v = rng.integers(0, 2, size=shape)
    elif dt.kind == "u":
        v = rng.integers(0, 200, size=shape)
    elif dt.kind == "i":
        v = rng.integers(-100, 100, size=shape)
    elif dt.kind == "c":
        v = rng.integers(-8, 8, size=shape) / 4 + 1j * rng.integers(-8, 8, size=shape) / 4
    else:
        v = rng.integers(-64, 64, size=shape) / 8  # exact in float16 and bfloat16
    return np.asarray(v).astype(dt)


def _same_python(a, b):
    """Equal values with identical Python types, recursively."""
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same_python(x, y)
    else:
        assert type(a) is type(b), (a, b, type(a), type(b))
        assert a == b, (a, b)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,), (2, 0)], ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tolist(dtype, shape, rng):
    n = _values(dtype, shape, rng)
    u = uma.asarray(n)
    _same_python(u.tolist(), n.tolist())


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64", "bfloat16"])
def test_tolist_of_strided_views(dtype, rng):
    n = _values(dtype, (4, 6), rng)
    u = uma.asarray(n)
    for idx in [(slice(None, None, -1), slice(None, None, 2)), (slice(1, 3), slice(None, None, -3))]:
        _same_python(u[idx].tolist(), n[idx].tolist())
    _same_python(u.T.tolist(), n.T.tolist())


@pytest.mark.parametrize("shape", [(), (1,), (1, 1, 1)], ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_item(dtype, shape, rng):
    n = _values(dtype, shape, rng)
    u = uma.asarray(n)
    _same_python(u.item(), n.item())


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)], ids=str)
def test_item_not_size_one_value_error(shape):
    with pytest.raises(ValueError):
        np.zeros(shape).item()
    with pytest.raises(ValueError):
        uma.zeros(shape).item()


def test_item_of_bfloat16_rounds_like_ml_dtypes():
    mld = pytest.importorskip("ml_dtypes")
    x = np.array(1.0 + 2**-9 + 2**-12, dtype=np.float32)
    assert uma.asarray(x).astype("bfloat16").item() == float(x.astype(mld.bfloat16))


# --------------------------------------------------------------------------- astype

def _astype_source(dtype):
    dt = np_dtype(dtype)
    if dt.kind == "b":
        return np.array([True, False, True, True, False, True], dtype=dt)
    if dt.kind in "iu":
        return np.array([0, 1, 2, 3, 7, 100], dtype=dt)
    if dt.kind == "c":
        return np.array([0, 1 + 1j, 2.5 - 2j, 3, 7.75 + 0.5j, 100j], dtype=dt)
    return np.array([0, 1, 2.5, 3, 7.75, 100], dtype=dt)


ASTYPE_PAIRS = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES]


@pytest.mark.parametrize("src,dst", ASTYPE_PAIRS, ids=[f"{a}->{b}" for a, b in ASTYPE_PAIRS])
def test_astype_all_pairs(src, dst):
    n = _astype_source(src)
    with warnings.catch_warnings(record=True) as oracle, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        expected = n.astype(np_dtype(dst))
    u = uma.asarray(n)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = u.astype(dst)
        functional = uma.astype(u, dst)
    # complex -> real drops the imaginary parts with NumPy's ComplexWarning, from both spellings
    complex_warning = [w for w in oracle if issubclass(w.category, np.exceptions.ComplexWarning)]
    assert len([w for w in seen if issubclass(w.category, np.exceptions.ComplexWarning)]) == 2 * len(complex_warning)
    assert_matches(got, expected, rtol=0, atol=0)
    assert_matches(functional, expected, rtol=0, atol=0)
    assert got.writable
    # the source is untouched
    _same_python(u.tolist(), n.tolist())


NEG_PAIRS = [(a, b) for a in ["int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                              "complex64", "complex128"]
             for b in ["int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                       "complex64", "complex128", "bool"]]


@pytest.mark.parametrize("src,dst", NEG_PAIRS, ids=[f"{a}->{b}" for a, b in NEG_PAIRS])
def test_astype_negative_values(src, dst):
    dt = np_dtype(src)
    vals = [-1, -2.5, -100, -0.75, 0] if dt.kind in "fc" else [-1, -2, -100, -128, 0]
    n = np.array(vals, dtype=dt)
    expected = numpy_quiet(lambda: n.astype(np_dtype(dst)))
    assert_matches(uma.asarray(n).astype(dst), expected, rtol=0, atol=0)


def test_astype_float64_to_float16_rounding_like_numpy():
    n = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65504.0, 65520.0, 70000.0, 1e-8, 3e-8, 6e-5, -0.0, np.inf, np.nan])
    assert_matches(uma.asarray(n).astype("float16"), numpy_quiet(lambda: n.astype(np.float16)), rtol=0, atol=0)


def test_astype_float32_to_bfloat16_round_to_nearest_even():
    mld = pytest.importorskip("ml_dtypes")
    n = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-8), 3.4e38, 1e-40, np.inf, -np.inf],
                 dtype=np.float32)
    got = np.asarray(uma.asarray(n).astype("bfloat16"))
    expected = n.astype(mld.bfloat16)
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"),
                    reason="NumPy's invalid float -> int casts are the platform's; uma gives x86-64's")
@pytest.mark.parametrize("src", ["float64", "float32"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_astype_invalid_float_to_int_matches_numpy(src, dtype):
    x = np.array(INVALID_CAST_FLOATS).astype(src)
    np.testing.assert_array_equal(np.asarray(uma.asarray(x).astype(dtype)), numpy_cast_each(x, dtype))


def test_astype_bfloat16_nan_stays_nan():
    got = uma.asarray(np.array([np.nan, -np.nan], dtype=np.float32)).astype("bfloat16").astype("float32")
    assert all(v != v for v in got.tolist())


@pytest.mark.parametrize("spec", [np.float32, "float32", np.dtype("float32"), uma.float32])
def test_astype_dtype_spellings(spec):
    n = np.arange(4, dtype=np.int64)
    assert_matches(uma.asarray(n).astype(spec), n.astype(np.float32))


def test_astype_python_types():
    n = np.array([0, 1, 2], dtype=np.int32)
    for t in (float, int, bool, complex):
        assert_matches(uma.asarray(n).astype(t), n.astype(t))


def test_astype_copy_semantics():
    n = np.arange(5.0)
    u = uma.array(n)
    c = u.astype("float64")  # copy=True by default: independent even for the same dtype
    c[0] = 100.0
    assert u.tolist()[0] == 0.0
    v = u.astype("float64", copy=False)  # no conversion needed: may share, as NumPy does
    v[1] = -1.0
    assert u.tolist()[1] == -1.0
    w = u.astype("float32", copy=False)  # a conversion always copies
    w[2] = 55.0
    assert u.tolist()[2] == 2.0
    assert w.dtype == np.float32


@pytest.mark.parametrize("dtype", ["float32", "int16", "bfloat16", "complex128"])
def test_astype_of_strided_views(dtype):
    n = np.arange(24.0).reshape(4, 6)
    for idx in [(slice(None, None, -1), slice(1, None, 2)), (Ellipsis, slice(None, None, -1))]:
        expected = n[idx].astype(np_dtype(dtype))
        assert_matches(uma.asarray(n)[idx].astype(dtype), expected, rtol=0, atol=0)
    assert_matches(uma.asarray(n).T.astype(dtype), n.T.astype(np_dtype(dtype)), rtol=0, atol=0)


# --------------------------------------------------------------------------- indexing

BASE_SHAPE = (2, 3, 5, 4)
INDICES = [
    1, -1, (0, 1), (1, -2, 3), slice(None), slice(1, None), slice(None, None, -1), (slice(None), slice(None, None, -2)),
    (slice(None), slice(None), slice(3, 0, -1)), (slice(None), slice(-1, -4, -2)), slice(10, 20), slice(2, 1),
    (slice(None), slice(None), slice(None, None, 3)), Ellipsis, (Ellipsis, 1), (1, Ellipsis, slice(None, None, -1)),
    None, (None, 1, None), (slice(None), None, Ellipsis, None), (0, slice(None, None, -2), None, Ellipsis),
    (Ellipsis, None), (), (np.int64(1), np.int32(-1)), (Ellipsis, slice(None, None, -1), slice(1, 3)),
    (slice(-100, 100), 0), (slice(None, None, -1), slice(None, None, -1), slice(None, None, -1), slice(None, None, -1)),
    (1, 2, slice(4, None, -2), -1), (0, 0, 0), (slice(None), 0, None, slice(None, None, -3)),
    slice(100, None, -1), (slice(None), slice(-100, None, 2)), (Ellipsis, slice(None, None, 100)),
    (slice(None), slice(None, -100, -1)), (slice(None, None, -5), Ellipsis, slice(-1, None, -3)),
    # bounds and steps beyond 64 bits clamp, as Python's and NumPy's slices do
    slice(None, 2**64), slice(-2**70, 2**70), slice(None, None, 2**63), slice(None, None, -2**64),
    (slice(None), slice(2**64, None, -1)), (Ellipsis, slice(-2**64, None, 2**100)), slice(2**63, -2**63, -1),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_basic_indexing_returns_a_view(idx):
    n = np.arange(np.prod(BASE_SHAPE), dtype=np.float64).reshape(BASE_SHAPE)
    u = uma.asarray(n.copy())
    v = u[idx]
    nv = n[idx]
    assert isinstance(v, uma.Array)
    assert v.shape == nv.shape
    assert v.dtype == nv.dtype
    assert v.tolist() == nv.tolist()
    for s, ns, d in zip(v.strides, nv.strides, nv.shape):
        if d > 1:
            assert s == ns, (v.strides, nv.strides)
    # a view: writing through it changes the base, exactly where NumPy's view does
    v[...] = -1.0
    n[idx] = -1.0
    assert u.tolist() == n.tolist()


@pytest.mark.parametrize("idx", [(1, 2, 3, 0), (-1, -1, -1, -1), (0, 1, -2, 3)], ids=repr)
def test_full_integer_index(idx):
    n = np.arange(np.prod(BASE_SHAPE), dtype=np.int32).reshape(BASE_SHAPE)
    u = uma.asarray(n.copy())
    r = u[idx]
    assert np.asarray(r).item() == n[idx]
    if isinstance(r, uma.Array):  # Array-API style 0-d result
        assert r.shape == () and r.dtype == np.int32
    u[idx] = 99
    n[idx] = 99
    assert u.tolist() == n.tolist()


def test_index_of_view_of_view():
    n = np.arange(60.0).reshape(3, 4, 5)
    u = uma.asarray(n.copy())
    v = u[::-1][1:, ::-2][..., 1::2][None, 0]
    nv = n[::-1][1:, ::-2][..., 1::2][None, 0]
    assert v.tolist() == nv.tolist() and v.shape == nv.shape
    v[...] = 0.0
    nv[...] = 0.0
    assert u.tolist() == n.tolist()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_indexing_every_dtype(dtype, rng):
    n = _values(dtype, (4, 5), rng)
    u = uma.asarray(n)
    for idx in [(slice(None, None, -1), 2), (slice(1, None, 2), slice(None, None, -2)), (None, Ellipsis, 3)]:
        v = u[idx]
        assert v.dtype.name == dtype
        _same_python(v.tolist(), n[idx].tolist())


def test_indexing_0d():
    n = np.array(3.5)
    u = uma.asarray(n)
    assert np.asarray(u[()]).item() == 3.5
    assert u[...].shape == () and u[...].tolist() == 3.5
    assert u[None].shape == (1,)
    assert u[None, ..., None].shape == (1, 1)
    with pytest.raises(IndexError):
        u[0]


BAD_INDICES = [(2, IndexError), (-3, IndexError), ((0, 0, 0, 0, 0), IndexError), ((Ellipsis, Ellipsis), IndexError),
               (1.5, IndexError), ("a", IndexError), ((0, 9), IndexError), (slice(None, None, 0), ValueError),
               ((slice(None), slice(None), slice(None), slice(None), None, 0), IndexError)]


@pytest.mark.parametrize("idx,err", BAD_INDICES, ids=[repr(i) for i, _ in BAD_INDICES])
def test_bad_index(idx, err):
    n = np.zeros(BASE_SHAPE)
    with pytest.raises(err):
        n[idx]  # the oracle agrees
    u = uma.asarray(n)
    with pytest.raises(err):
        u[idx]
    with pytest.raises(err):
        u[idx] = 1.0


def test_view_keeps_base_alive():
    u = uma.asarray(np.arange(10.0))
    v = u[2:5]
    del u
    gc.collect()
    assert v.tolist() == [2.0, 3.0, 4.0]


# --------------------------------------------------------------------------- setitem

SETITEM_CASES = [
    (Ellipsis, 7.0), (1, 3.0), ((0, slice(None, None, -1)), 2.0), ((slice(None), 1), [1.0, 2.0, 3.0, 4.0]),
    (slice(None), np.arange(4.0)), ((Ellipsis, 0), np.arange(3.0)), ((0, 0), np.float32(2.5)),
    ((slice(None, None, -1), slice(1, None, 2)), np.array([[[1.0]], [[2.0]]])), ((None, 1), [[[9.0]]]),
    (Ellipsis, np.arange(12.0).reshape(3, 4)[::-1]), ((1, 2, 3), 5), (Ellipsis, True),
]


@pytest.mark.parametrize("idx,value", SETITEM_CASES, ids=[repr(i) for i, _ in SETITEM_CASES])
@pytest.mark.parametrize("dtype", ["float64", "int32", "float32", "bool"])
def test_setitem_broadcasting(idx, value, dtype):
    n = np.zeros((2, 3, 4), dtype=dtype)
    u = uma.asarray(np.zeros((2, 3, 4), dtype=dtype))
    numpy_quiet(lambda: n.__setitem__(idx, value))
    u[idx] = value
    assert_matches(u, n, rtol=0, atol=0)
    # the same with the value as a uma array
    n2 = np.zeros((2, 3, 4), dtype=dtype)
    u2 = uma.asarray(np.zeros((2, 3, 4), dtype=dtype))
    numpy_quiet(lambda: n2.__setitem__(idx, value))
    u2[idx] = uma.asarray(np.asarray(value))
    assert_matches(u2, n2, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_setitem_every_dtype(dtype):
    n = np.zeros(5, dtype=np_dtype(dtype))
    u = uma.zeros(5, dtype=dtype)
    for idx, val in [(1, 1), (slice(3, None), 3), (slice(None, None, -4), True)]:
        n[idx] = val
        u[idx] = val
    _same_python(u.tolist(), n.tolist())


@pytest.mark.parametrize("src,dst", ASTYPE_PAIRS, ids=[f"{a}->{b}" for a, b in ASTYPE_PAIRS])
def test_setitem_array_value_casts_between_all_dtypes(src, dst):
    """Assigning an array of one dtype into another converts like NumPy (storage, not compute),
    with NumPy's ComplexWarning where the imaginary parts are dropped."""
    n = _astype_source(src)
    expected = np.zeros(n.shape, dtype=np_dtype(dst))
    with warnings.catch_warnings(record=True) as oracle, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        expected[...] = n
    u = uma.zeros(n.shape, dtype=dst)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        u[...] = uma.asarray(n)
    complex_warnings = [[w for w in ws if issubclass(w.category, np.exceptions.ComplexWarning)] for ws in (seen, oracle)]
    assert len(complex_warnings[0]) == len(complex_warnings[1])
    assert_matches(u, expected, rtol=0, atol=0)
    r = uma.zeros((2,) + n.shape, dtype=dst)
    r[:, ::-1] = uma.asarray(n)  # broadcast over a new axis into a reversed view
    e2 = np.zeros((2,) + n.shape, dtype=np_dtype(dst))
    numpy_quiet(lambda: e2.__setitem__((slice(None), slice(None, None, -1)), n))
    assert_matches(r, e2, rtol=0, atol=0)


@pytest.mark.parametrize("src", ["complex64", "complex128", "float64"])
def test_asarray_with_dtype_warns_like_numpy(src):
    """asarray(x, dtype=...) of complex values to a real or integer dtype keeps the real parts
    with NumPy's ComplexWarning, as numpy.asarray(x, dtype) does, whatever x is (a NumPy array,
    a uma array, a DLPack producer); copy=False refuses with CopyError, without a warning."""
    n = _astype_source(src)
    sources = [n, uma.asarray(n)]
    try:
        import torch
        sources.append(torch.from_numpy(n.copy()))
    except ImportError:
        pass
    for dst in ALL_DTYPES:
        with warnings.catch_warnings(record=True) as oracle, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            expected = np.asarray(n, dtype=np_dtype(dst))
        want = sum(issubclass(w.category, np.exceptions.ComplexWarning) for w in oracle)
        for x in sources:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = uma.asarray(x, dtype=dst)
            assert sum(issubclass(w.category, np.exceptions.ComplexWarning) for w in seen) == want, (type(x), dst)
            assert_matches(got, expected, rtol=0, atol=0)
        if dst != src:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with pytest.raises(uma.CopyError):
                    uma.asarray(n, dtype=dst, copy=False)


@pytest.mark.parametrize("value", [5.0, 7, np.nan, [0, 1, 2], [0, 1, 5], None, True, False, 2 + 0j])
def test_contains_like_numpy(value):
    """`value in a` is NumPy's (a == value).any(), on every dtype of the suite."""
    for dt in ("float64", "int32", "bool", "complex64"):
        n = np.arange(6).reshape(2, 3).astype(dt)
        assert (value in uma.asarray(n)) == (value in n), (value, dt)
    assert (1 in uma.asarray(np.zeros(0))) is False
    with pytest.raises(ValueError, match="could not be broadcast"):
        [1, 2] in uma.asarray(np.zeros((2, 3)))  # noqa: B015


@pytest.mark.parametrize("spec", ["", ".2f", "10.3e", "+", ">8"])
def test_format_like_numpy(spec):
    """format(a, spec): a 0-d array formats its element as NumPy's does; another array only with
    an empty spec."""
    for n in (np.array(3.14159), np.array(-7), np.array(True), np.arange(3.0)):
        try:
            want = format(n, spec)
        except (TypeError, ValueError) as err:
            with pytest.raises(type(err)):
                format(uma.asarray(n), spec)
        else:
            assert format(uma.asarray(n), spec) == want, (n, spec)


def test_divmod_like_numpy():
    """divmod(a, b) and divmod(b, a) are NumPy's (a // b, a % b), integer and float, with
    zeros, negatives and Python scalars."""
    x = np.array([-7, -3, 0, 3, 7, 9])
    y = np.array([2, -2, 3, -3, 0, 4])
    cases = [(x, y), (x, 3), (7, x[x != 0]), (x.astype(float), y.astype(float)), (x.astype(float), -2.5)]
    for a, b in cases:
        with np.errstate(all="ignore"):
            q, r = divmod(a, b)
        ua = uma.asarray(a) if isinstance(a, np.ndarray) else a
        ub = uma.asarray(b) if isinstance(b, np.ndarray) else b
        uq, ur = divmod(ua, ub)
        assert_matches(uq, q, rtol=0, atol=0)
        assert_matches(ur, r, rtol=0, atol=0)


def test_setitem_complex_warning_as_error_writes_nothing():
    """With warnings as errors, a complex value assigned into a real array raises NumPy's
    ComplexWarning before anything is written."""
    u = uma.asarray(np.arange(4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(np.exceptions.ComplexWarning, match="discards the imaginary part"):
            u[1:3] = np.array([5 + 1j, 6 - 1j])
    assert u.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_setitem_casts_like_numpy():
    n = np.zeros(4, dtype=np.int32)
    u = uma.zeros(4, dtype="int32")
    for idx, val in [(0, 2.7), (1, -2.7), (slice(2, None), np.array([5.9, -0.5])), (slice(2, 3), uma.asarray([7.99]))]:
        n[idx] = np.asarray(val)
        u[idx] = val
    assert_matches(u, n)


@pytest.mark.parametrize("dtype,value", [("int8", 300), ("uint8", -1), ("int32", 2**40), ("int64", 2**64),
                                         ("uint64", -1)])
def test_setitem_out_of_range_python_int_overflow_error(dtype, value):
    n = np.zeros(3, dtype=dtype)
    with pytest.raises(OverflowError):
        n[0] = value  # the oracle (NumPy 2)
    u = uma.zeros(3, dtype=dtype)
    with pytest.raises(OverflowError):
        u[0] = value
    assert u.tolist() == [0, 0, 0]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64"])
@pytest.mark.parametrize("key,value", [
    (slice(1, 3), [1, 300]), ([1, 2], [1, 300]), (Ellipsis, [300, 1, 2]), (slice(0, 2), [-1, 2]),
    (slice(0, 2), [2**40, 1]), (slice(0, 2), [1e30, 2]), (slice(0, 2), [np.nan, 2]), (slice(0, 2), [2.7, -1.5]),
    (np.array([True, False, True]), [-1, 5]), (0, np.int64(300)), (0, np.int64(-1)), (0, np.uint64(2**64 - 1)),
    (0, np.float64(1e30)), (0, np.float64(np.nan)), (0, np.float32(2.7)), (0, np.bool_(True)),
    (slice(0, 2), np.array([1, 300]))])
def test_setitem_converts_sequences_and_numpy_scalars_into_integer_arrays_as_numpy(dtype, key, value):
    # NumPy range-checks a sequence's elements (OverflowError, ValueError for NaN) and casts an
    # array unsafely. A real NumPy scalar converts as the Python number it holds: NumPy 2 does so
    # into signed integer arrays (checked here) but wraps it into unsigned ones, where uma
    # refuses instead (no silent wrap). A refused assignment leaves the array as it was.
    def outcome(v):
        n = np.arange(3, dtype=dtype)
        try:
            numpy_quiet(lambda: n.__setitem__(key, v))
            return n
        except (OverflowError, ValueError) as e:
            return type(e)

    scalar = isinstance(value, np.generic)
    expected = outcome(value.item() if scalar else value)  # the oracle (NumPy 2)
    if scalar and np.dtype(dtype).kind == "i":
        got = outcome(value)
        assert got is expected if isinstance(expected, type) else np.array_equal(got, expected)
    u = uma.asarray(np.arange(3, dtype=dtype))
    if isinstance(expected, type):
        e = expected
        with pytest.raises(e):
            u[key] = value
        assert u.tolist() == [0, 1, 2]
    else:
        numpy_quiet(lambda: u.__setitem__(key, value))
        assert_matches(u, expected)


@pytest.mark.parametrize("value", [[2**64], [[1, 2], [3, 2**64 + 5]], [-2**63 - 1, 0], 2**70])
def test_asarray_int_beyond_64_bits_names_the_value(value):
    """NumPy makes an object array of such ints (uma has no object dtype); uma raises
    OverflowError naming the first int that fits neither int64 nor uint64."""
    assert np.asarray(value).dtype == object  # the oracle: no 64-bit dtype holds it
    bad = next(v for v in np.asarray(value, dtype=object).flat if not -2**63 <= v < 2**64)
    with pytest.raises(OverflowError, match=str(bad)):
        uma.asarray(value)
    with pytest.raises(OverflowError, match=str(bad)):
        uma.shared(value)


@pytest.mark.parametrize("idx,value_shape", [(Ellipsis, (3,)), (0, (2, 4)), ((slice(None), 0), (3,)), (1, (4, 1))])
def test_setitem_shape_mismatch_value_error(idx, value_shape):
    n = np.zeros((2, 3, 4))
    with pytest.raises(ValueError):
        n[idx] = np.ones(value_shape)
    u = uma.zeros((2, 3, 4))
    with pytest.raises(ValueError):
        u[idx] = uma.ones(value_shape)
    assert u.tolist() == n.tolist()


def test_setitem_overlapping_source_and_destination():
    n = np.arange(8.0)
    u = uma.asarray(n.copy())
    n[1:] = n[:-1]
    u[1:] = u[:-1]
    assert u.tolist() == n.tolist()
    n[::-1] = n.copy()
    u[::-1] = u
    assert u.tolist() == n.tolist()
    m = np.arange(16.0).reshape(4, 4)
    um = uma.asarray(m.copy())
    m[...] = m.T.copy()
    um[...] = um.T
    assert um.tolist() == m.tolist()


@pytest.mark.parametrize("case", ["reversed", "transposed", "strided-shift", "second-import", "uma-memory"])
def test_setitem_source_sharing_memory_through_another_import(case):
    """A source that is another import of the destination's memory (its own storage, the same
    bytes) is read before anything is written, as NumPy's assignment does."""
    if case == "uma-memory":
        u = uma.arange(9.0).reshape(3, 3) + 0
        want = np.asarray(u).T.copy()
        u[...] = np.asarray(u).T  # the NumPy view shares u's memory
        np.testing.assert_array_equal(np.asarray(u), want)
        return
    n = np.arange(9.0).reshape(3, 3) if case == "transposed" else np.arange(10.0)
    a = uma.asarray(n)  # shares n's memory
    want = n.copy()
    if case == "reversed":
        want[...] = want[::-1].copy()
        a[...] = n[::-1]
    elif case == "transposed":
        want[...] = want.T.copy()
        a[...] = n.T
    elif case == "strided-shift":
        want[2::2] = want[:-2:2].copy()
        a[2::2] = n[:-2:2]
    else:
        want[...] = want[::-1].copy()
        a[...] = uma.asarray(n[::-1])  # a second adoption of n's buffer
    np.testing.assert_array_equal(n, want)


def test_setitem_read_only_value_error():
    n = np.arange(4.0)
    n.flags.writeable = False
    u = uma.asarray(n)
    assert u.writable is False
    for idx in [0, Ellipsis, slice(1, 3)]:
        with pytest.raises(ValueError):
            u[idx] = 1.0
    v = u[::-1]
    assert v.writable is False
    with pytest.raises(ValueError):
        v[0] = 5.0
    assert n.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_broadcast_to_result_is_read_only_like_numpy():
    nb = np.broadcast_to(np.arange(3.0), (2, 3))
    assert not nb.flags.writeable
    b = uma.broadcast_to(uma.asarray(np.arange(3.0)), (2, 3))
    assert b.writable is False
    with pytest.raises(ValueError):
        b[0, 0] = 1.0


# --------------------------------------------------------------------------- in-place operators

INPLACE = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul), ("/=", operator.itruediv),
           ("//=", operator.ifloordiv), ("%=", operator.imod), ("**=", operator.ipow)]
INPLACE_OPERANDS = [
    ("float64", "float64", (3, 4)), ("float64", "int32", (4,)), ("float32", "float64", (3, 4)),
    ("int32", "int32", (3, 1)), ("int32", "float64", (4,)), ("int64", "int32", ()), ("bool", "bool", (4,)),
    ("int32", "bool", (3, 4)), ("float32", "py_float", None), ("int32", "py_float", None), ("int32", "py_int", None),
    ("bool", "py_int", None), ("float64", "py_int", None), ("int64", "int64", (2, 3, 4)),
]


@pytest.mark.parametrize("da,db,bshape", INPLACE_OPERANDS, ids=[f"{a}-{b}-{s}" for a, b, s in INPLACE_OPERANDS])
@pytest.mark.parametrize("name,iop", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_operators_like_numpy(name, iop, da, db, bshape, rng):
    """Same result or same error as NumPy; on success the array object and its memory are the same."""
    na = random_data(da, (3, 4), rng, "positive" if name == "**=" else "general")
    if db == "py_float":
        nb = ub = 1.5
    elif db == "py_int":
        nb = ub = 2
    else:
        nb = random_data(db, bshape, rng, "exponent" if name == "**=" else "nonzero")
        ub = uma.asarray(nb)
    base = uma.asarray(na.copy())
    view = base[...]  # another handle onto the same memory
    expected = na.copy()
    try:
        numpy_quiet(lambda: iop(expected, nb))
    except Exception as e:
        with pytest.raises(numpy_error_type(e)):
            iop(base, ub)
        assert_matches(base, na)  # a failing in-place op changes nothing
        return
    r = iop(base, ub)
    assert r is base
    assert_matches(base, expected)
    assert_matches(view, expected)  # written into the array's own memory


def test_inplace_writes_into_adopted_numpy_memory():
    """DESIGN.md: explicit in-place writes go into the array's own memory, adopted or not."""
    n = np.arange(6.0)
    u = uma.asarray(n)
    u += 1.0
    assert n.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    u[::2] *= 10.0
    assert n.tolist() == [10.0, 2.0, 30.0, 4.0, 50.0, 6.0]
    u[0] = -1.0
    assert n[0] == -1.0


def test_inplace_on_strided_views_writes_base():
    n = np.arange(12.0).reshape(3, 4)
    u = uma.asarray(n.copy())
    v = u[::-1, ::2]
    v += 100.0
    n[::-1, ::2] += 100.0
    assert u.tolist() == n.tolist()
    t = u.T
    t *= 2.0
    n.T[...] *= 2.0
    assert u.tolist() == n.tolist()


def test_inplace_overlap_with_operand():
    n = np.arange(6.0)
    u = uma.asarray(n.copy())
    n += n[::-1]
    u += u[::-1]
    assert u.tolist() == n.tolist()
    m = np.arange(9.0).reshape(3, 3)
    um = uma.asarray(m.copy())
    m += m.T
    um += um.T
    assert um.tolist() == m.tolist()


def test_inplace_read_only_value_error():
    n = np.arange(3.0)
    n.flags.writeable = False
    u = uma.asarray(n)
    for iop in (operator.iadd, operator.isub, operator.imul, operator.itruediv):
        with pytest.raises(ValueError):
            iop(u, 1.0)
    assert n.tolist() == [0.0, 1.0, 2.0]


def test_inplace_cannot_grow_shape():
    n = np.zeros(4)
    with pytest.raises(ValueError):
        n += np.ones((3, 4))
    u = uma.zeros(4)
    with pytest.raises(ValueError):
        u += uma.ones((3, 4))
    assert u.shape == (4,) and u.tolist() == [0.0] * 4


# --------------------------------------------------------------------------- methods, writable, copy

def test_copy_is_independent_and_contiguous():
    n = np.arange(12.0).reshape(3, 4)
    u = uma.asarray(n)
    c = u[::-1, ::2].copy()
    assert c.tolist() == n[::-1, ::2].tolist()
    assert c.strides == np.ascontiguousarray(n[::-1, ::2]).strides
    c[0, 0] = -5.0
    assert n[2, 0] == 8.0
    assert c.writable


def test_copy_of_read_only_is_writable():
    n = np.arange(3.0)
    n.flags.writeable = False
    c = uma.asarray(n).copy()
    assert c.writable
    c[0] = 9.0
    assert n[0] == 0.0


def test_T_matches_numpy():
    n = np.arange(24).reshape(2, 3, 4)
    u = uma.asarray(n)
    assert_matches(u.T, n.T)
    assert u.T.strides == n.T.strides


def test_reshape_and_transpose_methods():
    n = np.arange(24.0).reshape(2, 3, 4)
    u = uma.asarray(n)
    assert_matches(u.reshape(4, 6), n.reshape(4, 6))
    assert_matches(u.reshape((6, -1)), n.reshape((6, -1)))
    assert_matches(u.transpose(2, 0, 1), n.transpose(2, 0, 1))
    assert_matches(u.transpose(), n.transpose())


def test_writable_flag_follows_views():
    u = uma.zeros((3, 3))
    assert u.writable and u[1:].writable and u.T.writable
    n = np.zeros((3, 3))
    n.flags.writeable = False
    r = uma.asarray(n)
    assert not r.writable and not r[1:].writable and not r.T.writable and not r[None].writable


def test_methods_reductions_return_arrays():
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n)
    check_like_numpy(lambda: n.sum(), lambda: u.sum())
    check_like_numpy(lambda: n.mean(axis=0), lambda: u.mean(axis=0))
    check_like_numpy(lambda: n.max(axis=(0, 1), keepdims=True), lambda: u.max(axis=(0, 1), keepdims=True))
    check_like_numpy(lambda: n.min(axis=-1), lambda: u.min(axis=-1))
    check_like_numpy(lambda: n.argmax(axis=1), lambda: u.argmax(axis=1))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_array_from_numpy_roundtrip_values(dtype, rng):
    n = _values(dtype, (3, 4), rng)
    assert_matches(uma.asarray(n), n, rtol=0, atol=0)


def test_repr_of_large_array_is_summarized_like_numpy():
    n = np.zeros(10000)
    r = repr(uma.asarray(n))
    assert "..." in repr(n) and "..." in r
    assert len(r) < 4 * len(repr(n)), r


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool", "complex64"])
def test_pickle_and_deepcopy_round_trip_values_dtype_and_shape(dtype):
    import copy
    import pickle
    n = np.arange(6).reshape(2, 3).T.astype(dtype)
    u = uma.asarray(n)
    for v in (pickle.loads(pickle.dumps(u)), copy.deepcopy(u)):
        assert v.dtype == u.dtype and v.shape == u.shape
        np.testing.assert_array_equal(np.asarray(v), n)
        assert not np.shares_memory(np.asarray(v), n)


@pytest.mark.parametrize("value,exc", [(float("nan"), ValueError), (float("inf"), OverflowError),
                                       (-float("inf"), OverflowError), (1e30, OverflowError)])
def test_storing_non_integral_floats_into_int_arrays_raises_like_numpy(value, exc):
    n = np.arange(3)
    with pytest.raises(exc):
        n[0] = value  # the oracle (NumPy 2)
    u = uma.asarray(np.arange(3))
    with pytest.raises(exc):
        u[0] = value
    np.testing.assert_array_equal(np.asarray(u), np.arange(3))  # nothing written
    with pytest.raises(exc):
        uma.full((2,), value, dtype="int64")


def test_storing_complex_into_real_array_raises_type_error():
    with pytest.raises(TypeError):
        np.arange(3.0)[0] = 1 + 1j  # the oracle (NumPy 2)
    u = uma.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match="complex"):
        u[0] = 1 + 1j
    np.testing.assert_array_equal(np.asarray(u), np.arange(3.0))


def test_iteration_follows_numpy():
    with pytest.raises(TypeError, match="0-d"):
        list(uma.asarray(np.float64(1)))
    n = np.arange(6).reshape(2, 3)
    rows = list(uma.asarray(n))
    assert len(rows) == 2
    for r, e in zip(rows, n):
        np.testing.assert_array_equal(np.asarray(r), e)


def test_wrongly_typed_arguments_are_type_errors_not_internal_errors():
    a = uma.arange(6)
    for bad in (lambda: a.reshape(2.0, 3), lambda: a.reshape("a"), lambda: a.sum(axis=1.0),
                lambda: a.sum(axis="x")):
        with pytest.raises(TypeError):
            bad()


def test_impossible_allocation_is_memory_error():
    with pytest.raises(MemoryError):
        uma.zeros((2**45,))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_real_imag_of_complex_are_writable_views(dtype):
    """numpy.ndarray.real / .imag: views of the complex array's floats, sharing its memory."""
    n = (np.arange(6) + 1j * np.arange(6, 12)).astype(dtype).reshape(2, 3)[:, ::2]
    u = uma.asarray(n.copy())
    re, im = u.real, u.imag
    assert re.dtype == n.real.dtype and im.dtype == n.imag.dtype
    np.testing.assert_array_equal(np.asarray(re), n.real)
    np.testing.assert_array_equal(np.asarray(im), n.imag)
    im[...] = -1
    re[0, 0] = 42
    expected = n.copy()
    expected.imag = -1
    expected.real[0, 0] = 42
    np.testing.assert_array_equal(np.asarray(u), expected)


def test_real_imag_of_read_only_complex_stay_read_only():
    n = np.array([1 + 2j, 3 - 4j])
    n.flags.writeable = False
    u = uma.asarray(n)
    with pytest.raises(ValueError):
        u.real[0] = 0
    assert n[0] == 1 + 2j


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_real_imag_of_real_arrays(dtype):
    n = np.array([1, 0, 1], dtype=dtype)
    u = uma.asarray(n)
    assert u.real is u
    im = u.imag
    assert im.dtype == n.imag.dtype
    np.testing.assert_array_equal(np.asarray(im), n.imag)
    with pytest.raises(ValueError):
        im[0] = 1


def test_truth_value_of_empty_array():
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(uma.zeros(0))
    with pytest.raises(ValueError, match="more than one element"):
        bool(uma.zeros(2))
    assert bool(uma.ones(1)) is True


@pytest.mark.parametrize("convert", [int, float, complex])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (2,), (0,), (3, 1)])
def test_python_number_conversion_follows_the_installed_numpy(convert, shape):
    """int(), float(), complex() of an array give what the installed NumPy gives for an array of
    the same shape and values: the element, NumPy's warning with it, or NumPy's error type."""
    n = np.full(shape, 3.0)
    with warnings.catch_warnings(record=True) as np_warned:
        warnings.simplefilter("always")
        try:
            expected, np_error = convert(n), None
        except Exception as e:  # noqa: BLE001 - the oracle's outcome, whatever it is
            expected, np_error = None, type(e)
    u = uma.asarray(n)
    with warnings.catch_warnings(record=True) as uma_warned:
        warnings.simplefilter("always")
        if np_error is not None:
            with pytest.raises(np_error):
                convert(u)
        else:
            got = convert(u)
            assert type(got) is type(expected) and got == expected
    assert [w.category for w in uma_warned] == [w.category for w in np_warned]


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float32", "complex128", "bool"])
def test_python_number_conversion_of_0d_arrays(dtype):
    n = np.asarray(np.ones((), dtype) * 2 if dtype != "bool" else True)
    u = uma.asarray(n)
    for convert in (int, float, complex):
        try:
            expected = convert(n)
        except TypeError:
            with pytest.raises(TypeError):
                convert(u)
            continue
        got = convert(u)
        assert type(got) is type(expected) and got == expected
