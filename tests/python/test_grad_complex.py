"""uma.grad on complex variables: the convention ``dC/dx + i dC/dy`` for ``z = x + iy`` (PyTorch's
and PyTensor's), checked for every differentiable op against finite differences along the real
and the imaginary part of each entry (``uma.verify_grad``) on the `reference`, `cpu` and
`numpy` backends, against ``torch.autograd`` (an independent implementation of the same
convention), and the API contract (a complex cost is a TypeError; real-only ops still refuse
complex input)."""
import numpy as np
import pytest

import uma
from uma.graph.basic import ancestors
from conftest import BACKENDS, held_or_refused, host_numpy, random_data
from uma import sym
from uma.runtime.verify import GradientError



def _t(shape, domain="general", dtype="complex128", static=None):
    return dict(shape=tuple(shape), domain=domain, dtype=dtype, static=static)


CASES = {}


def case(name, specs, build):
    assert name not in CASES
    CASES[name] = (specs, build)


Z = _t((2, 3))
# holomorphic elementwise functions (domains keep clear of branch cuts and poles)
for _name, _dom in [("exp", "general"), ("log", "positive"), ("log1p", "positive"), ("expm1", "general"),
                    ("sqrt", "positive"), ("square", "general"), ("reciprocal", "nonzero"), ("sin", "general"),
                    ("cos", "general"), ("tan", "unit"), ("arcsin", "unit"), ("arccos", "unit"), ("arctan", "unit"),
                    ("sinh", "general"), ("cosh", "general"), ("tanh", "unit"), ("exp2", "general"),
                    ("log2", "positive"), ("log10", "positive"), ("negative", "general")]:
    case(_name, [_t((2, 3), _dom)], getattr(sym, _name))
# non-holomorphic: abs, sign, the parts of complex numbers
for _name in ["abs", "sign", "real", "imag", "conj", "angle"]:
    case(_name, [_t((2, 3), "nonzero")], getattr(sym, _name))
case("abs-squared", [Z], lambda z: sym.abs(z) ** 2)
case("methods", [Z], lambda z: z.real * z.imag + z.conj())
# binary arithmetic, broadcasting, Python complex scalars
case("add", [Z, _t((3,))], sym.add)
case("subtract", [Z, Z], sym.subtract)
case("multiply", [Z, _t((1, 3), static=(1, None))], sym.multiply)
case("divide", [Z, _t((2, 3), "nonzero")], sym.divide)
case("power", [_t((2, 3), "positive"), _t((2, 3), "exponent")], sym.power)
case("power-int", [Z], lambda z: z ** 3)
case("scalar-ops", [Z], lambda z: (1.5 - 2j) * z + z / (0.5 + 1j) - 2j)
case("where", [_t((2, 3), "coarse", dtype="bool"), Z, _t((3,))], sym.where)
case("maximum-minimum", [Z, _t((3,))], lambda a, b: sym.maximum(a, b) * 2 + sym.minimum(a, b))  # lexicographic
case("rint-round-zero", [Z], lambda z: sym.rint(z) + sym.round(z, 1) + z)
# mixed real and complex inputs: the real input gets the real part
case("mixed-multiply", [_t((2, 3), dtype="float64"), Z], sym.multiply)
case("mixed-divide", [Z, _t((3,), "nonzero", dtype="float64")], sym.divide)
case("mixed-astype", [_t((2, 3), dtype="float64")], lambda x: sym.exp(x.astype("complex128") * (1 + 2j)))
case("cast-to-real", [Z], lambda z: sym.astype(z * z, "float64"))
case("mixed-matmul", [_t((2, 3), dtype="float64"), _t((3, 4))], sym.matmul)
case("mixed-concatenate", [_t((2, 3), dtype="float64"), Z], lambda a, b: sym.concatenate([a, b]) * (1 - 1j))
case("mixed-stack", [_t((2, 3), dtype="float64"), Z], lambda a, b: sym.stack([a, b], axis=2) * 1j)
case("mixed-outer", [_t((3,), dtype="float64"), _t((2,))], sym.outer)
# reductions
for _name in ["sum", "mean", "prod"]:
    for _axis, _kd in [(None, False), (0, False), (1, True)]:
        case(f"{_name}-{_axis}-{_kd}", [_t((2, 3, 2), "nonzero")],
             lambda z, n=_name, ax=_axis, kd=_kd: getattr(sym, n)(z, axis=ax, keepdims=kd))
