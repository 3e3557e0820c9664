"""Shared helpers for the uma Python tests. NumPy 2 is the oracle everywhere.

Kept generic: dtype tables, NumPy-vs-uma comparison, "same error as NumPy", memory
stats snapshots, and builders for the array layouts the op matrix runs on.
"""
import contextlib
import gc
import math
import sys
import warnings

import numpy as np
import pytest

import uma

try:  # bfloat16 as NumPy sees it (DESIGN.md: exported as ml_dtypes.bfloat16)
    import ml_dtypes
except ImportError:  # pragma: no cover - the venv has it
    ml_dtypes = None

# --------------------------------------------------------------------------- dtypes

ALL_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]
# dtypes NumPy knows without ml_dtypes
NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]
# dtypes every compute op supports
COMPUTE_DTYPES = ["bool", "int32", "int64", "float32", "float64"]
NON_COMPUTE_DTYPES = [d for d in ALL_DTYPES if d not in COMPUTE_DTYPES]

UMA_DTYPE_ATTR = {d: ("bool_" if d == "bool" else d) for d in ALL_DTYPES}


def uma_dtype(name):
    """The uma dtype object for a NumPy-style name ("bool" -> uma.bool_)."""
    return getattr(uma, UMA_DTYPE_ATTR[name])


def np_dtype(name):
    """The NumPy dtype for a name; bfloat16 needs ml_dtypes (skips the test otherwise)."""
    if name == "bfloat16":
        mld = pytest.importorskip("ml_dtypes")
        return np.dtype(mld.bfloat16)
    return np.dtype(name)


def dtype_name(dt):
    """Canonical name of a NumPy or uma dtype ("bool", "float32", "bfloat16", ...)."""
    return dt.name


# --------------------------------------------------------------------------- backends

# The registered backends when the tests start (uma.backends(): reference, cpu, numpy, and cuda
# where a GPU is usable); tests that cover every backend run over these.
BACKENDS = uma.backends()


@contextlib.contextmanager
def held_or_refused(backend, *dtypes):
    """Runs the block as it is where ``backend`` can hold every one of ``dtypes``
    (``Linker.dtypes``); elsewhere asserts that the block raises the compile-time TypeError
    naming the backend and the dtype it cannot hold (MLX has no complex128)."""
    held = uma.runtime.get_linker(backend).dtypes
    missing = [d for d in dict.fromkeys(dtypes) if held is not None and d not in held]
    if not missing:
        yield
        return
    with pytest.raises(TypeError, match=f"backend {backend!r} cannot hold dtype ({'|'.join(missing)})"):
        yield


def as_uma_output(got, backend):
    """A function output of ``backend`` as a ``uma.Array``, after checking that a backend with
    a native array type returned that type (``numpy`` and ``numba``: ``numpy.ndarray``, ``torch``:
    ``torch.Tensor``, ``jax``: ``jax.Array``, ``mlx``: ``mx.array``); uma's own backends return ``uma.Array`` s already."""
    from uma.runtime import JaxLinker, TorchLinker
    linker = uma.runtime.get_linker(backend)
    if backend in ("numpy", "numba"):
        assert type(got) is np.ndarray, type(got)
        return uma.asarray(got)
    if isinstance(linker, TorchLinker):  # torch, torch-cuda: a tensor on the linker's device
        import torch
        assert isinstance(got, torch.Tensor) and got.device == linker.torch_device(), (type(got), backend)
        return _on_host(uma.from_dlpack(got))
    if isinstance(linker, JaxLinker):  # jax, jax-cuda
        import jax
        assert isinstance(got, jax.Array) and got.devices() == {linker.jax_device()}, (type(got), backend)
        return _on_host(uma.from_dlpack(got))
    if backend == "mlx":
        import mlx.core as mx
        assert isinstance(got, mx.array), type(got)
        from uma.runtime.linkers.mlx.dispatch import to_uma
        return to_uma(got)
    return got


def _on_host(a):
    return a if a.device == uma.Device("cpu") else a.to_device("cpu")


