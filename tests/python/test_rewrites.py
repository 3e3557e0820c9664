"""Rewrite passes: named passes that ``mode`` switches off one by one, exactness of
the algebraic simplifications on NaN/inf/signed zeros/integer extremes (bitwise against the
unrewritten graph, NumPy as the oracle), the validator after every pass, and dprint."""
import io

import numpy as np
import pytest

import uma
from uma import sym
from uma.graph import Op, rewrite
from uma.graph.rewrite import Mode, RewriteError
from uma.runtime import CpuLinker

BACKENDS = ["reference", "cpu", "numpy"]
NONE = Mode(include=[])


def ops_of(f):
    return [n.op.name for n in f.fgraph.toposort()]


def bits(a):
    """An array's bytes as unsigned ints: equality of these is bitwise equality (-0.0 != 0.0)."""
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    if x.dtype.kind == "f":  # NaN payloads may differ between kernels; positions may not
        nan = np.isnan(x)
        np.testing.assert_array_equal(nan, np.isnan(y))
        np.testing.assert_array_equal(bits(np.where(nan, 0, x)), bits(np.where(nan, 0, y)))
    else:
        np.testing.assert_array_equal(x, y)


F_SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e308, -5e-324])
I_SPECIAL = np.array([0, 1, -1, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 12345], np.int64)


# ======================================================================== Mode

def test_mode_forms_and_errors():
    assert Mode().passes == rewrite.PASSES
    assert "fusion" not in Mode(exclude=["fusion"]).passes
    assert Mode(include=["cse"]).passes == ("cse",)
    assert Mode(include=[]).passes == ()
    assert rewrite.as_mode({"exclude": ["cse", "fusion"]}) == Mode(exclude=["fusion", "cse"])
    assert rewrite.as_mode(None) == Mode()
    with pytest.raises(ValueError, match="unknown pass 'fusoin'.*fusion"):
        Mode(exclude=["fusoin"])
    with pytest.raises(TypeError):
        Mode(exclude=[3])
    for bad in (None, b"closed_forms", 3):
        with pytest.raises(TypeError, match="exclude must be a pass name or an iterable of pass names"):
            Mode(exclude=bad)
    with pytest.raises(TypeError, match="validate must be True or False, got 'no'"):
        Mode(validate="no")
    assert Mode(exclude="fusion") == Mode(exclude=["fusion"]) and Mode(validate=np.True_).validate
    with pytest.raises(TypeError):
        rewrite.as_mode("fast")
    with pytest.raises(TypeError):
        rewrite.as_mode({"exclud": ["cse"]})
    x = sym.vector("x")
    with pytest.raises(ValueError):
        uma.function([x], x, mode={"exclude": ["nope"]})
    assert uma.Mode is Mode


def _everything(x, y):
    """A graph where every pass has something to do."""
    c = sym.exp(sym.asarray(np.array([0.0, 1.0]))) * 2        # constant_folding
    dup = sym.tanh(x) * y + sym.tanh(x) * y                    # cse
    simp = sym.negative(sym.negative(x)) * 1                   # simplify
    chain = sym.exp(x * 2 + y) - 1.5                           # fusion
    return [dup + c, simp, chain]


