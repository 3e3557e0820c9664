"""Run by tests/python/test_distributed.py under ``mpirun -np 2``: ``python _mpi_worker.py SCENARIO``.

Each scenario checks uma's collectives against NumPy on every rank (NumPy is the oracle: every
rank knows every rank's input, so it computes the expected result itself) and prints
``ok SCENARIO rank R`` at the end; any failed check raises (the job is aborted, exit code != 0).
"""
import sys
import time

import numpy as np

import uma
import uma.distributed as dist


def inputs(shape, dtype, r):
    """Rank r's input: distinct per rank, exactly representable."""
    n = int(np.prod(shape))
    return ((np.arange(n) % 7 + 3 * r - 2).reshape(shape)).astype(dtype)


def collectives(r, n):
    assert (r, n) == (dist.rank(), dist.world_size()) and n == 2
    for dt in ["int8", "int32", "int64", "uint16", "float32", "float64", "complex128"]:
        for shape in [(5,), (3, 4), ()]:
            xs = [inputs(shape, dt, k) for k in range(n)]
            x = uma.asarray(xs[r])
            ops = ["sum", "max", "min"] + (["mean"] if dt[0] in "fc" else [])
            for op in ops:
                if dt.startswith("complex") and op in ("max", "min"):
                    continue
                want = {"sum": lambda a: np.sum(a, axis=0, dtype=dt), "max": lambda a: np.max(a, axis=0),
                        "min": lambda a: np.min(a, axis=0),
                        "mean": lambda a: (np.sum(a, axis=0, dtype=dt) / n).astype(dt)}[op](np.stack(xs))
                got = dist.all_reduce(x, op)
                assert str(got.dtype) == dt and got.shape == shape, (got.dtype, got.shape)
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{dt} {shape} {op}")
            np.testing.assert_array_equal(np.asarray(dist.all_gather(x)), np.stack(xs))
            y = uma.asarray(xs[r].copy())
            assert dist.broadcast(y, root=1) is y
            np.testing.assert_array_equal(np.asarray(y), xs[1])
    # uint16 sums wrap (Open MPI's avx component, which saturates them, is left out)
    w = uma.asarray(np.array([65535, 7], dtype=np.uint16) if r == 0 else np.array([2, 1], dtype=np.uint16))
    np.testing.assert_array_equal(np.asarray(dist.all_reduce(w)), [1, 8])
    # in place: out=x is MPI_IN_PLACE; the array's own memory (adopted from NumPy) is written
    a = np.arange(6, dtype=np.float64) * (r + 1)
    ua = uma.asarray(a)
    assert dist.all_reduce(ua, "sum", out=ua) is ua
    np.testing.assert_array_equal(a, np.arange(6) * 3.0)
    # a non-contiguous input (a transposed view) and out= another array
    base = np.arange(12, dtype=np.float32).reshape(3, 4) + r
    out = uma.empty((4, 3), dtype="float32")
    assert dist.all_reduce(uma.asarray(base).T, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), (2 * np.arange(12, dtype=np.float32).reshape(3, 4) + 1).T)
    # reduce_scatter: block r of the sum
    x = np.arange(8, dtype=np.float64).reshape(4, 2) * (r + 1)
    np.testing.assert_array_equal(np.asarray(dist.reduce_scatter(uma.asarray(x))),
                                  (np.arange(8.0).reshape(4, 2) * 3)[2 * r:2 * r + 2])
    # bool max/min are logical or/and; float16 and bfloat16 travel as bits
    b = uma.asarray(np.array([True, r == 1, False]))
    np.testing.assert_array_equal(np.asarray(dist.all_reduce(b, "max")), [True, True, False])
    np.testing.assert_array_equal(np.asarray(dist.all_reduce(b, "min")), [True, False, False])
    h = uma.asarray(np.array([0.5, -1.25], dtype=np.float16) * (r + 1))
    np.testing.assert_array_equal(np.asarray(dist.all_gather(h)).astype(np.float32),
                                  [[0.5, -1.25], [1.0, -2.5]])
    # mismatches are found before the collective and raise on every rank
    for bad, what in [(uma.zeros((3 + r,), dtype="float32"), "(3,)"),
                      (uma.zeros((3,), dtype=["float32", "float64"][r]), "float64")]:
        try:
            dist.all_reduce(bad)
        except dist.CollectiveMismatch as e:
            assert "rank 0" in str(e) and "rank 1" in str(e) and what in str(e), str(e)
        else:
            raise AssertionError("no CollectiveMismatch")
    try:
        dist.all_reduce(uma.zeros((2,)), op=["sum", "max"][r])
    except dist.CollectiveMismatch as e:
        assert "op='max'" in str(e)
    else:
        raise AssertionError("no CollectiveMismatch for different ops")
    dist.barrier()


