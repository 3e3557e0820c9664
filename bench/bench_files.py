"""Benchmark: loading a .npy file (default 1 GiB of float32) — uma.load(mmap=True) vs
np.load(mmap_mode="r") and np.load, plus uma.load(mmap=False), all in the same run.

Run: python bench/bench_files.py [--mib 1024] [--repeat 5] [--dir /tmp]
Reports milliseconds per load (median and best) and, for the reading loads, GB/s. The mapped
loads are timed twice: the load alone, and the load plus a full read (sum) of the data, so
the lazy page-in cost is visible. The file is in the page cache for every row (it is read
once before timing).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import uma


def bench(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = fn()
        ts.append(time.perf_counter() - t)
        del r
    return statistics.median(ts), min(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="file size in MiB (default 1024)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()

    n = args.mib * (1 << 20) // 4
    path = os.path.join(args.dir, f"uma_bench_{os.getpid()}.npy")
    try:
        np.save(path, np.random.default_rng(0).random(n, dtype=np.float32))
        nbytes = n * 4
        with open(path, "rb") as f:  # warm the page cache
            while f.read(1 << 24):
                pass
        rows = [
            ("uma.load(mmap=True)", lambda: uma.load(path, mmap=True), False),
            ("np.load(mmap_mode='r')", lambda: np.load(path, mmap_mode="r"), False),
            ("uma.load(mmap=True) + sum", lambda: uma.sum(uma.load(path, mmap=True)), True),
            ("np.load(mmap_mode='r') + sum", lambda: np.load(path, mmap_mode="r").sum(), True),
            ("uma.load(mmap=False)", lambda: uma.load(path, mmap=False), True),
            ("np.load", lambda: np.load(path), True),
        ]
        print(f"uma file-load benchmark: {args.mib} MiB float32 .npy, {os.cpu_count()} CPUs, "
              f"NumPy {np.__version__}")
        print(f"{'load':34s} {'median ms':>10s} {'best ms':>10s} {'GB/s (best)':>12s}")
        print("-" * 70)
        for name, fn, reads in rows:
            med, best = bench(fn, args.repeat)
            rate = f"{nbytes / best / 1e9:12.2f}" if reads else f"{'-':>12s}"
            print(f"{name:34s} {med * 1e3:10.3f} {best * 1e3:10.3f} {rate}")
    finally:
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
