"""uma on CUDA devices: availability, cuda arrays of every dtype and layout, transfers,
mapped adoption, managed memory, memory stats and DLPack with torch, CuPy and JAX.

Without a usable GPU (CI) the GPU tests skip with the reason; the tests of the no-GPU
behaviour run instead.
"""
import gc
import importlib.util
import math
import re

import numpy as np
import pytest

import uma
from conftest import (
    INVALID_CAST_FLOATS, RTOL, assert_matches, bfloat16_round_once, mlp_step, numpy_cast_each, numpy_error_type,
    numpy_quiet, random_data, standard_complex, standard_floor_divide,
)

GPU = uma.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
no_gpu = pytest.mark.skipif(GPU, reason="a CUDA GPU is available")
have = {name: importlib.util.find_spec(name) is not None for name in ("torch", "cupy", "jax")}

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
    assert uma.Device("cuda", np.int64(1)) == "cuda:1"  # anything operator.index takes
    # the host is one device, index 0; "cpu:0" names it as torch spells it
    assert uma.Device("cpu:0") == "cpu" and uma.asarray(np.ones(2), device="cpu:0").device == "cpu"
    for bad in ("cpu:1", "cpu:x"):
        with pytest.raises(ValueError, match=f"invalid device string '{bad}'"):
            uma.Device(bad)
        with pytest.raises(ValueError, match=f"invalid device string '{bad}'"):
            uma.asarray(np.ones(2), device=bad)


@pytest.mark.parametrize("index,err", [(-5, ValueError), (2**70, ValueError), (1.5, TypeError), ("3", TypeError),
                                       (True, TypeError)])
def test_device_index_is_checked(index, err):
    with pytest.raises(err, match="device index must be"):
        uma.Device("cuda", index)
    with pytest.raises(ValueError, match="device index must be"):
        uma.Device("cuda:99999999999")


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
    # complex conversions run on the device too (to and from complex, on transfer and astype)
    c = uma.asarray(x, dtype="complex64", device="cuda")
    assert c.dtype.name == "complex64" and c.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(c), x.astype(np.complex64))
    z = sample("complex128")
    d = uma.asarray(z, device="cuda")
    for t in ("complex64", "float64", "int32", "bool"):
        got = d.astype(t)
        assert got.device == "cuda:0"
        np.testing.assert_array_equal(np.asarray(got), numpy_quiet(lambda: z.astype(t)), err_msg=t)
    np.testing.assert_array_equal(np.asarray(uma.asarray(d, dtype="complex64")), z.astype(np.complex64))


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
@pytest.mark.parametrize("value", [5, -(2**40), 2**63, 2.5, 1 + 2j, True, [1, 2], [[0.5], [1.5]]])
def test_asarray_of_python_values_honours_device(value):
    """uma.asarray(value, device='cuda') of a Python number or list is on cuda:0, with NumPy's
    dtype and value, with or without a dtype (Array API standard, asarray: device)."""
    for dtype in (None, "complex128"):
        want = np.asarray(value, dtype=dtype)
        got = uma.asarray(value, dtype=dtype, device="cuda")
        assert got.device == "cuda:0", (value, dtype)
        host = np.asarray(got.to_device("cpu"))
        assert (host.dtype, host.shape) == (want.dtype, want.shape), (value, dtype)
        np.testing.assert_array_equal(host, want)


@needs_gpu
def test_cuda_copies_keep_the_bits_of_float16_nans():
    """A same-dtype copy on cuda is the bits as they are (a NaN's payload and sign too), also
    where it moves an axis (sorting along axis 0)."""
    bits = np.array([0x7E01, 0xFE00, 0x7C01, 0x3C00, 0x8000, 0x7E00], np.uint16)
    g = uma.asarray(bits.view(np.float16), device="cuda")
    copied = uma.astype(g[::-1], "float16", copy=True)
    np.testing.assert_array_equal(np.asarray(copied.to_device("cpu")).view(np.uint16), bits[::-1])
    col = uma.asarray(bits.view(np.float16).reshape(6, 1), device="cuda")
    got = np.asarray(uma.sort(col, axis=0).to_device("cpu")).view(np.uint16).ravel()
    want = np.sort(bits.view(np.float16).reshape(6, 1), axis=0, kind="stable").view(np.uint16).ravel()
    np.testing.assert_array_equal(got, want)


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
    gc.collect()
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
def test_mapped_adoption_larger_than_one_registration_chunk():
    # Registration goes in 256 MiB chunks; a kernel must read across the chunk boundaries, and
    # releasing the array must unregister every chunk (adopting the same memory again would
    # otherwise fail: CUDA refuses overlapping registrations).
    n = (600 << 20) // 4  # 600 MiB of float32: three chunks
    x = np.arange(n, dtype=np.float32) % np.float32(1000)
    base = uma._core.cuda._registration_count()
    for _ in range(2):
        a = uma.asarray(x, device="cuda", copy=False)
        assert a.memory_kind == "mapped" and uma._core.cuda._registration_count() == base + 1
        edge = (256 << 20) // 4
        window = uma.multiply(a[edge - 8:edge + 8], 2)  # a kernel reading across a boundary
        assert window.device == "cuda:0" and window.memory_kind == "device"
        np.testing.assert_array_equal(np.asarray(window), x[edge - 8:edge + 8] * 2)
        np.testing.assert_allclose(float(uma.sum(a)), x.sum(dtype=np.float64), rtol=1e-6)  # double accumulators
        del a, window
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
    # Managed memory is announced as kDLCUDA (a valid device pointer; PyTorch and JAX refuse
    # kDLCUDAManaged); a consumer that asks for kDLCUDAManaged gets it, and a device array
    # cannot claim to be managed.
    m = uma.cuda.empty_managed(3)
    assert m.__dlpack_device__() == (2, 0)
    m.__dlpack__(max_version=(1, 1), dl_device=(2, 0))
    m.__dlpack__(max_version=(1, 1), dl_device=(13, 0))
    with pytest.raises(BufferError):
        a.__dlpack__(max_version=(1, 1), dl_device=(13, 0))


class _Capsule:
    """A DLPack producer that hands out a given capsule and device (for uma's own exports)."""

    def __init__(self, cap, device):
        self.cap, self.device = cap, device

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return self.device


@needs_gpu
def test_dlpack_managed_export_codes():
    m = uma.cuda.empty_managed(4, "float32")
    m[...] = uma.asarray(np.arange(4, dtype=np.float32), device="cuda")
    for code, kind in ((2, "device"), (13, "managed")):
        b = uma.from_dlpack(_Capsule(m.__dlpack__(max_version=(1, 1), dl_device=(code, 0)), (code, 0)))
        assert b._data_ptr == m._data_ptr and b.memory_kind == kind
        np.testing.assert_array_equal(np.asarray(b), np.arange(4))


@needs_gpu
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
def test_dlpack_managed_to_torch_and_back():
    import torch
    m = uma.cuda.empty_managed((1000,), "float32")
    m[...] = uma.asarray(np.arange(1000, dtype=np.float32), device="cuda")
    t = torch.from_dlpack(m)
    assert t.device.type == "cuda" and t.data_ptr() == m._data_ptr  # shared, not copied
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(1000))
    t.mul_(2)  # torch's write shows through uma's view of the same memory
    torch.cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(m), 2 * np.arange(1000))
    back = uma.from_dlpack(t)
    assert back._data_ptr == m._data_ptr


@needs_gpu
@pytest.mark.skipif(not have["cupy"], reason="cupy is not installed")
def test_dlpack_managed_with_cupy_both_ways():
    import cupy
    m = uma.cuda.empty_managed((64,), "float64")
    m[...] = uma.asarray(np.arange(64.0), device="cuda")
    c = cupy.from_dlpack(m)
    assert c.data.ptr == m._data_ptr
    np.testing.assert_array_equal(cupy.asnumpy(c), np.arange(64.0))
    # CuPy's own managed memory comes to uma without a copy
    mem = cupy.cuda.malloc_managed(64 * 8)
    cm = cupy.ndarray((64,), dtype=cupy.float64, memptr=mem)
    cm[...] = cupy.arange(64.0)
    u = uma.from_dlpack(cm)
    assert u._data_ptr == cm.data.ptr and u.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(u), np.arange(64.0))


@needs_gpu
@pytest.mark.skipif(not have["jax"], reason="jax is not installed")
def test_dlpack_managed_to_jax_and_back():
    import jax
    import jax.numpy as jnp
    if jax.default_backend() != "gpu":
        pytest.skip("jax has no GPU backend")
    m = uma.cuda.empty_managed((32,), "float32")
    m[...] = uma.asarray(np.arange(32, dtype=np.float32), device="cuda")
    j = jnp.from_dlpack(m)
    np.testing.assert_array_equal(np.asarray(j), np.arange(32))
    back = uma.from_dlpack(j)
    np.testing.assert_array_equal(np.asarray(back), np.arange(32))


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
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
def test_dlpack_import_goes_back_to_torch_only_after_umas_work():
    # torch's caching allocator hands a freed block to its next tensor at once, on torch's
    # stream; uma must not give the block back while its own kernels still read it.
    import torch
    n = 1 << 24
    t = torch.full((n,), 1.0, device="cuda")
    u = uma.from_dlpack(t)
    r = uma.multiply(u, 2.0)
    for _ in range(40):  # keep uma's stream busy reading u
        r = uma.add(r, u)
    ptr = t.data_ptr()
    del u, t
    gc.collect()
    w = torch.full((n,), -1000.0, device="cuda")  # reuses the block when it is free
    torch.cuda.synchronize()
    got = np.asarray(r)
    assert (got == 42.0).all(), f"{np.count_nonzero(got != 42.0)} elements read torch's next tensor"
    del w, ptr


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


# ---- eager ops on cuda arrays (kernels of src/kernels/cuda) vs NumPy -----------------------
#
# The op x dtype matrices: every elementwise op and reduction on every dtype, run on cuda
# arrays in several layouts (views taken on the device), against NumPy on the host copies.
# Oracles as in the cpu op-matrix tests: bfloat16 computed in float32 and rounded (ml_dtypes'
# rule); the functions NumPy lacks (sigmoid, softplus, erf, erfc, gammaln, digamma) in float64
# and rounded to the dtype numpy.exp gives; a NumPy error must be the same uma error type.
# Inputs: random values of each op's domain (conftest.random_data) with edge values written
# over some of them: integer extremes (wraparound), NaN, +-inf, signed zeros, tiny and huge
# floats, and for complex the special values of NumPy's tables (for the ops whose special
# values the cpu tests check too). Tolerances per dtype: conftest.RTOL.

OP_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "bfloat16", "float32", "float64", "complex64", "complex128"]


def _np_dt(name):
    if name == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(name)


def _is_bf16(dt):
    return np.dtype(dt).name == "bfloat16"


def _on_bf16(fn):
    """NumPy's fn, with bfloat16 operands computed in float32 and a float32 result rounded
    back to bfloat16."""
    def oracle(*xs):
        bf = [x.dtype for x in xs if _is_bf16(x.dtype)]
        if bf:
            r = np.asarray(fn(*[x.astype(np.float32) if _is_bf16(x.dtype) else x for x in xs]))
            return r.astype(bf[0]) if r.dtype == np.float32 else r
        return fn(*xs)
    return oracle


