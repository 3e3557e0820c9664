"""uma.fft against numpy.fft on the cpu (and against CuPy / torch on a cuda device when they
are installed), in one run:

    python3 bench/bench_fft.py [--repeat 10] [--device cpu|cuda] [--json out.json]

Rows: rfft and fft of a 2^20-point float64 vector, fftn of a 1024 x 1024 complex128 array.
Timing: one warm-up, then the median of --repeat runs (on cuda each run waits for the device
before the clock stops). Each row also checks uma's result against NumPy's (the largest
difference relative to the largest magnitude), so a fast wrong answer shows.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def timed(fn, sync, repeat):
    fn()
    sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cases(rng):
    v = rng.standard_normal(1 << 20)
    m = rng.standard_normal((1024, 1024)) + 1j * rng.standard_normal((1024, 1024))
    return [("rfft 2^20 float64", "rfft", v), ("fft 2^20 float64", "fft", v), ("fftn 1024x1024 complex128", "fftn", m)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import uma

    rng = np.random.default_rng(0)
    rows = []
    sync = uma.cuda.synchronize if args.device == "cuda" else (lambda: None)
    others = {}
    if args.device == "cuda":
        try:
            import cupy
            others["cupy"] = (lambda x: cupy.asarray(x), cupy.fft, lambda: cupy.cuda.Device().synchronize())
        except Exception:
            pass
        try:
            import torch
            if torch.cuda.is_available():
                others["torch"] = (lambda x: torch.as_tensor(x, device="cuda"), torch.fft, torch.cuda.synchronize)
        except Exception:
            pass
    print(f"{'case':30s} {'uma ms':>10s} {'numpy ms':>10s} " + " ".join(f"{k + ' ms':>10s}" for k in others)
          + f" {'rel err':>9s}")
    for name, fn, x in cases(rng):
        want = getattr(np.fft, fn)(x)
        a = uma.asarray(x, device=args.device)
        t_uma = timed(lambda: getattr(uma.fft, fn)(a), sync, args.repeat)
        t_np = timed(lambda: getattr(np.fft, fn)(x), lambda: None, args.repeat)
        got = getattr(uma.fft, fn)(a)
        got = np.asarray(got.to_device("cpu") if args.device != "cpu" else got)
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        row = {"case": name, "device": args.device, "uma_s": t_uma, "numpy_s": t_np, "rel_err": err}
        for k, (conv, mod, s) in others.items():
            y = conv(x)
            row[f"{k}_s"] = timed(lambda: getattr(mod, fn)(y), s, args.repeat)
        rows.append(row)
        print(f"{name:30s} {t_uma * 1e3:10.2f} {t_np * 1e3:10.2f} "
              + " ".join(f"{row[k + '_s'] * 1e3:10.2f}" for k in others) + f" {err:9.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
