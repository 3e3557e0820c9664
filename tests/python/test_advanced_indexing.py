"""NumPy's advanced indexing on uma arrays, read (``a[idx]``) and write (``a[idx] = v``), with
NumPy 2 as the oracle: random index tuples of ints, slices (negative steps too), None, Ellipsis,
integer arrays of every integer dtype and several broadcasting shapes, bool arrays of any rank
and 0-d bools, as NumPy arrays, uma arrays and Python lists; and the errors, compared with
NumPy's exception types. The rule: numpy.org, "Indexing on ndarrays" (advanced indexing).

The tests with a ``device`` parameter also run on cuda arrays (with host index arrays and with
index arrays on the device) where a GPU is usable: the same layout rule, the device's gather and
scatter kernels."""
import numpy as np
import pytest

import uma
from conftest import assert_matches, check_like_numpy, numpy_error_type, numpy_quiet

GPU = uma.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not GPU, reason="no usable CUDA GPU"))]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
N_SEEDS = 300


# --------------------------------------------------------------------------- the generator

def _int_array(rng, n, shape, bounds_ok=True):
    """Indices into an axis of length n (n >= 1), of a random integer dtype; negative ones only
    in signed dtypes. One out-of-range entry when not bounds_ok."""
    dt = np.dtype(rng.choice(INT_DTYPES))
    lo = -n if dt.kind == "i" else 0
    v = rng.integers(lo, n, size=shape) if n > 0 else np.zeros(shape, np.int64)
    if not bounds_ok and v.size:
        v.flat[rng.integers(v.size)] = n + int(rng.integers(0, 3)) if dt.kind == "u" or rng.random() < 0.5 \
            else -n - 1 - int(rng.integers(0, 3))
    return v.astype(dt)


def _broadcast_part(rng, target):
    """A shape that broadcasts to `target`: some leading axes dropped, some lengths set to 1."""
    k = int(rng.integers(0, len(target) + 1))
    return tuple(1 if rng.random() < 0.3 else d for d in target[k:])


def draw_index(rng, shape, bounds_ok=True):
    """A random NumPy index for an array of `shape` (a tuple, or sometimes a single item)."""
    ndim = len(shape)
    items = []
    d = 0
    ellipsis_left = rng.random() < 0.3
    # the index arrays' broadcast shape, or the count of the one bool array of rank >= 1
    target = tuple(int(x) for x in rng.integers(0, 4, size=int(rng.integers(0, 3))))
    mask_done = False
    while d < ndim or (rng.random() < 0.2 and len(items) < 6):
        r = rng.random()
        if d >= ndim or r < 0.08:
            items.append(None if rng.random() < 0.7 else (True if rng.random() < 0.8 else False))
            continue
        if ellipsis_left and r < 0.2:
            ellipsis_left = False
            skip = int(rng.integers(0, ndim - d + 1))
            items.append(Ellipsis)
            d += skip
            continue
        n = shape[d]
        if r < 0.35:
            if n == 0:
                items.append(slice(None))
            else:
                items.append(int(rng.integers(-n, n)))
            d += 1
        elif r < 0.6:
            start = None if rng.random() < 0.4 else int(rng.integers(-n - 1, n + 2))
            stop = None if rng.random() < 0.4 else int(rng.integers(-n - 1, n + 2))
            step = None if rng.random() < 0.4 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(start, stop, step))
            d += 1
        elif r < 0.85 or mask_done:
            if n == 0:
                items.append(slice(None))
            else:
                part = _broadcast_part(rng, target)
                arr = _int_array(rng, n, part, bounds_ok)
                if rng.random() < 0.2 and arr.ndim >= 1:
                    arr = arr.astype(np.int64).tolist()  # a Python list of ints
                items.append(arr)
            d += 1
        else:
            k = int(rng.integers(1, min(3, ndim - d) + 1))
            m = rng.random(shape[d:d + k]) < 0.5
            count = int(m.sum())
            # keep the mask's count compatible with the other arrays most of the time
            if rng.random() < 0.8 and (len(target) != 1 or target[0] not in (1, count)):
                target = (count,)
            mask_done = True
            items.append(m.tolist() if rng.random() < 0.15 else m)
            d += k
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


def _as_uma_key(idx, device="cpu"):
    """The same index with its NumPy arrays as uma arrays on `device`."""
    conv = lambda x: uma.asarray(x, device=device) if isinstance(x, np.ndarray) else x
    return tuple(conv(x) for x in idx) if isinstance(idx, tuple) else conv(idx)


def _data(rng, shape, dtype="float64"):
    v = rng.permutation(int(np.prod(shape))).reshape(shape) - 3  # distinct values: writes can be told apart
    return np.asarray(v).astype(dtype)


