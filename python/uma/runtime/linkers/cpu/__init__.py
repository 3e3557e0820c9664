"""The ``cpu`` backend: :class:`CpuLinker` (one ``uma._core.Program`` per function), its
compile passes and its dispatch tables."""
from .dispatch import lower, program_op, program_supports
from .linker import CpuLinker, elide_broadcasts, fold_constants, lower_composites, plan_steps

__all__ = ["CpuLinker", "program_op", "lower", "program_supports", "elide_broadcasts",
           "fold_constants", "lower_composites", "plan_steps"]
