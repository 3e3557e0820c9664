"""Op x dtype x layout matrix for the non-elementwise ops: reductions, cumulative
ops, linear algebra, shape ops, advanced indexing, functional updates and nn helpers, on every
dtype, eager and compiled (cpu, reference, numpy), with gradients checked by verify_grad.

NumPy 2 is the oracle. bfloat16 is checked against the float32 computation rounded to
bfloat16 (its dtype rule is float16's); float16 results are compared with a tolerance (NumPy
accumulates some float16 reductions in float16, uma in double).
"""
import numpy as np
import pytest

import uma
from uma import sym

from conftest import ALL_DTYPES, BACKENDS, assert_matches, held_or_refused, host_numpy, check_like_numpy, make_layout, np_dtype, numpy_quiet, random_data

BF16 = np_dtype("bfloat16")
TOL = {"float16": 1e-2, "bfloat16": 2e-2}
LAYOUTS = ["contiguous", "strided", "transposed", "negative_stride", "broadcast", "size0", "0d"]
SYM_DTYPES = ["bool", "int8", "uint16", "int64", "float16", "bfloat16", "float32", "complex128"]


def layout(make, name, shape=(3, 4)):
    """(numpy view, uma view) in `name`; "strided" is every other element of a larger base."""
    if name == "strided":
        base = make(tuple(2 * s for s in shape))
        idx = tuple(slice(None, None, 2) for _ in shape)
        return base[idx], uma.asarray(base)[idx]
    return make_layout(make, name, shape)


def oracle(fn, *arrays):
    """fn on NumPy arrays; bfloat16 inputs are computed in float32 and the result rounded to
    bfloat16 (dtype rule taken from float16, which NumPy treats the same way)."""
    if not any(a.dtype == BF16 for a in arrays):
        return fn(*arrays)
    r16 = np.asarray(fn(*[a.astype(np.float16) if a.dtype == BF16 else a for a in arrays]))
    r = np.asarray(fn(*[a.astype(np.float32) if a.dtype == BF16 else a for a in arrays]))
    return r.astype(BF16 if r16.dtype == np.float16 else r16.dtype)


def check(np_fn, uma_fn, dtype):
    tol = TOL.get(dtype)
    return check_like_numpy(np_fn, uma_fn, rtol=tol, atol=tol)


def maker(dtype, rng, domain="general"):
    return lambda shape: random_data(dtype, shape, rng, domain)


# ============================================================================ reductions

def _np_logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) in float64 with NumPy's reduction rules (axes, 0-d, empty groups)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        raise TypeError("complex")
    x = a.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    res = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=keepdims)) + (
        m if keepdims else np.squeeze(m, axis=axis if x.ndim else None))
    return res.astype(a.dtype if a.dtype.kind == "f" else np.float64)


REDUCE = {
    "sum": (np.sum, uma.sum), "prod": (np.prod, uma.prod), "mean": (np.mean, uma.mean),
    "max": (np.max, uma.max), "min": (np.min, uma.min), "argmax": (np.argmax, uma.argmax),
    "argmin": (np.argmin, uma.argmin), "all": (np.all, uma.all), "any": (np.any, uma.any),
    "var": (lambda a, **k: np.var(a, ddof=1, **k), lambda a, **k: uma.var(a, ddof=1, **k)),
    "std": (np.std, uma.std), "logsumexp": (_np_logsumexp, uma.logsumexp),
}
AXES = [None, 0, -1, (0, 1), (-1, 0)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(REDUCE))
def test_reduction_matrix(op, dtype, rng):
    np_fn, uma_fn = REDUCE[op]
    domain = "unit" if op == "prod" else "general"
    for lay in LAYOUTS:
        a, u = layout(maker(dtype, rng, domain), lay)
        for axis in AXES:
            if op in ("argmax", "argmin") and isinstance(axis, tuple):
                with pytest.raises(TypeError):
                    uma_fn(u, axis=axis)
                continue
            for keepdims in (False, True):
                check(lambda: oracle(lambda x: np_fn(x, axis=axis, keepdims=keepdims), a),
                      lambda: uma_fn(u, axis=axis, keepdims=keepdims), dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_max_min_propagate_nan(dtype):
    a = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, -1.0]]).astype(np_dtype(dtype))
    if dtype.startswith("complex"):
        a[1, 0] = complex(2.0, np.nan)
    u = uma.asarray(a)
    for op in ("max", "min", "argmax", "argmin"):
        for axis in (None, 0, 1):
            check(lambda: oracle(lambda x: getattr(np, op)(x, axis=axis), a), lambda: getattr(uma, op)(u, axis=axis),
                  dtype)


