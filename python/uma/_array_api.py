"""The Python Array API standard's namespace protocol and the functions of its main namespace
that compose from uma's ops.

``import uma as xp`` is the namespace ``x.__array_namespace__()`` returns. This module adds what
the standard names and uma lacked: the version and constants, ``__array_namespace_info__``,
``isdtype``/``finfo``/``iinfo``, the array attributes ``mT`` and ``__array_namespace__``, the
in-place bitwise and matmul operators, the standard's signatures of ``clip``, ``expand_dims``,
``reshape``, ``astype`` and ``trace``, and the manipulation, creation, searching, statistical
and utility functions that are compositions of existing uma ops (views, slicing, ``take``,
``where``, ``concatenate``, reductions, ``matmul``). They run eagerly on the arrays' device (cpu
or cuda, whatever the ops they compose run on); none goes through NumPy. Rules and wording
follow the standard (https://data-apis.org/array-api/2025.12/), with NumPy as the test oracle
where the standard leaves a choice.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from . import _api, _core
from ._device import Device
from ._dtypes import dtype as _dtype, _by_name

Array = _core.Array
_AxisError = np.exceptions.AxisError

#: The newest revision of the standard this namespace follows (and the official test suite's
#: version selector reads).
__array_api_version__ = "2025.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

__all__ = [
    "__array_api_version__", "__array_namespace_info__", "e", "pi", "inf", "nan", "newaxis",
    "isdtype", "finfo", "iinfo",
    "clip", "expand_dims", "reshape", "astype", "trace", "permute_dims",
    "matrix_transpose", "vecdot", "tensordot",
    "broadcast_arrays", "broadcast_shapes", "flip", "moveaxis", "repeat", "roll", "tile",
    "unstack", "meshgrid", "tril", "triu", "take_along_axis", "count_nonzero", "isin",
    "cumulative_sum", "cumulative_prod", "diff",
]


# ---- helpers ----------------------------------------------------------------------------------

def _array(x, name):
    """``x`` as a uma.Array (arrays as they are; NumPy arrays and other producers through
    ``uma.asarray``, zero-copy where the copy rules allow)."""
    if isinstance(x, Array):
        return x
    try:
        return _core.asarray(x)
    except Exception as exc:
        raise TypeError(f"{name}: expected an array, got {type(x).__name__} {x!r}") from exc


def _int(value, what, name):
    """``value`` as a Python int (operator.index), TypeError naming it otherwise."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {type(value).__name__} {value!r}") from None


def _axis_int(axis, name):
    """``axis`` as a Python int; a bool is a TypeError, as in NumPy (True is not axis 1)."""
    if isinstance(axis, bool):
        raise TypeError(f"{name}: axis must be an integer, got bool {axis!r}")
    return _int(axis, "axis", name)


def _axis(axis, ndim, name):
    """A normalized axis in [0, ndim); numpy's AxisError (an IndexError and a ValueError) naming
    it when outside [-ndim, ndim), as every uma op raises for a bad axis."""
    a = _axis_int(axis, name)
    if not -ndim <= a < ndim:
        raise _AxisError(a, ndim, msg_prefix=name)
    return a % ndim


def _axes(axis, ndim, name):
    """A tuple of distinct normalized axes from an int or a sequence of ints (None: all)."""
    if axis is None:
        return tuple(range(ndim))
    seq = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_axis(a, ndim, name) for a in seq)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axis!r}")
    return out


