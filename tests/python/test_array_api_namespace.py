"""uma as a Python Array API standard namespace (python/uma/_array_api.py): the namespace
protocol, inspection, finfo/iinfo/isdtype, the standard's signatures, and the main-namespace
functions composed from uma's ops. NumPy 2 is the oracle; every function runs on cpu and, on
a machine with a GPU, on cuda (the compositions use only ops that run there)."""
import math

import numpy as np
import pytest

import uma
from conftest import NUMPY_DTYPES, assert_matches, np_dtype

GPU = uma.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not GPU, reason="no CUDA GPU"))]
STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64", "complex64", "complex128"]
rng = np.random.default_rng(14)


def data(dtype, shape):
    dt = np_dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -5, 6, size=shape).astype(dt)
    v = rng.integers(-4, 5, size=shape).astype(np.float64)
    if dt.kind == "c":
        v = v + 1j * rng.integers(-4, 5, size=shape)
    return v.astype(dt)


def on(x, dev):
    return uma.asarray(x, device=dev)


# ---- the namespace protocol -------------------------------------------------------------------

def test_array_namespace_returns_uma():
    a = uma.asarray([1.0, 2.0])
    assert a.__array_namespace__() is uma
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert a.__array_namespace__(api_version=v) is uma
    assert uma.__array_api_version__ == "2025.12"


def test_array_namespace_bad_version():
    a = uma.asarray([1.0])
    with pytest.raises(ValueError, match="'2019.01'"):
        a.__array_namespace__(api_version="2019.01")
    with pytest.raises(TypeError, match="2024"):
        a.__array_namespace__(api_version=2024)


def test_constants():
    assert uma.e == math.e and uma.pi == math.pi
    assert uma.inf == math.inf and math.isnan(uma.nan)
    assert uma.newaxis is None
    a = uma.asarray(np.arange(3))
    assert a[uma.newaxis].shape == (1, 3)


def test_bool_spelling():
    assert uma.bool is uma.bool_
    assert uma.asarray([True]).dtype == uma.bool


def test_mT():
    x = data("float64", (2, 3, 4))
    assert_matches(uma.asarray(x).mT, np.swapaxes(x, -1, -2))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        uma.asarray(np.arange(3.0)).mT


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "<<=", ">>="])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64"])
def test_inplace_bitwise(op, dtype):
    x, y = data(dtype, (3, 4)) % 4, data(dtype, (4,)) % 4
    a = uma.asarray(x.copy())
    before = a
    ns = {"a": a, "b": uma.asarray(y)}
    exec(f"a {op} b", ns)
    ref = {"x": x.copy(), "y": y}
    exec(f"x {op} y", ref)
    assert ns["a"] is before  # written in place
    assert_matches(ns["a"], ref["x"])


def test_inplace_errors():
    a = uma.asarray(np.arange(6, dtype=np.int8).reshape(2, 3))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2, 3\)"):
        a &= uma.ones((4, 2, 3), dtype="int8")
    a &= uma.asarray(np.ones((2, 3), dtype=bool))  # int8 & bool -> int8
    assert_matches(a, np.arange(6, dtype=np.int8).reshape(2, 3) & 1)
    with pytest.raises(TypeError, match="from float64 to int8"):
        a @= uma.ones((3, 3))
    f = uma.asarray(np.eye(2))
    f @= uma.asarray(np.full((2, 2), 2.0))
    assert_matches(f, np.full((2, 2), 2.0))


# ---- inspection -------------------------------------------------------------------------------

def test_namespace_info():
    info = uma.__array_namespace_info__()
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}
    assert info.default_device() == "cpu" and info.default_device() in info.devices()
    devs = info.devices()
    assert isinstance(devs, tuple) and devs[0] == "cpu"
    assert len(devs) == 1 + uma.cuda.device_count()
    for d in devs:
        assert uma.zeros(2, device=d).device == d
    dd = info.default_dtypes()
    assert dd == {"real floating": uma.float64, "complex floating": uma.complex128,
                  "integral": uma.int64, "indexing": uma.int64}
    assert info.default_dtypes(device="cpu") == dd


