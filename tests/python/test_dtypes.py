"""uma dtypes: the 15 names, their attributes, construction from every accepted spelling,
equality with NumPy, and NumPy 2 (NEP 50) promotion / casting rules."""
import subprocess
import sys

import numpy as np
import pytest

import uma
from conftest import ALL_DTYPES, NUMPY_DTYPES, bfloat16_round_once, child_env, np_dtype, uma_dtype


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_dtype_objects_exist_with_numpy_attributes(name):
    dt = uma_dtype(name)
    assert isinstance(dt, uma.dtype)
    ref = np_dtype(name)
    assert dt.name == name
    assert dt.itemsize == ref.itemsize
    expected_kind = "f" if name == "bfloat16" else ref.kind  # ml_dtypes reports 'V'
    assert dt.kind == expected_kind


def test_there_are_exactly_fifteen_distinct_dtypes():
    dts = [uma_dtype(n) for n in ALL_DTYPES]
    for i, a in enumerate(dts):
        for j, b in enumerate(dts):
            assert (a == b) == (i == j), (a, b)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_dtype_constructor_accepts_every_spelling(name):
    ref = np.dtype(name)
    target = uma_dtype(name)
    for spec in (target, ref, ref.type, name):
        got = uma.dtype(spec)
        assert got == target, spec
        assert got.name == name, spec


def test_dtype_constructor_bfloat16():
    assert uma.dtype("bfloat16") == uma.bfloat16
    assert uma.dtype(uma.bfloat16) == uma.bfloat16
    mld = pytest.importorskip("ml_dtypes")
    assert uma.dtype(np.dtype(mld.bfloat16)) == uma.bfloat16
    assert uma.dtype(mld.bfloat16) == uma.bfloat16


@pytest.mark.parametrize("pytype,name", [(bool, "bool"), (int, "int64"), (float, "float64"),
                                         (complex, "complex128")])
def test_dtype_from_python_types_like_numpy(pytype, name):
    assert np.dtype(pytype).name == name  # the oracle
    assert uma.dtype(pytype) == uma_dtype(name)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_dtype_compares_equal_to_numpy_and_its_name(name):
    dt = uma_dtype(name)
    assert dt == np.dtype(name)
    assert dt == np.dtype(name).type
    assert dt == name
    others = [n for n in NUMPY_DTYPES if n != name]
    for o in others:
        assert dt != np.dtype(o)
        assert dt != o
        assert not (dt == o)


def test_dtype_equality_examples_from_api():
    assert uma.float32 == np.float32
    assert uma.float32 == "float32"
    assert uma.float32 == np.dtype("float32")
    assert uma.float32 != np.float64
    assert uma.int64 != uma.uint64


@pytest.mark.parametrize("bad", ["float31", "nope", "", "int128"])
def test_dtype_bad_name_type_error(bad):
    with pytest.raises(TypeError):
        np.dtype(bad)  # the oracle refuses too
    with pytest.raises(TypeError):
        uma.dtype(bad)


def test_dtype_unsupported_numpy_dtypes_type_error():
    for bad in (np.dtype("U3"), np.dtype(object), np.dtype("datetime64[s]"), np.dtype([("a", "f8")])):
        with pytest.raises(TypeError):
            uma.dtype(bad)


def test_dtype_is_hashable_consistently():
    s = {uma.float32, uma.dtype("float32"), uma.dtype(np.float32)}
    assert len(s) == 1
    d = {uma.int32: 1}
    assert d[uma.dtype("int32")] == 1


PAIRS = [(a, b) for a in NUMPY_DTYPES for b in NUMPY_DTYPES]


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_promote_types_like_numpy(a, b):
    expected = np.promote_types(a, b)
    got = uma.promote_types(uma_dtype(a), uma_dtype(b))
    assert got == uma_dtype(expected.name)
    # other spellings are accepted
    assert uma.promote_types(a, np.dtype(b)) == uma_dtype(expected.name)


BF16_PARTNERS = ["bool", "int8", "uint8", "float32", "float64", "complex64", "complex128", "bfloat16"]


@pytest.mark.parametrize("other", BF16_PARTNERS)
def test_promote_types_bfloat16_like_ml_dtypes(other):
    mld = pytest.importorskip("ml_dtypes")
    expected = np.promote_types(np.dtype(mld.bfloat16), np_dtype(other))
    assert uma.promote_types(uma.bfloat16, uma_dtype(other)) == uma_dtype(expected.name)
    assert uma.promote_types(uma_dtype(other), uma.bfloat16) == uma_dtype(expected.name)


CAST_PAIRS = PAIRS


@pytest.mark.parametrize("casting", ["safe", "same_kind"])
@pytest.mark.parametrize("a,b", CAST_PAIRS, ids=[f"{a}-{b}" for a, b in CAST_PAIRS])
def test_can_cast_like_numpy(a, b, casting):
    assert uma.can_cast(uma_dtype(a), uma_dtype(b), casting=casting) == np.can_cast(a, b, casting=casting)


