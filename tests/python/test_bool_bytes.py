"""Bool memory holding bytes other than 0 and 1 (DESIGN.md "bool memory").

A uint8 buffer viewed as bool is shared zero-copy, as NumPy shares it, and its owner may write
any byte into it after the import: every op reads a bool byte as ``byte != 0`` (NumPy's rule),
so every answer is NumPy's on the same memory. NumPy is the oracle: each test compares uma on
the shared array with NumPy on the bool view of the same bytes.
"""
import numpy as np
import pytest

import uma
from conftest import ALL_DTYPES, BACKENDS, np_dtype
from uma import sym

# Written by the owner after the import: true bytes other than 1, and falses.
BYTES = [2, 0x80, 1, 0, 0xFF, 0, 0x40, 3]
OTHER = [0, 0x80, 0, 7, 1, 0, 0xFE, 0]


def shared_bools(values=BYTES, shape=None):
    """(raw, b, a): a uint8 buffer, NumPy's bool view of it and uma's import of that view,
    all three on the same memory; the bytes are written after the import."""
    raw = np.zeros(len(values), np.uint8)
    b = raw.view(np.bool_)
    if shape is not None:
        b = b.reshape(shape)
    a = uma.asarray(b)
    assert np.shares_memory(np.asarray(a), raw)
    raw[:] = values
    return raw, b, a


def same(got, expected):
    """uma's result equals NumPy's: the same dtype, shape and values."""
    got = np.asarray(got.cpu() if type(got).__module__.startswith("torch") else got)  # (torch-cuda)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    if expected.dtype == np.bool_:  # compare values, not bytes
        np.testing.assert_array_equal(got.astype(np.uint8) != 0, expected.astype(np.uint8) != 0)
    else:
        np.testing.assert_array_equal(got, expected)


def test_a_uint8_buffer_seen_as_bool_is_shared_and_later_writes_show():
    raw, b, a = shared_bools()
    assert np.shares_memory(np.asarray(uma.asarray(b, copy=False)), raw)
    raw[0] = 0
    assert not a[0].item() and not b[0]
    raw[0] = 0x10
    assert a[0].item() and b[0]


@pytest.mark.parametrize("shape", [None, (2, 4)])
@pytest.mark.parametrize("name", ["sum", "prod", "any", "all", "mean", "max", "min", "argmax", "argmin"])
def test_reductions(name, shape):
    _, b, a = shared_bools(shape=shape)
    same(getattr(uma, name)(a), getattr(np, name)(b))
    if shape is not None and name not in ("argmax", "argmin"):
        for axis in (0, 1):
            same(getattr(uma, name)(a, axis=axis), getattr(np, name)(b, axis=axis))


def test_sum_of_true_bytes_counts_them():
    _, b, a = shared_bools()
    assert int(uma.sum(a)) == int(np.sum(b)) == 6  # not the bytes' sum, 453


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative(name):
    _, b, a = shared_bools(shape=(2, 4))
    same(getattr(uma, name)(a), getattr(np, name)(b))
    same(getattr(uma, name)(a, axis=1), getattr(np, name)(b, axis=1))


def test_logical_ops():
    _, b, a = shared_bools()
    _, c, o = shared_bools(OTHER)
    same(uma.logical_not(a), np.logical_not(b))
    same(~a, ~b)
    for name in ("logical_and", "logical_or", "logical_xor"):
        same(getattr(uma, name)(a, o), getattr(np, name)(b, c))
        same(getattr(uma, name)(a, True), getattr(np, name)(b, True))
    same(a & o, b & c)
    same(a | o, b | c)
    same(a ^ o, b ^ c)


def test_comparisons():
    _, b, a = shared_bools()
    _, c, o = shared_bools(OTHER)
    same(a == True, b == True)  # noqa: E712 (the comparison under test)
    same(a != True, b != True)  # noqa: E712
    same(a == False, b == False)  # noqa: E712
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        same(getattr(a, op)(o), getattr(b, op)(c))
    same(a == 1, b == 1)
    same(a > 0, b > 0)
    same(uma.maximum(a, o), np.maximum(b, c))
    same(uma.minimum(a, o), np.minimum(b, c))


def test_arithmetic():
    _, b, a = shared_bools()
    _, c, o = shared_bools(OTHER)
    same(a + o, b + c)
    same(a * o, b * c)
    same(a + 1, b + 1)
    same(a * 2.5, b * 2.5)
    same(uma.abs(a), np.abs(b))
    same(uma.clip(a, False, True), np.clip(b, False, True))


