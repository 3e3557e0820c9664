"""Python-defined backends: the documented ``uma.Linker`` base, the registry, and the
``numpy`` linker (NumPy in Python, residency "numpy") mixed with ``reference`` and ``cpu`` on
the same shared variables. NumPy is the oracle."""
import functools
import re
import textwrap

import numpy as np
import pytest

import uma
from conftest import BACKENDS, as_uma_output, assert_matches, random_data
from uma import sym
from uma.graph import FunctionGraph, Op, ops
from uma.graph.basic import as_variable
from uma.runtime import HOST, CpuLinker, NumpyLinker
from uma.runtime.linkers.cpu import program_op
from uma.runtime.linkers.numpy import numpy_impl
from uma.runtime.linkers.reference import make_evaluator
from uma.runtime.testing import CountingLinker, CountingValue


def host(v):
    """A NumPy copy of a function output of any backend."""
    if isinstance(v, CountingValue):
        return v.array.copy()
    module = type(v).__module__
    if module.startswith(("torch", "jax", "mlx")):  # a framework backend's array, as a uma.Array
        v = (as_uma_output(v, "mlx") if module.startswith("mlx")  # NumPy can't read their bfloat16
             else uma.from_dlpack(v).to_device("cpu"))  # on the host, whatever device it is on
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
            return make_evaluator(fgraph)

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
    code = textwrap.dedent(doc[doc.index("import functools"):].replace("\n        ", "\n"))
    env = {}
    try:
        exec(compile(code, "<Linker docstring>", "exec"), env)
        w, step = env["w"], env["step"]
        v = w.get_value()
        assert type(v) is np.ndarray
        np.testing.assert_array_equal(v, [1.0, 1.0, 1.0])
        assert w.container.current == {"mine", HOST}
        out = step(np.array([1.0, 2.0, 3.0]))
        assert type(out) is np.ndarray and out.shape == () and out == 6.0
        np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
        assert env["refused"] == "function: backend 'mine' has no implementation of op(s) softmax (Softmax)"
    finally:
        uma.runtime.linker._BACKENDS.pop("mine", None)


# ======================================================================== dispatch tables

@functools.singledispatch
def _partial_table(op, node):
    """A user dispatch table with elementwise ops and matmul only (NumPy values)."""
    return None


@_partial_table.register(ops.Elemwise)
def _(op, node):
    fn = getattr(np, op.name)
    return lambda inputs: [np.asarray(fn(*inputs))]


_partial_table.register(ops.MatMul)(lambda op, node: lambda inputs: [inputs[0] @ inputs[1]])


class _PartialLinker(uma.Linker):
    """A backend that implements only what its dispatch table has; counts its thunk's calls."""

    name = residency = "test-partial"
    dispatch = _partial_table

    def __init__(self):
        self.calls = 0

    def input_filter(self, value, type):
        return np.array(value)

    def output_filter(self, value, type):
        return uma.asarray(value)

    def compile(self, fgraph):
        run = super().compile(fgraph)

        def thunk(values):
            self.calls += 1
            return run(values)
        return thunk


