"""The host thread policy (uma.get_num_threads / uma.set_num_threads, include/uma/threads.h):
the ceiling and where its default comes from, bad values, and results that do not depend on the
number of threads (NumPy is the oracle)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import uma
from conftest import child_env


@pytest.fixture
def restore_threads():
    yield
    uma.set_num_threads(0)


def _num_threads_in_child(**env):
    """uma.get_num_threads() in a fresh interpreter with `env` set (None: unset)."""
    r = subprocess.run([sys.executable, "-c", "import uma; print(uma.get_num_threads())"],
                       env=child_env(**env), capture_output=True, text=True, timeout=120)
    return r


def test_default_is_the_cpus_this_process_may_use():
    r = _num_threads_in_child(UMA_NUM_THREADS=None, OMP_NUM_THREADS=None)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == len(os.sched_getaffinity(0)) or int(r.stdout) < len(os.sched_getaffinity(0))
    assert int(r.stdout) >= 1


@pytest.mark.parametrize("env, want", [
    ({"UMA_NUM_THREADS": "3"}, 3),
    ({"UMA_NUM_THREADS": "1", "OMP_NUM_THREADS": "5"}, 1),  # uma's own variable first
    ({"UMA_NUM_THREADS": None, "OMP_NUM_THREADS": "5"}, 5),
    ({"UMA_NUM_THREADS": None, "OMP_NUM_THREADS": "4,2"}, 4),  # OpenMP's list: its first entry
])
def test_ceiling_from_the_environment(env, want):
    r = _num_threads_in_child(**env)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == want


def test_malformed_omp_num_threads_is_ignored_as_openmp_does():
    want = _num_threads_in_child(UMA_NUM_THREADS=None, OMP_NUM_THREADS=None)
    got = _num_threads_in_child(UMA_NUM_THREADS=None, OMP_NUM_THREADS="many")
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_an_empty_uma_num_threads_counts_as_unset():
    want = _num_threads_in_child(UMA_NUM_THREADS=None, OMP_NUM_THREADS=None)
    got = _num_threads_in_child(UMA_NUM_THREADS="", OMP_NUM_THREADS=None)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


@pytest.mark.parametrize("value", ["0", "-2", "two", " ", "3.5", "70000"])
def test_malformed_uma_num_threads_fails_the_import_naming_the_value(value):
    r = _num_threads_in_child(UMA_NUM_THREADS=value)
    assert r.returncode != 0
    assert "ValueError" in r.stderr and "UMA_NUM_THREADS" in r.stderr and f"'{value}'" in r.stderr, r.stderr


def test_set_and_restore(restore_threads):
    default = uma.get_num_threads()
    uma.set_num_threads(3)
    assert uma.get_num_threads() == 3
    assert 1 <= uma._core._threads_available() <= 3
    uma.set_num_threads(1)
    assert uma._core._threads_available() == 1
    uma.set_num_threads(0)
    assert uma.get_num_threads() == default


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), (65537, ValueError), (2**31, ValueError),
                                      (2**70, OverflowError), (2.0, TypeError), ("2", TypeError),
                                      (None, TypeError)])
def test_bad_values_raise_and_change_nothing(restore_threads, bad, exc):
    uma.set_num_threads(2)
    with pytest.raises(exc, match="set_num_threads") as e:
        uma.set_num_threads(bad)
    if exc is ValueError:
        assert str(bad) in str(e.value)  # the value the caller passed
    assert uma.get_num_threads() == 2


def test_free_core_rule():
    # 2 CPUs, a 1 s window (200 ticks of 10 ms): another process on one CPU, this one on the other
    assert uma._core._free_cores(0, 200, 0.01, 1.0, 2) == 1
    assert uma._core._free_cores(100, 200, 0.01, 1.0, 2) == 2
    assert uma._core._free_cores(0, 200, 0.01, 0.0, 2) == 1


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_kernels_match_numpy_on_any_ceiling(restore_threads, threads):
    """Elementwise, fused, reduction and matmul kernels big enough for a team give NumPy's
    values, and reductions and products the same bits on every ceiling."""
    uma.set_num_threads(threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(300_000)
    y = rng.standard_normal(300_000)
    a, b = uma.asarray(x), uma.asarray(y)
    np.testing.assert_allclose(np.asarray(uma.exp(a) * b + a), np.exp(x) * y + x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(float(uma.sum(a)), x.sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(uma.max(uma.reshape(a, (600, 500)), axis=1)),
                               x.reshape(600, 500).max(axis=1))
    assert int(uma.argmin(a)) == int(x.argmin())
    m = rng.standard_normal((800, 400))
    k = rng.standard_normal((400, 200))
    p = uma.asarray(m) @ uma.asarray(k)
    np.testing.assert_allclose(np.asarray(p), m @ k, rtol=1e-12, atol=1e-12)
    s = uma.sum(a)
    uma.set_num_threads(1)  # the same bits on one thread
    assert float(uma.sum(a)) == float(s)
    np.testing.assert_array_equal(np.asarray(uma.asarray(m) @ uma.asarray(k)), np.asarray(p))
