"""Eager ops against NumPy 2 (the oracle): every op x compute dtype x layout, promotion,
Python scalars (NEP 50), reductions, matmul, shape ops, creation, and error types."""
import operator
import re
import subprocess
import sys

import numpy as np
import pytest

import uma
from conftest import (
    ALL_DTYPES, COMPUTE_DTYPES, LAYOUTS, assert_matches, check_like_numpy,
    make_layout, np_dtype, numpy_quiet, random_data, standard_floor_divide, uma_dtype,
)


# --------------------------------------------------------------------------- op tables

def _np_sigmoid(x):
    x = np.asarray(x)
    out_dt = np.exp(x).dtype  # the float type NumPy's transcendental ufuncs return
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(out_dt)


# name -> (numpy oracle, domain of the input)
UNARY = {
    "negative": (np.negative, "general"),
    "abs": (np.abs, "general"),
    "exp": (np.exp, "general"),
    "log": (np.log, "positive"),
    "log1p": (np.log1p, "positive"),
    "expm1": (np.expm1, "general"),
    "sqrt": (np.sqrt, "positive"),
    "tanh": (np.tanh, "general"),
    "sigmoid": (_np_sigmoid, "general"),
    "sign": (np.sign, "coarse"),
    "square": (np.square, "general"),
    "logical_not": (np.logical_not, "coarse"),
    "sin": (np.sin, "general"),
    "cos": (np.cos, "general"),
    "floor": (np.floor, "general"),
    "ceil": (np.ceil, "general"),
}

# name -> (numpy oracle, domain of lhs, domain of rhs)
BINARY = {
    "add": (np.add, "general", "general"),
    "subtract": (np.subtract, "general", "general"),
    "multiply": (np.multiply, "general", "general"),
    "divide": (np.divide, "general", "nonzero"),
    "power": (np.power, "positive", "exponent"),
    "maximum": (np.maximum, "coarse", "coarse"),
    "minimum": (np.minimum, "coarse", "coarse"),
    "floor_divide": (standard_floor_divide, "general", "nonzero"),
    "remainder": (np.remainder, "general", "nonzero"),
    "equal": (np.equal, "coarse", "coarse"),
    "not_equal": (np.not_equal, "coarse", "coarse"),
    "less": (np.less, "coarse", "coarse"),
    "less_equal": (np.less_equal, "coarse", "coarse"),
    "greater": (np.greater, "coarse", "coarse"),
    "greater_equal": (np.greater_equal, "coarse", "coarse"),
    "logical_and": (np.logical_and, "coarse", "coarse"),
    "logical_or": (np.logical_or, "coarse", "coarse"),
}

REDUCTIONS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "all": np.all, "any": np.any, "argmax": np.argmax, "argmin": np.argmin,
}


def _data(dtype, domain, rng):
    return lambda shape: random_data(dtype, shape, rng, domain)


# --------------------------------------------------------------------------- elementwise matrix

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, dtype, layout, rng):
    np_fn, dom = UNARY[op]
    n, u = make_layout(_data(dtype, dom, rng), layout)
    check_like_numpy(lambda: np_fn(n), lambda: getattr(uma, op)(u))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary(op, dtype, layout, rng):
    np_fn, dl, dr = BINARY[op]
    na, ua = make_layout(_data(dtype, dl, rng), layout)
    nb, ub = make_layout(_data(dtype, dr, rng), layout)
    check_like_numpy(lambda: np_fn(na, nb), lambda: getattr(uma, op)(ua, ub))


@pytest.mark.parametrize("layout", ["transposed", "negative_stride", "broadcast"])
@pytest.mark.parametrize("op", ["add", "divide", "less", "maximum"])
def test_binary_mixed_layouts(op, layout, rng):
    """A strided operand next to a contiguous one."""
    np_fn, dl, dr = BINARY[op]
    na, ua = make_layout(_data("float64", dl, rng), layout)
    nb, ub = make_layout(_data("float64", dr, rng), "contiguous")
    check_like_numpy(lambda: np_fn(na, nb), lambda: getattr(uma, op)(ua, ub))
    check_like_numpy(lambda: np_fn(nb, na), lambda: getattr(uma, op)(ub, ua))


PAIRS = [(a, b) for a in COMPUTE_DTYPES for b in COMPUTE_DTYPES if a != b]


@pytest.mark.parametrize("da,db", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_promotion(op, da, db, rng):
    """Mixed dtypes follow NumPy 2 promotion; rhs of shape (4,) also broadcasts."""
    np_fn, dl, dr = BINARY[op]
    na = random_data(da, (3, 4), rng, dl)
    nb = random_data(db, (4,), rng, dr)
    ua, ub = uma.asarray(na), uma.asarray(nb)
    check_like_numpy(lambda: np_fn(na, nb), lambda: getattr(uma, op)(ua, ub))


SCALARS = [True, 3, 1.5]


@pytest.mark.parametrize("scalar", SCALARS, ids=["bool", "int", "float"])
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_python_scalar(op, dtype, scalar, rng):
    """Python scalars are weak (NEP 50) on either side."""
    np_fn, dl, dr = BINARY[op]
    # array on the left takes the lhs domain, on the right the rhs domain
    nl = random_data(dtype, (2, 3), rng, dl)
    nr = random_data(dtype, (2, 3), rng, dr)
    ul, ur = uma.asarray(nl), uma.asarray(nr)
    check_like_numpy(lambda: np_fn(nl, scalar), lambda: getattr(uma, op)(ul, scalar))
    check_like_numpy(lambda: np_fn(scalar, nr), lambda: getattr(uma, op)(scalar, ur))


@pytest.mark.parametrize("dtype,scalar", [
    ("int32", 2**40), ("int32", -2**31 - 1), ("int64", 2**70), ("int64", -2**64),
    ("bool", 2**70), ("int32", 2**31 - 1), ("float32", 2**70),
])
@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "less"])
def test_python_int_out_of_range(op, dtype, scalar, rng):
    """NumPy 2: a Python int that does not fit the array dtype raises OverflowError."""
    n = random_data(dtype, (3,), rng, "positive")
    u = uma.asarray(n)
    check_like_numpy(lambda: getattr(np, op)(n, scalar), lambda: getattr(uma, op)(u, scalar))


@pytest.mark.parametrize("dtype,scalar", [
    ("int8", 1000), ("uint8", -1), ("int16", 2**20), ("int64", 2**70), ("uint64", -2**64), ("bool", 2**70),
])
@pytest.mark.parametrize("op", ["divide", "arctan2"])
def test_python_int_out_of_range_in_float_loops(op, dtype, scalar, rng):
    """NumPy 2: divide and arctan2 compute integers in a float loop and convert the Python int
    to that loop's dtype, so an int outside the array dtype's range is a value, not an error."""
    n = random_data(dtype, (3,), rng, "positive")
    u = uma.asarray(n)
    check_like_numpy(lambda: getattr(np, op)(n, scalar), lambda: getattr(uma, op)(u, scalar))
    check_like_numpy(lambda: getattr(np, op)(scalar, n), lambda: getattr(uma, op)(scalar, u))


BROADCAST_SHAPES = [
    ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((), (3, 4)), ((3, 4), ()), ((0, 4), (1, 4)),
    ((4,), (3, 4)), ((1,), (0,)), ((2, 3, 1, 5), (4, 1)),
]


@pytest.mark.parametrize("sa,sb", BROADCAST_SHAPES, ids=[f"{a}-{b}" for a, b in BROADCAST_SHAPES])
@pytest.mark.parametrize("op", ["add", "multiply", "less", "maximum", "logical_or"])
def test_binary_broadcasting(op, sa, sb, rng):
    np_fn, dl, dr = BINARY[op]
    na = random_data("float64", sa, rng, dl)
    nb = random_data("int32", sb, rng, dr)
    check_like_numpy(lambda: np_fn(na, nb), lambda: getattr(uma, op)(uma.asarray(na), uma.asarray(nb)))


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_shape_mismatch_names_op(op):
    a, b = uma.ones((2, 3)), uma.ones((3, 2))
    with pytest.raises(ValueError) as ei:
        getattr(uma, op)(a, b)
    msg = str(ei.value)
    assert op in msg and "(2, 3)" in msg and "(3, 2)" in msg, msg


def test_binary_shape_mismatch_message_form():
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes \(2,\) \(3,\)"):
        uma.add(uma.ones(2), uma.ones(3))


