"""uma.function: every symbolic op on the `reference` and `cpu` backends against NumPy 2,
return conventions, input filtering (DESIGN.md casting rules), call errors, aliasing of
outputs, and the backend registry."""
import re
import threading
import time

import numpy as np
import pytest

import uma
from uma.graph.basic import Op
from conftest import BACKENDS, as_uma_output, assert_matches, held_or_refused, host_numpy, numpy_quiet, random_data
from uma import sym
from uma.graph import MissingInputError
from uma.runtime import CpuLinker, Linker
from uma.runtime.linkers.reference import make_evaluator

HOST_BACKENDS = ["reference", "cpu"]  # the built-in backends whose values are host uma.Array s


def _np_sigmoid(x):
    out_dt = np.exp(x).dtype
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(out_dt)


def _np_softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _spec(shape, dtype="float64", domain="general", static=None):
    return (tuple(shape), dtype, domain, static)


def _var(spec, k):
    shape, dtype, _, static = spec
    return sym.tensor(f"in{k}", dtype=dtype, shape=static if static is not None else (None,) * len(shape))


# id -> (input specs, symbolic builder, NumPy oracle)
CASES = {}


def case(name, specs, build, oracle):
    assert name not in CASES
    CASES[name] = (specs, build, oracle)


M23, V3 = _spec((2, 3)), _spec((3,))
for _name in ["add", "subtract", "multiply", "maximum", "minimum"]:
    for _dt in ["float64", "float32", "int32", "int64"]:
        case(f"{_name}-{_dt}", [_spec((2, 3), _dt), _spec((3,), _dt)],
             lambda a, b, n=_name: getattr(sym, n)(a, b), lambda a, b, n=_name: getattr(np, n)(a, b))
case("add-mixed-int32-float32", [_spec((2, 3), "int32"), _spec((3,), "float32")], sym.add, np.add)
case("add-bool", [_spec((4,), "bool"), _spec((4,), "bool")], sym.add, np.add)
case("divide", [M23, _spec((3,), domain="nonzero")], sym.divide, np.divide)
case("divide-int", [_spec((5,), "int32"), _spec((5,), "int32", "nonzero")], sym.divide, np.divide)
case("power", [_spec((2, 3), domain="positive"), _spec((3,), domain="exponent")], sym.power, np.power)
case("power-int", [_spec((5,), "int64"), _spec((5,), "int64", "exponent")], sym.power, np.power)
case("floor_divide", [M23, _spec((3,), domain="nonzero")], sym.floor_divide, np.floor_divide)
case("floor_divide-int", [_spec((6,), "int32"), _spec((6,), "int32", "nonzero")], sym.floor_divide, np.floor_divide)
case("remainder", [M23, _spec((3,), domain="nonzero")], sym.remainder, np.remainder)
case("remainder-int", [_spec((6,), "int64"), _spec((6,), "int64", "nonzero")], sym.remainder, np.remainder)
for _name in ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    case(_name, [_spec((3, 4), domain="coarse"), _spec((4,), domain="coarse")],
         getattr(sym, _name), getattr(np, _name))
    case(f"{_name}-int", [_spec((6,), "int32", "coarse"), _spec((6,), "int64", "coarse")],
         getattr(sym, _name), getattr(np, _name))
case("logical_and", [_spec((5,), "bool"), _spec((5,), "bool")], sym.logical_and, np.logical_and)
case("logical_or", [_spec((5,), "bool"), _spec((5,), "bool")], sym.logical_or, np.logical_or)
case("logical_not", [_spec((5,), "bool")], sym.logical_not, np.logical_not)

_UNARY = {"negative": "general", "abs": "general", "exp": "general", "log": "positive",
          "log1p": "positive", "expm1": "general", "sqrt": "positive", "tanh": "general",
          "sign": "general", "square": "general", "sin": "general", "cos": "general",
          "floor": "general", "ceil": "general"}
for _name, _dom in _UNARY.items():
    for _dt in ["float64", "float32"]:
        case(f"{_name}-{_dt}", [_spec((3, 4), _dt, _dom)], getattr(sym, _name), getattr(np, _name))
case("sigmoid-float64", [_spec((3, 4))], sym.sigmoid, _np_sigmoid)
case("sigmoid-float32", [_spec((3, 4), "float32")], sym.sigmoid, _np_sigmoid)
case("exp-int32", [_spec((4,), "int32")], sym.exp, np.exp)
case("abs-int64", [_spec((4,), "int64")], sym.abs, np.abs)
case("relu", [M23], sym.relu, lambda a: np.maximum(a, 0))

# operators with Python scalars (weak)
case("scalar-ops-float32", [_spec((2, 3), "float32")], lambda a: (2 * a - 1.5) / 4 + a ** 2,
     lambda a: (2 * a - np.float32(1.5)) / 4 + a ** 2)
case("scalar-rsub-int32", [_spec((4,), "int32")], lambda a: 3 - a * 2, lambda a: 3 - a * 2)
case("scalar-compare", [_spec((4,), "float32")], lambda a: a > 0.5, lambda a: a > 0.5)

case("where", [_spec((3, 4), "bool"), _spec((3, 4)), _spec((4,))], sym.where, np.where)
case("where-scalar", [_spec((3, 4), "float32")], lambda a: sym.where(a > 0, a, 0.0),
     lambda a: np.where(a > 0, a, np.float32(0)))
case("one_hot", [_spec((5,), "int64", "exponent")], lambda i: sym.one_hot(i, 4),
     lambda i: (i[:, None] == np.arange(4)).astype(np.float64))
case("one_hot-int32-float32", [_spec((2, 3), "int32", "exponent")],
     lambda i: sym.one_hot(i, 5, dtype="float32"),
     lambda i: (i[..., None] == np.arange(5)).astype(np.float32))
case("zeros_like", [M23], sym.zeros_like, np.zeros_like)
case("ones_like-int32", [M23], lambda a: sym.ones_like(a, dtype="int32"), lambda a: np.ones_like(a, np.int32))
case("full_like", [M23], lambda a: sym.full_like(a, 2.5), lambda a: np.full_like(a, 2.5))

for _name in ["sum", "mean", "max", "min", "prod"]:
    for _axis, _kd in [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)]:
        case(f"{_name}-{_axis}-{_kd}", [_spec((2, 3, 4))],
             lambda a, n=_name, ax=_axis, kd=_kd: getattr(sym, n)(a, axis=ax, keepdims=kd),
             lambda a, n=_name, ax=_axis, kd=_kd: getattr(np, n)(a, axis=ax, keepdims=kd))
for _name in ["sum", "mean", "max", "prod"]:
    case(f"{_name}-int32", [_spec((3, 4), "int32")], lambda a, n=_name: getattr(sym, n)(a, axis=0),
         lambda a, n=_name: getattr(np, n)(a, axis=0))
case("sum-bool", [_spec((3, 4), "bool")], lambda a: sym.sum(a, axis=1), lambda a: np.sum(a, axis=1))
case("all", [_spec((3, 4), "bool")], lambda a: sym.all(a, axis=1), lambda a: np.all(a, axis=1))
case("any", [_spec((3, 4), "bool")], lambda a: sym.any(a), lambda a: np.any(a))
for _name in ["argmax", "argmin"]:
    for _axis, _kd in [(None, False), (0, False), (1, True)]:
        case(f"{_name}-{_axis}-{_kd}", [_spec((3, 4))],
             lambda a, n=_name, ax=_axis, kd=_kd: getattr(sym, n)(a, axis=ax, keepdims=kd),
             lambda a, n=_name, ax=_axis, kd=_kd: getattr(np, n)(a, axis=ax, keepdims=kd))
case("method-reductions", [_spec((3, 4))], lambda a: a.sum(axis=0) + a.mean(axis=0) - a.max(axis=0),
     lambda a: a.sum(axis=0) + a.mean(axis=0) - a.max(axis=0))

for _a, _b in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
               ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2))]:
    case(f"matmul-{_a}-{_b}", [_spec(_a, static=tuple(1 if d == 1 else None for d in _a)),
                              _spec(_b, static=tuple(1 if d == 1 else None for d in _b))],
         sym.matmul, np.matmul)
