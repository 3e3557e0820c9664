"""The ``reference`` linker: walks the graph in Python calling uma's eager ops one by one.

Simple and obviously correct; the oracle the other linkers are tested against. Every op's
result is checked against the dtype the graph inferred (a mismatch is a bug in an op or in
the core and raises ``RuntimeError`` naming the op).
"""
from __future__ import annotations

from ....graph.type import dtype_name
from ...linker import Linker
from ..walk import evaluator
from .dispatch import reference_impl

__all__ = ["ReferenceLinker", "make_evaluator", "array_result"]


def _uma():
    import uma
    return uma


def array_result(var, device=None, check=True):
    """The conversion of a value computed for ``var``: a ``uma.Array`` on ``device`` (None: as
    computed; anything else is converted to ``var``'s dtype there, an array elsewhere is
    moved), with the dtype the graph inferred when ``check`` (``RuntimeError`` naming the op
    otherwise)."""
    uma = _uma()
    Array, asarray, want = uma.Array, uma.asarray, var.type.dtype

    def result(val, node):
        if not isinstance(val, Array):
            val = asarray(val, dtype=want, device=device)
        elif device is not None and str(val.device) != device:
            val = val.to_device(device)
        if check and dtype_name(val.dtype) != want:
            raise RuntimeError(f"{node.op}: returned dtype {dtype_name(val.dtype)}, but the graph "
                               f"inferred {want} (a bug in uma)")
        return val

    return result


def make_evaluator(fgraph, check=True):
    """A thunk that evaluates ``fgraph`` node by node with each op's ``perform``.

    Values are ``uma.Array`` s; outputs listed by ``fgraph.outputs_needing_copy()`` are copied.
    """
    uma = _uma()
    return evaluator(fgraph, reference_impl, constant=lambda c: uma.asarray(c.value),
                     copy=uma.Array.copy, output=lambda v: array_result(v, check=check))


class ReferenceLinker(Linker):
    """Host linker evaluating op by op with uma's eager functions (residency ``"cpu"``)."""

    name = "reference"
    residency = "cpu"
    dispatch = reference_impl

    def compile(self, fgraph):
        return make_evaluator(fgraph)
