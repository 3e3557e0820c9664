"""The ``jax`` backend (python/uma/runtime/linkers/jax): ``jax.Array`` s in residency "jax",
one ``jax.jit`` per run of JAX-computable nodes (the whole step when every op has a JAX
implementation), uma's eager ops on the host for the rest, float64 kept without changing the
process's JAX configuration, zero-copy conversions where JAX takes the buffer, and uma's errors.
NumPy and uma's ``cpu`` backend are the oracles. The backend matrix of the other test files
runs over ``uma.backends()``, which includes ``jax`` where JAX is installed."""
import numpy as np
import pytest

import uma
from uma import sym
from uma.runtime import HOST

jax = pytest.importorskip("jax")

def _mlp(backend, X, Y, steps=6):
    rng = np.random.default_rng(1)
    W1 = uma.shared(rng.normal(0, 0.3, (X.shape[1], 8)), "W1")
    b1 = uma.shared(np.zeros(8), "b1")
    W2 = uma.shared(rng.normal(0, 0.3, (8, 3)), "W2")
    x, y = sym.matrix("x", shape=(None, X.shape[1])), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(sym.relu(x @ W1 + b1) @ W2, y))
    params = [W1, b1, W2]
    grads = uma.grad(loss, params)
    step = uma.function([x, y], loss, updates=[(p, p - 0.5 * g) for p, g in zip(params, grads)], backend=backend)
    losses = [float(np.asarray(step(X, Y))) for _ in range(steps)]
    return step, losses, [p.get_value() for p in params], params


def test_a_training_step_is_one_jitted_function_and_matches_cpu(rng):
    X, Y = rng.normal(size=(20, 5)), rng.integers(0, 3, 20)
    step, lj, pj, params = _mlp("jax", X, Y)
    assert step._thunk.segments == 1 and step._thunk.host_steps == []
    assert all(p.container.current == {"jax", HOST} for p in params)  # get_value made the host copies
    _, lc, pc, _ = _mlp("cpu", X, Y)
    np.testing.assert_allclose(lj, lc, rtol=1e-12)
    for a, b in zip(pj, pc):
        assert a.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)
    assert lj[-1] < lj[0]


def test_float64_stays_float64_and_the_process_configuration_is_unchanged():
    before = jax.config.jax_enable_x64
    x = sym.vector("x")
    out = uma.function([x], x * 3, backend="jax")(np.array([1 / 3, 2 / 3]))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), np.array([1 / 3, 2 / 3]) * 3)
    assert jax.config.jax_enable_x64 == before


def test_values_stay_jax_arrays_between_calls_and_convert_once():
    w = uma.shared(np.arange(4.0), "w")
    step = uma.function([], sym.sum(w), updates={w: w + 1}, backend="jax")
    uma.conversion_stats(reset=True)
    for _ in range(3):
        total = step()
    assert isinstance(total, jax.Array)
    assert isinstance(w.container.copy_in("jax"), jax.Array)
    assert uma.conversion_stats() == {("cpu", "jax"): {"conversions": 1, "bytes": 32}}
    host = w.get_value(borrow=True)  # JAX -> host shares the buffer (read-only)
    assert not host.flags.writeable
    assert host.ctypes.data == w.container.copy_in("jax").unsafe_buffer_pointer()
    np.testing.assert_array_equal(host, np.arange(4.0) + 3)


def test_nodes_without_a_jax_implementation_run_uma_ops_between_segments(rng):
    x = sym.matrix("x")
    outs = [sym.argmax(x * 2, axis=1) + 1, sym.cumsum(x, axis=0) * 2, sym.exp(x).astype("float16")]
    f = uma.function([x], outs, backend="jax")
    assert f._thunk.host_steps and f._thunk.segments >= 1
    a = rng.normal(size=(4, 5))
    got = f(a)
    want = uma.function([x], outs, backend="cpu")(a)
    for g, w in zip(got, want):
        assert isinstance(g, jax.Array)
        assert str(g.dtype) == w.dtype.name
        np.testing.assert_allclose(np.asarray(g).astype(np.float64), np.asarray(w).astype(np.float64), rtol=1e-3)


