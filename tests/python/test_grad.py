"""uma.grad: every differentiable op checked against central finite differences, on the
`reference` and `cpu` backends, plus the API contract (types, disconnected inputs, dtypes)."""
import numpy as np
import pytest

import uma
from conftest import random_data
from uma import sym
from uma.graph import DisconnectedInputError

BACKENDS = ["reference", "cpu"]


def _t(shape, domain="general", static=None, dtype="float64", diff=True):
    return dict(shape=tuple(shape), domain=domain, static=static, dtype=dtype, diff=diff)


# id -> (input specs, builder)
CASES = {}


def case(name, specs, build):
    assert name not in CASES
    CASES[name] = (specs, build)


A, B = _t((2, 3)), _t((2, 3))
case("add", [A, B], sym.add)
case("add-broadcast-vector", [_t((2, 3)), _t((3,))], sym.add)
case("add-broadcast-static-ones", [_t((3, 1), static=(None, 1)), _t((1, 4), static=(1, None))], sym.add)
case("add-scalar-var", [_t(()), _t((2, 3))], sym.add)
case("subtract", [A, _t((3,))], sym.subtract)
case("multiply", [A, _t((1, 3), static=(1, None))], sym.multiply)
case("divide", [A, _t((2, 3), "nonzero")], sym.divide)
case("power", [_t((2, 3), "positive"), _t((2, 3), "exponent")], sym.power)
case("power-const", [_t((2, 3))], lambda x: x ** 3)
case("maximum", [A, B], sym.maximum)
case("minimum", [A, _t((3,))], sym.minimum)
case("remainder", [_t((2, 3), "positive"), _t((2, 3), "nonzero")], sym.remainder)
case("floor_divide-zero", [_t((2, 3), "positive"), _t((2, 3), "nonzero")],
     lambda x, y: sym.floor_divide(x, y) + x)
case("negative", [A], sym.negative)
case("abs", [_t((2, 3), "nonzero")], sym.abs)
case("exp", [A], sym.exp)
case("log", [_t((2, 3), "positive")], sym.log)
case("log1p", [_t((2, 3), "positive")], sym.log1p)
case("expm1", [A], sym.expm1)
case("sqrt", [_t((2, 3), "positive")], sym.sqrt)
case("tanh", [A], sym.tanh)
case("sigmoid", [A], sym.sigmoid)
case("square", [A], sym.square)
case("sin", [A], sym.sin)
case("cos", [A], sym.cos)
case("relu", [_t((2, 3), "nonzero")], sym.relu)
case("sign-floor-ceil-zero", [_t((2, 3), "nonzero")],
     lambda x: sym.sign(x) + sym.floor(x) + sym.ceil(x) + x * 0.5)
case("where", [_t((2, 3), dtype="bool", diff=False), A, _t((3,))], sym.where)
case("where-scalar", [A], lambda x: sym.where(x > 0, x * 2, 0.0))
for _name in ["sum", "mean", "max", "min", "prod"]:
    for _axis, _kd in [(None, False), (0, False), (1, True), ((0, 2), False), (-1, False)]:
        case(f"{_name}-{_axis}-{_kd}", [_t((2, 3, 2), "nonzero")],
             lambda x, n=_name, ax=_axis, kd=_kd: getattr(sym, n)(x, axis=ax, keepdims=kd))
case("mean-static-shape", [_t((2, 3), static=(2, 3))], lambda x: sym.mean(x, axis=0))
case("sum-static-shape", [_t((2, 3), static=(2, 3))], lambda x: sym.sum(x, axis=1, keepdims=True))
case("methods", [A], lambda x: x.sum(axis=0) * x.mean(axis=0) + x.max(axis=0))
for _a, _b in [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((2, 2, 3), (3, 4)),
               ((2, 1, 2, 3), (4, 3, 2))]:
    case(f"matmul-{_a}-{_b}", [_t(_a, static=tuple(1 if d == 1 else None for d in _a)),
                              _t(_b, static=tuple(1 if d == 1 else None for d in _b))], sym.matmul)
