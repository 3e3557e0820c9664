"""Elementwise ops x every dtype x layout against NumPy 2: every op of the op table.

The matrix: each elementwise op on each of the 15 dtypes and on each layout (contiguous,
strided slice, transposed, negative stride, broadcast / stride 0, 0-d, size 0), eagerly and
through ``uma.function`` on the ``cpu``, ``reference`` and ``numpy`` backends (two layouts per
compiled function); NaN / inf / signed-zero inputs for the float dtypes; gradients of every
differentiable op against finite differences (``uma.verify_grad``).

Oracles:
- NumPy 2's function of the same name, dtype and errors included (a NumPy ``TypeError``
  must be a uma ``TypeError``);
- bfloat16: the float32 computation rounded to bfloat16 (what ml_dtypes does);
- functions NumPy lacks (sigmoid, softplus, erf, erfc, gammaln, digamma, trigamma): computed in
  float64 (``math.erf``, ``math.erfc``, ``math.lgamma``, ``mpmath.digamma``,
  ``scipy.special.polygamma(1, x)``, closed forms) and rounded to the dtype ``numpy.exp``
  gives; complex input must raise ``TypeError`` (uma's documented rule: real dtypes only);
- real, imag, conj, angle: NumPy's functions of those names.

Tolerances (conftest.RTOL, DESIGN.md "accuracy"): rtol = atol = 1e-12 float64/complex128,
1e-5 float32/complex64, 1e-3 float16 (one float16 ulp: uma and NumPy both compute in float32
and round, but their float32 libm results may differ in the last bit), 1e-2 bfloat16.
"""
import math

import numpy as np
import pytest

import uma
from conftest import (
    ALL_DTYPES, BACKENDS, RTOL, held_or_refused, as_uma_output, assert_matches, bfloat16_round_once, check_like_numpy, np_dtype, numpy_error_type, numpy_quiet,
    random_data, standard_complex, standard_floor_divide,
)

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

# --------------------------------------------------------------------------- oracles


def _on_bf16(fn):
    """NumPy's fn, with bfloat16 operands computed in float32 and the result rounded back
    (ops of BF16_NATIVE: ml_dtypes' bfloat16 loop itself)."""
    if fn in (BINARY[op][0] for op in BF16_NATIVE):
        return fn

    def oracle(*xs):
        if any(x.dtype == BF16 for x in xs):
            r = fn(*[x.astype(np.float32) if x.dtype == BF16 else x for x in xs])
            return r.astype(BF16) if r.dtype == np.float32 else r
        return fn(*xs)
    return oracle


def _real_only(f64):
    """An oracle for a float function NumPy lacks: f64 on float64 values, rounded to the dtype
    numpy.exp gives (bfloat16 stays bfloat16); TypeError for complex input."""
    def oracle(x):
        if x.dtype.kind == "c":
            raise TypeError("real dtypes only")
        out = BF16 if x.dtype == BF16 else np.exp(np.zeros(1, x.dtype)).dtype
        return np.asarray(f64(x.astype(np.float64))).astype(out)
    return oracle


def _lgamma(v):
    try:
        return math.lgamma(v)
    except ValueError:  # a pole
        return math.inf


def _digamma(v):
    mpmath = pytest.importorskip("mpmath")
    if math.isnan(v) or math.isinf(v):
        return math.nan if (math.isnan(v) or v < 0) else math.inf
    if v == 0:
        return -math.copysign(math.inf, v)  # psi(+-0) = -+inf (the limit from that side)
    if v < 0 and v == math.floor(v):
        return math.nan  # poles at the negative integers
    return float(mpmath.digamma(v))


def _trigamma(v):
    special = pytest.importorskip("scipy.special")
    if v == -math.inf:
        return math.nan  # no limit (scipy.special.polygamma(1, -inf) is inf; uma documents NaN)
    return float(special.polygamma(1, v))


def _nextafter(a, b):
    """C's nextafter: y where x == y (nextafter(0.0, -0.0) is -0.0), as float32/float64 and
    NumPy >= 2.5's float16 loop give it (older NumPy returned x for float16)."""
    return np.where(a == b, b, np.nextafter(a, b))


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