case("matmul-float32", [_spec((3, 4), "float32"), _spec((4, 2), "float32")], sym.matmul, np.matmul)
case("matmul-int32", [_spec((3, 4), "int32"), _spec((4, 2), "int32")], sym.matmul, np.matmul)
case("matmul-operator", [_spec((3, 4)), _spec((4, 2))], lambda a, b: a @ b, lambda a, b: a @ b)
case("dot", [_spec((3, 4)), _spec((4,))], sym.dot, np.dot)

case("reshape", [_spec((2, 3, 4))], lambda a: sym.reshape(a, (4, -1)), lambda a: a.reshape(4, -1))
case("reshape-method", [_spec((2, 3, 4))], lambda a: a.reshape(-1), lambda a: a.reshape(-1))
case("transpose", [_spec((2, 3, 4))], lambda a: sym.transpose(a, (1, 2, 0)), lambda a: a.transpose(1, 2, 0))
case("transpose-T", [_spec((2, 3))], lambda a: a.T, lambda a: a.T)
case("broadcast_to", [_spec((1, 3), static=(1, None))], lambda a: sym.broadcast_to(a, (4, 3)),
     lambda a: np.broadcast_to(a, (4, 3)))
case("broadcast-static-ones", [_spec((4, 1), static=(None, 1)), _spec((1, 5), static=(1, None))],
     sym.add, np.add)
case("concatenate", [_spec((2, 3)), _spec((4, 3)), _spec((1, 3), "float32")],
     lambda a, b, c: sym.concatenate([a, b, c]), lambda a, b, c: np.concatenate([a, b, c]))
case("concatenate-axis1", [_spec((2, 3)), _spec((2, 1))],
     lambda a, b: sym.concatenate([a, b], axis=1), lambda a, b: np.concatenate([a, b], axis=1))
case("stack", [_spec((2, 3)), _spec((2, 3))], lambda a, b: sym.stack([a, b], axis=1),
     lambda a, b: np.stack([a, b], axis=1))
case("expand_dims", [_spec((2, 3))], lambda a: sym.expand_dims(a, 1), lambda a: np.expand_dims(a, 1))
case("squeeze", [_spec((2, 1, 3), static=(None, 1, None))], sym.squeeze, np.squeeze)
case("squeeze-axis", [_spec((1, 3))], lambda a: sym.squeeze(a, 0), lambda a: np.squeeze(a, 0))
for _k, _idx in enumerate([1, (slice(None, None, -1), 2), (Ellipsis, slice(1, None, 2)), (None, 0),
                           (slice(None), None, slice(3, 0, -2))]):
    case(f"getitem-{_k}", [_spec((3, 5))], lambda a, i=_idx: a[i], lambda a, i=_idx: a[i])
case("astype", [_spec((2, 3))], lambda a: a.astype("float32"), lambda a: a.astype(np.float32))
case("astype-int", [_spec((2, 3))], lambda a: sym.astype(a, "int32"), lambda a: a.astype(np.int32))
case("astype-uint8-storage", [_spec((4,), "int32", "positive")], lambda a: a.astype("uint8"),
     lambda a: a.astype(np.uint8))

for _ax in [-1, 0]:
    case(f"softmax-{_ax}", [_spec((3, 5))], lambda a, ax=_ax: sym.softmax(a, axis=ax),
         lambda a, ax=_ax: _np_softmax(a, ax))
    case(f"log_softmax-{_ax}", [_spec((3, 5))], lambda a, ax=_ax: sym.log_softmax(a, axis=ax),
         lambda a, ax=_ax: _np_log_softmax(a, ax))
