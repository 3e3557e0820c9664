"""uma.load / uma.save: .npy and .safetensors without copies.

Oracles: NumPy (np.save / np.load) for .npy and the `safetensors` package (the reference
implementation's bindings: safetensors.numpy, safetensors.torch for BF16) for .safetensors,
both directions, bit-exact. Zero-copy is asserted through adoption, read-only results, shared
mappings and memory_stats; malformed files must raise ValueError and leak nothing.
"""
import io
import os
import pathlib
import re
import stat
import struct
import warnings

import numpy as np
import pytest

import uma
from conftest import NUMPY_DTYPES, np_dtype, stats, uma_dtype

sn = pytest.importorskip("safetensors.numpy")
from safetensors import safe_open  # noqa: E402

ST_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64", "complex64"]
ST_NAMES = {"bool": "BOOL", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
            "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16", "bfloat16": "BF16",
            "float32": "F32", "float64": "F64", "complex64": "C64"}


def bits(dtype, shape, rng):
    """An array of `dtype` with random bit patterns (NaN payloads included); bool 0/1."""
    dt = np_dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


def same_bits(u, expected):
    """A uma array holds exactly `expected`'s dtype, shape and bytes."""
    assert isinstance(u, uma.Array)
    got = np.asarray(u)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()


def addr(u):
    return np.asarray(u).__array_interface__["data"][0]


def np_save_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


# --------------------------------------------------------------------------- .npy round trips

@pytest.mark.parametrize("mmap", [True, False, None])
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_npy_numpy_to_uma(tmp_path, rng, dtype, mmap, mem_baseline):
    ref = bits(dtype, (3, 5), rng)
    p = tmp_path / "a.npy"
    np.save(p, ref)
    a = uma.load(p, mmap=mmap)
    same_bits(a, ref)
    assert a.dtype == uma_dtype(dtype)
    shared = mmap is not False  # numpy.save's files can always be shared
    assert a.is_adopted is shared
    assert np.asarray(a).flags.writeable is (not shared)
    if shared:
        assert stats()["adopted_bytes"] == mem_baseline["adopted_bytes"] + os.path.getsize(p)
    del a


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_npy_uma_to_numpy_byte_identical(tmp_path, rng, dtype, mem_baseline):
    ref = bits(dtype, (4, 3), rng)
    p = tmp_path / "b.npy"
    uma.save(p, uma.asarray(ref))
    np.testing.assert_array_equal(np.load(p).view(np.uint8), ref.view(np.uint8))
    assert p.read_bytes() == np_save_bytes(ref)  # exactly what np.save writes


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (7,), (2, 3, 4)])
@pytest.mark.parametrize("mmap", [True, False])
def test_npy_0d_and_size0(tmp_path, rng, shape, mmap, mem_baseline):
    ref = bits("float32", shape, rng)
    p = tmp_path / "z.npy"
    np.save(p, ref)
    a = uma.load(p, mmap=mmap)
    same_bits(a, ref)
    q = tmp_path / "z2.npy"
    uma.save(q, a)
    assert q.read_bytes() == np_save_bytes(ref)
    del a


@pytest.mark.parametrize("mmap", [True, False])
def test_npy_fortran_order_is_a_zero_copy_view(tmp_path, rng, mmap, mem_baseline):
    ref = np.asfortranarray(bits("int32", (3, 4, 5), rng))
    p = tmp_path / "f.npy"
    np.save(p, ref)
    assert b"'fortran_order': True" in p.read_bytes()[:128]
    a = uma.load(p, mmap=mmap)
    same_bits(a, ref)
    assert a.strides == ref.strides  # F-contiguous, no transpose copy
    assert a.is_adopted is mmap
    if mmap:  # the view starts at the data in the mapping: nothing was copied
        hdr = os.path.getsize(p) - ref.nbytes
        assert stats()["adopted_bytes"] - mem_baseline["adopted_bytes"] == hdr + ref.nbytes
    # Saving an F-contiguous array writes Fortran order, exactly as np.save does.
    q = tmp_path / "f2.npy"
    uma.save(q, a)
    assert q.read_bytes() == np_save_bytes(ref)
    t = uma.asarray(np.ascontiguousarray(ref.T)).T  # F-contiguous uma view
    uma.save(q, t)
    assert q.read_bytes() == np_save_bytes(ref)
    del a, t


