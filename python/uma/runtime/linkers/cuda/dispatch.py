"""The ``cuda`` linker's dispatch tables.

- :func:`program_op` ``(op, node) -> (name, attrs) | None``: the ``uma._core.Program`` op a
  node becomes: the cpu linker's table (a Program op runs on the device of its inputs), with
  the cross-entropy ops queued with their label check deferred (``check_labels=False``; the
  Program checks each label input after the whole step, Note [Deferred label checks]).
- :func:`cuda_impl` ``(op, node) -> impl(values) -> [outputs]`` on device ``uma.Array`` s: the
  Python steps, for the nodes the Program does not run, and the node-by-node evaluation of
  :meth:`~.linker.CudaLinker.compile_eager`. Every op runs its reference ``perform`` (the
  eager ops dispatch to the CUDA kernels) except those below, which have device
  implementations of their own (the closed-form cross-entropy ops run their Program op:
  the kernel a compiled Program runs, not the product their ``perform`` writes out); only an
  op without ``perform`` is unsupported.
"""
from __future__ import annotations

import functools

from ....graph import ops as o
from ..cpu.dispatch import program_op as cpu_program_op
from ..program import op_runner
from ..walk import perform_impl

__all__ = ["program_op", "cuda_impl"]


def _uma():
    import uma
    return uma


@functools.singledispatch
def program_op(op, node):
    """``(name, attrs)`` of the Program op for ``node``, None where the Program has none."""
    return cpu_program_op(op, node)


@program_op.register(o.SoftmaxCrossEntropy)
@program_op.register(o.SoftmaxCrossEntropyGrad)
def _program_cross_entropy(op, node):
    return op.name, {"check_labels": False}


@functools.singledispatch
def cuda_impl(op, node):
    """``impl(values) -> [outputs]`` for ``node``: its op's ``perform`` (None without one)."""
    return perform_impl(op, node)


@cuda_impl.register(o.FillLike)
def _fill_like(op, node):
    """zeros_like / ones_like / full_like on the device: a broadcast 0-d device scalar (made at
    the first call, once per device) copied by a kernel; no host fill, no transfer."""
    uma = _uma()
    dtype = op.dtype
    value = {"zeros_like": 0, "ones_like": 1}.get(op.name, op.fill_value)
    scalars = {}

    def fill(values):
        x = values[0]
        dev = str(x.device)
        s = scalars.get(dev)
        if s is None:
            s = scalars[dev] = uma.asarray(uma.full((), value, dtype=dtype or x.dtype.name), device=dev)
        return [uma.broadcast_to(s, tuple(x.shape)).copy()]

    return fill


@cuda_impl.register(o.SoftmaxCrossEntropy)
@cuda_impl.register(o.SoftmaxCrossEntropyGrad)
def _cross_entropy(op, node):
    """The kernel with its label check deferred (``check_labels=False``): the linker checks each
    label input once, after the whole step is queued (so the host does not wait for the GPU in
    the middle of a step)."""
    kernel = getattr(_uma()._core, op.name)
    return lambda values: [kernel(*values, check_labels=False)]


@cuda_impl.register(o.OneHotCrossEntropy)
@cuda_impl.register(o.OneHotCrossEntropyGrad)
def _one_hot_cross_entropy(op, node):
    """The closed form's kernel (the ``closed_forms`` pass puts these ops in the graph): the
    Program op alone, so that node-by-node evaluation computes what a compiled Program does."""
    name, attrs = program_op(op, node)
    return op_runner(name, attrs, len(node.inputs))
