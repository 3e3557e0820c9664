"""python -m uma.examples.train — an MLP (or softmax regression) on the handwritten digits that
scikit-learn ships.

The data (``sklearn/datasets/data/digits.csv.gz`` inside the installed scikit-learn package:
1797 images of 8x8 pixels, label in the last column) is read with NumPy, split 80/20 with a
fixed seed, and imported into uma without a copy (``uma.asarray`` adopts the NumPy buffers;
the adopted and copied byte counts come from ``uma.memory_stats``).

The model (``--model``) is ``mlp``: ``softmax(relu(x @ W1 + b1) @ W2 + b2)``, or ``logreg``:
``softmax(x @ W + b)``, with the parameters in shared variables, trained on the mean
cross-entropy by minibatch SGD through ``uma.function(..., updates=...)`` on backend ``cpu`` (or
``--backend``: any registered one, e.g. ``numpy``); minibatches are slices (views) of the adopted
arrays, visited in a new random order each epoch. Each epoch prints the mean training loss, the
training accuracy of the model at the end of the epoch, and the seconds it took. Afterwards the
test set is evaluated again by a function compiled for the ``reference`` backend that reads the
same shared variables: both backends' predictions must be identical (exit code 1 otherwise). A
PNG of the loss curve is saved (matplotlib, Agg).

``--compare numpy`` also runs a hand-written NumPy implementation of the same training loop
(same initial parameters, same minibatch order, gradients written out by hand) in the same
process, and prints both mean epoch times, their ratio and how far the two models' final
parameters are apart (they compute the same arithmetic, so the difference is rounding only).
``--compare`` also takes backend names, comma-separated (``--compare jax,torch,numpy``; uma's
own ``numpy`` backend is ``numpy-backend`` there, since ``numpy`` names the hand-written loop),
or ``all`` (every registered backend and ``numpy``): each trains the same model from the same
initial parameters in the same process, and a table gives each one's median epoch time (of
the epochs after the first, which includes compiling), final
loss, test accuracy and largest parameter difference from ``--backend``'s run.

``--distributed`` (under ``mpirun -np N``) trains data-parallel over MPI (:mod:`uma.distributed`):
each rank takes every N-th training sample (the same count on every rank), minibatches of
``--batch-size / N`` samples, and one compiled step per minibatch whose gradients are averaged
across the ranks inside the function (``uma.sym.all_reduce_bucket``: the flattened gradients
concatenated, one MPI_Allreduce, split back) before the SGD updates; so the global batch is
``--batch-size`` as in one process. Rank 0 alone prints. At the end every rank's parameters are
hashed (SHA-256) and the hashes all-gathered: they must be bit-identical (exit code 1 on every
rank otherwise). An uncaught exception on one rank aborts the job (MPI_Abort).

Bad data (missing file, ragged rows, wrong shape, NaN labels, ...) ends with a one-line
``error: ...`` on stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np

TEST_FRACTION = 0.2
SPLIT_SEED = 20240601  # the split is fixed, whatever --seed says


class DataError(Exception):
    """The data cannot be used (the message is printed as the one-line error)."""


def default_data_path() -> str:
    """``sklearn/datasets/data/digits.csv.gz`` inside the installed scikit-learn package."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("scikit-learn is not installed (its digits data is the default; "
                        "pass --data PATH to use another file)")
    return os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data", "digits.csv.gz")


def load_data(path: str):
    """``(X float64 (n, d), y int64 (n,))`` from a CSV (label in the last column) or an NPZ
    with keys ``X`` and ``y``. Raises :class:`DataError` with a one-line reason."""
    if not os.path.exists(path):
        raise DataError(f"data file not found: {path}")
    if os.path.isdir(path):
        raise DataError(f"data path is a directory: {path}")
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as z:
                missing = [k for k in ("X", "y") if k not in z.files]
                if missing:
                    raise DataError(f"{path}: NPZ file lacks key(s) {', '.join(missing)} (needs X and y)")
                X, y = np.asarray(z["X"]), np.asarray(z["y"])
        except DataError:
            raise
        except Exception as e:
            raise DataError(f"{path}: cannot read NPZ file ({_one_line(e)})") from None
    else:
        import warnings
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as e:
            msg = _one_line(e)
            if "number of columns" in msg:
                raise DataError(f"{path}: ragged rows ({msg})") from None
            raise DataError(f"{path}: cannot parse CSV ({msg})") from None
        except Exception as e:
            raise DataError(f"{path}: cannot read CSV ({_one_line(e)})") from None
        if raw.shape[0] == 0:
            raise DataError(f"{path}: no rows")
        if raw.shape[1] < 2:
            raise DataError(f"{path}: wrong shape {raw.shape}: needs feature columns and a label column")
        X, y = raw[:, :-1], raw[:, -1]
    return _check(path, X, y)


