"""The ``jax`` linker's dispatch table: one traceable JAX implementation per op class.

``jax_impl(op, node)`` gives ``fn(values) -> [jax values]``, a function that ``jax.jit`` can
trace, for a node JAX computes as uma does: the dtypes whose XLA arithmetic is NumPy's (bool,
int8–int64, uint8, float32, float64), each input first converted to the dtype the graph
computes in. It gives None for every other op, dtype and case; the linker runs those nodes
with uma's eager op on the host, between jitted segments (``linker.py``), so every op runs
with uma's semantics.

JAX is imported when a function is first compiled for the backend, not with uma.
"""
from __future__ import annotations

import functools

from ....graph import ops as o
from ..walk import table_register

__all__ = ["jax_impl", "NATIVE_DTYPES", "label_check"]

#: the dtypes whose XLA arithmetic is NumPy's (float16/bfloat16, complex and uint16–64 run uma's ops)
NATIVE_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"})


@functools.cache
def _jax():
    import jax
    return jax


def _jnp():
    return _jax().numpy


def _uma():
    import uma
    return uma


def _native(node) -> bool:
    return all(v.dtype in NATIVE_DTYPES for v in (*node.inputs, *node.outputs))


@functools.singledispatch
def jax_impl(op, node):
    """``fn(values) -> [jax values]`` (traceable) for ``node``, or None: uma's eager op runs it."""
    return None


#: ``@_register(*classes)`` on ``make(node) -> fn or None``, on the native dtypes only
_register = table_register(jax_impl, _native)


def _cast_to(name):
    jnp = _jnp()
    dt = jnp.dtype(name)
    return lambda vs: [v if v.dtype == dt else v.astype(dt) for v in vs]


# ---- elementwise --------------------------------------------------------------------------------

#: elementwise ops XLA computes as NumPy does, inputs in the result's dtype: uma's name -> jnp's
_ARITH = {"add": "add", "subtract": "subtract", "multiply": "multiply", "maximum": "maximum",
          "minimum": "minimum", "negative": "negative", "abs": "abs", "square": "square",
          "divide": "true_divide"}
#: the same, on float32/float64 only
_FLOAT = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "tanh": "tanh",
          "sin": "sin", "cos": "cos"}
#: bool results, inputs in their promoted dtype
_COMPARE = {"equal": "equal", "not_equal": "not_equal", "less": "less", "less_equal": "less_equal",
            "greater": "greater", "greater_equal": "greater_equal", "logical_and": "logical_and",
            "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not"}


@_register(o.Elemwise)
def _elemwise(node):
    jnp, name, out = _jnp(), node.op.name, node.outputs[0].dtype
    if name in _COMPARE:
        fn = getattr(jnp, _COMPARE[name])
        cast = _cast_to(_uma().result_type(*[v.dtype for v in node.inputs]).name)
        return lambda vs: [fn(*cast(vs))]
    if out == "bool":
        return None  # NumPy's bool arithmetic: uma's ops
    if name in _ARITH or (name in _FLOAT and out in ("float32", "float64")):
        fn = getattr(jnp, _ARITH.get(name) or _FLOAT[name])
        cast = _cast_to(out)
        return lambda vs: [fn(*cast(vs))]
    if name == "sigmoid" and out in ("float32", "float64"):
        sig, cast = _jax().nn.sigmoid, _cast_to(out)
        return lambda vs: [sig(*cast(vs))]
    return None


@_register(o.Where)
def _where(node):
    jnp = _jnp()
    cast = _cast_to(node.outputs[0].dtype)
    return lambda vs: [jnp.where(vs[0].astype(bool), *cast(vs[1:]))]


@_register(o.Cast)
def _cast(node):
    src, dst = node.inputs[0].dtype, node.op.dtype
    if src.startswith("float") and not dst.startswith("float") and dst != "bool":
        return None  # float -> int: uma's rule for NaN and out-of-range values
    dt = _jnp().dtype(dst)
    return lambda vs: [vs[0].astype(dt)]


# ---- creation -----------------------------------------------------------------------------------

