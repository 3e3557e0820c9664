"""The ``numba`` linker's dispatch table: one line of Numba-compilable Python per op class.

``numba_code(op, node)`` gives ``code(args) -> str``, the expression that computes the node's
one output from the names ``args`` of its inputs' values (and, for a node with a domain to
check, ``code.check(args) -> str``, an expression that is False outside it), for a node that Numba computes as
uma does: float32 and float64 arithmetic, with each input first converted to the dtype the
graph computes in (bool for a condition, int64 for labels and indices). The expressions call
NumPy functions that Numba compiles, and the loop helpers below (softmax, cross-entropy,
one-hot), which are ``numba.njit`` functions themselves. None for every other op, dtype and
case: the linker runs those nodes with the ``numpy`` backend's table (NumPy, or uma's eager
op), so every op runs with uma's semantics.

Values inside a compiled run may be 0-d arrays or scalars (a Numba ufunc of 0-d arrays gives
a scalar): every expression of a 0-d result is wrapped in ``np.asarray``, so each variable is
an array of the graph's dtype and ndim.

Numba is imported when a function is first compiled for the backend, not with uma.
"""
from __future__ import annotations

import functools

import numpy as np

from ....graph import ops as o
from ..walk import table_register

__all__ = ["numba_code", "helpers", "FLOATS"]

#: the dtypes compiled by Numba (integers, bool arithmetic, float16/bfloat16 and complex: the
#: numpy table, which runs NumPy where it computes as uma does and uma's ops elsewhere)
FLOATS = frozenset({"float32", "float64"})


@functools.cache
def _numba():
    import numba
    return numba


@functools.cache
def helpers() -> dict:
    """The njit loop helpers the generated code calls, by name (compiled at their first use).
    None of them raises: an exception raised inside Numba-compiled code leaks references to the
    arguments (and so the uma memory they view), so a bad label is a flag (``labels_ok``) that
    the linker turns into uma's error, and a label outside [0, C) is clamped meanwhile."""
    njit = _numba().njit

    @njit(cache=False, error_model="numpy")
    def softmax_rows(z, log):
        out = np.empty(z.shape, z.dtype)
        if z.shape[1] == 0:
            return out
        for i in range(z.shape[0]):
            m = z[i, 0]
            for j in range(1, z.shape[1]):
                if z[i, j] > m or np.isnan(z[i, j]):
                    m = z[i, j]
            s = z.dtype.type(0)
            for j in range(z.shape[1]):
                out[i, j] = z[i, j] - m
                s += np.exp(out[i, j])
            if log:
                ls = np.log(s)
                for j in range(z.shape[1]):
                    out[i, j] = out[i, j] - ls
            else:
                for j in range(z.shape[1]):
                    out[i, j] = np.exp(out[i, j]) / s
        return out

    @njit(cache=False, error_model="numpy")
    def labels_ok(y, c):
        for i in range(y.shape[0]):
            if y[i] < 0 or y[i] >= c:
                return False
        return True

    @njit(cache=False, error_model="numpy")
    def xent(z, y):
        logp = softmax_rows(z, True)
        out = np.empty(z.shape[0], z.dtype)
        c = z.shape[1]
        for i in range(z.shape[0]):
            out[i] = -logp[i, min(max(y[i], 0), c - 1)] if c > 0 else np.nan
        return out

    @njit(cache=False, error_model="numpy")
    def xent_grad(g, z, y):
        p = softmax_rows(z, False)
        c = z.shape[1]
        for i in range(z.shape[0]):
            if c > 0:
                p[i, min(max(y[i], 0), c - 1)] -= z.dtype.type(1)
            for j in range(c):
                p[i, j] *= g[i]
        return p

    @njit(cache=False, error_model="numpy")
    def one_hot(idx, depth, like):
        flat = idx.ravel()
        out = np.zeros((flat.shape[0], depth), like.dtype)
        for i in range(flat.shape[0]):
            if 0 <= flat[i] < depth:
                out[i, flat[i]] = 1
        return out

    return {"softmax_rows": softmax_rows, "labels_ok": labels_ok, "xent": xent, "xent_grad": xent_grad,
            "one_hot": one_hot, "frozen": _frozen()}


def _frozen():
    """``frozen(a)``: array ``a`` itself, typed read-only, for compiled code to return: Numba
    then makes the NumPy array it returns read-only, at no cost (the type of an array, which
    Numba compiles a function once for, includes that flag; a read-only value passed back in
    needs no read-only view of it)."""
    from numba.core import types
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic

    @intrinsic
    def frozen(typingctx, a):
        if not isinstance(a, types.Array):
            return None

        def codegen(context, builder, sig, args):
            return impl_ret_borrowed(context, builder, sig.return_type, args[0])  # one more reference

        return a.copy(readonly=True)(a), codegen

    return frozen