def _along(ndim, axis, index):
    """The key that applies ``index`` (a slice or an int) along ``axis`` of an ndim-array."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _same_device(name, *arrays):
    devs = {str(a.device) for a in arrays}
    if len(devs) > 1:
        raise ValueError(f"{name}: arrays are on different devices {sorted(devs)}")


# ---- the namespace protocol -------------------------------------------------------------------

def _array_namespace(self, /, *, api_version=None):
    """The array's namespace, the module ``uma`` (Array API standard, __array_namespace__).

    ``api_version``: None or a revision of the standard ("2021.12" ... "2025.12"; uma follows
    the newest, ``uma.__array_api_version__``); ValueError naming any other string, TypeError
    for a non-string."""
    if api_version is not None:
        if not isinstance(api_version, str):
            raise TypeError(f"__array_namespace__: api_version must be a string or None, got {api_version!r}")
        if api_version not in _VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported Array API version {api_version!r} "
                             f"(uma supports {', '.join(_VERSIONS)})")
    import uma

    return uma


def _mT(self):
    """The matrix transpose of the last two axes (Array API standard, array.mT): a view of shape
    ``shape[:-2] + (shape[-1], shape[-2])``; ValueError for an array of fewer than 2 axes."""
    return matrix_transpose(self)


def _inplace(name, fn):
    """``a op= b`` written into ``a``'s memory (Array API standard, in-place operators): the
    result of ``a op b`` must keep ``a``'s shape (ValueError) and cast to ``a``'s dtype under
    NumPy's "same_kind" rule (TypeError), as uma's ``+=`` does."""

    def method(self, other):
        if getattr(type(other), "__array_ufunc__", 0) is None:  # a symbolic Variable (NEP 13)
            raise TypeError(f"{name}: an array cannot be updated in place with {other!r} "
                            f"(a symbolic variable); write `a = a op x` to build a symbolic result")
        r = fn(self, other)
        if r.shape != self.shape:
            raise ValueError(f"{name}: non-broadcastable output operand with shape {self.shape} "
                             f"doesn't match the broadcast shape {r.shape}")
        if r.dtype != self.dtype:
            if not _api.can_cast(r.dtype, self.dtype, "same_kind"):
                raise TypeError(f"Cannot cast ufunc '{name}' output from {r.dtype} to {self.dtype} "
                                f"with casting rule 'same_kind'")
            r = _core.astype(r, self.dtype)
        self[...] = r
        return self

    method.__name__ = method.__qualname__ = {
        "bitwise_and": "__iand__", "bitwise_or": "__ior__", "bitwise_xor": "__ixor__",
        "left_shift": "__ilshift__", "right_shift": "__irshift__", "matmul": "__imatmul__"}[name]
    return method


Array.__array_namespace__ = _array_namespace
Array.mT = property(_mT)
for _name, _fn in (("bitwise_and", operator.and_), ("bitwise_or", operator.or_),
                   ("bitwise_xor", operator.xor), ("left_shift", operator.lshift),
                   ("right_shift", operator.rshift), ("matmul", operator.matmul)):
    _m = _inplace(_name, _fn)
    if not hasattr(Array, _m.__name__):
        setattr(Array, _m.__name__, _m)


# ---- inspection -------------------------------------------------------------------------------

#: The dtypes the standard names (uma also has float16 and bfloat16, which
#: ``__array_namespace_info__().dtypes()`` must not list).
_STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128")

#: The standard's dtype kinds, as predicates on a uma dtype (its ``kind`` letter).
_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def _devices():
    from . import cuda

    return (Device("cpu"),) + tuple(Device("cuda", i) for i in range(cuda.device_count()))


def _check_device(device, name):
    if device is None:
        return Device("cpu")
    d = Device(device)  # ValueError for a malformed device
    if d not in _devices():
        raise ValueError(f"{name}: device {str(d)!r} is not available (devices: "
                         f"{', '.join(str(x) for x in _devices())})")
    return d


class _Info:
    """The inspection namespace (Array API standard, __array_namespace_info__)."""

    __slots__ = ()

    def capabilities(self):
        """{"boolean indexing": True (``a[mask]`` reads, on cpu and cuda), "data-dependent
        shapes": True (``nonzero``, ``unique_*``, ``repeat`` with an array of counts, eager),
        "max dimensions": None (no limit)}."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        """``uma.Device("cpu")``: where creation functions put arrays without ``device=``."""
        return Device("cpu")

    def devices(self):
        """A tuple of the usable devices: cpu, then ``cuda:N`` for each usable GPU."""
        return _devices()

    def default_dtypes(self, *, device=None):
        """The default dtypes (the same on every device): real floating float64, complex
        floating complex128, integral and indexing int64. ValueError for an unknown device."""
        _check_device(device, "default_dtypes")
        return {"real floating": _by_name["float64"], "complex floating": _by_name["complex128"],
                "integral": _by_name["int64"], "indexing": _by_name["int64"]}

    def dtypes(self, *, device=None, kind=None):
        """{name: dtype} of the standard's dtypes of ``kind`` (None: all; a kind string or a
        tuple of them, as ``isdtype``); every device has all of them. float16 and bfloat16 are
        uma dtypes but not the standard's, so they are not listed. ValueError for an unknown
        kind or device."""
        _check_device(device, "dtypes")
        return {n: _by_name[n] for n in _STANDARD if kind is None or _isdtype(_by_name[n], kind, "dtypes")}


def __array_namespace_info__():
    """The namespace inspection utilities (Array API standard, __array_namespace_info__):
    ``capabilities()``, ``default_device()``, ``devices()``, ``default_dtypes(device=)``,
    ``dtypes(device=, kind=)``."""
    return _Info()


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind`` (Array API standard, isdtype).

    ``kind``: a dtype (equality), one of "bool", "signed integer", "unsigned integer",
    "integral", "real floating" (float16 and bfloat16 included), "complex floating", "numeric",
    or a tuple of these (any matches). TypeError when ``dtype`` is not a dtype or ``kind`` is
    neither; ValueError naming an unknown kind string."""
    return _isdtype(dtype, kind, "isdtype")


def _isdtype(dtype, kind, name):
    """isdtype, its errors naming ``name`` (the function called)."""
    d = _dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(_isdtype(d, k, name) for k in kind)
    if isinstance(kind, str):
        rule = _KINDS.get(kind)
        if rule is None:
            if kind in _by_name:
                return d is _by_name[kind]
            raise ValueError(f"{name}: unknown kind {kind!r} (expected a dtype or one of "
                             f"{', '.join(repr(k) for k in _KINDS)})")
        return rule(d)
    try:
        return d is _dtype(kind)
    except TypeError:
        raise TypeError(f"{name}: kind must be a dtype, a kind string or a tuple of them, "
                        f"got {kind!r}") from None