ZERO_BASE_EXPONENTS = [complex(1, 2), complex(2, 0), complex(0.5, -3), complex(1, np.nan), complex(np.inf, 1),
                       complex(1e-300, 5), complex(-1, 0), complex(0, 1), complex(-0.0, 1), complex(-1, 1),
                       complex(np.nan, 1), complex(0, 0), complex(-0.0, 0)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_power_of_zero_like_numpy(dtype):
    """0 ** b: 1 for b == 0, 0 whenever Re(b) > 0 (even with an imaginary part), NaN otherwise
    (NumPy 2's npy_cpow), eagerly, on the element path of a compiled function and fused."""
    a = np.zeros(len(ZERO_BASE_EXPONENTS), dtype)
    b = np.array(ZERO_BASE_EXPONENTS, dtype)
    want = numpy_quiet(lambda: np.power(a, b))
    np.testing.assert_array_equal(np.asarray(uma.asarray(a) ** uma.asarray(b)), want)
    x, y = uma.sym.scalar("x", dtype=dtype), uma.sym.scalar("y", dtype=dtype)
    for backend in ("cpu", "reference"):
        f = uma.function([x, y], x ** y, backend=backend)
        got = [np.asarray(f(a[k], b[k])).item() for k in range(len(a))]
        np.testing.assert_array_equal(np.array(got, dtype), want, err_msg=backend)


def test_int_power_negative_exponent_like_numpy():
    n = np.array([1, 2, 3], dtype=np.int64)
    check_like_numpy(lambda: np.power(n, np.array([1, -1, 2])),
                     lambda: uma.power(uma.asarray(n), uma.asarray(np.array([1, -1, 2]))))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
def test_integer_floor_semantics_negative_operands(op, dtype):
    """Python/NumPy floor semantics (not C truncation) for mixed signs."""
    a = np.array([7, -7, 7, -7, 0, 1, -1], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, -3, 3], dtype=dtype)
    check_like_numpy(lambda: getattr(np, op)(a, b), lambda: getattr(uma, op)(uma.asarray(a), uma.asarray(b)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_special_values(dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 50.0, -50.0], dtype=dtype)
    u = uma.asarray(x)
    for op in ["exp", "tanh", "sigmoid", "abs", "negative", "sign", "floor", "sqrt", "log", "expm1"]:
        check_like_numpy(lambda: UNARY[op][0](x), lambda: getattr(uma, op)(u))
    for op in ["maximum", "minimum", "equal", "less", "add", "multiply", "divide"]:
        check_like_numpy(lambda: BINARY[op][0](x, x[::-1].copy()),
                         lambda: getattr(uma, op)(u, uma.asarray(x[::-1].copy())))


# Every op covers every dtype: the errors for dtypes NumPy has no loop for are
# tested in test_op_matrix_elementwise.py and test_op_matrix_reduce_linalg.py.


# --------------------------------------------------------------------------- operators

BIN_OPERATORS = [
    ("add", operator.add), ("subtract", operator.sub), ("multiply", operator.mul),
    ("divide", operator.truediv), ("power", operator.pow), ("floor_divide", operator.floordiv),
    ("remainder", operator.mod), ("equal", operator.eq), ("not_equal", operator.ne),
    ("less", operator.lt), ("less_equal", operator.le), ("greater", operator.gt),
    ("greater_equal", operator.ge),
]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
@pytest.mark.parametrize("name,opr", BIN_OPERATORS, ids=[n for n, _ in BIN_OPERATORS])
def test_operators(name, opr, dtype, rng):
    _, dl, dr = BINARY[name]
    na = random_data(dtype, (3, 4), rng, dl)
    nb = random_data("float64" if dtype == "int32" else dtype, (4,), rng, dr)
    ua, ub = uma.asarray(na), uma.asarray(nb)
    check_like_numpy(lambda: opr(na, nb), lambda: opr(ua, ub))
    s = 2  # a weak Python scalar on the right, then reflected on the left
    check_like_numpy(lambda: opr(na, s), lambda: opr(ua, s))
    nr = random_data(dtype, (3, 4), rng, dr)
    check_like_numpy(lambda: opr(s, nr), lambda: opr(s, uma.asarray(nr)))  # reflected


@pytest.mark.parametrize("name,opr", BIN_OPERATORS + [("matmul", operator.matmul)],
                         ids=[n for n, _ in BIN_OPERATORS] + ["matmul"])
def test_numpy_operand_on_the_left_gives_a_uma_array(name, opr, rng):
    """An ndarray or a NumPy scalar on the left of an operator calls uma's reflected operator
    (uma.Array.__array_ufunc__), so the result is a uma array with NumPy's value and dtype, as
    with the operands the other way round; so does the operator's ufunc called plainly
    (np.add(n, a)), while other NumPy ufuncs (np.exp) give ndarrays."""
    na = random_data("float32", (4, 4), rng, BINARY.get(name, (None, "general", "general"))[1])
    nb = random_data("float32", (4, 4), rng, BINARY.get(name, (None, "general", "nonzero"))[2])
    for left in (na, np.float32(1.5), np.int64(3)):
        got = check_like_numpy(lambda: opr(left, nb), lambda: opr(left, uma.asarray(nb)))
        if got is not None:
            assert isinstance(got, uma.Array), (name, type(left))
    assert isinstance(np.add(na, uma.asarray(nb)), uma.Array)
    assert isinstance(np.exp(uma.asarray(nb)), np.ndarray)


@pytest.mark.parametrize("name,opr", [("add", operator.iadd), ("subtract", operator.isub),
                                      ("multiply", operator.imul), ("divide", operator.itruediv)])
def test_numpy_in_place_operator_with_a_uma_operand_updates_the_ndarray(name, opr, rng):
    """`ndarray -= uma_array` updates the ndarray in place (NumPy writes out=, reading the uma
    operand's memory), as with an ndarray operand: every name bound to it sees the update, and
    the result is the ndarray itself, not a new uma array."""
    n = random_data("float64", (3, 4), rng, "general")
    m = random_data("float64", (3, 4), rng, "nonzero")
    want = opr(n.copy(), m)
    target = n.copy()
    alias = target
    params = [target]
    for p in params:
        p = opr(p, uma.asarray(m))
        assert p is target
    np.testing.assert_array_equal(alias, want)
    out = uma.asarray(np.zeros((3, 4)))
    assert np.add(n, m, out=out) is out  # a writable uma array as out= is written in place
    np.testing.assert_array_equal(np.asarray(out), n + m)
    q, r = np.divmod(n, uma.asarray(m), out=(None, out))  # NumPy allocates for the None entry
    assert isinstance(q, np.ndarray) and r is out
    np.testing.assert_array_equal(q, np.divmod(n, m)[0])
    np.testing.assert_array_equal(np.asarray(out), np.divmod(n, m)[1])
    ro_np = np.zeros(3)
    ro_np.flags.writeable = False
    ro = uma.asarray(ro_np)
    with pytest.raises(ValueError, match="read-only"):
        np.add(ro_np.copy(), 1, out=ro)
    np.testing.assert_array_equal(ro_np, 0)


@pytest.mark.parametrize("dtype", ["bool", "int32", "float64"])
def test_unary_operators(dtype, rng):
    n = random_data(dtype, (3, 4), rng, "general")
    u = uma.asarray(n)
    check_like_numpy(lambda: -n, lambda: -u)
    check_like_numpy(lambda: abs(n), lambda: abs(u))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_matmul_operator(dtype, rng):
    a = random_data(dtype, (3, 4), rng)
    b = random_data(dtype, (4, 2), rng)
    check_like_numpy(lambda: a @ b, lambda: uma.asarray(a) @ uma.asarray(b))


def test_operators_do_not_return_notimplemented_for_lists():
    """Python lists are accepted anywhere an array is."""
    n = np.arange(3.0)
    u = uma.asarray(n)
    check_like_numpy(lambda: n + [1, 2, 3], lambda: u + [1, 2, 3])
    check_like_numpy(lambda: np.add([1, 2, 3], n), lambda: uma.add([1, 2, 3], u))
    check_like_numpy(lambda: np.exp([0.5, 1.0]), lambda: uma.exp([0.5, 1.0]))


# --------------------------------------------------------------------------- where, one_hot

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
def test_where(dtype, layout, rng):
    nc, uc = make_layout(_data("bool", "general", rng), layout)
    nx, ux = make_layout(_data(dtype, "general", rng), layout)
    ny, uy = make_layout(_data(dtype, "general", rng), layout)
    check_like_numpy(lambda: np.where(nc, nx, ny), lambda: uma.where(uc, ux, uy))


@pytest.mark.parametrize("dx,dy", [("int32", "float32"), ("bool", "int64"), ("int32", "int64"),
                                   ("float32", "float64"), ("bool", "float32")])
def test_where_promotion_and_broadcast(dx, dy, rng):
    c = random_data("bool", (3, 1), rng)
    x = random_data(dx, (4,), rng)
    y = random_data(dy, (2, 1, 1), rng)
    check_like_numpy(lambda: np.where(c, x, y),
                     lambda: uma.where(uma.asarray(c), uma.asarray(x), uma.asarray(y)))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "bool"])
def test_where_python_scalars(dtype, rng):
    c = random_data("bool", (3, 4), rng)
    x = random_data(dtype, (3, 4), rng)
    check_like_numpy(lambda: np.where(c, x, 0), lambda: uma.where(uma.asarray(c), uma.asarray(x), 0))
    check_like_numpy(lambda: np.where(c, 1.5, x), lambda: uma.where(uma.asarray(c), 1.5, uma.asarray(x)))


def test_where_nonbool_condition(rng):
    c = random_data("float64", (3, 4), rng, "coarse")
    x, y = np.arange(12.0).reshape(3, 4), -np.ones(4)
    check_like_numpy(lambda: np.where(c, x, y), lambda: uma.where(uma.asarray(c), uma.asarray(x), uma.asarray(y)))


def test_where_shape_mismatch():
    with pytest.raises(ValueError):
        uma.where(uma.ones((2, 3), dtype="bool"), uma.ones(3), uma.ones(2))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize("ishape", [(5,), (2, 3), (), (0,)])
def test_one_hot(ishape, dtype, rng):
    depth = 4
    idx = rng.integers(0, depth, size=ishape).astype(np.int64)
    expected = np.eye(depth, dtype=dtype)[idx]
    assert_matches(uma.one_hot(uma.asarray(idx), depth, dtype=dtype), expected)


def test_one_hot_default_dtype_and_int32_indices():
    idx = np.array([3, 0, 1], dtype=np.int32)
    assert_matches(uma.one_hot(uma.asarray(idx), 5), np.eye(5)[idx])


# --------------------------------------------------------------------------- reductions

AXES = [
    (None, False), (0, False), (-1, False), ((0, 2), False), ((), False),
    (None, True), (1, True), ((0, 2), True),
]
# NumPy quirk left out: an int axis 0 or -1 on a 0-d array reduces nothing instead of raising
# AxisError (a tuple axis does raise); uma treats it as the bad axis it is (IndexError).
RED_CASES = [(lay, ax, kd) for lay in LAYOUTS for ax, kd in AXES if not (lay == "0d" and isinstance(ax, int))]


@pytest.mark.parametrize("layout,axis,keepdims", RED_CASES,
                         ids=[f"{l}-{a}-{'keep' if k else 'drop'}" for l, a, k in RED_CASES])
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reduction(op, dtype, layout, axis, keepdims, rng):
    n, u = make_layout(_data(dtype, "coarse" if op.startswith("arg") else "general", rng),
                       layout, shape=(2, 3, 4))
    np_fn = REDUCTIONS[op]
    check_like_numpy(lambda: np_fn(n, axis=axis, keepdims=keepdims),
                     lambda: getattr(uma, op)(u, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reduction_defaults_and_methods(op, rng):
    n = random_data("float64", (3, 5), rng, "coarse")
    u = uma.asarray(n)
    np_fn = REDUCTIONS[op]
    check_like_numpy(lambda: np_fn(n), lambda: getattr(uma, op)(u))
    if hasattr(u, op):  # sum/mean/max/min/argmax are methods per API.md
        check_like_numpy(lambda: getattr(n, op)(axis=1), lambda: getattr(u, op)(axis=1))
        check_like_numpy(lambda: getattr(n, op)(axis=0, keepdims=True),
                         lambda: getattr(u, op)(axis=0, keepdims=True))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "argmax"])
def test_reduction_methods_exist(op):
    assert callable(getattr(uma.ones(3), op))


@pytest.mark.parametrize("op", list(REDUCTIONS))
@pytest.mark.parametrize("axis", [3, -4, (0, 3)])
def test_reduction_bad_axis_index_error(op, axis):
    n = np.ones((2, 3, 4))
    check_like_numpy(lambda: REDUCTIONS[op](n, axis=axis), lambda: getattr(uma, op)(uma.asarray(n), axis=axis))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "all", "any"])
