"""DLPack, all of it: import of hand-made (and malformed) capsules from the test-only producer
in _dlpack_producer.py, with the producer's deleter counted on every path, and export per the
Python Array API standard (`__dlpack__` keywords, flags, `__dlpack_device__`).

NumPy is the oracle for values: every imported view is compared with the NumPy view of the
same memory described the same way.
"""
import gc

import numpy as np
import pytest

import uma
from _dlpack_producer import (FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED, FLAG_READ_ONLY, KDL_BFLOAT, KDL_BOOL,
                              KDL_COMPLEX, KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_FLOAT, KDL_INT, KDL_OPAQUE, KDL_UINT,
                              NoKeywordProducer, Producer, SameCapsule, capsule_name, read_capsule)

VERSIONED = pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])


def import_(p, versioned, **kw):
    """uma.from_dlpack of a Producer, versioned or legacy."""
    p.legacy = not versioned
    return uma.from_dlpack(p, **kw)


def data_ptr(a):
    return a._data_ptr


# --------------------------------------------------------------------------- valid layouts


@VERSIONED
def test_null_strides_mean_c_contiguous(versioned):
    base = np.arange(24, dtype=np.float64)
    p = Producer(base, (2, 3, 4), None, "float64")
    a = import_(p, versioned)
    assert a.shape == (2, 3, 4)
    assert a.strides == (96, 32, 8)
    assert data_ptr(a) == base.ctypes.data
    np.testing.assert_array_equal(np.asarray(a), base.reshape(2, 3, 4))
    assert p.deleted == 0
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
def test_negative_strides_share_with_the_right_values(versioned):
    base = np.arange(12, dtype=np.int32)
    # element (0, 0) is base[11]; rows step back 4 elements, columns back 1: base[::-1].reshape(3, 4)
    p = Producer(base, (3, 4), (-4, -1), "int32", first_byte=11 * 4)
    a = import_(p, versioned)
    expected = base[::-1].reshape(3, 4)
    assert a.strides == expected.strides
    assert data_ptr(a) == expected.ctypes.data
    np.testing.assert_array_equal(np.asarray(a), expected)
    if versioned:  # writable: a write shows through in the producer's memory
        a[0, 1] = 100
        assert base[10] == 100
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
def test_zero_strides_broadcast(versioned):
    base = np.arange(4, dtype=np.float32)
    p = Producer(base, (3, 4), (0, 1), "float32")
    a = import_(p, versioned)
    assert a.strides == (0, 4)
    np.testing.assert_array_equal(np.asarray(a), np.broadcast_to(base, (3, 4)))
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
@pytest.mark.parametrize("byte_offset", [8, 24, 4096])
def test_nonzero_byte_offset_is_added(versioned, byte_offset):
    base = np.arange(10, dtype=np.float64)
    # data points byte_offset bytes before base[2]; data + byte_offset is the first element
    p = Producer(base, (4,), (2,), "float64", first_byte=16, byte_offset=byte_offset)
    a = import_(p, versioned)
    assert data_ptr(a) == base.ctypes.data + 16
    np.testing.assert_array_equal(np.asarray(a), base[2::2][:4])
    del a
    gc.collect()
    assert p.deleted == 1


def test_byte_offset_with_negative_strides_and_null_strides():
    base = np.arange(6, dtype=np.int16)
    p = Producer(base, (3,), (-2,), "int16", first_byte=10, byte_offset=6)
    np.testing.assert_array_equal(np.asarray(uma.from_dlpack(p)), base[::-2])
    q = Producer(base, (2, 2), None, "int16", first_byte=4, byte_offset=4)
    np.testing.assert_array_equal(np.asarray(uma.from_dlpack(q)), base[2:].reshape(2, 2))
    gc.collect()
    assert (p.deleted, q.deleted) == (1, 1)


