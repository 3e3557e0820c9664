"""uma.fft against numpy.fft (the oracle) on the same inputs: every function, the four floating
dtypes, n and s smaller and larger than the axes, the three norms, several axes, views of any
strides, 0-d and empty edge cases, and the errors of the Array API standard / NumPy.
Tolerance: a few eps of the dtype times log2 of the transform length, relative to the largest
magnitude of the expected result."""
import math

import numpy as np
import pytest

import uma

GPU = uma.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
DEVICES = ["cpu", pytest.param("cuda", marks=needs_gpu)]
FLOATS = ["float32", "float64", "complex64", "complex128"]
REAL = ["float32", "float64"]
NORMS = ["backward", "ortho", "forward"]
C2C_1D = ["fft", "ifft"]
REAL_IN = ["rfft", "ihfft"]        # real input only
ANY_IN = ["fft", "ifft", "irfft", "hfft"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn"]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def sample(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def to_numpy(a):
    return np.asarray(a.to_device("cpu") if str(a.device) != "cpu" else a)


def expected_dtype(fn, dtype):
    single = dtype in ("float32", "complex64", "float16")
    real_out = fn in ("irfft", "irfftn", "hfft")
    return ("float32" if single else "float64") if real_out else ("complex64" if single else "complex128")


def close(got, want, dtype, points):
    got = to_numpy(got)
    assert got.shape == want.shape
    eps = np.finfo(np.float32 if dtype in ("float32", "complex64", "float16") else np.float64).eps
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    tol = 8 * eps * max(math.log2(max(points, 2)), 1) * scale
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


# ---- one-dimensional transforms --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 16])   # the axis has length 9 (axis -1) or 6 (axis 0)
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ONE_D)
def test_one_axis(fn, dtype, axis, n, norm, device, rng):
    x = sample(rng, (6, 9), dtype)
    if fn in REAL_IN and dtype.startswith("complex"):
        with pytest.raises(TypeError, match=f"uma.fft.{fn}: x must have a real floating-point dtype"):
            getattr(uma.fft, fn)(uma.asarray(x, device=device), n=n, axis=axis, norm=norm)
        return
    got = getattr(uma.fft, fn)(uma.asarray(x, device=device), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, fn)(x, n=n, axis=axis, norm=norm)
    assert str(got.dtype) == expected_dtype(fn, dtype)
    assert str(got.device).startswith(device)
    close(got, want, dtype, n or x.shape[axis])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 97, 1000])
@pytest.mark.parametrize("fn", ONE_D)
def test_lengths_odd_even_prime(fn, n, device, rng):
    x = sample(rng, (3, n), "float64")
    got = getattr(uma.fft, fn)(uma.asarray(x, device=device), n=n)
    close(got, getattr(np.fft, fn)(x, n=n), "float64", n)


@pytest.mark.parametrize("fn", ["fft", "rfft", "irfft", "hfft"])
def test_half_precision_computes_in_float32(fn, rng):
    x = rng.standard_normal(12)
    for t in ("float16", "bfloat16"):
        a = uma.astype(uma.asarray(x), uma.dtype(t))
        got = getattr(uma.fft, fn)(a)
        assert str(got.dtype) == expected_dtype(fn, "float32")
        x32 = to_numpy(uma.astype(a, uma.float32))
        close(got, getattr(np.fft, fn)(x32), "float32", 12)


# ---- n-dimensional transforms ------------------------------------------------------------------

ND_CASES = [  # (s, axes)
    (None, None),
    (None, (0,)),
    (None, (2, 0)),
    ((3, 8), (1, 2)),
    ((7, 2, 4), None),
    ((5,), None),          # NumPy: the last len(s) axes
    ((-1, 6), (0, 2)),     # -1 keeps the axis's length
    ((4, 4), (-1, -3)),
]


def np_s(x, s, axes):
    """numpy.fft's s for uma's: -1 entries replaced by the axis length (NumPy 2.4 deprecates them
    for the c2r defaults, so the oracle gets explicit lengths)."""
    if s is None:
        return None
    ax = axes if axes is not None else range(x.ndim - len(s), x.ndim)
    return tuple(x.shape[a] if k == -1 else k for k, a in zip(s, ax))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", ND_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", N_D)
def test_n_axes(fn, dtype, case, norm, device, rng):
    s, axes = case
    x = sample(rng, (4, 5, 6), dtype)
    if fn == "rfftn" and dtype.startswith("complex"):
        with pytest.raises(TypeError, match="uma.fft.rfftn: x must have a real floating-point dtype"):
            uma.fft.rfftn(uma.asarray(x, device=device), s=s, axes=axes, norm=norm)
        return
    if fn == "irfftn" and s is not None and s[-1] == -1:
        s = s[:-1] + (2 * (x.shape[axes[-1] if axes else -1] - 1),)
    got = getattr(uma.fft, fn)(uma.asarray(x, device=device), s=s, axes=axes, norm=norm)
    ss = np_s(x, s, axes)
    if ss is not None and axes is None:
        axes = tuple(range(x.ndim - len(ss), x.ndim))
    want = getattr(np.fft, fn)(x, s=ss, axes=axes, norm=norm)
    assert str(got.dtype) == expected_dtype(fn, dtype)
    close(got, want, dtype, math.prod(want.shape))