def test_npy_save_strided_and_foreign_values(tmp_path, rng, mem_baseline):
    ref = bits("float64", (6, 8), rng)
    p = tmp_path / "s.npy"
    view = uma.asarray(ref)[::2, ::-3]
    uma.save(p, view)
    assert p.read_bytes() == np_save_bytes(ref[::2, ::-3])
    uma.save(p, ref)  # a NumPy array
    assert p.read_bytes() == np_save_bytes(ref)
    uma.save(p, [[1, 2], [3, 4]])  # anything asarray accepts
    np.testing.assert_array_equal(np.load(p), np.asarray(uma.asarray([[1, 2], [3, 4]])))
    uma.save(str(p), 2.5)
    assert np.load(p) == 2.5 and np.load(p).shape == ()


def test_npy_big_endian(tmp_path, rng, mem_baseline):
    ref = bits("float64", (5,), rng).astype(">f8")
    p = tmp_path / "be.npy"
    np.save(p, ref)
    with pytest.raises(uma.CopyError, match="big-endian") as e:
        uma.load(p, mmap=True)
    assert isinstance(e.value, ValueError) and isinstance(e.value, BufferError)
    for a in (uma.load(p, mmap=False), uma.load(p)):  # the default reads what it cannot share
        assert a.dtype == uma.float64 and not a.is_adopted and np.asarray(a).flags.writeable
        same_bits(a, ref.astype("<f8"))
    c = np.array([1 + 2j, -3.5 - 0.25j], dtype=">c8")
    np.save(p, c)
    same_bits(uma.load(p, mmap=False), c.astype("<c8"))
    np.save(p, np.zeros(0, ">i4"))  # nothing to swap: shared
    assert uma.load(p).shape == (0,)
    del a


def test_npy_mmap_results_are_read_only(tmp_path, mem_baseline):
    p = tmp_path / "r.npy"
    np.save(p, np.arange(6.0))
    a = uma.load(p)
    with pytest.raises(ValueError):
        a[0] = 1.0
    with pytest.raises(ValueError):
        a += 1.0
    assert (np.load(p) == np.arange(6.0)).all()
    b = uma.load(p, mmap=False)
    b[0] = 7.0
    assert np.asarray(b)[0] == 7.0 and not b.is_adopted
    assert np.load(p)[0] == 0.0
    del a, b


def test_npy_unsupported_dtypes(tmp_path, mem_baseline):
    p = tmp_path / "u.npy"
    for v in (np.array(["ab"]), np.array([b"ab"]), np.array([1], dtype=object),
              np.zeros(2, dtype="M8[s]"), np.zeros(2, dtype=[("a", "<i4")]), np.zeros(2, np.longdouble)):
        np.save(p, v, allow_pickle=True)
        with pytest.raises(TypeError, match="unsupported .npy dtype"):
            uma.load(p)
    with pytest.raises(TypeError, match="bfloat16"):
        uma.save(p, uma.zeros(3, dtype=uma.bfloat16))


# --------------------------------------------------------------------------- .safetensors

def _st_oracle_save(tensors, path, metadata=None):
    """safetensors' own writer: numpy for everything but bfloat16, which needs torch."""
    if any(np.asarray(v).dtype.name == "bfloat16" for v in tensors.values()):
        torch = pytest.importorskip("torch")
        import safetensors.torch as stt
        tt = {k: torch.from_numpy(np.asarray(v).view(np.int16)).view(torch.bfloat16)
              if np.asarray(v).dtype.name == "bfloat16" else torch.from_numpy(np.ascontiguousarray(v))
              for k, v in tensors.items()}
        stt.save_file(tt, str(path), metadata=metadata)
    else:
        sn.save_file(tensors, str(path), metadata=metadata)


def _st_oracle_load(path):
    with safe_open(str(path), "pt" if _has_bf16(path) else "numpy") as f:
        out = {}
        for k in f.keys():
            t = f.get_tensor(k)
            if not isinstance(t, np.ndarray):
                import torch
                t = (t.view(torch.int16).numpy().view(np_dtype("bfloat16")) if t.dtype == torch.bfloat16
                     else t.numpy())
            out[k] = t
        return out


def _has_bf16(path):
    return b'"BF16"' in pathlib.Path(path).read_bytes()[:4096]


