"""Linkers: what compiles a FunctionGraph for one backend, and the backend registry."""
from __future__ import annotations

import atexit
import warnings

from .filters import HOST

__all__ = ["Linker", "register_backend", "backends", "get_linker", "distinct", "ENTRY_POINT_GROUP"]


class Linker:
    """Compiles a :class:`~uma.graph.FunctionGraph` for one backend (DESIGN.md "Linkers").

    Subclass it to add a backend from Python, then ``uma.register_backend(name, linker)``;
    ``uma.function(..., backend=name)`` compiles with it, and its functions share variables
    with every other backend. The built-in linkers live in :mod:`uma.runtime.linkers`, one
    folder each (``reference``, ``cpu``, ``numpy``, ``cuda``) with its dispatch table;
    :class:`~uma.runtime.linkers.numpy.NumpyLinker` (``"numpy"``) is the complete worked
    example of a backend written in Python.

    Attributes
      ``name`` (str): the backend name, e.g. ``"numpy"``.
      ``residency`` (str): where this backend's values live. ``"cpu"`` means host
      ``uma.Array`` s (the host residency); any other string is a residency of its own (a
      device, or another library's array type), which no other registered backend may use
      (``register_backend`` raises ``ValueError``). A shared variable keeps one copy per
      residency and knows which copies are current; it converts only through the filters
      below, once per switch of residency.
      ``dispatch``: the linker's dispatch table, a :func:`functools.singledispatch` function
      keyed on the op class (a class attribute is not bound as a method):
      ``dispatch(op, node)`` returns what the linker makes of that node, or None where it has
      nothing for it. For a linker that evaluates node by node (the default ``compile``)
      that is ``impl(inputs) -> [outputs]``, a function of the node's input values (native
      values, in the order of ``node.inputs``) returning one value per ``node.outputs``; the
      graph walker (:mod:`uma.runtime.linkers.walk`) asks the table once per node at compile
      time. ``op`` has the op's name and attributes (its ``props``); ``op.perform(node,
      values)`` is its reference semantics on ``uma.Array`` s.
      ``device`` (str or None): where this backend's values live when its residency is its
      own: None (the default) for host memory, or a device such as ``"cuda:0"`` for a
      framework's GPU arrays (``jax-cuda``, ``torch-cuda``). Then ``input_filter`` takes, and
      ``output_filter`` gives, ``uma.Array`` s on that device, and a shared variable switching
      between two residencies on the same device (this one and uma's ``cuda:0``, or another
      framework's there) converts through an array on the device, never through host memory.
      ``dtypes`` (frozenset of dtype names, or None): the dtypes this backend's values can
      have; None (the default) means every uma dtype. ``uma.function`` raises ``TypeError``
      at compile time, naming the dtype and the variable, for a graph with any variable
      (argument, shared variable, intermediate or output) of another dtype, so a backend never
      narrows a value it cannot hold (MLX has no complex128).
      ``mode_passes`` (tuple of names, default empty): the linker passes of
      :data:`uma.graph.rewrite.LINKER_PASSES` this linker runs where a function's mode enables
      them (``uma.dprint`` lists those).
      ``consumes_stored_values`` (bool, default False): True when this backend's functions may
      consume the stored values they update (JAX donates them to XLA, which frees or reuses
      their buffers). A call of such a backend then keeps the locks of the variables it only
      reads until its thunk returns, so a concurrent update cannot consume a value the thunk
      has read but not yet handed to the framework (other backends release them once read:
      their stored values are immutable).

    What a linker may meet
      :meth:`known_ops` lists every op a compiled graph can contain, generated from the op
      classes: the ops of :mod:`uma.graph.ops` and :mod:`uma.random`, the gradient ops
      ``uma.grad`` makes (``softmax_cross_entropy_grad``, ``getitem_grad``,
      ``diagonal_embed``, ``segment``, ``reshape_like``, ``broadcast_like``, the
      ``set_subtensor``/``inc_subtensor`` updates of ``take`` and masks, ...) included; the
      rewrites only ever produce these. :meth:`unsupported` says which ops of a graph this
      linker cannot run; ``uma.function`` asks it before compiling and raises
      ``NotImplementedError`` naming those ops and the backend, so an op the backend lacks
      fails at compile time, not at the first call.

    Methods
      ``compile(fgraph) -> thunk``: ``thunk(values) -> outputs``, both lists in the order of
      ``fgraph.inputs`` / ``fgraph.outputs``, values in this backend's native form (what
      ``input_filter`` returns). The default walks the graph with ``dispatch``
      (:func:`uma.runtime.linkers.walk.evaluator`): constants go through ``input_filter``
      once, at compile time, and the outputs that must be fresh are copied with their
      ``copy()`` method. Written by hand, ``fgraph.toposort()`` gives the nodes in execution
      order. The thunk must not write into its inputs, and the outputs listed by
      ``fgraph.outputs_needing_copy()`` must be fresh copies (no output may alias an input, a
      constant or another output). ``fgraph.mode`` (a :class:`uma.Mode`) says which linker
      passes are enabled. Raising from the thunk leaves every shared variable unchanged.
      Every call runs in C++ (``Function::call``: the shared variables locked and read in
      this linker's residency, the thunk run, the updates checked and written), which calls
      the thunk with the GIL held. A thunk with a ``program`` attribute holding a
      ``uma._core.Program`` that computes every output from the inputs, for a linker whose
      values are ``uma.Array`` s (the host residency, or a device's: :meth:`core_residency`),
      is not called at all: C++ runs the Program (``uma.Function.fast_path``; the arguments
      filtered by the host rules and, off the host, this linker's ``input_filter``;
      ``is_native`` is not consulted).
      Update values (the outputs ``fgraph.update_mapping`` maps to shared variables) are
      checked before anything is stored: each must have its shared variable's dtype, ndim and
      static lengths, read from its ``dtype`` and ``shape`` attributes without converting it
      (NumPy, CuPy, JAX and PyTorch dtypes map to uma's names, bfloat16 included). Anything
      else (float32 for a float64 variable, a 1-d value for a matrix, an object without
      ``dtype`` and ``shape``) is a ``TypeError`` naming the variable, the backend and both
      types, and the call changes no shared variable, not even those updated correctly.
      Values stored in the host residency (``residency == "cpu"``) must be ``uma.Array`` s on
      the CPU or what ``uma.asarray`` turns into one.
      ``unsupported(fgraph) -> [Op]``: the ops of ``fgraph`` this linker cannot run, each
      once, in execution order. The default: those ``dispatch`` gives None for (none without
      a table). The built-in linkers run an op their table lacks with its reference
      ``perform``, so they list only ops without one.
      ``input_filter(value, type)``: a ``uma.Array`` of ``type.dtype`` on ``device`` (host
      memory when ``device`` is None) -> the native value (a zero-copy view where memory is
      shared). Called for shared variables whose copy here is stale; for arguments, with
      what the caller passed turned into a host ``uma.Array`` (or given as is where it is a
      ``uma.Array`` already).
      ``output_filter(value, type)``: a native value -> an array of ``type.dtype`` on
      ``device`` (``uma.Array``; on the host also anything ``uma.asarray`` accepts). Called
      when another residency or ``get_value`` needs a shared variable this backend wrote last.
      ``is_native(value, type)``: True when ``value`` already lives in this residency and can
      be passed to the thunk as is (no host filtering, no conversion). A value it accepts is
      still checked against ``type`` from its ``dtype`` and ``shape``, with the errors any
      argument gets (``TypeError`` for another ndim or a dtype that cannot be cast safely,
      ``ValueError`` for a static length that differs); one of another dtype that casts
      safely goes through the host filter and ``input_filter`` like a non-native value.

    A backend written with a dispatch table: values are NumPy arrays of its own residency,
    elementwise ops and reductions are NumPy's functions of the same name, and every other
    op is refused when a function is compiled::

        import functools
        import numpy as np
        import uma
        from uma.graph import ops

        @functools.singledispatch
        def mine(op, node):                     # the dispatch table: None = not supported
            return None

        @mine.register(ops.Elemwise)            # add, multiply, exp, ... (the op table's rows)
        def _(op, node):
            fn = getattr(np, op.numpy) if op.numpy else None   # the NumPy function of its row
            return None if fn is None else (lambda inputs: [fn(*inputs)])

        @mine.register(ops.Reduce)              # sum, max, argmin, ...
        def _(op, node):
            fn = getattr(np, op.name)
            return lambda inputs: [np.asarray(fn(inputs[0], axis=op.axis, keepdims=op.keepdims))]

        class MyLinker(uma.Linker):
            name, residency, dispatch = "mine", "mine", mine

            def input_filter(self, value, type):       # host uma.Array -> native
                return np.array(value)                  # (a copy: like a device transfer)

            def output_filter(self, value, type):      # native -> host
                return uma.asarray(value)

            def is_native(self, value, type):
                return isinstance(value, np.ndarray) and value.dtype == type.dtype

        uma.register_backend("mine", MyLinker())
        w = uma.shared(np.zeros(3))
        x = uma.sym.vector("x")
        step = uma.function([x], uma.sym.sum(w * x), updates={w: w + 1}, backend="mine")
        step(np.ones(3))            # -> numpy.ndarray(0.); w's current copy is the "mine" one
        w.get_value()               # -> numpy.ndarray([1., 1., 1.]), via output_filter
        try:
            uma.function([x], uma.sym.softmax(x), backend="mine")
        except NotImplementedError as e:
            refused = str(e)        # "function: backend 'mine' has no implementation of op(s)
                                    #  softmax (Softmax)"
    """

    name: str = "linker"
    residency: str = HOST
    device: str | None = None
    dispatch = None
    dtypes: frozenset | None = None
    mode_passes: tuple = ()
    consumes_stored_values: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        table = cls.__dict__.get("dispatch")
        if callable(table) and hasattr(table, "registry"):  # a singledispatch function, not a method
            cls.dispatch = staticmethod(table)

    def compile(self, fgraph):
        table = self.dispatch
        if table is None:
            raise NotImplementedError(f"{type(self).__name__} has no dispatch table and does not override "
                                      f"compile: give it a `dispatch` (a functools.singledispatch table) or "
                                      f"a compile(fgraph) method")
        from .linkers.walk import evaluator
        asarray, input_filter = _uma().asarray, self.input_filter
        return evaluator(fgraph, table, constant=lambda c: input_filter(asarray(c.value), c.type),
                         copy=_copy)

    def unheld_dtypes(self, fgraph) -> dict:
        """``{dtype name: first variable of that dtype}`` for the variables of ``fgraph``
        (inputs, then nodes' outputs in execution order) whose dtype is not in
        :attr:`dtypes`; empty when ``dtypes`` is None."""
        if self.dtypes is None:
            return {}
        found = {}
        variables = list(fgraph.inputs) + [v for n in fgraph.toposort() for v in (*n.inputs, *n.outputs)]
        for v in variables:
            dt = v.type.dtype
            if dt not in self.dtypes and dt not in found:
                found[dt] = v
        return found

    def unsupported(self, fgraph) -> list:
        table = self.dispatch
        if table is None:
            return []
        return distinct(n.op for n in fgraph.toposort() if table(n.op, n) is None)

    @staticmethod
    def known_ops() -> dict:
        """``{name: Op class}`` for every op a compiled graph can contain (after ``uma.grad``
        and the rewrite passes), sorted by name: each op class of uma under each name its
        instances may have (``names``, else ``name``)."""
        from .. import random  # noqa: F401  (defines the random ops)
        from ..graph import ops  # noqa: F401
        from ..graph.basic import Op
        found, todo = {}, list(Op.__subclasses__())
        while todo:
            cls = todo.pop()
            todo.extend(cls.__subclasses__())
            if cls.__module__.split(".")[0] == "uma":
                for name in getattr(cls, "names", None) or (cls.name,):
                    found[name] = cls
        return dict(sorted(found.items()))

    @staticmethod
    def ops_reference() -> str:
        """:meth:`known_ops` as a Markdown table for linker authors (``docs/linker_ops.md`` is this
        text): per op class its module, the names its nodes have, its attributes (``props``,
        read as ``op.<prop>``), whether it defines ``perform`` and what it computes."""
        from ..graph.basic import Op
        classes = {}
        for name, cls in Linker.known_ops().items():
            classes.setdefault(cls, []).append(name)
        rows = ["| op class | names | attributes | perform | what it computes |", "|---|---|---|---|---|"]
        for cls, names in sorted(classes.items(), key=lambda kv: kv[0].__name__):
            doc = " ".join((cls.__doc__ or "").split("\n\n")[0].split()).replace("|", "\\|")
            props = ", ".join(getattr(cls, "props", ())) or "-"
            module = cls.__module__.replace("uma.", "", 1)
            rows.append(f"| `{module}.{cls.__name__}` | {' '.join(names)} | {props} | "
                        f"{'yes' if cls.perform is not Op.perform else 'no'} | {doc} |")
        return ("# The ops a linker may meet\n\nGenerated by `python -m uma.runtime.linkers` "
                "(`uma.Linker.ops_reference()`, from `uma.Linker.known_ops()`); "
                "`tests/python/test_backends.py` checks that this file is current. A dispatch table is "
                "keyed on the op class; `op.name` tells the names of a class apart.\n\n"
                + "\n".join(rows) + "\n")

    def input_filter(self, value, type):
        return value

    def output_filter(self, value, type):
        return value

    def argument_filter(self, value, type):
        """A call's argument (a host ``uma.Array`` of ``type``) in this backend's form; the
        default is ``input_filter``. A backend whose calls return before their computations
        end copies here what may be the caller's memory, which the caller may change once the
        call returns (``jax``)."""
        return self.input_filter(value, type)

    def is_native(self, value, type):
        return False

    def core_residency(self):
        """The ``uma._core.Residency`` that shared variables keep this linker's copies under:
        uma's host residency for ``residency == "cpu"``, otherwise one named ``residency`` that
        converts through this linker's ``input_filter`` and ``output_filter`` (the
        ``output_filter``'s result is made a host ``uma.Array`` of the variable's dtype, and its
        shape is checked against the variable's static shape). Copies are kept per residency
        name, so two objects of one name are one residency. A linker whose values are
        ``uma.Array`` s on a device returns that device's residency (as ``cuda`` does). Made
        anew on each call: a compiled function keeps the one it was made with, and the
        shared variables it touches keep the linker."""
        core = _uma()._core
        if self.residency == HOST:
            return core._array_residency("cpu")
        from .filters import value_type
        return core._python_residency(self.residency, *_filters(self), value_type, getattr(self, "device", None))

    def __repr__(self):
        return f"<{type(self).__name__} backend={self.name!r} residency={self.residency!r}>"


