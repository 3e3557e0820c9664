"""``python -m uma.runtime.linkers``: prints the ops a linker may meet (``docs/linker_ops.md``)."""
from ..linker import Linker

print(Linker.ops_reference(), end="")
