"""The ``reference`` linker's dispatch table: every op by its reference ``perform`` (the op's
definition, on ``uma.Array`` s). It supports exactly the ops that define ``perform``."""
from __future__ import annotations

import functools

from ..walk import perform_impl

__all__ = ["reference_impl"]


@functools.singledispatch
def reference_impl(op, node):
    """``impl(inputs) -> [outputs]`` for ``node``: ``op.perform``; None when it has none."""
    return perform_impl(op, node)