def test_reduction_duplicate_axis_value_error(op):
    with pytest.raises(ValueError):
        getattr(uma, op)(uma.ones((2, 3)), axis=(0, 0))
    with pytest.raises(ValueError):
        getattr(uma, op)(uma.ones((2, 3)), axis=(1, -1))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argreduction_tuple_axis_type_error(op):
    check_like_numpy(lambda: getattr(np, op)(np.ones((2, 3)), axis=(0, 1)),
                     lambda: getattr(uma, op)(uma.ones((2, 3)), axis=(0, 1)))
    with pytest.raises(TypeError):
        getattr(uma, op)(uma.ones((2, 3)), axis=(0, 1))


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_reduction_of_empty_without_identity_value_error(op):
    with pytest.raises(ValueError):
        getattr(uma, op)(uma.zeros((0, 3)))
    with pytest.raises(ValueError):
        getattr(uma, op)(uma.zeros((0, 3)), axis=0)
    assert_matches(getattr(uma, op)(uma.zeros((0, 3)), axis=1), getattr(np, op)(np.zeros((0, 3)), axis=1))


@pytest.mark.parametrize("op", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "bool", "float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reduction_dtype_keyword(op, dtype, axis):
    """sum/prod/mean(dtype=): accumulate in and return ``dtype`` (Array API standard; NumPy),
    eagerly and in a compiled function, int8 wraparound and integer means included."""
    x = np.array([[100, 100, 100, 7], [1, 2, 4, -3]], np.int8)
    want = getattr(np, op)(x, axis=axis, dtype=dtype)
    got = getattr(uma, op)(uma.asarray(x), axis=axis, dtype=dtype)
    method = getattr(uma.asarray(x), op)(axis=axis, dtype=dtype)
    v = uma.sym.matrix("x", dtype="int8")
    f = uma.function([v], getattr(uma.sym, op)(v, axis=axis, dtype=dtype))
    g = uma.function([v], getattr(v, op)(axis=axis, dtype=dtype))  # the Variable method
    for out in (np.asarray(got), np.asarray(method), f(x), g(x)):
        assert out.dtype == want.dtype
        if np.dtype(dtype).kind == "f" and dtype == "float16":
            np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=2e-3)
        else:
            np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin", "sum", "prod", "any"])
@pytest.mark.parametrize("shape,axis", [((0, 0), -1), ((0, 0, 4), 0), ((3, 0), 1), ((0, 3), 1), ((0, 3), 0)])
def test_reduction_over_a_zero_length_axis(op, shape, axis):
    """max/min/argmax/argmin over a zero-length axis raise ValueError as NumPy does, also when
    the result would be empty; the ops with an identity return it."""
    check_like_numpy(lambda: getattr(np, op)(np.zeros(shape), axis=axis),
                     lambda: getattr(uma, op)(uma.zeros(shape), axis=axis))


@pytest.mark.parametrize("fn", ["sum", "mean", "prod", "max", "min", "all", "any", "argmax", "argmin"])
def test_numpy_reductions_accept_uma_arrays(fn):
    """numpy.sum(x) and friends call x.sum(axis=..., dtype=..., out=None): the methods take
    numpy.ndarray's signature (out must be None)."""
    x = np.arange(1.0, 7.0).reshape(2, 3)
    a = uma.asarray(x)
    f = getattr(np, fn)
    np.testing.assert_array_equal(np.asarray(f(a)), f(x))
    np.testing.assert_array_equal(np.asarray(f(a, axis=1)), f(x, axis=1))
    if fn not in ("argmax", "argmin"):
        np.testing.assert_array_equal(np.asarray(f(a, axis=0, keepdims=True)), f(x, axis=0, keepdims=True))
    with pytest.raises(TypeError, match="out= is not supported"):
        getattr(a, fn)(out=np.zeros(()))


@pytest.mark.parametrize("backend", ["eager", "cpu", "numpy", "reference"])
def test_integer_mean_accumulates_in_float64(backend):
    """numpy.mean of integers accumulates in float64: large values do not wrap."""
    cases = [np.array([2**63 + 5, 2**63 + 7], np.uint64), np.array([2**62, 2**62, 2**62], np.int64),
             np.array([[127, 127], [127, 1]], np.int8), np.array([True, False, True])]
    for x in cases:
        want = np.mean(x, axis=0)
        if backend == "eager":
            got = np.asarray(uma.mean(uma.asarray(x), axis=0))
        else:
            v = uma.sym.tensor("x", dtype=str(x.dtype), ndim=x.ndim)
            got = np.asarray(uma.function([v], uma.sym.mean(v, axis=0), backend=backend)(x))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.parametrize("backend", ["eager", "cpu", "numpy", "reference"])
def test_cumulative_ops_take_the_first_element_as_it_is(backend):
    """cumprod/cumsum start from the first element itself, as numpy.multiply.accumulate does:
    no 1 * (1+infj) = nan+infj, no 0 + -0.0 = +0.0."""
    cases = [("cumprod", np.array([complex(1, np.inf), 1, 2])), ("cumprod", np.array([complex(np.inf, 0), 1j])),
             ("cumsum", np.array([-0.0, -0.0])), ("cumsum", np.array([complex(-0.0, -0.0), 1]))]
    for name, x in cases:
        want = getattr(np, name)(x)
        if backend == "eager":
            got = np.asarray(getattr(uma, name)(uma.asarray(x)))
        else:
            v = uma.sym.vector("x", dtype=str(x.dtype))
            got = np.asarray(uma.function([v], getattr(uma.sym, name)(v), backend=backend)(x))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduction_nan_propagates(dtype):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], dtype=dtype)
    for op in ["sum", "mean", "max", "min", "prod", "argmax", "argmin"]:
        check_like_numpy(lambda: REDUCTIONS[op](x, axis=1), lambda: getattr(uma, op)(uma.asarray(x), axis=1))


def test_sum_float32_large_accuracy(rng):
    """A long float32 sum stays within the float32 tolerance (no naive accumulation drift)."""
    x = rng.uniform(0.0, 1.0, size=100_000).astype(np.float32)
    expected = np.sum(x.astype(np.float64)).astype(np.float32)
    assert_matches(uma.sum(uma.asarray(x)), expected)
    assert_matches(uma.mean(uma.asarray(x)), np.mean(x.astype(np.float64)).astype(np.float32))


# --------------------------------------------------------------------------- matmul / dot

MATMUL_SHAPES = [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 2)), ((3, 0), (0, 4)), ((0, 3), (3, 2)),
    ((2, 1, 3, 4), (3, 4, 2)), ((5,), (2, 5, 3)), ((1, 1), (1, 1)), ((33, 17), (17, 65)),
]
MM_LAYOUTS = ["contiguous", "transposed", "negative_stride"]


def _mm_operand(n, layout):
    """(numpy, uma) with the values of `n` in a layout over the last two axes."""
    if layout == "contiguous" or n.ndim == 0:
        return n, uma.asarray(n)
    if layout == "transposed":
        if n.ndim == 1:
            return n, uma.asarray(n)
        axes = tuple(range(n.ndim - 2)) + (n.ndim - 1, n.ndim - 2)
        base = np.ascontiguousarray(n.transpose(axes))
        nv = base.transpose(axes)
        uv = uma.transpose(uma.asarray(base), axes)
        return nv, uv
    if layout == "negative_stride":
        if n.ndim == 1:
            idx = (slice(None, None, -2),)
        else:
            idx = (slice(None, None, -1),) + (slice(None),) * (n.ndim - 2) + (slice(None, None, -2),)
        base = np.zeros(n.shape[:-1] + (2 * n.shape[-1],), dtype=n.dtype)
        base[idx] = n
        return base[idx], uma.asarray(base)[idx]
    raise ValueError(layout)


@pytest.mark.parametrize("lb", MM_LAYOUTS)
@pytest.mark.parametrize("la", MM_LAYOUTS)
@pytest.mark.parametrize("dtype", COMPUTE_DTYPES)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul(sa, sb, dtype, la, lb, rng):
    na, ua = _mm_operand(random_data(dtype, sa, rng), la)
    nb, ub = _mm_operand(random_data(dtype, sb, rng), lb)
    check_like_numpy(lambda: np.matmul(na, nb), lambda: uma.matmul(ua, ub))


@pytest.mark.parametrize("da,db", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_matmul_promotion(da, db, rng):
    a = random_data(da, (3, 4), rng)
    b = random_data(db, (4, 2), rng)
    check_like_numpy(lambda: np.matmul(a, b), lambda: uma.matmul(uma.asarray(a), uma.asarray(b)))


@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 6)), ((4,), (5,)), ((2, 3, 4), (3, 4, 2)),
                                   ((), (3,)), ((3,), ()), ((2, 3), (2,))])
def test_matmul_shape_errors(sa, sb):
    na, nb = np.ones(sa), np.ones(sb)
    check_like_numpy(lambda: np.matmul(na, nb), lambda: uma.matmul(uma.asarray(na), uma.asarray(nb)))
    with pytest.raises(ValueError):
        uma.matmul(uma.asarray(na), uma.asarray(nb))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_dot(sa, sb, dtype, rng):
    a = random_data(dtype, sa, rng)
    b = random_data(dtype, sb, rng)
    check_like_numpy(lambda: np.dot(a, b), lambda: uma.dot(uma.asarray(a), uma.asarray(b)))


