"""The Array API functions composed of graph ops (uma.graph.ops.compose): each compiled on every
backend gives NumPy's result, on static and run-time lengths (empty axes included), its
gradient matches finite differences, ``uma.<name>`` on a variable builds the same graph, and
bad arguments raise the eager functions' errors."""
import numpy as np
import pytest

import uma
from conftest import BACKENDS, held_or_refused, host_numpy
from uma import sym

A = np.random.default_rng(3).standard_normal((3, 4))

# name: (build from a matrix variable, NumPy on the matrix)
CASES = {
    "flip": (lambda x: sym.flip(x, axis=1), lambda a: np.flip(a, 1)),
    "flip-all": (lambda x: sym.flip(x), lambda a: np.flip(a)),
    "roll": (lambda x: sym.roll(x, 5, axis=1), lambda a: np.roll(a, 5, 1)),
    "roll-flat": (lambda x: sym.roll(x, -2), lambda a: np.roll(a, -2)),
    "roll-axes": (lambda x: sym.roll(x, (1, -1), axis=(0, 1)), lambda a: np.roll(a, (1, -1), (0, 1))),
    "repeat": (lambda x: sym.repeat(x, 2, axis=0), lambda a: np.repeat(a, 2, 0)),
    "repeat-flat": (lambda x: sym.repeat(x, 3), lambda a: np.repeat(a, 3)),
    "tile": (lambda x: sym.tile(x, (2, 1, 3)), lambda a: np.tile(a, (2, 1, 3))),
    "tril": (lambda x: sym.tril(x, k=1), lambda a: np.tril(a, 1)),
    "triu": (lambda x: sym.triu(x, k=-1), lambda a: np.triu(a, -1)),
    "diff": (lambda x: sym.diff(x, n=2, prepend=0.5), lambda a: np.diff(a, 2, prepend=0.5)),
    "diff-axis0": (lambda x: sym.diff(x, axis=0, append=x[:1]), lambda a: np.diff(a, axis=0, append=a[:1])),
    "cumulative_sum": (lambda x: sym.cumulative_sum(x, axis=0, include_initial=True),
                       lambda a: np.concatenate([np.zeros((1, a.shape[1])), np.cumsum(a, 0)])),
    "cumulative_prod": (lambda x: sym.cumulative_prod(x, axis=1),
                        lambda a: np.cumprod(a, 1)),
    "tensordot": (lambda x: sym.tensordot(x, x, axes=([1], [1])), lambda a: np.tensordot(a, a, ([1], [1]))),
    "tensordot-0": (lambda x: sym.tensordot(x, x, axes=0), lambda a: np.tensordot(a, a, 0)),
    "vecdot": (lambda x: sym.vecdot(x, x), lambda a: np.sum(a * a, -1)),
    "matrix_transpose": (lambda x: sym.matrix_transpose(x), lambda a: a.T),
    "mT": (lambda x: sym.expand_dims(x, 0).mT, lambda a: np.swapaxes(a[None], -1, -2)),
    "moveaxis": (lambda x: sym.moveaxis(sym.expand_dims(x, 0), 0, 2), lambda a: np.moveaxis(a[None], 0, 2)),
    "expand_dims-axes": (lambda x: sym.expand_dims(x, (0, -1)), lambda a: np.expand_dims(a, (0, -1))),
    "broadcast_arrays": (lambda x: sym.broadcast_arrays(x, sym.sum(x, axis=1, keepdims=True))[1],
                         lambda a: np.broadcast_arrays(a, a.sum(1, keepdims=True))[1]),
}
NONDIFF = {
    "count_nonzero": (lambda x: sym.count_nonzero(sym.floor(x), axis=1), lambda a: np.count_nonzero(np.floor(a), 1)),
    "isin": (lambda x: sym.isin(sym.floor(x), sym.floor(x[:2])), lambda a: np.isin(np.floor(a), np.floor(a[:2]))),
    "isin-int-invert": (lambda x: sym.isin(sym.floor(x), 0, invert=True), lambda a: np.isin(np.floor(a), 0, invert=True)),
    "isin-int-set": (lambda x: sym.isin(-1, sym.floor(x)), lambda a: np.isin(-1, np.floor(a))),
}


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES) + list(NONDIFF))
def test_composed_function_matches_numpy_on_every_backend(name, backend, static):
    build, ref = {**CASES, **NONDIFF}[name]
    x = sym.matrix("x", shape=A.shape if static else (None, None))
    f = uma.function([x], build(x), backend=backend)
    got = host_numpy(f(A))
    want = ref(A)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["flip", "roll", "repeat", "tile", "tril", "triu", "diff-axis0", "cumulative_sum",
                                  "tensordot", "vecdot", "matrix_transpose"])
