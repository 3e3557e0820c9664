"""uma on CUDA devices: availability, cuda arrays of every dtype and layout, transfers,
mapped adoption, managed memory, memory stats and DLPack with torch, CuPy and JAX.

Without a usable GPU (CI) the GPU tests skip with the reason; the tests of the no-GPU
behaviour run instead.
"""
import gc
import importlib.util

import numpy as np
import pytest

import uma

GPU = uma.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
no_gpu = pytest.mark.skipif(GPU, reason="a CUDA GPU is available")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(6, 5), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 50
    if dtype == "bool":
        return x > 0
    if dtype.startswith("complex"):
        return (x + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("uint"):
        return np.abs(x).astype(dtype)
    return x.astype(dtype)


# ---- always: device strings and the no-GPU contract ----------------------------------------

def test_device_strings():
    assert uma.Device("cuda", 0) == "cuda:0"
    assert uma.Device("cuda") == uma.Device("cuda:0")
    assert str(uma.Device("cuda:1")) == "cuda:1"
    with pytest.raises(ValueError):
        uma.Device("cuda:x")


def test_availability_functions_never_raise():
    assert isinstance(uma.cuda.is_available(), bool)
    assert uma.cuda.device_count() == (uma.cuda.device_count() if GPU else 0)
    assert (uma.cuda.unavailable_reason() == "") == GPU


def test_cpu_array_memory_kind():
    assert uma.asarray(np.ones(3)).memory_kind == "host"


@no_gpu
@pytest.mark.parametrize("make", [
    lambda: uma.asarray(np.ones(3), device="cuda"),
    lambda: uma.array([1, 2], device="cuda:0"),
    lambda: uma.zeros(3, device="cuda"),
    lambda: uma.empty((2,), device=uma.Device("cuda", 0)),
    lambda: uma.asarray(np.ones(3)).to_device("cuda"),
    lambda: uma.memory_stats("cuda"),
    lambda: uma.clear_cache("cuda"),
    lambda: uma.cuda.synchronize(),
], ids=["asarray", "array", "zeros", "empty", "to_device", "memory_stats", "clear_cache", "synchronize"])
def test_without_gpu_cuda_raises_runtime_error_naming_why(make):
    with pytest.raises(RuntimeError, match="not available") as e:
        make()
    assert uma.cuda.unavailable_reason() in str(e.value)


# ---- GPU: arrays, transfers ------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_every_dtype(dtype):
    x = sample(dtype)
    a = uma.asarray(x, device="cuda")
    assert a.device == "cuda:0" and a.memory_kind == "device"
    assert a.dtype.name == dtype and a.shape == x.shape
    y = np.asarray(a)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, x)
    b = uma.array(x, device="cuda:0")
    np.testing.assert_array_equal(np.asarray(b.to_device("cpu")), x)


@needs_gpu
def test_bfloat16_roundtrip():
    a = uma.asarray(np.arange(10, dtype=np.float32), dtype="bfloat16")
    g = a.to_device("cuda")
    assert g.dtype.name == "bfloat16"
    np.testing.assert_array_equal(np.asarray(g.to_device("cpu").astype("float32")), np.arange(10, dtype=np.float32))


LAYOUTS = {
    "c": lambda x: x,
    "f": lambda x: np.asfortranarray(x),
    "transposed": lambda x: x.T,
    "strided": lambda x: x[::2, ::-1],
    "negative": lambda x: x[::-1],
    "broadcast": lambda x: np.broadcast_to(x[:1], x.shape),
    "0-d": lambda x: x[1, 2],
    "empty": lambda x: x[:0],
    "unaligned": lambda x: np.frombuffer(b"\0" + x.tobytes(), dtype=x.dtype, offset=1).reshape(x.shape),
    "byteswapped": lambda x: x.astype(x.dtype.newbyteorder()),
}


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex128", "uint8"])
def test_every_source_layout(layout, dtype):
    x = LAYOUTS[layout](sample(dtype))
    a = uma.asarray(x, device="cuda")
    np.testing.assert_array_equal(np.asarray(a), x)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_device_views_pack_on_the_gpu(dtype):
    x = sample(dtype, (7, 9))
    a = uma.asarray(x, device="cuda")
    for key in [(slice(None, None, 2), slice(None, None, -1)), (slice(1, 5), 3), (Ellipsis, slice(2, 3))]:
        np.testing.assert_array_equal(np.asarray(a[key]), x[key])
    np.testing.assert_array_equal(np.asarray(a.T), x.T)
    c = a.T.copy()
    assert c.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(c), x.T)


