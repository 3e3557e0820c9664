"""Unary elementwise functions: arithmetic, exponentials and logarithms, trigonometric and
hyperbolic functions, special functions, rounding (:class:`Round`) and the parts of complex numbers.

Each takes the dtypes NumPy's function of that name takes, with its result dtype (the float
functions give bool and integers the float dtype ``numpy.exp`` gives them; float16/bfloat16 are
computed in float32); the special functions NumPy lacks (softplus, erf, erfc, gammaln, digamma,
trigamma) take real dtypes only, with exp's dtype rule.
"""
from __future__ import annotations

import numpy as np

from ..basic import Op, as_variable
from ..type import TensorType, kind_of
from ._common import _diff, _k


def negative(x):
    """Elementwise ``-a``."""
    return _unary("negative", x)


def abs(x):  # noqa: A001 - same name as the eager function
    """Elementwise absolute value."""
    return _unary("abs", x)


def sign(x):
    """Elementwise sign (gradient zero)."""
    return _unary("sign", x)


def square(x):
    """Elementwise ``a * a``."""
    return _unary("square", x)


def reciprocal(x):
    """Elementwise ``1 / a`` (integers stay integers, as ``numpy.reciprocal``)."""
    return _unary("reciprocal", x)


def sqrt(x):
    """Elementwise square root."""
    return _unary("sqrt", x)


def exp(x):
    """Elementwise ``e**a``."""
    return _unary("exp", x)


def exp2(x):
    """Elementwise ``2**a``."""
    return _unary("exp2", x)


def expm1(x):
    """Elementwise ``exp(a) - 1``."""
    return _unary("expm1", x)


def log(x):
    """Elementwise natural logarithm."""
    return _unary("log", x)


def log2(x):
    """Elementwise base-2 logarithm."""
    return _unary("log2", x)


def log10(x):
    """Elementwise base-10 logarithm."""
    return _unary("log10", x)


def log1p(x):
    """Elementwise ``log(1 + a)``."""
    return _unary("log1p", x)


def sin(x):
    """Elementwise sine."""
    return _unary("sin", x)


def cos(x):
    """Elementwise cosine."""
    return _unary("cos", x)


def tan(x):
    """Elementwise tangent."""
    return _unary("tan", x)


def arcsin(x):
    """Elementwise inverse sine (NaN outside [-1, 1] for real input)."""
    return _unary("arcsin", x)


def arccos(x):
    """Elementwise inverse cosine (NaN outside [-1, 1] for real input)."""
    return _unary("arccos", x)


def arctan(x):
    """Elementwise inverse tangent."""
    return _unary("arctan", x)


def sinh(x):
    """Elementwise hyperbolic sine."""
    return _unary("sinh", x)


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return _unary("cosh", x)


def tanh(x):
    """Elementwise hyperbolic tangent."""
    return _unary("tanh", x)


def sigmoid(x):
    """Elementwise logistic function ``1 / (1 + exp(-a))`` (dtype as ``exp``)."""
    return _unary("sigmoid", x)


def softplus(x):
    """Elementwise ``log(1 + exp(a))`` without overflow; real dtypes only (``TypeError`` for
    complex); the float dtype of ``numpy.exp``."""
    return _unary("softplus", x)


def erf(x):
    """Elementwise error function (``scipy.special.erf``); real dtypes only; the float dtype of
    ``numpy.exp`` (int8 -> float16, unlike scipy's float32)."""
    return _unary("erf", x)


def erfc(x):
    """Elementwise ``1 - erf(a)`` computed directly; real dtypes only."""
    return _unary("erfc", x)


def gammaln(x):
    """Elementwise ``log|Gamma(a)|`` (``scipy.special.gammaln``; +inf at the poles); real dtypes
    only. Gradient: ``digamma``."""
    return _unary("gammaln", x)


def digamma(x):
    """Elementwise digamma ``psi(a)`` (``scipy.special.digamma``; NaN at the poles); real dtypes
    only. Gradient: :func:`trigamma`."""
    return _unary("digamma", x)


