"""Linear algebra: matmul (NumPy's shape rule), dot, outer, diagonals (diagonal, diag) and
trace.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Op, as_variable
from ..type import TensorType
from ._common import _as_inputs, _bcast_runtime, _diff, _k, _norm_axis, _prod, _promote


def _matmul_dtype(a, b):
    return _promote(a, b)


class MatMul(Op):
    """``a @ b`` (NumPy ``matmul``: batched, 1-d operands promoted and their axis dropped)."""

    name = "matmul"

    def output_types(self, inputs):
        a, b = inputs
        # NumPy's matmul shape rule on static shapes, from the core
        return [TensorType(_matmul_dtype(a.dtype, b.dtype), _core._result_shape("matmul", a.shape, b.shape))]

    def perform(self, node, values):
        return [_k().matmul(*values)]

    def infer_shape(self, node, shapes):
        a, b = node.inputs
        out = _core._result_shape("matmul", *shapes)
        # the batch axes (all but the last two) broadcast only where the types declare length 1
        _bcast_runtime("matmul", [a.shape[:-2], b.shape[:-2]], [tuple(s)[:-2] for s in shapes],
                       whole=[(a.shape, tuple(shapes[0])), (b.shape, tuple(shapes[1]))])
        return [out]

    def grad(self, node, output_grads):
        (g,) = output_grads
        a, b = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None]
        A = expand_dims(a, 0) if a.ndim == 1 else a
        B = expand_dims(b, 1) if b.ndim == 1 else b
        G = g
        if b.ndim == 1:
            G = expand_dims(G, G.ndim)
        if a.ndim == 1:
            G = expand_dims(G, G.ndim - 1)

        def swap(v):
            perm = list(range(v.ndim))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            return transpose(v, perm)

        ga = gb = None
        if _diff(a.dtype):
            ga = _unbroadcast(matmul(G, swap(_cj(B))), A)
            if a.ndim == 1:
                ga = squeeze(ga, 0)
        if _diff(b.dtype):
            gb = _unbroadcast(matmul(swap(_cj(A)), G), B)
            if b.ndim == 1:
                gb = squeeze(gb, gb.ndim - 1)
        return [ga, gb]


def matmul(x1, x2):
    """NumPy ``matmul``: 1-d operands promoted and the added axis removed, batch axes
    broadcast; ``ValueError`` naming matmul for a core-dimension mismatch or a 0-d operand."""
    return MatMul()(as_variable(x1), as_variable(x2))


def dot(a, b):
    """``dot`` for ndim <= 2 (= matmul; a 0-d operand multiplies). ``ValueError`` for ndim > 2."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError(f"dot: only operands with ndim <= 2 are supported (got {a.ndim} and {b.ndim}); use matmul")
    return matmul(a, b)


