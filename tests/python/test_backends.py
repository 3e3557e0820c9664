"""Python-defined backends (issue 4): the documented ``uma.Linker`` base, the registry, and the
``numpy`` linker (NumPy in Python, residency "numpy") mixed with ``reference`` and ``cpu`` on
the same shared variables. NumPy is the oracle."""
import textwrap

import numpy as np
import pytest

import uma
from conftest import assert_matches, random_data
from uma import sym
from uma.graph import Op
from uma.runtime import HOST, NumpyLinker
from uma.runtime.testing import CountingLinker, CountingValue

BACKENDS = ["reference", "cpu", "numpy"]


def host(v):
    """A NumPy copy of a function output of any backend."""
    if isinstance(v, CountingValue):
        return v.array.copy()
    return np.array(v, copy=True)


# ======================================================================== registry and base

def test_numpy_is_registered_when_uma_is_imported():
    assert {"reference", "cpu", "numpy"} <= set(uma.backends())
    assert uma.backends() == sorted(uma.backends())
    lk = uma.runtime.get_linker("numpy")
    assert isinstance(lk, NumpyLinker) and isinstance(lk, uma.Linker)
    assert (lk.name, lk.residency) == ("numpy", "numpy")


def test_register_backend_contract():
    class Mine(uma.Linker):
        name = residency = "test-mine"

        def compile(self, fgraph):
            return uma.runtime.reference.make_evaluator(fgraph)

    lk = Mine()
    uma.register_backend("test-mine", lk)
    try:
        assert "test-mine" in uma.backends()
        uma.register_backend("test-mine", lk)  # the same object again: fine
        with pytest.raises(ValueError, match="already registered"):
            uma.register_backend("test-mine", Mine())
        uma.register_backend("test-mine", Mine(), replace=True)
        with pytest.raises(TypeError):
            uma.register_backend("x", object())
        with pytest.raises(TypeError):
            uma.register_backend("", lk)
        a = uma.shared(np.array([1.0]))
        uma.function([], [], updates={a: a + 1}, backend="test-mine")()
        assert a.get_value().item() == 2.0
    finally:
        uma.runtime.linker._BACKENDS.pop("test-mine", None)
    with pytest.raises(ValueError, match="unknown backend"):
        uma.function([], [], backend="test-mine")


def test_the_linker_docstring_example_runs():
    doc = uma.Linker.__doc__
    code = textwrap.dedent(doc[doc.index("import numpy as np"):].replace("\n        ", "\n"))
    env = {}
    try:
        exec(compile(code, "<Linker docstring>", "exec"), env)
        w = env["w"]
        v = w.get_value()
        assert type(v) is np.ndarray
        np.testing.assert_array_equal(v, [1.0, 1.0, 1.0])
        assert w.container.current == {"mine", HOST}
    finally:
        uma.runtime.linker._BACKENDS.pop("mine", None)


# ======================================================================== numpy linker basics

def test_numpy_outputs_are_ndarrays_and_never_alias(rng):
    a = uma.shared(rng.normal(size=(2, 3)), "a")
    x = sym.matrix("x")
    f = uma.function([x], [x, x.T, a, sym.reshape(a, (-1,)), a * 2, a * 2, x + a],
                     updates={a: a + 1}, backend="numpy")
    xv = rng.normal(size=(2, 3))
    keep = xv.copy()
    before = a.get_value()
    outs = f(xv)
    for o in outs:
        assert type(o) is np.ndarray and o.flags.writeable
    for i, o in enumerate(outs):
        assert not np.shares_memory(o, xv)
        for p in outs[i + 1:]:
            assert not np.shares_memory(o, p)
        o[...] = -99.0  # writes into returned arrays change nothing else
    np.testing.assert_array_equal(xv, keep)
    np.testing.assert_array_equal(a.get_value(), before + 1)


def test_numpy_zero_d_outputs_are_0d_ndarrays():
    v = uma.shared(np.arange(4.0), "v")
    f = uma.function([], [sym.sum(v), sym.max(v) * 2, sym.argmax(v)], backend="numpy")
    for out, exp in zip(f(), [6.0, 6.0, 3]):
        assert type(out) is np.ndarray and out.shape == () and out.item() == exp