def graph(r, n):
    sym = uma.sym
    xs = [np.arange(4.0) + 10 * k for k in range(n)]
    for backend in ["cpu", "reference", "numpy"]:
        x = sym.vector("x", dtype="float64")
        y = sym.all_reduce(x * 2, op="sum")
        gathered = sym.all_gather(x)
        # every rank's cost: sum(y^2) + sum(gathered^3); their total's gradient for rank r's x:
        # n * 2 * y * 2 + n * 3 x_r^2 (the all-reduce gradient sums over the ranks)
        cost = sym.sum(y * y) + sym.sum(gathered ** 3)
        f = uma.function([x], [y, gathered, sym.reduce_scatter(x, "mean"), uma.grad(cost, x),
                               sym.all_reduce(x, "max")], backend=backend)
        for _ in range(2):
            o = [np.asarray(v) for v in f(xs[r])]
            S = 2 * sum(xs)
            np.testing.assert_allclose(o[0], S)
            np.testing.assert_array_equal(o[1], np.stack(xs))
            np.testing.assert_allclose(o[2], np.split(sum(xs) / n, n)[r])
            np.testing.assert_allclose(o[3], n * 4 * S + n * 3 * xs[r] ** 2)
            np.testing.assert_array_equal(o[4], np.max(xs, axis=0))
    # the bucketed all-reduce of a data-parallel step: one collective, results split back
    W = uma.shared(np.full((2, 3), r + 1.0), "W")
    b = uma.shared(np.arange(3.0) * (r + 1), "b")
    gW, gb = sym.all_reduce_bucket([(W * 1.0, (2, 3)), (b + 0.0, (3,))], op="mean")
    f = uma.function([], [gW, gb], backend="cpu")
    before = dist.stats()["calls"]
    for _ in range(3):
        oW, ob = f()
    # 3 all-reduces and one signature check (the bucket's shape is static)
    assert dist.stats()["calls"] - before == 4, dist.stats()["calls"] - before
    np.testing.assert_array_equal(np.asarray(oW), np.full((2, 3), 1.5))
    np.testing.assert_array_equal(np.asarray(ob), np.arange(3.0) * 1.5)
    # a data-parallel step: shared variables stay identical on every rank
    w = uma.shared(np.zeros(3), "w")
    v = sym.vector("v")
    cost = sym.sum((w - v) ** 2)
    (g,) = sym.all_reduce_bucket([(uma.grad(cost, w), (3,))], "mean")
    step = uma.function([v], cost, updates={w: w - 0.1 * g}, backend="cpu")
    for _ in range(20):
        step(np.array([1.0, 2.0, 3.0]) * (r + 1))
    every = np.asarray(dist.all_gather(uma.asarray(w.get_value())))
    np.testing.assert_array_equal(every[0], every[1])
    np.testing.assert_allclose(every[0], np.array([1.5, 3.0, 4.5]) * (1 - 0.8 ** 20))
    # a graph whose all-reduce input differs between ranks raises on both
    u = sym.vector("u", dtype="float64")
    f = uma.function([u], sym.all_reduce(u), backend="cpu")
    try:
        f(np.zeros(2 + r))
    except dist.CollectiveMismatch:
        pass
    else:
        raise AssertionError("no CollectiveMismatch from the compiled function")


def raises(r, n):
    """Rank 1 raises between two collectives; rank 0 waits in the second one."""
    dist.all_reduce(uma.zeros((4,)))
    if r == 1:
        raise RuntimeError("rank 1 failed on purpose")
    dist.all_reduce(uma.zeros((4,)))
    time.sleep(120)


def hangs(r, n):
    """Rank 1 never calls the collective (sleeps past the watchdog's timeout)."""
    if r == 1:
        time.sleep(120)
    dist.all_reduce(uma.zeros((4,)))


if __name__ == "__main__":
    scenario = sys.argv[1]
    r, n = dist.init()
    globals()[scenario](r, n)
    print(f"ok {scenario} rank {r}", flush=True)
