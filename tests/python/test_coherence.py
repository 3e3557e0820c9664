"""Coherent shared state, proved.

- a seeded random walk of calls on three counted residencies (two counting linkers plus the
  host) and the numpy residency, with get_value and set_value, checked after every step
  against a model of which copies are current, how many conversions each linker made and
  what every value is;
- copy.deepcopy and pickle of shared variables and compiled functions see the current value;
- functions sharing variables called from 8 threads give the state of some serial order.
"""
import copy
import pickle
import threading
import time

import numpy as np
import pytest

import uma
from conftest import BACKENDS
from uma import sym
from uma.runtime import HOST
from uma.runtime.testing import CountingLinker, CountingValue

MOD = 1009


def host(v):
    if isinstance(v, CountingValue):
        return v.array.copy()
    if type(v).__module__.startswith("torch"):  # a torch backend's tensor (torch-cuda: on the host first)
        v = v.cpu().numpy()
    elif type(v).__module__.startswith(("jax", "mlx")):  # a jax or mlx backend's array
        v = np.asarray(v)
    return np.array(v, copy=True)


# ======================================================================== the model

class CoherenceModel:
    """What the DESIGN.md rules say: values, current residencies, conversions per linker."""

    def __init__(self, values, counted):
        self.value = {k: np.array(v, copy=True) for k, v in values.items()}
        self.current = {k: {HOST} for k in values}
        self.to_res = {r: 0 for r in counted}
        self.to_host = {r: 0 for r in counted}

    def _to_host(self, var):
        cur = self.current[var]
        if HOST not in cur:
            (only,) = cur  # a stale host copy means exactly one residency is current
            if only in self.to_host:
                self.to_host[only] += 1
            cur.add(HOST)

    def read(self, var, res):
        cur = self.current[var]
        if res in cur:
            return
        self._to_host(var)
        if res != HOST:
            if res in self.to_res:
                self.to_res[res] += 1
            cur.add(res)

    def write(self, var, res, eager):
        self.current[var] = {res}
        if eager and res != HOST:
            if res in self.to_host:
                self.to_host[res] += 1
            self.current[var].add(HOST)

    def get_value(self, var):
        self._to_host(var)

    def set_value(self, var, value):
        self.value[var] = value
        self.current[var] = {HOST}


# Each kind: (variables read, variables written, update_policy, outputs, new values)
KINDS = {
    "add": (("a", "b"), ("a",), "lazy", lambda v: [], lambda v: {"a": (v["a"] + v["b"]) % MOD}),
    "swap": (("a", "b"), ("a", "b"), "lazy", lambda v: [], lambda v: {"a": v["b"], "b": v["a"]}),
    "read": (("a", "c"), (), "lazy", lambda v: [v["c"] * 2 + v["a"]], lambda v: {}),
    "bump_eager": (("a", "c"), ("c",), "eager", lambda v: [v["c"]],
                   lambda v: {"c": (v["c"] + v["a"]) % MOD}),
}


