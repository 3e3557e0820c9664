"""uma.graph: variables, build-time dtype/shape inference, operators, FunctionGraph, validator.

NumPy 2 is the oracle for dtypes (NEP 50) and shapes.
"""
import itertools

import numpy as np
import pytest

import uma
from uma import sym
from uma.graph import (Apply, Constant, FunctionGraph, MissingInputError, TensorType, Variable,
                       alias_root, ops, toposort, validate)

COMPUTE = ["bool", "int32", "int64", "float32", "float64"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
          "floor_divide", "remainder", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal", "logical_and", "logical_or"]
UNARY = ["negative", "abs", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sign", "square",
         "logical_not", "sin", "cos", "floor", "ceil"]


def np_result(fn, *dtypes):
    """NumPy's result dtype name for fn on 1-element arrays, or the exception type."""
    try:
        with np.errstate(all="ignore"):
            return fn(*[np.ones(1, d) for d in dtypes]).dtype.name
    except TypeError:
        return TypeError


# ---------------------------------------------------------------------------- variables

def test_constructors_types():
    x = sym.scalar("x")
    v = sym.vector("v", dtype="float32")
    m = sym.matrix("m", dtype=np.int32, shape=(None, 3))
    t = sym.tensor("t", dtype=uma.float32, shape=(2, None, 4))
    assert (x.dtype, x.ndim, x.shape) == ("float64", 0, ())
    assert (v.dtype, v.ndim, v.shape) == ("float32", 1, (None,))
    assert (m.dtype, m.shape) == ("int32", (None, 3))
    assert (t.dtype, t.shape, t.name) == ("float32", (2, None, 4), "t")
    assert sym.tensor(ndim=3).shape == (None, None, None)


def test_constructor_errors():
    with pytest.raises(TypeError):
        sym.tensor("t")  # neither shape nor ndim
    with pytest.raises(TypeError):
        sym.matrix(dtype="not-a-dtype")
    with pytest.raises(TypeError):
        sym.tensor(shape=(None, 2.5))
    with pytest.raises(ValueError):
        sym.vector(shape=(None, None))


def test_eq_is_identity_and_hashable():
    x, y = sym.vector("x"), sym.vector("y")
    assert (x == x) is True and (x == y) is False and (x != y) is True
    d = {x: 1, y: 2}
    assert d[x] == 1 and d[y] == 2 and len({x, y, x}) == 2
    e = sym.eq(x, y)
    assert isinstance(e, Variable) and e.dtype == "bool" and e.owner.op.name == "equal"
    assert sym.neq(x, y).owner.op.name == "not_equal"


def test_no_truth_value_no_iteration():
    x = sym.vector("x")
    with pytest.raises(TypeError):
        bool(x > 0)
    with pytest.raises(TypeError):
        list(x)
    with pytest.raises(TypeError):
        len(x)


# ---------------------------------------------------------------------------- dtypes

@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("a,b", list(itertools.product(COMPUTE, COMPUTE)))
def test_binary_dtype_matches_numpy(name, a, b):
    expected = np_result(getattr(np, name), a, b)
    x, y = sym.vector(dtype=a), sym.vector(dtype=b)
    if expected is TypeError:  # every other result dtype is supported
        with pytest.raises(TypeError, match=name):
            getattr(sym, name)(x, y)
    else:
        assert getattr(sym, name)(x, y).dtype == expected


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("a", COMPUTE)
def test_unary_dtype_matches_numpy(name, a):
    expected = np_result(getattr(np, name), a)
    x = sym.vector(dtype=a)
    if expected is TypeError:  # every other result dtype is supported
        with pytest.raises(TypeError, match=name):
            getattr(sym, name)(x)
    else:
        assert getattr(sym, name)(x).dtype == expected


@pytest.mark.parametrize("dtype,scalar", [
    ("float32", 1.0), ("float32", 2), ("int32", 2), ("int32", 1.5), ("int64", True),
    ("bool", 1), ("bool", 1.5), ("float64", 3), ("int32", -7)])
def test_python_scalars_are_weak(dtype, scalar):
    x = sym.vector(dtype=dtype)
    expected = (np.ones(1, dtype) + scalar).dtype.name
    assert (x + scalar).dtype == expected
    assert (scalar * x).dtype == np.multiply(scalar, np.ones(1, dtype)).dtype.name


def test_out_of_range_python_int_overflows_like_numpy():
    x = sym.vector(dtype="int32")
    with pytest.raises(OverflowError):
        np.ones(1, np.int32) + 2**40
    with pytest.raises(OverflowError):
        x + 2**40
    # comparisons with an out-of-range Python int are exact in NumPy 2
    assert (x < 2**40).dtype == "bool"


def test_numpy_scalar_is_strong():
    x = sym.vector(dtype="float32")
    assert (x + np.float64(1.0)).dtype == "float64"
    assert (x + np.ones(3, np.float64)).dtype == "float64"


def test_non_compute_dtype_rejected_naming_op():
    x = sym.vector(dtype="uint8")
    with pytest.raises(TypeError, match="floor.*complex64"):  # elementwise: where NumPy has no loop
        sym.floor(sym.vector(dtype="complex64"))
    assert x.sum().dtype == "uint64"  # reductions cover every dtype (NumPy 2: uint8 sums to uint64)
    assert x.astype("float32").dtype == "float32"  # astype works on every dtype


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin"])
@pytest.mark.parametrize("a", COMPUTE)
def test_reduction_dtype_matches_numpy(name, a):
    expected = np.asarray(getattr(np, name)(np.ones((2, 3), a), axis=0)).dtype.name
    assert getattr(sym, name)(sym.matrix(dtype=a), axis=0).dtype == expected


@pytest.mark.parametrize("a,b", list(itertools.product(COMPUTE, COMPUTE)))
def test_matmul_dtype_matches_numpy(a, b):
    expected = np_result(lambda u, v: np.matmul(u.reshape(1, 1), v.reshape(1, 1)), a, b)
    assert sym.matmul(sym.matrix(dtype=a), sym.matrix(dtype=b)).dtype == expected


def test_where_concatenate_stack_dtypes():
    c = sym.vector(dtype="bool")
    x, y = sym.vector(dtype="int32"), sym.vector(dtype="float32")
    assert sym.where(c, x, y).dtype == np.result_type(np.int32, np.float32).name
    assert sym.where(c, y, 0).dtype == "float32"  # weak scalar
    assert sym.concatenate([x, y]).dtype == "float64"
    assert sym.stack([x, x]).dtype == "int32"


def test_one_hot_and_casts():
    i = sym.vector(dtype="int64")
    oh = sym.one_hot(i, 10, dtype="float32")
    assert (oh.dtype, oh.shape) == ("float32", (None, 10))
    with pytest.raises(TypeError, match="one_hot"):
        sym.one_hot(sym.vector(dtype="float64"), 3)
    x = sym.vector(dtype="float32")
    assert x.astype("float32") is x
    assert x.astype(np.float64).dtype == "float64"


def test_softmax_needs_float():
    with pytest.raises(TypeError, match="softmax"):
        sym.softmax(sym.matrix(dtype="int32"))
    s = sym.log_softmax(sym.matrix(dtype="float32", shape=(None, 10)))
    assert (s.dtype, s.shape) == ("float32", (None, 10))


# ---------------------------------------------------------------------------- shapes

def test_broadcast_shapes_static():
    a = sym.tensor(shape=(None, 3))
    assert (a + sym.vector(shape=(3,))).shape == (None, 3)
    assert (a + sym.tensor(shape=(1, 3))).shape == (None, 3)
    assert (sym.tensor(shape=(4, 1)) + sym.tensor(shape=(1, 5))).shape == (4, 5)
    assert (a + 1.0).shape == (None, 3)
    assert (sym.tensor(shape=(None, 1)) + sym.tensor(shape=(None, None))).shape == (None, None)
    with pytest.raises(ValueError, match="add"):
        sym.tensor(shape=(2, 3)) + sym.vector(shape=(4,))


def test_matmul_shapes():
    m = sym.tensor(shape=(None, 3))
    assert (m @ sym.tensor(shape=(3, 5))).shape == (None, 5)
    assert (m @ sym.vector(shape=(3,))).shape == (None,)
    assert (sym.vector(shape=(3,)) @ sym.tensor(shape=(3, 5))).shape == (5,)
    assert (sym.vector() @ sym.vector()).shape == ()
    assert (sym.tensor(shape=(7, 1, 2, 3)) @ sym.tensor(shape=(4, 3, 5))).shape == (7, 4, 2, 5)
    with pytest.raises(ValueError, match="matmul"):
        m @ sym.tensor(shape=(4, 5))
    with pytest.raises(ValueError, match="matmul"):
        sym.matmul(sym.scalar(), m)
    assert sym.dot(sym.scalar(), m).shape == (None, 3)
    with pytest.raises(ValueError, match="dot"):
        sym.dot(sym.tensor(ndim=3), m)


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           (-1, False), ((0, 1, 2), True)])
def test_reduction_shapes(axis, keepdims):
    shape = (2, 3, 4)
    x = sym.tensor(shape=shape)
    expected = np.sum(np.ones(shape), axis=axis, keepdims=keepdims).shape
    assert x.sum(axis=axis, keepdims=keepdims).shape == expected
    assert sym.max(x, axis=axis, keepdims=keepdims).shape == expected


