"""Symbolic ops: one function per eager function of uma (same name, same signature).

Every function accepts :class:`~uma.graph.Variable` s, uma/NumPy arrays, lists and Python
scalars and returns a new Variable (or a Constant for creation functions). Dtype and static
shape are inferred when the graph is built:

- dtypes follow NumPy 2 (NEP 50): the result dtype of an op is what NumPy's function gives for
  arrays of the input dtypes; Python scalars are *weak* (``x_float32 + 1.0`` is float32) and
  are turned into constants of the promoted dtype (``OverflowError`` for an out-of-range
  Python int, as NumPy 2 does);
- elementwise ops (and ``where``, ``astype``, ``clip``, ``round``) accept every dtype on which
  NumPy 2 defines them (bfloat16 as ml_dtypes does) and raise ``TypeError`` naming the op and
  the dtype where NumPy does; the other compute ops accept ``bool, int32, int64, float32,
  float64`` and raise ``TypeError`` otherwise;
- shapes follow NumPy broadcasting with PyTensor's static rule: only axes whose static length
  is 1 broadcast (see :mod:`uma.graph.type`). Known mismatches raise ``ValueError`` naming the
  op at build time; the rest are checked when a compiled function is called.

Each op also defines its reference semantics (``perform``, calling uma's eager function of
the same name), its gradient and its run-time shape rule.
"""
from __future__ import annotations

import builtins as _b
import functools
import math

import numpy as np

from .basic import Constant, Op, Variable, as_variable, is_python_scalar
from .type import COMPUTE_DTYPES, TensorType, _fmt_shape, dtype_name, is_float, kind_of, np_dtype

AxisError = np.exceptions.AxisError


def _uma():
    import uma  # lazy: uma/__init__ imports this package while it initialises
    return uma


def _k():
    """The eager kernels (``uma._core``), called directly by ``perform``: the values are
    arrays, so the symbolic dispatch of ``uma``'s wrappers is not needed."""
    import uma
    return uma._core


# ======================================================================================
# helpers: dtypes, weak scalars, shapes
# ======================================================================================

def _check_compute(opname, *vs):
    for v in vs:
        if v.dtype not in COMPUTE_DTYPES:
            raise TypeError(f"{opname}: dtype {v.dtype} is not supported by compute ops "
                            f"(supported: bool, int32, int64, float32, float64); cast with astype first")


def _np_any_dtype(name):
    """The NumPy dtype for any uma dtype name (bfloat16 through ml_dtypes)."""
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np_dtype(name)


def _weak_constant(opname, value, dt: np.dtype, comparison=False):
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(value, dtype=dt)
    except OverflowError:
        if comparison:  # NumPy 2 compares out-of-range Python ints exactly
            st = np.min_scalar_type(value)
            if st.kind == "O":  # beyond every integer dtype: compared as a float64
                st = np.dtype(np.float64)
            return Constant(np.asarray(value, dtype=np.result_type(dt, st)))
        if opname in ("divide", "arctan2") and dt.kind in "iub":
            # Integers run in a float loop (float64; arctan2: the smallest float holding the
            # integer dtype), and NumPy converts the Python int to that loop's dtype.
            ft = np.dtype(np.float64) if opname == "divide" else np.result_type(dt, np.float16)
            return Constant(np.asarray(float(value), dtype=ft))
        raise OverflowError(f"{opname}: Python integer {value} out of bounds for {dt.name}") from None
    return Constant(arr)


def _as_inputs(opname, args, weak_ok=True, comparison=False):
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
            out[k] = _weak_constant(opname, args[k], dt, comparison)
    return out


def _fmt(shape):
    return _fmt_shape(shape)


def _aligned(shapes, n, ax):
    """The entries of ``shapes`` aligned on output axis ``ax`` of an n-d broadcast (or None)."""
    res = []
    for s in shapes:
        j = ax - n + len(s)
        res.append(s[j] if j >= 0 else None)
    return res


def _bcast_static(opname, shapes):
    n = _b.max((len(s) for s in shapes), default=0)
    out = []
    for ax in range(n):
        dims = [d for s, d in zip(shapes, _aligned(shapes, n, ax)) if ax - n + len(s) >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"{opname}: operands could not be broadcast together with shapes "
                             + " ".join(_fmt(s) for s in shapes))
        if known:
            out.append(known.pop())
        elif _b.any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _bcast_runtime(opname, static_shapes, shapes):
    n = _b.max((len(s) for s in shapes), default=0)
    out = []
    for ax in range(n):
        present = [k for k, s in enumerate(shapes) if ax - n + len(s) >= 0]
        dims = {shapes[k][ax - n + len(shapes[k])] for k in present}
        big = dims - {1}
        if len(big) > 1:
            raise ValueError(f"{opname}: operands could not be broadcast together with shapes "
                             + " ".join(str(tuple(s)) for s in shapes))
        t = big.pop() if big else 1
        for k in present:
            j = ax - n + len(shapes[k])
            if shapes[k][j] != t and static_shapes[k][j] != 1:
                raise ValueError(
                    f"{opname}: input {k} has run-time shape {tuple(shapes[k])} and would be broadcast "
                    f"along axis {j} to length {t}, but its type {_fmt(static_shapes[k])} does not declare "
                    f"that axis as length 1 (PyTensor convention: only static length-1 axes broadcast)")
        out.append(t)
    return tuple(out)


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


def _prod(dims):
    return math.prod(dims)


def _diff(dtype):
    """Whether values of ``dtype`` have gradients: the float and complex dtypes."""
    return is_float(dtype) or kind_of(dtype) == "c"


def _cj(v):
    """``conj(v)`` for a complex ``v``, ``v`` itself otherwise (gradient formulas: for a complex
    variable the incoming gradient is multiplied by the conjugate of the derivative)."""
    return conj(v) if kind_of(v.dtype) == "c" else v


def _to_dtype(g, dtype):
    """A gradient converted to the dtype of its variable: a complex gradient of a real variable
    keeps its real part (the derivative along the real axis), then the dtype is cast."""
    if kind_of(g.dtype) == "c" and kind_of(dtype) != "c":
        g = real(g)
    return g if g.dtype == dtype else astype(g, dtype)


# ======================================================================================
# elementwise
# ======================================================================================

_UNARY_NP = {
    "negative": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "sqrt": np.sqrt, "tanh": np.tanh, "sigmoid": np.exp, "sign": np.sign,
    "square": np.square, "logical_not": np.logical_not, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil,
    # ---- issue 4 elementwise set ----
    "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "reciprocal": np.reciprocal, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "rint": np.rint,
    # functions NumPy lacks: exp's dtype rule on real dtypes (complex: TypeError, _REAL_ONLY)
    "softplus": np.exp, "erf": np.exp, "erfc": np.exp, "gammaln": np.exp, "digamma": np.exp,
    "trigamma": np.exp,
    # parts of complex numbers (NumPy's functions; dtypes as NumPy gives them)
    "real": np.real, "imag": np.imag, "conj": np.conj, "angle": np.angle,
}
#: float functions NumPy lacks (scipy.special names, PyTensor/JAX's softplus): real dtypes only.
_REAL_ONLY = frozenset({"sigmoid", "softplus", "erf", "erfc", "gammaln", "digamma", "trigamma"})
_BINARY_NP = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    # ---- issue 4 elementwise set ----
    "arctan2": np.arctan2, "logical_xor": np.logical_xor,
}
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


@functools.lru_cache(maxsize=None)
def _elemwise_dtype(name, dtypes):
    """NumPy 2's result dtype of elementwise ``name`` on ``dtypes`` (TypeError where NumPy has no
    loop), found by calling NumPy's function on one-element arrays. bfloat16 (which NumPy
    lacks) follows float16's rule when both operands promote to bfloat16 (ml_dtypes computes
    it in float32 like NumPy's float16 loops), float32's otherwise."""
    fn = _UNARY_NP.get(name) or _BINARY_NP[name]
    ct = dtypes[0] if len(dtypes) == 1 else _uma().promote_types(*dtypes).name
    if name in _REAL_ONLY and kind_of(ct) == "c":
        raise TypeError(f"{name}: not supported for dtype {ct} (defined for real dtypes only)")
    if "bfloat16" in dtypes:
        args = [np.ones(1, dtype=np.float16) for _ in dtypes] if ct == "bfloat16" else \
            [np.ones(1, dtype=np_dtype("float32" if d == "bfloat16" else d)) for d in dtypes]
    else:  # NumPy's own loop selection (arctan2(int8, uint8) is float16, not float32)
        args = [np.ones(1, dtype=np_dtype(d)) for d in dtypes]
    try:
        with np.errstate(all="ignore"):
            res = fn(*args).dtype.name
    except TypeError:
        raise TypeError(f"{name}: not supported for dtype {ct} (NumPy has no loop for it)") from None
    if name == "subtract" and ct == "bool":
        raise TypeError("subtract: boolean subtract is not supported, use logical_xor instead")
    return "bfloat16" if ct == "bfloat16" and res == "float16" else res


