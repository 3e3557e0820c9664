"""The ``torch`` backend: :class:`TorchLinker` and its dispatch table (PyTorch is imported
when a function is first compiled for it)."""
from .dispatch import torch_dtype, torch_impl
from .linker import TorchLinker

__all__ = ["TorchLinker", "torch_impl", "torch_dtype"]
