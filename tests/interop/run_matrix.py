#!/usr/bin/env python3
"""The interop matrix: uma <-> NumPy, PyTorch, JAX, MLX and ml_dtypes (bfloat16), both
directions, every dtype each peer shares with uma, and the layouts contiguous / transposed /
negative-stride / sliced / size-0 / 0-d / read-only, on CPU arrays.

    python tests/interop/run_matrix.py [--peers numpy,torch,...] [--json out.json]

prints one row per (peer, direction and call, layout) and one cell per dtype:

    S  shared (same memory; a write through one side is read through the other where
       both sides are writable, pointer equality where the peer is immutable)
    s  shared, read-only on the receiving side
    C  copied, same dtype, right values
    X  the peer converted to another dtype (values right after conversion)
    R  refused with a clean Python exception (the notes name it)
    A  the peer aborts the process (run in a child process; the notes say which call)
    P  a peer fault: a wrong result (or a writable view of read-only memory) that the peer
       also gives for a NumPy array or memoryview of the same values and layout
    W  WRONG: a wrong result not explained by the peer (uma's fault until shown otherwise)
    0  size 0: shape and dtype right (sharing cannot be observed)
    -  not applicable (the peer lacks the dtype or cannot form the layout)

Peers are imported optionally: the matrix runs with whatever is installed (the GPU machine
has NumPy, PyTorch, CuPy and JAX; CuPy is a device library and is not part of this CPU
matrix). tests/python/test_interop_matrix.py runs the same cases under pytest and asserts on them.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":  # make `import uma` work from a source checkout built with `make dev`
    src = os.path.join(HERE, "..", "..", "python")
    try:
        import uma  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.abspath(src))
import uma  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]
LAYOUTS = ["contiguous", "transposed", "negative", "sliced", "size-0", "0-d", "read-only"]
SHAPE = (4, 6)


def np_dtype(name):
    if name == "bfloat16":
        if ml_dtypes is None:
            return None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def source_values(name):
    """A (4, 6) NumPy array of dtype `name` with distinct, exactly representable values."""
    dt = np_dtype(name)
    i = np.arange(24).reshape(SHAPE)
    if name == "bool":
        return (i % 3 == 0)
    if name.startswith("complex"):
        return (i - 7 + 1j * (i % 5)).astype(dt)
    if name.startswith("uint"):
        return i.astype(dt)
    return (i - 7).astype(np.float32).astype(dt) if name in ("float16", "bfloat16") else (i - 7).astype(dt)


def np_layout(x, layout):
    """The layout as a NumPy view of x (the oracle for values)."""
    if layout in ("contiguous", "read-only"):
        return x
    if layout == "transposed":
        return x.T
    if layout == "negative":
        return x[::-1, ::-2]
    if layout == "sliced":
        return x[1:3, 1:5:2]
    if layout == "size-0":
        return x[:0]
    if layout == "0-d":
        return x[1, 2, ...]
    raise ValueError(layout)


def view_layout(x, layout):
    """The same layout through ordinary indexing (works for uma, torch, jax, mlx arrays)."""
    if layout in ("contiguous", "read-only"):
        return x
    if layout == "transposed":
        return x.T
    if layout == "negative":
        return x[::-1, ::-2]
    if layout == "sliced":
        return x[1:3, 1:5:2]
    if layout == "size-0":
        return x[:0]
    if layout == "0-d":
        return x[1, 2]
    raise ValueError(layout)


def first_index(ndim):
    return (0,) * ndim if ndim else ()


def write_value(name):
    return True if name == "bool" else 5


def comparable(a):
    """A NumPy array that compares exactly (bfloat16 goes through float32)."""
    a = np.asarray(a)
    if ml_dtypes is not None and a.dtype == np.dtype(ml_dtypes.bfloat16):
        return a.astype(np.float32)
    return a


def same_values(got, expected):
    got, expected = comparable(got), comparable(expected)
    return got.shape == expected.shape and np.array_equal(got, expected)


# --------------------------------------------------------------------------- peers


class Peer:
    """One library: how to build its arrays, read them back, and cross the boundary."""

    name = "?"
    mutable = True  # writes through the peer's own arrays are possible
    imports = ()  # (label, fn(uma_array) -> peer array): uma -> peer

    def available(self):
        return True

    def version(self):
        return ""

    def dtypes(self):
        return DTYPES

    def make(self, src, layout):
        """A peer array holding np_layout(src, layout), or None when the peer cannot form it."""
        raise NotImplementedError

    def ptr(self, x):
        """Address of element (0, ..., 0) of a peer array."""
        raise NotImplementedError

    def to_numpy(self, x):
        raise NotImplementedError

    def write(self, x, idx, v):
        x[idx] = v

    def dtype_name(self, x):
        return self.to_numpy(x).dtype.name if not hasattr(x, "dtype") else str(x.dtype).split(".")[-1]

    def abort_risk(self, label, layout):
        """True where the call is known to be able to kill the process: run it in a child."""
        return False

    def result_writable(self, x):
        """Whether writes through the peer's array x reach its memory."""
        return self.mutable