class Elemwise(Op):
    """An elementwise op (unary or binary) named after its eager function."""

    props = ("name",)

    def __init__(self, name):
        self.name = name
        self.nin = 1 if name in _UNARY_NP else 2

    def output_types(self, inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self.name}: expected {self.nin} inputs, got {len(inputs)}")
        dt = _elemwise_dtype(self.name, tuple(i.dtype for i in inputs))
        return [TensorType(dt, _bcast_static(self.name, [i.shape for i in inputs]))]

    def perform(self, node, values):
        return [getattr(_uma(), self.name)(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime(self.name, [i.shape for i in node.inputs], shapes)]

    def program_op(self, node):
        return self.name, {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        out = node.outputs[0]
        if g is None or not _diff(out.dtype):
            return [None] * self.nin
        rule = _GRADS.get(self.name)
        if rule is None:
            return [None] * self.nin
        grads = rule(g, out, *node.inputs)
        return [None if gi is None or not _diff(x.dtype) else _unbroadcast(gi, x)
                for gi, x in zip(grads, node.inputs)]


@functools.lru_cache(maxsize=None)
def _elemwise(name):
    return Elemwise(name)


def _binary(name, a, b):
    a, b = _as_inputs(name, (a, b), comparison=name in _COMPARISONS)
    return _elemwise(name)(a, b)


def _unary(name, a):
    return _elemwise(name)(as_variable(a))


def _zeros_grad(g, out, *xs):
    return [zeros_like(x, dtype=g.dtype) if _diff(x.dtype) else None for x in xs]


def _sign_grad(g, o, x):
    """sign is piecewise constant on real numbers; on complex numbers ``w = z / |z|`` depends on
    the argument t of z only: ``dw = i w dt`` and ``dt = Im(dz / z)``, so the gradient is
    ``-i Im(conj(g) w) w / |z|`` (0 at z = 0, as abs's)."""
    if kind_of(x.dtype) != "c":
        return _zeros_grad(g, o, x)
    r = abs(x)
    return [where(equal(r, 0), 0, negative(imag(conj(g) * o)) * 1j * o / where(equal(r, 0), 1, r))]


def _power_grad(g, o, x, y):
    """d(x**y)/dx = y x**(y-1), but 0 where y == 0 (x**0 is constant 1, also at x = 0, where
    the formula gives 0 * inf); d(x**y)/dy = x**y log(x), but 0 where x == 0 and Re(y) >= 0
    (0**y is constant 0 or 1 there, where the formula gives 0 * -inf). PyTorch's and PyTensor's
    rules."""
    dx = where(equal(y, 0), 0, g * _cj(y * power(x, y - 1)))
    re_y = real(y) if kind_of(y.dtype) == "c" else y
    dy = where(logical_and(equal(x, 0), re_y >= 0), 0, g * _cj(o * log(x)))
    return [dx, dy]


def _angle_grad(g, o, x):
    """angle(z) = atan2(y, x): gradient ``g * i / conj(z)`` (0 at z = 0); piecewise constant on
    real numbers."""
    if kind_of(x.dtype) != "c":
        return _zeros_grad(g, o, x)
    zero = equal(x, 0)
    return [where(zero, 0, g * 1j / conj(where(zero, 1, x)))]


# Gradient rules: (g, out, *inputs) -> one gradient per input. For complex values (PyTorch's and
# PyTensor's convention, see uma.grad) the gradient of a holomorphic f multiplies g by the
# conjugate of f'(z): ``_cj(...)`` below, a no-op on real dtypes.
_GRADS = {
    "add": lambda g, o, x, y: [g, g],
    "subtract": lambda g, o, x, y: [g, negative(g)],
    "multiply": lambda g, o, x, y: [g * _cj(y), g * _cj(x)],
    "divide": lambda g, o, x, y: [g / _cj(y), negative(g) * _cj(o / y)],
    "power": lambda g, o, x, y: _power_grad(g, o, x, y),
    "maximum": lambda g, o, x, y: [where(x >= y, g, 0), where(x >= y, 0, g)],
    "minimum": lambda g, o, x, y: [where(x <= y, g, 0), where(x <= y, 0, g)],
    "floor_divide": _zeros_grad,
    "remainder": lambda g, o, x, y: [g, negative(g) * floor_divide(x, y)],
    "negative": lambda g, o, x: [negative(g)],
    "abs": lambda g, o, x: [g * sign(x)],  # complex: g * z / |z| (sign(0) = 0)
    "exp": lambda g, o, x: [g * _cj(o)],
    "log": lambda g, o, x: [g / _cj(x)],
    "log1p": lambda g, o, x: [g / _cj(x + 1)],
    "expm1": lambda g, o, x: [g * _cj(o + 1)],
    "sqrt": lambda g, o, x: [g * 0.5 / _cj(o)],
    "tanh": lambda g, o, x: [g * _cj(1 - o * o)],
    "sigmoid": lambda g, o, x: [g * o * (1 - o)],
    "square": lambda g, o, x: [g * 2 * _cj(x)],
    "sin": lambda g, o, x: [g * _cj(cos(x))],
    "cos": lambda g, o, x: [negative(g) * _cj(sin(x))],
    "sign": _sign_grad,
    "floor": _zeros_grad,
    "ceil": _zeros_grad,
    # ---- issue 4 elementwise set ----
    "arctan2": lambda g, o, y, x: [g * x / (x * x + y * y), negative(g) * y / (x * x + y * y)],
    "logical_xor": lambda g, o, x, y: [None, None],
    "exp2": lambda g, o, x: [g * _cj(o) * math.log(2.0)],
    "log2": lambda g, o, x: [g / (_cj(x) * math.log(2.0))],
    "log10": lambda g, o, x: [g / (_cj(x) * math.log(10.0))],
    "reciprocal": lambda g, o, x: [negative(g) * _cj(o * o)],
    "tan": lambda g, o, x: [g * _cj(1 + o * o)],
    "arcsin": lambda g, o, x: [g / _cj(sqrt(1 - x * x))],
    "arccos": lambda g, o, x: [negative(g) / _cj(sqrt(1 - x * x))],
    "arctan": lambda g, o, x: [g / _cj(1 + x * x)],
    "sinh": lambda g, o, x: [g * _cj(cosh(x))],
    "cosh": lambda g, o, x: [g * _cj(sinh(x))],
    "softplus": lambda g, o, x: [g * sigmoid(x)],
    "erf": lambda g, o, x: [g * (2.0 / math.sqrt(math.pi)) * exp(negative(x * x))],
    "erfc": lambda g, o, x: [g * (-2.0 / math.sqrt(math.pi)) * exp(negative(x * x))],
    "gammaln": lambda g, o, x: [g * digamma(x)],
    "digamma": lambda g, o, x: [g * trigamma(x)],
    "trigamma": lambda g, o, x: _no_grad("trigamma", "polygamma(2, x) is not implemented"),
    "rint": _zeros_grad,
    # parts of complex numbers: real carries g into the real component, imag into the imaginary
    # one (z = x + iy: d imag / dy = 1), conj conjugates it
    "real": lambda g, o, x: [g],
    "imag": lambda g, o, x: [g * 1j if kind_of(x.dtype) == "c" else zeros_like(x, dtype=g.dtype)],
    "conj": lambda g, o, x: [_cj(g)],
    "angle": _angle_grad,
}


def _no_grad(name, why):
    raise NotImplementedError(f"{name}: gradient not available ({why})")


def _unbroadcast(g, x):
    """Sum ``g`` over the axes along which ``x`` was broadcast (leading axes and static
    length-1 axes), and cast it to ``x``'s dtype: the result has x's ndim and dtype."""
    lead = g.ndim - x.ndim
    if lead > 0:
        g = sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i in range(x.ndim) if x.shape[i] == 1 and g.shape[i] != 1)
    if axes:
        g = sum(g, axis=axes, keepdims=True)
    if g.dtype != x.dtype:
        g = _to_dtype(g, x.dtype)
    return g


def _broadcast_like(g, x):
    """``g`` (whose axes broadcast statically against x) broadcast to x's shape."""
    if g.shape == x.shape:
        return g
    if _b.all(d is not None for d in x.shape):
        return broadcast_to(g, x.shape)
    return BroadcastLike()(g, x)


def _where_true(value, like, dtype):
    """``value`` broadcast to the shape of ``like`` as a fresh array of ``dtype``, from ops
    every linker has: ``where(True, value, like)`` (values of ``like`` are never read)."""
    out = where(Constant(True), value, like)
    return out if out.dtype == dtype else astype(out, dtype)


class BroadcastLike(Op):
    """Input 0 broadcast to the run-time shape of input 1 (whose values are ignored); the
    axes of input 0 must broadcast statically (PyTensor convention). Gradient helper."""

    name = "broadcast_like"
    view_of = {0: 0}

    def output_types(self, inputs):
        g, x = inputs
        shape = _bcast_static("broadcast_like", [g.shape, x.shape])
        if len(shape) != x.ndim:
            raise ValueError(f"broadcast_like: {_fmt(g.shape)} has more axes than {_fmt(x.shape)}")
        return [TensorType(g.dtype, shape)]

    def perform(self, node, values):
        return [_k().broadcast_to(values[0], tuple(values[1].shape))]

    def program_op(self, node):
        return "broadcast_like", {}

    def infer_shape(self, node, shapes):
        out = _bcast_runtime("broadcast_like", [i.shape for i in node.inputs], shapes)
        if out != tuple(shapes[1]):
            raise ValueError(f"broadcast_like: cannot broadcast {tuple(shapes[0])} to {tuple(shapes[1])}")
        return [out]

    def lower(self, node):
        g, x = node.inputs
        return [_where_true(g, x, g.dtype)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None, None]
        return [_unbroadcast(g, x), None]


# ---- public elementwise functions ---------------------------------------------------------

def add(x1, x2):
    """Elementwise ``a + b`` (NumPy broadcasting and NEP 50 promotion)."""
    return _binary("add", x1, x2)


def subtract(x1, x2):
    """Elementwise ``a - b``."""
    return _binary("subtract", x1, x2)


def multiply(x1, x2):
    """Elementwise ``a * b``."""
    return _binary("multiply", x1, x2)


def divide(x1, x2):
    """Elementwise true division (ints give float64, as NumPy)."""
    return _binary("divide", x1, x2)


def power(x1, x2):
    """Elementwise ``a ** b``."""
    return _binary("power", x1, x2)


def maximum(x1, x2):
    """Elementwise maximum; the gradient goes to ``a`` where ``a >= b``."""
    return _binary("maximum", x1, x2)


def minimum(x1, x2):
    """Elementwise minimum; the gradient goes to ``a`` where ``a <= b``."""
    return _binary("minimum", x1, x2)


def floor_divide(x1, x2):
    """Elementwise ``a // b``."""
    return _binary("floor_divide", x1, x2)


def remainder(x1, x2):
    """Elementwise ``a % b`` (sign of the divisor, as NumPy)."""
    return _binary("remainder", x1, x2)


def equal(x1, x2):
    """Elementwise ``a == b`` -> bool (``==`` on Variables is identity, PyTensor convention)."""
    return _binary("equal", x1, x2)


def not_equal(x1, x2):
    """Elementwise ``a != b`` -> bool."""
    return _binary("not_equal", x1, x2)


def less(x1, x2):
    """Elementwise ``a < b`` -> bool."""
    return _binary("less", x1, x2)


def less_equal(x1, x2):
    """Elementwise ``a <= b`` -> bool."""
    return _binary("less_equal", x1, x2)


def greater(x1, x2):
    """Elementwise ``a > b`` -> bool."""
    return _binary("greater", x1, x2)


def greater_equal(x1, x2):
    """Elementwise ``a >= b`` -> bool."""
    return _binary("greater_equal", x1, x2)


def logical_and(x1, x2):
    """Elementwise logical and -> bool."""
    return _binary("logical_and", x1, x2)


def logical_or(x1, x2):
    """Elementwise logical or -> bool."""
    return _binary("logical_or", x1, x2)


eq = equal
neq = not_equal


def _bool_op(name, *args):
    vs = [as_variable(a) if not is_python_scalar(a) else a for a in args]
    for v in vs:
        if isinstance(v, Variable) and v.dtype != "bool":
            raise TypeError(f"operators & | ^ ~ on symbolic variables are logical and need bool "
                            f"operands, got {v.dtype}; use {name} explicitly")
    return _binary(name, *vs) if len(vs) == 2 else logical_not(vs[0])


def negative(x):
    """Elementwise ``-a``."""
    return _unary("negative", x)


def abs(x):  # noqa: A001 - same name as the eager function
    """Elementwise absolute value."""
    return _unary("abs", x)


def exp(x):
    """Elementwise ``e**a``."""
    return _unary("exp", x)


def log(x):
    """Elementwise natural logarithm."""
    return _unary("log", x)


def log1p(x):
    """Elementwise ``log(1 + a)``."""
    return _unary("log1p", x)


def expm1(x):
    """Elementwise ``exp(a) - 1``."""
    return _unary("expm1", x)


def sqrt(x):
    """Elementwise square root."""
    return _unary("sqrt", x)


def tanh(x):
    """Elementwise hyperbolic tangent."""
    return _unary("tanh", x)


def sigmoid(x):
    """Elementwise logistic function ``1 / (1 + exp(-a))`` (dtype as ``exp``)."""
    return _unary("sigmoid", x)


def sign(x):
    """Elementwise sign (gradient zero)."""
    return _unary("sign", x)


def square(x):
    """Elementwise ``a * a``."""
    return _unary("square", x)


def logical_not(x):
    """Elementwise logical not -> bool."""
    return _unary("logical_not", x)


def sin(x):
    """Elementwise sine."""
    return _unary("sin", x)


def cos(x):
    """Elementwise cosine."""
    return _unary("cos", x)


def floor(x):
    """Elementwise floor (gradient zero)."""
    return _unary("floor", x)


def ceil(x):
    """Elementwise ceiling (gradient zero)."""
    return _unary("ceil", x)


def relu(x):
    """``maximum(x, 0)`` (the 0 takes x's dtype; float16/bfloat16 computed in float32, exact).
    Gradient: 1 where x >= 0 (maximum's rule)."""
    x = as_variable(x)
    if x.dtype in ("float16", "bfloat16"):
        return astype(maximum(astype(x, "float32"), 0), x.dtype)
    return maximum(x, 0)


# ---- issue 4 elementwise set ------------------------------------------------------------
# Unary functions take every dtype NumPy's function of that name takes (bool and integers give
# the float dtype ``numpy.exp`` gives them; float16/bfloat16 are computed in float32).

def exp2(x):
    """Elementwise ``2**a``."""
    return _unary("exp2", x)


def log2(x):
    """Elementwise base-2 logarithm."""
    return _unary("log2", x)


def log10(x):
    """Elementwise base-10 logarithm."""
    return _unary("log10", x)


def reciprocal(x):
    """Elementwise ``1 / a`` (integers stay integers, as ``numpy.reciprocal``)."""
    return _unary("reciprocal", x)


def tan(x):
    """Elementwise tangent."""
    return _unary("tan", x)


def arcsin(x):
    """Elementwise inverse sine (NaN outside [-1, 1] for real input)."""
    return _unary("arcsin", x)


def arccos(x):
    """Elementwise inverse cosine (NaN outside [-1, 1] for real input)."""
    return _unary("arccos", x)


def arctan(x):
    """Elementwise inverse tangent."""
    return _unary("arctan", x)


def sinh(x):
    """Elementwise hyperbolic sine."""
    return _unary("sinh", x)


def cosh(x):
    """Elementwise hyperbolic cosine."""
    return _unary("cosh", x)


def rint(x):
    """Elementwise round half to even to an integral value (``numpy.rint``; gradient zero)."""
    return _unary("rint", x)


def softplus(x):
    """Elementwise ``log(1 + exp(a))`` without overflow; real dtypes only (``TypeError`` for
    complex); the float dtype of ``numpy.exp``."""
    return _unary("softplus", x)


def erf(x):
    """Elementwise error function (``scipy.special.erf``); real dtypes only; the float dtype of
    ``numpy.exp`` (int8 -> float16, unlike scipy's float32)."""
    return _unary("erf", x)


def erfc(x):
    """Elementwise ``1 - erf(a)`` computed directly; real dtypes only."""
    return _unary("erfc", x)


def gammaln(x):
    """Elementwise ``log|Gamma(a)|`` (``scipy.special.gammaln``; +inf at the poles); real dtypes
    only. Gradient: ``digamma``."""
    return _unary("gammaln", x)


def digamma(x):
    """Elementwise digamma ``psi(a)`` (``scipy.special.digamma``; NaN at the poles); real dtypes
    only. Gradient: :func:`trigamma`."""
    return _unary("digamma", x)


def trigamma(x):
    """Elementwise trigamma ``psi'(a)``, the derivative of digamma (``scipy.special.polygamma(1,
    a)``): +inf at the poles 0, -1, -2, ..., 0 at +inf, NaN at -inf (scipy gives inf there, but
    the function has no limit). Real dtypes only (``TypeError`` for complex); the float dtype of
    ``numpy.exp``. No gradient (``NotImplementedError``: polygamma(2, x) is not implemented)."""
    return _unary("trigamma", x)


# ---- parts of complex numbers -------------------------------------------------------------

def real(x):
    """Real part (``numpy.real``): complex64 -> float32, complex128 -> float64; any other dtype
    is ``x`` itself. Gradient: ``g`` into the real component."""
    x = as_variable(x)
    return _unary("real", x) if kind_of(x.dtype) == "c" else x


def imag(x):
    """Imaginary part (``numpy.imag``): complex64 -> float32, complex128 -> float64; other
    dtypes give zeros of x's dtype. Gradient: ``i g`` (into the imaginary component)."""
    x = as_variable(x)
    return _unary("imag", x) if kind_of(x.dtype) == "c" else zeros_like(x)


def conj(x):
    """Complex conjugate (``numpy.conj``): same dtype; any other dtype is ``x`` itself (bool
    gives int8, as ``numpy.conjugate``). Gradient: ``conj(g)``."""
    x = as_variable(x)
    if kind_of(x.dtype) == "c":
        return _unary("conj", x)
    return astype(x, "int8") if x.dtype == "bool" else x


conjugate = conj


def angle(x, deg=False):
    """Argument in radians, in [-pi, pi] (``numpy.angle``: ``arctan2(imag, real)``), or in degrees
    with ``deg=True`` (times 180/pi); complex64 -> float32, complex128 -> float64, real dtypes
    ``arctan2(0, x)`` (0 or pi) with arctan2's float dtype. Gradient: ``g * i / conj(z)`` for
    complex z (0 at z = 0), 0 for real x."""
    a = _unary("angle", x)
    return a * (180.0 / np.pi) if deg else a


def arctan2(x1, x2):
    """Elementwise ``atan2(x1, x2)`` (angle of the point (x2, x1)); real dtypes only (``TypeError``
    for complex, as NumPy)."""
    return _binary("arctan2", x1, x2)


def logical_xor(x1, x2):
    """Elementwise logical exclusive or -> bool."""
    return _binary("logical_xor", x1, x2)


class Round(Op):
    """``numpy.round(a, decimals)``: half to even; integers keep their dtype, bool -> float16."""

    name = "round"
    props = ("decimals",)

    def __init__(self, decimals):
        self.decimals = decimals

    def output_types(self, inputs):
        (x,) = inputs
        if x.dtype == "bool" and self.decimals != 0:
            raise TypeError(f"round: cannot round a bool array to decimals={self.decimals}")
        dt = x.dtype if kind_of(x.dtype) in "iu" else _elemwise_dtype("rint", (x.dtype,))
        return [TensorType(dt, x.shape)]

    def perform(self, node, values):
        return [_k().round(values[0], self.decimals)]

    def numpy_perform(self, node, values):
        x = values[0]
        if x.dtype.kind not in "biufc":  # bfloat16 (ml_dtypes): float32, rounded once
            return [np.round(x.astype(np.float32), self.decimals).astype(x.dtype)]
        return [np.round(x, self.decimals)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def program_op(self, node):
        return "round", {"decimals": self.decimals}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [zeros_like(x)]


def round(a, decimals=0):  # noqa: A001 - same name as the eager function
    """Round half to even to ``decimals`` places (``numpy.round``): floats and complex keep
    their dtype, integers keep theirs, bool gives float16 (``TypeError`` with decimals != 0).
    Gradient zero."""
    if isinstance(decimals, (bool, np.bool_)) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    return Round(int(decimals))(as_variable(a))


class Clip(Op):
    """``numpy.clip(x, lo, hi)`` with both bounds (inputs x, lo, hi broadcast together)."""

    name = "clip"

    def output_types(self, inputs):
        x, lo, hi = inputs
        u = _uma()
        dt = u.promote_types(u.promote_types(x.dtype, lo.dtype), hi.dtype).name
        return [TensorType(dt, _bcast_static("clip", [i.shape for i in inputs]))]

    def perform(self, node, values):
        return [_k().clip(*values)]

    def numpy_perform(self, node, values):
        x, lo, hi = values
        dt = np.result_type(x, lo, hi) if x.dtype.kind in "biufc" else x.dtype
        if dt.kind not in "biufc":  # bfloat16 (ml_dtypes): clip in float32, exact
            return [np.clip(x.astype(np.float32), lo.astype(np.float32), hi.astype(np.float32)).astype(dt)]
        return [np.clip(x, lo, hi)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime("clip", [i.shape for i in node.inputs], shapes)]

    def program_op(self, node):
        return "clip", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, lo, hi = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None, None]
        t = maximum(x, lo)  # clip's intermediate (only compared with hi here)
        gx = where(logical_and(greater_equal(x, lo), less_equal(x, hi)), g, 0)
        glo = where(logical_and(less(x, lo), less_equal(lo, hi)), g, 0)
        ghi = where(greater(t, hi), g, 0)
        return [None if not _diff(v.dtype) else _unbroadcast(gv, v) for gv, v in ((gx, x), (glo, lo), (ghi, hi))]


def clip(a, a_min, a_max):
    """``numpy.clip``: each element limited to ``[a_min, a_max]`` (``t = a < a_min ? a_min :
    a``, then ``t > a_max ? a_max : t``; NaN propagates; complex in NumPy's lexicographic
    order). ``None`` drops a bound (then it is ``maximum``/``minimum``, as NumPy does); for an
    integer ``a``, a Python int bound beyond its range is dropped. Result dtype: NumPy 2
    promotion of the three (Python scalars weak). Gradient: to ``a`` where it lies inside the
    bounds, to the bound that was applied elsewhere."""
    a = as_variable(a)
    if kind_of(a.dtype) in "iu":
        info = np.iinfo(np_dtype(a.dtype))
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        if a.dtype == "bool":
            raise TypeError("clip: not supported for dtype bool without bounds (numpy.positive)")
        return a
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    a, lo, hi = _as_inputs("clip", (a, a_min, a_max))
    return Clip()(a, lo, hi)
# ---- end issue 4 elementwise set ----------------------------------------------------------


# ======================================================================================
# where, one_hot, *_like
# ======================================================================================

class Where(Op):
    name = "where"

    def output_types(self, inputs):
        cond, x, y = inputs
        dt = _uma().promote_types(x.dtype, y.dtype).name
        return [TensorType(dt, _bcast_static("where", [cond.shape, x.shape, y.shape]))]

    def perform(self, node, values):
        return [_k().where(*values)]

    def infer_shape(self, node, shapes):
        return [_bcast_runtime("where", [i.shape for i in node.inputs], shapes)]

    def program_op(self, node):
        return "where", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        cond, x, y = node.inputs
        if g is None:
            return [None, None, None]
        gx = _unbroadcast(where(cond, g, 0), x) if _diff(x.dtype) else None
        gy = _unbroadcast(where(cond, 0, g), y) if _diff(y.dtype) else None
        return [None, gx, gy]


def where(condition, x, y):
    """``x`` where ``condition`` else ``y``, broadcasting all three; dtype = result_type(x, y)."""
    condition = as_variable(condition)
    x, y = _as_inputs("where", (x, y))
    return Where()(condition, x, y)


class OneHot(Op):
    name = "one_hot"
    props = ("depth", "dtype")

    def __init__(self, depth, dtype):
        self.depth, self.dtype = depth, dtype

    def output_types(self, inputs):
        (idx,) = inputs
        if kind_of(idx.dtype) not in "iu":
            raise TypeError(f"one_hot: indices must have an integer dtype, got {idx.dtype}")
        return [TensorType(self.dtype, idx.shape + (self.depth,))]

    def perform(self, node, values):
        return [_k().one_hot(values[0], self.depth, dtype=self.dtype)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0]) + (self.depth,)]

    def program_op(self, node):
        return "one_hot", {"depth": self.depth, "dtype": self.dtype}

    def grad(self, node, output_grads):
        return [None]


