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
        _bcast_runtime("matmul", [a.shape[:-2], b.shape[:-2]], [tuple(s)[:-2] for s in shapes])
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
        size = lambda s: None if _b.any(d is None for d in s) else _prod(s)  # noqa: E731
        return [TensorType(_promote(a.dtype, b.dtype), (size(a.shape), size(b.shape)))]

    def perform(self, node, values):
        return [_k().outer(*values)]

    def infer_shape(self, node, shapes):
        return [(_prod(shapes[0]), _prod(shapes[1]))]

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


def _diag_len(n1, n2, offset):
    if n1 is None or n2 is None:
        return None
    if offset >= 0:
        return _b.max(0, _b.min(n1, n2 - _b.min(offset, n2)))
    return _b.max(0, _b.min(n1 - _b.min(-offset, n1), n2))


class Diagonal(Op):
    """The diagonal ``offset`` of axes ``axis1``/``axis2`` appended as the last axis (a view)."""

    name = "diagonal"
    props = ("offset", "axis1", "axis2")
    view_of = {0: 0}

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def _shape(self, shape):
        rest = tuple(d for i, d in enumerate(shape) if i not in (self.axis1, self.axis2))
        return rest + (_diag_len(shape[self.axis1], shape[self.axis2], self.offset),)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype, self._shape(x.shape))]

    def perform(self, node, values):
        return [_k().diagonal(values[0], self.offset, self.axis1, self.axis2)]

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]))]

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

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(x.dtype, x.shape)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[1])]

    def perform(self, node, values):
        u = _k()
        g, x = values
        nd = x.ndim
        rest = [i for i in range(nd) if i not in (self.axis1, self.axis2)]
        perm = rest + [self.axis1, self.axis2]
        shape = [x.shape[i] for i in perm]
        n1, n2 = shape[-2], shape[-1]
        length = _diag_len(n1, n2, self.offset)
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
    if a.ndim < 2:
        raise ValueError(f"diagonal: diag requires an array of at least two dimensions, got {a.ndim}")
    a1, a2 = _norm_axis("diagonal", axis1, a.ndim), _norm_axis("diagonal", axis2, a.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both are {a1})")
    return Diagonal(int(offset), a1, a2)(a)


class Diag(Op):
    """1-d ``v`` -> 2-d array with ``v`` on diagonal ``k`` (NumPy ``diag`` of a vector)."""

    name = "diag"
    props = ("k",)

    def __init__(self, k):
        self.k = k

    def _shape(self, shape):
        n = shape[0]
        m = None if n is None else n + _b.abs(self.k)
        return (m, m)

    def output_types(self, inputs):
        (v,) = inputs
        return [TensorType(v.dtype, self._shape(v.shape))]

    def perform(self, node, values):
        return [_k().diag(values[0], self.k)]

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]))]

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
    raise ValueError(f"diag: input must be 1-d or 2-d, got {v.ndim}-d")


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum along a diagonal (NumPy ``trace``): ``sum(diagonal(a, offset, axis1, axis2), -1)``;
    dtype as :func:`sum`'s."""
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