def test_each_pass_can_be_switched_off_alone(rng):
    x, y = sym.vector("x"), sym.vector("y")
    xv, yv = rng.normal(size=2), rng.normal(size=2)
    full = uma.function([x, y], _everything(x, y), backend="cpu")
    nodes = {p: len(uma.function([x, y], _everything(x, y), backend="cpu",
                                 mode={"exclude": [p]}).fgraph.toposort())
             for p in rewrite.GRAPH_PASSES}
    base = len(full.fgraph.toposort())
    for p in rewrite.GRAPH_PASSES:  # each graph pass, switched off, leaves more nodes
        assert nodes[p] > base, p
    none = uma.function([x, y], _everything(x, y), backend="cpu", mode=NONE)
    assert none.passes == [] and len(none.fgraph.toposort()) > max(nodes.values())
    assert CpuLinker.fused_chains(full) >= 1 and CpuLinker.fused_chains(none) == 0
    no_fusion = uma.function([x, y], _everything(x, y), backend="cpu", mode={"exclude": ["fusion"]})
    assert CpuLinker.fused_chains(no_fusion) == 0
    assert len(no_fusion.fgraph.toposort()) == base  # graph passes unaffected
    expected = [np.tanh(xv) * yv * 2 + np.exp([0.0, 1.0]) * 2, xv, np.exp(xv * 2 + yv) - 1.5]
    for f in (full, none, no_fusion):
        for got, exp in zip(f(xv, yv), expected):
            np.testing.assert_allclose(np.asarray(got), exp, rtol=1e-14)
    for got, exp in zip(full(xv, yv), none(xv, yv)):
        same_bits(got, exp)  # the rewrites change no bit


def test_elide_broadcasts_can_be_switched_off(rng):
    x = sym.matrix("x", shape=(None, 5))
    w = sym.matrix("w", shape=(None, 5))
    gx = uma.grad(sym.sum(sym.sum(x, axis=1, keepdims=True) * w), x)
    on = uma.function([x, w], gx, backend="cpu")
    off = uma.function([x, w], gx, backend="cpu", mode={"exclude": ["elide_broadcasts"]})
    assert "broadcast_like" in on.dprint(file="str") and "broadcast_like" in off.dprint(file="str")
    program = lambda f: f.dprint(file="str").split("cpu program")[1]  # noqa: E731
    # a kept broadcast_like is one more Program step (a zero-stride view) per broadcast
    assert program(on).count("broadcast_like(") < program(off).count("broadcast_like(")
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    same_bits(on(a, b), off(a, b))


# ======================================================================== simplifications

def _float_cases():
    neg0 = np.float64(-0.0)
    return {
        "x*1": (lambda x: x * 1, "multiply"),
        "1*x": (lambda x: 1.0 * x, "multiply"),
        "x/1": (lambda x: x / 1, "divide"),
        "x-(+0)": (lambda x: x - 0.0, "subtract"),
        "x+(-0)": (lambda x: x + sym.asarray(neg0), "add"),
        "--x": (lambda x: -(-x), "negative"),
        "x-(-y)": (lambda x: 0.5 - (-x), "negative"),
        "x+(-y)": (lambda x: 0.5 + (-x), "negative"),
        "(-y)+x": (lambda x: (-x) + 0.5, "negative"),
        "transpose(transpose)": (lambda x: sym.expand_dims(x, 0).T.T, "transpose"),
    }


def _float_params():
    for case in _float_cases():
        for backend in BACKENDS:
            yield pytest.param(case, backend, id=f"{case}-{backend}")