@pytest.mark.parametrize("kind, names", [
    (None, STANDARD),
    ("bool", ["bool"]),
    ("signed integer", ["int8", "int16", "int32", "int64"]),
    ("unsigned integer", ["uint8", "uint16", "uint32", "uint64"]),
    ("integral", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]),
    ("real floating", ["float32", "float64"]),
    ("complex floating", ["complex64", "complex128"]),
    ("numeric", STANDARD[1:]),
    (("bool", "complex floating"), ["bool", "complex64", "complex128"]),
])
def test_namespace_info_dtypes(kind, names):
    got = uma.__array_namespace_info__().dtypes(kind=kind)
    assert list(got) == names
    assert all(got[n] == uma.dtype(n) for n in names)


def test_namespace_info_bad_input():
    info = uma.__array_namespace_info__()
    with pytest.raises(ValueError, match="^dtypes: unknown kind 'floating'"):
        info.dtypes(kind="floating")
    with pytest.raises(TypeError, match="^dtypes: kind must be"):
        info.dtypes(kind=("bool", 3.5))
    with pytest.raises(ValueError, match="tpu"):
        info.dtypes(device="tpu")
    if not GPU:
        with pytest.raises(ValueError, match="'cuda:0' is not available"):
            info.default_dtypes(device="cuda")


@pytest.mark.parametrize("dtype", NUMPY_DTYPES + ["bfloat16"])
def test_isdtype_matches_numpy(dtype):
    d = uma.dtype(dtype)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric"]
    for k in kinds:
        if dtype in ("bfloat16",):
            want = k in ("real floating", "numeric")
        else:
            want = np.isdtype(np.dtype(dtype), k)
        assert uma.isdtype(d, k) is want, (dtype, k)
    assert uma.isdtype(d, d) and uma.isdtype(d, (d, "bool"))
    assert uma.isdtype(d, ("bool", "numeric"))
    assert not uma.isdtype(uma.float32, uma.float64)


def test_isdtype_bad_input():
    with pytest.raises(ValueError, match="'float'"):
        uma.isdtype(uma.float32, "float")
    with pytest.raises(TypeError, match="3"):
        uma.isdtype(uma.float32, 3)
    with pytest.raises(TypeError, match="not understood"):
        uma.isdtype("nonsense", "bool")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_numpy(dtype):
    got, want = uma.finfo(uma.dtype(dtype)), np.finfo(np.dtype(dtype))
    assert got.bits == want.bits
    for f in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(got, f)) is float
        assert getattr(got, f) == float(getattr(want, f)), f
    assert got.dtype == want.dtype and isinstance(got.dtype, uma.dtype)
    assert uma.finfo(uma.zeros(2, dtype=dtype)).eps == got.eps  # an array's dtype


def test_finfo_bfloat16():
    mld = pytest.importorskip("ml_dtypes")
    got, want = uma.finfo(uma.bfloat16), mld.finfo(mld.bfloat16)
    assert (got.bits, got.eps, got.max, got.smallest_normal) == (16, 2.0**-7, float(want.max), 2.0**-126)
    assert got.dtype is uma.bfloat16


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo_matches_numpy(dtype):
    got, want = uma.iinfo(uma.dtype(dtype)), np.iinfo(np.dtype(dtype))
    assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max)
    assert type(got.max) is int and got.dtype == uma.dtype(dtype)


def test_finfo_iinfo_bad_input():
    with pytest.raises(TypeError, match="int32 is not a floating-point dtype"):
        uma.finfo(uma.int32)
    with pytest.raises(TypeError, match="float32 is not an integer dtype"):
        uma.iinfo(uma.float32)
    with pytest.raises(TypeError, match="bool is not an integer dtype"):
        uma.iinfo(uma.bool)
    with pytest.raises(TypeError, match="not understood"):
        uma.finfo("nope")


# ---- the standard's signatures ----------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_clip_keywords(dev):
    x = data("float64", (3, 4))
    a = on(x, dev)
    assert_matches(uma.clip(a, min=-1), np.clip(x, -1, None))
    assert_matches(uma.clip(a, max=2), np.clip(x, None, 2))
    assert_matches(uma.clip(a, -1, 2), np.clip(x, -1, 2))
    assert_matches(uma.clip(a, min=on(np.full(4, -2.0), dev), max=3.0), np.clip(x, -2, 3))
    assert_matches(a.clip(max=1.5), x.clip(max=1.5))
    same = uma.clip(a)
    assert_matches(same, x)
    assert same._data_ptr != a._data_ptr  # a copy
    with pytest.raises(TypeError, match="bool"):
        uma.clip(uma.asarray([True]))  # numpy.clip: no positive loop for bool


