"""Shared variables (DESIGN.md "Shared variables: one value, many residencies").

Every fault the design rules out and every bad call is its own test, and the counting linker
(its own residency, counts every conversion) proves the residency rules: a same-backend loop
makes zero conversions, a switch of residency makes one, and so on.
"""
import gc

import numpy as np
import pytest

import uma
from uma import sym
from uma.graph import Op, TensorType
from uma.runtime import HOST
from uma.runtime.testing import CountingLinker, CountingValue

HOST_BACKENDS = ["reference", "cpu"]


def counting(residency="counting"):
    return CountingLinker(residency)


def value_of(out):
    """A NumPy copy of a function output of any backend (uma.Array or CountingValue)."""
    if isinstance(out, CountingValue):
        return out.array.copy()
    return np.array(out, copy=True)


ALL_BACKENDS = HOST_BACKENDS + ["counting"]


def backend_for(name):
    return counting() if name == "counting" else name


# ======================================================================== known faults

@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_updates_are_simultaneous_swap(backend):
    a = uma.shared(np.array([1.0, 10.0]), "a")
    b = uma.shared(np.array([2.0, 20.0]), "b")
    f = uma.function([], [], updates={a: b, b: a}, backend=backend_for(backend))
    f()
    np.testing.assert_array_equal(a.get_value(), [2.0, 20.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 10.0])
    f()
    np.testing.assert_array_equal(a.get_value(), [1.0, 10.0])
    np.testing.assert_array_equal(b.get_value(), [2.0, 20.0])
    assert f.call_counts()["fast"] == (2 if backend == "cpu" else 0)  # cpu: the C++ path swapped


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_updates_land_in_the_right_variables(backend):
    a = uma.shared(np.array(3.0), "a")
    b = uma.shared(np.array(0.0), "b")
    f = uma.function([], [], updates=[(a, a), (b, a + 1)], backend=backend_for(backend))
    f()
    assert a.get_value() == 3.0 and b.get_value() == 4.0
    a.set_value(10.0)
    f()
    assert a.get_value() == 10.0 and b.get_value() == 11.0


class FailIfPositive(Op):
    """Test op: raises when any input value is positive (a value-dependent run-time failure
    that no shape check can see coming)."""

    name = "fail_if_positive"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        if (np.asarray(values[0]) > 0).any():
            raise RuntimeError("fail_if_positive: positive value")
        return [values[0].copy()]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_a_failing_call_changes_no_shared_variable(backend):
    a = uma.shared(np.array([1.0, 2.0]), "a")
    b = uma.shared(np.array([5.0]), "b")
    x = sym.vector("x")
    a_new = a + 1  # computed before the failing op, which reads it
    out = FailIfPositive()(a_new * x)
    f = uma.function([x], out, updates={a: a_new, b: b * 2}, backend=backend)
    with pytest.raises(RuntimeError, match="fail_if_positive"):
        f(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [5.0])
    # a bad argument (after a good one) changes nothing either
    g = uma.function([x, sym.vector("y", dtype="float32")], x, updates={a: a * 0}, backend=backend)
    with pytest.raises(TypeError):
        g(np.ones(2), np.ones(2))  # float64 into float32: not safe
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    # and a call that works does update
    f(np.array([-1.0, -1.0]))
    np.testing.assert_array_equal(a.get_value(), [2.0, 3.0])
    np.testing.assert_array_equal(b.get_value(), [10.0])
    if backend == "cpu":  # a C++ Program run that fails (a value-dependent error) writes nothing
        k = sym.vector("k", dtype="int64")
        c = uma.shared(np.array([1.0, 2.0]), "c")
        h = uma.function([k], sym.sum(k ** k), updates={c: c + 1, a: a * 0}, backend="cpu")
        assert h.fast_path
        with pytest.raises(ValueError, match="negative integer powers"):
            h(np.array([2, -1]))
        np.testing.assert_array_equal(c.get_value(), [1.0, 2.0])
        np.testing.assert_array_equal(a.get_value(), [2.0, 3.0])
        assert h(np.array([2, 1])).item() == 5
        np.testing.assert_array_equal(c.get_value(), [2.0, 3.0])
        assert h.call_counts() == {"fast": 1, "general": 0}  # the failed call computed nothing


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_returning_an_updated_shared_variable_returns_the_old_value(backend):
    a = uma.shared(np.array([1.0, 2.0]), "a")
    f = uma.function([], a, updates={a: a + 1}, backend=backend_for(backend))
    np.testing.assert_array_equal(value_of(f()), [1.0, 2.0])
    np.testing.assert_array_equal(a.get_value(), [2.0, 3.0])
    np.testing.assert_array_equal(value_of(f()), [2.0, 3.0])
    np.testing.assert_array_equal(a.get_value(), [3.0, 4.0])


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_mutating_a_returned_array_never_changes_a_shared_value(backend):
    a = uma.shared(np.arange(6.0).reshape(2, 3), "a")
    f = uma.function([], [a, a.T, sym.reshape(a, (-1,)), a[0]], backend=backend)
    outs = f()
    for o in outs:
        assert isinstance(o, uma.Array)
        o[...] = -1.0  # uma in-place write into the returned array's memory
    np.testing.assert_array_equal(a.get_value(), np.arange(6.0).reshape(2, 3))
    # the new value of an update is returned too: the returned copy is not the stored one
    g = uma.function([], a + 1, updates={a: a + 1}, backend=backend)
    out = g()
    np.asarray(out)[...] = 99.0
    np.testing.assert_array_equal(a.get_value(), np.arange(6.0).reshape(2, 3) + 1)
    assert not np.shares_memory(np.asarray(out), a.get_value(borrow=True))