class finfo_object:
    """Machine limits of a floating-point dtype (Array API standard, finfo): ``bits``, ``eps``,
    ``max``, ``min``, ``smallest_normal`` (Python floats) and ``dtype`` (the real dtype; a
    complex dtype's is the dtype of its parts)."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
                f"smallest_normal={self.smallest_normal!r}, dtype={self.dtype!r})")


class iinfo_object:
    """Machine limits of an integer dtype (Array API standard, iinfo): ``bits``, ``max``, ``min``
    (Python ints) and ``dtype``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype!r})"


def _dtype_of(type, name):
    return type.dtype if isinstance(type, Array) else _dtype(type)


def finfo(type, /) -> finfo_object:
    """Machine limits of a floating-point dtype or of an array's dtype (Array API standard,
    finfo): float16, bfloat16 (ml_dtypes' finfo; ImportError without ml_dtypes), float32,
    float64, complex64 and complex128 (the limits of their float32/float64 parts). The values
    are NumPy's (IEEE 754). TypeError naming an integer or bool dtype."""
    d = _dtype_of(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d.name} is not a floating-point dtype (use iinfo for integers)")
    if d.name == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(ml_dtypes.bfloat16)
    else:
        info = np.finfo(d.to_numpy())
    out = object.__new__(finfo_object)
    out.bits = int(info.bits)
    out.eps, out.max, out.min = float(info.eps), float(info.max), float(info.min)
    out.smallest_normal = float(info.smallest_normal)
    out.dtype = d if d.kind == "f" else _by_name["float32" if d.itemsize == 8 else "float64"]
    return out


def iinfo(type, /) -> iinfo_object:
    """Machine limits of an integer dtype or of an array's dtype (Array API standard, iinfo):
    bits, min and max as Python ints. TypeError naming a bool or floating-point dtype."""
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d.name} is not an integer dtype (use finfo for floating point)")
    info = np.iinfo(d.to_numpy())
    out = object.__new__(iinfo_object)
    out.bits, out.max, out.min, out.dtype = int(info.bits), int(info.max), int(info.min), d
    return out


# ---- the standard's signatures of existing ops -----------------------------------------------

_clip, _expand_dims, _reshape, _astype = _api.clip, _api.expand_dims, _api.reshape, _api.astype


def clip(x, /, min=None, max=None):
    """Each element of ``x`` limited to [min, max] (Array API standard, clip; numpy.clip): an
    array of ``x``'s shape (``min``/``max`` may be arrays broadcasting to it, or scalars) and
    ``x``'s dtype when ``min`` and ``max`` are Python scalars or arrays of ``x``'s dtype
    (NumPy's promotion otherwise). With both None, a copy of ``x`` (TypeError for bool, as
    numpy.clip). NaN in ``x`` stays NaN. Symbolic arguments build a graph node."""
    return _clip(x, min, max)


def _clip_method(self, min=None, max=None):
    """``a.clip(min=None, max=None)`` is ``uma.clip(a, min, max)`` (numpy.ndarray.clip)."""
    return clip(self, min, max)


Array.clip = _clip_method


def expand_dims(x, /, axis=0):
    """A view of ``x`` with size-1 axes inserted (Array API standard 2025.12, expand_dims):
    ``axis`` an int or a tuple of ints, each in [-M, M) with M = x.ndim + len(axis) (a negative
    one counts from the end of the result); the result has ndim M, size 1 at those positions
    and ``x``'s axes in order elsewhere. AxisError (an IndexError) for an axis out of range,
    ValueError for a repeated position. Symbolic arguments (an int axis) build a graph node."""
    if not isinstance(axis, (tuple, list)):
        return _expand_dims(x, axis)
    x = _array(x, "expand_dims")
    m = x.ndim + len(axis)
    pos = _axes(axis, m, "expand_dims")
    shape, it = [], iter(x.shape)
    for i in range(m):
        shape.append(1 if i in pos else next(it))
    return _core.reshape(x, tuple(shape))


def _extent(a):
    """[lo, hi): the bytes an array's elements occupy."""
    lo = hi = a._data_ptr
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return lo, lo
        lo += builtins.min(0, (n - 1) * s)
        hi += builtins.max(0, (n - 1) * s)
    return lo, hi + a.itemsize


def reshape(x, /, shape, *, copy=None):
    """``x``'s elements in row-major order in a new shape (Array API standard, reshape); one
    entry of ``shape`` may be -1. ``copy``: None gives a view where the layout allows and a copy
    otherwise; True always copies; False never does (``uma.CopyError``, a ValueError, when the
    layout needs a copy). ValueError when the sizes differ. Symbolic arguments build a graph
    node (``copy`` must be None then)."""
    if copy is None:
        return _reshape(x, shape)
    x = _array(x, "reshape")
    if copy:
        return _core.reshape(x.copy(), shape)
    r = _core.reshape(x, shape)
    if x.size and r.size:
        lo, hi = _extent(x)
        if not lo <= r._data_ptr < hi:
            raise CopyError(f"reshape: copy=False but an array of shape {x.shape} and strides "
                            f"{x.strides} cannot be viewed with shape {r.shape}")
    return r