def framework_device(framework: str, device):
    """``(device, name, residency)`` of backend ``framework`` (``"jax"``, ``"torch"``) on
    ``device``: None or ``"cpu"`` give ``(None, framework, framework)``; ``"cuda:N"`` (or
    ``"cuda"``) gives ``("cuda:N", framework + "-cuda", framework + "-cuda:N")`` (the name
    ``framework-cuda:N`` for N > 0). ``ValueError`` for a string that names no device."""
    if device is None or str(_uma().Device(device)) == "cpu":
        return None, framework, framework
    d = str(_uma().Device(device))
    return d, (f"{framework}-cuda" if d == "cuda:0" else f"{framework}-{d}"), f"{framework}-{d}"


def distinct(ops) -> list:
    """``ops`` without repeats (equal ops once), in their order."""
    return list(dict.fromkeys(ops))


def _copy(value):
    return value.copy()


def _filters(linker):
    """``(from_host, to_host)`` of a Python residency (uma._core._python_residency): ``linker``'s
    filters on (value, dtype, static shape). They hold the linker weakly: a shared variable's
    copies (C++, out of the garbage collector's sight) must not keep a cycle through a linker
    alive; the shared variable's Container holds the linkers that compiled functions for it
    (:meth:`~uma.runtime.shared.Container.keep`)."""
    import weakref

    from ..graph.type import TensorType, dtype_name
    ref = weakref.ref(linker)
    name = linker.name

    def live():
        lk = ref()
        if lk is None:
            raise RuntimeError(f"backend {name!r}: its linker no longer exists")
        return lk

    def from_host(host, dtype, shape):
        return live().input_filter(host, TensorType(dtype, shape))

    def to_host(value, dtype, shape):
        uma = _uma()
        h = live().output_filter(value, TensorType(dtype, shape))
        if not isinstance(h, uma.Array):
            h = uma.asarray(h)
        if dtype_name(h.dtype) != dtype:
            h = h.astype(dtype)
        TensorType(dtype, shape).check_value_shape(tuple(h.shape), f"output_filter of backend {name!r}")
        return h

    return from_host, to_host