def test_a_partial_dispatch_table_runs_what_it_has():
    lk = _PartialLinker()
    W = uma.shared(np.eye(2), "W")
    x = sym.matrix("x")
    f = uma.function([x], sym.exp(x @ W) * 2, updates={W: W + 1}, backend=lk)
    assert lk.unsupported(f.fgraph) == []
    a = np.array([[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(f(a), np.exp(a) * 2, rtol=1e-15)
    assert W.container.current == {"test-partial"} and lk.calls == 1
    np.testing.assert_array_equal(W.get_value(), np.eye(2) + 1)


def test_ops_missing_from_a_dispatch_table_are_refused_at_compile_time():
    lk = _PartialLinker()
    uma.register_backend("test-partial", lk)
    try:
        W = uma.shared(np.eye(2), "W")
        x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
        loss = sym.mean(sym.softmax_cross_entropy(sym.exp(x @ W), y)) + sym.sum(W)
        with pytest.raises(NotImplementedError) as err:
            uma.function([x, y], loss, updates={W: W - 0.1 * uma.grad(loss, W)}, backend="test-partial")
        msg = str(err.value)
        assert msg.startswith("function: backend 'test-partial' has no implementation of op(s) "), msg
        for named in ("softmax_cross_entropy (SoftmaxCrossEntropy)", "mean (Reduce)", "sum (Reduce)",
                      "softmax_cross_entropy_grad (SoftmaxCrossEntropyGrad)"):
            assert named in msg, msg
        assert "exp" not in msg and "matmul" not in msg  # what the table has is not listed
        assert msg.count("sum (Reduce)") == 1  # each op once
        assert lk.calls == 0
        np.testing.assert_array_equal(W.get_value(), np.eye(2))
        fg = FunctionGraph([x, y, W], [loss])
        assert {op.name for op in lk.unsupported(fg)} == {"softmax_cross_entropy", "mean", "sum"}
    finally:
        uma.runtime.linker._BACKENDS.pop("test-partial", None)


class _NoPerform(Op):
    """An op with no reference semantics and no entry in any dispatch table."""

    name = "test_no_perform"

    def output_types(self, inputs):
        return [inputs[0].type]


@pytest.mark.parametrize("backend", BACKENDS)
def test_built_in_backends_refuse_an_op_they_cannot_run_at_compile_time(backend):
    x = sym.vector("x")
    with pytest.raises(NotImplementedError, match=rf"^function: backend '{backend}' has no implementation of op\(s\) "
                                                  r"test_no_perform \(_NoPerform\)$"):
        uma.function([x], _NoPerform()(sym.exp(x)), backend=backend)
    assert uma.runtime.get_linker(backend).unsupported(FunctionGraph([x], [sym.exp(x) + 1])) == []


def test_known_ops_lists_every_op_a_compiled_graph_contains():
    known = uma.Linker.known_ops()
    assert list(known) == sorted(known) and "op" not in known
    assert all(isinstance(c, type) and issubclass(c, Op) for c in known.values())
    for name in ("add", "exp", "trigamma", "sum", "argmax", "var", "logsumexp", "cumprod", "softmax",
                 "log_softmax", "softmax_cross_entropy", "matmul", "getitem", "take", "mask_select", "clip",
                 "round", "astype", "zeros_like", "full_like", "one_hot", "random_normal", "random_advance"):
        assert name in known, name
    # every op of compiled graphs: those uma.grad makes and the rewrites leave included
    rs = uma.random.RandomStream(0)
    x = sym.matrix("x", shape=(None, 4))
    y = sym.vector("y", dtype="int64")
    i = sym.vector("i", dtype="int64")
    W = uma.shared(np.ones((4, 3)), "W")
    z = x @ W + rs.normal(0.0, 1.0, size=(3,))
    parts = [sym.mean(sym.softmax_cross_entropy(z, y)), sym.sum(z[1:, ::2] ** 2),
             sym.sum(uma.set_subtensor(z[0], z[1]) * 3), sym.sum(uma.inc_subtensor(z[i], 1.0) ** 2),
             sym.sum(sym.take(z, i, axis=0)), sym.sum(z[z > 0]), sym.sum(sym.diagonal(z)),
             sym.sum(sym.concatenate([z, x[:, :3]])), sym.sum(sym.reshape(x, (-1,)) ** 2),
             sym.sum(sym.log_softmax(z) * sym.cumsum(z, axis=1)), sym.sum(sym.clip(z, -1, 1) + sym.round(z)),
             sym.sum(sym.full_like(z, 2.0) * z), sym.logsumexp(z) + sym.var(z)]
    cost = sum(parts[1:], parts[0])
    gx, gW = uma.grad(cost, [x, W])
    made = {}
    for backend in BACKENDS:
        f = uma.function([x, y, i], [cost, gx], updates={W: W - 0.1 * gW}, backend=backend)
        for node in f.fgraph.toposort():
            made[node.op.name] = type(node.op)
    for name in ("softmax_cross_entropy_grad", "getitem_grad", "set_subtensor", "inc_subtensor",
                 "diagonal_embed", "segment", "broadcast_like", "random_advance", "random_normal"):
        assert name in made, name
    for name, cls in made.items():
        assert known.get(name) is cls, (name, cls)


def test_the_cpu_fast_path_is_a_capability_of_the_thunk():
    class MyCpu(CpuLinker):
        name = "test-my-cpu"

    x = sym.vector("x")
    f = uma.function([x], x * 2 + 1, backend=MyCpu())
    assert f.fast_path  # a subclass compiles to a Program too
    f(np.arange(3.0))
    assert f.call_counts() == {"fast": 1, "general": 0}

    class ProgramOnly(uma.Linker):  # another linker whose thunk carries a whole-graph Program
        name = "test-program-only"

        def compile(self, fgraph):
            return CpuLinker().compile(fgraph)

    g = uma.function([x], x * 3, backend=ProgramOnly())
    assert g.fast_path
    np.testing.assert_array_equal(np.asarray(g(np.arange(3.0))), [0.0, 3.0, 6.0])
    assert g.call_counts()["fast"] == 1

    class Elsewhere(ProgramOnly):  # a Program is for the host residency only
        name = residency = "test-program-elsewhere"

    assert not uma.function([x], x * 3, backend=Elsewhere()).fast_path


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

    @numpy_impl.register(Spy)
    def _(op, node):
        def spy(values):
            seen.append(values[0])
            return [values[0] + 0]
        return spy

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


@pytest.mark.parametrize("backend", ["numpy", "cpu", "reference"])
def test_out_of_range_indices_name_the_op_on_every_host_backend(backend):
    """NumPy's IndexError (the oracle's words), prefixed by the op the graph holds."""
    x, i, y = sym.vector("x"), sym.vector("i", dtype="int64"), sym.vector("y")
    X = np.zeros(3)
    with pytest.raises(IndexError) as oracle:
        X[np.array([4])] = 1.0
    f = uma.function([x, i, y], sym.set_subtensor(x, i, y), backend=backend)
    with pytest.raises(IndexError, match=f"^set_subtensor: {oracle.value}$"):
        f(X, np.array([4]), np.ones(1))
    with pytest.raises(IndexError) as oracle:
        np.take(X, np.array([3]))
    g = uma.function([x, i], x[i], backend=backend)
    with pytest.raises(IndexError, match=f"^take: {oracle.value}$"):
        g(X, np.array([3]))
    m = sym.vector("m", dtype="bool")
    h = uma.function([x, m], x[m], backend=backend)
    with pytest.raises(IndexError, match="^getitem: boolean index did not match"):
        h(X, np.ones(4, bool))


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


SEED_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("reader", WRITERS)
def test_every_dtype_written_on_one_backend_is_read_on_every_other(writer, reader):
    """The seed scenario on every float and integer dtype: the writer's update is what the
    reader computes from, and get_value() is a fresh NumPy array of the declared dtype."""
    from conftest import np_dtype
    for dt in SEED_DTYPES:
        start = np.array([1, 2, 3], np_dtype(dt))
        v = uma.shared(start.copy(), f"v_{dt}")
        write = uma.function([], [], updates={v: v + np.array(1, np_dtype(dt))}, backend=_backend(writer))
        read = uma.function([], v * np.array(2, np_dtype(dt)), backend=_backend(reader))
        for k in range(1, 3):
            write()
            got = host(read())
            assert got.dtype == np_dtype(dt), (dt, got.dtype)
            np.testing.assert_array_equal(got, (start + k) * 2, err_msg=dt)
            value = v.get_value()
            assert type(value) is np.ndarray and value.dtype == np_dtype(dt), (dt, value.dtype)
            np.testing.assert_array_equal(value, start + k, err_msg=dt)
            value[...] = 0  # a fresh array: writing it changes nothing stored
            np.testing.assert_array_equal(v.get_value(), start + k, err_msg=dt)


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
    stored = a.container.copy_in("numpy")
    assert type(stored) is np.ndarray
    host_view = a.get_value(borrow=True)  # output_filter adopts the ndarray: no copy
    assert np.shares_memory(host_view, stored)
    assert a.container.current == {"numpy", HOST}
    uma.function([], [], updates={a: a * 2}, backend="cpu")()
    read_np = uma.function([], a * 1, backend="numpy")
    np.testing.assert_array_equal(read_np(), (np.arange(4.0) + 1) * 2)
    numpy_copy = a.container.copy_in("numpy")  # input_filter: a read-only view of the host copy
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


@pytest.mark.parametrize("schedule", BACKENDS + ["mixed", "blocks"])
def test_the_same_model_trains_on_every_backend_and_on_a_mix(schedule):
    """One backend alone, a different backend every step ("mixed"), or blocks of 3 steps."""
    pick = ((lambda k: BACKENDS[k % len(BACKENDS)]) if schedule == "mixed" else
            (lambda k: BACKENDS[(k // 3) % len(BACKENDS)]) if schedule == "blocks" else (lambda k: schedule))
    W, b, losses, X, Y = _logreg(pick, 12)
    W_np, b_np, losses_np = _numpy_logreg(X, Y, 12)
    np.testing.assert_allclose(W, W_np, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b, b_np, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(losses, losses_np, rtol=1e-10)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_label_raises_before_any_update_on_every_backend(backend):
    W = uma.shared(np.ones((3, 2)), "W")
    steps = uma.shared(np.array(0, np.int64), "steps")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W), steps: steps + 1}, backend=backend)
    for bad in ([0, 2], [-1, 0]):
        with pytest.raises(ValueError, match="softmax_cross_entropy"):
            step(np.ones((2, 3)), np.array(bad))
        np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))
        assert steps.get_value() == 0
    step(np.ones((2, 3)), np.array([0, 1]))
    assert steps.get_value() == 1


@pytest.mark.parametrize("backend", [b for b in BACKENDS if uma.runtime.get_linker(b).residency != HOST])
def test_one_conversion_per_switch_and_none_in_a_loop(backend):
    w = uma.shared(np.zeros(4), "w")
    here = uma.function([], [], updates={w: w + 1}, backend=backend)
    on_cpu = uma.function([], [], updates={w: w * 2}, backend="cpu")
    res = uma.runtime.get_linker(backend).residency
    uma.conversion_stats(reset=True)
    for _ in range(4):
        here()
    assert uma.conversion_stats() == {(HOST, res): {"conversions": 1, "bytes": 32}}
    for _ in range(3):
        on_cpu()
        here()
    stats = uma.conversion_stats()
    assert stats[(HOST, res)]["conversions"] == 4 and stats[(res, HOST)]["conversions"] == 3, stats
    np.testing.assert_array_equal(w.get_value(), np.full(4, ((4 * 2 + 1) * 2 + 1) * 2 + 1.0))


def test_mlp_gradients_agree_across_backends(rng):
    x = sym.matrix("x")
    W1 = uma.shared(rng.normal(size=(4, 6)), "W1")
    W2 = uma.shared(rng.normal(size=(6, 3)), "W2")
    b1 = uma.shared(np.zeros(6), "b1")
    cost = sym.sum(sym.softmax(sym.relu(x @ W1 + b1) @ W2) ** 2)
    grads = uma.grad(cost, [W1, W2, b1])
    xv = rng.normal(size=(5, 4))
    results = {be: [host(g) for g in uma.function([x], grads, backend=be)(xv)] for be in BACKENDS}
    for be in BACKENDS:
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


# ======================================================================== update validation
# DESIGN.md "update validation": whatever backend computed it, an update value of another
# dtype, ndim or static shape than its shared variable is a TypeError naming the variable, the
# backend and both types, and no shared variable changes (not even those updated correctly).

class _Liar(uma.Linker):
    """Reference semantics, values as NumPy arrays in residency ``residency``; the thunk hands
    back ``lie(value)`` instead of the value for the updates listed in ``bad``."""

    def __init__(self, residency, lie, bad=(0,)):
        self.name = "test-liar"
        self.residency = residency
        self.lie, self.bad = lie, set(bad)

    def input_filter(self, value, type):
        return np.array(value) if self.residency != HOST else value

    def output_filter(self, value, type):
        return uma.asarray(value)

    def compile(self, fgraph):
        evaluate = make_evaluator(fgraph)
        n_out = len(fgraph.outputs) - len(fgraph.update_mapping)
        own = self.residency != HOST

        def thunk(values):
            outs = evaluate([uma.asarray(v) for v in values])
            if own:
                outs = [np.array(o) for o in outs]
            return outs[:n_out] + [self.lie(o) if k in self.bad else o for k, o in enumerate(outs[n_out:])]
        return thunk


@pytest.fixture
def liar():
    """``liar(residency, lie, bad)``: a _Liar registered as backend "test-liar" (removed after)."""
    def make(residency, lie, bad=(0,)):
        lk = _Liar(residency, lie, bad)
        uma.register_backend(lk.name, lk, replace=True)
        return lk
    yield make
    uma.runtime.linker._BACKENDS.pop("test-liar", None)


def _torch(dtype):
    torch = pytest.importorskip("torch")
    return lambda o: torch.from_numpy(np.array(o)).to(getattr(torch, dtype))


# (name, lie, what the message says was returned); the variable is float64 of shape (2, 3)
LIES = [
    ("float32", lambda o: np.asarray(o, np.float32), r"float32 of shape \(2, 3\)"),
    ("int64", lambda o: np.asarray(o).astype(np.int64), r"int64 of shape \(2, 3\)"),
    ("complex", lambda o: np.asarray(o).astype(np.complex128), r"complex128 of shape \(2, 3\)"),
    ("uma-float32", lambda o: uma.asarray(np.asarray(o, np.float32)), r"float32 of shape \(2, 3\)"),
    ("ndim", lambda o: np.asarray(o).ravel(), r"float64 of shape \(6,\)"),
    ("0-d", lambda o: np.asarray(o).sum(), r"float64 of shape \(\)"),
    ("static-shape", lambda o: np.asarray(o).reshape(3, 2), r"float64 of shape \(3, 2\)"),
    ("list", lambda o: np.asarray(o).tolist(), r"a list \(no dtype and shape\)"),
    ("bytes", lambda o: np.asarray(o).tobytes(), r"a bytes \(no dtype and shape\)"),
    ("torch-float32", "float32", r"float32 of shape \(2, 3\)"),
    ("torch-bfloat16", "bfloat16", r"bfloat16 of shape \(2, 3\)"),
]


@pytest.mark.parametrize("residency", ["test-liar", HOST])
@pytest.mark.parametrize("name,lie,returned", LIES, ids=[x[0] for x in LIES])
def test_a_wrong_update_value_is_a_type_error_and_changes_nothing(liar, residency, name, lie, returned):
    if isinstance(lie, str):
        lie = _torch(lie)
    w = uma.shared(np.arange(6.0).reshape(2, 3), "w", shape=(2, 3))
    v = uma.shared(np.array([1.0, 2.0]), "v")
    uma.function([], [], updates={w: w + 1, v: v + 1}, backend="numpy")()  # current: numpy
    w_old, v_old = w.get_value(), v.get_value()
    liar(residency, lie)
    f = uma.function([], [], updates={w: w * 2, v: v * 2}, backend="test-liar")
    with pytest.raises(TypeError) as err:
        f()
    assert err.type is TypeError
    assert re.fullmatch(rf"function: backend 'test-liar' returned {returned} for shared variable 'w' of type "
                        rf"TensorType\(float64, \(2, 3\)\); no shared variable was changed", str(err.value)), err.value
    for s, old in ((w, w_old), (v, v_old)):
        assert "numpy" in s.container.current  # the written copy is still current
        got = s.get_value()
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, old)
    ws, vs = uma.function([], [w * 1, v * 1], backend="cpu")()  # another backend reads the old values
    np.testing.assert_array_equal(np.asarray(ws), w_old)
    np.testing.assert_array_equal(np.asarray(vs), v_old)


def test_the_message_names_the_declared_type(liar):
    liar("test-liar", lambda o: np.asarray(o, np.float32).ravel())
    w = uma.shared(np.ones((2, 3)), "w")
    f = uma.function([], [], updates={w: w + 1}, backend="test-liar")
    with pytest.raises(TypeError) as err:
        f()
    assert str(err.value) == ("function: backend 'test-liar' returned float32 of shape (6,) for shared variable "
                              "'w' of type TensorType(float64, (None, None)); no shared variable was changed")
    np.testing.assert_array_equal(w.get_value(), np.ones((2, 3)))


@pytest.mark.parametrize("residency", ["test-liar", HOST])
@pytest.mark.parametrize("policy", ["lazy", "eager"])
def test_when_only_the_second_update_is_wrong_neither_is_stored(liar, residency, policy):
    a = uma.shared(np.array([1.0, 2.0]), "a")
    b = uma.shared(np.array(3, np.int64), "b")
    liar(residency, lambda o: np.asarray(o, np.float64), bad=(1,))  # b's update as float64
    f = uma.function([], a * 1, updates=[(a, a + 1), (b, b + 1)], backend="test-liar", update_policy=policy)
    with pytest.raises(TypeError, match=r"returned float64 of shape \(\) for shared variable 'b' of type "
                                        r"TensorType\(int64, \(\)\)"):
        f()
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    assert b.get_value().dtype == np.int64 and b.get_value() == 3
    liar(residency, lambda o: o, bad=())  # the same function on an honest linker updates both
    g = uma.function([], a * 1, updates=[(a, a + 1), (b, b + 1)], backend="test-liar", update_policy=policy)
    g()
    np.testing.assert_array_equal(a.get_value(), [2.0, 3.0])
    assert b.get_value().dtype == np.int64 and b.get_value() == 4


def test_a_host_linker_value_uma_cannot_read_stores_nothing(liar):
    class Opaque:  # the right dtype and shape, but no array data uma can import
        dtype, shape = np.dtype(np.float64), (2,)
    a = uma.shared(np.array([1.0, 2.0]), "a")
    b = uma.shared(np.array([5.0]), "b")
    liar(HOST, lambda o: Opaque(), bad=(1,))
    f = uma.function([], [], updates=[(b, b + 1), (a, a + 1)], backend="test-liar")
    with pytest.raises(TypeError, match="cannot convert"):
        f()
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [5.0])


class _WrongNdim(Op):
    """x -> x with one more leading axis, while claiming x's type (a broken op)."""

    name = "test_wrong_ndim"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0].reshape((1,) + tuple(values[0].shape)).copy()]