UNARY = {  # name -> (oracle, domain)
    "negative": (np.negative, "general"),
    "abs": (np.abs, "general"),
    "exp": (np.exp, "general"),
    "exp2": (np.exp2, "general"),
    "expm1": (np.expm1, "general"),
    "log": (np.log, "positive"),
    "log2": (np.log2, "positive"),
    "log10": (np.log10, "positive"),
    "log1p": (np.log1p, "positive"),
    "sqrt": (np.sqrt, "positive"),
    "square": (np.square, "general"),
    "reciprocal": (np.reciprocal, "nonzero"),
    "sin": (np.sin, "general"),
    "cos": (np.cos, "general"),
    "tan": (np.tan, "general"),
    "arcsin": (np.arcsin, "unit"),
    "arccos": (np.arccos, "unit"),
    "arctan": (np.arctan, "general"),
    "sinh": (np.sinh, "general"),
    "cosh": (np.cosh, "general"),
    "tanh": (np.tanh, "general"),
    "floor": (np.floor, "general"),
    "ceil": (np.ceil, "general"),
    "rint": (np.rint, "coarse"),
    "sign": (np.sign, "coarse"),
    "logical_not": (np.logical_not, "coarse"),
    "sigmoid": (_real_only(_sigmoid64), "general"),
    "softplus": (_real_only(lambda x: np.logaddexp(0.0, x)), "general"),
    "erf": (_real_only(np.vectorize(math.erf, otypes=[np.float64])), "general"),
    "erfc": (_real_only(np.vectorize(math.erfc, otypes=[np.float64])), "general"),
    "gammaln": (_real_only(np.vectorize(_lgamma, otypes=[np.float64])), "positive"),
    "digamma": (_real_only(np.vectorize(_digamma, otypes=[np.float64])), "positive"),
    "trigamma": (_real_only(np.vectorize(_trigamma, otypes=[np.float64])), "positive"),
    "real": (np.real, "general"),
    "imag": (np.imag, "general"),
    "conj": (np.conj, "general"),
    "angle": (np.angle, "nonzero"),
    "positive": (np.positive, "general"),
    "trunc": (np.trunc, "general"),
    "acosh": (np.arccosh, "above1"),
    "asinh": (np.arcsinh, "general"),
    "atanh": (np.arctanh, "unit"),
    "isfinite": (np.isfinite, "general"),
    "isinf": (np.isinf, "general"),
    "isnan": (np.isnan, "general"),
    "signbit": (np.signbit, "general"),
    "bitwise_invert": (np.invert, "general"),
}

BINARY = {  # name -> (oracle, lhs domain, rhs domain)
    "add": (np.add, "general", "general"),
    "subtract": (np.subtract, "general", "general"),
    "multiply": (np.multiply, "general", "general"),
    "divide": (np.divide, "general", "nonzero"),
    "power": (np.power, "positive", "exponent"),
    "maximum": (np.maximum, "coarse", "coarse"),
    "minimum": (np.minimum, "coarse", "coarse"),
    "floor_divide": (standard_floor_divide, "general", "nonzero"),
    "remainder": (np.remainder, "general", "nonzero"),
    "arctan2": (np.arctan2, "general", "general"),
    "equal": (np.equal, "coarse", "coarse"),
    "not_equal": (np.not_equal, "coarse", "coarse"),
    "less": (np.less, "coarse", "coarse"),
    "less_equal": (np.less_equal, "coarse", "coarse"),
    "greater": (np.greater, "coarse", "coarse"),
    "greater_equal": (np.greater_equal, "coarse", "coarse"),
    "logical_and": (np.logical_and, "coarse", "coarse"),
    "logical_or": (np.logical_or, "coarse", "coarse"),
    "logical_xor": (np.logical_xor, "coarse", "coarse"),
    "copysign": (np.copysign, "general", "general"),
    "hypot": (np.hypot, "general", "general"),
    "logaddexp": (np.logaddexp, "general", "general"),
    "nextafter": (_nextafter, "general", "general"),
    "bitwise_and": (np.bitwise_and, "coarse", "coarse"),
    "bitwise_or": (np.bitwise_or, "coarse", "coarse"),
    "bitwise_xor": (np.bitwise_xor, "coarse", "coarse"),
    "bitwise_left_shift": (np.left_shift, "general", "shift"),
    "bitwise_right_shift": (np.right_shift, "general", "shift"),
}

#: Ops whose bfloat16 result is not the float32 result rounded: computed on bfloat16 itself
#: (ml_dtypes' loop: the neighbour of x1 in bfloat16's own format).
BF16_NATIVE = {"nextafter"}

# Ops whose gradient is checked (float64, finite differences) and their input domains.
GRAD_UNARY = {
    "exp2": "general", "log2": "positive", "log10": "positive", "reciprocal": "nonzero", "tan": "unit",
    "arcsin": "unit", "arccos": "unit", "arctan": "general", "sinh": "general", "cosh": "general",
    "softplus": "general", "erf": "general", "erfc": "general", "gammaln": "positive",
    "sigmoid": "general", "exp": "general", "log": "positive", "sqrt": "positive", "sin": "general",
    "cos": "general", "tanh": "general", "expm1": "general", "log1p": "positive", "square": "general",
    "abs": "nonzero", "negative": "general", "digamma": "positive",
    "positive": "general", "acosh": "above1", "asinh": "general", "atanh": "unit",
}

# --------------------------------------------------------------------------- data and layouts

LAYOUTS = ["contiguous", "strided", "transposed", "negative_stride", "broadcast", "0d", "size0"]
SYM_LAYOUTS = ["contiguous", "transposed"]  # the compiled path: one function, two calls


def _np_dt(name):
    return BF16 if name == "bfloat16" else np_dtype(name)


def _data(dtype, domain, rng):
    def make(shape):
        if dtype == "bfloat16":
            return random_data("float32", shape, rng, domain).astype(BF16)
        return random_data(dtype, shape, rng, domain)
    return make


def _layout(make, layout, shape=(3, 4)):
    """(numpy view, uma view) of the same values in the named layout; the uma side is built
    with uma's own views, so the op really runs on that layout."""
    if layout == "contiguous":
        base = make(shape)
        return base, uma.asarray(base)
    if layout == "strided":  # every other column: a non-unit inner stride
        base = make((shape[0], 2 * shape[1]))
        return base[:, ::2], uma.asarray(base)[:, ::2]
    if layout == "transposed":
        base = make(shape[::-1])
        return base.T, uma.asarray(base).T
    if layout == "negative_stride":
        base = make((shape[0], 2 * shape[1]))
        return base[::-1, ::-2], uma.asarray(base)[::-1, ::-2]
    if layout == "broadcast":  # stride 0 on the first axis
        base = make((1, shape[1]))
        return np.broadcast_to(base, shape), uma.broadcast_to(uma.asarray(base), shape)
    if layout == "0d":
        base = make(())
        return base, uma.asarray(base)
    if layout == "size0":
        base = make((0, shape[1]))
        return base, uma.asarray(base)
    raise ValueError(layout)