@pytest.mark.parametrize("borrow", [False, True])
@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_shared_variable_from_a_transposed_array(backend, borrow, rng):
    base = rng.normal(size=(3, 4))
    W = uma.shared(base.T, "W", borrow=borrow)  # (4, 3), not C-contiguous
    x = sym.matrix("x")
    f = uma.function([x], [x @ W, W * 1, sym.sum(W, axis=0)], backend=backend)
    xv = rng.normal(size=(2, 4))
    mm, same, s = f(xv)
    np.testing.assert_allclose(np.asarray(mm), xv @ base.T, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(same), base.T)
    np.testing.assert_allclose(np.asarray(s), base.T.sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(W.get_value(), base.T)


@pytest.mark.parametrize("backend", HOST_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_zero_d_output_is_a_zero_d_uma_array(backend, dtype):
    s = uma.shared(np.array(3, dtype=dtype), "s")
    v = uma.shared(np.arange(4, dtype=dtype), "v")
    f = uma.function([], [s * 2, sym.max(v), s], backend=backend)
    for out in f():
        assert isinstance(out, uma.Array) and not isinstance(out, (int, float, np.generic))
        assert out.ndim == 0 and out.shape == ()
        assert out.dtype == dtype


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_get_value_is_a_fresh_ndarray_of_the_declared_dtype(backend):
    a = uma.shared(np.array([1.0, 2.0], np.float32), "a")
    f = uma.function([], [], updates={a: a * 2}, backend=backend_for(backend))
    f()
    v1, v2 = a.get_value(), a.get_value()
    for v in (v1, v2):
        assert type(v) is np.ndarray and v.dtype == np.float32 and v.flags.writeable
    np.testing.assert_array_equal(v1, [2.0, 4.0])
    assert v1 is not v2 and not np.shares_memory(v1, v2)
    assert not np.shares_memory(v1, a.get_value(borrow=True))
    v1[...] = 0
    np.testing.assert_array_equal(a.get_value(), [2.0, 4.0])


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_get_value_borrow_is_a_read_only_view_that_never_changes(backend):
    a = uma.shared(np.array([1.0, 2.0]), "a")
    view = a.get_value(borrow=True)
    assert isinstance(view, np.ndarray) and not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 5.0
    with pytest.raises(ValueError, match="WRITEABLE"):
        view.flags.writeable = True  # its base is read-only too
    with pytest.raises((TypeError, ValueError, NotImplementedError)):
        view.base[0] = 5.0
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    f = uma.function([], [], updates={a: a + 10}, backend=backend_for(backend))
    f()
    after_update = a.get_value(borrow=True)
    a.set_value(np.array([-7.0, -8.0]))
    f()
    np.testing.assert_array_equal(view, [1.0, 2.0])
    np.testing.assert_array_equal(after_update, [11.0, 12.0])
    np.testing.assert_array_equal(a.get_value(), [3.0, 2.0])


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_scalar_updates_never_change_a_borrowed_view_an_output_or_adopted_memory(backend):
    # Scalar updates may be written into the cell's own buffer when nothing else holds it
    # (Note [Updates in place]); whatever holds a value must never see it change.
    c = uma.shared(np.float64(0.0), "c")
    f = uma.function([], c * 2, updates={c: c + 1}, backend=backend_for(backend))
    views, outs = [], []
    for i in range(6):
        if i % 2:
            views.append((c.get_value(borrow=True), float(i)))
        outs.append((f(), 2.0 * i))
    for view, want in views:
        assert view.item() == want
    for out, want in outs:
        assert np.asarray(value_of(out)).item() == want
    assert c.get_value().item() == 6.0

    src = np.array(5.0)
    d = uma.shared(src, "d", borrow=True)  # may adopt NumPy's memory: never written by an update
    g = uma.function([], [], updates={d: d + 1}, backend=backend_for(backend))
    g()
    g()
    assert src.item() == 5.0 and d.get_value().item() == 7.0


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_a_function_compiled_before_set_value_sees_the_new_value(backend):
    a = uma.shared(np.array([1.0, 2.0]), "a")
    f = uma.function([], a * 2, backend=backend_for(backend))
    np.testing.assert_array_equal(value_of(f()), [2.0, 4.0])
    a.set_value(np.array([5.0, 6.0, 7.0]))  # the shape may change
    np.testing.assert_array_equal(value_of(f()), [10.0, 12.0, 14.0])


# ======================================================================== bad calls

@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_wrong_number_of_arguments_is_a_type_error(backend):
    a = uma.shared(np.zeros(2), "a")
    x = sym.vector("x")
    f = uma.function([x], x + a, updates={a: a + x}, backend=backend)
    with pytest.raises(TypeError):
        f()
    with pytest.raises(TypeError):
        f(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(a.get_value(), [0.0, 0.0])


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_wrong_ndim_is_a_type_error(backend):
    a = uma.shared(np.zeros(2), "a")
    x = sym.vector("x")
    f = uma.function([x], x + a, updates={a: a + x}, backend=backend)
    with pytest.raises(TypeError, match="'x'"):
        f(np.ones((2, 1)))
    with pytest.raises(TypeError, match="'x'"):
        f(1.0)
    np.testing.assert_array_equal(a.get_value(), [0.0, 0.0])


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_unsafe_dtype_is_a_type_error_naming_the_input(backend):
    w = uma.shared(np.zeros(2, np.float32), "w")
    x = sym.vector("features", dtype="float32")
    f = uma.function([x], x + w, updates={w: w + x}, backend=backend)
    with pytest.raises(TypeError, match="features") as info:
        f(np.ones(2, np.float64))
    assert "float64" in str(info.value) and "float32" in str(info.value)
    np.testing.assert_array_equal(w.get_value(), [0.0, 0.0])


@pytest.mark.parametrize("backend", HOST_BACKENDS)
def test_shape_error_during_a_call_is_a_value_error_naming_the_op(backend):
    W = uma.shared(np.ones((3, 2)), "W")
    x = sym.matrix("x")
    f = uma.function([x], x @ W, updates={W: W * 2}, backend=backend)
    with pytest.raises(ValueError, match="matmul"):
        f(np.ones((2, 4)))
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))


def test_set_value_with_another_ndim_is_a_type_error_and_keeps_the_old_value():
    a = uma.shared(np.array([1.0, 2.0]), "a")
    with pytest.raises(TypeError, match="'a'"):
        a.set_value(np.ones((2, 2)))
    with pytest.raises(TypeError):
        a.set_value(3.0)
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])