def test_matmul_large_float32_blas_accuracy(rng):
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 32)).astype(np.float32)
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    assert_matches(uma.matmul(uma.asarray(a), uma.asarray(b)), expected, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------- shape ops

RESHAPES_2D = [((3, 4), (12,)), ((3, 4), (4, 3)), ((3, 4), (2, -1)), ((3, 4), (-1,)), ((3, 4), (2, 2, 3)),
               ((3, 4), (3, 2, 2)), ((0, 4), (4, 0)), ((0, 4), (-1, 2))]
RESHAPES = ([(s, d, lay) for s, d in RESHAPES_2D for lay in ["contiguous", "transposed", "negative_stride"]]
            + [((12,), (3, 1, 4), "contiguous"), ((), (1, 1), "contiguous"), ((1,), (), "contiguous"),
               ((2, 3, 4), (6, 4), "transposed"), ((2, 3, 4), (-1,), "negative_stride")])


@pytest.mark.parametrize("src,dst,layout", RESHAPES, ids=[f"{a}->{b}-{c}" for a, b, c in RESHAPES])
def test_reshape(src, dst, layout, rng):
    n, u = make_layout(_data("float64", "general", rng), layout, shape=src)
    check_like_numpy(lambda: np.reshape(n, dst), lambda: uma.reshape(u, dst))
    check_like_numpy(lambda: n.reshape(dst), lambda: u.reshape(dst))
    if len(dst) > 0:
        check_like_numpy(lambda: n.reshape(*dst), lambda: u.reshape(*dst))


@pytest.mark.parametrize("dst", [(5,), (2, -1, -1), (2, -1, 5), (13,), (5, -1), (0, -1)])
def test_reshape_errors(dst):
    n = np.ones((3, 4))
    with pytest.raises(ValueError):
        np.reshape(n, dst)  # the oracle refuses
    with pytest.raises(ValueError):
        uma.reshape(uma.asarray(n), dst)


def test_reshape_int_shape():
    check_like_numpy(lambda: np.reshape(np.arange(6.0), 6), lambda: uma.reshape(uma.asarray(np.arange(6.0)), 6))


TRANSPOSES = [((2, 3, 4), None), ((2, 3, 4), (1, 0, 2)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (-1, 0, 1)),
              ((3,), None), ((), None), ((0, 3), (1, 0))]


@pytest.mark.parametrize("shape,axes", TRANSPOSES, ids=[f"{s}-{a}" for s, a in TRANSPOSES])
def test_transpose(shape, axes, rng):
    n = random_data("int64", shape, rng)
    u = uma.asarray(n)
    check_like_numpy(lambda: np.transpose(n, axes), lambda: uma.transpose(u, axes))
    if axes is None:
        check_like_numpy(lambda: n.T, lambda: u.T)
        check_like_numpy(lambda: n.transpose(), lambda: u.transpose())
    else:
        check_like_numpy(lambda: n.transpose(*axes), lambda: u.transpose(*axes))
        check_like_numpy(lambda: n.transpose(axes), lambda: u.transpose(axes))


@pytest.mark.parametrize("axes", [(0, 1), (0, 0, 1), (0, 1, 3), (0, 1, 2, 3)])
def test_transpose_errors(axes):
    n = np.ones((2, 3, 4))
    check_like_numpy(lambda: np.transpose(n, axes), lambda: uma.transpose(uma.asarray(n), axes))


def test_transpose_is_a_view():
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n.copy())
    t = uma.transpose(u)
    t[2, 1] = 100.0
    assert u.tolist()[1][2] == 100.0
    u.T[0, 1] = -1.0
    assert u.tolist()[1][0] == -1.0


BROADCASTS = [((3,), (2, 3)), ((1,), (4,)), ((), (2, 2)), ((2, 1), (2, 5)), ((1, 3), (0, 3)),
              ((3,), (3,)), ((2, 1, 1), (2, 3, 4)), ((1,), (0,))]


@pytest.mark.parametrize("src,dst", BROADCASTS, ids=[f"{a}->{b}" for a, b in BROADCASTS])
def test_broadcast_to(src, dst, rng):
    n = random_data("int32", src, rng)
    u = uma.asarray(n)
    b = uma.broadcast_to(u, dst)
    nb = np.broadcast_to(n, dst)
    assert_matches(b, nb)
    # a view: NumPy's zero strides on the broadcast axes
    for s, ns, d in zip(b.strides, nb.strides, dst):
        if d > 1:
            assert s == ns


def test_broadcast_to_shares_memory_with_source():
    n = np.arange(3.0)
    u = uma.asarray(n.copy())
    b = uma.broadcast_to(u, (4, 3))
    u[1] = 42.0
    assert [r[1] for r in b.tolist()] == [42.0] * 4


@pytest.mark.parametrize("src,dst", [((3,), (4,)), ((2, 3), (3,)), ((2,), (2, 3)), ((2, 1), (3, 1))])
def test_broadcast_to_errors(src, dst):
    with pytest.raises(ValueError):
        uma.broadcast_to(uma.ones(src), dst)


CONCATS = [
    ([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1)], 1), ([(2, 3), (2, 5)], -1), ([(2, 3)], 0),
    ([(0, 3), (2, 3)], 0), ([(2, 3, 4), (2, 1, 4), (2, 2, 4)], 1), ([(3,), (0,), (2,)], 0),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative_stride"])
@pytest.mark.parametrize("shapes,axis", CONCATS, ids=[f"{s}-ax{a}" for s, a in CONCATS])
def test_concatenate(shapes, axis, layout, rng):
    pairs = []
    for s in shapes:
        if len(s) == 2 and 0 not in s:
            pairs.append(make_layout(_data("float32", "general", rng), layout, shape=s))
        else:
            n = random_data("float32", s, rng)
            pairs.append((n, uma.asarray(n)))
    ns = [p[0] for p in pairs]
    us = [p[1] for p in pairs]
    check_like_numpy(lambda: np.concatenate(ns, axis=axis), lambda: uma.concatenate(us, axis=axis))
    check_like_numpy(lambda: np.concatenate(tuple(ns), axis=axis), lambda: uma.concatenate(tuple(us), axis=axis))


def test_concatenate_default_axis_and_promotion(rng):
    a = random_data("int32", (2, 3), rng)
    b = random_data("float32", (1, 3), rng)
    c = random_data("bool", (1, 3), rng)
    check_like_numpy(lambda: np.concatenate([a, b, c]),
                     lambda: uma.concatenate([uma.asarray(a), uma.asarray(b), uma.asarray(c)]))
    check_like_numpy(lambda: np.concatenate([a, c]), lambda: uma.concatenate([uma.asarray(a), uma.asarray(c)]))


@pytest.mark.parametrize("shapes,axis", [([(2, 3), (2, 4)], 0), ([(2, 3), (3,)], 0), ([(), ()], 0),
                                         ([(2, 3), (2, 3)], 2), ([(2, 3), (2, 3)], -3), ([], 0)])
def test_concatenate_errors(shapes, axis):
    ns = [np.ones(s) for s in shapes]
    check_like_numpy(lambda: np.concatenate(ns, axis=axis),
                     lambda: uma.concatenate([uma.asarray(n) for n in ns], axis=axis))


STACKS = [([(3,), (3,)], 0), ([(3,), (3,)], 1), ([(3,), (3,)], -1), ([(2, 3)] * 3, 2), ([(2, 3)] * 3, 1),
          ([(), ()], 0), ([(0, 2), (0, 2)], 1), ([(2, 3)], 0)]


@pytest.mark.parametrize("shapes,axis", STACKS, ids=[f"{s}-ax{a}" for s, a in STACKS])
def test_stack(shapes, axis, rng):
    ns = [random_data("int64", s, rng) for s in shapes]
    check_like_numpy(lambda: np.stack(ns, axis=axis), lambda: uma.stack([uma.asarray(n) for n in ns], axis=axis))


def test_stack_layouts_and_promotion(rng):
    n1, u1 = make_layout(_data("float64", "general", rng), "transposed")
    n2, u2 = make_layout(_data("int32", "general", rng), "negative_stride")
    n3, u3 = make_layout(_data("bool", "general", rng), "broadcast")
    check_like_numpy(lambda: np.stack([n1, n2, n3]), lambda: uma.stack([u1, u2, u3]))
    check_like_numpy(lambda: np.stack([n1, n2, n3], axis=-1), lambda: uma.stack([u1, u2, u3], axis=-1))


@pytest.mark.parametrize("shapes,axis", [([(3,), (4,)], 0), ([(3,), (3,)], 2), ([(3,), (3,)], -3), ([], 0)])
def test_stack_errors(shapes, axis):
    ns = [np.ones(s) for s in shapes]
    check_like_numpy(lambda: np.stack(ns, axis=axis), lambda: uma.stack([uma.asarray(n) for n in ns], axis=axis))


@pytest.mark.parametrize("shape,axis", [((3,), 0), ((3,), 1), ((3,), -1), ((2, 3), 1), ((), 0), ((2, 3), 3),
                                        ((2, 3), -4)])
def test_expand_dims(shape, axis, rng):
    n = random_data("float64", shape, rng)
    check_like_numpy(lambda: np.expand_dims(n, axis), lambda: uma.expand_dims(uma.asarray(n), axis))


@pytest.mark.parametrize("shape,axis", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), -1), ((1, 3, 1), 1),
                                        ((1, 1), None), ((3,), None), ((1,), 0), ((1, 3), 2)])
def test_squeeze(shape, axis, rng):
    n = random_data("float64", shape, rng)
    check_like_numpy(lambda: np.squeeze(n, axis), lambda: uma.squeeze(uma.asarray(n), axis))


# --------------------------------------------------------------------------- creation

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("fn", ["zeros", "ones"])
def test_zeros_ones_all_dtypes(fn, dtype):
    for shape in [(2, 3), 4, (), (0, 5)]:
        got = getattr(uma, fn)(shape, dtype=dtype)
        assert_matches(got, getattr(np, fn)(shape, dtype=np_dtype(dtype)))
        assert got.writable


@pytest.mark.parametrize("spec", [np.float32, np.dtype("int32"), "int64", bool, float, int, complex,
                                  "float64", np.bool_])
def test_creation_accepts_numpy_and_python_dtype_specs(spec):
    assert_matches(uma.zeros((2,), dtype=spec), np.zeros((2,), dtype=spec))
    assert_matches(uma.ones((2,), dtype=spec), np.ones((2,), dtype=spec))
    assert_matches(uma.zeros((2,), dtype=uma.dtype(spec)), np.zeros((2,), dtype=spec))


def test_creation_default_dtype_is_float64():
    for fn in ["zeros", "ones", "empty"]:
        a = getattr(uma, fn)((2, 2))
        assert a.dtype == np.float64 and a.shape == (2, 2)
    assert_matches(uma.eye(3), np.eye(3))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty(dtype):
    a = uma.empty((3, 2), dtype=dtype)
    assert a.shape == (3, 2) and a.dtype.name == dtype and a.writable
    assert a.strides == np.empty((3, 2), dtype=np_dtype(dtype)).strides


@pytest.mark.parametrize("fill,dtype", [(3, None), (1.5, None), (True, None), (2 + 1j, None), (7, "float32"),
                                        (-2, "int32"), (0.5, "int64"), (1, "bool"), (3, "uint8"), (1.25, "float16")])
def test_full(fill, dtype):
    check_like_numpy(lambda: np.full((2, 3), fill, dtype=dtype), lambda: uma.full((2, 3), fill, dtype=dtype))
    check_like_numpy(lambda: np.full((), fill, dtype=dtype), lambda: uma.full((), fill, dtype=dtype))


