"""The ``torch`` linker: evaluates graphs with PyTorch, eagerly, node by node.

Values are ``torch.Tensor`` s on the CPU, in residency ``"torch"``: a shared variable that a
``torch`` function updated keeps its value as a tensor until another backend, or
``get_value``, reads it; then it is converted once. Conversions share memory both ways (DLPack:
``torch.from_dlpack`` of a host ``uma.Array``, ``uma.from_dlpack`` of a tensor), so a switch of
backend copies nothing.

Calls run under ``torch.no_grad()``; outputs that could alias an input, a constant or another
output are copied (``Tensor.clone``), so a returned tensor never shares memory with a stored
one. Every result is checked against the dtype the graph inferred (a mismatch is a bug and
raises ``RuntimeError`` naming the op). Registered as ``"torch"`` when PyTorch is installed;
PyTorch is imported when the first function is compiled for it::

    f = uma.function([x], [y], updates={w: w - 0.1 * g}, backend="torch")
    f(x_value)       # -> [torch.Tensor]
    w.get_value()    # -> the host value (numpy.ndarray), whatever backend wrote last
"""
from __future__ import annotations

from ...linker import Linker
from ..walk import evaluator
from .dispatch import _torch, to_tensor, torch_dtype, torch_impl

__all__ = ["TorchLinker"]


def _uma():
    import uma
    return uma


def _tensor_result(var):
    """The check of a value computed for ``var``: a tensor of the graph's dtype."""
    name = var.type.dtype
    torch = _torch()
    want = torch_dtype(name)  # once per output, not per call

    def result(r, node):
        if not isinstance(r, torch.Tensor):
            r = to_tensor(_uma().asarray(r))
        if r.dtype != want:
            raise RuntimeError(f"{node.op}: PyTorch returned dtype {r.dtype}, but the graph inferred "
                               f"{name} (a bug in uma's torch linker)")
        return r

    return result


def _fresh(value):
    return value.clone()


class TorchLinker(Linker):
    """Evaluates graphs with PyTorch on the CPU; values are ``torch.Tensor`` s in residency
    ``"torch"``. Conversions to and from the host residency share memory (DLPack, no copy).
    Function outputs are tensors (0-d for scalars)."""

    name = "torch"
    residency = "torch"
    dispatch = torch_impl

    def is_native(self, value, type):
        torch = _torch()
        # a lazily conjugated or negated tensor (conj/neg bit) has no DLPack form: not native
        return (isinstance(value, torch.Tensor) and value.device.type == "cpu" and not value.requires_grad
                and not value.is_conj() and not value.is_neg()
                and value.dtype == torch_dtype(type.dtype) and type.is_compatible_shape(tuple(value.shape)))

    def input_filter(self, value, type):
        return to_tensor(value if isinstance(value, _uma().Array) else _uma().asarray(value))

    def output_filter(self, value, type):
        return _uma().from_dlpack(value.detach())

    def compile(self, fgraph):
        torch = _torch()
        run = evaluator(fgraph, torch_impl, constant=lambda c: self.input_filter(_uma().asarray(c.value), c.type),
                        copy=_fresh, output=_tensor_result)

        def thunk(values):
            with torch.no_grad():
                return run(values)

        return thunk