@pytest.mark.parametrize("case,backend", list(_float_params()))
def test_float_simplifications_are_exact(case, backend):
    build, gone = _float_cases()[case]
    x = sym.vector("x")
    f = uma.function([x], build(x), backend=backend)
    g = uma.function([x], build(x), backend=backend, mode=NONE)
    assert gone not in ops_of(f) and gone in ops_of(g), (ops_of(f), ops_of(g))
    with np.errstate(all="ignore"):
        oracle = {"x*1": F_SPECIAL * 1, "1*x": 1.0 * F_SPECIAL, "x/1": F_SPECIAL / 1,
                  "x-(+0)": F_SPECIAL - 0.0, "x+(-0)": F_SPECIAL + -0.0, "--x": -(-F_SPECIAL),
                  "x-(-y)": 0.5 - (-F_SPECIAL), "x+(-y)": 0.5 + (-F_SPECIAL),
                  "(-y)+x": (-F_SPECIAL) + 0.5, "transpose(transpose)": F_SPECIAL[None, :]}[case]
    got, ref = np.asarray(f(F_SPECIAL)), np.asarray(g(F_SPECIAL))
    same_bits(got, oracle)  # the rewritten graph is NumPy's result, bit for bit ...
    same_bits(ref, oracle)  # ... and so is the graph without rewrites


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_simplifications_are_exact(backend):
    x = sym.vector("x", dtype="int64")
    cases = [(x + 0, "add", I_SPECIAL + 0), (0 - (-x), "negative", 0 - (-I_SPECIAL)),
             (x - 0, "subtract", I_SPECIAL - 0), (x - x, "subtract", np.zeros(6, np.int64)),
             (x * 1, "multiply", I_SPECIAL), (-(-x), "negative", I_SPECIAL)]
    for out, gone, oracle in cases:
        f = uma.function([x], out, backend=backend)
        g = uma.function([x], out, backend=backend, mode=NONE)
        assert gone not in ops_of(f) and gone in ops_of(g)
        same_bits(f(I_SPECIAL), oracle)
        same_bits(g(I_SPECIAL), oracle)
    b = sym.vector("b", dtype="bool")
    f = uma.function([b], sym.logical_not(sym.logical_not(b)), backend=backend)
    assert ops_of(f) == []
    np.testing.assert_array_equal(np.asarray(f([True, False])), [True, False])


@pytest.mark.parametrize("backend", BACKENDS)
def test_negation_of_a_narrower_integer_is_not_moved_across_promotion(backend):
    """-y of uint8 200 is 56 and of int8 -128 is -128 (they wrap before promotion), so x + (-y)
    and x - (-y) of a wider x stay as written; NumPy is the oracle. In one dtype, or for
    floats, the rewrite still applies."""
    cases = [("float64", "uint8", np.array([0.0, 1.5]), np.array([3, 200], np.uint8)),
             ("uint64", "uint8", np.array([7, 10], np.uint64), np.array([0, 200], np.uint8)),
             ("int64", "int8", np.array([1, 2], np.int64), np.array([-128, 5], np.int8)),
             ("float32", "int16", np.array([0.5, 2.0], np.float32), np.array([-32768, 7], np.int16))]
    for xt, yt, xv, yv in cases:
        x, y = sym.vector("x", dtype=xt), sym.vector("y", dtype=yt)
        for expr, oracle in ((x + (-y), xv + (-yv)), ((-y) + x, (-yv) + xv), (x - (-y), xv - (-yv))):
            f = uma.function([x, y], expr, backend=backend)
            assert "negative" in ops_of(f), (xt, yt)
            got = np.asarray(f(xv, yv))
            assert got.dtype == oracle.dtype, (xt, yt)
            np.testing.assert_array_equal(got, oracle, err_msg=f"{xt} with {yt}")
    for xt, yt in (("int8", "int8"), ("float64", "float16")):
        x, y = sym.vector("x", dtype=xt), sym.vector("y", dtype=yt)
        f = uma.function([x, y], x + (-y), backend=backend)
        assert "negative" not in ops_of(f) and "subtract" in ops_of(f), (xt, yt)
        xv, yv = np.array([-128, 3], xt), np.array([-128, 100], yt)
        np.testing.assert_array_equal(np.asarray(f(xv, yv)), xv + (-yv))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_subtraction_becomes_a_scaled_addition_exactly(backend, dtype):
    """x - c * y and x - y * c, c a float constant, become x + (-c) * y (an SGD update's form
    for cuBLAS's alpha and beta): the same bits as NumPy's x - c * y on infinities, NaN and
    signed zeros. A product that something else reads, a NaN constant (its sign bit), an
    integer constant, a complex product and a product of two variables stay as written."""
    x, y = sym.vector("x", dtype=dtype), sym.vector("y", dtype=dtype)
    c = np.array(0.3, dtype)
    with np.errstate(over="ignore"):  # 1e308 is inf in float32
        xv, yv = F_SPECIAL.astype(dtype), np.roll(F_SPECIAL, 3).astype(dtype)
    for expr in (x - c * y, x - y * c, x - sym.asarray(np.array([0.5, -0.0], dtype))[:, None] * y):
        f = uma.function([x, y], expr, backend=backend)
        g = uma.function([x, y], expr, backend=backend, mode=NONE)
        assert "subtract" not in ops_of(f) and "add" in ops_of(f), ops_of(f)
        assert "subtract" in ops_of(g)
        with np.errstate(all="ignore"):
            same_bits(f(xv, yv), np.asarray(g(xv, yv)))
    with np.errstate(all="ignore"):
        same_bits(uma.function([x, y], x - c * y, backend=backend)(xv, yv), xv - c * yv)
    xi = sym.vector("xi", dtype="int64")
    kept = [[x - c * y, c * y], [x - np.array(np.nan, dtype) * y], [xi - 3 * xi], [x - x * y]]
    zt = "complex64" if dtype == "float32" else "complex128"
    z, w = sym.vector("z", dtype=zt), sym.vector("w", dtype=zt)  # c's imaginary +0: zeros' signs
    f = uma.function([z, w], z - c * w, backend=backend)
    assert "subtract" in ops_of(f), ops_of(f)
    with np.errstate(all="ignore"):
        zv = (xv + 1j * yv).astype(zt)
        unrewritten = uma.function([z, w], z - c * w, backend=backend, mode=NONE)
        same_bits(f(zv, zv[::-1]), np.asarray(unrewritten(zv, zv[::-1])))
    for outs in kept:
        f = uma.function([x, y, xi], outs, backend=backend)
        assert "subtract" in ops_of(f), ops_of(f)
        same_bits(np.asarray(f(xv, yv, I_SPECIAL)[0]), np.asarray(
            uma.function([x, y, xi], outs, backend=backend, mode=NONE)(xv, yv, I_SPECIAL)[0]))


