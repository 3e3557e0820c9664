"""uma thread-policy benchmark: the digits MLP training step on idle cores and on cores that
other processes keep busy, against the hand-written NumPy step, in the same run.

    .venv/bin/python bench/bench_threads.py [--quick] [--json PATH]

For each model size (batch, hidden units; float64, ReLU, softmax cross-entropy, SGD: the step
of bench_overview.py) and each load:

* ``idle``: nothing else runs;
* ``busy``: one spinning process per CPU (``while True: pass``), started before the timing.

Rows: uma ``cpu`` with its thread policy (``uma.get_num_threads()`` threads at most, as many as
the work fills and as there are free cores), uma ``cpu`` on one thread
(``uma.set_num_threads(1)``), the hand-written NumPy step, and the NumPy step with its BLAS on
one thread (threadpoolctl, when installed). Timing as in bench_overview.py: median and best
repeat, µs per step. The ratio column is NumPy's time over the row's (> 1: faster than NumPy).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overview import NumpyStep, init_params, load_digits, measure, print_table, uma_step  # noqa: E402

CONFIGS = ((64, 64), (512, 64), (1024, 256), (1797, 1024))


def _spin():
    while True:
        pass


class Busy:
    """`n` spinning processes for the duration of a `with` block."""

    def __init__(self, n):
        self.n, self.procs = n, []

    def __enter__(self):
        ctx = mp.get_context("spawn")
        self.procs = [ctx.Process(target=_spin, daemon=True) for _ in range(self.n)]
        for p in self.procs:
            p.start()
        time.sleep(0.5)  # let them start spinning, and the thread policy see it
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.join()


def bench_config(uma, repeat, batch, hidden, seed, blas_limits):
    X, y = load_digits()
    Xb, yb = np.ascontiguousarray(X[:batch]), np.ascontiguousarray(y[:batch])
    params = init_params(X.shape[1], hidden, 10, seed)
    numpy_step = NumpyStep(params, 0.1, 10)
    uma_cpu = uma_step(uma, params, 0.1, 10, "cpu", seed)
    ref = float(numpy_step(Xb, yb))
    got = float(np.asarray(uma_cpu(Xb, yb)))
    if not np.isclose(got, ref, rtol=1e-9):
        raise SystemExit(f"first-step loss mismatch: uma {got!r} vs NumPy {ref!r}")

    rows, results = [], {}

    def run(name, fn):
        med, best, n = measure(lambda: fn(Xb, yb), repeat=repeat)
        results[name] = med
        rows.append((name, med, best, n))

    run("NumPy, hand-written", numpy_step)
    if blas_limits is not None:
        with blas_limits(limits=1, user_api="blas"):
            run("NumPy, BLAS on 1 thread", numpy_step)
    run("uma cpu (thread policy)", uma_cpu)
    default = uma.get_num_threads()
    uma.set_num_threads(1)
    try:
        run("uma cpu, 1 thread", uma_cpu)
    finally:
        uma.set_num_threads(default)
    base = results["NumPy, hand-written"]
    return [(r[0], r[1], r[2], r[3], f"{base / r[1]:.2f}x NumPy") for r in rows], results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timeit repeats (default 7)")
    ap.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    ap.add_argument("--configs", default=",".join(f"{b}x{h}" for b, h in CONFIGS),
                    help="batch x hidden pairs, e.g. 64x64,512x64")
    ap.add_argument("--busy", type=int, default=os.cpu_count(), help="spinning processes of the busy load")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    configs = [tuple(int(v) for v in c.split("x")) for c in args.configs.split(",")]

    import uma

    try:
        from threadpoolctl import threadpool_limits as blas_limits
    except ImportError:
        blas_limits = None
    print(f"uma thread benchmark — Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, uma.get_num_threads() = {uma.get_num_threads()}")
    if blas_limits is None:
        print("note: threadpoolctl missing: no 'NumPy, BLAS on 1 thread' row")
    out = []
    for load in ("idle", "busy"):
        for batch, hidden in configs:
            with Busy(args.busy if load == "busy" else 0):
                rows, results = bench_config(uma, repeat, batch, hidden, args.seed, blas_limits)
            extra = f", {args.busy} spinning processes" if load == "busy" else ""
            print_table(f"Digits MLP step, batch {batch}, {hidden} hidden, float64, {load} cores{extra} "
                        "(µs per step)", rows, [])
            out.append({"load": load, "batch": batch, "hidden": hidden, "us_per_step": results})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
