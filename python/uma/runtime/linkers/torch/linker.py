"""The ``torch`` linker: evaluates graphs with PyTorch, eagerly, node by node.

Values are ``torch.Tensor`` s on the CPU, in residency ``"torch"`` (backend ``torch``), or on a
GPU, in residency ``"torch-cuda:N"`` (backend ``torch-cuda``, where PyTorch and uma both have
one): a shared variable that a ``torch`` function updated keeps its value as a tensor until
another backend, or ``get_value``, reads it; then it is converted once. Conversions share
memory both ways (DLPack: ``torch.from_dlpack`` of a ``uma.Array``, ``uma.from_dlpack`` of a
tensor), so a switch of backend on one device copies nothing: on a GPU, a switch between
``torch-cuda`` and uma's ``cuda`` (or ``jax-cuda``) stays on the device.

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

from ...linker import Linker, framework_device
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
    """Evaluates graphs with PyTorch on the CPU or a GPU; values are ``torch.Tensor`` s in
    residency ``"torch"`` (``"torch-cuda:N"``). Conversions to and from uma's residency of the
    same device share memory (DLPack, no copy). Function outputs are tensors (0-d for
    scalars)."""

    dispatch = torch_impl

    def __init__(self, device=None):
        """``TorchLinker()``: backend ``torch``, tensors on the CPU. ``TorchLinker("cuda:N")``:
        backend ``torch-cuda`` (``torch-cuda:N`` for N > 0), tensors on PyTorch's GPU N
        (``RuntimeError`` at the first compile where PyTorch has none)."""
        self.device, self.name, self.residency = framework_device("torch", device)
        self._torch_device = None

    def torch_device(self):
        """The ``torch.device`` this linker's tensors live on."""
        if self._torch_device is None:
            torch = _torch()
            if self.device is not None:
                index = int(self.device.split(":")[1])
                if not torch.cuda.is_available() or index >= torch.cuda.device_count():
                    raise RuntimeError(f"backend {self.name!r}: PyTorch has no GPU {index} (a CUDA build of "
                                       f"PyTorch is needed)")
            self._torch_device = torch.device(self.device or "cpu")
        return self._torch_device

    def is_native(self, value, type):
        torch = _torch()
        # a lazily conjugated or negated tensor (conj/neg bit) has no DLPack form: not native
        return (isinstance(value, torch.Tensor) and value.device == self.torch_device() and not value.requires_grad
                and not value.is_conj() and not value.is_neg()
                and value.dtype == torch_dtype(type.dtype) and type.is_compatible_shape(tuple(value.shape)))

    def input_filter(self, value, type):
        t = to_tensor(value if isinstance(value, _uma().Array) else _uma().asarray(value))
        dev = self.torch_device()
        return t if t.device == dev else t.to(dev)

    def output_filter(self, value, type):
        return _uma().from_dlpack(value.detach())

    def compile(self, fgraph):
        torch = _torch()
        self.torch_device()  # PyTorch has this device, or RuntimeError now
        run = evaluator(fgraph, torch_impl, constant=lambda c: self.input_filter(_uma().asarray(c.value), c.type),
                        copy=_fresh, output=_tensor_result)

        def thunk(values):
            with torch.no_grad():
                return run(values)

        return thunk
