"""The symbolic IR: variables, constants, apply nodes and ops.

A :class:`Variable` has a :class:`~uma.graph.type.TensorType` and, when it was computed, an
``owner``: the :class:`Apply` node (op + inputs + outputs) that produces it. A
:class:`Constant` is a variable with a fixed (read-only) value and no owner.

Conventions (PyTensor's): ``==`` and ``!=`` between variables are identity and ``__hash__``
is identity, so variables can be dict keys and set members; elementwise comparison is
``eq``/``neq`` (``equal``/``not_equal``). ``< <= > >=`` build symbolic comparisons. A
variable has no truth value (``bool(x)`` raises ``TypeError``) and is not iterable.

A function that builds its result from several ops (the Array API functions of
:mod:`uma.graph.ops.compose`) runs under :func:`composing` (or is decorated with
:func:`composed`): every node built meanwhile records that function's name in
``Apply.composed``, and :func:`infer_node_shape`, the run-time shape check, names that function
instead of the inner op (``vecdot: ...``, not ``multiply: ...``), as do the errors of building
such a node (:meth:`Op.__call__`).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools

import numpy as np

from .type import TensorType, dtype_name, np_dtype

__all__ = ["Variable", "Constant", "Apply", "Op", "as_variable", "toposort", "ancestors",
           "is_python_scalar", "composing", "composed", "infer_node_shape"]

_ids = itertools.count()
_composing: contextvars.ContextVar = contextvars.ContextVar("uma_composing", default=None)


def is_python_scalar(x) -> bool:
    """True for Python bool/int/float/complex (weak scalars, NEP 50), False for NumPy scalars."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


