"""Host -> GPU and GPU -> host transfer rates: uma against torch (pageable and pinned),
CuPy and JAX, with the pinned-DMA rate measured in the same run as the ceiling.

    python3 bench/bench_cuda_transfer.py [--sizes 1,16,256,1024,4096] [--repeat 5] [--json out.json]

Sizes in MiB of float32. Each figure is the median of --repeat timed runs after one warm-up,
in GB/s (10^9 bytes per second), wall clock around a call that returns a usable result.
Device -> host copies read a fresh device array each time where the peer caches the host
copy of an array (a JAX array keeps it after the first np.asarray).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def timed(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def timed_fresh(make, consume, repeat):
    """Median time of consume(make()) with make() outside the clock (one warm-up)."""
    consume(make())
    ts = []
    for _ in range(repeat):
        obj = make()
        t0 = time.perf_counter()
        consume(obj)
        ts.append(time.perf_counter() - t0)
        del obj
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,16,256,1024,4096")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", default=None, help="also write the tables here as JSON")
    args = ap.parse_args()
    import uma
    if not uma.cuda.is_available():
        raise SystemExit(f"no GPU: {uma.cuda.unavailable_reason()}")
    peers = {}
    try:
        import torch
        peers["torch"] = torch
    except ImportError:
        pass
    try:
        import cupy
        peers["cupy"] = cupy
    except ImportError:
        pass
    try:
        import jax
        peers["jax"] = jax
    except ImportError:
        pass

    h2d_rows, d2h_rows = [], []
    for mib in (int(s) for s in args.sizes.split(",")):
        n = (mib << 20) // 4
        x = np.empty(n, dtype=np.float32)  # touched, non-constant data (every page is written)
        x[:] = np.arange(n, dtype=np.float32) * np.float32(1e-3)
        nbytes = x.nbytes
        gbs = lambda t: nbytes / t / 1e9  # noqa: E731
        h2d, d2h = {}, {}
        h2d["uma"] = gbs(timed(lambda: uma.asarray(x, device="cuda"), args.repeat))
        g = uma.asarray(x, device="cuda")
        d2h["uma"] = gbs(timed(lambda: np.asarray(g), args.repeat))
        if "torch" in peers:
            torch = peers["torch"]
            pinned = torch.from_numpy(x).pin_memory()
            dev = torch.empty(n, dtype=torch.float32, device="cuda")
            host_pinned = torch.empty(n, dtype=torch.float32).pin_memory()

            def dma_h2d():
                dev.copy_(pinned, non_blocking=True)
                torch.cuda.synchronize()

            def dma_d2h():
                host_pinned.copy_(dev, non_blocking=True)
                torch.cuda.synchronize()
            h2d["pinned DMA (ceiling)"] = gbs(timed(dma_h2d, args.repeat))
            d2h["pinned DMA (ceiling)"] = gbs(timed(dma_d2h, args.repeat))

            def t_pageable():
                torch.from_numpy(x).cuda()
                torch.cuda.synchronize()

            def t_pinned():
                pinned.cuda(non_blocking=True)
                torch.cuda.synchronize()
            h2d["torch .cuda() pageable"] = gbs(timed(t_pageable, args.repeat))
            h2d["torch .cuda() pinned"] = gbs(timed(t_pinned, args.repeat))
            tdev = torch.from_numpy(x).cuda()
            d2h["torch .cpu().numpy()"] = gbs(timed(lambda: tdev.cpu().numpy(), args.repeat))
            del pinned, dev, host_pinned, tdev
        if "cupy" in peers:
            cupy = peers["cupy"]

            def c_h2d():
                cupy.asarray(x)
                cupy.cuda.Device().synchronize()
            h2d["cupy.asarray"] = gbs(timed(c_h2d, args.repeat))
            cx = cupy.asarray(x)
            d2h["cupy.asnumpy"] = gbs(timed(lambda: cupy.asnumpy(cx), args.repeat))
            del cx
        if "jax" in peers:
            jax = peers["jax"]
            h2d["jax.device_put"] = gbs(timed(lambda: jax.device_put(x).block_until_ready(), args.repeat))
            # a JAX array caches its host copy: time the first np.asarray of a fresh device array
            d2h["np.asarray(jax)"] = gbs(timed_fresh(lambda: jax.device_put(x).block_until_ready(), np.asarray,
                                                     args.repeat))
        h2d_rows.append((mib, h2d))
        d2h_rows.append((mib, d2h))
        del g

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"unit": "GB/s", "h2d": {str(m): r for m, r in h2d_rows},
                       "d2h": {str(m): r for m, r in d2h_rows}}, f, indent=1)
    for title, rows in (("host -> GPU (GB/s, float32)", h2d_rows), ("GPU -> host (GB/s, float32)", d2h_rows)):
        cols = list(rows[0][1])
        print(f"\n{title}")
        print("| MiB | " + " | ".join(cols) + " |")
        print("|---:|" + "---:|" * len(cols))
        for mib, r in rows:
            print(f"| {mib} | " + " | ".join(f"{r.get(c, float('nan')):.1f}" for c in cols) + " |")


if __name__ == "__main__":
    main()