def test_composed_function_on_an_empty_axis(name):
    build, ref = CASES[name]
    a = np.zeros((0, 4))
    got = host_numpy(uma.function([x := sym.matrix("x")], build(x))(a))
    want = ref(a)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("name", list(CASES))
def test_composed_function_gradient_matches_finite_differences(name, backend):
    build = CASES[name][0]
    uma.verify_grad(lambda x: build(x), [A], rng=np.random.default_rng(4), backend=backend, abs_tol=1e-7,
                    rel_tol=1e-6)


def test_meshgrid_and_linspace_match_numpy():
    a, b = sym.vector("a"), sym.vector("b")
    for indexing in ("xy", "ij"):
        got = uma.function([a, b], sym.meshgrid(a, b, indexing=indexing))(np.arange(3.0), np.arange(5.0) * 2)
        for g, w in zip(got, np.meshgrid(np.arange(3.0), np.arange(5.0) * 2, indexing=indexing)):
            np.testing.assert_array_equal(np.asarray(g), w)
    c = uma.function([], sym.linspace(0.0, 1.0, 7) * 2.0)()
    np.testing.assert_allclose(np.asarray(c), np.linspace(0.0, 1.0, 7) * 2.0, rtol=1e-15)


def test_unstack_and_the_dtype_functions():
    x = sym.matrix("x", shape=(3, None))
    parts = sym.unstack(x)
    got = uma.function([x], list(parts))(A)
    for g, w in zip(got, A):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert sym.result_type(x, "float32") == uma.result_type("float64", "float32")
    assert sym.can_cast(sym.matrix("i", dtype="int32"), "float64") is True
    assert sym.finfo(x).eps == np.finfo(np.float64).eps and sym.iinfo(sym.vector("i", "int8")).max == 127
    assert sym.isdtype(x, "real floating") and not sym.isdtype(x, "integral")


def test_uma_namespace_builds_the_graph_for_a_variable():
    x = sym.matrix("x")
    for fn, args in [(uma.flip, ()), (uma.roll, (1,)), (uma.tril, ()), (uma.matrix_transpose, ()),
                     (uma.tensordot, (x,)), (uma.vecdot, (x,)), (uma.isin, (x,)),
                     (lambda v: uma.expand_dims(v, axis=(0, 2)), ())]:
        node = fn(x, *args)
        assert isinstance(node, uma.graph.Variable)
        eager = fn(uma.asarray(A), *[uma.asarray(A) if a is x else a for a in args])
        np.testing.assert_allclose(np.asarray(uma.function([x], node)(A)), np.asarray(eager), rtol=1e-14)


def test_bad_arguments_raise_the_eager_errors():
    x, dyn = sym.matrix("x", shape=(3, 4)), sym.matrix("d")
    with pytest.raises(ValueError, match="known only at run time"):
        sym.unstack(dyn)
    with pytest.raises(TypeError, match="repeats"):
        sym.repeat(x, np.array([1, 2, 3]), axis=0)
    with pytest.raises(ValueError, match="non-negative"):
        sym.repeat(x, -1)
    with pytest.raises(ValueError, match="non-negative"):
        sym.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least 2 axes"):
        sym.vector("v").mT  # as uma.Array.mT
    with pytest.raises(ValueError, match="at least 2 axes"):
        sym.matrix_transpose(sym.vector("v"))
    with pytest.raises(ValueError, match="axis is required"):
        sym.cumulative_sum(x)
    with pytest.raises(ValueError, match="same length"):
        sym.roll(x, (1, 2), axis=0)
    with pytest.raises(ValueError, match="indexing"):
        sym.meshgrid(sym.vector("a"), indexing="yx")
    with pytest.raises(ValueError, match="out of range"):
        sym.tensordot(x, x, axes=3)
    for bad in (1.5, "1"):
        with pytest.raises(TypeError):
            sym.roll(x, bad, axis=0)
    with pytest.raises(uma.AxisError if hasattr(uma, "AxisError") else (ValueError, IndexError)):
        sym.flip(x, axis=2)
    with pytest.raises(IndexError, match="axis 4"):
        uma.expand_dims(x, axis=(0, 4))
    with pytest.raises(ValueError, match="repeated axis"):
        uma.expand_dims(x, axis=(1, -3))
    with pytest.raises(TypeError, match="at least one of x1 and x2 must be an array"):
        sym.isin(1, 2)
    with pytest.raises(TypeError, match="isin: x2 must be an integer, got float 1.5"):
        uma.isin(x, 1.5)