def test_set_value_with_another_dtype_kind_is_a_type_error_and_keeps_the_old_value():
    i = uma.shared(np.array([1, 2], np.int32), "i")
    with pytest.raises(TypeError, match="'i'"):
        i.set_value(np.array([1.5, 2.5]))
    with pytest.raises(TypeError):
        i.set_value([1.5, 2.5])  # Python floats into int32: not the same kind
    with pytest.raises(TypeError):
        i.set_value(np.array([1, 2], np.int64))  # int64 -> int32 is not safe
    np.testing.assert_array_equal(i.get_value(), [1, 2])
    assert i.get_value().dtype == np.int32


def test_update_with_another_dtype_or_ndim_is_a_type_error_from_function():
    a = uma.shared(np.zeros(2, np.float32), "a")
    with pytest.raises(TypeError, match="'a'.*float64"):
        uma.function([], [], updates={a: a.astype("float64") + 1})
    with pytest.raises(TypeError, match="'a'"):
        uma.function([], [], updates={a: sym.expand_dims(a, 0)})
    with pytest.raises(TypeError):
        uma.function([], [], updates={a: sym.sum(a)})
    with pytest.raises(TypeError):
        uma.function([], [], updates={sym.vector("x"): a})  # not a shared variable
    with pytest.raises(ValueError):
        uma.function([], [], updates=[(a, a), (a, a * 2)])  # two updates of one variable