@needs_gpu
def test_large_transfer_uses_the_pipeline_and_is_exact():
    x = np.random.default_rng(1).standard_normal(20_000_000).astype(np.float32)  # 80 MB: several chunks
    a = uma.asarray(x, device="cuda")
    assert uma.cuda._core.cuda._staging_bytes() > 0
    np.testing.assert_array_equal(np.asarray(a), x)


@needs_gpu
def test_dtype_conversion_on_transfer():
    x = sample("float64")
    a = uma.asarray(x, dtype="float32", device="cuda")
    assert a.dtype.name == "float32" and a.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(a), x.astype(np.float32))
    b = a.astype("float64")
    assert b.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(b), x.astype(np.float32).astype(np.float64))


@needs_gpu
def test_numpy_copy_false_raises_copy_error():
    a = uma.asarray(np.ones(4), device="cuda")
    with pytest.raises(uma.CopyError):
        np.asarray(a, copy=False)
    with pytest.raises(uma.CopyError):
        a.__array__(copy=False)
    with pytest.raises(BufferError):
        memoryview(a)
    v = np.asarray(a)
    v[0] = 5  # a copy: the device array is unchanged
    assert np.asarray(a)[0] == 1


@needs_gpu
def test_repr_item_tolist():
    a = uma.asarray(np.array([1.5, 2.5]), device="cuda")
    assert "1.5" in repr(a)
    assert a[1].item() == 2.5 and float(a[0]) == 1.5
    assert a.tolist() == [1.5, 2.5]


@needs_gpu
def test_creation_functions_on_cuda():
    np.testing.assert_array_equal(np.asarray(uma.zeros((2, 3), device="cuda")), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(uma.arange(5, device="cuda")), np.arange(5))
    np.testing.assert_array_equal(np.asarray(uma.full(3, 7, device="cuda")), np.full(3, 7))
    assert uma.empty(4, device="cuda").device == "cuda:0"


@needs_gpu
def test_ops_without_cuda_kernel_refuse_device_arrays():
    a = uma.asarray(np.ones(3), device="cuda")
    with pytest.raises(RuntimeError, match="cuda:0"):
        a + a
    with pytest.raises(RuntimeError, match="cuda:0"):
        uma.sum(a)


@needs_gpu
def test_asarray_of_uma_array_between_devices():
    h = uma.asarray(sample("int64"))
    g = uma.asarray(h, device="cuda")
    assert g.device == "cuda:0"
    assert uma.asarray(g, device="cuda") is g or uma.asarray(g, device="cuda")._data_ptr == g._data_ptr
    back = uma.asarray(g, device="cpu")
    np.testing.assert_array_equal(np.asarray(back), np.asarray(h))
    with pytest.raises(uma.CopyError):
        uma.asarray(g, device="cpu", copy=False)


# ---- GPU: memory -----------------------------------------------------------------------

@needs_gpu
def test_memory_stats_and_clear_cache():
    uma.cuda.synchronize()
    before = uma.memory_stats("cuda")
    a = uma.empty((1 << 20,), dtype="float32", device="cuda")  # 4 MiB
    during = uma.memory_stats("cuda")
    assert during["active_bytes"] - before["active_bytes"] >= 4 << 20
    assert during["peak_bytes"] >= during["active_bytes"]
    del a
    gc.collect()
    after = uma.memory_stats("cuda")
    assert after["active_bytes"] == before["active_bytes"]
    assert after["cached_bytes"] >= 4 << 20
    uma.clear_cache("cuda")
    assert uma.memory_stats("cuda")["cached_bytes"] == 0