numpy_impl.register(_WrongNdim)(lambda op, node: lambda values: [values[0][None].copy()])


class _CastsToFloat32(Op):
    """Claims x's type, computes float32 (in Python and in the cpu Program: a broken op)."""

    name = "test_casts_to_float32"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        return [values[0].astype("float32")]


program_op.register(_CastsToFloat32)(lambda op, node: ("astype", {"dtype": "float32"}))


class _CastsToFloat32InPython(_CastsToFloat32):
    """The same, run by the cpu linker in Python (no Program op)."""

    name = "test_casts_to_float32_in_python"


program_op.register(_CastsToFloat32InPython)(lambda op, node: None)


class _AddsAsItPleases(Op):
    """Claims its first input's type; the cpu Program's add promotes (a broken op)."""

    name = "test_adds_as_it_pleases"

    def output_types(self, inputs):
        return [inputs[0].type]


program_op.register(_AddsAsItPleases)(lambda op, node: ("add", {}))


@pytest.mark.parametrize("backend", BACKENDS)
def test_built_in_backends_never_store_a_value_of_another_ndim(backend):
    w = uma.shared(np.array([1.0, 2.0]), "w")
    u = uma.shared(np.array([0.0]), "u")
    f = uma.function([], [], updates={u: u + 1, w: _WrongNdim()(w)}, backend=backend)
    with pytest.raises(TypeError, match=rf"backend '{backend}' returned float64 of shape \(1, 2\) for shared "
                                        r"variable 'w' of type TensorType\(float64, \(None,\)\)"):
        f()
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(u.get_value(), [0.0])