# ======================================================================== counting proofs

def _counting_pair():
    lk = counting()
    a = uma.shared(np.array([1.0, 2.0]), "a")
    f = uma.function([], [], updates={a: a + 1}, backend=lk)
    return lk, a, f


def test_a_same_backend_loop_makes_zero_conversions():
    lk, a, f = _counting_pair()
    f()
    assert (lk.to_residency, lk.to_host) == (1, 0)  # the first read moves the value in once
    for _ in range(20):
        f()
    assert (lk.to_residency, lk.to_host) == (1, 0)  # then it stays there
    assert a.container.current == {"counting"}
    np.testing.assert_array_equal(a.get_value(), [22.0, 23.0])


def test_a_ping_pong_between_two_residencies_costs_one_conversion_per_switch():
    lk = counting()
    a = uma.shared(np.array([0.0]), "a")
    on_counting = uma.function([], [], updates={a: a + 1}, backend=lk)
    on_cpu = uma.function([], [], updates={a: a * 2}, backend="cpu")
    expected = 0.0
    for k in range(1, 6):
        on_counting()
        expected += 1
        assert lk.conversions == 2 * k - 1  # host -> counting
        on_cpu()
        expected *= 2
        assert lk.conversions == 2 * k  # counting -> host
    assert (lk.to_residency, lk.to_host) == (5, 5)
    assert a.get_value().item() == expected
    assert lk.conversions == 10  # the host copy was current: get_value converted nothing


def test_a_cpu_call_converts_a_stale_host_copy_once_and_runs_its_program():
    lk = counting()
    a = uma.shared(np.array([0.0]), "a")
    on_cpu = uma.function([], [], updates={a: a + 1}, backend="cpu")
    on_counting = uma.function([], [], updates={a: a * 2}, backend=lk)
    assert on_cpu.fast_path and not on_counting.fast_path
    for _ in range(3):
        on_cpu()
    assert on_cpu.call_counts() == {"fast": 3, "general": 0}
    on_counting()  # the host copy is now stale
    assert a.container.current == {"counting"}
    assert on_counting.call_counts() == {"fast": 0, "general": 1}
    on_cpu()  # the C++ call converts the counting copy once (its output_filter)
    assert on_cpu.call_counts() == {"fast": 4, "general": 0}
    assert (lk.to_residency, lk.to_host) == (1, 1)
    assert a.container.current == {HOST}
    on_cpu()  # the host copy is current: no conversion
    assert on_cpu.call_counts() == {"fast": 5, "general": 0}
    assert (lk.to_residency, lk.to_host) == (1, 1)
    assert a.get_value().item() == 8.0


def test_a_cpp_call_drops_the_copies_of_other_residencies():
    lk = counting()
    a = uma.shared(np.array([1.0, 2.0]), "a")
    read_counting = uma.function([], a * 1, backend=lk)  # reads only: both copies current
    bump = uma.function([], [], updates={a: a + 10}, backend="cpu")
    np.testing.assert_array_equal(value_of(read_counting()), [1.0, 2.0])
    assert a.container.current == {"counting", HOST}
    bump()
    assert bump.call_counts() == {"fast": 1, "general": 0}
    assert a.container.current == {HOST}  # the counting copy is stale: dropped
    np.testing.assert_array_equal(value_of(read_counting()), [11.0, 12.0])  # not the stale copy
    assert lk.to_residency == 2


def test_a_ping_pong_between_two_device_residencies():
    left, right = counting("left"), counting("right")
    a = uma.shared(np.array([0.0]), "a")
    f_left = uma.function([], [], updates={a: a + 1}, backend=left)
    f_right = uma.function([], [], updates={a: a + 10}, backend=right)
    for k in range(1, 4):
        f_left()
        assert a.container.current == {"left"}
        f_right()
        assert a.container.current == {"right"}
        # each switch moves the value out of one residency and into the other, once
        assert (left.to_residency, left.to_host) == (k, k)
        assert (right.to_residency, right.to_host) == (k, k - 1)
    assert a.get_value().item() == 33.0
    assert right.to_host == 3


