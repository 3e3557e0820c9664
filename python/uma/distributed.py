"""uma.distributed — collectives across processes over MPI (mpi4py), for data-parallel training.

``mpirun -np N python script.py``: each process calls :func:`init` (or any function below,
which calls it), then :func:`rank` / :func:`world_size` and the collectives on ``uma.Array`` s.
A process not started by an MPI launcher (no ``OMPI_COMM_WORLD_SIZE``, ``PMI_SIZE``,
``PMIX_RANK`` or ``MPI_LOCALNRANKS`` in its environment) is a world of size 1: mpi4py is not
imported and every collective is the identity (a fresh array, or ``out`` written).

Memory: the collectives hand uma's memory to MPI directly (the buffer protocol, a C-contiguous
``uma.Array`` is passed as it is: no staging copy); a non-contiguous input is copied once into a
contiguous array first. Results are fresh uma arrays unless ``out=`` names one (written in
place; ``out=x`` is MPI_IN_PLACE for :func:`all_reduce`); :func:`broadcast` always works in
place on ``x``. Only host (``cpu``) arrays are accepted (``ValueError`` otherwise).

Dtypes: bool, every integer, float32, float64, complex64, complex128. Reductions (``op``
``"sum"``, ``"mean"``, ``"max"``, ``"min"``) follow MPI: ``sum``/``mean`` on bool and ``max``/
``min`` on complex raise ``TypeError`` (``max``/``min`` on bool are logical or/and), ``mean``
needs a float or complex dtype (the sum divided by the world size in the same dtype).
float16 and bfloat16 travel as their bits in :func:`broadcast` and :func:`all_gather`; MPI has no
reduction for them (``TypeError``: cast to float32 first).

Open MPI 4.1's ``avx`` reduction component saturates sums of 8- and 16-bit unsigned integers;
:func:`init` leaves it out (``OMPI_MCA_op=^avx`` unless the environment sets ``OMPI_MCA_op``;
it takes effect when init is the first to import ``mpi4py.MPI``).

Checks before every collective: every rank's (collective, op, root, dtype, shape) signature is
compared through one small MPI_Allgather of int64s first; a mismatch raises ``ValueError`` on
every rank, naming each rank's dtype and shape (``check=False`` skips it where the caller knows
the shapes agree).

Failures (DESIGN.md, "Distributed"): after :func:`init` under MPI, an uncaught exception on any
rank prints its traceback and calls MPI_Abort (``sys.excepthook``), so the other ranks end at
once instead of waiting in a collective; and a watchdog thread aborts the job (MPI_Abort, exit
code 3) with a message naming the collective when one has not completed within ``timeout``
seconds (``init(timeout=...)``, else ``UMA_DIST_TIMEOUT``, default 300; ``0`` disables it).
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

__all__ = ["init", "is_initialized", "rank", "world_size", "barrier", "all_reduce", "broadcast",
           "all_gather", "reduce_scatter", "comm", "stats", "check_same", "CollectiveMismatch", "DEFAULT_TIMEOUT"]

#: Seconds a collective may take before the watchdog aborts the job (``UMA_DIST_TIMEOUT``).
DEFAULT_TIMEOUT = 300.0

_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


class CollectiveMismatch(ValueError):
    """Ranks called a collective with different dtypes, shapes or arguments (raised on every
    rank, before the collective runs)."""


class _State:
    comm = None        # mpi4py communicator, None for a world of size 1 without MPI
    MPI = None
    rank = 0
    size = 1
    initialized = False
    timeout = DEFAULT_TIMEOUT
    watchdog = None


_S = _State()


def _uma():
    import uma
    return uma


def launched_by_mpi() -> bool:
    """True when an MPI launcher (mpirun / mpiexec) started this process."""
    return any(v in os.environ for v in _LAUNCHER_VARS)


def init(comm=None, *, timeout=None, abort_on_exception=True):
    """Join the MPI world (once; later calls return at once). Returns ``(rank, world_size)``.

    ``comm``: an mpi4py communicator (default ``MPI.COMM_WORLD``; passing one imports mpi4py
    even without a launcher). ``timeout``: seconds a collective may take before the job is
    aborted (None: ``UMA_DIST_TIMEOUT`` or 300; 0: no watchdog). ``abort_on_exception``: install
    the ``sys.excepthook`` that calls MPI_Abort after printing an uncaught exception.
    ``ImportError`` when launched by MPI but mpi4py is missing.
    """
    if _S.initialized:
        return _S.rank, _S.size
    if timeout is None:
        timeout = float(os.environ.get("UMA_DIST_TIMEOUT", DEFAULT_TIMEOUT))
    _S.timeout = float(timeout)
    if comm is None and not launched_by_mpi():
        _S.initialized = True
        return 0, 1
    # Open MPI 4.1's "avx" reduction component saturates the sum of 8- and 16-bit unsigned
    # integers (65535 + 2 gives 65535, not 1): leave it out unless the user chose components.
    # Read by MPI_Init, so it applies when mpi4py.MPI is first imported here.
    os.environ.setdefault("OMPI_MCA_op", "^avx")
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("uma.distributed: this process was started by an MPI launcher but "
                          "mpi4py is not installed (pip install mpi4py, pinned in "
                          "constraints.txt)") from e
    _S.MPI = MPI
    _S.comm = comm if comm is not None else MPI.COMM_WORLD
    _S.rank, _S.size = _S.comm.Get_rank(), _S.comm.Get_size()
    _S.initialized = True
    if abort_on_exception:
        _install_excepthook()
    if _S.timeout > 0 and _S.size > 1:
        _S.watchdog = _Watchdog(_S.timeout)
    return _S.rank, _S.size


def is_initialized() -> bool:
    return _S.initialized


def rank() -> int:
    """This process's rank in ``[0, world_size())`` (MPI_Comm_rank)."""
    init()
    return _S.rank


