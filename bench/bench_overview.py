"""uma overview benchmark: zero-copy import overhead and one MLP training step, against peers,
all measured in the same run on the same machine.

    make bench                      # sets up the venv and runs this file
    .venv/bin/python bench/bench_overview.py [--quick] [--json PATH]

Table 1 — import overhead: the cost of wrapping an existing NumPy array (no data copied where
the library allows it): ``uma.asarray(x)`` vs ``np.asarray(x)``, ``torch.from_numpy(x)`` and
``mx.asarray(x)`` (MLX copies into its own memory), for a small and a large float32 array.
``uma.array(x)`` (always copies) is listed for scale.

Table 2 — one training step of the digits MLP (scikit-learn's 1797 8x8 images, batch 64,
64 hidden units, ReLU, softmax cross-entropy, plain SGD; float64 like the example's default):
uma ``cpu`` and ``reference`` backends (the model of ``uma.examples.train``:
``uma.function(..., updates=...)`` on shared variables), a hand-written
NumPy step, and the same graph in PyTensor (default mode and NUMBA mode). Every
implementation starts from the same parameters and the first-step losses are cross-checked.

Timing: ``timeit`` — each repeat times ``number`` calls; the table gives the median and the
best repeat, in microseconds per call. Peers that are not installed are skipped with a note.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import timeit

import numpy as np

# ----------------------------------------------------------------------------- timing


def measure(fn, *, repeat, min_time=0.05):
    """Median and best µs per call of fn() over `repeat` repeats of an auto-sized loop."""
    fn()  # warm up (and compile, for lazily compiling peers)
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= min_time or number >= 1 << 20:
            break
        number *= 2
    gc.collect()
    gc.disable()
    try:
        runs = [timeit.timeit(fn, number=number) / number * 1e6 for _ in range(repeat)]
    finally:
        gc.enable()
    return statistics.median(runs), min(runs), number


def fmt_row(name, median, best, number, note=""):
    return f"{name:<46} {median:>12.2f} {best:>12.2f} {number:>9d}  {note}"


def print_table(title, rows, notes):
    print()
    print(title)
    print(f"{'':<46} {'median µs':>12} {'best µs':>12} {'calls/rep':>9}")
    print("-" * 88)
    for r in rows:
        print(fmt_row(*r))
    for n in notes:
        print(f"  note: {n}")


# ----------------------------------------------------------------------------- peers


def try_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception as e:  # noqa: BLE001 - any failure means "not available here"
        return e


# ----------------------------------------------------------------------------- table 1


def bench_import(uma, repeat):
    rows, notes = [], []
    torch = try_import("torch")
    mx = try_import("mlx.core")
    for label, x in (("1 Ki float32", np.ones(1024, np.float32)),
                     ("16 Mi float32 (64 MiB)", np.ones(1 << 24, np.float32))):
        cands = [
            ("np.asarray", lambda x=x: np.asarray(x)),
            ("uma.asarray", lambda x=x: uma.asarray(x)),
        ]
        if not isinstance(torch, Exception):
            cands.append(("torch.from_numpy", lambda x=x: torch.from_numpy(x)))
        if not isinstance(mx, Exception):
            cands.append(("mx.asarray (copies)", lambda x=x: mx.eval(mx.asarray(x))))
        cands.append(("uma.array (always copies)", lambda x=x: uma.array(x)))
        for name, fn in cands:
            med, best, n = measure(fn, repeat=repeat)
            rows.append((f"{name} [{label}]", med, best, n, ""))
    # The zero-copy claim, checked rather than assumed.
    x = np.arange(8, dtype=np.float32)
    a = uma.asarray(x)
    x[0] = 42.0
    shares = float(np.asarray(a)[0]) == 42.0
    notes.append(f"uma.asarray shares the NumPy buffer: {shares}")
    if isinstance(torch, Exception):
        notes.append(f"torch not available ({torch}); install torch==2.13.0")
    if isinstance(mx, Exception):
        notes.append(f"mlx not available on this machine ({type(mx).__name__}: {mx}); row skipped")
    return rows, notes


# ----------------------------------------------------------------------------- table 2


def load_digits():
    from sklearn.datasets import load_digits as ld

    d = ld()
    X = (d.data / d.data.max()).astype(np.float64)  # scaled to [0, 1] as the example does
    y = d.target.astype(np.int64)
    return X, y


def init_params(n_in, n_hidden, n_out, seed):
    rng = np.random.default_rng(seed)
    return {
        "W1": rng.normal(0, 1 / np.sqrt(n_in), (n_in, n_hidden)),
        "b1": np.zeros(n_hidden),
        "W2": rng.normal(0, 1 / np.sqrt(n_hidden), (n_hidden, n_out)),
        "b2": np.zeros(n_out),
    }


class NumpyStep:
    """The hand-written NumPy step: forward, backward and SGD update, in place."""

    def __init__(self, params, lr, n_out):
        self.p = {k: v.copy() for k, v in params.items()}
        self.lr = lr
        self.n_out = n_out

    def __call__(self, X, y):
        p = self.p
        a1 = X @ p["W1"] + p["b1"]
        h = np.maximum(a1, 0.0)
        z = h @ p["W2"] + p["b2"]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        logp = z - np.log(s)
        n = X.shape[0]
        loss = -logp[np.arange(n), y].mean()
        g = e / s
        g[np.arange(n), y] -= 1.0
        g /= n
        gW2 = h.T @ g
        gb2 = g.sum(axis=0)
        gh = (g @ p["W2"].T) * (a1 > 0)
        gW1 = X.T @ gh
        gb1 = gh.sum(axis=0)
        p["W1"] -= self.lr * gW1
        p["b1"] -= self.lr * gb1
        p["W2"] -= self.lr * gW2
        p["b2"] -= self.lr * gb2
        return loss


def uma_step(uma, params, lr, n_out, backend, seed):
    """The training function of ``uma.examples.train`` (same initial parameters as
    init_params for the same seed), or the same model built here if that is unavailable."""
    try:
        from uma.examples.train import build_model
    except ImportError:
        build_model = None
    if build_model is not None:
        n_in, n_hidden = params["W1"].shape
        got, train, _, _ = build_model(uma, n_in, n_hidden, n_out, lr, seed, "float64", backend)
        for var, name in zip(got, ("W1", "b1", "W2", "b2")):
            if not np.array_equal(var.get_value(), params[name]):
                raise RuntimeError(f"uma.examples.train initialises {name} differently")
        return train
    sym = uma.sym

    def op(name):
        return getattr(sym, name, None) or getattr(uma, name)

    shared = {k: uma.shared(v, name=k) for k, v in params.items()}
    x = sym.matrix("x", dtype="float64")
    y = sym.vector("y", dtype="int64")
    h = op("relu")(op("matmul")(x, shared["W1"]) + shared["b1"])
    z = op("matmul")(h, shared["W2"]) + shared["b2"]
    logp = op("log_softmax")(z, axis=1) if _takes_axis(op("log_softmax")) else op("log_softmax")(z)
    loss = -op("mean")(op("sum")(op("one_hot")(y, n_out, dtype="float64") * logp, axis=1))
    wrt = [shared[k] for k in ("W1", "b1", "W2", "b2")]
    grads = uma.grad(loss, wrt)
    updates = [(v, v - lr * g) for v, g in zip(wrt, grads)]
    return uma.function([x, y], loss, updates=updates, backend=backend)


def _takes_axis(fn):
    import inspect

    try:
        return "axis" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def pytensor_step(pt_mod, params, lr, n_out, mode):
    import pytensor
    import pytensor.tensor as pt

    shared = {k: pytensor.shared(v.copy(), name=k) for k, v in params.items()}
    x = pt.dmatrix("x")
    y = pt.lvector("y")
    h = pt.maximum(x @ shared["W1"] + shared["b1"], 0.0)
    z = h @ shared["W2"] + shared["b2"]
    logp = pt.special.log_softmax(z, axis=1)
    loss = -logp[pt.arange(y.shape[0]), y].mean()
    wrt = [shared[k] for k in ("W1", "b1", "W2", "b2")]
    grads = pytensor.grad(loss, wrt)
    updates = [(v, v - lr * g) for v, g in zip(wrt, grads)]
    return pytensor.function([x, y], loss, updates=updates, mode=mode)


def bench_mlp(uma, repeat, batch, hidden, lr, seed):
    rows, notes = [], []
    X, y = load_digits()
    n_out = 10
    params = init_params(X.shape[1], hidden, n_out, seed)
    Xb = np.ascontiguousarray(X[:batch])
    yb = np.ascontiguousarray(y[:batch])

    impls = []  # (name, callable(X, y) -> loss)
    impls.append(("NumPy, hand-written", NumpyStep(params, lr, n_out)))
    for backend in ("cpu", "reference"):
        try:
            impls.append((f"uma backend={backend}", uma_step(uma, params, lr, n_out, backend, seed)))
        except Exception as e:  # noqa: BLE001
            notes.append(f"uma backend={backend} failed to compile: {type(e).__name__}: {e}")
    pytensor = try_import("pytensor")
    if isinstance(pytensor, Exception):
        notes.append(f"pytensor not available ({pytensor}); `make bench` installs it")
    else:
        for mode, label in ((None, "default (C VM)"), ("NUMBA", "NUMBA")):
            try:
                impls.append((f"PyTensor {label}", pytensor_step(pytensor, params, lr, n_out, mode)))
            except Exception as e:  # noqa: BLE001
                notes.append(f"PyTensor {label} failed: {type(e).__name__}: {e}")

    # Cross-check: from identical parameters, the first step's loss agrees everywhere.
    first = {}
    for name, fn in impls:
        out = fn(Xb, yb)
        if isinstance(out, (list, tuple)):  # a function with extra outputs: loss first
            out = out[0]
        first[name] = float(np.asarray(out))
    ref = first["NumPy, hand-written"]
    for name, v in first.items():
        if not np.isclose(v, ref, rtol=1e-9, atol=1e-12):
            notes.append(f"first-step loss mismatch: {name} {v!r} vs NumPy {ref!r}")
    notes.append("first-step loss " + ", ".join(f"{k}: {v:.6f}" for k, v in first.items()))

    results = {}
    for name, fn in impls:
        med, best, n = measure(lambda fn=fn: fn(Xb, yb), repeat=repeat)
        results[name] = med
        rows.append((name, med, best, n, ""))
    base = results.get("NumPy, hand-written")
    if base:
        rows = [(r[0], r[1], r[2], r[3], f"{base / r[1]:.2f}x NumPy") for r in rows]
    return rows, notes, results


# ----------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timeit repeats (default 7)")
    ap.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat

    import uma

    print(f"uma benchmark — Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")
    vers = []
    for mod in ("torch", "mlx.core", "pytensor", "numba"):
        m = try_import(mod)
        vers.append(f"{mod} {getattr(m, '__version__', 'n/a') if not isinstance(m, Exception) else 'missing'}")
    print("peers: " + ", ".join(vers))

    rows1, notes1 = bench_import(uma, repeat)
    print_table("Import overhead of an existing NumPy array (µs per call)", rows1, notes1)

    rows2, notes2, results = bench_mlp(uma, repeat, args.batch, args.hidden, args.lr, args.seed)
    print_table(f"Digits MLP training step, batch {args.batch}, {args.hidden} hidden, float64 "
                "(µs per step)", rows2, notes2)

    cpu = results.get("uma backend=cpu")
    npy = results.get("NumPy, hand-written")
    if cpu and npy:
        verdict = "beats" if cpu < npy else "does NOT beat"
        print(f"\numa cpu {verdict} the hand-written NumPy step: {cpu:.1f} µs vs {npy:.1f} µs "
              f"({npy / cpu:.2f}x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"import": rows1, "mlp": rows2, "notes": notes1 + notes2}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