case("prod-zeros", [_t((3, 4), "coarse")], lambda z: sym.prod(z, axis=1))
for _name in ["var", "std"]:
    case(_name, [_t((3, 4))], lambda z, n=_name: getattr(sym, n)(z, axis=1))
case("var-ddof", [_t((3, 4))], lambda z: sym.var(z, ddof=1))
case("max-min", [_t((3, 4))], lambda z: sym.max(z, axis=0) + sym.min(z, axis=1, keepdims=True))
case("cumsum", [_t((3, 4))], lambda z: sym.cumsum(z, axis=1))
case("cumprod", [_t((3, 4), "nonzero")], lambda z: sym.cumprod(z, axis=0))
case("cumprod-zeros", [_t((3, 4), "coarse")], lambda z: sym.cumprod(z, axis=1))
case("cumprod-flat", [_t((2, 3), "nonzero")], sym.cumprod)
# linear algebra
for _a, _b in [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((2, 2, 3), (3, 4))]:
    case(f"matmul-{_a}-{_b}", [_t(_a), _t(_b)], sym.matmul)
case("dot", [_t((2, 3)), _t((3, 2))], sym.dot)
case("outer", [_t((3,)), _t((2, 2))], sym.outer)
case("diag-diagonal-trace", [_t((3,)), _t((3, 3))],
     lambda v, m: sym.diag(v, 1)[:3, :3] * m + sym.diagonal(m, -1).sum() + sym.trace(m))
# shape and indexing
case("reshape", [_t((2, 3), static=(2, 3))], lambda z: sym.reshape(z, (3, 2)))
case("transpose", [_t((2, 3, 2))], lambda z: sym.transpose(z, (2, 0, 1)) * (1 + 1j))
case("T", [Z], lambda z: z.T)
case("broadcast_to", [_t((1, 3), static=(1, None))], lambda z: sym.broadcast_to(z, (4, 3)))
case("concatenate", [_t((2, 3)), _t((1, 3))], lambda a, b: sym.concatenate([a, b]))
case("stack", [Z, Z], lambda a, b: sym.stack([a, b], axis=1))
case("expand-squeeze", [_t((2, 1, 3), static=(None, 1, None))], lambda z: sym.expand_dims(sym.squeeze(z), 0))
case("getitem", [_t((3, 4))], lambda z: z[1:, ::-2])
case("split", [_t((4, 3), static=(4, 3))], lambda z: sym.split(z, [1, 3])[1] * sym.split(z, 2)[0])
case("take", [_t((3, 4))], lambda z: sym.take(z, np.array([2, 0, 2]), axis=1))
case("mask", [_t((3, 4))], lambda z: z[np.array([True, False, True])])
case("set_subtensor", [_t((3, 4)), _t((4,))], lambda z, y: sym.set_subtensor(z[1], y))
case("inc_subtensor", [_t((3, 4)), _t((2,))], lambda z, y: sym.inc_subtensor(z, (slice(None), np.array([1, 1])), y))
case("clip-lexicographic", [_t((3, 4))], lambda z: sym.clip(z, -1 - 1j, 1.5 + 0.5j))
case("chain", [_t((3, 4)), _t((4, 2))],
     lambda x, w: sym.sum(sym.abs(sym.tanh(x @ w) * sym.exp(1j * sym.angle(x @ w))) ** 2, axis=0))