case("softmax-float32", [_spec((3, 5), "float32")], sym.softmax, lambda a: _np_softmax(a, -1))
case("mlp-loss", [_spec((5, 4)), _spec((4, 3)), _spec((5,), "int64", "exponent")],
     lambda x, w, y: -sym.mean(sym.sum(sym.one_hot(y, 3) * sym.log_softmax(sym.tanh(x @ w)), axis=1)),
     lambda x, w, y: -np.mean(np.sum((y[:, None] == np.arange(3)) * _np_log_softmax(np.tanh(x @ w), 1), axis=1)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_numpy(name, backend, rng):
    specs, build, oracle = CASES[name]
    vars_ = [_var(s, k) for k, s in enumerate(specs)]
    data = [random_data(s[1], s[0], rng, s[2]) for s in specs]
    f = uma.function(vars_, build(*vars_), backend=backend)
    expected = numpy_quiet(lambda: oracle(*data))
    got = numpy_quiet(lambda: f(*data))
    assert_matches(as_uma_output(got, backend), expected)  # a Python-defined backend: its own type


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_softmax_is_stable(backend):
    x = sym.matrix("x")
    f = uma.function([x], [sym.softmax(x), sym.log_softmax(x)], backend=backend)
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    s, ls = f(big)
    assert np.isfinite(np.asarray(s)).all() and np.isfinite(np.asarray(ls)).all()
    assert_matches(s, _np_softmax(big, -1))
    assert_matches(ls, _np_log_softmax(big, -1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape,axis", [((2, 0), 1), ((0, 3), 0), ((0, 3), 1)])
def test_softmax_of_an_empty_array_is_empty_on_every_backend(backend, shape, axis):
    """As the eager op (and torch, JAX): no elements to normalize, an empty result of the
    input's shape and dtype, forward and through the gradient."""
    x = sym.matrix("x")
    cost = sym.sum(sym.softmax(x, axis=axis) * 2.0) + sym.sum(sym.log_softmax(x, axis=axis))
    f = uma.function([x], [sym.softmax(x, axis=axis), sym.log_softmax(x, axis=axis), uma.grad(cost, x)],
                     backend=backend)
    for out in f(np.zeros(shape)):
        got = host_numpy(as_uma_output(out, backend))
        assert got.shape == shape and got.dtype == np.float64, (got.shape, got.dtype)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64"])
def test_relu_keeps_the_dtype_eagerly_and_compiled(dtype):
    """relu is maximum(x, 0) with the 0 in x's dtype (so a bool x stays bool, where a Python 0
    would promote it to int64): the eager op, the graph's type and every backend agree, with
    NumPy's values."""
    x = np.array([1, 0, 1, 0], dtype=dtype) if dtype == "bool" else np.array([-2, 0, 3, -1]).astype(dtype)
    want = np.maximum(x, np.zeros((), dtype))
    assert_matches(uma.relu(uma.asarray(x)), want)
    v = sym.tensor("v", dtype=dtype, shape=(None,))
    assert sym.relu(v).dtype == dtype
    for backend in BACKENDS:
        with held_or_refused(backend, dtype):
            got = host_numpy(as_uma_output(uma.function([v], sym.relu(v), backend=backend)(x), backend))
            assert got.dtype == want.dtype, (backend, got.dtype)
            np.testing.assert_array_equal(got, want, err_msg=backend)


def test_cpu_runs_one_program_for_an_mlp_step():
    x = sym.matrix("x", shape=(None, 4))
    y = sym.vector("y", dtype="int64")
    W = uma.shared(np.ones((4, 3)) * 0.1, "W")
    b = uma.shared(np.zeros(3), "b")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 3) * sym.log_softmax(x @ W + b), axis=1))
    gW, gb = uma.grad(loss, [W, b])
    f = uma.function([x, y], loss, updates=[(W, W - 0.1 * gW), (b, b - 0.1 * gb)], backend="cpu")
    assert CpuLinker.python_ops(f) == []


def test_cpu_fuses_elementwise_chains(rng):
    x, y = sym.matrix("x"), sym.vector("y")
    inner = x * 2 + y          # also an output: must stay a value of its own
    out = sym.exp(inner) * x - 1.5
    f = uma.function([x, y], [out, inner], backend="cpu")
    assert CpuLinker.fused_chains(f) >= 1
    a, b = rng.normal(size=(3, 4)), rng.normal(size=4)
    got_out, got_inner = f(a, b)
    assert_matches(got_inner, a * 2 + b)
    assert_matches(got_out, np.exp(a * 2 + b) * a - 1.5)
    ref = uma.function([x, y], [out, inner], backend="reference")(a, b)
    np.testing.assert_array_equal(np.asarray(got_out), np.asarray(ref[0]))  # fused is bitwise equal


def _fused_codes(f):
    """The instruction names of every fused chain in a compiled cpu function's plan."""
    return [line for line in uma.dprint(f, file="str").splitlines() if "= fused[" in line]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_cpu_fuses_a_where_with_its_comparison(rng, dtype):
    # the ReLU gradient where(0 <= a, g, 0): one chain, bitwise the unfused ops' values,
    # NaN, infinities and signed zeros included
    a, g = sym.matrix("a", dtype=dtype), sym.matrix("g", dtype=dtype)
    out = sym.where(sym.less_equal(0, a), g * 2, 0) + 1
    f = uma.function([a, g], out, backend="cpu")
    chains = _fused_codes(f)
    assert len(chains) == 1 and "where(less_equal(" in chains[0], chains
    av = rng.normal(size=(5, 7)).astype(dtype)
    gv = rng.normal(size=(5, 7)).astype(dtype)
    if dtype != "int64":
        av[0, :4] = [np.nan, -0.0, 0.0, np.inf]
        gv[1, :3] = [np.nan, -np.inf, -0.0]
    got = np.asarray(f(av, gv))
    with np.errstate(invalid="ignore"):
        expected = np.where(0 <= av, gv * 2, 0).astype(dtype) + 1
    np.testing.assert_array_equal(got, expected)
    ref = uma.function([a, g], out, backend="reference")(av, gv)
    assert np.asarray(ref).tobytes() == got.tobytes()  # bitwise the reference's values


def test_cpu_keeps_a_comparison_read_elsewhere_out_of_the_chain(rng):
    # the comparison is also an output (a bool array): it cannot live only in a register
    a, g = sym.matrix("a"), sym.matrix("g")
    cond = sym.less(a, g)
    f = uma.function([a, g], [sym.where(cond, a, g) * 3, cond], backend="cpu")
    assert not any("less(" in c for c in _fused_codes(f))
    av, gv = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    got, c = f(av, gv)
    np.testing.assert_array_equal(np.asarray(got), np.where(av < gv, av, gv) * 3)
    np.testing.assert_array_equal(np.asarray(c), av < gv)


def test_cpu_runs_a_bias_add_as_the_products_epilogue(rng):
    # relu(x @ W + b): the add runs in place in the product; values bitwise the reference's
    x, W, b = sym.matrix("x"), sym.matrix("W"), sym.vector("b")
    pre = x @ W + b
    outs = [sym.relu(pre), sym.exp(x @ (W * 3)) * 2 - 1]
    f = uma.function([x, W, b], outs, backend="cpu")
    chains = _fused_codes(f)
    assert any("add(matmul(" in c for c in chains) and any("exp(matmul(" in c for c in chains), chains
    args = rng.normal(size=(6, 5)), rng.normal(size=(5, 4)), rng.normal(size=4)
    ref = uma.function([x, W, b], outs, backend="reference")(*args)
    for got, exp in zip(f(*args), ref):
        assert np.asarray(got).tobytes() == np.asarray(exp).tobytes()
    assert_matches(f(*args)[0], np.maximum(args[0] @ args[1] + args[2], 0))


def test_cpu_epilogue_that_broadcasts_the_product_gets_its_own_array(rng):
    # the product is (n, 1) at run time and the chain's result (n, 3): not in place
    x, w, c = sym.matrix("x"), sym.matrix("w", shape=(None, 1)), sym.matrix("c")
    f = uma.function([x, w, c], (x @ w) * c + 1, backend="cpu")
    assert any("matmul(" in line for line in _fused_codes(f))
    a, v, m = rng.normal(size=(4, 3)), rng.normal(size=(3, 1)), rng.normal(size=(4, 3))
    assert_matches(f(a, v, m), (a @ v) * m + 1)


def test_cpu_keeps_a_product_read_twice_out_of_an_epilogue(rng):
    x, W = sym.matrix("x"), sym.matrix("W")
    p = x @ W
    f = uma.function([x, W], [p + 1, p], backend="cpu")
    assert not any("matmul(" in line for line in _fused_codes(f))
    a, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    got = f(a, w)
    assert_matches(got[0], a @ w + 1)
    assert_matches(got[1], a @ w)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cpu_runs_a_bias_update_as_its_sums_epilogue(rng, dtype):
    # b - lr * sum(g, axis=0) (the SGD update of a bias) and mean(g, axis=(0, 1)) * s + c: each
    # reduction and its chain are one step; values bitwise the reference's
    g, b, s = sym.matrix("g", dtype=dtype), sym.vector("b", dtype=dtype), sym.scalar("s", dtype=dtype)
    g3 = sym.tensor("g3", ndim=3, dtype=dtype)
    outs = [b - 0.1 * sym.sum(g, axis=0), sym.mean(g3, axis=(0, 1)) * s + b,
            sym.sum(g3, axis=1, keepdims=True) - 1]
    f = uma.function([g, b, s, g3], outs, backend="cpu")
    chains = _fused_codes(f)
    assert any("sum(in0, axis=0," in c for c in chains), chains
    assert any("mean(in3, axis=(0, 1)," in c for c in chains), chains
    assert any("sum(in3, axis=1, keepdims=True)" in c for c in chains), chains
    assert not any(" = sum(" in line or " = mean(" in line for line in uma.dprint(f, file="str").splitlines())
    args = (rng.normal(size=(300, 7)).astype(dtype), rng.normal(size=7).astype(dtype), np.asarray(1.5, dtype),
            rng.normal(size=(4, 5, 7)).astype(dtype))
    ref = uma.function([g, b, s, g3], outs, backend="reference")(*args)
    got = f(*args)
    for x, r in zip(got, ref):
        assert np.asarray(x).tobytes() == np.asarray(r).tobytes() and np.asarray(x).shape == np.asarray(r).shape
    assert_matches(got[0], args[1] - 0.1 * args[0].sum(axis=0))
    assert_matches(got[1], args[3].mean(axis=(0, 1)) * args[2] + args[1])
    assert_matches(got[2], args[3].sum(axis=1, keepdims=True) - 1)


def test_cpu_keeps_a_sum_out_of_an_epilogue_when_it_changes_dtype_or_is_read_twice(rng):
    # an int32 sum is int64 (NumPy), so it cannot be the head of an int32 chain; a sum that is
    # also an output stays its own step
    i, g = sym.matrix("i", dtype="int32"), sym.matrix("g")
    total = sym.sum(g, axis=0)
    f = uma.function([i, g], [sym.sum(i, axis=0) + 1, total * 2, total], backend="cpu")
    assert not any("sum(" in c for c in _fused_codes(f)), _fused_codes(f)
    iv, gv = rng.integers(-5, 5, size=(4, 3)).astype("int32"), rng.normal(size=(4, 3))
    a, b, c = f(iv, gv)
    np.testing.assert_array_equal(np.asarray(a), iv.sum(axis=0) + 1)
    assert np.asarray(a).dtype == np.int64
    assert_matches(b, gv.sum(axis=0) * 2)
    assert_matches(c, gv.sum(axis=0))


def test_cpu_sum_epilogue_that_broadcasts_the_sum_gets_its_own_array(rng):
    # the sum is (3,) and the chain's result (4, 3) at run time: not in place, same values
    g, m = sym.matrix("g"), sym.matrix("m")
    f = uma.function([g, m], sym.sum(g, axis=0) * m, backend="cpu")
    gv, mv = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    assert_matches(f(gv, mv), gv.sum(axis=0) * mv)


@pytest.mark.parametrize("shape", [(3, 5), (200, 3), (7, 64), (1000, 7), (4, 130, 3)])
def test_fused_chains_read_rows_broadcast_along_the_output(rng, shape):
    # inputs that repeat along the output (a bias row, a trailing block, a column) next to
    # contiguous ones, with blocks that do not divide the output: bitwise the unfused values
    x = sym.tensor("x", ndim=len(shape))
    row = sym.tensor("row", ndim=1)
    block = sym.tensor("block", ndim=2)
    col = sym.tensor("col", ndim=len(shape), shape=shape[:-1] + (1,))
    out = sym.exp(x * 0.5 + row) * block - col
    f = uma.function([x, row, block, col], out, backend="cpu")
    assert len(_fused_codes(f)) == 1
    args = (rng.normal(size=shape), rng.normal(size=shape[-1:]), rng.normal(size=shape[-2:]),
            rng.normal(size=shape[:-1] + (1,)))
    got = f(*args)
    ref = np.asarray(uma.function([x, row, block, col], out, backend="reference")(*args))
    assert np.asarray(got).tobytes() == ref.tobytes()
    assert_matches(got, np.exp(args[0] * 0.5 + args[1]) * args[2] - args[3])


def test_program_refuses_a_comparison_read_as_a_number():
    p = uma._core.Program()
    i0, i1 = p.add_input(), p.add_input()
    with pytest.raises(ValueError, match="comparison's result as a number"):
        p.add_fused([i0, i1], [("less", 0, 1), ("add", 2, 0)], "float64")
    with pytest.raises(ValueError, match="cannot end with the comparison"):
        p.add_fused([i0, i1], [("less", 0, 1)], "float64")
    with pytest.raises(ValueError, match="condition of where"):
        p.add_fused([i0, i1], [("where", 0, 0, 1)], "float64")
    with pytest.raises(ValueError, match=r"instruction 1 reads register 9, which is not defined there \(registers 0 to 2"):
        p.add_fused([i0, i1], [("less", 0, 1), ("where", 2, 0, 9)], "float64")
    s = p.add_fused([i0, i1], [("less", 0, 1), ("where", 2, 0, 1)], "float64")
    p.set_outputs([s])
    x, y = np.array([1.0, 5.0, np.nan]), np.array([2.0, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(p.run([uma.asarray(x), uma.asarray(y)])[0]), np.where(x < y, x, y))


def test_program_refuses_malformed_fused_chains_and_attributes():
    # an instruction that is not a tuple, attributes that are not a dict or of the wrong types,
    # head_attrs without a reduction head, matmul=True with a head: TypeError / ValueError naming
    # the value, no crash
    p = uma._core.Program()
    i0, i1 = p.add_input(), p.add_input()
    for bad in (["subtract"], [3], [None], [["subtract", 1, 0]]):
        with pytest.raises(TypeError, match="an instruction is a tuple"):
            p.add_fused([i0, i1], bad, "float64", head="sum", head_attrs={"axis": (0,)})
    for attrs in ([("axis", 0)], 3, "axis"):
        with pytest.raises(TypeError, match="attributes as a dict, got " + re.escape(repr(attrs))):
            p.add_fused([i0, i1], [("subtract", 1, 0)], "float64", head="sum", head_attrs=attrs)
        with pytest.raises(TypeError, match="attributes as a dict"):
            p.add_op("sum", [i0], attrs)
    # an attribute value of the wrong type, or a name that is not a string: TypeError naming it
    for attrs, what in (({"axis": "x"}, "attribute 'axis' of the wrong type: 'x'"),
                        ({"axis": (0, "a")}, "attribute 'axis' of the wrong type: (0, 'a')"),
                        ({"keepdims": "yes"}, "attribute 'keepdims' of the wrong type: 'yes'"),
                        ({3: 1}, "an attribute name that is not a string: 3")):
        with pytest.raises(TypeError, match=re.escape(f"Program: op 'sum' got {what}")):
            p.add_op("sum", [i0], attrs)
        with pytest.raises(TypeError, match=re.escape(f"Program: op 'sum' got {what}")):
            p.add_fused([i0, i1], [("subtract", 1, 0)], "float64", head="sum", head_attrs=attrs)
    with pytest.raises(ValueError, match="head_attrs are the attributes of a 'sum' or 'mean' head"):
        p.add_fused([i0, i1], [("add", 0, 1)], "float64", head_attrs={"axis": (0,)})
    with pytest.raises(ValueError, match="not both"):
        p.add_fused([i0, i1], [("add", 0, 1)], "float64", matmul=True, head="sum")
    with pytest.raises(ValueError, match="head is 'matmul', 'sum' or 'mean', got 'max'"):
        p.add_fused([i0, i1], [("add", 0, 1)], "float64", head="max")
    s = p.add_fused([i0, i1], [("subtract", 1, 0)], "float64", head="sum", head_attrs={"axis": (0,)})
    p.set_outputs([s])
    g = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(p.run([uma.asarray(g), uma.asarray(np.ones(4))])[0]),
                                  1.0 - g.sum(axis=0))


def test_program_refuses_malformed_registers_by_name():
    p = uma._core.Program()
    i0 = p.add_input()
    with pytest.raises(TypeError, match=re.escape("instruction 0 ('add', 0, 'x'): a register is an int, got 'x'")):
        p.add_fused([i0], [("add", 0, "x")], "float64")
    with pytest.raises(ValueError, match=re.escape(f"reads register {2**70}, which is not defined there")):
        p.add_fused([i0], [("add", 0, 2**70)], "float64")
    with pytest.raises(ValueError, match="instruction 0 reads register -1, which is not defined there"):
        p.add_fused([i0], [("add", -1, 0)], "float64")
    with pytest.raises(TypeError, match=re.escape("instruction 0 (3, 0, 0) does not start with an op name")):
        p.add_fused([i0], [(3, 0, 0)], "float64")
    assert p.num_steps == 0


def test_program_checks_each_ops_input_count():
    # too few inputs crashed the run before; too many were ignored
    p = uma._core.Program()
    a = p.add_input()
    for name, n, want in (("add", 1, "takes 2 inputs, got 1"), ("add", 3, "takes 2 inputs, got 3"),
                          ("exp", 2, "takes 1 input, got 2"), ("clip", 1, "takes 3 inputs, got 1"),
                          ("where", 2, "takes 3 inputs, got 2"), ("sum", 0, "takes 1 input, got 0"),
                          ("concatenate", 0, "takes one or more inputs, got 0")):
        with pytest.raises(ValueError, match=re.escape(f"Program: op '{name}' {want}")):
            p.add_op(name, [a] * n)
    assert p.num_steps == 0
    for name in uma._core._program_ops():  # no op runs on no inputs
        with pytest.raises(ValueError, match=f"Program: op '{name}' (takes|needs)"):
            p.add_op(name, [])
    s = p.add_op("concatenate", [a, a, a], {"axis": 0})
    p.set_outputs([s])
    x = np.arange(3.0)
    np.testing.assert_array_equal(np.asarray(p.run([uma.asarray(x)])[0]), np.concatenate([x, x, x]))


def test_program_attributes_are_the_ones_each_op_reads():
    p = uma._core.Program()
    a = p.add_input()
    for name, attrs, err, want in (
            ("add", {"axis": 1}, ValueError, "op 'add' has no attribute 'axis' (its attributes: none)"),
            ("sum", {"dtype": "float32"}, ValueError, "op 'sum' has no attribute 'dtype' (its attributes: axis, keepdims)"),
            ("reshape", {}, ValueError, "op 'reshape' needs attribute 'shape'"),
            ("full_like", {"dtype": "int8"}, ValueError, "op 'full_like' needs attribute 'fill_value'"),
            ("softmax", None, ValueError, "op 'softmax' needs attribute 'axis'"),
            ("concatenate", {"axis": None}, TypeError, "op 'concatenate' attribute 'axis': an int expected, got None"),
            ("concatenate", {"axis": (0, 1)}, TypeError, "op 'concatenate' attribute 'axis': one axis (an int) expected, got (0, 1)"),
            ("cumsum", {"axis": [0]}, TypeError, "op 'cumsum' attribute 'axis': one axis (an int) expected, got [0]"),
            ("sum", {"axis": 2**70}, OverflowError, f"op 'sum' attribute 'axis': {2**70} is out of range"),
            ("full_like", {"fill_value": [1, 2]}, TypeError, "op 'full_like' attribute 'fill_value': a scalar expected, got [1, 2]"),
            ("full_like", {"fill_value": 2**70}, OverflowError, f"op 'full_like' attribute 'fill_value': Python integer {2**70}"),
            ("nonesuch", {}, ValueError, "unknown op 'nonesuch'")):
        with pytest.raises(err, match=re.escape("Program: " + want)):
            p.add_op(name, [a] if name != "concatenate" else [a, a], attrs)
    assert p.num_steps == 0
    # what they accept: an int axis or None where the op takes one, NumPy scalars as fill values
    x = np.arange(6.0).reshape(2, 3)
    outs = [p.add_op("cumsum", [a], {"axis": None}), p.add_op("cumsum", [a], {"axis": np.int64(1)}),
            p.add_op("full_like", [a], {"fill_value": np.float32(2.5)}), p.add_op("softmax", [a], {"axis": -1})]
    p.set_outputs(outs)
    got = [np.asarray(v) for v in p.run([uma.asarray(x)])]
    np.testing.assert_array_equal(got[0], np.cumsum(x))
    np.testing.assert_array_equal(got[1], np.cumsum(x, axis=1))
    np.testing.assert_array_equal(got[2], np.full_like(x, 2.5))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got[3], e / e.sum(axis=-1, keepdims=True), rtol=1e-12)


