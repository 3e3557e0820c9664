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
    a = uma.asarray(np.ones(3, np.int64), device="cuda")
    with pytest.raises(RuntimeError, match="cuda:0"):
        uma.one_hot(a, 3)


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

OP_DTYPES = ["bool", "int32", "int64", "float32", "float64"]
ARITH = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "remainder"]
CMP = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or"]
UNARY = ["negative", "abs", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sigmoid", "sign", "logical_not",
         "square", "sin", "cos", "floor", "ceil"]
TRANSCENDENTAL = {"exp", "log", "log1p", "expm1", "sqrt", "tanh", "sigmoid", "sin", "cos"}


def operand(dtype, shape, seed, positive=False):
    x = sample(dtype, shape, seed)
    if dtype in ("int32", "int64"):
        x = (x % 7 + (1 if positive else -3)).astype(dtype)
    elif dtype.startswith("float") and positive:
        x = np.abs(x) / 10 + 0.5
    elif dtype.startswith("float"):
        x = (x / 10).astype(dtype)
    return x


def np_ref(name, *xs):
    if name == "sigmoid":  # bool -> float16 computed in float32, as uma does
        x = xs[0].astype(np.float32) if xs[0].dtype == bool else xs[0]
        r = 1 / (1 + np.exp(-x))
        return r.astype(np.float16) if xs[0].dtype == bool else r
    with np.errstate(all="ignore"):
        return getattr(np, name)(*xs)


def check_close(got, want, dtype_exact=True):
    got_np = np.asarray(got)
    assert got_np.dtype == np.asarray(want).dtype, (got_np.dtype, np.asarray(want).dtype)
    if got_np.dtype.kind == "f":
        tol = 2e-6 if got_np.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


OP_LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.T,
    "strided": lambda x: x[::2, ::-1],
}


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", ARITH + CMP)
def test_cuda_binary_matches_numpy(name, dtype):
    if dtype == "bool" and name in ("subtract",):
        pytest.skip("NumPy rejects boolean subtract (tested in test_ops)")
    a = operand(dtype, (64, 33), 1)
    b = operand(dtype, (64, 33), 2, positive=name in ("power", "floor_divide", "remainder", "divide"))
    if name == "power" and dtype.startswith("int"):
        b = b % 4
    for layout, f in OP_LAYOUTS.items():
        x, y = f(a), f(b)
        got = getattr(uma, name)(uma.asarray(x, device="cuda"), uma.asarray(y, device="cuda"))
        assert str(got.device) == "cuda:0"
        check_close(got, np_ref(name, x, y))
    # broadcasting: a row, a column and a 0-d host scalar
    got = getattr(uma, name)(uma.asarray(a, device="cuda"), uma.asarray(b[:1], device="cuda"))
    check_close(got, np_ref(name, a, b[:1]))
    got = getattr(uma, name)(uma.asarray(a[:, :1], device="cuda"), uma.asarray(b, device="cuda"))
    check_close(got, np_ref(name, a[:, :1], b))
    got = getattr(uma, name)(uma.asarray(a, device="cuda"), uma.asarray(b[3, 4]))
    check_close(got, np_ref(name, a, b[3, 4]))


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_cuda_unary_matches_numpy(name, dtype):
    if dtype == "bool" and name in ("negative", "sign"):
        pytest.skip("NumPy rejects these for bool")
    a = operand(dtype, (50, 41), 3, positive=name in ("log", "sqrt", "log1p"))
    for layout, f in OP_LAYOUTS.items():
        x = f(a)
        got = getattr(uma, name)(uma.asarray(x, device="cuda"))
        want = np_ref(name, x)
        if name in TRANSCENDENTAL:
            got_np = np.asarray(got)
            assert got_np.dtype == want.dtype
            tol = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5}.get(want.dtype, 1e-12)
            np.testing.assert_allclose(got_np, want, rtol=tol, atol=tol)
        else:
            check_close(got, want)


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
def test_cuda_where_and_astype():
    c = operand("bool", (30, 20), 4)
    for dtype in OP_DTYPES:
        x, y = operand(dtype, (30, 20), 5), operand(dtype, (1, 20), 6)
        got = uma.where(uma.asarray(c, device="cuda"), uma.asarray(x, device="cuda"), uma.asarray(y, device="cuda"))
        check_close(got, np.where(c, x, y))
    src = operand("float64", (30, 20), 7) * 100
    for f in ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]:
        for t in ["bool", "int16", "int32", "int64", "uint16", "float16", "float32", "float64"]:
            x = np.abs(src).astype(f)
            d = uma.asarray(x, device="cuda")
            got = d.T.astype(t)
            assert str(got.device) == "cuda:0"
            np.testing.assert_array_equal(np.asarray(got), x.T.astype(t))


REDUCE = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any"]


