"""Joining and splitting arrays: concatenate (gradient: :class:`Segment`), stack and split.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Op, Variable, as_variable
from ..type import TensorType
from ._common import _as_inputs, _diff, _k, _norm_axis, _promote


class Concatenate(Op):
    """The inputs joined along ``axis`` (their promoted dtype; NumPy ``concatenate``)."""

    name = "concatenate"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        dt = _promote(*[i.dtype for i in inputs])
        return [TensorType(dt, _core._result_shape("concatenate", *(i.shape for i in inputs), axis=self.axis))]

    def perform(self, node, values):
        return [_k().concatenate(list(values), axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("concatenate", *shapes, axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None] * len(node.inputs)
        res = []
        for k, x in enumerate(node.inputs):
            if not _diff(x.dtype):
                res.append(None)
                continue
            res.append(_to_dtype(Segment(self.axis, k)(g, *node.inputs), x.dtype))
        return res


class Segment(Op):
    """Piece ``index`` of ``g`` split along ``axis`` like the inputs ``xs`` of a concatenate
    (gradient helper; reference only: the offsets come from the run-time shapes)."""

    name = "segment"
    props = ("axis", "index")

    def __init__(self, axis, index):
        self.axis, self.index = axis, index

    def output_types(self, inputs):
        shape = _core._result_shape("segment", *(i.shape for i in inputs), axis=self.axis, part=self.index)
        return [TensorType(inputs[0].dtype, shape)]

    def perform(self, node, values):
        g, xs = values[0], values[1:]
        start = _b.sum(x.shape[self.axis] for x in xs[:self.index])
        stop = start + xs[self.index].shape[self.axis]
        return [g[(slice(None),) * self.axis + (slice(start, stop),)]]

    view_of = {0: 0}

    def infer_shape(self, node, shapes):
        return [_core._result_shape("segment", *shapes, axis=self.axis, part=self.index)]

    def grad(self, node, output_grads):
        """The piece's gradient put back at its place among zeros shaped like the other parts
        (the inputs ``xs`` only give shapes: no gradient)."""
        (g,) = output_grads
        xs = node.inputs[1:]
        if g is None:
            return [None] * len(node.inputs)
        parts = [g if k == self.index else zeros_like(x, dtype=g.dtype) for k, x in enumerate(xs)]
        return [concatenate(parts, axis=self.axis)] + [None] * len(xs)


def _seq_inputs(opname, arrays):
    if isinstance(arrays, Variable):
        raise TypeError(f"{opname}: expects a sequence of arrays, got a single Variable")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{opname}: need at least one array")
    return _as_inputs(opname, arrays)


def concatenate(arrays, axis=0):
    """Join arrays along an existing ``axis`` (dtypes promoted; ``axis=None``: the flattened
    arrays, NumPy and the Array API standard)."""
    xs = _seq_inputs("concatenate", arrays)
    if axis is None:
        xs, axis = [reshape(x, (-1,)) for x in xs], 0
    _core._result_shape("concatenate", *(x.shape for x in xs), axis=axis)  # the rule's errors, NumPy's order
    ax = _norm_axis("concatenate", axis, xs[0].ndim)
    return Concatenate(ax)(*xs)


class Stack(Op):
    """The inputs stacked along a new axis ``axis`` (their promoted dtype; NumPy ``stack``)."""

    name = "stack"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        dt = _promote(*[i.dtype for i in inputs])
        return [TensorType(dt, _core._result_shape("stack", *(i.shape for i in inputs), axis=self.axis))]

    def perform(self, node, values):
        return [_k().stack(list(values), axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("stack", *shapes, axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None] * len(node.inputs)
        return [_to_dtype(getitem(g, (slice(None),) * self.axis + (k,)), x.dtype) if _diff(x.dtype) else None
                for k, x in enumerate(node.inputs)]


def stack(arrays, axis=0):
    """Join same-shaped arrays along a new ``axis``."""
    xs = _seq_inputs("stack", arrays)
    ax = _norm_axis("stack", axis, xs[0].ndim + 1)
    return Stack(ax)(*xs)


def split(ary, indices_or_sections, axis=0):
    """NumPy ``split``: a list of views of ``ary`` along ``axis``. An int N gives N equal parts
    (``ValueError`` if the axis length, which must be static, is not divisible: the core's rule,
    ``uma._core._split_points``); a sequence
    of split points gives ``len + 1`` parts (points clamp like slice bounds). Gradients flow
    through the slices."""
    a = as_variable(ary)
    ax = _norm_axis("split", axis, a.ndim)
    ios = indices_or_sections
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, (bool, np.bool_)):
        points = list(_core._split_points(a.shape, int(ios), ax))
    else:
        points = [int(p) for p in ios]
    bounds = [None] + points + [None]
    return [getitem(a, (slice(None),) * ax + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import _to_dtype  # noqa: E402
from .creation import zeros_like  # noqa: E402
from .indexing import getitem  # noqa: E402
from .shape import reshape  # noqa: E402
