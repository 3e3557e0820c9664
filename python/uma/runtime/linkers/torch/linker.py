"""The ``torch`` linker: evaluates graphs with PyTorch, eagerly, node by node.

Values are ``torch.Tensor`` s on the CPU, in residency ``"torch"`` (backend ``torch``), or on a
GPU, in residency ``"torch-cuda:N"`` (backend ``torch-cuda``, where PyTorch and uma both have
one): a shared variable that a ``torch`` function updated keeps its value as a tensor until
another backend, or ``get_value``, reads it; then it is converted once. Conversions share
memory both ways (DLPack: ``torch.from_dlpack`` of a ``uma.Array``, ``uma.from_dlpack`` of a
tensor), so a switch of backend on one device copies nothing: on a GPU, a switch between
``torch-cuda`` and uma's ``cuda`` (or ``jax-cuda``) stays on the device.

No value a call sees requires grad, so autograd records nothing (the first call with each
input signature runs under ``torch.no_grad()`` and checks every result; the next ones run
generated straight-line code: ``walk.by_signature``). ``TorchLinker(compile=True)`` runs that
code through ``torch.compile``. Outputs that could alias an input, a constant or another
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
from ..walk import by_signature, node_steps, straight_code, straight_line
from .dispatch import _torch, to_tensor, torch_dtype, torch_impl

__all__ = ["TorchLinker"]


def _uma():
    import uma
    return uma


def _tensor_result(var, converted):
    """The check of a value computed for ``var``: a tensor of the graph's dtype (a value of
    another type is converted, and ``converted`` gets an entry)."""
    name = var.type.dtype
    torch = _torch()
    want = torch_dtype(name)  # once per output, not per call

    def result(r, node):
        if not isinstance(r, torch.Tensor):
            converted.append(node)
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

    def __init__(self, device=None, *, compile=False, **compile_options):
        """``TorchLinker()``: backend ``torch``, tensors on the CPU. ``TorchLinker("cuda:N")``:
        backend ``torch-cuda`` (``torch-cuda:N`` for N > 0), tensors on PyTorch's GPU N
        (``RuntimeError`` at the first compile where PyTorch has none).

        ``compile=True``: calls after the first with each input signature run the graph's
        straight-line code through ``torch.compile(code, **compile_options)`` (TorchDynamo and,
        by default, Inductor: on the CPU it needs a C++ compiler; uma's eager ops between
        PyTorch ops, such as the label check of a cross-entropy, are graph breaks). The first
        call with each signature runs eagerly with every result checked, as without the flag.
        Pass the linker itself as the backend: ``uma.function(..., backend=TorchLinker(compile=True))``
        (its values are the ``torch`` backend's: same residency)."""
        self.device, self.name, self.residency = framework_device("torch", device)
        self._torch_device = None
        self.torch_compile = bool(compile)
        self.compile_options = dict(compile_options)
        if compile_options and not compile:
            raise TypeError(f"TorchLinker: options {sorted(compile_options)} are torch.compile's; pass compile=True")

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
        """The graph node by node (:func:`~..walk.node_steps`): the first call with each
        combination of value shapes runs with every result checked, the next ones run
        generated straight-line code without checks (:func:`~..walk.by_signature`). No value a
        call sees requires grad (arguments that do are not native; filtered and stored values
        are DLPack views), so autograd records nothing."""
        torch = _torch()
        dev = self.torch_device()  # PyTorch has this device, or RuntimeError now
        steps = node_steps(fgraph, torch_impl)
        copies = fgraph.outputs_needing_copy()
        constants = {}

        def constant(c):
            v = constants.get(c)
            if v is None:
                v = constants[c] = self.input_filter(_uma().asarray(c.value), c.type)
            return v

        converted = []
        run = straight_line(fgraph.inputs, fgraph.outputs, steps, copies, constant=constant, copy=_fresh,
                            output=lambda v: _tensor_result(v, converted))

        def checked(values):
            converted.clear()
            with torch.no_grad():
                return run(values)

        code = dict(inputs=fgraph.inputs, outputs=fgraph.outputs, steps=steps, copies=copies, constant=constant,
                    copy=_fresh)
        native = _native_args(fgraph, dev)
        if getattr(self, "torch_compile", False):
            fast = torch.compile(straight_code(**code), **self.compile_options)
            return by_signature(fgraph, checked, fast, native_args=native, settled=lambda: not converted)
        # the shape check and the nodes in one generated function
        return by_signature(fgraph, checked, code=code, native_args=native, settled=lambda: not converted)


def _native_args(fgraph, dev):
    """Whether a call's arguments go to the thunk as they are (uma.Function): tensors on the
    linker's device ``dev`` of the inputs' dtypes that do not require grad and have no lazy
    conjugate or negative bit (what ``is_native`` accepts; their shapes are checked by the
    thunk, once per signature)."""
    torch = _torch()
    tensor = torch.Tensor
    dtypes = [torch_dtype(v.type.dtype) for v in fgraph.inputs]
    on_cpu = dev.type == "cpu"

    def native_args(args):
        for a, dt in zip(args, dtypes):
            if (type(a) is not tensor or a.dtype is not dt or a.requires_grad
                    or not (a.is_cpu if on_cpu else a.device == dev) or a.is_conj() or a.is_neg()):
                return False
        return True

    return native_args
