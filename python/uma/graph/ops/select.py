"""Elementwise selection: :func:`where` (one of two values by a condition) and :func:`clip` (a
value or the bound it crosses).
"""
from __future__ import annotations

import numpy as np

from ..basic import Constant, Op, as_variable
from ..type import TensorType, kind_of, np_dtype
from ... import _core
from ._common import _as_inputs, _bcast_runtime, _diff, _k, _uma


class Where(Op):
    name = "where"

    def output_types(self, inputs):
        cond, x, y = inputs
        dt = _uma().promote_types(x.dtype, y.dtype).name
        return [TensorType(dt, _core._result_shape("where", cond.shape, x.shape, y.shape))]

    def perform(self, node, values):
        return [_k().where(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime("where", [i.shape for i in node.inputs], shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        cond, x, y = node.inputs
        if g is None:
            return [None, None, None]
        gx = _unbroadcast(where(cond, g, 0), x) if _diff(x.dtype) else None
        gy = _unbroadcast(where(cond, 0, g), y) if _diff(y.dtype) else None
        return [None, gx, gy]


def where(condition, x, y):
    """``x`` where ``condition`` else ``y``, broadcasting all three; dtype = result_type(x, y)."""
    condition = as_variable(condition)
    x, y = _as_inputs("where", (x, y))
    return Where()(condition, x, y)


def _where_true(value, like, dtype):
    """``value`` broadcast to the shape of ``like`` as a fresh array of ``dtype``, from ops
    every linker has: ``where(True, value, like)`` (values of ``like`` are never read)."""
    out = where(Constant(True), value, like)
    return out if out.dtype == dtype else astype(out, dtype)


class Clip(Op):
    """``numpy.clip(x, lo, hi)`` with both bounds (inputs x, lo, hi broadcast together)."""

    name = "clip"

    def output_types(self, inputs):
        x, lo, hi = inputs
        u = _uma()
        dt = u.promote_types(u.promote_types(x.dtype, lo.dtype), hi.dtype).name
        return [TensorType(dt, _core._result_shape("clip", *(i.shape for i in inputs)))]

    def perform(self, node, values):
        return [_k().clip(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime("clip", [i.shape for i in node.inputs], shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, lo, hi = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None, None]
        t = maximum(x, lo)  # clip's intermediate (only compared with hi here)
        gx = where(logical_and(greater_equal(x, lo), less_equal(x, hi)), g, 0)
        glo = where(logical_and(less(x, lo), less_equal(lo, hi)), g, 0)
        ghi = where(greater(t, hi), g, 0)
        return [None if not _diff(v.dtype) else _unbroadcast(gv, v) for gv, v in ((gx, x), (glo, lo), (ghi, hi))]


def clip(a, a_min, a_max):
    """``numpy.clip``: each element limited to ``[a_min, a_max]`` (``t = a < a_min ? a_min :
    a``, then ``t > a_max ? a_max : t``; NaN propagates; complex in NumPy's lexicographic
    order). ``None`` drops a bound (then it is ``maximum``/``minimum``, as NumPy does); for an
    integer ``a``, a Python int bound beyond its range is dropped. Result dtype: NumPy 2
    promotion of the three (Python scalars weak). Gradient: to ``a`` where it lies inside the
    bounds, to the bound that was applied elsewhere."""
    a = as_variable(a)
    if kind_of(a.dtype) in "iu":
        info = np.iinfo(np_dtype(a.dtype))
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        if a.dtype == "bool":
            raise TypeError("clip: not supported for dtype bool without bounds (numpy.positive)")
        return a
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    a, lo, hi = _as_inputs("clip", (a, a_min, a_max))
    return Clip()(a, lo, hi)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import astype  # noqa: E402
from .elemwise import (  # noqa: E402
    greater, greater_equal, less, less_equal, logical_and, maximum, minimum)
from .shape import _unbroadcast  # noqa: E402
