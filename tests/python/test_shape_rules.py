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
    # the batch axes' mismatch quotes the operands' whole shapes, as NumPy does
    with pytest.raises(ValueError, match=r"^matmul: operands could not be broadcast together with shapes "
                                         r"\(2, 1, 3\) \(3, 3, 1\) \(their batch axes \(2,\) and \(3,\)\)$"):
        sym.matmul(sym.tensor(shape=(2, 1, 3)), sym.tensor(shape=(3, 3, 1)))
    with pytest.raises(ValueError, match=r"^matmul: operands could not be broadcast together with shapes "
                                         r"\(3, 2, 4\) \(2, 4, 2\)"):
        uma.matmul(uma.ones((3, 2, 4)), uma.ones((2, 4, 2)))
    # the eager op keeps NumPy's wording
    with pytest.raises(ValueError, match="Input operand 1 has a mismatch in its core dimension 0"):
        uma.matmul(uma.ones((2, 3)), uma.ones((4,)))
    # a compiled product whose batch axis is broadcast but not declared length 1 names the
    # input's whole shape and type
    a, b = sym.tensor("a", ndim=3), sym.tensor("b", ndim=3)
    f = uma.function([a, b], sym.tanh(a @ b), backend="reference")
    with pytest.raises(ValueError, match=r"matmul: input 0 has run-time shape \(1, 2, 4\) and would be broadcast "
                                         r"along axis 0 to length 3, but its type \(\?, \?, \?\) does not declare"):
        f(np.ones((1, 2, 4)), np.ones((3, 4, 2)))


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


# ---- the shape ops, indexing, joins, diagonals and nn helpers ------------------------------
# Each case is called with m = numpy (the oracle), uma (eager) and sym (the graph): the three
# must give the same result shape, and the graph's node the core's rule on run-time shapes too.

IDX = np.array([[0, 1, 3]])

SHAPE_CASES = [
    ("reshape", [(2, 6)], lambda m, x: m.reshape(x, (3, -1))),
    ("reshape_flat", [(2, 3, 4)], lambda m, x: m.reshape(x, (-1,))),
    ("reshape_zero", [(0, 3)], lambda m, x: m.reshape(x, (3, 0))),
    ("transpose", [(2, 3, 4)], lambda m, x: m.transpose(x, (2, 0, 1))),
    ("transpose_negative", [(2, 3, 4)], lambda m, x: m.transpose(x, (-1, 0, -2))),
    ("transpose_reversed", [(2, 3, 4)], lambda m, x: m.transpose(x)),
    ("permute_dims", [(2, 3, 4)], lambda m, x: (np.permute_dims if m is np else m.permute_dims)(x, (1, 2, 0))),
    ("expand_dims", [(2, 3)], lambda m, x: m.expand_dims(x, -1)),
    ("expand_dims_front", [(2, 3)], lambda m, x: m.expand_dims(x, 0)),
    ("squeeze", [(1, 3, 1)], lambda m, x: m.squeeze(x)),
    ("squeeze_axis", [(1, 3, 1)], lambda m, x: m.squeeze(x, axis=-1)),
    ("squeeze_axes", [(1, 3, 1)], lambda m, x: m.squeeze(x, axis=(0, 2))),
    ("broadcast_to", [(3, 1)], lambda m, x: m.broadcast_to(x, (2, 3, 4))),
    ("concatenate", [(2, 3), (4, 3)], lambda m, a, b: m.concatenate([a, b], axis=0)),
    ("concatenate_last", [(2, 3), (2, 1)], lambda m, a, b: m.concatenate([a, b], axis=-1)),
    ("concatenate_none", [(2, 3), (4,)], lambda m, a, b: m.concatenate([a, b], axis=None)),
    ("stack", [(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b], axis=1)),
    ("stack_last", [(2, 3), (2, 3), (2, 3)], lambda m, a, b, c: m.stack([a, b, c], axis=-1)),
    ("split", [(2, 6)], lambda m, x: m.split(x, 3, axis=1)[1]),
    ("split_points", [(7, 2)], lambda m, x: m.split(x, [2, 5])[2]),
    ("getitem", [(5, 4, 3)], lambda m, x: x[1::2, None, -1]),
    ("getitem_ellipsis", [(5, 4, 3)], lambda m, x: x[..., ::-2]),
    ("getitem_empty_slice", [(5, 4)], lambda m, x: x[3:1, -10:2]),
    ("getitem_int", [(5, 4)], lambda m, x: x[-5]),
    ("take", [(4, 5)], lambda m, x: m.take(x, IDX, axis=1)),
    ("take_flat", [(4, 5)], lambda m, x: m.take(x, IDX)),
    ("mask", [(4, 3)], lambda m, x: x[np.array([True, False, True, True])]),
    ("outer", [(2, 3), (4,)], lambda m, a, b: m.outer(a, b)),
    ("diagonal", [(3, 5, 2)], lambda m, x: m.diagonal(x, 1, 0, 1)),
    ("diagonal_below", [(3, 5, 2)], lambda m, x: m.diagonal(x, -1, 2, 1)),
    ("diagonal_past", [(3, 5)], lambda m, x: m.diagonal(x, 7)),
    ("diag_vector", [(3,)], lambda m, x: m.diag(x, -2)),
    ("diag_matrix", [(3, 5)], lambda m, x: m.diag(x, 1)),
    ("max", [(2, 0, 3)], lambda m, x: m.max(x, axis=2)),
    ("argmin", [(2, 0, 3)], lambda m, x: m.argmin(x, axis=0)),
]


