"""The ``numpy`` backend: :class:`NumpyLinker` and its dispatch table."""
from .dispatch import numpy_dtype, numpy_impl
from .linker import NumpyLinker

__all__ = ["NumpyLinker", "numpy_impl", "numpy_dtype"]
