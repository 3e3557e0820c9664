"""uma.random.RandomStream on every backend: the documented Philox rule (draw j at
step s = NumPy's Generator(Philox(key, counter=[0, j, s, 0]))), the automatic state update,
no_default_updates, reseeding, the same draws on every backend, and the distributions."""
import re

import numpy as np
import pytest

import uma
from uma import sym
from uma.random import RandomStream, seed_state
from uma.runtime import CpuLinker
from uma.runtime.testing import CountingLinker, CountingValue

from conftest import BACKENDS as REGISTERED, as_uma_output

BACKENDS = [b for b in REGISTERED if b != "cuda"] + ["counting"]  # cuda: tests/python/test_cuda.py


def be(name):
    return CountingLinker("counting") if name == "counting" else name


def host(v):
    if isinstance(v, CountingValue):
        return v.array.copy()
    module = type(v).__module__
    if module.startswith(("torch", "jax", "mlx")):  # a framework backend's array, as a uma.Array
        v = (as_uma_output(v, "mlx") if module.startswith("mlx")  # NumPy can't read their bfloat16
             else uma.from_dlpack(v).to_device("cpu"))  # on the host, whatever device it is on
    return np.array(v, copy=True)


def oracle(seed, draw, step):
    """The NumPy generator the module documentation defines for draw ``draw`` at ``step``."""
    key = np.random.SeedSequence(seed).generate_state(2, np.uint64)
    return np.random.Generator(np.random.Philox(key=key, counter=np.array([0, draw, step, 0], np.uint64)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_follow_the_documented_philox_rule(backend):
    rs = RandomStream(123)
    u = rs.uniform(-1.0, 2.0, size=(5,))
    z = rs.normal(3.0, 0.5, size=(2, 3))
    f = uma.function([], [u, z], backend=be(backend))
    for step in range(3):
        got_u, got_z = (host(v) for v in f())
        np.testing.assert_array_equal(got_u, oracle(123, 0, step).uniform(-1.0, 2.0, size=5))
        np.testing.assert_array_equal(got_z, oracle(123, 1, step).normal(3.0, 0.5, size=(2, 3)))
    state = rs.state.get_value()
    assert state.dtype == np.uint64 and state.tolist()[2] == 3


def test_the_same_seed_gives_the_same_draws_on_every_backend():
    results = {}
    for name in BACKENDS:
        rs = RandomStream(7)
        x = sym.vector("x")
        outs = [rs.uniform(size=(4,)), rs.normal(x, 2.0), rs.bernoulli(0.3, size=(6,)),
                rs.integers(-5, 5, size=(3, 2)), rs.choice(10, size=(4,), replace=False),
                rs.choice(np.array([1.5, 2.5, 3.5]), size=(5,))]
        f = uma.function([x], outs, backend=be(name))
        results[name] = [[host(v) for v in f(np.arange(3.0))] for _ in range(2)]
    ref = results["reference"]
    for name in BACKENDS:
        for call_ref, call in zip(ref, results[name]):
            for r, g in zip(call_ref, call):
                assert r.dtype == g.dtype and r.shape == g.shape
                np.testing.assert_array_equal(g, r, err_msg=name)
    assert not np.array_equal(ref[0][0], ref[1][0])  # and the second call drew new numbers


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_calls_differ_and_the_state_advances(backend):
    rs = RandomStream(1)
    f = uma.function([], rs.uniform(size=(8,)), backend=be(backend))
    a, b = host(f()), host(f())
    assert not np.array_equal(a, b)
    assert rs.state.get_value()[2] == 2
    assert len(f.updates) == 1 and f.updates[0][0] is rs.state


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_default_updates_gives_the_same_draws_each_call(backend):
    rs = RandomStream(2)
    f = uma.function([], rs.normal(size=(4,)), backend=be(backend), no_default_updates=True)
    before = rs.state.get_value()
    a, b = host(f()), host(f())
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(rs.state.get_value(), before)
    assert f.updates == []
    g = uma.function([], rs.normal(size=(4,)), backend=be(backend), no_default_updates=[rs.state])
    assert g.updates == []


@pytest.mark.parametrize("bad", ["yes", 1, [object()], (None,)])
def test_no_default_updates_of_another_type_is_a_type_error_naming_it(bad):
    rs = RandomStream(2)
    with pytest.raises(TypeError, match=r"no_default_updates must be True, False or a list of shared variables, got "
                       + re.escape(repr(bad)[:20])):
        uma.function([], rs.normal(size=(4,)), no_default_updates=bad)
    np.testing.assert_array_equal(rs.state.get_value(), RandomStream(2).state.get_value())


@pytest.mark.parametrize("backend", BACKENDS)
def test_reseeding_takes_effect_in_functions_compiled_earlier(backend):
    rs = RandomStream(3)
    f = uma.function([], rs.uniform(size=(6,)), backend=be(backend))
    first = [host(f()) for _ in range(3)]
    rs.seed(3)
    again = [host(f()) for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    rs.state.set_value(seed_state(99))
    np.testing.assert_array_equal(host(f()), oracle(99, 0, 0).uniform(size=6))
    saved = rs.state.get_value()
    x1 = host(f())
    rs.state.set_value(saved)  # restoring a saved state replays the stream
    np.testing.assert_array_equal(host(f()), x1)


def test_backends_mixed_on_one_stream_continue_each_other():
    rs = RandomStream(11)
    u = rs.uniform(size=(3,))
    fns = [uma.function([], u, backend=be(name)) for name in BACKENDS]
    got = [host(fns[k % len(fns)]()) for k in range(8)]
    for step, g in enumerate(got):
        np.testing.assert_array_equal(g, oracle(11, 0, step).uniform(size=3))


def test_an_explicit_update_replaces_the_default_one():
    rs = RandomStream(4)
    f = uma.function([], rs.uniform(size=(2,)), updates={rs.state: rs.state})
    a, b = host(f()), host(f())
    np.testing.assert_array_equal(a, b)


def test_a_function_that_does_not_draw_gets_no_update():
    rs = RandomStream(4)
    rs.uniform(size=(2,))
    x = sym.vector("x")
    f = uma.function([x], x * 2)
    assert f.updates == [] and rs.state not in f.shared_variables


def test_draws_in_one_function_are_independent_and_a_reused_variable_is_one_draw():
    rs = RandomStream(5)
    u1, u2 = rs.uniform(size=(100,)), rs.uniform(size=(100,))
    f = uma.function([], [u1, u2, u1 * 1])
    a, b, a_again = (host(v) for v in f())
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, a_again)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.3


def test_cpu_runs_the_draws_between_program_segments():
    rs = RandomStream(6)
    x = sym.vector("x")
    f = uma.function([x], sym.exp(x) + rs.normal(size=(3,)), backend="cpu")
    assert sorted(CpuLinker.python_ops(f)) == ["random_advance", "random_normal"]


# ------------------------------------------------------------------ distributions

N = 20_000


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_distribution_moments(backend):
    rs = RandomStream(8)
    outs = [rs.uniform(2.0, 5.0, size=(N,)), rs.normal(-1.0, 3.0, size=(N,)),
            rs.bernoulli(0.25, size=(N,)), rs.integers(3, 9, size=(N,)), rs.choice(4, size=(N,))]
    u, z, bern, ints, ch = (host(v) for v in uma.function([], outs, backend=backend)())
    se = 5 / np.sqrt(N)  # five standard errors (per unit standard deviation)
    assert u.dtype == np.float64 and u.min() >= 2.0 and u.max() < 5.0
    assert abs(u.mean() - 3.5) < se * np.sqrt(0.75)
    assert abs(z.mean() + 1.0) < se * 3 and abs(z.std() - 3.0) < 0.1
    assert bern.dtype == np.int64 and set(np.unique(bern)) == {0, 1}
    assert abs(bern.mean() - 0.25) < se * 0.5
    assert ints.dtype == np.int64 and set(np.unique(ints)) == set(range(3, 9))
    assert ch.dtype == np.int64 and set(np.unique(ch)) == {0, 1, 2, 3}


@pytest.mark.parametrize("backend", BACKENDS)
def test_symbolic_parameters_broadcast(backend):
    rs = RandomStream(9)
    loc = sym.vector("loc")
    scale = sym.matrix("scale", shape=(None, 1))
    z = rs.normal(loc, scale)
    assert z.shape == (None, None) and z.dtype == "float64"
    f = uma.function([loc, scale], z, backend=be(backend))
    lv, sv = np.array([0.0, 10.0, 100.0]), np.array([[1.0], [0.0]])
    out = host(f(lv, sv))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out[1], lv)  # scale 0: exactly loc
    np.testing.assert_array_equal(out, oracle(9, 0, 0).normal(lv, sv))
    p = sym.vector("p")
    b = uma.function([p], rs.bernoulli(p), backend=be(backend))
    np.testing.assert_array_equal(host(b(np.array([0.0, 1.0, 0.0, 1.0]))), [0, 1, 0, 1])
    for bad in (1.5, np.nan):  # the error names the value
        with pytest.raises(ValueError, match=rf"p must be in \[0, 1\], got {bad}$"):
            b(np.array([0.5, bad]))
    with pytest.raises(ValueError, match=r"random_normal: scale must be >= 0, got -2.0$"):
        f(lv, np.array([[1.0], [-2.0]]))
    lo, hi = sym.vector("lo", dtype="int64"), sym.vector("hi", dtype="int64")
    ints = uma.function([lo, hi], rs.integers(lo, hi), backend=be(backend))
    with pytest.raises(ValueError, match=r"random_integers: needs low < high, got low=5, high=5$"):
        ints(np.array([0, 5, 7]), np.array([3, 5, 6]))


def test_float32_parameters_give_float32_draws():
    rs = RandomStream(10)
    lo = sym.scalar("lo", dtype="float32")
    u = rs.uniform(lo, 1.0, size=(3,))
    assert u.dtype == "float32"
    assert rs.normal(size=(2,), dtype="float32").dtype == "float32"
    assert rs.uniform(size=(2,)).dtype == "float64"
    out = uma.function([lo], u)(np.float32(0.5))
    assert out.dtype == "float32"


def test_choice_without_replacement_is_a_sample_of_distinct_entries():
    rs = RandomStream(12)
    a = sym.vector("a", dtype="int64")
    f = uma.function([a], rs.choice(a, size=(5,), replace=False), backend="numpy")
    pop = np.arange(100, 110)
    for _ in range(5):
        out = f(pop)
        assert len(set(out.tolist())) == 5 and set(out.tolist()) <= set(pop.tolist())
    with pytest.raises(ValueError, match="without replacement"):
        f(np.arange(3))
    with pytest.raises(ValueError, match="without replacement"):
        rs.choice(3, size=(4,), replace=False)


def test_bad_arguments():
    rs = RandomStream(13)
    with pytest.raises(TypeError):
        rs.uniform(size=(2.5,))
    with pytest.raises(TypeError):
        rs.uniform(size=sym.vector("n", dtype="int64"))
    with pytest.raises(ValueError):
        rs.uniform(size=(-1,))
    with pytest.raises(ValueError):
        rs.normal(np.zeros(3), size=(2,))  # does not broadcast to size
    with pytest.raises(TypeError):
        rs.integers(0.5, 3)
    with pytest.raises(TypeError):
        RandomStream(True)
    with pytest.raises(ValueError):
        RandomStream(-1)
    s = sym.scalar("s")
    f = uma.function([s], rs.normal(0.0, s, size=(2,)))
    with pytest.raises(ValueError, match="scale"):
        f(-1.0)
    g = uma.function([s], rs.bernoulli(s, size=(2,)))
    with pytest.raises(ValueError, match="p must be"):
        g(1.5)
    before = rs.state.get_value()
    with pytest.raises(ValueError):
        f(-1.0)
    np.testing.assert_array_equal(rs.state.get_value(), before)  # a failing call advances nothing
    with pytest.raises(TypeError):
        rs.state.set_value(np.zeros(3, np.int64))  # int64 -> uint64 is not a safe cast
    with pytest.raises(ValueError):
        rs.state.set_value(np.zeros(4, np.uint64))  # the state has static shape (3,)


def test_draws_have_no_gradient():
    rs = RandomStream(14)
    w = sym.vector("w")
    cost = sym.sum(w * rs.normal(size=(3,)))
    g = uma.grad(cost, w)
    f = uma.function([w], [g, cost], no_default_updates=True)
    gv, _ = f(np.ones(3))
    np.testing.assert_array_equal(host(gv), oracle(14, 0, 0).normal(size=3))


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_a_draw_whose_parameters_do_not_depend_on_wrt_is_a_constant(backend):
    rs = RandomStream(15)
    x, y = sym.vector("x"), sym.vector("y")
    z = rs.normal(0.0, 1.0, size=(3,))
    u = rs.uniform(y, y + 1.0)  # symbolic parameters, but not wrt: a constant too
    cost = sym.sum(z * x) + sym.sum(u * x * x) + sym.sum(x)
    g = uma.grad(cost, x)
    f = uma.function([x, y], [g, z, u], backend=backend)
    x0, y0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    gv, zv, uv = (host(v) for v in f(x0, y0))
    assert np.all(zv != 0) and np.all((uv >= y0) & (uv < y0 + 1.0))
    np.testing.assert_allclose(gv, zv + 2 * uv * x0 + 1.0, rtol=1e-12)


@pytest.mark.parametrize("dist, k, param", [("normal", 1, "loc"), ("normal", 2, "scale"),
                                            ("uniform", 1, "low"), ("uniform", 2, "high"),
                                            ("choice", 1, "a")])
@pytest.mark.parametrize("disconnected", ["raise", "zero"])
def test_gradient_through_a_draw_to_its_float_parameter_is_not_implemented(dist, k, param, disconnected):
    rs = RandomStream(16)
    x, y, c = sym.vector("x"), sym.vector("y"), sym.vector("c")  # c: a parameter that is not a wrt
    v = sym.exp(x)  # reaches the parameter through other ops
    params = {"normal": {"loc": [v, 1.0], "scale": [c, v]}, "uniform": {"low": [v, 10.0], "high": [c, v]},
              "choice": {"a": [v]}}[dist][param]
    draw = getattr(rs, dist)(*params, size=(3,))
    cost = sym.sum(draw) + sym.sum(x) + sym.sum(y * y)  # x also reaches the cost directly
    msg = f"random_{dist} has no gradient with respect to its input {k} \\({param}\\): a random draw"
    with pytest.raises(NotImplementedError, match=msg):
        uma.grad(cost, x, disconnected_inputs=disconnected)
    with pytest.raises(NotImplementedError, match=msg):
        uma.grad(cost, [y, x], disconnected_inputs=disconnected)
    if dist != "choice":
        with pytest.raises(NotImplementedError, match="reparameterized"):
            uma.grad(sym.sum(draw), x, disconnected_inputs=disconnected)


def test_the_reparameterized_draw_has_the_gradient():
    rs = RandomStream(17)
    loc, scale = sym.vector("loc"), sym.vector("scale")
    eps = rs.normal(0.0, 1.0, size=(3,))
    z = loc + scale * eps
    gl, gs = uma.grad(sym.sum(z), [loc, scale])
    f = uma.function([loc, scale], [gl, gs, eps], backend="cpu")
    glv, gsv, ev = (host(v) for v in f(np.zeros(3), np.ones(3)))
    np.testing.assert_array_equal(glv, np.ones(3))
    np.testing.assert_array_equal(gsv, ev)


def test_integer_valued_draws_and_integer_paths_into_a_draw_carry_no_gradient():
    rs = RandomStream(18)
    x = sym.vector("x")
    for cost in [sym.sum(rs.bernoulli(sym.sigmoid(x)).astype("float64")),  # integer-valued draw
                 sym.sum(rs.normal(sym.argmax(x).astype("float64"), 1.0, size=(3,)))]:  # via an integer
        with pytest.raises(uma.graph.DisconnectedInputError, match="no differentiable path"):
            uma.grad(cost, x)
        g = uma.grad(cost, x, disconnected_inputs="zero")
        np.testing.assert_array_equal(host(uma.function([x], g)(np.array([0.1, 0.7]))), [0.0, 0.0])


def test_bad_parameters_and_sizes_name_the_problem_and_the_values():
    rs = uma.random.RandomStream(seed=0)
    with pytest.raises(ValueError, match=r"uniform: size \(1099511627776, 1099511627776\) is too big"):
        rs.uniform(size=(2**40, 2**40))
    with pytest.raises(OverflowError, match="integers: parameter 1180591620717411303424 is out of range for int64"):
        rs.integers(0, 2**70)
    for low, high, shown in [(2.0, 1.0, "low=2.0, high=1.0"), (float("nan"), 1.0, "low=nan, high=1.0"),
                             (0.0, float("inf"), "low=0.0, high=inf"), ([0.0, 1.0], [1.0, 0.5], "low=1.0, high=0.5")]:
        f = uma.function([], rs.uniform(low, high))
        state = rs.state.get_value()
        with pytest.raises(ValueError, match=f"random_uniform: needs finite low <= high, got {shown}"):
            f()
        np.testing.assert_array_equal(rs.state.get_value(), state)  # a failed draw does not advance
    assert uma.function([], rs.uniform(1.0, 1.0))().item() == 1.0  # low == high is allowed (NumPy)