INEXACT = {  # identities that do not hold bit for bit, so they must not be applied
    "x+0.0": (lambda x: x + 0.0, "add"),         # -0.0 + 0.0 is +0.0
    "x*0.0": (lambda x: x * 0.0, "multiply"),    # NaN, inf, -0
    "x-x": (lambda x: x - x, "subtract"),        # inf - inf is NaN
    "x-(-0.0)": (lambda x: x - (-0.0), "subtract"),  # -0.0 - (-0.0) is +0.0
}


@pytest.mark.parametrize("name", list(INEXACT))
def test_inexact_identities_are_not_applied(name):
    build, op = INEXACT[name]
    x = sym.vector("x")
    f = uma.function([x], build(x))
    assert op in ops_of(f)
    v = np.array([-0.0, np.inf, np.nan, 2.0, 0.0])
    with np.errstate(all="ignore"):
        same_bits(f(v), build(v))


def test_a_shape_changing_identity_is_not_applied():
    x = sym.vector("x")
    f = uma.function([x], x * np.ones(3))  # a length-1 x would become length 3: not x
    assert ops_of(f) == ["multiply"]


def test_simplification_keeps_types_and_aliasing():
    W = uma.shared(np.arange(3.0), "W")
    f = uma.function([], [W * 1, W * 1.0], updates={W: W * 1})
    assert ops_of(f) == []  # everything simplified to W itself ...
    a, b = f()
    a[...] = -1.0  # ... but the outputs are still fresh copies
    np.testing.assert_array_equal(np.asarray(b), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(W.get_value(), [0.0, 1.0, 2.0])
    x = sym.vector("x", dtype="int32")
    g = uma.function([x], x * 1.0)  # int32 * float -> float64: not x, no rewrite
    assert ops_of(g) == ["multiply"] and g([1, 2]).dtype == "float64"


# ======================================================================== cse / folding

def test_cse_merges_equal_nodes_and_constants(rng):
    x = sym.matrix("x")
    a = sym.exp(x) @ sym.exp(x).T + sym.asarray(np.ones(2)) + sym.asarray(np.ones(2))
    f = uma.function([x], [a, sym.exp(x)])
    g = uma.function([x], [a, sym.exp(x)], mode={"exclude": ["cse"]})
    assert ops_of(f).count("exp") == 1 and ops_of(g).count("exp") == 3
    consts = f.fgraph.constants()
    assert len(consts) == len({c.value.tobytes() for c in consts})
    v = rng.normal(size=(2, 2))
    for p, q in zip(f(v), g(v)):
        same_bits(p, q)
    out1, out2 = uma.function([x], [sym.exp(x), sym.exp(x)])(v)
    assert not np.shares_memory(np.asarray(out1), np.asarray(out2))


class _FailIfPositive(Op):
    name = "test_fail_if_positive"

    def output_types(self, inputs):
        return [inputs[0].type]

    def perform(self, node, values):
        if (np.asarray(values[0]) > 0).any():
            raise RuntimeError("test_fail_if_positive: positive value")
        return [values[0].copy()]


def test_constant_folding_leaves_failing_and_huge_nodes_alone():
    x = sym.vector("x")
    bad = _FailIfPositive()(sym.asarray(np.array([1.0])))
    f = uma.function([x], x + bad, backend="reference")
    assert "test_fail_if_positive" in ops_of(f)
    with pytest.raises(RuntimeError, match="positive"):
        f(np.ones(1))
    big = sym.broadcast_to(sym.asarray(np.array([1.0])), (1000, 1000))
    g = uma.function([x], sym.sum(big) + x)
    assert "broadcast_to" in ops_of(g)  # not folded into a million-element constant
    assert g(np.zeros(1)).item() == 1e6


# ======================================================================== validator

def test_the_validator_runs_after_every_pass_and_names_a_broken_one(monkeypatch):
    def broken(fgraph):
        node = fgraph.toposort()[0]
        node.outputs[0].type = uma.graph.TensorType("int32", node.outputs[0].type.shape)

    monkeypatch.setitem(rewrite._PASS_FUNCTIONS, "simplify", broken)
    x = sym.vector("x")
    with pytest.raises(RewriteError, match="'simplify'"):
        uma.function([x], sym.exp(x), mode=Mode(validate=True))
    old = rewrite.set_validation(True)
    try:
        with pytest.raises(RewriteError, match="'simplify'"):
            uma.function([x], sym.exp(x))
        rewrite.set_validation(False)
        uma.function([x], sym.exp(x))  # not validated: the broken pass goes unnoticed
    finally:
        rewrite.set_validation(old)


def test_validation_is_on_in_the_test_suite():
    assert rewrite.validation_enabled()


# ======================================================================== dprint

def test_dprint_shows_the_compiled_graph(capsys):
    W = uma.shared(np.ones((3, 2)), "W")
    x = sym.matrix("x")
    loss = sym.sum(sym.tanh(x @ W) * 1)
    f = uma.function([x], loss, updates={W: W - 0.1 * uma.grad(loss, W)})
    text = f.dprint(file="str")
    assert "backend='cpu'" in text and "in  x : float64(?, ?)" in text and "[shared W]" in text
    assert "matmul(x, W)" in text and "-> update of W" in text
    assert "fused[float64]" in text and "cpu program" in text
    uma.dprint(f)
    assert capsys.readouterr().out.strip() == text
    buf = io.StringIO()
    assert uma.dprint(f, file=buf) is buf and buf.getvalue().strip() == text
    plain = uma.function([x], loss, mode={"exclude": ["fusion"]}).dprint(file="str")
    assert "fused[" not in plain
    sym_text = uma.dprint(loss, file="str")
    assert "tanh" in sym_text and "sum" in sym_text
    ref = uma.function([x], loss, backend="reference").dprint(file="str")
    assert "cpu program" not in ref and "tanh" in ref
    with pytest.raises(TypeError):
        uma.dprint(3)
    with pytest.raises(TypeError, match="file must be None, 'str' or an object with a write method, got 'stdout'"):
        uma.dprint(f, file="stdout")


def test_dprint_lists_the_linker_passes_the_backend_runs():
    x = sym.vector("x")
    first = {bk: uma.dprint(uma.function([x], x * 2, backend=bk, mode={"exclude": ["elide_broadcasts"]}),
                            file="str").splitlines()[0] for bk in ("cpu", "reference", "numpy")}
    assert first["cpu"].endswith("linker passes=[closed_forms, fusion]")
    assert first["reference"].endswith("linker passes=[]") and first["numpy"].endswith("linker passes=[]")


def test_cse_does_not_merge_ops_whose_attributes_differ_in_sign_of_zero():
    x = sym.vector("x")
    f = uma.function([x], [sym.full_like(x, 0.0), sym.full_like(x, -0.0), sym.full_like(x, 0.0)])
    assert len(f.fgraph.toposort()) == 2  # the two +0.0 fills merged, the -0.0 one kept
    a, b, c = (np.asarray(v) for v in f(np.ones(2)))
    assert not np.signbit(a).any() and np.signbit(b).all() and not np.signbit(c).any()


# ---- closed_forms (cpu linker): cross-entropy written with one_hot ---------------------------

def _one_hot_step(dtype, mode=None, depth=4):
    """A softmax-regression SGD step with the loss written as one_hot * log_softmax."""
    x = sym.matrix("x", dtype=dtype)
    y = sym.vector("y", dtype="int64")
    W = uma.shared(np.linspace(-1, 1, 12).reshape(3, 4).astype(dtype), "W")
    b = uma.shared(np.zeros(4, dtype), "b")
    z = x @ W + b
    loss = -sym.mean(sym.sum(sym.one_hot(y, depth, dtype=dtype) * sym.log_softmax(z, axis=1), axis=1))
    gW, gb = uma.grad(loss, [W, b])
    upd = [(W, W - 0.5 * gW), (b, b - 0.5 * gb)]
    return (W, b), {bk: uma.function([x, y], [loss, gW, gb], updates=upd, backend=bk, mode=mode)
                    for bk in ("cpu", "reference")}


def _numpy_one_hot_loss_and_grads(x, y, W, b):
    """The product form in NumPy: one_hot rows are zero for labels outside [0, K)."""
    z = x @ W + b
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    K = W.shape[1]
    oh = (y[:, None] == np.arange(K)[None, :]).astype(x.dtype)
    n = x.shape[0]
    dz = (np.exp(logp) * oh.sum(axis=1, keepdims=True) - oh) / n
    return -(oh * logp).sum(axis=1).mean(), x.T @ dz, dz.sum(axis=0)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-12), ("float32", 1e-5)])
