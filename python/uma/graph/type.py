"""Types of symbolic variables: a dtype plus a static shape.

A :class:`TensorType` is ``(dtype, shape)`` where ``dtype`` is a canonical dtype name
(``"float64"``, ``"int32"``, ...) and ``shape`` is a tuple with one entry per axis: an ``int``
when the length is known when the graph is built, ``None`` when it is only known at run time.

Broadcasting follows the PyTensor convention: an axis broadcasts only when its type says
its length is ``1``. An axis of unknown length (``None``) must match the other operands at
run time; a run-time length of 1 there is a ``ValueError`` rather than a silent broadcast,
which is what keeps gradients (summed over broadcast axes when the graph is built) correct.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "TensorType",
    "dtype_name",
    "np_dtype",
    "COMPUTE_DTYPES",
    "FLOAT_DTYPES",
    "is_float",
    "kind_of",
]

#: dtypes every compute op supports. Elementwise ops, ``where``, ``clip``, ``round`` and
#: ``astype`` take every dtype NumPy defines them on; the other ops take every dtype too,
#: except where their docstrings say (see :mod:`uma.graph.ops`).
COMPUTE_DTYPES = frozenset({"bool", "int32", "int64", "float32", "float64"})
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})

_ALL_DTYPES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
})


def dtype_name(dtype) -> str:
    """Canonical name of ``dtype``.

    Accepts a uma dtype, a NumPy dtype, a NumPy scalar type, Python ``bool/int/float/complex``
    or a string (``"float32"``, ``"f4"``). Raises ``TypeError`` for anything else.
    """
    if isinstance(dtype, str):
        if dtype in _ALL_DTYPES:
            return dtype
        if dtype in ("bool_", "bfloat16"):
            return "bool" if dtype == "bool_" else dtype
        try:
            name = np.dtype(dtype).name
        except TypeError:
            raise TypeError(f"data type {dtype!r} not understood") from None
    elif isinstance(dtype, np.dtype):
        name = dtype.name
    elif isinstance(dtype, type):
        try:
            name = np.dtype(dtype).name
        except TypeError:
            raise TypeError(f"data type {dtype!r} not understood") from None
    else:
        # uma.dtype (has .name) or anything NumPy understands (e.g. ml_dtypes.bfloat16).
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):
            try:
                name = np.dtype(dtype).name
            except TypeError:
                raise TypeError(f"data type {dtype!r} not understood") from None
    if name not in _ALL_DTYPES:
        raise TypeError(f"data type {name!r} is not supported by uma")
    return name


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype for a canonical dtype name; bfloat16 is ml_dtypes' (``TypeError`` naming
    the fix when ml_dtypes is not installed)."""
    try:
        return np.dtype(name)
    except TypeError:
        if name == "bfloat16":
            try:
                import ml_dtypes
            except ImportError:
                raise TypeError("dtype bfloat16 has no NumPy equivalent without ml_dtypes "
                                "(pip install ml_dtypes)") from None
            return np.dtype(ml_dtypes.bfloat16)
        raise TypeError(f"dtype {name} has no NumPy equivalent here") from None


def is_float(name: str) -> bool:
    return name in FLOAT_DTYPES


def kind_of(name: str) -> str:
    """'b', 'i', 'u', 'f' or 'c' (NumPy's kinds)."""
    if name == "bfloat16":
        return "f"
    return np.dtype(name).kind


def _norm_dim(d, what="shape"):
    if d is None:
        return None
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{what} entries must be ints or None, got {d!r}")
    d = int(d)
    if d < 0:
        raise ValueError(f"{what} entries must be >= 0 or None, got {d}")
    return d


def static_shape(shape, what="shape"):
    """``shape`` as a tuple of its entries (a tuple or list: one int or None per axis);
    ``TypeError`` naming ``what`` for anything else (an int is not a shape here)."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{what} must be a tuple of ints or None (one per axis), got {shape!r}")
    return tuple(shape)


class TensorType:
    """The type of a symbolic variable: ``dtype`` (canonical name) and static ``shape``.

    ``shape`` has one entry per axis: an int (known length) or ``None`` (known at run time).
    Two types are equal when dtype and shape are. ``TypeError`` for a bad dtype or shape entry.
    """

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtype_name(dtype)
        self.shape = tuple(_norm_dim(d) for d in static_shape(shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorType) and self.dtype == other.dtype and self.shape == other.shape

    def __hash__(self):
        return hash((self.dtype, self.shape))

    def __repr__(self):
        return f"TensorType({self.dtype}, {self.shape})"

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(dtype, self.shape)

    def is_compatible_shape(self, shape) -> bool:
        """True when a run-time ``shape`` fits this type (same ndim, known axes equal)."""
        return len(shape) == len(self.shape) and all(
            s is None or s == d for s, d in zip(self.shape, shape))

    def check_value_shape(self, shape, what="value"):
        """Raise ``TypeError`` (wrong ndim) or ``ValueError`` (a known axis differs)."""
        shape = tuple(shape)
        if len(shape) != len(self.shape):
            raise TypeError(f"{what}: expected {len(self.shape)}-d array, got {len(shape)}-d array of shape {shape}")
        for i, (s, d) in enumerate(zip(self.shape, shape)):
            if s is not None and s != d:
                raise ValueError(f"{what}: expected shape {_fmt_shape(self.shape)}, got {shape} (axis {i})")


def _fmt_shape(shape):
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