def test_the_cpu_call_path_in_cpp_checks_its_updates():
    w = uma.shared(np.array([1.0, 2.0, 3.0]), "w")
    u = uma.shared(np.array([0.0]), "u")
    f = uma.function([], [], updates={u: u + 1, w: _CastsToFloat32()(w)}, backend="cpu")
    assert f.fast_path
    with pytest.raises(TypeError, match=r"^function: backend 'cpu' returned float32 of shape \(3,\) for shared "
                                        r"variable 'w' of type TensorType\(float64, \(None,\)\); no shared "
                                        r"variable was changed$"):
        f()
    assert w.get_value().dtype == np.float64
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(u.get_value(), [0.0])
    assert f.call_counts()["fast"] == 0
    # a scalar call, on the elements (the second call: the first one checks shapes first)
    n = uma.shared(np.array(7, np.int32), "n")
    m = uma.shared(np.array(0.0), "m")
    g = uma.function([], [], updates={m: m + 1, n: _AddsAsItPleases()(n, as_variable(np.array(0.5)))},
                     backend="cpu")
    assert g.fast_path
    for _ in range(2):  # int32 + float64 promotes to float64
        with pytest.raises(TypeError, match=r"backend 'cpu' returned float64 of shape \(\) for shared variable 'n' "
                                            r"of type TensorType\(int32, \(\)\)"):
            g()
        assert n.get_value().dtype == np.int32 and n.get_value() == 7
        assert m.get_value() == 0.0
    assert g.call_counts()["fast"] == 0