def test_closed_forms_replace_one_hot_cross_entropy_and_its_gradient(rng, dtype, rtol):
    (W, b), f = _one_hot_step(dtype)
    ops = ops_of(f["cpu"])  # the graph passes' graph; the closed form is the cpu linker's
    text = uma.dprint(f["cpu"], file="str")
    assert "one_hot_cross_entropy(" in text and "one_hot_cross_entropy_grad(" in text
    assert "log_softmax" in ops and "log_softmax(" not in text.split("cpu program")[1]
    x = rng.normal(size=(6, 3)).astype(dtype)
    y = np.array([0, 3, -1, 4, 2, 99])  # -1, 4 and 99: one_hot's zero rows
    W0, b0 = W.get_value(), b.get_value()
    exp_loss, exp_gW, exp_gb = _numpy_one_hot_loss_and_grads(x.astype("float64"), y, W0.astype("float64"),
                                                             b0.astype("float64"))
    loss, gW, gb = f["cpu"](x, y)
    np.testing.assert_allclose(np.asarray(loss), exp_loss, rtol=rtol)
    np.testing.assert_allclose(np.asarray(gW), exp_gW, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(gb), exp_gb, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(W.get_value(), W0 - 0.5 * exp_gW, rtol=rtol, atol=rtol)
    # the reference backend computes the graph as written: the same values within the rule
    W.set_value(W0)
    b.set_value(b0)
    ref = f["reference"](x, y)
    for got, exp in zip((loss, gW, gb), ref):
        np.testing.assert_allclose(np.asarray(got), np.asarray(exp), rtol=rtol, atol=rtol)


def test_closed_form_rows_outside_the_labels_are_nan_where_the_product_is(rng):
    """A label outside [0, K) is a zero row of one_hot: loss and gradient 0, and NaN where the
    product written in the graph is NaN with no limit (a NaN or +inf logit in the row, every
    logit -inf); rows inside [0, K) as the graph as written (the reference backend)."""
    z, y = sym.matrix("z"), sym.vector("y", dtype="int64")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 3) * sym.log_softmax(z, axis=1), axis=1))
    per_row = -sym.sum(sym.one_hot(y, 3) * sym.log_softmax(z, axis=1), axis=1)
    (gz,) = uma.grad(loss, [z])
    f = {bk: uma.function([z, y], [per_row, gz], backend=bk) for bk in ("cpu", "reference")}
    assert "one_hot_cross_entropy(" in uma.dprint(f["cpu"], file="str")
    inf, nan = np.inf, np.nan
    Z = np.array([[0.5, -1.0, 2.0],     # label -1: finite row, 0
                  [nan, 0.0, 1.0],      # label -1: NaN
                  [inf, 0.0, 1.0],      # label 3: NaN
                  [-inf, -inf, -inf],   # label 7: NaN
                  [0.1, 0.2, 0.3],      # label 1: in range
                  [nan, 0.0, 1.0]])     # label 0: in range, NaN
    Y = np.array([-1, -1, 3, 7, 1, 0])
    got, want = f["cpu"](Z, Y), f["reference"](Z, Y)
    for g, w, what in zip(got, want, ("loss rows", "gradient")):
        g, w = np.asarray(g), np.asarray(w)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15, err_msg=what)
    rows, grad = (np.asarray(v) for v in got)
    assert rows[0] == 0 and (grad[0] == 0).all() and np.isnan(rows[1:4]).all() and np.isnan(grad[1:4]).all()