@VERSIONED
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5, 2)])
def test_size_zero_with_null_data(versioned, shape):
    p = Producer(None, shape, None, "float32", data=0)
    a = import_(p, versioned)
    assert a.shape == shape
    assert a.size == 0
    assert np.asarray(a).shape == shape
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
def test_zero_d(versioned):
    base = np.array([2.5, 7.25])
    p = Producer(base, (), None, "float64", first_byte=8)
    a = import_(p, versioned)
    assert a.shape == () and a.ndim == 0
    assert a.item() == 7.25
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
def test_bool_code_8_bits_is_bool(versioned):
    base = np.array([1, 0, 1, 1], dtype=np.uint8)
    p = Producer(base, (4,), (1,), code=KDL_BOOL, bits=8)
    a = import_(p, versioned)
    assert a.dtype == uma.bool_
    assert np.asarray(a).tolist() == [True, False, True, True]
    del a
    gc.collect()
    assert p.deleted == 1


@VERSIONED
def test_uint_code_8_bits_is_uint8(versioned):
    base = np.array([0, 1, 200, 255], dtype=np.uint8)
    p = Producer(base, (4,), (1,), code=KDL_UINT, bits=8)
    a = import_(p, versioned)
    assert a.dtype == uma.uint8
    assert np.asarray(a).tolist() == [0, 1, 200, 255]
    del a
    gc.collect()
    assert p.deleted == 1


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                   "float16", "float32", "float64", "complex64", "complex128"])
def test_every_code_maps_to_the_dtype_numpy_gives(dtype):
    base = (np.arange(6) % 3).astype(dtype)
    a = uma.from_dlpack(Producer(base, (2, 3), (3, 1), dtype))
    assert np.asarray(a).dtype == base.dtype
    np.testing.assert_array_equal(np.asarray(a), base.reshape(2, 3))


def test_bfloat16_code():
    mld = pytest.importorskip("ml_dtypes")
    base = np.array([1.5, -2.0, 3.0], dtype=mld.bfloat16)
    a = uma.from_dlpack(Producer(base, (3,), (1,), code=KDL_BFLOAT, bits=16))
    assert a.dtype == uma.bfloat16
    np.testing.assert_array_equal(np.asarray(a).astype(np.float32), base.astype(np.float32))


def test_cuda_host_memory_is_cpu_memory():
    base = np.arange(3.0)
    a = uma.from_dlpack(Producer(base, (3,), (1,), "float64", device=(KDL_CUDA_HOST, 0)))
    assert str(a.device) == "cpu"
    assert data_ptr(a) == base.ctypes.data


def test_newer_minor_version_is_accepted():
    base = np.arange(3.0)
    a = uma.from_dlpack(Producer(base, (3,), (1,), "float64", version=(1, 9)))
    np.testing.assert_array_equal(np.asarray(a), base)


# --------------------------------------------------------------------------- rejections

BASE = np.arange(64, dtype=np.float32)