case("dot", [_t((2, 3)), _t((3, 2))], sym.dot)
case("reshape", [_t((2, 3), static=(2, 3))], lambda x: sym.reshape(x, (3, 2)))
case("reshape-one-unknown", [_t((2, 3), static=(None, 3))], lambda x: sym.reshape(x, (-1,)))
case("reshape-unknown-shape", [_t((2, 3, 2))], lambda x: sym.reshape(x, (-1, 2)))
case("transpose", [_t((2, 3, 2))], lambda x: sym.transpose(x, (2, 0, 1)))
case("T", [A], lambda x: x.T)
case("broadcast_to", [_t((1, 3), static=(1, None))], lambda x: sym.broadcast_to(x, (4, 3)))
case("concatenate", [_t((2, 3)), _t((1, 3)), _t((3, 3))], lambda a, b, c: sym.concatenate([a, b, c]))
case("concatenate-axis1", [_t((2, 3)), _t((2, 1))], lambda a, b: sym.concatenate([a, b], axis=1))
case("stack", [A, B], lambda a, b: sym.stack([a, b], axis=1))
case("expand_dims", [A], lambda x: sym.expand_dims(x, 1))
case("squeeze", [_t((2, 1, 3), static=(None, 1, None))], sym.squeeze)
case("getitem", [_t((3, 4))], lambda x: x[1:, ::-2])
case("getitem-int-newaxis", [_t((3, 4))], lambda x: x[None, 1, ..., 2:])
case("softmax", [_t((3, 4))], sym.softmax)
case("softmax-axis0", [_t((3, 4))], lambda x: sym.softmax(x, axis=0))
case("log_softmax", [_t((3, 4))], sym.log_softmax)
case("log_softmax-axis0", [_t((3, 4))], lambda x: sym.log_softmax(x, axis=0))
case("reuse", [A], lambda x: x * x + sym.exp(x) - x / 3)
case("mlp", [_t((4, 3)), _t((3, 5)), _t((5,)), _t((4,), "exponent", dtype="int64", diff=False)],
     lambda x, w, b, y: -sym.mean(sym.sum(sym.one_hot(y, 5) * sym.log_softmax(sym.tanh(x @ w + b)), axis=1)))


def _check(name, backend, rng, eps=1e-6, rtol=1e-5, atol=1e-7):
    specs, build = CASES[name]
    xs = [sym.tensor(f"in{k}", dtype=s["dtype"],
                     shape=s["static"] if s["static"] is not None else (None,) * len(s["shape"]))
          for k, s in enumerate(specs)]
    data = [random_data(s["dtype"], s["shape"], rng, s["domain"]) for s in specs]
    out = build(*xs)
    out_shape = uma.function(xs, out, backend=backend)(*data).shape
    w = sym.tensor("w", shape=(None,) * out.ndim)
    weights = rng.normal(size=out_shape)
    cost = sym.sum(out * w)
    wrt = [x for x, s in zip(xs, specs) if s["diff"]]
    grads = uma.grad(cost, wrt)
    for x, g in zip(wrt, grads):
        assert g.dtype == x.dtype and g.ndim == x.ndim
    f_cost = uma.function(xs + [w], cost, backend=backend)
    f_grad = uma.function(xs + [w], grads, backend=backend)
    got = [np.asarray(g) for g in f_grad(*data, weights)]
    k_wrt = [k for k, s in enumerate(specs) if s["diff"]]
    for k, g in zip(k_wrt, got):
        assert g.shape == data[k].shape, (name, k)
        num = np.zeros_like(data[k])
        for i in np.ndindex(data[k].shape):
            plus = [d.copy() for d in data]
            minus = [d.copy() for d in data]
            plus[k][i] += eps
            minus[k][i] -= eps
            num[i] = (f_cost(*plus, weights).item() - f_cost(*minus, weights).item()) / (2 * eps)
        np.testing.assert_allclose(g, num, rtol=rtol, atol=atol, err_msg=f"{name}: input {k}")
    return got


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_finite_differences(name, backend):
    _check(name, backend, np.random.default_rng(7))