@pytest.mark.parametrize("backend", ["reference", "cpu", "numpy"])
def test_run_time_shape_errors_name_the_composed_function(backend):
    """A run-time shape mismatch inside a composed function's graph names that function (as
    the eager function does), not the op inside it that found it (multiply, logical_or)."""
    x, y = sym.vector("x"), sym.vector("y")
    f = uma.function([x, y], uma.vecdot(x, y), backend=backend)
    with pytest.raises(ValueError, match=r"^vecdot: operands could not be broadcast together"):
        f(np.ones(3), np.ones(4))
    u, v = np.arange(3.0), np.arange(3.0) + 1
    np.testing.assert_allclose(host_numpy(f(u, v)), np.dot(u, v))
    a, b = sym.vector("a"), sym.vector("b")
    g = uma.function([a, b], uma.broadcast_arrays(a, b)[0], backend=backend)
    with pytest.raises(ValueError, match=r"^broadcast_arrays: input 1 has run-time shape \(1,\)"):
        g(np.ones(3), np.ones(1))
    np.testing.assert_array_equal(host_numpy(g(np.arange(3.0), np.ones(3))), np.arange(3.0))


@pytest.mark.parametrize("backend", ["reference", "cpu", "numpy"])
def test_a_nested_composition_names_the_outermost_function_and_a_plain_op_itself(backend):
    """vecdot's nodes in a user's graph name vecdot, the user's add names add; a composed
    function calling another (vecdot, broadcast_arrays) names the outermost one."""
    x, y, z, m = sym.vector("x"), sym.vector("y"), sym.vector("z"), sym.matrix("m")
    f = uma.function([m, x, z], uma.vecdot(m, x) + z, backend=backend)  # vecdot inside a user graph
    with pytest.raises(ValueError, match="^vecdot: "):
        f(np.ones((2, 3)), np.ones(4), np.ones(2))
    with pytest.raises(ValueError, match="^add: "):  # z against vecdot's (2,) result: outside vecdot
        f(np.ones((2, 3)), np.ones(3), np.ones(3))
    np.testing.assert_allclose(host_numpy(f(np.ones((2, 3)), np.ones(3), np.arange(2.0))), [3.0, 4.0])
    with pytest.raises(ValueError, match="^add: "):
        uma.function([x, y], x + y, backend=backend)(np.ones(3), np.ones(4))

    @uma.graph.basic.composed
    def scaled_vecdot(u, v):  # a composed function calling another
        return 2.0 * sym.vecdot(u, v)
    assert {n.composed for n in uma.graph.toposort([scaled_vecdot(x, y)])} == {"scaled_vecdot"}
    h = uma.function([x, y], scaled_vecdot(x, y), backend=backend)
    with pytest.raises(ValueError, match="^scaled_vecdot: operands could not be broadcast"):
        h(np.ones(3), np.ones(4))
    np.testing.assert_allclose(host_numpy(h(np.ones(3), np.ones(3))), 6.0)
    with pytest.raises(ValueError, match="^tensordot: "):  # tensordot's own broadcast of x1 and x2
        uma.function([m, x], sym.tensordot(m, x, axes=1), backend=backend)(np.ones((3, 4)), np.ones(5))
    assert {n.composed for n in uma.graph.toposort(sym.meshgrid(x, y))} == {"meshgrid"}  # broadcast_arrays in it


def test_build_time_errors_name_the_composed_function():
    """Static shapes that cannot combine are refused as the graph is built, naming the composed
    function the user called (not the op inside it); an op called directly names itself."""
    a, b = sym.vector("a", shape=(3,)), sym.vector("b", shape=(4,))
    with pytest.raises(ValueError, match=r"^broadcast_arrays: operands could not be broadcast.*\(3,\) \(4,\)"):
        uma.broadcast_arrays(a, b)
    m, n = sym.matrix("m", shape=(2, 3)), sym.matrix("n", shape=(5, 3))
    with pytest.raises(ValueError, match=r"^vecdot: operands could not be broadcast"):
        uma.vecdot(m, n)
    with pytest.raises(ValueError, match=r"^add: operands could not be broadcast"):
        a + b


