"""Dtype conversion: :func:`astype` (values converted, never reinterpreted) and the conversion of a
gradient to the dtype of its variable.
"""
from __future__ import annotations

from ..basic import Op, as_variable
from ..type import TensorType, dtype_name, kind_of
from ._common import _diff


class Cast(Op):
    """``x.astype(dtype)``: the values of input 0 converted to ``dtype`` (NumPy's casts; complex to
    real keeps the real part)."""

    name = "astype"
    props = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def output_types(self, inputs):
        return [TensorType(self.dtype, inputs[0].shape)]

    def perform(self, node, values):
        return [values[0].astype(self.dtype)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype) or not _diff(self.dtype):
            return [None]
        return [_to_dtype(g, x.dtype)]


def astype(x, dtype, *, copy=True):
    """``x`` converted to ``dtype`` (values converted, never reinterpreted).

    Casting to the same dtype returns ``x`` itself (a compiled function still never returns
    memory it shares with an input or another output)."""
    if dtype is None:  # as the eager astype (a None never means "unchanged" or float64)
        raise TypeError("astype: dtype must be a dtype (uma.float32, 'int64', numpy.float64, ...), got None")
    x = as_variable(x)
    dt = dtype_name(dtype)
    if dt == x.dtype:
        return x
    return Cast(dt)(x)


cast = astype


def _to_dtype(g, dtype):
    """A gradient converted to the dtype of its variable: a complex gradient of a real variable
    keeps its real part (the derivative along the real axis), then the dtype is cast."""
    if kind_of(g.dtype) == "c" and kind_of(dtype) != "c":
        g = real(g)
    return g if g.dtype == dtype else astype(g, dtype)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .unary import real  # noqa: E402
