"""Linkers: what compiles a FunctionGraph for one backend, and the backend registry."""
from __future__ import annotations

from .filters import HOST

__all__ = ["Linker", "register_backend", "backends", "get_linker"]


class Linker:
    """Compiles a :class:`~uma.graph.FunctionGraph` for one backend (DESIGN.md "Linkers").

    Subclass it to add a backend from Python, then ``uma.register_backend(name, linker)``;
    ``uma.function(..., backend=name)`` compiles with it, and its functions share variables
    with every other backend. :class:`uma.runtime.numpy_linker.NumpyLinker` (``"numpy"``) is
    the complete worked example.

    Attributes
      ``name`` (str): the backend name, e.g. ``"numpy"``.
      ``residency`` (str): where this backend's values live. ``"cpu"`` means host
      ``uma.Array`` s (the host residency); any other string is a residency of its own (a
      device, or another library's array type), which no other registered backend may use
      (``register_backend`` raises ``ValueError``). A shared variable keeps one copy per
      residency and knows which copies are current; it converts only through the filters
      below, once per switch of residency.

    Methods
      ``compile(fgraph) -> thunk``: ``thunk(values) -> outputs``, both lists in the order of
      ``fgraph.inputs`` / ``fgraph.outputs``, values in this backend's native form (what
      ``input_filter`` returns). ``fgraph.toposort()`` gives the nodes in execution order;
      ``node.op`` has the op's name and attributes, ``node.op.perform(node, values)`` its
      reference semantics on ``uma.Array`` s. The thunk must not write into its inputs, and
      the outputs listed by ``fgraph.outputs_needing_copy()`` must be fresh copies (no output
      may alias an input, a constant or another output). ``fgraph.mode`` (a :class:`uma.Mode`)
      says which linker passes are enabled. Raising from the thunk leaves every shared
      variable unchanged.
      Update values (the outputs ``fgraph.update_mapping`` maps to shared variables) are
      checked before anything is stored: each must have its shared variable's dtype, ndim and
      static lengths, read from its ``dtype`` and ``shape`` attributes without converting it
      (NumPy, CuPy, JAX and PyTorch dtypes map to uma's names, bfloat16 included). Anything
      else (float32 for a float64 variable, a 1-d value for a matrix, an object without
      ``dtype`` and ``shape``) is a ``TypeError`` naming the variable, the backend and both
      types, and the call changes no shared variable, not even those updated correctly.
      Values stored in the host residency (``residency == "cpu"``) must be ``uma.Array`` s on
      the CPU or what ``uma.asarray`` turns into one.
      ``input_filter(value, type)``: a host ``uma.Array`` of ``type.dtype`` -> the native value
      (a transfer when the residency is not the host, or a zero-copy view where memory is
      shared). Called for arguments and for shared variables whose copy here is stale.
      ``output_filter(value, type)``: a native value -> a host array (``uma.Array`` or
      anything ``uma.asarray`` accepts) of ``type.dtype``. Called when another residency or
      ``get_value`` needs a shared variable this backend wrote last.
      ``is_native(value, type)``: True when ``value`` already lives in this residency and can
      be passed to the thunk as is (no host filtering, no conversion). A value it accepts is
      still checked against ``type`` from its ``dtype`` and ``shape``, with the errors any
      argument gets (``TypeError`` for another ndim or a dtype that cannot be cast safely,
      ``ValueError`` for a static length that differs); one of another dtype that casts
      safely goes through the host filter and ``input_filter`` like a non-native value.

    A minimal backend that evaluates every node with its reference implementation and keeps
    its values as NumPy arrays::

        import numpy as np
        import uma

        class MyLinker(uma.Linker):
            name, residency = "mine", "mine"

            def input_filter(self, value, type):       # host uma.Array -> native
                return np.array(value)                  # (a copy: like a device transfer)

            def output_filter(self, value, type):      # native -> host
                return uma.asarray(value)

            def is_native(self, value, type):
                return isinstance(value, np.ndarray) and value.dtype == type.dtype

            def compile(self, fgraph):
                order = fgraph.toposort()
                copies = fgraph.outputs_needing_copy()

                def thunk(values):
                    env = dict(zip(fgraph.inputs, values))
                    env.update((c, c.value) for c in fgraph.constants())
                    for node in order:
                        args = [uma.asarray(env[v]) for v in node.inputs]
                        outs = node.op.perform(node, args)
                        env.update(zip(node.outputs, (np.asarray(o) for o in outs)))
                    return [np.array(env[o]) if k in copies else env[o]
                            for k, o in enumerate(fgraph.outputs)]
                return thunk

        uma.register_backend("mine", MyLinker())
        w = uma.shared(np.zeros(3))
        step = uma.function([], [], updates={w: w + 1}, backend="mine")
        step()                      # w's current copy is now the "mine" one
        w.get_value()               # -> numpy.ndarray([1., 1., 1.]), via output_filter
    """

    name: str = "linker"
    residency: str = HOST

    def compile(self, fgraph):
        raise NotImplementedError(f"{type(self).__name__}.compile")

    def input_filter(self, value, type):
        return value

    def output_filter(self, value, type):
        return value

    def is_native(self, value, type):
        return False

    def __repr__(self):
        return f"<{type(self).__name__} backend={self.name!r} residency={self.residency!r}>"


_BACKENDS: dict[str, Linker] = {}


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
    if name in _BACKENDS and not replace and _BACKENDS[name] is not linker:
        raise ValueError(f"register_backend: backend {name!r} is already registered (replace=True replaces it)")
    residency = linker.residency
    if residency != HOST:
        for other_name, other in _BACKENDS.items():
            if other_name != name and other is not linker and other.residency == residency:
                raise ValueError(f"register_backend: backend {name!r} has residency {residency!r}, which "
                                 f"backend {other_name!r} already uses; give it a residency of its own")
    _BACKENDS[name] = linker


def backends() -> list:
    """Names of the registered backends, sorted (``["cpu", "numpy", "reference"]`` plus any
    registered later)."""
    return sorted(_BACKENDS)


def get_linker(backend) -> Linker:
    """The linker for ``backend`` (a registered name or a Linker instance).

    ``RuntimeError`` for ``"cuda"`` in a build without it, ``ValueError`` for another unknown
    name, ``TypeError`` for something that is neither."""
    if isinstance(backend, Linker):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a name or a Linker, got {backend!r}")
    try:
        return _BACKENDS[backend]
    except KeyError:
        if backend == "cuda" or backend.startswith("cuda:"):
            raise RuntimeError(f"backend {backend!r} is not available in this build "
                               f"(available: {', '.join(backends())})") from None
        raise ValueError(f"unknown backend {backend!r} (available: {', '.join(backends())})") from None