def one_hot(indices, depth, dtype="float64"):
    """One-hot encoding: shape ``indices.shape + (depth,)``, 1 where ``index == j``.

    ``indices`` must be integer (``TypeError``); ``depth`` a non-negative int.
    """
    if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)):
        raise TypeError(f"one_hot: depth must be an int, got {depth!r}")
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
    return OneHot(int(depth), dtype_name(dtype))(as_variable(indices))


class FillLike(Op):
    """zeros_like / ones_like / full_like: a new array of x's shape (values ignored)."""

    props = ("name", "fill_value", "dtype")

    def __init__(self, name, fill_value, dtype):
        self.name, self.fill_value, self.dtype = name, fill_value, dtype

    def output_types(self, inputs):
        return [TensorType(self.dtype, inputs[0].shape)]

    def perform(self, node, values):
        u = _k()
        if self.name == "full_like":
            return [u.full_like(values[0], self.fill_value, dtype=self.dtype)]
        return [getattr(u, self.name)(values[0], dtype=self.dtype)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def program_op(self, node):
        if self.name == "full_like":
            return "full_like", {"fill_value": self.fill_value, "dtype": self.dtype}
        return self.name, {"dtype": self.dtype}

    def lower(self, node):
        """``where(True, fill, x)``: the same array from ops every linker has."""
        fill = {"zeros_like": 0, "ones_like": 1}.get(self.name, self.fill_value)
        return [_where_true(_weak_constant(self.name, fill, np_dtype(self.dtype)), node.inputs[0], self.dtype)]

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
    dt = dtype_name(dtype) if dtype is not None else a.dtype
    _weak_constant("full_like", fv, np_dtype(dt))  # range check
    return FillLike("full_like", fv, dt)(a)


# ======================================================================================
# creation (no symbolic inputs: constants)
# ======================================================================================

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


# ======================================================================================
# casting
# ======================================================================================

class Cast(Op):
    name = "astype"
    props = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def output_types(self, inputs):
        return [TensorType(self.dtype, inputs[0].shape)]

    def perform(self, node, values):
        return [values[0].astype(self.dtype)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def program_op(self, node):
        return "astype", {"dtype": self.dtype}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype) or not _diff(self.dtype):
            return [None]
        return [_to_dtype(g, x.dtype)]


def astype(x, dtype, *, copy=True):
    """``x`` converted to ``dtype`` (values converted, never reinterpreted).

    Casting to the same dtype returns ``x`` itself (a compiled function still never returns
    memory it shares with an input or another output)."""
    x = as_variable(x)
    dt = dtype_name(dtype)
    if dt == x.dtype:
        return x
    return Cast(dt)(x)


cast = astype


# ======================================================================================
# reductions
# ======================================================================================

def _sum_dtype(dt):
    """NumPy 2's accumulator dtype of sum/prod/cumsum: bool and signed ints -> int64, unsigned
    ints -> uint64, floats and complex keep theirs."""
    k = kind_of(dt)
    return "int64" if k in "bi" else "uint64" if k == "u" else dt


def _stat_dtype(dt):
    """var/std/logsumexp (and mean for non-complex): float64 for bool/ints, the real dtype of a
    complex dtype, else the float dtype itself."""
    k = kind_of(dt)
    if k == "c":
        return "float32" if dt == "complex64" else "float64"
    return dt if k == "f" else "float64"


def _reduce_dtype(name, dt):
    """Result dtype of a reduction on ``dt`` (NumPy 2; every dtype)."""
    if name in ("sum", "prod"):
        return _sum_dtype(dt)
    if name == "mean":
        return dt if kind_of(dt) in "fc" else "float64"
    if name in ("argmax", "argmin"):
        return "int64"
    if name in ("all", "any"):
        return "bool"
    return dt


class Reduce(Op):
    """sum/mean/max/min/prod/all/any over ``axis`` (sorted tuple, None = all axes) and
    argmax/argmin (``axis`` one int or None = flattened)."""

    props = ("name", "axis", "keepdims")

    def __init__(self, name, axis, keepdims):
        self.name, self.axis, self.keepdims = name, axis, keepdims

    def _axes(self, ndim):
        return tuple(range(ndim)) if self.axis is None else self.axis

    def _out_shape(self, shape):
        axes = self._axes(len(shape))
        if self.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(shape))
        return tuple(d for i, d in enumerate(shape) if i not in axes)

    def _check_empty(self, shape):
        if self.name in ("max", "min", "argmax", "argmin"):
            axes = self._axes(len(shape))
            if _b.any(shape[a] == 0 for a in axes) or (self.axis is None and 0 in shape):
                raise ValueError(f"{self.name}: zero-size array to reduction operation which has no identity "
                                 f"(shape {tuple(shape)})")

    def output_types(self, inputs):
        (x,) = inputs
        self._check_empty(x.shape)
        return [TensorType(_reduce_dtype(self.name, x.dtype), self._out_shape(x.shape))]

    def _eager_axis(self):
        if self.axis is None:
            return None
        return self.axis[0] if len(self.axis) == 1 else self.axis

    def perform(self, node, values):
        return [getattr(_uma(), self.name)(values[0], axis=self._eager_axis(), keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        self._check_empty(shapes[0])
        return [self._out_shape(tuple(shapes[0]))]

    def program_op(self, node):
        return self.name, {"axis": self._eager_axis(), "keepdims": self.keepdims}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        out = node.outputs[0]
        if g is None or not _diff(x.dtype) or self.name in ("all", "any", "argmax", "argmin"):
            return [None]
        axes = self._axes(x.ndim)
        gk, ok = g, out  # gradient and result with the reduced axes kept (length 1)
        if not self.keepdims:
            for a in axes:  # ascending: each insert lands where the axis was
                gk = expand_dims(gk, a)
                ok = expand_dims(ok, a)
        if self.name == "sum":
            gx = _broadcast_like(gk, x)
        elif self.name == "mean":
            dims = [x.shape[a] for a in axes]
            if _b.all(d is not None for d in dims):
                gx = _broadcast_like(gk / float(_b.max(_prod(dims), 1)), x)
            else:  # the count is only known at run time
                count = sum(ones_like(x, dtype=g.dtype), axis=axes, keepdims=True)
                gx = _broadcast_like(gk / count, x)
        elif self.name in ("max", "min"):
            gx = where(equal(x, ok), gk, 0)
        elif self.name == "prod":
            gx = _prod_grad(gk, x, axes)
        else:  # pragma: no cover
            return [None]
        return [_unbroadcast(gx, x) if gx.shape != x.shape or gx.dtype != x.dtype else gx]


def _ufunc_axis(a, axis):
    """NumPy's ufunc reductions accept an int axis 0 or -1 on a 0-d array (as None)."""
    if a.ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1):
        return None
    return axis


def _reduce(name, a, axis, keepdims):
    a = as_variable(a)
    if name not in ("mean",):
        axis = _ufunc_axis(a, axis)
    if name in ("argmax", "argmin"):
        if axis is not None and isinstance(axis, (tuple, list)):
            raise TypeError(f"{name}: axis must be an int or None, got {axis!r}")
        ax = None if axis is None else (_norm_axis(name, axis, a.ndim),)
    else:
        ax = _norm_axes(name, axis, a.ndim)
        if ax is not None and len(ax) == a.ndim:
            ax = None
    return Reduce(name, ax, bool(keepdims))(a)


def _reduce_in(name, a, axis, keepdims, dtype):
    """``name`` computed in ``dtype`` with a ``dtype`` result (NumPy's and the Array API's
    ``dtype=`` of sum/prod/mean): the input converted to ``dtype`` first, the result after
    (float16/bfloat16 accumulate in float32, as every uma reduction of them does)."""
    if dtype is None:
        return _reduce(name, a, axis, keepdims)
    a = as_variable(a)
    if name == "mean" and kind_of(dtype_name(dtype)) in "iub":
        # NumPy: the sum in ``dtype`` (wrapping), then divided and converted back (truncated)
        total = astype(_reduce("sum", astype(a, dtype), axis, keepdims), dtype)
        count = _reduce("sum", ones_like(a, dtype="int64"), axis, keepdims)
        return astype(divide(total, count), dtype)
    return astype(_reduce(name, astype(a, dtype), axis, keepdims), dtype)


def sum(a, axis=None, keepdims=False, *, dtype=None):  # noqa: A001
    """Sum over ``axis`` (int, tuple or None = all); ints/bool sum to int64 (NumPy).
    ``dtype``: accumulate in and return that dtype (Array API standard, sum)."""
    return _reduce_in("sum", a, axis, keepdims, dtype)


def mean(a, axis=None, keepdims=False, *, dtype=None):
    """Arithmetic mean over ``axis``; ints give float64 (NumPy). ``dtype``: compute in and
    return that dtype (numpy.mean)."""
    return _reduce_in("mean", a, axis, keepdims, dtype)


def max(a, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates; complex: lexicographic). Gradient: each element
    equal to the maximum gets the full upstream gradient (ties all receive it; PyTensor's rule)."""
    return _reduce("max", a, axis, keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``; gradient to every minimal element."""
    return _reduce("min", a, axis, keepdims)


def prod(a, axis=None, keepdims=False, *, dtype=None):
    """Product over ``axis``; ints/bool give int64 (unsigned: uint64), as NumPy. The gradient is
    the product of the other elements, exact where ``a`` has zeros. ``dtype``: accumulate in
    and return that dtype (Array API standard, prod)."""
    return _reduce_in("prod", a, axis, keepdims, dtype)


def all(a, axis=None, keepdims=False):  # noqa: A001
    """Logical and over ``axis`` -> bool."""
    return _reduce("all", a, axis, keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001
    """Logical or over ``axis`` -> bool."""
    return _reduce("any", a, axis, keepdims)


def argmax(a, axis=None, keepdims=False):
    """Index of the maximum along one ``axis`` (None: of the flattened array) -> int64."""
    return _reduce("argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    """Index of the minimum along one ``axis`` -> int64."""
    return _reduce("argmin", a, axis, keepdims)


# ======================================================================================
# softmax / log_softmax (composite: lowered to primitives for the cpu Program)
# ======================================================================================

class Softmax(Op):
    """softmax / log_softmax along ``axis``, computed stably (the maximum is subtracted)."""

    props = ("name", "axis")

    def __init__(self, name, axis):
        self.name, self.axis = name, axis

    def output_types(self, inputs):
        (x,) = inputs
        if not is_float(x.dtype):
            raise TypeError(f"{self.name}: needs a float input, got {x.dtype}")
        return [TensorType(x.dtype, x.shape)]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis)]

    def program_op(self, node):
        return self.name, {"axis": self.axis}

    def lower(self, node):
        """The same computation from primitive ops (for linkers without this op)."""
        x = node.inputs[0]
        if x.dtype in ("float16", "bfloat16"):  # computed in float32, as the kernel does
            x = astype(x, "float32")
            return [astype(v, node.inputs[0].dtype) for v in Softmax(self.name, self.axis).lower(
                Softmax(self.name, self.axis).make_node(x))]
        z = x - max(x, axis=self.axis, keepdims=True)
        if self.name == "softmax":
            e = exp(z)
            return [e / sum(e, axis=self.axis, keepdims=True)]
        return [z - log(sum(exp(z), axis=self.axis, keepdims=True))]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None]
        out = node.outputs[0]
        dt = out.dtype
        if dt in ("float16", "bfloat16"):  # the gradient in float32 too
            out, g = astype(out, "float32"), astype(g, "float32")
        if self.name == "softmax":
            r = out * (g - sum(g * out, axis=self.axis, keepdims=True))
        else:
            r = g - exp(out) * sum(g, axis=self.axis, keepdims=True)
        return [astype(r, dt)]


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, stable (subtracts the max); float input required."""
    x = as_variable(x)
    if x.ndim == 0:
        raise ValueError("softmax: needs at least 1 dimension")
    return Softmax("softmax", _norm_axis("softmax", axis, x.ndim))(x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis)``, stable (subtracts the max); float input required."""
    x = as_variable(x)
    if x.ndim == 0:
        raise ValueError("log_softmax: needs at least 1 dimension")
    return Softmax("log_softmax", _norm_axis("log_softmax", axis, x.ndim))(x)


class SoftmaxCrossEntropy(Op):
    """Per-example softmax cross-entropy of logits (N, C) with integer labels (N,)."""

    name = "softmax_cross_entropy"

    def output_types(self, inputs):
        z, y = inputs
        if z.ndim != 2 or not is_float(z.dtype):
            raise TypeError(f"softmax_cross_entropy: logits must be a 2-d float array, got "
                            f"{z.dtype} with {z.ndim} dimension(s)")
        if y.ndim != 1 or kind_of(y.dtype) not in "iu":
            raise TypeError(f"softmax_cross_entropy: labels must be a 1-d integer array, got {y.dtype} "
                            f"with {y.ndim} dimension(s)")
        n = _bcast_static("softmax_cross_entropy", [(z.shape[0],), y.shape])
        return [TensorType(z.dtype, n)]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy(values[0], values[1])]

    def infer_shape(self, node, shapes):
        if shapes[0][0] != shapes[1][0]:
            raise ValueError(f"softmax_cross_entropy: {shapes[1][0]} labels for {shapes[0][0]} rows of logits")
        return [(shapes[0][0],)]

    def program_op(self, node):
        return "softmax_cross_entropy", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None, None]
        z, y = node.inputs
        return [SoftmaxCrossEntropyGrad()(g, z, y), None]


class SoftmaxCrossEntropyGrad(Op):
    """d softmax_cross_entropy / d logits, scaled by the upstream gradient (N,)."""

    name = "softmax_cross_entropy_grad"

    def output_types(self, inputs):
        g, z, y = inputs
        return [TensorType(z.dtype, z.shape)]

    def perform(self, node, values):
        return [_k().softmax_cross_entropy_grad(values[0], values[1], values[2])]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[1])]

    def program_op(self, node):
        return "softmax_cross_entropy_grad", {}

    def grad(self, node, output_grads):
        raise NotImplementedError("softmax_cross_entropy: second derivatives are not implemented")


def softmax_cross_entropy(logits, labels):
    """Per-example cross-entropy of ``softmax(logits)`` against integer ``labels``.

    ``logits``: (N, C) float32/float64; ``labels``: (N,) integers in [0, C). Returns (N,) of the
    logits' dtype: ``logsumexp(logits[i]) - logits[i, labels[i]]``, computed in one stable pass
    per row, with the gradient ``softmax(logits) - one_hot(labels)`` (scaled by the upstream
    gradient) in one op. Equal to ``-sum(one_hot(labels) * log_softmax(logits), axis=1)``.
    TensorFlow's ``sparse_softmax_cross_entropy_with_logits``; PyTorch's
    ``cross_entropy(..., reduction="none")``. TypeError for other dtypes or ranks; ValueError
    (at call time) for a label outside [0, C).
    """
    return SoftmaxCrossEntropy()(as_variable(logits), as_variable(labels))


# ======================================================================================
# linear algebra
# ======================================================================================

@functools.lru_cache(maxsize=None)
def _promote(*dts):
    """NumPy 2 promotion of dtype names (bfloat16 as ml_dtypes promotes it)."""
    u = _uma()
    r = dts[0]
    for d in dts[1:]:
        r = u.promote_types(r, d).name
    return r


def _matmul_dtype(a, b):
    return _promote(a, b)


def _matmul_shape(a, b, static, sa=None, sb=None):
    """NumPy matmul shape rule; ``static``: entries may be None (unknown)."""
    if len(a) == 0 or len(b) == 0:
        raise ValueError("matmul: input operand does not have enough dimensions (0-d operands are not allowed)")
    A = ((1,) + tuple(a)) if len(a) == 1 else tuple(a)
    B = (tuple(b) + (1,)) if len(b) == 1 else tuple(b)
    k1, k2 = A[-1], B[-2]
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"matmul: mismatch in the core dimension: shapes {_fmt(a) if static else tuple(a)} "
                         f"and {_fmt(b) if static else tuple(b)} ({k1} != {k2})")
    if static:
        batch = _bcast_static("matmul", [A[:-2], B[:-2]])
    else:
        SA = ((1,) + tuple(sa)) if len(sa) == 1 else tuple(sa)
        SB = (tuple(sb) + (1,)) if len(sb) == 1 else tuple(sb)
        batch = _bcast_runtime("matmul", [SA[:-2], SB[:-2]], [A[:-2], B[:-2]])
    out = batch
    if len(a) > 1:
        out = out + (A[-2],)
    if len(b) > 1:
        out = out + (B[-1],)
    return tuple(out)


class MatMul(Op):
    name = "matmul"

    def output_types(self, inputs):
        a, b = inputs
        return [TensorType(_matmul_dtype(a.dtype, b.dtype), _matmul_shape(a.shape, b.shape, True))]

    def perform(self, node, values):
        return [_k().matmul(*values)]

    def infer_shape(self, node, shapes):
        a, b = node.inputs
        return [_matmul_shape(shapes[0], shapes[1], False, a.shape, b.shape)]

    def program_op(self, node):
        return "matmul", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        a, b = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None]
        A = expand_dims(a, 0) if a.ndim == 1 else a
        B = expand_dims(b, 1) if b.ndim == 1 else b
        G = g
        if b.ndim == 1:
            G = expand_dims(G, G.ndim)
        if a.ndim == 1:
            G = expand_dims(G, G.ndim - 1)

        def swap(v):
            perm = list(range(v.ndim))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            return transpose(v, perm)

        ga = gb = None
        if _diff(a.dtype):
            ga = _unbroadcast(matmul(G, swap(_cj(B))), A)
            if a.ndim == 1:
                ga = squeeze(ga, 0)
        if _diff(b.dtype):
            gb = _unbroadcast(matmul(swap(_cj(A)), G), B)
            if b.ndim == 1:
                gb = squeeze(gb, gb.ndim - 1)
        return [ga, gb]


def matmul(x1, x2):
    """NumPy ``matmul``: 1-d operands promoted and the added axis removed, batch axes
    broadcast; ``ValueError`` naming matmul for a core-dimension mismatch or a 0-d operand."""
    return MatMul()(as_variable(x1), as_variable(x2))


def dot(a, b):
    """``dot`` for ndim <= 2 (= matmul; a 0-d operand multiplies). ``ValueError`` for ndim > 2."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError(f"dot: only operands with ndim <= 2 are supported (got {a.ndim} and {b.ndim}); use matmul")
    return matmul(a, b)


# ======================================================================================
# shape ops
# ======================================================================================

def _as_shape(opname, shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, Variable):
        raise TypeError(f"{opname}: shape must be a tuple of ints (symbolic shapes are not supported)")
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{opname}: shape must be a tuple of ints, got {shape!r}") from None
    for d in shape:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{opname}: shape entries must be ints, got {d!r} in {shape!r}")
    return tuple(int(d) for d in shape)


def _reshape_out(shape, newshape):
    neg = [i for i, d in enumerate(newshape) if d == -1]
    known_in = _b.all(d is not None for d in shape)
    size = _prod(shape) if known_in else None
    if not neg:
        if known_in and size != _prod(newshape):
            raise ValueError(f"reshape: cannot reshape array of size {size} into shape {newshape}")
        return newshape
    rest = _prod(d for d in newshape if d != -1)
    if size is None:
        return tuple(None if d == -1 else d for d in newshape)
    if rest == 0 or size % rest:
        raise ValueError(f"reshape: cannot reshape array of size {size} into shape {newshape}")
    return tuple(size // rest if d == -1 else d for d in newshape)


class Reshape(Op):
    name = "reshape"
    props = ("shape",)
    view_of = {0: 0}

    def __init__(self, shape):
        self.shape = shape

    def output_types(self, inputs):
        return [TensorType(inputs[0].dtype, _reshape_out(inputs[0].shape, self.shape))]

    def perform(self, node, values):
        return [_k().reshape(values[0], self.shape)]

    def infer_shape(self, node, shapes):
        return [_reshape_out(tuple(shapes[0]), self.shape)]

    def program_op(self, node):
        return "reshape", {"shape": self.shape}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [_reshape_like(g, x)]


def reshape(a, shape):
    """Reshape to ``shape`` (ints; one may be -1). ``ValueError`` if the size differs."""
    a = as_variable(a)
    shape = _as_shape("reshape", shape)
    if _b.sum(1 for d in shape if d == -1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (-1)")
    if _b.any(d < -1 for d in shape):
        raise ValueError(f"reshape: negative dimensions not allowed: {shape}")
    if shape == a.shape:
        return a
    return Reshape(shape)(a)


class ReshapeLike(Op):
    """Reshape input 0 to the run-time shape of input 1 (gradient helper). May be a view."""

    name = "reshape_like"
    view_of = {0: 0}

    def output_types(self, inputs):
        return [TensorType(inputs[0].dtype, inputs[1].shape)]

    def perform(self, node, values):
        return [_k().reshape(values[0], tuple(values[1].shape))]

    def infer_shape(self, node, shapes):
        if _prod(shapes[0]) != _prod(shapes[1]):
            raise ValueError(f"reshape_like: cannot reshape {tuple(shapes[0])} into {tuple(shapes[1])}")
        return [tuple(shapes[1])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else _reshape_like(g, node.inputs[0]), None]


def _reshape_like(g, x):
    if g.shape == x.shape:
        return g
    unknown = [d for d in x.shape if d is None]
    if not unknown:
        return reshape(g, x.shape)
    if len(unknown) == 1 and 0 not in x.shape:
        return reshape(g, tuple(-1 if d is None else d for d in x.shape))
    return ReshapeLike()(g, x)


class Transpose(Op):
    name = "transpose"
    props = ("axes",)
    view_of = {0: 0}

    def __init__(self, axes):
        self.axes = axes

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, tuple(x.shape[a] for a in self.axes))]

    def perform(self, node, values):
        return [_k().transpose(values[0], self.axes)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0][a] for a in self.axes)]

    def program_op(self, node):
        return "transpose", {"axes": self.axes}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [transpose(g, tuple(int(i) for i in np.argsort(self.axes)))]


def transpose(a, axes=None):
    """Permute axes (``None``: reverse them). A view. ``ValueError`` for a bad permutation."""
    a = as_variable(a)
    if axes is None:
        perm = tuple(range(a.ndim))[::-1]
    else:
        axes = tuple(axes)
        if len(axes) != a.ndim:
            raise ValueError(f"transpose: axes {axes} don't match array of ndim {a.ndim}")
        perm = tuple(_norm_axis("transpose", ax, a.ndim) for ax in axes)
        if len(set(perm)) != len(perm):
            raise ValueError(f"transpose: repeated axis in {axes}")
    if perm == tuple(range(a.ndim)):
        return a
    return Transpose(perm)(a)


def _bto_shape(opname, xshape, shape, static_x, runtime):
    if len(shape) < len(xshape):
        raise ValueError(f"{opname}: cannot broadcast shape {_fmt(xshape)} to {shape} (fewer dimensions)")
    lead = len(shape) - len(xshape)
    for i, d in enumerate(xshape):
        t = shape[lead + i]
        if d is None or d == t:
            continue
        if d == 1 and (not runtime or static_x[i] == 1):
            continue
        if d == 1:
            raise ValueError(f"{opname}: input of run-time shape {tuple(xshape)} would be broadcast along "
                             f"axis {i}, but its type {_fmt(static_x)} does not declare that axis as length 1 "
                             f"(PyTensor convention)")
        raise ValueError(f"{opname}: cannot broadcast shape {_fmt(xshape) if not runtime else tuple(xshape)} to {shape}")
    return tuple(shape)


class BroadcastTo(Op):
    name = "broadcast_to"
    props = ("shape",)
    view_of = {0: 0}

    def __init__(self, shape):
        self.shape = shape

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _bto_shape("broadcast_to", x.shape, self.shape, x.shape, False))]

    def perform(self, node, values):
        return [_k().broadcast_to(values[0], self.shape)]

    def infer_shape(self, node, shapes):
        return [_bto_shape("broadcast_to", tuple(shapes[0]), self.shape, node.inputs[0].shape, True)]

    def program_op(self, node):
        return "broadcast_to", {"shape": self.shape}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [_unbroadcast(g, x)]


