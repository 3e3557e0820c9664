"""The elementwise op: :class:`Elemwise` (one op per eager function name, unary or binary), NumPy
2's result dtype of each function, and the gradient rule of each function. The public functions
that build it are in :mod:`.binary` and :mod:`.unary`.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..basic import Op, as_variable
from ..type import TensorType, kind_of, np_dtype
from ._common import _as_inputs, _bcast_runtime, _bcast_static, _diff, _uma


_UNARY_NP = {
    "negative": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "sqrt": np.sqrt, "tanh": np.tanh, "sigmoid": np.exp, "sign": np.sign,
    "square": np.square, "logical_not": np.logical_not, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil,
    "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "reciprocal": np.reciprocal, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "rint": np.rint,
    # functions NumPy lacks: exp's dtype rule on real dtypes (complex: TypeError, _REAL_ONLY)
    "softplus": np.exp, "erf": np.exp, "erfc": np.exp, "gammaln": np.exp, "digamma": np.exp,
    "trigamma": np.exp,
    # parts of complex numbers (NumPy's functions; dtypes as NumPy gives them)
    "real": np.real, "imag": np.imag, "conj": np.conj, "angle": np.angle,
}


#: float functions NumPy lacks (scipy.special names, PyTensor/JAX's softplus): real dtypes only.
_REAL_ONLY = frozenset({"sigmoid", "softplus", "erf", "erfc", "gammaln", "digamma", "trigamma"})


_BINARY_NP = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "arctan2": np.arctan2, "logical_xor": np.logical_xor,
}


_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


@functools.lru_cache(maxsize=None)
def _elemwise_dtype(name, dtypes):
    """NumPy 2's result dtype of elementwise ``name`` on ``dtypes`` (TypeError where NumPy has no
    loop), found by calling NumPy's function on one-element arrays. bfloat16 (which NumPy
    lacks) follows float16's rule when both operands promote to bfloat16 (ml_dtypes computes
    it in float32 like NumPy's float16 loops), float32's otherwise."""
    fn = _UNARY_NP.get(name) or _BINARY_NP[name]
    ct = dtypes[0] if len(dtypes) == 1 else _uma().promote_types(*dtypes).name
    if name in _REAL_ONLY and kind_of(ct) == "c":
        raise TypeError(f"{name}: not supported for dtype {ct} (defined for real dtypes only)")
    if "bfloat16" in dtypes:
        args = [np.ones(1, dtype=np.float16) for _ in dtypes] if ct == "bfloat16" else \
            [np.ones(1, dtype=np_dtype("float32" if d == "bfloat16" else d)) for d in dtypes]
    else:  # NumPy's own loop selection (arctan2(int8, uint8) is float16, not float32)
        args = [np.ones(1, dtype=np_dtype(d)) for d in dtypes]
    try:
        with np.errstate(all="ignore"):
            res = fn(*args).dtype.name
    except TypeError:
        raise TypeError(f"{name}: not supported for dtype {ct} (NumPy has no loop for it)") from None
    if name == "subtract" and ct == "bool":
        raise TypeError("subtract: boolean subtract is not supported, use logical_xor instead")
    return "bfloat16" if ct == "bfloat16" and res == "float16" else res


class Elemwise(Op):
    """An elementwise op (unary or binary) named after its eager function."""

    props = ("name",)
    names = tuple(_UNARY_NP) + tuple(_BINARY_NP)

    def __init__(self, name):
        self.name = name
        self.nin = 1 if name in _UNARY_NP else 2

    def output_types(self, inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self.name}: expected {self.nin} inputs, got {len(inputs)}")
        dt = _elemwise_dtype(self.name, tuple(i.dtype for i in inputs))
        return [TensorType(dt, _bcast_static(self.name, [i.shape for i in inputs]))]

    def perform(self, node, values):
        return [getattr(_uma(), self.name)(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime(self.name, [i.shape for i in node.inputs], shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        out = node.outputs[0]
        if g is None or not _diff(out.dtype):
            return [None] * self.nin
        rule = _GRADS.get(self.name)
        if rule is None:
            return [None] * self.nin
        grads = rule(g, out, *node.inputs)
        return [None if gi is None or not _diff(x.dtype) else _unbroadcast(gi, x)
                for gi, x in zip(grads, node.inputs)]


@functools.lru_cache(maxsize=None)
def _elemwise(name):
    return Elemwise(name)


def _binary(name, a, b):
    a, b = _as_inputs(name, (a, b), comparison=name in _COMPARISONS)
    return _elemwise(name)(a, b)


def _unary(name, a):
    return _elemwise(name)(as_variable(a))


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


# Gradient rules: (g, out, *inputs) -> one gradient per input. For complex values (PyTorch's and
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
    "floor_divide": _zeros_grad,
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
    "floor": _zeros_grad,
    "ceil": _zeros_grad,
    "arctan2": lambda g, o, y, x: [g * x / (x * x + y * y), negative(g) * y / (x * x + y * y)],
    "logical_xor": lambda g, o, x, y: [None, None],
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
    "trigamma": lambda g, o, x: _no_grad("trigamma", "polygamma(2, x) is not implemented"),
    "rint": _zeros_grad,
    # parts of complex numbers: real carries g into the real component, imag into the imaginary
    # one (z = x + iy: d imag / dy = 1), conj conjugates it
    "real": lambda g, o, x: [g],
    "imag": lambda g, o, x: [g * 1j if kind_of(x.dtype) == "c" else zeros_like(x, dtype=g.dtype)],
    "conj": lambda g, o, x: [_cj(g)],
    "angle": _angle_grad,
}


def _no_grad(name, why):
    raise NotImplementedError(f"{name}: gradient not available ({why})")


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .binary import equal, floor_divide, logical_and, power  # noqa: E402
from .creation import zeros_like  # noqa: E402
from .select import where  # noqa: E402
from .shape import _unbroadcast  # noqa: E402
from .unary import (  # noqa: E402
    _cj, abs, conj, cos, cosh, digamma, exp, imag, log, negative, real, sigmoid, sign, sin, sinh,
    sqrt, trigamma)
