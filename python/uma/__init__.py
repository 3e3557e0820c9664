"""uma: an array runtime whose memory crosses library, device and backend boundaries
without copies unless a copy is truly needed (see DESIGN.md).

Arrays: ``uma.asarray`` / ``uma.from_dlpack`` share memory with NumPy, PyTorch and any
DLPack or buffer-protocol producer when dtype, layout, device and mutability allow
(``copy=False`` raises ``uma.CopyError`` otherwise); ``uma.array`` copies (unless asked
otherwise with ``copy=None`` or ``copy=False``, as ``numpy.array``).
Compiled functions: ``uma.sym``, ``uma.grad``, ``uma.shared`` and ``uma.function``.
"""
from __future__ import annotations

import importlib.util as _ilu

from . import _cpu

_cpu.check()  # before _core: its code needs the CPU features _cpu names

from . import _core
from ._core import (
    Array, CopyError, array, asarray, from_dlpack, memory_stats, clear_cache, set_cache_limit,
    get_num_threads, set_num_threads, conversion_stats,
    zeros, ones, empty, full, arange, linspace, eye,
)
from ._core import load, save, from_arrow
from ._dtypes import dtype
from ._device import Device, _from_code as _device_from_code
from . import cuda
from . import _api
from ._api import *  # noqa: F401,F403  (eager ops with symbolic dispatch)
from ._api import promote_types, result_type, can_cast
from . import _array_api
from ._array_api import *  # noqa: F401,F403  (the Array API standard's namespace: DESIGN.md)
from ._array_api import __array_api_version__, __array_namespace_info__
from . import linalg  # the standard's linear algebra extension (xp.linalg)
from . import fft  # the standard's fft extension (xp.fft)
from . import _sorting
from ._sorting import *  # noqa: F401,F403  (the standard's sorting, set and searching functions)

_core._register_device_factory(_device_from_code)
get_num_threads()  # a malformed UMA_NUM_THREADS is a ValueError here, not at the first kernel

bool_ = dtype("bool")
int8, int16, int32, int64 = (dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (dtype(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, bfloat16, float32, float64 = (dtype(n) for n in ("float16", "bfloat16", "float32", "float64"))
complex64, complex128 = dtype("complex64"), dtype("complex128")
bool = bool_  # the Array API standard's spelling (shadows the builtin inside this module only)


def _version() -> str:
    """The version of the installed distribution ``uma`` (its metadata, written from
    ``pyproject.toml``'s ``[project] version``: the one place the version is set). A source
    tree run without installing (``make dev``, ``PYTHONPATH=python``) or a copy of the
    package outside the distribution's folder reads ``"0+unknown"``."""
    import importlib.metadata as md
    import os

    try:
        dist = md.distribution("uma")
    except md.PackageNotFoundError:
        return "0+unknown"
    here = os.path.realpath(os.path.dirname(__file__))
    if os.path.realpath(os.path.dirname(str(dist.locate_file("uma/__init__.py")))) != here:
        return "0+unknown"  # another copy of uma is installed; this one is a source tree
    return dist.version


__version__ = _version()

if _ilu.find_spec(__name__ + "._compiled") is not None:
    from ._compiled import *  # noqa: F401,F403
    from . import sym  # noqa: F401
