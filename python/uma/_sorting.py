"""The sorting, set and searching functions of the Python Array API standard (2025.12):
``sort``, ``argsort``, ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``,
``nonzero`` and ``searchsorted``.

Each is one C++ op (``src/ops/sorting.cpp``, ``src/ops/set.cpp``; host kernels in
``src/kernels/cpu/sort.cpp``, cuda kernels in ``src/kernels/cuda/sort.cu`` on CUB's segmented
radix sort); this module gives them the standard's signatures, result types
and docstrings. The order is NumPy's (Note [Sort order] in ``sort.cpp``): bool false before
true, integers and floats by value, ``-0.0`` and ``0.0`` equal, NaN after every number (first
when descending), complex numbers lexicographically (real part, then imaginary part) with
NumPy's NaN classes ``[R + Rj, R + nanj, nan + Rj, nan + nanj]``. They run eagerly on the
array's device, cpu or cuda, with the same order and results (on cuda every sort is stable;
``unique_*`` and ``nonzero`` wait once for their count).
"""
from __future__ import annotations

import operator

from typing import NamedTuple

from . import _api, _core
from ._array_api import _array

Array = _core.Array

__all__ = [
    "sort", "argsort", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "nonzero", "searchsorted",
    "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult",
]


class UniqueAllResult(NamedTuple):
    """The result of ``unique_all`` (Array API standard, unique_all)."""
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """The result of ``unique_counts`` (Array API standard, unique_counts)."""
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """The result of ``unique_inverse`` (Array API standard, unique_inverse)."""
    values: Array
    inverse_indices: Array


def _axis(axis, name):
    """``axis`` as a Python int: the standard's sort, argsort take one axis (no None)."""
    try:
        if isinstance(axis, bool):
            raise TypeError
        return operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {type(axis).__name__} {axis!r}") from None