# id -> (producer keywords, versioned-only?, expected exception, message fragment)
BAD = {
    "sub-byte int4": (dict(shape=(4,), strides=(1,), code=KDL_INT, bits=4), False, TypeError, "bits=4"),
    "sub-byte uint1": (dict(shape=(4,), strides=(1,), code=KDL_UINT, bits=1), False, TypeError, "bits=1"),
    "sub-byte bool1": (dict(shape=(4,), strides=(1,), code=KDL_BOOL, bits=1), False, TypeError, "bits=1"),
    "sub-byte padded flag": (dict(shape=(4,), strides=(1,), dtype="uint8", flags=FLAG_IS_SUBBYTE_TYPE_PADDED), True,
                             TypeError, "sub-byte"),
    "opaque handle": (dict(shape=(4,), strides=(1,), code=KDL_OPAQUE, bits=64), False, TypeError, "code=3"),
    "unknown code 99": (dict(shape=(4,), strides=(1,), code=99, bits=32), False, TypeError, "code=99"),
    "float 8 bits": (dict(shape=(4,), strides=(1,), code=KDL_FLOAT, bits=8), False, TypeError, "bits=8"),
    "bfloat 32 bits": (dict(shape=(4,), strides=(1,), code=KDL_BFLOAT, bits=32), False, TypeError, "bits=32"),
    "complex 32 bits": (dict(shape=(4,), strides=(1,), code=KDL_COMPLEX, bits=32), False, TypeError, "bits=32"),
    "lanes 2": (dict(shape=(4,), strides=(1,), dtype="float32", lanes=2), False, TypeError, "lanes=2"),
    "lanes 4": (dict(shape=(4,), strides=(1,), dtype="float32", lanes=4), False, TypeError, "lanes=4"),
    "lanes 0": (dict(shape=(4,), strides=(1,), dtype="float32", lanes=0), False, TypeError, "lanes=0"),
    "major 0": (dict(shape=(4,), strides=(1,), dtype="float32", version=(0, 8)), True, BufferError, "major version 0"),
    "major 2": (dict(shape=(4,), strides=(1,), dtype="float32", version=(2, 0)), True, BufferError, "major version 2"),
    "negative shape": (dict(shape=(-1,), strides=(1,), dtype="float32"), False, ValueError, "negative"),
    "negative shape 2-d": (dict(shape=(2, -3), strides=(3, 1), dtype="float32"), False, ValueError, "negative"),
    "shape product overflows": (dict(shape=(2**62, 2**62), strides=(1, 1), dtype="float32"), False, ValueError, "big"),
    "shape product overflows int64 by 1": (dict(shape=(2**32, 2**31), strides=None, dtype="uint8"), False, ValueError,
                                           "big"),
    "stride times itemsize overflows": (dict(shape=(4,), strides=(2**62,), dtype="float32"), False, ValueError,
                                        "overflow"),
    "negative stride times itemsize overflows": (dict(shape=(4,), strides=(-(2**62),), dtype="float32"), False,
                                                 ValueError, "overflow"),
    "extent beyond int64": (dict(shape=(5,), strides=(2**60,), dtype="float32"), False, ValueError, "address"),
    "extent beyond int64 over two dims": (dict(shape=(3, 3), strides=(2**59, 2**59), dtype="float64"), False,
                                          ValueError, "address"),
    "NULL data with size > 0": (dict(shape=(4,), strides=(1,), dtype="float32", data=0), False, ValueError, "NULL"),
    "NULL data 0-d": (dict(shape=(), strides=None, dtype="float32", data=0), False, ValueError, "NULL"),
    "negative ndim": (dict(shape=(4,), strides=(1,), dtype="float32", ndim=-1), False, ValueError, "ndim"),
    "ndim 1000": (dict(shape=(4,), strides=(1,), dtype="float32", ndim=1000), False, ValueError, "ndim"),
    "NULL shape with ndim 1": (dict(shape=(4,), strides=(1,), dtype="float32", null_shape=True), False, ValueError,
                               "shape"),
    "byte_offset beyond int64": (dict(shape=(4,), strides=(1,), dtype="float32", byte_offset=2**63 + 8, data=8),
                                 False, ValueError, "byte_offset"),
    "byte_offset 2**63-1 past the address space": (dict(shape=(4,), strides=(1,), dtype="float32",
                                                        byte_offset=2**63 - 1, data=BASE.ctypes.data), False,
                                                   ValueError, "byte_offset"),
    "data + byte_offset wraps to a low address": (dict(shape=(4,), strides=(1,), dtype="float32", byte_offset=0x2000,
                                                       data=2**64 - 0x1000), False, ValueError, "byte_offset"),
    "negative strides reach below address 0": (dict(shape=(3,), strides=(-4,), dtype="int16", data=0x8), False,
                                               ValueError, "address space"),
    "elements past address 2**63": (dict(shape=(4,), strides=(16,), dtype="float32", data=2**63 - 64), False,
                                    ValueError, "address space"),
    "unknown device type": (dict(shape=(4,), strides=(1,), dtype="float32", device=(99, 0)), False, RuntimeError,
                            "99"),
    "cuda device in a cpu build": (dict(shape=(4,), strides=(1,), dtype="float32", device=(KDL_CUDA, 0)), False,
                                   RuntimeError, "cuda"),
}