def test_the_cpu_python_path_checks_its_updates():
    w = uma.shared(np.array([1.0, 2.0, 3.0]), "w")
    f = uma.function([], [], updates={w: _CastsToFloat32InPython()(w)}, backend="cpu")
    assert not f.fast_path
    with pytest.raises(TypeError, match=r"backend 'cpu' returned float32"):
        f()
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0, 3.0])


# ======================================================================== is_native is checked

class _AnyNdarray(uma.Linker):
    """Takes every numpy.ndarray as native, whatever its dtype and shape (a careless
    is_native); records what its thunk receives."""

    name = residency = "test-any-ndarray"

    def __init__(self):
        self.seen = []

    def input_filter(self, value, type):
        return np.array(value)

    def output_filter(self, value, type):
        return uma.asarray(value)

    def is_native(self, value, type):
        return isinstance(value, np.ndarray)

    def compile(self, fgraph):
        evaluate = make_evaluator(fgraph)

        def thunk(values):
            self.seen.append(list(values))
            return [np.array(o) for o in evaluate([uma.asarray(v) for v in values])]
        return thunk


def _error_of(f, *args):
    with pytest.raises((TypeError, ValueError)) as err:
        f(*args)
    return err.type, str(err.value)


def test_arguments_is_native_accepts_are_still_checked():
    lk = _AnyNdarray()
    w = uma.shared(np.array([1.0, 2.0]), "w")
    x, y = sym.vector("x"), sym.vector("y", shape=(3,))
    f = uma.function([x, y], [], updates={w: w + sym.sum(x) + sym.sum(y)}, backend=lk)
    good_x, good_y = np.ones(2), np.ones(3)
    cases = [  # (native value for x or y, the same value in a form that is not native)
        ((np.ones((2, 2)), good_y), (uma.asarray(np.ones((2, 2))), good_y)),   # ndim: TypeError
        ((good_x, np.ones(4)), (good_x, uma.asarray(np.ones(4)))),             # static length: ValueError
        ((good_x, np.ones((3, 1))), (good_x, uma.asarray(np.ones((3, 1))))),   # ndim of a static one
        ((np.ones(2, np.complex128), good_y), (uma.asarray(np.ones(2, np.complex128)), good_y)),  # unsafe cast
        ((np.ones((2, 2), np.complex128), good_y), (uma.asarray(np.ones((2, 2), np.complex128)), good_y)),
    ]
    for native, other in cases:  # the errors of the same value where it is not native
        assert _error_of(f, *native) == _error_of(f, *other), native
    assert _error_of(f, np.array(["a", "b"]), good_y) == (TypeError, "input 0 ('x'): unsupported dtype str32 "
                                                                      "(expected float64)")
    assert _error_of(f, np.ones((2, 2)), good_y) == (TypeError, "input 0 ('x'): expected 1-d array, got 2-d "
                                                                  "array of shape (2, 2)")
    assert _error_of(f, good_x, np.ones(4))[0] is ValueError
    assert lk.seen == []  # the thunk never ran
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])
    # another dtype that casts safely is converted like any argument; the right one goes as is
    x32 = np.ones(2, np.float32)
    f(x32, good_y)
    xs, ys = lk.seen[-1][:2]
    assert xs.dtype == np.float64 and xs is not x32 and ys is good_y
    np.testing.assert_array_equal(w.get_value(), [6.0, 7.0])
    f(np.ones(0), good_y)
    np.testing.assert_array_equal(w.get_value(), [9.0, 10.0])