def _real_only(f64):
    def oracle(x):
        if x.dtype.kind == "c":
            raise TypeError("real dtypes only")
        out = x.dtype if _is_bf16(x.dtype) else np.exp(np.zeros(1, x.dtype)).dtype
        return np.asarray(f64(x.astype(np.float64))).astype(out)
    return oracle


def _lgamma(v):
    try:
        return math.lgamma(v)
    except ValueError:  # a pole
        return math.inf


def _digamma(v):
    mpmath = pytest.importorskip("mpmath")
    if math.isnan(v) or math.isinf(v):
        return math.nan if (math.isnan(v) or v < 0) else math.inf
    if v == 0:
        return -math.copysign(math.inf, v)
    if v < 0 and v == math.floor(v):
        return math.nan
    return float(mpmath.digamma(v))


def _trigamma(v):
    mpmath = pytest.importorskip("mpmath")
    if math.isnan(v) or v == -math.inf:
        return math.nan
    if v == math.inf:
        return 0.0
    if v <= 0 and v == math.floor(v):
        return math.inf
    return float(mpmath.psi(1, v))


def _nextafter(a, b):
    """C's nextafter: y where x == y (NumPy >= 2.5's float16 rule too)."""
    return np.where(a == b, b, np.nextafter(a, b))


UNARY_ORACLES = {  # name -> (oracle, domain)
    "negative": (np.negative, "general"), "abs": (np.abs, "general"), "exp": (np.exp, "general"),
    "exp2": (np.exp2, "general"), "expm1": (np.expm1, "general"), "log": (np.log, "positive"),
    "log2": (np.log2, "positive"), "log10": (np.log10, "positive"), "log1p": (np.log1p, "positive"),
    "sqrt": (np.sqrt, "positive"), "square": (np.square, "general"), "reciprocal": (np.reciprocal, "nonzero"),
    "sin": (np.sin, "general"), "cos": (np.cos, "general"), "tan": (np.tan, "general"),
    "arcsin": (np.arcsin, "unit"), "arccos": (np.arccos, "unit"), "arctan": (np.arctan, "general"),
    "sinh": (np.sinh, "general"), "cosh": (np.cosh, "general"), "tanh": (np.tanh, "general"),
    "floor": (np.floor, "general"), "ceil": (np.ceil, "general"), "rint": (np.rint, "coarse"),
    "sign": (np.sign, "coarse"), "logical_not": (np.logical_not, "coarse"),
    "sigmoid": (_real_only(lambda x: 1.0 / (1.0 + np.exp(-x))), "general"),
    "softplus": (_real_only(lambda x: np.logaddexp(0.0, x)), "general"),
    "erf": (_real_only(np.vectorize(math.erf, otypes=[np.float64])), "general"),
    "erfc": (_real_only(np.vectorize(math.erfc, otypes=[np.float64])), "general"),
    "gammaln": (_real_only(np.vectorize(_lgamma, otypes=[np.float64])), "positive"),
    "digamma": (_real_only(np.vectorize(_digamma, otypes=[np.float64])), "positive"),
    "trigamma": (_real_only(np.vectorize(_trigamma, otypes=[np.float64])), "general"),
    "real": (np.real, "general"), "imag": (np.imag, "general"), "conj": (np.conjugate, "general"),
    "angle": (np.angle, "general"),
    "positive": (np.positive, "general"), "trunc": (np.trunc, "general"), "acosh": (np.arccosh, "above1"),
    "asinh": (np.arcsinh, "general"), "atanh": (np.arctanh, "unit"), "isfinite": (np.isfinite, "general"),
    "isinf": (np.isinf, "general"), "isnan": (np.isnan, "general"), "signbit": (np.signbit, "general"),
    "bitwise_invert": (np.invert, "general"),
}
BINARY_ORACLES = {  # name -> (oracle, lhs domain, rhs domain)
    "add": (np.add, "general", "general"), "subtract": (np.subtract, "general", "general"),
    "multiply": (np.multiply, "general", "general"), "divide": (np.divide, "general", "nonzero"),
    "power": (np.power, "positive", "exponent"), "maximum": (np.maximum, "coarse", "coarse"),
    "minimum": (np.minimum, "coarse", "coarse"), "floor_divide": (standard_floor_divide, "general", "nonzero"),
    "remainder": (np.remainder, "general", "nonzero"), "arctan2": (np.arctan2, "general", "general"),
    "equal": (np.equal, "coarse", "coarse"), "not_equal": (np.not_equal, "coarse", "coarse"),
    "less": (np.less, "coarse", "coarse"), "less_equal": (np.less_equal, "coarse", "coarse"),
    "greater": (np.greater, "coarse", "coarse"), "greater_equal": (np.greater_equal, "coarse", "coarse"),
    "logical_and": (np.logical_and, "coarse", "coarse"), "logical_or": (np.logical_or, "coarse", "coarse"),
    "logical_xor": (np.logical_xor, "coarse", "coarse"),
    "copysign": (np.copysign, "general", "general"), "hypot": (np.hypot, "general", "general"),
    "logaddexp": (np.logaddexp, "general", "general"), "nextafter": (_nextafter, "general", "general"),
    "bitwise_and": (np.bitwise_and, "coarse", "coarse"), "bitwise_or": (np.bitwise_or, "coarse", "coarse"),
    "bitwise_xor": (np.bitwise_xor, "coarse", "coarse"),
    "bitwise_left_shift": (np.left_shift, "general", "shift"),
    "bitwise_right_shift": (np.right_shift, "general", "shift"),
}
#: Ops whose bfloat16 oracle is ml_dtypes' own bfloat16 loop (nextafter: a neighbour in
#: bfloat16's format), not the float32 result rounded.
BF16_NATIVE = {"nextafter"}
FLOAT_EDGE = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-30, 700.0, -700.0, 3.0]
COMPLEX_EDGE = [complex(r, i) for r in (0.0, -0.0, 1.5, -2.0, np.inf, np.nan) for i in (0.0, -0.0, 0.5, -3.0)]
# The complex ops whose special values (infinities, NaN, signed zeros) are checked: those the
# cpu tests check (the others' special values are libm's / libcu++'s own conventions).
COMPLEX_EDGE_OPS = {"sign", "abs", "reciprocal", "square", "negative", "rint", "sqrt", "exp", "log", "logical_not",
                    "add", "subtract", "multiply", "equal", "not_equal", "less", "less_equal", "greater",
                    "greater_equal", "maximum", "minimum", "logical_and", "logical_or", "logical_xor"}