def test_numpy_inputs_follow_the_casting_rules():
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], x * 2, backend="numpy")
    assert f([1, 2]).dtype == np.float32  # weak Python ints
    assert f(np.array([1, 2], np.int8)).dtype == np.float32  # safe cast
    with pytest.raises(TypeError, match="float64"):
        f(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        f(np.ones((2, 2), np.float32))  # ndim
    assert f(uma.asarray(np.ones(3, np.float32))).tolist() == [2.0, 2.0, 2.0]


def test_numpy_native_input_is_not_copied_or_written():
    x = sym.vector("x")
    seen = []

    class Spy(Op):
        name = "spy"

        def output_types(self, inputs):
            return [inputs[0].type]

        def numpy_perform(self, node, values):
            seen.append(values[0])
            return [values[0] + 0]

    f = uma.function([x], Spy()(x), backend="numpy")
    xv = np.arange(3.0)
    f(xv)
    assert seen[0] is xv  # an ndarray of the declared dtype goes in as is (is_native)
    m = np.ma.masked_array([1.0, 2.0], mask=[True, False])
    f(m)  # a subclass is filtered like any other array: a plain ndarray reaches the ops
    assert type(seen[1]) is np.ndarray


class _TimesThree(Op):
    """Only a reference ``perform`` (uma eager ops): the numpy linker falls back to it."""

    name = "test_times_three"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0] * 3]


def test_numpy_runs_ops_without_a_numpy_implementation(rng):
    x = sym.matrix("x")
    f = uma.function([x], sym.exp(_TimesThree()(x)), backend="numpy")
    a = rng.normal(size=(2, 2))
    out = f(a)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, np.exp(3 * a), rtol=1e-12)


def test_numpy_errors_and_failing_calls_change_nothing():
    W = uma.shared(np.ones((3, 2)), "W")
    x = sym.matrix("x")
    f = uma.function([x], x @ W, updates={W: W * 2}, backend="numpy")
    with pytest.raises(ValueError, match="matmul"):
        f(np.ones((2, 4)))
    with pytest.raises(TypeError):
        f()
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_numpy_keeps_declared_dtypes(dtype, rng):
    a = uma.shared(random_data(dtype, (3,), rng, "positive"), "a")
    f = uma.function([], [a * 2, a + a, sym.sum(a), a.astype("float32")], updates={a: a * 2},
                     backend="numpy")
    outs = f()
    assert [o.dtype.name for o in outs] == [dtype, dtype, np.sum(np.ones(1, dtype)).dtype.name, "float32"]
    assert a.get_value().dtype == np.dtype(dtype)


# ======================================================================== the seed scenario

WRITERS = BACKENDS + ["counting"]


def _backend(name):
    return CountingLinker("counting") if name == "counting" else name


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("reader", WRITERS)
def test_a_value_written_on_one_backend_is_read_on_every_other(writer, reader):
    a = uma.shared(np.array([1.0, 2.0, 3.0], np.float32), "a")
    n = uma.shared(np.array(0, np.int64), "n")
    write = uma.function([], [], updates={a: a * 2 + 1, n: n + 1}, backend=_backend(writer))
    read = uma.function([], [a + 0.5, n * 10], backend=_backend(reader))
    expected_a, expected_n = np.array([1.0, 2.0, 3.0], np.float32), 0
    for _ in range(3):
        write()
        expected_a, expected_n = expected_a * 2 + 1, expected_n + 1
        got_a, got_n = read()
        np.testing.assert_array_equal(host(got_a), expected_a + np.float32(0.5))
        assert host(got_n) == expected_n * 10
        for v, exp, dt in ((a, expected_a, np.float32), (n, expected_n, np.int64)):
            value = v.get_value()
            assert type(value) is np.ndarray and value.dtype == dt
            np.testing.assert_array_equal(value, exp)
            assert type(v.get_value(borrow=True)) is np.ndarray


