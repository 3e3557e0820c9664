"""Filtering values into a declared type (function inputs and ``set_value``).

The rules are DESIGN.md's "casting into a declared dtype" decision:

- an array (NumPy, uma, DLPack/buffer producer) or a NumPy scalar is *strong*: converted when
  ``np.can_cast(src, dst, "safe")``, otherwise ``TypeError`` (unless ``allow_downcast``);
- Python scalars and (nested) lists of them are *weak* (NEP 50): converted when their kind
  fits (bool < int < float < complex) and the value is in range, otherwise ``TypeError``;
- the ndim must match (``TypeError``) and every static axis length too (``ValueError``).

:func:`value_type` reads the dtype and shape of a backend's native value (a NumPy, CuPy, JAX
or PyTorch array, a ``uma.Array`` on any device) without converting it: what compiled
functions check the values a linker hands back (and the arguments its ``is_native`` accepts)
against before they are used or stored.
"""
from __future__ import annotations

import operator

import math

import numpy as np

from ..graph.basic import Variable, is_python_scalar
from ..graph.type import _ALL_DTYPES, TensorType, dtype_name, kind_of, np_dtype

__all__ = ["HOST", "filter_host", "can_cast_safe", "value_type", "native_dtype_name"]

#: The residency of host memory: where ``uma.Array`` s on the CPU live.
HOST = "cpu"

_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _uma():
    import uma
    return uma


# dtype object (NumPy, uma, PyTorch, ...) -> uma's name for it, or a description of a dtype
# uma lacks (NumPy's dtype.name costs microseconds; a dict lookup a tenth of one).
_NATIVE_DTYPE_NAMES: dict = {}


def native_dtype_name(dt) -> str:
    """uma's name for the dtype object ``dt`` of an array of any library: a NumPy dtype (CuPy
    and JAX use them too; ``ml_dtypes.bfloat16`` is ``"bfloat16"``), a ``uma.dtype``, a
    ``torch.dtype`` (``torch.float32`` -> ``"float32"``), an MLX ``Dtype`` (``mx.bool_`` ->
    ``"bool"``) or a name string. A dtype uma does
    not have comes back as its own text (``">f8"`` for a byte-swapped float64, ``"object"``),
    which equals no uma dtype name."""
    try:
        name = _NATIVE_DTYPE_NAMES.get(dt)
    except TypeError:  # unhashable
        name = None
        cache = False
    else:
        cache = True
    if name is not None:
        return name
    if isinstance(dt, np.dtype):
        name = dt.name if dt.isnative else dt.str
    else:
        name = getattr(dt, "name", None)  # uma.dtype
        if not isinstance(name, str):
            name = str(dt)
            for prefix in ("torch.", "mlx.core."):  # str(torch.float32), str(mx.float32)
                if name.startswith(prefix):
                    name = name[len(prefix):]
            if name == "bool_":  # mx.bool_
                name = "bool"
        if name not in _ALL_DTYPES:
            try:
                name = np.dtype(name).name
            except (TypeError, ValueError):
                pass
    if cache and len(_NATIVE_DTYPE_NAMES) < 1024:
        _NATIVE_DTYPE_NAMES[dt] = name
    return name


def value_type(value):
    """``(dtype name, shape tuple)`` of an array of any library, read from its ``dtype`` and
    ``shape`` attributes (nothing is converted or copied; the ndim is ``len(shape)``), or None
    when it has no ``dtype`` or no ``shape`` of ints. The dtype name is
    :func:`native_dtype_name`'s."""
    cls = value.__class__
    if cls is np.ndarray:
        return native_dtype_name(value.dtype), value.shape
    if cls is _uma().Array:
        return value.dtype.name, value.shape
    try:
        dt = value.dtype
        shape = value.shape
    except AttributeError:
        return None
    try:
        shape = tuple(operator.index(d) for d in shape)  # torch.Size, lists, NumPy ints
    except TypeError:
        return None
    return native_dtype_name(dt), shape


