"""The ``cpu`` linker: compiles a graph once into a ``uma._core.Program``.

Compilation (after the graph passes of the function's mode, :mod:`uma.graph.rewrite`):

1. ``elide_broadcasts`` (a mode pass): drop broadcasts that an elementwise op does itself;
2. composite ops the Program does not know (softmax, log_softmax) are lowered to primitives
   (the :func:`~.dispatch.lower` table), and constant-only subgraphs are folded again
   (``constant_folding``);
3. the graph walker asks the :func:`~.dispatch.program_op` table for every node's Program op
   (``add_op(name, slots, attrs)``, the eager function's name and keyword arguments), and
   ``fusion`` (a mode pass) turns each chain of elementwise ops of one dtype into one
   ``add_fused`` loop. A call is then one ``Program.run`` (the GIL is released) with no
   per-op Python.

An op the Program does not support (which ops it supports is probed once per op name and
attributes) is run in Python with its reference ``perform``, between Program segments;
``CpuLinker.python_ops(fn)`` lists them for a compiled function. ``uma.dprint(fn)`` shows the
Program's steps. The plan, the segments and the thunk are :mod:`..program`'s, shared with
the ``cuda`` linker; the passes above are this linker's own.
"""
from __future__ import annotations

import functools

from ...linker import Linker, distinct
from .. import program
from ..reference.linker import array_result, make_evaluator
from ..walk import has_perform
from .dispatch import lower, program_op

__all__ = ["CpuLinker", "elide_broadcasts", "lower_composites", "fold_constants", "plan_steps"]


def _uma():
    import uma
    return uma


def _spec(node):
    return program.checked_spec(node, program_op(node.op, node))


def lower_composites(fgraph):
    """Replace nodes that the :func:`~.dispatch.lower` table lowers and the Program does not
    run by primitive ops (a node whose lowering fails stays, and runs in Python)."""
    done = set()
    changed = True
    while changed:
        changed = False
        for node in fgraph.toposort():
            if node in done or _spec(node) is not None:
                continue
            done.add(node)
            try:
                new_outputs = lower(node.op, node)
            except Exception:
                continue
            if new_outputs is None:
                continue
            for old, new in zip(node.outputs, new_outputs):
                fgraph.replace(old, new)
            changed = True
            break


def elide_broadcasts(fgraph):
    """Drop a ``broadcast_like(a, x)`` that feeds an elementwise op whose other input already
    has x's run-time shape: the op broadcasts ``a`` itself (no array of x's shape is made).

    Valid under the static broadcasting rule: when another input ``b`` of the op has x's ndim
    and no static length-1 axis where x has none, ``b`` and x have the same run-time shape.
    """
    from ....graph.ops import BroadcastLike, Elemwise, Where
    for node in fgraph.toposort():
        if not isinstance(node.op, (Elemwise, Where)):
            continue
        for k, v in enumerate(node.inputs):
            if v.owner is None or not isinstance(v.owner.op, BroadcastLike):
                continue
            a, x = v.owner.inputs
            for j, b in enumerate(node.inputs):
                if j != k and b.ndim == x.ndim and all(
                        xd == 1 or bd != 1 for xd, bd in zip(x.shape, b.shape)):
                    new_inputs = list(node.inputs)
                    new_inputs[k] = a
                    try:  # keep the graph valid: the node's static type must not change
                        same = node.op.output_types(new_inputs) == [o.type for o in node.outputs]
                    except (TypeError, ValueError):
                        same = False
                    if same:
                        node.inputs[k] = a
                    break
    fgraph._order = None


def fold_constants(fgraph):
    """Evaluate nodes whose inputs are all constants once; replace them by constants (the
    ``constant_folding`` pass of :mod:`uma.graph.rewrite`)."""
    from ....graph.rewrite import constant_folding
    constant_folding(fgraph)


def plan_steps(fgraph, fuse=True):
    """The linear plan of a (lowered, folded) graph under the cpu Program table
    (:func:`.program.plan_steps` with :func:`~.dispatch.program_op`)."""
    return program.plan_steps(fgraph, program_op, fuse=fuse)


class CpuLinker(Linker):
    """The fast host linker (residency ``"cpu"``): one ``uma._core.Program`` per function."""

    name = "cpu"
    residency = "cpu"
    dispatch = program_op

    def unsupported(self, fgraph):
        """Ops with neither a Program op nor a reference ``perform`` (to run them in Python)."""
        return distinct(n.op for n in fgraph.toposort() if not has_perform(n.op) and _spec(n) is None)

    def compile(self, fgraph):
        from ....graph.rewrite import as_mode, check_pass, validation_enabled
        uma = _uma()
        core = getattr(uma, "_core", None)
        if core is None or not hasattr(core, "Program"):
            thunk = make_evaluator(fgraph)
            names = [n.op.name for n in fgraph.toposort()]
            return program.ProgramThunk(thunk, names, 0, [])
        mode = as_mode(getattr(fgraph, "mode", None))
        check = mode.validate or validation_enabled()
        if mode.enabled("elide_broadcasts"):
            elide_broadcasts(fgraph)
            if check:
                check_pass(fgraph, "elide_broadcasts")
        lower_composites(fgraph)
        if check:
            check_pass(fgraph, "lower_composites")
        if mode.enabled("constant_folding"):
            fold_constants(fgraph)
            if check:
                check_pass(fgraph, "constant_folding")
        steps = plan_steps(fgraph, fuse=mode.enabled("fusion"))
        return program.compile_program(
            fgraph, steps, backend="cpu", constant=lambda c: uma.asarray(c.value),
            python_impl=lambda node: functools.partial(node.op.perform, node),
            python_result=lambda v: array_result(v, check=False))

    @staticmethod
    def python_ops(fn):
        """Names of the ops a compiled ``cpu`` function runs in Python (not in its Program)."""
        return list(fn._thunk.python_ops)

    @staticmethod
    def fused_chains(fn):
        """How many fused elementwise chains a compiled ``cpu`` function's Program has."""
        return fn._thunk.n_fused
