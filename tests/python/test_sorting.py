"""sort, argsort, unique_all/counts/inverse/values, nonzero and searchsorted (Array API standard
2025.12) against NumPy on every uma dtype.

NumPy is the oracle: ``np.argsort(kind="stable")`` for the order (NaN last, complex
lexicographic with NumPy's NaN classes), array-api-strict's ``flip(argsort(flip(x)))`` for a
stable descending argsort, ``np.unique(..., equal_nan=False)`` for the sets (each NaN distinct,
-0.0 and 0.0 one value), ``np.nonzero`` and ``np.searchsorted``. float16 and bfloat16 are
compared through their exact float32 values (bfloat16 has no NumPy sort of its own).
"""
import numpy as np
import pytest

import uma
from conftest import ALL_DTYPES, np_dtype

GPU = uma.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
# The tests with a `device` parameter run on cuda arrays too where a GPU is usable (the cuda
# kernels of src/kernels/cuda/sort.cu), with the same oracle.
DEVICES = ["cpu", pytest.param("cuda", marks=needs_gpu)]


def ua(x, device):
    """x as a uma array on `device` (a uma array moves there)."""
    if isinstance(x, uma.Array):
        return x.to_device(device)
    return uma.asarray(x, device=device)

SHAPES = [(0,), (1,), (7,), (40,), (3, 0), (0, 4), (4, 9), (2, 3, 5), (1, 1, 1), (3, 1, 6)]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]


def data(dtype, shape, rng, ties=True):
    """A NumPy array of `dtype` and `shape`: few distinct values (ties) and, for floats, NaN,
    +-inf and both zeros; complex numbers with NaN in either part."""
    dt = np_dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, info.max - 1], dtype=dt)
        if dt.kind == "i":
            pool = np.concatenate([pool, np.array([-1, -2], dtype=dt)])
        if not ties:
            return rng.integers(info.min // 2, info.max // 2, size=shape, dtype=dt, endpoint=True)
        return rng.choice(pool, size=shape)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -3.0])
    if dtype in FLOATS:  # (ml_dtypes' bfloat16 has kind "V")
        v = rng.choice(special, size=shape)
        return v.astype(dt)
    out = np.empty(shape, dtype=dt)  # parts set one by one: no NaN spreading of complex arithmetic
    out.real = rng.choice(special, size=shape)
    out.imag = rng.choice(np.array([0.0, -0.0, 1.0, np.nan, -1.0]), size=shape)
    return out


def oracle_view(x):
    """x as NumPy sorts it: float16/bfloat16 through their exact float32 values."""
    return x.astype(np.float32) if x.dtype.name in ("float16", "bfloat16") else x


def np_argsort(x, axis, descending):
    """The stable argsort NumPy (ascending) and array-api-strict (descending) give."""
    v = oracle_view(x)
    if not descending:
        return np.argsort(v, axis=axis, kind="stable")
    res = np.flip(np.argsort(np.flip(v, axis=axis), axis=axis, kind="stable"), axis=axis)
    return x.shape[axis] - 1 - res