def test_reduction_axis_errors():
    x = sym.matrix()
    with pytest.raises(IndexError):
        x.sum(axis=2)
    with pytest.raises(IndexError):
        sym.argmax(x, axis=-3)
    with pytest.raises(ValueError, match="duplicate"):
        x.sum(axis=(0, 0))
    with pytest.raises(TypeError):
        sym.argmax(x, axis=(0, 1))
    with pytest.raises(ValueError, match="max"):
        sym.max(sym.tensor(shape=(0, 3)), axis=0)


def test_shape_ops_static():
    x = sym.tensor(shape=(2, 3, 4))
    assert x.reshape(6, -1).shape == (6, 4)
    assert x.reshape((-1,)).shape == (24,)
    assert sym.tensor(shape=(None, 8, 8)).reshape(-1, 64).shape == (None, 64)
    with pytest.raises(ValueError, match="reshape"):
        x.reshape(5, 5)
    with pytest.raises(ValueError):
        x.reshape(-1, -1)
    assert x.T.shape == (4, 3, 2)
    assert x.transpose(1, 0, 2).shape == (3, 2, 4)
    with pytest.raises(ValueError, match="transpose"):
        x.transpose(0, 0, 1)
    assert sym.broadcast_to(sym.tensor(shape=(1, 4)), (3, 4)).shape == (3, 4)
    with pytest.raises(ValueError, match="broadcast_to"):
        sym.broadcast_to(sym.tensor(shape=(2, 4)), (3, 4))
    assert sym.concatenate([x, x], axis=1).shape == (2, 6, 4)
    assert sym.concatenate([sym.tensor(shape=(None, 3)), sym.tensor(shape=(2, 3))]).shape == (None, 3)
    with pytest.raises(ValueError, match="concatenate"):
        sym.concatenate([x, sym.tensor(shape=(2, 5, 4))], axis=0)
    assert sym.stack([x, x], axis=-1).shape == (2, 3, 4, 2)
    with pytest.raises(ValueError, match="stack"):
        sym.stack([x, sym.tensor(shape=(2, 3, 5))])
    assert sym.expand_dims(x, 1).shape == (2, 1, 3, 4)
    assert sym.expand_dims(x, -1).shape == (2, 3, 4, 1)
    assert sym.squeeze(sym.tensor(shape=(1, None, 1))).shape == (None,)
    assert sym.squeeze(sym.tensor(shape=(1, None)), axis=1).shape == (1,)
    with pytest.raises(ValueError, match="squeeze"):
        sym.squeeze(x, axis=0)