@pytest.mark.parametrize("name", ["mlp", "softmax", "matmul-(2, 1, 2, 3)-(4, 3, 2)", "concatenate",
                                  "getitem", "mean-None-False", "reshape-unknown-shape"])
def test_cpu_and_reference_gradients_agree(name):
    ref = _check(name, "reference", np.random.default_rng(3))
    cpu = _check(name, "cpu", np.random.default_rng(3))
    for r, c in zip(ref, cpu):
        np.testing.assert_allclose(c, r, rtol=1e-12, atol=1e-14)


def test_astype_gradient():
    x = sym.vector("x")
    cost = sym.sum(sym.square(x.astype("float32"))).astype("float64")
    g = uma.grad(cost, x)
    assert g.dtype == "float64"
    v = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(np.asarray(uma.function([x], g)(v)), 2 * v, rtol=1e-6)


# ---------------------------------------------------------------------------- API

def test_grad_returns_same_structure_and_types():
    x = sym.matrix("x", dtype="float32", shape=(None, 3))
    b = sym.vector("b", dtype="float32", shape=(3,))
    cost = sym.sum(sym.tanh(x + b))
    gx = uma.grad(cost, x)
    assert isinstance(gx, uma.graph.Variable)
    gx2, gb = uma.grad(cost, [x, b])
    assert (gx2.dtype, gx2.ndim, gb.dtype, gb.ndim) == ("float32", 2, "float32", 1)
    assert isinstance(uma.grad(cost, (x,)), list)
    f = uma.function([x, b], [gx2, gb])
    rx, rb = f(np.ones((2, 3), np.float32), np.zeros(3, np.float32))
    assert rx.dtype == "float32" and rb.dtype == "float32" and rb.shape == (3,)
    np.testing.assert_allclose(np.asarray(rb), 2 * (1 - np.tanh(1.0) ** 2) * np.ones(3), rtol=1e-6)


def test_cost_must_be_a_0d_float():
    x = sym.vector("x")
    with pytest.raises(TypeError, match="0-d"):
        uma.grad(x * 2, x)
    with pytest.raises(TypeError, match="float"):
        uma.grad(sym.sum(x > 0), x)
    with pytest.raises(TypeError):
        uma.grad(np.float64(1.0), x)
    with pytest.raises(TypeError):
        uma.grad(sym.sum(x), [x, 3])
    i = sym.vector("i", dtype="int64")
    with pytest.raises(TypeError, match="'i'"):
        uma.grad(sym.sum(x * i), i)


def test_disconnected_wrt_raises_value_error_naming_it():
    x, y = sym.vector("x"), sym.vector("unused_y")
    cost = sym.sum(x ** 2)
    with pytest.raises(DisconnectedInputError, match="unused_y"):
        uma.grad(cost, [x, y])
    assert issubclass(DisconnectedInputError, ValueError)
    gx, gy = uma.grad(cost, [x, y], disconnected_inputs="zero")
    f = uma.function([x, y], [gx, gy])
    a, b = f([1.0, 2.0], [5.0, 6.0, 7.0])
    np.testing.assert_array_equal(np.asarray(a), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(b), [0.0, 0.0, 0.0])


def test_only_non_differentiable_path_is_disconnected():
    x = sym.vector("x")
    cost = sym.sum(sym.one_hot(sym.argmax(x, keepdims=True), 3))
    with pytest.raises(DisconnectedInputError):
        uma.grad(cost, x)


def test_grad_of_shared_variables_and_wrt_cost_itself():
    W = uma.shared(np.array([[1.0, 2.0], [3.0, 4.0]]), "W")
    cost = sym.sum(W * W)
    gW = uma.grad(cost, W)
    np.testing.assert_allclose(np.asarray(uma.function([], gW)()), 2 * W.get_value())
    assert uma.function([], uma.grad(cost, cost))().item() == 1.0