def _bad_cases_gen():
    for name, (kw, versioned_only, exc, frag) in BAD.items():
        for versioned in ([True] if versioned_only else [True, False]):
            marks = []
            if name == "cuda device in a cpu build" and uma.cuda.is_available():
                # With a GPU a (kDLCUDA, 0) capsule is a valid import: tested in test_cuda.py.
                marks = [pytest.mark.skip(reason="a GPU is usable: cuda capsules import (test_cuda.py)")]
            yield pytest.param(kw, versioned, exc, frag, marks=marks,
                               id=f"{name}-{'versioned' if versioned else 'legacy'}")


@pytest.mark.parametrize("kw,versioned,exc,frag", list(_bad_cases_gen()))
@pytest.mark.parametrize("entry", ["from_dlpack", "asarray", "from_dlpack copy=True"])
def test_malformed_capsule_clear_error_and_deleter_called_once(kw, versioned, exc, frag, entry):
    kw = dict(kw)
    shape, strides = kw.pop("shape"), kw.pop("strides")
    p = Producer(BASE, shape, strides, **kw)
    p.legacy = not versioned
    with pytest.raises(exc, match=None) as info:
        if entry == "from_dlpack":
            uma.from_dlpack(p)
        elif entry == "asarray":
            uma.asarray(p)
        else:
            uma.from_dlpack(p, copy=True)
    assert frag.lower() in str(info.value).lower(), str(info.value)
    # The consumer took ownership (renamed the capsule) and released it exactly once, at once.
    assert capsule_name(p.capsules[-1]) == ("used_dltensor_versioned" if versioned else "used_dltensor")
    assert p.deleted == 1
    del info
    gc.collect()
    assert p.deleted == 1


def test_major_version_mismatch_is_copy_error_too():
    # uma.CopyError is both a BufferError and a ValueError: either convention catches it.
    p = Producer(BASE, (4,), (1,), "float32", version=(2, 0))
    with pytest.raises(uma.CopyError):
        uma.from_dlpack(p)
    assert p.deleted == 1


@VERSIONED
def test_null_deleter_is_never_called(versioned):
    base = np.arange(4.0)
    a = import_(Producer(base, (4,), (1,), "float64", null_deleter=True), versioned)
    np.testing.assert_array_equal(np.asarray(a), base)
    del a  # releasing must not call a NULL function pointer
    gc.collect()
    with pytest.raises(TypeError):
        import_(Producer(base, (4,), (1,), code=99, bits=64, null_deleter=True), versioned)


@VERSIONED
def test_capsule_consumed_twice_raises(versioned):
    base = np.arange(4.0)
    p = Producer(base, (4,), (1,), "float64")
    cap = p.capsule(versioned)
    src = SameCapsule(cap)
    a = uma.from_dlpack(src)
    assert capsule_name(cap).startswith("used_")
    with pytest.raises(TypeError, match="unconsumed"):
        uma.from_dlpack(src)
    with pytest.raises(TypeError, match="unconsumed"):
        uma.asarray(src)
    np.testing.assert_array_equal(np.asarray(a), base)  # the first import is unharmed
    assert p.deleted == 0
    del a, src, cap
    gc.collect()
    assert p.deleted == 1


def test_unconsumed_capsule_is_released_by_its_destructor():
    # Control for the producer itself: a capsule nobody consumed calls the deleter once.
    p = Producer(np.arange(3.0), (3,), (1,), "float64")
    cap = p.capsule(True)
    p.capsules.clear()
    del cap
    gc.collect()
    assert p.deleted == 1


@pytest.mark.parametrize("kind", ["not a capsule", "capsule of another name"])
def test_dlpack_returning_garbage_is_type_error(kind):
    import datetime

    class Bad:
        def __dlpack__(self, **kw):
            return 42 if kind == "not a capsule" else datetime.datetime_CAPI  # a capsule, but not DLPack's

    with pytest.raises(TypeError, match="dltensor"):
        uma.from_dlpack(Bad())
    assert capsule_name(datetime.datetime_CAPI) == "datetime.datetime_CAPI"  # left alone


