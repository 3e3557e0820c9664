"""uma conversion benchmark: what a shared variable's switch of residency costs, per pair of
backends, and whether it shares memory.

    .venv/bin/python bench/bench_conversions.py [--repeat N | --quick] [--json PATH] [--sizes 1024,16777216]

For every ordered pair (writer, reader) of the backends registered here (``cpu``, ``numpy``,
``numba``, ``jax``, ``torch``, ``mlx``; on a GPU machine also ``cuda``, ``jax-cuda`` and
``torch-cuda``), a float32 shared variable of each size is updated by a
function compiled for the writer (``w = w + 1``, so the writer's copy is the only current
one), then read in the reader's residency (``Container.read``, what a call of a function
compiled for the reader does first). Per pair and size the table gives:

- the conversions ``uma.conversion_stats()`` counted for one switch, and the pairs of
  residencies it went through, in order (the JSON also has the bytes it reports);
- µs per switch: the read that converts, median and best over the repeats (the writer's call
  is not timed);
- whether the reader's copy shares the writer's memory (the addresses of the two copies'
  first bytes compared, not assumed);
- the conversion counted by a second read in the reader's residency (expected: none).

The writer's work is finished before the clock starts, and a JAX reader's value is waited for
before it stops; the benchmark keeps no copy of its own across a switch (the writer's call
releases the stale copies, as in a program's loop). For scale, MLX's own ``mx.array`` of a NumPy array of each size is timed in the
same run (a switch into ``mlx`` is that copy).

JAX on the CPU backend takes a host buffer only when it is aligned to 64 bytes; uma's own host
allocations are. MLX owns its memory, so a switch into ``mlx`` copies; one out of it shares.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

try:
    import uma
except ImportError:  # a source checkout built with `make dev`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import uma

get_linker = uma.runtime.get_linker
#: the backends whose residencies are compared, where registered (the GPU ones on a machine
#: with a GPU and the frameworks' CUDA builds: there a switch among them stays on the device)
BACKENDS = ("cpu", "numpy", "numba", "jax", "torch", "mlx", "cuda", "jax-cuda", "torch-cuda")


def address(value):
    """The address of the first byte of a backend's value (None where it has none)."""
    if isinstance(value, np.ndarray):
        return value.ctypes.data
    if isinstance(value, uma.Array):
        if value.device.type != "cpu":  # a device address, through a DLPack consumer
            try:
                import torch
            except ImportError:
                return None
            return torch.from_dlpack(value).data_ptr()
        return np.asarray(value).ctypes.data
    mod = type(value).__module__
    if mod.startswith("torch"):
        return value.data_ptr()
    if mod.startswith("jax") or mod.startswith("jaxlib"):
        return value.unsafe_buffer_pointer()
    if mod.startswith("mlx"):
        return np.asarray(memoryview(value)).ctypes.data
    return None


def ready(value):
    """Waits until a value's work is done (JAX dispatches asynchronously; GPU work is queued on
    a stream); returns the value."""
    block = getattr(value, "block_until_ready", None)
    if block is not None:
        block()
    elif isinstance(value, uma.Array) and value.device.type == "cuda":
        uma.cuda.synchronize()
    elif getattr(value, "is_cuda", False):  # a torch tensor on a GPU
        import torch
        torch.cuda.synchronize()
    return value


def in_order(stats, start):
    """The (from, to) pairs of ``stats`` (one switch's conversions) in the order they happen:
    from ``start``, each pair's source the previous pair's destination."""
    pairs, out, at = list(stats), [], start
    while pairs:
        nxt = next((p for p in pairs if p[0] == at), pairs[0])
        pairs.remove(nxt)
        out.append(nxt)
        at = nxt[1]
    return out


