"""The ``numba`` backend (python/uma/runtime/linkers/numba): NumPy arrays in residency "numba",
the graph's float arithmetic compiled by ``numba.njit`` as one function per maximal run (a
training step is one), the other nodes on the ``numpy`` table, uma's errors before any
update, and uma's ``cpu`` backend as the oracle. The backend matrix of the other test files
runs over ``uma.backends()``, which includes ``numba`` where Numba is installed."""
import numpy as np
import pytest

import uma
from uma import sym
from uma.runtime import HOST

pytest.importorskip("numba")


def _mlp(backend, dtype="float64"):
    rng = np.random.default_rng(0)
    W1 = uma.shared((rng.standard_normal((6, 8)) * 0.3).astype(dtype), "W1")
    b1 = uma.shared(np.zeros(8, dtype), "b1")
    W2 = uma.shared((rng.standard_normal((8, 3)) * 0.3).astype(dtype), "W2")
    x, y = sym.matrix("x", dtype=dtype, shape=(None, 6)), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(sym.tanh(x @ W1 + b1) @ W2, y))
    grads = uma.grad(loss, [W1, b1, W2])
    updates = [(p, p - 0.2 * g) for p, g in zip([W1, b1, W2], grads)]
    return uma.function([x, y], loss, updates=updates, backend=backend), [W1, b1, W2]


def test_a_training_step_is_one_compiled_function_and_matches_cpu():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((16, 6)), rng.integers(0, 3, 16)
    step, params = _mlp("numba")
    assert step._thunk.compiled_runs == 1 and step._thunk.numpy_steps == []
    assert step._thunk.runs[0].compiled() is not None
    step_cpu, params_cpu = _mlp("cpu")
    losses = [float(step(X, Y)) for _ in range(6)]
    losses_cpu = [float(np.asarray(step_cpu(X, Y))) for _ in range(6)]
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-12)
    for p, q in zip(params, params_cpu):
        assert p.container.current == {"numba"}
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-10, atol=1e-13)
    assert losses[-1] < losses[0]


def test_float32_stays_float32():
    rng = np.random.default_rng(2)
    step, params = _mlp("numba", "float32")
    out = step(rng.standard_normal((4, 6)).astype(np.float32), np.array([0, 1, 2, 0]))
    assert type(out) is np.ndarray and out.dtype == np.float32 and out.shape == ()
    assert all(p.get_value().dtype == np.float32 for p in params)