def test_closed_forms_can_be_switched_off(rng):
    _, f = _one_hot_step("float64", mode={"exclude": ["closed_forms"]})
    text = uma.dprint(f["cpu"], file="str").split("cpu program")[1]
    assert "one_hot_cross_entropy" not in text and "log_softmax" in text or "exp(" in text
    x, y = rng.normal(size=(5, 3)), np.array([0, 1, 2, 3, 0])
    _, on = _one_hot_step("float64")
    for got, exp in zip(f["cpu"](x, y), on["cpu"](x, y)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(exp), rtol=1e-12)


@pytest.mark.parametrize("depth,classes", [(1, 4), (1, 1)])
def test_closed_form_where_the_product_broadcasts_computes_the_product(rng, depth, classes):
    # one_hot(y, 1) against 4 classes (or 4-wide one-hot rows against one class) broadcasts in
    # the graph as written: the closed form's ops compute that same product
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    W = uma.shared(rng.normal(size=(3, classes)), "W")
    z = x @ W
    loss = -sym.mean(sym.sum(sym.one_hot(y, depth) * sym.log_softmax(z, axis=1), axis=1))
    (gW,) = uma.grad(loss, [W])
    f = uma.function([x, y], [loss, gW], backend="cpu")
    assert "one_hot_cross_entropy(" in uma.dprint(f, file="str")
    xv, yv = rng.normal(size=(5, 3)), np.array([0, 0, 1, -1, 3])
    ref = uma.function([x, y], [loss, gW], backend="reference")(xv, yv)
    for got, exp in zip(f(xv, yv), ref):
        np.testing.assert_allclose(np.asarray(got), np.asarray(exp), rtol=1e-12, atol=1e-15)