CopyError = _core.CopyError


def astype(x, dtype, /, *, copy=True, device=None):
    """``x``'s values converted to ``dtype`` (Array API standard, astype; never reinterprets
    bits), then moved to ``device`` when given (``to_device``). ``copy=False`` returns ``x``
    itself when nothing changes. Symbolic arguments build a graph node (without device=)."""
    if device is None:
        return _astype(x, dtype, copy=copy)
    r = _core.astype(_array(x, "astype"), dtype, copy=copy)
    return r.to_device(device)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along a diagonal (numpy.trace's axes: ``axis1``/``axis2``, default the first two),
    dtype as ``sum``'s or ``dtype`` (the diagonal converted to it first). ``uma.linalg.trace``'s
    axes (the last two) are ``trace(a, axis1=-2, axis2=-1)``. ValueError if ndim < 2."""
    if dtype is None:
        return _api.trace(a, offset, axis1, axis2)
    return _api.sum(_api.diagonal(a, offset, axis1, axis2), -1, dtype=dtype)


def permute_dims(x, /, axes):
    """A view of ``x`` with its axes in the order ``axes`` (Array API standard, permute_dims): a
    permutation of range(x.ndim) (a 1-D array's may be the int 0). ValueError for a
    non-permutation, AxisError for a bad axis. Symbolic arguments build a graph node."""
    if isinstance(axes, (tuple, list)) or not isinstance(x, Array):
        return _api.transpose(x, axes)
    return _api.transpose(x, (_int(axes, "axes", "permute_dims"),))


# ---- linear algebra ---------------------------------------------------------------------------

def matrix_transpose(x, /):
    """A view of ``x`` with its last two axes swapped (Array API standard, matrix_transpose):
    shape ``x.shape[:-2] + (x.shape[-1], x.shape[-2])``. ValueError when x.ndim < 2."""
    x = _array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 axes, got shape {x.shape}")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return _core.transpose(x, axes)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product ``sum(conj(x1) * x2, axis)`` of vectors along ``axis`` (Array API
    standard, vecdot) after broadcasting the other axes: shape the broadcast shape without
    ``axis``, dtype ``result_type(x1, x2)``. ``axis`` counts in the broadcast shape and must be
    negative or within the smaller operand; the two lengths along it must be equal (ValueError
    naming them). AxisError for a bad axis."""
    x1, x2 = _array(x1, "vecdot"), _array(x2, "vecdot")
    n = builtins.min(x1.ndim, x2.ndim)
    if n == 0:
        raise ValueError("vecdot: x1 and x2 must have at least 1 axis")
    a = _axis_int(axis, "vecdot")
    if not -n <= a < n:
        raise _AxisError(a, n, msg_prefix="vecdot")
    a = a - n if a >= 0 else a  # counted from the end, the same axis in both
    if x1.shape[a] != x2.shape[a]:
        raise ValueError(f"vecdot: x1 has length {x1.shape[a]} and x2 length {x2.shape[a]} "
                         f"along axis {axis} (shapes {x1.shape}, {x2.shape})")
    if x1.dtype.kind == "c":
        x1 = _core.conj(x1)
    return _api.sum(x1 * x2, a, dtype=_api.result_type(x1, x2))  # no sum's integer widening


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over the given axes (Array API standard, tensordot; numpy.tensordot):
    ``axes`` an int N (the last N of x1 with the first N of x2) or a pair of sequences of axes.
    Shape: the remaining axes of x1 then of x2; dtype ``result_type(x1, x2)``. ValueError when
    the contracted lengths differ or N exceeds an operand's ndim; AxisError for a bad axis."""
    x1, x2 = _array(x1, "tensordot"), _array(x2, "tensordot")
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}")
        a1, a2 = ([a] if not isinstance(a, (tuple, list)) else list(a) for a in axes)
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes {axes!r} name different numbers of axes")
        a1 = [_axis(a, x1.ndim, "tensordot") for a in a1]
        a2 = [_axis(a, x2.ndim, "tensordot") for a in a2]
    else:
        k = _int(axes, "axes", "tensordot")
        if k < 0 or k > x1.ndim or k > x2.ndim:
            raise ValueError(f"tensordot: axes={k} must be in [0, min(x1.ndim, x2.ndim)] "
                             f"(shapes {x1.shape}, {x2.shape})")
        a1, a2 = list(range(x1.ndim - k, x1.ndim)), list(range(k))
    for i, j in zip(a1, a2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: contracted axes {i} of x1 (length {x1.shape[i]}) and "
                             f"{j} of x2 (length {x2.shape[j]}) differ")
    free1 = [i for i in range(x1.ndim) if i not in a1]
    free2 = [j for j in range(x2.ndim) if j not in a2]
    k = math.prod(x1.shape[i] for i in a1)
    m = math.prod(x1.shape[i] for i in free1)
    n = math.prod(x2.shape[j] for j in free2)
    dt = _api.result_type(x1, x2)
    p1 = _core.reshape(_core.transpose(_core.astype(x1, dt, copy=False), tuple(free1 + a1)), (m, k))
    p2 = _core.reshape(_core.transpose(_core.astype(x2, dt, copy=False), tuple(a2 + free2)), (k, n))
    out = _core.matmul(p1, p2)
    return _core.reshape(out, tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2))


