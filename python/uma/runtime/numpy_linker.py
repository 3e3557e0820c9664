"""The ``numpy`` linker: evaluates graphs with NumPy, written in Python.

It is the worked example for adding a backend from Python (PyTorch, JAX, Numba, ...): a
:class:`~uma.runtime.linker.Linker` subclass that

1. names a **residency** of its own (``"numpy"``): the values it computes are
   ``numpy.ndarray`` s, and shared variables it writes keep their value in that form;
2. converts values at the boundary with ``input_filter`` (a host ``uma.Array`` ->
   ``numpy.ndarray``) and ``output_filter`` (``numpy.ndarray`` -> ``uma.Array``). Both are
   zero-copy here: NumPy and uma share host memory (DESIGN.md: "a transfer, or zero-copy where
   memory is shared"). A GPU backend would copy in these two methods instead;
3. says which values are already native (``is_native``), so they skip the host filter;
4. ``compile(fgraph)`` returns a thunk ``values -> outputs`` that runs one NumPy function per
   node (:data:`NUMPY_IMPLS`, by op class; an op may also define ``numpy_perform(node,
   values)``; any other op runs its reference ``perform`` on zero-copy ``uma.Array`` views).
   The thunk never writes into its inputs and copies the outputs that
   ``fgraph.outputs_needing_copy()`` lists, so no result aliases an input, a constant or
   another result.

Registered as ``"numpy"`` when uma is imported::

    f = uma.function([x], [y], updates={w: w - 0.1 * g}, backend="numpy")
    f(x_value)       # -> [numpy.ndarray]
    w.get_value()    # -> numpy.ndarray, whatever backend wrote last

Every result has the dtype the graph inferred (NumPy 2 promotion, as the graph's own rules);
a mismatch is a bug and raises ``RuntimeError`` naming the op. Floating-point warnings are
silenced (uma's kernels do not warn either).
"""
from __future__ import annotations

import numpy as np

from ..graph.type import dtype_name
from .linker import Linker

__all__ = ["NumpyLinker", "NUMPY_IMPLS", "numpy_dtype"]


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


# ======================================================================================
# one NumPy implementation per op class: impl(node, values) -> [ndarray]
# ======================================================================================

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


_ELEMWISE = {
    "negative": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "sqrt": np.sqrt, "tanh": np.tanh, "sigmoid": _sigmoid, "sign": np.sign,
    "square": np.square, "logical_not": np.logical_not, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil,
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    # exp2, tan, arctan2, ... are NumPy's functions of the same name (getattr(np, name)); erf,
    # erfc, gammaln and digamma, which NumPy lacks, run uma's reference perform
    "softplus": lambda x: np.logaddexp(x.dtype.type(0), x),
    "trigamma": _trigamma,
    # NumPy's real and imag of a real array are views of it: a copy keeps results unaliased
    "real": lambda x: np.array(np.real(x), copy=True),
    "imag": lambda x: np.array(np.imag(x), copy=True),
}


def _elemwise(node, v):
    fn = _ELEMWISE.get(node.op.name) or getattr(np, node.op.name, None)
    if fn is None:
        return None
    return [fn(*v)]


def _reduce(node, v):
    op = node.op
    x = v[0]
    if op.name in ("argmax", "argmin"):
        axis = None if op.axis is None else op.axis[0]
        return [getattr(np, op.name)(x, axis=axis, keepdims=op.keepdims)]
    return [getattr(np, op.name)(x, axis=op.axis, keepdims=op.keepdims)]


def _softmax(node, v):
    x, ax = v[0], node.op.axis
    z = x - np.max(x, axis=ax, keepdims=True)
    if node.op.name == "softmax":
        e = np.exp(z)
        return [e / np.sum(e, axis=ax, keepdims=True)]
    return [z - np.log(np.sum(np.exp(z), axis=ax, keepdims=True))]


def _one_hot(node, v):
    idx = v[0]
    return [(idx[..., None] == np.arange(node.op.depth)).astype(numpy_dtype(node.op.dtype))]


def _fill_like(node, v):
    op = node.op
    dt = numpy_dtype(op.dtype)
    if op.name == "full_like":
        return [np.full(v[0].shape, op.fill_value, dtype=dt)]
    return [(np.zeros if op.name == "zeros_like" else np.ones)(v[0].shape, dtype=dt)]