@pytest.mark.parametrize("fill", [(), [1.0, 2.0], np.ones((3, 1))])
def test_full_with_an_unbroadcastable_value_names_full(fill):
    """NumPy's full raises ValueError for a fill value that does not broadcast to the shape;
    uma's error names full (or full_like) and both shapes."""
    with pytest.raises(ValueError):
        np.full((2, 3), fill)
    shape = np.shape(fill)
    msg = rf"^full: cannot broadcast an array of shape {re.escape(str(shape))} to shape \(2, 3\)"
    with pytest.raises(ValueError, match=msg):
        uma.full((2, 3), fill)
    with pytest.raises(ValueError, match=msg.replace("full:", "full_like:")):
        uma.full_like(uma.zeros((2, 3)), fill)


@pytest.mark.parametrize("fill,dtype", [(300, "int8"), (2**70, "int64"), (-1, "uint32"), (2**31, "int32")])
def test_full_out_of_range_python_int(fill, dtype):
    check_like_numpy(lambda: np.full((2,), fill, dtype=dtype), lambda: uma.full((2,), fill, dtype=dtype))
    with pytest.raises(OverflowError):
        uma.full((2,), fill, dtype=dtype)


@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((2, 7), {}), ((0, 10, 3), {}), ((10, 0, -2), {}), ((0.5, 3.0, 0.5), {}), ((5,), {"dtype": "float32"}),
    ((3, 3), {}), ((5, 3), {}), ((0, 1, 0.25), {}), ((-3, 3), {"dtype": "int32"}), ((1, 2), {"step": 0.25}),
    ((4.0,), {}), ((0, 5), {"dtype": "float64"}),
])
def test_arange(args, kw):
    check_like_numpy(lambda: np.arange(*args, **kw), lambda: uma.arange(*args, **kw))


def test_arange_zero_step():
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
    with pytest.raises((ValueError, ZeroDivisionError)):  # NumPy: ZeroDivisionError; DESIGN: a bad value
        uma.arange(0, 5, 0)


@pytest.mark.parametrize("n,m,k,dtype", [(3, None, 0, "float64"), (3, 5, 0, "float32"), (4, 2, 1, "int32"),
                                         (4, 4, -2, "bool"), (3, 3, 5, "int64"), (0, None, 0, "float64"),
                                         (1, None, 0, "float16")])
def test_eye(n, m, k, dtype):
    check_like_numpy(lambda: np.eye(n, m, k, dtype=dtype), lambda: uma.eye(n, m, k, dtype=dtype))
    check_like_numpy(lambda: np.eye(n, M=m, k=k, dtype=dtype), lambda: uma.eye(n, m=m, k=k, dtype=dtype))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative_stride", "0d"])
@pytest.mark.parametrize("dtype", ["int32", "float32", "bool", "int8", "complex64"])
def test_like_functions(dtype, layout, rng):
    n, u = make_layout(_data(dtype, "general", rng), layout)
    assert_matches(uma.zeros_like(u), np.zeros_like(n))
    assert_matches(uma.ones_like(u), np.ones_like(n))
    assert_matches(uma.full_like(u, 1), np.full_like(n, 1))
    assert_matches(uma.zeros_like(u, dtype="float64"), np.zeros_like(n, dtype="float64"))
    assert_matches(uma.ones_like(u, dtype=np.int64), np.ones_like(n, dtype=np.int64))
    assert_matches(uma.full_like(u, 2, dtype="float32"), np.full_like(n, 2, dtype="float32"))


def test_like_functions_device_keyword(rng):
    """zeros_like & co. make their result on the input's device, or on ``device=`` (Array API
    standard); an unknown device is a ValueError naming it."""
    n = rng.standard_normal((2, 3)).astype(np.float32)
    u = uma.asarray(n)
    for fn in ("zeros_like", "ones_like", "empty_like"):
        got = getattr(uma, fn)(u, device="cpu")
        assert str(got.device) == "cpu" and got.shape == (2, 3) and got.dtype.name == "float32"
    assert_matches(uma.full_like(u, 3, device="cpu"), np.full_like(n, 3))
    with pytest.raises(ValueError, match="tpu"):
        uma.zeros_like(u, device="tpu")


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_creation_negative_dimension(fn):
    with pytest.raises(ValueError):
        getattr(uma, fn)((2, -1))


def test_creation_bad_dtype():
    with pytest.raises(TypeError):
        uma.zeros((2,), dtype="float31")


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "full"])
def test_created_arrays_are_independent(fn):
    args = ((3,), 1.0) if fn == "full" else ((3,),)
    a = getattr(uma, fn)(*args)
    b = getattr(uma, fn)(*args)
    a[...] = 5.0
    b[...] = 7.0
    assert a.tolist() == [5.0] * 3 and b.tolist() == [7.0] * 3


def test_python_lists_accepted_by_ops():
    check_like_numpy(lambda: np.matmul([[1.0, 2.0]], [[3.0], [4.0]]), lambda: uma.matmul([[1.0, 2.0]], [[3.0], [4.0]]))
    check_like_numpy(lambda: np.sum([[1, 2], [3, 4]], axis=0), lambda: uma.sum([[1, 2], [3, 4]], axis=0))
    check_like_numpy(lambda: np.concatenate([[1, 2], [3.5]]), lambda: uma.concatenate([[1, 2], [3.5]]))
    check_like_numpy(lambda: np.where([True, False], [1, 2], [3, 4]), lambda: uma.where([True, False], [1, 2], [3, 4]))


def test_ops_accept_numpy_arrays_and_scalars():
    n = np.arange(4, dtype=np.float32)
    check_like_numpy(lambda: np.add(n, np.float32(2)), lambda: uma.add(n, np.float32(2)))
    check_like_numpy(lambda: np.multiply(n, np.float64(2)), lambda: uma.multiply(uma.asarray(n), np.float64(2)))


# --------------------------------------------------------------------------- sizes and fast paths

# sizes around SIMD widths and above any parallel threshold; layouts that defeat fast paths
BIG_SHAPES = [(1,), (7,), (33,), (1001,), (96, 1030)]
BIG_LAYOUTS = ["contiguous", "transposed", "negative_stride", "broadcast"]


def _big_pair(dtype, shape, layout, rng, domain="general"):
    if len(shape) == 1 and layout == "transposed":
        layout = "contiguous"
    return make_layout(_data(dtype, domain, rng), layout, shape=shape)