# ---- manipulation -----------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast to (Array API standard 2025.12, broadcast_shapes; NumPy's
    rule): a tuple of ints (None in an input: a length known only at run time). ValueError
    naming the shapes when they do not broadcast."""
    for s in shapes:
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"broadcast_shapes: each shape must be a tuple of ints, got {s!r}")
    return tuple(_core._broadcast_shapes("broadcast_shapes",
                                         *(tuple(None if n is None else _int(n, "a length", "broadcast_shapes")
                                                 for n in s) for s in shapes)))


def broadcast_arrays(*arrays):
    """The arrays broadcast against one another (Array API standard, broadcast_arrays): a tuple
    of read-only views of one shape, each of its input's dtype. ValueError naming the shapes
    when they do not broadcast."""
    arrays = [_array(a, "broadcast_arrays") for a in arrays]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return tuple(a if a.shape == shape else _core.broadcast_to(a, shape) for a in arrays)


def flip(x, /, *, axis=None):
    """``x`` with the order of elements reversed along ``axis`` (Array API standard, flip;
    numpy.flip): a view (negative strides) of ``x``'s shape and dtype. ``axis``: None (all),
    an int or a tuple of ints; AxisError for a bad one."""
    x = _array(x, "flip")
    axes = _axes(axis, x.ndim, "flip")
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def moveaxis(x, source, destination, /):
    """A view of ``x`` with the axes ``source`` moved to the positions ``destination`` (Array
    API standard, moveaxis; numpy.moveaxis): ints or tuples of ints of one length (ValueError
    otherwise); the other axes keep their order. AxisError for a bad axis."""
    x = _array(x, "moveaxis")
    return _core.transpose(x, _moveaxis_order(x.ndim, source, destination))


def _moveaxis_order(ndim, source, destination):
    """The permutation of ``ndim`` axes that moves ``source`` to ``destination`` (moveaxis's
    rule, eager and symbolic)."""
    src = _axes(source, ndim, "moveaxis")
    dst = _axes(destination, ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must "
                         f"name the same number of axes")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


def repeat(x, repeats, /, *, axis=None):
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (Array API standard,
    repeat; numpy.repeat): ``axis`` None repeats the flattened array. ``repeats``: a
    non-negative int, or an integer array of shape (1,) (one count for all) or (n,) (a count
    per element along the axis: a data-dependent shape), or a list or tuple of ints (as
    numpy.repeat takes). An array of counts is read on the host (one device wait on cuda).
    Result: ``x``'s dtype, the length along ``axis`` the sum of the counts. ValueError for a
    negative count or counts of another shape, TypeError for a non-integer dtype or another
    type of ``repeats``, AxisError for a bad axis."""
    x = _array(x, "repeat")
    if isinstance(repeats, (list, tuple)):
        repeats = np.asarray(repeats) if len(repeats) else np.zeros(0, np.int64)
    if isinstance(repeats, Array) or hasattr(repeats, "__array_namespace__"):
        r = _array(repeats, "repeat")
        if r.dtype.kind not in "iu":
            raise TypeError(f"repeat: repeats must have an integer dtype, got {r.dtype}")
        if r.shape not in ((), (1,)):
            return _repeat_each(x, r, axis)
        repeats = int(r.reshape(()).item())
    try:
        n = operator.index(repeats)
    except TypeError:
        raise TypeError(f"repeat: repeats must be an int, an integer array or a list of ints, got "
                        f"{type(repeats).__name__} {repeats!r}") from None
    if n < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {n}")
    if axis is None:
        x, axis = _core.reshape(x, (x.size,)), 0
    a = _axis(axis, x.ndim, "repeat")
    y = _core.expand_dims(x, a + 1)
    shape = x.shape[:a + 1] + (n,) + x.shape[a + 1:]
    y = _core.broadcast_to(y, shape)
    return _core.reshape(y, x.shape[:a] + (x.shape[a] * n,) + x.shape[a + 1:])


def _repeat_each(x, r, axis):
    """repeat with one count per element along the axis: output position j takes the element
    whose run of copies covers j, searchsorted(cumsum(counts), j, side="right"), gathered with
    ``take`` on x's device."""
    if axis is None:
        x, axis = _core.reshape(x, (x.size,)), 0
    a = _axis(axis, x.ndim, "repeat")
    n = x.shape[a]
    if r.shape != (n,):
        raise ValueError(f"repeat: repeats of shape {r.shape} do not match the {n} elements along axis {axis}")
    counts = _core.astype(r.to_device("cpu"), "int64")  # a uint64 count >= 2**63 reads negative
    if n and bool(_core.any(counts < 0).item()):
        bad = int(counts[int(_core.argmax(counts < 0).item())].item())
        raise ValueError(f"repeat: repeats must be non-negative, got {bad if r.dtype.kind == 'i' else bad + 2**64}")
    ends = _core.cumsum(counts)
    # counts are non-negative, so a sum past int64 shows as a negative running total
    if n and bool(_core.any(ends < 0).item()):
        raise ValueError(f"repeat: the repeats add up to more than {2**63 - 1} elements (array is too big)")
    total = int(ends[n - 1].item()) if n else 0
    pos = _core.searchsorted(ends, _core.arange(total, dtype="int64"), side="right")
    return _core.take(x, pos, axis=a)