@pytest.mark.parametrize("mmap", [True, False, None])
@pytest.mark.parametrize("dtype", ST_DTYPES)
def test_safetensors_reference_to_uma(tmp_path, rng, dtype, mmap, mem_baseline):
    ref = {"x": bits(dtype, (3, 4), rng), "s": bits(dtype, (), rng), "e": bits(dtype, (0, 2), rng)}
    p = tmp_path / "a.safetensors"
    _st_oracle_save(ref, p)
    d = uma.load(p, mmap=mmap)
    assert set(d) == set(ref)
    for k in ref:
        same_bits(d[k], ref[k])
        assert d[k].dtype == uma_dtype(dtype)
        assert d[k].is_adopted is (mmap is not False)  # the reference writer aligns every tensor
    del d


@pytest.mark.parametrize("dtype", ST_DTYPES)
def test_safetensors_uma_to_reference_byte_identical(tmp_path, rng, dtype, mem_baseline):
    ref = {"w": bits(dtype, (2, 3), rng), "b": bits(dtype, (5,), rng), "s": bits(dtype, (), rng)}
    p, q = tmp_path / "u.safetensors", tmp_path / "r.safetensors"
    uma.save(p, {k: uma.asarray(v) for k, v in ref.items()})
    back = _st_oracle_load(p)
    assert set(back) == set(ref)
    for k in ref:
        assert back[k].dtype == ref[k].dtype and back[k].shape == ref[k].shape
        assert back[k].tobytes() == ref[k].tobytes()
    _st_oracle_save(ref, q)
    assert p.read_bytes() == q.read_bytes()


def test_safetensors_mixed_dtypes_order_and_metadata(tmp_path, rng, mem_baseline):
    ref = {name: bits(dt, (3,) if i % 2 else (2, 2), rng)
           for i, (name, dt) in enumerate(zip("zyxwvutsrqpo", ["bool", "uint8", "int16", "float16", "int32",
                                                               "float32", "complex64", "float64", "int64",
                                                               "uint64", "uint32", "int8"]))}
    ref["empty"] = np.zeros((0,), np.float64)
    p, q = tmp_path / "u.safetensors", tmp_path / "r.safetensors"
    meta = {"format": "np", "note": "caf\u00e9 \"quoted\"\n\ttab\x01"}
    uma.save(p, ref, metadata={"format": "np"})
    sn.save_file(ref, str(q), metadata={"format": "np"})
    assert p.read_bytes() == q.read_bytes()  # same tensor order, offsets, JSON and padding
    uma.save(p, ref, metadata=meta)
    with safe_open(str(p), "numpy") as f:
        assert f.metadata() == meta
    sn.save_file(ref, str(q), metadata=meta)
    d, m = uma.load(q, metadata=True)
    assert m == meta
    for k in ref:
        same_bits(d[k], ref[k])
    # Every tensor of a reference-written file is aligned, so mmap shares all of them.
    assert all(d[k].is_adopted for k in d)
    _, m = uma.load(tmp_path / "u.safetensors", metadata=True)
    assert m == meta
    sn.save_file({"a": np.zeros(2)}, str(q))
    assert uma.load(q, metadata=True)[1] is None
    del d


def test_safetensors_one_shared_mapping(tmp_path, rng, mem_baseline):
    ref = {"a": bits("float32", (16, 16), rng), "b": bits("int64", (10,), rng)}
    p = tmp_path / "m.safetensors"
    sn.save_file(ref, str(p))
    size = os.path.getsize(p)
    base = mem_baseline["adopted_bytes"]
    d = uma.load(p)
    assert stats()["adopted_bytes"] == base + size  # one mapping for both tensors
    a, b = d["a"], d["b"]
    # Both are views of one mapping: their addresses differ by their offsets in the file.
    header = 8 + struct.unpack("<Q", p.read_bytes()[:8])[0]
    raw = p.read_bytes()
    off_a = raw.index(ref["a"].tobytes()) - header
    off_b = raw.index(ref["b"].tobytes()) - header
    assert addr(a) - addr(b) == off_a - off_b
    del d, b
    assert stats()["adopted_bytes"] == base + size  # `a` alone keeps the mapping alive
    same_bits(a, ref["a"])
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    del a
    assert stats()["adopted_bytes"] == base
    # mmap=False: pooled memory, one buffer per tensor, writable.
    before = stats()["active_bytes"]
    d = uma.load(p, mmap=False)
    assert stats()["active_bytes"] > before and stats()["adopted_bytes"] == base
    d["a"][0, 0] = 2.0
    assert not d["a"].is_adopted
    del d