def test_a_bad_label_raises_uma_s_error_and_stores_nothing():
    W = uma.shared(np.ones((3, 2)), "W")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="jax")
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(np.ones((2, 3)), np.array([0, 2]))
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(np.ones((2, 3)), np.array([-1, 0]))
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))
    step(np.ones((2, 3)), np.array([0, 1]))
    assert W.container.current == {"jax"}


def test_native_arguments_and_refused_arguments():
    x = sym.vector("x")
    f = uma.function([x], sym.tanh(x), backend="jax")
    with jax.enable_x64(True):
        xj = jax.numpy.linspace(-2, 2, 5)
    np.testing.assert_allclose(np.asarray(f(xj)), np.tanh(np.linspace(-2, 2, 5)), rtol=1e-12)
    with pytest.raises(TypeError):
        f(np.zeros((2, 2)))
    with pytest.raises(TypeError):
        f(np.zeros(3, np.complex128))


def test_bool_memory_is_read_as_nonzero_bytes():
    m = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    b = sym.vector("b", dtype="bool")
    f = uma.function([b], [sym.logical_and(b, True), sym.logical_not(b)], backend="jax")
    on, off = f(m)
    np.testing.assert_array_equal(np.asarray(on), [False, True, True, True])
    np.testing.assert_array_equal(np.asarray(off), [True, False, False, False])


def test_uma_host_copies_reach_jax_without_a_copy():
    """uma allocates host memory 64-byte aligned, which JAX imports by DLPack as it is."""
    w = uma.shared(np.arange(1000.0), "w")
    uma.function([], sym.sum(w), backend="jax")()
    host = w.get_value(borrow=True)
    assert host.ctypes.data % 64 == 0
    assert w.container.copy_in("jax").unsafe_buffer_pointer() == host.ctypes.data


def test_a_misaligned_host_value_reaches_jax_through_one_aligned_copy():
    """Host memory off JAX's 64-byte alignment (a NumPy buffer, here 8 bytes in) is copied once
    by uma into aligned memory, which JAX then shares; the source is never shared or written."""
    raw = _aligned64(1001)
    src = raw[1:]
    src[:] = np.arange(1000.0)
    assert src.ctypes.data % 64 == 8
    w = uma.shared(src, "w", borrow=True)
    uma.function([], sym.sum(w), backend="jax")()
    value = w.container.copy_in("jax")
    assert value.unsafe_buffer_pointer() % 64 == 0 and value.unsafe_buffer_pointer() != src.ctypes.data
    np.testing.assert_array_equal(np.asarray(value), np.arange(1000.0))
    uma.function([], [], updates={w: w + 1}, backend="jax")()
    np.testing.assert_array_equal(src, np.arange(1000.0))  # the source is not written
    np.testing.assert_array_equal(w.get_value(), np.arange(1000.0) + 1)


def _aligned64(n):
    """A float64 NumPy array of n elements at a 64-byte-aligned address (JAX imports it without
    a copy)."""
    raw = np.empty(n * 8 + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + n * 8].view(np.float64)


