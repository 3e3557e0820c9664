"""uma.graph — the symbolic IR of compiled functions.

- :class:`Variable` (type = dtype + static shape), :class:`Constant`, :class:`Apply` nodes and
  :class:`Op` s (:mod:`uma.graph.ops` defines one function per eager uma function);
- :class:`FunctionGraph` (a private clone between inputs and outputs, with an
  ``update_mapping``) and :func:`validate`;
- :func:`grad` (reverse mode).

The eager functions of :mod:`uma` forward to :mod:`uma.graph.ops` when an argument is a
:class:`Variable`, so ``uma.exp(x)`` on a symbolic ``x`` builds a graph node.
"""
from . import ops
from .basic import Apply, Constant, Op, Variable, ancestors, as_variable, toposort
from .fgraph import FunctionGraph, MissingInputError, alias_root, validate
from .gradient import DisconnectedInputError, grad
from .type import TensorType, dtype_name

__all__ = [
    "Variable", "Constant", "Apply", "Op", "TensorType", "FunctionGraph", "MissingInputError",
    "DisconnectedInputError", "validate", "grad", "as_variable", "toposort", "ancestors",
    "alias_root", "dtype_name", "ops",
]