def _edges(dtype, domain, op):
    """Edge values for an operand of `op` in `domain` (written over random values)."""
    dt = _np_dt(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        signed = dt.kind == "i"
        if domain in ("general", "coarse"):
            return [info.min, info.max, 0, 1, info.max - 1] + ([-1, info.min + 1] if signed else [])
        if domain == "nonzero":
            return [info.min, info.max, 1] + ([-1] if signed else [])
        if domain == "positive":
            return [info.max, 1]
        return []
    if dt.kind == "f" or _is_bf16(dt):
        return FLOAT_EDGE
    if dt.kind == "c":
        return COMPLEX_EDGE if op in COMPLEX_EDGE_OPS else []
    return []


def _operand(dtype, shape, domain, op, rng):
    """A C-contiguous host array of dtype/shape: random values of the domain with the edge
    values written at random positions."""
    dt = _np_dt(dtype)
    if _is_bf16(dt):
        x = random_data("float32", shape, rng, domain).astype(dt)
    else:
        x = random_data(dtype, shape, rng, domain)
    e = _edges(dtype, domain, op)
    if e and x.size >= len(e):
        flat = x.reshape(-1)
        pos = rng.choice(x.size, size=len(e), replace=False)
        flat[pos] = np.asarray(e).astype(dt) if dt.kind != "c" else np.asarray(e, dtype=dt)
    return x


def _elem(x, i, j):
    """Element (i, j) as a 0-d array (also for ml_dtypes' bfloat16)."""
    return x[i:i + 1, j:j + 1].reshape(())


def _device_views(x):
    """(layout name, numpy view, cuda view): the same view taken on the host copy and on the
    device (so the kernels see strided, transposed and negative-stride operands)."""
    d = uma.asarray(x, device="cuda")
    return [("contiguous", x, d), ("transposed", x.T, d.T), ("strided", x[::2, ::-1], d[::2, ::-1]),
            ("offset", x[1:, 1:], d[1:, 1:]), ("flat unaligned", x.reshape(-1)[3:], d.reshape(-1)[3:])]


def _expect_like_numpy(oracle, np_args, call, what, rtol=None):
    """uma's call on cuda arrays matches the oracle (values, dtype, shape; result on the
    device), or raises the error type NumPy's refusal maps to. `what` names the case."""
    try:
        expected = numpy_quiet(lambda: np.asarray(oracle(*np_args)))
    except Exception as e:
        with pytest.raises(numpy_error_type(e)):
            call()
        return
    got = call()
    assert str(got.device) == "cuda:0", what
    try:
        assert_matches(got, expected, rtol=rtol, atol=rtol)
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", list(BINARY_ORACLES))
def test_cuda_binary_matches_numpy(name, dtype):
    oracle, dl, dr = BINARY_ORACLES[name]
    oracle = oracle if name in BF16_NATIVE else _on_bf16(oracle)
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    a = _operand(dtype, (40, 33), dl, name, rng)
    b = _operand(dtype, (40, 33), dr, name, rng)
    op = getattr(uma, name)
    for (layout, x, dx), (_, y, dy) in zip(_device_views(a), _device_views(b)):
        _expect_like_numpy(oracle, [x, y], lambda: op(dx, dy), f"{name}({dtype}, {layout})")
    da, db = uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")
    # broadcasting: a row, a column, a 0-d host scalar (joins the cuda op), a 0-d device array
    cases = [("row", a, b[:1], da, uma.asarray(b[:1], device="cuda")),
             ("column", a[:, :1], b, uma.asarray(a[:, :1], device="cuda"), db),
             ("host scalar", a, _elem(b, 3, 4), da, uma.asarray(_elem(b, 3, 4))),
             ("device scalar", _elem(a, 5, 6), b, uma.asarray(_elem(a, 5, 6), device="cuda"), db)]
    for layout, x, y, dx, dy in cases:
        _expect_like_numpy(oracle, [x, y], lambda: op(dx, dy), f"{name}({dtype}, {layout})")


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", list(UNARY_ORACLES))
def test_cuda_unary_matches_numpy(name, dtype):
    oracle, dom = UNARY_ORACLES[name]
    oracle = _on_bf16(oracle)
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    a = _operand(dtype, (40, 33), dom, name, rng)
    op = getattr(uma, name)
    # complex128 transcendental functions come from libcu++ on the GPU and glibc for NumPy: a
    # few ulp apart, amplified near the poles of tan/tanh (measured on the H200: 3.2e-12
    # relative at tanh = 120-295j); the default complex128 tolerance is 1e-12.
    rtol = 1e-10 if dtype == "complex128" and name not in COMPLEX_EDGE_OPS else None
    for layout, x, dx in _device_views(a) + [("0-d", _elem(a, 2, 3), uma.asarray(_elem(a, 2, 3), device="cuda"))]:
        _expect_like_numpy(oracle, [x], lambda: op(dx), f"{name}({dtype}, {layout})", rtol=rtol)


@needs_gpu
def test_cuda_complex_branch_cuts():
    """Values on the branch cuts of sqrt/log/arcsin/arccos/arctan with both signs of zero
    (the cpu tests' cases), on complex64 and complex128."""
    x = np.array([complex(-2, 0.0), complex(-2, -0.0), complex(2, 0.0), complex(2, -0.0),
                  complex(0.0, 2), complex(-0.0, 2), complex(0.0, -2), complex(-0.0, -2)])
    for dtype in ("complex64", "complex128"):
        xs = x.astype(dtype)
        for name in ["sqrt", "log", "log2", "log10", "arcsin", "arccos", "arctan", "log1p"]:
            exp = numpy_quiet(lambda: getattr(np, name)(xs))
            got = np.asarray(getattr(uma, name)(uma.asarray(xs, device="cuda")))
            tol = RTOL[dtype]
            np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, err_msg=f"{name}({dtype})")
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(exp.imag), err_msg=f"{name}({dtype}): imag sign")


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", [n for n in BINARY_ORACLES if not n.startswith("bitwise")])  # float input
def test_cuda_binary_float_edge_pairs(name, dtype):
    """Every pair of float edge values (signs of zeros and infinities checked too)."""
    v = np.array(FLOAT_EDGE[:11], dtype=dtype)
    a, b = np.meshgrid(v, v)
    exp = numpy_quiet(lambda: BINARY_ORACLES[name][0](a, b))
    got = np.asarray(getattr(uma, name)(uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")))
    assert got.dtype == exp.dtype, (name, dtype, got.dtype, exp.dtype)
    if exp.dtype.kind == "f":
        r = RTOL[exp.dtype.name]
        np.testing.assert_allclose(got, exp, rtol=r, atol=r, equal_nan=True, err_msg=f"{name}({dtype})")
        zero = (exp == 0) | np.isinf(exp)
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(exp[zero]), err_msg=f"{name}({dtype}): sign")
    else:
        np.testing.assert_array_equal(got, exp, err_msg=f"{name}({dtype})")


@needs_gpu
def test_cuda_dense_vector_path_and_tails():
    # lengths around the 16-byte vector width, offset (unaligned) views, large arrays
    for n in (1, 3, 4, 5, 17, 1000, 1 << 20):
        for off in (0, 1):
            a = np.arange(n + off, dtype=np.float32)[off:]
            b = np.full(n, 0.5, np.float32)
            check_close(uma.add(uma.asarray(a, device="cuda")[0:], uma.asarray(b, device="cuda")), a + b)
            ga = uma.asarray(np.arange(n + 1, dtype=np.float32), device="cuda")[off:off + n]
            check_close(uma.multiply(ga, uma.asarray(b, device="cuda")), np.arange(n + 1, dtype=np.float32)[off:off + n] * b)
    for dtype in ("int8", "uint16", "complex128", "complex64", "bool"):  # other vector widths
        x = sample(dtype, (1, 1001))[0]
        for off in (0, 1, 3):
            d = uma.asarray(x, device="cuda")[off:]
            np.testing.assert_array_equal(np.asarray(uma.equal(d, d)), np.ones(x.size - off, bool), err_msg=dtype)
            np.testing.assert_array_equal(np.asarray(uma.maximum(d, d)), x[off:], err_msg=dtype)
            np.testing.assert_array_equal(np.asarray(uma.logical_not(d)), np.logical_not(x[off:]), err_msg=dtype)


def check_close(got, want):
    got_np = np.asarray(got)
    assert got_np.dtype == np.asarray(want).dtype, (got_np.dtype, np.asarray(want).dtype)
    if got_np.dtype.kind == "f":
        tol = 2e-6 if got_np.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


@needs_gpu
def test_cuda_broadcast_operands_of_every_kernel():
    # stride-0 operands (a broadcast scalar, a broadcast row) of unary, cast, where, binary
    s = uma.asarray(np.float32(1.5), device="cuda")
    row = uma.asarray(np.arange(7, dtype=np.float32), device="cuda")
    for src, ref in ((uma.broadcast_to(s, (5, 7)), np.full((5, 7), 1.5, np.float32)),
                     (uma.broadcast_to(row, (5, 7)), np.broadcast_to(np.arange(7, dtype=np.float32), (5, 7)))):
        check_close(uma.exp(src), np.exp(ref))
        check_close(src.copy(), ref)
        np.testing.assert_array_equal(np.asarray(src.astype("float64")), ref.astype(np.float64))
        check_close(uma.add(src, src), ref + ref)
        cond = uma.asarray(np.arange(35).reshape(5, 7) % 2 == 0, device="cuda")
        check_close(uma.where(cond, src, uma.negative(src)), np.where(np.asarray(cond), ref, -ref))


@needs_gpu
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cuda_complex_power_of_zero_like_numpy(dtype):
    """0 ** b on the GPU: 1 for b == 0, 0 whenever Re(b) > 0, NaN otherwise (npy_cpow)."""
    b = np.array([complex(1, 2), complex(2, 0), complex(0.5, -3), complex(np.inf, 1), complex(-1, 0),
                  complex(0, 1), complex(-1, 1), complex(np.nan, 1), complex(0, 0)], dtype)
    a = np.zeros_like(b)
    got = uma.asarray(a, device="cuda") ** uma.asarray(b, device="cuda")
    np.testing.assert_array_equal(np.asarray(got), numpy_quiet(lambda: np.power(a, b)))


@needs_gpu
@pytest.mark.parametrize("src", ["float64", "float32", "float16"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_cuda_astype_invalid_float_to_int_matches_the_cpu(src, dtype):
    """NaN, inf and out-of-range floats convert as on the CPU (NumPy's x86-64 results,
    src/kernels/cpu/convert.h), not as the GPU's saturating conversions."""
    x = np.array(INVALID_CAST_FLOATS).astype(src)
    got = np.asarray(uma.asarray(x, device="cuda").astype(dtype))
    np.testing.assert_array_equal(got, np.asarray(uma.asarray(x).astype(dtype)))
    if src != "float16":
        np.testing.assert_array_equal(got, numpy_cast_each(x, dtype))


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_cuda_where_astype_and_clip(dtype):
    rng = np.random.default_rng(4)
    c = rng.integers(0, 2, size=(30, 1)).astype(bool)
    x, y = _operand(dtype, (30, 20), "general", "add", rng), _operand(dtype, (1, 20), "general", "add", rng)
    got = uma.where(uma.asarray(c, device="cuda"), uma.asarray(x, device="cuda"), uma.asarray(y, device="cuda"))
    assert_matches(got, np.where(c, x, y))
    for t in OP_DTYPES:  # every pair of dtypes, from a transposed device view
        src = x
        if np.dtype(_np_dt(t)).kind in "iu" and (_is_bf16(x.dtype) or x.dtype.kind in "fc"):
            # NaN, inf and out-of-range floats convert to integers in platform-defined ways
            # (NumPy warns "invalid value encountered in cast"): finite values in range here.
            fin = np.where(np.isfinite(x.astype(np.complex128)), x, 0).astype(x.dtype)
            src = np.clip(fin.astype(np.complex128).real, -100, 100).astype(x.dtype)
        expected = numpy_quiet(lambda: src.T.astype(_np_dt(t)))
        got = uma.asarray(src, device="cuda").T.astype(getattr(uma, "bool_" if t == "bool" else t))
        assert str(got.device) == "cuda:0"
        try:
            assert_matches(got, expected)
        except AssertionError as e:
            raise AssertionError(f"astype({dtype} -> {t}): {e}") from None
    lo, hi = _operand(dtype, (20,), "coarse", "clip", rng), _operand(dtype, (30, 1), "coarse", "clip", rng)
    _expect_like_numpy(_on_bf16(np.clip), [x, lo, hi], lambda: uma.clip(
        uma.asarray(x, device="cuda"), uma.asarray(lo, device="cuda"), uma.asarray(hi, device="cuda")), f"clip({dtype})")
    if dtype != "bool":
        _expect_like_numpy(_on_bf16(lambda v: np.clip(v, 0, 1)), [x], lambda: uma.clip(
            uma.asarray(x, device="cuda").T, 0, 1).T, f"clip({dtype}, 0, 1)")
    # round: integers rounded to tens go through float64 (values away from the dtype's limits);
    # complex values finite (NumPy rounds the parts separately, uma multiplies by 10**d)
    r = random_data("float32", (30, 20), rng).astype(x.dtype) if _is_bf16(x.dtype) else (
        random_data(dtype, (30, 20), rng) if x.dtype.kind in "biuc" else x)
    for decimals in (0, 1, -1):
        _expect_like_numpy(_on_bf16(lambda v: np.round(v, decimals)), [r],
                           lambda: uma.round(uma.asarray(r, device="cuda"), decimals), f"round({dtype}, {decimals})")


@needs_gpu
def test_cuda_clip_signed_zero_and_nan():
    x = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 0.5])
    for lo, hi in [(0.0, 1.0), (-0.0, 1.0), (-1.0, 0.0), (-1.0, -0.0), (np.nan, 1.0), (0.0, np.nan)]:
        got = np.asarray(uma.clip(uma.asarray(x, device="cuda"), lo, hi))
        exp = np.clip(x, lo, hi)
        np.testing.assert_array_equal(got, exp)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(exp), err_msg=f"clip({lo}, {hi})")


# Reductions: NumPy on the host copy is the oracle; bfloat16 computes in float32 and rounds
# (its dtype rule is float16's). uma accumulates float sums in double, NumPy float16 sums
# partly in float16, so float16/bfloat16 compare at 1e-2 (the cpu reduction matrix's values).
RED_TOL = {"float16": 1e-2, "bfloat16": 2e-2}


def _red_oracle(fn, a):
    if not _is_bf16(a.dtype):
        return fn(a)
    r16 = np.asarray(fn(a.astype(np.float16)))
    r = np.asarray(fn(a.astype(np.float32)))
    return r.astype(a.dtype if r16.dtype == np.float16 else r16.dtype)


def _np_logsumexp(a, axis=None, keepdims=False):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        raise TypeError("complex")
    x = a.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    res = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=keepdims)) + (
        m if keepdims else np.squeeze(m, axis=axis if x.ndim else None))
    return res.astype(a.dtype if a.dtype.kind == "f" else np.float64)


REDUCE = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min, "argmax": np.argmax,
    "argmin": np.argmin, "all": np.all, "any": np.any,
    "var": lambda a, **k: np.var(a, ddof=1, **k), "std": np.std, "logsumexp": _np_logsumexp,
}
UMA_REDUCE = {"var": lambda a, **k: uma.var(a, ddof=1, **k)}


