"""arange and linspace against NumPy over random ranges (Hypothesis), integer ranges near the
ends of int64 and uint64 included: the same length, dtype and values, element for element
(NumPy's rules: exact integer lengths, element i = start + i * (element 1 - element 0) in the
dtype's arithmetic; linspace computed in float64 with the last element exactly stop).

Where NumPy refuses, uma raises too (check_like_numpy maps the error types)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import uma
from conftest import check_like_numpy, numpy_quiet

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_LEN = 2000


def _same(got, expected):
    expected = np.asarray(expected)
    g = np.asarray(got)
    assert g.dtype == expected.dtype and g.shape == expected.shape, (g.dtype, g.shape, expected.dtype, expected.shape)
    np.testing.assert_array_equal(g, expected)  # bit-exact: both compute the same formula


def _int_range(lo, hi):
    start = st.integers(lo, hi)
    return st.tuples(start, st.integers(-MAX_LEN, MAX_LEN), st.integers(-2**40, 2**40).filter(lambda s: s != 0))


@SETTINGS
@given(_int_range(-2**63, 2**63 - 1))
def test_int64_arange_matches_numpy(args):
    start, count, step = args
    stop = start + count * step // max(1, abs(count) // 7 + 1) if count else start
    assume(-2**63 <= stop < 2**63)
    _same(uma.arange(start, stop, step), np.arange(start, stop, step))


@SETTINGS
@given(st.integers(0, 2**64 - 1), st.integers(0, MAX_LEN), st.integers(1, 2**20))
def test_uint64_arange_matches_numpy(start, count, step):
    stop = start + count
    assume(stop < 2**64 and start + step < 2**64)
    _same(uma.arange(start, stop, step, dtype="uint64"), np.arange(start, stop, step, dtype=np.uint64))


_LARGE = [(start, count, step)
          for start in [1_700_000_000_000_000_000, 2**53 + 1, 2**62, 2**63 - 10, -2**63, -2**62 - 3]
          for count, step in [(5, 1), (3, 1), (7, -1), (4, 3)] if -2**63 <= start + count * step < 2**63]


@pytest.mark.parametrize("start,count,step", _LARGE)
def test_large_integer_ranges_are_exact(start, count, step):
    stop = start + count * step
    expected = np.arange(start, stop, step)
    got = uma.arange(start, stop, step)
    _same(got, expected)
    assert got.shape == (count,)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
@SETTINGS
@given(data=st.data())
def test_small_integer_dtypes_wrap_like_numpy(dtype, data):
    info = np.iinfo(dtype)
    start = data.draw(st.integers(int(info.min), int(info.max)))
    step = data.draw(st.integers(-300, 300).filter(lambda s: s != 0))
    stop = start + step * data.draw(st.integers(0, 600))
    check_like_numpy(lambda: np.arange(start, stop, step, dtype=dtype),
                     lambda: uma.arange(start, stop, step, dtype=dtype))


@pytest.mark.parametrize("start,stop,step,dtype", [
    (18446744073709545607, 18446744073709568407, 38, "uint64"),  # found by the test above
    (5, 2**70, 2**62, "uint64"), (2**64 - 40, 2**64 + 20, 7, "uint64"), (0, 2**70, 2**60, "float64"),
    (2**63 - 10, 2**63 + 50, 3, "int64"), (0, -2**70, -2**61, "int64"), (2**64 - 3, 2**64 + 3, 2, "uint8")])
def test_arange_with_a_stop_beyond_64_bits_and_a_dtype_is_numpy_s(start, stop, step, dtype):
    """NumPy takes the length from Python's integers and stores start and start + step in the
    dtype (OverflowError where it cannot), so only the stop may lie beyond 64 bits."""
    check_like_numpy(lambda: np.arange(start, stop, step, dtype=dtype),
                     lambda: uma.arange(start, stop, step, dtype=dtype))


_FINITE = st.floats(-1e12, 1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "int64", "int32"])
@SETTINGS
@given(start=_FINITE, width=st.floats(0, 1e6), steps=st.integers(0, MAX_LEN), sign=st.sampled_from([1, -1]))
def test_float_arange_matches_numpy(dtype, start, width, steps, sign):
    step = sign * width / steps if steps and width else sign * 0.37
    assume(step != 0)
    stop = start + sign * width
    assume(abs((stop - start) / step) <= 4 * MAX_LEN)
    got = check_like_numpy(lambda: np.arange(start, stop, step, dtype=dtype),
                           lambda: uma.arange(start, stop, step, dtype=dtype))
    if got is not None:  # NumPy gave an array: uma's is the same, bit for bit
        _same(got, np.arange(start, stop, step, dtype=dtype))


@pytest.mark.parametrize("args", [(0.1, 10, 0.3), (1e9, 1e9 + 50, 0.7), (-3.5, 2.25, 0.125), (10, 0, -0.1)])
def test_float_arange_is_start_plus_i_step_as_numpy(args):
    _same(uma.arange(*args), np.arange(*args))


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "int64", "int16", "complex128"])
@pytest.mark.parametrize("endpoint", [True, False])
@SETTINGS
@given(start=_FINITE, stop=_FINITE, num=st.integers(0, 300))
def test_linspace_matches_numpy(dtype, endpoint, start, stop, num):
    expected = numpy_quiet(lambda: np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    _same(numpy_quiet(lambda: uma.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)), expected)


@pytest.mark.parametrize("args", [(0, 1, 5), (1, 0, 7), (0, 1e-320, 4), (5, 5, 3), (0, 1, 1), (0, 1, 0), (-2, 3, 2),
                                  (1 + 2j, 3 - 1j, 4), (0, 10, 6)])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_edge_cases_match_numpy(args, endpoint):
    check_like_numpy(lambda: np.linspace(*args, endpoint=endpoint), lambda: uma.linspace(*args, endpoint=endpoint))


@pytest.mark.parametrize("num,err", [(-1, ValueError), (2.5, TypeError), ("3", TypeError)])
def test_linspace_bad_num_like_numpy(num, err):
    with pytest.raises(err):
        np.linspace(0, 1, num)
    with pytest.raises(err):
        uma.linspace(0, 1, num)


@pytest.mark.parametrize("bound", [0.5, 3, -2.25])
def test_zero_d_array_bounds_are_numbers_as_in_numpy(bound):
    # A 0-d uma array defines __index__ (for integer dtypes) and refuses it for floats: the
    # bound is then read as a number, as NumPy reads a 0-d ndarray.
    b = np.asarray(bound)
    np.testing.assert_array_equal(np.asarray(uma.linspace(uma.asarray(b), 4, 5)), np.linspace(b, 4, 5))
    np.testing.assert_array_equal(np.asarray(uma.linspace(-1, uma.asarray(b), 3)), np.linspace(-1, b, 3))
    np.testing.assert_array_equal(np.asarray(uma.arange(uma.asarray(b), 6)), np.arange(b, 6))
    np.testing.assert_array_equal(np.asarray(uma.arange(uma.asarray(b))), np.arange(b))


@pytest.mark.parametrize("call", [lambda b: uma.linspace(b, 1), lambda b: uma.linspace(0, b),
                                  lambda b: uma.arange(b), lambda b: uma.arange(0, 5, b)])
@pytest.mark.parametrize("bound", [uma.arange(6.0).reshape(2, 3), uma.ones(2, dtype="complex128"), None, "3"])
def test_a_bound_that_is_not_a_number_is_a_type_error_naming_it(call, bound):
    with pytest.raises(TypeError, match=r"(linspace|arange): expected a number, got"):
        call(bound)


@pytest.mark.parametrize("args", [(0, 5, np.inf), (0, -5, np.inf), (5, 0, -np.inf), (0.0, 1e-320, 1e308), (0, 5, 1e308)])
def test_a_step_beyond_the_range_leaves_start_alone_as_numpy(args):
    _same(uma.arange(*args), np.arange(*args))


@pytest.mark.parametrize("start,stop", [(np.float32(0), 1), (np.float16(-1), 2.5), (np.int32(0), 7),
                                        (np.asarray(0.5, np.float32), np.float32(3)), (np.float32(0), 1j),
                                        (np.float32(1), np.float64(2)), (np.complex64(1 + 1j), 2), (0, np.complex128(1j))])
def test_linspace_default_dtype_is_numpys_result_type(start, stop):
    want = np.linspace(start, stop, 7)
    got = uma.linspace(start, stop, 7)
    assert got.dtype == want.dtype
    # uma rounds the float64 values once; NumPy computes in the dtype (a few ulps apart)
    np.testing.assert_allclose(np.asarray(got), want, rtol=4 * np.finfo(want.dtype).eps, atol=4 * np.finfo(want.dtype).eps)
    assert uma.linspace(uma.asarray(start), stop, 7).dtype == want.dtype