def test_safetensors_unsupported(tmp_path, mem_baseline):
    p = tmp_path / "t.safetensors"
    with pytest.raises(TypeError, match="complex128"):
        uma.save(p, {"c": uma.zeros(2, dtype=uma.complex128)})
    assert not p.exists()
    with pytest.raises(TypeError, match="tensor names must be str"):
        uma.save(p, {1: uma.zeros(2)})
    with pytest.raises(TypeError, match="metadata must map str to str"):
        uma.save(p, {"a": uma.zeros(2)}, metadata={"k": 1})
    with pytest.raises(TypeError, match="metadata must be a dict"):
        uma.save(p, {"a": uma.zeros(2)}, metadata=[("k", "v")])
    with pytest.raises(ValueError, match="reserved"):
        uma.save(p, {"__metadata__": uma.zeros(2)})
    with pytest.raises(TypeError, match="ends with .npy"):
        uma.save(tmp_path / "x.npy", {"a": uma.zeros(2)})
    with pytest.raises(TypeError, match="holds a dict"):
        uma.save(p, uma.zeros(2))
    with pytest.raises(TypeError, match="metadata= is only"):
        uma.save(tmp_path / "x.npy", uma.zeros(2), metadata={"a": "b"})
    # An FP8 tensor is a well-formed file that uma cannot represent.
    hdr = b'{"f":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}'
    p.write_bytes(struct.pack("<Q", len(hdr)) + hdr + b"\0\0")
    with pytest.raises(TypeError, match="F8_E4M3"):
        uma.load(p)
    np.save(tmp_path / "n.npy", np.zeros(2))
    with pytest.raises(TypeError, match="metadata=True is for .safetensors"):
        uma.load(tmp_path / "n.npy", metadata=True)


def test_safetensors_unaligned_tensor(tmp_path, mem_baseline):
    # A crafted (valid) file whose F32 tensor starts at an odd offset: not shareable.
    hdr = b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}}'
    hdr += b" " * (-len(hdr) % 8)
    p = tmp_path / "odd.safetensors"
    vals = np.array([1.5, -2.0], "<f4")
    p.write_bytes(struct.pack("<Q", len(hdr)) + hdr + b"\x07" + vals.tobytes())
    assert sn.load_file(str(p))["a"][0] == 7  # the reference accepts it
    with pytest.raises(uma.CopyError, match="tensor 'b'.*not a multiple of its itemsize 4"):
        uma.load(p, mmap=True)
    for d in (uma.load(p, mmap=False), uma.load(p)):  # the default reads the file it cannot share
        same_bits(d["b"], vals)
        assert d["a"].tolist() == [7]
        assert not d["a"].is_adopted and not d["b"].is_adopted
    del d


# --------------------------------------------------------------------------- formats, paths, OS

def test_format_by_magic_and_paths(tmp_path, rng, mem_baseline):
    ref = bits("int16", (3,), rng)
    p = tmp_path / "noext"
    np.save(open(p, "wb"), ref)
    same_bits(uma.load(p), ref)
    same_bits(uma.load(str(p).encode()), ref)  # bytes paths
    sn.save_file({"k": ref}, str(tmp_path / "st.bin"))
    same_bits(uma.load(tmp_path / "st.bin")["k"], ref)
    uma.save(tmp_path / "st2.bin", {"k": ref})  # a dict picks safetensors whatever the name
    same_bits(uma.load(tmp_path / "st2.bin")["k"], ref)
    uma.save(tmp_path / "UPPER.NPY", ref)
    np.testing.assert_array_equal(np.load(tmp_path / "UPPER.NPY"), ref)
    (tmp_path / "junk").write_bytes(b"hello world, not an array")
    with pytest.raises(ValueError, match="not a .npy or .safetensors file"):
        uma.load(tmp_path / "junk")
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(ValueError):
        uma.load(tmp_path / "empty")
    with pytest.raises(TypeError):
        uma.load(123)