@pytest.mark.parametrize("device", DEVICES)
def test_fftn_1024_square(device, rng):
    x = sample(rng, (256, 1024), "complex128")
    close(uma.fft.fftn(uma.asarray(x, device=device)), np.fft.fftn(x), "complex128", x.size)


# ---- layouts -------------------------------------------------------------------------------------

def views(x):
    """Views of x of other layouts, with names: strided, negative strides, transposed, and a
    broadcast one (stride 0)."""
    return {
        "strided": x[::2, 1::3],
        "negative": x[::-1, ::-2],
        "transposed": x.T,
        "broadcast": np.broadcast_to(x[:1], x.shape),
    }


def uma_view(x, name, device):
    a = uma.asarray(x, device=device)
    return {
        "strided": lambda: a[::2, 1::3],
        "negative": lambda: a[::-1, ::-2],
        "transposed": lambda: uma.permute_dims(a, (1, 0)),
        "broadcast": lambda: uma.broadcast_to(a[:1], a.shape),
    }[name]()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("view", ["strided", "negative", "transposed", "broadcast"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ONE_D + N_D)
def test_views_of_any_strides(fn, dtype, view, device, rng):
    if fn in ("rfft", "ihfft", "rfftn") and dtype.startswith("complex"):
        return  # the TypeError is tested above
    x = sample(rng, (12, 10), dtype)
    xv = views(x)[view]
    for axis_kw in ({}, {"axis": 0}) if fn in ONE_D else ({}, {"axes": (0,)}, {"axes": (1, 0)}):
        got = getattr(uma.fft, fn)(uma_view(x, view, device), **axis_kw)
        want = getattr(np.fft, fn)(xv, **axis_kw)
        close(got, want, dtype, xv.size)


def test_input_is_not_modified(rng):
    x = sample(rng, (6, 5), "complex128")
    a = uma.asarray(x.copy())
    for fn in ONE_D + N_D:
        if fn in ("rfft", "ihfft", "rfftn"):
            continue
        getattr(uma.fft, fn)(a)
        np.testing.assert_array_equal(to_numpy(a), x)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_batches_with_threads(threads, rng):
    x = sample(rng, (64, 4096), "float64")
    old = uma.get_num_threads()
    uma.set_num_threads(threads)
    try:
        close(uma.fft.rfft(uma.asarray(x)), np.fft.rfft(x), "float64", 4096)
        close(uma.fft.fft(uma.asarray(x), axis=0), np.fft.fft(x, axis=0), "float64", 64)
    finally:
        uma.set_num_threads(old)


# ---- 0-d and empty arrays ------------------------------------------------------------------------

def test_zero_d(rng):
    x = np.array(2.5)
    with pytest.raises(np.exceptions.AxisError):
        uma.fft.fft(uma.asarray(x))
    got = uma.fft.fftn(uma.asarray(x))  # no axis to transform: the value, complex
    assert got.shape == () and str(got.dtype) == "complex128"
    assert to_numpy(got) == np.fft.fftn(x)
    for fn in ("rfftn", "irfftn"):
        with pytest.raises(ValueError, match=f"uma.fft.{fn}: needs at least one axis"):
            getattr(uma.fft, fn)(uma.asarray(x))


@pytest.mark.parametrize("fn", ONE_D)
def test_empty_batches(fn, rng):
    x = np.zeros((0, 6))
    got = getattr(uma.fft, fn)(uma.asarray(x))
    want = getattr(np.fft, fn)(x)
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype)


def test_empty_axis_padded_to_n():
    x = np.zeros((0, 4))
    got = uma.fft.fft(uma.asarray(x), n=3, axis=0)
    np.testing.assert_array_equal(to_numpy(got), np.fft.fft(x, n=3, axis=0))


# ---- errors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ONE_D)
def test_bad_n(fn):
    x = uma.asarray(np.ones(4))
    for n in (0, -1):
        with pytest.raises(ValueError, match=rf"uma.fft.{fn}: Invalid number of FFT data points \({n}\)"):
            getattr(uma.fft, fn)(x, n=n)
    with pytest.raises(TypeError, match=f"uma.fft.{fn}: n must be an integer"):
        getattr(uma.fft, fn)(x, n=2.5)


def test_default_lengths_that_are_zero():
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        uma.fft.fft(uma.asarray(np.zeros((0, 3))), axis=0)
    with pytest.raises(ValueError, match=r"uma.fft.irfft: Invalid number of FFT data points \(0\)"):
        uma.fft.irfft(uma.asarray(np.ones(1)))      # 2 * (1 - 1)
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        np.fft.irfft(np.ones(1))                    # the oracle agrees


