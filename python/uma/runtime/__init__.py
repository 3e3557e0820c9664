"""uma.runtime — compiled functions, shared variables and linkers.

- :func:`shared` / :class:`SharedVariable` / :class:`Container`: one value, many residencies;
- :func:`function` / :class:`Function`: the one code path that computes outputs and writes
  updates;
- :class:`Linker`, :func:`register_backend`, :func:`backends`: ``reference`` (the oracle),
  ``cpu`` (one ``uma._core.Program`` per function), ``numpy`` (NumPy, written in Python:
  the worked example of a Python-defined backend), ``jax``, ``mlx``, ``numba`` and ``torch`` (where installed)
  and, where a GPU is usable, ``cuda`` are registered here; their linkers and dispatch tables are in :mod:`uma.runtime.linkers`;
- :func:`dprint` (the compiled graph as text) and :func:`verify_grad` (gradients against
  finite differences).
"""
import importlib.util

from .filters import HOST, filter_host
from .function import Function, dprint, function
from .linker import Linker, backends, get_linker, register_backend
from .linkers.cpu import CpuLinker
from .linkers.cuda import CudaLinker
from .linkers.numpy import NumpyLinker
from .linkers.reference import ReferenceLinker
from .linkers.jax import JaxLinker
from .linkers.mlx import MlxLinker
from .linkers.numba import NumbaLinker
from .linkers.torch import TorchLinker
from .shared import Container, SharedVariable, shared
from .verify import verify_grad

register_backend("reference", ReferenceLinker(), replace=True)
register_backend("cpu", CpuLinker(), replace=True)
register_backend("numpy", NumpyLinker(), replace=True)
if importlib.util.find_spec("jax") is not None:  # JAX is imported at the first compile
    register_backend("jax", JaxLinker(), replace=True)
if importlib.util.find_spec("mlx") is not None:  # MLX is imported at the first compile
    register_backend("mlx", MlxLinker(), replace=True)
if importlib.util.find_spec("numba") is not None:  # Numba is imported at the first compile
    register_backend("numba", NumbaLinker(), replace=True)
if importlib.util.find_spec("torch") is not None:  # PyTorch is imported at the first compile
    register_backend("torch", TorchLinker(), replace=True)
if CudaLinker.available():  # "cuda" exists only where a GPU is usable (get_linker explains otherwise)
    register_backend("cuda", CudaLinker(), replace=True)

__all__ = [
    "shared", "SharedVariable", "Container", "function", "Function", "Linker",
    "register_backend", "backends", "get_linker", "ReferenceLinker", "CpuLinker", "NumpyLinker", "CudaLinker",
    "TorchLinker", "JaxLinker", "MlxLinker", "NumbaLinker",
    "HOST", "filter_host", "dprint", "verify_grad",
]