def can_cast_safe(src: str, dst: str) -> bool:
    """``np.can_cast(src, dst, "safe")`` on canonical dtype names (uma's rule for bfloat16)."""
    try:
        return bool(np.can_cast(np.dtype(src), np.dtype(dst), "safe"))
    except TypeError:
        return bool(_uma().can_cast(src, dst, casting="safe"))


def _python_numbers(value):
    """The elements of ``value`` (a Python number or a nested list/tuple of them) when every one
    is a Python int, float, complex or bool, else None."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (int, float, complex)):  # bool is an int
            out.append(v)
        else:
            return None
    return out


def _wrapped_ints(value, dt):
    """Python ints ``value`` (a nested list) as an array of integer dtype ``dt``, each converted
    as a C cast converts: modulo 2**bits, two's complement for a signed dtype."""
    bits = 8 * dt.itemsize
    mask, signed = (1 << bits) - 1, dt.kind == "i"

    def one(v):
        v &= mask
        return v - (1 << bits) if signed and v >> (bits - 1) else v

    return np.vectorize(one, otypes=[object])(np.asarray(value, dtype=object)).astype(dt)


def _weak_to_numpy(value, dst: str, allow_downcast: bool, what: str, hint: str):
    try:
        probe = np.asarray(value)
    except ValueError as e:
        raise ValueError(f"{what}: cannot convert {type(value).__name__} to an array: {e}") from None
    if probe.size == 0 and probe.dtype == np.float64:
        return np.empty(probe.shape, dtype=np_dtype(dst))  # [] (NumPy's float64 default) is any dtype's
    # Python ints NumPy could not type: objects (beyond 64 bits), or floats for an integer
    # dtype (int64 and uint64 values mixed)
    suspect = probe.dtype.kind == "O" or (probe.dtype.kind == "f" and kind_of(dst) in "iu")
    numbers = _python_numbers(value) if suspect else None
    big = numbers is not None and any(type(v) is int and not -2**63 <= v < 2**64 for v in numbers)
    if numbers is not None and (big or (numbers and all(type(v) is int for v in numbers)
                                        and probe.dtype.kind != "i" and probe.dtype.kind != "u")):
        # Python ints NumPy keeps as objects (beyond 64 bits) or as floats (int64 and uint64 mixed):
        # out of range for an integer dtype unless each fits; a float or complex dtype takes
        # them while they are finite there (np.asarray(value, dtype=dst)).
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        dt = np_dtype(dst)
        if kind_of(dst) in "fc":
            try:
                with np.errstate(all="ignore"):
                    arr = np.asarray(value, dtype=dt)
            except OverflowError:
                if not allow_downcast:
                    raise TypeError(f"{what}: value {shown} is out of range for {dst}{hint}") from None
                with np.errstate(all="ignore"):  # the float conversion NumPy refuses gives inf
                    arr = np.asarray(np.vectorize(lambda v: float(v) if abs(v) < 2**1024 else
                                                  (math.inf if v > 0 else -math.inf), otypes=[object])(
                        np.asarray(value, dtype=object)).astype(np.float64), dtype=dt)
            ints = np.vectorize(lambda v: type(v) is int, otypes=[bool])(np.asarray(value, dtype=object))
            if not allow_downcast and np.any(ints & ~np.isfinite(arr)):
                raise TypeError(f"{what}: value {shown} is out of range for {dst}{hint}")
            return arr
        if kind_of(dst) in "iu" and (big or all(type(v) is int for v in numbers)):
            # int64 and uint64 values mixed (NumPy's probe is float64, which rounds them): each
            # converted exactly where it fits dst, wrapped as a C cast with allow_downcast
            if not big:
                try:
                    return np.asarray(value, dtype=dt)
                except OverflowError:
                    if allow_downcast:
                        return _wrapped_ints(value, dt)
            raise TypeError(f"{what}: value {shown} is out of range for {dst}"
                            + (" (beyond 64 bits)" if big else hint))
    if probe.dtype.kind not in _KIND_RANK:
        raise TypeError(f"{what}: cannot convert a {type(value).__name__} of {probe.dtype} values to {dst}")
    dt = np_dtype(dst)
    if allow_downcast:
        with np.errstate(all="ignore"):
            return probe.astype(dt)
    src_kind, dst_kind = probe.dtype.kind, kind_of(dst)
    if _KIND_RANK[src_kind] > _KIND_RANK[dst_kind]:
        kind = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}[src_kind]
        raise TypeError(f"{what}: a Python {kind} cannot be converted to {dst} without losing "
                        f"information (weak scalar rule, NEP 50){hint}")
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(value, dtype=dt)
    except OverflowError:
        raise TypeError(f"{what}: value {value!r} is out of range for {dst}{hint}") from None
    if dst_kind in "fc" and src_kind in "iufc":
        bad = np.isinf(arr) & np.isfinite(probe.astype(np.complex128) if src_kind == "c" else probe.astype(np.float64))
        if np.any(bad):
            raise TypeError(f"{what}: value {value!r} is out of range for {dst}{hint}")
    return arr