def _segment(node, v):
    op = node.op
    g, xs = v[0], v[1:]
    start = sum(x.shape[op.axis] for x in xs[:op.index])
    stop = start + xs[op.index].shape[op.axis]
    return [g[(slice(None),) * op.axis + (slice(start, stop),)]]


def _getitem_grad(node, v):
    g, x = v
    z = np.zeros(x.shape, dtype=numpy_dtype(node.outputs[0].dtype))
    z[node.op.index] = g
    return [z]


def _cast(node, v):
    dt = numpy_dtype(node.op.dtype)
    x = v[0]
    if x.dtype.kind == "c" and dt.kind != "c":  # the real part, as uma's astype (NumPy would warn)
        x = x.real
    return [x.astype(dt)]


def _table():
    from ..graph import ops as o
    return {
        o.Elemwise: _elemwise,
        o.BroadcastLike: lambda n, v: [np.broadcast_to(v[0], v[1].shape)],
        o.Where: lambda n, v: [np.where(*v)],
        o.OneHot: _one_hot,
        o.FillLike: _fill_like,
        o.Cast: _cast,
        o.Reduce: _reduce,
        o.Softmax: _softmax,
        o.MatMul: lambda n, v: [np.matmul(*v)],
        o.Reshape: lambda n, v: [np.reshape(v[0], n.op.shape)],
        o.ReshapeLike: lambda n, v: [np.reshape(v[0], v[1].shape)],
        o.Transpose: lambda n, v: [np.transpose(v[0], n.op.axes)],
        o.BroadcastTo: lambda n, v: [np.broadcast_to(v[0], n.op.shape)],
        o.Concatenate: lambda n, v: [np.concatenate(v, axis=n.op.axis)],
        o.Segment: _segment,
        o.Stack: lambda n, v: [np.stack(v, axis=n.op.axis)],
        o.ExpandDims: lambda n, v: [np.expand_dims(v[0], n.op.axis)],
        o.Squeeze: lambda n, v: [np.squeeze(v[0], axis=n.op.axis)],
        o.GetItem: lambda n, v: [v[0][n.op.index]],
        o.GetItemGrad: _getitem_grad,
        **_reduce_linalg_table(o),
    }


# ---- reductions, linear algebra, indexing on every dtype ---------------------------------------
# NumPy computes float16 in float16 and has no bfloat16 arithmetic of its own (ml_dtypes'
# results may come back as float32); like uma's kernels, these impls compute both in float32
# and return the dtype the graph inferred.

def _as_out(node, r, k=0):
    return np.asarray(r).astype(numpy_dtype(node.outputs[k].dtype), copy=False)


def _wide(x):
    return x.astype(np.float32) if x.dtype.name in ("float16", "bfloat16") else x


def _reduce_any(node, v):
    op = node.op
    x = v[0]
    if op.name in ("argmax", "argmin"):
        axis = None if op.axis is None else op.axis[0]
        return [getattr(np, op.name)(_wide(x), axis=axis, keepdims=op.keepdims)]
    if op.name in ("sum", "prod", "mean") and x.dtype.name in ("float16", "bfloat16"):
        x = _wide(x)
    return [_as_out(node, getattr(np, op.name)(x, axis=op.axis, keepdims=op.keepdims))]


def _stat(node, v):
    op = node.op
    return [_as_out(node, getattr(np, op.name)(_wide(v[0]), axis=op.axis, ddof=op.ddof, keepdims=op.keepdims))]


def _logsumexp(node, v):
    op = node.op
    x = _wide(v[0]).astype(np.float64)
    m = np.max(x, axis=op.axis, keepdims=True) if x.size else np.zeros([1] * x.ndim)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=op.axis, keepdims=True)) + m
    if not op.keepdims:
        r = np.squeeze(r, axis=op.axis)
    return [_as_out(node, r)]


def _cumulate(node, v):
    x = _wide(v[0])
    return [_as_out(node, getattr(np, node.op.name)(x, axis=node.op.axis))]


def _take_impl(node, v):
    return [np.take(v[0], v[1], axis=node.op.axis)]


def _diagonal_embed(node, v):
    g, x = v
    op = node.op
    z = np.zeros(x.shape, dtype=numpy_dtype(node.outputs[0].dtype))
    zt = np.moveaxis(z, (op.axis1, op.axis2), (-2, -1))  # a writable view
    n = g.shape[-1]
    r0, c0 = max(0, -op.offset), max(0, op.offset)
    zt[..., np.arange(n) + r0, np.arange(n) + c0] = g
    return [z]


def _update_impl(node, v):
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


