"""uma call-overhead benchmark: what a compiled function costs per call beyond its compute,
against peers measured in the same process.

    make bench BENCH=bench/bench_call.py          # sets up the venv, installs uma, runs this
    .venv/bin/python bench/bench_call.py [--repeat N | --quick] [--json PATH] [--pin CPU]
        [--only counter,three,mlp,frameworks,frameworks-scalar]

Table 1 — ``f = function([], [], updates={c: c + 1})`` on a float64 scalar shared variable:
uma ``cpu`` (the C++ call path of :mod:`uma.runtime.function`) and ``reference`` (for scale),
PyTensor default (C VM) and NUMBA modes.

Table 2 — a 3-input/2-update function, ``f = function([x, y, z], [], updates={a: a + x * y,
b: b + z})`` on float64 scalars, called with 0-d NumPy arrays (and, for uma, with 0-d
``uma.Array`` s, which need no import).

Table 3 — one training step of the digits MLP of ``uma.examples.train`` (batch 64, 64 hidden,
ReLU, softmax cross-entropy, SGD, float64; the model of bench/bench_overview.py): uma ``cpu``,
a hand-written NumPy step, PyTorch eager on the CPU (autograd, in-place SGD; with torch's
default thread count and with one thread, the better setting for a batch this small), JAX ``jit`` on the
CPU (``jax_enable_x64``; parameters passed in and returned) and PyTensor C/NUMBA. Each starts
from the same parameters; the first-step losses are cross-checked (a mismatch is printed). Where
PyTorch and JAX are installed, the same uma function compiled for uma's ``torch`` and ``jax``
backends too, called with the framework's arrays (the peer's inputs).
Inputs are each library's natural form: NumPy arrays for uma, NumPy and PyTensor, tensors
made once for PyTorch, device arrays made once for JAX.

The same calls through the C++ API: bench/bench_call.cpp (see its header for the command).

Timing: ``timeit``, median and best of the repeats, µs per call (bench_overview.measure).
Peers that are not installed are skipped with a note. The machine's load matters: on a
shared machine run it twice.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overview import (NumpyStep, init_params, load_digits, measure, print_table,  # noqa: E402
                            pytensor_step, try_import, uma_step)

PT_MODES = ((None, "PyTensor default (C VM)"), ("NUMBA", "PyTensor NUMBA"))


def _pytensor_functions(kind):
    """PyTensor versions of the small functions (kind: "counter" or "three"), per mode."""
    pytensor = try_import("pytensor")
    if isinstance(pytensor, Exception):
        return [], [f"pytensor not available ({pytensor})"]
    import pytensor.tensor as pt
    out, notes = [], []
    for mode, label in PT_MODES:
        try:
            if kind == "counter":
                c = pytensor.shared(np.array(0.0), name="c")
                f = pytensor.function([], [], updates={c: c + 1}, mode=mode)
                out.append((label, f, lambda c=c: float(c.get_value())))
            else:
                a = pytensor.shared(np.array(0.0), name="a")
                b = pytensor.shared(np.array(0.0), name="b")
                x, y, z = pt.dscalar("x"), pt.dscalar("y"), pt.dscalar("z")
                f = pytensor.function([x, y, z], [], updates={a: a + x * y, b: b + z}, mode=mode)
                out.append((label, f, lambda a=a, b=b: (float(a.get_value()), float(b.get_value()))))
        except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
            notes.append(f"{label} failed: {type(e).__name__}: {e}")
    return out, notes


def bench_counter(uma, repeat):
    rows, notes = [], []
    cands = []
    for backend in ("cpu", "reference"):
        c = uma.shared(np.array(0.0), "c")
        f = uma.function([], [], updates={c: c + 1}, backend=backend)
        cands.append((f"uma backend={backend}", f, lambda c=c: float(c.get_value()), f))
    pts, n = _pytensor_functions("counter")
    notes += n
    cands += [(label, f, get, None) for label, f, get in pts]
    results = {}
    for name, f, get, uf in cands:
        before = get()
        f()
        if get() != before + 1:
            notes.append(f"{name}: one call moved the counter from {before} to {get()}")
        med, best, number = measure(f, repeat=repeat)
        results[name] = med
        rows.append((name, med, best, number, _path_note(uf)))
    return rows, notes, results


def bench_three(uma, repeat):
    rows, notes = [], []
    sym = uma.sym
    xs = [np.array(v) for v in (2.0, 3.0, 4.0)]
    cands = []
    for backend in ("cpu", "reference"):
        a = uma.shared(np.array(0.0), "a")
        b = uma.shared(np.array(0.0), "b")
        x, y, z = sym.scalar("x"), sym.scalar("y"), sym.scalar("z")
        f = uma.function([x, y, z], [], updates={a: a + x * y, b: b + z}, backend=backend)
        get = (lambda a=a, b=b: (float(a.get_value()), float(b.get_value())))
        cands.append((f"uma backend={backend} (NumPy 0-d inputs)", lambda f=f: f(*xs), get, f))
        if backend == "cpu":
            us = [uma.asarray(v) for v in xs]
            cands.append((f"uma backend={backend} (uma 0-d inputs)", lambda f=f, us=us: f(*us), get, f))
    pts, n = _pytensor_functions("three")
    notes += n
    cands += [(label + " (NumPy 0-d inputs)", lambda f=f: f(*xs), get, None) for label, f, get in pts]
    results = {}
    for name, fn, get, uf in cands:
        a0, b0 = get()
        fn()
        a1, b1 = get()
        if (a1 - a0, b1 - b0) != (6.0, 4.0):
            notes.append(f"{name}: one call changed (a, b) by {(a1 - a0, b1 - b0)}, expected (6, 4)")
        med, best, number = measure(fn, repeat=repeat)
        results[name] = med
        rows.append((name, med, best, number, _path_note(uf)))
    return rows, notes, results


def _path_note(f):
    if f is None or not hasattr(f, "call_counts"):
        return ""
    c = f.call_counts()
    return "C++ call path" if c["general"] == 0 and c["fast"] else f"calls {c}"


# ----------------------------------------------------------------------------- MLP peers


class TorchStep:
    """PyTorch eager: forward, autograd backward, in-place SGD (CPU, float64), on ``threads``
    threads; ``formulation``: the loss as ``cross_entropy`` ("sce") or as
    ``-(one_hot(y) * log_softmax(z)).sum(1).mean()`` ("one-hot")."""

    def __init__(self, torch, params, lr, threads, formulation="sce"):
        self.torch = torch
        self.threads = threads  # torch.set_num_threads before this row is measured
        self.p = [torch.tensor(params[k], dtype=torch.float64, requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
        self.lr = lr
        self.formulation = formulation

    def __call__(self, X, y):
        torch = self.torch
        F = torch.nn.functional
        W1, b1, W2, b2 = self.p
        z = torch.relu(X @ W1 + b1) @ W2 + b2
        if self.formulation == "one-hot":
            loss = -(F.one_hot(y, z.shape[1]).to(z.dtype) * F.log_softmax(z, dim=1)).sum(dim=1).mean()
        else:
            loss = F.cross_entropy(z, y)
        grads = torch.autograd.grad(loss, self.p)
        with torch.no_grad():
            for p, g in zip(self.p, grads):
                p.sub_(self.lr * g)
        return loss.detach()


class JaxStep:
    """JAX ``jit`` of the whole step (value_and_grad + SGD) on the CPU, parameters threaded
    through the calls (JAX arrays are immutable); ``formulation`` as for :class:`TorchStep`
    ("sce": ``log_softmax(z)[arange(n), y]``)."""

    def __init__(self, jax, params, lr, formulation="sce"):
        jnp = jax.numpy
        self.jax = jax
        self.p = tuple(jnp.asarray(params[k]) for k in ("W1", "b1", "W2", "b2"))

        def loss_fn(p, X, y):
            W1, b1, W2, b2 = p
            logp = jax.nn.log_softmax(jnp.maximum(X @ W1 + b1, 0.0) @ W2 + b2, axis=1)
            if formulation == "one-hot":
                return -jnp.mean(jnp.sum(jax.nn.one_hot(y, logp.shape[1], dtype=logp.dtype) * logp, axis=1))
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

        @jax.jit
        def step(p, X, y):
            loss, g = jax.value_and_grad(loss_fn)(p, X, y)
            return tuple(w - lr * gw for w, gw in zip(p, g)), loss

        self.step = step

    def __call__(self, X, y):
        self.p, loss = self.step(self.p, X, y)
        return loss.block_until_ready()


def bench_mlp(uma, repeat, batch=64, hidden=64, lr=0.1, seed=0):
    rows, notes = [], []
    X, y = load_digits()
    n_out = 10
    params = init_params(X.shape[1], hidden, n_out, seed)
    Xb = np.ascontiguousarray(X[:batch])
    yb = np.ascontiguousarray(y[:batch])

    impls = [("NumPy, hand-written", NumpyStep(params, lr, n_out), (Xb, yb), None)]
    try:
        f = uma_step(uma, params, lr, n_out, "cpu", seed)
        impls.append(("uma backend=cpu", f, (Xb, yb), f))
    except Exception as e:  # noqa: BLE001
        notes.append(f"uma backend=cpu failed to compile: {type(e).__name__}: {e}")
    torch = try_import("torch")
    if isinstance(torch, Exception):
        notes.append(f"torch not available ({torch})")
    else:
        targs = (torch.from_numpy(Xb), torch.from_numpy(yb))
        default_threads = torch.get_num_threads()
        for t in sorted({default_threads, 1}, reverse=True):
            impls.append((f"PyTorch eager (CPU, {t} thread{'s' if t > 1 else ''})", TorchStep(torch, params, lr, t),
                          targs, None))
    jax = try_import("jax")
    if isinstance(jax, Exception):
        notes.append(f"jax not available ({jax})")
    else:
        try:
            jax.config.update("jax_enable_x64", True)
            cpu = jax.devices("cpu")[0]
            impls.append(("JAX jit (CPU)", JaxStep(jax, params, lr),
                          (jax.device_put(Xb, cpu), jax.device_put(yb, cpu)), None))
        except Exception as e:  # noqa: BLE001
            notes.append(f"JAX failed: {type(e).__name__}: {e}")
    for backend, peer in (("torch", "PyTorch eager"), ("jax", "JAX jit (CPU)")):
        # uma's framework backends, on the framework's own arrays (the peer row's inputs)
        peer_args = next((a for name, _, a, _ in impls if name.startswith(peer)), None)
        if backend in uma.backends() and peer_args is not None:
            f = uma_step(uma, params, lr, n_out, backend, seed)
            impls.append((f"uma backend={backend} (its native inputs)", f, peer_args, None))
    if "numba" in uma.backends():  # NumPy arrays are its native values
        impls.append(("uma backend=numba", uma_step(uma, params, lr, n_out, "numba", seed), (Xb, yb), None))
    if "mlx" in uma.backends():
        mx = try_import("mlx.core")
        if not isinstance(mx, Exception):
            f = uma_step(uma, params, lr, n_out, "mlx", seed)
            impls.append(("uma backend=mlx (its native inputs)", f,
                          (mx.array(Xb, dtype=mx.float64), mx.array(yb)), None))
    pytensor = try_import("pytensor")
    if isinstance(pytensor, Exception):
        notes.append(f"pytensor not available ({pytensor})")
    else:
        for mode, label in PT_MODES:
            try:
                impls.append((label, pytensor_step(pytensor, params, lr, n_out, mode), (Xb, yb), None))
            except Exception as e:  # noqa: BLE001
                notes.append(f"{label} failed: {type(e).__name__}: {e}")

    def setup(fn):
        if isinstance(fn, TorchStep):
            fn.torch.set_num_threads(fn.threads)

    first = {}
    for name, fn, args, _ in impls:
        setup(fn)
        out = fn(*args)
        if isinstance(out, (list, tuple)):
            out = out[0]
        first[name] = float(np.asarray(out))
    ref = first["NumPy, hand-written"]
    bad = [f"{k} {v!r}" for k, v in first.items() if not np.isclose(v, ref, rtol=1e-9, atol=1e-12)]
    notes.append(f"first-step losses agree with NumPy's ({ref:.9f}) to 1e-9" if not bad else
                 f"first-step loss MISMATCH vs NumPy {ref!r}: {', '.join(bad)}")

    results = {}
    for name, fn, args, uf in impls:
        setup(fn)
        med, best, number = measure(lambda fn=fn, args=args: fn(*args), repeat=repeat)
        results[name] = med
        rows.append((name, med, best, number, _path_note(uf)))
    base = results["NumPy, hand-written"]
    rows = [(r[0], r[1], r[2], r[3], f"{base / r[1]:.2f}x NumPy" + (f"; {r[4]}" if r[4] else "")) for r in rows]
    return rows, notes, results


# ----------------------------------------------------------------------------- framework backends

#: (uma backend, PyTensor mode) per framework
FRAMEWORKS = (("jax", "JAX"), ("torch", "PYTORCH"), ("mlx", "MLX"), ("numba", "NUMBA"))


def thunk_direct(f, args):
    """uma's compiled graph of ``f`` called directly (its linker's thunk, on the values a call
    hands it: the arguments, then the shared values in the backend's residency), the stored
    values threaded through the calls as the updates would be. What ``f(*args)`` costs beyond
    this is uma's call: locks, shared reads and writes, argument checks."""
    n_in, n_out = len(f.inputs), len(f.outputs)
    upd = [ii - n_in for _, ii in sorted(f.fgraph.update_mapping.items())]
    vals = list(args) + [s.container.read(f.linker) for s in f.shared_variables]
    thunk = f._thunk

    def call():
        r = thunk(vals)
        for k, i in enumerate(upd):
            vals[n_in + i] = r[n_out + k]
        return r

    return call