def _floats(node) -> bool:
    return all(v.dtype in FLOATS for v in (*node.inputs, *node.outputs))


def _as(name, var, dtype):
    """``name`` (the value of graph variable ``var``) converted to ``dtype``: as it is when it
    has that dtype already (Numba's ``astype`` always copies)."""
    return name if var.dtype == dtype else f"{name}.astype(np.{dtype})"


@functools.singledispatch
def numba_code(op, node):
    """``code(args) -> str`` for ``node`` (module documentation), or None."""
    return None


#: ``@_register(*classes)``: only when every input and output is float32/float64;
#: ``@_register_any(*classes)``: ``make`` decides on the dtypes itself
_register = table_register(numba_code, _floats)
_register_any = table_register(numba_code, lambda node: True)


def _wrap0(node, code):
    """``code`` with a 0-d result wrapped back into an array (Numba gives a scalar)."""
    if code is None or node.outputs[0].ndim != 0:
        return code
    return lambda args: f"np.asarray({code(args)})"


# ---- elementwise --------------------------------------------------------------------------------

#: float elementwise ops Numba computes as NumPy does, inputs in the result's dtype: uma's name -> NumPy's
_FLOAT = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "true_divide",
          "maximum": "maximum", "minimum": "minimum", "negative": "negative", "abs": "abs",
          "square": "square", "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1",
          "sqrt": "sqrt", "tanh": "tanh", "sin": "sin", "cos": "cos"}
#: bool results of float inputs, in their promoted dtype
_COMPARE = {"equal": "equal", "not_equal": "not_equal", "less": "less", "less_equal": "less_equal",
            "greater": "greater", "greater_equal": "greater_equal"}


@numba_code.register(o.Elemwise)
def _elemwise(op, node):
    name, out = op.name, node.outputs[0].dtype
    ins = [v.dtype for v in node.inputs]
    if not all(d in FLOATS for d in ins):
        return None
    if name in _COMPARE:
        dt = "float64" if "float64" in ins else "float32"
        fn = _COMPARE[name]
        return _wrap0(node, lambda a: f"np.{fn}({', '.join(_as(x, v, dt) for x, v in zip(a, node.inputs))})")
    if out not in FLOATS:
        return None
    if name in _FLOAT:
        fn = _FLOAT[name]
        return _wrap0(node, lambda a: f"np.{fn}({', '.join(_as(x, v, out) for x, v in zip(a, node.inputs))})")
    if name == "sigmoid":  # uma's kernel: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below
        def code(a):
            x = _as(a[0], node.inputs[0], out)
            return f"np.where({x} >= 0, 1 / (1 + np.exp(-np.abs({x}))), np.exp(-np.abs({x})) / (1 + np.exp(-np.abs({x}))))"
        return _wrap0(node, code)
    return None


@_register_any(o.Where)
def _where(node):
    out = node.outputs[0].dtype
    if out not in FLOATS or not all(v.dtype in FLOATS for v in node.inputs[1:]):
        return None
    c, x, y = node.inputs
    return _wrap0(node, lambda a: f"np.where({a[0] if c.dtype == 'bool' else f'({a[0]} != 0)'}, "
                                  f"{_as(a[1], x, out)}, {_as(a[2], y, out)})")


@_register(o.Cast)
def _cast(node):
    dst = node.op.dtype
    src = node.inputs[0]
    return lambda a: f"{a[0]}.astype(np.{dst})" if src.dtype != dst else f"{a[0]}.copy()"


@_register_any(o.FillLike)
def _fill_like(node):
    op = node.op
    if op.dtype not in FLOATS:
        return None
    value = {"zeros_like": 0.0, "ones_like": 1.0}.get(op.name, op.fill_value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value):
        return None
    return lambda a: f"np.full({a[0]}.shape, {float(value)!r}, np.{op.dtype})"


@_register_any(o.OneHot)
def _one_hot(node):
    op, x = node.op, node.inputs[0]
    if op.dtype not in FLOATS or not x.dtype.startswith("int"):
        return None
    nd = x.ndim

    def code(a):
        dims = ", ".join(f"{a[0]}.shape[{k}]" for k in range(nd))
        return (f"one_hot({_as(a[0], x, 'int64')}, {int(op.depth)}, np.zeros(1, np.{op.dtype}))"
                f".reshape(({dims}{', ' if nd else ''}{int(op.depth)},))")
    return code