@pytest.mark.parametrize("axis, shape", [
    (0, (1, 2, 3)), (-1, (2, 3, 1)), ((0, 1), (1, 1, 2, 3)), ((0, -1), (1, 2, 3, 1)),
    ((-1, -2), (2, 3, 1, 1)), ((1, 3), (2, 1, 3, 1)),
])
def test_expand_dims_tuples(axis, shape):
    x = data("int32", (2, 3))
    got = uma.expand_dims(uma.asarray(x), axis=axis)
    assert_matches(got, np.expand_dims(x, axis))
    assert got.shape == shape


def test_expand_dims_bad_axis():
    a = uma.zeros((2, 3))
    with pytest.raises(IndexError, match="axis 4"):
        uma.expand_dims(a, axis=(0, 4))
    with pytest.raises(ValueError, match="repeated axis"):
        uma.expand_dims(a, axis=(1, -3))


def test_reshape_copy():
    x = data("float32", (3, 4))
    a = uma.asarray(x.copy())
    v = uma.reshape(a, (4, 3), copy=False)
    c = uma.reshape(a, (4, 3), copy=True)
    a[0, 0] = 100.0  # shows through the view only
    assert float(v[0, 0].item()) == 100.0 and float(c[0, 0].item()) == x[0, 0]
    t = uma.reshape(a.mT, (12,))  # None: a copy where needed
    assert_matches(t, np.asarray(a).T.reshape(12))
    with pytest.raises(uma.CopyError, match=r"\(4, 3\).*\(12,\)"):
        uma.reshape(a.mT, (12,), copy=False)
    assert uma.reshape(uma.zeros((0, 3)), (3, 0), copy=False).shape == (3, 0)
    with pytest.raises(ValueError):
        uma.reshape(a, (5,), copy=True)


def test_astype_device():
    a = uma.asarray([1, 2, 3])
    r = uma.astype(a, uma.float32, device="cpu")
    assert r.dtype == uma.float32 and r.device == "cpu"
    assert uma.astype(a, uma.int64, copy=False)._data_ptr == a._data_ptr  # no copy


def test_trace_dtype():
    x = data("int8", (3, 3, 2))
    assert_matches(uma.trace(uma.asarray(x), dtype="float32"), np.trace(x, dtype=np.float32))
    assert_matches(uma.trace(uma.asarray(x), offset=1, axis1=1, axis2=2, dtype="int64"),
                   np.trace(x, offset=1, axis1=1, axis2=2, dtype=np.int64))
    assert_matches(uma.trace(uma.asarray(x)), np.trace(x))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "complex128"])
def test_cumulative_sum_prod(dev, dtype):
    x = data(dtype, (3, 4))
    a = on(x, dev)
    for name, np_fn, first in (("cumulative_sum", np.cumsum, 0), ("cumulative_prod", np.cumprod, 1)):
        fn = getattr(uma, name)
        for axis in (0, 1, -1):
            want = np_fn(x, axis=axis)
            assert_matches(fn(a, axis=axis), want)
            pad = [(0, 0), (0, 0)]
            pad[axis] = (1, 0)
            assert_matches(fn(a, axis=axis, include_initial=True),
                           np.pad(want, pad, constant_values=first))
        wide = "complex128" if dtype.startswith("complex") else "float64"
        assert_matches(fn(a[0], dtype=wide), np_fn(x[0], dtype=wide))
        assert_matches(fn(a[0], include_initial=True), np.concatenate([[first], np_fn(x[0])]).astype(np_fn(x[0]).dtype))


def test_cumulative_bad_input():
    a = uma.zeros((2, 3))
    with pytest.raises(ValueError, match=r"axis is required.*\(2, 3\)"):
        uma.cumulative_sum(a)
    with pytest.raises(IndexError, match="axis 2"):
        uma.cumulative_prod(a, axis=2)