def test_a_call_is_done_with_its_arguments_when_it_returns():
    """The caller may refill its batch buffer after each call (a NumPy training loop)."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((6, 128, 128))
    w = uma.shared(np.zeros((128, 128)), "w")
    X = sym.matrix("X")
    step = uma.function([X], [], updates={w: w + X @ X}, backend="jax")
    batch = _aligned64(128 * 128).reshape(128, 128)
    for d in data:
        batch[...] = d
        step(batch)
    np.testing.assert_allclose(w.get_value(), sum(d @ d for d in data), rtol=1e-12, atol=1e-10)


def test_outputs_and_updates_never_share_the_callers_memory():
    w = uma.shared(np.zeros(4), "w")
    x = sym.vector("x")
    f = uma.function([x], [x, x + 0, sym.transpose(x)], updates={w: x}, backend="jax")
    xv = _aligned64(4)
    xv[:] = 1
    outs = f(xv)
    xv[:] = 99
    np.testing.assert_array_equal(w.get_value(), np.ones(4))
    for o in outs:
        np.testing.assert_array_equal(np.asarray(o), np.ones(4))


# ---- the whole-graph call: native arguments, checks per input signature, donation ------------


def _x64(values):
    with jax.enable_x64(True):
        return jax.numpy.asarray(values)


def test_a_whole_graph_is_one_jitted_call_that_returns_without_waiting():
    w = uma.shared(np.arange(4.0), "w")
    x = sym.vector("x")
    f = uma.function([x], sym.sum(x * w), updates={w: w + x}, backend="jax")
    assert f._thunk.segments == 1 and not f._thunk.host_steps
    assert f._thunk.checks_updates and f._thunk.checks_shapes
    xs = _x64(np.ones(4))
    assert f._native_args((xs,)) and not f._native_args((np.ones(4),))
    calls = f.call_counts()["general"]
    got = [float(f(xs)) for _ in range(3)]
    np.testing.assert_allclose(got, [np.sum(np.arange(4.0) + k) for k in range(3)])
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0) + 3)
    assert f.call_counts()["general"] == calls + 3


def test_updated_shared_values_are_donated_and_never_read_again():
    w = uma.shared(np.arange(4.0), "w")
    f = uma.function([], [], updates={w: w * 2}, backend="jax")
    assert f._thunk.donated == (0,)
    f()  # the first value is a DLPack view of host memory, which JAX does not donate
    old = w.container.copy_in("jax")
    f()
    assert old.is_deleted()  # donated: its buffer may hold the new value
    new = w.container.copy_in("jax")
    assert not new.is_deleted()
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0) * 4)
    f()
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0) * 8)


def test_a_value_the_user_borrowed_is_not_donated():
    w = uma.shared(np.arange(4.0), "w")
    f = uma.function([], [], updates={w: w + 1}, backend="jax")
    f()
    f()
    held = w.get_value(borrow=True)  # a host view of the JAX buffer (DLPack)
    before = held.copy()
    jax_value = w.container.copy_in("jax")
    f()
    f()
    assert not jax_value.is_deleted()
    np.testing.assert_array_equal(held, before)
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0) + 4)


def test_returned_values_never_alias_stored_ones_under_donation():
    w = uma.shared(np.arange(3.0), "w")
    new = w + 1
    f = uma.function([], [new, w], updates={w: new}, backend="jax")
    out, old = f()
    stored = w.container.copy_in("jax")
    assert out.unsafe_buffer_pointer() != stored.unsafe_buffer_pointer()
    f()  # donates the stored value, not the returned ones
    assert not out.is_deleted() and not old.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0) + 1)
    np.testing.assert_array_equal(np.asarray(old), np.arange(3.0))


def test_a_graph_with_a_label_check_donates_nothing_and_a_bad_label_changes_nothing():
    W = uma.shared(np.ones((3, 2)), "W")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="jax")
    assert step._thunk.donated == ()
    xs = _x64(np.ones((2, 3)))
    step(xs, _x64(np.array([0, 1])))
    before = W.get_value()
    stored = W.container.copy_in("jax")
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(xs, _x64(np.array([0, 2])))  # native arguments: the thunk's own call
    assert W.container.copy_in("jax") is stored and not stored.is_deleted()
    np.testing.assert_array_equal(W.get_value(), before)


def test_an_update_that_breaks_a_static_shape_donates_nothing_and_changes_nothing():
    """The shape of a signature's updates is known when JAX traces, before anything runs: an
    update that does not fit its variable's static shape makes that call run without donating,
    so the call's ValueError leaves every stored JAX value alive and unchanged."""
    a = uma.shared(np.zeros(3), "a")
    w = uma.shared(np.zeros(3), "w", shape=(3,))
    x = sym.vector("x")
    step = uma.function([x], [], updates={a: a + x, w: w + x}, backend="jax")
    grow = uma.function([x], [], updates={a: a + 1, w: sym.concatenate([w, x])}, backend="jax")
    step(np.ones(3))
    step(np.ones(3))  # a and w hold JAX's own arrays now (donatable)
    stored = [v.container.copy_in("jax") for v in (a, w)]
    for _ in range(2):  # the error path twice: the failed trace is not cached
        with pytest.raises(ValueError, match="static shape is \\(3,\\); no shared variable was changed"):
            grow(np.ones(2))
        assert all(not s.is_deleted() for s in stored)
        np.testing.assert_array_equal(a.get_value(), [2.0, 2.0, 2.0])
        np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
    step(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [3.0, 3.0, 3.0])