def test_os_errors(tmp_path, mem_baseline):
    with pytest.raises(FileNotFoundError) as e:
        uma.load(tmp_path / "missing.npy")
    assert e.value.filename == str(tmp_path / "missing.npy")
    with pytest.raises(FileNotFoundError):
        uma.load(tmp_path / "missing.safetensors")
    with pytest.raises(FileNotFoundError):
        uma.load(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        uma.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        uma.save(tmp_path / "no" / "dir.npy", uma.zeros(2))
    (tmp_path / "d").mkdir()
    for target in (tmp_path / "d", str(tmp_path / "d") + "/", str(tmp_path / "new") + "/"):
        with pytest.raises(IsADirectoryError) as e:  # as open(2) with O_CREAT, before writing
            uma.save(target, uma.zeros(2))
        assert e.value.filename == str(target)
    assert os.listdir(tmp_path / "d") == []
    (tmp_path / "d").rmdir()
    with pytest.raises(ValueError, match="not a regular file"):
        uma.load("/dev/null", mmap=False)
    with pytest.raises(ValueError, match="null byte"):
        uma.load("a\0b.npy")
    assert sorted(os.listdir(tmp_path)) == []  # no temporary files left behind


@pytest.mark.parametrize("ext", [".npy", ".safetensors"])
def test_save_writes_through_links_and_keeps_permissions_as_numpy_save(tmp_path, ext):
    """uma.save reaches the file numpy.save's open(2) reaches: a symbolic link (relative,
    absolute, dangling, chained) stays a link and its target gets the data; an existing file
    keeps its permission bits; a file numpy.save cannot open for writing is refused too."""
    value = {"t": uma.arange(3.0)} if ext == ".safetensors" else uma.arange(3.0)

    def loaded(p):
        out = uma.load(p, mmap=False)
        return np.asarray(out["t"] if ext == ".safetensors" else out)

    (tmp_path / "sub").mkdir()
    target = tmp_path / ("ckpt" + ext)
    links = {"relative": ("ckpt" + ext, tmp_path / ("latest" + ext)),
             "absolute": (str(target), tmp_path / ("abs" + ext)),
             "from a folder": ("../ckpt" + ext, tmp_path / "sub" / ("rel" + ext))}
    for how, (to, link) in links.items():
        target.write_bytes(b"old")
        os.symlink(to, link)
        uma.save(link, value)
        assert link.is_symlink(), how
        np.testing.assert_array_equal(loaded(target), np.arange(3.0), err_msg=how)
    os.symlink("latest" + ext, tmp_path / ("chain" + ext))
    uma.save(tmp_path / ("chain" + ext), value)
    assert (tmp_path / ("chain" + ext)).is_symlink() and (tmp_path / ("latest" + ext)).is_symlink()
    os.symlink("new" + ext, tmp_path / ("dangling" + ext))
    uma.save(tmp_path / ("dangling" + ext), value)
    np.testing.assert_array_equal(loaded(tmp_path / ("new" + ext)), np.arange(3.0))
    private = tmp_path / ("private" + ext)
    private.write_bytes(b"old")
    os.chmod(private, 0o600)
    uma.save(private, value)
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    locked = tmp_path / ("locked" + ext)
    locked.write_bytes(b"old")
    os.chmod(locked, 0o444)
    try:
        with open(locked, "wb"):  # what numpy.save does (as root it may write anyway)
            numpy_writes = True
    except PermissionError:
        numpy_writes = False
    if numpy_writes:
        uma.save(locked, value)
        np.testing.assert_array_equal(loaded(locked), np.arange(3.0))
    else:
        with pytest.raises(PermissionError):
            uma.save(locked, value)
        assert locked.read_bytes() == b"old"
    assert not [n for n in os.listdir(tmp_path) if "uma-tmp" in n]


def test_save_over_a_mapped_file(tmp_path, rng, mem_baseline):
    ref = bits("float64", (1000,), rng)
    p = tmp_path / "s.npy"
    np.save(p, ref)
    a = uma.load(p)
    uma.save(p, a[:3])  # replaces the file; `a` still reads the old, intact mapping
    same_bits(a, ref)
    same_bits(uma.load(p), ref[:3])
    d = {"w": ref}
    q = tmp_path / "s.safetensors"
    uma.save(q, d)
    m = uma.load(q)
    uma.save(q, {"w": m["w"][::2]})
    same_bits(m["w"], ref)
    same_bits(uma.load(q)["w"], ref[::2])
    assert sorted(os.listdir(tmp_path)) == ["s.npy", "s.safetensors"]
    del a, m


def test_bool_bytes_other_than_0_or_1_load_as_numpy_loads_them(tmp_path, mem_baseline):
    """A bool byte other than 0 or 1 is true, as NumPy reads it (np.load keeps the bytes): both
    loaders share or copy the bytes unchanged, and every op reads them as byte != 0."""
    raw = np.array([1, 0, 2], np.uint8)
    p = tmp_path / "b.npy"
    np.save(p, raw.view(np.bool_))
    want = np.load(p)
    for mmap in (True, False):
        a = uma.load(p, mmap=mmap)
        assert a.dtype.name == "bool"
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), raw)  # the bytes, unchanged
        np.testing.assert_array_equal(np.asarray(uma.logical_not(a)), np.logical_not(want))
        assert int(uma.sum(a)) == int(np.sum(want)) == 2
    q = tmp_path / "b.safetensors"
    hdr = b'{"t":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}'
    q.write_bytes(struct.pack("<Q", len(hdr)) + hdr + b"\x01\xff")
    for mmap in (True, False):
        t = uma.load(q, mmap=mmap)["t"]
        np.testing.assert_array_equal(np.asarray(t).view(np.uint8), [1, 255])
        np.testing.assert_array_equal(np.asarray(uma.equal(t, True)), [True, True])


