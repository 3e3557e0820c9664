"""Array API functions composed of the other ops: each builds a graph of existing ops, so every
backend runs it as it runs those ops, ``uma.grad`` differentiates it, and no dispatch table
needs a row for it. Signatures, dtypes and errors are those of the eager functions of the same
name (``uma.flip``, ``uma.roll``, ...; Array API standard 2024.12); lengths known only at run
time are allowed wherever the result's shape does not depend on values. Each function that
builds nodes is :func:`~uma.graph.basic.composed`: an error of building its graph or of its
run-time shape checks names it (``vecdot: ...``), not the op inside it that found the mismatch.

Positions along an axis are computed in the graph (``_positions``: a cumulative sum of ones),
so ``roll``, ``repeat``, ``tile``, ``tril`` and ``triu`` work on axes of unknown length.
The functions whose result's shape depends on values (``nonzero``, ``unique_*``) have no
symbolic form: they are eager only and raise TypeError on a variable. ``sort``, ``argsort``
and ``searchsorted`` (:mod:`.sorting`) and ``take_along_axis`` (:mod:`.indexing`) are graph
ops of their own.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..._array_api import _along, _axes, _moveaxis_order, _roll_shifts
from ..._array_api import _int as _eager_int
from ..basic import Variable, as_variable, composed
from ..type import dtype_name
from ._common import _norm_axis

__all__ = [
    "cumulative_sum", "cumulative_prod", "count_nonzero", "diff", "flip", "moveaxis", "roll", "repeat", "tile",
    "unstack", "matrix_transpose", "tensordot", "vecdot", "broadcast_arrays", "meshgrid", "tril", "triu",
    "linspace", "can_cast", "finfo", "iinfo", "isdtype", "result_type", "isin",
]


def _uma():
    import uma
    return uma


def _int(v, what, opname):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{opname}: {what} must be an int, got {v!r}")
    return int(v)


def _positions(x, axis):
    """The int64 vector 0, 1, ..., n-1 for the length n of ``x`` along ``axis`` (also when n is
    known only at run time)."""
    others = tuple(i for i in range(x.ndim) if i != axis)
    z = zeros_like(x, dtype="int64")
    ones = (sum(z, axis=others) if others else z) + 1  # length n also when another axis is empty
    return cumsum(ones) - 1


def _length(x, axis):
    """The length of ``x`` along ``axis`` as a 0-d int64 variable (or the static int)."""
    n = x.shape[axis]
    return n if n is not None else sum(ones_like(_positions(x, axis)))


def _cumulative(opname, base, initial, x, axis, dtype, include_initial):
    x = as_variable(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{opname}: axis is required for an array of {x.ndim} dimensions")
        if x.ndim == 0:
            x = reshape(x, (1,))
        axis = 0
    a = _norm_axis(opname, axis, x.ndim)
    if dtype is not None:
        x = astype(x, dtype)
    out = base(x, axis=a)
    if dtype is not None:
        out = astype(out, dtype)
    if include_initial:
        first = full_like(sum(out, axis=a, keepdims=True), initial, dtype=out.dtype)  # length 1, also after 0
        out = concatenate([first, out], axis=a)
    return out


@composed
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sums along ``axis`` (Array API standard, cumulative_sum; as ``uma.cumulative_sum``:
    ``axis`` may be None only for a 1-D input, ``dtype`` converts first, ``include_initial``
    puts a 0 first)."""
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


@composed
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative products along ``axis`` (Array API standard, cumulative_prod; as
    :func:`cumulative_sum`, with a 1 first for ``include_initial``)."""
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


@composed
def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of nonzero elements along ``axis`` (Array API standard, count_nonzero): int64."""
    x = as_variable(x)
    return sum(astype(not_equal(x, zeros_like(x)), "int64"), axis=axis, keepdims=keepdims)