def test_where_as_condition_and_as_values():
    _, b, a = shared_bools()
    _, c, o = shared_bools(OTHER)
    same(uma.where(a, 1.0, 2.0), np.where(b, 1.0, 2.0))
    same(uma.where(a, np.arange(8), -1), np.where(b, np.arange(8), -1))
    same(uma.where(o, a, False), np.where(c, b, False))
    same(uma.where(o, a, o), np.where(c, b, c))
    same(uma.where(o, a, 7), np.where(c, b, 7))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_astype_every_dtype(dtype):
    _, b, a = shared_bools()
    got = np.asarray(a.astype(dtype))
    # ml_dtypes' own bool -> bfloat16 cast converts the raw byte (2 -> 2.0); NumPy's rule is
    # the value, as through float32
    expected = b.astype(np.float32 if dtype == "bfloat16" else np_dtype(dtype)).astype(np_dtype(dtype))
    same(got, expected)
    if dtype != "bool":
        assert set(np.real(got).astype(np.float64).tolist()) == {0.0, 1.0}


def test_matmul():
    _, b, a = shared_bools(shape=(2, 4))
    _, c, o = shared_bools(OTHER, shape=(4, 2))
    same(a @ o, b @ c)
    same(uma.matmul(o, a), np.matmul(c, b))
    same(uma.dot(a[0], o[:, 1]), np.dot(b[0], c[:, 1]))


def test_mask_indexing_and_take():
    _, b, a = shared_bools()
    x = np.arange(8.0) * 10
    same(uma.asarray(x)[a], x[b])
    same(a[a], b[b])
    same(uma.take(a, [0, 1, 3, 6]), np.take(b, [0, 1, 3, 6]))
    same(a[[0, 1, 3, 6]], b[[0, 1, 3, 6]])
    same(uma.logical_not(uma.take(a, [1, 4, 5])), np.logical_not(np.take(b, [1, 4, 5])))
    _, b2, a2 = shared_bools(shape=(2, 4))
    y = np.arange(24).reshape(2, 4, 3)
    same(uma.asarray(y)[a2], y[b2])


def test_item_bool_and_tolist():
    _, b, a = shared_bools()
    for i in range(8):
        assert a[i].item() is bool(b[i])
        assert bool(a[i]) is bool(b[i])
        assert int(a[i]) == int(b[i])
    assert a.tolist() == b.tolist()


def test_copies_and_conversions_keep_the_values():
    _, b, a = shared_bools()
    same(uma.array(a), b)
    same(uma.asarray(b, copy=True), b)
    same(uma.asarray(b, dtype="int32"), b.astype(np.int32))
    same(uma.asarray(b[::-2]), b[::-2])
    same(uma.asarray(b.tolist()), b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_function_reads_shared_bool_bytes(backend):
    _, b, a = shared_bools()
    _, c, _ = shared_bools(OTHER)
    v = uma.shared(b, "v", borrow=True)
    x = sym.vector("x", dtype="bool")
    f = uma.function([x], [sym.sum(v), sym.sum(x), uma.logical_not(v), uma.logical_and(v, x),
                           uma.where(x, 1.0, 0.0), v.astype("int64"), sym.any(x), sym.all(v)], backend=backend)
    got = f(c)
    expected = [np.sum(b), np.sum(c), np.logical_not(b), np.logical_and(b, c), np.where(c, 1.0, 0.0),
                b.astype(np.int64), np.any(c), np.all(b)]
    for g, e in zip(got, expected):
        same(g, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_function_reads_bool_bytes_of_small_inputs(backend):
    x = sym.scalar("x", dtype="bool")
    z = sym.scalar("z", dtype="bool")
    y = sym.vector("y", dtype="bool")
    # 0-d inputs only: the cpu backend computes on the elements (Note [Scalar programs])
    f = uma.function([x, z], [uma.logical_not(x), x.astype("int64"), uma.logical_xor(x, z), uma.equal(x, z),
                              uma.logical_and(x, z)], backend=backend)
    g = uma.function([x, y], [uma.logical_and(x, y), uma.where(x, y, False), sym.sum(y)], backend=backend)
    _, yb, _ = shared_bools()
    for byte, other in [(2, 0x80), (0x80, 1), (0xFF, 0), (0, 3), (1, 1)]:
        s = np.array(byte, np.uint8).view(np.bool_)
        t = np.array(other, np.uint8).view(np.bool_)
        for got, expected in zip(f(s, t), [np.logical_not(s), s.astype(np.int64), np.logical_xor(s, t),
                                           np.equal(s, t), np.logical_and(s, t)]):
            same(got, expected)
        for got, expected in zip(g(s, yb), [np.logical_and(s, yb), np.where(s, yb, False), np.sum(yb)]):
            same(got, expected)