# --------------------------------------------------------------------------- malformed files

def _npy(dict_text, data=b"", version=1):
    d = dict_text.encode()
    lenfield = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return b"\x93NUMPY" + bytes([version, 0]) + lenfield + d + data


_GOOD_DICT = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }".ljust(117) + "\n"  # data at byte 128
_GOOD_NPY = _npy(_GOOD_DICT, b"\0" * 32)


def _with_len(b, n):
    return b[:8] + struct.pack("<H", n) + b[10:]


NPY_BAD = {
    "truncated data": (_GOOD_NPY[:-1], "needs 32 data bytes but only 31"),
    "truncated header": (_GOOD_NPY[:40], "truncated header or lying length"),
    "truncated preamble": (_GOOD_NPY[:9], "truncated inside the header length"),
    "lying header length (long)": (_with_len(_GOOD_NPY, 200), "truncated header or lying length"),
    "lying header length (short)": (_with_len(_GOOD_NPY, 30), "invalid .npy header"),
    "shape bigger than the file": (_npy(_GOOD_DICT.replace("(2, 2)", "(2, 3)"), b"\0" * 32), "needs 48 data bytes"),
    "huge shape": (_npy(_GOOD_DICT.replace("(2, 2)", "(100000, 100000)"), b"\0" * 32),
                   "needs 80000000000 data bytes but only 32"),
    "overflowing shape": (_npy(_GOOD_DICT.replace("(2, 2)", "(4294967296, 4294967296)")), "too big"),
    "trailing bytes": (_GOOD_NPY + b"\0", "trailing bytes"),
    "bad magic": (b"\x93NUMPZ" + _GOOD_NPY[6:], "bad magic"),
    "bad version": (_GOOD_NPY[:6] + b"\x09\x00" + _GOOD_NPY[8:], "version 9.0"),
    "unknown descr": (_npy(_GOOD_DICT.replace("<f8", "<q8"), b"\0" * 32), "unknown descr '<q8'"),
    "garbage descr": (_npy(_GOOD_DICT.replace("<f8", "float64"), b"\0" * 32), "not a NumPy type string"),
    "missing key": (_npy("{'descr': '<f8', 'shape': (2, 2), }\n", b"\0" * 32), "missing key 'fortran_order'"),
    "extra key": (_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'x': 1}", b"\0" * 32),
                  "unexpected key 'x'"),
    "not a dict": (_npy("['descr', '<f8']", b"\0" * 32), "expected '{'"),
    "shape not a tuple": (_npy(_GOOD_DICT.replace("(2, 2)", "[2, 2]"), b"\0" * 32), "must be a tuple"),
    "negative shape": (_npy(_GOOD_DICT.replace("(2, 2)", "(-2, -2)"), b"\0" * 32),
                       "expected a non-negative integer for a 'shape' entry, found '-'"),
    "code in header": (_npy("{'descr': '<f8', 'fortran_order': __import__('os'), 'shape': (4,)}", b"\0" * 32),
                       "must be True or False"),
    "fortran_order a string": (_npy("{'descr': '<f8', 'fortran_order': 'yes', 'shape': (4,)}", b"\0" * 32),
                               "must be True or False, found the string 'yes' at byte 44"),
    "v2 lying length": (b"\x93NUMPY\x02\x00" + struct.pack("<I", 2 ** 31) + b"{}", "header length"),
}


