"""uma.runtime — compiled functions, shared variables and linkers.

- :func:`shared` / :class:`SharedVariable` / :class:`Container`: one value, many residencies;
- :func:`function` / :class:`Function`: the one code path that computes outputs and writes
  updates;
- :class:`Linker`, :func:`register_backend`, :func:`backends`: ``reference`` (the oracle),
  ``cpu`` (one ``uma._core.Program`` per function) and ``numpy`` (NumPy, written in Python:
  the worked example of a Python-defined backend) are registered here;
- :func:`dprint` (the compiled graph as text) and :func:`verify_grad` (gradients against
  finite differences).
"""
from .cpu import CpuLinker
from .filters import HOST, filter_host
from .function import Function, dprint, function
from .linker import Linker, backends, get_linker, register_backend
from .numpy_linker import NumpyLinker
from .reference import ReferenceLinker
from .shared import Container, SharedVariable, shared
from .verify import verify_grad

register_backend("reference", ReferenceLinker(), replace=True)
register_backend("cpu", CpuLinker(), replace=True)
register_backend("numpy", NumpyLinker(), replace=True)

from .cuda_linker import CudaLinker  # noqa: E402

if CudaLinker.available():  # "cuda" exists only where a GPU is usable (get_linker explains otherwise)
    register_backend("cuda", CudaLinker(), replace=True)

__all__ = [
    "shared", "SharedVariable", "Container", "function", "Function", "Linker",
    "register_backend", "backends", "get_linker", "ReferenceLinker", "CpuLinker", "NumpyLinker", "CudaLinker",
    "HOST", "filter_host", "dprint", "verify_grad",
]