def test_success_path_deleter_once_after_the_last_view():
    base = np.arange(12.0)
    p = Producer(base, (3, 4), (4, 1), "float64")
    a = uma.from_dlpack(p)
    v = a[1:, ::2]
    t = a.T
    del a
    gc.collect()
    assert p.deleted == 0  # views keep the import alive
    np.testing.assert_array_equal(np.asarray(v), base.reshape(3, 4)[1:, ::2])
    del v
    gc.collect()
    assert p.deleted == 0
    del t
    gc.collect()
    assert p.deleted == 1


@pytest.mark.parametrize("how", ["copy=True", "dtype conversion", "unaligned copy"])
def test_copy_paths_release_the_capsule_at_once(how):
    base = np.arange(16, dtype=np.float64)
    if how == "unaligned copy":
        p = Producer(base, (3,), (1,), "float64", first_byte=4)  # data + offset not a multiple of 8
        a = uma.from_dlpack(p)
        expected = np.frombuffer(base.tobytes()[4:28], dtype=np.float64)
    elif how == "copy=True":
        p = Producer(base, (4,), (1,), "float64")
        a = uma.from_dlpack(p, copy=True)
        expected = base[:4]
    else:
        p = Producer(base, (4,), (1,), "float64")
        a = uma.asarray(p, dtype=uma.float32)
        expected = base[:4].astype(np.float32)
    assert p.deleted == 1  # nothing of the capsule is kept by a copy
    assert data_ptr(a) != base.ctypes.data
    np.testing.assert_array_equal(np.asarray(a), expected)
    assert a.writable


def test_copy_false_impossible_is_copy_error_and_deleter_once():
    base = np.arange(8, dtype=np.float64)
    p = Producer(base, (3,), (1,), "float64", first_byte=4)
    with pytest.raises(uma.CopyError, match="aligned"):
        uma.from_dlpack(p, copy=False)
    assert p.deleted == 1


# --------------------------------------------------------------------------- read-only, legacy, keywords


def test_read_only_flag_is_honoured():
    base = np.arange(4.0)
    p = Producer(base, (4,), (1,), "float64", flags=FLAG_READ_ONLY)
    a = uma.from_dlpack(p)
    assert not a.writable
    with pytest.raises(ValueError):
        a[0] = 5.0
    with pytest.raises(ValueError):
        a += 1
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not np.asarray(a).flags.writeable  # and it stays read-only on export
    c = uma.from_dlpack(p, copy=True)
    assert c.writable
    c[0] = 9.0
    assert base[0] == 0.0


def test_is_copied_flag_from_producer_is_harmless():
    base = np.arange(3.0)
    a = uma.from_dlpack(Producer(base, (3,), (1,), "float64", flags=FLAG_IS_COPIED))
    assert a.writable and data_ptr(a) == base.ctypes.data


def test_legacy_import_is_read_only_and_copy_true_writable():
    base = np.arange(4.0)
    p = Producer(base, (4,), (1,), "float64", legacy=True)
    a = uma.from_dlpack(p)
    assert p.calls[-1]["max_version"] == (1, 1)  # asked for versioned, got legacy
    assert not a.writable
    assert data_ptr(a) == base.ctypes.data
    with pytest.raises(ValueError):
        a[1] = 0.0
    b = uma.from_dlpack(p, copy=False)  # sharing read-only is not a copy
    assert not b.writable and data_ptr(b) == base.ctypes.data
    c = uma.from_dlpack(p, copy=True)
    assert c.writable and data_ptr(c) != base.ctypes.data
    del a, b, c
    gc.collect()
    assert p.deleted == 3