def filter_host(value, type: TensorType, *, allow_downcast=False, what="value", copy=False,
                hint=""):
    """``value`` as a host ``uma.Array`` of ``type``'s dtype, checked against its shape.

    Zero-copy when ``value`` already is an array of that dtype (unless ``copy=True``, which
    guarantees the result owns fresh memory). Errors: ``TypeError`` for a dtype that cannot
    be cast safely or a wrong ndim (``what`` names the value), ``ValueError`` for a static
    axis length that differs or a ragged list.
    """
    uma = _uma()
    dst = type.dtype
    if isinstance(value, Variable):
        raise TypeError(f"{what}: expected a value, got the symbolic variable {value!r}")
    copied = False
    cls = value.__class__  # (`type` is this function's parameter)
    if cls is np.ndarray or cls is uma.Array:
        # Fast path (every call of a compiled function): share the array's memory, compare
        # dtype names through uma's dtype objects (NumPy's dtype.name is slow to build).
        try:
            arr = value if cls is uma.Array else uma.asarray(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: unsupported dtype {value.dtype} (expected {dst}): {e}") from None
        src = arr.dtype.name
        if src == dst:
            type.check_value_shape(arr.shape, what)
            return uma.array(arr) if copy else arr
    if isinstance(value, (uma.Array, np.ndarray)) or isinstance(value, np.generic):
        arr = value if not isinstance(value, np.generic) else np.asarray(value)
        strong = True
    elif is_python_scalar(value) or isinstance(value, (list, tuple)):
        out = uma.asarray(_weak_to_numpy(value, dst, allow_downcast, what, hint))
        strong = False
        copied = True
    else:
        if isinstance(value, bytes):  # NumPy reads bytes as a string (dtype 'S'), not as numbers
            raise TypeError(f"{what}: cannot convert bytes to an array of {dst} (NumPy reads bytes as a "
                            f"string, dtype |S{len(value)}, which uma has no dtype for; for the bytes as "
                            f"uint8 values pass uma.asarray(value) or a memoryview)")
        try:
            arr = uma.asarray(value)
        except (TypeError, BufferError) as e:
            # Not an array-like: named with the input. Other errors (a RuntimeError or
            # MemoryError raised by the object's own __array__, RecursionError) propagate.
            raise TypeError(f"{what}: cannot convert {type_name(value)} to an array ({e})") from None
        strong = True
    if strong:
        try:
            src = dtype_name(arr.dtype)
        except TypeError:
            raise TypeError(f"{what}: unsupported dtype {arr.dtype} (expected {dst})") from None
        if src != dst:
            if not allow_downcast and not can_cast_safe(src, dst):
                raise TypeError(f"{what}: cannot cast {src} to {dst} safely (NumPy 'safe' casting); "
                                f"cast the value first{hint}")
            out = uma.asarray(arr, dtype=dst)
            copied = True
        else:
            out = arr if isinstance(arr, uma.Array) else uma.asarray(arr)
    type.check_value_shape(tuple(out.shape), what)
    if copy and not copied:
        out = uma.array(out)
    return out


def type_name(v):
    return type(v).__name__