@pytest.mark.parametrize("index", [
    1, -1, slice(None, None, -1), (slice(1, None), 2), (None, Ellipsis, 0), (Ellipsis, slice(None, None, -2)),
    (0, None, slice(1, 3), 2), (slice(5, 1, -1), Ellipsis)])
def test_getitem_shapes_match_numpy(index):
    a = np.zeros((4, 5, 6))
    x = sym.tensor(shape=a.shape)
    assert x[index].shape == a[index].shape


def test_getitem_errors():
    x = sym.tensor(shape=(4, 5))
    with pytest.raises(IndexError):
        x[4]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[[0, 1], [1, 2]]  # one advanced index at most
    with pytest.raises(TypeError):
        x[sym.scalar(dtype="int64")]
    with pytest.raises(ValueError):
        x[::0]
    assert sym.tensor(shape=(None, 5))[10].shape == (5,)  # unknown length: checked at run time


# ---------------------------------------------------------------------------- operators

def test_operators_build_the_right_ops():
    x = sym.matrix("x")
    W = sym.matrix("W")
    cases = {
        "add": x + 1, "subtract": 1 - x, "multiply": x * x, "divide": x / 2, "power": x ** 2,
        "matmul": x @ W, "negative": -x, "abs": abs(x), "less": x < 0, "less_equal": x <= 0,
        "greater": x > 0, "greater_equal": x >= 0, "getitem": x[1:, ::-1], "transpose": x.T,
        "sum": x.sum(), "mean": x.mean(axis=0), "max": x.max(axis=1), "reshape": x.reshape(-1),
        "floor_divide": x // 2, "remainder": x % 2,
    }
    for name, v in cases.items():
        assert isinstance(v, Variable) and v.owner.op.name == name, name
    assert (1 - x).owner.inputs[1] is x
    assert (np.ones((2, 2)) + x).owner.op.name == "add"  # NumPy defers to the variable