def test_max_version_fallback_for_a_dlpack_without_arguments():
    base = np.arange(5, dtype=np.int64)
    inner = Producer(base, (5,), (1,), "int64")
    src = NoKeywordProducer(inner)
    a = uma.from_dlpack(src)
    assert src.calls == 1  # the keyword call failed with TypeError before reaching the body
    np.testing.assert_array_equal(np.asarray(a), base)
    assert not a.writable  # legacy capsule -> read-only
    b = uma.asarray(src)
    assert src.calls == 2 and data_ptr(b) == base.ctypes.data
    del a, b
    gc.collect()
    assert inner.deleted == 2


def test_first_call_passes_max_version_1_1_only():
    p = Producer(np.arange(2.0), (2,), (1,), "float64")
    uma.from_dlpack(p)
    assert p.calls == [{"stream": None, "max_version": (1, 1), "dl_device": None, "copy": None}]


def test_other_errors_from_the_producer_are_not_swallowed():
    class Refuses:
        calls = 0

        def __dlpack__(self, **kw):
            Refuses.calls += 1
            raise BufferError("cannot export this")

    with pytest.raises(BufferError, match="cannot export"):
        uma.from_dlpack(Refuses())
    assert Refuses.calls == 1  # no retry without keywords for a non-TypeError


def test_type_error_in_both_calls_propagates():
    class AlwaysTypeError:
        def __dlpack__(self, **kw):
            raise TypeError("unsupported dtype")

    with pytest.raises(TypeError, match="unsupported dtype"):
        uma.from_dlpack(AlwaysTypeError())


def test_from_dlpack_of_object_without_dlpack():
    with pytest.raises(TypeError, match="__dlpack__"):
        uma.from_dlpack([1, 2, 3])


# --------------------------------------------------------------------------- export


def make(layout="contiguous", dtype="float64", readonly=False):
    src = np.arange(12, dtype=dtype).reshape(3, 4)
    if readonly:
        src.flags.writeable = False
    a = uma.asarray(src)
    return {"contiguous": a, "transposed": a.T, "negative": a[::-1, ::-2], "sliced": a[1:, 1:3], "0-d": a[1, 2],
            "size-0": a[:0]}[layout]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative", "sliced", "0-d", "size-0"])
@pytest.mark.parametrize("max_version", [None, (0, 9), (1, 0), (1, 1), (1, 7), (2, 0)])
def test_export_capsule_kind_and_fields(layout, max_version):
    a = make(layout)
    cap = a.__dlpack__() if max_version is None else a.__dlpack__(max_version=max_version)
    info = read_capsule(cap)
    versioned = max_version is not None and max_version[0] >= 1
    assert info["name"] == ("dltensor_versioned" if versioned else "dltensor")
    if versioned:
        assert info["version"] == (1, 1)
        assert info["flags"] == 0
    assert info["device"] == (KDL_CPU, 0)
    assert info["dtype"] == (KDL_FLOAT, 64, 1)
    assert info["shape"] == a.shape
    if a.ndim:
        assert info["strides"] == tuple(s // 8 for s in a.strides)  # always filled in, in elements
    assert info["byte_offset"] == 0
    assert info["data"] == (0 if a.size == 0 else data_ptr(a))


def test_export_read_only():
    ro = make(readonly=True)
    info = read_capsule(ro.__dlpack__(max_version=(1, 0)))
    assert info["flags"] == FLAG_READ_ONLY
    # the legacy struct cannot say read-only; the consumer chose it, so the error says so
    with pytest.raises(BufferError, match=r"read-only.*the consumer asked for one.*copy=True"):
        ro.__dlpack__()
    with pytest.raises(BufferError):
        ro.__dlpack__(max_version=(0, 5))
    # copy=True makes a writable copy, which the legacy struct can carry
    assert capsule_name(ro.__dlpack__(copy=True)) == "dltensor"


@pytest.mark.parametrize("readonly", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "negative", "0-d"])
def test_export_copy_true_sets_is_copied(readonly, layout):
    a = make(layout, readonly=readonly)
    cap = a.__dlpack__(max_version=(1, 1), copy=True)
    info = read_capsule(cap)
    assert info["flags"] == FLAG_IS_COPIED  # a writable copy: IS_COPIED, never READ_ONLY
    assert info["data"] != data_ptr(a)
    before = np.array(np.asarray(a))
    b = uma.from_dlpack(SameCapsule(cap))
    assert b.writable
    np.testing.assert_array_equal(np.asarray(b), before)
    b[...] = -1  # writing the copy leaves the source alone
    np.testing.assert_array_equal(np.asarray(a), before)


