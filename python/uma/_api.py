"""Eager functions of the uma namespace.

Each public op is the C++ implementation from ``uma._core``; when any argument is a symbolic
variable of ``uma.graph`` the call builds a graph node instead (``uma.exp(x)`` works on
arrays and on ``uma.sym`` variables alike).
"""
from __future__ import annotations

import builtins
import functools

import numpy as np

from . import _core
from ._dtypes import dtype, _by_code

Array = _core.Array
CopyError = _core.CopyError

#: The elementwise ops: every row of the op table (include/uma/ops/table.h).
ELEMENTWISE = [row["name"] for row in _core._op_table()]

_OPS = ELEMENTWISE + [
    # elementwise beyond the table's one-dtype-rule ops
    "where", "round", "clip", "one_hot", "softmax_cross_entropy",
    # reductions
    "sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any",
    # linear algebra and shape
    "matmul", "dot", "reshape", "transpose", "broadcast_to", "concatenate", "stack",
    "expand_dims", "squeeze", "astype",
    # creation from another array
    "zeros_like", "ones_like", "empty_like", "full_like",
    # statistics, cumulative ops, linear algebra, split, indexing, nn
    "var", "std", "logsumexp", "cumsum", "cumprod", "outer", "diag", "diagonal", "trace",
    "split", "take", "set_subtensor", "inc_subtensor", "softmax", "log_softmax", "relu",
]

#: Other names of ops: the Python Array API standard's spellings of NumPy's names, and NumPy's
#: of the standard's.
ALIASES = {
    "conjugate": "conj", "acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
    "pow": "power", "concat": "concatenate", "permute_dims": "transpose",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "absolute": "abs", "true_divide": "divide",
    "bitwise_not": "bitwise_invert", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
}

__all__ = _OPS + list(ALIASES) + ["promote_types", "result_type", "can_cast"]

_symbolic_type = None
_symbolic_ops = None


def _set_symbolic(variable_type, ops_module):
    """Called by uma.graph: route calls with symbolic arguments to ``ops_module``."""
    global _symbolic_type, _symbolic_ops
    _symbolic_type, _symbolic_ops = variable_type, ops_module


def _has_symbolic(args):
    t = _symbolic_type
    if t is None:
        return False
    for a in args:
        if isinstance(a, t):
            return True
        if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, t) for x in a):
            return True
    return False


def _make(name):
    eager = getattr(_core, name)

    @functools.wraps(eager)
    def op(*args, **kwargs):
        if _symbolic_type is not None and _has_symbolic(args):
            return getattr(_symbolic_ops, name)(*args, **kwargs)
        return eager(*args, **kwargs)

    op.__name__ = name
    op.__qualname__ = name
    return op


# Module globals named like builtins (sum, max, min, abs, all, any) are uma's ops from here
# on: code in this module uses builtins.<name> for the built-in ones.
_g = globals()
for _name in _OPS:
    _g[_name] = _make(_name)
for _alias, _target in ALIASES.items():
    _g[_alias] = _g[_target]


_as_dtype = dtype  # the class; sum/prod/mean below take a keyword named ``dtype``


def _with_dtype(name):
    """sum/prod/mean with NumPy's and the Array API's keyword ``dtype``: the input converted to
    ``dtype`` first (so the reduction accumulates in it) and the result returned in it."""
    base = _g[name]

    @functools.wraps(base)
    def op(a, axis=None, keepdims=False, *, dtype=None):
        if dtype is None:
            return base(a, axis, keepdims)
        if _symbolic_type is not None and _has_symbolic((a,)):
            return getattr(_symbolic_ops, name)(a, axis, keepdims, dtype=dtype)
        d = _as_dtype(dtype)
        x = _core.astype(a, d, copy=False)
        if name == "mean" and d.kind in "iub":
            # NumPy: the sum in ``dtype`` (wrapping), then divided and converted back (truncated)
            total = _core.astype(_core.sum(x, axis, keepdims), d, copy=False)
            count = _core.sum(_core.ones_like(x, dtype="int64"), axis, keepdims)
            return _core.astype(_core.divide(total, count), d, copy=False)
        return _core.astype(base(x, axis, keepdims), d, copy=False)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (base.__doc__ or "") + (
        "\n\ndtype: accumulate in and return this dtype (Array API standard, sum/prod; numpy.mean);\n"
        "the input is converted to it first, the result returned in it. float16 and bfloat16 accumulate\n"
        "in float32 (as every uma reduction of them does), so a float16 sum that overflows only in its\n"
        "partial sums is finite here where NumPy's float16 loop gives inf.")
    return op


for _name in ("sum", "prod", "mean"):
    _g[_name] = _with_dtype(_name)