def _one_line(e):
    return " ".join(str(e).split())


def _check(path, X, y):
    if X.dtype.kind not in "biuf" or y.dtype.kind not in "biuf":
        raise DataError(f"{path}: features and labels must be numeric (got {X.dtype} and {y.dtype})")
    if X.ndim != 2:
        raise DataError(f"{path}: wrong shape: X must be 2-d (samples, features), got shape {X.shape}")
    if y.ndim != 1:
        raise DataError(f"{path}: wrong shape: y must be 1-d, got shape {y.shape}")
    if X.shape[0] != y.shape[0]:
        raise DataError(f"{path}: wrong shape: X has {X.shape[0]} rows but y has {y.shape[0]}")
    if X.shape[1] == 0:
        raise DataError(f"{path}: wrong shape: no feature columns")
    if X.shape[0] < 10:
        raise DataError(f"{path}: too few samples ({X.shape[0]}); need at least 10")
    yf = y.astype(np.float64)
    if np.isnan(yf).any():
        raise DataError(f"{path}: NaN labels ({int(np.isnan(yf).sum())} of them)")
    if not np.isfinite(X.astype(np.float64)).all():
        raise DataError(f"{path}: non-finite feature values (NaN or inf)")
    if not np.isfinite(yf).all() or (yf != np.round(yf)).any() or (yf < 0).any():
        raise DataError(f"{path}: labels must be non-negative integers")
    if yf.max() >= 100_000:
        raise DataError(f"{path}: label {int(yf.max())} is too large; labels must be class indices 0..K-1")
    yi = yf.astype(np.int64)
    if len(np.unique(yi)) < 2:
        raise DataError(f"{path}: need at least 2 classes, got {len(np.unique(yi))}")
    return X.astype(np.float64, copy=False), yi


def split(X, y):
    """A fixed 80/20 split (seed SPLIT_SEED), features scaled to [0, 1] by the max value."""
    n = X.shape[0]
    perm = np.random.default_rng(SPLIT_SEED).permutation(n)
    n_test = max(1, int(round(n * TEST_FRACTION)))
    test, train = perm[:n_test], perm[n_test:]
    scale = float(np.abs(X).max()) or 1.0
    Xs = X / scale
    return (np.ascontiguousarray(Xs[train]), np.ascontiguousarray(y[train]),
            np.ascontiguousarray(Xs[test]), np.ascontiguousarray(y[test]))


def init_params(model, n_in, n_hidden, n_classes, seed, dtype):
    """The initial parameters (NumPy arrays), shared by the uma model and the NumPy one."""
    rng = np.random.default_rng(seed)
    if model == "logreg":
        return [np.zeros((n_in, n_classes), dtype), np.zeros(n_classes, dtype)]
    return [rng.normal(0, 1 / np.sqrt(n_in), (n_in, n_hidden)).astype(dtype),
            np.zeros(n_hidden, dtype),
            rng.normal(0, 1 / np.sqrt(n_hidden), (n_hidden, n_classes)).astype(dtype),
            np.zeros(n_classes, dtype)]