def one_pair(writer, reader, n, repeat):
    """Measures the switch writer -> reader of an n-element float32 shared variable."""
    w = uma.shared(np.zeros(n, np.float32), "w")
    write = uma.function([], [], updates={w: w + 1}, backend=writer)
    lw, lr = get_linker(writer), get_linker(reader)
    times, counts, nbytes, shared, again, path = [], None, None, None, None, None
    write()
    w.container.read(lr)  # the reader's first read (its lazy set-up) is not timed
    for k in range(repeat):
        write()
        before = ready(w.container.copy_in(lw.residency))  # the writer's work is not timed
        uma.conversion_stats(reset=True)
        t0 = time.perf_counter()
        value = ready(w.container.read(lr))
        t1 = time.perf_counter()
        stats = uma.conversion_stats(reset=True)
        times.append((t1 - t0) * 1e6)
        if k == 0:
            counts = sum(s["conversions"] for s in stats.values())
            nbytes = sorted({s["bytes"] for s in stats.values()})
            a, b = address(before), address(value)
            shared = None if a is None or b is None else a == b
            w.container.read(lr)
            again = sum(s["conversions"] for s in uma.conversion_stats(reset=True).values())
            path = " + ".join(f"{src}->{dst}" for src, dst in in_order(stats, lw.residency))
        before = value = None  # the next write releases the stale copies, as in a program's loop
    expect = np.full(n, repeat + 1, np.float32)
    if not np.array_equal(np.asarray(w.get_value()), expect):
        raise AssertionError(f"{writer} -> {reader}: the value after {repeat + 1} updates is wrong")
    return dict(writer=writer, reader=reader, n=n, path=path, conversions=counts, bytes=nbytes,
                median_us=statistics.median(times), best_us=min(times), shares=shared, second_read=again)


def _mlx():
    try:
        import mlx.core as mx
    except ImportError:
        return None
    return mx


def positive(text):
    """An argparse type: a whole number of at least 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {v}")
    return v


def sizes_list(text):
    """An argparse type: comma-separated element counts, each at least 1."""
    return [positive(t.strip()) for t in text.split(",")]


def size_text(nbytes):
    """``nbytes`` in B, KiB or MiB."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=positive, help="switches timed per pair and size (default 21)")
    ap.add_argument("--quick", action="store_true", help="5 switches (a smoke run; instead of --repeat)")
    ap.add_argument("--sizes", type=sizes_list, default="1024,16777216",
                    help="comma-separated float32 element counts, each at least 1 (default 1 Ki and 16 Mi)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    if args.quick and args.repeat is not None:
        ap.error("give --quick or --repeat, not both")
    repeat = 5 if args.quick else args.repeat or 21
    sizes = args.sizes
    present = [b for b in BACKENDS if b in uma.backends()]
    missing = [b for b in BACKENDS if b not in present]
    print(f"uma conversion benchmark — Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("backends: " + ", ".join(present) + (f" (not registered here: {', '.join(missing)})" if missing else ""))
    rows = []
    for n in sizes:
        print()
        print(f"float32, {n} elements ({size_text(4 * n)}): one switch of residency, writer -> reader")
        print(f"{'writer -> reader':<18} {'through':<26} {'conv.':>5} {'median µs':>11} {'best µs':>10} "
              f"{'shares':>7} {'2nd read':>9}")
        print("-" * 92)
        for wr in present:
            for rd in present:
                if get_linker(wr).residency == get_linker(rd).residency:
                    continue
                r = one_pair(wr, rd, n, repeat)
                rows.append(r)
                shares = {True: "yes", False: "no", None: "n/a"}[r["shares"]]
                print(f"{wr + ' -> ' + rd:<18} {r['path']:<26} {r['conversions']:>5} {r['median_us']:>11.2f} "
                      f"{r['best_us']:>10.2f} {shares:>7} {r['second_read']:>9}")
        mx = _mlx()
        if mx is not None:
            host = np.ones(n, np.float32)
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                m = mx.array(host, dtype=mx.float32)
                mx.eval(m)
                times.append((time.perf_counter() - t0) * 1e6)
                del m
            print(f"{'(MLX: mx.array of a NumPy array)':<45} {statistics.median(times):>11.2f} {min(times):>10.2f}")
            rows.append(dict(reference="mx.array of a NumPy array", n=n, median_us=statistics.median(times),
                             best_us=min(times)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