def _expect(oracle, *xs):
    return numpy_quiet(lambda: np.asarray(oracle(*xs)))


def _check(oracle, np_args, call):
    """uma's call must match the oracle (values, dtype, shape) or raise the mapped error."""
    return check_like_numpy(lambda: np.asarray(oracle(*np_args)), call)


# --------------------------------------------------------------------------- eager matrix

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_eager(op, dtype, layout, rng):
    oracle, dom = UNARY[op]
    n, u = _layout(_data(dtype, dom, rng), layout)
    _check(_on_bf16(oracle), [n], lambda: getattr(uma, op)(u))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_eager(op, dtype, layout, rng):
    oracle, dl, dr = BINARY[op]
    na, ua = _layout(_data(dtype, dl, rng), layout)
    nb, ub = _layout(_data(dtype, dr, rng), "contiguous" if layout == "broadcast" else layout,
                     shape=(3, 4))
    if layout in ("0d", "size0"):
        nb, ub = _layout(_data(dtype, dr, rng), layout)
    _check(_on_bf16(oracle), [na, nb], lambda: getattr(uma, op)(ua, ub))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where_every_dtype(dtype, rng):
    x = _data(dtype, "general", rng)((3, 4))
    y = _data(dtype, "general", rng)((4,))[::-1]
    c = rng.integers(0, 2, size=(3, 1)).astype(bool)
    got = uma.where(uma.asarray(c), uma.asarray(x), uma.asarray(y))
    assert_matches(got, np.where(c, x, y))


@pytest.mark.parametrize("dst", ALL_DTYPES)
@pytest.mark.parametrize("src", ALL_DTYPES)
def test_astype_every_pair(src, dst, rng):
    x = _data(src, "general", rng)((2, 6))[:, ::-2]
    expected = numpy_quiet(lambda: _astype_oracle(x, dst))
    got = uma.asarray(x).astype(_uma_dt(dst))
    assert_matches(got, expected)


def _astype_oracle(x, dst):
    """NumPy's x.astype(dst), with bfloat16 (which NumPy lacks) by uma's rules rather than by an
    ml_dtypes version's: a bfloat16 value is exactly a float32, converted by NumPy's float32
    rules (out-of-range float -> int values included: kernels/float_to_int.h states one rule for
    every float dtype); a conversion to bfloat16 rounds the exact value once to nearest even."""
    if x.dtype == BF16:
        x = x.astype(np.float32)  # exact
    if dst == "bfloat16":
        flat = [v.real if isinstance(v, complex) else v for v in x.ravel().tolist()]
        return np.array([bfloat16_round_once(v) for v in flat], dtype=np.float64).reshape(x.shape).astype(BF16)
    return x.astype(_np_dt(dst))


def _uma_dt(name):
    return getattr(uma, "bool_" if name == "bool" else name)


# --------------------------------------------------------------------------- mixed dtypes

NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]
PAIR_OPS = ["add", "subtract", "multiply", "divide", "maximum", "less", "arctan2", "floor_divide", "logical_xor",
            "hypot", "copysign", "bitwise_or", "bitwise_left_shift"]


@pytest.mark.parametrize("db", NUMPY_DTYPES)
@pytest.mark.parametrize("da", NUMPY_DTYPES)
@pytest.mark.parametrize("op", PAIR_OPS)
def test_binary_mixed_dtypes(op, da, db, rng):
    """NEP 50 promotion between every pair of NumPy dtypes (eager values and the symbolic
    result dtype), the rhs broadcast from shape (4,)."""
    oracle, dl, dr = BINARY[op]
    na = random_data(da, (3, 4), rng, dl)
    nb = random_data(db, (4,), rng, dr)
    got = _check(oracle, [na, nb], lambda: getattr(uma, op)(uma.asarray(na), uma.asarray(nb)))
    xs = [uma.sym.matrix(dtype=da), uma.sym.vector(dtype=db, shape=(4,))]
    if got is None:  # NumPy refused: so does the graph
        with pytest.raises(TypeError):
            getattr(uma, op)(*xs)
    else:
        assert getattr(uma, op)(*xs).dtype == got.dtype.name


@pytest.mark.parametrize("other", NUMPY_DTYPES)
@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "less", "divide", "hypot", "arctan2"])
def test_bfloat16_mixed_dtypes(op, other, rng):
    """bfloat16 next to another dtype: uma.promote_types' dtype (ml_dtypes' rule); values
    computed in float32 (float64 where the result is) and rounded once."""
    a = random_data("float32", (3, 4), rng, "general").astype(BF16)
    b = random_data(other, (4,), rng, BINARY[op][2])
    rt = uma.promote_types("bfloat16", other).name
    if op in ("hypot", "arctan2") and rt.startswith("complex"):  # real dtypes only, as NumPy
        with pytest.raises(TypeError, match=f"{op}.*complex"):
            getattr(uma, op)(uma.asarray(a), uma.asarray(b))
        with pytest.raises(TypeError, match=f"{op}.*complex"):
            getattr(uma, op)(uma.sym.matrix(dtype="bfloat16"), uma.sym.vector(dtype=other))
        return
    got = getattr(uma, op)(uma.asarray(a), uma.asarray(b))
    if op == "less":
        wide = rt if rt.startswith(("complex", "float64")) else "float32"
        exp = np.less(a.astype(wide), b.astype(wide))
    else:
        wide = {"bfloat16": np.float32}.get(rt, _np_dt(rt))
        exp = numpy_quiet(lambda: getattr(np, op)(a.astype(wide), b.astype(wide))).astype(_np_dt(rt))
    assert_matches(got, exp)
    assert getattr(uma, op)(uma.sym.matrix(dtype="bfloat16"), uma.sym.vector(dtype=other)).dtype == got.dtype.name


