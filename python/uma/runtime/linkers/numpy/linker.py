"""The ``numpy`` linker: evaluates graphs with NumPy, written in Python.

It is the worked example for adding a backend from Python (PyTorch, JAX, Numba, ...): a
:class:`~uma.runtime.linker.Linker` subclass that

1. names a **residency** of its own (``"numpy"``): the values it computes are
   ``numpy.ndarray`` s, and shared variables it writes keep their value in that form;
2. converts values at the boundary with ``input_filter`` (a host ``uma.Array`` ->
   ``numpy.ndarray``) and ``output_filter`` (``numpy.ndarray`` -> ``uma.Array``). Both are
   zero-copy here: NumPy and uma share host memory (DESIGN.md: "a transfer, or zero-copy where
   memory is shared"). A GPU backend would copy in these two methods instead;
3. says which values are already native (``is_native``), so they skip the host filter;
4. has a **dispatch table** (:data:`~.dispatch.numpy_impl`, one NumPy function per op class;
   any other op runs its reference ``perform`` on zero-copy ``uma.Array`` views), and
   ``compile(fgraph)`` is the graph walker's thunk over it (:func:`~..walk.evaluator`),
   which never writes into its inputs and copies the outputs that
   ``fgraph.outputs_needing_copy()`` lists, so no result aliases an input, a constant or
   another result.

Registered as ``"numpy"`` when uma is imported::

    f = uma.function([x], [y], updates={w: w - 0.1 * g}, backend="numpy")
    f(x_value)       # -> [numpy.ndarray]
    w.get_value()    # -> numpy.ndarray, whatever backend wrote last

Every result has the dtype the graph inferred (NumPy 2 promotion, as the graph's own rules);
a mismatch is a bug and raises ``RuntimeError`` naming the op. Floating-point warnings are
silenced (uma's kernels do not warn either).
"""
from __future__ import annotations

import numpy as np

from ....graph.type import dtype_name
from ...linker import Linker
from ..walk import evaluator
from .dispatch import numpy_dtype, numpy_impl

__all__ = ["NumpyLinker"]


def _uma():
    import uma
    return uma


def _ndarray_result(var, converted=None):
    """The check of a value computed for ``var``: an ndarray of the graph's dtype (a value of
    another type, or of another dtype object of that name, is converted, and ``converted``, a
    list, gets an entry)."""
    name = var.type.dtype
    dt = numpy_dtype(name)

    def result(r, node):
        if type(r) is not np.ndarray:
            r = np.asarray(r)
            if converted is not None:
                converted.append(node)
        if r.dtype != dt:
            if dtype_name(r.dtype) != name:
                raise RuntimeError(f"{node.op}: NumPy returned dtype {r.dtype}, but the graph "
                                   f"inferred {name} (a bug in uma's numpy linker)")
            r = r.astype(dt)
            if converted is not None:
                converted.append(node)
        return r

    return result


def _fresh(value):
    return np.array(value, copy=True)


class NumpyLinker(Linker):
    """Evaluates graphs with NumPy; values are ``numpy.ndarray`` s in residency ``"numpy"``.

    Conversions to and from the host residency share memory (no copy): ``input_filter``
    gives a read-only NumPy view of a host ``uma.Array``, ``output_filter`` adopts a NumPy
    array as a ``uma.Array``. Function outputs are ``numpy.ndarray`` s (0-d for scalars).
    """

    name = "numpy"
    residency = "numpy"
    dispatch = numpy_impl

    def is_native(self, value, type):
        return (value.__class__ is np.ndarray and value.dtype == numpy_dtype(type.dtype)
                and type.is_compatible_shape(value.shape))

    def input_filter(self, value, type):
        if isinstance(value, np.ndarray):
            return value
        arr = np.asarray(value)
        if arr.flags.writeable:
            arr = arr.view()
            arr.flags.writeable = False
        return arr

    def output_filter(self, value, type):
        return _uma().asarray(value)

    def compile(self, fgraph):
        run = evaluator(fgraph, numpy_impl, constant=lambda c: c.value, copy=_fresh, output=_ndarray_result)

        def thunk(values):
            with np.errstate(all="ignore"):
                return run(values)

        return thunk
