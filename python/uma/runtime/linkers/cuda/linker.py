"""The ``cuda`` linker: compiles a graph once into a ``uma._core.Program`` that runs on a GPU.

Design: values live on ``cuda:N`` as ``uma.Array`` s. Compilation is the cpu linker's
(:mod:`..program`): the graph walker asks the :func:`~.dispatch.program_op` table for every
node's Program op, and a call is one ``Program.run`` (the GIL released, no per-op Python).
The Program's ops are uma's eager ops, and an op runs on the device of its inputs (one that
makes an array from another's shape, such as ``zeros_like`` or ``getitem_grad``, makes it on
that array's device), so every kernel is queued on uma's stream of the device and the host
never waits except where a value must reach it (``get_value``, a function's outputs
converted by the caller). Constants are device arrays, made once at compile time. Of the cpu
linker's passes, ``closed_forms`` runs (where the function's mode enables it: cross-entropy
written with ``one_hot`` and ``log_softmax`` becomes one kernel per row for the loss and one
for its gradient, within the accuracy rule); lowering composites and folding constants do
not. Outputs and updates are bit for bit those of the eager ops node by node over the graph
after the same passes (:meth:`CudaLinker.compile_eager`). With ``fuse=True`` (default
:data:`SWITCH_DEFAULTS`, ``UMA_CUDA_FUSE``) and the mode's ``fusion`` pass, elementwise chains
and matrix-product epilogues are fused as on the cpu (one kernel per chain, Note [Fused
chains on cuda] in ``src/kernels/cuda/fused.cu``), which changes no value. An op without a
Program op runs in Python between Program segments (:func:`~.dispatch.cuda_impl`: its
``perform`` on device arrays; a result a ``perform`` returns on the host is moved to the
device); ``CudaLinker.python_ops(fn)`` lists them, and ``uma.dprint(fn)`` shows the steps.

CUDA graphs (``graphs=True``; default :data:`SWITCH_DEFAULTS`, ``UMA_CUDA_GRAPHS``; by default
only for Programs of at least :data:`AUTO_GRAPH_MIN_STEPS` steps, while ``graphs=True`` or a set
``UMA_CUDA_GRAPHS`` that is true records every Program): the Program records
a call as one CUDA graph per input signature and replays it (Note [Program graphs] of
``include/uma/runtime/program.h``): the first call of a signature runs op by op, the second
records, and later calls copy their arguments into the recording's buffers and launch it,
allocating nothing; a recording whose results someone still holds is not replayed (a
training step alternates between two, which read each other's updates where they lie, so
the updated variables are not copied: Note [Carried values]). :meth:`CudaLinker.graph_stats`
reports what happened.

Residency ``"cuda:N"`` (:class:`uma.Linker`): a shared variable updated by a ``cuda``
function keeps its current copy on the GPU, so a training step with
``update_policy="lazy"`` transfers no parameter bytes; ``get_value()`` and functions of other
backends read it after one device->host copy (``output_filter``). Arguments from NumPy or
host arrays take the pinned staging path host->device (``input_filter``). A function compiled
to one Program is called from C++ (``uma.Function.fast_path``): the arguments filtered, the
shared variables read on the device, the Program queued, the updates checked and written,
with no Python per call.

Label checks: the cross-entropy steps are queued with their label check deferred
(``check_labels=False``), so the host does not wait for the GPU in the middle of a step; the
Program checks each label input once, after the whole step is queued and before ``run``
returns, so before any update is written (Note [Deferred label checks] of
``include/uma/runtime/program.h``): one wait per call, and a bad label still raises the op's
``ValueError`` and changes no shared variable. With ``lean_replay`` (default on,
:data:`SWITCH_DEFAULTS`), a replayed recording copies its arguments with one kernel, queues the
checks of labels it takes as arguments before its launch and waits for them alone, so the
call returns while the step still runs (Note [Lean replays]).

Every op runs on the device (indexing, the functional updates and one_hot included). Besides
the label check, the host waits for the GPU where an op's result or error depends on device
data: a take or an integer-array update checks its indices on the device and reads back the
position of the first bad one (the ``IndexError`` of the cpu path), and a mask read or update
reads back the mask's count (the result's length).
"""
from __future__ import annotations

import os

from ...linker import Linker, distinct
from .. import program
from ..cpu.linker import closed_forms
from ..reference.linker import array_result
from ..walk import evaluator, has_perform
from .dispatch import cuda_impl, program_op