# --------------------------------------------------------------------------- round and clip

@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round(dtype, decimals, rng):
    base = _data(dtype, "general", rng)((3, 8))
    if dtype in ("float32", "float64", "complex128"):
        base = base * 37.3  # values with digits on both sides of the point
    n, u = base[:, ::-2], uma.asarray(base)[:, ::-2]
    oracle = _on_bf16(lambda x: np.round(x, decimals))
    _check(oracle, [n], lambda: uma.round(u, decimals))


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5, 0.25, -0.0], dtype=np.float64)
    got = np.asarray(uma.round(uma.asarray(x)))
    np.testing.assert_array_equal(got, np.round(x))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.round(x)))
    i = np.array([1234, -155, 155, 5], dtype=np.int32)
    assert_matches(uma.round(uma.asarray(i), -1), np.round(i, -1))
    assert_matches(uma.round(uma.asarray(i), -2), np.round(i, -2))


CLIP_BOUNDS = [(0, 1), (-1.5, 2), (None, 1), (0, None), (None, None), (2, -1)]


@pytest.mark.parametrize("bounds", CLIP_BOUNDS, ids=[str(b) for b in CLIP_BOUNDS])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_clip_python_bounds(dtype, bounds, rng):
    lo, hi = bounds
    n, u = _layout(_data(dtype, "general", rng), "transposed")
    oracle = _on_bf16(lambda x: np.clip(x, lo, hi))
    _check(oracle, [n], lambda: uma.clip(u, lo, hi))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_clip_array_bounds_broadcast(dtype, rng):
    x = _data(dtype, "general", rng)((3, 4))
    lo = _data(dtype, "general", rng)((4,))
    hi = _data(dtype, "general", rng)((3, 1))
    oracle = _on_bf16(np.clip)
    _check(oracle, [x, lo, hi], lambda: uma.clip(uma.asarray(x), uma.asarray(lo), uma.asarray(hi)))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64"])
def test_clip_out_of_range_int_bound_is_dropped(dtype):
    """numpy.clip drops a Python int bound beyond an integer array's range; a single
    out-of-range bound of the other side still raises OverflowError, as in NumPy."""
    x = np.array([0, 3, 100], dtype=dtype)
    info = np.iinfo(dtype)
    big, small = int(info.max) + 5, int(info.min) - 5
    assert_matches(uma.clip(uma.asarray(x), small, big), np.clip(x, small, big))
    assert_matches(uma.clip(uma.asarray(x), 1, big), np.clip(x, 1, big))
    with pytest.raises(OverflowError):
        np.clip(x, big, None)
    with pytest.raises(OverflowError):
        uma.clip(uma.asarray(x), big, None)


def test_clip_signed_zero_and_nan():
    x = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 0.5])
    for lo, hi in [(0.0, 1.0), (-0.0, 1.0), (-1.0, 0.0), (-1.0, -0.0), (np.nan, 1.0), (0.0, np.nan)]:
        got = np.asarray(uma.clip(uma.asarray(x), lo, hi))
        exp = np.clip(x, lo, hi)
        np.testing.assert_array_equal(got, exp)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(exp), err_msg=f"clip({lo}, {hi})")


# --------------------------------------------------------------------------- edge values

FLOAT_EDGE = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-30, 700.0, -700.0, 3.0]


def _assert_same_floats(got, exp, name):
    got = np.asarray(got)
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    g = got.astype(np.float32) if got.dtype == BF16 else got
    e = exp.astype(np.float32) if exp.dtype == BF16 else exp
    r = RTOL[exp.dtype.name]
    np.testing.assert_allclose(g, e, rtol=r, atol=r, equal_nan=True, err_msg=name)
    if e.dtype.kind == "f" and e.size:  # the sign of zeros and of infinities
        zero = (e == 0) | np.isinf(e)
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(e[zero]), err_msg=f"{name}: sign")


EDGE_UNARY = [op for op in UNARY if op not in ("logical_not", "bitwise_invert")]  # float input


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", EDGE_UNARY)
def test_unary_float_edge_values(op, dtype):
    if op == "digamma":
        pytest.importorskip("mpmath")
    if op == "trigamma":
        pytest.importorskip("scipy.special")
    x = np.array(FLOAT_EDGE, dtype=np.float64).astype(_np_dt(dtype))
    oracle = _on_bf16(UNARY[op][0])
    exp = _expect(oracle, x)
    _assert_same_floats(getattr(uma, op)(uma.asarray(x)), exp, op) if exp.dtype.kind == "f" or exp.dtype == BF16 else \
        np.testing.assert_array_equal(np.asarray(getattr(uma, op)(uma.asarray(x))), exp)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", [o for o in BINARY if not o.startswith("bitwise")])  # float input