@composed
def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th discrete difference along ``axis`` (Array API standard, diff; bool uses ``!=``
    as NumPy does); ``prepend``/``append`` are joined first (0-d ones broadcast). ValueError
    for a negative ``n`` or a 0-d ``x``."""
    x = as_variable(x)
    if x.ndim == 0:
        raise ValueError("diff: x must have at least 1 axis, got a 0-d array")
    n = _int(n, "n", "diff")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    a = _norm_axis("diff", axis, x.ndim)
    if n == 0:
        return x
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        zero_slab = zeros_like(sum(x, axis=a, keepdims=True), dtype=x.dtype)  # x's shape, length 1 on the axis
        if extra is x:
            e = x
        elif type(extra) in (bool, int, float, complex):  # a weak scalar, as in arithmetic
            e = add(zero_slab, extra)
        else:
            e = as_variable(extra)
            if e.ndim == 0:
                e = add(astype(zero_slab, e.dtype), e)
        parts.append(e)
    y = parts[0] if len(parts) == 1 else concatenate(parts, axis=a)
    sub = not_equal if y.dtype == "bool" else subtract
    for _ in range(n):
        y = sub(getitem(y, _along(y.ndim, a, slice(1, None))), getitem(y, _along(y.ndim, a, slice(None, -1))))
    return y


@composed
def isin(x1, x2, /, *, invert=False):
    """Whether each element of ``x1`` equals some element of ``x2`` (Array API standard 2025.12,
    isin; the rule of the eager ``uma.isin``): ``any(equal(x1[..., None], ravel(x2)), -1)``, a
    bool variable of ``x1``'s shape (``not`` with ``invert=True``). One of ``x1``, ``x2`` may be
    a Python int (TypeError for another non-array). Memory: the graph holds x1.size * x2.size
    comparisons at once."""
    u = _uma()
    array1, array2 = isinstance(x1, (Variable, u.Array)), isinstance(x2, (Variable, u.Array))
    if not array1 and not array2:
        raise TypeError("isin: at least one of x1 and x2 must be an array")
    if not array2:
        found = u.equal(as_variable(x1), _eager_int(x2, "x2", "isin"))
    elif not array1:
        found = u.any(u.equal(as_variable(x2), _eager_int(x1, "x1", "isin")))
    else:
        a, b = as_variable(x1), as_variable(x2)
        found = u.any(u.equal(u.expand_dims(a, -1), u.reshape(b, (-1,))), axis=-1)
    return u.logical_not(found) if invert else found


@composed
def flip(x, /, *, axis=None):
    """``x`` with the order of its elements reversed along ``axis`` (None: every axis; Array API
    standard, flip)."""
    x = as_variable(x)
    axes = _axes(axis, x.ndim, "flip")
    index = [slice(None)] * x.ndim
    for a in axes:
        index[a] = slice(None, None, -1)
    return getitem(x, tuple(index))


@composed
def moveaxis(x, source, destination, /):
    """``x`` with axes ``source`` moved to ``destination`` (Array API standard, moveaxis)."""
    x = as_variable(x)
    return permute_dims(x, _moveaxis_order(x.ndim, source, destination))


@composed
def roll(x, /, shift, *, axis=None):
    """``x`` shifted by ``shift`` along ``axis``, wrapping around (Array API standard, roll):
    ``axis`` None rolls the flattened array; otherwise ints or tuples of one length."""
    x = as_variable(x)
    if axis is None:
        flat = reshape(x, (-1,))
        return _reshape_like(roll(flat, _int(shift, "shift", "roll"), axis=0), x)
    total = _roll_shifts(x.ndim, shift, axis)
    out = x
    for a, s in total.items():
        n = x.shape[a]
        if n is not None:
            s = s % n if n else 0
            if s:
                out = concatenate([getitem(out, _along(x.ndim, a, slice(n - s, None))),
                                   getitem(out, _along(x.ndim, a, slice(None, n - s)))], axis=a)
        elif s:  # the length is known at run time: gather positions (i - s) mod n
            out = take(out, remainder(_positions(x, a) - s, _length(x, a)), axis=a)
    return out


@composed
def repeat(x, repeats, /, *, axis=None):
    """Each element repeated ``repeats`` (a non-negative int) times along ``axis`` (None: the
    flattened array; Array API standard, repeat). An array of counts makes a shape that depends
    on values: ``TypeError`` here (the eager ``uma.repeat`` takes one)."""
    x = as_variable(x)
    r = _int(repeats, "repeats (a per-element array is eager only)", "repeat")
    if r < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {r}")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    a = _norm_axis("repeat", axis, x.ndim)
    pos = expand_dims(_positions(x, a), 1) + zeros((1, r), dtype="int64")
    return take(x, reshape(pos, (-1,)), axis=a)


@composed
def tile(x, repetitions, /):
    """``x`` repeated ``repetitions[i]`` times along each axis, shapes padded with leading 1s
    (Array API standard, tile)."""
    x = as_variable(x)
    reps = tuple(_int(r, "each repetition", "tile")
                 for r in (repetitions if isinstance(repetitions, (tuple, list)) else (repetitions,)))
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {repetitions!r}")
    d = builtins.max(x.ndim, len(reps))
    reps = (1,) * (d - len(reps)) + reps
    for _ in range(d - x.ndim):
        x = expand_dims(x, 0)
    for a, r in enumerate(reps):
        if r != 1:
            pos = zeros((r, 1), dtype="int64") + expand_dims(_positions(x, a), 0)
            x = take(x, reshape(pos, (-1,)), axis=a)
    return x


@composed
def unstack(x, /, *, axis=0):
    """The arrays ``x[..., i, ...]`` along ``axis`` (Array API standard, unstack), a tuple: the
    axis's length must be static (``ValueError`` otherwise)."""
    x = as_variable(x)
    a = _norm_axis("unstack", axis, x.ndim)
    n = x.shape[a]
    if n is None:
        raise ValueError(f"unstack: axis {axis} of {x} has a length known only at run time; a tuple needs it "
                         f"when the graph is built (declare it in the shape)")
    return tuple(getitem(x, _along(x.ndim, a, i)) for i in range(n))