def _red_operand(name, dtype, shape, rng):
    dt = _np_dt(dtype)
    if name == "prod":  # products near 1 (floats), or of small integers that wrap
        if dt.kind in "iu":
            return rng.choice([1, 2, 3] + ([-1] if dt.kind == "i" else []), size=shape).astype(dt)
        if dt.kind == "b":
            return rng.random(shape) < 0.9
        base = random_data("complex128" if dt.kind == "c" else "float64", shape, rng, "unit")
        return (base * 0.2 + 1).astype(dt)
    x = random_data("float32", shape, rng, "general").astype(dt) if _is_bf16(dt) else random_data(dtype, shape, rng)
    if dt.kind in "iu" and name == "sum":
        info = np.iinfo(dt)
        x.reshape(-1)[: 4] = [info.max, info.max, info.min, info.max]  # sums past the input's range
    return x


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", list(REDUCE))
def test_cuda_reductions_match_numpy(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    a = _red_operand(name, dtype, (6, 37, 129), rng)
    np_fn, uma_fn = REDUCE[name], UMA_REDUCE.get(name, getattr(uma, name))
    tol = RED_TOL.get(dtype)
    arg = name.startswith("arg")
    axes_list = [None, 0, 1, 2, -1] if arg else [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)]
    d = uma.asarray(a, device="cuda")
    for layout, x, dx in [("contiguous", a, d), ("transposed", a.transpose(2, 0, 1), d.transpose(2, 0, 1)),
                          ("strided", a[::2, 1:, ::-3], d[::2, 1:, ::-3])]:
        for axis in axes_list:
            for keepdims in (False, True):
                what = f"{name}({dtype}, {layout}, axis={axis}, keepdims={keepdims})"
                try:
                    expected = numpy_quiet(lambda: np.asarray(_red_oracle(
                        lambda v: np_fn(v, axis=axis, keepdims=keepdims), x)))
                except TypeError:
                    with pytest.raises(TypeError):
                        uma_fn(dx, axis=axis, keepdims=keepdims)
                    continue
                if x.dtype.kind in "fc" and name in ("sum", "mean", "prod", "var", "std"):
                    # uma accumulates in double (complex128): the exact value, rounded once
                    wide = np.complex128 if x.dtype.kind == "c" else np.float64
                    expected = numpy_quiet(lambda: np.asarray(
                        np_fn(x.astype(wide), axis=axis, keepdims=keepdims))).astype(expected.dtype)
                got = uma_fn(dx, axis=axis, keepdims=keepdims)
                assert str(got.device) == "cuda:0", what
                try:
                    assert_matches(got, expected, rtol=tol, atol=tol)
                except AssertionError as e:
                    raise AssertionError(f"{what}: {e}") from None


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cuda_cumulative_match_numpy(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    a = _red_operand("prod" if name == "cumprod" else "sum", dtype, (5, 70), rng)
    d = uma.asarray(a, device="cuda")
    tol = RED_TOL.get(dtype)
    # few long lines (the block-per-line kernel: several 1024-element tiles and a partial one)
    long = _red_operand("prod" if name == "cumprod" else "sum", dtype, (3, 5003), rng)
    dl = uma.asarray(long, device="cuda")
    for layout, x, dx in [("contiguous", a, d), ("transposed", a.T, d.T), ("strided", a[::2, ::-3], d[::2, ::-3]),
                          ("long lines", long, dl), ("long strided lines", long[:, ::-2], dl[:, ::-2])]:
        for axis in (None, 0, 1, -1):
            expected = numpy_quiet(lambda: np.asarray(_red_oracle(lambda v: getattr(np, name)(v, axis=axis), x)))
            if x.dtype.kind in "fc":  # double (complex128) accumulator, each partial result rounded
                wide = np.complex128 if x.dtype.kind == "c" else np.float64
                expected = numpy_quiet(lambda: getattr(np, name)(x.astype(wide), axis=axis)).astype(expected.dtype)
            got = getattr(uma, name)(dx, axis=axis)
            assert str(got.device) == "cuda:0"
            try:
                assert_matches(got, expected, rtol=tol, atol=tol)
            except AssertionError as e:
                raise AssertionError(f"{name}({dtype}, {layout}, axis={axis}): {e}") from None


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_cuda_max_min_nan_and_first_occurrence(dtype):
    dt = _np_dt(dtype)
    a = np.array([[1.0, np.nan, 3.0, 3.0], [2.0, 5.0, -1.0, 5.0], [-0.0, 0.0, 0.0, -0.0]]).astype(dt)
    if dt.kind == "c":
        a[1, 0] = complex(2.0, np.nan)
        a[2, 2] = complex(0.0, 1.0)
    d = uma.asarray(a, device="cuda")
    for name in ("max", "min", "argmax", "argmin"):
        for axis in (None, 0, 1):
            expected = np.asarray(_red_oracle(lambda v: getattr(np, name)(v, axis=axis), a))
            assert_matches(getattr(uma, name)(d, axis=axis), expected)


@needs_gpu
@pytest.mark.parametrize("shape", [(300, 70), (1024, 4096), (2, 50, 33), (4099, 64), (100_003, 10)])
def test_cuda_column_reductions_match_numpy(shape):
    """Reductions over the leading axes with the innermost kept (the column kernel: a bias
    gradient's sum over the rows, split over blocks where the rows are many, the splits
    combined by the last block of each column in the same kernel (Note [Last block finishes]),
    or by a second kernel, a block per output, beyond 32 splits, as for (100003, 10)), in
    every dtype group's kernels (max/min/argmax/argmin keep (value, index) partials): float32 sums and
    means as the float64 sum rounded once, and max/min/argmax/argmin on values with many ties
    and some NaNs, where the first occurrence wins."""
    rng = np.random.default_rng(len(shape))
    x = rng.integers(-3, 4, size=shape).astype(np.float32)
    x.reshape(-1)[rng.choice(x.size, size=x.size // 97, replace=False)] = np.nan
    d = uma.asarray(x, device="cuda")
    axis = tuple(range(len(shape) - 1))
    for name in ("max", "min", "argmax", "argmin"):
        if name.startswith("arg") and len(axis) > 1:
            continue
        ax = axis[0] if name.startswith("arg") else axis
        assert_matches(getattr(uma, name)(d, axis=ax), getattr(np, name)(x, axis=ax))
    y = rng.standard_normal(shape).astype(np.float32)
    dy = uma.asarray(y, device="cuda")
    for name in ("sum", "mean"):
        want = getattr(np, name)(y.astype(np.float64), axis=axis).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(getattr(uma, name)(dy, axis=axis).to_device("cpu")), want)
    ints = rng.integers(-9, 10, size=shape).astype(np.int32)  # int64 partials; bool ones of one byte
    di = uma.asarray(ints, device="cuda")
    np.testing.assert_array_equal(np.asarray(uma.sum(di, axis=axis).to_device("cpu")), ints.sum(axis=axis))
    for name, bound in (("any", 8), ("all", -9)):  # a few True values; a few False values
        got = getattr(uma, name)(uma.greater(di, bound), axis=axis)
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), getattr(np, name)(ints > bound, axis=axis))


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_cuda_large_full_reductions(dtype):
    """Full reductions of a million elements (the split kernels and their second pass), from
    an aligned and an unaligned start, and one NaN placed late for the float dtypes."""
    rng = np.random.default_rng(11)
    dt = _np_dt(dtype)
    x = _red_operand("mean", dtype, (1_000_003,), rng)
    d = uma.asarray(x, device="cuda")
    for off in (0, 1, 5):
        v, dv = x[off:], d[off:]
        for name in ("sum", "mean", "max", "min", "argmax", "argmin", "any", "all"):
            expected = np.asarray(_red_oracle(getattr(np, name), v))
            if name in ("sum", "mean") and dt.kind in "fc" and not _is_bf16(dt):
                wide = np.complex128 if dt.kind == "c" else np.float64
                expected = np.asarray(getattr(np, name)(v.astype(wide))).astype(dt)
            tol = RED_TOL.get(dtype)
            try:
                assert_matches(getattr(uma, name)(dv), expected, rtol=tol, atol=tol)
            except AssertionError as e:
                raise AssertionError(f"{name}({dtype}, offset {off}): {e}") from None
    if dt.kind in "fc" or _is_bf16(dt):
        x[987_654] = np.nan
        d = uma.asarray(x, device="cuda")
        for name in ("max", "min", "sum"):
            assert np.isnan(np.asarray(getattr(uma, name)(d)).astype(np.complex128)), f"{name}({dtype})"
        assert int(uma.argmax(d)) == 987_654 and int(uma.argmin(d)) == 987_654, dtype


@needs_gpu
def test_cuda_large_float_sum_accuracy():
    x = np.random.default_rng(0).standard_normal(3_000_001).astype(np.float32)
    d = uma.asarray(x, device="cuda")
    assert float(uma.sum(d)) == np.float32(x.astype(np.float64).sum())  # double accumulator, one rounding
    np.testing.assert_allclose(float(uma.sum(d.astype("float64"))), x.astype(np.float64).sum(), rtol=1e-13)
    e = uma.asarray(np.zeros((0, 3), np.float32), device="cuda")
    assert_matches(uma.sum(e, axis=0), np.zeros(3, np.float32))
    assert np.asarray(uma.all(e, axis=0)).all()
    assert_matches(uma.logsumexp(e, axis=0), np.full(3, -np.inf, np.float32))


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cuda_matmul_matches_numpy(dtype):
    rng = np.random.default_rng(9)
    tol = {"float32": 1e-4, "float64": 1e-12, "float16": 2e-2}[dtype]
    # the last two: more than 2^16 outputs of few terms (cuBLAS, where the tiled kernel would
    # be slower)
    cases = [((33, 17), (17, 45)), ((17,), (17, 5)), ((4, 17), (17,)), ((3, 8, 6), (6, 5)),
             ((2, 1, 8, 6), (3, 6, 5)), ((0, 4), (4, 3)), ((3, 0), (0, 2)), ((600, 16), (16, 700)),
             ((1024, 64), (64, 256))]
    for sa, sb in cases:
        a = rng.standard_normal(sa).astype(dtype)
        b = rng.standard_normal(sb).astype(dtype)
        got = uma.matmul(uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda"))
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
        assert np.asarray(got).shape == want.shape and str(got.device) == "cuda:0"
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=tol, atol=tol * 10)
    # transposed and sliced operands, small (float32/float64: uma's tiled kernel) and large
    # (more than 256 terms: cuBLAS)
    for s in (1, 10):
        a = rng.standard_normal((40 * s, 30 * s)).astype(dtype)
        b = rng.standard_normal((50 * s, 40 * s)).astype(dtype)
        da, db = uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")
        want = a.T.astype(np.float64) @ b.T.astype(np.float64)
        t = tol * np.sqrt(s)
        np.testing.assert_allclose(np.asarray(uma.matmul(da.T, db.T)).astype(np.float64), want, rtol=t, atol=t * 10)
        want = a[::2, 1:].astype(np.float64) @ b[1:30 * s, ::3].astype(np.float64)
        np.testing.assert_allclose(np.asarray(uma.matmul(da[::2, 1:], db[1:30 * s, ::3])).astype(np.float64), want,
                                   rtol=t, atol=t * 10)
        x = rng.standard_normal((3, 20 * s, 30 * s)).astype(dtype)  # batched, one operand broadcast
        want = x.astype(np.float64) @ a[: 30 * s].astype(np.float64)
        np.testing.assert_allclose(np.asarray(uma.matmul(uma.asarray(x, device="cuda"), da[: 30 * s]))
                                   .astype(np.float64), want, rtol=t, atol=t * 10)