def build_model(uma, n_in, n_hidden, n_classes, lr, seed, dtype, backend, model="mlp",
                distributed=False):
    """Shared parameters and the compiled train / predict functions. ``distributed``: the
    gradients are averaged over the MPI ranks in the train step (one bucketed all-reduce)."""
    sym = uma.sym
    names = ["W", "b"] if model == "logreg" else ["W1", "b1", "W2", "b2"]
    params = [uma.shared(v, n) for v, n in zip(init_params(model, n_in, n_hidden, n_classes, seed, dtype), names)]

    x = sym.matrix("x", dtype=dtype, shape=(None, n_in))
    y = sym.vector("y", dtype="int64")
    if model == "logreg":
        W, b = params
        logits = x @ W + b
    else:
        W1, b1, W2, b2 = params
        hidden = sym.relu(x @ W1 + b1)
        logits = hidden @ W2 + b2
    # Mean cross-entropy of softmax(logits) against the labels, as one fused op (its gradient,
    # softmax - one_hot, is one op too): -mean(sum(one_hot(y) * log_softmax(logits), axis=1)).
    loss = sym.mean(sym.softmax_cross_entropy(logits, y))
    pred = sym.argmax(logits, axis=1)
    grads = uma.grad(loss, params)
    if distributed:  # one flat buffer, one MPI_Allreduce (mean), split back: DDP's bucketing
        grads = sym.all_reduce_bucket([(g, p.get_value().shape) for g, p in zip(grads, params)],
                                      op="mean")
    updates = [(p, p - lr * g) for p, g in zip(params, grads)]

    train = uma.function([x, y], loss, updates=updates, backend=backend)
    predict = uma.function([x], pred, backend=backend)
    predict_ref = uma.function([x], pred, backend="reference")
    return params, train, predict, predict_ref


class NumpyModel:
    """The same model and SGD step written by hand in NumPy (the ``--compare numpy`` peer).

    The gradient of the mean cross-entropy through log_softmax is ``(softmax - onehot) / n``;
    ReLU passes the gradient where its input is ``>= 0`` (uma's ``maximum`` convention)."""

    def __init__(self, model, params, lr, n_classes):
        self.model, self.params, self.lr, self.n_classes = model, [p.copy() for p in params], lr, n_classes

    def _forward(self, x):
        if self.model == "logreg":
            W, b = self.params
            return x @ W + b, None
        W1, b1, W2, b2 = self.params
        pre = x @ W1 + b1
        h = np.maximum(pre, 0)
        return h @ W2 + b2, (pre, h)

    def step(self, x, y):
        logits, hidden = self._forward(x)
        n = x.shape[0]
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        rows = np.arange(n)
        loss = -logp[rows, y].mean()
        d = np.exp(logp)
        d[rows, y] -= 1
        d /= n
        lr = self.lr
        if self.model == "logreg":
            W, b = self.params
            W -= lr * (x.T @ d)
            b -= lr * d.sum(axis=0)
        else:
            W1, b1, W2, b2 = self.params
            pre, h = hidden
            dh = d @ W2.T
            dh[pre < 0] = 0
            W2 -= lr * (h.T @ d)
            b2 -= lr * d.sum(axis=0)
            W1 -= lr * (x.T @ dh)
            b1 -= lr * dh.sum(axis=0)
        return loss

    def predict(self, x):
        return self._forward(x)[0].argmax(axis=1)


def train_loop(step, predict, Xtr, ytr, ytr_np, bs, epochs, seed, report=None, all_data=None,
               world=1):
    """SGD epochs: ``step(x, y) -> loss`` on minibatches (slices of ``Xtr``/``ytr``, views)
    in a new random order each epoch (``numpy.random.default_rng(seed + 1)``), then the
    training accuracy of ``predict``. ``report(epoch, loss, acc, seconds)`` after each epoch.
    ``all_data``: ``(X, y_numpy)`` the accuracy is measured on (default the minibatches' own
    data); ``world > 1``: the epoch's loss is averaged over the ranks (one all-reduce per epoch).
    Returns (mean losses, training accuracies, epoch seconds)."""
    n_train = ytr_np.shape[0]
    starts = list(range(0, n_train, bs))
    rng = np.random.default_rng(seed + 1)
    losses, accs, secs = [], [], []
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        total = 0.0
        for s in rng.permutation(len(starts)):
            lo = starts[s]
            hi = min(lo + bs, n_train)
            loss = step(Xtr[lo:hi], ytr[lo:hi])
            total += float(loss.item()) * (hi - lo)
        if world > 1:
            import uma
            import uma.distributed as dist
            total = float(dist.all_reduce(uma.asarray(np.array([total])), "mean").item())
        losses.append(total / n_train)
        Xa, ya = all_data if all_data is not None else (Xtr, ytr_np)
        accs.append(float((np.asarray(predict(Xa)) == ya).mean()))  # after the epoch
        secs.append(time.perf_counter() - t0)
        if report is not None:
            report(epoch, losses[-1], accs[-1], secs[-1])
    return losses, accs, secs