def _reduce_linalg_table(o):
    return {
        o.Reduce: _reduce_any,
        o.Stat: _stat,
        o.LogSumExp: _logsumexp,
        o.Cumulate: _cumulate,
        o.MatMul: lambda n, v: [_as_out(n, np.matmul(_wide(v[0]), _wide(v[1])))],
        o.Outer: lambda n, v: [_as_out(n, np.outer(_wide(v[0]), _wide(v[1])))],
        o.Diagonal: lambda n, v: [np.diagonal(v[0], n.op.offset, n.op.axis1, n.op.axis2)],
        o.DiagonalEmbed: _diagonal_embed,
        o.Diag: lambda n, v: [np.diag(v[0], n.op.k)],
        o.Take: _take_impl,
        o.MaskSelect: lambda n, v: [v[0][v[1]]],
        o.UpdateSubtensor: _update_impl,
        o.Softmax: lambda n, v: [_as_out(n, _softmax(n, [_wide(v[0])])[0])],
    }


#: op class -> ``impl(node, values) -> [ndarray]`` (filled on first use).
NUMPY_IMPLS: dict = {}


def _fallback(node, values):
    """An op without a NumPy implementation: its reference ``perform`` on zero-copy views."""
    uma = _uma()
    return node.op.perform(node, [uma.asarray(v) for v in values])


def _impl_for(node):
    if not NUMPY_IMPLS:
        NUMPY_IMPLS.update(_table())
    own = getattr(node.op, "numpy_perform", None)
    if own is not None:
        return own
    impl = NUMPY_IMPLS.get(type(node.op))
    if impl is None:
        return _fallback
    if impl is _elemwise and _elemwise_fn(node.op.name) is None:
        return _fallback
    return impl


def _elemwise_fn(name):
    return _ELEMWISE.get(name) or getattr(np, name, None)


def make_numpy_thunk(fgraph):
    """The thunk of :class:`NumpyLinker` for ``fgraph``: ``values -> outputs`` (ndarrays)."""
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
    copies = fgraph.outputs_needing_copy()
    slot = {v: k for k, v in enumerate(inputs)}
    consts = []
    for c in fgraph.constants():
        slot[c] = len(slot)
        consts.append(c.value)
    steps = []
    for node in fgraph.toposort():
        ins = [slot[v] for v in node.inputs]
        outs = []
        for o in node.outputs:
            slot[o] = len(slot)
            outs.append((slot[o], numpy_dtype(o.type.dtype), o.type.dtype))
        steps.append((_impl_for(node), node, ins, outs))
    out_slots = [(slot[o], k in copies) for k, o in enumerate(outputs)]
    n_slots = len(slot)

    def thunk(values):
        env = [None] * n_slots
        env[:len(values)] = values
        env[len(values):len(values) + len(consts)] = consts
        with np.errstate(all="ignore"):
            for impl, node, ins, outs in steps:
                results = impl(node, [env[i] for i in ins])
                for (s, dt, name), r in zip(outs, results):
                    if type(r) is not np.ndarray:
                        r = np.asarray(r)
                    if r.dtype != dt:
                        if dtype_name(r.dtype) != name:
                            raise RuntimeError(f"{node.op}: NumPy returned dtype {r.dtype}, but the graph "
                                               f"inferred {name} (a bug in uma's numpy linker)")
                        r = r.astype(dt)
                    env[s] = r
        return [np.array(env[s], copy=True) if cp else env[s] for s, cp in out_slots]

    return thunk


class NumpyLinker(Linker):
    """Evaluates graphs with NumPy; values are ``numpy.ndarray`` s in residency ``"numpy"``.

    Conversions to and from the host residency share memory (no copy): ``input_filter``
    gives a read-only NumPy view of a host ``uma.Array``, ``output_filter`` adopts a NumPy
    array as a ``uma.Array``. Function outputs are ``numpy.ndarray`` s (0-d for scalars).
    """

    name = "numpy"
    residency = "numpy"

    def is_native(self, value, type):
        return (value.__class__ is np.ndarray and value.dtype == numpy_dtype(type.dtype)
                and type.is_compatible_shape(value.shape))

    def input_filter(self, value, type):
        if isinstance(value, np.ndarray):
            return value
        arr = np.asarray(value)
        if arr.flags.writeable:
            arr = arr.view()
            arr.flags.writeable = False
        return arr

    def output_filter(self, value, type):
        return _uma().asarray(value)

    def compile(self, fgraph):
        return make_numpy_thunk(fgraph)
