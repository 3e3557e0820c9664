"""Reverse-mode symbolic differentiation: :func:`grad`."""
from __future__ import annotations

from .basic import Constant, Variable, ancestors, composing, toposort
from .type import is_float, kind_of

__all__ = ["grad", "DisconnectedInputError", "UndefinedGrad", "grad_undefined"]


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient with respect to a variable that has no differentiable
    path to the cost: the cost does not depend on it, or only through integer or boolean values
    (PyTensor's ``disconnected_inputs="raise"``)."""


class UndefinedGrad:
    """What an ``Op.grad`` returns for an input whose gradient is not available (see
    :func:`grad_undefined`): not a Variable; :func:`grad` raises ``NotImplementedError`` with
    :attr:`message` only when that gradient is needed."""

    __slots__ = ("op_name", "index", "reason", "message")

    def __init__(self, op_name, index, reason, input_name=None):
        self.op_name, self.index, self.reason = str(op_name), int(index), str(reason)
        label = f" ({input_name})" if input_name is not None else ""
        self.message = (f"grad: {self.op_name} has no gradient with respect to its input {self.index}"
                        f"{label}: {self.reason}")

    def __repr__(self):
        return f"UndefinedGrad({self.message!r})"


def grad_undefined(op_name, k, reason, input_name=None):
    """The gradient of input ``k`` of op ``op_name`` is not available, for ``reason`` (PyTensor's
    ``grad_undefined``): an ``Op.grad`` returns this marker in place of a Variable. :func:`grad`
    raises ``NotImplementedError`` naming the op, ``k`` (and ``input_name``) and ``reason`` when
    that input is a float or complex variable with a differentiable path from a ``wrt``; otherwise
    the marker counts as no gradient (``None``)."""
    return UndefinedGrad(op_name, k, reason, input_name)


def _label(v):
    return repr(v.name) if v.name is not None else repr(v)


def grad(cost, wrt, *, disconnected_inputs="raise"):
    """Gradient of the 0-d real float ``cost`` with respect to ``wrt`` (a Variable or a list).

    Returns a Variable (or a list, matching ``wrt``) with each ``wrt``'s dtype and ndim.
    ``wrt`` may be float or complex. Gradients of broadcast operands are summed over the
    broadcast axes; integer and boolean paths carry no gradient.

    Complex variables: for ``z = x + iy`` the gradient is ``dC/dx + i dC/dy`` (twice the
    derivative with respect to ``conj(z)``), so ``z - lr * grad`` descends, and a real
    variable that feeds complex values gets the real part of that. This is the convention of
    PyTorch (its notes "Autograd for Complex Numbers": ``z.grad`` of a real loss follows the
    conjugate Wirtinger derivative and equals ``dC/dx + i dC/dy``; tests/python/
    test_grad_complex.py compares with ``torch.autograd``) and of Theano/PyTensor (``grad``
    with respect to a complex variable is ``dC/dRe(z) + i dC/dIm(z)``). So a holomorphic
    ``f`` passes ``g * conj(f'(z))`` back, ``abs(z)`` passes ``g * z / |z|`` (0 at 0), and
    ``real``/``imag``/``conj`` pass ``g``, ``i g``, ``conj(g)``.

    Errors: ``TypeError`` if ``cost`` is not a 0-d real float Variable (a complex cost names its
    dtype: take ``real``, ``imag`` or ``abs`` of it first) or a ``wrt`` is not a float or
    complex Variable; :class:`DisconnectedInputError` (a ``ValueError``) naming a ``wrt`` with
    no differentiable path to the cost (the cost does not depend on it, or only through integer
    or boolean values), unless ``disconnected_inputs="zero"`` (then its gradient is zeros).
    ``NotImplementedError`` naming an op on the path whose gradient is not available (trigamma;
    the float parameters of a random draw, e.g. ``rs.normal(loc, scale)`` with ``loc``
    depending on a ``wrt``: write it reparameterized, ``loc + scale * rs.normal(0.0, 1.0,
    size)``), also with ``disconnected_inputs="zero"``; a draw whose parameters do not depend on
    a ``wrt`` is a constant. Convention: PyTensor's ``grad`` (``disconnected_inputs="raise"``
    default; :func:`grad_undefined` as PyTensor's).
    """
    from . import ops  # late: ops imports basic which imports ops
    from .ops._common import _diff
    from .ops.convert import _to_dtype

    if not isinstance(cost, Variable):
        raise TypeError(f"grad: cost must be a symbolic Variable, got {type(cost).__name__}")
    if cost.ndim != 0:
        raise TypeError(f"grad: cost must be a 0-d (scalar) variable, got ndim {cost.ndim} "
                        f"(shape {cost.shape}); reduce it with sum() or mean()")
    if kind_of(cost.dtype) == "c":
        raise TypeError(f"grad: cost must be real, got dtype {cost.dtype} (the gradient of a complex "
                        f"cost is not defined; take real(), imag() or abs() of it first)")
    if not is_float(cost.dtype):
        raise TypeError(f"grad: cost must have a float dtype, got {cost.dtype}")
    if disconnected_inputs not in ("raise", "zero"):
        raise ValueError(f"grad: disconnected_inputs must be 'raise' or 'zero', got {disconnected_inputs!r}")
    single = isinstance(wrt, Variable)
    if single:
        wrt_list = [wrt]
    else:
        try:
            wrt_list = list(wrt)
        except TypeError:
            raise TypeError(f"grad: wrt must be a Variable or a list of Variables, got {wrt!r}") from None
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt must contain symbolic Variables, got {w!r}")
        if not _diff(w.dtype):
            raise TypeError(f"grad: cannot differentiate with respect to {_label(w)} of dtype {w.dtype} "
                            f"(only float and complex variables have gradients)")

    nodes = toposort([cost])
    # Variables that depend on some wrt: the only ones whose gradients are needed.
    depends = set(wrt_list)
    # Those of them with a float/complex path from a wrt (integer and boolean values break it):
    # an undefined gradient (grad_undefined) is an error only for these.
    diff_depends = set(wrt_list)
    for node in nodes:
        if any(i in depends for i in node.inputs):
            depends.update(node.outputs)
        if any(i in diff_depends for i in node.inputs):
            diff_depends.update(o for o in node.outputs if _diff(o.dtype))

    grads = {}
    if cost in depends:
        grads[cost] = Constant(1.0, dtype=cost.dtype)
    for node in reversed(nodes):
        if not any(o in grads for o in node.outputs):
            continue
        if not any(i in depends for i in node.inputs):
            continue
        input_grads = node.op.grad(node, [grads.get(o) for o in node.outputs])
        if len(input_grads) != len(node.inputs):
            raise AssertionError(f"{node.op}: grad returned {len(input_grads)} values for "
                                 f"{len(node.inputs)} inputs")  # pragma: no cover
        for inp, g in zip(node.inputs, input_grads):
            if isinstance(g, UndefinedGrad):
                if inp in diff_depends and _diff(inp.dtype):
                    raise NotImplementedError(g.message)
                continue  # not needed: no gradient, as None (a marker never reaches grads)
            if g is None or inp not in depends:
                continue
            if g.ndim != inp.ndim:
                raise AssertionError(f"{node.op}: gradient for input of ndim {inp.ndim} has ndim "
                                     f"{g.ndim}")  # pragma: no cover
            grads[inp] = g if inp not in grads else ops.add(grads[inp], g)

    result = []
    for w in wrt_list:
        g = grads.get(w)
        if g is None:
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(
                    f"grad: no differentiable path from the cost to {_label(w)} (disconnected input: the cost "
                    f"does not depend on it, or only through integer or boolean values, which carry no "
                    f"gradient; PyTensor's disconnected_inputs='raise'); pass disconnected_inputs='zero' "
                    f"to get zeros")
            g = ops.zeros_like(w)
        g = _to_dtype(g, w.dtype)
        result.append(_shaped_like(g, w))
    return result[0] if single else result


def _shaped_like(g, w):
    """``g``, the gradient with respect to ``w``, checked at run time to have w's shape where
    nothing proves it: when g's graph does not read w (a cost linear in w), g's shape comes from
    the other operands alone, and a w whose run-time length 1 was broadcast would get a gradient
    of the broadcast shape. The check is a ``broadcast_like`` of g to w (a view, or
    ``ValueError`` naming the gradient and both shapes)."""
    from .ops.shape import BroadcastLike
    if all(d is not None for d in w.shape) and tuple(g.shape) == tuple(w.shape):
        return g
    if any(v is w for v in ancestors([g])):
        return g  # the ops that read w check its shape against the others'
    with composing(f"grad with respect to {_label(w)}"):
        return BroadcastLike()(g, w)