def test_complex_max_is_lexicographic():
    a = np.array([1 + 5j, 2 - 1j, 2 + 0j, 2 - 3j])
    u = uma.asarray(a)
    for op in ("max", "min", "argmax", "argmin"):
        assert_matches(getattr(uma, op)(u), getattr(np, op)(a))


def test_var_std_ddof_and_correction(rng):
    a = rng.standard_normal((4, 5))
    u = uma.asarray(a)
    for ddof in (0, 1, 2.5, 5, 7):  # ddof >= n: NumPy's inf/nan (its warning silenced)
        assert_matches(uma.var(u, axis=1, ddof=ddof), numpy_quiet(lambda: np.var(a, axis=1, ddof=ddof)))
        assert_matches(uma.std(u, axis=0, correction=ddof), numpy_quiet(lambda: np.std(a, axis=0, correction=ddof)))
    with pytest.raises(ValueError, match="ddof and correction"):
        uma.var(u, ddof=1, correction=1)


def test_empty_reduction_errors_name_the_op():
    u = uma.zeros((0, 3), dtype="int8")
    for op in ("max", "min", "argmax", "argmin"):
        with pytest.raises(ValueError, match=op):
            getattr(uma, op)(u, axis=0)
    assert_matches(uma.sum(u, axis=0), np.zeros((0, 3), np.int8).sum(axis=0))
    assert_matches(uma.max(u, axis=1), np.zeros((0, 3), np.int8).max(axis=1))  # nothing to reduce: no error


def test_reduction_bad_axis_and_wrapping(rng):
    u = uma.ones((2, 3), dtype="uint8")
    for op in ("sum", "var", "logsumexp", "max"):
        with pytest.raises(IndexError, match="axis 2"):
            getattr(uma, op)(u, axis=2)
        with pytest.raises(ValueError, match="duplicate"):
            getattr(uma, op)(u, axis=(0, -2))
    with pytest.raises(TypeError, match="logsumexp"):
        uma.logsumexp(uma.ones(3, dtype="complex64"))
    big = np.full(4, 2**62, dtype=np.int64)  # integer sums wrap as NumPy's do
    with np.errstate(all="ignore"):
        assert_matches(uma.sum(uma.asarray(big)), big.sum())
        assert_matches(uma.prod(uma.asarray(big)), big.prod())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_cumulative_matrix(op, dtype, rng):
    domain = "unit" if op == "cumprod" else "general"
    for lay in LAYOUTS:
        a, u = layout(maker(dtype, rng, domain), lay)
        for axis in (None, 0, 1, -1):
            check(lambda: oracle(lambda x: getattr(np, op)(x, axis=axis), a), lambda: getattr(uma, op)(u, axis=axis),
                  dtype)


# ============================================================================ linear algebra

MATMUL_SHAPES = [((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2)),
                 ((3, 0), (0, 2)), ((0, 4), (4, 3)), ((2, 3, 4), (4,))]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_matmul_matrix(dtype, rng):
    mk = maker(dtype, rng, "coarse")
    for sa, sb in MATMUL_SHAPES:
        a, b = mk(sa), mk(sb)
        check(lambda: oracle(np.matmul, a, b), lambda: uma.matmul(uma.asarray(a), uma.asarray(b)), dtype)
    for lay in ("strided", "transposed", "negative_stride", "broadcast"):
        a, u = layout(mk, lay, (3, 4))
        b, v = layout(mk, lay, (4, 3))
        check(lambda: oracle(np.matmul, a, b), lambda: uma.matmul(u, v), dtype)
        check(lambda: oracle(np.dot, a, b), lambda: uma.dot(u, v), dtype)
    a, b = mk((3, 4)), mk((5, 2))
    with pytest.raises(ValueError, match="matmul"):
        uma.matmul(uma.asarray(a), uma.asarray(b))