def _data(name, rng):
    specs, build = CASES[name]
    shapes = [s["static"] if s["static"] is not None else (None,) * len(s["shape"]) for s in specs]
    data = [random_data(s["dtype"], s["shape"], rng, s["domain"]) for s in specs]
    return build, shapes, data


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_complex_grad_matches_finite_differences(name, backend):
    build, shapes, data = _data(name, np.random.default_rng(11))
    xs = [sym.tensor(f"x{k}", d.dtype.name, shape=s) for k, (d, s) in enumerate(zip(data, shapes))]
    with held_or_refused(backend, *[v.type.dtype for v in ancestors([build(*xs)])]):
        uma.verify_grad(build, data, rng=np.random.default_rng(12), backend=backend, input_shapes=shapes,
                        abs_tol=1e-7, rel_tol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_prod_and_cumprod_with_zeros(backend):
    z = random_data("complex128", (3, 4), np.random.default_rng(4), "nonzero")
    z[0, 0] = z[1, 2] = z[1, 3] = z[2, 3] = 0  # first, two in a row, last
    for build in (lambda a: sym.prod(a, axis=1), lambda a: sym.prod(a, axis=0), lambda a: sym.cumprod(a, axis=1),
                  lambda a: sym.cumprod(a, axis=0), sym.cumprod):
        with held_or_refused(backend, "complex128"):
            uma.verify_grad(build, [z], rng=np.random.default_rng(5), backend=backend, abs_tol=1e-7, rel_tol=1e-5)


@pytest.mark.parametrize("name", ["exp", "abs", "multiply", "matmul-(2, 3)-(3, 4)", "sum-None-False", "angle",
                                  "cumprod", "mixed-matmul"])
def test_complex64_gradients(name):
    """complex64 (float32 precision): the default tolerances of verify_grad (1e-2)."""
    build, shapes, data = _data(name, np.random.default_rng(5))
    data = [d.astype(np.complex64) if d.dtype == np.complex128 else
            d.astype(np.float32) if d.dtype == np.float64 else d for d in data]
    for backend in BACKENDS:
        uma.verify_grad(build, data, rng=np.random.default_rng(6), backend=backend, input_shapes=shapes)


def test_gradient_dtypes_follow_the_variables():
    z = sym.vector("z", dtype="complex64")
    x = sym.vector("x", dtype="float32")
    cost = sym.sum(sym.abs(z * x) ** 2)
    gz, gx = uma.grad(cost, [z, x])
    assert (gz.dtype, gx.dtype) == ("complex64", "float32")
    zv = np.array([1 + 2j, -0.5 + 1j], np.complex64)
    xv = np.array([2.0, -3.0], np.float32)
    for backend in BACKENDS:
        a, b = uma.function([z, x], [gz, gx], backend=backend)(zv, xv)
        assert np.asarray(a).dtype == np.complex64 and np.asarray(b).dtype == np.float32
        # C = sum(|z|^2 x^2): dC/dx + i dC/dy of z is 2 z x^2; dC/dx of x is 2 x |z|^2
        np.testing.assert_allclose(np.asarray(a), 2 * zv * xv ** 2, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(b), 2 * xv * np.abs(zv) ** 2, rtol=1e-6)


def test_gradient_step_descends():
    """The convention's purpose: ``z - lr * grad`` lowers a real cost."""
    target = np.array([1 - 1j, 2 + 0.5j, -1j])
    z = uma.shared(np.zeros(3, np.complex128), "z")
    cost = sym.sum(sym.abs(z - target) ** 2) + sym.sum(sym.real(z))
    step = uma.function([], cost, updates={z: z - 0.1 * uma.grad(cost, z)})
    costs = [float(np.asarray(step())) for _ in range(30)]
    assert all(b < a for a, b in zip(costs, costs[1:]))
    np.testing.assert_allclose(z.get_value(), target - 0.5, atol=1e-2)  # the minimum: z = target - 1/2


# ---------------------------------------------------------------------------- torch.autograd

TORCH_COSTS = {  # name -> (uma cost, torch cost), both of z (2, 3) and w (3, 4)
    "abs-exp": (lambda z, w: sym.sum(sym.abs(sym.exp(z) @ w)),
                lambda torch, z, w: (torch.exp(z) @ w).abs().sum()),
    "real-matmul": (lambda z, w: sym.sum(sym.real(z @ w) * sym.imag(sym.sin(z) @ w)),
                    lambda torch, z, w: ((z @ w).real * (torch.sin(z) @ w).imag).sum()),
    "angle-log": (lambda z, w: sym.sum(sym.angle(sym.log(z) * w[:2, :3])),
                  lambda torch, z, w: torch.angle(torch.log(z) * w[:2, :3]).sum()),
    "conj-div-sqrt": (lambda z, w: sym.sum(sym.abs(sym.conj(z) / sym.sqrt(w[:2, :3] + 3)) ** 2),
                      lambda torch, z, w: ((z.conj() / torch.sqrt(w[:2, :3] + 3)).abs() ** 2).sum()),
    "prod-cumprod": (lambda z, w: sym.real(sym.prod(z, axis=1).sum() * sym.cumprod(w, axis=0).sum()),
                     lambda torch, z, w: (torch.prod(z, dim=1).sum() * torch.cumprod(w, dim=0).sum()).real),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(TORCH_COSTS))
def test_complex_gradients_match_torch_autograd(name, backend):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    zv = random_data("complex128", (2, 3), rng, "positive")
    wv = random_data("complex128", (3, 4), rng, "nonzero")
    ucost, tcost = TORCH_COSTS[name]
    z, w = sym.matrix("z", dtype="complex128"), sym.matrix("w", dtype="complex128")
    got = None
    with held_or_refused(backend, "complex128"):
        got = uma.function([z, w], uma.grad(ucost(z, w), [z, w]), backend=backend)(zv, wv)
    if got is None:  # the backend refused complex128 (asserted above)
        return
    tz = torch.tensor(zv, requires_grad=True)
    tw = torch.tensor(wv, requires_grad=True)
    tcost(torch, tz, tw).backward()
    np.testing.assert_allclose(host_numpy(got[0]), tz.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(host_numpy(got[1]), tw.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------- contract

def test_complex_cost_is_a_type_error_naming_the_dtype():
    z = sym.vector("z", dtype="complex64")
    with pytest.raises(TypeError, match="complex64"):
        uma.grad(sym.sum(z * z), z)
    with pytest.raises(TypeError, match="real"):
        uma.grad(sym.sum(z), z)
    assert uma.grad(sym.sum(z * z).real, z).dtype == "complex64"


def test_integer_wrt_still_refused():
    i = sym.vector("i", dtype="int64")
    with pytest.raises(TypeError, match="float and complex"):
        uma.grad(sym.sum(i * 1.5), i)


@pytest.mark.parametrize("op", ["floor", "ceil", "erf", "gammaln", "digamma", "trigamma", "sigmoid", "softplus"])
def test_real_only_ops_still_refuse_complex(op):
    z = sym.vector("z", dtype="complex128")
    with pytest.raises(TypeError, match=f"{op}.*complex128"):
        getattr(sym, op)(z)


def test_complex_logsumexp_and_arctan2_still_refused():
    z = sym.vector("z", dtype="complex128")
    with pytest.raises(TypeError, match="complex"):
        sym.logsumexp(z)
    with pytest.raises(TypeError, match="arctan2.*complex128"):
        sym.arctan2(z, z)


def test_verify_grad_names_the_part_of_a_complex_entry():
    """A gradient wrong only in its imaginary part is reported as such."""
    class WrongConj(uma.graph.Op):
        name = "test_wrong_conj"

        def output_types(self, inputs):
            return [inputs[0].type]

        def perform(self, node, values):
            return [values[0] * values[0]]

        def grad(self, node, output_grads):
            (g,) = output_grads
            return [g * 2 * node.inputs[0]]  # should be g * 2 * conj(z): the imaginary part is wrong

    z0 = np.array([1 + 1j, 2 - 0.5j])
    with pytest.raises(GradientError, match=r"imag part") as info:
        uma.verify_grad(lambda z: sym.real(WrongConj()(z)), [z0])
    assert info.value.part == "imag" and info.value.arg == 0
    uma.verify_grad(lambda z: sym.real(z * z), [z0])