def test_a_native_value_without_dtype_and_shape_is_a_type_error():
    class Blob:
        pass

    class TakesBlobs(_AnyNdarray):
        def is_native(self, value, type):
            return isinstance(value, Blob)

    lk = TakesBlobs()
    x = sym.vector("x")
    f = uma.function([x], x * 2, backend=lk)
    with pytest.raises(TypeError, match=r"input 0 \('x'\): backend 'test-any-ndarray' accepts a Blob as native "
                                        r"\(is_native\), but it has no dtype and shape"):
        f(Blob())
    assert lk.seen == []


def test_counting_values_of_another_ndim_or_dtype_are_refused():
    lk = CountingLinker("test-counting-native")
    w = uma.shared(np.array([1.0, 2.0]), "w")
    x = sym.vector("x")
    f = uma.function([x], [], updates={w: w + x}, backend=lk)
    with pytest.raises(TypeError, match=r"input 0 \('x'\): expected 1-d array, got 2-d array of shape \(1, 2\)"):
        f(CountingValue(np.ones((1, 2)), "test-counting-native"))
    with pytest.raises(TypeError, match="cannot cast complex128 to float64 safely"):
        f(CountingValue(np.ones(2, np.complex128), "test-counting-native"))
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])
    f(CountingValue(np.ones(2), "test-counting-native"))
    np.testing.assert_array_equal(w.get_value(), [2.0, 3.0])


def test_torch_arguments_a_linker_takes_as_native_are_checked_without_conversion():
    torch = pytest.importorskip("torch")

    class TorchLinker(_AnyNdarray):
        name = residency = "test-torch"

        def is_native(self, value, type):
            return isinstance(value, torch.Tensor)

    lk = TorchLinker()
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], x * 2, backend=lk)
    with pytest.raises(TypeError, match=r"expected 1-d array, got 2-d array of shape \(2, 2\)"):
        f(torch.ones(2, 2))
    with pytest.raises(TypeError, match="cannot cast float64 to float32 safely"):
        f(torch.ones(2, dtype=torch.float64))
    t = torch.ones(3)
    f(t)
    assert lk.seen[-1][0] is t  # the right type goes to the thunk as it is


# ======================================================================== residencies

def test_two_backends_cannot_claim_one_residency():
    class Mine(uma.Linker):
        residency = "test-clash"

        def compile(self, fgraph):
            return make_evaluator(fgraph)

    first, second = Mine(), Mine()
    uma.register_backend("test-clash-a", first)
    try:
        with pytest.raises(ValueError, match=r"'test-clash-b'.*residency 'test-clash'.*'test-clash-a'"):
            uma.register_backend("test-clash-b", second)
        with pytest.raises(ValueError, match=r"'test-clash-b'.*residency 'test-clash'.*'test-clash-a'"):
            uma.register_backend("test-clash-b", second, replace=True)  # replace= replaces a name only
        assert "test-clash-b" not in uma.backends()
        uma.register_backend("test-clash-a", second, replace=True)  # the same name: replaced
        assert uma.runtime.get_linker("test-clash-a") is second
        numpy_like = Mine()
        numpy_like.residency = "numpy"
        with pytest.raises(ValueError, match=r"residency 'numpy'.*'numpy'"):
            uma.register_backend("test-clash-numpy", numpy_like)
        host = Mine()
        host.residency = HOST  # host linkers share the host residency
        uma.register_backend("test-clash-host", host)
        assert uma.runtime.get_linker("test-clash-host") is host
    finally:
        for name in ("test-clash-a", "test-clash-b", "test-clash-numpy", "test-clash-host"):
            uma.runtime.linker._BACKENDS.pop(name, None)
    uma.register_backend("test-clash-b", second)  # free again once the other is gone
    uma.runtime.linker._BACKENDS.pop("test-clash-b", None)


def test_the_linker_ops_reference_is_current_and_complete():
    """docs/linker_ops.md is uma.Linker.ops_reference() (regenerate it with ``python -m
    uma.runtime.linkers > docs/linker_ops.md``), and it names every op a graph can contain."""
    import pathlib
    text = uma.Linker.ops_reference()
    path = pathlib.Path(__file__).resolve().parents[2] / "docs" / "linker_ops.md"
    if path.exists():  # the source tree (an installed package has no docs/)
        assert path.read_text() == text
    for name, cls in uma.Linker.known_ops().items():
        assert f"`{cls.__module__.replace('uma.', '', 1)}.{cls.__name__}`" in text and name in text


def test_linker_contract_violations_are_clear_errors_and_change_nothing():
    """A thunk returning the wrong number of values (or not a list), a dispatch table giving a
    non-function, an unsupported() that is not a list of ops, and a linker with neither a table
    nor a compile: TypeError / NotImplementedError naming the backend, at compile time where the
    mistake is visible then, and no shared variable changed."""
    w = uma.shared(np.zeros(3), name="w")
    x = uma.sym.vector("x")
    cases = {"too-many": lambda values: [values[0], values[0] + 1, values[0]],
             "too-few": lambda values: [],
             "none": lambda values: None}
    for name, thunk in cases.items():
        class Bad(uma.Linker):
            residency = "cpu"

            def compile(self, fgraph, thunk=thunk):
                return thunk
        f = uma.function([x], [x], updates={w: w + x}, backend=Bad())
        with pytest.raises(TypeError, match="thunk returned"):
            f(np.ones(3))
        np.testing.assert_array_equal(w.get_value(), np.zeros(3))

    @functools.singledispatch
    def table(op, node):
        return 42
    class NonCallable(uma.Linker):
        residency, dispatch = "cpu", table
    with pytest.raises(TypeError, match="gave 42, not a function"):
        uma.function([x], x + 1, backend=NonCallable())

    class BadUnsupported(uma.Linker):
        residency = "cpu"

        def unsupported(self, fgraph):
            return ["not an op"]
    with pytest.raises(TypeError, match="unsupported must return a list"):
        uma.function([x], x + 1, backend=BadUnsupported())

    class Nothing(uma.Linker):
        residency = "cpu"
    with pytest.raises(NotImplementedError, match="no dispatch table and does not override compile"):
        uma.function([x], x + 1, backend=Nothing())