def test_matmul_mixed_dtypes_promote(rng):
    a = random_data("int8", (2, 3), rng)
    b = random_data("float32", (3, 2), rng)
    assert_matches(uma.matmul(uma.asarray(a), uma.asarray(b)), np.matmul(a, b))
    c = np.array([[100, 100]], dtype=np.int8)  # int8 products wrap, as NumPy's
    with np.errstate(all="ignore"):
        assert_matches(uma.matmul(uma.asarray(c), uma.asarray(c.T)), np.matmul(c, c.T))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_outer_diag_trace_matrix(dtype, rng):
    mk = maker(dtype, rng)
    for lay in ("contiguous", "strided", "transposed", "negative_stride", "broadcast", "size0", "0d"):
        a, u = layout(mk, lay)
        check(lambda: oracle(np.outer, a, a), lambda: uma.outer(u, u), dtype)
        for k in (-2, 0, 1, 5):
            check(lambda: oracle(lambda x: np.diag(x, k), a), lambda: uma.diag(u, k), dtype)
            check(lambda: oracle(lambda x: np.trace(x, k), a), lambda: uma.trace(u, k), dtype)
            if a.ndim == 2:
                check(lambda: oracle(lambda x: np.diag(x[0], k), a), lambda: uma.diag(u[0], k), dtype)
    a3 = mk((2, 3, 4))
    u3 = uma.asarray(a3)
    for off, ax1, ax2 in [(0, 1, 2), (1, 2, 0), (-1, 0, -1)]:
        check(lambda: oracle(lambda x: np.trace(x, off, ax1, ax2), a3), lambda: uma.trace(u3, off, ax1, ax2), dtype)
        check(lambda: oracle(lambda x: np.diagonal(x, off, ax1, ax2), a3),
              lambda: uma.diagonal(u3, off, ax1, ax2), dtype)
    with pytest.raises(ValueError, match="diag"):
        uma.diag(u3)
    with pytest.raises(ValueError, match="axis1 and axis2"):
        uma.trace(u3, 0, 1, 1)


def test_trace_errors_name_trace():
    """trace's errors name trace, eager and symbolic (its rule is diagonal's)."""
    x = uma.sym.vector("x")
    for call in (lambda: uma.trace(uma.asarray(np.ones(3))), lambda: uma.sym.trace(x)):
        with pytest.raises(ValueError, match=r"^trace: the array must have at least two dimensions, got shape \((3|\?),\)"):
            call()
    with pytest.raises(ValueError, match=r"^trace: axis1 and axis2 cannot be the same \(both are 1\)"):
        uma.sym.trace(uma.sym.matrix("m"), 0, 1, -1)
    assert uma.sym.trace(uma.sym.tensor("t", shape=(2, 3, 4)), 0, 1, 2).type.shape == (2,)


# ============================================================================ shape ops

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_shape_ops_every_dtype(dtype, rng):
    mk = maker(dtype, rng)
    for lay in ("contiguous", "strided", "transposed", "negative_stride", "broadcast", "size0"):
        a, u = layout(mk, lay)
        check(lambda: a.reshape(-1), lambda: uma.reshape(u, (-1,)), dtype)
        check(lambda: a.T, lambda: uma.transpose(u), dtype)
        check(lambda: np.expand_dims(a, 1), lambda: uma.expand_dims(u, 1), dtype)
        check(lambda: np.squeeze(a[:, :1], 1), lambda: uma.squeeze(u[:, :1], 1), dtype)
        check(lambda: np.broadcast_to(a[:1], (2,) + a.shape), lambda: uma.broadcast_to(u[:1], (2,) + a.shape), dtype)
        check(lambda: np.concatenate([a, a[:1]], axis=0), lambda: uma.concatenate([u, u[:1]], axis=0), dtype)
        check(lambda: np.stack([a, a], axis=-1), lambda: uma.stack([u, u], axis=-1), dtype)
        for ios, axis in [(2, 1), ([1, 2], 0), ([-1, 10], 1), ([], 0), (1, -1)]:
            parts_np = np.split(a, ios, axis=axis)
            parts = uma.split(u, ios, axis=axis)
            assert len(parts) == len(parts_np)
            for p, q in zip(parts, parts_np):
                assert_matches(p, q)


def test_split_errors():
    u = uma.ones((4, 6), dtype="int16")
    with pytest.raises(ValueError, match="equal division"):
        uma.split(u, 4, axis=1)
    with pytest.raises(ValueError, match="larger than 0"):
        uma.split(u, 0)
    with pytest.raises(IndexError, match="axis 2"):
        uma.split(u, 2, axis=2)


