"""Neural-network helpers: relu, softmax and log_softmax (composite ops, lowered to primitives for
linkers without them) and the softmax cross-entropy of logits with integer labels, with its
gradient in one op.
"""
from __future__ import annotations

import numpy as np

from ... import _core
from ..basic import Op, as_variable
from ..type import TensorType, is_float, kind_of
from ._common import _k, _norm_axis, _uma


def relu(x):
    """``maximum(x, 0)`` (the 0 takes x's dtype; float16/bfloat16 computed in float32, exact).
    Gradient: 1 where x >= 0 (maximum's rule)."""
    x = as_variable(x)
    if x.dtype in ("float16", "bfloat16"):
        return astype(maximum(astype(x, "float32"), 0), x.dtype)
    return maximum(x, as_variable(np.zeros((), x.dtype)))  # a bool x stays bool (a Python 0 would promote it)


class Softmax(Op):
    """softmax / log_softmax along ``axis``, computed stably (the maximum is subtracted)."""

    props = ("name", "axis")
    names = ("softmax", "log_softmax")

    def __init__(self, name, axis):
        self.name, self.axis = name, axis

    def output_types(self, inputs):
        (x,) = inputs
        if not is_float(x.dtype):
            raise TypeError(f"{self.name}: needs a float input, got {x.dtype}")
        return [TensorType(x.dtype, _core._result_shape(self.name, x.shape, axis=self.axis))]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape(self.name, shapes[0], axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None]
        out = node.outputs[0]
        dt = out.dtype
        if dt in ("float16", "bfloat16"):  # the gradient in float32 too
            out, g = astype(out, "float32"), astype(g, "float32")
        if self.name == "softmax":
            r = out * (g - sum(g * out, axis=self.axis, keepdims=True))
        else:
            r = g - exp(out) * sum(g, axis=self.axis, keepdims=True)
        return [astype(r, dt)]


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, stable (subtracts the max); float input required."""
    return _softmax("softmax", x, axis)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``, stable (subtracts the max); float input required."""
    return _softmax("log_softmax", x, axis)


def _softmax(name, x, axis):
    x = as_variable(x)
    _core._result_shape(name, x.shape, axis=axis)  # the rule's errors (a 0-d x, a bad axis)
    return Softmax(name, _norm_axis(name, axis, x.ndim))(x)


class SoftmaxCrossEntropy(Op):
    """Per-example softmax cross-entropy of logits (N, C) with integer labels (N,)."""

    name = "softmax_cross_entropy"

    def output_types(self, inputs):
        z, y = inputs
        shape = _core._result_shape("softmax_cross_entropy", z.shape, y.shape)
        if not is_float(z.dtype):
            raise TypeError(f"softmax_cross_entropy: logits must be a 2-d float array, got {z.dtype}")
        if kind_of(y.dtype) not in "iu":
            raise TypeError(f"softmax_cross_entropy: labels must be a 1-d integer array, got {y.dtype}")
        return [TensorType(z.dtype, shape)]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy(values[0], values[1])]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("softmax_cross_entropy", *shapes)]

    def grad(self, node, output_grads):
        return _xent_grad(SoftmaxCrossEntropyGrad(), node, output_grads)


class SoftmaxCrossEntropyGrad(Op):
    """d softmax_cross_entropy / d logits, scaled by the upstream gradient (N,)."""

    name = "softmax_cross_entropy_grad"

    def output_types(self, inputs):
        g, z, y = inputs
        return [TensorType(z.dtype, _core._result_shape("softmax_cross_entropy_grad", g.shape, z.shape, y.shape))]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy_grad(values[0], values[1], values[2])]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("softmax_cross_entropy_grad", *shapes)]

    def grad(self, node, output_grads):
        raise NotImplementedError("softmax_cross_entropy: second derivatives are not implemented")


class OneHotCrossEntropy(Op):
    """``-sum(one_hot(labels, depth) * log_softmax(logits, axis=1), axis=1)`` in one pass per
    row (N,): the closed form that the ``cpu`` linker's ``closed_forms`` pass puts in place of
    that product. A label outside [0, depth) is one_hot's zero row (loss 0); where ``depth``
    is not the logits' class count it is the product itself (depth 1 broadcasts; another depth
    is the product's error)."""

    name = "one_hot_cross_entropy"
    props = ("depth",)

    def __init__(self, depth):
        self.depth = int(depth)

    def output_types(self, inputs):
        z, y = inputs
        return [TensorType(z.dtype, _core._result_shape("softmax_cross_entropy", z.shape, y.shape))]

    def perform(self, node, values):
        uma = _uma()
        z, y = values
        oh = uma.one_hot(y, self.depth, dtype=z.dtype)
        return [uma.negative(uma.sum(oh * uma.log_softmax(z, axis=1), axis=1))]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("softmax_cross_entropy", *shapes)]

    def grad(self, node, output_grads):
        return _xent_grad(OneHotCrossEntropyGrad(self.depth), node, output_grads)


class OneHotCrossEntropyGrad(Op):
    """d one_hot_cross_entropy / d logits for an upstream gradient (N,): ``g * (softmax(z) -
    one_hot(y))`` per row, zero rows where the label is outside [0, depth)."""

    name = "one_hot_cross_entropy_grad"
    props = ("depth",)

    def __init__(self, depth):
        self.depth = int(depth)

    def output_types(self, inputs):
        g, z, y = inputs
        rows = _core._result_shape("softmax_cross_entropy_grad", g.shape, z.shape, y.shape)[0]
        return [TensorType(z.dtype, (rows, self.depth))]  # the op checks that z has depth classes

    def perform(self, node, values):
        uma = _uma()
        g, z, y = values
        oh = uma.one_hot(y, self.depth, dtype=z.dtype)
        col = uma.reshape(g, (-1, 1)) if g.ndim == 1 else g
        in_range = uma.sum(oh, axis=1, keepdims=True)
        return [uma.astype(col * (uma.softmax(z, axis=1) * in_range - oh), z.dtype)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("softmax_cross_entropy_grad", *shapes)]

    def grad(self, node, output_grads):
        raise NotImplementedError("one_hot_cross_entropy: second derivatives are not implemented")


def _xent_grad(grad_op, node, output_grads):
    """The gradients of a cross-entropy node: ``grad_op(g, logits, labels)`` for the logits,
    none for the labels."""
    (g,) = output_grads
    if g is None:
        return [None, None]
    z, y = node.inputs
    return [grad_op(g, z, y), None]


def softmax_cross_entropy(logits, labels):
    """Per-example cross-entropy of ``softmax(logits)`` against integer ``labels``.

    ``logits``: (N, C) float32/float64; ``labels``: (N,) integers in [0, C). Returns (N,) of the
    logits' dtype: ``logsumexp(logits[i]) - logits[i, labels[i]]``, computed in one stable pass
    per row, with the gradient ``softmax(logits) - one_hot(labels)`` (scaled by the upstream
    gradient) in one op. Equal to ``-sum(one_hot(labels) * log_softmax(logits), axis=1)``.
    TensorFlow's ``sparse_softmax_cross_entropy_with_logits``; PyTorch's
    ``cross_entropy(..., reduction="none")``. TypeError for other dtypes or ranks; ValueError
    (at call time) for a label outside [0, C).
    """
    return SoftmaxCrossEntropy()(as_variable(logits), as_variable(labels))


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import astype  # noqa: E402
from .elemwise import exp, maximum  # noqa: E402
from .reduce import sum  # noqa: E402
