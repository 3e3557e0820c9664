"""uma.grad: every differentiable op checked against central finite differences with
``uma.verify_grad`` on the `reference`, `cpu` and `numpy` backends, plus the API contract
(types, disconnected inputs, dtypes) and verify_grad's own contract."""
import numpy as np
import pytest

import uma
from conftest import BACKENDS, host_numpy, random_data
from uma import sym
from uma.graph import DisconnectedInputError, Op
from uma.graph.gradient import UndefinedGrad, grad_undefined
from uma.runtime.verify import GradientError



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


def _inputs(name, rng):
    specs, build = CASES[name]
    shapes = [s["static"] if s["static"] is not None else (None,) * len(s["shape"]) for s in specs]
    data = [random_data(s["dtype"], s["shape"], rng, s["domain"]) for s in specs]
    return specs, build, shapes, data


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_finite_differences(name, backend):
    specs, build, shapes, data = _inputs(name, np.random.default_rng(7))
    # float inputs are differentiated, int/bool ones held fixed (the specs' diff flags say so)
    assert [s["diff"] for s in specs] == [np.dtype(s["dtype"]).kind == "f" for s in specs]
    uma.verify_grad(build, data, rng=np.random.default_rng(8), backend=backend, input_shapes=shapes,
                    abs_tol=1e-7, rel_tol=1e-5)


def _gradients(name, backend, rng):
    specs, build, shapes, data = _inputs(name, rng)
    xs = [sym.tensor(f"in{k}", dtype=s["dtype"], shape=shape) for k, (s, shape) in enumerate(zip(specs, shapes))]
    out = build(*xs)
    cost = sym.sum(out * out)
    grads = uma.grad(cost, [x for x, s in zip(xs, specs) if s["diff"]])
    for x, g in zip(xs, grads):
        assert g.dtype == x.dtype and g.ndim == x.ndim
    return [host_numpy(g) for g in uma.function(xs, grads, backend=backend)(*data)]


@pytest.mark.parametrize("name", ["mlp", "softmax", "matmul-(2, 1, 2, 3)-(4, 3, 2)", "concatenate",
                                  "getitem", "mean-None-False", "reshape-unknown-shape"])