@needs_gpu
def test_cuda_matmul_bfloat16():
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(10)
    a = rng.standard_normal((64, 32)).astype(ml.bfloat16)
    b = rng.standard_normal((32, 16)).astype(ml.bfloat16)
    got = np.asarray(uma.matmul(uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-2, atol=0.1)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_softmax_cross_entropy(dtype):
    rng = np.random.default_rng(11)
    z = rng.standard_normal((70, 13)).astype(dtype) * 3
    y = rng.integers(0, 13, 70)
    cpu = uma.softmax_cross_entropy(uma.asarray(z), uma.asarray(y))
    gpu = uma.softmax_cross_entropy(uma.asarray(z, device="cuda"), uma.asarray(y, device="cuda"))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(np.asarray(gpu), np.asarray(cpu), rtol=tol, atol=tol)
    g = rng.standard_normal(70).astype(dtype)
    grad = uma._core.softmax_cross_entropy_grad
    cpu = grad(uma.asarray(g), uma.asarray(z), uma.asarray(y))
    gpu = grad(uma.asarray(g, device="cuda"), uma.asarray(z, device="cuda"),
                                         uma.asarray(y.astype(np.int32), device="cuda"))
    np.testing.assert_allclose(np.asarray(gpu), np.asarray(cpu), rtol=tol, atol=tol)
    bad = y.copy()
    bad[5] = 13
    with pytest.raises(ValueError, match="label 13 at position 5"):
        uma.softmax_cross_entropy(uma.asarray(z, device="cuda"), uma.asarray(bad, device="cuda"))
    # deferred check: no error, NaN rows for the bad labels, and _check_labels raises later
    zd, bd = uma.asarray(z, device="cuda"), uma.asarray(bad, device="cuda")
    out = np.asarray(uma._core.softmax_cross_entropy(zd, bd, check_labels=False))
    assert np.isnan(out[5]) and np.isfinite(np.delete(out, 5)).all()
    gout = np.asarray(uma._core.softmax_cross_entropy_grad(uma.asarray(g, device="cuda"), zd, bd, check_labels=False))
    assert np.isnan(gout[5]).all() and np.isfinite(np.delete(gout, 5, axis=0)).all()
    with pytest.raises(ValueError, match="label 13 at position 5"):
        uma._core._check_labels(bd, 13)
    uma._core._check_labels(uma.asarray(y, device="cuda"), 13)


@needs_gpu
def test_cuda_ops_refuse_mixed_devices():
    with pytest.raises(RuntimeError, match="one device"):
        uma.add(uma.asarray(np.ones(3), device="cuda"), uma.asarray(np.ones(3)))


@needs_gpu
def test_cuda_memory_stats_count_transfer_bytes():
    before = uma.memory_stats("cuda")
    d = uma.asarray(np.ones(1000, np.float32), device="cuda")
    np.asarray(d)
    after = uma.memory_stats("cuda")
    assert after["host_to_device_bytes"] - before["host_to_device_bytes"] == 4000
    assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == 4000
    assert "host_to_device_bytes" not in uma.memory_stats("cpu")


# ---- the cuda linker -----------------------------------------------------------------------

@no_gpu
def test_cuda_backend_absent_without_gpu():
    """Without a usable GPU there is no cuda backend, and asking for it names why (the reason
    uma.cuda gives: a build without CUDA, no driver, no GPU)."""
    assert "cuda" not in uma.backends()
    with pytest.raises(RuntimeError, match="not available") as e:
        uma.function([], [], backend="cuda")
    assert uma.cuda.unavailable_reason() in str(e.value)


def _mlp(backend):
    return mlp_step(backend)


@needs_gpu
def test_cuda_linker_bad_label_raises_and_changes_no_parameter():
    # The linker defers the cross-entropy label check to the end of the step (one wait per call),
    # still before any update is written.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((16, 20)).astype(np.float32)
    Y = rng.integers(0, 5, 16)
    params, step = _mlp("cuda")
    step(X, Y)
    before = [p.get_value() for p in params]
    bad = Y.copy()
    bad[7] = 5
    with pytest.raises(ValueError, match="label 5 at position 7 is out of range"):
        step(X, bad)
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.get_value(), b)
    step(X, Y)  # still usable


@needs_gpu
def test_cuda_linker_moves_no_parameter_bytes_per_step():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((64, 20)).astype(np.float32)
    Y = rng.integers(0, 5, 64)
    params, step = _mlp("cuda")
    ref_params, ref_step = _mlp("cpu")
    step(X, Y)  # first step: parameters go to the GPU once
    ref_step(X, Y)
    for _ in range(3):
        before = uma.memory_stats("cuda")
        loss = step(X, Y)
        after = uma.memory_stats("cuda")
        # only the batch goes up (x and y); nothing comes down (the loss stays on the GPU)
        assert after["host_to_device_bytes"] - before["host_to_device_bytes"] == X.nbytes + Y.nbytes
        assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == 0
        assert str(loss.device) == "cuda:0"
        ref_loss = ref_step(X, Y)
        np.testing.assert_allclose(float(loss.item()), float(ref_loss.item()), rtol=1e-4)
    before = uma.memory_stats("cuda")
    w = params[0].get_value()
    after = uma.memory_stats("cuda")
    assert isinstance(w, np.ndarray)
    assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == w.nbytes
    np.testing.assert_allclose(w, ref_params[0].get_value(), rtol=1e-4, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("reader", ["cpu", "reference"])
def test_cuda_linker_shares_variables_with_host_backends(reader):
    w = uma.shared(np.arange(6, dtype=np.float64).reshape(2, 3), "w")
    inc = uma.function([], [], updates={w: w * 2 + 1}, backend="cuda")
    read = uma.function([], uma.sym.sum(w, axis=0), backend=reader)
    inc()
    inc()
    expect = (np.arange(6.0).reshape(2, 3) * 2 + 1) * 2 + 1
    np.testing.assert_array_equal(np.asarray(read()), expect.sum(axis=0))
    # and back: a host write is seen by the cuda function
    w.set_value(np.ones((2, 3)))
    inc()
    np.testing.assert_array_equal(w.get_value(), np.full((2, 3), 3.0))


@needs_gpu
def test_cuda_calls_run_their_program_from_cpp_and_convert_each_switch_once():
    """A cuda function's call is C++ Function::call on the device residency: the arguments
    filtered (a device array of the declared type as it is, a NumPy array moved once), the
    shared values read on the device (a stale device copy is made from the host copy once),
    the Program queued, the updates checked and written on the device."""
    w = uma.shared(np.arange(4.0), "w")
    x = uma.sym.vector("x")
    f = uma.function([x], uma.sym.sum(w * x), updates={w: w + x}, backend="cuda")
    host_inc = uma.function([], [], updates={w: w * 2}, backend="numpy")
    assert f.fast_path
    xd = uma.asarray(np.ones(4), device="cuda")
    f(xd)  # the host copy goes up once
    assert w.container.current == {"cuda:0"}
    before = uma.memory_stats("cuda")
    for _ in range(3):
        out = f(xd)
    after = uma.memory_stats("cuda")
    assert after["host_to_device_bytes"] == before["host_to_device_bytes"]  # nothing moved
    assert after["device_to_host_bytes"] == before["device_to_host_bytes"]
    assert str(out.device) == "cuda:0" and float(out.item()) == float(np.sum((np.arange(4.0) + 3) * 1))
    assert f.call_counts() == {"fast": 4, "general": 0}
    f(np.ones(4, np.float32))  # a host argument of a safe dtype: cast and moved by the filter
    host_inc()  # numpy reads: down once; writes its own copy
    assert w.container.current == {"numpy"}
    before = uma.memory_stats("cuda")
    f(xd)  # numpy -> host -> device, once
    after = uma.memory_stats("cuda")
    assert after["host_to_device_bytes"] - before["host_to_device_bytes"] == w.get_value().nbytes
    np.testing.assert_array_equal(w.get_value(), (np.arange(4.0) + 5) * 2 + 1)
    with pytest.raises(TypeError, match="cannot cast float64 to int64 safely|expected 1-d"):
        f(np.ones((2, 2)))
    np.testing.assert_array_equal(w.get_value(), (np.arange(4.0) + 5) * 2 + 1)


@needs_gpu
def test_cuda_eager_update_policy_refreshes_the_host_copy_in_the_same_call():
    w = uma.shared(np.arange(3.0), "w")
    f = uma.function([], [], updates={w: w + 1}, backend="cuda", update_policy="eager")
    f()
    assert w.container.current == {"cuda:0", "cpu"}
    before = uma.memory_stats("cuda")
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0) + 1)  # the host copy is current
    assert uma.memory_stats("cuda")["device_to_host_bytes"] == before["device_to_host_bytes"]


@needs_gpu
@pytest.mark.parametrize("in_program", [True, False])
def test_cuda_update_of_the_wrong_type_changes_nothing(in_program):
    """An update value of another dtype is refused before anything is written, whether the
    step is one Program (the op has a Program op: the update check's TypeError) or Program
    segments around a Python step (whose result is checked against the graph as it is made)."""
    from uma.graph.basic import Op
    from uma.runtime.linkers.cuda.dispatch import program_op

    class ToFloat32(Op):  # claims its input's type, computes float32: a broken op
        name = "test_cuda_to_float32"

        def output_types(self, inputs):
            return [inputs[0].type]

        def perform(self, node, values):
            return [values[0].astype("float32")]

    if in_program:
        program_op.register(ToFloat32)(lambda op, node: ("astype", {"dtype": "float32"}))
    w = uma.shared(np.arange(3.0), "w")
    u = uma.shared(np.zeros(1), "u")
    f = uma.function([], [], updates={u: u + 1, w: ToFloat32()(w)}, backend="cuda")
    assert f.fast_path == in_program
    if in_program:
        err, msg = TypeError, r"backend 'cuda' returned float32 of shape \(3,\) for shared variable 'w'"
    else:
        err, msg = RuntimeError, r"test_cuda_to_float32: returned dtype float32, but the graph inferred float64"
    with pytest.raises(err, match=msg):
        f()
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0))
    np.testing.assert_array_equal(u.get_value(), [0.0])


def _eager_cuda():
    """A cuda linker that evaluates node by node with the eager ops (CudaLinker.compile_eager):
    the oracle the Program must equal bit for bit."""
    from uma.runtime.linkers.cuda import CudaLinker

    class EagerCuda(CudaLinker):
        def compile(self, fgraph):
            return self.compile_eager(fgraph)

    return EagerCuda()


def _same_bits(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8),
                                  err_msg=what)


