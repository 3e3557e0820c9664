"""JAX and PyTorch on the GPU as uma backends (``jax-cuda``, ``torch-cuda``): a shared variable
switching between them and uma's ``cuda`` converts on the device, once per switch, sharing the
buffer (DLPack), never through host memory; the host sees the value once ``get_value`` asks.

Runs where uma has a GPU and the framework's CUDA build is installed (the GPU machine:
tests/gpu/run.sh); skips otherwise. On the CPU, the same backends' behaviour is tested in
test_backends.py (every pair of backends, including these where they are registered).
"""
import importlib.util

import numpy as np
import pytest

import uma

GPU = uma.cuda.is_available()
pytestmark = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")


def needs(*backends):
    missing = [b for b in backends if b not in uma.backends()]
    return pytest.mark.skipif(bool(missing), reason=f"backends {missing} are not registered here")


def _ptr(value):
    """The device address of a jax.Array, torch.Tensor or uma cuda array."""
    if isinstance(value, uma.Array):
        import torch
        return torch.from_dlpack(value).data_ptr()
    if hasattr(value, "unsafe_buffer_pointer"):
        return value.unsafe_buffer_pointer()
    return value.data_ptr()


def _counts():
    return {k: v["conversions"] for k, v in uma.conversion_stats(reset=True).items()}


@pytest.mark.skipif(not GPU or importlib.util.find_spec("torch") is None, reason="needs a GPU and PyTorch")
@pytest.mark.parametrize("writer,reader", [
    ("jax-cuda", "cuda"), ("cuda", "jax-cuda"), ("torch-cuda", "cuda"), ("cuda", "torch-cuda"),
    ("jax-cuda", "torch-cuda"), ("torch-cuda", "jax-cuda"),
])
def test_a_switch_on_the_gpu_converts_once_on_the_device_sharing_the_buffer(writer, reader):
    if writer not in uma.backends() or reader not in uma.backends():
        pytest.skip(f"{writer} or {reader} is not registered here")
    start = np.random.default_rng(0).standard_normal((64, 33))
    w = uma.shared(start, name="w")
    step = uma.function([], [], updates={w: w * 2.0 - 1.0}, backend=writer)
    read = uma.function([], w.sum(), backend=reader)
    step()
    wrote = w.container.copy_in(uma.runtime.get_linker(writer).residency)
    _counts()
    total = read()
    assert _counts() == {(uma.runtime.get_linker(writer).residency, uma.runtime.get_linker(reader).residency): 1}
    got = w.container.copy_in(uma.runtime.get_linker(reader).residency)
    assert _ptr(got) == _ptr(wrote)  # the reader's copy is the writer's buffer
    np.testing.assert_allclose(float(np.asarray(uma.asarray(total).to_device("cpu"))), (start * 2 - 1).sum(),
                               rtol=1e-12)
    read()  # the copy is current now: no second conversion
    assert _counts() == {}
    host = w.get_value()  # the host sees the value through one device -> host copy
    assert isinstance(host, np.ndarray) and host.dtype == np.float64
    np.testing.assert_array_equal(host, start * 2 - 1)
    assert sum(n for (a, b), n in _counts().items() if b == "cpu") == 1


@needs("jax-cuda", "torch-cuda", "cuda")
def test_training_on_three_gpu_backends_in_turn_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 20))
    y = rng.integers(0, 5, 128)
    w0, b0 = rng.standard_normal((20, 5)) * 0.1, np.zeros(5)
    w, b = uma.shared(w0, name="w"), uma.shared(b0, name="b")
    X, Y = uma.sym.matrix("X"), uma.sym.vector("Y", dtype="int64")
    loss = uma.sym.softmax_cross_entropy(X @ w + b, Y).mean()
    gw, gb = uma.grad(loss, [w, b])
    steps = {name: uma.function([X, Y], loss, updates={w: w - 0.5 * gw, b: b - 0.5 * gb}, backend=name)
             for name in ("cuda", "jax-cuda", "torch-cuda")}
    wn, bn = w0.copy(), b0.copy()
    for k in range(9):
        name = ("cuda", "jax-cuda", "torch-cuda")[k % 3]
        steps[name](x, y)
        if k == 0:
            _counts()  # the first step brought w and b from the host
        z = x @ wn + bn
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(128), y] -= 1
        gwn, gbn = x.T @ p / 128, p.sum(0) / 128
        wn, bn = wn - 0.5 * gwn, bn - 0.5 * gbn
    counts = _counts()
    assert not any("cpu" in pair for pair in counts), counts  # no switch went through the host
    assert sum(counts.values()) == 2 * 8  # w and b, once per switch
    np.testing.assert_allclose(w.get_value(), wn, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.get_value(), bn, rtol=1e-10, atol=1e-12)


@needs("jax-cuda")
def test_jax_cuda_values_stay_on_the_gpu_whatever_jax_default_device_is():
    import jax
    x = uma.sym.vector("x")
    f = uma.function([x], uma.sym.exp(x) + 1.0, backend="jax-cuda")
    with jax.default_device(jax.devices("cpu")[0]):
        out = f(np.arange(3.0))
    assert {d.platform for d in out.devices()} == {"gpu"}
    np.testing.assert_allclose(np.asarray(out), np.exp(np.arange(3.0)) + 1, rtol=1e-15)
    g = uma.function([x], uma.sym.exp(x) + 1.0, backend="jax")  # and "jax" stays on JAX's CPU
    out = g(np.arange(3.0))
    assert {d.platform for d in out.devices()} == {"cpu"}
