"""A test-only linker that keeps values in a residency of its own and counts conversions.

``CountingLinker(residency)`` computes with the reference evaluator but stores every value it
produces as a :class:`CountingValue` tagged with its residency, so the tests can prove how
many times a shared variable's value crossed into or out of that residency:
``to_residency`` counts ``input_filter`` calls that converted a host value, ``to_host`` counts
``output_filter`` calls that converted one of its values back. Several instances with
different residency names behave like several devices.
"""
from __future__ import annotations

import numpy as np

from .linker import Linker
from .linkers.reference import make_evaluator

__all__ = ["CountingLinker", "CountingValue"]


def _uma():
    import uma
    return uma


class CountingValue:
    """A value living in a counting residency: a private NumPy array plus the residency name."""

    __slots__ = ("array", "residency")

    def __init__(self, array: np.ndarray, residency: str):
        self.array = array
        self.residency = residency

    @property
    def shape(self):
        return self.array.shape

    @property
    def dtype(self):
        return self.array.dtype

    @property
    def ndim(self):
        return self.array.ndim

    def __repr__(self):
        return f"CountingValue({self.array!r}, residency={self.residency!r})"


class CountingLinker(Linker):
    """Reference semantics in residency ``residency``, counting every conversion in and out."""

    def __init__(self, residency="counting", name=None):
        self.residency = residency
        self.name = name or residency
        self.to_residency = 0
        self.to_host = 0

    @property
    def conversions(self):
        return self.to_residency + self.to_host

    def reset(self):
        self.to_residency = self.to_host = 0

    def is_native(self, value, type):
        return isinstance(value, CountingValue) and value.residency == self.residency

    def input_filter(self, value, type):
        if self.is_native(value, type):
            return value
        self.to_residency += 1
        arr = np.array(value, copy=True)  # a real transfer: private memory
        if arr.dtype != np.dtype(type.dtype):
            raise TypeError(f"counting input_filter: got {arr.dtype}, expected {type.dtype}")
        return CountingValue(arr, self.residency)

    def output_filter(self, value, type):
        if not isinstance(value, CountingValue):
            return value
        if value.residency != self.residency:
            raise ValueError(f"{self.name}: value from residency {value.residency!r} is not mine")
        self.to_host += 1
        return _uma().array(value.array)  # a real transfer: fresh host memory

    def compile(self, fgraph):
        uma = _uma()
        ref = make_evaluator(fgraph)
        residency = self.residency

        def thunk(values):
            for v in values:
                if not (isinstance(v, CountingValue) and v.residency == residency):
                    raise TypeError(f"counting linker {residency!r}: got a value not in its residency: {v!r}")
            outs = ref([uma.asarray(v.array) for v in values])
            return [CountingValue(np.array(o, copy=True), residency) for o in outs]

        return thunk
