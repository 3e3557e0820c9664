"""Sorting and searching in graphs: :class:`Sort` (``sort``/``argsort``), its gradient helper
:class:`Unpermute`, and :class:`SearchSorted`. Each node computes with uma's eager op of the
same name (``perform``; the Array API standard's semantics: NumPy's order, NaN last, stable by
default), so every backend runs them. ``sort`` is differentiable: the gradient of the sorted
values sends each entry of ``g`` back to the position it came from (the permutation that
``argsort`` with the same flags gives, so ties are resolved alike).
"""
from __future__ import annotations

from ..basic import Op, as_variable
from ..type import TensorType
from ._common import _diff, _k, _norm_axis


def _flags(opname, descending, stable):
    for what, v in (("descending", descending), ("stable", stable)):
        if not isinstance(v, bool):
            raise TypeError(f"{opname}: {what} must be a bool, got {type(v).__name__} {v!r}")


class Sort(Op):
    """The sorted values (``name="sort"``, input 0's dtype) or the int64 positions that sort them
    (``name="argsort"``) along ``axis``, in the order ``descending`` and ``stable`` say (Array
    API standard, sort and argsort); input 0's shape."""

    props = ("name", "axis", "descending", "stable")
    names = ("sort", "argsort")

    def __init__(self, name, axis, descending=False, stable=True):
        self.name, self.axis, self.descending, self.stable = name, axis, descending, stable

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype if self.name == "sort" else "int64", x.shape)]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis, descending=self.descending, stable=self.stable)]

    def infer_shape(self, node, shapes):
        return [shapes[0]]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if self.name == "argsort" or g is None or not _diff(x.dtype):
            return [None]
        order = Sort("argsort", self.axis, self.descending, self.stable)(x)
        return [_to_dtype(Unpermute(self.axis)(g, order), x.dtype)]


class Unpermute(Op):
    """Input 0 put back in the order before the permutation ``perm`` (input 1, int64, along
    ``axis``): ``out[..., perm[..., i], ...] = g[..., i, ...]``, i.e. ``take_along_axis(g,
    argsort(perm))`` (gradient of :class:`Sort`)."""

    name = "unpermute"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        return [TensorType(inputs[0].dtype, inputs[0].shape)]

    def perform(self, node, values):
        g, perm = values
        import uma
        inverse = _k().argsort(perm, axis=self.axis, descending=False, stable=True)
        return [uma.take_along_axis(g, inverse, axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [shapes[0]]

    def grad(self, node, output_grads):
        """Unpermuting is linear in input 0: its gradient is ``g`` permuted by ``perm``, i.e.
        unpermuted by ``argsort(perm)``; the positions get none."""
        (g,) = output_grads
        if g is None:
            return [None, None]
        perm = node.inputs[1]
        return [Unpermute(self.axis)(g, Sort("argsort", self.axis)(perm)), None]


class SearchSorted(Op):
    """The int64 positions at which the values of input 1 would be inserted into the 1-d sorted
    input 0 (on ``side`` "left" or "right"; with a ``sorter``, input 2, read through it): input
    1's shape (Array API standard, searchsorted)."""

    name = "searchsorted"
    props = ("side",)

    def __init__(self, side):
        self.side = side

    def output_types(self, inputs):
        return [TensorType("int64", inputs[1].shape)]

    def perform(self, node, values):
        sorter = values[2] if len(values) > 2 else None
        return [_k().searchsorted(values[0], values[1], side=self.side, sorter=sorter)]

    def infer_shape(self, node, shapes):
        return [shapes[1]]

    def grad(self, node, output_grads):
        return [None] * len(node.inputs)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis`` (Array API standard, sort; as ``uma.sort``), differentiable."""
    x = as_variable(x)
    _flags("sort", descending, stable)
    return Sort("sort", _norm_axis("sort", axis, x.ndim), descending, stable)(x)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The int64 positions that sort ``x`` along ``axis`` (Array API standard, argsort; as
    ``uma.argsort``)."""
    x = as_variable(x)
    _flags("argsort", descending, stable)
    return Sort("argsort", _norm_axis("argsort", axis, x.ndim), descending, stable)(x)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion positions of ``x2`` in the 1-d sorted ``x1`` (Array API standard, searchsorted;
    as ``uma.searchsorted``): int64 of ``x2``'s shape. ``ValueError`` for a ``x1`` that is not
    1-d or a bad ``side``."""
    x1, x2 = as_variable(x1), as_variable(x2)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, got {x1.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    inputs = (x1, x2) if sorter is None else (x1, x2, as_variable(sorter))
    return SearchSorted(side)(*inputs)


__all__ = ["sort", "argsort", "searchsorted"]

# The other op modules' names, used only when a graph is built (imported last: see the package).
from .convert import _to_dtype  # noqa: E402