@pytest.mark.parametrize("layout", BIG_LAYOUTS)
@pytest.mark.parametrize("shape", BIG_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_elementwise_sizes_and_layouts(dtype, shape, layout, rng):
    na, ua = _big_pair(dtype, shape, layout, rng)
    nb, ub = _big_pair(dtype, shape, "contiguous", rng, "nonzero")
    for op in ["add", "multiply", "divide", "less", "maximum", "remainder"]:
        np_fn = BINARY[op][0]
        check_like_numpy(lambda: np_fn(na, nb), lambda: getattr(uma, op)(ua, ub))
        check_like_numpy(lambda: np_fn(nb, na), lambda: getattr(uma, op)(ub, ua))
    for op in ["exp", "tanh", "sigmoid", "abs", "negative", "square"]:
        check_like_numpy(lambda: UNARY[op][0](na), lambda: getattr(uma, op)(ua))
    check_like_numpy(lambda: na * 2 + 1, lambda: ua * 2 + 1)
    check_like_numpy(lambda: np.where(na > nb, na, nb), lambda: uma.where(ua > ub, ua, ub))


@pytest.mark.parametrize("shape", [(1001,), (96, 1030)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_broadcast_fast_paths(dtype, shape, rng):
    """Row vector, column vector and 0-d operands against a big array."""
    n = random_data(dtype, shape, rng)
    u = uma.asarray(n)
    others = [random_data(dtype, shape[-1:], rng), random_data(dtype, (), rng)]
    if len(shape) == 2:
        others.append(random_data(dtype, (shape[0], 1), rng))
    for o in others:
        uo = uma.asarray(o)
        for op in ["add", "maximum", "greater", "logical_and"]:
            np_fn = BINARY[op][0]
            check_like_numpy(lambda: np_fn(n, o), lambda: getattr(uma, op)(u, uo))
            check_like_numpy(lambda: np_fn(o, n), lambda: getattr(uma, op)(uo, u))


@pytest.mark.parametrize("layout", BIG_LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_reductions_big(dtype, layout, rng):
    n, u = _big_pair(dtype, (257, 129), layout, rng, "coarse")
    for op in ["sum", "mean", "max", "min", "argmax", "argmin", "all", "any"]:
        for axis in [None, 0, 1, -1]:
            check_like_numpy(lambda: REDUCTIONS[op](n, axis=axis), lambda: getattr(uma, op)(u, axis=axis))
    n3, u3 = make_layout(_data(dtype, "coarse", rng), layout, shape=(33, 17, 65))
    for op in ["sum", "max", "mean"]:
        for axis in [(0, 2), (1,), (0, 1), (2, 1)]:
            check_like_numpy(lambda: REDUCTIONS[op](n3, axis=axis, keepdims=True),
                             lambda: getattr(uma, op)(u3, axis=axis, keepdims=True))


def test_sum_int32_accumulates_in_int64_like_numpy():
    n = np.full(1000, 2**30, dtype=np.int32)
    check_like_numpy(lambda: np.sum(n), lambda: uma.sum(uma.asarray(n)))
    check_like_numpy(lambda: np.sum(n.reshape(10, 100), axis=1), lambda: uma.sum(uma.asarray(n.reshape(10, 100)), axis=1))
    check_like_numpy(lambda: np.mean(n), lambda: uma.mean(uma.asarray(n)))
    b = np.ones(300, dtype=bool)
    check_like_numpy(lambda: np.sum(b), lambda: uma.sum(uma.asarray(b)))


@pytest.mark.parametrize("la", ["strided", "negative_stride", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_big_non_blas_layouts(dtype, la, rng):
    """Layouts BLAS cannot take directly (steps in both axes, negative strides)."""
    base_a = random_data(dtype, (2 * 96, 2 * 80), rng)
    base_b = random_data(dtype, (80, 3 * 48), rng)
    if la == "strided":
        na, nb = base_a[::2, ::2], base_b[:, ::3]
        ua, ub = uma.asarray(base_a)[::2, ::2], uma.asarray(base_b)[:, ::3]
    elif la == "negative_stride":
        na, nb = base_a[::-2, ::-2], base_b[::-1, ::-3]
        ua, ub = uma.asarray(base_a)[::-2, ::-2], uma.asarray(base_b)[::-1, ::-3]
    else:
        na, nb = base_a[:80, :96].T, base_b[:, :48]
        ua, ub = uma.asarray(base_a)[:80, :96].T, uma.asarray(base_b)[:, :48]
    expected = (na.astype(np.float64) @ nb.astype(np.float64)).astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-12
    assert_matches(uma.matmul(ua, ub), expected, rtol=tol, atol=tol)
    # batched, with a broadcast batch axis
    nb3 = np.stack([nb, nb[::-1]])
    ub3 = uma.stack([ub, ub[::-1]])
    expected3 = (na.astype(np.float64) @ nb3.astype(np.float64)).astype(dtype)
    assert_matches(uma.matmul(ua, ub3), expected3, rtol=tol, atol=tol)


def _run_isolated(code):
    """Run `code` in a fresh interpreter (an integer trap must not take the test run down)."""
    import os
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_edge_cases_do_not_trap(dtype):
    """x // 0 and x % 0 give 0, INT_MIN // -1 wraps, INT_MIN % -1 is 0 (NumPy); C would trap."""
    code = f"""
import numpy as np, uma, warnings
warnings.simplefilter("ignore")
info = np.iinfo("{dtype}")
a = np.array([5, -5, 0, info.min, info.min, 7], dtype="{dtype}")
b = np.array([0, 0, 0, -1, 0, -1], dtype="{dtype}")
with np.errstate(all="ignore"):
    for op in ("floor_divide", "remainder"):
        got = getattr(uma, op)(uma.asarray(a), uma.asarray(b)).tolist()
        exp = getattr(np, op)(a, b).tolist()
        assert got == exp, (op, got, exp)
    got = (uma.asarray(a) // 0).tolist()
    assert got == (a // 0).tolist(), got
print("ok")
"""
    r = _run_isolated(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-2000:])


def test_integer_power_edge_cases():
    a = np.array([0, 1, -1, 2, -2, 3], dtype=np.int64)
    e = np.array([0, 0, 3, 62, 63, 40], dtype=np.int64)  # includes wrap-around, like NumPy
    check_like_numpy(lambda: np.power(a, e), lambda: uma.power(uma.asarray(a), uma.asarray(e)))
    check_like_numpy(lambda: np.power(a.astype(np.int32), 0), lambda: uma.power(uma.asarray(a.astype(np.int32)), 0))


def test_where_python_scalars_both_sides():
    c = np.array([True, False, True])
    check_like_numpy(lambda: np.where(c, 1, 2.5), lambda: uma.where(uma.asarray(c), 1, 2.5))
    check_like_numpy(lambda: np.where(c, 1, 2), lambda: uma.where(uma.asarray(c), 1, 2))
    check_like_numpy(lambda: np.where(c, True, False), lambda: uma.where(uma.asarray(c), True, False))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_accuracy_near_zero_and_extremes(dtype):
    """expm1/log1p keep relative accuracy near 0; sigmoid and tanh saturate without NaN."""
    tiny = np.array([1e-10, -1e-10, 1e-20, 3e-8, -3e-8], dtype=dtype)
    for op in ["expm1", "log1p", "tanh", "sin", "sqrt", "abs"]:
        x = np.abs(tiny) if op in ("sqrt", "log1p") else tiny
        check_like_numpy(lambda: UNARY[op][0](x), lambda: getattr(uma, op)(uma.asarray(x)))
    big = np.array([-1000.0, -800.0, -80.0, 80.0, 800.0, 1000.0], dtype=dtype)
    check_like_numpy(lambda: _np_sigmoid(big), lambda: uma.sigmoid(uma.asarray(big)))
    check_like_numpy(lambda: np.tanh(big), lambda: uma.tanh(uma.asarray(big)))
    check_like_numpy(lambda: np.exp(big), lambda: uma.exp(uma.asarray(big)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_division_by_zero_and_inf(dtype):
    """NumPy's results, except floor_divide with one infinite operand: the standard's special
    cases (conftest.standard_floor_divide)."""
    a = np.array([1.0, -1.0, 0.0, 7.5, -7.5, np.inf], dtype=dtype)
    for b in (np.zeros(6, dtype=dtype), np.full(6, np.inf, dtype=dtype), np.full(6, -np.inf, dtype=dtype),
              np.full(6, -0.0, dtype=dtype)):
        for op in ["divide", "floor_divide", "remainder"]:
            check_like_numpy(lambda: BINARY[op][0](a, b), lambda: getattr(uma, op)(uma.asarray(a), uma.asarray(b)))


NUMPY_SCALARS = [np.float64(1.5), np.float32(1.5), np.int64(2), np.int32(2), np.int8(2), np.bool_(True),
                 np.uint8(3)]


# only combinations whose NumPy result is a compute dtype (bool + int8 -> int8 may raise TypeError)
SCALAR_CASES = [(d, s) for d in COMPUTE_DTYPES for s in NUMPY_SCALARS
                if np.result_type(np.dtype(d), s).name in COMPUTE_DTYPES]


@pytest.mark.parametrize("dtype,scalar", SCALAR_CASES, ids=[f"{d}-{type(s).__name__}" for d, s in SCALAR_CASES])
def test_numpy_scalars_are_strongly_typed(dtype, scalar, rng):
    """NEP 50: NumPy scalars take part in promotion with their own dtype (unlike Python scalars)."""
    n = random_data(dtype, (2, 3), rng, "positive")
    u = uma.asarray(n)
    check_like_numpy(lambda: np.add(n, scalar), lambda: uma.add(u, scalar))
    check_like_numpy(lambda: np.multiply(scalar, n), lambda: uma.multiply(scalar, u))
    check_like_numpy(lambda: np.less(n, scalar), lambda: uma.less(u, scalar))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_negative_flips_the_sign_of_zero(dtype):
    """IEEE negation: -(+0.0) is -0.0 (NumPy), which assert_allclose cannot see."""
    n = np.array([0.0, -0.0, 1.5], dtype=dtype)
    u = uma.asarray(n)
    for got in (uma.negative(u), -u):
        np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(np.negative(n)))


# --------------------------------------------------------------------------- uint64 and big Python ints

BIG_INTS = [2**63, 2**63 + 5, 2**64 - 1]


@pytest.mark.parametrize("value", BIG_INTS)
@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                "add", "subtract", "maximum", "minimum"])
def test_uint64_with_python_int_beyond_int64(op, value):
    # NumPy 2 (NEP 50): a Python int in [2**63, 2**64) is a weak uint64 operand of a uint64 array.
    n = np.array([0, 2**63, 2**64 - 1, 7], dtype=np.uint64)
    a = uma.asarray(n)
    want = getattr(np, op)(n, value)
    got = getattr(uma, op)(a, value)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    want_r = getattr(np, op)(value, n)
    np.testing.assert_array_equal(np.asarray(getattr(uma, op)(value, a)), want_r)


@pytest.mark.parametrize("value", BIG_INTS)
def test_python_int_beyond_int64_creates_uint64(value):
    assert np.asarray(uma.asarray(value)).dtype == np.asarray(value).dtype == np.uint64
    assert int(np.asarray(uma.asarray(value))) == value
    np.testing.assert_array_equal(np.asarray(uma.full(2, value, uma.uint64)), np.full(2, value, np.uint64))
    np.testing.assert_array_equal(np.asarray(uma.full(2, value)), np.full(2, value))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "uint32"])
def test_python_int_beyond_int64_overflows_other_integer_dtypes(dtype):
    a = uma.ones(2, dtype=dtype)
    with pytest.raises(OverflowError, match=f"{2**63}.*{dtype}"):
        uma.add(a, 2**63)
    with pytest.raises(OverflowError, match=str(2**64)):
        uma.asarray(np.ones(2, np.uint64)) + 2**64


def test_comparison_with_int_beyond_every_dtype_is_all_false_or_true():
    n = np.array([0, 2**64 - 1], dtype=np.uint64)
    a = uma.asarray(n)
    for value in (2**64, -1, -(2**63) - 1):
        for op in ("equal", "less", "greater"):
            np.testing.assert_array_equal(np.asarray(getattr(uma, op)(a, value)), getattr(np, op)(n, value))


@pytest.mark.parametrize("backend", ["eager", "cpu", "reference", "numpy"])
def test_set_subtensor_update_drops_leading_length_one_axes_like_numpy(backend):
    # NumPy: x[0] = y with y of shape (1, 3) assigns y[0] (leading length-1 axes drop).
    x0, y0 = np.arange(6.0).reshape(2, 3), -np.arange(3.0).reshape(1, 3)
    want = x0.copy()
    want[0] = y0
    if backend == "eager":
        got = uma.set_subtensor(uma.asarray(x0), 0, uma.asarray(y0))
    else:
        from uma import sym
        x, y = sym.matrix("x"), sym.matrix("y")
        got = uma.function([x, y], uma.set_subtensor(x[0], y), backend=backend)(x0, y0)
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="broadcast"):
        uma.set_subtensor(uma.asarray(x0), 0, uma.zeros((2, 3)))


# --------------------------------------------------------------------------- ndarray-style methods

@pytest.mark.parametrize("name,args,kwargs", [
    ("round", (1,), {}), ("clip", (1.5, 3.5), {}), ("cumsum", (1,), {}), ("cumprod", (), {}),
    ("var", (), {"axis": 0}), ("std", (), {"ddof": 1}), ("trace", (), {}), ("diagonal", (), {"offset": 1}),
    ("take", ([0, 2],), {"axis": 1}), ("squeeze", (), {}), ("ravel", (), {}), ("flatten", (), {}),
])
def test_array_methods_match_numpy_ndarray_methods(name, args, kwargs):
    n = np.arange(1.0, 7.0).reshape(2, 3) * 1.37
    got = getattr(uma.asarray(n), name)(*args, **kwargs)
    np.testing.assert_allclose(np.asarray(got), getattr(n, name)(*args, **kwargs), rtol=1e-12)


def test_array_dot_and_logsumexp_methods():
    n = np.arange(6.0).reshape(2, 3)
    a = uma.asarray(n)
    np.testing.assert_allclose(np.asarray(a.dot(a.transpose())), n.dot(n.T), rtol=1e-12)
    np.testing.assert_allclose(float(np.asarray(a.logsumexp())), np.log(np.exp(n).sum()), rtol=1e-12)


@pytest.mark.parametrize("symbol", ["&", "|", "^"])
def test_bool_operators_are_logical_integers_bitwise_floats_raise(symbol):
    """NumPy's operators: logical on bool, bitwise on integers, TypeError naming the op on floats."""
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    want = eval(f"p {symbol} q")
    a, b = uma.asarray(p), uma.asarray(q)
    np.testing.assert_array_equal(np.asarray(eval(f"a {symbol} b")), want)
    np.testing.assert_array_equal(np.asarray(eval(f"a {symbol} True")), eval(f"p {symbol} True"))
    np.testing.assert_array_equal(np.asarray(eval(f"False {symbol} a")), eval(f"False {symbol} p"))
    n = np.arange(4)
    i = uma.asarray(n)
    assert_matches(eval(f"i {symbol} (i + 5)"), eval(f"n {symbol} (n + 5)"))
    f = uma.asarray(np.ones(4))
    with pytest.raises(TypeError, match="bitwise_.*float64"):
        eval(f"f {symbol} f")


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "mean", "var", "cumsum", "logsumexp"])
def test_axis_out_of_range_is_numpy_axis_error(op):
    a = uma.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match="axis 2") as info:
        getattr(uma, op)(a, axis=2)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)


