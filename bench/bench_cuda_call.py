"""Per-call time of small ``cuda`` functions: the compiled Program (``backend="cuda"``, one
``Program.run`` per call) against the same graph evaluated node by node with the eager ops
(``CudaLinker.compile_eager``), measured in the same process on a GPU machine.

    python3 bench/bench_cuda_call.py [--repeat 7] [--json PATH]

Rows: ``function([], [], updates={c: c + 1})`` on a float64 scalar shared variable, and one
SGD step of a 64-64-10 MLP (ReLU, softmax cross-entropy, float32) at batch 128 whose batch
is a pair of device arrays made once (no transfer per call). Each is timed two ways, µs per
call (median and best of the repeats): *queued* (a loop of calls, then one
``uma.cuda.synchronize()``: what a training loop pays) and *synced* (each call followed by a
synchronize: the latency of one call). tests/python/test_cuda.py checks that the two give
the same bits.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import time

import numpy as np

import uma
from uma.runtime.linkers.cuda import CudaLinker


class EagerCuda(CudaLinker):
    """The cuda linker evaluating node by node with the eager ops (no Program)."""

    def compile(self, fgraph):
        return self.compile_eager(fgraph)


def per_call(fn, sync, *, repeat, each):
    """Median and best µs per call of ``fn`` (with ``sync()`` after every call when ``each``,
    else once after the loop), over ``repeat`` loops sized to about 50 ms."""
    def loop(number):  # seconds for `number` calls
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
            if each:
                sync()
        sync()
        return time.perf_counter() - t0

    fn()
    sync()
    number = 1
    while loop(number) < 0.05 and number < 1 << 18:
        number *= 2
    gc.collect()
    gc.disable()
    try:
        runs = [loop(number) / number * 1e6 for _ in range(repeat)]
    finally:
        gc.enable()
    return statistics.median(runs), min(runs), number


def counter(backend):
    c = uma.shared(np.array(0.0), "c")
    return uma.function([], [], updates={c: c + 1}, backend=backend), ()


def mlp(backend, batch=128, n_in=64, n_hidden=64, n_out=10, seed=0):
    rng = np.random.default_rng(seed)
    sym = uma.sym
    W1 = uma.shared((rng.standard_normal((n_in, n_hidden)) * 0.1).astype(np.float32), "W1")
    b1 = uma.shared(np.zeros(n_hidden, np.float32), "b1")
    W2 = uma.shared((rng.standard_normal((n_hidden, n_out)) * 0.1).astype(np.float32), "W2")
    b2 = uma.shared(np.zeros(n_out, np.float32), "b2")
    params = [W1, b1, W2, b2]
    x = sym.matrix("x", dtype="float32", shape=(None, n_in))
    y = sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(sym.relu(x @ W1 + b1) @ W2 + b2, y))
    grads = uma.grad(loss, params)
    step = uma.function([x, y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)], backend=backend)
    X = uma.asarray(rng.standard_normal((batch, n_in)).astype(np.float32), device="cuda")
    Y = uma.asarray(rng.integers(0, n_out, batch), device="cuda")
    return step, (X, Y)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    if not uma.cuda.is_available():
        raise SystemExit(f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
    sync = uma.cuda.synchronize
    results = {}
    print(f"{'function':<34} {'linker':<22} {'queued µs':>10} {'best':>8} {'synced µs':>10} {'best':>8}")
    for name, make in (("counter c = c + 1 (float64)", counter), ("MLP 64-64-10 SGD, batch 128, f32", mlp)):
        for label, backend in (("cuda Program", "cuda"), ("eager ops, node by node", EagerCuda())):
            fn, args_ = make(backend)
            call = lambda fn=fn, a=args_: fn(*a)  # noqa: E731
            q = per_call(call, sync, repeat=args.repeat, each=False)
            s = per_call(call, sync, repeat=args.repeat, each=True)
            results[f"{name} | {label}"] = {"queued_us": q[0], "queued_best_us": q[1], "synced_us": s[0],
                                            "synced_best_us": s[1], "calls_per_loop": [q[2], s[2]]}
            print(f"{name:<34} {label:<22} {q[0]:>10.1f} {q[1]:>8.1f} {s[0]:>10.1f} {s[1]:>8.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