@needs_gpu
@pytest.mark.parametrize("dtype", OP_DTYPES)
@pytest.mark.parametrize("name", REDUCE)
def test_cuda_reductions_match_numpy(name, dtype):
    a = operand(dtype, (6, 37, 129), 8)
    if name == "prod" and dtype.startswith("float"):
        a = (a / 10 + 1).astype(dtype)
    axes_list = [None, 0, 1, 2, -1] if name.startswith("arg") else [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)]
    for layout in ("contiguous", "transposed"):
        x = a if layout == "contiguous" else a.transpose(2, 0, 1)
        d = uma.asarray(x, device="cuda")
        for axis in axes_list:
            for keepdims in (False, True) if not name.startswith("arg") else (False,):
                kw = {"axis": axis} if name.startswith("arg") else {"axis": axis, "keepdims": keepdims}
                got = getattr(uma, name)(d, **kw)
                want = getattr(np, name)(x, **kw)
                if x.dtype == np.float32 and name in ("sum", "mean", "prod"):
                    # uma accumulates float32 in float64: compare with the exact value, rounded
                    want = getattr(np, name)(x.astype(np.float64), **kw).astype(np.float32)
                got_np = np.asarray(got)
                assert got_np.dtype == want.dtype and got_np.shape == np.shape(want), (axis, got_np.dtype, want.dtype)
                if want.dtype.kind == "f":
                    np.testing.assert_allclose(got_np, want, rtol=1e-5 if x.dtype == np.float32 else 1e-12)
                else:
                    np.testing.assert_array_equal(got_np, want)


@needs_gpu
def test_cuda_large_full_reductions_and_nan():
    x = np.random.default_rng(0).standard_normal(3_000_001).astype(np.float32)
    d = uma.asarray(x, device="cuda")
    np.testing.assert_allclose(float(uma.sum(d)), x.astype(np.float64).sum(), rtol=1e-5)
    assert float(uma.max(d)) == x.max() and int(uma.argmin(d)) == x.argmin()
    x[123456] = np.nan
    d = uma.asarray(x, device="cuda")
    assert np.isnan(float(uma.max(d))) and int(uma.argmax(d)) == 123456
    e = uma.asarray(np.zeros((0, 3), np.float32), device="cuda")
    check_close(uma.sum(e, axis=0), np.zeros(3, np.float32))
    assert np.asarray(uma.all(e, axis=0)).all()


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cuda_matmul_matches_numpy(dtype):
    rng = np.random.default_rng(9)
    tol = {"float32": 1e-4, "float64": 1e-12, "float16": 2e-2}[dtype]
    cases = [((33, 17), (17, 45)), ((17,), (17, 5)), ((4, 17), (17,)), ((3, 8, 6), (6, 5)),
             ((2, 1, 8, 6), (3, 6, 5)), ((0, 4), (4, 3)), ((3, 0), (0, 2))]
    for sa, sb in cases:
        a = rng.standard_normal(sa).astype(dtype)
        b = rng.standard_normal(sb).astype(dtype)
        got = uma.matmul(uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda"))
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
        assert np.asarray(got).shape == want.shape and str(got.device) == "cuda:0"
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=tol, atol=tol * 10)
    # transposed and sliced operands
    a = rng.standard_normal((40, 30)).astype(dtype)
    b = rng.standard_normal((50, 40)).astype(dtype)
    da, db = uma.asarray(a, device="cuda"), uma.asarray(b, device="cuda")
    want = a.T.astype(np.float64) @ b.T.astype(np.float64)
    np.testing.assert_allclose(np.asarray(uma.matmul(da.T, db.T)).astype(np.float64), want, rtol=tol, atol=tol * 10)
    want = a[::2, 1:].astype(np.float64) @ b[1:30, ::3].astype(np.float64)
    np.testing.assert_allclose(np.asarray(uma.matmul(da[::2, 1:], db[1:30, ::3])).astype(np.float64), want,
                               rtol=tol, atol=tol * 10)


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
    assert "cuda" not in uma.backends()
    with pytest.raises(RuntimeError, match="not available"):
        uma.function([], [], backend="cuda")


def _mlp(backend, n_in=20, n_hidden=32, n_out=5, seed=0):
    rng = np.random.default_rng(seed)
    sym = uma.sym
    W1 = uma.shared(rng.standard_normal((n_in, n_hidden)).astype(np.float32) * 0.1, "W1")
    b1 = uma.shared(np.zeros(n_hidden, np.float32), "b1")
    W2 = uma.shared(rng.standard_normal((n_hidden, n_out)).astype(np.float32) * 0.1, "W2")
    b2 = uma.shared(np.zeros(n_out, np.float32), "b2")
    params = [W1, b1, W2, b2]
    x = sym.matrix("x", dtype="float32", shape=(None, n_in))
    y = sym.vector("y", dtype="int64")
    logits = sym.relu(x @ W1 + b1) @ W2 + b2
    loss = sym.mean(sym.softmax_cross_entropy(logits, y))
    grads = uma.grad(loss, params)
    step = uma.function([x, y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)], backend=backend)
    return params, step


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
def test_train_example_on_cuda():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "uma.examples.train", "--backend", "cuda", "--epochs", "5"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    acc = float(r.stdout.split("test accuracy (cuda): ")[1].split()[0])
    assert acc > 0.9, r.stdout