# ---- reductions, nn -----------------------------------------------------------------------------

@_register(o.Reduce)
def _reduce(node):
    op, x = node.op, node.inputs[0]
    if op.name not in ("sum", "mean") or x.ndim == 0:
        return None
    nd = x.ndim
    axes = tuple(range(nd)) if op.axis is None else tuple(op.axis)
    kept = [k for k in range(nd) if k not in axes]

    def code(a):
        if len(axes) == nd:
            expr = f"np.sum({a[0]})"
        else:
            expr = a[0]
            for k in sorted(axes, reverse=True):  # one axis at a time, the last first
                expr = f"np.sum({expr}, axis={k})"
        if op.name == "mean":
            count = " * ".join(f"{a[0]}.shape[{k}]" for k in axes) or "1"
            expr = f"({expr}) / ({count})"
        if op.keepdims:
            dims = ", ".join("1" if k in axes else f"{a[0]}.shape[{k}]" for k in range(nd))
            expr = f"np.asarray({expr}).reshape(({dims},))"
        elif not kept:
            expr = f"np.asarray({expr})"
        # a float32 sum divided by an integer count is float64 in Numba
        return f"{expr}.astype(np.float32)" if op.name == "mean" and x.dtype == "float32" else expr
    return code


@_register(o.Softmax)
def _softmax(node):
    op, x = node.op, node.inputs[0]
    if x.ndim != 2 or op.axis not in (1, -1):
        return None
    log = op.name == "log_softmax"
    return lambda a: f"softmax_rows(np.ascontiguousarray({a[0]}), {log})"


def _checked(code, check):
    """``code`` with ``code.check(args) -> str``: an expression that is False when the node's
    inputs are out of its domain (the linker then runs the node's run on the numpy table, which
    raises uma's error)."""
    code.check = check
    return code


@_register_any(o.SoftmaxCrossEntropy)
def _xent(node):
    z, y = node.inputs
    if z.dtype not in FLOATS or not y.dtype.startswith(("int", "uint")):
        return None
    return _checked(lambda a: f"xent(np.ascontiguousarray({a[0]}), {_as(a[1], y, 'int64')})",
                    lambda a: f"labels_ok({_as(a[1], y, 'int64')}, {a[0]}.shape[1])")


@_register_any(o.SoftmaxCrossEntropyGrad)
def _xent_grad(node):
    g, z, y = node.inputs
    if z.dtype not in FLOATS or g.dtype != z.dtype or not y.dtype.startswith(("int", "uint")):
        return None
    return _checked(lambda a: f"xent_grad({a[0]}, np.ascontiguousarray({a[1]}), {_as(a[2], y, 'int64')})",
                    lambda a: f"labels_ok({_as(a[2], y, 'int64')}, {a[1]}.shape[1])")


# ---- linear algebra, shapes ---------------------------------------------------------------------

@_register(o.MatMul)
def _matmul(node):
    a_, b_ = node.inputs
    out = node.outputs[0].dtype
    if a_.ndim != 2 or b_.ndim != 2:
        return None
    return lambda a: (f"np.dot(np.ascontiguousarray({_as(a[0], a_, out)}), "
                      f"np.ascontiguousarray({_as(a[1], b_, out)}))")


def _view_of_floats(node, ok, code):
    """``code`` for a view op of a float input when ``ok`` holds, else None (the numpy table)."""
    return code if node.inputs[0].dtype in FLOATS and ok else None


@_register_any(o.Transpose)
def _transpose(node):
    axes = tuple(node.op.axes)
    return _view_of_floats(node, len(axes) >= 2, lambda a: f"np.transpose({a[0]}, {axes!r})")


@_register_any(o.Reshape)
def _reshape(node):
    shape = tuple(int(d) for d in node.op.shape)
    return _view_of_floats(node, bool(shape), lambda a: f"np.ascontiguousarray({a[0]}).reshape({shape!r})")


@_register_any(o.BroadcastTo)
def _broadcast_to(node):
    shape = tuple(int(d) for d in node.op.shape)
    return _view_of_floats(node, bool(shape), lambda a: f"np.broadcast_to({a[0]}, {shape!r})")


@_register_any(o.BroadcastLike)
def _broadcast_like(node):
    return _view_of_floats(node, node.outputs[0].ndim > 0, lambda a: f"np.broadcast_to({a[0]}, {a[1]}.shape)")