def test_infer_node_shape_renames_only_shape_errors_of_composed_nodes():
    """The op's prefix is replaced (or the function's name put first); NotImplementedError, a
    shape rule's absence, passes through; a node built outside a composed function keeps the
    op's own message."""
    from uma.graph.basic import Apply, Op, composing, infer_node_shape

    class Raising(Op):
        name = "raising"

        def __init__(self, error):
            self.error = error

        def infer_shape(self, node, shapes):
            raise self.error

    x = sym.vector("x")
    for error, want in [(IndexError("raising: axis 3"), "outer: axis 3"), (TypeError("no prefix"), "outer: no prefix"),
                        (ValueError("raisingx: y"), "outer: raisingx: y")]:
        with composing("outer"), composing("inner"):
            node = Apply(Raising(error), [x], [x.type])
        with pytest.raises(type(error)) as info:
            infer_node_shape(node, [(3,)])
        assert type(info.value) is type(error) and str(info.value) == want
        with pytest.raises(type(error)) as info:  # built outside: the op's own error
            infer_node_shape(Apply(Raising(error), [x], [x.type]), [(3,)])
        assert info.value is error
    with composing("outer"):
        node = Apply(Raising(NotImplementedError("no rule")), [x], [x.type])
    with pytest.raises(NotImplementedError, match="^no rule$"):
        infer_node_shape(node, [(3,)])
    assert node.clone_with_new_inputs([sym.vector("y")]).composed == "outer"


# ------------------------------------------------------------------ sorting and searching ops

SORTED = np.random.default_rng(5).standard_normal((4, 6))
SORTED[1, 2] = SORTED[1, 4]  # a tie: stable order decides
SORTED[2, 0] = np.nan


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis,descending,stable", [(1, False, True), (0, True, True), (-1, True, False)])
def test_sort_and_argsort_match_numpy_on_every_backend(backend, axis, descending, stable):
    x = sym.matrix("x")
    f = uma.function([x], [sym.sort(x, axis=axis, descending=descending, stable=stable),
                           uma.argsort(x, axis=axis, descending=descending, stable=stable)], backend=backend)
    s, order = (host_numpy(v) for v in f(SORTED))
    eager_s = np.asarray(uma.sort(uma.asarray(SORTED), axis=axis, descending=descending, stable=stable))
    want = np.flip(np.sort(np.flip(SORTED, axis), axis), axis) if descending else np.sort(SORTED, axis)
    np.testing.assert_array_equal(s, want)
    np.testing.assert_array_equal(s, eager_s)
    assert order.dtype == np.int64
    np.testing.assert_array_equal(np.take_along_axis(SORTED, order, axis), want)  # argsort sorts x
    if stable:
        np.testing.assert_array_equal(order, np.asarray(uma.argsort(uma.asarray(SORTED), axis=axis,
                                                                    descending=descending)))


