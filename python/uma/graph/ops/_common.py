"""Helpers shared by the op modules: the eager entry points, dtypes, weak Python scalars
(NEP 50), the run-time broadcast check, axes, and the dtype tests of gradients. Static result
shapes come from the core (``uma._core._result_shape``, ``uma._core._broadcast_shapes``).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ... import _core
from ..basic import Constant, Variable, as_variable, is_python_scalar
from ..type import _fmt_shape, is_float, kind_of, np_dtype

#: The elementwise ops of the op table (``include/uma/ops/table.h``), by name: per op its
#: ``arity``, dtype ``rule``, gradient kind ``grad`` (smooth, zero, none), ``numpy`` name and
#: ``doc``.
OP_TABLE = {row["name"]: row for row in _core._op_table()}


def _uma():
    import uma  # lazy: uma/__init__ imports this package while it initialises
    return uma


def _k():
    """The eager kernels (``uma._core``), called directly by ``perform``: the values are
    arrays, so the symbolic dispatch of ``uma``'s wrappers is not needed."""
    import uma
    return uma._core


AxisError = np.exceptions.AxisError


def _np_any_dtype(name):
    """The NumPy dtype for any uma dtype name (bfloat16 through ml_dtypes: ``np_dtype``)."""
    return np_dtype(name)


def _weak_constant(opname, value, dt: np.dtype):
    rule = OP_TABLE[opname]["rule"] if opname in OP_TABLE else None
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(value, dtype=dt)
    except OverflowError:
        if rule == "Comparison":  # NumPy 2 compares out-of-range Python ints exactly
            st = np.min_scalar_type(value)
            if st.kind == "O":  # beyond every integer dtype: compared as a float64
                st = np.dtype(np.float64)
            return Constant(np.asarray(value, dtype=np.result_type(dt, st)))
        if rule in ("TrueDivide", "Float") and dt.kind in "iub":
            # Integers run in a float loop (divide: float64; the float functions: the smallest
            # float holding the integer dtype), and NumPy converts the Python int to that loop's
            # dtype.
            ft = np.dtype(np.float64) if rule == "TrueDivide" else np.result_type(dt, np.float16)
            with np.errstate(over="ignore"):  # beyond the float's range: inf, as NumPy's loop
                return Constant(np.asarray(float(value), dtype=ft))
        raise OverflowError(f"{opname}: Python integer {value} out of bounds for {dt.name}") from None
    return Constant(arr)


def _as_inputs(opname, args, weak_ok=True):
    """Turn raw arguments into Variables; Python scalars become constants of the dtype NumPy 2
    gives them next to the other (strong) operands (NEP 50)."""
    strong, weak = [], []
    out = list(args)
    for k, a in enumerate(args):
        if isinstance(a, Variable):
            strong.append(a.dtype)
        elif is_python_scalar(a) and weak_ok:
            weak.append(k)
        else:
            out[k] = as_variable(a)
            strong.append(out[k].dtype)
    if weak:
        try:
            if "bfloat16" in strong:  # NumPy has no bfloat16: uma's NEP 50 rule, ml_dtypes' dtype
                dt = _np_any_dtype(_uma().result_type(*strong, *[args[k] for k in weak]).name)
            else:
                dt = np.result_type(*[np_dtype(d) for d in strong], *[args[k] for k in weak])
        except TypeError as e:
            raise TypeError(f"{opname}: {e}") from None
        for k in weak:
            out[k] = _weak_constant(opname, args[k], dt)
    return out


def _fmt(shape):
    return _fmt_shape(shape)


def _bcast_runtime(opname, static_shapes, shapes, whole=None):
    """The broadcast of the run-time ``shapes`` (the core's rule, ``uma._core._broadcast_shapes``:
    ``ValueError`` "<op>: operands could not be broadcast together with shapes ...") where every
    input broadcast along an axis declares that axis as length 1 in its static shape
    (``static_shapes``; PyTensor convention: only static length-1 axes broadcast), else
    ``ValueError`` naming the input, the axis and both shapes. ``whole``: the inputs' (static,
    run-time) shapes to quote there when ``shapes`` are their leading axes (matmul's batch axes,
    whose axis numbers are the whole shapes')."""
    out = _core._broadcast_shapes(opname, *shapes)
    n = len(out)
    for ax, t in enumerate(out):
        for k, (static, shape) in enumerate(zip(static_shapes, shapes)):
            j = ax - n + len(shape)  # the input's axis aligned on output axis ax
            if j >= 0 and shape[j] != t and static[j] != 1:
                quoted_static, quoted = whole[k] if whole is not None else (static, shape)
                raise ValueError(
                    f"{opname}: input {k} has run-time shape {tuple(quoted)} and would be broadcast "
                    f"along axis {j} to length {t}, but its type {_fmt(quoted_static)} does not declare "
                    f"that axis as length 1 (PyTensor convention: only static length-1 axes broadcast)")
    return out


def _norm_axis(opname, axis, ndim):
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{opname}: axis must be an int, got {axis!r}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim, opname)
    return a % ndim if ndim else a


def _norm_axes(opname, axis, ndim):
    """None -> None; int or sequence -> sorted tuple of non-negative axes."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        axes = [_norm_axis(opname, a, ndim) for a in axis]
    else:
        axes = [_norm_axis(opname, axis, ndim)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{opname}: duplicate value in 'axis': {axis!r}")
    return tuple(sorted(axes))


def _ufunc_axis(a, axis):
    """NumPy's ufunc reductions accept an int axis 0 or -1 on a 0-d array (as None)."""
    if a.ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1):
        return None
    return axis


def _prod(dims):
    return math.prod(dims)


def _diff(dtype):
    """Whether values of ``dtype`` have gradients: the float and complex dtypes."""
    return is_float(dtype) or kind_of(dtype) == "c"


@functools.lru_cache(maxsize=None)
def _promote(*dts):
    """NumPy 2 promotion of dtype names (bfloat16 as ml_dtypes promotes it)."""
    u = _uma()
    r = dts[0]
    for d in dts[1:]:
        r = u.promote_types(r, d).name
    return r

