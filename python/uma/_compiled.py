"""The compiled-function half of uma, re-exported by ``uma/__init__.py``.

Importing it also routes uma's eager functions to :mod:`uma.graph.ops` when an argument is a
symbolic :class:`uma.graph.Variable` (``uma.exp(x)`` builds a node).
"""
from . import _api, sym
from .graph import Variable, grad
from .graph import ops as _graph_ops
from .graph.rewrite import Mode
from .runtime import (Linker, SharedVariable, backends, dprint, function, register_backend, shared,
                      verify_grad)
from . import random  # noqa: E402  (uma.random.RandomStream)

if hasattr(_api, "_set_symbolic"):
    _api._set_symbolic(Variable, _graph_ops)

__all__ = ["sym", "grad", "shared", "function", "Linker", "register_backend", "backends",
           "SharedVariable", "Mode", "dprint", "verify_grad", "random"]