# ======================================================================== misbehaving Python linkers

from uma.runtime.linkers.numpy import numpy_impl  # noqa: E402


class _Filtered(uma.Linker):
    """A numpy-table linker whose filters tests can break (``broken_in`` / ``broken_out``: what
    ``input_filter`` / ``output_filter`` return instead), or make run code (``on_convert``)."""

    name, residency, dispatch = "test-filtered", "test-filtered", numpy_impl
    OK = object()
    broken_in = broken_out = OK
    on_convert = None

    def input_filter(self, value, type):
        if self.on_convert is not None:
            cb, self.on_convert = self.on_convert, None
            cb()
        return np.array(value) if self.broken_in is self.OK else self.broken_in

    def output_filter(self, value, type):
        return uma.asarray(value) if self.broken_out is self.OK else self.broken_out


@pytest.mark.parametrize("bad", [None, np.zeros(5), np.zeros(3, np.float32)], ids=["none", "shape", "dtype"])
def test_an_input_filter_result_of_another_type_is_refused_and_not_kept(bad):
    lk = _Filtered()
    w = uma.shared(np.arange(3.0), "w")
    f = uma.function([], sym.sum(w), backend=lk)
    lk.broken_in = bad
    with pytest.raises(TypeError, match=r"residency test-filtered: input_filter gave .* shared variable 'w'"):
        f()
    assert w.container.current == {HOST}  # nothing kept
    lk.broken_in = lk.OK
    assert float(np.asarray(f())) == 3.0
    x = sym.vector("x")
    g = uma.function([x], sym.sum(x), backend=lk)
    lk.broken_in = bad  # an argument's filtered value is checked the same way
    with pytest.raises(TypeError, match=r"input 0 \('x'\): backend 'test-filtered''s input_filter gave"):
        g(np.ones(3))


def test_an_eager_host_copy_of_another_shape_writes_nothing():
    lk = _Filtered()
    a = uma.shared(np.arange(3.0), "a")
    step = uma.function([], [], updates={a: a + 1}, backend=lk, update_policy="eager")
    lk.broken_out = np.zeros(9)
    with pytest.raises(TypeError, match=r"output_filter gave shape \(9,\) for a value of shape \(3,\) of shared "
                                        r"variable 'a'"):
        step()
    assert a.container.current == {HOST, "test-filtered"}  # read, not written
    np.testing.assert_array_equal(a.get_value(), np.arange(3.0))
    lk.broken_out = lk.OK
    step()
    np.testing.assert_array_equal(a.get_value(), np.arange(3.0) + 1)


def test_a_write_made_by_a_filter_during_a_conversion_is_what_the_read_sees():
    lk = _Filtered()
    w = uma.shared(np.arange(3.0), "w")
    bump = uma.function([], [], updates={w: w + 10}, backend="cpu")
    read = uma.function([], w * 1, backend=lk)
    lk.on_convert = bump  # the conversion for `read` writes w first
    np.testing.assert_array_equal(np.asarray(read()), np.arange(3.0) + 10)
    np.testing.assert_array_equal(np.asarray(read()), np.arange(3.0) + 10)
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0) + 10)


def test_a_linker_instance_cannot_take_a_registered_backends_residency():
    class Lists(uma.Linker):
        name, residency, dispatch = "test-lists", "numpy", numpy_impl

    w = uma.shared(np.arange(3.0), "w")
    with pytest.raises(ValueError, match="residency 'numpy', which the registered backend 'numpy' uses"):
        uma.function([], sym.sum(w), backend=Lists())
    with pytest.raises(ValueError, match="residency 'numpy'"):
        uma.register_backend("test-lists", Lists())

    class MoreNumpy(type(uma.runtime.get_linker("numpy"))):  # a subclass keeps the same values
        name = "test-more-numpy"

    assert float(np.asarray(uma.function([], sym.sum(w), backend=MoreNumpy())())) == 3.0
    bad = _Filtered()
    bad.residency = 5
    with pytest.raises(TypeError, match="residency 5; a residency is a non-empty string"):
        uma.function([], sym.sum(w), backend=bad)


def test_a_cycle_through_a_native_copy_is_collected():
    import gc
    import weakref

    class Tensor(np.ndarray):
        pass

    class Remembers(_Filtered):
        def input_filter(self, value, type):
            t = np.array(value).view(Tensor)
            t.backend = self  # a value that knows its backend, whose linker holds the variable
            return t

    def make():
        lk = Remembers()
        w = uma.shared(np.zeros(3), "w")
        lk.params = [w]
        uma.function([], sym.sum(w), backend=lk)()
        assert w.container.current == {HOST, "test-filtered"}
        return weakref.ref(w)

    ref = make()
    gc.collect()
    assert ref() is None


def test_a_default_update_must_be_symbolic():
    w = uma.shared(np.zeros(3), "w")
    w.default_update = "oops"
    with pytest.raises(TypeError, match="the default_update of shared variable 'w' must be a symbolic expression"):
        uma.function([], w * 1)


@pytest.mark.skipif("libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer build keeps nanobind's assertions, which abort when the unwinding "
                           "thread's references are dropped without the GIL (benign in release builds)")
