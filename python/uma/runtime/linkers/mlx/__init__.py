"""The ``mlx`` backend: :class:`MlxLinker` and its dispatch table (MLX is imported when a
function is first compiled for it)."""
from .dispatch import mlx_impl
from .linker import MlxLinker

__all__ = ["MlxLinker", "mlx_impl"]