def _compile(kind, var, backend):
    a, b, c = var["a"], var["b"], var["c"]
    if kind == "add":
        return uma.function([], [], updates={a: (a + b) % MOD}, backend=backend)
    if kind == "swap":
        return uma.function([], [], updates={a: b, b: a}, backend=backend)
    if kind == "read":
        return uma.function([], [c * 2 + a], backend=backend)
    return uma.function([], [c * 1], updates={c: (c + a) % MOD}, backend=backend,
                        update_policy="eager")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_sequences_of_calls_get_value_and_set_value_follow_the_model(seed):
    rng = np.random.default_rng(seed)
    left, right = CountingLinker("left"), CountingLinker("right")
    backends = {"left": left, "right": right, HOST: "cpu", "numpy": "numpy"}
    init = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([10.0, 20.0, 30.0]),
            "c": np.array([5.0, 6.0, 7.0])}
    var = {k: uma.shared(v, k) for k, v in init.items()}
    model = CoherenceModel(init, ["left", "right"])
    fns = {(kind, res): _compile(kind, var, be) for kind in KINDS for res, be in backends.items()}
    residencies = list(backends)
    names = list(init)

    for step in range(300):
        action = rng.choice(["call", "call", "call", "get", "set"])
        if action == "call":
            kind = list(KINDS)[rng.integers(len(KINDS))]
            res = residencies[rng.integers(len(residencies))]
            reads, writes, policy, outputs, new = KINDS[kind]
            outs = fns[(kind, res)]()
            for r in reads:
                model.read(r, res)
            for got, exp in zip(outs, outputs(model.value)):
                np.testing.assert_array_equal(host(got), exp, err_msg=f"step {step} {kind}@{res}")
            updated = new(model.value)
            for w in writes:
                model.write(w, res, policy == "eager")
            model.value.update(updated)
            what = f"{kind}@{res}"
        elif action == "get":
            name = names[rng.integers(3)]
            borrow = bool(rng.integers(2))
            got = var[name].get_value(borrow=borrow)
            model.get_value(name)
            assert type(got) is np.ndarray and got.dtype == np.float64
            np.testing.assert_array_equal(got, model.value[name], err_msg=f"step {step} get {name}")
            what = f"get_value({name})"
        else:
            name = names[rng.integers(3)]
            value = rng.integers(0, MOD, size=3).astype(np.float64)
            var[name].set_value(value)
            model.set_value(name, value)
            what = f"set_value({name})"
        for name in names:
            assert var[name].container.current == model.current[name], f"step {step} after {what}: {name}"
        assert (left.to_residency, left.to_host) == (model.to_res["left"], model.to_host["left"]), \
            f"step {step} after {what}"
        assert (right.to_residency, right.to_host) == (model.to_res["right"], model.to_host["right"]), \
            f"step {step} after {what}"
    for name in names:
        np.testing.assert_array_equal(var[name].get_value(), model.value[name])
    assert left.conversions > 0 and right.conversions > 0  # the walk did cross residencies


def test_a_stale_copy_is_never_used_after_a_write_elsewhere():
    left, right = CountingLinker("left"), CountingLinker("right")
    a = uma.shared(np.array([1.0]), "a")
    read_left = uma.function([], a * 1, backend=left)
    read_right = uma.function([], a * 1, backend=right)
    read_left(), read_right()
    assert a.container.current == {"left", "right", HOST}  # three current copies at once
    uma.function([], [], updates={a: a + 1}, backend=left)()
    assert a.container.current == {"left"}
    assert host(read_right()) == 2.0  # right's old copy was dropped, not reused
    assert a.container.current == {"left", "right", HOST}
    assert (left.to_host, right.to_residency) == (1, 2)


# ======================================================================== pickle and deepcopy

def _lazy_on(linker, value, name="a"):
    a = uma.shared(np.array(value), name)
    uma.function([], [], updates={a: a + 1}, backend=linker)()
    return a


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copies_of_shared_variables_see_the_current_value(how):
    lk = CountingLinker("dev")
    a = _lazy_on(lk, [1.0, 2.0])
    assert a.container.current == {"dev"}  # the host copy is stale
    b = pickle.loads(pickle.dumps(a)) if how == "pickle" else copy.deepcopy(a)
    assert lk.to_host == 1  # brought up to date first: one conversion
    assert type(b) is uma.SharedVariable and b is not a and b.container is not a.container
    assert (b.name, b.dtype, b.ndim) == ("a", "float64", 1)
    np.testing.assert_array_equal(b.get_value(), [2.0, 3.0])
    b.set_value([9.0, 9.0])
    np.testing.assert_array_equal(a.get_value(), [2.0, 3.0])
    s = uma.shared(np.zeros((1, 3), np.float32), "s", shape=(1, None))
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.type == s.type and s2.get_value().dtype == np.float32
    assert s2.id != s.id


