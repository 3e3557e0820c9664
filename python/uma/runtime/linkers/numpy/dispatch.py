"""The ``numpy`` linker's dispatch table: one NumPy implementation per op class.

``numpy_impl(op, node)`` gives ``impl(values) -> [ndarray]`` for the node (NumPy arrays in
and out). An op class without an entry, and an elementwise function NumPy lacks (erf, erfc,
gammaln, digamma), runs its reference ``perform`` on zero-copy ``uma.Array`` views; only an
op without ``perform`` is unsupported.

NumPy computes float16 in float16 and has no bfloat16 arithmetic of its own (ml_dtypes'
results may come back as float32); like uma's kernels, the reductions, linear algebra and
softmax below compute both in float32 and return the dtype the graph inferred.
"""
from __future__ import annotations

import functools

import numpy as np

from ....graph import ops as o
from ....random import AdvanceState, RandomVariable
from ..walk import has_perform

__all__ = ["numpy_impl", "numpy_dtype"]


def _uma():
    import uma
    return uma


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype for a canonical uma dtype name (bfloat16 through ml_dtypes)."""
    try:
        return np.dtype(name)
    except TypeError:
        if name == "bfloat16":
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        raise


@functools.singledispatch
def numpy_impl(op, node):
    """``impl(values) -> [ndarray]`` for ``node``. An op without a NumPy implementation: its
    reference ``perform`` on zero-copy ``uma.Array`` views (None for an op without one)."""
    if not has_perform(op):
        return None
    perform, asarray = op.perform, _uma().asarray
    return lambda values: perform(node, [asarray(v) for v in values])


def _register(*classes):
    """Register ``fn(node, values) -> [ndarray]`` as the implementation of ``classes``."""
    def deco(fn):
        for cls in classes:
            numpy_impl.register(cls)(lambda op, node: functools.partial(fn, node))
        return fn
    return deco


# ---- elementwise ------------------------------------------------------------------------------

def _sigmoid(x):
    dt = np.exp(np.zeros(1, x.dtype)).dtype  # the dtype rule of exp (ints -> float64)
    x = x.astype(dt, copy=False)
    one = dt.type(1)
    return one / (one + np.exp(-x))


def _trigamma(x):
    """trigamma psi'(x) in NumPy (uma's kernel's method: reflection below 0, recurrence up to
    10, asymptotic series), computed in float64 and rounded like the kernel: float16 and
    bfloat16 results go through float32, as uma computes them."""
    dt = np.exp(np.zeros(1, x.dtype)).dtype  # the dtype rule of exp (ints -> float64)
    v = x.astype(np.float64)
    pole = (v <= 0) & (v == np.floor(v))
    reflect = v <= 0
    with np.errstate(all="ignore"):
        s = np.sin(np.pi * (v - np.rint(v)))  # exact offset to the nearest integer
        reflected = np.where(reflect, np.pi ** 2 / (s * s), 0.0)
        v = np.where(reflect, 1 - v, v)
        total = np.zeros_like(v)
        for _ in range(10):  # recurrence psi'(v) = psi'(v + 1) + 1 / v**2 until v >= 10
            small = v < 10
            total += np.where(small, 1 / (v * v), 0.0)
            v = np.where(small, v + 1, v)
        f = 1 / (v * v)
        series = 7.0 / 6
        for c in (-691.0 / 2730, 5.0 / 66, -1.0 / 30, 1.0 / 42, -1.0 / 30, 1.0 / 6, 1.0):
            series = c + f * series
        total += series / v + f / 2
        r = np.where(reflect, reflected - total, total)
    r = np.where(pole, np.inf, r)
    r = np.where(np.isneginf(x.astype(np.float64)), np.nan, r)
    if dt.itemsize < 4:  # float16, bfloat16: rounded through float32
        return r.astype(np.float32).astype(dt)
    return r.astype(dt)


def _floor_divide(x1, x2):
    """np.floor_divide, with the Array API standard's special cases (floor_divide, 'Special
    cases') where one operand is infinite: x1 / x2 (+-infinity, or a signed zero), as uma's
    kernels give them; NumPy gives NaN and -1.0 there."""
    q = np.floor_divide(x1, x2)
    if q.dtype.kind != "f":
        return q
    one_infinite = np.isinf(x1) != np.isinf(x2)
    return np.where(one_infinite, np.divide(x1, x2), q) if one_infinite.any() else q


def _power(x1, x2):
    """np.power, with the Array API standard's special cases (pow, 'Special cases') where NumPy
    takes sqrt for an exponent of 0.5 (its scalar fast path): -0.0 ** 0.5 is +0.0 and
    -inf ** 0.5 is +inf, as C's pow and uma's kernels give them (sqrt gives -0.0 and NaN)."""
    r = np.power(x1, x2)
    if r.dtype.kind != "f" or np.asarray(x1).dtype.kind != "f":
        return r
    fix = (x2 == 0.5) & ((x1 == 0) | np.isneginf(x1))
    return np.where(fix, np.abs(x1).astype(r.dtype), r) if np.any(fix) else r


def _complex_by_uma(name):
    """np.<name>, except complex input: uma's kernel (the Array API standard's special cases
    of expm1 and tanh for complex operands, which NumPy's nc_expm1 and ctanh do not give at
    zeros, infinities and NaNs)."""
    fn = getattr(np, name)

    def run(x):
        if x.dtype.kind != "c":
            return fn(x)
        import uma
        return np.array(getattr(uma, name)(uma.asarray(x)), copy=True)
    return run


#: the elementwise functions that are not the NumPy function the op table names (``op.numpy``:
#: add, exp, arccosh, invert, ...); erf, erfc, gammaln and digamma, which NumPy lacks, run uma's
#: reference perform
_ELEMWISE = {
    "sigmoid": _sigmoid,
    "softplus": lambda x: np.logaddexp(x.dtype.type(0), x),
    "trigamma": _trigamma,
    "floor_divide": _floor_divide,
    "power": _power,
    "expm1": _complex_by_uma("expm1"),
    "tanh": _complex_by_uma("tanh"),
    # NumPy's real and imag of a real array are views of it: a copy keeps results unaliased
    "real": lambda x: np.array(np.real(x), copy=True),
    "imag": lambda x: np.array(np.imag(x), copy=True),
}


@numpy_impl.register(o.Elemwise)
def _elemwise(op, node):
    fn = _ELEMWISE.get(op.name) or (getattr(np, op.numpy) if op.numpy else None)
    if fn is None:
        return numpy_impl.dispatch(object)(op, node)
    return lambda v: [fn(*v)]


@_register(o.Clip)
def _clip(node, v):
    x, lo, hi = v
    dt = np.result_type(x, lo, hi) if x.dtype.kind in "biufc" else x.dtype
    if dt.kind not in "biufc":  # bfloat16 (ml_dtypes): clip in float32, exact
        return [np.clip(x.astype(np.float32), lo.astype(np.float32), hi.astype(np.float32)).astype(dt)]
    return [np.clip(x, lo, hi)]


@_register(o.Round)
def _round(node, v):
    x, decimals = v[0], node.op.decimals
    if x.dtype.kind not in "biufc":  # bfloat16 (ml_dtypes): float32, rounded once
        return [np.round(x.astype(np.float32), decimals).astype(x.dtype)]
    return [np.round(x, decimals)]


@_register(o.Cast)
def _cast(node, v):
    dt = numpy_dtype(node.op.dtype)
    x = v[0]
    if x.dtype.kind == "c" and dt.kind != "c":  # the real part, as uma's astype (NumPy would warn)
        x = x.real
    return [x.astype(dt)]


_register(o.Where)(lambda n, v: [np.where(*v)])


# ---- creation -----------------------------------------------------------------------------------

@_register(o.OneHot)
def _one_hot(node, v):
    idx = v[0]
    return [(idx[..., None] == np.arange(node.op.depth)).astype(numpy_dtype(node.op.dtype))]


@_register(o.FillLike)
def _fill_like(node, v):
    op = node.op
    dt = numpy_dtype(op.dtype)
    if op.name == "full_like":
        return [np.full(v[0].shape, op.fill_value, dtype=dt)]
    return [(np.zeros if op.name == "zeros_like" else np.ones)(v[0].shape, dtype=dt)]


# ---- reductions, cumulative ops, nn ----------------------------------------------------------

def _as_out(node, r, k=0):
    return np.asarray(r).astype(numpy_dtype(node.outputs[k].dtype), copy=False)


def _wide(x):
    return x.astype(np.float32) if x.dtype.name in ("float16", "bfloat16") else x


@_register(o.Reduce)
def _reduce(node, v):
    op = node.op
    x = v[0]
    if op.name in ("argmax", "argmin"):
        axis = None if op.axis is None else op.axis[0]
        return [getattr(np, op.name)(_wide(x), axis=axis, keepdims=op.keepdims)]
    if op.name in ("sum", "prod", "mean") and x.dtype.name in ("float16", "bfloat16"):
        x = _wide(x)
    return [_as_out(node, getattr(np, op.name)(x, axis=op.axis, keepdims=op.keepdims))]


@_register(o.Stat)
def _stat(node, v):
    op = node.op
    return [_as_out(node, getattr(np, op.name)(_wide(v[0]), axis=op.axis, ddof=op.ddof, keepdims=op.keepdims))]


@_register(o.LogSumExp)
def _logsumexp(node, v):
    op = node.op
    x = _wide(v[0]).astype(np.float64)
    m = np.max(x, axis=op.axis, keepdims=True) if x.size else np.zeros([1] * x.ndim)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=op.axis, keepdims=True)) + m
    if not op.keepdims:
        r = np.squeeze(r, axis=op.axis)
    return [_as_out(node, r)]


@_register(o.Cumulate)
def _cumulate(node, v):
    x = _wide(v[0])
    return [_as_out(node, getattr(np, node.op.name)(x, axis=node.op.axis))]


@_register(o.Softmax)
def _softmax(node, v):
    x, ax = _wide(v[0]), node.op.axis
    if x.size == 0:  # nothing to normalize: an empty result, as the eager op
        return [_as_out(node, x.copy())]
    z = x - np.max(x, axis=ax, keepdims=True)
    if node.op.name == "softmax":
        e = np.exp(z)
        return [_as_out(node, e / np.sum(e, axis=ax, keepdims=True))]
    return [_as_out(node, z - np.log(np.sum(np.exp(z), axis=ax, keepdims=True)))]


# ---- linear algebra -----------------------------------------------------------------------------

_register(o.MatMul)(lambda n, v: [_as_out(n, np.matmul(_wide(v[0]), _wide(v[1])))])
_register(o.Outer)(lambda n, v: [_as_out(n, np.outer(_wide(v[0]), _wide(v[1])))])
_register(o.Diagonal)(lambda n, v: [np.diagonal(v[0], n.op.offset, n.op.axis1, n.op.axis2)])
_register(o.Diag)(lambda n, v: [np.diag(v[0], n.op.k)])


@_register(o.DiagonalEmbed)
def _diagonal_embed(node, v):
    g, x = v
    op = node.op
    z = np.zeros(x.shape, dtype=numpy_dtype(node.outputs[0].dtype))
    zt = np.moveaxis(z, (op.axis1, op.axis2), (-2, -1))  # a writable view
    n = g.shape[-1]
    r0, c0 = max(0, -op.offset), max(0, op.offset)
    zt[..., np.arange(n) + r0, np.arange(n) + c0] = g
    return [z]


# ---- shape, joining ----------------------------------------------------------------------------

_register(o.BroadcastLike)(lambda n, v: [np.broadcast_to(v[0], v[1].shape)])
_register(o.Reshape)(lambda n, v: [np.reshape(v[0], n.op.shape)])
_register(o.ReshapeLike)(lambda n, v: [np.reshape(v[0], v[1].shape)])
_register(o.Transpose)(lambda n, v: [np.transpose(v[0], n.op.axes)])
_register(o.BroadcastTo)(lambda n, v: [np.broadcast_to(v[0], n.op.shape)])
_register(o.ExpandDims)(lambda n, v: [np.expand_dims(v[0], n.op.axis)])
_register(o.Squeeze)(lambda n, v: [np.squeeze(v[0], axis=n.op.axis)])
_register(o.Concatenate)(lambda n, v: [np.concatenate(v, axis=n.op.axis)])
_register(o.Stack)(lambda n, v: [np.stack(v, axis=n.op.axis)])


@_register(o.Segment)
def _segment(node, v):
    op = node.op
    g, xs = v[0], v[1:]
    start = sum(x.shape[op.axis] for x in xs[:op.index])
    stop = start + xs[op.index].shape[op.axis]
    return [g[(slice(None),) * op.axis + (slice(start, stop),)]]


# ---- indexing and functional updates -----------------------------------------------------------

def _op_named(fn):
    """``fn`` with NumPy's IndexError prefixed by the op's name, as the other linkers' errors
    are (``take: index 3 is out of bounds ...``)."""
    @functools.wraps(fn)
    def impl(node, v):
        try:
            return fn(node, v)
        except IndexError as e:
            raise IndexError(f"{getattr(node.op, 'error_name', node.op.name)}: {e}") from None
    return impl


_register(o.GetItem)(_op_named(lambda n, v: [v[0][n.op.index]]))
_register(o.Take)(_op_named(lambda n, v: [np.take(v[0], v[1], axis=n.op.axis)]))
_register(o.MaskSelect)(_op_named(lambda n, v: [v[0][v[1]]]))


@_register(o.GetItemGrad)
@_op_named
def _getitem_grad(node, v):
    g, x = v
    z = np.zeros(x.shape, dtype=numpy_dtype(node.outputs[0].dtype))
    z[node.op.index] = g
    return [z]


@_register(o.UpdateSubtensor)
@_op_named
def _update(node, v):
    op = node.op
    x, y = v[0], v[1]
    out = np.array(x, copy=True)
    if op.kind == "basic":
        index = op.index
    elif op.kind == "mask":
        index = v[2]
    else:
        index = (slice(None),) * op.index + (v[2],)
    y = np.asarray(y).astype(out.dtype)
    if not op.inc:
        out[index] = y
    elif op.kind == "basic":
        out[index] += y
    else:
        np.add.at(out, index, y)
    return [out]


# ---- random streams: their definition is NumPy's Philox generator --------------------------------

_register(AdvanceState, RandomVariable)(lambda n, v: n.op.compute(n, v))