def save_plot(path, losses):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss (cross-entropy)")
    ax.set_title("uma digits")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return os.path.abspath(path)


def compare_name(backend):
    """A backend's name in --compare: its own, but ``numpy-backend`` for uma's ``numpy``
    backend (``numpy`` there is the hand-written loop)."""
    return "numpy-backend" if backend == "numpy" else backend


def backend_of(name):
    """The backend a --compare name stands for (the inverse of :func:`compare_name`)."""
    return "numpy" if name == "numpy-backend" else name


def parse_args(argv, backends):
    p = argparse.ArgumentParser(prog="python -m uma.examples.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", help="CSV (label in the last column) or NPZ with X and y; "
                                  "default: scikit-learn's digits.csv.gz")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seed", type=int, default=0, help="initialisation and batch order")
    p.add_argument("--model", default="mlp", choices=["mlp", "logreg"],
                   help="mlp (one ReLU hidden layer) or logreg (softmax regression)")
    p.add_argument("--backend", default="cpu", choices=backends)
    p.add_argument("--compare", default=None,
                   help="also train, in this process, with each of these (comma-separated): numpy "
                        "(a hand-written NumPy loop) or a backend name (uma's numpy backend: "
                        "numpy-backend); 'all' = every backend and numpy; prints the epoch times "
                        "side by side")
    p.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    p.add_argument("--plot", default=os.path.join("out", "digits_loss.png"),
                   help="where to save the loss curve PNG (default: out/digits_loss.png)")
    p.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel over MPI: run under mpirun -np N; the training data is "
                        "sharded across the ranks and gradients are all-reduced in each step")
    a = p.parse_args(argv)
    for name in ("epochs", "hidden", "batch_size"):
        if getattr(a, name) < 1 and not (name == "hidden" and a.model == "logreg"):  # logreg has no hidden layer
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not (a.lr > 0 and np.isfinite(a.lr)):
        p.error("--lr must be a positive number")
    if a.seed < 0:
        p.error(f"--seed must be >= 0, got {a.seed}")
    if not a.plot:
        p.error("--plot must name a PNG file")
    if a.distributed and a.compare:
        p.error("--compare is not available with --distributed")
    if a.compare is not None:
        # "numpy" is the hand-written loop; uma's numpy backend is "numpy-backend" here
        choices = [compare_name(b) for b in backends] + ["numpy"]
        names = []
        for n in (n.strip() for n in a.compare.split(",")):
            names += choices if n == "all" else [n]
        unknown = [n for n in names if n not in choices]
        if unknown or not names or "" in names:
            p.error(f"--compare: unknown {', '.join(map(repr, unknown or ['']))} (choose from "
                    f"{', '.join(sorted(choices))}, all)")
        a.compare = list(dict.fromkeys(n for n in names if n != compare_name(a.backend)))
        if not a.compare:
            p.error(f"--compare: nothing to compare --backend {a.backend} with (name another backend or numpy)")
    if os.path.isdir(a.plot):
        p.error(f"--plot must name a PNG file, not the directory {a.plot!r}")
    return a