@needs_gpu
def test_cuda_linker_runs_one_program_bit_for_bit_the_eager_ops():
    from uma.runtime.linkers.cuda import CudaLinker
    rng = np.random.default_rng(5)
    X = rng.standard_normal((32, 20)).astype(np.float32)
    Y = rng.integers(0, 5, 32)
    params, step = _mlp("cuda")
    eparams, estep = _mlp(_eager_cuda())
    prog = step._thunk.program
    assert prog is not None and CudaLinker.python_ops(step) == [] and prog.num_label_checks == 1
    assert step.fast_path  # the C++ Function runs the Program on the device: no Python per call
    assert estep._thunk.__class__.__name__ != "ProgramThunk"
    for k in range(3):
        _same_bits(step(X, Y).to_device("cpu"), estep(X, Y).to_device("cpu"), f"loss {k}")
    for p, q in zip(params, eparams):
        _same_bits(p.get_value(), q.get_value(), p.name)


def _indexing_case():
    """The values (X float32 (6, 5), indices I with a repeat and a negative one, mask M, update
    Y (4, 5), labels L) and the symbolic inputs of the indexing-op tests."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((6, 5)).astype(np.float32)
    values = (X, np.array([3, 0, 3, -1]), X > 0, rng.standard_normal((4, 5)).astype(np.float32), np.array([1, 4, 0]))
    sym = uma.sym
    inputs = (sym.matrix("x", dtype="float32"), sym.vector("i", dtype="int64"), sym.matrix("m", dtype="bool"),
              sym.matrix("y", dtype="float32"), sym.vector("lab", dtype="int64"))
    return values, inputs


@needs_gpu
def test_cuda_program_creation_and_indexing_ops_bit_for_bit_the_eager_ops():
    """Ops that make arrays (zeros_like, ones_like, full_like, one_hot, getitem_grad) make them
    on the device of their input; with indexing and functional updates, every output equals
    the eager ops' bit for bit."""
    sym = uma.sym
    (X, I, M, Y, L), (x, i, m, y, lab) = _indexing_case()
    outs = [sym.take(x, i, axis=0), x[m], x[:, i[:2]], sym.set_subtensor(x, i, y), sym.inc_subtensor(x, i, y),
            sym.inc_subtensor(x, m, 1.0), sym.one_hot(lab, 5, dtype="float32"), uma.grad(sym.sum(x[i] * y), x),
            uma.grad(sym.sum(x[1:3, ::2] * 3), x), sym.zeros_like(x), sym.ones_like(x, dtype="int8"),
            sym.full_like(x, 2.5, dtype="float16"), sym.full_like(lab, 7), sym.exp(x) * 2 + x, x.sum(axis=0) + 1.5]
    f = uma.function([x, i, m, y, lab], outs, backend="cuda")
    e = uma.function([x, i, m, y, lab], outs, backend=_eager_cuda())
    assert f._thunk.program is not None
    for k, (a, b) in enumerate(zip(f(X, I, M, Y, L), e(X, I, M, Y, L))):
        assert str(a.device) == "cuda:0", k
        _same_bits(a.to_device("cpu"), b.to_device("cpu"), str(k))
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        f(X, np.array([0, 6, 1, 2]), M, Y, L)


@needs_gpu
def test_cuda_program_never_runs_on_elements():
    """Note [Scalar programs]: the element plan takes 0-d host arrays only; a cuda program's
    values are device arrays (its constants too), so its calls take the general path."""
    c = uma.shared(np.array(0.0), "c")
    inc = uma.function([], [], updates={c: c + 1}, backend="cuda")
    sq = uma.function([], [], updates={c: c * c}, backend="cuda")
    for f in (inc, sq):
        prog = f._thunk.program
        assert prog is not None and f.fast_path
        assert not prog.runs_on_elements([uma.asarray(np.array(3.0), device="cuda")])
    assert not inc._thunk.program.element_plan  # its constant 1 lives on the device
    assert sq._thunk.program.element_plan       # no constant: the call's arrays decide, and they are on the device
    inc()
    inc()
    sq()
    assert c.get_value() == 4.0


@needs_gpu
def test_cuda_program_label_check_of_a_graph_with_python_steps():
    """The deferred label check runs after the last segment when the Program is split by a
    Python step, still before any update is written."""
    from uma.runtime.linkers.cuda import CudaLinker
    sym = uma.sym
    rng = np.random.default_rng(2)
    w = uma.shared(rng.standard_normal((4, 3)).astype(np.float32), "w")
    x = sym.matrix("x", dtype="float32")
    y = sym.vector("y", dtype="int64")
    from uma.random import RandomStream
    noise = RandomStream(0).normal(size=(4, 3), dtype="float32")  # random ops run in Python
    loss = sym.mean(sym.softmax_cross_entropy(x @ (w + 0 * noise), y))
    step = uma.function([x, y], loss, updates={w: w - 0.1 * uma.grad(loss, w)}, backend="cuda")
    assert CudaLinker.python_ops(step)
    X = rng.standard_normal((8, 4)).astype(np.float32)
    before = w.get_value()
    with pytest.raises(ValueError, match="label 3 at position 2 is out of range"):
        step(X, np.array([0, 1, 3, 2, 0, 1, 2, 0]))
    np.testing.assert_array_equal(w.get_value(), before)
    step(X, np.array([0, 1, 2, 2, 0, 1, 2, 0]))


def test_program_label_checks_run_after_the_steps():
    """Program.add_label_check (Note [Deferred label checks]) on the host: the error is the op's."""
    core = uma._core
    prog = core.Program()
    z, y = prog.add_input(), prog.add_input()
    out = prog.add_op("softmax_cross_entropy", [z, y], {"check_labels": False})
    prog.add_label_check(y, z, "softmax_cross_entropy")
    prog.set_outputs([out])
    assert prog.num_label_checks == 1 and not prog.element_plan
    Z = uma.asarray(np.zeros((3, 4), np.float32))
    assert np.asarray(prog.run([Z, uma.asarray(np.array([0, 3, 1]))])[0]).shape == (3,)
    with pytest.raises(ValueError, match="label 4 at position 1 is out of range"):
        prog.run([Z, uma.asarray(np.array([0, 4, 1]))])
    with pytest.raises(ValueError, match="undefined slot"):
        prog.add_label_check(7, z, "softmax_cross_entropy")


def test_program_label_check_of_logits_that_are_not_2d_is_the_ops_shape_error():
    # A check alone (no cross-entropy step) over 1-d logits: the op's shape rule, not a label
    # out of [0, 0).
    prog = uma._core.Program()
    z, y = prog.add_input(), prog.add_input()
    prog.add_label_check(y, z, "softmax_cross_entropy")
    prog.set_outputs([prog.add_op("exp", [z], None)])
    labels = uma.asarray(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=re.escape("softmax_cross_entropy: logits must be 2-d (batch, classes), got shape (4,)")):
        prog.run([uma.asarray(np.zeros(4, np.float32)), labels])
    with pytest.raises(ValueError, match=re.escape("softmax_cross_entropy: labels must have shape (2,)")):
        prog.run([uma.asarray(np.zeros((2, 4), np.float32)), labels])


def test_program_element_plan_takes_host_scalars_only():
    core = uma._core
    prog = core.Program()
    a = prog.add_input()
    prog.set_outputs([prog.add_op("multiply", [a, a], None)])
    assert prog.element_plan
    assert prog.runs_on_elements([uma.asarray(np.array(3.0))])
    assert not prog.runs_on_elements([uma.asarray(np.array([3.0]))])


@needs_gpu
def test_train_example_on_cuda():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "uma.examples.train", "--backend", "cuda", "--epochs", "5"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    acc = float(r.stdout.split("test accuracy (cuda): ")[1].split()[0])
    assert acc > 0.9, r.stdout


# ---- indexing, one_hot, assignment and matmul of every dtype on the device -------------------
# Each case runs on "cpu" too: the same calls checked against the same NumPy oracle, so the
# tests themselves are exercised without a GPU; on the GPU the results must also equal the cpu
# path's bit for bit (the kernels promise it: gathers move bytes, repeated-index additions run
# in index order).

DEVICES = ["cpu", pytest.param("cuda", marks=needs_gpu)]


def _data(dtype, shape, seed=0):
    if dtype == "bfloat16":
        return sample("float32", shape, seed).astype(_np_dt("bfloat16"))
    return sample(dtype, shape, seed)


def _on(x, dev):
    return uma.asarray(np.ascontiguousarray(x) if isinstance(x, np.ndarray) else x, device=dev)


def _bits(x):
    x = np.ascontiguousarray(np.asarray(x))
    return x.view(np.uint8) if x.size else x


def _exact(got, want, dev):
    """got (a uma.Array on dev) has want's dtype, shape and bytes (also -0.0 vs 0.0)."""
    assert isinstance(got, uma.Array) and str(got.device) == ("cpu" if dev == "cpu" else "cuda:0")
    g = np.asarray(got)
    want = np.asarray(want)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(_bits(g), _bits(want))


def _rows(a, axis, r):
    """The view a[..., r:r+1, ...] (an array, never a scalar: no overflow warnings)."""
    return a[(slice(None),) * axis + (slice(r, r + 1),)]


def _scatter_oracle(x, idx, axis, y, inc):
    """NumPy: x with y's rows written (last one wins) or added one by one in index order, each
    addition in x's dtype (np.add.at's order and rounding)."""
    out = x.copy()
    n = x.shape[axis]
    for j, r in enumerate(np.asarray(idx).ravel()):
        r = int(r) % n
        dst, src = _rows(out, axis, r), _rows(y, axis, j)
        if inc:
            dst[...] = dst + src
        else:
            dst[...] = src
    return out


