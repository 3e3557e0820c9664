"""Shape ops: reshape, transpose, expand_dims, squeeze and broadcast_to (views), the gradient
helpers that follow run-time shapes (:class:`ReshapeLike`, :class:`BroadcastLike`) and the sum
of a gradient over the axes its variable was broadcast along.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Op, Variable, as_variable
from ..type import TensorType
from ._common import _bcast_runtime, _diff, _k, _norm_axes, _norm_axis


def _as_shape(opname, shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Variable):
        raise TypeError(f"{opname}: shape must be a tuple of ints (symbolic shapes are not supported)")
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{opname}: shape must be a tuple of ints, got {shape!r}") from None
    for d in shape:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{opname}: shape entries must be ints, got {d!r} in {shape!r}")
    return tuple(int(d) for d in shape)


class Reshape(Op):
    """Input 0 with the static ``shape`` (one entry may be -1; a view when the layout allows)."""

    name = "reshape"
    props = ("shape",)
    view_of = {0: 0}

    def __init__(self, shape):
        self.shape = shape

    def output_types(self, inputs):
        return [TensorType(inputs[0].dtype, _core._result_shape("reshape", inputs[0].shape, shape=self.shape))]

    def perform(self, node, values):
        return [_k().reshape(values[0], self.shape)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("reshape", shapes[0], shape=self.shape)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [_reshape_like(g, x)]


def reshape(a, shape):
    """Reshape to ``shape`` (ints; one may be -1). ``ValueError`` if the size differs."""
    a = as_variable(a)
    shape = _as_shape("reshape", shape)
    if shape == a.shape:
        return a
    return Reshape(shape)(a)


class ReshapeLike(Op):
    """Reshape input 0 to the run-time shape of input 1 (gradient helper). May be a view."""

    name = "reshape_like"
    view_of = {0: 0}

    def output_types(self, inputs):
        return [TensorType(inputs[0].dtype, _core._result_shape("reshape_like", inputs[0].shape, inputs[1].shape))]

    def perform(self, node, values):
        return [_k().reshape(values[0], tuple(values[1].shape))]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("reshape_like", *shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else _reshape_like(g, node.inputs[0]), None]


def _reshape_like(g, x):
    if g.shape == x.shape:
        return g
    unknown = [d for d in x.shape if d is None]
    if not unknown:
        return reshape(g, x.shape)
    if len(unknown) == 1 and 0 not in x.shape:
        return reshape(g, tuple(-1 if d is None else d for d in x.shape))
    return ReshapeLike()(g, x)


class Transpose(Op):
    """Input 0 with its axes permuted by ``axes`` (a view; NumPy ``transpose``)."""

    name = "transpose"
    props = ("axes",)
    view_of = {0: 0}

    def __init__(self, axes):
        self.axes = axes

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _core._result_shape("transpose", x.shape, axes=self.axes))]

    def perform(self, node, values):
        return [_k().transpose(values[0], self.axes)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("transpose", shapes[0], axes=self.axes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [transpose(g, tuple(int(i) for i in np.argsort(self.axes)))]


def transpose(a, axes=None):
    """Permute axes (``None``: reverse them). A view. ``ValueError`` for a bad permutation."""
    a = as_variable(a)
    if axes is None:
        perm = tuple(range(a.ndim))[::-1]
    else:  # the count and repeats are the rule's (the node's type), the axes normalised here
        perm = tuple(_norm_axis("transpose", ax, a.ndim) for ax in axes)
    if perm == tuple(range(a.ndim)):
        return a
    return Transpose(perm)(a)


class ExpandDims(Op):
    """Input 0 with a length-1 axis inserted at ``axis`` (a view)."""

    name = "expand_dims"
    props = ("axis",)
    view_of = {0: 0}

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _core._result_shape("expand_dims", x.shape, axis=self.axis))]

    def perform(self, node, values):
        return [_k().expand_dims(values[0], self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("expand_dims", shapes[0], axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [squeeze(g, self.axis)]


def expand_dims(a, axis):
    """Insert a length-1 axis at ``axis`` (in ``[-ndim-1, ndim]``), or one at each position of a
    tuple of axes, each in [-M, M) with M = ndim + len(axis) (Array API standard 2025.12; the
    eager ``uma.expand_dims``'s rule: AxisError out of range, ValueError for a repeated
    position). A view."""
    a = as_variable(a)
    if isinstance(axis, (tuple, list)):
        from ..._array_api import _axes
        for p in sorted(_axes(axis, a.ndim + len(axis), "expand_dims")):  # ascending: each lands at p
            a = ExpandDims(p)(a)
        return a
    return ExpandDims(_norm_axis("expand_dims", axis, a.ndim + 1))(a)


class Squeeze(Op):
    """Input 0 without the length-1 axes ``axis`` (None: all of them; a view)."""

    name = "squeeze"
    props = ("axis",)
    view_of = {0: 0}

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _core._result_shape("squeeze", x.shape, axis=self.axis))]

    def perform(self, node, values):
        return [_k().squeeze(values[0], self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("squeeze", shapes[0], axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        for a in self.axis:
            g = expand_dims(g, a)
        return [g]


def squeeze(a, axis=None):
    """Remove length-1 axes: ``axis`` (int or tuple) or, when None, every axis whose *static*
    length is 1 (an axis of unknown length is kept: PyTensor convention)."""
    a = as_variable(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = _norm_axes("squeeze", axis, a.ndim)
    if not axes:
        return a
    return Squeeze(axes)(a)


class BroadcastTo(Op):
    """Input 0 broadcast to the static ``shape`` (a read-only view, NumPy ``broadcast_to``)."""

    name = "broadcast_to"
    props = ("shape",)
    view_of = {0: 0}

    def __init__(self, shape):
        self.shape = shape

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _core._result_shape("broadcast_to", x.shape, self.shape))]

    def perform(self, node, values):
        return [_k().broadcast_to(values[0], self.shape)]

    def infer_shape(self, node, shapes):
        out = _core._result_shape("broadcast_to", shapes[0], self.shape)
        # the input broadcasts only along the axes its type declares as length 1
        _bcast_runtime("broadcast_to", [node.inputs[0].shape, self.shape], [tuple(shapes[0]), self.shape])
        return [out]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [_unbroadcast(g, x)]


def broadcast_to(a, shape):
    """Broadcast ``a`` to ``shape`` (ints), a read-only view."""
    a = as_variable(a)
    shape = _as_shape("broadcast_to", shape)
    if _b.any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: negative dimensions in {shape}")
    if shape == a.shape:
        return a
    return BroadcastTo(shape)(a)


class BroadcastLike(Op):
    """Input 0 broadcast to the run-time shape of input 1 (whose values are ignored); the
    axes of input 0 must broadcast statically (PyTensor convention). Gradient helper."""

    name = "broadcast_like"
    view_of = {0: 0}

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(g.dtype, _core._result_shape("broadcast_like", g.shape, x.shape))]

    def perform(self, node, values):
        return [_k().broadcast_to(values[0], tuple(values[1].shape))]

    def infer_shape(self, node, shapes):
        out = _core._result_shape("broadcast_like", *shapes)
        # input 0 broadcasts only along the axes its type declares as length 1
        _bcast_runtime("broadcast_like", [i.shape for i in node.inputs], shapes)
        return [out]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None, None]
        return [_unbroadcast(g, x), None]


def _broadcast_like(g, x):
    """``g`` (whose axes broadcast statically against x) broadcast to x's shape."""
    if g.shape == x.shape:
        return g
    if _b.all(d is not None for d in x.shape):
        return broadcast_to(g, x.shape)
    return BroadcastLike()(g, x)


def _unbroadcast(g, x):
    """Sum ``g`` over the axes along which ``x`` was broadcast (leading axes and static
    length-1 axes), and cast it to ``x``'s dtype: the result has x's ndim and dtype."""
    lead = g.ndim - x.ndim
    if lead > 0:
        g = sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i in range(x.ndim) if x.shape[i] == 1 and g.shape[i] != 1)
    if axes:
        g = sum(g, axis=axes, keepdims=True)
    if g.dtype != x.dtype:
        g = _to_dtype(g, x.dtype)
    return g


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import _to_dtype  # noqa: E402
from .reduce import sum  # noqa: E402