def main(argv=None) -> int:
    """Runs the job; bad input ends with a one-line ``error:`` and exit code 2."""
    try:
        return _main(argv)
    except (MemoryError, OSError) as e:  # e.g. --hidden too large, an unwritable --plot path
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def _main(argv=None) -> int:
    import uma

    args = parse_args(argv, uma.backends())
    t_start = time.perf_counter()
    rank, world = 0, 1
    if args.distributed:
        import uma.distributed as dist
        rank, world = dist.init()
        if args.batch_size < world:
            print(f"error: --batch-size {args.batch_size} is smaller than the {world} ranks",
                  file=sys.stderr)
            return 2
    print_ = print if rank == 0 else (lambda *a, **k: None)
    try:
        path = args.data or default_data_path()
        X, y = load_data(path)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n_classes = int(y.max()) + 1
    Xtr_np, ytr_np, Xte_np, yte_np = split(X.astype(args.dtype), y)
    Xall_np, yall_np = Xtr_np, ytr_np  # the whole training set (training accuracy)
    if world > 1:  # rank r's shard: samples r, r + N, ... (the same count on every rank)
        n_shard = Xtr_np.shape[0] // world
        Xtr_np = np.ascontiguousarray(Xtr_np[rank::world][:n_shard])
        ytr_np = np.ascontiguousarray(ytr_np[rank::world][:n_shard])

    # Import into uma: adopted, not copied (memory_stats tells which).
    before = uma.memory_stats("cpu")
    Xtr, ytr = uma.asarray(Xtr_np), uma.asarray(ytr_np)
    Xte, yte = uma.asarray(Xte_np), uma.asarray(yte_np)
    Xall = Xtr if world == 1 else uma.asarray(Xall_np)
    after = uma.memory_stats("cpu")
    adopted = after["adopted_bytes"] - before["adopted_bytes"]
    copied = after["active_bytes"] - before["active_bytes"]

    params, train, predict, predict_ref = build_model(
        uma, X.shape[1], args.hidden, n_classes, args.lr, args.seed, args.dtype, args.backend,
        args.model, distributed=args.distributed)

    n_train, bs = Xtr_np.shape[0], args.batch_size // world
    what = "MLP" if args.model == "mlp" else "softmax regression"
    print_(f"uma digits {what}: {path}")
    if world > 1:
        print_(f"distributed: {world} ranks (MPI), {n_train} training samples and minibatches of "
               f"{bs} per rank, gradients all-reduced (mean) in each step")
    print_(f"data: {Xall_np.shape[0]} train / {Xte_np.shape[0]} test samples, {X.shape[1]} features, "
          f"{n_classes} classes; backend {args.backend}, model {args.model}"
          f"{f', hidden {args.hidden}' if args.model == 'mlp' else ''}, lr {args.lr}, "
          f"batch {args.batch_size}, {args.dtype}")
    print_(f"import into uma: {adopted} bytes adopted, {copied} bytes copied (uma.memory_stats)")

    def report(epoch, loss, acc, seconds):
        print_(f"epoch {epoch:3d}  loss {loss:.4f}  train_acc {acc:.4f}  {seconds:.3f}s", flush=True)

    t_train = time.perf_counter()
    # minibatches are slices of the adopted uma arrays: views, no copy
    if world > 1:
        dist.stats(reset=True)
    losses, train_accs, epoch_secs = train_loop(train, predict, Xtr, ytr, ytr_np, bs, args.epochs,
                                                args.seed, report,
                                                all_data=(Xall, yall_np), world=world)
    train_seconds = time.perf_counter() - t_train
    comm = None
    if world > 1:
        comm = dist.stats()
        print_(f"communication: {comm['calls']} MPI calls, {comm['seconds']:.3f}s of "
               f"{train_seconds:.3f}s training on rank 0 ({100 * comm['seconds'] / train_seconds:.1f}%)")

    compare = None
    others = [n for n in (args.compare or []) if n != "numpy"]  # backends, by their --compare names
    if others:
        compare = {}
        acc1 = float((np.asarray(predict(Xte)) == np.asarray(yte)).mean())
        steady = (lambda secs: float(np.median(secs[1:] if len(secs) > 1 else secs)))  # epoch 1 compiles
        rows = [(args.backend, steady(epoch_secs), losses[-1], acc1, 0.0)]
        for name in others:
            p2, train2, predict2, _ = build_model(uma, X.shape[1], args.hidden, n_classes, args.lr, args.seed,
                                                  args.dtype, backend_of(name), args.model)
            l2, a2, s2 = train_loop(train2, predict2, Xtr, ytr, ytr_np, bs, args.epochs, args.seed)
            acc2 = float((np.asarray(predict2(Xte)) == np.asarray(yte)).mean())
            diff2 = max(float(np.max(np.abs(p.get_value() - q.get_value()))) for p, q in zip(params, p2))
            rows.append((name, steady(s2), l2[-1], acc2, diff2))
            compare[name] = {"epoch_seconds": s2, "train_loss": l2, "train_accuracy": a2,
                             "test_accuracy": acc2, "max_param_diff": diff2}
        timing = (f"median epoch time of epochs 2-{args.epochs}: the first one compiles" if args.epochs > 1
                  else "one epoch, compiling included")
        print(f"the same model on each backend ({timing}):")
        w = max(10, *(len(r[0]) for r in rows))  # the widest backend name sets the column
        print(f"{'backend':>{w}}  {'epoch ms':>9}  {'vs ' + args.backend:>9}  {'final loss':>10}  "
              f"{'test acc':>8}  {'max |param diff|':>16}")
        base = rows[0][1]
        for name, secs, loss, acc2, diff2 in rows:
            print(f"{name:>{w}}  {secs * 1e3:9.2f}  {secs / base:8.2f}x  {loss:10.4f}  "
                  f"{acc2:8.4f}  {diff2:16.2e}")
    if "numpy" in (args.compare or []):
        ref = NumpyModel(args.model, init_params(args.model, X.shape[1], args.hidden, n_classes,
                                                 args.seed, args.dtype), args.lr, n_classes)
        np_losses, np_accs, np_secs = train_loop(ref.step, ref.predict, Xtr_np, ytr_np, ytr_np, bs,
                                                 args.epochs, args.seed)
        np_acc = float((ref.predict(Xte_np) == yte_np).mean())
        diff = max(float(np.max(np.abs(p.get_value() - q))) for p, q in zip(params, ref.params))
        uma_mean, np_mean = float(np.mean(epoch_secs)), float(np.mean(np_secs))
        print(f"numpy (hand-written, same loop): final loss {np_losses[-1]:.4f}, "
              f"test accuracy {np_acc:.4f}; max |parameter difference| {diff:.2e}")
        print(f"epoch time: uma ({args.backend}) {uma_mean * 1e3:.2f} ms, numpy {np_mean * 1e3:.2f} ms "
              f"(mean of {args.epochs} epochs; numpy/uma = {np_mean / uma_mean:.2f}x)")
        compare = dict(compare or {}, numpy={"epoch_seconds": np_secs, "train_loss": np_losses,
                                             "train_accuracy": np_accs, "test_accuracy": np_acc,
                                             "max_param_diff": diff})

    params_identical = True
    if world > 1:  # every rank's parameters, hashed, must be bit-identical
        import hashlib
        h = hashlib.sha256(b"".join(np.ascontiguousarray(p.get_value()).tobytes() for p in params))
        mine = uma.asarray(np.frombuffer(h.digest(), dtype=np.int64).copy())
        every = np.asarray(dist.all_gather(mine))
        params_identical = bool((every == every[0]).all())
        print_(f"parameters bit-identical on all {world} ranks (SHA-256 all-gathered): "
               f"{'yes' if params_identical else 'NO'}")
    yte_host = np.asarray(yte)
    pred = np.asarray(predict(Xte))
    pred_ref = np.asarray(predict_ref(Xte))
    acc = float((pred == yte_host).mean())
    acc_ref = float((pred_ref == yte_host).mean())
    identical = bool(np.array_equal(pred, pred_ref))
    print_(f"test accuracy ({args.backend}): {acc:.4f}")
    print_(f"test accuracy (reference, same shared variables): {acc_ref:.4f}; "
          f"predictions identical: {'yes' if identical else 'NO'}")
    plot = save_plot(args.plot, losses) if rank == 0 else None
    print_(f"loss curve: {plot}" if plot else "loss curve: not saved (matplotlib is not installed)")
    seconds = time.perf_counter() - t_start
    print_(f"training took {train_seconds:.2f}s ({seconds:.2f}s in all)")
    if args.json and rank == 0:
        print(json.dumps({
            "test_accuracy": acc, "reference_test_accuracy": acc_ref,
            "predictions_identical": identical, "backend": args.backend, "epochs": args.epochs,
            "hidden": args.hidden, "lr": args.lr, "batch_size": bs, "seed": args.seed,
            "dtype": args.dtype, "model": args.model, "train_loss": losses,
            "train_accuracy": train_accs, "epoch_seconds": epoch_secs, "compare": compare,
            "n_train": n_train, "n_test": int(Xte_np.shape[0]),
            "adopted_bytes": int(adopted), "copied_bytes": int(copied),
            "train_seconds": train_seconds, "seconds": seconds, "plot": plot, "data": path,
            "world_size": world, "params_identical": params_identical, "communication": comm,
        }))
    if not params_identical:
        print(f"error: rank {rank}: the ranks' parameters differ", file=sys.stderr)
        return 1
    if not identical:
        print("error: the reference backend's predictions differ from the "
              f"{args.backend} backend's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