def test_get_value_after_lazy_updates_converts_once():
    lk, a, f = _counting_pair()
    for _ in range(5):
        f()
    before = lk.to_host
    np.testing.assert_array_equal(a.get_value(), [6.0, 7.0])
    assert lk.to_host == before + 1
    a.get_value()
    a.get_value(borrow=True)
    assert lk.to_host == before + 1  # the host copy is current now
    assert a.container.current == {"counting", HOST}


def test_eager_update_policy_converts_once_per_call():
    lk = counting()
    a = uma.shared(np.array([1.0]), "a")
    f = uma.function([], [], updates={a: a + 1}, backend=lk, update_policy="eager")
    for k in range(1, 6):
        f()
        assert lk.to_host == k
        assert a.container.current == {"counting", HOST}
    assert lk.to_residency == 1
    assert a.get_value().item() == 6.0
    assert lk.to_host == 5  # nothing left to convert


def test_set_value_makes_the_host_copy_the_only_current_one():
    lk, a, f = _counting_pair()
    f()
    assert a.container.current == {"counting"}
    a.set_value(np.array([100.0, 200.0]))
    assert a.container.current == {HOST}
    converted = lk.to_residency
    f()
    assert lk.to_residency == converted + 1  # the stale device copy was not used
    np.testing.assert_array_equal(a.get_value(), [101.0, 201.0])


def test_the_written_residency_becomes_the_only_current_one():
    lk = counting()
    a = uma.shared(np.array([1.0]), "a")
    read = uma.function([], a * 1, backend=lk)
    read()
    assert a.container.current == {"counting", HOST}  # a read caches, both are current
    write = uma.function([], [], updates={a: a + 1}, backend="cpu")
    write()
    assert a.container.current == {HOST}
    np.testing.assert_array_equal(value_of(read()), [2.0])


def test_counting_values_chain_without_conversions():
    lk = counting()
    x = sym.vector("x")
    f = uma.function([x], x * 2, backend=lk)
    out = f([1.0, 2.0])
    assert isinstance(out, CountingValue) and out.residency == "counting"
    assert lk.to_residency == 1
    out2 = f(out)  # a native value goes in as is
    assert lk.to_residency == 1
    np.testing.assert_array_equal(out2.array, [4.0, 8.0])


# ======================================================================== shared() and set_value

def test_shared_copies_unless_borrowed():
    src = np.array([1.0, 2.0])
    a = uma.shared(src, "a")
    src[0] = 50.0
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    b = uma.shared(src, "b", borrow=True)  # may adopt: NumPy memory of the right layout is
    src[1] = 60.0
    np.testing.assert_array_equal(b.get_value(), [50.0, 60.0])
    u = uma.asarray(np.array([3.0]))
    c = uma.shared(u, "c")
    u[0] = 4.0
    assert c.get_value().item() == 3.0


@pytest.mark.parametrize("borrow", [False, True])
def test_shared_from_a_numpy_bfloat16_array(borrow):
    mld = pytest.importorskip("ml_dtypes")
    src = np.array([1.5, -2.0], mld.bfloat16)
    w = uma.shared(src, "w", borrow=borrow)
    assert w.dtype == "bfloat16"
    f = uma.function([], [], updates={w: w * 2})
    f()
    got = w.get_value()
    assert got.dtype == mld.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), [3.0, -4.0])
    np.testing.assert_array_equal(src.astype(np.float32), [1.5, -2.0])  # the source is never written
    with pytest.raises(TypeError, match="NumPy dtype float8_e4m3fn has no uma equivalent"):
        uma.shared(np.zeros(2, mld.float8_e4m3fn))


def test_shared_type_from_value():
    assert uma.shared(1.0).dtype == "float64" and uma.shared(1.0).ndim == 0
    assert uma.shared(3).dtype == "int64"
    assert uma.shared(True).dtype == "bool"
    assert uma.shared([1, 2, 3]).dtype == "int64"
    s = uma.shared(np.zeros((2, 3), np.float32), "s")
    assert (s.dtype, s.ndim, s.shape, s.name) == ("float32", 2, (None, None), "s")
    with pytest.raises(TypeError):
        uma.shared(sym.vector())
    with pytest.raises(TypeError):
        uma.shared(object())