def _flag(value, what, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: {what} must be a bool, got {type(value).__name__} {value!r}")
    return value


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """A sorted copy of ``x`` along ``axis`` (Array API standard, sort; numpy.sort): ``x``'s
    dtype and shape, every uma dtype (complex: NumPy's lexicographic order). Ascending: NaN
    last; ``descending=True``: the reverse order, NaN first. ``stable=True`` (the default) keeps
    equal elements (``-0.0`` and ``0.0`` among them) in their original order, in both
    directions; ``stable=False`` may not (a faster unstable sort). AxisError (an IndexError and
    a ValueError, numpy.exceptions.AxisError) for ``axis`` outside [-ndim, ndim), a 0-d ``x``
    included; TypeError for a non-integer axis or a non-bool flag. On a cuda array: the same
    result, always stable (CUB's segmented radix sort)."""
    return _core.sort(_array(x, "sort"), axis=_axis(axis, "sort"), descending=_flag(descending, "descending", "sort"),
                      stable=_flag(stable, "stable", "sort"))


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The int64 positions along ``axis`` that sort ``x`` (Array API standard, argsort;
    numpy.argsort): ``x``'s shape; ``take_along_axis(x, argsort(x, axis=a), axis=a)`` is
    ``sort(x, axis=a)`` with the same ``descending``. Order, stability and errors as ``sort``:
    a stable descending argsort lists equal elements in their original order (as
    array-api-strict's ``flip(argsort(flip(x)))``), NaNs first."""
    return _core.argsort(_array(x, "argsort"), axis=_axis(axis, "argsort"),
                         descending=_flag(descending, "descending", "argsort"),
                         stable=_flag(stable, "stable", "argsort"))


def _eager_only(x, name):
    """``x`` as an array for ``name``, one of the functions whose result's shape depends on the
    values (``unique_*``, ``nonzero``): they are not differentiable and have no symbolic form,
    so a symbolic variable is a TypeError naming the function."""
    if _api._symbolic_type is not None and isinstance(x, _api._symbolic_type):
        raise TypeError(f"{name}: no symbolic form (the shape of its result depends on the values of x, "
                        f"and it has no gradient); it is eager only: call it on an array, e.g. on the "
                        f"output of a compiled function")
    return _array(x, name)


def _unique(x, name, indices, inverse, counts):
    return _core._unique(_eager_only(x, name), indices, inverse, counts, name)


def unique_all(x, /):
    """The unique elements of ``x`` flattened (C order) with their first indices, the inverse
    and the counts (Array API standard, unique_all): ``UniqueAllResult(values, indices,
    inverse_indices, counts)``. ``values``: 1-d, ``x``'s dtype, ascending (the standard leaves
    the order open; uma sorts, as ``numpy.unique``); ``indices``: int64, the first occurrence of
    each value in the flattened ``x``; ``inverse_indices``: int64 of ``x``'s shape,
    ``values[inverse_indices]`` equals ``x``; ``counts``: int64. Equality is ``==``: ``-0.0`` and
    ``0.0`` are one value (the one occurring first is kept), each NaN and each complex with a
    NaN part is its own value with a count of 1 (the standard; NumPy 2's
    ``equal_nan=False``). A 0-d ``x`` is one element. Runs on the array's device (one wait
    for the number of values on a cuda device). Eager only, as every ``unique_*`` function:
    the result's shape depends on the values, so a symbolic variable is a TypeError."""
    v, i, inv, c = _unique(x, "unique_all", True, True, True)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x, /):
    """``UniqueCountsResult(values, counts)`` of ``x`` flattened (Array API standard,
    unique_counts): the ``values`` and ``counts`` of ``unique_all``. Eager only (TypeError for a
    symbolic variable)."""
    v, _, _, c = _unique(x, "unique_counts", False, False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /):
    """``UniqueInverseResult(values, inverse_indices)`` of ``x`` (Array API standard,
    unique_inverse): the ``values`` and ``inverse_indices`` (int64, ``x``'s shape) of
    ``unique_all``. Eager only (TypeError for a symbolic variable)."""
    v, _, inv, _ = _unique(x, "unique_inverse", False, True, False)
    return UniqueInverseResult(v, inv)


def unique_values(x, /):
    """The unique elements of ``x`` flattened (Array API standard, unique_values): the
    ``values`` of ``unique_all`` (1-d, ``x``'s dtype, ascending; NaNs each distinct, ``-0.0``
    and ``0.0`` one value). Eager only (TypeError for a symbolic variable)."""
    return _unique(x, "unique_values", False, False, False)[0]


def nonzero(x, /):
    """The indices of the non-zero elements of ``x`` (Array API standard, nonzero;
    numpy.nonzero): a tuple of ``x.ndim`` int64 arrays of one length (the count), in C order.
    NaN is non-zero; a complex element is non-zero when either part is; a bool element when
    True. ValueError for a 0-d ``x`` (the standard requires one or more dimensions). Runs on
    the array's device (one wait for the count on a cuda device). Eager only: the result's
    length depends on the values, so a symbolic variable is a TypeError naming ``nonzero``."""
    return _core.nonzero(_eager_only(x, "nonzero"))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """The int64 indices at which inserting each element of ``x2`` into the 1-d ``x1`` keeps it
    sorted (Array API standard, searchsorted; numpy.searchsorted): ``x2``'s shape.
    ``x1`` is ascending in ``sort``'s order (NaN last), or ascending when read through
    ``sorter``, an integer array of ``x1``'s shape (as ``argsort(x1)`` gives). ``side="left"``:
    the first ``i`` with ``x1[i-1] < v <= x1[i]``; ``"right"``: ``x1[i-1] <= v < x1[i]``; 0 below
    every element, ``len(x1)`` above. ``x2`` may be a Python int or float (the standard's
    mixing of scalars and arrays); the two are compared in their promoted dtype. ValueError
    for a ``x1`` that is not 1-d, a ``side`` other than "left"/"right", a ``sorter`` of another
    shape or with an index outside [0, len(x1)); TypeError for a non-integer ``sorter``;
    RuntimeError for arrays on two devices (a Python scalar ``x2`` joins either)."""
    x1 = _array(x1, "searchsorted")
    if not isinstance(x2, (bool, int, float, complex)):  # Python scalars stay weak (NEP 50)
        x2 = _array(x2, "searchsorted")
    if sorter is not None:
        sorter = _array(sorter, "searchsorted")
    if not isinstance(side, str):
        raise TypeError(f"searchsorted: side must be 'left' or 'right', got {type(side).__name__} {side!r}")
    return _core.searchsorted(x1, x2, side=side, sorter=sorter)


# A call with a symbolic argument builds the graph op of the same name (uma.graph.ops.sorting).
from ._array_api import _symbolic_too  # noqa: E402

sort, argsort, searchsorted = _symbolic_too(sort), _symbolic_too(argsort), _symbolic_too(searchsorted)