def test_binary_float_edge_values(op, dtype):
    v = np.array(FLOAT_EDGE[:11], dtype=dtype)
    a, b = np.meshgrid(v, v)  # every pair
    exp = _expect(BINARY[op][0], a, b)
    got = getattr(uma, op)(uma.asarray(a), uma.asarray(b))
    if exp.dtype.kind == "f":
        _assert_same_floats(got, exp, op)
    else:
        np.testing.assert_array_equal(np.asarray(got), exp)


COMPLEX_EDGE = [complex(r, i) for r in (0.0, -0.0, 1.5, -2.0, np.inf, np.nan) for i in (0.0, -0.0, 0.5, -3.0)]


@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                "maximum", "minimum"])
def test_complex_order_with_nan(op):
    """NumPy's lexicographic complex order, NaN rules included (maximum/minimum keep the
    first operand when it has a NaN)."""
    v = np.array([complex(r, i) for r in (0.0, 1.0, np.nan) for i in (-1.0, 1.0, np.nan)], dtype=np.complex128)
    a, b = np.meshgrid(v, v)
    got = np.asarray(getattr(uma, op)(uma.asarray(a), uma.asarray(b)))
    exp = _expect(getattr(np, op), a, b)
    if exp.dtype.kind == "c":
        np.testing.assert_array_equal(got.real, exp.real)
        np.testing.assert_array_equal(got.imag, exp.imag)
    else:
        np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("op", ["sign", "abs", "reciprocal", "square", "negative", "rint", "sqrt", "exp", "log"])
def test_complex_special_values(op):
    x = np.array(COMPLEX_EDGE, dtype=np.complex128)
    exp = _expect(getattr(np, op), x)
    got = np.asarray(getattr(uma, op)(uma.asarray(x)))
    assert got.dtype == exp.dtype
    np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12, equal_nan=True)


COMPLEX_SPECIAL = [complex(r, i) for r in (0.0, -0.0, 1.5, -2.0, 3.0, np.inf, -np.inf, np.nan)
                   for i in (0.0, -0.0, 0.5, -3.0, 2.0, np.inf, -np.inf, np.nan)]


def _assert_standard_complex(got, z, name):
    """``got`` against the oracle of conftest.standard_complex: values (NaN where NaN), and
    the signs of zero and infinite parts wherever the standard fixes them."""
    exp, signs = standard_complex(name, z)
    got = np.asarray(got)
    assert got.dtype == exp.dtype
    r = 1e-5 if exp.dtype == np.complex64 else 1e-12
    for part in ("real", "imag"):
        g, e = getattr(got, part), getattr(exp, part)
        np.testing.assert_allclose(g, e, rtol=r, atol=r, equal_nan=True, err_msg=f"{name} {part}: {z}")
        fixed = signs & ((e == 0) | np.isinf(e))
        np.testing.assert_array_equal(np.signbit(g[fixed]), np.signbit(e[fixed]), err_msg=f"{name} {part} sign: {z[fixed]}")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["expm1", "tanh"])
def test_complex_special_cases_of_the_standard(op, dtype):
    """Complex expm1 and tanh at zeros, infinities and NaNs: the Array API standard's special
    cases (NumPy's nc_expm1 and ctanh differ there), NumPy's results elsewhere; eager on an
    array and on each element alone (0-d), compiled on the cpu, reference and numpy backends
    (and numba, whose complex ops run on the numpy table)."""
    z = np.array(COMPLEX_SPECIAL, dtype=dtype)
    _assert_standard_complex(getattr(uma, op)(uma.asarray(z)), z, op)
    one = np.array([complex(np.asarray(getattr(uma, op)(uma.asarray(v)))) for v in z], dtype=dtype)
    _assert_standard_complex(one, z, op)
    v = uma.sym.vector("z", dtype)
    for backend in ("cpu", "reference", "numpy") + (("numba",) if "numba" in uma.backends() else ()):
        _assert_standard_complex(as_uma_output(uma.function([v], getattr(uma, op)(v), backend=backend)(z), backend), z, op)