def test_bool_operators():
    """& | ^ ~ on bool variables are the logical ops; with an integer operand NumPy's bitwise
    ops (int32 & bool is int32); a float operand is a TypeError naming the op."""
    b = sym.vector(dtype="bool")
    assert (b & b).owner.op.name == "logical_and"
    assert (b | True).owner.op.name == "logical_or"
    assert (b ^ b).owner.op.name == "logical_xor"
    assert (~b).owner.op.name == "logical_not"
    i = sym.vector(dtype="int32") & b
    assert i.owner.op.name == "bitwise_and" and i.dtype == "int32"
    assert (~sym.vector(dtype="uint8")).owner.op.name == "bitwise_invert"
    with pytest.raises(TypeError, match="bitwise_and.*float64"):
        sym.vector() & b


def test_eager_functions_forward_to_graph():
    x = sym.matrix("x")
    for y in (uma.exp(x), uma.add(x, 1.0), uma.sum(x, axis=1), uma.matmul(x, x),
              uma.reshape(x, (-1,)), uma.concatenate([x, x]), uma.where(x > 0, x, 0.0)):
        assert isinstance(y, Variable)
    assert uma.sum(x, axis=1).shape == (None,)


# ---------------------------------------------------------------------------- FunctionGraph

def test_function_graph_clones_and_keeps_user_graph():
    x, y = sym.vector("x"), sym.vector("y")
    z = sym.exp(x) + y
    fg = FunctionGraph([x, y], [z, x])
    assert fg.inputs[0] is not x and fg.inputs[0].type == x.type and fg.inputs[0].name == "x"
    assert fg.outputs[0] is not z and fg.outputs[0].type == z.type
    assert fg.outputs[1] is fg.inputs[0]
    assert fg.memo[z] is fg.outputs[0]
    # rewriting the clone leaves the user's graph alone
    fg.replace(fg.inputs[1], fg.inputs[0])
    assert z.owner.inputs[1] is y
    assert fg.outputs[0].owner.inputs[1] is fg.inputs[0]
    validate(fg)