@pytest.mark.parametrize("a,b", [("int32", "float32"), ("int64", "float64"), ("float64", "float32"), ("bool", "int8")])
def test_can_cast_default_is_safe(a, b):
    assert uma.can_cast(a, b) == np.can_cast(a, b, "safe")


RESULT_TYPE_CASES = [
    (("int32",), (1,)), (("int32",), (1.5,)), (("float32",), (1.5,)), (("float32",), (1,)),
    (("bool",), (1,)), (("bool",), (True,)), (("bool",), (1.5,)), (("int8",), (1,)),
    (("uint8",), (1,)), (("float16",), (2.5,)), (("int32", "int64"), ()), (("int32", "float32"), ()),
    (("int64", "uint64"), ()), (("float32",), (1j,)), (("int32",), (1j,)), (("uint16", "int8"), (3,)),
    ((), (1, 2.5)), ((), (True, 1)), ((), (1,)),
]


@pytest.mark.parametrize("dtypes,scalars", RESULT_TYPE_CASES)
def test_result_type_weak_python_scalars(dtypes, scalars):
    arrays_np = [np.zeros(2, dtype=d) for d in dtypes]
    expected = np.result_type(*arrays_np, *scalars)
    arrays_uma = [uma.zeros(2, dtype=d) for d in dtypes]
    assert uma.result_type(*arrays_uma, *scalars) == uma_dtype(expected.name)


def test_result_type_accepts_dtypes():
    assert uma.result_type(uma.int32, uma.float32) == uma.float64
    assert uma.result_type(np.dtype("int8"), "uint8") == uma.int16


# --------------------------------------------------------------------------- bfloat16 rounding

def _bf16_cases():
    """float64 and integer values whose bfloat16 rounding differs when rounded twice (through
    float32), ties to even, subnormals, and values at the overflow threshold."""
    eps = [2.0**-30, 2.0**-40, -(2.0**-30)]
    floats = [1 + 2.0**-8 + d for d in eps] + [1 + 3 * 2.0**-8 + d for d in eps]
    floats += [1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8 + 2.0**-30), 3.0e38, 3.3895e38, 3.3961e38, 3.4e38,
               2.0**-133, 2.0**-134, 2.0**-134 + 2.0**-160, 1.5 * 2.0**-133, 2.0**-127 * (1 + 2.0**-9 + 2.0**-40),
               1e-300, 5e-324, 0.1, -7.3e10, 123456.789, 2.0**-126 * (1 - 2.0**-9)]
    ints = [2**60 + 2**52 + 1, 2**60 + 2**52, 2**60 + 3 * 2**52, -(2**62 + 2**54 + 7), 2**63 - 1, -(2**63),
            2**24 + 2**16 + 1, 2**31 - 1, 16777217, -(2**53 + 2**45 + 1), 257, 259, 2**40 + 2**32]
    return floats, ints


@pytest.mark.parametrize("src", ["float64", "complex128", "int64", "uint64", "int32"])
def test_bfloat16_conversion_rounds_once(src):
    floats, ints = _bf16_cases()
    if src in ("float64", "complex128"):
        values = floats
    elif src == "uint64":
        values = [v for v in ints if v >= 0] + [2**64 - 1, 2**63 + 2**55 + 1]
    elif src == "int32":
        values = [v for v in ints if -2**31 <= v < 2**31]
    else:
        values = ints
    x = np.array(values, dtype=src)
    got = np.asarray(uma.asarray(x).astype("bfloat16").astype("float64"))
    expected = np.array([bfloat16_round_once(v.real if isinstance(v, complex) else v) for v in x.tolist()])
    np.testing.assert_array_equal(got, expected)


def test_bfloat16_of_double_example_from_ml_dtypes():
    got = uma.asarray(np.array([1 + 2**-8 + 2**-30])).astype("bfloat16").astype("float64")
    assert np.asarray(got)[0] == 1.0078125


def test_bfloat16_inputs_take_python_numbers_in_a_fresh_process():
    """A bfloat16 function input or set_value takes Python numbers without ml_dtypes imported
    first (uma imports it when it needs bfloat16's NumPy dtype)."""
    code = ("import uma, numpy as np\n"
            "s = uma.sym.scalar('s', dtype='bfloat16')\n"
            "print(float(np.asarray(uma.function([s], s)(1.5), dtype=np.float32)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.5"


def test_bfloat16_to_numpy_without_ml_dtypes_names_the_missing_package(monkeypatch):
    """ml_dtypes is a dependency of uma (NumPy's bfloat16); where it cannot be imported, a
    bfloat16 array's way to NumPy raises an ImportError naming it, not a bare import failure."""
    b = uma.asarray(np.ones(3, np.float32), dtype="bfloat16")
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    with pytest.raises(ImportError, match="ml_dtypes is not installed .a dependency of uma"):
        np.asarray(b)
