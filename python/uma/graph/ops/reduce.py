"""Reductions over axes: sum, mean, max, min, prod, all, any, argmax, argmin (:class:`Reduce`),
var and std (:class:`Stat`) and logsumexp, with NumPy 2's result dtypes and shapes (the core's
rules) and their gradients.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Op, as_variable
from ..type import TensorType, dtype_name, kind_of
from ._common import _diff, _k, _norm_axes, _norm_axis, _prod, _ufunc_axis, _uma


def _sum_dtype(dt):
    """NumPy 2's accumulator dtype of sum/prod/cumsum (bool and signed ints -> int64, unsigned
    ints -> uint64, floats and complex keep theirs), from the core's rule."""
    return _core._result_dtype("sum", dt).name


def _stat_dtype(dt):
    """var/std/logsumexp (and mean for non-complex): float64 for bool/ints, the real dtype of a
    complex dtype, else the float dtype itself (the core's rule)."""
    return _core._result_dtype("var", dt).name


def _reduce_dtype(name, dt):
    """Result dtype of reduction ``name`` on ``dt`` (NumPy 2; every dtype), from the core's rule
    (``uma._core._result_dtype``, which the eager reduction follows)."""
    return _core._result_dtype(name, dt).name


class Reduce(Op):
    """sum/mean/max/min/prod/all/any over ``axis`` (sorted tuple, None = all axes) and
    argmax/argmin (``axis`` one int or None = flattened)."""

    props = ("name", "axis", "keepdims")
    names = ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin")

    def __init__(self, name, axis, keepdims):
        self.name, self.axis, self.keepdims = name, axis, keepdims

    def _axes(self, ndim):
        return tuple(range(ndim)) if self.axis is None else self.axis

    def _out_shape(self, shape):
        """The result's shape for an input of (static or run-time) ``shape``: the reduced axes
        removed or kept as length 1 (NumPy; the core's rule, ``uma._core._result_shape``, which
        also refuses max, min, argmax and argmin over an axis of length 0)."""
        return _core._result_shape(self.name, shape, axis=self.axis, keepdims=self.keepdims)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(_reduce_dtype(self.name, x.dtype), self._out_shape(x.shape))]

    def _eager_axis(self):
        if self.axis is None:
            return None
        return self.axis[0] if len(self.axis) == 1 else self.axis

    def perform(self, node, values):
        return [getattr(_uma(), self.name)(values[0], axis=self._eager_axis(), keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        return [self._out_shape(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        out = node.outputs[0]
        if g is None or not _diff(x.dtype) or self.name in ("all", "any", "argmax", "argmin"):
            return [None]
        axes = self._axes(x.ndim)
        # gradient and result with the reduced axes kept (length 1)
        gk, ok = _keep_axes(g, axes, self.keepdims), _keep_axes(out, axes, self.keepdims)
        if self.name == "sum":
            gx = _broadcast_like(gk, x)
        elif self.name == "mean":
            dims = [x.shape[a] for a in axes]
            if _b.all(d is not None for d in dims):
                gx = _broadcast_like(gk / float(_b.max(_prod(dims), 1)), x)
            else:  # the count is only known at run time
                count = sum(ones_like(x, dtype=g.dtype), axis=axes, keepdims=True)
                gx = _broadcast_like(gk / count, x)
        elif self.name in ("max", "min"):
            # ties share the gradient equally, so that a maximum taken over copies of one value
            # passes that value's derivative back once (JAX's and torch.amax's rule)
            hit = equal(x, ok)
            ties = sum(astype(hit, g.dtype), axis=axes, keepdims=True)
            gx = where(hit, gk / ties, 0)
        elif self.name == "prod":
            gx = _prod_grad(gk, x, axes)
        else:  # pragma: no cover
            return [None]
        return [_unbroadcast(gx, x) if gx.shape != x.shape or gx.dtype != x.dtype else gx]


def _reduce(name, a, axis, keepdims):
    a = as_variable(a)
    if name not in ("mean",):
        axis = _ufunc_axis(a, axis)
    if name in ("argmax", "argmin"):
        if axis is not None and isinstance(axis, (tuple, list)):
            raise TypeError(f"{name}: axis must be an int or None, got {axis!r}")
        ax = None if axis is None else (_norm_axis(name, axis, a.ndim),)
    else:
        ax = _norm_axes(name, axis, a.ndim)
        if ax is not None and len(ax) == a.ndim:
            ax = None
    return Reduce(name, ax, bool(keepdims))(a)


def _reduce_in(name, a, axis, keepdims, dtype):
    """``name`` computed in ``dtype`` with a ``dtype`` result (NumPy's and the Array API's
    ``dtype=`` of sum/prod/mean): the input converted to ``dtype`` first, the result after
    (float16/bfloat16 accumulate in float32, as every uma reduction of them does)."""
    if dtype is None:
        return _reduce(name, a, axis, keepdims)
    a = as_variable(a)
    if name == "mean" and kind_of(dtype_name(dtype)) in "iub":
        # NumPy: the sum in ``dtype`` (wrapping), then divided and converted back (truncated)
        total = astype(_reduce("sum", astype(a, dtype), axis, keepdims), dtype)
        count = _reduce("sum", ones_like(a, dtype="int64"), axis, keepdims)
        return astype(divide(total, count), dtype)
    return astype(_reduce(name, astype(a, dtype), axis, keepdims), dtype)


def sum(a, axis=None, keepdims=False, *, dtype=None):  # noqa: A001
    """Sum over ``axis`` (int, tuple or None = all); ints/bool sum to int64 (NumPy).
    ``dtype``: accumulate in and return that dtype (Array API standard, sum)."""
    return _reduce_in("sum", a, axis, keepdims, dtype)


def mean(a, axis=None, keepdims=False, *, dtype=None):
    """Arithmetic mean over ``axis``; ints give float64 (NumPy). ``dtype``: compute in and
    return that dtype (numpy.mean)."""
    return _reduce_in("mean", a, axis, keepdims, dtype)


def max(a, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates; complex: lexicographic). Gradient: the upstream
    gradient shared equally by the elements equal to the maximum (JAX's and ``torch.amax``'s
    rule; PyTensor gives each of them the whole gradient, which counts a value repeated in
    ``a`` once per copy)."""
    return _reduce("max", a, axis, keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``; the gradient shared equally by the minimal elements (as ``max``)."""
    return _reduce("min", a, axis, keepdims)


def prod(a, axis=None, keepdims=False, *, dtype=None):
    """Product over ``axis``; ints/bool give int64 (unsigned: uint64), as NumPy. The gradient is
    the product of the other elements, exact where ``a`` has zeros. ``dtype``: accumulate in
    and return that dtype (Array API standard, prod)."""
    return _reduce_in("prod", a, axis, keepdims, dtype)


def all(a, axis=None, keepdims=False):  # noqa: A001
    """Logical and over ``axis`` -> bool."""
    return _reduce("all", a, axis, keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001
    """Logical or over ``axis`` -> bool."""
    return _reduce("any", a, axis, keepdims)


def argmax(a, axis=None, keepdims=False):
    """Index of the maximum along one ``axis`` (None: of the flattened array) -> int64."""
    return _reduce("argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    """Index of the minimum along one ``axis`` -> int64."""
    return _reduce("argmin", a, axis, keepdims)


def _prod_grad(gk, x, axes):
    """d prod(x) / dx for the upstream gradient ``gk`` (reduced axes kept, length 1): the
    product of the other elements of each group, exact with zeros (one zero: only that entry
    gets a gradient; two or more: none)."""
    zero = equal(x, 0)
    nz = where(zero, 1, x)
    p_nz = prod(nz, axis=axes, keepdims=True)
    n_zero = sum(zero, axis=axes, keepdims=True)
    none = equal(n_zero, 0)
    one = logical_and(equal(n_zero, 1), zero)
    return gk * _cj(where(none, p_nz / nz, where(one, p_nz, 0)))


def _keep_axes(v, axes, keepdims):
    """``v`` with the reduced ``axes`` re-inserted as length-1 axes (when not kept)."""
    if not keepdims:
        for a in axes:  # ascending: each insert lands where the axis was
            v = expand_dims(v, a)
    return v


def _group_count(x, axes, dtype):
    """Number of elements per reduced group (a Python float when static, else a variable)."""
    dims = [x.shape[a] for a in axes]
    if _b.all(d is not None for d in dims):
        return float(_prod(dims))
    return sum(ones_like(x, dtype=dtype), axis=axes, keepdims=True)


class Stat(Op):
    """var / std over ``axis`` (sorted tuple or None) with NumPy's ``ddof``."""

    props = ("name", "axis", "ddof", "keepdims")
    names = ("var", "std")

    def __init__(self, name, axis, ddof, keepdims):
        self.name, self.axis, self.ddof, self.keepdims = name, axis, ddof, keepdims

    _axes = Reduce._axes
    _out_shape = Reduce._out_shape
    _eager_axis = Reduce._eager_axis

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(_stat_dtype(x.dtype), self._out_shape(x.shape))]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self._eager_axis(), ddof=self.ddof, keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        return [self._out_shape(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        axes = self._axes(x.ndim)
        gk = _keep_axes(g, axes, self.keepdims)
        n = _group_count(x, axes, _stat_dtype(x.dtype))
        d = x - mean(x, axis=axes, keepdims=True)
        gx = gk * d * (2.0 / (n - self.ddof))
        if self.name == "std":
            gx = gx / (2.0 * _keep_axes(node.outputs[0], axes, self.keepdims))
        return [_unbroadcast(gx, x) if gx.shape != x.shape or gx.dtype != x.dtype else gx]


def _ddof(name, ddof, correction):
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
        ddof = correction
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: ddof must be a number, got {ddof!r}")
    return float(ddof)


def _stat(name, a, axis, ddof, keepdims, correction):
    a = as_variable(a)
    ax = _norm_axes(name, axis, a.ndim)
    if ax is not None and len(ax) == a.ndim:
        ax = None
    return Stat(name, ax, _ddof(name, ddof, correction), bool(keepdims))(a)


def var(a, axis=None, ddof=0, keepdims=False, *, correction=None):
    """Variance over ``axis`` with NumPy's ``ddof`` (or the Array API's ``correction``):
    ``sum(|x - mean|**2) / max(n - ddof, 0)``. float64 for bool/ints, the real dtype for
    complex, else x's dtype. Gradient ``2 (x - mean) / (n - ddof)``."""
    return _stat("var", a, axis, ddof, keepdims, correction)


def std(a, axis=None, ddof=0, keepdims=False, *, correction=None):
    """``sqrt(var(a, axis, ddof))`` (same dtype rule as :func:`var`)."""
    return _stat("std", a, axis, ddof, keepdims, correction)


class LogSumExp(Op):
    """log(sum(exp(x))) over ``axis``, computed stably (scipy.special.logsumexp)."""

    name = "logsumexp"
    props = ("axis", "keepdims")

    def __init__(self, axis, keepdims):
        self.axis, self.keepdims = axis, keepdims

    _axes = Reduce._axes
    _out_shape = Reduce._out_shape
    _eager_axis = Reduce._eager_axis

    def output_types(self, inputs):
        (x,) = inputs
        if kind_of(x.dtype) == "c":
            raise TypeError(f"logsumexp: complex input ({x.dtype}) is not supported")
        return [TensorType(_stat_dtype(x.dtype), self._out_shape(x.shape))]

    def perform(self, node, values):
        return [_k().logsumexp(values[0], axis=self._eager_axis(), keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        return [self._out_shape(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        axes = self._axes(x.ndim)
        gk = _keep_axes(g, axes, self.keepdims)
        ok = _keep_axes(node.outputs[0], axes, self.keepdims)
        if x.dtype in ("float16", "bfloat16"):
            gx = astype(astype(gk, "float32") * exp(astype(x, "float32") - astype(ok, "float32")), x.dtype)
        else:
            gx = gk * exp(x - ok)
        return [gx]


def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a), axis))`` computed stably; float64 for bool/ints, else a's float dtype
    (``TypeError`` for complex). Gradient ``softmax(a)`` along ``axis``."""
    a = as_variable(a)
    ax = _norm_axes("logsumexp", _ufunc_axis(a, axis), a.ndim)
    if ax is not None and len(ax) == a.ndim:
        ax = None
    return LogSumExp(ax, bool(keepdims))(a)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import astype  # noqa: E402
from .creation import ones_like  # noqa: E402
from .elemwise import divide, equal, exp, logical_and  # noqa: E402
from .select import where  # noqa: E402
from .shape import _broadcast_like, _unbroadcast, expand_dims  # noqa: E402
from .unary import _cj  # noqa: E402