def test_program_constants_keep_the_value_they_were_added_with():
    src = np.arange(3.0)
    p = uma._core.Program()
    c = p.add_constant(src)
    p.set_outputs([c, p.add_op("negative", [c])])
    src[0] = 9.0  # the source's owner writes after the program took it
    out, neg = p.run([])
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(neg), -np.arange(3.0))
    with pytest.raises(ValueError, match="read-only"):
        out[0] = 5.0  # the constant handed out as an output is read-only
    np.testing.assert_array_equal(np.asarray(p.run([])[0]), np.arange(3.0))


def test_program_refuses_changes_while_it_runs_and_once_a_function_runs_it():
    p = uma._core.Program()
    a = p.add_input()
    s = a
    for _ in range(200):
        s = p.add_op("exp", [s])
    p.set_outputs([s])
    x = uma.asarray(np.zeros(50_000))
    running, stop = threading.Event(), threading.Event()

    def runner():
        while not stop.is_set():
            running.set()
            p.run([x])

    t = threading.Thread(target=runner)
    t.start()
    refused = None
    try:
        running.wait()
        deadline = time.monotonic() + 30
        while refused is None and time.monotonic() < deadline:
            try:
                p.add_op("negative", [a])
            except RuntimeError as e:
                refused = str(e)
    finally:
        stop.set()
        t.join()
    assert refused == "Program.add_op: the program is running in another thread; change it before or after its runs"
    p.add_op("negative", [a])  # between runs: allowed

    v = sym.vector("v")
    f = uma.function([v], sym.exp(v) + 1.0, backend="cpu")
    prog = f._thunk.program
    n = prog.num_steps
    for change in (lambda: prog.add_op("negative", [0]), lambda: prog.add_input(),
                   lambda: prog.add_constant(np.ones(2)), lambda: prog.set_outputs([0])):
        with pytest.raises(ValueError, match="the program is sealed"):
            change()
    assert prog.num_steps == n
    assert_matches(f(np.arange(3.0)), np.exp(np.arange(3.0)) + 1.0)


