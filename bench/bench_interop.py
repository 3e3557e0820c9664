"""uma interop benchmark: the cost of crossing the boundary, against peers, in one run.

    .venv/bin/python bench/bench_interop.py [--size-gib 1] [--repeat 5] [--json PATH]

Table 1 — import overhead (size-independent: nothing is copied): microseconds per call,
best of `repeat` repeats of an auto-sized loop, for wrapping an existing array:
``uma.asarray(np_array)``, ``uma.from_dlpack(np_array)``, ``uma.from_dlpack(torch_tensor)``
against ``torch.from_numpy``, ``torch.from_dlpack`` (of a NumPy array and of a uma array),
``np.from_dlpack(uma_array)``, ``mx.asarray`` / ``mx.array`` (MLX copies), ``jnp.asarray``
and ``jax.dlpack.from_dlpack``, and pyarrow's zero-copy ``to_numpy(zero_copy_only=True)``.
Each row says whether the result shares the source's memory (checked, not assumed).

Table 2 — copy bandwidth: GB/s (1e9 bytes/s, read size) for a full copy of a `size-gib`
float32 array into new memory: ``uma.array`` vs ``np.array``, ``torch.tensor``,
``torch.from_numpy(x).clone()``, ``mx.array`` — with the machine's ceiling measured in the
same run: ``np.copyto`` and ``ctypes.memmove`` into warm (already touched) preallocated memory.
A copy into new memory also pays for first-touch page faults, which the ceiling does not.

Peers that are not installed are skipped with a note.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import sys
import time
import timeit
import warnings

import numpy as np

try:
    import uma
except ImportError:  # a source checkout built with `make dev`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import uma


def best_us(fn, repeat, min_time=0.05):
    """Best µs per call over `repeat` repeats of a loop sized to run >= min_time."""
    fn()
    number = 1
    while timeit.timeit(fn, number=number) < min_time and number < 1 << 20:
        number *= 2
    gc.collect()
    gc.disable()
    try:
        return min(timeit.timeit(fn, number=number) / number * 1e6 for _ in range(repeat)), number
    finally:
        gc.enable()


def best_seconds(fn, repeat):
    """(first, best) wall time of one call over `repeat` calls (each result dropped before the
    next). The first call may pay for fresh pages; later ones may reuse a library's cache."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - t0)
        del r
    return times[0], min(times)


def try_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception:
        return None


def ptr_of(x):
    """Address of an array's first element, for numpy / uma / torch / jax / mlx / pyarrow results."""
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if isinstance(x, uma.Array):
        return x._data_ptr
    if hasattr(x, "data_ptr"):
        return x.data_ptr()
    if hasattr(x, "unsafe_buffer_pointer"):
        return x.unsafe_buffer_pointer()
    try:
        return np.asarray(memoryview(x)).__array_interface__["data"][0]
    except Exception:
        return None


def import_overhead(repeat, notes):
    rows = []
    x = np.ones((256, 256), dtype=np.float32)
    xp = x.__array_interface__["data"][0]
    u = uma.array(x)
    up = u._data_ptr

    def add(name, fn, src_ptr):
        try:
            r = fn()
            shares = ptr_of(r) == src_ptr
            us, n = best_us(fn, repeat)
            rows.append({"call": name, "us": us, "number": n, "shares": shares})
        except Exception as e:
            notes.append(f"{name}: {type(e).__name__}: {e}")

    add("uma.asarray(np_array)", lambda: uma.asarray(x), xp)
    add("uma.from_dlpack(np_array)", lambda: uma.from_dlpack(x), xp)
    add("np.asarray(np_array)  [no-op floor]", lambda: np.asarray(x), xp)
    add("np.from_dlpack(np_array)", lambda: np.from_dlpack(x), xp)
    add("np.asarray(uma_array)", lambda: np.asarray(u), up)
    add("np.from_dlpack(uma_array)", lambda: np.from_dlpack(u), up)
    torch = try_import("torch")
    if torch is None:
        notes.append("torch not installed: its rows are skipped")
    else:
        t = torch.ones((256, 256))
        tp = t.data_ptr()
        add("uma.from_dlpack(torch_tensor)", lambda: uma.from_dlpack(t), tp)
        add("uma.asarray(torch_tensor)", lambda: uma.asarray(t), tp)
        add("torch.from_numpy(np_array)", lambda: torch.from_numpy(x), xp)
        add("torch.from_dlpack(np_array)", lambda: torch.from_dlpack(x), xp)
        add("torch.from_dlpack(uma_array)", lambda: torch.from_dlpack(u), up)
    mx = try_import("mlx.core")
    if mx is None:
        notes.append("mlx not installed: its rows are skipped")
    else:
        add("mx.asarray(np_array)", lambda: mx.asarray(x), xp)
        add("mx.array(uma_array)", lambda: mx.array(u), up)
    jax = try_import("jax")
    if jax is None:
        notes.append("jax not installed: its rows are skipped")
    else:
        import jax.dlpack
        import jax.numpy as jnp
        j = jnp.ones((256, 256), dtype=jnp.float32)
        jp = j.unsafe_buffer_pointer()
        add("uma.from_dlpack(jax_array)", lambda: uma.from_dlpack(j), jp)
        add("jnp.asarray(np_array)", lambda: jnp.asarray(x), xp)
        add("jax.dlpack.from_dlpack(np_array)", lambda: jax.dlpack.from_dlpack(x), xp)
        add("jax.dlpack.from_dlpack(uma_array)", lambda: jax.dlpack.from_dlpack(u), up)
    pa = try_import("pyarrow")
    if pa is None:
        notes.append("pyarrow not installed: its row is skipped")
    else:
        arr = pa.array(np.ones(65536, dtype=np.float32))
        ap = arr.buffers()[1].address
        add("pyarrow Array.to_numpy(zero_copy_only=True)", lambda: arr.to_numpy(zero_copy_only=True), ap)
    return rows