def test_numpy_residency_conversions_are_zero_copy():
    a = uma.shared(np.arange(4.0), "a")
    write_np = uma.function([], [], updates={a: a + 1}, backend="numpy")
    write_np()
    assert a.container.current == {"numpy"}
    stored = a.container._values["numpy"][0]
    assert type(stored) is np.ndarray
    host_view = a.get_value(borrow=True)  # output_filter adopts the ndarray: no copy
    assert np.shares_memory(host_view, stored)
    assert a.container.current == {"numpy", HOST}
    uma.function([], [], updates={a: a * 2}, backend="cpu")()
    read_np = uma.function([], a * 1, backend="numpy")
    np.testing.assert_array_equal(read_np(), (np.arange(4.0) + 1) * 2)
    numpy_copy = a.container._values["numpy"][0]  # input_filter: a read-only view of the host copy
    assert np.shares_memory(numpy_copy, a.get_value(borrow=True)) and not numpy_copy.flags.writeable


def _logreg(backend_of_step, steps, lr=0.5, seed=0):
    """Softmax regression trained with each step on ``backend_of_step(k)``; returns (W, b,
    losses) after ``steps`` steps. All steps share the same W, b."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 5))
    Y = rng.integers(0, 3, size=40)
    W = uma.shared(np.zeros((5, 3)), "W")
    b = uma.shared(np.zeros(3), "b")
    x, y = sym.matrix("x", shape=(None, 5)), sym.vector("y", dtype="int64")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 3) * sym.log_softmax(x @ W + b), axis=1))
    gW, gb = uma.grad(loss, [W, b])
    fns = {be: uma.function([x, y], loss, updates=[(W, W - lr * gW), (b, b - lr * gb)], backend=be)
           for be in BACKENDS}
    losses = [float(host(fns[backend_of_step(k)](X, Y))) for k in range(steps)]
    return W.get_value(), b.get_value(), losses, X, Y


def _numpy_logreg(X, Y, steps, lr=0.5):
    W, b = np.zeros((5, 3)), np.zeros(3)
    losses = []
    for _ in range(steps):
        z = X @ W + b
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        onehot = np.eye(3)[Y]
        losses.append(-np.mean(np.sum(onehot * logp, axis=1)))
        d = (np.exp(logp) - onehot) / len(X)
        W, b = W - lr * (X.T @ d), b - lr * d.sum(axis=0)
    return W, b, losses


@pytest.mark.parametrize("schedule", ["reference", "cpu", "numpy", "mixed"])
def test_the_same_model_trains_on_every_backend_and_on_a_mix(schedule):
    pick = (lambda k: BACKENDS[k % 3]) if schedule == "mixed" else (lambda k: schedule)
    W, b, losses, X, Y = _logreg(pick, 12)
    W_np, b_np, losses_np = _numpy_logreg(X, Y, 12)
    np.testing.assert_allclose(W, W_np, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b, b_np, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(losses, losses_np, rtol=1e-10)
    assert losses[-1] < losses[0]


def test_mlp_gradients_agree_across_backends(rng):
    x = sym.matrix("x")
    W1 = uma.shared(rng.normal(size=(4, 6)), "W1")
    W2 = uma.shared(rng.normal(size=(6, 3)), "W2")
    b1 = uma.shared(np.zeros(6), "b1")
    cost = sym.sum(sym.softmax(sym.relu(x @ W1 + b1) @ W2) ** 2)
    grads = uma.grad(cost, [W1, W2, b1])
    xv = rng.normal(size=(5, 4))
    results = {be: [host(g) for g in uma.function([x], grads, backend=be)(xv)] for be in BACKENDS}
    for be in ("cpu", "numpy"):
        for g, r in zip(results[be], results["reference"]):
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", ["numpy"])
def test_numpy_backend_verify_grad(backend, rng):
    uma.verify_grad(lambda a, b: sym.sum(sym.tanh(a @ b) * sym.exp(a[:, :1])),
                    [rng.normal(size=(3, 4)), rng.normal(size=(4, 2))], backend=backend)


def test_eager_update_policy_on_numpy_keeps_the_host_current():
    a = uma.shared(np.array([1.0]), "a")
    f = uma.function([], [], updates={a: a + 1}, backend="numpy", update_policy="eager")
    f()
    assert a.container.current == {"numpy", HOST}
    assert_matches(uma.asarray(a.get_value()), np.array([2.0]))