@_register(o.FillLike)
def _fill_like(node):
    jnp, op = _jnp(), node.op
    dt = jnp.dtype(op.dtype)
    if op.name == "full_like":
        return lambda vs: [jnp.full(vs[0].shape, op.fill_value, dtype=dt)]
    make = jnp.zeros if op.name == "zeros_like" else jnp.ones
    return lambda vs: [make(vs[0].shape, dtype=dt)]


@_register(o.OneHot)
def _one_hot(node):
    jnp, op = _jnp(), node.op
    dt = jnp.dtype(op.dtype)
    return lambda vs: [(vs[0][..., None] == jnp.arange(op.depth)).astype(dt)]


# ---- reductions, nn -----------------------------------------------------------------------------

@_register(o.Reduce)
def _reduce(node):
    jnp, op = _jnp(), node.op
    x = node.inputs[0]
    if op.name not in ("sum", "mean", "max", "min") or x.dtype not in ("float32", "float64"):
        return None  # integer sums (int64 accumulation), argmax/argmin ties and NaN: uma's ops
    if op.name in ("max", "min") and (x.shape == () or any(d is None or d == 0 for d in x.shape)):
        return None  # an empty input is uma's ValueError; a run-time length may be 0
    fn = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "min": jnp.min}[op.name]
    axis = op.axis
    return lambda vs: [fn(vs[0], axis=axis, keepdims=op.keepdims)]


@_register(o.Softmax)
def _softmax(node):
    nn, op = _jax().nn, node.op
    if node.outputs[0].dtype not in ("float32", "float64"):
        return None
    fn = nn.softmax if op.name == "softmax" else nn.log_softmax
    return lambda vs: [fn(vs[0], axis=op.axis)]


def label_check(node):
    """For a cross-entropy node: ``(labels input index, flag(values) -> (bool, C))``: the flag is
    true when a label is outside [0, C), C the class count; the linker then raises uma's
    ValueError."""
    jnp = _jnp()
    k = 1 if isinstance(node.op, o.SoftmaxCrossEntropy) else 2
    z = 0 if k == 1 else 1

    def flag(vs):
        y, c = vs[k], vs[z].shape[1]
        return jnp.any((y < 0) | (y >= c)), jnp.asarray(c)

    return k, flag


@_register(o.SoftmaxCrossEntropy)
def _xent(node):
    jax, jnp = _jax(), _jnp()

    def fn(vs):
        z, y = vs
        logp = jax.nn.log_softmax(z, axis=1)
        safe = jnp.clip(y, 0, z.shape[1] - 1).astype(jnp.int64)  # a bad label raises after the call
        return [-jnp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]]

    return fn


@_register(o.SoftmaxCrossEntropyGrad)
def _xent_grad(node):
    jax, jnp = _jax(), _jnp()

    def fn(vs):
        g, z, y = vs
        p = jax.nn.softmax(z, axis=1)
        hot = (y[:, None] == jnp.arange(z.shape[1])).astype(z.dtype)
        return [(p - hot) * g[:, None]]

    return fn


# ---- linear algebra, shapes ---------------------------------------------------------------------

@_register(o.MatMul)
def _matmul(node):
    jnp, out = _jnp(), node.outputs[0].dtype
    if out not in ("float32", "float64"):
        return None
    cast = _cast_to(out)
    prec = _jax().lax.Precision.HIGHEST  # exact float32 products, as uma's BLAS (no TF32/bf16 passes)
    return lambda vs: [jnp.matmul(*cast(vs), precision=prec)]


@_register(o.Reshape)
def _reshape(node):
    shape = node.op.shape
    return lambda vs: [vs[0].reshape(shape)]


@_register(o.Transpose)
def _transpose(node):
    axes = node.op.axes
    return lambda vs: [vs[0].transpose(axes)]


@_register(o.BroadcastTo)
def _broadcast_to(node):
    jnp, shape = _jnp(), node.op.shape
    return lambda vs: [jnp.broadcast_to(vs[0], shape)]


@_register(o.BroadcastLike)
def _broadcast_like(node):
    jnp = _jnp()
    return lambda vs: [jnp.broadcast_to(vs[0], vs[1].shape)]


@_register(o.Concatenate)
def _concatenate(node):
    jnp, axis = _jnp(), node.op.axis
    cast = _cast_to(node.outputs[0].dtype)
    return lambda vs: [jnp.concatenate(cast(vs), axis=axis)]
