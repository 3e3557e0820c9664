"""The ``torch`` linker's dispatch table: one PyTorch implementation per op class.

``torch_impl(op, node)`` gives ``impl(values) -> [torch.Tensor]`` for the node (tensors in and
out, on the linker's device). PyTorch computes the ops below where its result is uma's: the
dtypes PyTorch and NumPy agree on (bool, int8/16/32/64, uint8, float32, float64), each input
first converted to the dtype the graph computes in (PyTorch promotes ``int64 + float32`` to
float32, NumPy 2 to float64). Every other op, dtype and case runs uma's own eager op
(the op's reference ``perform``) on zero-copy DLPack views of the tensors, so every op of
uma's table runs, with uma's semantics, and the results come back as tensors without a copy.

``torch`` is imported when a function is first compiled for the backend, not with uma.
"""
from __future__ import annotations

import functools

from ....graph import ops as o
from ..walk import has_perform, table_register

__all__ = ["torch_impl", "torch_dtype", "to_tensor", "NATIVE_DTYPES"]

#: the dtypes whose PyTorch arithmetic is NumPy's (float16/bfloat16 and complex run uma's ops)
NATIVE_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"})


@functools.cache
def _torch():
    import torch
    return torch


def _uma():
    import uma
    return uma


def torch_dtype(name: str):
    """The ``torch.dtype`` of a uma dtype name (``bool`` -> ``torch.bool``, ...)."""
    t = getattr(_torch(), name, None)
    if not isinstance(t, _torch().dtype):
        raise TypeError(f"torch backend: PyTorch has no dtype {name!r}")
    return t


def to_tensor(a):
    """The tensor sharing the memory of host ``uma.Array`` ``a`` (DLPack), or of a copy where
    PyTorch cannot express ``a``'s layout (negative strides: ``torch.from_dlpack`` aborts the
    process on them in PyTorch 2.13)."""
    if any(s < 0 for s in a.strides):
        a = _uma().array(a)
    return _torch().from_dlpack(a)


def _native(node) -> bool:
    return all(v.dtype in NATIVE_DTYPES for v in (*node.inputs, *node.outputs))


def _via_uma(op, node):
    """``node`` computed by uma's eager op on zero-copy views of the tensors."""
    if not has_perform(op):
        return None
    perform, from_dlpack = op.perform, _uma().from_dlpack

    def impl(values):
        outs = perform(node, [from_dlpack(v) for v in values])
        return [to_tensor(r) for r in outs]

    return impl


@functools.singledispatch
def torch_impl(op, node):
    """``impl(values) -> [torch.Tensor]`` for ``node``; an op without a PyTorch implementation
    here runs uma's eager op on zero-copy views (None for an op without one)."""
    return _via_uma(op, node)


#: ``@_register(*classes)`` on ``make(node) -> impl or None``: on the native dtypes, else uma's eager op
_register = table_register(torch_impl, _native, _via_uma)


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


def _cast_to(dtype_name, inputs=None):
    """Converts every input to ``dtype_name`` (no-op where it has it already); where every
    variable of ``inputs`` (the node's) has that dtype, the identity, decided here once (a call's
    values have the graph's dtypes)."""
    if inputs is not None and all(v.dtype == dtype_name for v in inputs):
        return _same
    want = torch_dtype(dtype_name)
    return lambda vs: [v if v.dtype == want else v.to(want) for v in vs]


# ---- elementwise --------------------------------------------------------------------------------

#: the elementwise ops PyTorch computes as NumPy does (same name in both), on the native dtypes
_SAME = ("add", "subtract", "multiply", "maximum", "minimum", "exp", "log", "log1p", "expm1", "sqrt",
         "tanh", "sin", "cos", "abs", "negative", "square", "sigmoid")
#: ops with bool results, computed in the promoted dtype of their inputs: uma's name -> PyTorch's
#: (``torch.equal`` is whole-tensor equality, ``torch.eq`` the elementwise one)
_COMPARE = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
            "greater_equal": "ge", "logical_and": "logical_and", "logical_or": "logical_or",
            "logical_xor": "logical_xor", "logical_not": "logical_not"}
_DIVIDE = ("divide",)


