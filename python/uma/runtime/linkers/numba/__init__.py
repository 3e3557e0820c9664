"""The ``numba`` backend: :class:`NumbaLinker` (``numba.njit`` over runs of the graph) and its
dispatch table (Numba is imported when a function is first compiled for it)."""
from .dispatch import numba_code
from .linker import NumbaLinker

__all__ = ["NumbaLinker", "numba_code"]
