"""The ``cpu`` linker's dispatch tables.

- :func:`program_op` ``(op, node) -> (name, attrs) | None``: the ``uma._core.Program`` op a
  node becomes (the eager function's name and keyword arguments); None runs the node in
  Python with its reference ``perform``, between Program segments. Whether the Program
  accepts a name with given attributes is probed once (:func:`~..program.program_supports`).
- :func:`lower` ``(op, node) -> [Variable] | None``: the same computation from primitive ops,
  for a composite op the Program does not know (``lower_composites``).
"""
from __future__ import annotations

import functools

from ....graph import ops as o
from ....graph.ops.creation import _weak_constant
from ....graph.ops.select import _where_true
from ....graph.type import np_dtype
from ..program import program_supports

__all__ = ["program_op", "lower", "program_supports"]


@functools.singledispatch
def program_op(op, node):
    """``(name, attrs)`` of the Program op for ``node``, None where the Program has none."""
    return None


def _named(cls, *attrs):
    """Register ``cls`` as the Program op of its own name, with the op's ``attrs``."""
    program_op.register(cls)(lambda op, node: (op.name, {a: getattr(op, a) for a in attrs}))


_named(o.Elemwise)
_named(o.Where)
_named(o.Clip)
_named(o.Round, "decimals")
_named(o.Cast, "dtype")
_named(o.OneHot, "depth", "dtype")
_named(o.Cumulate, "axis")
_named(o.Softmax, "axis")
_named(o.SoftmaxCrossEntropy)
_named(o.SoftmaxCrossEntropyGrad)
_named(o.OneHotCrossEntropy, "depth")
_named(o.OneHotCrossEntropyGrad, "depth")
_named(o.MatMul)
_named(o.Outer)
_named(o.Diagonal, "offset", "axis1", "axis2")
_named(o.Diag, "k")
_named(o.Reshape, "shape")
_named(o.Transpose, "axes")
_named(o.ExpandDims, "axis")
_named(o.Squeeze, "axis")
_named(o.BroadcastTo, "shape")
_named(o.BroadcastLike)
_named(o.Concatenate, "axis")
_named(o.Stack, "axis")
_named(o.GetItem, "index")
_named(o.Take, "axis")
_named(o.MaskSelect)


@program_op.register(o.FillLike)
def _fill_like(op, node):
    if op.name == "full_like":
        return "full_like", {"fill_value": op.fill_value, "dtype": op.dtype}
    return op.name, {"dtype": op.dtype}


@program_op.register(o.Reduce)
@program_op.register(o.LogSumExp)
def _reduce(op, node):
    return op.name, {"axis": op._eager_axis(), "keepdims": op.keepdims}


@program_op.register(o.Stat)
def _stat(op, node):
    return op.name, {"axis": op._eager_axis(), "ddof": float(op.ddof), "keepdims": op.keepdims}


@program_op.register(o.GetItemGrad)
def _getitem_grad(op, node):
    return "getitem_grad", {"index": op.index, "dtype": node.outputs[0].dtype}


@program_op.register(o.UpdateSubtensor)
def _update(op, node):
    if op.kind == "basic":
        return op.name, {"index": op.index}
    if op.kind == "take":
        return op.name + "_take", {"axis": op.index}
    return op.name + "_mask", {}


# ---- lowerings -----------------------------------------------------------------------------------

@functools.singledispatch
def lower(op, node):
    """New outputs for ``node`` computed by primitive ops, None where there is no lowering."""
    return None


@lower.register(o.Softmax)
def _lower_softmax(op, node):
    x = node.inputs[0]
    if x.dtype in ("float16", "bfloat16"):  # computed in float32, as the kernel does
        x = o.astype(x, "float32")
        return [o.astype(v, node.inputs[0].dtype) for v in _lower_softmax(op, op.make_node(x))]
    z = x - o.max(x, axis=op.axis, keepdims=True)
    if op.name == "softmax":
        e = o.exp(z)
        return [e / o.sum(e, axis=op.axis, keepdims=True)]
    return [z - o.log(o.sum(o.exp(z), axis=op.axis, keepdims=True))]


@lower.register(o.FillLike)
def _lower_fill_like(op, node):
    """``where(True, fill, x)``: the same array from ops every linker has."""
    fill = {"zeros_like": 0, "ones_like": 1}.get(op.name, op.fill_value)
    return [_where_true(_weak_constant(op.name, fill, np_dtype(op.dtype)), node.inputs[0], op.dtype)]


@lower.register(o.BroadcastLike)
def _lower_broadcast_like(op, node):
    g, x = node.inputs
    return [_where_true(g, x, g.dtype)]