def test_cpu_elides_broadcasts_into_elementwise_ops(rng):
    x = sym.matrix("x", shape=(None, 5))
    w = sym.matrix("w", shape=(None, 5))
    cost = sym.sum(sym.sum(x, axis=1, keepdims=True) * w)  # grad wrt x broadcasts (None, 1) -> (None, 5)
    gx, gw = uma.grad(cost, [x, w])
    f = uma.function([x, w], [gx, gw], backend="cpu")
    from uma.runtime.linkers.cpu import elide_broadcasts
    fg = f.fgraph.clone()
    count = lambda: sum(v.owner is not None and v.owner.op.name == "broadcast_like"  # noqa: E731
                        for n in fg.toposort() for v in n.inputs)  # reads of a broadcast
    before = count()
    elide_broadcasts(fg)
    assert count() < before
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    r = uma.function([x, w], [gx, gw], backend="reference")(a, b)
    for got, exp in zip(f(a, b), r):
        assert_matches(got, np.asarray(exp))
    assert_matches(f(a, b)[0], np.broadcast_to((b).sum(axis=1, keepdims=True), (3, 5)))


class _Cube(Op):
    """A test-only op that the C++ Program does not know (it runs in Python)."""

    name = "test_cube"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0] * values[0] * values[0]]


def test_cpu_falls_back_to_python_for_ops_without_program_support(rng):
    x = sym.matrix("x")
    out = sym.exp(_Cube()(x)) + 1
    f = uma.function([x], out, backend="cpu")
    assert CpuLinker.python_ops(f) == ["test_cube"]
    a = rng.normal(size=(3, 4))
    assert_matches(f(a), np.exp(a ** 3) + 1)


def test_cpu_calls_run_their_program_python_ops_run_a_thunk(rng):
    x = sym.matrix("x")
    a = rng.normal(size=(3, 4))
    f = uma.function([x], sym.exp(x) + 1, backend="cpu")
    assert f.fast_path
    f(a)
    f(x=a)  # keyword arguments: bound in Python, then the same Program call
    assert f.call_counts() == {"fast": 2, "general": 0}
    segmented = uma.function([x], sym.exp(_Cube()(x)), backend="cpu")  # a Python op between Programs
    assert not segmented.fast_path
    assert_matches(segmented(a), np.exp(a ** 3))
    assert segmented.call_counts() == {"fast": 0, "general": 1}
    for backend in ("reference", "numpy"):
        g = uma.function([x], x + 1, backend=backend)
        assert not g.fast_path
        g(a)
        assert g.call_counts() == {"fast": 0, "general": 1}


def test_cpu_fast_path_filters_inputs_like_the_python_path():
    x = sym.vector("x", dtype="float64")
    f = uma.function([x], x * 2, backend="cpu")
    for value in (np.arange(3.0), uma.asarray(np.arange(3.0)), np.arange(3, dtype=np.int32), [0, 1, 2],
                  np.arange(6.0)[::2][:3]):
        assert_matches(f(value), np.asarray(value, dtype=np.float64) * 2)
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*complex128 to float64"):
        f(np.ones(3, np.complex128))
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*1-d.*2-d"):
        f(np.ones((2, 2)))
    with pytest.raises(TypeError, match="takes 1 argument"):
        f()
    assert f.call_counts()["fast"] == 5


def test_cpu_runs_basic_indexing_in_the_program(rng):
    x = sym.matrix("x")
    out = sym.exp(x[1:, ::-1]) + 1
    f = uma.function([x], out, backend="cpu")
    assert CpuLinker.python_ops(f) == []
    a = rng.normal(size=(3, 4))
    assert_matches(f(a), np.exp(a[1:, ::-1]) + 1)


def test_cpu_folds_constant_subgraphs():
    x = sym.vector("x")
    c = sym.exp(sym.asarray(np.array([0.0, 1.0, 2.0]))) * 2  # constant-only subgraph
    unfolded = uma.function([x], x + c, backend="cpu", mode=uma.Mode(exclude=["constant_folding"]))
    assert [n.op.name for n in unfolded.fgraph.toposort()] == ["exp", "multiply", "add"]
    f = uma.function([x], x + c, backend="cpu")
    assert [n.op.name for n in f.fgraph.toposort()] == ["add"]  # folded once, at compile time
    for g in (f, unfolded):
        assert_matches(g(np.ones(3)), np.ones(3) + np.exp([0.0, 1.0, 2.0]) * 2)
    fg = unfolded.fgraph.clone()
    from uma.runtime.linkers.cpu import fold_constants
    fold_constants(fg)
    assert [n.op.name for n in fg.toposort()] == ["add"]


# ---------------------------------------------------------------------------- returns

