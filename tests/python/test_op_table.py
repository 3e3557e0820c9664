"""The op table (include/uma/ops/table.h) is the one definition of the elementwise ops: the
eager functions, the symbolic functions, the graph's result dtypes and gradient kinds, the
linkers' list of ops and the NumPy linker's functions all follow its rows.

Oracles: NumPy 2's functions (the ``numpy`` column must name one, and its result dtype on
every dtype pair must be the graph's), the eager functions themselves (the graph must infer
the dtype the eager call returns)."""
import itertools

import numpy as np
import pytest

import uma
from conftest import ALL_DTYPES, np_dtype, numpy_quiet
from uma.graph.ops import elemwise

ml_dtypes = pytest.importorskip("ml_dtypes")

ROWS = uma._core._op_table()
NAMES = [r["name"] for r in ROWS]
NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]
#: Functions that refine their row (uma.graph.ops.unary): a real input is returned as is, and
#: they carry docstrings of their own.
REFINED = {"real", "imag", "conj", "angle"}


def test_rows_are_well_formed():
    assert len(NAMES) == len(set(NAMES)), "an op name appears twice"
    for r in ROWS:
        assert r["arity"] in (1, 2), r
        assert r["grad"] in ("smooth", "zero", "none"), r
        assert r["doc"], r


@pytest.mark.parametrize("name", NAMES)
def test_every_row_is_an_eager_and_a_symbolic_function(name):
    row = next(r for r in ROWS if r["name"] == name)
    assert callable(getattr(uma, name)) and callable(getattr(uma.sym, name))
    assert name in uma.sym.__all__ and name in uma._api.__all__
    dtype = {"Bitwise": "int32", "Shift": "int32", "ComplexPart": "complex128"}.get(row["rule"], "float64")
    y = getattr(uma.sym, name)(*[uma.sym.vector(f"x{k}", dtype=dtype) for k in range(row["arity"])])
    assert isinstance(y.owner.op, elemwise.Elemwise) and y.owner.op.name == name
    if name not in REFINED:  # documented by its row
        assert row["doc"].split(" (")[0] in getattr(uma.sym, name).__doc__


def test_known_ops_lists_every_row():
    known = uma.Linker.known_ops()
    for name in NAMES:
        assert known[name] is elemwise.Elemwise, name


def test_gradient_rules_follow_the_gradient_kind():
    """An op of kind "smooth" has a rule; the others have none (their kind decides)."""
    smooth = {r["name"] for r in ROWS if r["grad"] == "smooth"}
    assert set(elemwise._GRADS) == smooth


@pytest.mark.parametrize("name", [r["name"] for r in ROWS if r["numpy"]])
def test_numpy_column_names_numpy_function_with_same_dtypes(name):
    """The NumPy function the row names (which the numpy linker calls) gives, on every pair of
    NumPy dtypes, the result dtype the graph infers, and refuses the dtypes uma refuses."""
    row = next(r for r in ROWS if r["name"] == name)
    fn = getattr(np, row["numpy"])
    for dts in itertools.product(NUMPY_DTYPES, repeat=row["arity"]):
        args = [np.ones(1, dtype=np_dtype(d)) for d in dts]
        try:
            want = numpy_quiet(lambda: fn(*args)).dtype.name
        except TypeError:
            want = TypeError
        try:
            got = elemwise._elemwise_dtype(name, dts)
        except TypeError:
            got = TypeError
        assert got == want, (name, dts)


@pytest.mark.parametrize("name", NAMES)
def test_graph_dtype_is_eager_dtype_bfloat16_included(name):
    """The graph asks the core for result dtypes: the dtype it infers is the eager result's for
    every dtype next to bfloat16 (which NumPy lacks), and a refused dtype raises TypeError in
    both."""
    row = next(r for r in ROWS if r["name"] == name)
    bf = np.dtype(ml_dtypes.bfloat16)
    for other in ALL_DTYPES:
        dts = ("bfloat16",) if row["arity"] == 1 else ("bfloat16", other)
        vals = [uma.asarray(np.ones(2, dtype=bf if d == "bfloat16" else np_dtype(d))) for d in dts]
        try:
            eager = getattr(uma, name)(*vals).dtype.name
        except TypeError:
            eager = TypeError
        try:
            graph = getattr(uma.sym, name)(*[uma.sym.vector(dtype=d) for d in dts]).dtype
        except TypeError:
            graph = TypeError
        assert graph == eager, (name, dts)
        if row["arity"] == 1:
            break


def test_result_dtype_errors_name_op_and_dtype():
    with pytest.raises(TypeError, match="bitwise_and.*float32"):
        uma._core._result_dtype("bitwise_and", "float32", "float32")
    with pytest.raises(TypeError, match="sigmoid.*complex64.*real dtypes only"):
        uma.sym.sigmoid(uma.sym.vector(dtype="complex64"))
    with pytest.raises(ValueError, match="no_such_op"):
        uma._core._result_dtype("no_such_op", "float32")


REDUCTIONS = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
              "argmax": np.argmax, "argmin": np.argmin, "all": np.all, "any": np.any,
              "cumsum": np.cumsum, "cumprod": np.cumprod, "var": np.var, "std": np.std}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_result_dtypes_are_the_cores_and_numpys(name):
    """The graph's result dtype of a reduction is the core's (``_result_dtype``), which is NumPy's
    on every NumPy dtype and the eager call's on bfloat16 too."""
    for d in ALL_DTYPES:
        core = uma._core._result_dtype(name, d).name
        graph = getattr(uma.sym, name)(uma.sym.vector(dtype=d)).dtype
        eager = getattr(uma, name)(uma.asarray(np.ones(3, dtype=np_dtype(d) if d != "bfloat16"
                                                   else ml_dtypes.bfloat16))).dtype.name
        assert core == graph == eager, (name, d, core, graph, eager)
        if d != "bfloat16":
            want = numpy_quiet(lambda: REDUCTIONS[name](np.ones(3, dtype=np_dtype(d)))).dtype.name
            assert core == want, (name, d, core, want)


def test_array_api_aliases_on_uma_and_uma_sym():
    from uma._api import ALIASES
    for alias, target in ALIASES.items():
        assert getattr(uma.sym, alias) is getattr(uma.sym, target), alias
        assert alias in uma.sym.__all__ and alias in uma._api.__all__
        assert callable(getattr(uma, alias))