def test_backends_gradients_agree(name):
    ref = _gradients(name, "reference", np.random.default_rng(3))
    for backend in BACKENDS:
        got = _gradients(name, backend, np.random.default_rng(3))
        for r, c in zip(ref, got):
            np.testing.assert_allclose(c, r, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------- verify_grad

class _WrongSquareGrad(Op):
    """x**2 whose gradient is wrong by ``delta`` at one entry (``where``)."""

    name = "test_wrong_square"
    props = ("where", "delta")

    def __init__(self, where, delta):
        self.where, self.delta = where, delta

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0] * values[0]]

    def grad(self, node, output_grads):
        (g,) = output_grads
        (x,) = node.inputs
        bump = np.zeros(x.shape)
        bump[self.where] = self.delta
        return [g * (2 * x + bump)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_grad_reports_the_worst_entry(backend):
    x0 = np.arange(1.0, 7.0).reshape(2, 3)
    with pytest.raises(AssertionError) as info:
        uma.verify_grad(lambda x: sym.sum(_WrongSquareGrad((1, 2), 0.5)(x)), [x0], backend=backend)
    e = info.value
    assert isinstance(e, GradientError)
    assert (e.arg, e.index, e.n_bad) == (0, (1, 2), 1)
    assert e.analytic == pytest.approx(2 * 6.0 + 0.5) and e.numeric == pytest.approx(12.0, rel=1e-8)
    assert "input 0" in str(e) and "(1, 2)" in str(e) and "12.5" in str(e)
    # a second input, a vector output (random projection) and a tiny error within tolerance
    y0 = np.array([0.5, -1.0, 2.0])
    uma.verify_grad(lambda a, b: _WrongSquareGrad((0,), 1e-9)(b) * sym.sum(a), [x0, y0], backend=backend)
    with pytest.raises(GradientError) as info:
        uma.verify_grad(lambda a, b: _WrongSquareGrad((2,), 1.0)(b) * sym.sum(a), [x0, y0],
                        backend=backend)
    assert (info.value.arg, info.value.index) == (1, (2,))


def test_verify_grad_names_a_non_finite_gradient():
    # a NaN in the symbolic gradient: the error says so rather than quoting a tolerance
    # comparison that NaN makes meaningless.
    with pytest.raises(GradientError, match="symbolic gradient is not finite") as info:
        uma.verify_grad(lambda x: sym.sum(_WrongSquareGrad((1,), np.nan)(x)), [np.array([2.0, 4.0, 3.0])])
    assert info.value.index == (1,) and np.isnan(info.value.analytic)
    assert info.value.numeric == pytest.approx(8.0)


# ---------------------------------------------------------------------------- cumprod at zeros

def _cumprod_grad_oracle(x, g, axis):
    """d sum(g * cumprod(x, axis)) / dx by its definition: entry i gets
    sum_{j >= i} g_j * prod_{k <= j, k != i} x_k along the axis (no division)."""
    xm, gm = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    out = np.zeros_like(xm)
    n = xm.shape[-1]
    for idx in np.ndindex(xm.shape[:-1]):
        for i in range(n):
            others = xm[idx].copy()
            others[i] = 1.0
            out[idx + (i,)] = sum(gm[idx + (j,)] * np.prod(others[:j + 1]) for j in range(i, n))
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cumprod_gradient_at_zeros_1d(backend):
    x = sym.vector("x")
    g = uma.grad(sym.sum(sym.cumprod(x)), x)
    f = uma.function([x], g, backend=backend)
    # cumprod([a, b, c]) = [a, ab, abc]: d/da = 1 + b + bc, d/db = a + ac, d/dc = ab
    np.testing.assert_array_equal(host_numpy(f(np.array([1.0, 0.0, 3.0]))), [1.0 + 0 + 0, 1.0 + 3.0, 0.0])
    for v in ([0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 0.0, 1.5], [1.5, -2.0, 0.5]):
        v = np.array(v)
        np.testing.assert_allclose(host_numpy(f(v)), _cumprod_grad_oracle(v, np.ones_like(v), 0), rtol=1e-14,
                                   err_msg=str(v))
        uma.verify_grad(lambda a: sym.cumprod(a), [v], backend=backend, abs_tol=1e-7, rel_tol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_cumprod_gradient_at_zeros_matrix(axis, backend, rng):
    x0 = rng.uniform(-2, 2, size=(4, 5))
    x0[0, 0] = x0[1, 4] = x0[2, 2] = x0[2, 3] = x0[3, 1] = x0[0, 3] = 0.0  # first, last, two in a row
    uma.verify_grad(lambda a: sym.cumprod(a, axis=axis), [x0], rng=rng, backend=backend, abs_tol=1e-7,
                    rel_tol=1e-6)
    x = sym.matrix("x")
    gv = rng.standard_normal(size=x0.size if axis is None else x0.shape)
    g = uma.grad(sym.sum(sym.cumprod(x, axis=axis) * gv), x)
    got = host_numpy(uma.function([x], g, backend=backend)(x0))
    if axis is None:
        exp = _cumprod_grad_oracle(x0.ravel(), gv, 0).reshape(x0.shape)
    else:
        exp = _cumprod_grad_oracle(x0, gv, axis)
    np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-15)


def test_verify_grad_tolerances_eps_and_dtypes():
    wrong = lambda x: sym.sum(_WrongSquareGrad((0,), 1e-2)(x))  # noqa: E731
    x0 = np.array([3.0, 4.0])
    with pytest.raises(GradientError):  # abs err 1e-2, rel err 1e-2 / 12: above float64's 1e-4
        uma.verify_grad(wrong, [x0])
    uma.verify_grad(wrong, [x0], rel_tol=1e-3)
    uma.verify_grad(wrong, [x0], abs_tol=2e-2)
    uma.verify_grad(wrong, [x0.astype(np.float32)])  # float32 tolerance is 1e-2
    uma.verify_grad(lambda x: sym.sum(sym.exp(x)), [x0.astype(np.float32)], backend="cpu")
    with pytest.raises(GradientError):  # a huge step ruins the finite differences of exp
        uma.verify_grad(lambda x: sym.sum(sym.exp(x)), [x0], eps=0.5)
    uma.verify_grad(lambda x, i: sym.sum(x * i), [x0, np.array([2, 3])])  # ints held fixed
    uma.verify_grad(lambda x: sym.sum(x), [2.0])  # a Python scalar point
    uma.verify_grad(lambda x, y: sym.sum(x * 2), [x0, x0])  # disconnected input: gradient 0
    for rng in (None, 3, np.random.default_rng(1), np.random.RandomState(2)):
        uma.verify_grad(lambda x: x * x, [x0], rng=rng)


def test_verify_grad_errors():
    with pytest.raises(TypeError, match="list"):
        uma.verify_grad(lambda x: sym.sum(x), np.ones(2))
    with pytest.raises(TypeError, match="no float or complex input"):
        uma.verify_grad(lambda i: sym.sum(i).astype("float64"), [np.array([1, 2])])
    with pytest.raises(TypeError, match="float"):
        uma.verify_grad(lambda x: sym.argmax(x), [np.ones(2)])
    with pytest.raises(ValueError, match="not finite"):
        uma.verify_grad(lambda x: sym.sum(sym.log(x)), [np.array([-1.0])])
    with pytest.raises(TypeError):
        uma.verify_grad(lambda x: sym.sum(x), [np.ones(2)], rng="seed")


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
    msg = ("no differentiable path from the cost to 'x' .*only through integer or boolean values.*"
           "disconnected_inputs='zero'")
    for cost in [sym.sum(sym.one_hot(sym.argmax(x, keepdims=True), 3)), sym.argmax(x).astype("float64")]:
        with pytest.raises(DisconnectedInputError, match=msg):
            uma.grad(cost, x)
        g = uma.grad(cost, x, disconnected_inputs="zero")
        np.testing.assert_array_equal(np.asarray(uma.function([x], g)([3.0, 1.0, 2.0])), [0.0, 0.0, 0.0])


class _NoGradForSecond(Op):
    """``x * y`` whose gradient with respect to ``y`` is :func:`grad_undefined`."""

    name = "test_no_grad_for_second"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0] * values[1]]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, y = node.inputs
        return [g * y, grad_undefined(self.name, 1, "test reason", input_name="y")]


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_grad_undefined_raises_only_when_that_gradient_is_needed(backend):
    op = _NoGradForSecond()
    x, y, w = sym.vector("x"), sym.vector("y"), sym.vector("w")
    msg = r"^grad: test_no_grad_for_second has no gradient with respect to its input 1 \(y\): test reason$"
    marker = grad_undefined("some_op", 2, "why")
    assert isinstance(marker, UndefinedGrad) and not isinstance(marker, uma.graph.Variable)
    assert marker.message == "grad: some_op has no gradient with respect to its input 2: why"
    for cost, wrt in [(sym.sum(op(x, y)), y), (sym.sum(op(x, sym.exp(w))) + sym.sum(w), [x, w]),
                      (sym.sum(op(x, x)), x)]:  # x: the marker would be accumulated with g * x
        for disconnected in ["raise", "zero"]:
            with pytest.raises(NotImplementedError, match=msg):
                uma.grad(cost, wrt, disconnected_inputs=disconnected)
    # not needed: y is no wrt, or reaches the marked input only through integer values, or is an integer
    x0, y0 = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    gx = uma.grad(sym.sum(op(x, y)), x)
    np.testing.assert_array_equal(np.asarray(uma.function([x, y], gx, backend=backend)(x0, y0)), y0)
    gy = uma.grad(sym.sum(op(x, (y > 0).astype("float64"))) + sym.sum(y * y), y)
    np.testing.assert_array_equal(np.asarray(uma.function([x, y], gy, backend=backend)(x0, y0)), 2 * y0)
    i = sym.vector("i", dtype="int64")
    gx = uma.grad(sym.sum(op(x, i)), x)
    np.testing.assert_array_equal(np.asarray(uma.function([x, i], gx, backend=backend)(x0, [1, 2, 3])),
                                  [1.0, 2.0, 3.0])