def roll(x, /, shift, *, axis=None):
    """``x`` with its elements shifted by ``shift`` positions along ``axis`` (Array API standard,
    roll; numpy.roll), those pushed past the end coming back at the start: a new array of
    ``x``'s shape and dtype. ``axis`` None rolls the flattened array (``shift`` an int);
    otherwise ``shift`` and ``axis`` are ints or tuples of one length (an int shift applies to
    each axis). ValueError for mismatched lengths, AxisError for a bad axis."""
    x = _array(x, "roll")
    if axis is None:
        return _core.reshape(roll(_core.reshape(x, (x.size,)), _int(shift, "shift", "roll"), axis=0), x.shape)
    total = _roll_shifts(x.ndim, shift, axis)
    out = x
    for a, s in total.items():
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            out = _core.concatenate([out[_along(x.ndim, a, slice(n - s, None))],
                                     out[_along(x.ndim, a, slice(None, n - s))]], a)
    return out.copy() if out is x else out


def _roll_shifts(ndim, shift, axis):
    """``{axis: total shift}`` of roll's ``shift`` and ``axis`` (ints or tuples of one length;
    an int shift applies to each axis; repeated axes add up), eager and symbolic."""
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same length")
    total = {}
    for s, a in zip(shifts, axes):
        a = _axis(a, ndim, "roll")
        total[a] = total.get(a, 0) + _int(s, "shift", "roll")
    return total


def tile(x, repetitions, /):
    """``x`` repeated ``repetitions[i]`` times along each axis (Array API standard, tile;
    numpy.tile): with d = max(x.ndim, len(repetitions)), ``x``'s shape and ``repetitions`` are
    padded with leading 1s to length d and the result's shape is their product, in ``x``'s
    dtype. ValueError for a negative repetition, TypeError for a non-int one."""
    x = _array(x, "tile")
    reps = tuple(_int(r, "each repetition", "tile") for r in
                 (repetitions if isinstance(repetitions, (tuple, list)) else (repetitions,)))
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {repetitions!r}")
    d = builtins.max(x.ndim, len(reps))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - x.ndim) + x.shape
    inter = tuple(v for r, n in zip(reps, shape) for v in (1, n))
    y = _core.broadcast_to(_core.reshape(x, inter), tuple(v for r, n in zip(reps, shape) for v in (r, n)))
    return _core.reshape(y, tuple(r * n for r, n in zip(reps, shape)))


def unstack(x, /, *, axis=0):
    """The views ``x[..., i, ...]`` along ``axis`` (Array API standard, unstack): a tuple of
    ``x.shape[axis]`` arrays, each of ``x``'s shape without ``axis``. AxisError for a bad axis
    (a 0-d array has none)."""
    x = _array(x, "unstack")
    a = _axis(axis, x.ndim, "unstack")
    return tuple(x[_along(x.ndim, a, i)] for i in range(x.shape[a]))


# ---- creation ---------------------------------------------------------------------------------

def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids from 1-D arrays (Array API standard, meshgrid; numpy.meshgrid): a tuple
    of read-only broadcast views (``.copy()`` for writable ones) of shape (N1, N2, ...) with
    ``indexing="ij"``, the first two lengths swapped with "xy" (the default). The arrays must
    be 1-D (ValueError) and of one dtype (TypeError), on one device."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_array(a, "meshgrid") for a in arrays]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"meshgrid: every array must be 1-D, got shape {a.shape}")
    if len({a.dtype for a in arrays}) > 1:
        raise TypeError(f"meshgrid: the arrays must have one dtype, got "
                        f"{', '.join(str(a.dtype) for a in arrays)}")
    _same_device("meshgrid", *arrays)
    n = len(arrays)
    shape = [a.shape[0] for a in arrays]
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
        pos[0], pos[1] = 1, 0
    out = []
    for a, p in zip(arrays, pos):
        view = tuple(-1 if i == p else 1 for i in range(n))
        out.append(_core.broadcast_to(_core.reshape(a, view), tuple(shape)))
    return tuple(out)