@pytest.mark.parametrize("fn", N_D)
def test_bad_s_and_axes(fn):
    x = uma.asarray(np.ones((3, 4)))
    with pytest.raises(ValueError, match=rf"uma.fft.{fn}: Invalid number of FFT data points \(0\)"):
        getattr(uma.fft, fn)(x, s=(0, 4), axes=(0, 1))
    with pytest.raises(ValueError, match=rf"uma.fft.{fn}: repeated axis -2 in axes \(0, -2\)"):
        getattr(uma.fft, fn)(x, axes=(0, -2))
    with pytest.raises(ValueError, match=rf"uma.fft.{fn}: s and axes must have the same length, got s=\(3,\) "
                                         r"and axes=\(0, 1\)"):
        getattr(uma.fft, fn)(x, s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match=rf"uma.fft.{fn}: s has 3 entries but x has only 2 dimensions"):
        getattr(uma.fft, fn)(x, s=(3, 3, 3))
    with pytest.raises(np.exceptions.AxisError):
        getattr(uma.fft, fn)(x, axes=(2,))


@pytest.mark.parametrize("fn", ONE_D + N_D)
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint32"])
def test_integer_and_bool_inputs_are_type_errors(fn, dtype):
    x = uma.asarray(np.ones((2, 4), dtype=dtype))
    with pytest.raises(TypeError, match=f"uma.fft.{fn}: x must have a floating-point dtype .* got {dtype}"):
        getattr(uma.fft, fn)(x)


@pytest.mark.parametrize("fn", ONE_D + N_D)
def test_bad_norm(fn):
    with pytest.raises(ValueError, match=f"uma.fft.{fn}: Invalid norm value 'sideways'"):
        getattr(uma.fft, fn)(uma.asarray(np.ones(4)), norm="sideways")


def test_axis_out_of_range():
    with pytest.raises(np.exceptions.AxisError):
        uma.fft.fft(uma.asarray(np.ones((2, 3))), axis=2)


# ---- frequencies and shifts --------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
def test_fftfreq_rfftfreq(n, d, dtype, device):
    kw = {"dtype": uma.dtype(dtype)} if dtype else {}
    for fn in ("fftfreq", "rfftfreq"):
        got = getattr(uma.fft, fn)(n, d=d, device=device, **kw)
        want = getattr(np.fft, fn)(n, d=d).astype(dtype or "float64")
        assert str(got.dtype) == (dtype or "float64")
        assert str(got.device).startswith(device)
        np.testing.assert_array_equal(to_numpy(got), want)


def test_fftfreq_errors():
    for fn in ("fftfreq", "rfftfreq"):
        with pytest.raises(ValueError, match=f"uma.fft.{fn}: n must be a positive integer, got 0"):
            getattr(uma.fft, fn)(0)
        with pytest.raises(TypeError, match=f"uma.fft.{fn}: dtype must be a real floating-point dtype, got int64"):
            getattr(uma.fft, fn)(4, dtype=uma.int64)
        with pytest.raises(TypeError, match=f"uma.fft.{fn}: n must be an integer"):
            getattr(uma.fft, fn)(4.0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axes", [None, 0, 1, (1, 0), (-1,)])
@pytest.mark.parametrize("shape", [(5, 6), (4, 7), (1, 1)])
def test_fftshift_ifftshift(shape, axes, device, rng):
    x = rng.integers(0, 100, shape)
    for fn in ("fftshift", "ifftshift"):
        got = getattr(uma.fft, fn)(uma.asarray(x, device=device), axes=axes)
        np.testing.assert_array_equal(to_numpy(got), getattr(np.fft, fn)(x, axes=axes))
    # they undo each other
    a = uma.asarray(x, device=device)
    np.testing.assert_array_equal(to_numpy(uma.fft.ifftshift(uma.fft.fftshift(a, axes=axes), axes=axes)), x)


def test_fftshift_errors():
    with pytest.raises(np.exceptions.AxisError):
        uma.fft.fftshift(uma.asarray(np.ones(3)), axes=1)


def test_namespace():
    assert set(uma.fft.__all__) == {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                                    "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"}
    for name in uma.fft.__all__:
        assert getattr(uma.fft, name).__doc__


def test_numpy_spellings_and_bad_scalars():
    x = np.arange(8.0)
    np.testing.assert_allclose(np.asarray(uma.fft.fft(uma.asarray(x), norm=None)), np.fft.fft(x), rtol=1e-12,
                               atol=1e-12)
    ones = np.ones((4, 4))
    got = uma.fft.fftn(uma.asarray(ones), s=np.array([2, 2]))  # s as an integer array, as NumPy takes it
    np.testing.assert_allclose(np.asarray(got), np.fft.fftn(ones, s=(2, 2)), atol=1e-12)
    with pytest.raises(TypeError, match="bool"):
        uma.fft.fft(uma.asarray(x), n=True)
    with pytest.raises(TypeError, match="bool"):
        uma.fft.fftfreq(True)
    with pytest.raises(ValueError, match="int64 range"):
        uma.fft.fft(uma.asarray(x), n=2**64)
    with pytest.raises(ZeroDivisionError):
        uma.fft.fftfreq(5, d=0.0)