@pytest.mark.parametrize("backend", BACKENDS + ["counting"])
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copies_of_functions_compute_from_the_current_values(backend, how):
    be = CountingLinker("counting") if backend == "counting" else backend
    W = uma.shared(np.array([[1.0, 2.0], [3.0, 4.0]]), "W")
    x = sym.vector("x")
    y = sym.dot(x, W)
    f = uma.function([x], [y, sym.sum(y)], updates={W: W + 1}, backend=be)
    f([1.0, 1.0])
    f([1.0, 1.0])  # W is now the original + 2, current only in the backend's residency
    g = pickle.loads(pickle.dumps(f)) if how == "pickle" else copy.deepcopy(f)
    assert g.backend == f.backend and len(g.updates) == 1
    assert isinstance(g, type(f)) and g.shared_variables[0] is not W
    W_now = np.array([[3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(W.get_value(), W_now)
    out_g = g(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(host(out_g[0]), np.array([1.0, -1.0]) @ W_now)
    assert host(out_g[1]) == (np.array([1.0, -1.0]) @ W_now).sum()
    np.testing.assert_array_equal(g.shared_variables[0].get_value(), W_now + 1)  # g's own copy
    np.testing.assert_array_equal(W.get_value(), W_now)  # the original is untouched
    f([0.0, 0.0])
    np.testing.assert_array_equal(W.get_value(), W_now + 1)


def test_functions_pickled_together_keep_sharing_their_variables():
    c = uma.shared(np.array(0, np.int64), "c")
    inc = uma.function([], [], updates={c: c + 1})
    read = uma.function([], c * 10, backend="numpy")
    inc()
    inc2, read2 = pickle.loads(pickle.dumps((inc, read)))
    assert read2().item() == 10
    inc2()
    inc2()
    assert read2().item() == 30 and read().item() == 10
    assert inc2.shared_variables[0] is read2.shared_variables[0]


def test_pickled_function_keeps_mode_options_and_single_output():
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], x * 1 + 2, mode={"exclude": ["simplify"]}, allow_input_downcast=True)
    g = pickle.loads(pickle.dumps(f))
    assert g.mode == f.mode and not g.mode.enabled("simplify")
    assert g.allow_input_downcast
    out = g(np.array([1.0, 2.0]))  # float64 into float32: allowed by the pickled option
    assert isinstance(out, uma.Array) and out.tolist() == [3.0, 4.0]


def test_pickled_function_with_a_random_stream_continues_the_stream():
    rs = uma.random.RandomStream(5)
    u = rs.uniform(size=(4,))
    f = uma.function([], u)
    f()
    g = pickle.loads(pickle.dumps(f))
    expected = host(f())  # the original's next draws ...
    np.testing.assert_array_equal(host(g()), expected)  # ... are the copy's next draws
    np.testing.assert_array_equal(g.shared_variables[0].get_value(), rs.state.get_value())
    assert g.shared_variables[0].default_update is not None


def test_pickle_of_a_deep_graph():
    x = sym.vector("x")
    y = x
    for _ in range(1500):  # deeper than the recursion limit allows a naive pickle to go
        y = y * 1.0001 + 0.5
    f = uma.function([x], y, backend="reference", mode=uma.Mode(include=[]))
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(host(g([1.0])), host(f([1.0])))


# ======================================================================== threads

N_THREADS = 8


def test_functions_sharing_variables_from_8_threads_act_as_some_serial_order():
    n = 200_000  # big enough that the compute (GIL released) overlaps other threads
    a = uma.shared(np.full(n, 1000.0), "a")
    b = uma.shared(np.zeros(n), "b")
    counter = uma.shared(np.array(0, np.int64), "counter")
    total = a.get_value() + b.get_value()
    move = {  # name -> (function, how much it moves from a to b, how much it adds to counter)
        "cpu": (uma.function([], [], updates={a: a - 1, b: b + 1, counter: counter + 1}, backend="cpu"), 1, 1),
        "numpy": (uma.function([], [], updates={a: a - 2, b: b + 2, counter: counter + 10},
                               backend="numpy"), 2, 10),
        "ref": (uma.function([], [], updates={counter: counter + 100}, backend="reference"), 0, 100),
        "cpu_b": (uma.function([], [], updates={b: b + 0.5, a: a - 0.5}, backend="cpu"), 0.5, 0),
    }
    read_sum = uma.function([], a + b, backend="cpu")
    read_np = uma.function([], [a, b], backend="numpy")
    calls = [[] for _ in range(N_THREADS)]
    torn = []
    errors = []
    barrier = threading.Barrier(N_THREADS)

    def worker(k):
        rng = np.random.default_rng(k)
        try:
            barrier.wait()
            for _ in range(25):
                name = list(move)[rng.integers(len(move))]
                move[name][0]()
                calls[k].append(name)
                if rng.integers(3) == 0:
                    s = np.asarray(read_sum())
                    if not np.array_equal(s, total):
                        torn.append(("sum", s[:3]))
                    va, vb = read_np()
                    if not (np.all(va == va[0]) and np.all(vb == vb[0]) and np.array_equal(va + vb, total)):
                        torn.append(("pair", va[:2], vb[:2]))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not torn, torn[:3]
    done = [name for c in calls for name in c]
    assert len(done) == N_THREADS * 25
    moved = sum(move[name][1] for name in done)
    counted = sum(move[name][2] for name in done)
    assert counter.get_value().item() == counted  # no lost update
    for name in ("cpu", "cpu_b"):  # each call ran on one path: C++, or Python after a stale host copy
        assert sum(move[name][0].call_counts().values()) == done.count(name)
    np.testing.assert_array_equal(a.get_value(), np.full(n, 1000.0 - moved))
    np.testing.assert_array_equal(b.get_value(), np.full(n, moved))


def test_get_value_and_set_value_race_with_calls_without_torn_state():
    a = uma.shared(np.zeros(50_000), "a")
    inc = uma.function([], [], updates={a: a + 1})
    stop = threading.Event()
    bad = []

    def reader():
        while not stop.is_set():
            v = a.get_value()
            if not np.all(v == v[0]):
                bad.append(v[:3])

    def writer():
        for _ in range(30):
            inc()
            a.set_value(a.get_value())  # a read-modify-write that must not tear either

    threads = [threading.Thread(target=reader) for _ in range(2)]
    threads += [threading.Thread(target=writer) for _ in range(N_THREADS - 2)]
    for t in threads:
        t.start()
    for t in threads[2:]:
        t.join()
    stop.set()
    for t in threads[:2]:
        t.join()
    assert not bad
    v = a.get_value()
    assert np.all(v == v[0]) and 1 <= v[0] <= 30 * (N_THREADS - 2)


def test_a_small_cpu_call_waits_for_a_held_variable_with_the_gil_released():
    # A small call keeps the GIL only when every lock is free at once; here another thread
    # holds the variable's lock and runs Python (needing the GIL) before releasing it, so a
    # call that waited while holding the GIL would never return.
    c = uma.shared(np.array(0.0), "c")
    f = uma.function([], [], updates={c: c + 1}, backend="cpu")
    f()
    held, ran = threading.Event(), []

    def holder():
        with c.container.lock:
            held.set()
            time.sleep(0.05)
            ran.append(sum(range(10_000)))  # Python work with the lock held
    t = threading.Thread(target=holder)
    t.start()
    held.wait()
    f()  # waits for the holder (the GIL released meanwhile)
    t.join()
    assert ran == [sum(range(10_000))]
    assert float(c.get_value()) == 2.0
    assert f.call_counts() == {"fast": 2, "general": 0}


def test_the_gil_is_released_while_a_cpu_function_computes():
    rng = np.random.default_rng(0)
    A = uma.shared(rng.normal(size=(600, 600)) / 30, "A")
    y = A
    for _ in range(6):
        y = sym.tanh(y @ A)
    f = uma.function([], sym.sum(y), backend="cpu")  # one Program.run of six matmuls
    f()  # warm up
    started, spans = threading.Event(), []

    def worker():
        started.set()
        t0 = time.perf_counter()
        f()
        spans.append(time.perf_counter() - t0)

    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    stamps = []
    while t.is_alive():  # Python work on this thread while the other one computes
        stamps.append(time.perf_counter())
    t.join()
    assert len(stamps) > 1, "this thread never ran while the other one computed"
    covered, gap = stamps[-1] - stamps[0], float(np.diff(stamps).max())
    # a call holding the GIL would stall this loop for (nearly) all of it
    assert covered > spans[0] / 2 and gap < spans[0] / 2, (covered, gap, spans[0])
