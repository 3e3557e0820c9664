"""The shape rules of the ops are written once, in C++ (``src/ops/shape_rules.cpp``), for static
shapes (None: a length known only at run time): the eager ops follow them on concrete shapes and
the graph asks the core for its nodes' static shapes (``uma._core._result_shape``,
``uma._core._broadcast_shapes``).

Oracles: NumPy's shapes on concrete shapes (``np.broadcast_shapes``, the results of ``np.sum``,
``np.cumsum``, ``np.matmul``); for unknown lengths, every concrete shape the static one stands
for (PyTensor: only static length-1 axes broadcast); the graph's node types and the eager
results."""
import itertools
import random

import numpy as np
import pytest

import uma
from uma import sym

core = uma._core


def _random_shapes(rng, count, ndim_max=3, lengths=(0, 1, 2, 3)):
    return [tuple(rng.choice(lengths) for _ in range(rng.randint(0, ndim_max))) for _ in range(count)]


def _fmt(shape):
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


@pytest.mark.parametrize("count", [1, 2, 3])
def test_broadcast_of_concrete_shapes_is_numpys(count):
    rng = random.Random(count)
    for _ in range(400):
        shapes = _random_shapes(rng, count)
        try:
            expected = np.broadcast_shapes(*shapes)
        except ValueError:
            with pytest.raises(ValueError) as e:
                core._broadcast_shapes("add", *shapes)
            assert str(e.value) == ("add: operands could not be broadcast together with shapes "
                                    + " ".join(_fmt(s) for s in shapes))
            continue
        assert core._broadcast_shapes("add", *shapes) == expected
        if count == 2:  # an elementwise op of the table: the eager result has the same shape
            assert core._result_shape("multiply", *shapes) == expected
            assert uma.multiply(uma.ones(shapes[0]), uma.ones(shapes[1])).shape == expected


def _concrete(static, values):
    """Every concrete shape of ``static``, its unknown lengths taken from ``values``."""
    slots = [values if d is None else (d,) for d in static]
    return [tuple(c) for c in itertools.product(*slots)]


@pytest.mark.parametrize("count", [2, 3])
def test_broadcast_with_unknown_lengths_holds_for_every_concrete_shape(count):
    """An axis of the static answer that is known is the length of every concrete broadcast the
    static shapes stand for; an unknown one is not decided by the static shapes; an error means
    no concrete shapes broadcast, under PyTensor's rule that an unknown length never broadcasts
    (it is the result's length at run time)."""
    rng = random.Random(10 + count)
    values = (1, 2, 3)
    for _ in range(300):
        shapes = [tuple(None if rng.random() < 0.3 else d for d in s)
                  for s in _random_shapes(rng, count, lengths=(1, 2, 3))]
        results = set()
        for concrete in itertools.product(*(_concrete(s, values) for s in shapes)):
            try:
                out = np.broadcast_shapes(*concrete)
            except ValueError:
                continue
            # PyTensor: an axis whose static length is unknown must have the result's length
            n = len(out)
            if all(c[j] == out[j - len(c) + n] for s, c in zip(shapes, concrete)
                   for j, d in enumerate(s) if d is None):
                results.add(out)
        if not results:
            with pytest.raises(ValueError, match="add: operands could not be broadcast together with shapes"):
                core._result_shape("add", *shapes) if count == 2 else core._broadcast_shapes("add", *shapes)
            continue
        static = core._result_shape("add", *shapes) if count == 2 else core._result_shape("where", *shapes)
        assert len(static) == max(len(s) for s in shapes)
        for ax, d in enumerate(static):
            lengths = {r[ax] for r in results}
            if d is None:
                assert len(lengths) > 1, (shapes, static, results)
            else:
                assert lengths == {d}, (shapes, static, results)


def test_broadcast_errors_name_the_op_and_every_shape():
    with pytest.raises(ValueError, match=r"^where: operands could not be broadcast together with shapes "
                                         r"\(2,\) \(\?,\) \(3,\)$"):
        core._result_shape("where", (2,), (None,), (3,))
    with pytest.raises(ValueError, match=r"^add: operands could not be broadcast together with shapes "
                                         r"\(2, 3\) \(4,\)$"):
        sym.tensor(shape=(2, 3)) + sym.vector(shape=(4,))
    with pytest.raises(TypeError, match="add: expected 2 shapes, got 1"):
        core._result_shape("add", (2,))
    with pytest.raises(ValueError, match="'no_such_op'"):
        core._result_shape("no_such_op", (2,))


def test_elementwise_node_types_are_the_cores():
    rng = random.Random(7)
    for _ in range(100):
        a, b = [tuple(None if rng.random() < 0.3 else d for d in s)
                for s in _random_shapes(rng, 2, lengths=(1, 2, 3))]
        try:
            expected = core._result_shape("add", a, b)
        except ValueError:
            continue
        x, y = sym.tensor(shape=a), sym.tensor(shape=b)
        assert (x + y).shape == expected
        assert sym.where(x > 0, x, y).shape == core._result_shape("where", a, a, b) == expected
        assert sym.exp(x).shape == core._result_shape("exp", a) == a


REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "logsumexp", "all", "any"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_shapes_are_numpys_and_the_graphs(name, keepdims):
    shape = (2, 3, 4)
    axes = [None, 0, 1, -1] if name in ("argmax", "argmin") else [None, 0, -1, (0, 2), (1, 0), (0, 1, 2)]
    if name == "logsumexp":
        def fn(x, axis, keepdims):
            return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    else:
        fn = getattr(np, name)
    for axis in axes:
        expected = fn(np.ones(shape), axis=axis, keepdims=keepdims).shape
        x = sym.tensor(shape=shape)
        node = getattr(sym, name)(x, axis=axis, keepdims=keepdims)
        assert node.shape == expected, (axis, node.shape, expected)
        norm = None if axis is None else tuple(sorted(a % 3 for a in np.atleast_1d(axis)))
        assert core._result_shape(name, shape, axis=norm, keepdims=keepdims) == expected
        # an unknown length stays unknown where its axis is kept (NumPy on length 7 marks it)
        marked = fn(np.ones((2, 7, 4)), axis=axis, keepdims=keepdims).shape
        static = getattr(sym, name)(sym.tensor(shape=(2, None, 4)), axis=axis, keepdims=keepdims).shape
        assert static == tuple(None if d == 7 else d for d in marked)
        assert getattr(uma, name)(uma.ones(shape), axis=axis, keepdims=keepdims).shape == expected


def test_reduction_shape_errors():
    with pytest.raises(np.exceptions.AxisError, match="sum: axis 3 is out of bounds for array of dimension 2"):
        core._result_shape("sum", (2, None), axis=3)
    with pytest.raises(ValueError, match="sum: duplicate value in 'axis'"):
        core._result_shape("sum", (2, None), axis=(1, -1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_shapes(name):
    for shape, axis in [((2, 3), None), ((2, 3), 1), ((2, 3), -2), ((4,), 0), ((), None), ((2, 0, 3), None)]:
        expected = getattr(np, name)(np.ones(shape), axis=axis).shape
        assert core._result_shape(name, shape, axis=axis) == expected
        assert getattr(sym, name)(sym.tensor(shape=shape), axis=axis).shape == expected
        assert getattr(uma, name)(uma.ones(shape), axis=axis).shape == expected
    assert core._result_shape(name, (2, None)) == (None,)
    assert core._result_shape(name, (2, None), axis=0) == (2, None)
    assert getattr(sym, name)(sym.tensor(shape=(None, 3))).shape == (None,)


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((7, 1, 2, 3), (4, 3, 5)), ((1, 2, 3), (6, 3, 2)), ((0, 2, 3), (3, 1)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes_are_numpys_and_the_graphs(sa, sb):
    expected = np.matmul(np.ones(sa), np.ones(sb)).shape
    assert core._result_shape("matmul", sa, sb) == expected
    assert sym.matmul(sym.tensor(shape=sa), sym.tensor(shape=sb)).shape == expected
    assert uma.matmul(uma.ones(sa), uma.ones(sb)).shape == expected
    # an unknown length stays unknown in the result, and an unknown core length checks nothing
    ua = sa[:-1] + (None,)
    assert core._result_shape("matmul", ua, sb) == expected
    ub = (None,) * len(sb)
    static = core._result_shape("matmul", sa, ub)
    assert len(static) == len(expected)
    assert all(s is None or s == e for s, e in zip(static, expected))


def test_matmul_shape_errors_keep_their_messages():
    with pytest.raises(ValueError, match=r"^matmul: input operand does not have enough dimensions "
                                         r"\(0-d operands are not allowed\)$"):
        sym.matmul(sym.scalar(), sym.vector())
    with pytest.raises(ValueError, match=r"^matmul: mismatch in the core dimension: shapes \(\?, 3\) and "
                                         r"\(4, \?\) \(3 != 4\)$"):
        sym.matmul(sym.tensor(shape=(None, 3)), sym.tensor(shape=(4, None)))
    with pytest.raises(ValueError, match=r"^matmul: operands could not be broadcast together with shapes "
                                         r"\(2,\) \(3,\)$"):
        sym.matmul(sym.tensor(shape=(2, 1, 3)), sym.tensor(shape=(3, 3, 1)))
    # the eager op keeps NumPy's wording
    with pytest.raises(ValueError, match="Input operand 1 has a mismatch in its core dimension 0"):
        uma.matmul(uma.ones((2, 3)), uma.ones((4,)))


def test_run_time_broadcast_is_checked_against_the_declared_shapes():
    x, y = sym.tensor(shape=(None, 3)), sym.tensor(shape=(None, 3))
    f = uma.function([x, y], x + y, backend="reference")
    assert np.asarray(f(np.ones((2, 3)), np.ones((2, 3)))).shape == (2, 3)
    with pytest.raises(ValueError, match="add: operands could not be broadcast together with shapes "
                                         r"\(2, 3\) \(4, 3\)"):
        f(np.ones((2, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"input 0 has run-time shape \(1, 3\) and would be broadcast along "
                                         r"axis 0 to length 4, but its type \(\?, 3\) does not declare"):
        f(np.ones((1, 3)), np.ones((4, 3)))