@needs_gpu
def test_cached_block_is_reused():
    a = uma.empty((3 << 20,), dtype="uint8", device="cuda")
    p = a._data_ptr
    del a
    b = uma.empty((3 << 20,), dtype="uint8", device="cuda")
    assert b._data_ptr == p


@needs_gpu
def test_managed_memory():
    m = uma.cuda.empty_managed((4, 4), "float32")
    assert m.memory_kind == "managed" and m.device == "cuda:0"
    h = np.asarray(m)  # a copy
    assert h.shape == (4, 4)
    kind, dev = uma._core.cuda._pointer_kind(m._data_ptr)
    assert kind == "managed" and dev == 0


# ---- GPU: mapped adoption ----------------------------------------------------------------

@needs_gpu
def test_copy_false_adopts_host_memory_as_mapped():
    x = sample("float32", (64, 64))
    base = uma.cuda._core.cuda._registration_count()
    adopted0 = uma.memory_stats("cpu")["adopted_bytes"]
    a = uma.asarray(x, device="cuda", copy=False)
    assert a.memory_kind == "mapped" and a.device == "cuda:0" and a.writable
    assert uma._core.cuda._registration_count() == base + 1
    assert uma.memory_stats("cpu")["adopted_bytes"] - adopted0 >= x.nbytes
    np.testing.assert_array_equal(np.asarray(a), x)
    x[0, 0] = 1234.0  # zero copies: the host write shows through the GPU's view
    assert np.asarray(a)[0, 0] == 1234.0
    del a
    gc.collect()
    assert uma._core.cuda._registration_count() == base
    assert uma.memory_stats("cpu")["adopted_bytes"] == adopted0


@needs_gpu
def test_views_and_repeated_adoptions_share_one_registration():
    x = sample("float64", (32, 32))
    base = uma._core.cuda._registration_count()
    a = uma.asarray(x, device="cuda", copy=False)
    b = uma.asarray(x, device="cuda", copy=False)
    c = uma.asarray(x[3:9, ::2], device="cuda", copy=False)
    d = uma.asarray(x[1:], device="cuda", copy=False)
    assert uma._core.cuda._registration_count() == base + 1
    np.testing.assert_array_equal(np.asarray(c), x[3:9, ::2])
    del a, b
    gc.collect()
    assert uma._core.cuda._registration_count() == base + 1  # c and d still use it
    del c, d
    gc.collect()
    assert uma._core.cuda._registration_count() == base


@needs_gpu
def test_mapped_source_stays_alive_and_is_unregistered_once():
    base = uma._core.cuda._registration_count()
    a = uma.asarray(sample("int32", (128,)), device="cuda", copy=False)  # the only reference is uma's
    gc.collect()
    np.testing.assert_array_equal(np.asarray(a), sample("int32", (128,)))
    del a
    gc.collect()
    assert uma._core.cuda._registration_count() == base


@needs_gpu
def test_adopt_in_a_loop():
    x = sample("float32", (256, 256))
    base = uma._core.cuda._registration_count()
    for i in range(200):
        a = uma.asarray(x, device="cuda", copy=False)
        assert np.asarray(a[i % 256, :4]).shape == (4,)
        del a
    gc.collect()
    assert uma._core.cuda._registration_count() == base


@needs_gpu
def test_read_only_source_registers_read_only(tmp_path):
    x = sample("float32", (1000,))
    np.save(tmp_path / "x.npy", x)
    m = np.load(tmp_path / "x.npy", mmap_mode="r")
    a = uma.asarray(m, device="cuda", copy=False)
    assert a.memory_kind == "mapped" and not a.writable
    np.testing.assert_array_equal(np.asarray(a), x)
    del a, m
    gc.collect()


@needs_gpu
def test_copy_false_impossible_raises_copy_error():
    with pytest.raises(uma.CopyError):
        uma.asarray(sample("float64"), dtype="float32", device="cuda", copy=False)
    with pytest.raises(uma.CopyError):
        uma.asarray([1.0, 2.0], device="cuda", copy=False)


# ---- GPU: DLPack ---------------------------------------------------------------------------

