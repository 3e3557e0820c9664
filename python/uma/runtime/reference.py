"""The ``reference`` linker: walks the graph in Python calling uma's eager ops one by one.

Simple and obviously correct; the oracle the other linkers are tested against. Every op's
result is checked against the dtype the graph inferred (a mismatch is a bug in an op or in
the core and raises ``RuntimeError`` naming the op).
"""
from __future__ import annotations

from ..graph.type import dtype_name
from .linker import Linker

__all__ = ["ReferenceLinker", "make_evaluator"]


def _uma():
    import uma
    return uma


def make_evaluator(fgraph, check=True):
    """A thunk that evaluates ``fgraph`` node by node with each op's ``perform``.

    Values are ``uma.Array`` s; outputs listed by ``fgraph.outputs_needing_copy()`` are copied.
    """
    uma = _uma()
    Array = uma.Array
    order = fgraph.toposort()
    consts = {c: uma.asarray(c.value) for c in fgraph.constants()}
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
    copies = fgraph.outputs_needing_copy()

    def thunk(values):
        env = dict(consts)
        env.update(zip(inputs, values))
        for node in order:
            results = node.op.perform(node, [env[v] for v in node.inputs])
            for var, val in zip(node.outputs, results):
                if not isinstance(val, Array):
                    val = uma.asarray(val, dtype=var.type.dtype)
                if check and dtype_name(val.dtype) != var.type.dtype:
                    raise RuntimeError(f"{node.op}: returned dtype {dtype_name(val.dtype)}, but the graph "
                                       f"inferred {var.type.dtype} (a bug in uma)")
                env[var] = val
        return [env[o].copy() if k in copies else env[o] for k, o in enumerate(outputs)]

    return thunk


class ReferenceLinker(Linker):
    """Host linker evaluating op by op with uma's eager functions (residency ``"cpu"``)."""

    name = "reference"
    residency = "cpu"

    def compile(self, fgraph):
        return make_evaluator(fgraph)