def test_function_graph_missing_input():
    x, y = sym.vector("x"), sym.vector("y")
    with pytest.raises(MissingInputError, match="'y'"):
        FunctionGraph([x], [x + y])
    assert issubclass(MissingInputError, ValueError)
    with pytest.raises(TypeError):
        FunctionGraph([Constant(1.0)], [])
    with pytest.raises(ValueError):
        FunctionGraph([x, x], [x])


def test_function_graph_intermediate_input_cuts_graph():
    x = sym.vector("x")
    h = sym.exp(x)
    out = h * 2
    fg = FunctionGraph([h], [out])
    assert [n.op.name for n in fg.toposort()] == ["multiply"]


def test_toposort_order():
    x = sym.vector("x")
    a = sym.exp(x)
    b = sym.log(a)
    c = a + b
    order = toposort([c])
    assert [n.op.name for n in order] == ["exp", "log", "add"]


def test_validator_catches_bad_node_and_update():
    x = sym.vector("x", dtype="float32")
    y = sym.exp(x)
    fg = FunctionGraph([x], [y])
    fg.outputs[0].type = TensorType("float64", (None,))  # corrupt the clone
    with pytest.raises(TypeError, match="validate"):
        validate(fg)
    a = sym.vector("a", dtype="float32")
    fg2 = FunctionGraph([a], [a.astype("float64")], update_mapping={0: 0})
    with pytest.raises(TypeError, match="update"):
        validate(fg2)
    with pytest.raises(ValueError):
        FunctionGraph([a], [a], update_mapping={3: 0})


def test_outputs_needing_copy():
    x = sym.matrix("x")
    y = sym.exp(x)
    fg = FunctionGraph([x], [x, y, y.T, y, Constant(np.ones(2)), y + 1])
    # x is an input, y.T views y (claimed by output 1), y again, a constant
    assert fg.outputs_needing_copy() == {0, 2, 3, 4}
    assert alias_root(fg.outputs[2]) is fg.outputs[1]
    # updates claim their memory first
    fg2 = FunctionGraph([x], [y, y], update_mapping={1: 0})
    assert fg2.outputs_needing_copy() == {0}


def test_apply_nodes_and_ops_compare_by_props():
    assert ops.Reduce("sum", (0,), False) == ops.Reduce("sum", (0,), False)
    assert ops.Reduce("sum", (0,), False) != ops.Reduce("sum", (1,), False)
    assert hash(ops.Elemwise("add")) == hash(ops.Elemwise("add"))
    x = sym.vector("x")
    node = (x + 1).owner
    assert isinstance(node, Apply) and node.outputs[0].owner is node


def test_creation_functions_are_constants():
    c = ops.zeros((2, 3), dtype="float32")
    assert isinstance(c, Constant) and c.shape == (2, 3) and c.dtype == "float32"
    assert not c.value.flags.writeable
    assert ops.arange(5).shape == (5,)
    assert ops.eye(3).dtype == "float64"


@pytest.mark.parametrize("dtype,scalar", [("int8", 300), ("uint8", -1), ("int64", 2**70), ("bool", 2**70)])
@pytest.mark.parametrize("op", ["divide", "arctan2"])
def test_symbolic_python_int_out_of_range_in_float_loops(op, dtype, scalar):
    """As eagerly and in NumPy 2: divide/arctan2 convert the Python int to their float loop."""
    n = np.array([1, 2, 3]).astype(dtype)
    x = uma.sym.vector("x", dtype=dtype)
    for expr, ref in ((getattr(uma, op)(x, scalar), getattr(np, op)(n, scalar)),
                      (getattr(uma, op)(scalar, x), getattr(np, op)(scalar, n))):
        got = np.asarray(uma.function([x], expr)(n))
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-3)


@pytest.mark.parametrize("value", [2**64, -2**64 - 5, 2**80])
@pytest.mark.parametrize("op", ["less", "greater_equal", "equal", "not_equal"])
def test_symbolic_compare_with_int_beyond_every_dtype(op, value):
    n = np.array([0, 5, -3], dtype=np.int64)
    x = uma.sym.vector("x", dtype="int64")
    got = np.asarray(uma.function([x], getattr(uma, op)(x, value))(n))
    np.testing.assert_array_equal(got, getattr(np, op)(n, value))