@_register(o.Elemwise)
def _elemwise(node):
    torch, name = _torch(), node.op.name
    if node.outputs[0].dtype == "bool" and name not in _COMPARE:
        return None  # NumPy's bool arithmetic (add is or, multiply is and): uma's ops
    if name in _SAME or name in _DIVIDE:
        fn = getattr(torch, "true_divide" if name == "divide" else name)
        cast = _cast_to(node.outputs[0].dtype, node.inputs)
        if name in ("sigmoid", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos") and \
                node.outputs[0].dtype not in ("float32", "float64"):
            return None
        return _apply(fn, cast)
    if name in _COMPARE:
        fn = getattr(torch, _COMPARE[name])
        common = _uma().result_type(*[v.dtype for v in node.inputs]).name
        cast = _cast_to(common, node.inputs)
        return _apply(fn, cast)
    return None


@_register(o.Where)
def _where(node):
    torch = _torch()
    cast = _cast_to(node.outputs[0].dtype, node.inputs)
    return lambda vs: [torch.where(vs[0].to(torch.bool), *cast(vs[1:]))]


@_register(o.Cast)
def _cast(node):
    src, dst = node.inputs[0].dtype, node.op.dtype
    if src.startswith("float") and not dst.startswith("float") and dst != "bool":
        return None  # float -> int: uma's rule for NaN and out-of-range values
    want = torch_dtype(dst)
    return lambda vs: [vs[0].to(want, copy=True)]


# ---- creation -----------------------------------------------------------------------------------

@_register(o.FillLike)
def _fill_like(node):
    torch, op = _torch(), node.op
    dt = torch_dtype(op.dtype)
    if op.name == "full_like":
        return lambda vs: [torch.full(tuple(vs[0].shape), op.fill_value, dtype=dt, device=vs[0].device)]
    make = torch.zeros if op.name == "zeros_like" else torch.ones
    return lambda vs: [make(tuple(vs[0].shape), dtype=dt, device=vs[0].device)]


@_register(o.OneHot)
def _one_hot(node):
    torch, op = _torch(), node.op
    dt = torch_dtype(op.dtype)
    return lambda vs: [(vs[0][..., None] == torch.arange(op.depth, device=vs[0].device)).to(dt)]


# ---- reductions, nn -----------------------------------------------------------------------------

@_register(o.Reduce)
def _reduce(node):
    torch, op = _torch(), node.op
    if op.name not in ("sum", "mean", "max", "min") or node.inputs[0].dtype not in ("float32", "float64"):
        return None  # integer sums (int64 accumulation), argmax/argmin ties and NaN: uma's ops
    dims = tuple(range(node.inputs[0].ndim)) if op.axis is None else tuple(op.axis)
    if not dims:
        return None
    fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[op.name]
    empty = _via_uma(op, node)  # uma's result, or its ValueError for max/min, on empty input
    return lambda vs: [fn(vs[0], dim=dims, keepdim=op.keepdims)] if vs[0].numel() else empty(vs)


@_register(o.Softmax)
def _softmax(node):
    torch, op = _torch(), node.op
    fn = torch.softmax if op.name == "softmax" else torch.log_softmax
    return lambda vs: [fn(vs[0], dim=op.axis)]


@_register(o.SoftmaxCrossEntropy)
def _xent(node):
    torch, uma = _torch(), _uma()
    f = torch.nn.functional.cross_entropy
    check = uma._core._check_labels

    def impl(vs):
        z, y = vs
        check(uma.from_dlpack(y), z.shape[1], "softmax_cross_entropy")  # uma's ValueError
        return [f(z, y.to(torch.int64), reduction="none")]

    return impl


@_register(o.SoftmaxCrossEntropyGrad)
def _xent_grad(node):
    torch, uma = _torch(), _uma()
    check = uma._core._check_labels

    def impl(vs):
        g, z, y = vs
        check(uma.from_dlpack(y), z.shape[1], "softmax_cross_entropy")
        p = torch.softmax(z, dim=1)
        p[torch.arange(z.shape[0], device=z.device), y.to(torch.int64)] -= 1
        return [p * g[:, None]]

    return impl


# ---- linear algebra -----------------------------------------------------------------------------

@_register(o.MatMul)
def _matmul(node):
    torch = _torch()
    if node.outputs[0].dtype not in ("float32", "float64"):
        return None  # integer products wrap in uma; PyTorch has no integer BLAS semantics to match
    cast = _cast_to(node.outputs[0].dtype, node.inputs)
    return _apply(torch.matmul, cast)


# ---- shape, joining -----------------------------------------------------------------------------

@_register(o.Reshape)
def _reshape(node):
    shape = node.op.shape
    return lambda vs: [vs[0].reshape(shape)]


@_register(o.Transpose)
def _transpose(node):
    axes = node.op.axes
    return lambda vs: [vs[0].permute(axes)]


@_register(o.BroadcastTo)
def _broadcast_to(node):
    shape = node.op.shape
    return lambda vs: [vs[0].expand(shape)]


@_register(o.BroadcastLike)
def _broadcast_like(node):
    return lambda vs: [vs[0].expand(vs[1].shape)]


@_register(o.Concatenate)
def _concatenate(node):
    torch, axis = _torch(), node.op.axis
    cast = _cast_to(node.outputs[0].dtype, node.inputs)
    return lambda vs: [torch.cat(cast(vs), dim=axis)]