@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_return_structure(backend):
    x = sym.vector("x")
    one = uma.function([x], x * 2, backend=backend)
    lst = uma.function([x], [x * 2], backend=backend)
    two = uma.function([x], (x * 2, x + 1), backend=backend)
    none = uma.function([x], None, backend=backend)
    empty = uma.function([x], [], backend=backend)
    v = np.arange(3.0)
    assert isinstance(one(v), uma.Array)
    r = lst(v)
    assert isinstance(r, list) and len(r) == 1 and isinstance(r[0], uma.Array)
    assert len(two(v)) == 2
    assert none(v) == [] and empty(v) == []


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_zero_d_output_is_a_zero_d_array(backend, dtype):
    x = sym.vector("x", dtype=dtype)
    f = uma.function([x], sym.max(x), backend=backend)
    r = f(np.arange(4).astype(dtype))
    assert isinstance(r, uma.Array) and r.ndim == 0 and r.shape == ()
    assert r.dtype == dtype and r.item() == 3


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_outputs_never_alias_inputs_or_each_other(backend):
    x = sym.matrix("x")
    y = x * 2
    f = uma.function([x], [x, y, y, y.T, x.T, sym.reshape(x, (-1,))], backend=backend)
    a = np.arange(6.0).reshape(2, 3)
    ua = uma.asarray(a)
    outs = f(ua)
    views = [np.asarray(o) for o in outs]
    for k, v in enumerate(views):
        assert not np.shares_memory(v, a), k
        for j in range(k):
            assert not np.shares_memory(v, views[j]), (j, k)
    views[0][...] = -1
    views[1][...] = -1
    assert (a == np.arange(6.0).reshape(2, 3)).all()
    assert_matches(outs[2], a * 2)


# ---------------------------------------------------------------------------- inputs

@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_inputs_accept_numpy_uma_lists_scalars(backend):
    x = sym.vector("x", dtype="float32")
    s = sym.scalar("s", dtype="float32")
    f = uma.function([x, s], x * s, backend=backend)
    expected = np.array([2, 4, 6], np.float32)
    for value in (np.array([1, 2, 3], np.float32), uma.asarray(np.array([1, 2, 3], np.float32)),
                  [1, 2, 3], [1.0, 2.0, 3.0], np.array([1, 2, 3], np.int16)):
        assert_matches(f(value, 2.0), expected)
    assert_matches(f([1, 2, 3], np.float32(2)), expected)
    assert_matches(f(x=[1, 2, 3], s=2), expected)  # by name
    with pytest.raises(TypeError):
        f([1, 2, 3], 2, s=2)


@pytest.mark.parametrize("value,dtype,ok", [
    (np.arange(3, dtype=np.int32), "float64", True),
    (np.arange(3, dtype=np.int64), "float64", True),
    (np.arange(3, dtype=np.int64), "float32", False),
    (np.arange(3, dtype=np.float64), "float32", False),
    (np.arange(3, dtype=np.float32), "float64", True),
    (np.arange(3, dtype=np.float64), "int64", False),
    (np.ones(3, dtype=bool), "int32", True),
    ([1.5, 2.0], "float32", True),
    ([1.5, 2.0], "int32", False),
    ([1, 2], "float32", True),
    ([True, False], "int64", True),
    ([1, 0], "bool", False),
    ([2**40, 1], "int32", False),
    ([1e300, 1.0], "float32", False),
    ([-1, 2], "int64", True),
])
def test_input_casting_rules(value, dtype, ok):
    x = sym.vector("xin", dtype=dtype)
    f = uma.function([x], x + 0, backend="cpu")
    if ok:
        r = f(value)
        assert r.dtype == dtype
        np.testing.assert_array_equal(np.asarray(r), np.asarray(value).astype(dtype))
    else:
        with pytest.raises(TypeError, match="xin"):
            f(value)


def test_unsupported_input_objects_are_type_errors_naming_the_input():
    x = sym.vector("xs")
    f = uma.function([x], x * 2)
    with pytest.raises(TypeError, match="xs"):
        f(np.array(["a", "b"], dtype=object))
    with pytest.raises(TypeError, match="xs"):
        f(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="xs"):
        f(object())
    with pytest.raises(TypeError, match="xs"):
        f(x)  # a symbolic variable is not a value
    with pytest.raises(TypeError, match=r"xs.*bytes.*\|S2"):
        f(b"\x01\x02")  # NumPy reads bytes as a string, not as numbers
    assert_matches(f(memoryview(b"\x01\x02")), np.array([2.0, 4.0]))  # a buffer: its uint8 values
    w = uma.shared(np.zeros(2), name="w")
    with pytest.raises(TypeError, match="'w'.*bytes"):
        w.set_value(b"ab")
    np.testing.assert_array_equal(w.get_value(), np.zeros(2))


def test_scalar_inputs_weak():
    s = sym.scalar("s", dtype="int8")
    f = uma.function([s], s.astype("int32"), backend="reference")
    assert f(100).item() == 100
    with pytest.raises(TypeError, match="'s'"):
        f(300)  # out of range for int8
    with pytest.raises(TypeError, match="'s'"):
        f(np.int64(1))  # a NumPy scalar is strong: int64 -> int8 is not safe


def test_allow_input_downcast():
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], x * 1, allow_input_downcast=True)
    r = f(np.array([0.1, 0.2]))
    assert r.dtype == "float32"
    np.testing.assert_array_equal(np.asarray(r), np.array([0.1, 0.2], np.float32))
    i = sym.vector("i", dtype="int32")
    assert np.asarray(uma.function([i], i + 0, allow_input_downcast=True)([1.7, -2.2])).tolist() == [1, -2]


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_wrong_arity_and_ndim_are_type_errors(backend):
    x = sym.matrix("x")
    f = uma.function([x], x + 1, backend=backend)
    with pytest.raises(TypeError):
        f()
    with pytest.raises(TypeError):
        f(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="'x'"):
        f(np.ones(3))
    with pytest.raises(TypeError):
        f(x=np.ones((2, 2)), y=1)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_keyword_arguments_bind_by_input_name(backend):
    a, b = sym.vector("a"), sym.vector("b")
    f = uma.function([a, b], a - 2 * b, backend=backend)
    x, y = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    want = x - 2 * y
    assert_matches(f(b=y, a=x), want)
    assert_matches(f(x, b=y), want)
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        f(x, c=y)
    with pytest.raises(TypeError, match="multiple values for input 'a'"):
        f(x, a=y)
    with pytest.raises(TypeError, match="missing argument.*'b'"):
        f(a=x)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_keyword_naming_two_inputs_is_ambiguous(backend):
    # PyTensor's "Ambiguous name": the keyword would bind to one of them silently
    a, b = sym.vector("x"), sym.vector("x")
    f = uma.function([a, b], a - 2 * b, backend=backend)
    with pytest.raises(TypeError, match="'x'.*inputs 0, 1 are all named 'x'.*by position"):
        f(np.ones(2), x=np.zeros(2))
    with pytest.raises(TypeError, match="inputs 0, 1 are all named 'x'"):
        f(x=np.ones(2))
    assert_matches(f(np.ones(2), np.zeros(2)), np.ones(2))


def test_static_shape_is_checked():
    x = sym.tensor("x", shape=(None, 3))
    f = uma.function([x], x * 2)
    with pytest.raises(ValueError, match="'x'"):
        f(np.ones((2, 4)))
    assert f(np.ones((5, 3))).shape == (5, 3)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_shape_errors_during_a_call_name_the_op(backend):
    x, y = sym.vector("x"), sym.vector("y")
    f = uma.function([x, y], sym.exp(x) + y, backend=backend)
    with pytest.raises(ValueError, match="add"):
        f(np.ones(3), np.ones(4))
    a, b = sym.matrix("a"), sym.matrix("b")
    g = uma.function([a, b], a @ b, backend=backend)
    with pytest.raises(ValueError, match="matmul"):
        g(np.ones((2, 3)), np.ones((4, 2)))
    r = sym.matrix("r")
    h = uma.function([r], r.reshape(-1, 4), backend=backend)
    with pytest.raises(ValueError, match="reshape"):
        h(np.ones((3, 3)))
    assert h(np.ones((2, 2))).shape == (1, 4)