def world_size() -> int:
    """The number of processes (MPI_Comm_size; 1 without MPI)."""
    init()
    return _S.size


def comm():
    """The mpi4py communicator (None for a world of size 1 without MPI)."""
    init()
    return _S.comm


def _install_excepthook():
    previous = sys.excepthook

    def hook(tp, value, tb):
        try:
            sys.stderr.write(f"uma.distributed: rank {_S.rank} of {_S.size} raised; aborting the "
                             "job (MPI_Abort)\n")
            previous(tp, value, tb)
            sys.stderr.flush()
        finally:
            _S.comm.Abort(1)

    sys.excepthook = hook


class _Watchdog:
    """One daemon thread that aborts the job when a collective runs past ``timeout`` s."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.current = None  # (started, what) while a collective runs
        t = threading.Thread(target=self._run, name="uma.distributed watchdog", daemon=True)
        t.start()

    def _run(self):
        period = min(1.0, self.timeout / 4)
        while True:
            time.sleep(period)
            cur = self.current
            if cur is not None and time.monotonic() - cur[0] > self.timeout:
                sys.stderr.write(
                    f"uma.distributed: rank {_S.rank} of {_S.size}: {cur[1]} did not complete "
                    f"within {self.timeout:g} s (timeout; UMA_DIST_TIMEOUT): another rank failed, "
                    "hangs or does not call it; aborting the job (MPI_Abort)\n")
                sys.stderr.flush()
                _S.comm.Abort(3)


_STATS = {"calls": 0, "seconds": 0.0}


def stats(reset=False) -> dict:
    """``{"calls", "seconds"}``: how many MPI collectives this process ran (signature checks
    included) and the wall time spent inside them (``time.perf_counter``), since the start or
    the last ``reset``."""
    out = dict(_STATS)
    if reset:
        _STATS.update(calls=0, seconds=0.0)
    return out


class _watch:
    """Around one MPI call: the watchdog's deadline and the time counted by :func:`stats`."""
    __slots__ = ("what", "t0")

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        w = _S.watchdog
        self.t0 = time.perf_counter()
        if w is not None:
            w.current = (time.monotonic(), self.what)

    def __exit__(self, *exc):
        w = _S.watchdog
        if w is not None:
            w.current = None
        _STATS["calls"] += 1
        _STATS["seconds"] += time.perf_counter() - self.t0