def test_concurrent_readers_never_meet_a_donated_value():
    """A call keeps the locks of what it only reads until its jitted call has taken the values
    (Linker.consumes_stored_values), so a concurrent update cannot donate a value a reader has
    read but not yet handed to JAX; every call sees some serial order."""
    import threading
    import time
    w = uma.shared(np.zeros(1 << 14), "w")
    write = uma.function([], [], updates={w: w + 1}, backend="jax")
    read = uma.function([], sym.sum(w), backend="jax")
    write()
    errors, done, n = [], threading.Event(), 400

    def writer():
        try:
            for _ in range(n):
                write()
                time.sleep(2e-4)  # the readers run between the writes
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            done.set()

    def reader():
        last = 0.0
        while not done.is_set():
            try:
                total = float(np.asarray(read()))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return
            if total % (1 << 14) != 0 or total < last:  # a whole number of updates, in order
                errors.append(f"read {total} after {last}")
                return
            last = total

    threads = [threading.Thread(target=writer), threading.Thread(target=reader), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    np.testing.assert_array_equal(w.get_value(), np.full(1 << 14, n + 1.0))


def test_native_arguments_get_the_checked_path_s_errors():
    x = sym.vector("x", shape=(3,))
    w = uma.shared(np.zeros(3), "w")
    f = uma.function([x], [], updates={w: w + x}, backend="jax")
    f(_x64(np.ones(3)))
    with pytest.raises(ValueError, match=r"expected shape \(3,\)"):
        f(_x64(np.ones(4)))
    m = sym.matrix("m")
    g = uma.function([m, x], m @ x, backend="jax")
    with pytest.raises(ValueError, match="matmul"):
        g(_x64(np.ones((2, 4))), _x64(np.ones(3)))  # uma's shape rule, when JAX traces
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    # a float32 jax.Array for a float64 input: not native, cast safely on the checked path
    f(jax.numpy.ones(3, dtype=jax.numpy.float32))
    np.testing.assert_array_equal(w.get_value(), 2 * np.ones(3))
    assert str(w.container.copy_in("jax").dtype) == "float64"


def test_constant_updates_and_updates_from_other_shared_values_under_donation():
    a, b = uma.shared(np.ones(3), "a"), uma.shared(np.ones(3), "b")
    f = uma.function([], [], updates={a: a + 1, b: np.zeros(3)}, backend="jax")
    for _ in range(3):
        f()
    np.testing.assert_array_equal(a.get_value(), 4 * np.ones(3))
    np.testing.assert_array_equal(b.get_value(), np.zeros(3))
    x = sym.vector("x")
    g = uma.function([x], [x, x * 2], updates={a: a + x, b: a}, backend="jax")
    assert g._thunk.donated == (1, 2)
    xa = _x64(np.arange(3.0))
    for _ in range(3):
        r = g(xa)
    assert not xa.is_deleted() and r[0].unsafe_buffer_pointer() != xa.unsafe_buffer_pointer()
    np.testing.assert_array_equal(a.get_value(), 4 + 3 * np.arange(3.0))
    np.testing.assert_array_equal(b.get_value(), 4 + 2 * np.arange(3.0))


def test_a_bad_label_computed_in_the_graph_is_named_with_its_position():
    W = uma.shared(np.zeros((3, 4)), "W")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int32")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y - 1))  # the labels are an intermediate
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="jax")
    step(np.ones((3, 3)), np.array([1, 2, 4], np.int32))
    before = W.get_value()
    with pytest.raises(ValueError, match=r"label -1 at position 1 is out of range \[0, 4\)"):
        step(np.ones((3, 3)), np.array([2, 0, 3], np.int32))
    np.testing.assert_array_equal(W.get_value(), before)