def test_uma_arrays_defer_to_variables():
    """NumPy's deferral rule (NEP 13): a uma array's operators return NotImplemented for a
    Variable operand (its type sets __array_ufunc__ = None), so ``array op x`` is the symbolic
    op with the array as a constant, as for a NumPy array."""
    x = uma.sym.vector("x")
    a = uma.asarray(np.arange(3.0))
    n = np.arange(3.0)
    f = uma.function([x], [a * x + a, a - x, a / (x + 1), a ** x, a @ x, (a < x).astype("float64")])
    g = uma.function([x], [n * x + n, n - x, n / (x + 1), n ** x, n @ x, (n < x).astype("float64")])
    v = np.array([0.5, 1.5, 2.5])
    for got, want in zip(f(v), g(v)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(f(v)[0]), n * v + n)
    with pytest.raises(TypeError, match="cannot convert .* to an array"):
        a * object()


def test_arrays_refuse_equality_and_in_place_updates_with_variables():
    """``array == x`` is no silent bool (a Variable's == is identity), and an array cannot be
    updated in place with a Variable: TypeErrors naming the variable; the array is unchanged."""
    x = uma.sym.vector("x")
    xi = uma.sym.vector("xi", dtype="int64")
    a = uma.asarray(np.arange(3.0))
    ai = uma.asarray(np.arange(3))
    for op in ("==", "!="):
        with pytest.raises(TypeError, match=rf"an array {op} Variable\(x.* is not elementwise: use uma.sym"):
            eval(f"a {op} x")
    for stmt, arr, var in (("a += x", a, x), ("a *= x", a, x), ("a @= x", a, x), ("ai &= xi", ai, xi),
                           ("ai |= xi", ai, xi), ("ai <<= xi", ai, xi)):
        before = np.asarray(arr).copy()
        with pytest.raises(TypeError, match="cannot be updated in place with Variable"):
            exec(stmt, {}, {"a": a, "x": x, "ai": ai, "xi": xi})
        np.testing.assert_array_equal(np.asarray(arr), before)
    f = uma.function([x], uma.sym.equal(a, x).astype("float64"))
    np.testing.assert_array_equal(np.asarray(f(np.array([0.0, 5.0, 2.0]))), [1.0, 0.0, 1.0])


def test_tensor_constructor_checks_ndim_and_shape():
    """sym.tensor: ndim must be a non-negative int (not a bool, float or string), and agree with
    shape where both are given; without either, a TypeError says what to give."""
    from uma import sym
    assert sym.tensor("t", ndim=0).ndim == 0 and sym.tensor("t", ndim=np.int64(3)).ndim == 3
    for bad in (1.5, "2", True, np.bool_(True), None.__class__):
        with pytest.raises(TypeError, match="ndim must be an int"):
            sym.tensor("t", ndim=bad)
    for bad in (-1, -5):
        with pytest.raises(ValueError, match=f"ndim must be at least 0, got {bad}"):
            sym.tensor("t", ndim=bad)
    with pytest.raises(ValueError, match="ndim=2 does not match shape"):
        sym.tensor("t", ndim=2, shape=(None,))
    with pytest.raises(TypeError, match="give shape="):
        sym.tensor("t")
    # A bad dtype is named first, with or without a shape.
    for kw in ({}, {"shape": (2,)}, {"ndim": 1}):
        with pytest.raises(TypeError, match="^tensor: data type 'nope' not understood"):
            sym.tensor("t", dtype="nope", **kw)


def test_strings_are_not_graph_values():
    """A str or bytes where a graph expects a value is refused naming it (not as a NumPy
    string dtype uma lacks)."""
    v = sym.vector("v")
    for bad in ("abc", b"x", np.array(["a", "b"])):
        with pytest.raises(TypeError, match="in a symbolic graph .not a number or an array of numbers"):
            uma.function([v], bad)
        with pytest.raises(TypeError, match="in a symbolic graph"):
            v + bad