class Outer(Op):
    """The outer product of the flattened inputs: ``(a.size, b.size)`` (NumPy ``outer``)."""

    name = "outer"

    def output_types(self, inputs):
        a, b = inputs
        return [TensorType(_promote(a.dtype, b.dtype), _core._result_shape("outer", a.shape, b.shape))]

    def perform(self, node, values):
        return [_k().outer(*values)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("outer", *shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        a, b = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None]
        af, bf = reshape(a, (-1,)), reshape(b, (-1,))
        ga = _reshape_like(_to_dtype(matmul(g, _cj(astype(bf, g.dtype))), a.dtype), a) if _diff(a.dtype) else None
        gb = _reshape_like(_to_dtype(matmul(_cj(astype(af, g.dtype)), g), b.dtype), b) if _diff(b.dtype) else None
        return [ga, gb]


def outer(a, b):
    """Outer product of the flattened inputs, shape ``(a.size, b.size)`` (NumPy ``outer``)."""
    a, b = _as_inputs("outer", (a, b))
    return Outer()(a, b)


class Diagonal(Op):
    """The diagonal ``offset`` of axes ``axis1``/``axis2`` appended as the last axis (a view)."""

    name = "diagonal"
    props = ("offset", "axis1", "axis2")
    view_of = {0: 0}

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def _shape(self, *shapes, name="diagonal"):
        return _core._result_shape(name, *shapes, offset=self.offset, axis1=self.axis1, axis2=self.axis2)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype, self._shape(x.shape))]

    def perform(self, node, values):
        return [_k().diagonal(values[0], self.offset, self.axis1, self.axis2)]

    def infer_shape(self, node, shapes):
        return [self._shape(*shapes)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [DiagonalEmbed(self.offset, self.axis1, self.axis2)(_to_dtype(g, x.dtype), x)]


class DiagonalEmbed(Op):
    """Zeros shaped like input 1 with input 0 written on the diagonal (gradient of
    :class:`Diagonal`); built from uma's eager take-updates."""

    name = "diagonal_embed"
    props = ("offset", "axis1", "axis2")

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    _shape = Diagonal._shape

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(x.dtype, self._shape(g.shape, x.shape, name="diagonal_embed"))]

    def infer_shape(self, node, shapes):
        return [self._shape(*shapes, name="diagonal_embed")]

    def perform(self, node, values):
        u = _k()
        g, x = values
        nd = x.ndim
        rest = [i for i in range(nd) if i not in (self.axis1, self.axis2)]
        perm = rest + [self.axis1, self.axis2]
        shape = [x.shape[i] for i in perm]
        n1, n2 = shape[-2], shape[-1]
        length = self._shape(tuple(x.shape))[-1]
        r0, c0 = _b.max(0, -self.offset), _b.max(0, self.offset)
        dev = getattr(x, "device", None)  # on x's device (a cuda linker's values stay on the GPU)
        pos = u.asarray(np.arange(length, dtype=np.int64) * (n2 + 1) + (r0 * n2 + c0), device=dev)
        z = u.zeros((_prod(shape[:-2]), n1 * n2), dtype=x.dtype, device=dev)
        z = u.set_subtensor(z, (slice(None), pos), u.reshape(g, (_prod(shape[:-2]), length)))
        z = u.reshape(z, tuple(shape))
        inv = tuple(int(i) for i in np.argsort(perm))
        return [u.transpose(z, inv).copy()]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else Diagonal(self.offset, self.axis1, self.axis2)(g), None]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of axes ``axis1``/``axis2``, appended as the last axis (NumPy
    ``diagonal``; a read-only view). ``ValueError`` if ``a.ndim < 2`` or the axes are equal."""
    a = as_variable(a)
    _core._result_shape("diagonal", a.shape, offset=offset, axis1=axis1, axis2=axis2)  # the rule's errors
    return Diagonal(int(offset), _norm_axis("diagonal", axis1, a.ndim), _norm_axis("diagonal", axis2, a.ndim))(a)


class Diag(Op):
    """1-d ``v`` -> 2-d array with ``v`` on diagonal ``k`` (NumPy ``diag`` of a vector)."""

    name = "diag"
    props = ("k",)

    def __init__(self, k):
        self.k = k

    def output_types(self, inputs):
        (v,) = inputs
        return [TensorType(v.dtype, _core._result_shape("diag", v.shape, k=self.k))]

    def perform(self, node, values):
        return [_k().diag(values[0], self.k)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("diag", shapes[0], k=self.k)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [Diagonal(self.k, 0, 1)(g)]


def diag(v, k=0):
    """NumPy ``diag``: a 1-d ``v`` gives the 2-d array with ``v`` on diagonal ``k``; a 2-d ``v``
    gives its diagonal ``k`` (1-d). ``ValueError`` for other ranks."""
    v = as_variable(v)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"diag: k must be an int, got {k!r}")
    if v.ndim == 1:
        return Diag(int(k))(v)
    if v.ndim == 2:
        return Diagonal(int(k), 0, 1)(v)
    _core._result_shape("diag", v.shape, k=k)  # the rule's ValueError for other ranks
    raise AssertionError(f"diag: the core's rule accepted a {v.ndim}-d input")  # pragma: no cover


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum along a diagonal (NumPy ``trace``): ``sum(diagonal(a, offset, axis1, axis2), -1)``;
    dtype as :func:`sum`'s. ``ValueError`` naming trace for fewer than two axes or equal axes;
    ``AxisError`` for an axis out of range."""
    a = as_variable(a)
    _core._result_shape("trace", a.shape, offset=offset, axis1=axis1, axis2=axis2)  # the rule's errors
    d = diagonal(a, offset, axis1, axis2)
    return sum(d, axis=-1)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .elemwise import multiply  # noqa: E402
from .convert import _to_dtype, astype  # noqa: E402
from .reduce import sum  # noqa: E402
from .shape import (  # noqa: E402
    _reshape_like, _unbroadcast, expand_dims, reshape, squeeze, transpose)
from .unary import _cj  # noqa: E402