def _triangle(x, k, name, lower):
    x = _array(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least 2 axes, got shape {x.shape}")
    k = _int(k, "k", name)
    n, m = x.shape[-2:]
    rows = _core.reshape(_core.arange(n, dtype="int64", device=x.device), (n, 1))
    cols = _core.arange(m, dtype="int64", device=x.device)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return _core.where(keep, x, _core.zeros_like(x))


def tril(x, /, *, k=0):
    """The lower triangle of each matrix of ``x`` (Array API standard, tril): elements with
    ``j - i <= k`` kept, the others zero; a new array of ``x``'s shape and dtype. ValueError for
    fewer than 2 axes."""
    return _triangle(x, k, "tril", True)


def triu(x, /, *, k=0):
    """The upper triangle of each matrix of ``x`` (Array API standard, triu): elements with
    ``j - i >= k`` kept, the others zero; a new array of ``x``'s shape and dtype. ValueError for
    fewer than 2 axes."""
    return _triangle(x, k, "triu", False)


# ---- indexing and searching -------------------------------------------------------------------

def _take_along_axis_axis(x_ndim, indices_ndim, indices_dtype, indices_kind, axis, indices_shape, x_shape):
    """take_along_axis's checks (Array API standard, take_along_axis): TypeError for indices of
    a non-integer dtype (``indices_kind``, its kind letter), ValueError for a rank mismatch,
    AxisError for a bad axis; the normalised axis. Eager and symbolic calls use it."""
    if indices_kind not in "iu":
        raise TypeError(f"take_along_axis: indices must have an integer dtype, got {indices_dtype}")
    if indices_ndim != x_ndim:
        raise ValueError(f"take_along_axis: indices (shape {indices_shape}) and x (shape {x_shape}) "
                         f"must have the same number of axes")
    return _axis(axis, x_ndim, "take_along_axis")


def _take_along_axis_shape(x_shape, indices_shape, axis, broadcast=None):
    """take_along_axis's result shape: the lengths of ``x`` and ``indices`` off ``axis`` (a
    normalised axis) broadcast, ``indices``' length along it. ``broadcast(xs, js)`` broadcasts
    the two shapes off the axis (default: the core's rule, which takes static shapes with None
    for an unknown length, PyTensor's convention)."""
    off = lambda s: tuple(s[:axis]) + tuple(s[axis + 1:])  # noqa: E731
    if broadcast is None:
        batch = _core._broadcast_shapes("take_along_axis", off(x_shape), off(indices_shape))
    else:
        batch = broadcast(off(x_shape), off(indices_shape))
    return tuple(batch[:axis]) + (indices_shape[axis],) + tuple(batch[axis:])


def take_along_axis(x, indices, /, *, axis=-1):
    """Elements of ``x`` at ``indices`` along ``axis`` (Array API standard, take_along_axis;
    numpy.take_along_axis): ``indices`` has ``x``'s ndim, an integer dtype, and lengths that
    broadcast with ``x``'s on the other axes; the result has the broadcast shape with
    ``indices``' length along ``axis``, in ``x``'s dtype. Negative indices count from the end.
    IndexError naming an index outside [-n, n), ValueError for a rank mismatch, TypeError for a
    non-integer dtype, AxisError for a bad axis. On symbolic variables it builds a graph node
    (``uma.sym.take_along_axis``), differentiable in ``x``: the gradient adds ``g`` back at the
    positions read (repeated positions accumulate)."""
    x, idx = _array(x, "take_along_axis"), _array(indices, "take_along_axis")
    a = _take_along_axis_axis(x.ndim, idx.ndim, idx.dtype, idx.dtype.kind, axis, idx.shape, x.shape)
    shape = _take_along_axis_shape(x.shape, idx.shape, a)
    xm, im = moveaxis(x, a, -1), moveaxis(idx, a, -1)
    batch = shape[:a] + shape[a + 1:]
    n, k = xm.shape[-1], im.shape[-1]
    xm = _core.broadcast_to(xm, batch + (n,))
    im = _core.astype(_core.broadcast_to(im, batch + (k,)), "int64", copy=False)
    if im.size:
        bad = (im < -n) | (im >= n)
        if bool(_core.any(bad).item()):
            first = int(_core.reshape(im, (im.size,))[int(_core.argmax(_core.reshape(bad, (bad.size,))).item())].item())
            raise IndexError(f"take_along_axis: index {first} is out of bounds for axis {axis} with size {n}")
        im = _core.where(im < 0, im + n, im)
    nb = math.prod(batch)
    base = _core.reshape(_core.arange(nb, dtype="int64", device=x.device) * n, batch + (1,))
    flat = _core.reshape(xm, (nb * n,))
    out = _core.take(flat, im + base)
    return moveaxis(out, -1, a)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements of ``x`` over ``axis`` (Array API standard,
    count_nonzero): None (all), an int or a tuple; int64 (the default integer dtype), the
    reduced shape (length 1 kept with ``keepdims``). NaN counts as non-zero. AxisError for a bad
    axis."""
    x = _array(x, "count_nonzero")
    axis = None if axis is None else _axes(axis, x.ndim, "count_nonzero")  # errors name count_nonzero
    nz = x if x.dtype.kind == "b" else (x != 0)
    return _api.sum(nz, axis, keepdims, dtype="int64")


def isin(x1, x2, /, *, invert=False):
    """Whether each element of ``x1`` equals some element of ``x2`` (Array API standard 2025.12,
    isin; numpy.isin), by ``equal`` after promotion (NaN is never found): a bool array of
    ``x1``'s shape (``not`` with ``invert=True``). One of ``x1``, ``x2`` may be a Python int.
    Cost: it compares every pair, in blocks of about 2**22 pairs (time O(x1.size * x2.size),
    memory bounded); a sort-based version is not written yet."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1 and x2 must be an array")
    if not isinstance(x2, Array):  # a scalar set: one comparison (weak-scalar promotion)
        found = _core.equal(x1, _int(x2, "x2", "isin"))
    elif not isinstance(x1, Array):
        found = _core.any(_core.equal(x2, _int(x1, "x1", "isin")))
    elif x2.size == 0:
        found = _core.zeros(x1.shape, dtype="bool", device=x1.device)
    else:
        _same_device("isin", x1, x2)
        flat_a, flat_b = _core.reshape(x1, (x1.size,)), _core.reshape(x2, (x2.size,))
        step = builtins.max(1, (1 << 22) // x2.size)
        parts = [_core.any(_core.equal(_core.expand_dims(flat_a[i:i + step], 1), flat_b), 1)
                 for i in range(0, x1.size, step)]
        found = (_core.reshape(_core.concatenate(parts, 0), x1.shape) if parts
                 else _core.zeros(x1.shape, dtype="bool", device=x1.device))
    return _core.logical_not(found) if invert else found


# ---- statistics and utilities -----------------------------------------------------------------

def _cumulative(name, base, initial, x, axis, dtype, include_initial):
    x = _array(x, name)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis is required for an array of {x.ndim} axes (shape {x.shape})")
        if x.ndim == 0:
            x = _core.reshape(x, (1,))
        axis = 0
    a = _axis(axis, x.ndim, name)
    if dtype is not None:
        x = _core.astype(x, dtype, copy=False)
    out = base(x, a)
    if dtype is not None:
        out = _core.astype(out, dtype, copy=False)
    if include_initial:
        shape = x.shape[:a] + (1,) + x.shape[a + 1:]
        first = _core.full(shape, initial, dtype=out.dtype, device=x.device)
        out = _core.concatenate([first, out], a)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sums of ``x`` along ``axis`` (Array API standard, cumulative_sum): ``axis``
    may be None only for a 1-D (or 0-d) array (ValueError otherwise). dtype: ``dtype`` if given
    (``x`` converted to it first), else ``cumsum``'s rule (signed integers and bool -> int64,
    unsigned -> uint64, floating and complex kept). With ``include_initial`` a 0 comes first:
    the axis is one longer. AxisError for a bad axis."""
    return _cumulative("cumulative_sum", _core.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative products of ``x`` along ``axis`` (Array API standard, cumulative_prod):
    ``axis`` may be None only for a 1-D (or 0-d) array (ValueError otherwise). dtype: ``dtype``
    if given (``x`` converted to it first), else ``cumprod``'s rule (as cumulative_sum's). With
    ``include_initial`` a 1 comes first: the axis is one longer. AxisError for a bad axis."""
    return _cumulative("cumulative_prod", _core.cumprod, 1, x, axis, dtype, include_initial)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th discrete difference ``out[i] = x[i+1] - x[i]`` along ``axis``, applied ``n``
    times (Array API standard, diff; numpy.diff; bool arrays use ``!=`` as NumPy does):
    ``prepend`` / ``append`` are joined to ``x`` along ``axis`` first (arrays of ``x``'s shape
    off that axis, or scalars, broadcast; a Python scalar is weak, as in arithmetic: 0 joined
to an int8 array is int8). Length along ``axis``: M + N1 + N2 - n; dtype of
    the subtraction. ValueError for a negative ``n`` or a 0-d ``x``, AxisError for a bad axis."""
    x = _array(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: x must have at least 1 axis, got a 0-d array")
    n = _int(n, "n", "diff")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    a = _axis(axis, x.ndim, "diff")
    if n == 0:
        return x  # numpy.diff: x itself, prepend and append ignored
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        e_ = extra if isinstance(extra, Array) else _core.asarray(
            extra, dtype=_api.result_type(x, extra) if type(extra) in (int, float, complex, builtins.bool) else None,
            device=x.device)
        if e_.ndim == 0:
            e_ = _core.broadcast_to(e_, x.shape[:a] + (1,) + x.shape[a + 1:])
        parts.append(e_)
    y = parts[0] if len(parts) == 1 else _core.concatenate(parts, a)
    sub = _core.not_equal if y.dtype.kind == "b" else _core.subtract
    for _ in range(n):
        m = y.shape[a]
        if m == 0:
            break
        y = sub(y[_along(y.ndim, a, slice(1, None))], y[_along(y.ndim, a, slice(None, m - 1))])
    return y


def _symbolic_too(fn):
    """``fn`` (an eager function of this namespace) that builds a graph node when an argument is
    a symbolic variable and :mod:`uma.graph.ops` has a function of the same name (the rule of
    ``uma._api``: ``uma.flip(x)`` on a variable is ``uma.sym.flip(x)``)."""
    import functools

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if _api._symbolic_type is not None and _api._has_symbolic(args):
            sym_fn = getattr(_api._symbolic_ops, fn.__name__, None)
            if sym_fn is not None:
                return sym_fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return op


globals().update({_n: _symbolic_too(_f) for _n, _f in list(globals().items())
                  if _n in __all__ and callable(_f) and getattr(_f, "__module__", None) == __name__
                  and not isinstance(_f, type)})