__all__ = ["CudaLinker", "SWITCH_DEFAULTS", "label_checks"]


def _uma():
    import uma
    return uma


#: The cuda linker's switches when neither the argument nor the environment sets them: all on.
#: With them the GPU test files (test_cuda.py, test_cuda_graphs.py, test_backends_gpu.py,
#: test_fft.py) passed on an H100, and the 64-64-10 training step of bench/bench_gpu_step.py
#: took 0.065 ms with lean replays against 0.116 without on an H200
#: (docs/measurements/gpu_tests/summary.txt, docs/benchmarks.md). tests/gpu/run.sh runs
#: test_cuda_graphs.py and test_cuda.py with lean replays off as well.
SWITCH_DEFAULTS = {"UMA_CUDA_GRAPHS": True, "UMA_CUDA_FUSE": True, "UMA_CUDA_LEAN_REPLAY": True}

#: With graphs on by default (neither the argument nor UMA_CUDA_GRAPHS set), a Program of fewer
#: steps runs op by op: a one-kernel function took 10.3 µs per call replayed against 8.0 µs op
#: by op (H100, bench/bench_gpu_step.py's scalar call), where a training step gains 1.7-6x.
AUTO_GRAPH_MIN_STEPS = 3


def _switch(env, value):
    """A switch: ``value`` when set, else the environment variable ``env``, else its default."""
    if value is not None:
        return value
    raw = os.environ.get(env)
    if raw is None:
        return SWITCH_DEFAULTS[env]
    v = raw.strip().lower()
    if v in ("1", "true", "on", "yes"):
        return True
    if v in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{env} must be 1/true/on/yes or 0/false/off/no, got {raw!r}")


def label_checks(fgraph):
    """The deferred label checks of ``fgraph``'s cross-entropy nodes: ``(labels, logits,
    op_name)`` once per label input (the first node reading it names the op), in execution
    order."""
    from ....graph.ops import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
    checks, seen = [], set()
    for node in fgraph.toposort():
        if isinstance(node.op, (SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad)) and node.inputs[-1] not in seen:
            seen.add(node.inputs[-1])
            checks.append((node.inputs[-1], node.inputs[-2], node.op.name))
    return checks