def copy_bandwidth(size_gib, repeat, notes):
    n = int(size_gib * (1 << 30)) // 4
    src = np.ones(n, dtype=np.float32)
    src[::1024] = np.arange(len(src[::1024]), dtype=np.float32)  # not all equal
    nbytes = src.nbytes
    rows = []

    def add(name, fn, check=True):
        try:
            first, s = best_seconds(fn, repeat)
            r = fn()
            ok = (not check) or bool(np.array_equal(np.asarray(r)[:: 1 << 20], src[:: 1 << 20]))
            del r
            rows.append({"call": name, "first_s": first, "s": s, "gbps": nbytes / s / 1e9, "ok": ok})
        except Exception as e:
            notes.append(f"{name}: {type(e).__name__}: {e}")

    dst = np.empty_like(src)
    dst.fill(0)  # warm: every page touched
    add("uma.array(x)", lambda: uma.array(src))  # first: before any other big allocation
    add("ceiling: np.copyto(warm_dst, x)", lambda: np.copyto(dst, src) or dst)
    dp, sp = dst.ctypes.data, src.ctypes.data
    add("ceiling: ctypes.memmove(warm_dst, x)", lambda: ctypes.memmove(dp, sp, nbytes) and dst)
    add("np.array(x)", lambda: np.array(src))
    torch = try_import("torch")
    if torch is None:
        notes.append("torch not installed: its rows are skipped")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            add("torch.tensor(x)", lambda: torch.tensor(src))
        add("torch.from_numpy(x).clone()", lambda: torch.from_numpy(src).clone())
    mx = try_import("mlx.core")
    if mx is None:
        notes.append("mlx not installed: its row is skipped")
    else:
        def mlx_copy():
            a = mx.array(src)
            mx.eval(a)
            return a
        add("mx.array(x)", mlx_copy, check=False)
    del dst
    return rows, nbytes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    notes = []
    print(f"uma interop benchmark — {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"NumPy {np.__version__}")
    rows = import_overhead(a.repeat, notes)
    print("\nTable 1 — import overhead (best of %d, µs per call; 256x256 float32; 'shares' checked)" % a.repeat)
    print(f"{'call':<46} {'µs/call':>9} {'shares':>7}")
    for r in rows:
        print(f"{r['call']:<46} {r['us']:>9.2f} {'yes' if r['shares'] else 'COPY':>7}")
    crows, nbytes = copy_bandwidth(a.size_gib, a.repeat, notes)
    print(f"\nTable 2 — copy of {nbytes / (1 << 30):.2f} GiB float32 into new memory (best of {a.repeat}; GB/s = 1e9 B/s)")
    print(f"{'call':<46} {'first ms':>9} {'best ms':>9} {'GB/s':>8}  values")
    for r in crows:
        print(f"{r['call']:<46} {r['first_s'] * 1e3:>9.1f} {r['s'] * 1e3:>9.1f} {r['gbps']:>8.2f}  "
              f"{'ok' if r['ok'] else 'WRONG'}")
    print("(GB/s from the best call; uma.array's later calls reuse its caching allocator's warm block)")
    if notes:
        print("\nnotes:")
        for n in notes:
            print("  " + n)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"import": rows, "copy": crows, "notes": notes}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
