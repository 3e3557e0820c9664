"""Where the GPU training step's time goes: the kernels of one step of bench_gpu_step.py's
models on uma ``cuda`` (its defaults), JAX ``jit`` and PyTorch eager, as the CUDA profiler
records them (PyTorch's profiler reads every kernel of the process through CUPTI, uma's and
JAX's included).

    python3 bench/profile_gpu_step.py [--models 64-64-10 4096-4096-10] [--steps 10] [--top 14]

Per implementation: ms per step (bench_gpu_step's timing), then, over --steps profiled steps,
the wall time per step, the GPU's busy time per step (kernels, copies and sets summed), the
span from the first GPU operation to the last, the GPU operations per step, and the --top
kernels by time (µs per step, launches per step, name). float32 with exact products, and the
wide models with TF32 products too. Needs torch (the profiler); JAX is optional.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu_step as B  # noqa: E402


def kernel_table(torch, step, sync, steps, top, label):
    """Profiles ``steps`` calls of ``step`` and prints the GPU summary and the top kernels."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        step()
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        wall = (time.perf_counter() - t0) / steps * 1e3
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as fh:
            events = json.load(fh)["traceEvents"]
    finally:
        os.remove(path)
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    total = {}
    for e in gpu:
        key = (e["cat"], e["name"][:100])
        count, dur = total.get(key, (0, 0.0))
        total[key] = (count + 1, dur + e["dur"])
    busy = sum(e["dur"] for e in gpu) / steps / 1e3
    span = (max(e["ts"] + e["dur"] for e in gpu) - min(e["ts"] for e in gpu)) / steps / 1e3 if gpu else 0.0
    print(f"--- {label}: wall {wall:.3f} ms/step (profiled), GPU busy {busy:.3f} ms/step, "
          f"span {span:.3f} ms/step, {len(gpu) / steps:.1f} GPU operations/step")
    for (cat, name), (count, dur) in sorted(total.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"   {dur / steps:9.1f} us  x{count / steps:4.1f}  {cat[:6]:<6} {name}")
    sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*", default=["64-64-10", "4096-4096-10"], choices=list(B.MODELS))
    ap.add_argument("--steps", type=int, default=10, help="profiled steps per implementation (default 10)")
    ap.add_argument("--top", type=int, default=14, help="kernels listed per implementation (default 14)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.top < 1:
        ap.error("--steps and --top must be at least 1")
    import torch
    import uma
    if not uma.cuda.is_available():
        raise SystemExit(f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        import jax
        jax.devices("gpu")
    except Exception as e:  # noqa: BLE001 (no jax, or jax without a GPU)
        print(f"jax on the GPU: {e}")
        jax = None
    for name in args.models:
        nin, nh, nout, batch, act, loss_kind = B.MODELS[name]
        p, X, Y = B.init(nin, nh, nout, batch)
        uX, uY = uma.asarray(X, device="cuda"), uma.asarray(Y, device="cuda")
        for prec in ("highest", "tf32") if nh > 1000 else ("highest",):
            uma.cuda.set_matmul_precision(prec)
            f = B.uma_model(uma, p, act, loss_kind, nout)
            f(uX, uY)
            med, best = B.per_step(lambda: f(uX, uY), uma.cuda.synchronize, 3)
            print(f"=== uma cuda {name} {prec}: {med:.3f} ms/step (best {best:.3f})")
            kernel_table(torch, lambda: f(uX, uY), uma.cuda.synchronize, args.steps, args.top, f"uma {name} {prec}")
        uma.cuda.set_matmul_precision("highest")
        if jax is not None:
            for col, prec in (("JAX jit f32", jax.lax.Precision.HIGHEST), ("JAX jit TF32", None)):
                if prec is None and nh <= 1000:
                    continue
                js, state = B.jax_model(jax, p, X, Y, act, loss_kind, nout, prec)
                js()
                sync = lambda: jax.block_until_ready(state["p"])  # noqa: E731
                med, best = B.per_step(js, sync, 3)
                print(f"=== {col} {name}: {med:.3f} ms/step (best {best:.3f})")
                kernel_table(torch, js, sync, args.steps, args.top, f"{col} {name}")
        ts = B.torch_model(torch, p, X, Y, act, loss_kind, nout)
        ts()
        med, best = B.per_step(ts, torch.cuda.synchronize, 3)
        print(f"=== torch eager {name}: {med:.3f} ms/step (best {best:.3f})")
        kernel_table(torch, ts, torch.cuda.synchronize, args.steps, args.top, f"torch eager {name}")


if __name__ == "__main__":
    main()
