"""GPU compute: uma's CUDA kernels and cuBLAS matmul against torch (and CuPy) in one run.

    python3 bench/bench_cuda_ops.py [--gib 1] [--repeat 10] [--json out.json]

- elementwise add and a full sum over --gib GiB of float32 (the add reads 2 and writes 1
  buffer of that size), with the device-to-device copy rate (torch's copy_) as the ceiling;
- matmul float32 / bfloat16 at 4096^3 and 8192^3 (TFLOP/s);
- an MLP training step (SGD, softmax cross-entropy): uma.function(backend="cuda") against
  the same step in torch eager on the GPU, batch 1024 for 64->256->10 and 4096->4096->10,
  with the host<->device bytes uma moved per step (memory_stats("cuda")).

Timing: one warm-up, then the median of --repeat runs, each synchronised with the GPU
(uma.cuda.synchronize / torch.cuda.synchronize) before the clock stops. The add and sum rows
marked "queued" time 10 calls queued back to back and one synchronisation, per call: the
kernel's throughput without the latency of a lone call.
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


def queued(fn, sync, repeat, k=10):
    fn()
    sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / k)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import uma
    import torch
    try:
        import cupy
    except ImportError:
        cupy = None
    usync = lambda: uma.cuda.synchronize()  # noqa: E731
    tsync = torch.cuda.synchronize
    res = {"gpu": torch.cuda.get_device_name(0), "elementwise": {}, "matmul": {}, "mlp": {}}
    n = int(args.gib * (1 << 30)) // 4
    nbytes = n * 4
    ta = torch.rand(n, device="cuda")
    tb = torch.rand(n, device="cuda")
    ua = uma.from_dlpack(ta) if hasattr(uma, "from_dlpack") else uma.asarray(ta.cpu().numpy(), device="cuda")
    ub = uma.from_dlpack(tb) if hasattr(uma, "from_dlpack") else uma.asarray(tb.cpu().numpy(), device="cuda")
    tc = torch.empty_like(ta)
    t_copy = timed(lambda: tc.copy_(ta), tsync, args.repeat)
    rows = {"copy (torch copy_, ceiling)": 2 * nbytes / t_copy / 1e9}
    rows["add uma"] = 3 * nbytes / timed(lambda: uma.add(ua, ub), usync, args.repeat) / 1e9
    rows["add torch"] = 3 * nbytes / timed(lambda: torch.add(ta, tb), tsync, args.repeat) / 1e9
    rows["sum uma"] = nbytes / timed(lambda: uma.sum(ua), usync, args.repeat) / 1e9
    rows["sum torch"] = nbytes / timed(lambda: torch.sum(ta), tsync, args.repeat) / 1e9
    rows["add uma (queued)"] = 3 * nbytes / queued(lambda: uma.add(ua, ub), usync, args.repeat) / 1e9
    rows["add torch (queued)"] = 3 * nbytes / queued(lambda: torch.add(ta, tb), tsync, args.repeat) / 1e9
    rows["sum uma (queued)"] = nbytes / queued(lambda: uma.sum(ua), usync, args.repeat) / 1e9
    rows["sum torch (queued)"] = nbytes / queued(lambda: torch.sum(ta), tsync, args.repeat) / 1e9
    if cupy is not None:
        ca, cb = cupy.from_dlpack(ta), cupy.from_dlpack(tb)
        csync = cupy.cuda.Device().synchronize
        rows["add cupy"] = 3 * nbytes / timed(lambda: cupy.add(ca, cb), csync, args.repeat) / 1e9
        rows["sum cupy"] = nbytes / timed(lambda: cupy.sum(ca), csync, args.repeat) / 1e9
    np.testing.assert_allclose(float(uma.sum(ua)), float(torch.sum(ta.double())), rtol=1e-4)
    res["elementwise"] = {k: round(v, 1) for k, v in rows.items()}
    del ta, tb, tc, ua, ub
    uma.clear_cache("cuda")
    torch.cuda.empty_cache()

    for dt in ("float32", "bfloat16"):
        for m in (4096, 8192):
            tt = getattr(torch, dt)
            x = torch.randn(m, m, device="cuda").to(tt)
            y = torch.randn(m, m, device="cuda").to(tt)
            ux, uy = uma.from_dlpack(x), uma.from_dlpack(y)
            flop = 2 * m ** 3
            reps = max(3, args.repeat // 2)
            tu = timed(lambda: uma.matmul(ux, uy), usync, reps)
            tq = timed(lambda: torch.matmul(x, y), tsync, reps)
            res["matmul"][f"{dt} {m}^3"] = {"uma TFLOP/s": round(flop / tu / 1e12, 1),
                                           "torch TFLOP/s": round(flop / tq / 1e12, 1)}
            del x, y, ux, uy
    uma.clear_cache("cuda")
    torch.cuda.empty_cache()

    for name, (nin, nh, nout) in {"64->256->10": (64, 256, 10), "4096->4096->10": (4096, 4096, 10)}.items():
        bs = 1024
        rng = np.random.default_rng(0)
        X = rng.standard_normal((bs, nin)).astype(np.float32)
        Y = rng.integers(0, nout, bs)
        W1n = (rng.standard_normal((nin, nh)) * 0.05).astype(np.float32)
        W2n = (rng.standard_normal((nh, nout)) * 0.05).astype(np.float32)
        sym = uma.sym
        W1, b1 = uma.shared(W1n, "W1"), uma.shared(np.zeros(nh, np.float32), "b1")
        W2, b2 = uma.shared(W2n, "W2"), uma.shared(np.zeros(nout, np.float32), "b2")
        params = [W1, b1, W2, b2]
        x = sym.matrix("x", dtype="float32", shape=(None, nin))
        y = sym.vector("y", dtype="int64")
        loss = sym.mean(sym.softmax_cross_entropy(sym.relu(x @ W1 + b1) @ W2 + b2, y))
        grads = uma.grad(loss, params)
        step = uma.function([x, y], loss, updates=[(p, p - 0.01 * g) for p, g in zip(params, grads)], backend="cuda")
        # inputs already on the GPU (as torch's are), and from NumPy (one transfer per step)
        ux, uy = uma.asarray(X, device="cuda"), uma.asarray(Y, device="cuda")
        t_uma = timed(lambda: step(ux, uy), usync, args.repeat)
        t_uma_np = timed(lambda: step(X, Y), usync, args.repeat)
        s0 = uma.memory_stats("cuda")
        step(ux, uy)
        s1 = uma.memory_stats("cuda")
        moved = (s1["host_to_device_bytes"] - s0["host_to_device_bytes"]) + (
            s1["device_to_host_bytes"] - s0["device_to_host_bytes"])
        tX, tY = torch.from_numpy(X).cuda(), torch.from_numpy(Y).cuda()
        tp = [torch.from_numpy(W1n).cuda().requires_grad_(), torch.zeros(nh, device="cuda", requires_grad=True),
              torch.from_numpy(W2n).cuda().requires_grad_(), torch.zeros(nout, device="cuda", requires_grad=True)]

        def tstep():
            h = torch.relu(tX @ tp[0] + tp[1])
            lo = torch.nn.functional.cross_entropy(h @ tp[2] + tp[3], tY)
            gs = torch.autograd.grad(lo, tp)
            with torch.no_grad():
                for p, g in zip(tp, gs):
                    p.sub_(0.01 * g)
            return lo
        t_torch = timed(tstep, tsync, args.repeat)
        res["mlp"][f"batch {bs}, {name}"] = {
            "uma ms/step (inputs on GPU)": round(t_uma * 1e3, 3), "uma ms/step (inputs from NumPy)": round(t_uma_np * 1e3, 3),
            "torch eager ms/step": round(t_torch * 1e3, 3), "uma bytes moved/step (inputs on GPU)": moved}
    print(json.dumps(res, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