def _uma():
    import uma
    return uma


_BACKENDS: dict[str, Linker] = {}


@atexit.register
def _drop_backends():
    """At interpreter exit (before modules are torn down), let go of the registered linkers: a
    linker class defined in a script reaches that script's globals, which hold its compiled
    functions and shared variables, and the registry would keep those C++ objects alive until
    after nanobind's check for leaked instances (atexit runs handlers in reverse order, so a
    handler registered after uma was imported still sees the backends)."""
    _BACKENDS.clear()


def register_backend(name: str, linker: Linker, *, replace: bool = False):
    """Register ``linker`` (a :class:`Linker` instance) as backend ``name``.

    ``TypeError`` if ``linker`` is not a Linker or ``name`` not a string; ``ValueError`` if
    the name is taken (pass ``replace=True`` to replace it), or if another registered backend
    has the same ``residency`` (a shared variable keeps one copy per residency, so two
    backends there would read each other's native values). The host residency ``"cpu"`` is
    the exception: every host linker (``reference``, ``cpu``, ...) keeps ``uma.Array`` s there.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_backend: name must be a non-empty string, got {name!r}")
    if not isinstance(linker, Linker):
        raise TypeError(f"register_backend: linker must be a uma.Linker instance, got {linker!r}")
    _check_residency_name(linker, "register_backend")
    if name in _BACKENDS and not replace and _BACKENDS[name] is not linker:
        raise ValueError(f"register_backend: backend {name!r} is already registered (replace=True replaces it)")
    residency = linker.residency
    if residency != HOST:
        for other_name, other in _BACKENDS.items():
            if other_name != name and other is not linker and other.residency == residency:
                raise ValueError(f"register_backend: backend {name!r} has residency {residency!r}, which "
                                 f"backend {other_name!r} already uses; give it a residency of its own")
    _BACKENDS[name] = linker


def _check_residency_name(linker, what):
    r = linker.residency
    if not isinstance(r, str) or not r:
        raise TypeError(f"{what}: backend {linker.name!r} has residency {r!r}; a residency is a non-empty string")


def check_residency(linker):
    """The rule of :func:`register_backend` for a linker passed to ``uma.function`` as an
    instance: ``TypeError`` for a residency that is not a non-empty string; ``ValueError`` when
    a registered backend keeps its values in the same residency (not the host's) and this
    linker's class does not derive from that backend's linker class (a subclass keeps the same
    native values)."""
    _check_residency_name(linker, "function")
    r = linker.residency
    if r == HOST:
        return
    for name, other in _BACKENDS.items():
        if other is not linker and other.residency == r and not isinstance(linker, type(other)):
            raise ValueError(f"function: backend {linker.name!r} has residency {r!r}, which the registered "
                             f"backend {name!r} uses for its own values; give it a residency of its own")


#: The entry-point group (``importlib.metadata``) through which other packages add backends.
ENTRY_POINT_GROUP = "uma.backends"
_entry_points_loaded = False


def _load_entry_points():
    """Register, once per process, the backends that installed packages declare in the entry
    point group ``uma.backends`` (see :func:`backends`). A name already registered is left
    alone; one that fails to load gives a ``RuntimeWarning`` naming it and is skipped."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _BACKENDS:
            continue
        try:
            obj = ep.load()
            linker = obj if isinstance(obj, Linker) else obj()
            if linker is None:  # its framework is not installed
                continue
            if not isinstance(linker, Linker):
                raise TypeError(f"it gave {type(linker).__name__}, not a uma.Linker")
            register_backend(ep.name, linker)
        except (Exception, SystemExit) as e:  # a broken plug-in must not break uma (nor end the process)
            warnings.warn(f"uma: backend {ep.name!r} of entry point {ep.value!r} (group {ENTRY_POINT_GROUP!r}) "
                          f"was not registered: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=3)


def backends() -> list:
    """Names of the registered backends, sorted: ``cpu``, ``numpy``, ``reference``, ``jax``,
    ``torch``, ``mlx`` and ``numba`` where those frameworks are installed, ``cuda`` where a GPU is
    usable, those registered with :func:`register_backend`, and those that installed packages
    declare as entry points of the group ``uma.backends`` (``name = "module:attr"``, where
    ``attr`` is a :class:`Linker` instance, or a class or function that returns one, or None
    when the backend cannot run here; loaded at the first call of :func:`backends` or
    :func:`get_linker` that needs them, so a pickled function finds its backend in a fresh
    process that never imported the backend's module)."""
    _load_entry_points()
    return sorted(_BACKENDS)


def get_linker(backend) -> Linker:
    """The linker for ``backend`` (a registered name, an entry point of the group
    ``uma.backends`` (see :func:`backends`), or a Linker instance).

    ``RuntimeError`` naming why for ``"cuda"`` where no GPU is usable (a build without CUDA, no
    driver, no GPU: ``uma.cuda.unavailable_reason()``), ``ValueError`` for another unknown
    name, ``TypeError`` for something that is neither."""
    if isinstance(backend, Linker):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a name or a Linker, got {backend!r}")
    if backend not in _BACKENDS:
        _load_entry_points()
    try:
        return _BACKENDS[backend]
    except KeyError:
        if backend == "cuda" or backend.startswith("cuda:"):
            from .. import cuda
            raise RuntimeError(f"backend {backend!r} is not available: {cuda.unavailable_reason()} "
                               f"(available: {', '.join(backends())})") from None
        raise ValueError(f"unknown backend {backend!r} (available: {', '.join(backends())})") from None