def _run(fn, m, shapes):
    if m is np:
        xs = [np.ones(s) for s in shapes]
    elif m is uma:
        xs = [uma.ones(s) for s in shapes]
    else:
        xs = [sym.tensor(shape=s) for s in shapes]
    return fn(m, *xs), xs


def _infer(out, xs, shapes):
    """The node's run-time shape rule on the concrete ``shapes`` of the variables ``xs``."""
    node = out.owner
    concrete = {id(x): s for x, s in zip(xs, shapes)}
    ins = [concrete.get(id(i), i.shape) for i in node.inputs]
    return tuple(node.op.infer_shape(node, ins)[0])


@pytest.mark.parametrize("name,shapes,fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_op_result_shapes_are_numpys(name, shapes, fn):
    expected = _run(fn, np, shapes)[0].shape
    assert _run(fn, uma, shapes)[0].shape == expected
    if name == "mask":  # the count is known only at run time
        assert _run(fn, sym, shapes)[0].shape == (None,) + expected[1:]
        return
    out, xs = _run(fn, sym, shapes)
    assert out.shape == expected
    if name not in ("concatenate_none", "split", "split_points"):  # one node over the inputs
        # run-time shapes: the same rule, from the core
        assert _infer(out, xs, shapes) == expected
        if name not in ("squeeze", "broadcast_to"):  # these need the static length-1 axes
            unknown = [sym.tensor(shape=(None,) * len(s)) for s in shapes]
            out = fn(sym, *unknown)
            assert _infer(out, unknown, shapes) == expected


@pytest.mark.parametrize("name,shapes,fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_unknown_lengths_stay_unknown_unless_a_known_length_decides_them(name, shapes, fn):
    """Every static shape with one length unknown: each known length of the graph's answer is
    NumPy's, and an unknown one is not decided by the static shapes (another value of the
    unknown length changes it). An error only where NumPy errs for a value of the unknown."""
    expected = _run(fn, np, shapes)[0].shape
    for k, s in enumerate(shapes):
        for ax in range(len(s)):
            static = [tuple(None if (j == k and i == ax) else d for i, d in enumerate(t))
                      for j, t in enumerate(shapes)]
            try:
                out = fn(sym, *[sym.tensor(shape=t) for t in static])
            except ValueError as e:
                # split into sections needs the axis' length; otherwise no error on known shapes
                assert name == "split" and "unknown" in str(e), (name, static, e)
                continue
            if name == "squeeze":  # no axis: an unknown length is kept (PyTensor)
                assert out.shape == tuple(d for d in static[0] if d != 1)
                continue
            assert len(out.shape) == len(expected)
            others = set()
            for value in (0, 1, 2, 3, 6, 7, 9):
                other = [tuple(value if d is None else d for d in t) for t in static]
                try:
                    others.add(_run(fn, np, other)[0].shape)
                except (ValueError, IndexError):
                    pass
            for i, d in enumerate(out.shape):
                if d is not None:
                    assert d == expected[i], (name, static, out.shape, expected)
                    assert all(o[i] == d for o in others), (name, static, out.shape, others)
                elif name != "mask" or i > 0:
                    assert len({o[i] for o in others}) > 1, (name, static, out.shape, others)


ERROR_CASES = [
    ("reshape_size", [(2, 3)], lambda m, x: m.reshape(x, (4, -1))),
    ("reshape_two_unknown", [(2, 3)], lambda m, x: m.reshape(x, (-1, -1))),
    ("transpose_count", [(2, 3)], lambda m, x: m.transpose(x, (0,))),
    ("transpose_repeat", [(2, 3)], lambda m, x: m.transpose(x, (1, 1))),
    ("transpose_axis", [(2, 3)], lambda m, x: m.transpose(x, (0, 2))),
    ("expand_dims_axis", [(2,)], lambda m, x: m.expand_dims(x, 3)),
    ("squeeze_not_one", [(2, 3)], lambda m, x: m.squeeze(x, axis=0)),
    ("squeeze_duplicate", [(1, 3)], lambda m, x: m.squeeze(x, axis=(0, -2))),
    ("broadcast_to", [(3,)], lambda m, x: m.broadcast_to(x, (2, 4))),
    ("broadcast_to_fewer", [(2, 3)], lambda m, x: m.broadcast_to(x, (3,))),
    ("concatenate_lengths", [(2, 3), (2, 4)], lambda m, a, b: m.concatenate([a, b], axis=0)),
    ("concatenate_ranks", [(2, 3), (3,)], lambda m, a, b: m.concatenate([a, b])),
    ("concatenate_0d", [(), ()], lambda m, a, b: m.concatenate([a, b])),
    ("concatenate_axis", [(2,), (2,)], lambda m, a, b: m.concatenate([a, b], axis=1)),
    ("stack_shapes", [(2,), (3,)], lambda m, a, b: m.stack([a, b])),
    ("stack_axis", [(2,), (2,)], lambda m, a, b: m.stack([a, b], axis=2)),
    ("split_unequal", [(5,)], lambda m, x: m.split(x, 2)),
    ("getitem_bounds", [(5, 2)], lambda m, x: x[1, -3]),
    ("getitem_too_many", [(5,)], lambda m, x: x[0, 0]),
    ("getitem_ellipses", [(5,)], lambda m, x: x[..., ...]),
    ("getitem_step", [(5,)], lambda m, x: x[::0]),
    ("take_axis", [(4,)], lambda m, x: m.take(x, IDX, axis=1)),
    ("mask_length", [(4, 3)], lambda m, x: x[np.ones(5, bool)]),
    ("mask_rank", [(4,)], lambda m, x: x[np.ones((4, 1), bool)]),
    ("diagonal_1d", [(3,)], lambda m, x: m.diagonal(x)),
    ("diagonal_same_axes", [(3, 3)], lambda m, x: m.diagonal(x, 0, 1, -1)),
    ("diagonal_axis", [(3, 3)], lambda m, x: m.diagonal(x, 0, 0, 2)),
    ("diag_3d", [(2, 2, 2)], lambda m, x: m.diag(x)),
    ("max_empty", [(0, 3)], lambda m, x: m.max(x, axis=0)),
    ("min_empty", [(2, 0)], lambda m, x: m.min(x)),
    ("argmax_empty", [(0,)], lambda m, x: m.argmax(x)),
    ("argmin_empty", [(3, 0)], lambda m, x: m.argmin(x, axis=1)),
]


def _error(fn, m, shapes):
    with pytest.raises(Exception) as e:
        _run(fn, m, shapes)
    return e.value


@pytest.mark.parametrize("name,shapes,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_graph_and_eager_raise_numpys_error_type(name, shapes, fn):
    expected = type(_error(fn, np, shapes))
    eager, graph = _error(fn, uma, shapes), _error(fn, sym, shapes)
    assert type(eager) is expected, (eager, expected)
    assert type(graph) is expected, (graph, expected)
    assert name.split("_")[0] in str(graph) or name.startswith("getitem") or name.startswith("mask"), graph


NN_CASES = [  # (name, shapes, dtypes, uma/sym call, NumPy's result shape or None for an error)
    ("softmax", [(2, 3)], ["float64"], lambda m, x: m.softmax(x, axis=0), lambda x: (x - x.max(0)).shape),
    ("log_softmax", [(2, 3, 4)], ["float32"], lambda m, x: m.log_softmax(x, axis=-2), lambda x: x.shape),
    ("softmax_0d", [()], ["float64"], lambda m, x: m.softmax(x), None),
    ("softmax_axis", [(2,)], ["float64"], lambda m, x: m.softmax(x, axis=1), None),
    ("one_hot", [(2, 3)], ["int64"], lambda m, x: m.one_hot(x, 4), lambda x: np.eye(4)[x].shape),
    ("one_hot_depth", [(2,)], ["int64"], lambda m, x: m.one_hot(x, -1), None),
    ("xent", [(5, 3), (5,)], ["float64", "int64"], lambda m, z, y: m.softmax_cross_entropy(z, y),
     lambda z, y: z[np.arange(len(y)), y].shape),
    ("xent_labels", [(5, 3), (4,)], ["float64", "int64"], lambda m, z, y: m.softmax_cross_entropy(z, y), None),
    ("xent_logits_rank", [(5,), (5,)], ["float64", "int64"], lambda m, z, y: m.softmax_cross_entropy(z, y), None),
]


@pytest.mark.parametrize("name,shapes,dtypes,fn,np_shape", NN_CASES, ids=[c[0] for c in NN_CASES])
def test_nn_helper_shapes_and_errors_agree(name, shapes, dtypes, fn, np_shape):
    arrays = [np.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]
    svars = [sym.tensor(shape=s, dtype=d) for s, d in zip(shapes, dtypes)]
    if np_shape is None:
        with pytest.raises(Exception) as eager:
            fn(uma, *[uma.asarray(a) for a in arrays])
        with pytest.raises(Exception) as graph:
            fn(sym, *svars)
        assert type(graph.value) is type(eager.value), (graph.value, eager.value)
        assert isinstance(graph.value, ValueError)
        return
    expected = np_shape(*arrays)
    assert fn(uma, *[uma.asarray(a) for a in arrays]).shape == expected
    out = fn(sym, *svars)
    assert out.shape == expected
    unknown = [sym.tensor(shape=(None,) * len(s), dtype=d) for s, d in zip(shapes, dtypes)]
    assert _infer(fn(sym, *unknown), unknown, shapes) == expected


def test_gradient_helpers_take_their_shapes_from_the_core():
    """broadcast_like, reshape_like, segment, getitem_grad, diagonal_embed and the cross-entropy
    gradient: static shapes and errors from the core's rules."""
    assert core._result_shape("broadcast_like", (3, 1), (None, None)) == (3, None)
    with pytest.raises(ValueError, match=r"broadcast_like: cannot broadcast an array of shape \(3,\) to shape \(1,\)"):
        core._result_shape("broadcast_like", (3,), (1,))
    assert core._result_shape("reshape_like", (2, None), (None, 4)) == (None, 4)
    with pytest.raises(ValueError, match="reshape_like"):
        core._result_shape("reshape_like", (2, 3), (4,))
    assert core._result_shape("segment", (None, 3), (2, 3), (4, 3), axis=0, part=1) == (4, 3)
    index = (slice(1, None), None, 0)
    region = np.ones((5, 4))[index].shape
    assert core._result_shape("getitem_grad", region, (5, 4), index=index) == (5, 4)
    with pytest.raises(ValueError, match="getitem_grad: gradient of shape"):
        core._result_shape("getitem_grad", (3, 1), (5, 4), index=index)
    diag = np.diagonal(np.ones((3, 5, 2)), 1, 0, 1).shape
    assert core._result_shape("diagonal_embed", diag, (3, 5, 2), offset=1, axis1=0, axis2=1) == (3, 5, 2)
    with pytest.raises(ValueError, match="diagonal_embed"):
        core._result_shape("diagonal_embed", (2, 2), (3, 5, 2), offset=1, axis1=0, axis2=1)
    assert core._result_shape("softmax_cross_entropy_grad", (1,), (None, 4), (6,)) == (6, 4)
    with pytest.raises(ValueError, match="softmax_cross_entropy_grad: gradient of shape"):
        core._result_shape("softmax_cross_entropy_grad", (5,), (6, 4), (6,))
    with pytest.raises(TypeError, match="takes no parameter"):
        core._result_shape("outer", (2,), (3,), axis=0)
    # the graph's gradients of these ops build on those rules
    x = sym.tensor(shape=(None, 3))
    g = uma.grad(sym.sum(sym.concatenate([x, x * 2], axis=0)[1:, ::2] ** 2), x)
    f = uma.function([x], g, backend="reference")
    xv = np.arange(12.0).reshape(4, 3)
    expected = np.zeros((4, 3))
    full = np.concatenate([xv, 2 * xv])
    gfull = np.zeros_like(full)
    gfull[1:, ::2] = 2 * full[1:, ::2]
    expected = gfull[:4] + 2 * gfull[4:]
    np.testing.assert_allclose(np.asarray(f(xv)), expected)


@pytest.mark.parametrize("join", ["stack", "concatenate"])
def test_a_join_whose_static_size_overflows_int64_is_a_value_error(join):
    """Four arrays of 2**61 elements make 2**63, which no int64 size holds; three fit."""
    t = sym.tensor(shape=(2**61,))
    with pytest.raises(ValueError, match=f"{join}: .*too large"):
        getattr(sym, join)([t] * 4)
    assert getattr(sym, join)([t] * 3).type.shape in ((3, 2**61), (3 * 2**61,))