def test_other_dtypes_and_ops_run_on_the_numpy_table_with_uma_s_results(rng):
    x = sym.vector("x", dtype="int32")
    f = uma.function([x], [x // 2, sym.cumsum(x), x.astype("float64") * 0.5], backend="numba")
    assert f._thunk.numpy_steps and f._thunk.compiled_runs == 1
    v = np.array([-3, 4, 7], np.int32)
    a, b, c = f(v)
    np.testing.assert_array_equal(a, v // 2)
    np.testing.assert_array_equal(b, np.cumsum(v))
    np.testing.assert_array_equal(c, v * 0.5)


def test_a_bad_label_raises_uma_s_error_and_stores_nothing():
    """Both on a call with new shapes (the numpy table) and on one the compiled run takes (its
    label flag), and without keeping a reference to the arguments (compiled code never raises:
    Numba leaks the arguments of a function that raises)."""
    import sys
    step, params = _mlp("numba")
    x, good, bad = np.ones((2, 6)), np.array([0, 2]), np.array([0, 3])
    for shapes_seen in (False, True):
        if shapes_seen:
            step(x, good)
            step(x, good)  # compiled
            assert step._thunk.runs[0].compiled() is not None
        before = [p.get_value() for p in params]
        refs = sys.getrefcount(x), sys.getrefcount(bad)
        for _ in range(3):
            with pytest.raises(ValueError, match=r"softmax_cross_entropy: label 3 at position 1 is out of range \[0, 3\)"):
                step(x, bad)
        assert (sys.getrefcount(x), sys.getrefcount(bad)) == refs
        for p, b in zip(params, before):
            np.testing.assert_array_equal(p.get_value(), b)


def test_shapes_that_do_not_broadcast_raise_uma_s_error_without_a_leak():
    import sys
    x, y = sym.vector("x"), sym.vector("y")
    f = uma.function([x, y], sym.tanh(x) + y, backend="numba")
    a, b = np.ones(3), np.ones(4)
    np.testing.assert_allclose(f(a, a), np.tanh(a) + a, rtol=1e-15)
    np.testing.assert_allclose(f(a, a), np.tanh(a) + a, rtol=1e-15)  # compiled
    refs = sys.getrefcount(a), sys.getrefcount(b)
    for _ in range(3):
        with pytest.raises(ValueError, match="broadcast"):
            f(a, b)
    assert (sys.getrefcount(a), sys.getrefcount(b)) == refs


def test_the_same_graph_is_compiled_once_per_process():
    from uma.runtime.linkers.numba.linker import _COMPILED
    x = sym.matrix("x")
    uma.function([x], sym.exp(x) * 3.0 + 1.0, backend="numba")(np.ones((2, 2)))
    n = len(_COMPILED)
    f = uma.function([x], sym.exp(x) * 3.0 + 1.0, backend="numba")
    np.testing.assert_allclose(f(np.ones((2, 2))), np.exp(np.ones((2, 2))) * 3 + 1, rtol=1e-15)
    assert len(_COMPILED) == n


def test_outputs_are_fresh_and_arguments_unchanged():
    w = uma.shared(np.arange(3.0), "w")
    x = sym.vector("x")
    f = uma.function([x], [x, sym.transpose(w), w * 2], updates={w: w + x}, backend="numba")
    xv = np.ones(3)
    a, b, c = f(xv)
    assert not np.shares_memory(a, xv)
    a += 10
    b += 10
    np.testing.assert_array_equal(xv, np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0) + 1)


def test_a_run_numba_cannot_compile_falls_back_to_the_numpy_table_once(monkeypatch):
    """A run whose source Numba refuses (here: a dispatch entry made invalid) gives uma's
    results from the numpy table, and is not compiled again at every call."""
    from uma.runtime.linkers.numba import dispatch
    x = sym.vector("x")
    real = dispatch._FLOAT["tanh"]
    monkeypatch.setitem(dispatch._FLOAT, "tanh", "einsum")  # a NumPy function Numba does not compile
    f = uma.function([x], sym.tanh(x) * 2.0, backend="numba")
    monkeypatch.setitem(dispatch._FLOAT, "tanh", real)
    for _ in range(3):
        np.testing.assert_allclose(f(np.linspace(-1, 1, 5)), np.tanh(np.linspace(-1, 1, 5)) * 2, rtol=1e-15)
    assert f._thunk.compiled_runs == 1 and f._thunk.runs[0].compiled() is None


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_scalar_step_passes_numbers_to_the_compiled_run_and_returns_fresh_arrays(dtype):
    """0-d values go to the compiled run as numbers and come back as new 0-d arrays of the
    graph's dtype (a float32 result is not widened), writeable, sharing no memory with the
    stored value."""
    numba = pytest.importorskip("numba")
    c = uma.shared(np.array(0.5, dtype), "c")
    f = uma.function([], c * 3, updates={c: c + 1}, backend="numba")
    outs = [f() for _ in range(5)]
    sigs = f._thunk.runs[0].compiled().signatures  # (one dispatcher per source: float64's too)
    assert sigs and not any(isinstance(t, numba.types.Array) for sig in sigs for t in sig)
    want, v = [], np.array(0.5, dtype)
    for _ in range(5):
        want.append(v * np.array(3, dtype))
        v = v + np.array(1, dtype)
    for o, w in zip(outs, want):
        assert type(o) is np.ndarray and o.dtype == dtype and o.shape == () and o.flags.writeable
        assert o == w
    stored = c.container.read(f.linker)
    assert stored.dtype == dtype and stored == v and not np.shares_memory(outs[-1], stored)
    assert c.get_value() == v


@pytest.mark.parametrize("both", [False, True], ids=["one-update", "two-updates"])
def test_a_bad_update_shape_raises_and_changes_nothing_after_compiled_calls(both):
    """One update: the compiled run returns it bare (no label flag, no tuple); two: a tuple.
    An update that does not fit its shared variable's static shape still raises, before
    anything is written, after calls that ran the compiled run."""
    w = uma.shared(np.zeros(1), "w", shape=(1,))
    v = uma.shared(np.zeros(2), "v")
    x = sym.vector("x")
    updates = {w: w + x, v: v + 1.0} if both else {w: w + x}
    f = uma.function([x], [], updates=updates, backend="numba")
    for _ in range(3):
        f(np.ones(1))
    assert f._thunk.runs[0].compiled() is not None
    w0, v0 = w.get_value(), v.get_value()
    np.testing.assert_array_equal(w0, [3.0])
    for _ in range(2):
        with pytest.raises(ValueError, match=r"shared variable 'w'"):
            f(np.ones(3))
        np.testing.assert_array_equal(w.get_value(), w0)
        np.testing.assert_array_equal(v.get_value(), v0)
    f(np.ones(1))
    np.testing.assert_array_equal(w.get_value(), w0 + 1)
    np.testing.assert_array_equal(v.get_value(), v0 + 1 if both else v0)


def test_a_compiled_run_of_another_dtype_is_a_runtime_error_and_changes_nothing(monkeypatch):
    """The first call with new shapes compiles the run and checks its result types: a
    dispatch entry that computes another dtype (here: made to) raises, and nothing is stored."""
    from uma.runtime.linkers.numba import dispatch
    w = uma.shared(np.linspace(-1, 1, 3), "w")
    real = dispatch._FLOAT["tanh"]
    monkeypatch.setitem(dispatch._FLOAT, "tanh", "isnan")  # bool results
    f = uma.function([], [], updates={w: sym.tanh(w)}, backend="numba")
    monkeypatch.setitem(dispatch._FLOAT, "tanh", real)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"tanh.*: Numba computes dtype bool with 1 dimension\(s\), but the graph "
                                               r"inferred float64 with 1 \(a bug in uma's numba linker\)"):
            f()
        np.testing.assert_array_equal(w.get_value(), np.linspace(-1, 1, 3))


def test_writeable_and_read_only_arguments_share_one_compilation_and_stored_results_are_read_only():
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((8, 6)), rng.integers(0, 3, 8)
    Xr = X.copy()
    Xr.flags.writeable = False
    step, params = _mlp("numba")
    losses = [step(a, Y) for a in (X, Xr, X, Xr, X)]
    assert len(step._thunk.runs[0].compiled().signatures) == 1
    assert all(type(v) is np.ndarray and v.flags.writeable for v in losses)
    for p in params:
        stored = p.container.read(step.linker)
        assert not stored.flags.writeable  # made read-only by the compiled run, at no cost
        got = p.get_value()
        assert got.flags.writeable and not np.shares_memory(got, stored)
    step_cpu, params_cpu = _mlp("cpu")
    for a in (X, Xr, X, Xr, X):
        step_cpu(a, Y)
    for p, q in zip(params, params_cpu):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-10, atol=1e-13)
