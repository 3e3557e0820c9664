"""Memory: memory_stats meanings (DESIGN.md "memory stats"), cache reuse and clear_cache,
adopted bytes, source lifetimes, adopt-in-a-loop, and "no op writes into adopted or
read-only memory"."""
import gc
import sys
import weakref

import numpy as np
import pytest

import uma
from conftest import stats

KEYS = {"active_bytes", "cached_bytes", "peak_bytes", "adopted_bytes"}
MiB = 1 << 20
DEFAULT_CACHE_LIMIT = 1 << 30  # caching_allocator.h: the documented default


@pytest.fixture
def cache_limit_restored():
    yield
    uma.set_cache_limit(DEFAULT_CACHE_LIMIT)


def _ptr(a):
    return a.__array_interface__["data"][0]


def _empty_cache():
    """Collect garbage first (it may free uma arrays into the cache), then clear the cache."""
    gc.collect()
    uma.clear_cache()


# --------------------------------------------------------------------------- the stats dict

def test_memory_stats_keys_and_types():
    s = uma.memory_stats("cpu")
    assert isinstance(s, dict)
    assert KEYS <= set(s), s
    for k in KEYS:
        assert type(s[k]) is int and s[k] >= 0, (k, s[k])
    assert s["peak_bytes"] >= s["active_bytes"]
    d = uma.memory_stats()  # device defaults to "cpu"
    assert KEYS <= set(d)


def test_memory_stats_unknown_device():
    with pytest.raises((RuntimeError, ValueError)):
        uma.memory_stats("tpu:0")