TAKE_INDEX = [4, -1, 0, 4, 2]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_take_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    a = _on(x, dev)
    idx = np.array(TAKE_INDEX)
    for axis in (None, 0, 1, -2):
        _exact(uma.take(a, _on(idx, dev), axis=axis), np.take(x, idx, axis=axis), dev)
    # index arrays of other integer dtypes and shapes, host indices, strided operands
    i2 = np.array([[1, 3, 0], [2, 2, 4]], np.int8)
    _exact(uma.take(a, _on(i2, dev), axis=1), np.take(x, i2, axis=1), dev)
    _exact(uma.take(a, np.array([5, 0], np.uint64), axis=0), np.take(x, np.array([5, 0]), axis=0), dev)
    _exact(uma.take(a.T, _on(np.array([3, 0]), dev), axis=0), np.take(x.T, [3, 0], axis=0), dev)
    _exact(a[[0, 5, -6, 0]], x[[0, 5, -6, 0]], dev)
    _exact(a[:, np.array([4, 1], np.uint16)], x[:, [4, 1]], dev)
    # empty index arrays and empty operands
    _exact(uma.take(a, _on(np.zeros(0, np.int64), dev), axis=1), np.take(x, np.zeros(0, np.int64), axis=1), dev)
    _exact(uma.take(_on(x[:0], dev), _on(np.array([1, 0]), dev), axis=1), np.take(x[:0], [1, 0], axis=1), dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_take_bad_index_raises_index_error_naming_the_first(dev):
    x = _data("float32", (6, 5))
    a = _on(x, dev)
    for idx, axis, bad, size in [([1, 7, -9], 0, "7", 6), ([0, -6, -7, 9], 1, "-6", 5),
                                 ([2**63 + 1, 3], 0, str(2**63 + 1), 6)]:
        arr = np.array(idx, np.uint64 if idx[0] > 2**62 else np.int64)
        if arr.dtype == np.int64:  # (NumPy prints a uint64 index converted to int64; uma unsigned)
            with pytest.raises(IndexError) as np_err:
                np.take(x, arr, axis=axis)
            assert f"index {bad} is out of bounds for axis {axis} with size {size}" in str(np_err.value)
        for where in ("host", dev):
            with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis {axis} with size {size}"):
                uma.take(a, _on(arr, where if where != "host" else "cpu"), axis=axis)
    with pytest.raises(TypeError, match="integer"):
        uma.take(a, _on(np.array([0.0, 1.0]), dev), axis=0)
    np.testing.assert_array_equal(np.asarray(a), x)  # nothing changed
    uma.take(a, _on(np.array([1, 2]), dev), axis=0)  # still usable after an error


@needs_gpu
def test_index_arrays_on_a_device_meet_only_that_device():
    x = np.arange(6.0)
    with pytest.raises(RuntimeError, match="index array is on cuda:0"):
        uma.take(uma.asarray(x), uma.asarray(np.array([0, 1]), device="cuda"))
    with pytest.raises(RuntimeError, match="cuda:0"):
        uma.asarray(x)[uma.asarray(x > 2, device="cuda")]
    # host index arrays (lists, NumPy) index a device array: moved to it once
    g = uma.asarray(x, device="cuda")
    np.testing.assert_array_equal(np.asarray(g[[5, 0]]), x[[5, 0]])
    np.testing.assert_array_equal(np.asarray(g[x > 2]), x[x > 2])


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_mask_read_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    a = _on(x, dev)
    rng = np.random.default_rng(4)
    full = rng.random((6, 5)) > 0.4
    lead = np.array([True, False, True, True, False, True])
    for m in (full, lead, np.zeros(6, bool), np.ones((6, 5), bool)):
        _exact(a[_on(m, dev)], x[m], dev)  # mask on the array's device
        _exact(a[m], x[m], dev)            # host mask (NumPy)
    _exact(a.T[_on(full.T, dev)], x.T[full.T], dev)  # a strided operand
    e = _on(x[:0], dev)
    _exact(e[_on(np.zeros(0, bool), dev)], x[:0][np.zeros(0, bool)], dev)
    big = rng.random(300_001) > 0.5  # several scan tiles
    v = np.arange(big.size, dtype=np.int64)
    _exact(_on(v, dev)[_on(big, dev)], v[big], dev)
    with pytest.raises(IndexError, match="boolean index did not match"):
        a[_on(np.ones(5, bool), dev)]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_set_inc_subtensor_basic_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    y = _data(dtype, (3,), seed=1)
    a = _on(x, dev)
    for key, yv in [((slice(1, 4), 2), y), ((Ellipsis, slice(None, None, 2)), y), ((1,), _data(dtype, (5,), 2)),
                    ((slice(None), slice(1, 2)), _data(dtype, (6, 1), 3)), ((2, 3), y[0])]:
        want = x.copy()
        want[key] = yv
        _exact(uma.set_subtensor(a, key, _on(yv, dev)), want, dev)
        want = x.copy()
        want[key] = numpy_quiet(lambda: want[key] + yv)
        _exact(uma.inc_subtensor(a, key, _on(yv, dev)), want, dev)
    np.testing.assert_array_equal(_bits(a), _bits(x))  # x itself never changes
    # Python scalars broadcast (weak, in x's dtype)
    one = True if dtype == "bool" else 1
    want = x.copy()
    want[0] = one
    _exact(uma.set_subtensor(a, 0, one), want, dev)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_set_inc_subtensor_repeated_indices_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    a = _on(x, dev)
    for axis, idx in [(0, np.array([3, 0, 3, 3, -1, 0, 5])), (1, np.array([4, 4, -5, 1, 4]))]:
        region = list(x.shape)
        region[axis] = idx.size
        y = _data(dtype, tuple(region), seed=7)
        key = (slice(None),) * axis + (_on(idx, dev),)
        for inc, fn in ((False, uma.set_subtensor), (True, uma.inc_subtensor)):
            want = numpy_quiet(lambda: _scatter_oracle(x, idx, axis, y, inc))
            got = fn(a, key if axis else key[0], _on(y, dev))
            _exact(got, want, dev)
            if dev == "cuda":  # bit for bit the cpu path's result
                cpu = fn(uma.asarray(x), (slice(None),) * axis + (idx,) if axis else idx, uma.asarray(y))
                np.testing.assert_array_equal(_bits(got), _bits(cpu))
    np.testing.assert_array_equal(_bits(a), _bits(x))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "complex64"])
def test_inc_subtensor_many_repeats_adds_in_index_order(dev, dtype):
    # 2000 additions into 3 rows: float sums depend on the order; it is the index order.
    rng = np.random.default_rng(5)
    x = _data(dtype, (3, 4))
    idx = rng.integers(-3, 3, 2000)
    y = _data(dtype, (2000, 4), seed=6)
    want = numpy_quiet(lambda: _scatter_oracle(x, idx, 0, y, True))
    _exact(uma.inc_subtensor(_on(x, dev), _on(idx, dev), _on(y, dev)), want, dev)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_set_inc_subtensor_mask_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    a = _on(x, dev)
    rng = np.random.default_rng(8)
    for m in (rng.random((6, 5)) > 0.5, np.array([False, True, True, False, False, True])):
        y = _data(dtype, x[m].shape, seed=9)
        want = x.copy()
        want[m] = y
        _exact(uma.set_subtensor(a, _on(m, dev), _on(y, dev)), want, dev)
        _exact(uma.set_subtensor(a, m, _on(y, dev)), want, dev)  # host mask
        want = x.copy()
        want[m] = numpy_quiet(lambda: x[m] + y)
        _exact(uma.inc_subtensor(a, _on(m, dev), _on(y, dev)), want, dev)
    np.testing.assert_array_equal(_bits(a), _bits(x))


@pytest.mark.parametrize("dev", DEVICES)
def test_failed_updates_raise_and_change_nothing(dev):
    x = _data("float64", (6, 5))
    a = _on(x, dev)
    y = _on(np.ones(3), dev)
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        uma.set_subtensor(a, _on(np.array([0, 6, 1]), dev), _on(np.ones((3, 5)), dev))
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 1 with size 5"):
        uma.inc_subtensor(a, (slice(None), _on(np.array([0, -9, 1]), dev)), _on(np.ones((6, 3)), dev))
    with pytest.raises(IndexError, match="boolean index did not match"):
        uma.inc_subtensor(a, _on(np.ones(4, bool), dev), y)
    with pytest.raises(ValueError, match="broadcast"):
        uma.set_subtensor(a, _on(np.array([0, 1]), dev), _on(np.ones((3, 5)), dev))
    with pytest.raises(TypeError, match="same_kind"):
        uma.set_subtensor(_on(np.zeros(3, np.int32), dev), 0, _on(np.array(1.5), dev))
    np.testing.assert_array_equal(np.asarray(a), x)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_one_hot_every_dtype(dev, dtype):
    idx = np.array([[0, 3, -1], [5, 2, 2]])
    for it in ("int64", "int8", "uint16"):
        i = idx.astype(it)
        want = (i[..., None].astype(np.int64) == np.arange(4)).astype(_np_dt(dtype))
        _exact(uma.one_hot(_on(i, dev), 4, dtype=dtype), want, dev)
    _exact(uma.one_hot(_on(idx, dev), 0, dtype=dtype), np.zeros((2, 3, 0), _np_dt(dtype)), dev)
    _exact(uma.one_hot(_on(np.zeros(0, np.int32), dev), 3, dtype=dtype), np.zeros((0, 3), _np_dt(dtype)), dev)
    with pytest.raises(TypeError, match="integer"):
        uma.one_hot(_on(np.ones(2), dev), 3)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", OP_DTYPES)
def test_setitem_every_dtype(dev, dtype):
    x = _data(dtype, (6, 5))
    y = _data(dtype, (6, 5), seed=3)
    a = _on(x, dev)
    want = x.copy()
    for key, v in [((slice(1, 4), slice(None, None, 2)), y[:3, :3]),  # strided destination, host source
                   ((2,), y[4]), ((Ellipsis, 4), y[:, 0]), ((slice(None, None, -1), 1), y[:, 2])]:
        a[key] = v
        want[key] = v
        _exact(a, want, dev)
    a[0] = _on(y[1], dev)  # a device source
    want[0] = y[1]
    a.T[3] = _on(y[:, 2], dev)  # a transposed destination
    want.T[3] = y[:, 2]
    a[:, 1] = a[:, 0]  # overlapping source and destination
    want[:, 1] = want[:, 0]
    _exact(a, want, dev)
    a[...] = 0  # a Python scalar
    _exact(a, np.zeros_like(x), dev)
    with pytest.raises(ValueError, match="broadcast"):
        a[1:3] = np.ones(4, x.dtype)
    if dtype in ("float64", "int32"):  # conversions on assignment (NumPy's unsafe casting)
        a[...] = np.arange(30, dtype=np.float32).reshape(6, 5) * 1.5
        _exact(a, (np.arange(30, dtype=np.float32).reshape(6, 5) * 1.5).astype(dtype), dev)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                   "complex64", "complex128"])
def test_matmul_integer_bool_complex(dev, dtype):
    rng = np.random.default_rng(12)

    def data(shape):
        if dtype == "bool":
            return rng.random(shape) > 0.6
        if dtype.startswith("complex"):
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
        info = np.iinfo(dtype)  # the full range: products and sums wrap
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)

    def check(got, want):
        if dtype.startswith("complex"):
            assert np.asarray(got).dtype == want.dtype and str(got.device) == ("cpu" if dev == "cpu" else "cuda:0")
            np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL[dtype] * 10, atol=RTOL[dtype] * 10)
        else:
            _exact(got, want, dev)

    cases = [((33, 17), (17, 45)), ((17,), (17, 5)), ((4, 17), (17,)), ((3, 8, 6), (6, 5)),
             ((2, 1, 8, 6), (3, 6, 5)), ((0, 4), (4, 3)), ((3, 0), (0, 2)), ((5,), (5,))]
    for sa, sb in cases:
        a, b = data(sa), data(sb)
        check(uma.matmul(_on(a, dev), _on(b, dev)), numpy_quiet(lambda: np.matmul(a, b)))
    a, b = data((40, 30)), data((50, 40))
    da, db = _on(a, dev), _on(b, dev)
    check(uma.matmul(da.T, db.T), numpy_quiet(lambda: a.T @ b.T))
    check(uma.matmul(da[::2, 1:], db[1:30, ::3]), numpy_quiet(lambda: a[::2, 1:] @ b[1:30, ::3]))