@pytest.mark.parametrize("backend", ["reference", "cpu", "numpy"])
def test_a_shape_error_keeps_no_reference_to_the_arguments(backend):
    """The shape check's error (an op's own, or renamed after its composed function) holds its
    traceback without a reference cycle: the arguments are released when the call fails."""
    import sys
    x, y = sym.vector("x"), sym.vector("y")
    for out in (sym.tanh(x) + y, uma.vecdot(x, y)):
        f = uma.function([x, y], out, backend=backend)
        a, b = np.ones(3), np.ones(4)
        f(a, a)
        refs = sys.getrefcount(a), sys.getrefcount(b)
        for _ in range(3):
            with pytest.raises(ValueError, match="broadcast"):
                f(a, b)
        assert (sys.getrefcount(a), sys.getrefcount(b)) == refs


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_runtime_broadcasting_of_unknown_axes_is_an_error(backend):
    # PyTensor convention: only axes declared with length 1 broadcast; otherwise gradients
    # (summed over broadcast axes at build time) would silently have the wrong shape.
    x, y = sym.vector("x"), sym.vector("y")
    f = uma.function([x, y], x + y, backend=backend)
    with pytest.raises(ValueError, match="add.*length 1"):
        f(np.ones(3), np.ones(1))
    y1 = sym.vector("y1", shape=(1,))
    g = uma.function([x, y1], x + y1, backend=backend)
    assert_matches(g(np.ones(3), np.ones(1)), np.full(3, 2.0))


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_index_error_at_run_time(backend):
    x = sym.matrix("x")
    f = uma.function([x], x[5], backend=backend)
    with pytest.raises(IndexError):
        f(np.ones((2, 2)))


# ---------------------------------------------------------------------------- compile errors

def test_compile_errors():
    x, y = sym.vector("x"), sym.vector("y")
    with pytest.raises(MissingInputError, match="output 0 depends on 'y'"):
        uma.function([x], x + y)
    with pytest.raises(MissingInputError, match="output 1 depends on 'y'"):
        uma.function([x], [x * 2, x + y])
    w = uma.shared(np.zeros(2), name="w")
    with pytest.raises(MissingInputError, match="the update of 'w' depends on 'y'"):
        uma.function([x], x, updates={w: w + y})
    with pytest.raises(MissingInputError, match="the update of 'w' depends on 'y'"):
        uma.function([], [], updates={w: y})
    with pytest.raises(TypeError):
        uma.function(x, x)  # inputs must be a list
    with pytest.raises(TypeError):
        uma.function([x, 3], x)
    with pytest.raises(ValueError):
        uma.function([x, x], x)
    s = uma.shared(np.ones(3), "s")
    with pytest.raises(TypeError, match="'s'"):
        uma.function([s], s + 1)
    with pytest.raises(ValueError, match="update_policy"):
        uma.function([x], x, update_policy="sometimes")


def test_backend_registry():
    assert {"cpu", "reference"} <= set(uma.backends())
    x = sym.vector("x")
    with pytest.raises(ValueError, match="nope"):
        uma.function([x], x, backend="nope")
    if uma.cuda.is_available():  # the cuda backend is registered only where a GPU is usable
        assert "cuda" in uma.backends()
    else:
        assert "cuda" not in uma.backends()
        with pytest.raises(RuntimeError, match="cuda"):
            uma.function([x], x, backend="cuda")
    with pytest.raises(TypeError):
        uma.register_backend("bad", object())
    with pytest.raises(ValueError):
        uma.register_backend("cpu", Linker())


def test_python_defined_linker():
    calls = []

    class Doubling(Linker):
        name = "test-python-linker"
        residency = "cpu"

        def compile(self, fgraph):
            thunk = make_evaluator(fgraph)

            def run(values):
                calls.append(len(values))
                return thunk(values)

            return run

    uma.register_backend("test-python-linker", Doubling(), replace=True)
    assert "test-python-linker" in uma.backends()
    x = sym.vector("x")
    f = uma.function([x], x * 3, backend="test-python-linker")
    assert_matches(f([1.0, 2.0]), np.array([3.0, 6.0]))
    assert calls == [1]
    f2 = uma.function([x], x * 3, backend=Doubling())  # a Linker instance works too
    assert_matches(f2([1.0]), np.array([3.0]))


def test_input_can_be_an_intermediate_variable():
    x = sym.vector("x")
    h = sym.exp(x)
    f = uma.function([h], h * 2)
    assert_matches(f([1.0, 2.0]), np.array([2.0, 4.0]))


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy_matches_log_softmax_formulation(backend, dtype, rng):
    """The fused op equals -sum(one_hot * log_softmax) (NumPy oracle), values and gradients."""
    z = sym.matrix("z", dtype=dtype)
    y = sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(z, y))
    f = uma.function([z, y], [loss, uma.grad(loss, z)], backend=backend)
    Z = rng.normal(size=(7, 5)).astype(dtype) * 4
    Y = rng.integers(0, 5, size=7)
    m = Z.max(axis=1, keepdims=True)
    logp = Z - m - np.log(np.exp(Z - m).sum(axis=1, keepdims=True))
    p = np.exp(logp)
    p[np.arange(7), Y] -= 1.0
    got_loss, got_grad = f(Z, Y)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert_matches(got_loss, np.asarray(-logp[np.arange(7), Y].mean(), dtype=dtype), rtol=tol, atol=tol)
    assert_matches(got_grad, (p / 7).astype(dtype), rtol=tol, atol=tol)


def test_softmax_cross_entropy_bad_labels():
    z = sym.matrix("z")
    y = sym.vector("y", dtype="int64")
    f = uma.function([z, y], sym.softmax_cross_entropy(z, y))
    with pytest.raises(ValueError, match="label 5 at position 1 is out of range"):
        f(np.zeros((2, 5)), np.array([0, 5]))
    with pytest.raises(TypeError, match="labels must be a 1-d integer"):
        sym.softmax_cross_entropy(z, sym.vector("yf"))


def test_softmax_cross_entropy_label_check_is_never_skipped_on_the_cpu():
    # check_labels=False defers the check on cuda only: on the CPU a bad label would index
    # outside its row, so the op checks whatever the flag says.
    z = np.zeros((3, 4))
    for fn, args in ((uma._core.softmax_cross_entropy, (z, np.array([0, 1, 4]))),
                     (uma._core.softmax_cross_entropy_grad, (np.ones(3), z, np.array([0, -1, 2])))):
        with pytest.raises(ValueError, match="at position [12] is out of range"):
            fn(*args, check_labels=False)


def test_check_labels():
    uma._core._check_labels(np.array([0, 3, 2], np.int32), 4)
    with pytest.raises(ValueError, match=r"my_op: label -2 at position 2 is out of range \[0, 4\)"):
        uma._core._check_labels(np.array([0, 3, -2, 9]), 4, "my_op")
    with pytest.raises(TypeError, match="integer dtype, got float64"):
        uma._core._check_labels(np.array([0.0]), 4)
    with pytest.raises(ValueError, match="1-d"):
        uma._core._check_labels(np.zeros((2, 2), np.int64), 4)
    with pytest.raises(ValueError, match="number of classes must be >= 0, got -1"):
        uma._core._check_labels(np.array([0]), -1)


# ------------------------------------------------------- NumPy inputs on the C++ call path
# NumPy arrays of the declared dtype are read from NumPy's struct fields: small ones (at most
# 1 KiB) are copied at the call, larger ones shared under the copy rules; anything else goes
# through uma.asarray and the input filter (python/src/bind_runtime.cpp, call_argument).

@pytest.mark.parametrize("n", [0, 3, 1000])  # 0-d, small (copied), large (shared)
def test_cpu_numpy_inputs_give_numpys_values_and_never_alias_the_result(n):
    x = sym.scalar("x") if n == 0 else sym.vector("x")
    f = uma.function([x], [x, x * 2], backend="cpu")
    v = np.array(1.5) if n == 0 else np.arange(n, dtype=np.float64)
    same, double = f(v)
    assert_matches(same, v)
    assert_matches(double, v * 2)
    v[...] = -7.0  # the caller's array changes after the call: the results do not
    assert_matches(same, np.array(1.5) if n == 0 else np.arange(n, dtype=np.float64))
    assert f.call_counts() == {"fast": 1, "general": 0}