class NumPyPeer(Peer):
    name = "numpy"

    def version(self):
        return np.__version__

    def dtypes(self):
        return [d for d in DTYPES if d != "bfloat16"]

    def make(self, src, layout):
        x = np.array(src)
        if layout == "read-only":
            x.flags.writeable = False
        return np_layout(x, layout)

    def ptr(self, x):
        return x.__array_interface__["data"][0]

    def to_numpy(self, x):
        return np.array(x)

    def dtype_name(self, x):
        return x.dtype.name

    def result_writable(self, x):
        return bool(x.flags.writeable)

    @property
    def imports(self):
        return [("np.asarray", np.asarray), ("np.from_dlpack", np.from_dlpack), ("np.array", np.array)]


class MLDtypesPeer(NumPyPeer):
    """NumPy arrays of ml_dtypes.bfloat16 (the only extension dtype uma shares)."""

    name = "ml_dtypes"

    def available(self):
        return ml_dtypes is not None

    def version(self):
        return ml_dtypes.__version__

    def dtypes(self):
        return ["bfloat16"]

    @property
    def imports(self):
        return [("np.asarray", np.asarray), ("np.from_dlpack", np.from_dlpack), ("np.array", np.array)]


class TorchPeer(Peer):
    name = "torch"

    def available(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            return False
        return True

    def version(self):
        import torch
        return torch.__version__

    def _t(self):
        import torch
        return torch

    def make(self, src, layout):
        torch = self._t()
        if layout in ("negative", "read-only"):
            return None  # torch has neither negative strides nor read-only tensors
        if src.dtype.name == "bfloat16":
            t = torch.from_numpy(src.view(np.uint16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.array(src))
        return view_layout(t, layout)

    def ptr(self, x):
        return x.data_ptr()

    def to_numpy(self, x):
        torch = self._t()
        x = x.detach()
        if x.dtype == torch.bfloat16:
            return x.view(torch.uint16).numpy().view(ml_dtypes.bfloat16).copy()
        return x.numpy().copy()

    def dtype_name(self, x):
        return str(x.dtype).replace("torch.", "")

    @property
    def imports(self):
        torch = self._t()
        return [("torch.from_dlpack", torch.from_dlpack), ("torch.asarray", torch.asarray),
                ("torch.tensor", torch.tensor)]

    def abort_risk(self, label, layout):
        return layout == "negative"


class JaxPeer(Peer):
    name = "jax"
    mutable = False

    def available(self):
        try:
            import jax
        except ImportError:
            return False
        jax.config.update("jax_enable_x64", True)  # int64/float64/complex128 stay what they are
        return True

    def version(self):
        import jax
        return jax.__version__

    def make(self, src, layout):
        import jax.numpy as jnp
        if layout == "read-only":
            return None  # every JAX array is immutable: covered by "contiguous"
        # JAX arrays are always compact: slicing in JAX (compiles a kernel per dtype) and
        # device_put of the NumPy view give the same array.
        return jnp.asarray(np_layout(src, layout))

    def ptr(self, x):
        return x.unsafe_buffer_pointer()

    def to_numpy(self, x):
        return np.array(x)

    def write(self, x, idx, v):
        raise TypeError("JAX arrays are immutable")

    def dtype_name(self, x):
        return x.dtype.name

    @property
    def imports(self):
        import jax
        import jax.numpy as jnp
        return [("jnp.from_dlpack", jnp.from_dlpack), ("jax.dlpack.from_dlpack", jax.dlpack.from_dlpack),
                ("jnp.asarray", jnp.asarray)]


class MLXPeer(Peer):
    name = "mlx"
    mutable = False  # mx.array item assignment is a functional update, not a write into memory

    def available(self):
        try:
            import mlx.core  # noqa: F401
        except ImportError:
            return False
        return True

    def version(self):
        import mlx.core as mx
        return mx.__version__

    def dtypes(self):
        return [d for d in DTYPES if d != "complex128"]

    def make(self, src, layout):
        import mlx.core as mx
        if layout == "read-only":
            return None  # immutable: covered by "contiguous"
        if src.dtype.name == "bfloat16":
            x = mx.array(src.astype(np.float32)).astype(mx.bfloat16)
        else:
            x = mx.array(src, dtype=mx.bool_ if src.dtype == np.bool_ else getattr(mx, src.dtype.name))
        x = view_layout(x, layout)
        mx.eval(x)
        return x

    def ptr(self, x):
        import mlx.core as mx
        if x.dtype == mx.bfloat16:
            x = x.view(mx.uint16)
        return np.asarray(memoryview(x)).__array_interface__["data"][0]

    def to_numpy(self, x):
        import mlx.core as mx
        if x.dtype == mx.bfloat16:
            return np.array(x.astype(mx.float32)).astype(ml_dtypes.bfloat16)
        return np.array(x)

    def write(self, x, idx, v):
        raise TypeError("MLX arrays are updated functionally")

    def dtype_name(self, x):
        return str(x.dtype).split(".")[-1]

    @property
    def imports(self):
        import mlx.core as mx
        return [("mx.array", mx.array), ("mx.asarray", mx.asarray)]


ALL_PEERS = [NumPyPeer(), MLDtypesPeer(), TorchPeer(), JaxPeer(), MLXPeer()]
UMA_IMPORTS = [("uma.asarray", uma.asarray), ("uma.from_dlpack", uma.from_dlpack)]


def peers(names=None):
    out = []
    for p in ALL_PEERS:
        if names and p.name not in names:
            continue
        out.append(p)
    return out


# --------------------------------------------------------------------------- one case


class Case(dict):
    """The outcome of one call: code (S s C X R A W -), note, and details for assertions."""


def _short_exc(e):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg[:90]}"


def peer_to_uma(peer, label, fn, dtype, layout):
    """Import a peer array into uma; classify and verify."""
    src = source_values(dtype)
    x = peer.make(src, layout)
    if x is None:
        return Case(code="-", note="peer cannot form this layout")
    expected = np_layout(src, layout)
    try:
        u = fn(x)
    except Exception as e:  # a clean refusal
        return Case(code="R", note=_short_exc(e), exc=type(e))
    if not isinstance(u, uma.Array) or u.dtype.name != dtype:
        return Case(code="W", note=f"got {type(u).__name__} of dtype {getattr(u, 'dtype', None)}")
    if not same_values(np.asarray(u), expected):
        return Case(code="W", note="values differ from the source")
    if u.size == 0:
        return Case(code="0", note="", writable=u.writable, shared=None)
    shared = u._data_ptr == peer.ptr(x)
    if not shared:
        return Case(code="C", writable=u.writable, shared=False)
    # Shared: prove it with writes where both sides allow them.
    idx = first_index(u.ndim)
    v = write_value(dtype)
    proof = "pointer"
    if u.writable and peer.mutable:
        u[idx] = v
        if not same_values(comparable(peer.to_numpy(x))[idx], np.asarray(v).astype(comparable(expected).dtype)):
            return Case(code="W", note="a write through uma did not show in the peer")
        w = False if dtype == "bool" else 3
        peer.write(x, idx, w)
        if not same_values(comparable(np.asarray(u))[idx], np.asarray(w).astype(comparable(expected).dtype)):
            return Case(code="W", note="a write through the peer did not show in uma")
        proof = "writes both ways"
    elif not u.writable:
        try:
            u[idx] = v
            return Case(code="W", note="read-only result accepted a write")
        except ValueError:
            pass
    return Case(code="S" if u.writable else "s", writable=u.writable, shared=True, proof=proof)


def _uma_source(dtype, layout):
    src = source_values(dtype)
    if layout == "read-only":
        ro = np.array(src)
        ro.flags.writeable = False
        return src, uma.asarray(ro)
    return src, view_layout(uma.array(src), layout)


def _abort_probe(peer, label, dtype, layout):
    """Runs the call in a child process; returns None if it completed, else the signal text."""
    code = textwrap.dedent(f"""
        import sys; sys.path[:0] = {sys.path[:3]!r}
        sys.argv = ['probe']
        import run_matrix as m
        p = [q for q in m.ALL_PEERS if q.name == {peer.name!r}][0]
        p.available()
        fn = dict(p.imports)[{label!r}]
        src, u = m._uma_source({dtype!r}, {layout!r})
        try:
            fn(u)
        except Exception:
            pass
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE] + sys.path[:3]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if r.returncode == 0:
        return None
    tail = [ln for ln in r.stderr.splitlines() if "what()" in ln or "Error" in ln]
    return f"exit {r.returncode}: " + (tail[0].strip()[:100] if tail else r.stderr.strip()[-100:])


_abort_cache = {}


def uma_to_peer(peer, label, fn, dtype, layout):
    """Export a uma array to the peer; classify and verify."""
    if peer.abort_risk(label, layout):
        key = (peer.name, label, layout)
        if key not in _abort_cache:
            _abort_cache[key] = _abort_probe(peer, label, "float32", layout)
        if _abort_cache[key] is not None:
            return Case(code="A", note=f"{label} aborts the process ({_abort_cache[key]})")
    src, u = _uma_source(dtype, layout)
    expected = np_layout(src, layout)
    try:
        x = fn(u)
    except Exception as e:
        return Case(code="R", note=_short_exc(e), exc=type(e))
    try:
        got = peer.to_numpy(x)
    except Exception as e:
        return Case(code="R", note="result unreadable: " + _short_exc(e))
    got_dtype = peer.dtype_name(x)
    if got_dtype != dtype:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex -> real discards the imaginary part
            conv = expected.astype(got.dtype) if got.dtype.kind != "V" else None
        if conv is not None and got.shape == expected.shape and same_values(got, conv):
            return Case(code="X", note=f"converted to {got_dtype}", to=got_dtype)
        return _peer_fault_or_wrong(peer, fn, label, expected, x, f"gives {got_dtype} {got.shape}, not the source's values")
    if not same_values(got, expected):
        return _peer_fault_or_wrong(peer, fn, label, expected, x, "values differ from the source")
    if u.size == 0:
        return Case(code="0", note="", shared=None)
    try:
        shared = peer.ptr(x) == u._data_ptr
    except Exception:
        shared = False
    if not shared:
        return Case(code="C", shared=False)
    if not u.writable and peer.result_writable(x):
        # The peer hands out a writable view of read-only memory. uma's export says read-only
        # (READ_ONLY flag, buffer readonly=1); check the peer does the same to NumPy's.
        ro = np.array(expected)
        if ro.dtype.kind == "V":  # bfloat16: NumPy cannot export it; the same bytes as uint16
            ro = ro.view(np.uint16)
        ro.flags.writeable = False
        try:
            y = fn(ro)
            same = peer.ptr(y) == ro.__array_interface__["data"][0] and peer.result_writable(y)
        except Exception:
            same = False
        if same:
            return Case(code="P", note=f"{label} makes read-only memory writable (so it does for a read-only NumPy array)")
        return Case(code="W", note=f"{label} got a writable view of a read-only uma array")
    idx = first_index(u.ndim)
    proof = "pointer"
    if u.writable and peer.result_writable(x):
        v = write_value(dtype)
        u[idx] = v
        if not same_values(comparable(peer.to_numpy(x))[idx], np.asarray(v).astype(comparable(expected).dtype)):
            return Case(code="W", note="a write through uma did not show in the peer")
        proof = "write"
    return Case(code="S" if peer.result_writable(x) or not peer.mutable else "s", shared=True, proof=proof)


def _same_result(peer, a, b):
    try:
        na, nb = peer.to_numpy(a), peer.to_numpy(b)
    except Exception:
        return False
    return (peer.dtype_name(a) == peer.dtype_name(b) and na.shape == nb.shape and na.tobytes() == nb.tobytes())


def _peer_fault_or_wrong(peer, fn, label, expected, x, what):
    """A wrong result: 'P' when the peer gives the same wrong result for a NumPy array or a
    memoryview of the same values and layout (so uma's export is not the cause), else 'W'."""
    for cname, control in (("NumPy array", expected), ("memoryview", memoryview(expected))):
        try:
            y = fn(control)
        except Exception:
            continue
        if _same_result(peer, x, y):
            return Case(code="P", note=f"{label}: {what}; the same for a {cname} of the source (peer fault)")
    return Case(code="W", note=f"{label}: {what}")


def directions(peer):
    """(direction label, call label, fn, runner) of a peer."""
    out = [(f"{peer.name}->uma", lbl, fn, peer_to_uma) for lbl, fn in UMA_IMPORTS]
    out += [(f"uma->{peer.name}", lbl, fn, uma_to_peer) for lbl, fn in peer.imports]
    return out


def run_row(peer, call, fn, runner, layout, dtypes=None):
    """{dtype: Case} for one (peer, call, layout); '-' for dtypes the peer lacks."""
    row = {}
    have = peer.dtypes()
    for d in dtypes or DTYPES:
        if d not in have or np_dtype(d) is None:
            row[d] = Case(code="-", note="")
            continue
        try:
            row[d] = runner(peer, call, fn, d, layout)
        except Exception as e:  # the harness itself failed: report, never hide
            row[d] = Case(code="W", note="harness error " + _short_exc(e))
        pass
    return row


def run(peer_names=None, layouts=None, out=sys.stdout):
    results = []
    print(f"uma interop matrix  (python {sys.version.split()[0]}, uma {getattr(uma, '__version__', '?')})", file=out)
    ps = peers(peer_names)
    for p in ps:
        if not p.available():
            print(f"  {p.name}: not installed, skipped", file=out)
    ps = [p for p in ps if p.available()]
    print("  " + ", ".join(f"{p.name} {p.version()}" for p in ps), file=out)
    abbrev = {"bool": "b", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1", "uint16": "u2",
              "uint32": "u4", "uint64": "u8", "float16": "f2", "bfloat16": "bf", "float32": "f4", "float64": "f8",
              "complex64": "c8", "complex128": "c16"}
    head = f"{'direction':<14} {'call':<22} {'layout':<11} " + " ".join(f"{abbrev[d]:>3}" for d in DTYPES)
    print("\n" + head + "  notes", file=out)
    print("-" * len(head), file=out)
    for p in ps:
        for direction, call, fn, runner in directions(p):
            for layout in layouts or LAYOUTS:
                row = run_row(p, call, fn, runner, layout)
                notes = sorted({c.get("note", "") for c in row.values() if c["code"] in "RAWXP" and c.get("note")})
                cells = " ".join(f"{row[d]['code']:>3}" for d in DTYPES)
                print(f"{direction:<14} {call:<22} {layout:<11} {cells}  {'; '.join(notes)[:160]}", file=out)
                results.append({"peer": p.name, "direction": direction, "call": call, "layout": layout,
                                "cells": {d: {"code": c["code"], "note": c.get("note", "")} for d, c in row.items()}})
    print("\nS shared  s shared read-only  C copied  0 size 0 (shape, dtype right)  X peer converted dtype  R refused cleanly  "
          "A peer aborts\nP peer fault (reproduced with NumPy/memoryview of the same memory)  W WRONG  - n/a", file=out)
    wrong = [(r["direction"], r["call"], r["layout"], d, c["note"]) for r in results for d, c in r["cells"].items()
             if c["code"] == "W"]
    print(f"{len(results)} rows, {len(wrong)} wrong cells", file=out)
    for w in wrong:
        print("  WRONG:", *w, file=out)
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", help="comma-separated subset of numpy,ml_dtypes,torch,jax,mlx")
    ap.add_argument("--layouts", help="comma-separated subset of " + ",".join(LAYOUTS))
    ap.add_argument("--json", help="also write the results as JSON to this file")
    a = ap.parse_args(argv)
    res = run(a.peers.split(",") if a.peers else None, a.layouts.split(",") if a.layouts else None)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