@pytest.mark.parametrize("nelem", [1, 100, 1000, 3 * MiB // 8, 1234567])
def test_active_bytes_counts_live_pooled_allocations(nelem, mem_baseline):
    before = stats()
    a = uma.empty(nelem, dtype="float64")
    during = stats()
    delta = during["active_bytes"] - before["active_bytes"]
    # rounded sizes (caching_allocator.h): a power of two up to 1 MiB, then whole MiBs
    bound = max(64, 2 * a.nbytes) if a.nbytes <= MiB else a.nbytes + MiB
    assert a.nbytes <= delta <= bound, (a.nbytes, delta)
    assert during["peak_bytes"] >= during["active_bytes"]
    assert during["adopted_bytes"] == before["adopted_bytes"]  # pooled, not adopted
    del a
    after = stats()
    assert after["active_bytes"] == before["active_bytes"]
    assert after["cached_bytes"] >= before["cached_bytes"]  # the freed block went to the cache


def test_views_do_not_allocate(mem_baseline):
    a = uma.zeros((64, 64))
    s0 = stats()
    views = [a[::-1], a.T, a[1:, ::3], a[None], uma.broadcast_to(a[0], (10, 64)), uma.transpose(a)]
    s1 = stats()
    assert s1["active_bytes"] == s0["active_bytes"]
    del views, a


def test_cache_reuse_shown_through_stats(mem_baseline):
    _empty_cache()
    s0 = stats()
    n = 3 * MiB // 8  # exactly 3 MiB: a class of its own
    a = uma.empty(n, dtype="float64")
    s1 = stats()
    block = s1["active_bytes"] - s0["active_bytes"]
    assert block >= 3 * MiB
    pa = _ptr(a)
    del a
    s2 = stats()
    assert s2["active_bytes"] == s0["active_bytes"]
    assert s2["cached_bytes"] == s0["cached_bytes"] + block  # freed block kept for reuse
    c = uma.empty(2 * n, dtype="float64")  # another class does not take it
    s3 = stats()
    assert s3["cached_bytes"] == s2["cached_bytes"]
    b = uma.empty(n, dtype="float64")  # same class: served from the cache
    s4 = stats()
    assert s4["cached_bytes"] == s3["cached_bytes"] - block
    assert s4["active_bytes"] == s3["active_bytes"] + block
    assert _ptr(b) == pa  # literally the same block
    del b, c
    uma.clear_cache()


def test_clear_cache_empties_cache_and_keeps_live_arrays(mem_baseline):
    _empty_cache()
    keep = uma.full((1000,), 3.0)
    tmp = [uma.empty(k * 100) for k in range(1, 20)]
    del tmp
    assert stats()["cached_bytes"] > 0
    s_before = stats()
    uma.clear_cache()
    s = stats()
    assert s["cached_bytes"] == 0
    assert s["active_bytes"] == s_before["active_bytes"]
    assert keep.tolist() == [3.0] * 1000
    uma.clear_cache("cpu")  # explicit device spelling
    del keep


def test_cache_limit_zero_disables_caching(cache_limit_restored, mem_baseline):
    uma.set_cache_limit(0)
    assert stats()["cached_bytes"] == 0  # lowering the limit trims at once
    a = uma.empty(10000)
    del a
    assert stats()["cached_bytes"] == 0


def test_lowering_cache_limit_trims(cache_limit_restored, mem_baseline):
    _empty_cache()
    c0 = stats()["cached_bytes"]
    arrays = [uma.empty(MiB // 8) for _ in range(4)]  # 4 blocks of 1 MiB
    del arrays
    assert stats()["cached_bytes"] == c0 + 4 * MiB
    uma.set_cache_limit(2 * MiB)
    assert stats()["cached_bytes"] <= 2 * MiB
    b = [uma.empty(MiB // 8) for _ in range(6)]
    del b
    assert stats()["cached_bytes"] <= 2 * MiB  # invariant: cached_bytes <= cache_limit


def test_peak_bytes_is_a_high_water_mark(mem_baseline):
    s0 = stats()
    a = uma.empty(5 * MiB // 8)
    s1 = stats()
    assert s1["peak_bytes"] >= s1["active_bytes"] >= s0["active_bytes"] + 5 * MiB
    del a
    s2 = stats()
    assert s2["peak_bytes"] >= s1["active_bytes"]
    assert s2["peak_bytes"] >= s2["active_bytes"]


def test_active_bytes_back_to_baseline_after_mixed_workload(mem_baseline, rng):
    x = rng.standard_normal((20, 30))
    for _ in range(20):
        u = uma.asarray(x)
        y = uma.tanh(u @ u.T) + 1.0
        z = uma.concatenate([y, y[::-1]], axis=1).sum(axis=0, keepdims=True)
        w = uma.where(z > 0, z, -z).astype("float32").reshape(-1)
        try:
            uma.add(w, uma.ones(7))  # failing ops must not leak either
        except ValueError:
            pass
        try:
            uma.exp(uma.ones(3, dtype="int8"))
        except TypeError:
            pass
        del u, y, z, w


# --------------------------------------------------------------------------- adopted bytes

def test_adopted_bytes_while_a_view_lives(mem_baseline):
    s0 = stats()
    x = np.ones(1000)
    u = uma.asarray(x)
    s1 = stats()
    assert s1["adopted_bytes"] == s0["adopted_bytes"] + x.nbytes
    assert s1["active_bytes"] == s0["active_bytes"]  # nothing pooled was allocated
    v = u[10:20]
    w = u[::-1]
    assert stats()["adopted_bytes"] == s1["adopted_bytes"]  # views do not count twice
    del u
    assert stats()["adopted_bytes"] == s1["adopted_bytes"]  # the views keep it adopted
    del v
    assert stats()["adopted_bytes"] == s1["adopted_bytes"]
    del w
    assert stats()["adopted_bytes"] == s0["adopted_bytes"]
    del x


def test_copy_is_not_adopted(mem_baseline):
    s0 = stats()
    x = np.ones(1000)
    u = uma.array(x)
    s1 = stats()
    assert s1["adopted_bytes"] == s0["adopted_bytes"]
    assert s1["active_bytes"] >= s0["active_bytes"] + x.nbytes
    del u


def test_adopted_bytes_through_each_protocol(mem_baseline):
    torch = pytest.importorskip("torch")
    s0 = stats()
    srcs = {
        "numpy": (np.arange(100.0), uma.asarray),
        "dlpack-numpy": (np.arange(64, dtype=np.int32), uma.from_dlpack),
        "dlpack-torch": (torch.arange(50, dtype=torch.float32), uma.from_dlpack),
        "buffer": (bytearray(256), uma.asarray),
    }
    for name, (src, fn) in srcs.items():
        nbytes = memoryview(src).nbytes if name != "dlpack-torch" else src.numel() * src.element_size()
        u = fn(src)
        assert stats()["adopted_bytes"] == s0["adopted_bytes"] + nbytes, name
        del u
        assert stats()["adopted_bytes"] == s0["adopted_bytes"], name


# --------------------------------------------------------------------------- source lifetimes

def test_numpy_source_lives_as_long_as_a_view():
    x = np.arange(10.0)
    r = weakref.ref(x)
    rc = sys.getrefcount(x)
    u = uma.asarray(x)
    assert sys.getrefcount(x) > rc  # uma holds a reference to its owner
    v = u[2:5]
    del u, x
    gc.collect()
    assert r() is not None
    junk = [np.full(10, -7.0) for _ in range(100)]  # freed memory would be reused by these
    assert v.tolist() == [2.0, 3.0, 4.0]
    del v
    gc.collect()
    assert r() is None  # released once the last view is gone
    del junk


def test_numpy_refcount_returns_after_release():
    x = np.arange(10.0)
    rc = sys.getrefcount(x)
    for _ in range(100):
        u = uma.asarray(x)
        v = u[::2] + 1.0
        del u, v
    gc.collect()
    assert sys.getrefcount(x) == rc


@pytest.mark.parametrize("how", ["from_dlpack", "memoryview", "asarray-copy"])
def test_source_reference_released_through_each_protocol(how):
    x = np.arange(10.0)
    rc = sys.getrefcount(x)
    for _ in range(50):
        if how == "from_dlpack":
            u = uma.from_dlpack(x)
        elif how == "memoryview":
            u = uma.asarray(memoryview(x))
        else:
            u = uma.asarray(x, copy=True)
        v = u[1:] * 2.0
        del u, v
    gc.collect()
    assert sys.getrefcount(x) == rc


def test_buffer_source_export_held_while_a_view_lives():
    ba = bytearray(range(16))
    u = uma.asarray(ba)
    v = u[4:8]
    del u
    gc.collect()
    with pytest.raises(BufferError):  # the buffer export is still held: bytearray cannot resize
        ba.extend(b"xx")
    assert v.tolist() == [4, 5, 6, 7]
    del v
    gc.collect()
    ba.extend(b"xx")  # released: resizing works again
    assert len(ba) == 18


def test_torch_source_lives_as_long_as_a_view():
    torch = pytest.importorskip("torch")
    t = torch.arange(1000, dtype=torch.float64)
    u = uma.from_dlpack(t)
    v = u[500:505]
    del t, u
    gc.collect()
    junk = [torch.full((1000,), -3.0, dtype=torch.float64) for _ in range(50)]
    assert v.tolist() == [500.0, 501.0, 502.0, 503.0, 504.0]
    del junk, v


# --------------------------------------------------------------------------- adopt in a loop

@pytest.mark.parametrize("protocol", ["asarray", "from_dlpack"])
def test_adopt_in_a_loop_never_overwrites_a_source(protocol, mem_baseline):
    """Thousands of fresh sources adopted, computed on and dropped while the allocator serves
    other arrays of the same size class. Adopted memory entering the cache would hand a live
    source's bytes to one of those arrays; a freed source reused by uma would corrupt them."""
    n = 512  # 4096 bytes: exactly one size class, shared by the sources and the pooled arrays
    iters = 4000 if protocol == "asarray" else 1500
    adopt = uma.asarray if protocol == "asarray" else uma.from_dlpack
    kept = []  # every other source stays alive and must never change
    others = []  # pooled arrays of the same class, allocated and freed all the time
    for i in range(iters):
        src = np.full(n, float(i))
        u = adopt(src)
        r = u * 2.0 + 1.0
        assert r.sum().item() == (2.0 * i + 1.0) * n
        if protocol == "asarray":
            u[n - 1] = -float(i)  # an explicit write lands in the source itself, nowhere else
        others.append(uma.full((n,), -1.0))
        if len(others) > 40:
            others.pop(0)
        if i % 2 == 0:
            kept.append((i, src))
        del u, r, src
        if i % 500 == 499:
            uma.clear_cache()
    for i, src in kept:
        assert (src[: n - 1] == float(i)).all(), f"source {i} was overwritten"
        assert src[n - 1] == (-float(i) if protocol == "asarray" else float(i)), f"source {i}: last element"
    for o in others:
        assert o.tolist() == [-1.0] * n
    del others, kept


def test_adopt_torch_in_a_loop():
    torch = pytest.importorskip("torch")
    base = stats()
    kept = []
    for i in range(1000):
        t = torch.full((256,), float(i), dtype=torch.float64)
        u = uma.from_dlpack(t)
        s = (u + 0.5).sum().item()
        assert s == (i + 0.5) * 256
        tmp = uma.full((256,), -2.0)
        if i % 3 == 0:
            kept.append((i, t))
        del u, t, tmp
    for i, t in kept:
        assert bool((t == float(i)).all()), f"tensor {i} was overwritten"
    after = stats()
    assert after["adopted_bytes"] == base["adopted_bytes"]
    assert after["active_bytes"] == base["active_bytes"]


# --------------------------------------------------------------------------- no writes into adopted / read-only

def _ops_on(u, v):
    """Results of many ops on u (2-D float64, 4x4) and v; none may alias u's memory."""
    return [
        -u, abs(u), uma.exp(u), uma.sqrt(abs(u)), uma.tanh(u), uma.sigmoid(u), uma.square(u), uma.floor(u),
        u + v, u - 1.0, 2.0 * u, u / 3.0, u ** 2, uma.maximum(u, v), uma.minimum(u, 0.0), u > v, u == u,
        uma.where(u > 0, u, v), u @ v, uma.matmul(u, u.T), uma.sum(u, axis=0, keepdims=True), uma.mean(u),
        uma.max(u, axis=1), u.astype("float32"), u.astype("float64"), u.copy(), u.T.copy(),
        uma.reshape(u.T, (16,)), uma.concatenate([u, v]), uma.stack([u, u]), uma.asarray(u, copy=True),
        uma.array(u), u + 0.0, u * 1.0, uma.broadcast_to(u[0], (4, 4)) + 0.0, uma.expand_dims(u, 0) * 1,
        uma.zeros_like(u), uma.ones_like(u), uma.full_like(u, 5.0), uma.logical_not(u), uma.abs(u[::-1]),
    ]


@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "read-only"])
def test_no_op_writes_into_adopted_or_read_only_memory(readonly, rng, mem_baseline):
    x = rng.standard_normal((4, 4))
    if readonly:
        x.flags.writeable = False
    snapshot = x.copy()
    u = uma.asarray(x)
    assert u.writable is (not readonly)
    v = uma.asarray(rng.standard_normal((4, 4)))
    results = _ops_on(u, v)
    np.testing.assert_array_equal(x, snapshot)
    for k, r in enumerate(results):
        if isinstance(r, uma.Array) and r.writable and r.size:
            r[...] = 12345  # a result that aliased the source would change it now
    np.testing.assert_array_equal(x, snapshot)
    # results own fresh memory: every writable result is independent of the source
    del results, u, v


def test_temporaries_of_adopted_arrays_are_never_donated(rng):
    """An adopted temporary with no other reference is still not uma's to write into."""
    x = rng.standard_normal(100)
    snapshot = x.copy()
    results = [
        uma.asarray(x) + 1.0, -uma.asarray(x), uma.exp(uma.asarray(x)), uma.asarray(x) * uma.asarray(x),
        uma.tanh(uma.asarray(x) * 1.0), abs(uma.asarray(x)), uma.asarray(x) / 2.0, uma.asarray(x) ** 2,
        uma.from_dlpack(x) + 1.0, uma.sqrt(abs(uma.from_dlpack(x))), uma.asarray(x) - uma.asarray(x),
        uma.asarray(x).astype("float64") + 0.5, uma.where(uma.asarray(x) > 0, uma.asarray(x), 0.0),
    ]
    np.testing.assert_array_equal(x, snapshot)
    ro = x.copy()
    ro.flags.writeable = False
    more = [uma.asarray(ro) + 1.0, -uma.asarray(ro), uma.exp(uma.asarray(ro)), uma.asarray(ro) * 2.0]
    np.testing.assert_array_equal(ro, snapshot)
    for r in results + more:
        assert r.writable


def test_temporaries_of_torch_tensors_are_never_donated():
    torch = pytest.importorskip("torch")
    t = torch.linspace(-1, 1, 50, dtype=torch.float64)
    snapshot = t.clone()
    r = [uma.from_dlpack(t) + 1.0, uma.exp(uma.from_dlpack(t)), -uma.from_dlpack(t), uma.asarray(t) * 3.0]
    assert torch.equal(t, snapshot)
    assert len(r) == 4


def test_results_of_read_only_inputs_are_writable_and_independent():
    x = np.arange(6.0)
    x.flags.writeable = False
    u = uma.asarray(x)
    for r in (u + 0, u * 1.0, uma.exp(u), u.copy(), u.astype("float32"), uma.reshape(u, (2, 3)) + 0):
        assert r.writable
        r[...] = -1
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("value,err,shown", [
    (2**64, OverflowError, "18446744073709551616"), (2**63, OverflowError, "9223372036854775808"),
    (1.5, TypeError, "1.5"), ("1", TypeError, "'1'"), (None, TypeError, "None"), (-1, ValueError, "-1"),
])
def test_cache_limit_bad_values_name_the_value_and_keep_the_limit(cache_limit_restored, mem_baseline, value, err,
                                                                   shown):
    uma.set_cache_limit(0)  # a limit the failed call must keep
    with pytest.raises(err, match="set_cache_limit") as info:
        uma.set_cache_limit(value)
    assert shown in str(info.value)
    a = uma.empty((1 << 16,), dtype="uint8")
    del a
    assert stats()["cached_bytes"] == 0


@pytest.mark.parametrize("fn,args", [
    (uma.eye, (2**64,)), (uma.eye, (3, 2**70)), (uma.one_hot, ([0, 1], 2**64)),
    (lambda d: uma.round(uma.asarray([1.25]), d), (2**64,)),
])
def test_int_arguments_beyond_int64_are_overflow_errors(fn, args):
    with pytest.raises(OverflowError, match="int64"):
        fn(*args)


@pytest.mark.parametrize("fn,args", [
    (uma.eye, (2.5,)), (uma.eye, ("3",)), (uma.one_hot, ([0, 1], 2.0)),
    (lambda d: uma.round(uma.asarray([1.25]), d), (1.5,)),
])
def test_int_arguments_of_other_types_are_type_errors_naming_them(fn, args):
    with pytest.raises(TypeError, match="must be an integer"):
        fn(*args)


_EXIT_SCENARIOS = {
    "asarray of a NumPy view of a uma array": "b = uma.asarray(np.asarray(a))",
    "asarray of a memoryview of a uma array": "m = uma.asarray(memoryview(a))",
    "a chain of adoptions": "c = uma.asarray(np.asarray(uma.asarray(np.asarray(a))[1:]))",
    # Hypothesis drops the last references to uma's registered dtype functions during shutdown:
    # C++ globals holding them released them after the interpreter was gone (a fatal error).
    "a Hypothesis test ran": """
from hypothesis import given, strategies as st
@given(st.integers(0, 10))
def check(n):
    assert uma.arange(n).shape == (n,)
check()
""",
    "a value held by a failing output_filter": """
class Failing(uma.Linker):
    name, residency = "exit-test-failing", "exit-test-failing"
    def input_filter(self, value, type): return np.array(value)
    def output_filter(self, value, type):
        self.held = uma.asarray(np.asarray(uma.asarray(value)))
        raise RuntimeError("output_filter fails")
    def is_native(self, value, type): return isinstance(value, np.ndarray)
    def compile(self, fgraph):
        def thunk(values):
            return [np.array(values[0]) + 1]
        return thunk
uma.register_backend("exit-test-failing", Failing())
w = uma.shared(np.zeros(3))
uma.function([], [], updates={w: w + 1}, backend="exit-test-failing")()
try:
    w.get_value()
except RuntimeError as e:
    err = e
""",
    # a registered linker class reaches this script's globals, which hold a cpu function, its
    # Program and a shared variable's cell
    "registered linker and a compiled function": """
class MyLinker(uma.Linker):
    name, residency = "exit-test-mine", "exit-test-mine"
    def is_native(self, value, type): return isinstance(value, np.ndarray)
uma.register_backend("exit-test-mine", MyLinker())
w = uma.shared(np.zeros(3), name="w")
x = uma.sym.vector("x")
f = uma.function([x], uma.sym.sum(w * x), updates={w: w + x}, backend="cpu")
f(np.ones(3))
""",
    # functions of every backend alive at exit: their thunks (with uma constants), the copies
    # of a Python residency in a shared variable's cell, and a function whose thunk reaches
    # back to it through a linker's globals
    "functions of every backend and their copies": """
w = uma.shared(np.zeros(3), name="w")
x = uma.sym.vector("x")
fs = [uma.function([x], uma.sym.sum(w * x) + 1, updates={w: w + x * 2}, backend=b) for b in uma.backends()]
for f in fs:
    f(np.ones(3))
class Mine(uma.Linker):
    name, residency = "exit-test-cycle", "exit-test-cycle"
    def compile(self, fgraph):
        inner = uma.runtime.get_linker("numpy").compile(fgraph)
        return lambda values: (g, inner(values))[1]   # reaches g through this script's globals
g = uma.function([x], uma.sym.sum(w * x), updates={w: w - x}, backend=Mine())
g(np.ones(3))
""",
}


@pytest.mark.parametrize("scenario", sorted(_EXIT_SCENARIOS))
def test_interpreter_exit_is_silent_with_adopted_uma_memory_alive(scenario):
    """Arrays that adopted another uma array's memory (through NumPy or a memoryview), still
    alive at interpreter exit, release their owners while the interpreter clears its modules:
    nanobind finds nothing leaked and prints nothing."""
    import subprocess
    import sys
    code = "import numpy as np, uma\na = uma.asarray(np.arange(6.0))\n" + _EXIT_SCENARIOS[scenario] + "\nprint('done')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "done" in r.stdout
    assert "leaked" not in r.stderr and "nanobind" not in r.stderr, r.stderr[-3000:]