# ---- linear algebra ---------------------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_matrix_transpose_vecdot_tensordot(dev):
    x, y = data("float64", (2, 3, 4)), data("float64", (3, 4))
    a, b = on(x, dev), on(y, dev)
    assert_matches(uma.matrix_transpose(a), np.swapaxes(x, -1, -2))
    assert_matches(uma.vecdot(a, b), np.vecdot(x, y))
    assert_matches(uma.vecdot(a, b, axis=-2), np.vecdot(x, y, axis=-2))
    z = data("complex128", (5, 3))
    assert_matches(uma.vecdot(on(z, dev), on(z[::-1], dev)), np.vecdot(z, z[::-1]))
    assert_matches(uma.tensordot(a, b, axes=2), np.tensordot(x, y, axes=2))
    assert_matches(uma.tensordot(a, b, axes=([1], [0])), np.tensordot(x, y, axes=([1], [0])))
    assert_matches(uma.tensordot(a, b, axes=0), np.tensordot(x, y, axes=0))
    i, j = data("int32", (3, 4)), data("int8", (4, 2))
    assert_matches(uma.tensordot(uma.asarray(i), uma.asarray(j), axes=1), np.tensordot(i, j, axes=1))


def test_vecdot_keeps_integer_dtype():
    x = np.arange(40, dtype=np.uint8)
    assert_matches(uma.vecdot(uma.asarray(x), uma.asarray(x)), np.vecdot(x, x))  # wraps in uint8


def test_permute_dims():
    x = data("int32", (2, 3, 4))
    assert_matches(uma.permute_dims(uma.asarray(x), (2, 0, 1)), np.permute_dims(x, (2, 0, 1)))
    assert_matches(uma.permute_dims(uma.asarray(x[0, 0]), axes=0), x[0, 0])
    with pytest.raises(TypeError, match="axes must be an integer, got str 'a'"):
        uma.permute_dims(uma.asarray(x[0, 0]), "a")


def test_linalg_bad_input():
    a, b = uma.zeros((2, 3)), uma.zeros((2, 4))
    with pytest.raises(ValueError, match="length 3 and x2 length 4"):
        uma.vecdot(a, b)
    with pytest.raises(ValueError, match="length 3.*length 2"):
        uma.tensordot(a, b, axes=([1], [0]))
    with pytest.raises(ValueError, match="axes=3"):
        uma.tensordot(a, b, axes=3)
    with pytest.raises(ValueError, match=r"shape \(\)"):
        uma.matrix_transpose(uma.asarray(1.0))


# ---- manipulation -----------------------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", STANDARD)
def test_flip_roll_moveaxis(dev, dtype):
    x = data(dtype, (2, 3, 4))
    a = on(x, dev)
    for axis in (None, 0, -1, (0, 2)):
        assert_matches(uma.flip(a, axis=axis), np.flip(x, axis=axis))
    for shift, axis in ((1, None), (-7, None), (2, 1), (5, -1), ((1, 2), (0, 2)), ((1, 1), (1, 1)), (0, 0)):
        assert_matches(uma.roll(a, shift, axis=axis), np.roll(x, shift, axis=axis))
    for src, dst in ((0, -1), (-1, 0), ((0, 1), (2, 0)), ((), ())):
        assert_matches(uma.moveaxis(a, src, dst), np.moveaxis(x, src, dst))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "uint16", "float32", "complex64"])
def test_repeat_tile(dev, dtype):
    x = data(dtype, (2, 3))
    a = on(x, dev)
    for reps, axis in ((2, None), (3, 0), (2, 1), (0, -1), (1, 0)):
        assert_matches(uma.repeat(a, reps, axis=axis), np.repeat(x, reps, axis=axis))
    assert_matches(uma.repeat(a, on(np.array([3]), dev), axis=1), np.repeat(x, 3, axis=1))
    for counts, axis in (([2, 0, 3], 1), ([0, 4], 0), ([1, 0, 2, 0, 0, 3], None), ([0, 0, 0], -1)):
        for ct in ("int64", "uint8"):
            c = np.array(counts, dtype=ct)
            assert_matches(uma.repeat(a, on(c, dev), axis=axis), np.repeat(x, c, axis=axis))
        # a list or tuple of counts, as numpy.repeat takes
        assert_matches(uma.repeat(a, counts, axis=axis), np.repeat(x, counts, axis=axis))
        assert_matches(uma.repeat(a, tuple(counts), axis=axis), np.repeat(x, tuple(counts), axis=axis))
    for reps in ((2,), (2, 1), (1, 3), (2, 2, 2), (0, 1), ()):
        assert_matches(uma.tile(a, reps), np.tile(x, reps))
    assert_matches(uma.tile(on(x[0, 0], dev), (3,)), np.tile(x[0, 0], (3,)))