@needs_gpu
def test_dlpack_device_and_stream_rules():
    a = uma.asarray(np.arange(4.0), device="cuda")
    assert a.__dlpack_device__() == (2, 0)
    with pytest.raises(ValueError):
        a.__dlpack__(stream=0, max_version=(1, 1))
    a.__dlpack__(stream=-1, max_version=(1, 1))
    a.__dlpack__(stream=1, max_version=(1, 1))
    with pytest.raises(BufferError):
        a.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)
    m = uma.cuda.empty_managed(3)
    assert m.__dlpack_device__() == (13, 0)


have = {name: importlib.util.find_spec(name) is not None for name in ("torch", "cupy", "jax")}


@needs_gpu
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool", "uint8", "float16", "complex64"])
def test_dlpack_torch_roundtrip(dtype):
    import torch
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    x = sample(dtype, (5, 7))
    t = torch.from_numpy(x).cuda()
    a = uma.from_dlpack(t)
    assert a.device == "cuda:0" and a.memory_kind == "device"
    assert a._data_ptr == t.data_ptr()  # zero-copy
    np.testing.assert_array_equal(np.asarray(a), x)
    t2 = torch.from_dlpack(a)
    assert t2.device.type == "cuda" and t2.data_ptr() == a._data_ptr
    np.testing.assert_array_equal(t2.cpu().numpy(), x)
    # a strided torch view
    v = uma.from_dlpack(t.T)
    np.testing.assert_array_equal(np.asarray(v), x.T)


@needs_gpu
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
def test_dlpack_torch_streams_order_the_work():
    import torch
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.full((1 << 22,), 3.0, device="cuda")
        t.mul_(2.0)
        a = uma.from_dlpack(t)  # uma's stream waits for s's work
    np.testing.assert_array_equal(np.asarray(a)[:3], [6.0, 6.0, 6.0])
    b = uma.asarray(np.full(1 << 20, 5.0, np.float32), device="cuda")
    with torch.cuda.stream(s):
        tb = torch.from_dlpack(b)  # torch passes its stream; uma makes it wait
        assert float(tb.sum()) == 5.0 * (1 << 20)


@needs_gpu
@pytest.mark.skipif(not have["cupy"], reason="cupy is not installed")
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
def test_dlpack_cupy_roundtrip(dtype):
    import cupy
    x = sample(dtype)
    c = cupy.asarray(x)
    a = uma.from_dlpack(c)
    assert a.device == "cuda:0" and a._data_ptr == c.data.ptr
    np.testing.assert_array_equal(np.asarray(a), x)
    c2 = cupy.from_dlpack(a)
    assert c2.data.ptr == a._data_ptr
    np.testing.assert_array_equal(cupy.asnumpy(c2), x)


@needs_gpu
@pytest.mark.skipif(not have["jax"], reason="jax is not installed")
def test_dlpack_jax_roundtrip():
    import jax
    import jax.numpy as jnp
    if jax.default_backend() != "gpu":
        pytest.skip("jax has no GPU backend")
    x = sample("float32")
    j = jnp.asarray(x)
    a = uma.from_dlpack(j)
    assert a.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(a), x)
    # JAX asks for a legacy capsule (no max_version): only a writable array can go that way.
    if not a.writable:
        with pytest.raises(BufferError):
            jnp.from_dlpack(a)
    w = uma.asarray(x, device="cuda")
    j2 = jnp.from_dlpack(w)
    np.testing.assert_array_equal(np.asarray(j2), x)


@needs_gpu
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
def test_dlpack_import_copies_to_host_and_other_dtype():
    import torch
    t = torch.arange(6, dtype=torch.float64, device="cuda")
    h = uma.from_dlpack(t, device="cpu")
    assert h.device == "cpu"
    np.testing.assert_array_equal(np.asarray(h), np.arange(6.0))
    with pytest.raises(uma.CopyError):
        uma.from_dlpack(t, device="cpu", copy=False)
    f = uma.asarray(t, dtype="float32")
    assert f.device == "cuda:0" and f.dtype.name == "float32"
    np.testing.assert_array_equal(np.asarray(f), np.arange(6.0, dtype=np.float32))