@composed
def matrix_transpose(x, /):
    """The last two axes swapped (Array API standard, matrix_transpose); ``ValueError`` for fewer
    than 2 axes."""
    x = as_variable(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 axes, got {x.ndim}")
    return permute_dims(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


@composed
def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over the last ``axes`` axes of ``x1`` and the first of ``x2`` (an int), or
    over the paired axes of ``axes = (axes1, axes2)`` (Array API standard, tensordot): shape
    ``x1``'s free axes then ``x2``'s; dtype of the multiplication."""
    x1, x2 = as_variable(x1), as_variable(x2)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        k = int(axes)
        if k < 0 or k > builtins.min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot: axes={k} is out of range for inputs of {x1.ndim} and {x2.ndim} axes")
        a1, a2 = list(range(x1.ndim - k, x1.ndim)), list(range(k))
    else:
        a1, a2 = ([_norm_axis("tensordot", a, v.ndim) for a in (ax if isinstance(ax, (tuple, list)) else (ax,))]
                  for ax, v in zip(axes, (x1, x2)))
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes {axes!r} pair {len(a1)} axes of x1 with {len(a2)} of x2")
    for i, j in zip(a1, a2):
        _same_length("tensordot", x1.shape[i], x2.shape[j])
    f1 = [i for i in range(x1.ndim) if i not in a1]
    f2 = [i for i in range(x2.ndim) if i not in a2]
    # x1 as (free1..., 1 per free2, contracted...), x2 as (1 per free1, free2..., contracted...)
    y1 = permute_dims(x1, tuple(f1 + a1))
    for _ in f2:
        y1 = expand_dims(y1, len(f1))
    y2 = permute_dims(x2, tuple(f2 + a2))
    for _ in f1:
        y2 = expand_dims(y2, 0)
    prod = multiply(y1, y2)
    k = len(a1)
    # summed in the product's dtype, as NumPy's tensordot (bool: any; integers wrap)
    return astype(sum(prod, axis=tuple(range(prod.ndim - k, prod.ndim))), prod.dtype) if k else prod


def _same_length(opname, m, n):
    """A contracted axis's lengths must be equal: ``ValueError`` when the static lengths differ,
    or when one is a static 1 and the other is not (the product would broadcast it, which
    NumPy's contraction never does)."""
    if (m is not None and n is not None and m != n) or ((m == 1) != (n == 1)):
        raise ValueError(f"{opname}: the contracted axes have lengths {m} and {n} (None: known at run time); "
                         f"they must be equal (declare both lengths when one of them is 1)")


@composed
def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis``, ``sum(conj(x1) * x2)`` (Array API standard,
    vecdot), broadcasting the other axes."""
    x1, x2 = as_variable(x1), as_variable(x2)
    a1, a2 = _norm_axis("vecdot", axis, x1.ndim), _norm_axis("vecdot", axis, x2.ndim)
    _same_length("vecdot", x1.shape[a1], x2.shape[a2])
    prod = multiply(conj(x1) if x1.dtype.startswith("complex") else x1, x2)
    return astype(sum(prod, axis=axis), prod.dtype)  # in the product's dtype, as the eager vecdot


@composed
def broadcast_arrays(*arrays):
    """The inputs broadcast to their common shape (Array API standard, broadcast_arrays): a
    list, each with its own dtype."""
    xs = [as_variable(a) for a in arrays]
    if len(xs) <= 1:
        return xs
    mask = zeros_like(xs[0], dtype="bool")
    for x in xs[1:]:
        mask = logical_or(mask, zeros_like(x, dtype="bool"))
    return [where(mask, x, x) for x in xs]


@composed
def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices from 1-D arrays (Array API standard, meshgrid): ``indexing`` "xy"
    (the first two axes swapped) or "ij"; a list of arrays of one shape."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [as_variable(a) for a in arrays]
    for x in xs:
        if x.ndim != 1:
            raise ValueError(f"meshgrid: every input must be 1-D, got {x.ndim} axes")
    n = len(xs)
    out = []
    for i, x in enumerate(xs):
        at = (1 - i if i < 2 else i) if indexing == "xy" and n >= 2 else i
        shape = [1] * n
        shape[at] = -1
        out.append(reshape(x, tuple(shape)))
    return broadcast_arrays(*out)


def _triangle(opname, x, k, keep):
    x = as_variable(x)
    if x.ndim < 2:
        raise ValueError(f"{opname}: x must have at least 2 axes, got {x.ndim}")
    k = _int(k, "k", opname)
    rows = expand_dims(_positions(x, x.ndim - 2), 1)
    cols = expand_dims(_positions(x, x.ndim - 1), 0)
    return where(keep(cols - rows, k), x, zeros_like(x))


@composed
def tril(x, /, *, k=0):
    """``x`` with the elements above diagonal ``k`` of its last two axes zeroed (Array API
    standard, tril)."""
    return _triangle("tril", x, k, lambda d, k: less_equal(d, k))


@composed
def triu(x, /, *, k=0):
    """``x`` with the elements below diagonal ``k`` of its last two axes zeroed (Array API
    standard, triu)."""
    return _triangle("triu", x, k, lambda d, k: greater_equal(d, k))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (Array API standard, linspace): a
    constant, computed by the eager ``uma.linspace``."""
    return asarray(_uma().linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint))


def _dtype_of(v):
    """A variable's dtype name; anything else as the eager dtype functions take it."""
    return dtype_name(v.dtype) if isinstance(v, Variable) else v


def can_cast(from_, to, /):
    """Whether ``from_`` (a dtype, array or variable) casts to ``to`` by the promotion rules
    (Array API standard, can_cast)."""
    return _uma().can_cast(_dtype_of(from_), to)


def finfo(type, /):
    """Machine limits of a floating dtype, array or variable (Array API standard, finfo)."""
    return _uma().finfo(_dtype_of(type))


def iinfo(type, /):
    """Machine limits of an integer dtype, array or variable (Array API standard, iinfo)."""
    return _uma().iinfo(_dtype_of(type))


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (Array API standard, isdtype)."""
    return _uma().isdtype(_dtype_of(dtype), kind)


def result_type(*arrays_and_dtypes):
    """The dtype the promotion rules give (Array API standard, result_type); variables count by
    their dtype."""
    return _uma().result_type(*[_dtype_of(a) for a in arrays_and_dtypes])


# The other op modules' names, used only when a graph is built (imported last: see the package).
from .convert import astype  # noqa: E402
from .creation import asarray, full_like, ones_like, zeros, zeros_like  # noqa: E402
from .cumulative import cumprod, cumsum  # noqa: E402
from .elemwise import (add, greater_equal, less_equal, logical_or, multiply, not_equal, remainder,  # noqa: E402
                       subtract)
from .indexing import getitem, take  # noqa: E402
from .join import concatenate  # noqa: E402
from .reduce import sum  # noqa: E402
from .select import where  # noqa: E402
from .unary import conj  # noqa: E402
from .shape import _reshape_like, expand_dims, reshape  # noqa: E402
from .shape import transpose as permute_dims  # noqa: E402