def test_manipulation_bad_input():
    a = uma.zeros((2, 3))
    with pytest.raises(IndexError, match="flip: axis 2"):
        uma.flip(a, axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        uma.flip(a, axis=(0, -2))
    with pytest.raises(ValueError, match="same length"):
        uma.roll(a, (1, 2), axis=0)
    with pytest.raises(TypeError, match="shift must be an integer, got float 1.5"):
        uma.roll(a, 1.5, axis=0)
    with pytest.raises(ValueError, match="same number of axes"):
        uma.moveaxis(a, (0, 1), 0)
    with pytest.raises(ValueError, match="non-negative, got -1"):
        uma.repeat(a, -1)
    with pytest.raises(ValueError, match=r"shape \(2,\) do not match the 3 elements"):
        uma.repeat(a, uma.asarray([1, 2]), axis=1)
    with pytest.raises(ValueError, match="non-negative, got -2"):
        uma.repeat(a, uma.asarray([1, -2, 3]), axis=1)
    with pytest.raises(TypeError, match="integer dtype, got float64"):
        uma.repeat(a, uma.asarray([1.0]))
    with pytest.raises(TypeError, match="integer dtype, got float64"):
        uma.repeat(a, [1.0, 2.0, 3.0], axis=1)
    with pytest.raises(TypeError, match="repeats must be an int, an integer array or a list of ints, got str '2'"):
        uma.repeat(a, "2")
    with pytest.raises(ValueError, match=r"non-negative, got \(2, -1\)"):
        uma.tile(a, (2, -1))
    with pytest.raises(IndexError, match="unstack: axis 2"):
        uma.unstack(a, axis=2)


@pytest.mark.parametrize("dev", DEVICES)
def test_broadcast_unstack(dev):
    x, y = data("int8", (3, 1)), data("float32", (4,))
    out = uma.broadcast_arrays(on(x, dev), on(y, dev))
    want = np.broadcast_arrays(x, y)
    assert isinstance(out, tuple) and len(out) == 2
    for g, w in zip(out, want):
        assert_matches(g, w)
    assert uma.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert uma.broadcast_shapes((None, 1), (5,)) == (None, 5)
    assert uma.broadcast_shapes() == ()
    with pytest.raises(ValueError, match=r"\(2,\) \(3,\)"):
        uma.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="broadcast"):
        uma.broadcast_arrays(uma.zeros(2), uma.zeros(3))
    z = data("complex64", (2, 3, 4))
    for axis in (0, 1, -1):
        parts = uma.unstack(on(z, dev), axis=axis)
        assert isinstance(parts, tuple) and len(parts) == z.shape[axis]
        for i, p in enumerate(parts):
            assert_matches(p, np.take(z, i, axis=axis))


# ---- creation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_meshgrid(dev):
    x, y, z = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    for indexing in ("xy", "ij"):
        for arrays in ((x,), (x, y), (x, y, z)):
            got = uma.meshgrid(*(on(a, dev) for a in arrays), indexing=indexing)
            want = np.meshgrid(*arrays, indexing=indexing)
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                assert_matches(g, w)
    assert uma.meshgrid() == ()
    with pytest.raises(ValueError, match="'yx'"):
        uma.meshgrid(uma.asarray(x), indexing="yx")
    with pytest.raises(ValueError, match=r"1-D, got shape \(2, 2\)"):
        uma.meshgrid(uma.zeros((2, 2)))
    with pytest.raises(TypeError, match="float64, int64"):
        uma.meshgrid(uma.asarray(x), uma.arange(2))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "float64", "complex64"])
def test_tril_triu(dev, dtype):
    x = data(dtype, (2, 3, 4))
    a = on(x, dev)
    for k in (-3, -1, 0, 1, 5):
        assert_matches(uma.tril(a, k=k), np.tril(x, k=k))
        assert_matches(uma.triu(a, k=k), np.triu(x, k=k))
    with pytest.raises(ValueError, match=r"at least 2 axes, got shape \(4,\)"):
        uma.tril(a[0, 0])