def _layout(rng, n):
    """`n` seen as a C-contiguous, transposed or reversed view (NumPy and uma alike)."""
    choice = rng.integers(0, 3)
    if choice == 1 and n.ndim >= 2:
        return n.T.copy().T  # Fortran order: strides not C
    if choice == 2 and n.ndim >= 1:
        return n[::-1].copy()[::-1]  # a negative stride
    return n


def _on(n, device):
    """n as a uma array on `device` with n's strides (a strided view of a fresh copy on cuda)."""
    u = uma.asarray(n)
    if device == "cpu":
        return u
    if n.ndim >= 2 and not n.flags.c_contiguous and n.flags.f_contiguous:
        return uma.asarray(n.T.copy(), device=device).T
    if n.ndim >= 1 and n.size > 1 and n.strides[0] < 0:
        return uma.asarray(n[::-1].copy(), device=device)[::-1]
    return uma.asarray(n.copy(order="C"), device=device)  # (np.ascontiguousarray makes 0-d 1-d)


def _random_shape(rng):
    return tuple(int(x) for x in rng.integers(0, 5, size=int(rng.integers(0, 5))))


# --------------------------------------------------------------------------- reads

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_random_index_reads_like_numpy(seed, device):
    rng = np.random.default_rng(seed)
    shape = _random_shape(rng)
    n = _layout(rng, _data(rng, shape, rng.choice(["float64", "int32", "bool", "complex64", "uint8"])))
    u = _on(n, device)
    for _ in range(6):
        idx = draw_index(rng, shape)
        check_like_numpy(lambda: n[idx], lambda: u[idx])
        check_like_numpy(lambda: n[idx], lambda: u[_as_uma_key(idx, device)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(N_SEEDS // 3))
def test_random_out_of_bounds_index_arrays_raise_like_numpy(seed, device):
    rng = np.random.default_rng(10_000 + seed)
    shape = tuple(int(x) for x in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    n = _data(rng, shape)
    u = _on(n, device)
    for _ in range(4):
        idx = draw_index(rng, shape, bounds_ok=False)
        check_like_numpy(lambda: n[idx], lambda: u[idx])
        check_like_numpy(lambda: n[idx], lambda: u[_as_uma_key(idx, device)])
        _check_set_like_numpy(n, None, idx, 1.0, device)


def test_advanced_result_is_a_copy_basic_a_view():
    n = np.arange(12.0).reshape(3, 4)
    u = uma.asarray(n.copy())
    r = u[[0, 2], 1:]
    r[...] = -1
    np.testing.assert_array_equal(np.asarray(u), n)  # the copy does not write through
    v = u[1:, ::2]
    v[...] = -2
    assert (np.asarray(u)[1:, ::2] == -2).all()  # a view does
    assert u[True].shape == (1, 3, 4) and u[..., False].shape == (3, 4, 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_every_integer_index_dtype(dtype, device):
    n = np.arange(24.0).reshape(2, 3, 4)
    u = uma.asarray(n, device=device)
    i = np.array([[2, 0], [1, 1]], dtype)
    for key in [i, (slice(None), i), (i, 1, i % 2), (0, slice(None, None, -1), i), (Ellipsis, i)]:
        check_like_numpy(lambda: n[key], lambda: u[key])
        check_like_numpy(lambda: n[key], lambda: u[_as_uma_key(key, device)])


@pytest.mark.parametrize("device", DEVICES)
def test_placement_of_the_advanced_axes(device):
    """Adjacent advanced indices keep their place; separated ones (by a slice, None or an
    Ellipsis, even one that expands to no axis) go first; integers count as advanced."""
    n = np.arange(2 * 5 * 3 * 4.0).reshape(2, 5, 3, 4)
    u = uma.asarray(n, device=device)
    keys = [(slice(None), [0, 1], [2, 0]), (slice(None), [0, 1], slice(None), [2, 0]), (0, slice(None), [1, 2]),
            (slice(None), 0, [1, 2]), ([0], None, [0]), (slice(None), [0], None, [0]),
            (slice(None), [0], Ellipsis, [0]), (slice(None), slice(None), [0], Ellipsis, [1]),
            (True, [0, 1]), ([[0], [1]], slice(None), True), (np.ones((2, 5), bool), slice(None), [0, 2, 1]),
            (slice(None), np.ones((5, 3), bool)), (1, np.array(True), slice(1, None), [[3], [0]])]
    for key in keys:
        check_like_numpy(lambda: n[key], lambda: u[key])


@pytest.mark.parametrize("device", DEVICES)
def test_lists_and_zero_d_indices(device):
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n, device=device)
    for key in [np.zeros((2, 0), bool), np.zeros(0, bool), (np.zeros(0, bool), [0]), (slice(None), np.zeros(0, bool)),
                [True, False], [[True, False, True], [False, False, True]], [0, True], ([0, 1], [True, False, True]),
                (0, [2, 2, 0]), ((0, 1),), [], ([], []), np.array(1), (np.array(1), [0, 2]), np.True_, np.int64(1),
                (np.uint64(1), [0]), (slice(None), np.array(False)), np.array(True)]:
        check_like_numpy(lambda: n[key], lambda: u[key])
    z = np.array(5.0)
    for key in [True, False, (None, True), np.array(True), (Ellipsis, False)]:
        check_like_numpy(lambda: z[key], lambda: uma.asarray(z, device=device)[key])


BAD_KEYS = [
    [3], [-3], ([0, 1], [0, 3]), (None, [0], [7]), ([0, 1], 5), (True, 5), np.array([2**63], np.uint64),
    [True], np.array([[True, False, True]]), ([0, 1], [0, 1, 2]), ([0, 1], np.array(False)),
    (0, 1, [0]), (Ellipsis, Ellipsis, [0]), np.array([0.5]), [0.5, 1.0], np.array([], float), 1.5, "a",
    ([0], [[True, False, True]]), (np.ones((2, 3), bool), 0),
    # elements with no uma dtype: NumPy's IndexError, not a conversion's TypeError
    np.array([0], object), np.array(["a"]), ["a"], [None], ([0, 1], np.array([0], object)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", BAD_KEYS, ids=[repr(k) for k in BAD_KEYS])
def test_bad_indices_raise_like_numpy(key, device):
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n, device=device)
    check_like_numpy(lambda: n[key], lambda: u[key])
    _check_set_like_numpy(n, u, key, 1.0, device)


@pytest.mark.parametrize("device", DEVICES)
def test_error_messages_name_the_index_and_the_axis(device):
    u = uma.asarray(np.zeros((2, 3)), device=device)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 3"):
        u[None, [0], [7]]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 1 with size 3"):
        u[[0, 1], np.array([-4], np.int8)]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        u[[0, 1], 5]
    with pytest.raises(IndexError, match=r"shapes \(2,\) \(3,\)"):
        u[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="along axis 1; size of axis is 3 but size of corresponding boolean axis is 2"):
        u[:, [True, False]]
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type, got float64"):
        u[np.array([0.0])]


# --------------------------------------------------------------------------- writes

def _check_set_like_numpy(n0, u0, key, value, device="cpu", ukey=None):
    """n0.copy()[key] = value and the same on a uma copy on `device` (with `ukey`, the same key
    with uma index arrays, when given): the same error type (and the uma array unchanged), or the
    same array."""
    ukey = key if ukey is None else ukey
    n = n0.copy()
    u = _on(n0.copy(), device)
    try:
        numpy_quiet(lambda: n.__setitem__(key, value))
    except Exception as e:
        with pytest.raises(numpy_error_type(e)):
            u[ukey] = value
        np.testing.assert_array_equal(np.asarray(u.to_device("cpu")), n0)  # nothing was written
        return
    u[ukey] = value
    assert_matches(u, n, rtol=0, atol=0)


def _value_for(rng, shape, dtype, leading_one=True):
    """A value that broadcasts to `shape`: the shape, a broadcasting part of it, an extra leading
    1, or a scalar; of `dtype` or another one (NumPy's casting on assignment).

    No extra leading 1 where NumPy refuses one (`leading_one` false): a single element (NumPy's
    scalar assignment refuses a value of shape (1,)) and a key that is one bool array (NumPy's
    mask assignment takes 0-d or 1-d values only); uma broadcasts there too (assign's rule)."""
    r = rng.random()
    if r < 0.15:
        return float(rng.integers(-9, 9)) if rng.random() < 0.5 else int(rng.integers(0, 9))
    part = tuple(shape) if r < 0.6 else _broadcast_part(rng, tuple(shape))
    if rng.random() < 0.15 and leading_one and shape != ():
        part = (1,) + part
    vdt = dtype if rng.random() < 0.6 else rng.choice(["float64", "int64", "float32", "bool"])
    v = np.asarray(rng.integers(10, 99, size=part)).astype(vdt)
    if rng.random() < 0.3:
        return uma.asarray(v)
    return v


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_random_index_writes_like_numpy(seed, device):
    rng = np.random.default_rng(20_000 + seed)
    shape = _random_shape(rng)
    dtype = rng.choice(["float64", "int32", "uint8", "complex128", "bool"])
    n = _layout(rng, _data(rng, shape, dtype))
    for _ in range(5):
        idx = draw_index(rng, shape)
        try:
            region = n[idx].shape
        except IndexError:
            region = ()
        one = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
        single_mask = (isinstance(one, np.ndarray) and one.dtype == bool) or one is True or one is False
        value = _value_for(rng, region, dtype, leading_one=not single_mask)
        if isinstance(value, uma.Array) and value.dtype != uma.bool_ and dtype == "bool":
            value = uma.asarray(np.asarray(value) > 50)
        _check_set_like_numpy(n, None, idx, value, device)
        if device != "cpu":
            _check_set_like_numpy(n, None, idx, value, device,
                                  ukey=_as_uma_key(idx, device) if not isinstance(idx, list) else idx)


@pytest.mark.parametrize("device", DEVICES)
def test_repeated_indices_last_write_wins(device):
    n = np.zeros((3, 4))
    u = uma.asarray(n.copy(), device=device)
    for key, v in [([0, 2, 0, 0], [1.0, 2.0, 3.0, 4.0]), ((slice(None), [1, 1, 3]), np.arange(9.0).reshape(3, 3)),
                   (([1, 1], [2, 2]), [5.0, 6.0]), (([[0, 0], [0, 0]], 1), [[7.0, 8.0], [9.0, 10.0]])]:
        n[key] = v
        u[key] = v
        np.testing.assert_array_equal(np.asarray(u), n)


@pytest.mark.parametrize("device", DEVICES)
def test_write_through_a_view_lands_in_the_base(device):
    n = np.arange(24.0).reshape(4, 6)
    u = uma.asarray(n.copy(), device=device)
    n[1:, ::-2][[0, 2], [True, False, True]] = -1.0
    u[1:, ::-2][[0, 2], [True, False, True]] = -1.0
    np.testing.assert_array_equal(np.asarray(u), n)


@pytest.mark.parametrize("device", DEVICES)
def test_write_value_is_the_array_itself(device):
    n = np.arange(6.0)
    u = uma.asarray(n.copy(), device=device)
    n[[5, 4, 3, 2, 1, 0]] = n
    u[[5, 4, 3, 2, 1, 0]] = u  # the source is read before anything is written
    np.testing.assert_array_equal(np.asarray(u), n)


def test_write_casts_like_numpy():
    for dtype, v in [("int32", [2.7, -2.7]), ("uint8", np.array([300.0, 5.5])), ("bool", [0.0, 3.0]),
                     ("float32", np.array([1 + 2j, 3j])), ("int64", 2**40)]:
        n = np.zeros(4, dtype)
        _check_set_like_numpy(n, None, [1, 3], v)
        _check_set_like_numpy(n, None, np.array([True, False, True, False]), v)
    with pytest.raises(OverflowError):
        uma.zeros(3, dtype="int8")[[0, 1]] = 300  # a Python int beyond the dtype, as NumPy 2


def test_write_shape_mismatch_value_error():
    n = np.zeros((2, 3))
    for key, v in [([0, 1], np.ones((3, 3))), (np.array([True, False]), np.ones((2, 3))), (([0, 1], [1, 2]), [1.0, 2, 3])]:
        _check_set_like_numpy(n, None, key, v)
    with pytest.raises(ValueError, match="broadcast"):
        uma.zeros((2, 3))[[0, 1], 1:] = uma.ones(3)


def test_write_to_read_only_array_value_error():
    n = np.arange(4.0)
    n.flags.writeable = False
    u = uma.asarray(n)
    assert u.writable is False
    for key in ([0, 1], np.array([True, False, True, True]), (np.array(True),)):
        with pytest.raises(ValueError, match="read-only"):
            u[key] = 1.0
    np.testing.assert_array_equal(np.asarray(u), np.arange(4.0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "bfloat16", "float64", "complex64",
                                   "complex128"])
def test_read_and_write_every_itemsize(dtype, device):
    from conftest import np_dtype
    n = np.arange(20).reshape(4, 5).astype(np_dtype(dtype))
    u = uma.asarray(n.copy(), device=device)
    key = ([3, 0, 3], slice(None, None, -2))
    assert_matches(u[key], n[key], rtol=0, atol=0)
    v = np.ones((3, 3), np_dtype(dtype))
    n[key] = v
    u[key] = v
    assert_matches(u, n, rtol=0, atol=0)
    t = u.T  # a non-contiguous inner block
    assert_matches(t[[1, 2]], n.T[[1, 2]], rtol=0, atol=0)


def test_index_arrays_whose_broadcast_is_too_big_are_a_value_error():
    """Broadcast views (no memory) of shapes (2**32, 1) and (1, 2**32) name 2**64 elements: a
    ValueError as NumPy's, never an overflowed size."""
    i = np.broadcast_to(np.zeros(1, np.int64), (2**32, 1))
    j = np.broadcast_to(np.zeros(1, np.int64), (1, 2**32))
    a = np.zeros((3, 3))
    with pytest.raises(ValueError):
        a[i, j]
    with pytest.raises(ValueError, match="array is too big"):
        uma.asarray(a)[i, j]
    u = uma.asarray(a.copy())
    with pytest.raises(ValueError, match="array is too big"):
        u[i, j] = 1.0
    np.testing.assert_array_equal(np.asarray(u), a)