def test_closed_forms_fold_negations_only_around_their_own_op(rng):
    # -mean(-x) and -sum(-x) of integers wrap: not sum(x) / mean(x)
    for dtype, vals in (("uint8", [1, 2]), ("int8", [-128, 5])):
        x = sym.vector("x", dtype=dtype)
        v = np.array(vals, dtype)
        for expr in (-sym.mean(-x), -sym.sum(-x)):
            got = uma.function([x], expr, backend="cpu")(v)
            exp = uma.function([x], expr, backend="reference")(v)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(exp))


def test_closed_form_with_a_depth_other_than_the_classes_raises_and_changes_nothing(rng):
    (W, b), f = _one_hot_step("float64", depth=5)  # 4 classes: the product cannot broadcast
    W0 = W.get_value()
    with pytest.raises(ValueError, match="depth 5 does not match the logits' 4 classes|could not be broadcast"):
        f["cpu"](rng.normal(size=(3, 3)), np.array([0, 1, 2]))
    np.testing.assert_array_equal(W.get_value(), W0)
    with pytest.raises(ValueError):  # the graph as written fails too
        f["reference"](rng.normal(size=(3, 3)), np.array([0, 1, 2]))
    # one class against 4-wide one-hot rows: the class axis (not declared length 1) does not
    # broadcast in the graph as written, nor in the closed form
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    W1 = uma.shared(rng.normal(size=(3, 1)), "W1")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 4) * sym.log_softmax(x @ W1, axis=1), axis=1))
    for backend in ("cpu", "reference"):
        with pytest.raises(ValueError):
            uma.function([x, y], [loss, *uma.grad(loss, [W1])], backend=backend)(rng.normal(size=(2, 3)), np.array([0, 1]))