# ---- buffers ----------------------------------------------------------------------------------

_DTYPE_CODES = {n: k for k, n in enumerate(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
     "bfloat16", "float32", "float64", "complex64", "complex128"])}
_OPS = ("sum", "mean", "max", "min")
_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier")
_MAX_NDIM = 32


def _dtype_name(x):
    return str(x.dtype)


def _as_array(x, what):
    uma = _uma()
    if not isinstance(x, uma.Array):
        raise TypeError(f"uma.distributed.{what}: needs a uma.Array, got {type(x).__name__}")
    if str(x.device) != "cpu":
        raise ValueError(f"uma.distributed.{what}: needs a host (cpu) array, got one on {x.device}")
    return x


def _contiguous(x):
    """``x`` itself when C-contiguous, else one contiguous copy."""
    if _is_c_contiguous(x):
        return x
    return x.copy()


def _is_c_contiguous(x):
    expected = x.itemsize
    for n, s in zip(reversed(x.shape), reversed(x.strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _buffer(x, what, reduce_op=None):
    """The mpi4py buffer spec ``[buffer, MPI datatype]`` of a contiguous host array (the
    count is the buffer's length; per rank for a gathered or scattered buffer)."""
    MPI = _S.MPI
    dt = _dtype_name(x)
    if dt in ("float16", "bfloat16"):
        if reduce_op is not None:
            raise TypeError(f"uma.distributed.{what}: MPI has no reduction for {dt}; cast to "
                            "float32 first")
        return [np.asarray(x).view(np.uint16), MPI.UINT16_T]
    if reduce_op is not None:
        if dt == "bool" and reduce_op in ("sum", "mean"):
            raise TypeError(f"uma.distributed.{what}: op={reduce_op!r} is not defined on bool "
                            "(MPI reduces bool with logical ops only: use max or min, or cast)")
        if dt.startswith("complex") and reduce_op in ("max", "min"):
            raise TypeError(f"uma.distributed.{what}: op={reduce_op!r} is not defined on {dt}")
        if reduce_op == "mean" and not (dt.startswith("float") or dt.startswith("complex")):
            raise TypeError(f"uma.distributed.{what}: op='mean' needs a float or complex dtype, "
                            f"got {dt}")
    mv = memoryview(x)
    return [mv, MPI.Datatype.fromcode(mv.format)]


def _mpi_op(op, dtype):
    MPI = _S.MPI
    if dtype == "bool":
        return {"max": MPI.LOR, "min": MPI.LAND}[op]
    return {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]


def _signature(what, x, op=None, root=-1):
    sig = np.full(4 + _MAX_NDIM, -1, dtype=np.int64)
    sig[0] = _COLLECTIVES.index(what)
    sig[1] = _OPS.index(op) if op is not None else -1
    sig[2] = root
    if x is not None:
        sig[3] = _DTYPE_CODES[_dtype_name(x)] * 64 + x.ndim
        if x.ndim > _MAX_NDIM:
            raise ValueError(f"uma.distributed.{what}: at most {_MAX_NDIM} dimensions")
        sig[4:4 + x.ndim] = x.shape
    return sig


def _describe(sig):
    names = {v: k for k, v in _DTYPE_CODES.items()}
    what = _COLLECTIVES[sig[0]] if 0 <= sig[0] < len(_COLLECTIVES) else "?"
    extra = f" op={_OPS[sig[1]]!r}" if sig[1] >= 0 else ""
    extra += f" root={sig[2]}" if sig[2] >= 0 else ""
    if sig[3] < 0:
        return what + extra
    ndim = int(sig[3] % 64)
    return f"{what}{extra} {names.get(int(sig[3] // 64), '?')} {tuple(int(d) for d in sig[4:4 + ndim])}"


def check_same(what, x, op=None, root=-1):
    """Raise :class:`CollectiveMismatch` on every rank unless every rank passes the same
    collective, op, root, dtype and shape (one MPI_Allgather of ``4 + 32`` int64 per rank)."""
    init()
    if _S.comm is None:
        return
    sig = _signature(what, x, op, root)
    every = np.empty((_S.size, sig.size), dtype=np.int64)
    with _watch(f"the signature check before {what}"):
        _S.comm.Allgather([sig, _S.MPI.INT64_T], [every, _S.MPI.INT64_T])
    if not (every == every[0]).all():
        ranks = "; ".join(f"rank {r}: {_describe(s)}" for r, s in enumerate(every))
        raise CollectiveMismatch(f"uma.distributed.{what}: the ranks disagree ({ranks})")


def _fresh(shape, dtype):
    return _uma().empty(tuple(shape), dtype=dtype)


def _check_out(out, shape, dtype, what):
    uma = _uma()
    if not isinstance(out, uma.Array):
        raise TypeError(f"uma.distributed.{what}: out must be a uma.Array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape) or str(out.dtype) != dtype:
        raise ValueError(f"uma.distributed.{what}: out is {out.dtype} {tuple(out.shape)}, "
                         f"needs {dtype} {tuple(shape)}")
    if not out.writable or not _is_c_contiguous(out):
        raise ValueError(f"uma.distributed.{what}: out must be writable and C-contiguous")
    return out


# ---- collectives ------------------------------------------------------------------------------

def barrier():
    """Wait until every rank has called it (MPI_Barrier)."""
    init()
    if _S.comm is not None:
        with _watch("barrier"):
            _S.comm.Barrier()


def all_reduce(x, op="sum", *, out=None, check=True):
    """The elementwise ``op`` (``"sum"``, ``"mean"``, ``"max"``, ``"min"``) of ``x`` over every
    rank, on every rank (MPI_Allreduce). Same dtype and shape as ``x``.

    ``out``: a writable C-contiguous array of that dtype and shape to write into (``out=x``:
    in place, MPI_IN_PLACE); default a fresh array. ``TypeError``: an op the dtype lacks (see
    the module); :class:`CollectiveMismatch`: the ranks' dtypes, shapes or ops differ.
    """
    x = _as_array(x, "all_reduce")
    if op not in _OPS:
        raise ValueError(f"uma.distributed.all_reduce: op must be one of {_OPS}, got {op!r}")
    dt = _dtype_name(x)
    if out is not None:
        _check_out(out, x.shape, dt, "all_reduce")
    init()
    if _S.comm is None:
        if dt in ("float16", "bfloat16") or (dt == "bool" and op in ("sum", "mean")) or (
                op == "mean" and not dt.startswith(("float", "complex"))) or (
                dt.startswith("complex") and op in ("max", "min")):
            raise TypeError(f"uma.distributed.all_reduce: op={op!r} is not defined on {dt}")
        if out is None:
            return x.copy()
        if out is not x:
            out[...] = x
        return out
    if check:
        check_same("all_reduce", x, op)
    mop = _mpi_op(op, dt)
    if out is x and _is_c_contiguous(x):
        buf = _buffer(x, "all_reduce", op)
        with _watch("all_reduce"):
            _S.comm.Allreduce(_S.MPI.IN_PLACE, buf, op=mop)
        res = x
    else:
        src = _contiguous(x)
        res = out if out is not None and out is not x else _fresh(x.shape, dt)
        with _watch("all_reduce"):
            _S.comm.Allreduce(_buffer(src, "all_reduce", op), _buffer(res, "all_reduce", op), op=mop)
        if out is x:  # x not contiguous: reduced into a copy, written back
            x[...] = res
            res = x
    if op == "mean":
        res /= _S.size
    return res


def broadcast(x, root=0, *, check=True):
    """``x`` of rank ``root`` copied into ``x`` on every rank, in place (MPI_Bcast); returns
    ``x``. ``x`` must be writable and C-contiguous on the other ranks (``ValueError``).
    ``ValueError`` for a root outside ``[0, world_size())``; :class:`CollectiveMismatch`: the
    ranks' dtypes, shapes or roots differ."""
    x = _as_array(x, "broadcast")
    init()
    if not (0 <= int(root) < _S.size):
        raise ValueError(f"uma.distributed.broadcast: root {root} outside [0, {_S.size})")
    if _S.comm is None:
        return x
    if check:
        check_same("broadcast", x, root=int(root))
    if _S.rank != root and (not x.writable or not _is_c_contiguous(x)):
        raise ValueError("uma.distributed.broadcast: x must be writable and C-contiguous on the "
                         "receiving ranks (it is written in place)")
    src = _contiguous(x)
    with _watch("broadcast"):
        _S.comm.Bcast(_buffer(src, "broadcast"), root=int(root))
    return x


def all_gather(x, *, out=None, check=True):
    """Every rank's ``x`` stacked along a new leading axis in rank order, on every rank
    (MPI_Allgather): shape ``(world_size,) + x.shape``, ``x``'s dtype (``reshape`` it to join
    axis 0). Every rank must pass the same dtype and shape (:class:`CollectiveMismatch`).
    ``out``: a writable C-contiguous array of that shape and dtype to write into."""
    x = _as_array(x, "all_gather")
    init()
    shape, dt = (_S.size,) + tuple(x.shape), _dtype_name(x)
    if out is not None:
        _check_out(out, shape, dt, "all_gather")
    res = out if out is not None else _fresh(shape, dt)
    if _S.comm is None:
        res[...] = x.reshape(shape)
        return res
    if check:
        check_same("all_gather", x)
    src = _contiguous(x)
    with _watch("all_gather"):
        _S.comm.Allgather(_buffer(src, "all_gather"), _buffer(res, "all_gather"))
    return res


def reduce_scatter(x, op="sum", *, out=None, check=True):
    """The elementwise ``op`` of ``x`` over every rank, split along axis 0 into
    ``world_size()`` equal blocks; rank r receives block r (MPI_Reduce_scatter_block): shape
    ``(x.shape[0] // world_size(),) + x.shape[1:]``. ``ValueError`` when ``x`` is 0-d or its
    axis 0 is not divisible by the world size; dtypes and ops as :func:`all_reduce`."""
    x = _as_array(x, "reduce_scatter")
    if op not in _OPS:
        raise ValueError(f"uma.distributed.reduce_scatter: op must be one of {_OPS}, got {op!r}")
    init()
    if x.ndim == 0 or x.shape[0] % _S.size:
        raise ValueError(f"uma.distributed.reduce_scatter: axis 0 of shape {tuple(x.shape)} is "
                         f"not divisible by the world size {_S.size}")
    dt = _dtype_name(x)
    shape = (x.shape[0] // _S.size,) + tuple(x.shape[1:])
    if out is not None:
        _check_out(out, shape, dt, "reduce_scatter")
    if _S.comm is None:
        return all_reduce(x, op, out=out)
    if check:
        check_same("reduce_scatter", x, op)
    res = out if out is not None else _fresh(shape, dt)
    src = _contiguous(x)
    rbuf = _buffer(res, "reduce_scatter", op)
    with _watch("reduce_scatter"):
        _S.comm.Reduce_scatter_block(_buffer(src, "reduce_scatter", op), rbuf, op=_mpi_op(op, dt))
    if op == "mean":
        res /= _S.size
    return res