class CudaLinker(Linker):
    """Linker for one CUDA device (default ``cuda:0``): residency ``"cuda:N"``, one
    ``uma._core.Program`` per function."""

    name = "cuda"
    dispatch = cuda_impl
    #: The linker passes (:func:`.program.linker_passes`) that :meth:`compile` and
    #: :meth:`compile_eager` both run, so that both compute the same graph.
    passes = (("closed_forms", closed_forms),)
    mode_passes = program.mode_pass_names(passes)

    def __init__(self, device="cuda:0", graphs=None, fuse=None, lean_replay=None):
        """``device``: a cuda device (``"cuda:N"``, a ``uma.Device``). ``graphs``: CUDA graphs of
        the Programs (Note [Program graphs]); ``fuse``: fused elementwise chains (Note [Fused
        chains on cuda]); ``lean_replay``: a replayed step copies its arguments with one kernel
        and waits for its label checks alone, not for the step (Note [Lean replays]). Each True, False, or None for the
        environment (``UMA_CUDA_GRAPHS``, ``UMA_CUDA_FUSE``, ``UMA_CUDA_LEAN_REPLAY``:
        1/true/on/yes or 0/false/off/no; unset: :data:`SWITCH_DEFAULTS`), read when a function is
        compiled. ValueError for another device or setting, TypeError for a switch that is not a
        bool or None."""
        d = _uma().Device(device)
        if d.type != "cuda":
            raise ValueError(f"CudaLinker: expected a cuda device, got {device!r}")
        for name, v in (("graphs", graphs), ("fuse", fuse), ("lean_replay", lean_replay)):
            if v is not None and not isinstance(v, bool):
                raise TypeError(f"CudaLinker: {name} must be True, False or None, got {v!r}")
        self.device = str(d)
        self.residency = self.device
        self._graphs, self._fuse, self._lean_replay = graphs, fuse, lean_replay

    @property
    def graphs(self):
        """Whether compiled Programs record CUDA graphs (the argument, else ``UMA_CUDA_GRAPHS``)."""
        return _switch("UMA_CUDA_GRAPHS", self._graphs)

    @property
    def fuse(self):
        """Whether elementwise chains are fused (the argument, else ``UMA_CUDA_FUSE``)."""
        return _switch("UMA_CUDA_FUSE", self._fuse)

    @property
    def lean_replay(self):
        """Whether replays are lean: one kernel for the argument copies, the label checks waited
        for alone (the argument, else
        ``UMA_CUDA_LEAN_REPLAY``; Note [Lean replays] of ``include/uma/runtime/program.h``)."""
        return _switch("UMA_CUDA_LEAN_REPLAY", self._lean_replay)

    def input_filter(self, value, type):
        uma = _uma()
        if isinstance(value, uma.Array) and str(value.device) == self.device:
            return value
        return uma.asarray(value, device=self.device)

    def output_filter(self, value, type):
        return value.to_device("cpu")

    def core_residency(self):
        """The device's residency: shared variables keep this linker's copies as ``uma.Array`` s on
        the device, converted to and from the host in C++ (one transfer each way)."""
        return _uma()._core._array_residency(self.device)

    def is_native(self, value, type):
        uma = _uma()
        return (isinstance(value, uma.Array) and str(value.device) == self.device
                and value.dtype.name == type.dtype)

    def unsupported(self, fgraph):
        """Ops with neither a Program op nor a ``perform`` (to run them in Python)."""
        return distinct(n.op for n in fgraph.toposort()
                        if not has_perform(n.op) and program.checked_spec(n, program_op(n.op, n)) is None)

    def compile(self, fgraph):
        """The graph as one Program on the device (module documentation). RuntimeError naming
        the reason when the device is not usable (no GPU, or a build without CUDA)."""
        uma = _uma()
        dev = self.device
        if not uma.cuda.is_available():
            raise RuntimeError(f"CudaLinker: device {dev} is not available: {uma.cuda.unavailable_reason()}")
        if uma.Device(dev).index >= uma.cuda.device_count():
            raise RuntimeError(f"CudaLinker: device {dev} is not available: this machine has "
                               f"{uma.cuda.device_count()} GPU(s)")
        mode = program.linker_passes(fgraph, self.passes)
        steps = program.plan_steps(fgraph, program_op, fuse=self.fuse and mode.enabled("fusion"))
        thunk = program.compile_program(
            fgraph, steps, backend="cuda", constant=lambda c: uma.asarray(c.value, device=dev),
            python_impl=lambda node: cuda_impl(node.op, node),
            python_result=lambda v: array_result(v, dev), label_checks=label_checks(fgraph))
        if thunk.program is not None:
            explicit = self._graphs is not None or os.environ.get("UMA_CUDA_GRAPHS") is not None
            thunk.program.graphs = self.graphs and (explicit or thunk.program.num_steps >= AUTO_GRAPH_MIN_STEPS)
            thunk.program.lean_replay = self.lean_replay
        return thunk

    @staticmethod
    def graph_stats(fn):
        """What the CUDA graphs of a compiled ``cuda`` function did (``Program.graph_stats``:
        recordings made, runs replayed, replays whose label checks were waited for alone
        (``early_checked``, with lean replays), failed recordings and why, argument bytes the
        replays copied (``copied_bytes``), device bytes kept); None
        when ``fn`` is not one Program with graphs on (another backend, graphs off)."""
        prog = getattr(getattr(fn, "_thunk", None), "program", None)
        return None if prog is None or not prog.graphs else prog.graph_stats()

    def compile_eager(self, fgraph):
        """The thunk evaluating ``fgraph`` node by node with uma's eager ops on the device (the
        graph walker's, over :func:`~.dispatch.cuda_impl`, after the passes :meth:`compile`
        runs, label checks deferred to the end as in :meth:`compile`): what a compiled Program
        must equal bit for bit."""
        uma = _uma()
        program.linker_passes(fgraph, self.passes)
        dev = self.device
        check = uma._core._check_labels

        def after(labels, logits, name):
            def run(values):
                y, z = values
                check(y, z.shape[1] if z.ndim == 2 else 0, name)
                return []
            return (run, None, [labels, logits], [])

        return evaluator(fgraph, cuda_impl, constant=lambda c: uma.asarray(c.value, device=dev),
                         copy=uma.Array.copy, output=lambda v: array_result(v, dev),
                         after=[after(*c) for c in label_checks(fgraph)])

    @staticmethod
    def python_ops(fn):
        """Names of the ops a compiled ``cuda`` function runs in Python (not in its Program)."""
        return list(fn._thunk.python_ops)

    @staticmethod
    def available() -> bool:
        """Whether a CUDA GPU is usable (the backend is registered only then)."""
        try:
            return bool(_uma().cuda.is_available())
        except Exception:
            return False