@needs_gpu
def test_matmul_mixed_integer_dtypes_promote_on_the_device():
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    b = np.arange(8, dtype=np.uint16).reshape(4, 2)
    got = uma.matmul(uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda"))
    _exact(got, a @ b, "cuda")


@pytest.mark.parametrize("backend", ["cpu", "reference", pytest.param("cuda", marks=needs_gpu)])
def test_function_indexing_ops_on_backend(backend):
    """take / x[idx] / x[mask] / set_subtensor / inc_subtensor (repeated indices) / one_hot and the
    gradients of a gather (a scatter-add) and of a basic slice (an assignment into a view) in a
    compiled function, against NumPy."""
    sym = uma.sym
    (X, I, M, Y, L), (x, i, m, y, lab) = _indexing_case()
    outs = [sym.take(x, i, axis=0), x[m], x[:, i[:2]],
            sym.set_subtensor(x, i, y), sym.inc_subtensor(x, i, y), sym.inc_subtensor(x, m, 1.0),
            sym.one_hot(lab, 5, dtype="float32"), uma.grad(sym.sum(x[i] * y), x),
            uma.grad(sym.sum(x[1:3, ::2] * 3), x)]
    f = uma.function([x, i, m, y, lab], outs, backend=backend)
    got = f(X, I, M, Y, L)
    dev = "cuda" if backend == "cuda" else "cpu"
    inc = _scatter_oracle(X, I, 0, Y, True)
    want = [np.take(X, I, axis=0), X[M], X[:, I[:2]], _scatter_oracle(X, I, 0, Y, False), inc,
            np.where(M, X + np.float32(1), X), np.eye(5, dtype=np.float32)[L],
            _scatter_oracle(np.zeros_like(X), I, 0, Y, True), np.zeros_like(X)]
    want[-1][1:3, ::2] = 3
    for k, (g, w) in enumerate(zip(got, want)):
        assert str(g.device) == ("cpu" if dev == "cpu" else "cuda:0"), k
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6, err_msg=str(k))
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        f(X, np.array([0, 6, 1, 2]), M, Y, L)


@needs_gpu
@pytest.mark.parametrize("args,kw", [
    ((1_700_000_000_000_000_000, 1_700_000_000_000_000_005), {}), ((2**53 + 1, 2**53 + 4), {}),
    ((2**62, 2**62 + 9, 3), {}), ((0.1, 10, 0.3), {}), ((0, 1, 0.1), {"dtype": "float32"}),
    ((250, 260), {"dtype": "uint8"}),
])
def test_arange_on_the_gpu_matches_numpy(args, kw):
    got = uma.arange(*args, **kw, device="cuda")
    assert got.device == "cuda:0"
    expected = np.arange(*args, **kw)
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), expected)
    assert got.dtype == expected.dtype


@needs_gpu
@pytest.mark.parametrize("args", [(0, 1, 7), (-3.5, 2e9, 11), (1 + 1j, 2, 5)])
def test_linspace_on_the_gpu_matches_numpy(args):
    got = uma.linspace(*args, device="cuda")
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), np.linspace(*args))


@needs_gpu
@pytest.mark.parametrize("src", ["float64", "complex128", "int64", "uint64", "int32"])
def test_bfloat16_conversion_rounds_once_on_the_gpu(src):
    floats = [1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8 + 2.0**-40), 3.4e38, 3.3895e38,
              2.0**-133, 2.0**-134, 2.0**-134 + 2.0**-160, 1e-300, 0.1, 123456.789]
    ints = [2**60 + 2**52 + 1, 2**60 + 2**52, 2**62 + 2**54 + 7, 2**63 - 1, 2**24 + 2**16 + 1, 2**31 - 1, 257]
    values = floats if src in ("float64", "complex128") else ints
    if src.startswith("int"):
        values = values + [-v for v in values]
    if src == "int32":
        values = [v for v in values if -2**31 <= v < 2**31]
    x = np.array(values, dtype=src)
    got = uma.asarray(x, device="cuda").astype("bfloat16").to_device("cpu").astype("float64")
    expected = np.array([bfloat16_round_once(v.real if isinstance(v, complex) else v) for v in x.tolist()])
    np.testing.assert_array_equal(np.asarray(got), expected)


@needs_gpu
def test_bfloat16_reduction_result_rounds_once_on_the_gpu():
    x = np.array([1.0, 2.0**-8, 2.0**-30])  # the float64 sum is just above a bfloat16 tie
    for device in ("cpu", "cuda"):
        got = uma.sum(uma.asarray(x, device=device), dtype="bfloat16").to_device("cpu").astype("float64")
        assert float(np.asarray(got)) == bfloat16_round_once(float(np.sum(x))) == 1.0078125


# ---- GPU: bool memory holding bytes other than 0 and 1 ------------------------------------------
# A uint8 buffer seen as bool: the kernels read a bool byte as byte != 0 (NumPy's rule) on the
# GPU as on the CPU (tests/python/test_bool_bytes.py), whatever way the bytes got there.

BOOL_BYTES = [2, 0x80, 1, 0, 0xFF, 0, 0x40, 3]


def _check_bool_bytes_on_gpu(a, b):
    """uma's ops on the cuda bool array `a` give NumPy's answers on the host bool array `b`
    (the same bytes)."""
    assert a.device == "cuda:0" and a.dtype == uma.bool_
    assert int(uma.sum(a).to_device("cpu")) == int(np.sum(b))
    assert bool(uma.any(a).to_device("cpu")) == bool(np.any(b))
    assert bool(uma.all(a).to_device("cpu")) == bool(np.all(b))
    assert int(uma.argmin(a).to_device("cpu")) == int(np.argmin(b))
    host = lambda x: np.asarray(x.to_device("cpu"))  # noqa: E731
    np.testing.assert_array_equal(host(uma.logical_not(a)), np.logical_not(b))
    np.testing.assert_array_equal(host(a == True), b == True)  # noqa: E712
    np.testing.assert_array_equal(host(uma.logical_and(a, a)), np.logical_and(b, b))
    np.testing.assert_array_equal(host(uma.cumsum(a)), np.cumsum(b))
    for dtype in ("int8", "uint8", "int64", "float16", "float32", "float64", "complex64"):
        np.testing.assert_array_equal(host(a.astype(dtype)), b.astype(dtype), err_msg=dtype)
    np.testing.assert_array_equal(host(uma.where(a, 1.0, 2.0)), np.where(b, 1.0, 2.0))
    x = np.arange(b.size, dtype=np.float32) * 10
    np.testing.assert_array_equal(host(uma.asarray(x, device="cuda")[a]), x[b])
    np.testing.assert_array_equal(host(uma.matmul(a.reshape((2, 4)), a.reshape((4, 2)))),
                                  np.matmul(b.reshape(2, 4), b.reshape(4, 2)))
    assert a[0].item() is bool(b[0]) and bool(a[1]) is bool(b[1])


@needs_gpu
def test_bool_bytes_transferred_to_the_gpu():
    b = np.array(BOOL_BYTES, np.uint8).view(np.bool_)
    _check_bool_bytes_on_gpu(uma.asarray(b, device="cuda"), b)


@needs_gpu
def test_bool_bytes_of_mapped_host_memory_written_after_adoption():
    raw = np.zeros(len(BOOL_BYTES), np.uint8)
    b = raw.view(np.bool_)
    a = uma.asarray(b, device="cuda", copy=False)  # mapped: the GPU reads the host bytes
    assert a.memory_kind == "mapped"
    raw[:] = BOOL_BYTES
    _check_bool_bytes_on_gpu(a, b)


@needs_gpu
@pytest.mark.skipif(not have["torch"], reason="torch is not installed")
def test_bool_bytes_of_a_torch_cuda_tensor():
    import torch
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    t = torch.tensor(BOOL_BYTES, dtype=torch.uint8, device="cuda").view(torch.bool)
    a = uma.from_dlpack(t)
    assert a.device == "cuda:0"
    _check_bool_bytes_on_gpu(a, np.array(BOOL_BYTES, np.uint8).view(np.bool_))


@needs_gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "bfloat16", "float32", "complex128"])
def test_cuda_creation_stays_on_the_device(dtype):
    """zeros/ones/full with device="cuda" and zeros_like/ones_like/empty_like/full_like of a
    cuda array are made on the device (filled there), with NumPy's values; device= overrides."""
    dt = _np_dt(dtype)
    d = uma.asarray(np.zeros((3, 5), dtype=dt), device="cuda")
    cases = [(uma.zeros((3, 5), dtype=dtype, device="cuda"), np.zeros((3, 5), dt)),
             (uma.ones((3, 5), dtype=dtype, device="cuda"), np.ones((3, 5), dt)),
             (uma.full((3, 5), 1, dtype=dtype, device="cuda"), np.full((3, 5), 1, dt)),
             (uma.zeros_like(d), np.zeros((3, 5), dt)), (uma.ones_like(d), np.ones((3, 5), dt)),
             (uma.full_like(d, True), np.full((3, 5), True).astype(dt)),
             (uma.ones_like(d, dtype="int32"), np.ones((3, 5), np.int32))]
    for got, want in cases:
        assert str(got.device) == "cuda:0"
        _exact(got, want, "cuda")
    e = uma.empty_like(d)
    assert str(e.device) == "cuda:0" and e.shape == (3, 5) and e.dtype.name == dtype
    h = uma.zeros_like(d, device="cpu")
    assert str(h.device) == "cpu"
    _exact(h, np.zeros((3, 5), dt), "cpu")



@needs_gpu
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_concatenate_and_stack_of_cuda_arrays_stay_on_the_device(dtype):
    a, b = sample(dtype, (2, 3), seed=1), sample(dtype, (2, 3), seed=2)
    da, db = uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")
    for got, want in [(uma.concatenate([da, db], axis=1), np.concatenate([a, b], axis=1)),
                      (uma.stack([da, db], axis=0), np.stack([a, b], axis=0))]:
        assert str(got.device) == "cuda:0"
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), want)
    with pytest.raises(RuntimeError, match="expected all arrays on one device"):
        uma.concatenate([da, uma.asarray(b)])


@needs_gpu
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["expm1", "tanh"])
def test_cuda_complex_special_cases_of_the_standard(op, dtype):
    """Complex expm1 and tanh at zeros, infinities and NaNs on cuda: the Array API standard's
    special cases (conftest.standard_complex), NumPy's results elsewhere, and the cpu's."""
    parts = (0.0, -0.0, 1.5, -2.0, 3.0, np.inf, -np.inf, np.nan)
    z = np.array([complex(r, i) for r in parts for i in parts], dtype=dtype)
    got = getattr(uma, op)(uma.asarray(z, device="cuda"))
    assert str(got.device) == "cuda:0"
    got = np.asarray(got.to_device("cpu"))
    exp, signs = standard_complex(op, z)
    r = 1e-5 if dtype == "complex64" else 1e-12
    for part in ("real", "imag"):
        g, e = getattr(got, part), getattr(exp, part)
        np.testing.assert_allclose(g, e, rtol=r, atol=r, equal_nan=True, err_msg=f"{op} {part}")
        fixed = signs & ((e == 0) | np.isinf(e))
        np.testing.assert_array_equal(np.signbit(g[fixed]), np.signbit(e[fixed]), err_msg=f"{op} {part} sign")