def test_closed_forms_leave_a_depth_zero_one_hot_as_written():
    """one_hot(y, 0) has no closed form: the graph stays as written, so its errors are the
    product's, the same as the reference backend's."""
    z, y = sym.matrix("z"), sym.vector("y", dtype="int64")
    loss = -sym.mean(sym.sum(sym.one_hot(y, 0) * sym.log_softmax(z, axis=1), axis=1))
    f = {bk: uma.function([z, y], loss, backend=bk) for bk in ("cpu", "reference")}
    assert "one_hot_cross_entropy" not in uma.dprint(f["cpu"], file="str")
    errors = []
    for bk in ("cpu", "reference"):
        with pytest.raises(ValueError) as e:  # (2, 0) one-hot rows against 3 classes
            f[bk](np.zeros((2, 3)), np.array([0, 1]))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    # no classes: an empty log_softmax, empty rows, each summing to 0 (NumPy's sum of nothing)
    want = -np.mean(np.sum(np.zeros((2, 0)) * np.zeros((2, 0)), axis=1))
    for bk in ("cpu", "reference"):
        assert float(f[bk](np.zeros((2, 0)), np.array([0, 1]))) == want


def test_closed_forms_leave_a_weighted_product_alone(rng):
    # sum(w * one_hot * log_softmax): the upstream gradient is not a column, no rewrite of it
    x, y, w = sym.matrix("x"), sym.vector("y", dtype="int64"), sym.matrix("w")
    loss = -sym.sum(sym.one_hot(y, 3) * w * sym.log_softmax(x, axis=1))
    (gx,) = uma.grad(loss, [x])
    f = uma.function([x, y, w], [loss, gx], backend="cpu")
    assert "one_hot_cross_entropy" not in uma.dprint(f, file="str")
    xv, yv, wv = rng.normal(size=(4, 3)), np.array([0, 2, 1, 1]), rng.normal(size=(4, 3))
    r = uma.function([x, y, w], [loss, gx], backend="reference")(xv, yv, wv)
    for got, exp in zip(f(xv, yv, wv), r):
        np.testing.assert_allclose(np.asarray(got), np.asarray(exp), rtol=1e-12)
