"""Creation functions: constants (``zeros``, ``arange``, ``eye``, ``asarray``, ...: no symbolic
inputs), arrays shaped like another (``zeros_like``, ...: :class:`FillLike`) and
:func:`one_hot`.
"""
from __future__ import annotations

import numpy as np

from ... import _core
from ..basic import Constant, Op, Variable, as_variable
from ..type import TensorType, dtype_name, kind_of, np_dtype
from ._common import _k, _weak_constant


def zeros(shape, dtype=None, *, device=None):
    """A constant of zeros (creation functions have no symbolic inputs)."""
    return Constant(np.zeros(shape, dtype=np_dtype(dtype_name(dtype or "float64"))))


def ones(shape, dtype=None, *, device=None):
    """A constant of ones."""
    return Constant(np.ones(shape, dtype=np_dtype(dtype_name(dtype or "float64"))))


def empty(shape, dtype=None, *, device=None):
    """A constant (zero-filled: a constant needs a defined value)."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
    """A constant filled with ``fill_value``."""
    dt = None if dtype is None else np_dtype(dtype_name(dtype))
    return Constant(np.full(shape, fill_value, dtype=dt))


def arange(start, stop=None, step=1, dtype=None, *, device=None):
    """A constant ``arange`` (NumPy semantics)."""
    dt = None if dtype is None else np_dtype(dtype_name(dtype))
    if stop is None:
        start, stop = 0, start
    return Constant(np.arange(start, stop, step, dtype=dt))


def eye(n, m=None, k=0, dtype=None, *, device=None):
    """A constant identity-like matrix."""
    return Constant(np.eye(n, m, k, dtype=np_dtype(dtype_name(dtype or "float64"))))


def asarray(obj, dtype=None, device=None, copy=None):
    """A Variable as is (cast to ``dtype`` if given); anything else becomes a Constant."""
    v = as_variable(obj)
    return v if dtype is None else astype(v, dtype)


def array(obj, dtype=None, device=None):
    """Like :func:`asarray` (symbolic values are immutable, so no copy is needed)."""
    return asarray(obj, dtype=dtype)


def from_dlpack(x, *, device=None, copy=None):
    raise TypeError("from_dlpack: a symbolic Variable has no memory to share")


class FillLike(Op):
    """zeros_like / ones_like / full_like: a new array of x's shape (values ignored)."""

    props = ("name", "fill_value", "dtype")
    names = ("zeros_like", "ones_like", "full_like")

    def __init__(self, name, fill_value, dtype):
        self.name, self.fill_value, self.dtype = name, fill_value, dtype

    def output_types(self, inputs):
        return [TensorType(self.dtype, _core._result_shape(self.name, inputs[0].shape))]

    def perform(self, node, values):
        u = _k()
        if self.name == "full_like":
            return [u.full_like(values[0], self.fill_value, dtype=self.dtype)]
        return [getattr(u, self.name)(values[0], dtype=self.dtype)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape(self.name, shapes[0])]

    def grad(self, node, output_grads):
        return [None]


def zeros_like(a, dtype=None):
    """Zeros with ``a``'s shape and dtype (or ``dtype``)."""
    a = as_variable(a)
    return FillLike("zeros_like", None, dtype_name(dtype) if dtype is not None else a.dtype)(a)


def ones_like(a, dtype=None):
    """Ones with ``a``'s shape and dtype (or ``dtype``)."""
    a = as_variable(a)
    return FillLike("ones_like", None, dtype_name(dtype) if dtype is not None else a.dtype)(a)


def empty_like(a, dtype=None):
    """Like :func:`zeros_like` (a symbolic array needs defined values)."""
    return zeros_like(a, dtype)


def full_like(a, fill_value, dtype=None):
    """``fill_value`` (a Python/NumPy scalar) with ``a``'s shape, dtype ``dtype`` or a's."""
    a = as_variable(a)
    if isinstance(fill_value, Variable):
        raise TypeError("full_like: fill_value must be a scalar value, not a symbolic variable")
    fv = fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    if not isinstance(fv, (bool, int, float, complex)):  # b"3" is no number (float(b"3") parses it)
        raise TypeError(f"full_like: fill_value must be a number, got {type(fill_value).__name__} {fill_value!r}")
    dt = dtype_name(dtype) if dtype is not None else a.dtype
    _weak_constant("full_like", fv, np_dtype(dt))  # range check
    return FillLike("full_like", fv, dt)(a)


class OneHot(Op):
    """Integer indices (input 0) -> ``idx.shape + (depth,)`` of ``dtype``: 1 where the last index
    equals the index, else 0 (indices outside ``[0, depth)`` give a row of zeros)."""

    name = "one_hot"
    props = ("depth", "dtype")

    def __init__(self, depth, dtype):
        self.depth, self.dtype = depth, dtype

    def output_types(self, inputs):
        (idx,) = inputs
        if kind_of(idx.dtype) not in "iu":
            raise TypeError(f"one_hot: indices must have an integer dtype, got {idx.dtype}")
        return [TensorType(self.dtype, _core._result_shape("one_hot", idx.shape, depth=self.depth))]

    def perform(self, node, values):
        return [_k().one_hot(values[0], self.depth, dtype=self.dtype)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("one_hot", shapes[0], depth=self.depth)]

    def grad(self, node, output_grads):
        return [None]


def one_hot(indices, depth, dtype="float64"):
    """One-hot encoding: shape ``indices.shape + (depth,)``, 1 where ``index == j``; an index
    outside [0, depth) (negative ones included) gives a row of zeros, with no error (as
    ``uma.one_hot``; ``softmax_cross_entropy`` raises for such a label instead).

    ``indices`` must be integer (``TypeError``); ``depth`` a non-negative int.
    """
    if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)):
        raise TypeError(f"one_hot: depth must be an int, got {depth!r}")
    return OneHot(int(depth), dtype_name(dtype))(as_variable(indices))


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import astype  # noqa: E402