_angle_rad = _g["angle"]


def angle(z, deg=False):
    """Argument of each element of ``z`` (numpy.angle): in radians in [-pi, pi], or with
    ``deg=True`` in degrees (the radians times 180/pi, as NumPy computes it). complex64 ->
    float32, complex128 -> float64; real dtypes ``arctan2(0, x)`` with arctan2's float dtype
    (int8 -> float16, bool -> float64). Symbolic arguments build a graph node."""
    a = _angle_rad(z)
    return a * (180.0 / np.pi) if deg else a


_g["angle"] = angle


def promote_types(type1, type2) -> dtype:
    """NumPy 2 promotion of two dtypes (NEP 50; bfloat16 as ml_dtypes promotes it)."""
    return _by_code[_core._promote_types(dtype(type1)._code, dtype(type2)._code)]


def result_type(*arrays_and_dtypes) -> dtype:
    """Result dtype of combining arrays, dtypes and Python scalars under NumPy 2 rules.

    Python bool/int/float/complex are weak (NEP 50): they adopt the dtype of the arrays they
    meet. TypeError if nothing but Python scalars is given... then their default dtypes apply.
    """
    strong = None
    weak = []
    for x in arrays_and_dtypes:
        if type(x) in (bool, int, float, complex):
            weak.append(x)
            continue
        d = x.dtype if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype, str)) else x
        d = dtype(d)
        strong = d if strong is None else promote_types(strong, d)
    if strong is None:
        if not weak:
            raise TypeError("result_type() needs at least one array or dtype")
        kinds = [type(w) for w in weak]
        for k, name in ((complex, "complex128"), (float, "float64"), (int, "int64"), (bool, "bool")):
            if k in kinds:
                return dtype(name)
    kind_code = {bool: 0, int: 1, float: 2, complex: 3}
    for w in weak:
        strong = _by_code[_core._promote_weak(strong._code, kind_code[type(w)])]
    return strong


def can_cast(from_, to, casting="safe") -> bool:
    """np.can_cast for dtypes (and arrays: their dtype): "no", "equiv", "safe", "same_kind", "unsafe"."""
    if hasattr(from_, "dtype") and not isinstance(from_, (type, np.dtype)):
        from_ = from_.dtype
    return _core._can_cast(dtype(from_)._code, dtype(to)._code, casting)


def _repr(a):
    name = a.dtype.name
    if a.ndim > 64:  # NumPy's printer takes at most 64 dimensions (NPY_MAXDIMS); uma has no such limit
        return f"uma.array(<{a.size} elements>, shape={a.shape}, dtype={name})"
    try:
        body = np.array2string(np.asarray(a), separator=", ", prefix="uma.array(")
    except Exception:  # e.g. bfloat16 without ml_dtypes
        body = np.array2string(np.asarray(a.astype("float32")), separator=", ", prefix="uma.array(")
    default = name in ("float64", "int64", "bool")
    if a.size == 0:
        return f"uma.array({body}, shape={a.shape}, dtype={name})"
    return f"uma.array({body})" if default else f"uma.array({body}, dtype={name})"


def _rebuild(values, dtype_name):
    return _core.array(values, dtype=dtype_name)


def _reduce(a):
    """Pickle support: an Array pickles as a copy of its values (dtype and shape kept)."""
    return (_rebuild, (np.array(np.asarray(a), copy=True), a.dtype.name))


def _iter(a):
    """Iterates over the first axis (views), as NumPy; TypeError for a 0-d array."""
    if a.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (a[i] for i in range(a.shape[0]))


Array.__repr__ = _repr
Array.__reduce__ = _reduce
Array.__iter__ = _iter

# NumPy ufunc name -> (operator, reflected operator) of uma.Array.
_UFUNC_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"), "matmul": ("__matmul__", "__rmatmul__"),
    "bitwise_and": ("__and__", "__rand__"), "bitwise_or": ("__or__", "__ror__"),
    "bitwise_xor": ("__xor__", "__rxor__"), "left_shift": ("__lshift__", "__rlshift__"),
    "right_shift": ("__rshift__", "__rrshift__"), "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"), "equal": ("__eq__", "__eq__"), "not_equal": ("__ne__", "__ne__"),
}