class Variable:
    """A symbolic array: ``type`` (dtype + static shape), optional ``owner`` and ``name``.

    Properties ``dtype`` (str), ``ndim`` (int) and ``shape`` (static tuple; ``None`` marks an
    axis whose length is only known at run time). Arithmetic, comparison, ``@`` and ``[]``
    build new variables (see :mod:`uma.graph.ops`).
    """

    __array_ufunc__ = None  # NumPy's and uma's arrays defer (NEP 13): array + var -> var.__radd__(array)

    def __init__(self, type: TensorType, owner: "Apply | None" = None, index: int | None = None,
                 name: str | None = None):
        if not isinstance(type, TensorType):
            raise TypeError(f"Variable type must be a TensorType, got {type!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"a variable's name is a str or None, got {name!r}")
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.id = next(_ids)

    # ---- type information ---------------------------------------------------------------
    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def shape(self) -> tuple:
        return self.type.shape

    def clone(self) -> "Variable":
        """A new ownerless variable of the same type and name."""
        return Variable(self.type, name=self.name)

    def __setstate__(self, state):
        # pickle / deepcopy: a copy is a new variable of this process (a fresh id)
        self.__dict__.update(state)
        self.id = next(_ids)

    def __repr__(self):
        label = self.name if self.name is not None else (
            f"{self.owner.op}.out" if self.owner is not None else f"<var {self.id}>")
        return f"{type(self).__name__}({label}, {self.dtype}, shape={self.shape})"

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            return f"{self.owner.op}({', '.join(str(i) for i in self.owner.inputs)})"
        return f"<{self.dtype}{list(self.shape)}>"

    # ---- PyTensor conventions -----------------------------------------------------------
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError(
            "a symbolic Variable has no truth value; use uma.sym.eq/where for symbolic "
            "conditions (PyTensor convention)")

    def __iter__(self):
        raise TypeError("a symbolic Variable is not iterable")

    def __len__(self):
        raise TypeError("len() of a symbolic Variable is not defined; use .shape")

    # ---- operators ----------------------------------------------------------------------
    def __add__(self, o): return _ops.add(self, o)
    def __radd__(self, o): return _ops.add(o, self)
    def __sub__(self, o): return _ops.subtract(self, o)
    def __rsub__(self, o): return _ops.subtract(o, self)
    def __mul__(self, o): return _ops.multiply(self, o)
    def __rmul__(self, o): return _ops.multiply(o, self)
    def __truediv__(self, o): return _ops.divide(self, o)
    def __rtruediv__(self, o): return _ops.divide(o, self)
    def __floordiv__(self, o): return _ops.floor_divide(self, o)
    def __rfloordiv__(self, o): return _ops.floor_divide(o, self)
    def __mod__(self, o): return _ops.remainder(self, o)
    def __rmod__(self, o): return _ops.remainder(o, self)
    def __pow__(self, o): return _ops.power(self, o)
    def __rpow__(self, o): return _ops.power(o, self)
    def __matmul__(self, o): return _ops.matmul(self, o)
    def __rmatmul__(self, o): return _ops.matmul(o, self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __lt__(self, o): return _ops.less(self, o)
    def __le__(self, o): return _ops.less_equal(self, o)
    def __gt__(self, o): return _ops.greater(self, o)
    def __ge__(self, o): return _ops.greater_equal(self, o)

    # NumPy's bitwise operators; on bool operands the logical ops (the same values).
    def __and__(self, o): return _ops._bitwise_operator("and", self, o)
    def __rand__(self, o): return _ops._bitwise_operator("and", o, self)
    def __or__(self, o): return _ops._bitwise_operator("or", self, o)
    def __ror__(self, o): return _ops._bitwise_operator("or", o, self)
    def __xor__(self, o): return _ops._bitwise_operator("xor", self, o)
    def __rxor__(self, o): return _ops._bitwise_operator("xor", o, self)
    def __lshift__(self, o): return _ops.bitwise_left_shift(self, o)
    def __rlshift__(self, o): return _ops.bitwise_left_shift(o, self)
    def __rshift__(self, o): return _ops.bitwise_right_shift(self, o)
    def __rrshift__(self, o): return _ops.bitwise_right_shift(o, self)
    def __invert__(self): return _ops._bitwise_operator("invert", self)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    @property
    def T(self):
        return _ops.transpose(self)

    @property
    def mT(self):
        """The last two axes swapped (Array API standard, array.mT; ``matrix_transpose``);
        ``ValueError`` for fewer than 2 axes."""
        return _ops.matrix_transpose(self)

    @property
    def real(self):
        return _ops.real(self)

    @property
    def imag(self):
        return _ops.imag(self)

    def conj(self):
        return _ops.conj(self)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _ops.transpose(self, axes if axes else None)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _ops.reshape(self, tuple(shape))

    def astype(self, dtype):
        return _ops.astype(self, dtype)

    def sum(self, axis=None, keepdims=False, *, dtype=None): return _ops.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)
    def mean(self, axis=None, keepdims=False, *, dtype=None): return _ops.mean(self, axis=axis, keepdims=keepdims, dtype=dtype)
    def max(self, axis=None, keepdims=False): return _ops.max(self, axis=axis, keepdims=keepdims)
    def min(self, axis=None, keepdims=False): return _ops.min(self, axis=axis, keepdims=keepdims)
    def prod(self, axis=None, keepdims=False, *, dtype=None): return _ops.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)
    def all(self, axis=None, keepdims=False): return _ops.all(self, axis=axis, keepdims=keepdims)
    def any(self, axis=None, keepdims=False): return _ops.any(self, axis=axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return _ops.argmax(self, axis=axis, keepdims=keepdims)
    def argmin(self, axis=None, keepdims=False): return _ops.argmin(self, axis=axis, keepdims=keepdims)


class Constant(Variable):
    """A variable with a fixed value (a read-only NumPy array of the type's dtype and shape)."""

    def __init__(self, value, dtype=None, name=None):
        arr = np.array(value, dtype=None if dtype is None else np_dtype(dtype_name(dtype)), copy=True)
        if arr.dtype == object:
            raise TypeError(f"cannot make a constant from {value!r}")
        arr.flags.writeable = False
        super().__init__(TensorType(arr.dtype, arr.shape), name=name)
        self.value = arr

    def clone(self):
        return self  # constants are immutable and shared between graphs

    def __setstate__(self, state):
        super().__setstate__(state)
        if self.value.flags.writeable:
            self.value = self.value.copy()
            self.value.flags.writeable = False

    def __repr__(self):
        v = self.value
        text = repr(v.item()) if v.ndim == 0 else f"array{v.shape}"
        return f"Constant({text}, {self.dtype})"

    def __str__(self):
        return self.name or (repr(self.value.item()) if self.value.ndim == 0 else f"<const {self.value.shape}>")


class Apply:
    """One application of ``op`` to ``inputs``; produces ``outputs`` (variables owned by it).

    ``composed``: the name of the outermost composed function (:func:`composing`) that was
    building a graph when this node was made, or None; run-time shape errors name it."""

    __slots__ = ("op", "inputs", "outputs", "composed")

    def __init__(self, op: "Op", inputs, output_types):
        self.op = op
        self.composed = _composing.get()
        self.inputs = list(inputs)
        for i in self.inputs:
            if not isinstance(i, Variable):
                raise TypeError(f"{op}: Apply inputs must be Variables, got {i!r}")
        self.outputs = [Variable(t, owner=self, index=k) for k, t in enumerate(output_types)]

    def clone_with_new_inputs(self, inputs) -> "Apply":
        """A copy of this node applied to ``inputs`` (same op, fresh outputs of the same types)."""
        node = Apply.__new__(Apply)
        node.op = self.op
        node.composed = self.composed
        node.inputs = list(inputs)
        node.outputs = [Variable(o.type, owner=node, index=k, name=o.name)
                        for k, o in enumerate(self.outputs)]
        return node

    @property
    def out(self) -> Variable:
        assert len(self.outputs) == 1
        return self.outputs[0]

    def __repr__(self):
        return f"Apply({self.op}, {self.inputs})"


@contextlib.contextmanager
def composing(name: str):
    """Within the block, every :class:`Apply` node made records ``name`` as ``composed`` (the
    function that builds a result from several ops); inside another ``composing`` block the
    outer name stays (the nodes of a composed function called by another record the caller)."""
    token = _composing.set(name) if _composing.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _composing.reset(token)


def composed(fn):
    """``fn`` run under :func:`composing` with its own name (``fn.__name__``)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with composing(name):
            return fn(*args, **kwargs)
    return wrapper


def infer_node_shape(node: Apply, shapes) -> list:
    """``node.op.infer_shape(node, shapes)``, the run-time shape check of one node. For a node
    of a composed function (``node.composed``), a ``ValueError``, ``IndexError`` or
    ``TypeError`` is raised again, of the same type, naming that function: the message's
    leading ``"<op name>: "`` is replaced by ``"<function>: "`` (prefixed when it has none).
    ``NotImplementedError`` (no shape rule) passes through."""
    try:
        return node.op.infer_shape(node, shapes)
    except (ValueError, IndexError, TypeError) as e:
        raise _as_composed(e, node.op, node.composed)


def _as_composed(e, op, name):
    """What to raise for ``e``, an error of ``op``: ``e`` itself when ``name`` is None (or its
    type does not take one message), else an exception of its type whose message names the
    composed function ``name`` in place of ``op``'s name, its context suppressed (``raise ...
    from None``). The caller raises the result from its ``except`` block, holding it in no
    variable, so that no frame keeps the exception and its traceback in a cycle."""
    if name is None:
        return e
    msg, prefix = str(e), f"{op.name}: "
    try:
        renamed = type(e)(f"{name}: {msg[len(prefix):] if msg.startswith(prefix) else msg}")
    except Exception:  # an exception type that does not take one message
        return e
    renamed.__cause__, renamed.__suppress_context__ = None, True
    return renamed


class Op:
    """Base class of graph operations.

    Subclasses set ``name`` (the eager function name), ``names`` when instances take one of
    several names (every name they may have: ``Elemwise``, ``Reduce``, ...) and ``props``
    (attribute names that identify the op), and implement

    - ``output_types(inputs) -> [TensorType]``: dtype and static-shape inference at build
      time (``TypeError`` / ``ValueError`` / ``IndexError`` for bad inputs);
    - ``perform(node, values) -> [value]``: the reference semantics, with uma eager ops;
    - ``grad(node, output_grads) -> [Variable | None]``: symbolic gradients (``None`` =
      no gradient flows to that input);
    - ``infer_shape(node, shapes) -> [shape]``: the run-time shapes from run-time input
      shapes (``ValueError`` naming the op on mismatch). Used to check a call before running,
      through :func:`infer_node_shape`.

    ``view_of`` maps output index -> input index when the output may alias that input's memory.
    What a backend does with an op is not here: each linker has a dispatch table from op
    class to implementation (:mod:`uma.runtime.linkers`).
    """

    name = "op"
    props: tuple = ()
    view_of: dict = {}

    def _key(self):
        return (type(self), self.name) + tuple(_freeze(getattr(self, p)) for p in self.props)

    def __eq__(self, other):
        return isinstance(other, Op) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        shown = [p for p in self.props if p != "name"]
        if not shown:
            return self.name
        return f"{self.name}{{{', '.join(f'{p}={getattr(self, p)!r}' for p in shown)}}}"

    __repr__ = __str__

    def make_node(self, *inputs) -> Apply:
        return Apply(self, inputs, self.output_types(list(inputs)))

    def __call__(self, *inputs):
        try:
            node = self.make_node(*inputs)
        except (ValueError, IndexError, TypeError) as e:  # named after the composed function building it
            raise _as_composed(e, self, _composing.get())
        return node.outputs[0] if len(node.outputs) == 1 else node.outputs

    def output_types(self, inputs):
        raise NotImplementedError

    def perform(self, node, values):
        raise NotImplementedError(f"{self.name}: no reference implementation")

    def grad(self, node, output_grads):
        raise NotImplementedError(f"{self.name}: gradient not implemented")

    def infer_shape(self, node, shapes):
        raise NotImplementedError


def _freeze(v):
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, slice):
        return ("slice", v.start, v.stop, v.step)
    if isinstance(v, tuple):
        return tuple(_freeze(x) for x in v)
    if v is Ellipsis:
        return "..."
    if isinstance(v, (float, np.floating)):  # by bits: -0.0 is not 0.0, NaN equals NaN
        return ("float", float(v).hex())
    if isinstance(v, (complex, np.complexfloating)):
        return ("complex", complex(v).real.hex(), complex(v).imag.hex())
    return v


def as_variable(x, name_for_errors="value") -> Variable:
    """``x`` as a Variable: variables pass through; arrays, uma arrays, lists and scalars
    become :class:`Constant` (strong dtype; Python scalars are handled weakly by the ops)."""
    if isinstance(x, Variable):
        return x
    if is_python_scalar(x):
        return Constant(x)
    try:
        arr = np.asarray(x)
    except Exception as e:  # pragma: no cover - unusual objects
        raise TypeError(f"cannot use {type(x).__name__} as a {name_for_errors}: {e}") from None
    if arr.dtype == object or arr.dtype.kind in "US":  # objects, strings, bytes (bfloat16 is kind V)
        raise TypeError(f"cannot use {x!r} as a {name_for_errors} in a symbolic graph (not a number "
                        f"or an array of numbers)")
    return Constant(arr)


def toposort(outputs, stop=()):
    """Apply nodes needed to compute ``outputs``, in an order where inputs come first.

    Variables in ``stop`` are treated as roots (their owners are not visited).
    """
    stop = set(map(id, stop))
    order, seen = [], set()
    for out in outputs:
        if out.owner is None or id(out) in stop or id(out.owner) in seen:
            continue
        stack = [(out.owner, iter(out.owner.inputs))]
        seen.add(id(out.owner))
        while stack:
            node, it = stack[-1]
            for v in it:
                o = v.owner
                if o is not None and id(v) not in stop and id(o) not in seen:
                    seen.add(id(o))
                    stack.append((o, iter(o.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def ancestors(outputs, stop=()):
    """All variables that ``outputs`` depend on (including them), roots included."""
    stop = set(map(id, stop))
    result, seen = [], set()
    todo = list(outputs)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        result.append(v)
        if v.owner is not None and id(v) not in stop:
            todo.extend(v.owner.inputs)
    return result


from . import ops as _ops  # noqa: E402  (operators above build op nodes)