# ---- indexing, searching, statistics, utilities -----------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_take_along_axis(dev):
    x = data("float32", (3, 4, 5))
    a = on(x, dev)
    for axis, ishape in ((0, (2, 4, 5)), (1, (3, 6, 5)), (-1, (3, 4, 2)), (2, (1, 4, 3)), (1, (3, 0, 5))):
        idx = rng.integers(-x.shape[axis], x.shape[axis], size=ishape)
        assert_matches(uma.take_along_axis(a, on(idx, dev), axis=axis), np.take_along_axis(x, idx, axis=axis))
    s = np.argsort(x, axis=1)
    assert_matches(uma.take_along_axis(a, on(s, dev), axis=1), np.sort(x, axis=1))


def test_take_along_axis_bad_input():
    a = uma.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis -1 with size 3"):
        uma.take_along_axis(a, uma.asarray([[0, 3], [1, 1]]))
    with pytest.raises(IndexError, match="index -4"):
        uma.take_along_axis(a, uma.asarray([[0, -4]]))
    with pytest.raises(TypeError, match="integer dtype, got float64"):
        uma.take_along_axis(a, uma.zeros((2, 1)))
    with pytest.raises(ValueError, match="same number of axes"):
        uma.take_along_axis(a, uma.asarray([0]))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float64", "complex64"])
def test_count_nonzero(dev, dtype):
    x = data(dtype, (3, 4))
    a = on(x, dev)
    for axis in (None, 0, 1, (0, 1), -1):
        for keepdims in (False, True):
            assert_matches(uma.count_nonzero(a, axis=axis, keepdims=keepdims),
                           np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims)).astype(np.int64))
    f = uma.asarray([np.nan, 0.0, -0.0, 1.0])
    assert int(uma.count_nonzero(f).item()) == 2


@pytest.mark.parametrize("dev", DEVICES)
def test_isin(dev):
    x, s = data("int16", (3, 4)), np.array([0, 3, -2], dtype=np.int32)
    a, b = on(x, dev), on(s, dev)
    assert_matches(uma.isin(a, b), np.isin(x, s))
    assert_matches(uma.isin(a, b, invert=True), np.isin(x, s, invert=True))
    assert_matches(uma.isin(a, 3), np.isin(x, 3))
    assert_matches(uma.isin(3, b), np.isin(3, s))
    assert_matches(uma.isin(a, on(np.zeros(0, np.int16), dev)), np.zeros(x.shape, bool))
    f = on(np.array([np.nan, 1.0]), dev)
    assert_matches(uma.isin(f, f), np.array([False, True]))
    with pytest.raises(TypeError, match="at least one"):
        uma.isin(1, 2)


def test_isin_blocks():
    x = np.arange(3000) % 1500
    s = np.arange(0, 3000, 7)
    assert_matches(uma.isin(uma.asarray(x), uma.asarray(s)), np.isin(x, s))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "float32", "complex128"])
def test_diff(dev, dtype):
    x = data(dtype, (3, 5))
    a = on(x, dev)
    for axis in (0, -1):
        for n in (0, 1, 2, 4, 7):
            assert_matches(uma.diff(a, axis=axis, n=n), np.diff(x, axis=axis, n=n))
    pre, app = data(dtype, (3, 2)), data(dtype, (3, 1))
    assert_matches(uma.diff(a, prepend=on(pre, dev), append=on(app, dev)), np.diff(x, prepend=pre, append=app))
    if dtype != "bool":
        assert_matches(uma.diff(a, axis=0, prepend=0), np.diff(x, axis=0, prepend=np.array(0, dtype=x.dtype)))
    # n=0 is x itself: NumPy ignores prepend and append then
    assert_matches(uma.diff(a, n=0, prepend=on(pre, dev), append=on(app, dev)), np.diff(x, n=0, prepend=pre, append=app))


def test_diff_bad_input():
    with pytest.raises(ValueError, match="non-negative, got -1"):
        uma.diff(uma.zeros(3), n=-1)
    with pytest.raises(ValueError, match="0-d"):
        uma.diff(uma.asarray(1.0))
    with pytest.raises(IndexError, match="axis 1"):
        uma.diff(uma.zeros(3), axis=1)


def test_functions_take_numpy_arrays():
    x = data("float64", (2, 3))
    assert_matches(uma.flip(x), np.flip(x))
    with pytest.raises(TypeError, match="flip: expected an array, got object"):
        uma.flip(object())
