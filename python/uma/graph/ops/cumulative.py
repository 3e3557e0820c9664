"""Cumulative sums and products along an axis (:class:`Cumulate`), with exact gradients where the
input has zeros.
"""
from __future__ import annotations

from ... import _core
from ..basic import Op, as_variable
from ..type import TensorType
from ._common import _diff, _k, _norm_axis, _ufunc_axis


def _flip(v, axis):
    return getitem(v, (slice(None),) * axis + (slice(None, None, -1),))


class Cumulate(Op):
    """cumsum / cumprod along ``axis`` (None: of the flattened array)."""

    props = ("name", "axis")
    names = ("cumsum", "cumprod")

    def __init__(self, name, axis):
        self.name, self.axis = name, axis

    def _shape(self, shape):
        """The input's shape; with no axis its flattened length, None where a length is unknown
        (NumPy; the core's rule, ``uma._core._result_shape``)."""
        return _core._result_shape(self.name, shape, axis=self.axis)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(_sum_dtype(x.dtype), self._shape(x.shape))]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [self._shape(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        ax = 0 if self.axis is None else self.axis
        if self.name == "cumsum":
            gx = _flip(cumsum(_flip(g, ax), axis=ax), ax)
        else:
            gx = _cumprod_grad(g, reshape(x, (-1,)) if self.axis is None else x, node.outputs[0], ax)
        if self.axis is None:
            gx = _reshape_like(gx, x)
        return [_to_dtype(gx, x.dtype)]


def _cumprod_grad(g, x, out, ax):
    """d cumprod(x) along ``ax``, exact where x has zeros: entry i gets
    ``sum_{j >= i} g_j * conj(prod_{k <= j, k != i} x_k)``. Before the first zero of its row
    that is ``revcumsum(g * conj(out))_i / conj(x_i)`` (no x_k is zero there); at the first zero
    it is ``revcumsum(g * conj(cumprod(x with that zero replaced by 1)))``; after it every
    product contains the zero, so the gradient is 0."""
    rev = lambda v: _flip(cumsum(_flip(v, ax), axis=ax), ax)  # noqa: E731 - sum over j >= i
    zero = equal(x, 0)
    zeros_upto = cumsum(zero, axis=ax)  # zeros among x_0..x_i
    first_zero = logical_and(zero, equal(zeros_upto, 1))
    before = rev(g * _cj(out)) / _cj(where(zero, 1, x))
    at_first = rev(g * _cj(cumprod(where(first_zero, 1, x), axis=ax)))
    return where(equal(zeros_upto, 0), before, where(first_zero, at_first, 0))


def cumsum(a, axis=None):
    """Cumulative sum along ``axis`` (None: of the flattened array); dtype as :func:`sum`'s."""
    a = as_variable(a)
    axis = _ufunc_axis(a, axis)
    ax = None if axis is None else _norm_axis("cumsum", axis, a.ndim)
    return Cumulate("cumsum", ax)(a)


def cumprod(a, axis=None):
    """Cumulative product along ``axis`` (None: of the flattened array); dtype as :func:`prod`'s.
    The gradient is exact where ``a`` has zeros (each entry gets the products without it)."""
    a = as_variable(a)
    axis = _ufunc_axis(a, axis)
    ax = None if axis is None else _norm_axis("cumprod", axis, a.ndim)
    return Cumulate("cumprod", ax)(a)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import _to_dtype  # noqa: E402
from .elemwise import equal, logical_and  # noqa: E402
from .indexing import getitem  # noqa: E402
from .reduce import _sum_dtype  # noqa: E402
from .select import where  # noqa: E402
from .shape import _reshape_like, reshape  # noqa: E402
from .unary import _cj  # noqa: E402