def test_shared_static_shape_makes_axes_broadcastable():
    b = uma.shared(np.zeros((1, 3)), "b", shape=(1, None))
    x = sym.matrix("x")
    f = uma.function([x], x + b)
    np.testing.assert_array_equal(np.asarray(f(np.ones((2, 3)))), np.ones((2, 3)))
    with pytest.raises(ValueError):
        b.set_value(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        uma.shared(np.zeros((2, 3)), shape=(1, None))
    # without a declared shape a length-1 axis does not broadcast (PyTensor convention)
    c = uma.shared(np.zeros((1, 3)), "c")
    g = uma.function([x], x + c)
    with pytest.raises(ValueError, match="add"):
        g(np.ones((2, 3)))


@pytest.mark.parametrize("backend", ["cpu", "numpy", "reference"])
def test_update_keeps_the_static_shape(backend):
    # An update expression of unknown length must not change a shared variable's declared
    # shape: the call raises ValueError and writes no update (not even the valid one).
    xs = uma.shared(np.ones(3), "xs", shape=(3,))
    other = uma.shared(np.zeros(2), "other")
    v = sym.vector("v")
    f = uma.function([v], [], updates={other: other + 1, xs: v}, backend=backend)
    f(np.arange(3.0))
    np.testing.assert_array_equal(xs.get_value(), np.arange(3.0))
    with pytest.raises(ValueError, match=r"xs.*shape \(5,\).*static shape"):
        f(np.arange(5.0))
    np.testing.assert_array_equal(xs.get_value(), np.arange(3.0))
    np.testing.assert_array_equal(other.get_value(), np.ones(2))
    # a length-1 declared axis keeps broadcasting correctly afterwards
    b = uma.shared(np.ones(1), "b", shape=(1,))
    g = uma.function([v], [], updates={b: v}, backend=backend)
    with pytest.raises(ValueError, match="static shape"):
        g(np.arange(5.0))
    grad = uma.function([v], uma.grad(uma.sum(v * b), b), backend=backend)
    np.testing.assert_array_equal(np.asarray(grad(np.arange(1.0, 6.0))), [15.0])
    assert b.get_value().shape == (1,)


@pytest.mark.parametrize("value,ok", [
    (np.array([1, 2], np.int32), True),      # int32 -> float64: safe
    (np.array([1, 2], np.float32), True),
    ([1, 2], True),                          # Python ints: weak
    (np.array([1.0, 2.0]), True),
    (np.array([1 + 1j, 2]), False),          # complex -> float64: not safe
    ([1j, 2], False),
])
def test_set_value_casting_rules(value, ok):
    a = uma.shared(np.zeros(2), "a")
    if ok:
        a.set_value(value)
        assert a.get_value().dtype == np.float64
        np.testing.assert_array_equal(a.get_value(), np.asarray(value).astype(np.float64))
    else:
        with pytest.raises(TypeError):
            a.set_value(value)
        np.testing.assert_array_equal(a.get_value(), [0.0, 0.0])


def test_set_value_python_scalars_weak_and_in_range():
    s = uma.shared(np.array(0, np.int8), "s")
    s.set_value(100)
    assert s.get_value().item() == 100 and s.get_value().dtype == np.int8
    with pytest.raises(TypeError):
        s.set_value(300)
    with pytest.raises(TypeError):
        s.set_value(np.int64(5))  # NumPy scalars are strong
    assert s.get_value().item() == 100
    f32 = uma.shared(np.array(0.0, np.float32), "f32")
    f32.set_value(0.1)
    assert f32.get_value().dtype == np.float32 and f32.get_value() == np.float32(0.1)
    with pytest.raises(TypeError):
        f32.set_value(1e300)


def test_set_value_copies():
    a = uma.shared(np.zeros(2), "a")
    src = np.array([1.0, 2.0])
    a.set_value(src)
    src[0] = 9.0
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])


def test_update_to_a_plain_value():
    counter = uma.shared(np.array(5, np.int64), "counter")
    f = uma.function([], counter * 1, updates={counter: 0})
    assert f().item() == 5 and counter.get_value().item() == 0


def test_training_loop_returns_memory_to_baseline(mem_baseline):
    rng = np.random.default_rng(0)
    W = uma.shared(rng.normal(size=(8, 4)), "W")
    b = uma.shared(np.zeros(4), "b")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 4) * sym.log_softmax(x @ W + b), axis=1))
    gW, gb = uma.grad(loss, [W, b])
    step = uma.function([x, y], loss, updates=[(W, W - 0.1 * gW), (b, b - 0.1 * gb)])
    X = rng.normal(size=(16, 8))
    Y = rng.integers(0, 4, size=16)
    first = step(X, Y).item()
    for _ in range(200):
        last = step(X, Y).item()
    assert last < first
    del step, W, b, x, y, loss, gW, gb
    gc.collect()
