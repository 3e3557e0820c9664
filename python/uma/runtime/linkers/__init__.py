"""The linkers, one folder per backend, and the graph walker they share.

- :mod:`.walk`: the one graph walker: a FunctionGraph -> one step per node, each with what
  the linker's dispatch table gives for the node's op, and the thunk that runs the steps;
- :mod:`.program`: the compilation of a graph into ``uma._core.Program`` s that ``cpu`` and
  ``cuda`` share (the plan over the walker's answers, Program segments and the Python steps
  between them, output copies);
- ``reference/``, ``cpu/``, ``numpy/``, ``cuda/``: each a :class:`~uma.runtime.Linker`
  subclass (``linker.py``: residency, filters, ``compile``) and its dispatch table
  (``dispatch.py``: op class -> implementation, a :func:`functools.singledispatch`
  function; what is not in it is what the linker does not support).

The dispatch tables hold every piece of backend knowledge about ops; the ops themselves
(:mod:`uma.graph.ops`) define only their types, reference semantics (``perform``), gradients
and shapes. ``uma.Linker.known_ops()`` lists the ops a table may meet.
"""
