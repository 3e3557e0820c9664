"""uma.Device: where an array's bytes live ("cpu", "cuda:N")."""
from __future__ import annotations

import operator

__all__ = ["Device"]


class Device:
    """A device. ``Device("cpu")``, ``Device("cuda", 0)``, ``Device("cuda:0")``.

    ``str(d)`` is ``"cpu"`` or ``"cuda:N"``; a Device compares equal to its string.
    ValueError for an unknown device string.
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, Device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit() or (type == "cpu" and int(idx) != 0):
                raise ValueError(f"invalid device string {type + ':' + idx!r} (expected 'cpu', 'cpu:0', "
                                 f"'cuda' or 'cuda:N')")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise ValueError(f"invalid device type {type!r} (expected 'cpu' or 'cuda')")
        if index is not None:
            try:
                if isinstance(index, bool):
                    raise TypeError
                index = operator.index(index)
            except TypeError:
                raise TypeError(f"device index must be an integer, got {index.__class__.__name__} {index!r}") from None
            if not 0 <= index < 2**31:
                raise ValueError(f"device index must be in [0, 2**31), got {index}")
        self.type = type
        self.index = 0 if index is None else index

    @property
    def _uma_device(self):
        return (1 if self.type == "cpu" else 2, self.index)

    def __str__(self):
        return "cpu" if self.type == "cpu" else f"cuda:{self.index}"

    def __repr__(self):
        return f"Device(type={self.type!r}, index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Device(other)
            except ValueError:
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))


_CPU = Device("cpu")


def _from_code(kind: int, index: int) -> Device:
    if kind == 1:
        return _CPU
    return Device("cuda", index)