def broadcast_to(a, shape):
    """Broadcast ``a`` to ``shape`` (ints), a read-only view."""
    a = as_variable(a)
    shape = _as_shape("broadcast_to", shape)
    if _b.any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: negative dimensions in {shape}")
    if shape == a.shape:
        return a
    return BroadcastTo(shape)(a)


def _concat_shape(opname, shapes, axis, static):
    nd = len(shapes[0])
    for s in shapes:
        if len(s) != nd:
            raise ValueError(f"{opname}: all the input arrays must have the same number of dimensions, "
                             f"got shapes " + " ".join(_fmt(t) if static else str(tuple(t)) for t in shapes))
    out = []
    for ax in range(nd):
        dims = [s[ax] for s in shapes]
        if ax == axis:
            out.append(None if _b.any(d is None for d in dims) else _b.sum(dims))
            continue
        known = {d for d in dims if d is not None}
        if len(known) > 1:
            raise ValueError(f"{opname}: input array dimensions except for the concatenation axis must "
                             f"match exactly, got shapes " + " ".join(_fmt(t) if static else str(tuple(t)) for t in shapes))
        out.append(known.pop() if known else None)
    return tuple(out)


class Concatenate(Op):
    name = "concatenate"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        dt = _promote(*[i.dtype for i in inputs])
        return [TensorType(dt, _concat_shape("concatenate", [i.shape for i in inputs], self.axis, True))]

    def perform(self, node, values):
        return [_k().concatenate(list(values), axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [_concat_shape("concatenate", [tuple(s) for s in shapes], self.axis, False)]

    def program_op(self, node):
        return "concatenate", {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None] * len(node.inputs)
        res = []
        for k, x in enumerate(node.inputs):
            if not _diff(x.dtype):
                res.append(None)
                continue
            res.append(_to_dtype(Segment(self.axis, k)(g, *node.inputs), x.dtype))
        return res


class Segment(Op):
    """Piece ``index`` of ``g`` split along ``axis`` like the inputs ``xs`` of a concatenate
    (gradient helper; reference only: the offsets come from the run-time shapes)."""

    name = "segment"
    props = ("axis", "index")

    def __init__(self, axis, index):
        self.axis, self.index = axis, index

    def output_types(self, inputs):
        g, xs = inputs[0], inputs[1:]
        shape = tuple(g.shape[:self.axis]) + (xs[self.index].shape[self.axis],) + tuple(g.shape[self.axis + 1:])
        return [TensorType(g.dtype, shape)]

    def perform(self, node, values):
        g, xs = values[0], values[1:]
        start = _b.sum(x.shape[self.axis] for x in xs[:self.index])
        stop = start + xs[self.index].shape[self.axis]
        return [g[(slice(None),) * self.axis + (slice(start, stop),)]]

    view_of = {0: 0}

    def infer_shape(self, node, shapes):
        g, xs = shapes[0], shapes[1:]
        return [tuple(g[:self.axis]) + (xs[self.index][self.axis],) + tuple(g[self.axis + 1:])]

    def grad(self, node, output_grads):  # pragma: no cover - second derivatives unused
        raise NotImplementedError("segment: gradient not implemented")


def _seq_inputs(opname, arrays):
    if isinstance(arrays, Variable):
        raise TypeError(f"{opname}: expects a sequence of arrays, got a single Variable")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{opname}: need at least one array")
    return _as_inputs(opname, arrays)


def concatenate(arrays, axis=0):
    """Join arrays along an existing ``axis`` (dtypes promoted)."""
    xs = _seq_inputs("concatenate", arrays)
    if xs[0].ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = _norm_axis("concatenate", axis, xs[0].ndim)
    return Concatenate(ax)(*xs)


class Stack(Op):
    name = "stack"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def _shape(self, shapes, static):
        first = tuple(shapes[0])
        for s in shapes[1:]:
            if len(s) != len(first):
                raise ValueError("stack: all input arrays must have the same shape, got "
                                 + " ".join(_fmt(t) if static else str(tuple(t)) for t in shapes))
        merged = []
        for ax in range(len(first)):
            known = {s[ax] for s in shapes if s[ax] is not None}
            if len(known) > 1:
                raise ValueError("stack: all input arrays must have the same shape, got "
                                 + " ".join(_fmt(t) if static else str(tuple(t)) for t in shapes))
            merged.append(known.pop() if known else None)
        return tuple(merged[:self.axis]) + (len(shapes),) + tuple(merged[self.axis:])

    def output_types(self, inputs):
        dt = _promote(*[i.dtype for i in inputs])
        return [TensorType(dt, self._shape([i.shape for i in inputs], True))]

    def perform(self, node, values):
        return [_k().stack(list(values), axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [self._shape(shapes, False)]

    def program_op(self, node):
        return "stack", {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None] * len(node.inputs)
        return [_to_dtype(getitem(g, (slice(None),) * self.axis + (k,)), x.dtype) if _diff(x.dtype) else None
                for k, x in enumerate(node.inputs)]


def stack(arrays, axis=0):
    """Join same-shaped arrays along a new ``axis``."""
    xs = _seq_inputs("stack", arrays)
    ax = _norm_axis("stack", axis, xs[0].ndim + 1)
    return Stack(ax)(*xs)


class ExpandDims(Op):
    name = "expand_dims"
    props = ("axis",)
    view_of = {0: 0}

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, x.shape[:self.axis] + (1,) + x.shape[self.axis:])]

    def perform(self, node, values):
        return [_k().expand_dims(values[0], self.axis)]

    def infer_shape(self, node, shapes):
        s = tuple(shapes[0])
        return [s[:self.axis] + (1,) + s[self.axis:]]

    def program_op(self, node):
        return "expand_dims", {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [squeeze(g, self.axis)]


def expand_dims(a, axis):
    """Insert a length-1 axis at ``axis`` (in ``[-ndim-1, ndim]``). A view."""
    a = as_variable(a)
    return ExpandDims(_norm_axis("expand_dims", axis, a.ndim + 1))(a)


class Squeeze(Op):
    name = "squeeze"
    props = ("axis",)
    view_of = {0: 0}

    def __init__(self, axis):
        self.axis = axis

    def _shape(self, shape, runtime):
        for a in self.axis:
            if shape[a] is not None and shape[a] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size not equal "
                                 f"to one (axis {a} of shape {tuple(shape) if runtime else _fmt(shape)})")
        return tuple(d for i, d in enumerate(shape) if i not in self.axis)

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, self._shape(x.shape, False))]

    def perform(self, node, values):
        return [_k().squeeze(values[0], self.axis)]

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]), True)]

    def program_op(self, node):
        return "squeeze", {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        for a in self.axis:
            g = expand_dims(g, a)
        return [g]


def squeeze(a, axis=None):
    """Remove length-1 axes: ``axis`` (int or tuple) or, when None, every axis whose *static*
    length is 1 (an axis of unknown length is kept: PyTensor convention)."""
    a = as_variable(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = _norm_axes("squeeze", axis, a.ndim)
    if not axes:
        return a
    return Squeeze(axes)(a)


# ======================================================================================
# basic indexing
# ======================================================================================

def _norm_index(index, ndim):
    """Normalise a basic index to a tuple of int / slice / None, with Ellipsis expanded."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for it in index:
        if isinstance(it, Variable):
            raise TypeError("getitem: symbolic indices are not supported (only basic indexing with "
                            "ints, slices, None and ...)")
        if it is None or it is Ellipsis:
            items.append(it)
        elif isinstance(it, slice):
            parts = []
            for p in (it.start, it.stop, it.step):
                if p is None:
                    parts.append(None)
                elif isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
                    parts.append(int(p))
                else:
                    raise IndexError(f"getitem: slice indices must be integers or None, got {p!r}")
            if parts[2] == 0:
                raise ValueError("getitem: slice step cannot be zero")
            items.append(slice(*parts))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            items.append(int(it))
        else:
            raise IndexError(f"getitem: only integers, slices, None and ... are valid indices "
                             f"(basic indexing), got {it!r}")
    if _b.sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("getitem: an index can only have a single ellipsis ('...')")
    consumed = _b.sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"getitem: too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (ndim - consumed)
    else:
        items += [slice(None)] * (ndim - consumed)
    return tuple(items)


def _index_shape(index, shape, runtime):
    out, ax = [], 0
    for it in index:
        if it is None:
            out.append(1)
            continue
        d = shape[ax]
        if isinstance(it, int):
            if d is not None and not -d <= it < d:
                raise IndexError(f"getitem: index {it} is out of bounds for axis {ax} with size {d}")
        elif d is not None:
            out.append(len(range(*it.indices(d))))
        else:
            out.append(None)
        ax += 1
    return tuple(out)


class GetItem(Op):
    name = "getitem"
    props = ("index",)
    view_of = {0: 0}

    def __init__(self, index):
        self.index = index

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _index_shape(self.index, x.shape, False))]

    def perform(self, node, values):
        return [values[0][self.index]]

    def program_op(self, node):
        return "getitem", {"index": self.index}

    def infer_shape(self, node, shapes):
        return [_index_shape(self.index, tuple(shapes[0]), True)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [GetItemGrad(self.index)(g, x)]


class GetItemGrad(Op):
    """zeros like input 1 with input 0 written at ``index`` (gradient of getitem; reference only)."""

    name = "getitem_grad"
    props = ("index",)

    def __init__(self, index):
        self.index = index

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(x.dtype, x.shape)]

    def program_op(self, node):
        return "getitem_grad", {"index": self.index, "dtype": node.outputs[0].dtype}

    def perform(self, node, values):
        g, x = values
        # on x's device (a cuda linker's values stay on the GPU)
        z = _k().zeros(tuple(x.shape), dtype=node.outputs[0].dtype, device=getattr(x, "device", None))
        z[self.index] = g
        return [z]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[1])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else getitem(g, self.index), None]


def getitem(a, index):
    """Basic indexing ``a[index]`` (ints, slices with any step, None, ...): a view. Advanced
    indices: one integer array (list, array or integer Variable) with only full slices around
    it (``a[idx]``, ``a[:, idx]``: :func:`take` along that axis) or a bool mask over the leading
    axes (``a[mask]``: shape ``(count,) + a.shape[mask.ndim:]``).

    ``IndexError`` for an out-of-range int (when the length is static), too many indices or
    a non-basic index; ``TypeError`` for a symbolic index."""
    a = as_variable(a)
    adv = _split_advanced("getitem", index, a.ndim)
    if adv is not None:  # x[int_array], x[:, int_array], x[mask] (reduce-linalg)
        kind, axis, v = adv
        return MaskSelect()(a, v) if kind == "mask" else Take(axis)(a, v)
    idx = _norm_index(index, a.ndim)
    if _b.all(isinstance(it, slice) and it == slice(None) for it in idx):
        return a
    return GetItem(idx)(a)


# ======================================================================================
# reduce-linalg: statistics, cumulative ops, linear algebra, split, advanced indexing,
# functional updates (every dtype; gradients for float inputs)
# ======================================================================================

def _prod_grad(gk, x, axes):
    """d prod(x) / dx for the upstream gradient ``gk`` (reduced axes kept, length 1): the
    product of the other elements of each group, exact with zeros (one zero: only that entry
    gets a gradient; two or more: none)."""
    zero = equal(x, 0)
    nz = where(zero, 1, x)
    p_nz = prod(nz, axis=axes, keepdims=True)
    n_zero = sum(zero, axis=axes, keepdims=True)
    none = equal(n_zero, 0)
    one = logical_and(equal(n_zero, 1), zero)
    return gk * _cj(where(none, p_nz / nz, where(one, p_nz, 0)))


def _keep_axes(v, axes, keepdims):
    """``v`` with the reduced ``axes`` re-inserted as length-1 axes (when not kept)."""
    if not keepdims:
        for a in axes:
            v = expand_dims(v, a)
    return v


def _group_count(x, axes, dtype):
    """Number of elements per reduced group (a Python float when static, else a variable)."""
    dims = [x.shape[a] for a in axes]
    if _b.all(d is not None for d in dims):
        return float(_prod(dims))
    return sum(ones_like(x, dtype=dtype), axis=axes, keepdims=True)


class Stat(Op):
    """var / std over ``axis`` (sorted tuple or None) with NumPy's ``ddof``."""

    props = ("name", "axis", "ddof", "keepdims")

    def __init__(self, name, axis, ddof, keepdims):
        self.name, self.axis, self.ddof, self.keepdims = name, axis, ddof, keepdims

    _axes = Reduce._axes
    _out_shape = Reduce._out_shape
    _eager_axis = Reduce._eager_axis

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(_stat_dtype(x.dtype), self._out_shape(x.shape))]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self._eager_axis(), ddof=self.ddof, keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        return [self._out_shape(tuple(shapes[0]))]

    def program_op(self, node):
        return self.name, {"axis": self._eager_axis(), "ddof": float(self.ddof), "keepdims": self.keepdims}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        axes = self._axes(x.ndim)
        gk = _keep_axes(g, axes, self.keepdims)
        n = _group_count(x, axes, _stat_dtype(x.dtype))
        d = x - mean(x, axis=axes, keepdims=True)
        gx = gk * d * (2.0 / (n - self.ddof))
        if self.name == "std":
            gx = gx / (2.0 * _keep_axes(node.outputs[0], axes, self.keepdims))
        return [_unbroadcast(gx, x) if gx.shape != x.shape or gx.dtype != x.dtype else gx]


def _ddof(name, ddof, correction):
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
        ddof = correction
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: ddof must be a number, got {ddof!r}")
    return float(ddof)


def _stat(name, a, axis, ddof, keepdims, correction):
    a = as_variable(a)
    ax = _norm_axes(name, axis, a.ndim)
    if ax is not None and len(ax) == a.ndim:
        ax = None
    return Stat(name, ax, _ddof(name, ddof, correction), bool(keepdims))(a)


def var(a, axis=None, ddof=0, keepdims=False, *, correction=None):
    """Variance over ``axis`` with NumPy's ``ddof`` (or the Array API's ``correction``):
    ``sum(|x - mean|**2) / max(n - ddof, 0)``. float64 for bool/ints, the real dtype for
    complex, else x's dtype. Gradient ``2 (x - mean) / (n - ddof)``."""
    return _stat("var", a, axis, ddof, keepdims, correction)


def std(a, axis=None, ddof=0, keepdims=False, *, correction=None):
    """``sqrt(var(a, axis, ddof))`` (same dtype rule as :func:`var`)."""
    return _stat("std", a, axis, ddof, keepdims, correction)


class LogSumExp(Op):
    """log(sum(exp(x))) over ``axis``, computed stably (scipy.special.logsumexp)."""

    name = "logsumexp"
    props = ("axis", "keepdims")

    def __init__(self, axis, keepdims):
        self.axis, self.keepdims = axis, keepdims

    _axes = Reduce._axes
    _out_shape = Reduce._out_shape
    _eager_axis = Reduce._eager_axis

    def output_types(self, inputs):
        (x,) = inputs
        if kind_of(x.dtype) == "c":
            raise TypeError(f"logsumexp: complex input ({x.dtype}) is not supported")
        return [TensorType(_stat_dtype(x.dtype), self._out_shape(x.shape))]

    def perform(self, node, values):
        return [_k().logsumexp(values[0], axis=self._eager_axis(), keepdims=self.keepdims)]

    def infer_shape(self, node, shapes):
        return [self._out_shape(tuple(shapes[0]))]

    def program_op(self, node):
        return "logsumexp", {"axis": self._eager_axis(), "keepdims": self.keepdims}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        axes = self._axes(x.ndim)
        gk = _keep_axes(g, axes, self.keepdims)
        ok = _keep_axes(node.outputs[0], axes, self.keepdims)
        if x.dtype in ("float16", "bfloat16"):
            gx = astype(astype(gk, "float32") * exp(astype(x, "float32") - astype(ok, "float32")), x.dtype)
        else:
            gx = gk * exp(x - ok)
        return [gx]


def logsumexp(a, axis=None, keepdims=False):
    """``log(sum(exp(a), axis))`` computed stably; float64 for bool/ints, else a's float dtype
    (``TypeError`` for complex). Gradient ``softmax(a)`` along ``axis``."""
    a = as_variable(a)
    ax = _norm_axes("logsumexp", _ufunc_axis(a, axis), a.ndim)
    if ax is not None and len(ax) == a.ndim:
        ax = None
    return LogSumExp(ax, bool(keepdims))(a)


def _flip(v, axis):
    return getitem(v, (slice(None),) * axis + (slice(None, None, -1),))


class Cumulate(Op):
    """cumsum / cumprod along ``axis`` (None: of the flattened array)."""

    props = ("name", "axis")

    def __init__(self, name, axis):
        self.name, self.axis = name, axis

    def _shape(self, shape):
        if self.axis is None:
            return (None if _b.any(d is None for d in shape) else _prod(shape),)
        return tuple(shape)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(_sum_dtype(x.dtype), self._shape(x.shape))]

    def perform(self, node, values):
        return [getattr(_k(), self.name)(values[0], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]))]

    def program_op(self, node):
        return self.name, {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        ax = 0 if self.axis is None else self.axis
        if self.name == "cumsum":
            gx = _flip(cumsum(_flip(g, ax), axis=ax), ax)
        else:
            gx = _cumprod_grad(g, reshape(x, (-1,)) if self.axis is None else x, node.outputs[0], ax)
        if self.axis is None:
            gx = _reshape_like(gx, x)
        return [_to_dtype(gx, x.dtype)]


def _cumprod_grad(g, x, out, ax):
    """d cumprod(x) along ``ax``, exact where x has zeros: entry i gets
    ``sum_{j >= i} g_j * conj(prod_{k <= j, k != i} x_k)``. Before the first zero of its row
    that is ``revcumsum(g * conj(out))_i / conj(x_i)`` (no x_k is zero there); at the first zero
    it is ``revcumsum(g * conj(cumprod(x with that zero replaced by 1)))``; after it every
    product contains the zero, so the gradient is 0."""
    rev = lambda v: _flip(cumsum(_flip(v, ax), axis=ax), ax)  # noqa: E731 - sum over j >= i
    zero = equal(x, 0)
    zeros_upto = cumsum(zero, axis=ax)  # zeros among x_0..x_i
    first_zero = logical_and(zero, equal(zeros_upto, 1))
    before = rev(g * _cj(out)) / _cj(where(zero, 1, x))
    at_first = rev(g * _cj(cumprod(where(first_zero, 1, x), axis=ax)))
    return where(equal(zeros_upto, 0), before, where(first_zero, at_first, 0))


def cumsum(a, axis=None):
    """Cumulative sum along ``axis`` (None: of the flattened array); dtype as :func:`sum`'s."""
    a = as_variable(a)
    axis = _ufunc_axis(a, axis)
    ax = None if axis is None else _norm_axis("cumsum", axis, a.ndim)
    return Cumulate("cumsum", ax)(a)


def cumprod(a, axis=None):
    """Cumulative product along ``axis`` (None: of the flattened array); dtype as :func:`prod`'s.
    The gradient is exact where ``a`` has zeros (each entry gets the products without it)."""
    a = as_variable(a)
    axis = _ufunc_axis(a, axis)
    ax = None if axis is None else _norm_axis("cumprod", axis, a.ndim)
    return Cumulate("cumprod", ax)(a)


# ---- linear algebra ---------------------------------------------------------------------

class Outer(Op):
    name = "outer"

    def output_types(self, inputs):
        a, b = inputs
        size = lambda s: None if _b.any(d is None for d in s) else _prod(s)  # noqa: E731
        return [TensorType(_promote(a.dtype, b.dtype), (size(a.shape), size(b.shape)))]

    def perform(self, node, values):
        return [_k().outer(*values)]

    def infer_shape(self, node, shapes):
        return [(_prod(shapes[0]), _prod(shapes[1]))]

    def program_op(self, node):
        return "outer", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        a, b = node.inputs
        if g is None or not _diff(node.outputs[0].dtype):
            return [None, None]
        af, bf = reshape(a, (-1,)), reshape(b, (-1,))
        ga = _reshape_like(_to_dtype(matmul(g, _cj(astype(bf, g.dtype))), a.dtype), a) if _diff(a.dtype) else None
        gb = _reshape_like(_to_dtype(matmul(_cj(astype(af, g.dtype)), g), b.dtype), b) if _diff(b.dtype) else None
        return [ga, gb]


def outer(a, b):
    """Outer product of the flattened inputs, shape ``(a.size, b.size)`` (NumPy ``outer``)."""
    a, b = _as_inputs("outer", (a, b))
    return Outer()(a, b)


def _diag_len(n1, n2, offset):
    if n1 is None or n2 is None:
        return None
    if offset >= 0:
        return _b.max(0, _b.min(n1, n2 - _b.min(offset, n2)))
    return _b.max(0, _b.min(n1 - _b.min(-offset, n1), n2))


class Diagonal(Op):
    """The diagonal ``offset`` of axes ``axis1``/``axis2`` appended as the last axis (a view)."""

    name = "diagonal"
    props = ("offset", "axis1", "axis2")
    view_of = {0: 0}

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def _shape(self, shape):
        rest = tuple(d for i, d in enumerate(shape) if i not in (self.axis1, self.axis2))
        return rest + (_diag_len(shape[self.axis1], shape[self.axis2], self.offset),)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype, self._shape(x.shape))]

    def perform(self, node, values):
        return [_k().diagonal(values[0], self.offset, self.axis1, self.axis2)]

    def program_op(self, node):
        return "diagonal", {"offset": self.offset, "axis1": self.axis1, "axis2": self.axis2}

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]))]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [DiagonalEmbed(self.offset, self.axis1, self.axis2)(_to_dtype(g, x.dtype), x)]