@pytest.mark.parametrize("backend", ["cpu", "reference", "jax"])
@pytest.mark.parametrize("axis,descending", [(1, False), (0, True)])
def test_sort_gradient_matches_finite_differences(backend, axis, descending):
    if backend == "jax":
        pytest.importorskip("jax")
    a = np.random.default_rng(6).standard_normal((3, 5))  # no ties: sort is differentiable there
    w = np.random.default_rng(7).standard_normal((3, 5))
    uma.verify_grad(lambda x: sym.sort(x, axis=axis, descending=descending) * w, [a],
                    rng=np.random.default_rng(8), backend=backend)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(side):
    v, x, s = sym.vector("v"), sym.matrix("x"), sym.vector("s", dtype="int64")
    base = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    f = uma.function([v, x], sym.searchsorted(v, x, side=side))
    g = uma.function([v, x, s], uma.searchsorted(v, x, side=side, sorter=s))
    q = np.array([[0.5, 2.0, 2.5], [5.0, 6.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(f(np.sort(base), q)), np.searchsorted(np.sort(base), q, side=side))
    np.testing.assert_array_equal(np.asarray(g(base, q, np.argsort(base, kind="stable"))),
                                  np.searchsorted(base, q, side=side, sorter=np.argsort(base, kind="stable")))


def test_sorting_ops_bad_arguments():
    x = sym.matrix("x")
    with pytest.raises(TypeError, match="descending"):
        sym.sort(x, descending=1)
    with pytest.raises(ValueError, match="1-d"):
        sym.searchsorted(x, x)
    with pytest.raises(ValueError, match="side"):
        sym.searchsorted(sym.vector("v"), x, side="middle")
    with pytest.raises(uma.graph.gradient.DisconnectedInputError):  # argsort's positions carry no gradient
        uma.grad(sym.sum(sym.argsort(x) * 1.0), x)
    g = uma.grad(sym.sum(sym.argsort(x) * 1.0), x, disconnected_inputs="zero")
    np.testing.assert_array_equal(np.asarray(uma.function([x], g)(SORTED)), np.zeros_like(SORTED))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float32", "complex64"])
def test_tensordot_and_vecdot_keep_the_product_dtype(dtype):
    v = np.random.default_rng(9).integers(0, 200, (3, 4)).astype(dtype)
    x = sym.tensor("x", dtype=dtype, ndim=2)
    td, vd = uma.function([x], [sym.tensordot(x, x, axes=([0], [0])), sym.vecdot(x, x)])(v)
    want_td = np.tensordot(v, v, ([0], [0]))
    want_vd = np.asarray(uma.vecdot(uma.asarray(v), uma.asarray(v)))  # the eager vecdot
    assert np.asarray(td).dtype == want_td.dtype and np.asarray(vd).dtype == want_vd.dtype
    np.testing.assert_array_equal(np.asarray(td), want_td)
    np.testing.assert_array_equal(np.asarray(vd), want_vd)


def test_contracted_axes_of_different_static_lengths_are_refused():
    a, b = sym.tensor("a", shape=(3, 1)), sym.tensor("b", shape=(4, 5))
    with pytest.raises(ValueError, match="contracted axes have lengths 1 and 4"):
        sym.tensordot(a, b, axes=1)
    with pytest.raises(ValueError, match="contracted axes have lengths 1 and None"):
        sym.vecdot(sym.tensor("u", shape=(1,)), sym.vector("w"))


def test_eager_repeat_counts_past_int64_raise():
    with pytest.raises(ValueError, match="too big"):
        uma.repeat(uma.asarray(np.arange(3.0)), uma.asarray(np.array([2**63 - 1, 2**63 - 1, 3])))


@pytest.mark.parametrize("build", [
    lambda x: sym.concatenate([x, x * 2.0]) ** 3,
    lambda x: sym.sort(x) ** 3 * sym.arange(3.0),
    lambda x: sym.roll(x, 1) ** 3 * sym.arange(3.0),
    lambda x: sym.cumulative_sum(x, include_initial=True) ** 3,
], ids=["concatenate", "sort", "roll", "cumulative_sum-initial"])
def test_second_derivatives_through_segment_and_unpermute(build):
    v = np.array([0.5, -1.0, 2.0])
    uma.verify_grad(lambda x: uma.grad(sym.sum(build(x)), x), [v], rng=np.random.default_rng(0))


# ---- take_along_axis: a graph op (uma.graph.ops.indexing.TakeAlongAxis) -----------------------

X3 = np.random.default_rng(11).standard_normal((2, 3, 4))
IDX3 = np.random.default_rng(12).integers(-4, 4, size=(2, 3, 5))  # negative, repeated positions


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [2, -1, 0, 1])
def test_take_along_axis_compiled_matches_eager_and_numpy(backend, axis, static):
    """Compiled on every backend = the eager function = NumPy's, negative indices included."""
    idx = np.moveaxis(IDX3, -1, axis)[(slice(None),) * 3]
    if axis in (0, 1):  # indices of length 5 along axis, within [-n, n) of x's length there
        n = X3.shape[axis]
        idx = np.moveaxis(np.random.default_rng(13).integers(-n, n, size=np.moveaxis(X3, axis, -1).shape[:-1] + (5,)),
                          -1, axis)
    x = sym.tensor("x", "float64", X3.shape if static else (None, None, None))
    i = sym.tensor("i", "int64", idx.shape if static else (None, None, None))
    f = uma.function([x, i], uma.take_along_axis(x, i, axis=axis), backend=backend)
    got = host_numpy(f(X3, idx))
    eager = np.asarray(uma.take_along_axis(uma.asarray(X3), uma.asarray(idx), axis=axis))
    want = np.take_along_axis(X3, np.where(idx < 0, idx + X3.shape[axis], idx), axis)
    np.testing.assert_array_equal(eager, want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_take_along_axis_broadcasts_static_length_one_axes(backend):
    """x of static shape (1, 4) against indices (3, 2), and indices (1, 2) against x (3, 4)."""
    a, idx = X3[0, :1], np.array([[0, 3], [-1, 1], [2, 2]])
    x, i = sym.tensor("x", "float64", (1, None)), sym.matrix("i", "int64")
    got = host_numpy(uma.function([x, i], sym.take_along_axis(x, i, axis=1), backend=backend)(a, idx))
    np.testing.assert_array_equal(got, np.take_along_axis(np.broadcast_to(a, (3, 4)), idx % 4, 1))
    b, jdx = X3[0], np.array([[1, -2]])
    x, i = sym.matrix("x"), sym.tensor("i", "int64", (1, None))
    got = host_numpy(uma.function([x, i], sym.take_along_axis(x, i, axis=1), backend=backend)(b, jdx))
    np.testing.assert_array_equal(got, np.take_along_axis(b, np.broadcast_to(jdx % 4, (3, 2)), 1))


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_along_axis_gradient_matches_finite_differences(backend, axis):
    """Repeated positions accumulate; positions never read get 0."""
    n = X3.shape[axis]
    shape = list(X3.shape)
    shape[axis] = 5
    idx = np.random.default_rng(14 + axis).integers(-n, n, size=shape)
    w = np.random.default_rng(15).standard_normal(shape)
    uma.verify_grad(lambda x: sym.take_along_axis(x, idx, axis=axis) * w, [X3], rng=np.random.default_rng(16),
                    backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_take_along_axis_gradient_of_a_broadcast_x_and_second_derivative(backend):
    a, idx = X3[0, :1], np.array([[0, 3, 0], [-1, 1, 1], [2, 2, 0]])
    w = np.random.default_rng(17).standard_normal((3, 3))
    x = sym.tensor("x", "float64", (1, 4))
    g = uma.grad(sym.sum(sym.take_along_axis(x, idx, axis=1) * w), x)
    got = host_numpy(uma.function([x], g, backend=backend)(a))
    want = np.zeros_like(a)
    np.add.at(want, (np.zeros_like(idx), idx % 4), w)  # np.add.at: the oracle of the scatter-add
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    uma.verify_grad(lambda v: uma.grad(sym.sum(sym.take_along_axis(v, idx, axis=1) ** 3 * w), v), [a],
                    rng=np.random.default_rng(18), backend=backend)


def test_take_along_axis_bad_arguments_raise_the_eager_errors():
    x, xs = sym.matrix("x"), sym.tensor("x", "float64", (3, 4))
    with pytest.raises(TypeError, match="take_along_axis: indices must have an integer dtype"):
        uma.take_along_axis(x, sym.matrix("f"))
    with pytest.raises(ValueError, match="same number of axes"):
        uma.take_along_axis(x, sym.vector("i", "int64"))
    with pytest.raises(np.exceptions.AxisError):
        uma.take_along_axis(x, sym.matrix("i", "int64"), axis=2)
    with pytest.raises(ValueError, match="broadcast"):
        uma.take_along_axis(xs, sym.tensor("i", "int64", (2, 1)), axis=1)
    f = uma.function([x, i := sym.matrix("i", "int64")], uma.take_along_axis(x, i, axis=1))
    with pytest.raises(IndexError, match="take_along_axis: index 4 is out of bounds"):
        f(A, np.array([[0, 4]]).repeat(3, 0))
    with pytest.raises(ValueError, match="only static length-1 axes broadcast"):
        f(A, np.array([[0, 1]]))  # run-time length 1 against 3 on an axis not declared length 1


@pytest.mark.parametrize("name", ["nonzero", "unique_values", "unique_counts", "unique_inverse", "unique_all"])
def test_eager_only_functions_refuse_a_variable(name):
    """Data-dependent output shapes, not differentiable: no symbolic form, a TypeError naming
    the function (eager arrays still work)."""
    with pytest.raises(TypeError, match=f"^{name}: no symbolic form"):
        getattr(uma, name)(sym.vector("v"))
    assert getattr(uma, name)(uma.asarray([0.0, 2.0, 2.0])) is not None


def test_every_main_namespace_function_of_the_standard_is_symbolic_or_listed_eager_only():
    """scripts/array_api_symbolic.py on the 2025.12 main namespace (the spec checkout that
    scripts/array_api_suite.sh makes): no function taking arrays lacks a symbolic form except
    the listed eager-only ones."""
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    spec = root / "build/array-api-tests/src/array-api"
    if not (spec / ".git").exists():
        pytest.skip("no spec checkout: run scripts/array_api_suite.sh once")
    r = subprocess.run([sys.executable, str(root / "scripts/array_api_symbolic.py"), str(spec)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "take_along_axis        graph, gradient" in r.stdout
    assert "isin                   graph" in r.stdout and "expand_dims            graph, gradient" in r.stdout
