"""The ``cuda`` backend: :class:`CudaLinker` (one ``uma._core.Program`` per function, run on
the GPU) and its dispatch tables."""
from .dispatch import cuda_impl, program_op
from .linker import CudaLinker

__all__ = ["CudaLinker", "cuda_impl", "program_op"]
