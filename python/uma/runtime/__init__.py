"""uma.runtime — compiled functions, shared variables and linkers.

- :func:`shared` / :class:`SharedVariable` / :class:`Container`: one value, many residencies;
- :func:`function` / :class:`Function`: the one code path that computes outputs and writes
  updates;
- :class:`Linker`, :func:`register_backend`, :func:`backends`: ``reference`` (the oracle),
  ``cpu`` (one ``uma._core.Program`` per function), ``numpy`` (NumPy, written in Python:
  the worked example of a Python-defined backend), ``jax``, ``mlx``, ``numba`` and ``torch`` (where installed)
  and, where a GPU is usable, ``cuda`` (with ``jax-cuda`` and ``torch-cuda`` where their CUDA
  builds are installed) are registered here; their linkers and dispatch tables are in :mod:`uma.runtime.linkers`;
- :func:`dprint` (the compiled graph as text) and :func:`verify_grad` (gradients against
  finite differences).
"""
import importlib.metadata
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



def _cuda_build_of(dist):
    """False for a CPU-only wheel of ``dist`` (its version says ``+cpu``), True otherwise."""
    try:
        return not importlib.metadata.version(dist).endswith("+cpu")
    except importlib.metadata.PackageNotFoundError:
        return False


def _installed(module):
    """Whether ``module`` can be imported as a module of its own (found without importing it):
    a file or an extension, not a bare folder of that name on the path (the current directory's
    ``torch/``), which Python would import as an empty namespace package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


register_backend("reference", ReferenceLinker(), replace=True)
register_backend("cpu", CpuLinker(), replace=True)
register_backend("numpy", NumpyLinker(), replace=True)
if _installed("jax"):  # JAX is imported at the first compile
    register_backend("jax", JaxLinker(), replace=True)
if _installed("mlx.core"):  # MLX (a namespace package) is imported at the first compile
    register_backend("mlx", MlxLinker(), replace=True)
if _installed("numba"):  # Numba is imported at the first compile
    register_backend("numba", NumbaLinker(), replace=True)
if _installed("torch"):  # PyTorch is imported at the first compile
    register_backend("torch", TorchLinker(), replace=True)
if CudaLinker.available():  # "cuda" exists only where a GPU is usable (get_linker explains otherwise)
    register_backend("cuda", CudaLinker(), replace=True)
    # JAX and PyTorch on the GPU, where their CUDA builds are installed (found without importing
    # them; a build without the GPU uma sees is a RuntimeError at the first compile)
    if any(_installed(m) for m in ("jax_cuda13_plugin", "jax_cuda12_plugin")):
        register_backend("jax-cuda", JaxLinker("cuda:0"), replace=True)
    if _installed("torch") and _cuda_build_of("torch"):
        register_backend("torch-cuda", TorchLinker("cuda:0"), replace=True)

__all__ = [
    "shared", "SharedVariable", "Container", "function", "Function", "Linker",
    "register_backend", "backends", "get_linker", "ReferenceLinker", "CpuLinker", "NumpyLinker", "CudaLinker",
    "TorchLinker", "JaxLinker", "MlxLinker", "NumbaLinker",
    "HOST", "filter_host", "dprint", "verify_grad",
]