def _bare_counter(backend):
    """The framework's own ``c = c + 1`` on a float64 scalar, state threaded through the calls
    (JAX: ``jit`` with the old value donated; PyTorch: ``torch.add`` of a 1.0 tensor; MLX:
    ``mx.add`` of a 1.0 array and ``mx.eval``, in float32; Numba: an ``njit`` function of a 0-d array)."""
    if backend == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        step = jax.jit(lambda c: c + 1.0, donate_argnums=0)
        st = [jax.numpy.asarray(np.array(0.0))]

        def f():
            st[0] = step(st[0])
        return f, lambda: float(st[0])
    if backend == "torch":
        import torch
        st = [torch.tensor(0.0, dtype=torch.float64)]
        add, one = torch.add, torch.tensor(1.0, dtype=torch.float64)

        def f():  # the value does not require grad: autograd records nothing, as in uma's call
            st[0] = add(st[0], one)
        return f, lambda: float(st[0])
    if backend == "mlx":
        import mlx.core as mx
        st = [mx.array(0.0, dtype=mx.float32)]  # float32: MLX's CPU arithmetic (uma's mlx runs float64 itself)
        ev, one = mx.eval, mx.array(1.0, dtype=mx.float32)

        def f():
            c = mx.add(st[0], one)
            ev(c)
            st[0] = c
        return f, lambda: float(np.array(st[0]))
    if backend == "numba":
        import numba
        inc = numba.njit(lambda c: c + 1.0)
        st = [np.array(0.0)]

        def f():
            st[0] = np.asarray(inc(st[0]))
        return f, lambda: float(st[0])
    raise ValueError(backend)