class DiagonalEmbed(Op):
    """Zeros shaped like input 1 with input 0 written on the diagonal (gradient of
    :class:`Diagonal`); built from uma's eager take-updates."""

    name = "diagonal_embed"
    props = ("offset", "axis1", "axis2")

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(x.dtype, x.shape)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[1])]

    def perform(self, node, values):
        u = _k()
        g, x = values
        nd = x.ndim
        rest = [i for i in range(nd) if i not in (self.axis1, self.axis2)]
        perm = rest + [self.axis1, self.axis2]
        shape = [x.shape[i] for i in perm]
        n1, n2 = shape[-2], shape[-1]
        length = _diag_len(n1, n2, self.offset)
        r0, c0 = _b.max(0, -self.offset), _b.max(0, self.offset)
        pos = u.asarray(np.arange(length, dtype=np.int64) * (n2 + 1) + (r0 * n2 + c0))
        z = u.zeros((_prod(shape[:-2]), n1 * n2), dtype=x.dtype)
        z = u.set_subtensor(z, (slice(None), pos), u.reshape(g, (_prod(shape[:-2]), length)))
        z = u.reshape(z, tuple(shape))
        inv = tuple(int(i) for i in np.argsort(perm))
        return [u.transpose(z, inv).copy()]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else Diagonal(self.offset, self.axis1, self.axis2)(g), None]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of axes ``axis1``/``axis2``, appended as the last axis (NumPy
    ``diagonal``; a read-only view). ``ValueError`` if ``a.ndim < 2`` or the axes are equal."""
    a = as_variable(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: diag requires an array of at least two dimensions, got {a.ndim}")
    a1, a2 = _norm_axis("diagonal", axis1, a.ndim), _norm_axis("diagonal", axis2, a.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both are {a1})")
    return Diagonal(int(offset), a1, a2)(a)


class Diag(Op):
    """1-d ``v`` -> 2-d array with ``v`` on diagonal ``k`` (NumPy ``diag`` of a vector)."""

    name = "diag"
    props = ("k",)

    def __init__(self, k):
        self.k = k

    def _shape(self, shape):
        n = shape[0]
        m = None if n is None else n + _b.abs(self.k)
        return (m, m)

    def output_types(self, inputs):
        (v,) = inputs
        return [TensorType(v.dtype, self._shape(v.shape))]

    def perform(self, node, values):
        return [_k().diag(values[0], self.k)]

    def infer_shape(self, node, shapes):
        return [self._shape(tuple(shapes[0]))]

    def program_op(self, node):
        return "diag", {"k": self.k}

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None or not _diff(node.inputs[0].dtype):
            return [None]
        return [Diagonal(self.k, 0, 1)(g)]


def diag(v, k=0):
    """NumPy ``diag``: a 1-d ``v`` gives the 2-d array with ``v`` on diagonal ``k``; a 2-d ``v``
    gives its diagonal ``k`` (1-d). ``ValueError`` for other ranks."""
    v = as_variable(v)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"diag: k must be an int, got {k!r}")
    if v.ndim == 1:
        return Diag(int(k))(v)
    if v.ndim == 2:
        return Diagonal(int(k), 0, 1)(v)
    raise ValueError(f"diag: input must be 1-d or 2-d, got {v.ndim}-d")


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum along a diagonal (NumPy ``trace``): ``sum(diagonal(a, offset, axis1, axis2), -1)``;
    dtype as :func:`sum`'s."""
    d = diagonal(a, offset, axis1, axis2)
    return sum(d, axis=-1)


