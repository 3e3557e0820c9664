"""The ``cuda`` backend: :class:`CudaLinker` and its dispatch table."""
from .dispatch import cuda_impl
from .linker import CudaLinker

__all__ = ["CudaLinker", "cuda_impl"]

