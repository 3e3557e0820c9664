"""The unary functions whose behaviour goes beyond their op-table row: :func:`round` (the
:class:`Round` op, with ``decimals``) and the parts of complex numbers, which return a real
input itself (``real``, ``conj``) or zeros (``imag``) rather than a node, and ``angle`` with
``deg``. Every other elementwise function is generated from the op table (:mod:`.elemwise`).
"""
from __future__ import annotations

import numpy as np

from ..basic import Op, as_variable
from ..type import TensorType, kind_of
from ._common import _diff, _k


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
