"""uma dtypes: one canonical object per element type.

A ``uma.dtype`` compares equal to everything that names the same type: its NumPy
equivalent (``np.float32``, ``np.dtype("float32")``), its name (``"float32"``) and Python
types (``float`` is float64, ``int`` is int64, ``bool`` is bool, ``complex`` is complex128),
as NumPy resolves them. ``bfloat16`` maps to ``ml_dtypes.bfloat16`` where installed.
"""
from __future__ import annotations

import numpy as np

from . import _core

__all__ = ["dtype"]


class dtype:
    """An element type. ``uma.dtype(x)`` returns the canonical object for ``x``.

    Accepts a uma dtype, a NumPy dtype or scalar type, a Python type or a name string;
    raises TypeError ("data type ... not understood") for anything else.
    Attributes: ``name`` (str), ``itemsize`` (bytes), ``kind`` ('b', 'i', 'u', 'f', 'c').
    """

    __slots__ = ("name", "itemsize", "kind", "_code")

    def __new__(cls, obj):
        return _resolve(obj)

    def __repr__(self):
        return f"uma.{'bool_' if self.name == 'bool' else self.name}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self is other
        try:
            return _resolve(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return (dtype, (self.name,))

    def to_numpy(self):
        """The NumPy dtype (``ml_dtypes.bfloat16`` for bfloat16; ImportError without ml_dtypes)."""
        if self.name == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.name)


_by_name: dict[str, dtype] = {}
_by_code: list[dtype] = []
for _code, (_name, _size, _kind) in enumerate(_core._dtype_info()):
    _d = object.__new__(dtype)
    _d.name, _d.itemsize, _d.kind, _d._code = _name, _size, _kind, _code
    _by_name[_name] = _d
    _by_code.append(_d)
_by_name["bool_"] = _by_name["bool"]


def _resolve(obj) -> dtype:
    if isinstance(obj, dtype):
        return obj
    if isinstance(obj, str) and obj in _by_name:
        return _by_name[obj]
    if obj is None:
        raise TypeError("data type None not understood")
    if getattr(obj, "__name__", None) == "bfloat16" or str(obj) == "bfloat16":
        return _by_name["bfloat16"]
    try:
        npd = np.dtype(obj)
    except Exception:
        raise TypeError(f"data type {obj!r} not understood") from None
    if npd.name == "bfloat16":
        return _by_name["bfloat16"]
    if npd.byteorder == ">":
        raise TypeError(f"data type {obj!r} is not in native byte order")
    d = _by_name.get(npd.name)
    if d is None:
        raise TypeError(f"data type {obj!r} has no uma equivalent")
    return d


_core._register_dtypes(_by_code, dtype, _resolve)