# ---- split ---------------------------------------------------------------------------------

def split(ary, indices_or_sections, axis=0):
    """NumPy ``split``: a list of views of ``ary`` along ``axis``. An int N gives N equal parts
    (``ValueError`` if the axis length, which must be static, is not divisible); a sequence
    of split points gives ``len + 1`` parts (points clamp like slice bounds). Gradients flow
    through the slices."""
    a = as_variable(ary)
    ax = _norm_axis("split", axis, a.ndim)
    ios = indices_or_sections
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, (bool, np.bool_)):
        n = int(ios)
        if n <= 0:
            raise ValueError(f"split: number sections must be larger than 0, got {n}")
        length = a.shape[ax]
        if length is None:
            raise ValueError("split: the length of the split axis is unknown when the graph is built; "
                             "give split points instead of a number of sections")
        if length % n:
            raise ValueError(f"split: array split does not result in an equal division (axis {ax} has "
                             f"length {length}, {n} sections)")
        points = [k * (length // n) for k in range(1, n)]
    else:
        points = [int(p) for p in ios]
    bounds = [None] + points + [None]
    return [getitem(a, (slice(None),) * ax + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


# ---- advanced indexing -----------------------------------------------------------------------

def _index_var(opname, idx):
    if isinstance(idx, (list, tuple)) and len(idx) == 0:
        return Constant(np.zeros(0, np.int64))
    v = as_variable(idx)
    if kind_of(v.dtype) not in "iub":
        if isinstance(idx, (list, tuple)) and len(idx) == 0:
            return Constant(np.zeros(0, np.int64))
        raise IndexError(f"{opname}: arrays used as indices must be of integer (or boolean) type, got {v.dtype}")
    return v


class Take(Op):
    """np.take along ``axis`` (None: of the flattened array) at integer indices (input 1)."""

    name = "take"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def _shape(self, xs, ishape):
        if self.axis is None:
            return tuple(ishape)
        return tuple(xs[:self.axis]) + tuple(ishape) + tuple(xs[self.axis + 1:])

    def output_types(self, inputs):
        x, idx = inputs
        if kind_of(idx.dtype) not in "iu":
            raise TypeError(f"take: indices must be integers, got dtype {idx.dtype}")
        return [TensorType(x.dtype, self._shape(x.shape, idx.shape))]

    def perform(self, node, values):
        return [_k().take(values[0], values[1], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [self._shape(shapes[0], shapes[1])]

    def program_op(self, node):
        return "take", {"axis": self.axis}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, idx = node.inputs
        if g is None or not _diff(x.dtype):
            return [None, None]
        g = _to_dtype(g, x.dtype)
        if self.axis is None:
            flat = reshape(x, (-1,))
            return [_reshape_like(UpdateSubtensor("take", True, 0)(zeros_like(flat), g, idx), x), None]
        return [UpdateSubtensor("take", True, self.axis)(zeros_like(x), g, idx), None]


def take(a, indices, axis=None):
    """np.take: elements of ``a`` at integer ``indices`` along ``axis`` (None: of the flattened
    array); shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``. ``IndexError`` (when
    the function runs) naming an out-of-bounds index. Gradient: scatter-add (np.add.at)."""
    a = as_variable(a)
    idx = _index_var("take", indices)
    ax = None if axis is None else _norm_axis("take", axis, a.ndim)
    return Take(ax)(a, idx)


class MaskSelect(Op):
    """``x[mask]`` for a bool mask over x's leading axes: shape (count,) + x.shape[mask.ndim:]."""

    name = "mask_select"

    def output_types(self, inputs):
        x, m = inputs
        if m.dtype != "bool":
            raise TypeError(f"getitem: a boolean mask must have dtype bool, got {m.dtype}")
        if m.ndim == 0 or m.ndim > x.ndim:
            raise IndexError(f"getitem: a boolean mask of {m.ndim} dimension(s) cannot index an array of "
                             f"{x.ndim} dimension(s) (0-d masks are not supported)")
        for ax, (dm, dx) in enumerate(zip(m.shape, x.shape)):
            if dm is not None and dx is not None and dm != dx:
                raise IndexError(f"getitem: boolean index did not match indexed array along axis {ax}; size of "
                                 f"axis is {dx} but size of corresponding boolean axis is {dm}")
        return [TensorType(x.dtype, (None,) + tuple(x.shape[m.ndim:]))]

    def perform(self, node, values):
        return [values[0][values[1]]]

    def infer_shape(self, node, shapes):
        raise NotImplementedError("mask_select: the result's length depends on the mask's values")

    def program_op(self, node):
        return "mask_select", {}

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, m = node.inputs
        if g is None or not _diff(x.dtype):
            return [None, None]
        return [UpdateSubtensor("mask", True, None)(zeros_like(x), _to_dtype(g, x.dtype), m), None]


def _is_index_array(it):
    if isinstance(it, Variable):
        return it.ndim > 0 or kind_of(it.dtype) == "b"
    if isinstance(it, list):
        return True
    if isinstance(it, (bool, int, slice, type(None), type(Ellipsis), np.integer, np.bool_)):
        return False
    return getattr(it, "ndim", 0) > 0


def _split_advanced(opname, index, ndim):
    """None for a basic index; else ("take", axis, indices) or ("mask", None, mask) for one
    integer/bool array with nothing but full slices around it. ``IndexError`` otherwise."""
    items = index if isinstance(index, tuple) else (index,)
    pos = [k for k, it in enumerate(items) if _is_index_array(it)]
    if not pos:
        return None
    full = slice(None)
    if len(pos) > 1 or _b.any(k != pos[0] and not (isinstance(it, slice) and it == full)
                               for k, it in enumerate(items)):
        raise IndexError(f"{opname}: only one integer or boolean array, with nothing but full slices (':') "
                         f"before and after it (x[idx], x[:, idx], x[mask]), is supported as an advanced index")
    k = pos[0]
    v = _index_var(opname, items[k])
    if v.dtype == "bool":
        if k != 0:
            raise IndexError(f"{opname}: a boolean mask is supported as the first index only (x[mask])")
        return ("mask", None, v)
    if k >= ndim:
        raise IndexError(f"{opname}: too many indices for array: array is {ndim}-dimensional, but {k + 1} "
                         f"were indexed")
    return ("take", k, v)


class UpdateSubtensor(Op):
    """Functional update of ``x`` (input 0) at an index by ``y`` (input 1): ``kind`` "basic"
    (``index`` a normalised basic index), "take" (``index`` the axis; input 2 the integer
    indices) or "mask" (input 2 the bool mask); ``inc`` adds (np.add.at) instead of setting."""

    props = ("kind", "inc", "index")

    def __init__(self, kind, inc, index):
        self.kind, self.inc, self.index = kind, inc, index
        self.name = "inc_subtensor" if inc else "set_subtensor"

    def output_types(self, inputs):
        x, y = inputs[0], inputs[1]
        if not _uma().can_cast(y.dtype, x.dtype, "same_kind"):
            raise TypeError(f"{self.name}: cannot cast the update of dtype {y.dtype} to the array's dtype "
                            f"{x.dtype} with casting rule 'same_kind'")
        return [TensorType(x.dtype, x.shape)]

    def perform(self, node, values):
        x, y = values[0], values[1]
        u = _k()
        fn = u.inc_subtensor if self.inc else u.set_subtensor
        if self.kind == "basic":
            return [fn(x, self.index, y)]
        if self.kind == "mask":
            return [fn(x, values[2], y)]
        return [fn(x, (slice(None),) * self.index + (values[2],), y)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def program_op(self, node):
        if self.kind == "basic":
            return self.name, {"index": self.index}
        if self.kind == "take":
            return self.name + "_take", {"axis": self.index}
        return self.name + "_mask", {}

    def _read(self, v, node):
        if self.kind == "basic":
            return getitem(v, self.index)
        if self.kind == "take":
            return Take(self.index)(v, node.inputs[2])
        return MaskSelect()(v, node.inputs[2])

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, y = node.inputs[0], node.inputs[1]
        rest = [None] * (len(node.inputs) - 2)
        if g is None:
            return [None, None] + rest
        gx = gy = None
        if _diff(x.dtype):
            gx = g if self.inc else UpdateSubtensor(self.kind, False, self.index)(
                g, Constant(np.zeros((), dtype=np.float16)), *node.inputs[2:])
        if _diff(y.dtype):
            gy = self._read(g, node)
            gy = _unbroadcast_to(gy, y)
        return [gx, gy] + rest


def _unbroadcast_to(g, y):
    """Sum ``g`` (the region's shape) down to y's ndim and static length-1 axes; y's dtype."""
    lead = g.ndim - y.ndim
    if lead > 0:
        g = sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i in range(y.ndim) if y.shape[i] == 1 and g.shape[i] != 1)
    if axes:
        g = sum(g, axis=axes, keepdims=True)
    return _to_dtype(g, y.dtype)


def _update(name, inc, args):
    if len(args) == 2:  # PyTensor's form: set_subtensor(x[index], y)
        sub, y = args
        if not isinstance(sub, Variable) or sub.owner is None or not isinstance(
                sub.owner.op, (GetItem, Take, MaskSelect)):
            raise TypeError(f"{name}: the two-argument form needs a symbolic subtensor x[index] as its first "
                            f"argument (PyTensor's convention); use {name}(x, index, y) otherwise")
        op = sub.owner.op
        if isinstance(op, GetItem):
            x, kind, index, extra = sub.owner.inputs[0], "basic", op.index, []
        elif isinstance(op, Take):
            if op.axis is None:
                raise TypeError(f"{name}: take(x, idx) without an axis cannot be updated; use x[idx]")
            x, kind, index, extra = sub.owner.inputs[0], "take", op.axis, [sub.owner.inputs[1]]
        else:
            x, kind, index, extra = sub.owner.inputs[0], "mask", None, [sub.owner.inputs[1]]
    elif len(args) == 3:
        x, idx, y = args
        x = as_variable(x)
        adv = _split_advanced(name, idx, x.ndim)
        if adv is None:
            kind, index, extra = "basic", _norm_index(idx, x.ndim), []
            _index_shape(index, x.shape, False)  # IndexError for a known out-of-range int
        else:
            kind, index, v = adv
            extra = [v]
    else:
        raise TypeError(f"{name}: expected (x[index], y) or (x, index, y), got {len(args)} arguments")
    if is_python_scalar(y):
        y = _weak_constant(name, y, np_dtype(x.dtype) if x.dtype != "bfloat16" else np.dtype(np.float32))
    y = as_variable(y)
    return UpdateSubtensor(kind, inc, index)(x, y, *extra)


def set_subtensor(*args):
    """Functional update (PyTensor's ``set_subtensor``): ``set_subtensor(x[index], y)`` or
    ``set_subtensor(x, index, y)`` is a new variable equal to ``x`` with ``x[index]`` replaced
    by ``y`` (broadcast to the region; converted to x's dtype, ``TypeError`` unless
    same_kind). ``index``: basic (ints, slices, None, ...), one integer array after full slices
    (``x[:, idx]``) or a bool mask (``x[mask]``). Gradients: x gets ``g`` with the region zeroed,
    y gets ``g[index]`` (with repeated indices every copy is credited). Eager arrays take only
    the three-argument form (a view does not know its base)."""
    return _update("set_subtensor", False, args)


def inc_subtensor(*args):
    """Like :func:`set_subtensor` but adds ``y`` at ``index``; repeated integer indices
    accumulate (np.add.at). Gradients: x gets ``g``, y gets ``g[index]``."""
    return _update("inc_subtensor", True, args)


__all__ = [
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "remainder", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "eq", "neq",
    "negative", "abs", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sigmoid", "sign",
    "square", "logical_not", "sin", "cos", "floor", "ceil", "relu",
    # issue 4 elementwise set
    "exp2", "log2", "log10", "reciprocal", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "rint", "softplus", "erf", "erfc", "gammaln", "digamma", "arctan2", "logical_xor", "round",
    "clip", "trigamma", "real", "imag", "conj", "conjugate", "angle",
    "where", "one_hot", "zeros_like", "ones_like", "empty_like", "full_like",
    "zeros", "ones", "empty", "full", "arange", "eye", "asarray", "array", "from_dlpack",
    "astype", "cast",
    "sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin",
    "softmax", "log_softmax", "softmax_cross_entropy", "matmul", "dot",
    "reshape", "transpose", "broadcast_to", "concatenate", "stack", "expand_dims", "squeeze",
    "getitem",
    # reduce-linalg
    "var", "std", "logsumexp", "cumsum", "cumprod", "outer", "diag", "diagonal", "trace", "split",
    "take", "set_subtensor", "inc_subtensor",
]