# ============================================================================ indexing

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_take_and_mask_matrix(dtype, rng):
    mk = maker(dtype, rng)
    for lay in ("contiguous", "strided", "transposed", "negative_stride", "broadcast", "size0"):
        a, u = layout(mk, lay)
        n0 = a.shape[0]
        for idx, axis in [([2, -1, 0, 2], 1), (np.array([[1, 0], [3, 3]], np.uint8), -1), ([], 0),
                          ([-3, 11], None), (np.array(1), 1)]:
            check(lambda: np.take(a, idx, axis=axis), lambda: uma.take(u, idx, axis=axis), dtype)
        m = (np.arange(a.size).reshape(a.shape) % 3 == 0)
        check(lambda: a[m], lambda: u[uma.asarray(m)], dtype)
        check(lambda: a[m[:, 0]], lambda: u[m[:, 0]], dtype)
        if n0:
            check(lambda: a[[0, -1, 0]], lambda: u[[0, -1, 0]], dtype)
        check(lambda: a[:, [3, 1]], lambda: u[:, uma.asarray(np.array([3, 1]))], dtype)


def test_indexing_errors():
    u = uma.arange(12).reshape(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        uma.take(u, [0, 5], axis=0)
    with pytest.raises(IndexError, match="-13"):
        uma.take(u, [-13])
    with pytest.raises(TypeError, match="integers"):
        uma.take(u, np.array([0.5]))
    with pytest.raises(IndexError, match="boolean index did not match"):
        u[np.ones(4, bool)]
    with pytest.raises(IndexError, match="shape mismatch"):
        u[[0, 1], [1, 2, 3]]
    np.testing.assert_array_equal(np.asarray(u[[0, 1], [1, 2]]), np.arange(12).reshape(3, 4)[[0, 1], [1, 2]])
    with pytest.raises(IndexError, match="out of bounds"):
        u[:, [4]]


def _np_update(x, index, y, inc):
    out = x.copy()
    if not inc:
        out[index] = y
    elif isinstance(index, tuple) and all(isinstance(i, (int, slice)) for i in index):
        out[index] += y
    else:
        np.add.at(out, index, y)
    return out


UPDATE_INDICES = [(1, slice(None, None, -2)), (slice(None), [3, 0, 3]), ([2, 0, 2, 2],), "mask", (Ellipsis, 1)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("inc", [False, True])
def test_set_inc_subtensor_matrix(dtype, inc, rng):
    mk = maker(dtype, rng)
    for lay in ("contiguous", "transposed", "negative_stride", "broadcast"):
        x, u = layout(mk, lay)
        for index in UPDATE_INDICES:
            if index == "mask":
                index = np.arange(12).reshape(3, 4) % 5 == 1
            key = index[0] if isinstance(index, tuple) and len(index) == 1 else index
            region = np.asarray(x[key]).shape
            for yshape in (region, region[-1:], ()):
                y = random_data(dtype, yshape, rng)
                fn = uma.inc_subtensor if inc else uma.set_subtensor
                check(lambda: oracle(lambda a, b: _np_update(np.array(a), key, b, inc), x, y),
                      lambda: fn(u, key, uma.asarray(y)), dtype)
        assert np.array_equal(np.asarray(u).astype(np.float64) if dtype == "bfloat16" else np.asarray(u),
                              x.astype(np.float64) if dtype == "bfloat16" else x)  # x itself is unchanged


def test_update_errors():
    u = uma.zeros((3, 4), dtype="int32")
    with pytest.raises(ValueError, match="broadcast"):
        uma.set_subtensor(u, (slice(None), 0), uma.ones(4, dtype="int32"))
    with pytest.raises(TypeError, match="same_kind"):
        uma.inc_subtensor(u, 0, uma.ones(4, dtype="float64"))
    with pytest.raises(IndexError, match="out of bounds"):
        uma.set_subtensor(u, [3], 1)
    with pytest.raises(IndexError, match="boolean index"):
        uma.set_subtensor(u, np.ones(2, bool), 1)


# ============================================================================ nn helpers

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nn_helpers_float_dtypes(dtype, rng):
    z = random_data(dtype, (4, 5), rng)
    u = uma.asarray(z)

    def np_softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    for axis in (0, -1):
        check(lambda: oracle(lambda x: np_softmax(x, axis), z), lambda: uma.softmax(u, axis=axis), dtype)
        check(lambda: oracle(lambda x: np.log(np_softmax(x, axis)), z), lambda: uma.log_softmax(u, axis=axis), dtype)
    check(lambda: oracle(lambda x: np.maximum(x, 0), z), lambda: uma.relu(u), dtype)
    labels = np.array([0, 4, 2, 1])
    check(lambda: oracle(lambda x: -np.log(np_softmax(x, 1))[np.arange(4), labels], z),
          lambda: uma.softmax_cross_entropy(u, labels), dtype)
    check(lambda: np.eye(5, dtype=np_dtype(dtype))[labels], lambda: uma.one_hot(labels, 5, dtype=dtype), dtype)
    with pytest.raises(TypeError, match="softmax"):
        uma.softmax(uma.ones(3, dtype="int32"))


# ============================================================================ symbolic

def _run(backend, inputs, values, out):
    f = uma.function(inputs, [out], backend=backend)
    r = f(*values)[0]
    return r if isinstance(r, uma.Array) else uma.asarray(r)


SYM_CASES = {
    "sum": lambda x: uma.sum(x, axis=0), "prod": lambda x: uma.prod(x, axis=-1, keepdims=True),
    "mean": lambda x: uma.mean(x), "max": lambda x: uma.max(x, axis=1), "argmin": lambda x: uma.argmin(x, axis=0),
    "any": lambda x: uma.any(x, axis=1), "var": lambda x: uma.var(x, axis=0, ddof=1),
    "std": lambda x: uma.std(x, axis=(0, 1)), "cumsum": lambda x: uma.cumsum(x, axis=1),
    "cumsum_flat": lambda x: uma.cumsum(x), "matmul": lambda x: uma.matmul(x, uma.transpose(x)),
    "outer": lambda x: uma.outer(x, x), "diag": lambda x: uma.diag(x, 1), "trace": lambda x: uma.trace(x),
    "take": lambda x: uma.take(x, np.array([2, 0, 2]), axis=1), "take_flat": lambda x: uma.take(x, [[1, -1]]),
    "mask": lambda x: x[np.array([True, False, True])], "int_index": lambda x: x[:, [3, -1]],
    "set": lambda x: uma.set_subtensor(x[1:, ::2], x[:2, 1::2]), "inc": lambda x: uma.inc_subtensor(x[[0, 0, 2]], uma.expand_dims(x[0], 0)),
    "set3": lambda x: uma.set_subtensor(x, np.array([True, False, True]), x[1]),
    "split": lambda x: uma.split(x, [1, 3], axis=1)[1], "concat": lambda x: uma.concatenate([x, x[:1]]),
    "stack": lambda x: uma.stack([x, x], axis=1),
}
NP_CASES = {
    "sum": lambda x: np.sum(x, axis=0), "prod": lambda x: np.prod(x, axis=-1, keepdims=True),
    "mean": lambda x: np.mean(x), "max": lambda x: np.max(x, axis=1), "argmin": lambda x: np.argmin(x, axis=0),
    "any": lambda x: np.any(x, axis=1), "var": lambda x: np.var(x, axis=0, ddof=1),
    "std": lambda x: np.std(x, axis=(0, 1)), "cumsum": lambda x: np.cumsum(x, axis=1),
    "cumsum_flat": lambda x: np.cumsum(x), "matmul": lambda x: np.matmul(x, x.T), "outer": lambda x: np.outer(x, x),
    "diag": lambda x: np.diag(x, 1), "trace": lambda x: np.trace(x),
    "take": lambda x: np.take(x, [2, 0, 2], axis=1), "take_flat": lambda x: np.take(x, [[1, -1]]),
    "mask": lambda x: x[np.array([True, False, True])], "int_index": lambda x: x[:, [3, -1]],
    "set": lambda x: _np_update(x, (slice(1, None), slice(None, None, 2)), x[:2, 1::2], False),
    "inc": lambda x: _np_update(x, ([0, 0, 2],), x[:1], True),
    "set3": lambda x: _np_update(x, np.array([True, False, True]), x[1], False),
    "split": lambda x: np.split(x, [1, 3], axis=1)[1], "concat": lambda x: np.concatenate([x, x[:1]]),
    "stack": lambda x: np.stack([x, x], axis=1),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", SYM_DTYPES)
def test_symbolic_matrix(backend, dtype, rng):
    for case, build in SYM_CASES.items():
        x = sym.tensor("x", dtype, shape=(None, None))
        out = build(x)
        for lay in ("contiguous", "transposed"):
            a, u = layout(maker(dtype, rng, "unit" if case == "prod" else "general"), lay)
            with held_or_refused(backend, dtype, *[o.dtype for o in (out if isinstance(out, (list, tuple)) else [out])]):
                check(lambda: oracle(NP_CASES[case], a), lambda: _run(backend, [x], [u], out), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_symbolic_runtime_errors(backend):
    x = sym.tensor("x", "float64", shape=(None, None))
    i = sym.tensor("i", "int64", shape=(None,))
    f = uma.function([x, i], [uma.take(x, i, axis=0)], backend=backend)
    with pytest.raises(IndexError):
        f(np.ones((2, 3)), np.array([0, 2]))
    m = sym.tensor("m", "bool", shape=(None,))
    g = uma.function([x, m], [x[m]], backend=backend)
    with pytest.raises(IndexError):
        g(np.ones((2, 3)), np.ones(3, bool))
    with pytest.raises(TypeError, match="two-argument form"):
        uma.set_subtensor(x, 1.0)
    # the value broadcasts to the region only along axes its type declares as length 1
    for update in (uma.set_subtensor(x[1:], x[:1]), uma.inc_subtensor(x[i], x[:1])):
        h = uma.function([x, i], [update], backend=backend)
        with pytest.raises(ValueError, match=r"run-time shape \(1, 3\).*axis 0.*\(3, 3\).*length 1"):
            h(np.ones((4, 3)), np.array([0, 1, 3]))
    one = uma.expand_dims(x[0], 0)  # a static length 1
    h = uma.function([x, i], [uma.inc_subtensor(x[i], one)], backend=backend)
    want = np.ones((4, 3))
    np.add.at(want, [0, 1, 1], np.ones((1, 3)))
    np.testing.assert_array_equal(host_numpy(h(np.ones((4, 3)), np.array([0, 1, 1]))[0]), want)
    with pytest.raises(ValueError, match="equal division"):
        uma.split(sym.tensor("y", "float64", shape=(3, 4)), 3, axis=1)
    with pytest.raises(IndexError):
        uma.sum(x, axis=2)


# ============================================================================ gradients

def _vg(fun, pt, **kw):
    uma.verify_grad(fun, pt, rng=np.random.default_rng(0), **kw)


def test_grad_reductions(rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    for axis in (None, 0, (0, 1), -1):
        for kd in (False, True):
            _vg(lambda v: uma.sum(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.mean(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.prod(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.var(v, axis=axis, ddof=1, keepdims=kd), [x])
            _vg(lambda v: uma.std(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.max(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.min(v, axis=axis, keepdims=kd), [x])
            _vg(lambda v: uma.logsumexp(v, axis=axis, keepdims=kd), [x])
    _vg(lambda v: uma.var(v, axis=0), [x.astype(np.float32)])


def test_grad_prod_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, -1.0]])
    _vg(lambda v: uma.prod(v, axis=1), [x])
    _vg(lambda v: uma.prod(v), [x[2:]])
    xs = sym.tensor("x", "float64", shape=(3, 3))
    g = uma.function([xs], [uma.grad(uma.sum(uma.prod(xs, axis=1)), xs)], backend="reference")(x)[0]
    np.testing.assert_array_equal(np.asarray(g), [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-2.0, -1.0, 2.0]])


@pytest.mark.parametrize("backend", ["reference", "cpu", "numpy"])
def test_grad_max_and_min_share_the_gradient_among_ties(backend):
    """The elements equal to the maximum (minimum) share the upstream gradient equally (JAX's
    and torch.amax's rule), so the maximum over copies of one value passes that value's
    derivative back once: a function that is differentiable gets its derivative."""
    x = np.array([1.0, 3.0, 3.0, 2.0])
    xs = sym.vector("x")
    g = uma.function([xs], [uma.grad(uma.max(xs), xs), uma.grad(uma.min(-xs), xs)], backend=backend)(x)
    np.testing.assert_array_equal(host_numpy(g[0]), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(host_numpy(g[1]), [0.0, -0.5, -0.5, 0.0])
    m = sym.matrix("m")
    w = np.array([1.0, 2.0])
    cost = uma.sum(uma.max(m, axis=1) * w)
    got = uma.function([m], uma.grad(cost, m), backend=backend)(np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]]))
    np.testing.assert_allclose(host_numpy(got), [[0.5, 0.5, 0.0], [2 / 3, 2 / 3, 2 / 3]], rtol=1e-15)
    # max over [v, v] is v: its gradient is 1 for each element, as finite differences say
    v = np.array([0.3, -1.2, 2.0])
    dup = uma.grad(uma.sum(uma.max(uma.stack([xs, xs]), axis=0)), xs)
    np.testing.assert_array_equal(host_numpy(uma.function([xs], dup, backend=backend)(v)), np.ones(3))
    _vg(lambda t: uma.max(uma.concat([t, t])), [v])
    _vg(lambda t: uma.min(uma.stack([t, t]), axis=0), [v])


def test_grad_cumulative(rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    for axis in (None, 0, 1):
        _vg(lambda v: uma.cumsum(v, axis=axis), [x])
        _vg(lambda v: uma.cumprod(v, axis=axis), [x])


def test_grad_linear_algebra(rng):
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((3, 4, 2))
    _vg(lambda p, q: uma.matmul(p, q), [a, b])
    _vg(lambda p, q: uma.matmul(p, q), [rng.standard_normal(4), rng.standard_normal((2, 4, 3))])
    _vg(lambda p, q: uma.matmul(p, q), [rng.standard_normal((3, 4)).astype(np.float32),
                                        rng.standard_normal(4).astype(np.float32)])
    _vg(lambda p, q: uma.outer(p, q), [rng.standard_normal((2, 2)), rng.standard_normal(3)])
    _vg(lambda p: uma.diag(p, 1), [rng.standard_normal(3)])
    _vg(lambda p: uma.diag(p, -1), [rng.standard_normal((3, 4))])
    _vg(lambda p: uma.trace(p, 1), [rng.standard_normal((3, 4))])
    _vg(lambda p: uma.trace(p, 0, 2, 0), [rng.standard_normal((3, 2, 4))])


def test_grad_shape_and_indexing(rng):
    x = rng.standard_normal((3, 4))
    _vg(lambda v: uma.split(v, 2, axis=1)[1] * uma.split(v, [1], axis=1)[0], [x])
    _vg(lambda v, w: uma.concatenate([v, w], axis=0), [x, rng.standard_normal((2, 4))])
    _vg(lambda v, w: uma.stack([v, w], axis=2), [x, x + 1])
    _vg(lambda v: uma.take(v, np.array([2, 0, 2, 2]), axis=1), [x])
    _vg(lambda v: uma.take(v, [[0, 11], [11, 5]]), [x])
    _vg(lambda v: v[np.array([True, False, True])], [x])
    _vg(lambda v: v[x > 0.2], [x])
    _vg(lambda v: v[:, [1, 1, 3]], [x])


def test_grad_functional_updates(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((2, 2))
    _vg(lambda v, w: uma.set_subtensor(v[1:, ::2], w), [x, y])
    _vg(lambda v, w: uma.inc_subtensor(v[1:, ::2], w), [x, y])
    _vg(lambda v, w: uma.inc_subtensor(v[[0, 2, 0]], w), [x, rng.standard_normal(4)])
    _vg(lambda v, w: uma.set_subtensor(v[:, [3, 0]], w), [x, rng.standard_normal((3, 2))])
    _vg(lambda v, w: uma.set_subtensor(v, np.array([True, False, True]), w), [x, rng.standard_normal((1, 4))])
    _vg(lambda v, w: uma.inc_subtensor(v, (Ellipsis, 1), w), [x, rng.standard_normal(())])


def test_grad_nn(rng):
    x = rng.standard_normal((3, 4))
    _vg(lambda v: uma.softmax(v, axis=0), [x])
    _vg(lambda v: uma.log_softmax(v), [x])
    _vg(lambda v: uma.relu(v), [x + 0.05])
    _vg(lambda v: uma.softmax(v), [x.astype(np.float32)])


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "reference"])
def test_grad_on_other_backends(backend, rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    _vg(lambda v: uma.logsumexp(uma.var(v, axis=1, keepdims=True) * v, axis=0), [x], backend=backend)
    _vg(lambda v: uma.inc_subtensor(v[[1, 1]], uma.cumsum(v[:2], axis=1)) @ uma.transpose(v), [x], backend=backend)