@pytest.mark.parametrize("key", [np.array([0, 1]), [0, 2], np.array([True, False, True, False]),
                                 (np.array([1]),), np.array(True)])
def test_assignment_through_advanced_index_writes_like_numpy(key):
    a = uma.zeros(4)
    n = np.zeros(4)
    a[key] = 1.0
    n[key] = 1.0
    np.testing.assert_array_equal(np.asarray(a), n)


# ---- NumPy argument rules found by a new-user attack ----

@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any", "mean"])
@pytest.mark.parametrize("axis", [0, -1, 1, (0,)])
def test_reduction_method_on_0d_matches_function_and_numpy(op, axis):
    """numpy.ndarray's reduction methods accept axis 0 / -1 on a 0-d array as the functions do
    (the ufunc reductions; mean does not): the method and the function agree with NumPy."""
    n = np.array(3.0)
    u = uma.asarray(n)
    check_like_numpy(lambda: getattr(n, op)(axis=axis), lambda: getattr(u, op)(axis=axis))
    check_like_numpy(lambda: getattr(np, op)(n, axis=axis), lambda: getattr(uma, op)(u, axis=axis))


@pytest.mark.parametrize("axis", [True, (0, False), 1.0, "0"])
@pytest.mark.parametrize("how", ["function", "method"])
def test_reduction_axis_must_be_integer(axis, how):
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n)
    with pytest.raises(TypeError):
        np.sum(n, axis=axis)
    with pytest.raises(TypeError):
        uma.sum(u, axis=axis) if how == "function" else u.sum(axis=axis)


@pytest.mark.parametrize("shape,err", [((2**63,), ValueError), (2**64, ValueError), ((2.0,), TypeError),
                                       (("a",), TypeError), ((True,), TypeError)])
@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_creation_shape_errors_like_numpy(fn, shape, err):
    with pytest.raises(err):
        getattr(np, fn)(shape)
    with pytest.raises(err):
        getattr(uma, fn)(shape)


@pytest.mark.parametrize("args", [(0, 2**63, 2**62, "int8"), (-1, 3, 1, "uint8"), (0, 300, 1, "int8"),
                                  (0, 10, 1000, "int8"), (0, 1e20, 1, None), (0, 2**70, 1, None), (3, 9, 2, "int16"),
                                  (5, 0, -1, "uint8"), (127, 130, 1, "int8"), (0, 10, 3, "bool"), (0, 2, 1, "bool")])
def test_arange_range_errors_like_numpy(args):
    lo, hi, step, dt = args
    check_like_numpy(lambda: np.arange(lo, hi, step, dtype=dt), lambda: uma.arange(lo, hi, step, dtype=dt))


@pytest.mark.parametrize("stop", [np.int64(3), np.uint8(4), np.array(5), np.int32(2), True, np.float32(3)])
def test_arange_numpy_integer_arguments_give_int64(stop):
    """NumPy integer scalars and 0-d integer arrays count as integers for arange's default dtype."""
    check_like_numpy(lambda: np.arange(stop), lambda: uma.arange(stop))
    check_like_numpy(lambda: np.arange(0, stop, 1), lambda: uma.arange(0, stop, 1))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int8", "bool"])
@pytest.mark.parametrize("deg", [False, True])
def test_angle_deg(dtype, deg, rng):
    n = random_data(dtype, (7,), rng)
    check_like_numpy(lambda: np.angle(n, deg=deg), lambda: uma.angle(uma.asarray(n), deg=deg))


def test_angle_deg_symbolic():
    x = uma.sym.vector("x", dtype="complex128")
    f = uma.function([x], uma.angle(x, deg=True))
    n = np.array([1 + 1j, -1j, -2.0])
    np.testing.assert_allclose(np.asarray(f(n)), np.angle(n, deg=True), rtol=1e-15)


@pytest.mark.parametrize("case", ["cumsum-false", "cumprod-true", "sum-list", "method-list", "cumsum-float"])
def test_axis_types_like_numpy(case):
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n)
    np_fn, uma_fn = {
        "cumsum-false": (lambda: np.cumsum(n, axis=False), lambda: uma.cumsum(u, axis=False)),
        "cumprod-true": (lambda: np.cumprod(n, axis=True), lambda: uma.cumprod(u, axis=True)),
        "sum-list": (lambda: np.sum(n, axis=[0]), lambda: uma.sum(u, axis=[0])),
        "method-list": (lambda: n.sum(axis=[0]), lambda: u.sum(axis=[0])),
        "cumsum-float": (lambda: np.cumsum(n, axis=1.0), lambda: uma.cumsum(u, axis=1.0)),
    }[case]
    check_like_numpy(np_fn, uma_fn)


def test_empty_index_arrays_like_numpy():
    n = np.arange(6.0).reshape(2, 3)
    u = uma.asarray(n)
    check_like_numpy(lambda: n[np.array([], dtype=float)], lambda: u[np.array([], dtype=float)])
    check_like_numpy(lambda: n[[]], lambda: u[[]])
    check_like_numpy(lambda: np.take(n, np.array([], dtype=float)), lambda: uma.take(u, np.array([], dtype=float)))
    check_like_numpy(lambda: np.take(n, []), lambda: uma.take(u, []))


@pytest.mark.parametrize("axis", [0, -1, 1, None])
def test_take_on_0d_array_like_numpy(axis):
    z = np.array(5.0)
    check_like_numpy(lambda: np.take(z, [0], axis=axis), lambda: uma.take(uma.asarray(z), [0], axis=axis))


# --------------------------------------------------------------------------- found by a new user

@pytest.mark.parametrize("make", [lambda: __import__("fractions").Fraction(1, 2),
                                  lambda: __import__("decimal").Decimal("2.5")], ids=["Fraction", "Decimal"])
def test_objects_with_int_are_not_truncated(make):
    """NumPy makes an object array of a Fraction or a Decimal (int() would drop the fraction):
    uma has no object dtype, so every entry point refuses them with a TypeError."""
    v = make()
    assert np.asarray(v).dtype == object
    a = uma.asarray(np.array([1.0, 2.0]))
    for call in (lambda: uma.asarray(v), lambda: a + v, lambda: uma.hypot(v, a), lambda: uma.shared(v),
                 lambda: uma.function([x := uma.sym.scalar("x")], x * 2)(v)):
        with pytest.raises(TypeError, match="object"):
            call()
    with pytest.raises(OverflowError):  # Python ints beyond uint64 still get NumPy's OverflowError
        uma.asarray([2**70, 1])


def test_transpose_with_empty_axes_is_a_value_error_like_numpy():
    a = uma.asarray(np.zeros((2, 3, 4)))
    for call in (lambda: uma.permute_dims(a, ()), lambda: uma.transpose(a, ()), lambda: a.transpose(())):
        with pytest.raises(ValueError, match="axes don't match"):
            call()
    with pytest.raises(ValueError):
        np.transpose(np.zeros((2, 3, 4)), ())
    assert a.T.shape == a.transpose().shape == uma.transpose(a).shape == (4, 3, 2)
    assert uma.transpose(uma.asarray(np.float64(1.0)), ()).shape == ()


def test_integer_power_of_an_empty_result_checks_no_exponent():
    x = np.zeros((0, 1), np.int8)
    e = np.array([-1, 2], np.int8)
    assert_matches(uma.pow(uma.asarray(x), uma.asarray(e)), np.power(x, e))
    with pytest.raises(ValueError, match="negative integer powers"):
        uma.power(uma.asarray(np.ones(2, np.int8)), uma.asarray(e))


def test_concatenate_axis_none_flattens_like_numpy():
    xs = [np.arange(4.0).reshape(2, 2), np.arange(3.0)]
    assert_matches(uma.concat([uma.asarray(x) for x in xs], axis=None), np.concatenate(xs, axis=None))
    m, v = uma.sym.matrix("m"), uma.sym.vector("v")
    f = uma.function([m, v], uma.sym.concat([m, v], axis=None), backend="cpu")
    assert_matches(f(*xs), np.concatenate(xs, axis=None))


def test_none_as_an_elementwise_operand_is_a_type_error_naming_the_op():
    with pytest.raises(TypeError, match="exp: cannot convert None"):
        uma.exp(None)
    with pytest.raises(TypeError, match="hypot: cannot convert None"):
        uma.hypot(uma.asarray(np.ones(2)), None)
    with pytest.raises(TypeError, match="matmul: cannot convert None"):
        uma.asarray(np.ones(2)) @ None
    with pytest.raises(TypeError, match="matmul: cannot convert None"):
        None @ uma.asarray(np.ones(2))


A6 = np.arange(6.0)


@pytest.mark.parametrize("call,message", [
    (lambda: uma.sum(None), "sum: cannot convert None"),
    (lambda: uma.matmul(None, uma.asarray(A6)), "matmul: cannot convert None"),
    (lambda: uma.where(None, 1.0, 2.0), "where: cannot convert None"),
    (lambda: uma.softmax(None, axis=0), "softmax: cannot convert None"),
    (lambda: uma.full_like(uma.asarray(A6), None), "full_like: cannot convert None"),
    (lambda: uma.full(3, None), "full: cannot convert None"),
    (lambda: uma.ones(None), "shape: 'NoneType' object cannot be interpreted as an integer"),
    (lambda: uma.reshape(uma.asarray(A6), None), "shape: 'NoneType' object cannot be interpreted as an integer"),
    (lambda: uma.eye(None), "eye: N must be an integer, got None"),
    (lambda: uma.linspace(0, 1, None), "linspace: num must be an integer, got None"),
    (lambda: uma.one_hot(uma.asarray(np.arange(3)), None), "one_hot: depth must be an integer, got None"),
    (lambda: uma.concatenate(None), "concatenate: arrays must be passed as a sequence"),
])
def test_none_for_a_parameter_is_a_type_error_from_the_function_itself(call, message):
    # Not nanobind's generic "incompatible function arguments": the function names what it needs.
    with pytest.raises(TypeError, match=re.escape(message)):
        call()