def trigamma(x):
    """Elementwise trigamma ``psi'(a)``, the derivative of digamma (``scipy.special.polygamma(1,
    a)``): +inf at the poles 0, -1, -2, ..., 0 at +inf, NaN at -inf (scipy gives inf there, but
    the function has no limit). Real dtypes only (``TypeError`` for complex); the float dtype of
    ``numpy.exp``. No gradient (``NotImplementedError``: polygamma(2, x) is not implemented)."""
    return _unary("trigamma", x)


def logical_not(x):
    """Elementwise logical not -> bool."""
    return _unary("logical_not", x)


def floor(x):
    """Elementwise floor (gradient zero)."""
    return _unary("floor", x)


def ceil(x):
    """Elementwise ceiling (gradient zero)."""
    return _unary("ceil", x)


def rint(x):
    """Elementwise round half to even to an integral value (``numpy.rint``; gradient zero)."""
    return _unary("rint", x)


class Round(Op):
    """``numpy.round(a, decimals)``: half to even; integers keep their dtype, bool -> float16."""

    name = "round"
    props = ("decimals",)

    def __init__(self, decimals):
        self.decimals = decimals

    def output_types(self, inputs):
        (x,) = inputs
        if x.dtype == "bool" and self.decimals != 0:
            raise TypeError(f"round: cannot round a bool array to decimals={self.decimals}")
        dt = x.dtype if kind_of(x.dtype) in "iu" else _elemwise_dtype("rint", (x.dtype,))
        return [TensorType(dt, x.shape)]

    def perform(self, node, values):
        return [_k().round(values[0], self.decimals)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [zeros_like(x)]


def round(a, decimals=0):  # noqa: A001 - same name as the eager function
    """Round half to even to ``decimals`` places (``numpy.round``): floats and complex keep
    their dtype, integers keep theirs, bool gives float16 (``TypeError`` with decimals != 0).
    Gradient zero."""
    if isinstance(decimals, (bool, np.bool_)) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    return Round(int(decimals))(as_variable(a))


def real(x):
    """Real part (``numpy.real``): complex64 -> float32, complex128 -> float64; any other dtype
    is ``x`` itself. Gradient: ``g`` into the real component."""
    x = as_variable(x)
    return _unary("real", x) if kind_of(x.dtype) == "c" else x


def imag(x):
    """Imaginary part (``numpy.imag``): complex64 -> float32, complex128 -> float64; other
    dtypes give zeros of x's dtype. Gradient: ``i g`` (into the imaginary component)."""
    x = as_variable(x)
    return _unary("imag", x) if kind_of(x.dtype) == "c" else zeros_like(x)


def conj(x):
    """Complex conjugate (``numpy.conj``): same dtype; any other dtype is ``x`` itself (bool
    gives int8, as ``numpy.conjugate``). Gradient: ``conj(g)``."""
    x = as_variable(x)
    if kind_of(x.dtype) == "c":
        return _unary("conj", x)
    return astype(x, "int8") if x.dtype == "bool" else x


conjugate = conj


def angle(x, deg=False):
    """Argument in radians, in [-pi, pi] (``numpy.angle``: ``arctan2(imag, real)``), or in degrees
    with ``deg=True`` (times 180/pi); complex64 -> float32, complex128 -> float64, real dtypes
    ``arctan2(0, x)`` (0 or pi) with arctan2's float dtype. Gradient: ``g * i / conj(z)`` for
    complex z (0 at z = 0), 0 for real x."""
    a = _unary("angle", x)
    return a * (180.0 / np.pi) if deg else a


def _cj(v):
    """``conj(v)`` for a complex ``v``, ``v`` itself otherwise (gradient formulas: for a complex
    variable the incoming gradient is multiplied by the conjugate of the derivative)."""
    return conj(v) if kind_of(v.dtype) == "c" else v


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import astype  # noqa: E402
from .creation import zeros_like  # noqa: E402
from .elemwise import _elemwise_dtype, _unary  # noqa: E402