def _as_numpy(x):
    return np.asarray(x) if isinstance(x, Array) else x


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs and NumPy's operators with a uma operand (NEP 13, ``__array_ufunc__``).

    - An ufunc that writes ``out=`` (NumPy's in-place operators: ``ndarray += a`` is
      ``np.add(n, a, out=(n,))``) runs in NumPy on the uma operands' memory (no copy on the
      CPU) and updates ``out`` in place, as with any array-like operand.
    - A two-operand ufunc called plainly that is one of uma.Array's operators (``ndarray - a``,
      ``np.float32(2) * a``, ``np.add(n, a)``, ``n < a``) is that operator: a uma array with
      NumPy's value and dtype, as ``a - ndarray`` gives (torch and JAX arrays do the same).
    - Every other ufunc and method (``np.exp(a)``, ``np.add.reduce``) runs in NumPy on the
      operands as ndarrays and gives ndarrays.

    A cuda array raises the error ``np.asarray`` raises for it (no silent copy to the host).
    """
    if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc.__name__ in _UFUNC_OPERATORS:
        x, y = inputs
        name, reflected = _UFUNC_OPERATORS[ufunc.__name__]
        result = getattr(x, name)(y) if isinstance(x, Array) else getattr(y, reflected)(x)
        if result is not NotImplemented:
            return result
    out = kwargs.get("out")
    if out is not None:
        kwargs["out"] = tuple(_as_numpy(o) for o in out)
    result = getattr(ufunc, method)(*(_as_numpy(x) for x in inputs), **kwargs)
    if out is None:
        return result
    # each output: the uma array written, else what NumPy returned (the ndarray, or the array it
    # made for a None entry)
    results = result if isinstance(result, tuple) else (result,)
    final = tuple(o if isinstance(o, Array) else r for o, r in zip(out, results))
    return final[0] if len(final) == 1 else final


Array.__array_ufunc__ = _array_ufunc


def _format(a, spec):
    """``format(a, spec)``, NumPy's rule: a 0-d array formats its element (``f"{x:.2f}"``); any
    other array only with an empty spec (its ``str``), else TypeError."""
    if a.ndim == 0:
        return format(a.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string {spec!r} passed to uma.Array.__format__ "
                        f"(only a 0-d array formats its element; this one has shape {a.shape})")
    return str(a)


def _str(a):
    """NumPy's ``str`` of the values, as ``repr`` prints them (bfloat16 through ml_dtypes, or
    as float32 where ml_dtypes is missing)."""
    if a.ndim > 64:
        return _repr(a)
    try:
        return str(np.asarray(a))
    except Exception:  # e.g. bfloat16 without ml_dtypes, as _repr
        return str(np.asarray(a.astype("float32")))


Array.__format__ = _format
Array.__str__ = _str


# ---- methods that forward to the functions of this module (NumPy's ndarray methods) ---------

def _forward(name):
    fn = globals()[name]

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``a.{name}(...)`` is ``uma.{name}(a, ...)`` (numpy.ndarray.{name})."
    return method


for _name in ("round", "clip", "cumsum", "cumprod", "var", "std", "trace", "diagonal", "take", "dot",
              "squeeze", "logsumexp", "conj", "conjugate"):
    if not hasattr(Array, _name):
        setattr(Array, _name, _forward(_name))


def _ravel(a):
    """``a.ravel()``: the flattened array (a view when the layout allows, as numpy.ravel)."""
    return reshape(a, (a.size,))


def _flatten(a):
    """``a.flatten()``: a flattened copy (numpy.ndarray.flatten)."""
    return reshape(a, (a.size,)).copy()


if not hasattr(Array, "ravel"):
    Array.ravel = _ravel
if not hasattr(Array, "flatten"):
    Array.flatten = _flatten


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (uma ops return new arrays)")


def _reduction_method(name):
    """Array.sum/prod/mean with the keywords ``dtype`` and ``out`` (numpy.ndarray's methods
    take them, and numpy.sum(x) / numpy.mean(x) call them with out=None)."""
    method, fn = getattr(Array, name), _g[name]

    def m(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out(name, out)
        return method(self, axis, keepdims) if dtype is None else fn(self, axis, keepdims, dtype=dtype)

    m.__name__ = m.__qualname__ = name
    m.__doc__ = (f"{name} over ``axis``, numpy.ndarray.{name}'s signature; ``dtype`` as for "
                 f":func:`uma.{name}`; ``out`` must be None (TypeError otherwise).")
    return m


def _plain_reduction_method(name):
    """Array.max/min/all/any/argmax/argmin with numpy.ndarray's ``out`` keyword (must be None):
    numpy.max(x) and friends call the method with out=None."""
    method = getattr(Array, name)

    def m(self, axis=None, out=None, keepdims=False):
        _no_out(name, out)
        return method(self, axis, keepdims)

    m.__name__ = m.__qualname__ = name
    m.__doc__ = method.__doc__
    return m


for _name in ("sum", "prod", "mean"):
    setattr(Array, _name, _reduction_method(_name))
for _name in ("max", "min", "all", "any", "argmax", "argmin"):
    setattr(Array, _name, _plain_reduction_method(_name))
