"""Reverse-mode symbolic differentiation: :func:`grad`."""
from __future__ import annotations

from .basic import Constant, Variable, toposort
from .type import is_float, kind_of

__all__ = ["grad", "DisconnectedInputError"]


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient with respect to a variable the cost does not
    depend on (PyTensor's ``disconnected_inputs="raise"``)."""


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
    complex Variable; :class:`DisconnectedInputError` (a ``ValueError``) naming a ``wrt`` the
    cost does not depend on, unless ``disconnected_inputs="zero"`` (then its gradient is
    zeros). ``NotImplementedError`` naming an op on the path whose gradient is not available
    (trigamma). Convention: PyTensor's ``grad`` (``disconnected_inputs="raise"`` default).
    """
    from . import ops  # late: ops imports basic which imports ops
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
        if not (is_float(w.dtype) or kind_of(w.dtype) == "c"):
            raise TypeError(f"grad: cannot differentiate with respect to {_label(w)} of dtype {w.dtype} "
                            f"(only float and complex variables have gradients)")

    nodes = toposort([cost])
    # Variables that depend on some wrt: the only ones whose gradients are needed.
    depends = set(wrt_list)
    for node in nodes:
        if any(i in depends for i in node.inputs):
            depends.update(node.outputs)

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
                    f"grad: the cost does not depend on {_label(w)} (disconnected input; PyTensor's "
                    f"disconnected_inputs='raise'); pass disconnected_inputs='zero' to get zeros")
            g = ops.zeros_like(w)
        g = _to_dtype(g, w.dtype)
        result.append(g)
    return result[0] if single else result
