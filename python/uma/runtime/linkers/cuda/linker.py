"""The ``cuda`` linker: evaluates a graph on a GPU, node by node, with uma's eager ops.

Design: values live on ``cuda:N`` as ``uma.Array`` s. The thunk (the graph walker's, over
:data:`~.dispatch.cuda_impl`) calls each op's implementation on device arrays in topological
order; the eager ops dispatch to the CUDA kernels (``src/kernels/cuda``) at the one device
boundary of ``kernels.h``, so every op is queued on uma's stream of the device and the host
never waits except where a value must reach it (``get_value``, a function's outputs converted
by the caller). Constants are moved to the device once, at compile time.

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

from ...linker import Linker
from ..reference.linker import array_result
from ..walk import evaluator
from .dispatch import cuda_impl

__all__ = ["CudaLinker"]


def _uma():
    import uma
    return uma


def _label_checks(fgraph):
    """The deferred label checks of ``fgraph``'s cross-entropy nodes, as steps run after the
    nodes: one per label input (the first node reading it names the op)."""
    from ....graph.ops import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
    check_labels = _uma()._core._check_labels
    steps, seen = [], set()
    for node in fgraph.toposort():
        if isinstance(node.op, (SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad)) and node.inputs[-1] not in seen:
            z, y = node.inputs[-2], node.inputs[-1]
            seen.add(y)

            def check(values, name=node.op.name):
                z, y = values
                check_labels(y, z.shape[1] if z.ndim == 2 else 0, name)
                return []
            steps.append((check, node, [z, y], []))
    return steps


class CudaLinker(Linker):
    """Linker for one CUDA device (default ``cuda:0``): residency ``"cuda:N"``."""

    name = "cuda"
    dispatch = cuda_impl

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
        uma = _uma()
        dev = self.device
        return evaluator(fgraph, cuda_impl, constant=lambda c: uma.asarray(c.value, device=dev),
                         copy=uma.Array.copy, output=lambda v: array_result(v, dev),
                         after=_label_checks(fgraph))

    @staticmethod
    def available() -> bool:
        """Whether a CUDA GPU is usable (the backend is registered only then)."""
        try:
            return bool(_uma().cuda.is_available())
        except Exception:
            return False
