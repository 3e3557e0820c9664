"""The ``cuda`` linker: evaluates a graph on a GPU, node by node, with uma's eager ops.

Design: values live on ``cuda:N`` as ``uma.Array`` s. The thunk walks the graph in
topological order and calls each op's ``perform`` on device arrays; the eager ops dispatch
to the CUDA kernels (``src/kernels/cuda``) at the one device boundary of ``kernels.h``, so
every op is queued on uma's stream of the device and the host never waits except where a
value must reach it (``get_value``, a function's outputs converted by the caller). Constants
are moved to the device once, at compile time.

Residency ``"cuda:N"`` (:class:`uma.Linker`): a shared variable updated by a ``cuda``
function keeps its current copy on the GPU, so a training step with
``update_policy="lazy"`` transfers no parameter bytes; ``get_value()`` and functions of other
backends read it after one device->host copy (``output_filter``). Arguments from NumPy or
host arrays take the pinned staging path host->device (``input_filter``).

Label checks: the cross-entropy nodes run with their label check deferred (``check_labels=
False``), so the host does not wait for the GPU in the middle of a step; the thunk checks each
label input once, after the whole step is queued and before it returns (so before any update
is written): one wait per call, and a bad label still raises the op's ``ValueError`` and
changes no shared variable.

Every op runs on the device (indexing, the functional updates and one_hot included). Besides
the label check, the host waits for the GPU where an op's result or error depends on device
data: a take or an integer-array update checks its indices on the device and reads back the
position of the first bad one (the ``IndexError`` of the cpu path), and a mask read or update
reads back the mask's count (the result's length). Results a ``perform`` returns on the host
(a creation op) are moved to the device.
"""
from __future__ import annotations

from .linker import Linker

__all__ = ["CudaLinker"]


def _uma():
    import uma
    return uma


class CudaLinker(Linker):
    """Linker for one CUDA device (default ``cuda:0``): residency ``"cuda:N"``."""

    name = "cuda"

    def __init__(self, device="cuda:0"):
        self.device = str(_uma().Device(device))
        self.residency = self.device

    def input_filter(self, value, type):
        uma = _uma()
        if isinstance(value, uma.Array) and str(value.device) == self.device:
            return value
        return uma.asarray(value, device=self.device)

    def output_filter(self, value, type):
        return value.to_device("cpu")

    def is_native(self, value, type):
        uma = _uma()
        return (isinstance(value, uma.Array) and str(value.device) == self.device
                and value.dtype.name == type.dtype)

    def compile(self, fgraph):
        from ..graph.type import dtype_name
        uma = _uma()
        Array, dev = uma.Array, self.device
        order = fgraph.toposort()
        consts = {c: uma.asarray(c.value, device=dev) for c in fgraph.constants()}
        inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
        copies = fgraph.outputs_needing_copy()

        from ..graph.ops import FillLike
        fills = {}

        def fill_like(op, x):
            # zeros_like / ones_like / full_like on the device: a broadcast 0-d device scalar
            # (made once per value and dtype) copied by a kernel; no host fill, no transfer.
            dtype = op.dtype or x.dtype.name
            value = {"zeros_like": 0, "ones_like": 1}.get(op.name, op.fill_value)
            key = (repr(value), dtype)
            s = fills.get(key)
            if s is None:
                s = fills[key] = uma.asarray(uma.full((), value, dtype=dtype), device=dev)
            return [uma.broadcast_to(s, tuple(x.shape)).copy()]

        xent = {"softmax_cross_entropy": uma._core.softmax_cross_entropy,
                "softmax_cross_entropy_grad": uma._core.softmax_cross_entropy_grad}
        check_labels = uma._core._check_labels

        def thunk(values):
            env = dict(consts)
            env.update(zip(inputs, values))
            label_checks = {}  # labels variable -> (op name, number of classes)
            for node in order:
                args = [env[v] for v in node.inputs]
                if isinstance(node.op, FillLike):
                    results = fill_like(node.op, args[0])
                elif node.op.name in xent:
                    z, y = args[-2], args[-1]
                    label_checks.setdefault(node.inputs[-1], (node.op.name, z.shape[1] if z.ndim == 2 else 0))
                    results = [xent[node.op.name](*args, check_labels=False)]
                else:
                    results = node.op.perform(node, args)
                for var, val in zip(node.outputs, results):
                    if not isinstance(val, Array):
                        val = uma.asarray(val, dtype=var.type.dtype, device=dev)
                    elif str(val.device) != dev:
                        val = val.to_device(dev)
                    if dtype_name(val.dtype) != var.type.dtype:
                        raise RuntimeError(f"{node.op}: returned dtype {dtype_name(val.dtype)}, but the graph "
                                           f"inferred {var.type.dtype} (a bug in uma)")
                    env[var] = val
            for var, (name, nclasses) in label_checks.items():
                check_labels(env[var], nclasses, name)
            return [env[o].copy() if k in copies else env[o] for k, o in enumerate(outputs)]

        return thunk

    @staticmethod
    def available() -> bool:
        """Whether a CUDA GPU is usable (the backend is registered only then)."""
        try:
            return bool(_uma().cuda.is_available())
        except Exception:
            return False