def test_grad_of_shared_variables_and_wrt_cost_itself():
    W = uma.shared(np.array([[1.0, 2.0], [3.0, 4.0]]), "W")
    cost = sym.sum(W * W)
    gW = uma.grad(cost, W)
    np.testing.assert_allclose(np.asarray(uma.function([], gW)()), 2 * W.get_value())
    assert uma.function([], uma.grad(cost, cost))().item() == 1.0


def _power_grads_oracle(x, y):
    """NumPy: d(x**y)/dx = y x**(y-1) except 0 where y == 0; d/dy = x**y log(x) except 0 where
    x == 0 and y >= 0 (PyTorch's and PyTensor's rules)."""
    with np.errstate(all="ignore"):
        dx = np.where(y == 0, 0.0, y * np.power(x, y - 1))
        dy = np.where((x == 0) & (y >= 0), 0.0, np.power(x, y) * np.log(x))
    return dx, dy


@pytest.mark.parametrize("backend", BACKENDS)
def test_power_gradient_at_zero_base_and_zero_exponent(backend):
    x0 = np.array([0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 3.0])
    y0 = np.array([2.0, 0.5, 0.0, 3.0, 0.0, 1.0, 1.5])
    x, y = sym.vector("x"), sym.vector("y")
    gx, gy = uma.grad(sym.sum(x ** y), [x, y])
    f = uma.function([x, y], [gx, gy], backend=backend)
    dx, dy = (host_numpy(v) for v in f(x0, y0))
    ex, ey = _power_grads_oracle(x0, y0)
    np.testing.assert_allclose(dx, ex, rtol=1e-12)
    np.testing.assert_allclose(dy, ey, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_power_gradient_of_a_constant_exponent_zero(backend):
    x = sym.vector("x")
    (gx,) = uma.grad(sym.sum(x ** 0.0), [x])
    got = host_numpy(uma.function([x], gx, backend=backend)(np.array([0.0, 1.0, -2.0])))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0])


