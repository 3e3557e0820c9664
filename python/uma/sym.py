"""uma.sym — symbolic variables and ops for compiled functions (Theano/PyTensor style).

Constructors: :func:`scalar`, :func:`vector`, :func:`matrix`, :func:`tensor`. Every op of
:mod:`uma.graph.ops` is re-exported (``add``, ``exp``, ``sum``, ``matmul``, ``softmax``,
``log_softmax``, ``one_hot``, ``dot``, ``where``, ``reshape``, ...), plus :func:`grad`.

Static shapes: each axis is an int (known when the graph is built) or ``None`` (known at run
time). Only length-1 axes broadcast (PyTensor convention): declare ``shape=(1, None)`` for a
row that broadcasts over rows.

Comparisons: ``<``, ``<=``, ``>``, ``>=`` on variables build graph nodes, but ``==`` and ``!=``
are Python identity (variables are hashable graph nodes, the PyTensor convention): use
``uma.equal(a, b)`` / ``uma.not_equal(a, b)`` for elementwise equality.
"""
import numpy as _np

from ._api import ALIASES as _ALIASES
from .graph import Variable, grad
from .graph import ops as _ops
from .graph.ops import *  # noqa: F401,F403
from .graph.ops import __all__ as _ops_all
from .graph.type import TensorType, static_shape
from .graph.type import dtype_name as _dtype_name

# The Array API standard's spellings (acos, atan2, pow, concat, permute_dims, ...), as on uma.
globals().update({_alias: getattr(_ops, _target) for _alias, _target in _ALIASES.items()})

__all__ = ["scalar", "vector", "matrix", "tensor", "Variable", "TensorType", "grad"] + list(_ops_all) + list(_ALIASES)


def tensor(name=None, dtype="float64", shape=None, *, ndim=None):
    """A symbolic array input of ``dtype`` and static ``shape`` (ints or None per axis).

    Give ``shape`` (e.g. ``(None, 784)``) or ``ndim`` (all axes unknown). ``TypeError`` for a
    bad dtype, a missing shape, a shape entry that is not an int or None, or an ``ndim`` that is
    not an int; ``ValueError`` for a negative ``ndim``.
    """
    try:
        dtype = _dtype_name(dtype)
    except TypeError as e:
        raise TypeError(f"tensor: {e}") from None
    if ndim is not None:
        if isinstance(ndim, (bool, _np.bool_)) or not isinstance(ndim, (int, _np.integer)):
            raise TypeError(f"tensor: ndim must be an int, got {ndim!r}")
        if ndim < 0:
            raise ValueError(f"tensor: ndim must be at least 0, got {ndim}")
    if shape is None:
        if ndim is None:
            raise TypeError("tensor: give shape=(...) (ints or None per axis) or ndim=")
        shape = (None,) * int(ndim)
    else:
        shape = static_shape(shape, "tensor: shape")
        if ndim is not None and ndim != len(shape):
            raise ValueError(f"tensor: ndim={ndim} does not match shape {shape}")
    return Variable(TensorType(dtype, shape), name=name)


def scalar(name=None, dtype="float64"):
    """A 0-d symbolic input."""
    return tensor(name, dtype, ())


def vector(name=None, dtype="float64", shape=(None,)):
    """A 1-d symbolic input (length known at run time unless ``shape`` says)."""
    if len(static_shape(shape, "vector: shape")) != 1:
        raise ValueError(f"vector: shape must have 1 axis, got {shape}")
    return tensor(name, dtype, shape)


def matrix(name=None, dtype="float64", shape=(None, None)):
    """A 2-d symbolic input."""
    if len(static_shape(shape, "matrix: shape")) != 2:
        raise ValueError(f"matrix: shape must have 2 axes, got {shape}")
    return tensor(name, dtype, shape)