def _c_pow(x, y):
    """C's pow (the Array API standard's special cases of pow), NaN where it has no real value."""
    try:
        return math.pow(x, y)
    except ValueError:
        return math.nan


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_power_of_one_half_follows_the_standard_on_every_backend(dtype):
    """x ** 0.5 is pow, not sqrt: -0.0 ** 0.5 is +0.0 and -inf ** 0.5 is +inf (C's pow; NumPy's
    scalar fast path takes sqrt's -0.0 and NaN), with the exponent a constant or an input."""
    v = np.array([-np.inf, -0.0, 0.0, -1.0, 2.25, np.inf, np.nan], dtype=dtype)
    exp = np.array([_c_pow(float(t), 0.5) for t in v], dtype=dtype)
    _assert_same_floats(uma.asarray(v) ** 0.5, exp, "eager")
    x, y = uma.sym.vector("x", dtype), uma.sym.scalar("y", dtype)
    for backend in ("cpu", "reference", "numpy") + (("numba",) if "numba" in uma.backends() else ()):
        got = uma.function([x], x ** 0.5, backend=backend)(v)
        _assert_same_floats(as_uma_output(got, backend), exp, f"constant exponent, {backend}")
        got = uma.function([x, y], x ** y, backend=backend)(v, 0.5)
        _assert_same_floats(as_uma_output(got, backend), exp, f"input exponent, {backend}")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_floor_divide_infinite_operand_compiled_and_scalar(dtype):
    """floor_divide with one infinite operand follows the standard's special cases on every
    path: eager arrays, 0-d operands (the one-element fast path), Python scalars, the ``//``
    operator, in-place ``//=``, and compiled graphs (cpu, reference and numpy backends)."""
    v = np.array([np.inf, -np.inf, 1.0, -1.0, 0.0, -0.0, 7.5, -7.5, np.nan], dtype=dtype)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    exp = numpy_quiet(lambda: standard_floor_divide(a, b))
    _assert_same_floats(uma.asarray(a) // uma.asarray(b), exp, "//")
    one = np.array([np.asarray(uma.floor_divide(uma.asarray(x), uma.asarray(y))) for x, y in zip(a, b)], dtype=dtype)
    _assert_same_floats(one, exp, "0-d floor_divide")
    if dtype == "float64":
        scal = np.array([np.asarray(uma.asarray(x) // float(y)) for x, y in zip(a, b)])
        _assert_same_floats(scal, exp, "array // float")
        rscal = np.array([np.asarray(float(x) // uma.asarray(y)) for x, y in zip(a, b)])
        _assert_same_floats(rscal, exp, "float // array")
    ua = uma.asarray(a.copy())
    ua //= uma.asarray(b)
    _assert_same_floats(ua, exp, "//=")
    x, y = uma.sym.vector("x", dtype), uma.sym.vector("y", dtype)
    for backend in ("cpu", "reference", "numpy"):
        got = uma.function([x, y], uma.floor_divide(x, y), backend=backend)(a, b)
        _assert_same_floats(as_uma_output(got, backend), exp, f"compiled {backend}")


def test_complex_branch_cuts():
    """Values on the branch cuts of sqrt/log/arcsin/arccos/arctan with both signs of zero."""
    x = np.array([complex(-2, 0.0), complex(-2, -0.0), complex(2, 0.0), complex(2, -0.0),
                  complex(0.0, 2), complex(-0.0, 2), complex(0.0, -2), complex(-0.0, -2)])
    for op in ["sqrt", "log", "log2", "log10", "arcsin", "arccos", "arctan", "log1p"]:
        exp = _expect(getattr(np, op), x)
        got = np.asarray(getattr(uma, op)(uma.asarray(x)))
        np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12, err_msg=op)
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(exp.imag), err_msg=f"{op}: imag sign")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_integer_wraparound_and_reciprocal_of_zero(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    y = np.array([info.max, 3, info.max, info.min, 2], dtype=dtype)
    for op in ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum"]:
        assert_matches(getattr(uma, op)(uma.asarray(x), uma.asarray(y)), _expect(getattr(np, op), x, y))
    for op in ["negative", "abs", "square", "sign", "reciprocal"]:
        assert_matches(getattr(uma, op)(uma.asarray(x)), _expect(getattr(np, op), x))
    assert_matches(uma.power(uma.asarray(x), uma.asarray(np.array(3, dtype))), _expect(np.power, x, np.array(3, dtype)))


def test_float16_is_rounded_once_from_float32():
    """float16 results equal NumPy's: the float32 computation rounded once (NumPy's loops)."""
    x = np.linspace(-4, 4, 257).astype(np.float16)
    y = (np.linspace(1, 3, 257) * (-1) ** np.arange(257)).astype(np.float16)
    for op in ["add", "multiply", "divide", "power", "floor_divide", "remainder"]:
        a = np.abs(x) if op == "power" else x
        np.testing.assert_array_equal(np.asarray(getattr(uma, op)(uma.asarray(a), uma.asarray(y))),
                                      _expect(getattr(np, op), a, y), err_msg=op)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("op", ["sigmoid", "softplus", "erf", "erfc", "gammaln", "digamma", "trigamma", "floor",
                                "ceil"])
def test_real_only_ops_raise_type_error_naming_op_and_dtype(op):
    x = uma.asarray(np.array([1 + 1j], dtype=np.complex64))
    with pytest.raises(TypeError, match=f"{op}.*complex64"):
        getattr(uma, op)(x)
    with pytest.raises(TypeError, match=f"{op}.*complex64"):
        getattr(uma.sym, op)(uma.sym.vector(dtype="complex64"))


@pytest.mark.parametrize("op", ["arctan2", "floor_divide", "remainder"])
def test_binary_complex_type_error(op):
    x = uma.asarray(np.array([1 + 1j]))
    with pytest.raises(TypeError, match=f"{op}.*complex128"):
        getattr(uma, op)(x, x)


# --------------------------------------------------------------------------- symbolic matrix



def _sym_inputs(dtype, k):
    return [uma.sym.matrix(f"x{i}", dtype=dtype) for i in range(k)]


def _run_symbolic(op, dtype, backend, oracle, domains, rng):
    fn = getattr(uma, op)
    xs = _sym_inputs(dtype, len(domains))
    try:
        expected_dt = numpy_quiet(lambda: np.asarray(oracle(*[_data(dtype, d, rng)((1, 1)) for d in domains])).dtype)
    except Exception as e:  # NumPy refuses: building the graph must refuse the same way
        with pytest.raises(numpy_error_type(e)):
            fn(*xs)
        return
    y = fn(*xs)
    assert y.dtype == (expected_dt.name if expected_dt != BF16 else "bfloat16")
    with held_or_refused(backend, dtype, y.dtype):
        f = uma.function(xs, y, backend=backend)
        for layout in SYM_LAYOUTS:
            pairs = [_layout(_data(dtype, d, rng), layout) for d in domains]
            exp = _expect(oracle, *[p[0] for p in pairs])
            got = f(*[p[0] for p in pairs])
            assert_matches(as_uma_output(got, backend), exp)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_symbolic(op, dtype, backend, rng):
    oracle, dom = UNARY[op]
    _run_symbolic(op, dtype, backend, _on_bf16(oracle), [dom], rng)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_symbolic(op, dtype, backend, rng):
    oracle, dl, dr = BINARY[op]
    if op == "subtract" and dtype == "bool":
        with pytest.raises(TypeError):
            uma.sym.subtract(*_sym_inputs("bool", 2))
        return
    _run_symbolic(op, dtype, backend, _on_bf16(oracle), [dl, dr], rng)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "bfloat16", "float32", "complex64"])
def test_round_clip_where_symbolic(dtype, backend, rng):
    x, lo, hi = _sym_inputs(dtype, 3)
    c = uma.sym.matrix("c", dtype="bool")
    outs = [uma.round(x), uma.round(x, 1) if dtype != "bool" else x, uma.clip(x, lo, hi), uma.clip(x, 0, None),
            uma.where(c, x, lo)]
    f = uma.function([x, lo, hi, c], outs, backend=backend)
    vals = [_data(dtype, "general", rng)((3, 4)) for _ in range(3)]
    cv = rng.integers(0, 2, size=(3, 4)).astype(bool)
    got = f(*vals, cv)
    v, lv, hv = vals
    exps = [_on_bf16(lambda a: np.round(a))(v), _on_bf16(lambda a: np.round(a, 1))(v),
            _on_bf16(np.clip)(v, lv, hv), _on_bf16(lambda a: np.maximum(a, 0))(v), np.where(cv, v, lv)]
    for g, e in zip(got, exps):
        assert_matches(uma.asarray(g), e)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_new_float_ops_fuse_on_cpu(dtype, rng):
    """A chain of the new float ops compiles (fused on float32/float64) and matches eager."""
    x = uma.sym.vector("x", dtype=dtype)
    y = uma.softplus(uma.arctan(uma.sinh(x)) * 0.5) + uma.erf(x) - uma.exp2(uma.tan(x * 0.1))
    f = uma.function([x], y, backend="cpu")
    v = _data(dtype, "general", rng)((50,))
    eager = uma.softplus(uma.arctan(uma.sinh(uma.asarray(v))) * 0.5) + uma.erf(uma.asarray(v)) \
        - uma.exp2(uma.tan(uma.asarray(v) * 0.1))
    np.testing.assert_array_equal(np.asarray(f(v)), np.asarray(eager))


# --------------------------------------------------------------------------- gradients

@pytest.mark.parametrize("op", list(GRAD_UNARY))
def test_verify_grad_unary(op, rng):
    v = random_data("float64", (3, 4), rng, GRAD_UNARY[op])
    uma.verify_grad(lambda x: getattr(uma, op)(x), [v], rng=rng)


@pytest.mark.parametrize("op", ["arctan2", "add", "subtract", "multiply", "divide", "power",
                                "maximum", "minimum", "copysign", "hypot", "logaddexp", "nextafter"])
def test_verify_grad_binary(op, rng):
    a = random_data("float64", (3, 4), rng, "positive" if op == "power" else "general")
    b = random_data("float64", (3, 4), rng, "nonzero")
    uma.verify_grad(lambda x, y: getattr(uma, op)(x, y), [a, b], rng=rng)


def test_verify_grad_clip_and_round(rng):
    x = rng.uniform(-3, 3, size=(4, 5)) + 0.013  # no element on a bound or a .5
    lo = rng.uniform(-1.5, -0.5, size=(5,))
    hi = rng.uniform(0.5, 1.5, size=(4, 1))
    uma.verify_grad(lambda a, b, c: uma.clip(a, b, c), [x, lo, hi], rng=rng)
    uma.verify_grad(lambda a: uma.clip(a, -1.0, 1.0) * a, [x], rng=rng)
    uma.verify_grad(lambda a: uma.round(a, 1) + a * a, [x], rng=rng)
    uma.verify_grad(lambda a: uma.rint(a) + uma.sin(a), [x], rng=rng)


@pytest.mark.parametrize("op", ["exp2", "log2", "log10", "reciprocal", "tan", "arcsin", "arccos", "arctan",
                                "sinh", "cosh", "softplus", "erf", "erfc", "gammaln", "digamma"])
def test_grad_float32_keeps_dtype(op, rng):
    """Gradients work on float32 too (dtype kept), matching float64 within float32 accuracy."""
    dom = GRAD_UNARY[op]
    v = random_data("float64", (6,), rng, dom)
    out = []
    for dt in ("float32", "float64"):
        x = uma.sym.vector("x", dtype=dt)
        g = uma.grad(uma.sum(getattr(uma, op)(x)), x)
        assert g.dtype == dt
        out.append(np.asarray(uma.function([x], g, backend="cpu")(v.astype(dt))))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-4, atol=1e-4)


def test_trigamma_has_no_gradient():
    x = uma.sym.vector("x")
    assert uma.grad(uma.sum(uma.digamma(x)), x).dtype == "float64"  # digamma's is trigamma
    with pytest.raises(NotImplementedError, match="trigamma"):
        uma.grad(uma.sum(uma.trigamma(x)), x)


def test_trigamma_identities(rng):
    """trigamma against its defining identities, independent of any other implementation:
    psi'(1) = pi^2/6, psi'(1/2) = pi^2/2, the recurrence psi'(x) = psi'(x + 1) + 1/x^2, the
    reflection psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x), and the central difference of
    digamma (float64, eager and on every backend)."""
    special = np.array([1.0, 0.5])
    np.testing.assert_allclose(np.asarray(uma.trigamma(uma.asarray(special))),
                               [math.pi ** 2 / 6, math.pi ** 2 / 2], rtol=1e-14)
    x = np.concatenate([rng.uniform(0.01, 30, 200), rng.uniform(-30, 0, 200)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    t = lambda v: np.asarray(uma.trigamma(uma.asarray(v)))  # noqa: E731
    np.testing.assert_allclose(t(x), t(x + 1) + 1 / x ** 2, rtol=1e-12)
    np.testing.assert_allclose(t(1 - x) + t(x), math.pi ** 2 / np.sin(math.pi * x) ** 2, rtol=1e-11)
    h, far = 1e-5, x[np.abs(x - np.round(x)) > 0.1]  # away from the poles, where psi varies fast
    dpsi = (np.asarray(uma.digamma(uma.asarray(far + h))) - np.asarray(uma.digamma(uma.asarray(far - h)))) / (2 * h)
    np.testing.assert_allclose(t(far), dpsi, rtol=1e-6)
    v = uma.sym.vector("v")
    for backend in BACKENDS:
        got = np.asarray(uma.function([v], uma.trigamma(v), backend=backend)(x))
        np.testing.assert_allclose(got, t(x), rtol=1e-14, err_msg=backend)


def test_complex_parts_aliases_and_methods(rng):
    """NumPy's other spellings: ``conjugate`` and the ``conj()``/``conjugate()`` methods (new
    arrays, as NumPy's); the symbolic ``.real``/``.imag``/``.conj()`` of a Variable."""
    z = random_data("complex64", (3, 4), rng)[:, ::-1]
    u = uma.asarray(z)
    for got in (uma.conjugate(u), u.conj(), u.conjugate()):
        assert_matches(got, np.conjugate(z))
    v = uma.sym.matrix("v", dtype="complex64")
    f = uma.function([v], [v.real, v.imag, v.conj()], backend="cpu")
    for got, exp in zip(f(z), (z.real, z.imag, z.conj())):
        assert_matches(got, exp)
    x = uma.sym.vector("x", dtype="float32")
    assert x.real is x and x.conj() is x  # NumPy's real/conj of a real array: its values


# --------------------------------------------------------------------------- weak scalars, operators

FLOAT_LOOP_OPS = ["hypot", "logaddexp", "copysign", "nextafter", "arctan2", "divide"]


@pytest.mark.parametrize("value", [1000, -1, 70000, 2**63, -(2**63) - 1])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint64"])
@pytest.mark.parametrize("op", FLOAT_LOOP_OPS)
def test_python_int_outside_the_integer_dtype_joins_the_float_loop(op, dtype, value):
    """NEP 50: a Python int next to an integer array of an op that computes in a float loop is
    converted to that loop's dtype (NumPy: hypot(int8 array, 1000) is float16 1000.0), eagerly
    in either order and in a compiled function."""
    a = np.array([1, 2, 3], dtype=dtype)
    for args in ((a, value), (value, a)):
        _check(getattr(np, op), args, lambda: getattr(uma, op)(*[uma.asarray(x) if isinstance(x, np.ndarray) else x
                                                               for x in args]))
    x = uma.sym.vector("x", dtype=dtype)
    try:
        expected = numpy_quiet(lambda: getattr(np, op)(a, value))
    except OverflowError:
        with pytest.raises(OverflowError):
            getattr(uma, op)(x, value)
        return
    assert_matches(uma.function([x], getattr(uma, op)(x, value), backend="cpu")(a), expected)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "uint64"])
def test_bitwise_operators_are_numpys_on_arrays_and_variables(dtype, rng):
    """& | ^ ~ << >> are NumPy's bitwise operators (on bool: the logical values), eagerly and on
    symbolic variables; a float operand is a TypeError naming the op."""
    a = random_data(dtype, (3, 4), rng, "coarse")
    b = random_data(dtype, (4,), rng, "coarse")
    ua, ub = uma.asarray(a), uma.asarray(b)
    ops = [lambda p, q: p & q, lambda p, q: p | q, lambda p, q: p ^ q, lambda p, q: ~p]
    if dtype != "bool":
        s = random_data(dtype, (4,), rng, "exponent")
        ops += [lambda p, q: p << s, lambda p, q: p >> s, lambda p, q: 1 << (p & 3)]
    x, y = uma.sym.matrix("x", dtype=dtype), uma.sym.vector("y", dtype=dtype)
    f = uma.function([x, y], [op(x, y) for op in ops], backend="cpu")
    for op, got in zip(ops, f(a, b)):
        want = numpy_quiet(lambda: op(a, b))
        assert_matches(op(ua, ub), want)
        assert_matches(got, want)
    with pytest.raises(TypeError, match="bitwise_and.*float64"):
        uma.asarray(np.ones(2)) & 1