@pytest.mark.parametrize("copy", [None, False])
def test_export_copy_none_false_share(copy):
    a = make("sliced")
    info = read_capsule(a.__dlpack__(max_version=(1, 1), copy=copy))
    assert info["flags"] == 0
    assert info["data"] == data_ptr(a)


@pytest.mark.parametrize("dl_device", [None, (KDL_CPU, 0)])
def test_export_dl_device_cpu(dl_device):
    a = make()
    info = read_capsule(a.__dlpack__(max_version=(1, 1), dl_device=dl_device))
    assert info["device"] == (KDL_CPU, 0) and info["data"] == data_ptr(a)


@pytest.mark.parametrize("dl_device", [(KDL_CUDA, 0), (KDL_CPU, 1), (KDL_CUDA_HOST, 0), (13, 0), (99, 0)])
@pytest.mark.parametrize("copy", [None, False, True])
def test_export_dl_device_unservable_buffer_error(dl_device, copy):
    with pytest.raises(BufferError, match="device"):
        make().__dlpack__(max_version=(1, 1), dl_device=dl_device, copy=copy)


@pytest.mark.parametrize("stream", [0, 1, 2, -1, 12345])
def test_export_stream_must_be_none_on_cpu(stream):
    with pytest.raises(BufferError, match="stream"):
        make().__dlpack__(stream=stream)
    with pytest.raises(BufferError, match="stream"):
        make().__dlpack__(stream=stream, max_version=(1, 1))


@pytest.mark.parametrize("kw", [dict(max_version=(1,)), dict(max_version=5), dict(max_version="1.1"),
                                dict(max_version=(1, "1")), dict(dl_device="cpu"), dict(dl_device=(1,)),
                                dict(dl_device=[1, 0, 0]), dict(copy=1), dict(copy="yes")],
                         ids=lambda kw: repr(kw))
def test_export_malformed_keywords_type_error(kw):
    with pytest.raises(TypeError):
        make().__dlpack__(**kw)


def test_export_keywords_are_keyword_only():
    with pytest.raises(TypeError):
        make().__dlpack__(None)


def test_dlpack_device():
    a = make()
    dev = a.__dlpack_device__()
    assert dev == (KDL_CPU, 0)
    assert all(isinstance(x, int) for x in dev)
    assert make("size-0").__dlpack_device__() == (KDL_CPU, 0)
    assert read_capsule(a.__dlpack__(max_version=(1, 1)))["device"] == dev


def test_exported_capsule_unconsumed_releases_the_array(mem_baseline):
    a = uma.zeros((1000,), dtype=uma.float64)
    before = uma.memory_stats()["active_bytes"]
    caps = [a.__dlpack__(), a.__dlpack__(max_version=(1, 1)), a.__dlpack__(max_version=(1, 1), copy=True)]
    del a
    del caps
    gc.collect()
    assert uma.memory_stats()["active_bytes"] < before


@pytest.mark.parametrize("max_version", [None, (1, 1)])
def test_round_trip_through_uma_own_capsules(max_version):
    src = make("negative")
    kw = {} if max_version is None else {"max_version": max_version}

    class Wrap:
        def __dlpack__(self, **k):
            return src.__dlpack__(**kw)

    b = uma.from_dlpack(Wrap())
    assert data_ptr(b) == data_ptr(src) and b.strides == src.strides
    assert b.writable == (max_version is not None)  # legacy -> read-only (DESIGN.md)
    np.testing.assert_array_equal(np.asarray(b), np.asarray(src))