def host_numpy(v):
    """A NumPy array of a function output of any backend, on any device (a GPU backend's
    tensors and arrays, and uma cuda arrays, come to the host through DLPack)."""
    if isinstance(v, np.ndarray):
        return v
    module = type(v).__module__
    if isinstance(v, uma.Array) or module.startswith(("torch", "jax")):
        return np.asarray(_on_host(uma.from_dlpack(v) if not isinstance(v, uma.Array) else v))
    return np.asarray(v)


def child_env(**overrides):
    """The environment of a child interpreter that imports the uma these tests import (the
    source tree or the installed package: its parent folder first on PYTHONPATH), with
    ``overrides`` (None: unset)."""
    import os
    env = dict(os.environ)
    parent = os.path.dirname(os.path.dirname(os.path.abspath(uma.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


# --------------------------------------------------------------------------- tolerances

RTOL = {
    "float64": 1e-12, "complex128": 1e-12,  # DESIGN.md "accuracy"
    "float32": 1e-5, "complex64": 1e-5,
    "float16": 1e-3,
    "bfloat16": 1e-2,
}


# --------------------------------------------------------------------------- conversion

def to_numpy(x):
    """A NumPy view/copy of a uma result (uses uma's export, tested in test_interop)."""
    return np.asarray(x)


def assert_matches(got, expected, rtol=None, atol=None):
    """`got` (a uma result) has NumPy's dtype, shape and values (float: DESIGN.md tolerance)."""
    assert isinstance(got, uma.Array), f"expected a uma.Array, got {type(got).__name__}"
    expected = np.asarray(expected)
    assert tuple(got.shape) == expected.shape, (tuple(got.shape), expected.shape)
    assert dtype_name(got.dtype) == expected.dtype.name, (
        f"dtype {dtype_name(got.dtype)} != NumPy's {expected.dtype.name}")
    g = to_numpy(got)
    assert g.dtype == expected.dtype
    assert g.shape == expected.shape
    name = expected.dtype.name
    if name == "bfloat16":
        g, expected = g.astype(np.float32), expected.astype(np.float32)
    if expected.dtype.kind in "fc":
        r = RTOL[name]
        np.testing.assert_allclose(
            g, expected, rtol=r if rtol is None else rtol, atol=r if atol is None else atol,
            equal_nan=True)
    else:
        np.testing.assert_array_equal(g, expected)


def numpy_error_type(exc):
    """The exception type DESIGN.md's error decision maps a NumPy exception to."""
    if isinstance(exc, np.exceptions.AxisError):
        return IndexError  # bad axis -> IndexError (AxisError is also a ValueError)
    for t in (TypeError, OverflowError, IndexError, ValueError):
        if isinstance(exc, t):
            return t
    raise AssertionError(f"NumPy raised an unexpected {type(exc).__name__}: {exc}")


# Floats whose conversion to an integer dtype is invalid (NaN, inf, out of range) or wraps,
# and in-range neighbours: NumPy warns "invalid value encountered in cast" and gives its
# platform's (x86-64's) results, which uma's casts follow (src/kernels/cpu/convert.h).
INVALID_CAST_FLOATS = [np.nan, np.inf, -np.inf, 1e20, -1e20, 300.7, -300.7, 3e9, -3e9, 1e19, 2.0**63, 2.0**64,
                       -(2.0**63), -(2.0**63) - 5000.0, 2.0**31, -(2.0**31), 2.0**31 - 0.5, 65535.9, -32768.5, 127.9,
                       -129.0, 4294967295.0, 4294967296.0, 1.8e19, -0.9, 0.0, -0.0]


def numpy_cast_each(x, dtype):
    """``x.astype(dtype)`` computed one element at a time (NumPy's element loop: its vectorised
    loop gives other values for some invalid float -> uint32 casts, depending on the length)."""
    with np.errstate(all="ignore"):
        return np.array([np.array([v]).astype(dtype)[0] for v in x.ravel()], dtype=dtype).reshape(x.shape)


def bfloat16_round_once(v):
    """The float value of bfloat16(v) for a Python int or float ``v``, rounded once to nearest
    even from the exact value (Fractions): 8 significant bits, exponents from -126 (subnormal
    steps of 2**-133), infinity from halfway past the largest finite value on. The oracle of every
    conversion to bfloat16, independent of any package's implementation."""
    import math
    from fractions import Fraction
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return v
    x = Fraction(v)
    if x == 0:
        return math.copysign(0.0, v) if isinstance(v, float) else 0.0
    sign, x = (-1 if x < 0 else 1), abs(x)
    e = math.floor(math.log2(x))  # 2**e <= x < 2**(e+1), corrected below
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    quantum = Fraction(2) ** (max(e, -126) - 7)
    q, r = divmod(x, quantum)
    if r > quantum / 2 or (r == quantum / 2 and q % 2 == 1):
        q += 1
    result = q * quantum
    if result >= Fraction(2) ** 128:
        return sign * math.inf
    return sign * float(result)


def numpy_quiet(fn):
    """Call fn with NumPy warnings (overflow, divide by zero, empty mean) silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def check_like_numpy(np_fn, uma_fn, rtol=None, atol=None):
    """Run the NumPy oracle; uma must give the same result, or raise the mapped error type."""
    try:
        expected = numpy_quiet(np_fn)
    except Exception as e:  # the oracle refuses: uma must refuse the same way
        err = numpy_error_type(e)
        with pytest.raises(err):
            uma_fn()
        return None
    got = uma_fn()
    assert_matches(got, expected, rtol=rtol, atol=atol)
    return got


# --------------------------------------------------------------------------- the standard's special cases
# uma follows the Array API standard's special cases where they differ from NumPy's results; the
# oracles below are NumPy's function elsewhere, and on those inputs the standard's rule,
# computed from the rule's text (never a table of results).

def standard_floor_divide(a, b):
    """floor_divide's oracle: np.floor_divide, except with exactly one infinite operand, where
    the standard (floor_divide, 'Special cases', 2024.12) gives floor(x1 / x2) = x1 / x2:
    +-infinity for an infinite x1 and a finite x2 (NumPy: NaN), a zero of the quotient's sign
    for a finite x1 and an infinite x2 (NumPy: -1.0 when the signs differ)."""
    out = np.floor_divide(a, b)
    if np.asarray(out).dtype.kind != "f":
        return out
    one_infinite = np.isinf(a) != np.isinf(b)
    if not np.any(one_infinite):
        return out
    return np.where(one_infinite, np.divide(a, b), out)


def _first_quadrant(f, z, odd):
    """f(z) from f's values at a z with non-negative parts: f(conj(z)) = conj(f(z)), and
    f(-z) = -f(z) when ``odd`` (NaN parts count as non-negative)."""
    a, b = z.real, z.imag
    if odd and math.copysign(1.0, a) < 0 and not math.isnan(a):
        w = _first_quadrant(f, complex(-a, -b), odd)
        return None if w is None else (-w[0], w[1])
    if math.copysign(1.0, b) < 0 and not math.isnan(b):
        w = _first_quadrant(f, complex(a, -b), odd)
        return None if w is None else (w[0].conjugate(), w[1])
    return f(a, b)


def _expm1_case(a, b):
    """(value, signs specified) of the standard's complex expm1 special cases (expm1, 'For
    complex floating-point operands', 2024.12) for b >= 0; None where none applies."""
    inf, nan, fin = math.inf, math.nan, math.isfinite
    if a == 0 and b == 0:
        return complex(0.0, 0.0), True
    if fin(a) and not fin(b):
        return complex(nan, nan), False
    if a == inf and b == 0:
        return complex(inf, 0.0), True
    if a == -inf and fin(b):  # +0 * cis(b) - 1
        return complex(0.0 * math.cos(b) - 1.0, 0.0 * math.sin(b)), True
    if a == inf and fin(b):  # +infinity * cis(b) - 1
        return complex(inf * math.cos(b) - 1.0, inf * math.sin(b)), True
    if a == -inf:  # b infinite or NaN: -1 + 0j, the imaginary sign unspecified
        return complex(-1.0, 0.0), False
    if a == inf:  # infinity + NaN j, the real sign unspecified
        return complex(inf, nan), False
    if math.isnan(a) and b == 0:
        return complex(nan, 0.0), True
    if math.isnan(a):
        return complex(nan, nan), False
    return None


def _tanh_case(a, b):
    """(value, signs specified) of the standard's complex tanh special cases (tanh, 'For
    complex floating-point operands', 2024.12) for a >= 0, b >= 0; None where none applies."""
    inf, nan, fin = math.inf, math.nan, math.isfinite
    if a == 0 and b == 0:
        return complex(0.0, 0.0), True
    if fin(a) and a != 0 and not fin(b):
        return complex(nan, nan), False
    if a == 0 and not fin(b):
        return complex(0.0, nan), True
    if a == inf and fin(b) and b > 0:
        return complex(1.0, 0.0), True
    if a == inf and not fin(b):  # 1 + 0j, the imaginary sign unspecified
        return complex(1.0, 0.0), False
    if math.isnan(a) and b == 0:
        return complex(nan, 0.0), True
    if math.isnan(a):
        return complex(nan, nan), False
    return None


def standard_complex(name, z):
    """The oracle of complex expm1 / tanh on an array ``z``: (expected, signs) with NumPy's
    function where none of the standard's special cases applies (signs True there: NumPy's
    signs of zero), the special case's value where one does; signs is False where the standard
    leaves a sign unspecified."""
    z = np.asarray(z)
    exp = numpy_quiet(lambda: getattr(np, name)(z)).astype(z.dtype)
    signs = np.ones(z.shape, dtype=bool)
    case, odd = (_expm1_case, False) if name == "expm1" else (_tanh_case, True)
    for i, v in np.ndenumerate(z):
        hit = _first_quadrant(case, complex(v), odd)
        if hit is not None:
            exp[i], signs[i] = hit
    return exp, signs


# --------------------------------------------------------------------------- data

def mlp_step(backend, activation="relu", n_in=20, n_hidden=32, n_out=5, seed=0):
    """(params, step): a float32 MLP (n_in -> n_hidden -> n_out, `activation`, softmax
    cross-entropy with int64 labels) and its SGD step (lr 0.1) compiled for `backend`."""
    rng = np.random.default_rng(seed)
    sym = uma.sym
    W1 = uma.shared(rng.standard_normal((n_in, n_hidden)).astype(np.float32) * 0.1, "W1")
    b1 = uma.shared(np.zeros(n_hidden, np.float32), "b1")
    W2 = uma.shared(rng.standard_normal((n_hidden, n_out)).astype(np.float32) * 0.1, "W2")
    b2 = uma.shared(np.zeros(n_out, np.float32), "b2")
    params = [W1, b1, W2, b2]
    x = sym.matrix("x", dtype="float32", shape=(None, n_in))
    y = sym.vector("y", dtype="int64")
    logits = getattr(sym, activation)(x @ W1 + b1) @ W2 + b2
    loss = sym.mean(sym.softmax_cross_entropy(logits, y))
    grads = uma.grad(loss, params)
    step = uma.function([x, y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)], backend=backend)
    return params, step


def random_data(dtype, shape, rng, domain="general"):
    """A NumPy array of `dtype` and `shape` with values suited to an op's domain.

    domains: general, positive (log/sqrt), nonzero (divisors), exponent (power's rhs),
    unit (values in (-1, 1)), coarse (few distinct values incl. 0: ties and equalities),
    above1 (arccosh: values >= 1), shift (shift counts: integers from -2 to past the widest
    bit width, so negative and too-large counts occur).
    """
    dt = np_dtype(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    shape = tuple(shape)
    if dt.kind == "b":
        if domain in ("positive", "nonzero"):
            return np.ones(shape, dtype=dt)
        return np.asarray(rng.integers(0, 2, size=shape)).astype(dt)
    if dt.kind in "iu":
        lo, hi = {
            "general": (-5, 6), "positive": (1, 10), "nonzero": (1, 6),
            "exponent": (0, 4), "unit": (0, 1), "coarse": (-2, 3), "above1": (1, 10),
            "shift": (-2, 70),
        }[domain]
        if dt.kind == "u":
            lo = max(lo, 0 if domain not in ("positive", "nonzero") else 1)
        v = rng.integers(lo, hi, size=shape)
        if domain == "nonzero" and dt.kind == "i":
            v = v * rng.choice([-1, 1], size=shape)
        return np.asarray(v).astype(dt)
    if domain == "coarse":
        v = rng.integers(-3, 4, size=shape) / 2.0
        if dt.kind == "c":
            v = v + 1j * (rng.integers(-3, 4, size=shape) / 2.0)
        return np.asarray(v).astype(dt)
    lo, hi = {
        "general": (-3.0, 3.0), "positive": (0.1, 5.0), "nonzero": (0.5, 3.0),
        "exponent": (-2.0, 2.0), "unit": (-0.9, 0.9), "above1": (1.0, 5.0), "shift": (-2.0, 70.0),
    }[domain]
    v = rng.uniform(lo, hi, size=shape)
    if domain == "nonzero":
        v = v * rng.choice([-1.0, 1.0], size=shape)
    if dt.kind == "c":
        v = v + 1j * rng.uniform(lo, hi, size=shape)
    return np.asarray(v).astype(dt)


# --------------------------------------------------------------------------- layouts

LAYOUTS = ["contiguous", "transposed", "negative_stride", "broadcast", "size0", "0d"]


def make_layout(make, layout, shape=(3, 4)):
    """(numpy_view, uma_view) of the same values in the named layout.

    `make(shape)` returns a fresh C-contiguous NumPy array. The uma side is built with
    uma's own view machinery (asarray of a contiguous base, then .T / negative slicing /
    broadcast_to), so the op under test really runs on that layout.
    """
    shape = tuple(shape)
    if layout == "contiguous":
        base = make(shape)
        return base, uma.asarray(base)
    if layout == "transposed":
        base = make(shape[::-1])
        return base.T, uma.asarray(base).T
    if layout == "negative_stride":
        big = (shape[0],) + tuple(2 * s for s in shape[1:])
        base = make(big)
        idx = (slice(None, None, -1),) + (slice(None, None, -2),) * (len(shape) - 1)
        n = base[idx]
        assert n.shape == shape
        return n, uma.asarray(base)[idx]
    if layout == "broadcast":
        small = (1,) + shape[1:]
        base = make(small)
        return np.broadcast_to(base, shape), uma.broadcast_to(uma.asarray(base), shape)
    if layout == "size0":
        s0 = (0,) + shape[1:]
        base = make(s0)
        return base, uma.asarray(base)
    if layout == "0d":
        base = make(())
        return base, uma.asarray(base)
    raise ValueError(layout)


# --------------------------------------------------------------------------- memory

def stats():
    """memory_stats('cpu') after a full garbage collection."""
    gc.collect()
    return uma.memory_stats("cpu")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the item, so fixtures can tell whether the test passed."""
    rep = yield
    setattr(item, "rep_" + rep.when, rep)
    return rep


@pytest.fixture
def mem_baseline(request):
    """Asserts that a passing test leaves uma's pooled and adopted bytes where it found them.

    (A failing test's traceback keeps its arrays alive, so the check would only add noise.)
    """
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if getattr(sys, name, None) is not None:  # an earlier failure's frames hold arrays
            setattr(sys, name, None)
    before = stats()  # after a collection: an earlier test's reference cycles are freed now, not during this test
    yield before
    rep = getattr(request.node, "rep_call", None)
    if rep is None or not rep.passed:
        return
    after = stats()
    assert after["active_bytes"] == before["active_bytes"], (before, after)
    assert after["adopted_bytes"] == before["adopted_bytes"], (before, after)


@pytest.fixture(autouse=True, scope="session")
def validate_graph_rewrites():
    """Every rewrite pass of every compiled function is followed by ``uma.graph.validate`` in
    the tests (a broken pass raises ``RewriteError`` naming it)."""
    try:
        from uma.graph import rewrite
    except ImportError:  # pragma: no cover - a build without the compiled-function half
        yield
        return
    old = rewrite.set_validation(True)
    yield
    rewrite.set_validation(old)


@pytest.fixture(autouse=True)
def restore_backend_registry():
    """A backend a test registers with ``uma.register_backend`` is gone after that test: the
    registry (and whether the entry points were loaded) is as it was before, so no test sees
    another test's backends in ``uma.backends()``."""
    try:
        from uma.runtime import linker
    except ImportError:  # pragma: no cover - a build without the compiled-function half
        yield
        return
    saved, loaded = dict(linker._BACKENDS), linker._entry_points_loaded
    yield
    linker._BACKENDS.clear()
    linker._BACKENDS.update(saved)
    linker._entry_points_loaded = loaded