def _st(header, data=b""):
    h = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(h)) + h + data


_T = '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
_U = '"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}'
_GOOD_ST = _st("{" + _T + "," + _U + "}", b"\0" * 16)

ST_BAD = {
    "truncated data": (_GOOD_ST[:-1], "past the end of the data section"),
    "truncated header": (_GOOD_ST[:30], "truncated header or lying length"),
    "truncated length": (_GOOD_ST[:5], "too short"),
    "lying header length (long)": (struct.pack("<Q", len(_GOOD_ST)) + _GOOD_ST[8:], "lying length"),
    "lying header length (short)": (struct.pack("<Q", 20) + _GOOD_ST[8:], "invalid safetensors header"),
    "huge header length": (struct.pack("<Q", 2 ** 63) + _GOOD_ST[8:], "limit"),
    "offsets past the end": (_st("{" + _T + ',"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', b"\0" * 8),
                             "past the end"),
    "offsets far past the end": (_st('{"a":{"dtype":"U8","shape":[1000000000000],'
                                     '"data_offsets":[0,1000000000000]}}', b"\0" * 8), "past the end"),
    "overlapping offsets": (_st("{" + _T + ',"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12),
                            "overlaps"),
    "same offsets twice": (_st("{" + _T + ',"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', b"\0" * 8),
                           "overlaps"),
    "gapped offsets": (_st("{" + _T + ',"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}}', b"\0" * 20),
                       "gap"),
    "gap at the start": (_st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12), "gap"),
    "trailing bytes": (_GOOD_ST + b"\0" * 8, "trailing bytes"),
    "shape exceeds offsets": (_st('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', b"\0" * 8),
                              "needs 12 bytes"),
    "overflowing shape": (_st('{"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,0]}}'),
                          "overflows"),
    "end before begin": (_st('{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}', b"\0" * 8),
                         "end before they begin"),
    "bad JSON: not an object": (_st("[" + _T + "]", b"\0" * 8), "must start with '{'"),
    "bad JSON: trailing comma": (_st("{" + _T + ",}", b"\0" * 8), "expected a string"),
    "bad JSON: unterminated": (_st("{" + _T, b"\0" * 8), "expected ',' or '}'"),
    "bad JSON: single quotes": (_st("{'a':1}"), "expected a string"),
    "bad JSON: float shape": (_st('{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', b"\0" * 8),
                              "must be an integer"),
    "bad JSON: negative offset": (_st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}}', b"\0" * 8),
                                  "negative"),
    "bad JSON: duplicate name": (_st("{" + _T + "," + _T + "}", b"\0" * 8), "duplicate tensor name"),
    "bad JSON: unknown field": (_st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":[]}}', b"\0" * 8),
                                "unknown field 'x'"),
    "bad JSON: missing field": (_st('{"a":{"dtype":"F32","data_offsets":[0,8]}}', b"\0" * 8),
                                "lacks the field 'shape'"),
    "bad JSON: invalid UTF-8": (_st(b'{"\xff":{}}'), "invalid UTF-8"),
    "bad JSON: metadata not strings": (_st('{"__metadata__":{"a":1},' + _T + "}", b"\0" * 8),
                                       "values must be strings"),
    "bad JSON: garbage after": (_st("{" + _T + "}x", b"\0" * 8), "after the header object"),
    "unknown dtype": (_st('{"a":{"dtype":"F128","shape":[2],"data_offsets":[0,8]}}', b"\0" * 8),
                      "unknown dtype 'F128'"),
    "bad magic (not JSON)": (b"\x08\0\0\0\0\0\0\0" + b"PK\x03\x04zip!", "must start with '{'"),
}


# uma is stricter than np.load here: it ignores trailing bytes (a lying shape) and accepts any
# np.dtype() string as descr ('float64'), where uma accepts type strings ('<f8', 'f8') and
# one-character type codes ('<d', '?') only.
NUMPY_ACCEPTS = {"trailing bytes", "garbage descr"}


@pytest.mark.parametrize("descr", ["f8", "<d", "=i4", "|b1", "?", "b1", ">d", "<l", "L", "D", ">F", "h", "<e", "B",
                                   "p", "P", "n", ">N"])
