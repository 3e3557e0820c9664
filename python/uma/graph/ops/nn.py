"""Neural-network helpers: relu, softmax and log_softmax (composite ops, lowered to primitives for
linkers without them) and the softmax cross-entropy of logits with integer labels, with its
gradient in one op.
"""
from __future__ import annotations

from ... import _core
from ..basic import Op, as_variable
from ..type import TensorType, is_float, kind_of
from ._common import _k, _norm_axis


def relu(x):
    """``maximum(x, 0)`` (the 0 takes x's dtype; float16/bfloat16 computed in float32, exact).
    Gradient: 1 where x >= 0 (maximum's rule)."""
    x = as_variable(x)
    if x.dtype in ("float16", "bfloat16"):
        return astype(maximum(astype(x, "float32"), 0), x.dtype)
    return maximum(x, 0)


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
        return [TensorType(x.dtype, x.shape)]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

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
    x = as_variable(x)
    if x.ndim == 0:
        raise ValueError("softmax: needs at least 1 dimension")
    return Softmax("softmax", _norm_axis("softmax", axis, x.ndim))(x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``, stable (subtracts the max); float input required."""
    x = as_variable(x)
    if x.ndim == 0:
        raise ValueError("log_softmax: needs at least 1 dimension")
    return Softmax("log_softmax", _norm_axis("log_softmax", axis, x.ndim))(x)


class SoftmaxCrossEntropy(Op):
    """Per-example softmax cross-entropy of logits (N, C) with integer labels (N,)."""

    name = "softmax_cross_entropy"

    def output_types(self, inputs):
        z, y = inputs
        if z.ndim != 2 or not is_float(z.dtype):
            raise TypeError(f"softmax_cross_entropy: logits must be a 2-d float array, got "
                            f"{z.dtype} with {z.ndim} dimension(s)")
        if y.ndim != 1 or kind_of(y.dtype) not in "iu":
            raise TypeError(f"softmax_cross_entropy: labels must be a 1-d integer array, got {y.dtype} "
                            f"with {y.ndim} dimension(s)")
        n = _core._broadcast_shapes("softmax_cross_entropy", (z.shape[0],), y.shape)
        return [TensorType(z.dtype, n)]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy(values[0], values[1])]

    def infer_shape(self, node, shapes):
        if shapes[0][0] != shapes[1][0]:
            raise ValueError(f"softmax_cross_entropy: {shapes[1][0]} labels for {shapes[0][0]} rows of logits")
        return [(shapes[0][0],)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None, None]
        z, y = node.inputs
        return [SoftmaxCrossEntropyGrad()(g, z, y), None]


class SoftmaxCrossEntropyGrad(Op):
    """d softmax_cross_entropy / d logits, scaled by the upstream gradient (N,)."""

    name = "softmax_cross_entropy_grad"

    def output_types(self, inputs):
        g, z, y = inputs
        return [TensorType(z.dtype, z.shape)]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy_grad(values[0], values[1], values[2])]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[1])]

    def grad(self, node, output_grads):
        raise NotImplementedError("softmax_cross_entropy: second derivatives are not implemented")


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