def test_power_gradient_agrees_with_torch():
    torch = pytest.importorskip("torch")
    x0 = np.array([0.0, 0.0, 0.0, 2.0, 0.0, 0.5])
    y0 = np.array([2.0, 0.0, 3.0, 0.0, 1.0, -1.5])
    tx = torch.tensor(x0, requires_grad=True)
    ty = torch.tensor(y0, requires_grad=True)
    (tx ** ty).sum().backward()
    x, y = sym.vector("x"), sym.vector("y")
    gx, gy = uma.grad(sym.sum(x ** y), [x, y])
    dx, dy = (np.asarray(v) for v in uma.function([x, y], [gx, gy])(x0, y0))
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(dy, ty.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kw", [{"eps": 0}, {"eps": -1e-6}, {"eps": float("nan")}, {"eps": "1e-6"}, {"eps": True},
                                {"eps": 2**2000}, {"abs_tol": -1.0}, {"abs_tol": 2**2000},
                                {"rel_tol": float("inf")}])
def test_verify_grad_rejects_a_bad_step_or_tolerance(kw):
    name, val = next(iter(kw.items()))
    with pytest.raises(ValueError, match=f"verify_grad: {name} must be a .* finite number, got {val!r}"):
        uma.verify_grad(lambda x: (x * x).sum(), [np.ones(3)], **kw)


@pytest.mark.parametrize("eps, dtype", [(5e-324, "float64"), (1e-12, "float32")])
def test_verify_grad_names_a_step_too_small_for_the_dtype(eps, dtype):
    with pytest.raises(ValueError, match=rf"verify_grad: eps={eps!r} is too small for {dtype} at pt\[0\] entry \(0,\)"):
        uma.verify_grad(lambda x: (x * x).sum(), [np.ones(3, dtype)], eps=eps)


def test_grad_of_a_bfloat16_cost_in_a_fresh_process():
    """uma.grad seeds the gradient with a bfloat16 constant; that must not depend on
    ml_dtypes having been imported by something else first (a fresh interpreter)."""
    import subprocess
    import sys
    script = (
        "import sys, numpy as np, uma\n"
        "x = uma.sym.vector('x', dtype='bfloat16')\n"
        "(g,) = uma.grad(uma.sum(x * x), [x])\n"
        "f = uma.function([x], g, backend='cpu')\n"
        "v = uma.asarray(np.array([1.0, -2.5], np.float32)).astype('bfloat16')\n"
        "print(np.asarray(f(v).astype('float32')).tolist())\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[-2] == str([2.0, -5.0])


@pytest.mark.parametrize("backend", ["reference", "cpu", "numpy"])
def test_a_gradient_that_does_not_read_its_variable_has_the_variables_shape(backend):
    """A cost linear in y gives a gradient computed from the other operands alone; where y's
    run-time length 1 would have been broadcast by the forward graph (which the gradient does
    not run), the gradient is refused instead of coming back in the broadcast shape."""
    x, y = sym.vector("x"), sym.vector("y")
    w = np.array([1.0, 10.0, 100.0])
    for cost in (uma.sum((x + y) * w), uma.sum(uma.inc_subtensor(x[:2], y) * w)):
        f = uma.function([x, y], uma.grad(cost, y), backend=backend)
        with pytest.raises(ValueError, match=r"grad with respect to 'y'.*shape \(1,\)"):
            f(np.ones(3), np.ones(1))
    f = uma.function([x, y], uma.grad(uma.sum((x + y) * w), y), backend=backend)
    np.testing.assert_array_equal(host_numpy(f(np.ones(3), np.ones(3))), w)
    f = uma.function([x, y], uma.grad(uma.sum(uma.inc_subtensor(x[:2], y) * w), y), backend=backend)
    np.testing.assert_array_equal(host_numpy(f(np.ones(3), np.ones(2))), w[:2])
    y1 = sym.vector("y1", shape=(1,))  # a declared length 1 broadcasts: its gradient is summed
    f = uma.function([x, y1], uma.grad(uma.sum((x + y1) * w), y1), backend=backend)
    np.testing.assert_array_equal(host_numpy(f(np.ones(3), np.ones(1))), [w.sum()])