def bench_frameworks(uma, repeat, only=("scalar", "mlp")):
    """Per framework: the bare framework step, uma's backend, PyTensor's mode; the overhead
    column is uma's time minus the bare step's (scalar) or minus its own compiled graph called
    directly (``thunk_direct``, MLP, whose graph is not the hand-written peer's)."""
    rows, notes = [], []
    pytensor = try_import("pytensor")
    if isinstance(pytensor, Exception):
        notes.append(f"pytensor not available ({pytensor}): its rows are skipped")
    present = [(b, m) for b, m in FRAMEWORKS if b in uma.backends()]
    for b, _ in FRAMEWORKS:
        if b not in uma.backends():
            notes.append(f"uma backend {b!r} not registered here (its framework is not installed)")
    torch = try_import("torch")
    if not isinstance(torch, Exception):
        torch.set_num_threads(1)  # a batch this small: one thread is PyTorch's better setting
        notes.append("PyTorch rows run with torch.set_num_threads(1)")
    jax = try_import("jax")
    if not isinstance(jax, Exception):
        jax.config.update("jax_enable_x64", True)

    def timed(name, fn, overhead_of=None, note=""):
        for _ in range(3):  # compiles (a second signature, Numba's first compiled call) before timing
            fn()
        med, best, number = measure(fn, repeat=repeat)
        extra = "" if overhead_of is None else f"{med - overhead_of:+.2f} µs over the bare step" if "uma" not in name \
            else f"uma adds {med - overhead_of:+.2f} µs"
        rows.append((name, med, best, number, "; ".join(x for x in (extra, note) if x)))
        return med

    if "scalar" in only:
        for backend, mode in present:
            bare, get = _bare_counter(backend)
            base = timed(f"[scalar] {backend}: bare c = c + 1", bare)
            dt = np.float32 if backend == "mlx" else np.float64
            c = uma.shared(np.array(0.0, dt), "c")
            f = uma.function([], [], updates={c: c + 1}, backend=backend)
            before = float(c.get_value())
            f()
            if float(c.get_value()) != before + 1:
                notes.append(f"uma {backend}: one call moved the counter from {before} to {c.get_value()}")
            timed(f"[scalar] {backend}: uma backend={backend}", f, base)
            if not isinstance(pytensor, Exception):
                try:
                    pc = pytensor.shared(np.array(0.0, dt), name="c")
                    pf = pytensor.function([], [], updates={pc: pc + 1}, mode=mode)
                    timed(f"[scalar] {backend}: PyTensor mode={mode}", pf, base)
                except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
                    notes.append(f"PyTensor mode={mode} (scalar) failed: {type(e).__name__}: {str(e)[:120]}")
    if "mlp" in only:
        batch, hidden, lr, seed, n_out = 64, 64, 0.1, 0, 10
        X, y = load_digits()
        params = init_params(X.shape[1], hidden, n_out, seed)
        Xb, yb = np.ascontiguousarray(X[:batch]), np.ascontiguousarray(y[:batch])
        for backend, mode in present:
            if backend == "jax":
                cpu = jax.devices("cpu")[0]
                args = (jax.device_put(Xb, cpu), jax.device_put(yb, cpu))
                bare, bare_name = JaxStep(jax, params, lr), "JAX jit (hand-written)"
            elif backend == "torch":
                args = (torch.from_numpy(Xb), torch.from_numpy(yb))
                bare, bare_name = TorchStep(torch, params, lr, 1), "PyTorch eager (hand-written)"
            elif backend == "mlx":
                import mlx.core as mx
                args = (mx.array(Xb, dtype=mx.float64), mx.array(yb))
                bare, bare_name = None, None
                notes.append("mlx: no hand-written MLX step (MLX's CPU matmul is float32 only; uma runs the "
                             "float64 nodes with its own ops between MLX nodes)")
            else:
                args = (Xb, yb)
                bare, bare_name = NumpyStep(params, lr, n_out), "NumPy (hand-written; Numba has no MLP of its own)"
            if bare is not None:
                timed(f"[mlp] {backend}: {bare_name}", lambda bare=bare, args=args: bare(*args))
            f = uma_step(uma, params, lr, n_out, backend, seed)
            g = uma_step(uma, params, lr, n_out, backend, seed)
            direct = timed(f"[mlp] {backend}: uma's compiled graph, called directly", thunk_direct(g, args))
            timed(f"[mlp] {backend}: uma backend={backend}", lambda f=f, args=args: f(*args), direct)
            if not isinstance(pytensor, Exception):
                try:
                    pf = pytensor_step(pytensor, params, lr, n_out, mode)
                    host = (Xb, yb)
                    timed(f"[mlp] {backend}: PyTensor mode={mode}", lambda pf=pf: pf(*host))
                except Exception as e:  # noqa: BLE001
                    notes.append(f"PyTensor mode={mode} (mlp) failed: {type(e).__name__}: {str(e)[:120]}")
    return rows, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timeit repeats (default 7)")
    ap.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    ap.add_argument("--only", default="counter,three,mlp,frameworks",
                    help="comma-separated tables to run (counter, three, mlp, frameworks, frameworks-scalar)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--pin", type=int, metavar="CPU",
                    help="run on this one CPU (the frameworks' worker threads too, which start later and "
                         "inherit it; threads started at import, such as OpenBLAS's, keep every CPU): a hand-off to MLX's worker thread is then a switch on one core, "
                         "not a wake-up of another core, whose latency varies from run to run")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat: expected at least 1, got {args.repeat}")
    if args.pin is not None:
        allowed = sorted(os.sched_getaffinity(0))
        if args.pin not in allowed:
            ap.error(f"--pin: CPU {args.pin} is not one this process may run on ({allowed})")
        os.sched_setaffinity(0, {args.pin})
    repeat = 3 if args.quick else args.repeat
    only = set(args.only.split(","))
    unknown = only - {"counter", "three", "mlp", "frameworks", "frameworks-scalar"}
    if unknown:
        ap.error(f"--only: unknown table(s) {sorted(unknown)}")

    import uma

    print(f"uma call-overhead benchmark — Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
          + ("" if args.pin is None else f", pinned to CPU {args.pin}"))
    vers = []
    for mod in ("pytensor", "numba", "torch", "jax"):
        m = try_import(mod)
        vers.append(f"{mod} {getattr(m, '__version__', 'n/a') if not isinstance(m, Exception) else 'missing'}")
    print("peers: " + ", ".join(vers))

    out = {}
    if "counter" in only:
        rows, notes, res = bench_counter(uma, repeat)
        print_table("f = function([], [], updates={c: c + 1}), float64 scalar (µs per call)", rows, notes)
        out["counter"] = {"rows": rows, "notes": notes}
    if "three" in only:
        rows, notes, res = bench_three(uma, repeat)
        print_table("f = function([x, y, z], [], updates={a: a + x*y, b: b + z}), float64 scalars "
                    "(µs per call)", rows, notes)
        out["three"] = {"rows": rows, "notes": notes}
    if "mlp" in only:
        rows, notes, res = bench_mlp(uma, repeat)
        print_table("Digits MLP training step, batch 64, 64 hidden, float64 (µs per step)", rows, notes)
        out["mlp"] = {"rows": rows, "notes": notes}
    if "frameworks" in only or "frameworks-scalar" in only:
        parts = ("scalar", "mlp") if "frameworks" in only else ("scalar",)
        rows, notes = bench_frameworks(uma, repeat, parts)
        print_table("Framework backends: bare framework step, uma's backend, PyTensor's mode (µs per call)",
                    rows, notes)
        out["frameworks"] = {"rows": rows, "notes": notes}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
