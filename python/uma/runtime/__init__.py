"""uma.runtime — compiled functions, shared variables and linkers.

- :func:`shared` / :class:`SharedVariable` / :class:`Container`: one value, many residencies;
- :func:`function` / :class:`Function`: the one code path that computes outputs and writes
  updates;
- :class:`Linker`, :func:`register_backend`, :func:`backends`: ``reference`` (the oracle) and
  ``cpu`` (one ``uma._core.Program`` per function) are registered here.
"""
from .cpu import CpuLinker
from .filters import HOST, filter_host
from .function import Function, function
from .linker import Linker, backends, get_linker, register_backend
from .reference import ReferenceLinker
from .shared import Container, SharedVariable, shared

register_backend("reference", ReferenceLinker(), replace=True)
register_backend("cpu", CpuLinker(), replace=True)

__all__ = [
    "shared", "SharedVariable", "Container", "function", "Function", "Linker",
    "register_backend", "backends", "get_linker", "ReferenceLinker", "CpuLinker", "HOST",
    "filter_host",
]