@pytest.mark.parametrize("n", [0, 3, 1000])
def test_cpu_numpy_input_mutated_after_the_call_leaves_the_shared_value(n):
    shape = () if n == 0 else (n,)
    a = uma.shared(np.zeros(shape), "a")
    x = sym.scalar("x") if n == 0 else sym.vector("x")
    f = uma.function([x], [], updates={a: x}, backend="cpu")  # the update is the input itself
    v = np.full(shape, 2.5)
    f(v)
    v[...] = 99.0
    np.testing.assert_array_equal(a.get_value(), np.full(shape, 2.5))
    g = uma.function([x], [], updates={a: a + x}, backend="cpu")
    g(v)
    v[...] = -1.0
    np.testing.assert_array_equal(a.get_value(), np.full(shape, 2.5 + 99.0))
    assert f.call_counts()["fast"] == 1 and g.call_counts()["fast"] == 1


def test_cpu_call_made_while_another_converts_its_arguments():
    """A call on the C++ path made while another call on the same thread converts its
    arguments (here an object whose __array__ calls a compiled function) uses argument vectors
    of its own: both calls compute the right values."""
    c = uma.shared(np.array(0.0), "c")
    g = uma.function([], [], updates={c: c + 1}, backend="cpu")

    class CallsG:
        def __array__(self, dtype=None, copy=None):
            g()
            return np.array(2.0)

    x, y, z = sym.scalar("x"), sym.scalar("y"), sym.scalar("z")
    f = uma.function([x, y, z], x * y + z, backend="cpu")
    assert float(np.asarray(f(np.array(3.0), CallsG(), np.array(0.5)))) == 6.5
    assert float(c.get_value()) == 1.0
    assert f.call_counts()["fast"] == 1 and g.call_counts()["fast"] == 1


@pytest.mark.parametrize("n", [4, 1000])
def test_cpu_numpy_inputs_non_contiguous_read_only_and_byte_swapped(n):
    x = sym.vector("x")
    f = uma.function([x], x + 1, backend="cpu")
    base = np.arange(3 * n, dtype=np.float64)
    for v in (base[::3], base[::-3], base.reshape(n, 3)[:, 1]):  # strided and reversed views
        assert_matches(f(v), v + 1)
    ro = np.arange(n, dtype=np.float64)
    ro.flags.writeable = False
    assert_matches(f(ro), ro + 1)
    swapped = np.arange(n, dtype=">f8")  # non-native byte order: converted on the way in
    assert_matches(f(swapped), np.arange(n, dtype=np.float64) + 1)
    unaligned = np.frombuffer(b"\0" + np.arange(n, dtype=np.float64).tobytes(), dtype=np.float64, offset=1)
    assert_matches(f(unaligned), np.arange(n, dtype=np.float64) + 1)
    assert f.call_counts() == {"fast": 6, "general": 0}


def test_cpu_numpy_inputs_of_other_dtypes_follow_the_casting_rules():
    x = sym.scalar("x", dtype="float64")
    i = sym.vector("i", dtype="int32")
    f = uma.function([x, i], x * i, backend="cpu")
    out = f(np.array(2, dtype=np.int32), np.array([1, 2], dtype=np.int32))  # int32 -> float64: safe
    assert_matches(out, np.array([2.0, 4.0]))
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*complex128 to float64"):
        f(np.array(1j), np.array([1, 2], dtype=np.int32))
    with pytest.raises(TypeError, match=r"input 1 \('i'\).*int64 to int32"):
        f(np.array(1.0), np.array([1, 2], dtype=np.int64))
    with pytest.raises(TypeError, match=r"input 1 \('i'\).*1-d.*0-d"):
        f(np.array(1.0), np.array(1, dtype=np.int32))
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*0-d.*1-d"):
        f(np.array([1.0]), np.array([1, 2], dtype=np.int32))
    down = uma.function([x, i], x * i, backend="cpu", allow_input_downcast=True)
    assert_matches(down(np.array(2.0), np.array([1.9, 2.2])), np.array([2.0, 4.0]))
    b = sym.vector("b", dtype="bool")
    g = uma.function([b], uma.where(b, 1.0, 0.0), backend="cpu")
    flags = np.array([2, 0, 1], dtype=np.uint8).view(np.bool_)  # a byte 2 reads as True (NumPy)
    assert_matches(g(flags), np.where(flags, 1.0, 0.0))


def test_cpu_numpy_static_shape_mismatch_is_a_value_error():
    x = sym.tensor("x", shape=(3,))
    f = uma.function([x], x * 2, backend="cpu")
    assert_matches(f(np.arange(3.0)), np.arange(3.0) * 2)
    with pytest.raises(ValueError, match=r"input 0 \('x'\)"):
        f(np.arange(4.0))


@pytest.mark.parametrize("n", [3, 1000])
def test_cpu_numpy_inputs_are_released_after_the_call(n):
    import sys
    x = sym.vector("x")
    f = uma.function([x], x.sum(), backend="cpu")
    v = np.arange(n, dtype=np.float64)
    f(v)  # warm up: compile-time caches
    refs = sys.getrefcount(v)
    adopted = uma.memory_stats()["adopted_bytes"]
    for _ in range(5):
        f(v)
    assert sys.getrefcount(v) == refs
    assert uma.memory_stats()["adopted_bytes"] == adopted


@pytest.mark.skipif("libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer build keeps nanobind's assertions, which abort when the unwinding "
                           "thread's references are dropped without the GIL (benign in release builds)")
@pytest.mark.parametrize("arg", ["1.0", "np.ones(100000)"], ids=["scalar-gil-held", "vector-gil-released"])
def test_daemon_thread_calling_at_interpreter_exit_does_not_crash(arg):
    """A daemon thread still calling a compiled function when the interpreter exits is ended
    by CPython with pthread_exit; its forced unwind must pass through Function.__call__ (it
    crashed the process with SIGSEGV when the call path caught it). A call of more than 4096
    elements runs without the GIL and meets the exit when it takes the GIL back (that aborted
    the process while the GIL was retaken in a destructor); its input is NumPy memory adopted
    by the call, whose owner must not be released during that unwind."""
    import subprocess
    import sys
    code = (
        "import threading, time, uma, numpy as np\n"
        f"x = uma.sym.{'scalar' if arg == '1.0' else 'vector'}('x'); h = uma.function([x], x * 2)\n"
        f"v = {arg}\n"
        "def loop():\n"
        "    while True:\n"
        "        h(v)\n"
        "threading.Thread(target=loop, daemon=True).start(); time.sleep(0.3)\n"
        "print('main done')\n"
    )
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
        assert "main done" in r.stdout


@pytest.mark.parametrize("exc", [RuntimeError, MemoryError, KeyError])
def test_input_conversion_errors_propagate_unchanged(exc):
    """An error raised by an input's own __array__ reaches the caller as itself (as with
    uma.asarray and NumPy), not rewrapped as a TypeError; non-array inputs stay TypeError."""
    class Bad:
        def __array__(self, dtype=None, copy=None):
            raise exc("boom")

    x = sym.vector("x", dtype="float64")
    f = uma.function([x], x * 2)
    with pytest.raises(exc):
        f(Bad())
    with pytest.raises(TypeError, match="cannot convert"):
        f(object())


@pytest.mark.parametrize("backend", ["cpu", "numpy", "reference"])
def test_a_bad_uint64_label_is_named_by_its_own_value(backend):
    """uint64 labels beyond int64's range are named as given, not as their int64 wrap (-1)."""
    z, y = sym.matrix("z"), sym.vector("y", dtype="uint64")
    f = uma.function([z, y], sym.mean(sym.softmax_cross_entropy(z, y)), backend=backend)
    for labels, bad, at in (([0, 2**64 - 1], 2**64 - 1, 1), ([2, 2**63 + 5], 2**63 + 5, 1), ([4, 2**64 - 1], 4, 0)):
        with pytest.raises(ValueError, match=rf"label {bad} at position {at} is out of range \[0, 3\)"):
            f(np.zeros((2, 3)), np.array(labels, np.uint64))
    with pytest.raises(ValueError, match=rf"label {2**64 - 1} at position 0"):
        uma._core._check_labels(np.array([2**64 - 1], np.uint64), 3)
    with pytest.raises(ValueError, match=rf"label {2**64 - 2} at position 1"):
        uma._core.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 2**64 - 2], np.uint64), check_labels=False)
