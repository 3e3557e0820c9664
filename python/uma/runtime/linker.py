"""Linkers: what compiles a FunctionGraph for one backend, and the backend registry."""
from __future__ import annotations

from .filters import HOST

__all__ = ["Linker", "register_backend", "backends", "get_linker"]


class Linker:
    """Compiles a :class:`~uma.graph.FunctionGraph` for one backend (DESIGN.md "Linkers").

    Attributes:
      ``name``: the backend name (``"cpu"``); ``residency``: where this backend's values live
      (``"cpu"`` = host memory; a Python linker may use its own, e.g. ``"counting"``).

    Methods a linker provides:
      ``compile(fgraph) -> thunk``: ``thunk(values) -> outputs``, both lists in the order of
      ``fgraph.inputs`` / ``fgraph.outputs``, values in this backend's native form. The thunk
      must not write into its inputs, and the outputs listed by
      ``fgraph.outputs_needing_copy()`` must be fresh copies (no output may alias an input, a
      constant or another output).
      ``input_filter(value, type)``: a host ``uma.Array`` of ``type.dtype`` -> the native value
      (a transfer when the residency is not the host; identity otherwise).
      ``output_filter(value, type)``: a native value -> a host array (``uma.Array`` or
      anything ``uma.asarray`` accepts) of ``type.dtype``.
      ``is_native(value, type)``: True when ``value`` already lives in this residency and can
      be passed to the thunk as is (no conversion, no host round trip).
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
    the name is taken (pass ``replace=True`` to replace it).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_backend: name must be a non-empty string, got {name!r}")
    if not isinstance(linker, Linker):
        raise TypeError(f"register_backend: linker must be a uma.Linker instance, got {linker!r}")
    if name in _BACKENDS and not replace and _BACKENDS[name] is not linker:
        raise ValueError(f"register_backend: backend {name!r} is already registered (replace=True replaces it)")
    _BACKENDS[name] = linker


def backends() -> list:
    """Names of the registered backends, sorted."""
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