def test_astype_needs_a_dtype():
    # NumPy reads None as float64; the Array API standard requires a dtype. Never a guess.
    for call in (lambda: uma.astype(uma.asarray(A6), None), lambda: uma.asarray(A6).astype(None),
                 lambda: uma.astype(uma.sym.vector("x"), None), lambda: uma.sym.vector("x").astype(None)):
        with pytest.raises(TypeError, match=re.escape("astype: dtype must be a dtype")):
            call()


@pytest.mark.parametrize("call", [lambda: uma.full(2, b"3", dtype=uma.int64), lambda: uma.asarray(A6) + b"3",
                                  lambda: uma.sum(b"3"), lambda: uma.where(uma.asarray(A6) > 2, b"3", 1.0)])
def test_bytes_operands_are_refused_not_read_as_uint8(call):
    # NumPy reads b"3" as a bytes string (dtype S1); its byte as a number would be 51.
    with pytest.raises(TypeError, match=re.escape("cannot convert b'3' to an array (NumPy infers dtype |S1")):
        call()


@pytest.mark.parametrize("fill", [b"3", "3", None])
def test_symbolic_full_like_needs_a_number(fill):
    with pytest.raises(TypeError, match="full_like: fill_value must be a number"):
        uma.full_like(uma.sym.vector("x"), fill)


def test_assigning_bytes_is_refused_and_writes_nothing():
    a = uma.asarray(np.arange(3))
    with pytest.raises(TypeError, match="__setitem__: cannot convert b'3'"):
        a[0] = b"3"
    np.testing.assert_array_equal(np.asarray(a), np.arange(3))
    # a bytearray is a buffer of uint8 values for NumPy too
    n = np.arange(3)
    n[0] = bytearray(b"3")[0]
    a[0] = bytearray(b"3")
    np.testing.assert_array_equal(np.asarray(a), n)


@pytest.mark.parametrize("shape", [np.array([2, 3]), np.asarray(4), np.int64(2), range(1, 3), (np.int32(2), 3)])
def test_shapes_given_as_integer_arrays_and_sequences_as_numpy(shape):
    assert uma.zeros(shape).shape == np.zeros(shape).shape
    assert uma.ones(uma.asarray(np.asarray(shape))).shape == np.ones(shape).shape
    assert uma.reshape(uma.arange(6), np.array([3, 2])).shape == (3, 2)


@pytest.mark.parametrize("shape", [np.ones((2, 2), int), np.array([2.5]), "ab"])
def test_shapes_that_numpy_refuses_are_type_errors(shape):
    with pytest.raises(TypeError):
        np.zeros(shape)
    with pytest.raises(TypeError):
        uma.zeros(shape)


@pytest.mark.parametrize("ddof", [1, 1.5, True, np.int64(2), np.float32(0.5), np.asarray(1.5), np.asarray(2)])
def test_std_and_var_take_ddof_as_numpy(ddof):
    n = np.arange(5.0)
    np.testing.assert_allclose(float(uma.std(uma.asarray(n), ddof=ddof)), np.std(n, ddof=ddof), rtol=1e-15)
    np.testing.assert_allclose(float(uma.var(uma.asarray(n), ddof=ddof)), np.var(n, ddof=ddof), rtol=1e-15)
    if isinstance(ddof, np.ndarray):  # a 0-d uma array reads as the same number
        np.testing.assert_allclose(float(uma.std(uma.asarray(n), ddof=uma.asarray(ddof))), np.std(n, ddof=ddof), rtol=1e-15)


@pytest.mark.parametrize("ddof,err", [(2**70, OverflowError), (-2**70, OverflowError), ("x", TypeError), (None, TypeError)])
def test_std_and_var_refuse_a_ddof_they_cannot_use(ddof, err):
    # 2**70 would be rounded to a double (NumPy: OverflowError); a string is no number.
    for f in (uma.std, uma.var):
        with pytest.raises(err, match=f"{f.__name__}: (ddof .* is out of range of int64|ddof must be a real number)"):
            f(uma.asarray(np.arange(5.0)), ddof=ddof)
        if ddof is not None:  # correction=None means no correction
            with pytest.raises(err, match=f"{f.__name__}: correction"):
                f(uma.asarray(np.arange(5.0)), correction=ddof)


@pytest.mark.parametrize("shape,axis", [((0,), 0), ((3, 0), 1), ((0, 3), 0), ((0, 3), 1)])
@pytest.mark.parametrize("f", [uma.softmax, uma.log_softmax])
def test_softmax_of_an_empty_array_is_empty(f, shape, axis):
    # As torch.softmax and jax.nn.softmax: no elements to normalize, an empty result.
    out = f(uma.zeros(shape, dtype="float32"), axis=axis)
    assert out.shape == shape and out.dtype == uma.float32


@pytest.mark.parametrize("call", [
    lambda m, x: m.concatenate([x, x], axis=True),
    lambda m, x: m.count_nonzero(x, axis=True),
    lambda m, x: m.vecdot(x, x, axis=True) if m is uma else m.linalg.vecdot(x, x, axis=True),
])
def test_a_bool_axis_is_a_type_error_as_in_numpy(call):
    x = np.ones((2, 2))
    with pytest.raises(TypeError):
        call(np, x)
    with pytest.raises(TypeError, match="axis must be an integer, got"):
        call(uma, uma.asarray(x))


@pytest.mark.parametrize("keepdims", [0, 1, 2, True, False, np.int64(1)])
@pytest.mark.parametrize("f", ["sum", "mean", "max", "std", "var", "argmax"])
def test_keepdims_is_read_as_numpy_reads_it(f, keepdims):
    n = np.arange(6.0).reshape(2, 3)
    want = getattr(np, f)(n, 0, keepdims=keepdims)
    assert getattr(uma, f)(uma.asarray(n), 0, keepdims=keepdims).shape == want.shape
    assert getattr(uma.asarray(n), f)(0, keepdims=keepdims).shape == want.shape


def test_keepdims_takes_a_numpy_bool_and_refuses_non_integers():
    """A refused keepdims is a TypeError naming it and the value (not nanobind's signatures)."""
    a = uma.asarray(np.ones((2, 3)))
    assert uma.sum(a, 0, keepdims=np.True_).shape == (1, 3)  # a bool (Array API); NumPy refuses it
    for bad in ("x", 1.5, None):
        with pytest.raises(TypeError):
            np.sum(np.ones((2, 3)), 0, keepdims=bad)
        for call in (lambda: uma.sum(a, 0, keepdims=bad), lambda: a.max(0, keepdims=bad),
                     lambda: uma.var(a, 0, keepdims=bad), lambda: uma.logsumexp(a, 0, keepdims=bad)):
            with pytest.raises(TypeError, match=r"keepdims must be True, False or an integer, got .*"
                               + type(bad).__name__):
                call()


def test_none_and_iterators_in_operators_and_joins_like_numpy():
    """``a == None`` / ``a != None`` are elementwise all False / all True (NumPy's object
    comparison); arithmetic with None is a TypeError naming the op; concatenate and stack take a
    sequence (an array is the sequence of its rows), not an iterator."""
    n = np.ones((2, 3))
    a = uma.asarray(n)
    assert_matches(a == None, n == None)  # noqa: E711
    assert_matches(a != None, n != None)  # noqa: E711
    with pytest.raises(TypeError, match="add: cannot convert None"):
        a + None
    with pytest.raises(TypeError):
        a < None
    assert_matches(uma.concatenate(a), np.concatenate(n))
    assert_matches(uma.stack(a), np.stack(n))
    for fn in ("concatenate", "stack"):
        with pytest.raises(TypeError, match="sequence"):
            getattr(uma, fn)(x for x in (a, a))
        with pytest.raises(TypeError):
            getattr(np, fn)(x for x in (n, n))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_power_of_two_is_numpy_s_bit_for_bit(dtype):
    """x ** 2 and power(x, 2) are the correctly rounded x * x, as NumPy's float power gives them
    (the C library's pow is an ulp off in rare cases: tiny and huge values), on both paths (one
    element and many) and through the compiled cpu backend."""
    rng = np.random.default_rng(3)
    big = {"float32": 80, "float64": 600}[dtype]
    x = (rng.standard_normal(200_000) * np.exp(rng.uniform(-big, big, 200_000))).astype(dtype)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0]
    with np.errstate(all="ignore"):
        want = np.power(x, x.dtype.type(2))
        assert np.array_equal(want, x * x, equal_nan=True)
        for got in (uma.power(uma.asarray(x), 2), uma.asarray(x) ** 2, uma.power(uma.asarray(x), uma.asarray(x.dtype.type(2)))):
            assert np.array_equal(np.asarray(got), want, equal_nan=True)
        for k in range(6):
            np.testing.assert_array_equal(np.asarray(uma.asarray(x[k:k + 1]) ** 2), want[k:k + 1])
    v = uma.sym.vector("v", dtype=dtype)
    got = uma.function([v], v ** 2, backend="cpu")(x)
    assert np.array_equal(np.asarray(got), want, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mkn", [(7, 5, 1), (1, 5, 7), (1, 5, 1), (3000, 40, 1), (1, 40, 3000)])
def test_products_with_one_row_or_column_in_every_layout(dtype, mkn):
    """Matrix-vector products (one row or one column: OpenBLAS's gemv) with either operand
    transposed, against NumPy; large enough ones split across the thread team give the same
    bits on one thread."""
    m, k, n = mkn
    rng = np.random.default_rng(sum(mkn))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for ta in (False, True):
        for tb in (False, True):
            A = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
            B = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
            ua, ub = uma.asarray(A), uma.asarray(B)
            got = uma.matmul(ua.T if ta else ua, ub.T if tb else ub)
            np.testing.assert_allclose(np.asarray(got), (A.T if ta else A) @ (B.T if tb else B), rtol=tol, atol=tol)
            before = uma.get_num_threads()
            uma.set_num_threads(1)
            try:
                one = uma.matmul(ua.T if ta else ua, ub.T if tb else ub)
            finally:
                uma.set_num_threads(before)
            assert np.array_equal(np.asarray(one), np.asarray(got))
