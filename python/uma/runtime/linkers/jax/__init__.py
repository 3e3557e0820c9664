"""The ``jax`` backend: :class:`JaxLinker` (``jax.jit`` over the graph) and its dispatch table
(JAX is imported when a function is first compiled for it)."""
from .dispatch import jax_impl
from .linker import JaxLinker

__all__ = ["JaxLinker", "jax_impl"]