@pytest.mark.parametrize("backend", ["numpy", "reference", "python-step"])
def test_a_daemon_thread_inside_a_python_thunk_at_exit_does_not_crash(backend):
    """Note [Daemon threads at exit] in python/src/bind_runtime.cpp: CPython ends the thread
    with pthread_exit while it runs Python code inside a call."""
    import subprocess
    import sys
    update = "w + x" if backend != "python-step" else "w + x + 0 * uma.random.RandomStream(0).normal(size=(3,))"
    code = f"""
import threading, time
import numpy as np, uma
x = uma.sym.vector("x")
w = uma.shared(np.zeros(3), name="w")
f = uma.function([x], uma.sym.sum(w * x), updates={{w: {update}}},
                 backend={"'cpu'" if backend == "python-step" else repr(backend)})
assert f.fast_path is False
def loop():
    while True:
        f(np.ones(3))
threading.Thread(target=loop, daemon=True).start()
time.sleep(0.2)
print("done")
"""
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "done" in r.stdout
        assert "Fatal" not in r.stderr and "terminate" not in r.stderr, r.stderr[-3000:]


def _child(code, stdin=None):
    """``code`` run by a fresh interpreter that finds this uma (stdout, bytes); fails the test
    when it exits with an error."""
    import subprocess
    import sys

    from conftest import child_env
    r = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, timeout=120, env=child_env())
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    return r.stdout.decode()


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_framework_backend_is_registered_without_importing_the_framework(backend):
    pytest.importorskip(backend)
    out = _child(f"import sys, uma; print({backend!r} in uma.backends(), {backend!r} in sys.modules)")
    assert out.split() == ["True", "False"]


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_fresh_process_unpickles_a_function_of_a_framework_backend(backend):
    """The framework backends are registered by ``import uma`` (which unpickling does), so a
    process that imported neither uma nor the framework runs a pickled function."""
    import pickle
    pytest.importorskip(backend)
    w = uma.shared(np.arange(3.0), "w")
    x = sym.vector("x")
    f = uma.function([x], sym.sum(w * x), updates={w: w + 1}, backend=backend)
    f(np.ones(3))
    code = ("import pickle, sys, numpy as np\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "print(float(np.asarray(f(np.ones(3)))), type(f(np.ones(3))).__module__.split('.')[0])\n")
    total, module = _child(code, stdin=pickle.dumps(f)).split()
    assert float(total) == float(np.sum(np.arange(3.0) + 1))  # the pickled value of w, one step on
    assert module == ("torch" if backend == "torch" else "jaxlib")


class _SignatureLiar(uma.Linker):
    """Values are NumPy arrays in residency "test-sig"; the thunk (walk.by_signature) returns
    ``lie(update)`` for the update, checked against the variable once per signature."""

    name = "test-sig"
    residency = "test-sig"

    def __init__(self, lie):
        self.lie = lie

    def input_filter(self, value, type):
        return np.asarray(value)

    def output_filter(self, value, type):
        return uma.asarray(value)

    def compile(self, fgraph):
        from uma.runtime.linkers.walk import by_signature
        runs = []

        def run(values):
            runs.append(1)
            return [self.lie(np.asarray(values[0]) * 2)]

        thunk = by_signature(fgraph, run, run)
        thunk.runs = runs
        return thunk


@pytest.mark.parametrize("lie,ok", [(lambda o: o, True), (lambda o: o.ravel(), False)], ids=["fits", "ravel"])
def test_a_thunk_checking_its_updates_per_signature(lie, ok):
    w = uma.shared(np.ones((2, 3)), "w", shape=(2, 3))
    f = uma.function([], [], updates={w: w * 2}, backend=_SignatureLiar(lie))
    assert f._thunk.checks_updates is True
    if ok:
        f()
        f()
        np.testing.assert_array_equal(w.get_value(), 4 * np.ones((2, 3)))
        assert f._thunk.checks_updates is True and len(f._thunk.runs) == 2
        return
    for _ in range(2):  # the call's own check names the problem, every time
        with pytest.raises(TypeError, match=r"returned float64 of shape \(6,\) for shared variable 'w'"):
            f()
        assert f._thunk.checks_updates is False
    np.testing.assert_array_equal(w.get_value(), np.ones((2, 3)))


def _native_of(backend):
    """A float64 vector in ``backend``'s own form (the framework's array type)."""
    if backend == "jax":
        jax = pytest.importorskip("jax")

        def make(v):
            with jax.enable_x64(True):
                return jax.numpy.asarray(v)
        return make
    if backend == "torch":
        torch = pytest.importorskip("torch")
        return lambda v: torch.from_numpy(np.array(v))
    if backend == "mlx":
        mx = pytest.importorskip("mlx.core")
        return lambda v: mx.array(np.array(v), dtype=mx.float64)
    return lambda v: np.array(v)  # numba: NumPy arrays


@pytest.mark.parametrize("backend", ["jax", "torch", "mlx", "numba"])
def test_native_arguments_take_the_short_path_with_the_same_checks(backend):
    if backend not in uma.backends():
        pytest.skip(f"{backend} is not installed here")
    native = _native_of(backend)
    x, y = sym.vector("x"), sym.vector("y")
    acc = uma.shared(np.zeros(3), "acc")
    f = uma.function([x, y], x * y, updates={acc: acc + x * y}, backend=backend)
    assert f._native_args is not None
    a, b = native(np.arange(3.0)), native(np.full(3, 2.0))
    assert f._native_args((a, b))
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(a, b)), 2 * np.arange(3.0))
    with pytest.raises(ValueError, match="multiply"):
        f(a, native(np.ones(4)))
    np.testing.assert_array_equal(acc.get_value(), 6 * np.arange(3.0))
    # NumPy arguments still work (the checked path), and agree
    np.testing.assert_array_equal(np.asarray(f(np.arange(3.0), np.full(3, 2.0))), 2 * np.arange(3.0))
    np.testing.assert_array_equal(acc.get_value(), 8 * np.arange(3.0))
