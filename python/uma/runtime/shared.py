"""Shared variables: one logical value, several residencies (DESIGN.md).

A :class:`Container` holds the value of a shared variable in one or more residencies
(``"cpu"`` = host memory as a ``uma.Array``; ``"cuda:N"`` = a device's ``uma.Array``; other
residencies belong to linkers and hold their native values). The copies live in C++
(``uma._core.SharedCell``, include/uma/runtime/shared_cell.h), so that a compiled function's
call (:mod:`uma.runtime.function`, C++ ``Function::call``) reads and writes them for every
backend. Only current copies are kept: a write or ``set_value`` drops the others (their
memory is released), so "current" = "present".

- reading in a residency that has no current copy brings one up to date once: through the
  host (the written residency's ``output_filter``, then the reader's ``input_filter``), so a
  host <-> device switch costs one conversion;
- a write (a function's update) makes the written residency the only current one;
- ``set_value`` makes the host copy the only current one.

Stored values are never written in place (updates write new buffers; Note [Updates in place]
names the one case no holder can see), which is why a view from ``get_value(borrow=True)``
never changes after it was taken.

Each container has a re-entrant ``lock`` (the cell: ``acquire``/``release``/``with``, waiting
with the GIL released) and a ``serial`` number (creation order): compiled functions take the
locks of the containers they touch in ``serial`` order (see :mod:`uma.runtime.function`);
``get_value``/``set_value`` take the container's lock.

Shared variables pickle and deep-copy with their current value (the host copy is brought up to
date first), their name, static shape and ``default_update``; a copy has its own container.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Variable, is_python_scalar
from ..graph.type import TensorType, dtype_name, static_shape
from .filters import filter_host

__all__ = ["Container", "SharedVariable", "shared"]


def _uma():
    import uma
    return uma


class Container:
    """The value of one shared variable across residencies.

    ``type``: the declared TensorType (dtype and ndim fixed; static lengths if declared).
    ``current``: the residencies holding a current copy (a frozenset).
    ``cell``: the ``uma._core.SharedCell`` holding the copies; ``lock`` (the cell): a
    re-entrant lock held by whoever reads or writes the value; ``serial``: the global order in
    which locks are taken.
    """

    __slots__ = ("type", "name", "cell", "_linkers")

    def __init__(self, type: TensorType, host_value, name=None):
        self.type = type
        self.name = name
        self._linkers = {}  # id -> linker: those whose copies the cell may hold
        label = repr(name) if name is not None else "(unnamed)"
        self.cell = _uma()._core.SharedCell(host_value, type.dtype, tuple(type.shape), label, repr(type))

    @property
    def lock(self):
        return self.cell

    @property
    def serial(self) -> int:
        return self.cell.serial

    @property
    def current(self) -> frozenset:
        return frozenset(self.cell.current)

    def copy_in(self, residency: str):
        """The current copy in ``residency`` (a ``uma.Array`` for uma's residencies, the
        backend's value for others), or None."""
        return self.cell.copy_in(residency)

    def keep(self, linker):
        """Keep ``linker`` alive as long as this container: the cell's copies in its residency
        convert through its filters, which hold it weakly (Linker.core_residency)."""
        self._linkers.setdefault(id(linker), linker)

    def host(self):
        """The current host copy (a ``uma.Array``), converting once if it is stale."""
        return self.cell.read_host()

    def read(self, linker):
        """The value in ``linker``'s residency, brought up to date (and kept) if stale."""
        self.keep(linker)
        return self.cell.read(linker.core_residency())

    def set_host(self, host_value):
        """Make ``host_value`` (a ``uma.Array`` of the declared type) the only current copy."""
        self.cell.write_host(host_value)


class SharedVariable(Variable):
    """A symbolic variable with a value that persists across calls (a :class:`Container`).

    Its type's dtype and ndim are fixed at creation; the shape may change through
    :meth:`set_value` or updates (static lengths only if declared with ``shape=``).
    """

    def __init__(self, container: Container, name=None):
        super().__init__(container.type, name=name)
        self.container = container
        #: An expression every function reading this variable gets as its update unless it
        #: has an explicit one (``no_default_updates=True`` turns it off); e.g. the state of a
        #: :class:`uma.random.RandomStream`. None: no default update.
        self.default_update = None

    def get_value(self, borrow=False):
        """The current value as a NumPy array of the declared dtype and the current shape.

        ``borrow=False``: a fresh ``numpy.ndarray`` (a copy), whatever backend wrote last.
        ``borrow=True``: a read-only NumPy view of the current host copy (zero-copy where
        possible); it never changes afterwards, because updates and ``set_value`` write new
        buffers. Either form first brings the host copy up to date if another residency was
        written last (one conversion). Convention: PyTensor's ``get_value``.
        """
        with self.container.lock:
            host = self.container.host()
        if borrow:
            # exported through a read-only uma view, so that neither the view's WRITEABLE flag
            # nor its base can be turned into a writer of the stored value
            view = np.asarray(host).view()
            view.flags.writeable = False
            return np.asarray(_uma().asarray(view))
        return np.array(host, copy=True)

    def set_value(self, value, borrow=False):
        """Replace the value; the host copy becomes the only current one.

        ``value`` is filtered as DESIGN.md says: converted when the cast is safe (Python
        scalars weak, in range), else ``TypeError``; another ndim -> ``TypeError``; a declared
        static length that differs -> ``ValueError``. The old value is kept when it fails.
        ``borrow=False`` copies ``value``; ``borrow=True`` may share its memory.
        """
        label = self.name if self.name is not None else "shared variable"
        new = filter_host(value, self.type, what=f"set_value of {label!r}", copy=not borrow,
                          hint="")
        with self.container.lock:
            self.container.set_host(new)

    def __reduce__(self):
        """Pickle / deep copy: the current value (the host copy is brought up to date first,
        one conversion if another residency was written last), name, static shape and
        ``default_update``. The copy is a new shared variable with a container of its own."""
        with self.container.lock:
            value = np.array(self.container.host(), copy=True)
        return (_rebuild_shared, (value, self.name, self.type.shape),
                {"default_update": self.default_update})

    def __setstate__(self, state):
        self.default_update = state.get("default_update")

    def __repr__(self):
        label = self.name if self.name is not None else f"<shared {self.id}>"
        return f"SharedVariable({label}, {self.dtype}, shape={self.shape})"

    def __str__(self):
        return self.name if self.name is not None else f"<shared {self.id}>"


def _rebuild_shared(value, name, shape):
    return shared(value, name, borrow=True, shape=shape)


def shared(value, name=None, *, borrow=False, shape=None):
    """A :class:`SharedVariable` holding ``value``.

    ``value``: a NumPy or uma array, a DLPack/buffer producer, a scalar or a list. Its dtype
    and ndim become the variable's type for good (Python floats -> float64, ints -> int64,
    bools -> bool, as NumPy). ``borrow=False`` copies ``value`` (DESIGN.md: ``uma.shared(v)``
    copies); ``borrow=True`` may adopt its memory without a copy (writes to it then show).
    ``shape``: optional static shape (ints or None per axis), checked now and on every
    ``set_value``; a length-1 entry makes that axis broadcastable in graphs.
    ``TypeError`` for a symbolic value or an unsupported object; ``ValueError`` if ``shape``
    does not fit the value.
    """
    uma = _uma()
    if isinstance(value, Variable):
        raise TypeError("shared: value must be an array or scalar, not a symbolic variable")
    if isinstance(value, uma.Array):
        arr = value
    elif isinstance(value, np.ndarray):
        arr = value
    elif is_python_scalar(value) or isinstance(value, (list, tuple, np.generic)):
        arr = np.asarray(value)
        if arr.dtype == object:
            uma.asarray(value)  # raises the cause by name (an int beyond 64 bits, a non-number)
        borrow = True  # already a private copy
    else:
        try:
            arr = uma.asarray(value)
        except Exception as e:
            raise TypeError(f"shared: cannot make a shared variable from {type(value).__name__} ({e})") from None
    # A NumPy dtype without a uma equivalent raises asarray's TypeError, naming it.
    host = uma.asarray(arr) if borrow else uma.array(arr)
    ndim = len(host.shape)
    if shape is None:
        static = (None,) * ndim
    else:
        static = static_shape(shape, "shared: shape")
        if len(static) != ndim:
            raise ValueError(f"shared: shape {static} has {len(static)} axes but the value has {ndim}")
    typ = TensorType(dtype_name(host.dtype), static)
    typ.check_value_shape(tuple(host.shape), "shared")
    return SharedVariable(Container(typ, host, name=name), name=name)
