"""The ``mlx`` linker's dispatch table: one MLX implementation per op class.

``mlx_impl(op, node)`` gives ``impl(values) -> [mx.array]`` (lazy MLX arrays in and out). MLX
computes the ops below where its result is uma's: bool, int8–int64, uint8 and float32, each
input first converted to the dtype the graph computes in. Every other op, dtype and case —
float64 included, which MLX's CPU does not support in every op — runs uma's own eager op on
the host (the op's reference ``perform``): the MLX inputs are evaluated and read without a copy
(the buffer protocol), and the results are copied into MLX arrays of the graph's dtype (MLX
always copies on import), so every op runs with uma's semantics and no dtype is ever narrowed.

MLX is imported when a function is first compiled for the backend, not with uma.
"""
from __future__ import annotations

import functools

import numpy as np

from ....graph import ops as o
from ..walk import has_perform, table_register

__all__ = ["mlx_impl", "mlx_dtype", "to_mlx", "to_uma", "NATIVE_DTYPES"]

#: the dtypes MLX computes as NumPy does here (float64, float16, bfloat16, complex: uma's ops)
NATIVE_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "float32"})


@functools.cache
def _mx():
    import mlx.core as mx
    return mx


def _uma():
    import uma
    return uma


def mlx_dtype(name: str):
    """The ``mlx.core.Dtype`` of a uma dtype name (``bool`` -> ``mx.bool_``)."""
    t = getattr(_mx(), "bool_" if name == "bool" else name, None)
    if not isinstance(t, _mx().Dtype):
        raise TypeError(f"mlx backend: MLX has no dtype {name!r}")
    return t


def to_mlx(a):
    """An ``mx.array`` holding host ``uma.Array`` ``a`` (a copy: MLX owns its memory), of ``a``'s
    dtype exactly (MLX narrows float64 NumPy input to float32 unless told the dtype). Bool
    memory is made 0/1 bytes first (uma reads any nonzero byte as True)."""
    uma = _uma()
    name = a.dtype.name
    if name == "bool":
        a = uma.not_equal(a, False)
    host = np.asarray(a)
    if any(s < 0 for s in host.strides):  # MLX imports through DLPack, which refuses them
        host = np.ascontiguousarray(host)
    if name == "bfloat16":  # MLX reads bfloat16 through float32, exactly
        return _mx().array(host.astype(np.float32), dtype=mlx_dtype(name))
    return _mx().array(host, dtype=mlx_dtype(name))


def to_uma(v):
    """A host ``uma.Array`` viewing the evaluated ``mx.array`` ``v`` (the buffer protocol, no
    copy; bfloat16 through float32, which NumPy's buffer protocol lacks)."""
    mx = _mx()
    if v.dtype == mx.bfloat16:
        return _uma().asarray(np.array(v.astype(mx.float32)), dtype="bfloat16")
    return _uma().asarray(np.array(v, copy=False))


def _native(node) -> bool:
    return all(v.dtype in NATIVE_DTYPES for v in (*node.inputs, *node.outputs))


def _via_uma(op, node):
    """``node`` computed by uma's eager op on the host."""
    if not has_perform(op):
        return None
    perform = op.perform

    def impl(values):
        return [to_mlx(r) for r in perform(node, [to_uma(v) for v in values])]

    return impl


@functools.singledispatch
def mlx_impl(op, node):
    """``impl(values) -> [mx.array]`` for ``node``; uma's eager op where MLX has none here
    (None for an op without one)."""
    return _via_uma(op, node)


#: ``@_register(*classes)`` on ``make(node) -> impl or None``: on the native dtypes, else uma's eager op
_register = table_register(mlx_impl, _native, _via_uma)


def _same(vs):
    return vs


def _apply(fn, cast):
    """``impl(values) -> [fn(*cast(values))]``, without the call of ``cast`` where it is the
    identity; then ``impl.direct`` is ``fn`` (generated code calls it directly: walk.straight_code)."""
    if cast is _same:
        impl = lambda vs: [fn(*vs)]  # noqa: E731
        impl.direct = fn
        return impl
    return lambda vs: [fn(*cast(vs))]


def _cast_to(name, inputs=None):
    """Converts every input to ``name`` (no-op where it has it already); where every variable of
    ``inputs`` (the node's) has that dtype, the identity, decided here once (a call's values
    have the graph's dtypes)."""
    if inputs is not None and all(v.dtype == name for v in inputs):
        return _same
    dt = mlx_dtype(name)
    return lambda vs: [v if v.dtype == dt else v.astype(dt) for v in vs]


_ARITH = {"add": "add", "subtract": "subtract", "multiply": "multiply", "maximum": "maximum",
          "minimum": "minimum", "negative": "negative", "abs": "abs", "square": "square", "divide": "divide"}
_FLOAT = {"exp": "exp", "log": "log", "log1p": "log1p", "sqrt": "sqrt", "tanh": "tanh", "sin": "sin",
          "cos": "cos", "sigmoid": "sigmoid"}
_COMPARE = {"equal": "equal", "not_equal": "not_equal", "less": "less", "less_equal": "less_equal",
            "greater": "greater", "greater_equal": "greater_equal", "logical_and": "logical_and",
            "logical_or": "logical_or", "logical_not": "logical_not"}


@_register(o.Elemwise)
def _elemwise(node):
    mx, name, out = _mx(), node.op.name, node.outputs[0].dtype
    if name in _COMPARE:
        fn = getattr(mx, _COMPARE[name])
        cast = _cast_to(_uma().result_type(*[v.dtype for v in node.inputs]).name)
        return _apply(fn, cast)
    if out == "bool":
        return None
    if name in _ARITH or (name in _FLOAT and out == "float32"):
        fn = getattr(mx, _ARITH.get(name) or _FLOAT[name])
        cast = _cast_to(out, node.inputs)
        return _apply(fn, cast)
    return None


@_register(o.Where)
def _where(node):
    mx = _mx()
    cast = _cast_to(node.outputs[0].dtype, node.inputs)
    return lambda vs: [mx.where(vs[0].astype(mx.bool_), *cast(vs[1:]))]


@_register(o.Reduce)
def _reduce(node):
    mx, op = _mx(), node.op
    x = node.inputs[0]
    if op.name not in ("sum", "mean") or x.dtype != "float32":
        return None  # max/min of empty input, integer sums, argmax ties: uma's ops
    fn = mx.sum if op.name == "sum" else mx.mean
    axis = None if op.axis is None else list(op.axis)
    return lambda vs: [fn(vs[0], axis=axis, keepdims=op.keepdims)]


@_register(o.MatMul)
def _matmul(node):
    mx = _mx()
    if node.outputs[0].dtype != "float32" or any(v.ndim < 2 for v in node.inputs):
        return None
    cast = _cast_to("float32", node.inputs)
    return _apply(mx.matmul, cast)


@_register(o.Softmax)
def _softmax(node):
    mx, op = _mx(), node.op
    if op.name != "softmax":
        return None
    return lambda vs: [mx.softmax(vs[0], axis=op.axis, precise=True)]


@_register(o.Reshape)
def _reshape(node):
    mx, shape = _mx(), list(node.op.shape)
    return lambda vs: [mx.reshape(vs[0], shape)]


@_register(o.Transpose)
def _transpose(node):
    mx, axes = _mx(), list(node.op.axes)
    return lambda vs: [mx.transpose(vs[0], axes)]


@_register(o.BroadcastLike)
def _broadcast_like(node):
    mx = _mx()
    return lambda vs: [mx.broadcast_to(vs[0], vs[1].shape)]
