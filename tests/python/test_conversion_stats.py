"""uma.conversion_stats: the conversions of shared values between residencies, counted per
pair (DESIGN.md "Shared variables"): one per switch of residency, none while one backend keeps
writing, bytes of the host copy."""
import numpy as np
import pytest

import uma


@pytest.fixture(autouse=True)
def fresh_counts():
    uma.conversion_stats(reset=True)
    yield


def test_each_switch_converts_once_and_repeated_calls_convert_nothing():
    w = uma.shared(np.arange(6.0), "w")
    on_numpy = uma.function([], [], updates={w: w + 1}, backend="numpy")
    on_cpu = uma.function([], [], updates={w: w * 2}, backend="cpu")
    for _ in range(3):
        on_numpy()
    assert uma.conversion_stats() == {("cpu", "numpy"): {"conversions": 1, "bytes": 48}}
    for _ in range(3):
        on_cpu()
    assert uma.conversion_stats() == {("cpu", "numpy"): {"conversions": 1, "bytes": 48},
                                      ("numpy", "cpu"): {"conversions": 1, "bytes": 48}}
    np.testing.assert_array_equal(w.get_value(), (np.arange(6.0) + 3) * 8)
    assert len(uma.conversion_stats()) == 2  # get_value of a current host copy converts nothing


def test_get_value_counts_the_conversion_it_makes():
    w = uma.shared(np.zeros((2, 3), np.float32), "w")
    uma.function([], [], updates={w: w + 1}, backend="numpy")()
    uma.conversion_stats(reset=True)
    w.get_value()
    w.get_value()
    assert uma.conversion_stats() == {("numpy", "cpu"): {"conversions": 1, "bytes": 24}}


def test_the_eager_update_policy_counts_its_host_copies():
    w = uma.shared(np.arange(3, dtype=np.int32), "w")
    f = uma.function([], [], updates={w: w + 1}, backend="numpy", update_policy="eager")
    f()
    f()
    stats = uma.conversion_stats()
    assert stats[("numpy", "cpu")] == {"conversions": 2, "bytes": 24}
    assert stats[("cpu", "numpy")] == {"conversions": 1, "bytes": 12}


def test_reset_reads_then_clears():
    w = uma.shared(np.ones(4), "w")
    uma.function([], [], updates={w: w + 1}, backend="numpy")()
    first = uma.conversion_stats(reset=True)
    assert first == {("cpu", "numpy"): {"conversions": 1, "bytes": 32}}
    assert uma.conversion_stats() == {}


def test_torch_switches_are_counted_and_share_memory():
    pytest.importorskip("torch")
    w = uma.shared(np.arange(5.0), "w")
    uma.function([], [], updates={w: w + 1}, backend="torch")()
    host = w.get_value(borrow=True)
    assert np.shares_memory(host, w.container.copy_in("torch").numpy())
    assert uma.conversion_stats() == {("cpu", "torch"): {"conversions": 1, "bytes": 40},
                                      ("torch", "cpu"): {"conversions": 1, "bytes": 40}}
