"""The CPU training-step benchmark: the digits MLP step in both loss formulations, at two batch
sizes, on idle and on busy cores, against the hand-written NumPy step and the peers, in the
same run.

    .venv/bin/python bench/bench_step.py [--quick] [--batches 64 128] [--loads idle busy]
                                         [--json PATH]

The model is the one of ``uma.examples.train`` (scikit-learn's digits, 64 inputs, 64 hidden
units, ReLU, 10 classes, float64, plain SGD with learning rate 0.1), written two ways:

* ``one-hot``: ``-mean(sum(one_hot(y) * log_softmax(z, axis=1), axis=1))``, the textbook form;
* ``sce``: ``mean(softmax_cross_entropy(z, y))`` with integer labels (PyTorch's
  ``cross_entropy``; PyTensor and JAX pick ``log_softmax(z)[arange(n), y]``).

Rows per batch, load and formulation: the hand-written NumPy step (the closed form a person
writes: softmax minus one-hot; the same code in both formulations), uma ``cpu``, PyTensor's C
and NUMBA modes, JAX ``jit`` of value_and_grad + SGD, and PyTorch eager (autograd) with
PyTorch's default threads and with one thread. Every row starts from the same parameters and its first
loss is checked against NumPy's (1e-9). ``busy``: one spinning process per CPU
(``while True: pass``) for the duration of that block. Timing: bench_overview's ``measure``
(median and best of the repeats, µs per step). The ratio column is NumPy's time over the
row's (> 1: faster than NumPy).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_call import JaxStep, TorchStep  # noqa: E402
from bench_overview import NumpyStep, init_params, load_digits, measure, print_table, try_import  # noqa: E402
from bench_threads import Busy  # noqa: E402

FORMULATIONS = ("one-hot", "sce")
_torch = try_import("torch")
DEFAULT_TORCH_THREADS = 1 if isinstance(_torch, Exception) else _torch.get_num_threads()
N_OUT, HIDDEN, LR, SEED = 10, 64, 0.1, 0


def uma_step(uma, params, formulation):
    sym = uma.sym
    sh = {k: uma.shared(v.copy(), name=k) for k, v in params.items()}
    x = sym.matrix("x", dtype="float64", shape=(None, params["W1"].shape[0]))
    y = sym.vector("y", dtype="int64")
    z = sym.relu(x @ sh["W1"] + sh["b1"]) @ sh["W2"] + sh["b2"]
    if formulation == "one-hot":
        loss = -sym.mean(sym.sum(sym.one_hot(y, N_OUT, dtype="float64") * sym.log_softmax(z, axis=1), axis=1))
    else:
        loss = sym.mean(sym.softmax_cross_entropy(z, y))
    wrt = [sh[k] for k in ("W1", "b1", "W2", "b2")]
    grads = uma.grad(loss, wrt)
    return uma.function([x, y], loss, updates=[(v, v - LR * g) for v, g in zip(wrt, grads)])


def pytensor_step(params, formulation, mode):
    import pytensor
    import pytensor.tensor as pt

    sh = {k: pytensor.shared(v.copy(), name=k) for k, v in params.items()}
    x, y = pt.dmatrix("x"), pt.lvector("y")
    z = pt.maximum(x @ sh["W1"] + sh["b1"], 0.0) @ sh["W2"] + sh["b2"]
    logp = pt.special.log_softmax(z, axis=1)
    if formulation == "one-hot":
        onehot = pt.eq(y[:, None], pt.arange(N_OUT)[None, :]).astype("float64")
        loss = -pt.mean(pt.sum(onehot * logp, axis=1))
    else:
        loss = -logp[pt.arange(y.shape[0]), y].mean()
    wrt = [sh[k] for k in ("W1", "b1", "W2", "b2")]
    grads = pytensor.grad(loss, wrt)
    return pytensor.function([x, y], loss, updates=[(v, v - LR * g) for v, g in zip(wrt, grads)], mode=mode)


def implementations(uma, params, formulation, Xb, yb, notes):
    """(name, step, args) for every implementation that can run here."""
    impls = [("NumPy, hand-written", NumpyStep(params, LR, N_OUT), (Xb, yb)),
             ("uma cpu", uma_step(uma, params, formulation), (Xb, yb))]
    if not isinstance(try_import("pytensor"), Exception):
        for mode, label in ((None, "PyTensor C"), ("NUMBA", "PyTensor NUMBA")):
            try:
                impls.append((label, pytensor_step(params, formulation, mode), (Xb, yb)))
            except Exception as e:  # noqa: BLE001
                notes.append(f"{label} ({formulation}) failed: {type(e).__name__}: {e}")
    jax = try_import("jax")
    if not isinstance(jax, Exception):
        jax.config.update("jax_enable_x64", True)
        cpu = jax.devices("cpu")[0]
        impls.append(("JAX jit", JaxStep(jax, params, LR, formulation),
                      (jax.device_put(Xb, cpu), jax.device_put(yb, cpu))))
    torch = try_import("torch")
    if not isinstance(torch, Exception):
        for t in sorted({DEFAULT_TORCH_THREADS, 1}, reverse=True):
            impls.append((f"PyTorch eager, {t} thread{'s' if t > 1 else ''}", TorchStep(torch, params, LR, t, formulation),
                          (torch.from_numpy(Xb), torch.from_numpy(yb))))
    return impls


def bench(uma, repeat, batch, formulation, notes):
    X, y = load_digits()
    params = init_params(X.shape[1], HIDDEN, N_OUT, SEED)
    Xb, yb = np.ascontiguousarray(X[:batch]), np.ascontiguousarray(y[:batch])
    impls = implementations(uma, params, formulation, Xb, yb, notes)

    def setup(fn):  # a PyTorch row runs on its own thread count
        if isinstance(fn, TorchStep):
            fn.torch.set_num_threads(fn.threads)

    first = {}
    for name, fn, args in impls:
        setup(fn)
        first[name] = float(np.asarray(fn(*args)))
    ref = first["NumPy, hand-written"]
    bad = [f"{k} {v!r}" for k, v in first.items() if not np.isclose(v, ref, rtol=1e-9, atol=1e-12)]
    if bad:
        notes.append(f"batch {batch} {formulation}: first-step loss MISMATCH vs NumPy {ref!r}: {', '.join(bad)}")
    results, rows = {}, []
    for name, fn, args in impls:
        setup(fn)
        med, best, number = measure(lambda fn=fn, args=args: fn(*args), repeat=repeat)
        results[name] = med
        rows.append([name, med, best, number])
    base = results["NumPy, hand-written"]
    return [(n, m, b, k, f"{base / m:.2f}x NumPy") for n, m, b, k in rows], results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 repeats")
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--loads", nargs="+", default=["idle", "busy"], choices=["idle", "busy"])
    ap.add_argument("--formulations", nargs="+", default=list(FORMULATIONS), choices=FORMULATIONS)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat

    import uma

    vers = [f"{m} {getattr(try_import(m), '__version__', 'missing')}" for m in ("pytensor", "jax", "torch")]
    print(f"uma step benchmark — Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{', '.join(vers)}, {os.cpu_count()} CPUs, uma threads {uma.get_num_threads()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    notes, out = [], {}
    for load in args.loads:
        for batch in args.batches:
            for formulation in args.formulations:
                if load == "busy":
                    with Busy(os.cpu_count() or 1):
                        rows, res = bench(uma, repeat, batch, formulation, notes)
                else:
                    rows, res = bench(uma, repeat, batch, formulation, notes)
                print_table(f"digits step, batch {batch}, {formulation}, {load} cores", rows, [])
                out[f"{load}/{batch}/{formulation}"] = res
    for n in notes:
        print(f"  note: {n}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