def test_npy_descr_type_strings_and_codes_as_numpy_reads_them(tmp_path, descr, mem_baseline):
    want = np.arange(-3, 3).astype(np.dtype(descr))
    header = ("{'descr': '%s', 'fortran_order': False, 'shape': (6,), }" % descr).ljust(117) + "\n"
    p = tmp_path / "d.npy"
    p.write_bytes(_npy(header, want.tobytes()))
    ref = np.load(p)
    assert ref.dtype == np.dtype(descr)
    for mmap in (None, False):
        same_bits(uma.load(p, mmap=mmap), ref.astype(ref.dtype.newbyteorder("=")))
    for code, why in (("g", "long double"), ("c", "a one-byte string, 'S1'")):
        p.write_bytes(_npy("{'descr': '%s', 'fortran_order': False, 'shape': (0,), }" % code, b""))
        with pytest.raises(TypeError, match=re.escape(f"unsupported .npy dtype: descr '{code}' ({why})")):
            uma.load(p)


def test_errors_quoting_a_path_that_is_not_utf8_keep_their_type(tmp_path, mem_baseline):
    p = os.fsencode(tmp_path) + b"/\xff.npy"
    np.save(p.decode("utf-8", "surrogateescape"), np.arange(3.0).astype(">f8"))
    with pytest.raises(uma.CopyError, match=r"\\xff\.npy.*big-endian"):
        uma.load(p, mmap=True)
    same_bits(uma.load(p), np.arange(3.0))


@pytest.mark.parametrize("mmap", [True, False])
@pytest.mark.parametrize("case", sorted(NPY_BAD))
def test_malformed_npy(tmp_path, case, mmap, mem_baseline):
    data, msg = NPY_BAD[case]
    p = tmp_path / "bad.npy"
    p.write_bytes(data)
    with pytest.raises(ValueError, match=msg) as e:
        uma.load(p, mmap=mmap)
    assert str(p) in str(e.value)
    assert not isinstance(e.value, uma.CopyError)
    # NumPy rejects these too (with assorted types: ValueError, OverflowError, tokenize's
    # TokenError), except where uma is deliberately stricter.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    except Exception:
        assert case not in NUMPY_ACCEPTS
    else:
        assert case in NUMPY_ACCEPTS


@pytest.mark.parametrize("mmap", [True, False])
@pytest.mark.parametrize("case", sorted(ST_BAD))
def test_malformed_safetensors(tmp_path, case, mmap, mem_baseline):
    data, msg = ST_BAD[case]
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    with pytest.raises(ValueError, match=msg) as e:
        uma.load(p, mmap=mmap)
    assert str(p) in str(e.value)
    assert not isinstance(e.value, uma.CopyError)


def test_good_crafted_files_load(tmp_path, mem_baseline):
    """The malformed cases above are mutations of files that do load."""
    (tmp_path / "g.npy").write_bytes(_GOOD_NPY)
    assert uma.load(tmp_path / "g.npy").shape == (2, 2)
    (tmp_path / "g.safetensors").write_bytes(_GOOD_ST)
    assert sorted(uma.load(tmp_path / "g.safetensors")) == ["a", "b"]
    assert sorted(sn.load_file(str(tmp_path / "g.safetensors"))) == ["a", "b"]


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_every_truncation_and_random_corruption(tmp_path, rng, fmt, mem_baseline):
    """Every prefix of a valid file is a ValueError; random byte flips in the header either
    load or raise ValueError/TypeError (never crash, never read past the end, never leak)."""
    p = tmp_path / ("f." + fmt)
    if fmt == "npy":
        np.save(p, bits("int16", (3, 2), rng))
    else:
        sn.save_file({"a": bits("int16", (3,), rng), "b": bits("float32", (2,), rng)}, str(p))
    good = p.read_bytes()
    for n in range(len(good)):
        p.write_bytes(good[:n])
        for mmap in (True, False):
            with pytest.raises(ValueError):
                uma.load(p, mmap=mmap)
    hdr_end = len(good) - (12 if fmt == "npy" else 14)
    for _ in range(400):
        b = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            b[int(rng.integers(0, hdr_end))] = int(rng.integers(0, 256))
        p.write_bytes(bytes(b))
        for mmap in (True, False):
            try:
                r = uma.load(p, mmap=mmap)
            except (ValueError, TypeError):
                continue
            del r