def bits(a):
    """The bytes of each element as unsigned integers (tells -0.0 from 0.0, NaN from NaN)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        return a.view(np.dtype(f"u{a.dtype.itemsize // 2}"))
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind != "b" else a.view(np.uint8)


def as_np(u):
    """A uma result as a NumPy array (moved to the host first; its device is the input's)."""
    return np.asarray(u.to_device("cpu"))


def test_complex_helper_builds_exact_values(rng):
    x = data("complex128", (50,), rng)
    assert np.isnan(x.real).any() and np.isnan(x.imag).any() and (np.signbit(x.real) & (x.real == 0)).any()


# ---- sort and argsort -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_stable_argsort_and_sort_every_axis(dtype, shape, descending, rng, device):
    x = data(dtype, shape, rng)
    u = ua(x, device)
    for axis in range(-len(shape), len(shape)):
        idx = uma.argsort(u, axis=axis, descending=descending)
        expected = np_argsort(x, axis, descending)
        assert idx.dtype == uma.int64 and tuple(idx.shape) == shape
        np.testing.assert_array_equal(as_np(idx), expected)
        s = uma.sort(u, axis=axis, descending=descending)
        assert s.dtype == u.dtype and tuple(s.shape) == shape
        # stable: the very elements of x in the oracle's order (signs of zeros, NaN bits)
        np.testing.assert_array_equal(bits(as_np(s)), bits(np.take_along_axis(x, expected, axis=axis)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_unstable_sort_orders_values(dtype, descending, rng, device):
    x = data(dtype, (6, 33), rng)
    u = ua(x, device)
    for axis in (0, 1):
        want = np.take_along_axis(x, np_argsort(x, axis, descending), axis=axis)
        s = as_np(uma.sort(u, axis=axis, descending=descending, stable=False))
        np.testing.assert_array_equal(oracle_view(s), oracle_view(want))  # == : -0.0 equals 0.0
        idx = as_np(uma.argsort(u, axis=axis, descending=descending, stable=False))
        assert (np.sort(idx, axis=axis) == np.arange(x.shape[axis]).reshape((-1, 1) if axis == 0 else (1, -1))).all()
        np.testing.assert_array_equal(oracle_view(np.take_along_axis(x, idx, axis=axis)), oracle_view(want))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("device", DEVICES)
def test_many_ties_keep_their_order(dtype, rng, device):
    # Runs long enough that the sorts leave insertion sort: ties across merge passes.
    x = (rng.integers(0, 3, size=(3, 2000))).astype(np_dtype(dtype))
    for descending in (False, True):
        got = as_np(uma.argsort(ua(x, device), descending=descending))
        np.testing.assert_array_equal(got, np_argsort(x, -1, descending))


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float64", "complex128"])
@pytest.mark.parametrize("device", DEVICES)
def test_large_arrays_rows_across_threads(dtype, rng, device):
    x = data(dtype, (300, 700), rng, ties=False)
    u = ua(x, device)
    for axis in (0, 1):
        np.testing.assert_array_equal(as_np(uma.argsort(u, axis=axis)), np_argsort(x, axis, False))


@pytest.mark.parametrize("device", DEVICES)
def test_special_float_placement(device):
    x = np.array([np.nan, 1.0, -np.inf, -0.0, 0.0, np.inf, -np.nan, -1.0])
    s = as_np(uma.sort(ua(x, device)))
    np.testing.assert_array_equal(s, np.sort(x))
    assert np.signbit(s[2]) and not np.signbit(s[3])  # stable: -0.0 came first
    d = as_np(uma.sort(ua(x, device), descending=True))
    assert np.isnan(d[:2]).all() and d[2] == np.inf and d[-1] == -np.inf
    assert np.signbit(d[4]) and not np.signbit(d[5]) and d[4] == 0 and d[5] == 0  # ties in input order


@pytest.mark.parametrize("device", DEVICES)
def test_complex_order_is_numpys(device):
    v = [complex(np.nan, 0), complex(1, np.nan), complex(1, 2), complex(0, 5), complex(np.nan, np.nan),
         complex(1, 1), complex(np.nan, -1), complex(-1, np.nan)]
    x = np.array(v, dtype=np.complex128)
    np.testing.assert_array_equal(as_np(uma.argsort(ua(x, device))), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("layout", ["transposed", "negative_stride", "broadcast"])
@pytest.mark.parametrize("device", DEVICES)
def test_strided_inputs(layout, rng, device):
    base = data("float64", (6, 10), rng)
    if layout == "transposed":
        x, u = base.T, ua(base, device).T
    elif layout == "negative_stride":
        x, u = base[::-1, ::-2], ua(base, device)[::-1, ::-2]
    else:
        x, u = np.broadcast_to(base[:1], (4, 10)), uma.broadcast_to(ua(base[:1], device), (4, 10))
    for axis in (0, 1):
        np.testing.assert_array_equal(as_np(uma.argsort(u, axis=axis)), np_argsort(x, axis, False))
        np.testing.assert_array_equal(as_np(uma.sort(u, axis=axis)), np.sort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("device", DEVICES)
def test_sort_reads_bool_bytes_and_writes_0_or_1(device):
    raw = np.array([0, 7, 0, 255, 1], dtype=np.uint8)
    u = ua(raw.view(np.bool_), device)
    s = as_np(uma.sort(u))
    np.testing.assert_array_equal(s.view(np.uint8), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(as_np(uma.argsort(u)), [0, 2, 1, 3, 4])


@pytest.mark.parametrize("device", DEVICES)
def test_sort_is_a_copy(device):
    x = ua(np.array([3.0, 1.0, 2.0]), device)
    s = uma.sort(x)
    s[0] = 10.0
    np.testing.assert_array_equal(as_np(x), [3.0, 1.0, 2.0])


@pytest.mark.parametrize("fn", [uma.sort, uma.argsort])
def test_sort_errors(fn):
    x = uma.asarray(np.arange(6.0).reshape(2, 3))
    for axis in (2, -3):
        with pytest.raises(np.exceptions.AxisError) as e:
            fn(x, axis=axis)
        with pytest.raises(np.exceptions.AxisError):
            np.sort(np.asarray(x), axis=axis)
        assert isinstance(e.value, IndexError) and str(axis) in str(e.value)
    with pytest.raises(np.exceptions.AxisError):  # 0-d: no axis to sort (NumPy too)
        fn(uma.asarray(np.float64(1.0)))
    with pytest.raises(np.exceptions.AxisError):
        np.sort(np.array(1.0), axis=-1)
    with pytest.raises(TypeError):
        fn(x, axis=1.5)
    with pytest.raises(TypeError):
        fn(x, descending=1)
    with pytest.raises(TypeError):
        fn(x, stable="yes")
    with pytest.raises(TypeError):
        fn(x, -1)  # axis is keyword-only


def test_sort_accepts_numpy_input():
    x = np.array([2, 1, 3], dtype=np.int16)
    got = uma.sort(x)
    assert isinstance(got, uma.Array) and got.dtype == uma.int16
    np.testing.assert_array_equal(as_np(got), [1, 2, 3])


# ---- unique_* ---------------------------------------------------------------------------------

UNIQUE_SHAPES = [(), (0,), (1,), (9,), (60,), (4, 0), (5, 7), (2, 3, 4)]


def np_unique(x):
    v = oracle_view(x).ravel()
    values, index, inverse, counts = np.unique(v, return_index=True, return_inverse=True, return_counts=True,
                                               equal_nan=False)
    return values, index, inverse.ravel(), counts


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", UNIQUE_SHAPES, ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_unique_all(dtype, shape, rng, device):
    x = data(dtype, shape, rng)
    r = uma.unique_all(ua(x, device))
    assert type(r).__name__ == "UniqueAllResult"
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    values, index, inverse, counts = np_unique(x)
    assert r.values.dtype == ua(x, device).dtype and r.values.ndim == 1
    for a in (r.indices, r.inverse_indices, r.counts):
        assert a.dtype == uma.int64
    assert tuple(r.inverse_indices.shape) == shape
    np.testing.assert_array_equal(oracle_view(as_np(r.values)), values)
    np.testing.assert_array_equal(as_np(r.indices), index)
    np.testing.assert_array_equal(as_np(r.inverse_indices).ravel(), inverse)
    np.testing.assert_array_equal(as_np(r.counts), counts)
    # the values are the first occurrences themselves (a -0.0 seen before 0.0 stays -0.0)
    np.testing.assert_array_equal(bits(as_np(r.values)), bits(x.ravel()[index]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_unique_counts_inverse_values(dtype, rng, device):
    x = data(dtype, (6, 11), rng)
    u = ua(x, device)
    values, _, inverse, counts = np_unique(x)
    c = uma.unique_counts(u)
    assert c._fields == ("values", "counts") and type(c).__name__ == "UniqueCountsResult"
    np.testing.assert_array_equal(oracle_view(as_np(c.values)), values)
    np.testing.assert_array_equal(as_np(c.counts), counts)
    i = uma.unique_inverse(u)
    assert i._fields == ("values", "inverse_indices") and type(i).__name__ == "UniqueInverseResult"
    assert tuple(i.inverse_indices.shape) == x.shape
    np.testing.assert_array_equal(as_np(i.inverse_indices).ravel(), inverse)
    v = uma.unique_values(u)
    assert isinstance(v, uma.Array) and v.ndim == 1
    np.testing.assert_array_equal(oracle_view(as_np(v)), values)


@pytest.mark.parametrize("device", DEVICES)
def test_unique_nans_distinct_and_signed_zeros_one(device):
    x = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, 0.0])
    r = uma.unique_all(ua(x, device))
    np.testing.assert_array_equal(as_np(r.values), [0.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(as_np(r.counts), [3, 1, 1, 1])
    np.testing.assert_array_equal(as_np(r.indices), [1, 4, 0, 3])
    c = np.array([complex(1, np.nan), complex(1, np.nan), complex(0, 0)])
    r = uma.unique_counts(ua(c, device))
    assert r.values.shape == (3,) and as_np(r.counts).tolist() == [1, 1, 1]


@pytest.mark.parametrize("device", DEVICES)
def test_unique_strided_input(rng, device):
    base = data("int32", (8, 6), rng)
    x, u = base[::-2, 1::2].T, ua(base, device)[::-2, 1::2].T
    values, index, inverse, counts = np_unique(x)
    r = uma.unique_all(u)
    np.testing.assert_array_equal(as_np(r.values), values)
    np.testing.assert_array_equal(as_np(r.indices), index)
    np.testing.assert_array_equal(as_np(r.inverse_indices), inverse.reshape(x.shape))


# ---- nonzero ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (13,), (4, 0), (5, 7), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("device", DEVICES)
def test_nonzero(dtype, shape, rng, device):
    x = data(dtype, shape, rng)
    got = uma.nonzero(ua(x, device))
    assert isinstance(got, tuple) and len(got) == len(shape)
    for g, e in zip(got, np.nonzero(oracle_view(x))):
        assert isinstance(g, uma.Array) and g.dtype == uma.int64
        np.testing.assert_array_equal(as_np(g), e)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_special_values(device):
    x = np.array([[0.0, -0.0, np.nan], [np.inf, 0.0, 1e-300]])
    for g, e in zip(uma.nonzero(ua(x, device)), np.nonzero(x)):
        np.testing.assert_array_equal(as_np(g), e)
    c = np.array([0j, complex(0, 1), complex(0, -0.0), complex(np.nan, 0)])
    np.testing.assert_array_equal(as_np(uma.nonzero(ua(c, device))[0]), [1, 3])
    raw = np.array([0, 3, 0, 200], dtype=np.uint8).view(np.bool_)
    np.testing.assert_array_equal(as_np(uma.nonzero(ua(raw, device))[0]), [1, 3])


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_strided_input(rng, device):
    base = data("float32", (6, 8), rng)
    x, u = base[::-1, ::3].T, ua(base, device)[::-1, ::3].T
    for g, e in zip(uma.nonzero(u), np.nonzero(x)):
        np.testing.assert_array_equal(as_np(g), e)


def test_nonzero_0d_is_a_value_error():
    with pytest.raises(ValueError, match="0-d"):
        uma.nonzero(uma.asarray(np.float64(1.0)))


# ---- searchsorted -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted(dtype, side, rng, device):
    raw = data(dtype, (25,), rng)
    x1 = np.take(raw, np_argsort(raw, 0, False))
    x2 = data(dtype, (3, 8), rng)
    got = uma.searchsorted(ua(x1, device), ua(x2, device), side=side)
    assert got.dtype == uma.int64 and tuple(got.shape) == x2.shape
    np.testing.assert_array_equal(as_np(got), np.searchsorted(oracle_view(x1), oracle_view(x2), side=side))
    # with a sorter on the unsorted x1
    sorter = np_argsort(raw, 0, False)
    got = uma.searchsorted(ua(raw, device), ua(x2, device), side=side, sorter=ua(sorter, device))
    np.testing.assert_array_equal(
        as_np(got), np.searchsorted(oracle_view(raw), oracle_view(x2), side=side, sorter=sorter))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_is_consistent_with_sort(side, rng, device):
    # The standard: inserting x2[j] at out[j] and sorting again gives the same array.
    x1 = np.sort(data("float64", (30,), rng))
    for v in (np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0):
        i = int(as_np(uma.searchsorted(ua(x1, device), ua(np.array([v]), device), side=side))[0])
        ins = np.insert(x1, i, v)
        np.testing.assert_array_equal(as_np(uma.sort(ua(ins, device))), ins)


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_scalars_empty_and_promotion(device):
    x1 = np.array([1, 3, 5, 7], dtype=np.int32)
    u = ua(x1, device)
    for v in (0, 3, 4.5, 8, True):
        got = uma.searchsorted(u, v, side="right")
        assert got.shape == () and got.dtype == uma.int64
        assert int(as_np(got)) == np.searchsorted(x1, v, side="right")
    x2 = np.array([2.5, 3.0, np.nan])
    np.testing.assert_array_equal(as_np(uma.searchsorted(u, ua(x2, device))), np.searchsorted(x1, x2))
    e = np.array([], dtype=np.float32)
    np.testing.assert_array_equal(as_np(uma.searchsorted(ua(e, device), ua(x2, device))), [0, 0, 0])
    got = uma.searchsorted(u, ua(np.zeros((2, 0)), device))
    assert got.shape == (2, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_errors(device):
    x1 = ua(np.array([1.0, 2.0, 3.0]), device)
    with pytest.raises(ValueError, match="1-d"):
        uma.searchsorted(ua(np.ones((2, 2)), device), 1.0)
    with pytest.raises(ValueError, match="1-d"):
        uma.searchsorted(ua(np.float64(1.0), device), 1.0)
    with pytest.raises(ValueError, match="side"):
        uma.searchsorted(x1, 1.0, side="middle")
    with pytest.raises(ValueError):
        np.searchsorted(np.array([1.0]), 1.0, side="middle")
    with pytest.raises(ValueError, match="sorter"):
        uma.searchsorted(x1, 1.0, sorter=ua(np.array([0, 1]), device))
    with pytest.raises(ValueError, match="sorter"):
        uma.searchsorted(x1, 1.0, sorter=ua(np.array([0, 1, 3]), device))
    with pytest.raises(ValueError, match="sorter"):  # NumPy checks only the indices its search reads
        uma.searchsorted(x1, 1.0, sorter=ua(np.array([-1, 1, 2]), device))
    with pytest.raises(TypeError, match="sorter"):
        uma.searchsorted(x1, 1.0, sorter=ua(np.array([0.0, 1.0, 2.0]), device))


# ---- the namespace and devices ----------------------------------------------------------------

def test_namespace_exports():
    for name in ("sort", "argsort", "unique_all", "unique_counts", "unique_inverse", "unique_values",
                 "nonzero", "searchsorted"):
        assert callable(getattr(uma, name))
        assert getattr(uma, name).__doc__ and "Array API standard" in getattr(uma, name).__doc__


@needs_gpu
def test_results_stay_on_the_cuda_device_and_mixed_devices_are_a_runtime_error():
    x = uma.asarray(np.array([3.0, 1.0, 2.0]), device="cuda")
    for r in (uma.sort(x), uma.argsort(x), uma.unique_values(x), uma.searchsorted(uma.sort(x), x),
              uma.unique_all(x).inverse_indices):
        assert str(r.device).startswith("cuda")
    with pytest.raises(RuntimeError, match="device"):
        uma.searchsorted(x, uma.asarray(np.array([1.0, 2.0])))
    with pytest.raises(ValueError, match="sorter index 5 at position 1"):
        uma.searchsorted(x, 1.0, sorter=uma.asarray(np.array([0, 5, 1]), device="cuda"))


@needs_gpu
def test_nonzero_on_cuda():
    x = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.float32)
    got = uma.nonzero(uma.asarray(x, device="cuda"))
    for g, e in zip(got, np.nonzero(x)):
        assert str(g.device).startswith("cuda")
        np.testing.assert_array_equal(np.asarray(g.to_device("cpu")), e)


def test_a_non_integer_axis_or_side_is_a_type_error_naming_it():
    x = uma.asarray(np.array([3.0, 1.0, 2.0]))
    for fn in (uma.sort, uma.argsort):
        for bad in (None, 1.0, "0", True):
            with pytest.raises(TypeError, match=f"{fn.__name__}: axis must be an integer, got"):
                fn(x, axis=bad)
    with pytest.raises(TypeError, match="searchsorted: side must be 'left' or 'right', got NoneType None"):
        uma.searchsorted(x, 1.0, side=None)
    np.testing.assert_array_equal(np.asarray(uma.sort(x, axis=np.int64(0))), np.sort(np.array([3.0, 1.0, 2.0])))
