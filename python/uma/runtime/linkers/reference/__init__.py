"""The ``reference`` backend: :class:`ReferenceLinker` and its dispatch table."""
from .dispatch import reference_impl
from .linker import ReferenceLinker, make_evaluator

__all__ = ["ReferenceLinker", "reference_impl", "make_evaluator"]
