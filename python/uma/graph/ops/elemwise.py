"""The elementwise ops, from the op table (``include/uma/ops/table.h``, read through
``uma._core._op_table()``): the :class:`Elemwise` op (one per row), its result dtypes and
static shapes (the table's dtype rule and broadcasting, in the C++ core), its gradient rules,
and the public symbolic function of every row (:data:`FUNCTIONS`; :mod:`.unary` refines
``real imag conj angle`` and adds ``round``).
"""
from __future__ import annotations

import functools
import math

from ... import _core
from ..basic import Op, Variable, as_variable, is_python_scalar
from ..type import TensorType, kind_of
from ._common import OP_TABLE, _as_inputs, _bcast_runtime, _diff


@functools.lru_cache(maxsize=None)
def _elemwise_dtype(name, dtypes):
    """The result dtype of elementwise ``name`` on ``dtypes`` (names), by the op table's dtype
    rule in the C++ core (``uma._core._result_dtype``: NumPy 2's loops, bfloat16 as ml_dtypes
    computes it); ``TypeError`` naming the op and the dtype where the op is not defined."""
    return _core._result_dtype(name, *dtypes)


class Elemwise(Op):
    """An elementwise op (unary or binary) of the op table (``include/uma/ops/table.h``), named
    after its eager function. ``numpy`` is the NumPy function's name (empty where NumPy has
    none); ``gradient`` is the table's gradient kind: ``"smooth"`` (a rule in ``_GRADS``),
    ``"zero"`` (piecewise constant) or ``"none"`` (not differentiable)."""

    props = ("name",)
    names = tuple(OP_TABLE)

    def __init__(self, name):
        row = OP_TABLE[name]
        self.name = name
        self.nin = row["arity"]
        self.numpy = row["numpy"]
        self.gradient = row["grad"]

    def output_types(self, inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self.name}: expected {self.nin} inputs, got {len(inputs)}")
        dt = _elemwise_dtype(self.name, tuple(i.dtype for i in inputs))
        # the core's broadcast of static shapes (PyTensor: only static length-1 axes broadcast)
        return [TensorType(dt, _core._result_shape(self.name, *(i.shape for i in inputs)))]

    def perform(self, node, values):
        return [getattr(_core, self.name)(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime(self.name, [i.shape for i in node.inputs], shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        out = node.outputs[0]
        if g is None or not _diff(out.dtype):
            return [None] * self.nin
        if self.gradient == "none":
            return [None] * self.nin
        rule = _GRADS[self.name] if self.gradient == "smooth" else _zeros_grad
        grads = rule(g, out, *node.inputs)
        return [None if gi is None or not _diff(x.dtype) else _unbroadcast(gi, x)
                for gi, x in zip(grads, node.inputs)]


@functools.lru_cache(maxsize=None)
def _elemwise(name):
    return Elemwise(name)


def _binary(name, a, b):
    a, b = _as_inputs(name, (a, b))
    return _elemwise(name)(a, b)


def _unary(name, a):
    return _elemwise(name)(as_variable(a))


def _function(row):
    """The public symbolic function of the table row ``row``: ``name(x)`` or ``name(x1, x2)``,
    documented by the eager function's docstring (generated from the same row) and the
    gradient rule."""
    name = row["name"]
    if row["arity"] == 2:
        def fn(x1, x2):
            return _binary(name, x1, x2)
    else:
        def fn(x):
            return _unary(name, x)
    eager = getattr(_core, name).__doc__ or ""
    body = eager.partition("\n\n")[2] or eager  # without nanobind's signature line
    if row["grad"] == "smooth":
        rule = _GRADS[name]
        grad = f"Gradient: {' '.join(rule.__doc__.split())}" if rule.__doc__ else "Differentiable (uma.grad)."
    else:
        grad = {"zero": "Gradient: zero (piecewise constant).",
                "none": "Not differentiable: no gradient flows through it."}[row["grad"]]
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = f"{body.rstrip()}\nSymbolic arguments build an Elemwise node. {grad}"
    return fn


def _bitwise_operator(kind, *args):
    """The operators ``& | ^ ~`` of :class:`~uma.graph.Variable` (``kind``: and, or, xor,
    invert): NumPy's bitwise op, or the logical op where every operand is bool (the same
    values: a bool graph stays a graph of logical ops)."""
    vs = [a if is_python_scalar(a) else as_variable(a) for a in args]
    if all(v.dtype == "bool" if isinstance(v, Variable) else isinstance(v, bool) for v in vs):
        return _unary("logical_not", vs[0]) if kind == "invert" else _binary(f"logical_{kind}", *vs)
    return _unary("bitwise_invert", vs[0]) if kind == "invert" else _binary(f"bitwise_{kind}", *vs)


def _zeros_grad(g, out, *xs):
    return [zeros_like(x, dtype=g.dtype) if _diff(x.dtype) else None for x in xs]


def _sign_grad(g, o, x):
    """sign is piecewise constant on real numbers; on complex numbers ``w = z / |z|`` depends on
    the argument t of z only: ``dw = i w dt`` and ``dt = Im(dz / z)``, so the gradient is
    ``-i Im(conj(g) w) w / |z|`` (0 at z = 0, as abs's)."""
    if kind_of(x.dtype) != "c":
        return _zeros_grad(g, o, x)
    r = abs(x)
    return [where(equal(r, 0), 0, negative(imag(conj(g) * o)) * 1j * o / where(equal(r, 0), 1, r))]


def _power_grad(g, o, x, y):
    """d(x**y)/dx = y x**(y-1), but 0 where y == 0 (x**0 is constant 1, also at x = 0, where
    the formula gives 0 * inf); d(x**y)/dy = x**y log(x), but 0 where x == 0 and Re(y) >= 0
    (0**y is constant 0 or 1 there, where the formula gives 0 * -inf). PyTorch's and PyTensor's
    rules."""
    dx = where(equal(y, 0), 0, g * _cj(y * power(x, y - 1)))
    re_y = real(y) if kind_of(y.dtype) == "c" else y
    dy = where(logical_and(equal(x, 0), re_y >= 0), 0, g * _cj(o * log(x)))
    return [dx, dy]


def _angle_grad(g, o, x):
    """angle(z) = atan2(y, x): gradient ``g * i / conj(z)`` (0 at z = 0); piecewise constant on
    real numbers."""
    if kind_of(x.dtype) != "c":
        return _zeros_grad(g, o, x)
    zero = equal(x, 0)
    return [where(zero, 0, g * 1j / conj(where(zero, 1, x)))]


def _trigamma_grad(g, o, x):
    """not available: ``uma.grad`` raises ``NotImplementedError`` (the derivative, polygamma(2,
    x), is not implemented)."""
    raise NotImplementedError("trigamma: gradient not available (polygamma(2, x) is not implemented)")


def _copysign_grad(g, o, x, y):
    """``g * copysign(x, y) / x`` (+-g) for x1, 0 where x1 == 0 and for x2 (PyTorch's rule)."""
    zero = equal(x, 0)
    return [where(zero, 0, g * o / where(zero, 1, x)), zeros_like(y, dtype=g.dtype)]


def _hypot_grad(g, o, x, y):
    """``g * x1 / hypot`` and ``g * x2 / hypot``, 0 at the origin (where hypot(x, 0) = |x| has
    abs's gradient 0)."""
    zero = equal(o, 0)
    r = where(zero, 1, o)
    return [where(zero, 0, g * x / r), where(zero, 0, g * y / r)]


# Gradient rules of the ops whose table gradient kind is "smooth": (g, out, *inputs) -> one
# gradient per input (ops of kind "zero" get zeros, of kind "none" no gradient). For complex values (PyTorch's and
# PyTensor's convention, see uma.grad) the gradient of a holomorphic f multiplies g by the
# conjugate of f'(z): ``_cj(...)`` below, a no-op on real dtypes.
_GRADS = {
    "add": lambda g, o, x, y: [g, g],
    "subtract": lambda g, o, x, y: [g, negative(g)],
    "multiply": lambda g, o, x, y: [g * _cj(y), g * _cj(x)],
    "divide": lambda g, o, x, y: [g / _cj(y), negative(g) * _cj(o / y)],
    "power": lambda g, o, x, y: _power_grad(g, o, x, y),
    "maximum": lambda g, o, x, y: [where(x >= y, g, 0), where(x >= y, 0, g)],
    "minimum": lambda g, o, x, y: [where(x <= y, g, 0), where(x <= y, 0, g)],
    "remainder": lambda g, o, x, y: [g, negative(g) * floor_divide(x, y)],
    "negative": lambda g, o, x: [negative(g)],
    "abs": lambda g, o, x: [g * sign(x)],  # complex: g * z / |z| (sign(0) = 0)
    "exp": lambda g, o, x: [g * _cj(o)],
    "log": lambda g, o, x: [g / _cj(x)],
    "log1p": lambda g, o, x: [g / _cj(x + 1)],
    "expm1": lambda g, o, x: [g * _cj(o + 1)],
    "sqrt": lambda g, o, x: [g * 0.5 / _cj(o)],
    "tanh": lambda g, o, x: [g * _cj(1 - o * o)],
    "sigmoid": lambda g, o, x: [g * o * (1 - o)],
    "square": lambda g, o, x: [g * 2 * _cj(x)],
    "sin": lambda g, o, x: [g * _cj(cos(x))],
    "cos": lambda g, o, x: [negative(g) * _cj(sin(x))],
    "sign": _sign_grad,
    "arctan2": lambda g, o, y, x: [g * x / (x * x + y * y), negative(g) * y / (x * x + y * y)],
    "exp2": lambda g, o, x: [g * _cj(o) * math.log(2.0)],
    "log2": lambda g, o, x: [g / (_cj(x) * math.log(2.0))],
    "log10": lambda g, o, x: [g / (_cj(x) * math.log(10.0))],
    "reciprocal": lambda g, o, x: [negative(g) * _cj(o * o)],
    "tan": lambda g, o, x: [g * _cj(1 + o * o)],
    "arcsin": lambda g, o, x: [g / _cj(sqrt(1 - x * x))],
    "arccos": lambda g, o, x: [negative(g) / _cj(sqrt(1 - x * x))],
    "arctan": lambda g, o, x: [g / _cj(1 + x * x)],
    "sinh": lambda g, o, x: [g * _cj(cosh(x))],
    "cosh": lambda g, o, x: [g * _cj(sinh(x))],
    "softplus": lambda g, o, x: [g * sigmoid(x)],
    "erf": lambda g, o, x: [g * (2.0 / math.sqrt(math.pi)) * exp(negative(x * x))],
    "erfc": lambda g, o, x: [g * (-2.0 / math.sqrt(math.pi)) * exp(negative(x * x))],
    "gammaln": lambda g, o, x: [g * digamma(x)],
    "digamma": lambda g, o, x: [g * trigamma(x)],
    "trigamma": _trigamma_grad,
    "copysign": _copysign_grad,
    "hypot": _hypot_grad,
    "logaddexp": lambda g, o, x, y: [g * exp(x - o), g * exp(y - o)],
    "nextafter": lambda g, o, x, y: [g, zeros_like(y, dtype=g.dtype)],
    "positive": lambda g, o, x: [g],
    "acosh": lambda g, o, x: [g / _cj(sqrt(x - 1) * sqrt(x + 1))],
    "asinh": lambda g, o, x: [g / _cj(sqrt(x * x + 1))],
    "atanh": lambda g, o, x: [g / _cj(1 - x * x)],
    # parts of complex numbers: real carries g into the real component, imag into the imaginary
    # one (z = x + iy: d imag / dy = 1), conj conjugates it
    "real": lambda g, o, x: [g],
    "imag": lambda g, o, x: [g * 1j if kind_of(x.dtype) == "c" else zeros_like(x, dtype=g.dtype)],
    "conj": lambda g, o, x: [_cj(g)],
    "angle": _angle_grad,
}




#: The public symbolic function of every op of the table, by name (:mod:`.unary` refines a few:
#: ``real imag conj angle``).
FUNCTIONS = {name: _function(row) for name, row in OP_TABLE.items()}
globals().update(FUNCTIONS)
eq, neq = equal, not_equal  # noqa: F821  (defined by FUNCTIONS)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .creation import zeros_like  # noqa: E402
from .select import where  # noqa: E402
from .shape import _unbroadcast  # noqa: E402
from .unary import _cj, conj, imag, real  # noqa: E402
