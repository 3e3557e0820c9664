"""The ``mlx`` backend (python/uma/runtime/linkers/mlx): MLX arrays in residency "mlx", one
``mx.eval`` per call, dtypes kept exactly (float64 stays float64; complex128, which MLX lacks,
refused at compile time), uma's semantics on every op and dtype (uma's ``cpu`` backend is the
oracle), conversions counted, and bad input. The backend matrix of the other test files runs
over ``uma.backends()``, which includes ``mlx`` where MLX is installed."""
import numpy as np
import pytest

import uma
from conftest import np_dtype
from uma import sym
from uma.runtime import HOST

mx = pytest.importorskip("mlx.core")


def _host(v):
    """An MLX output as a NumPy array of its own dtype (bfloat16 through float32)."""
    assert isinstance(v, mx.array), type(v)
    return np.array(v.astype(mx.float32)) if v.dtype == mx.bfloat16 else np.array(v)


def test_outputs_are_mlx_arrays_and_values_stay_in_mlx_between_calls():
    w = uma.shared(np.arange(3.0), "w")
    x = sym.vector("x")
    step = uma.function([x], [w * x, sym.sum(w)], updates={w: w + 1}, backend="mlx")
    out, total = step(np.ones(3))
    assert isinstance(out, mx.array) and out.dtype == mx.float64 and tuple(out.shape) == (3,)
    assert isinstance(total, mx.array) and tuple(total.shape) == ()
    np.testing.assert_array_equal(np.array(out), [0.0, 1.0, 2.0])
    assert w.container.current == {"mlx"}
    assert isinstance(w.container.copy_in("mlx"), mx.array)
    step(np.ones(3))
    assert w.container.current == {"mlx"}
    value = w.get_value()
    assert type(value) is np.ndarray and value.dtype == np.float64
    np.testing.assert_array_equal(value, [2.0, 3.0, 4.0])


def test_float64_is_never_narrowed():
    """MLX narrows float64 NumPy input to float32 unless told the dtype; the backend keeps it."""
    v = np.array([1.0 + 2.0**-40, np.pi, 1e300])
    w = uma.shared(v.copy(), "w")
    uma.function([], [], updates={w: w * 1}, backend="mlx")()
    assert w.container.copy_in("mlx").dtype == mx.float64
    np.testing.assert_array_equal(w.get_value(), v)


def test_complex128_is_refused_at_compile_time_and_complex64_runs():
    z = sym.vector("z", dtype="complex128")
    with pytest.raises(TypeError, match=r"backend 'mlx' cannot hold dtype complex128 \(variable 'z'\)"):
        uma.function([z], sym.exp(z), backend="mlx")
    x = sym.vector("x", dtype="float64")
    with pytest.raises(TypeError, match=r"cannot hold dtype complex128 \(an output of astype\)"):
        uma.function([x], sym.abs(x.astype("complex128")), backend="mlx")
    c = sym.vector("c", dtype="complex64")
    v = np.array([1 + 2j, -0.5j], np.complex64)
    got = uma.function([c], sym.exp(c), backend="mlx")(v)
    np.testing.assert_allclose(np.array(got), np.exp(v), rtol=1e-6)


def test_a_shared_complex128_variable_is_refused_and_left_as_it_was():
    w = uma.shared(np.array([1 + 1j]), "w")
    with pytest.raises(TypeError, match="complex128"):
        uma.function([], [], updates={w: w * 2}, backend="mlx")
    np.testing.assert_array_equal(w.get_value(), [1 + 1j])
    assert w.container.current == {HOST}


def test_one_eval_per_call_of_exactly_the_outputs_and_updates(monkeypatch):
    calls = []
    real = mx.eval
    monkeypatch.setattr(mx, "eval", lambda *a: calls.append(a) or real(*a))  # before compiling: it binds mx.eval
    W = uma.shared(np.ones((4, 3), np.float32), "W")
    x = sym.matrix("x", dtype="float32")
    h = sym.tanh(x @ W)
    step = uma.function([x], sym.sum(h), updates={W: W - 0.1 * uma.grad(sym.sum(h), W)}, backend="mlx")
    for _ in range(3):
        out = step(np.ones((2, 4), np.float32))
    assert len(calls) == 3
    # the calls after the first run the generated code: one mx.eval(output, update), nothing else
    for args in calls[1:]:
        assert len(args) == 2 and all(type(a) is mx.array for a in args)
    np.testing.assert_array_equal(np.array(calls[-1][0]), np.array(out))
    np.testing.assert_array_equal(np.array(calls[-1][1]), W.get_value())


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int8",
                                   "uint8", "uint32", "complex64", "bool"])
def test_every_dtype_gives_uma_cpu_results(dtype, rng):
    """Elementwise, reductions, shapes and matmul on each dtype MLX holds: the mlx backend's
    values are the cpu backend's (MLX where it computes as NumPy, uma's ops elsewhere)."""
    x, y = sym.matrix("x", dtype=dtype), sym.matrix("y", dtype=dtype)
    outs = [x + y, x * y, sym.maximum(x, y), x == y, x < y, sym.sum(x, axis=0), sym.max(x),
            sym.transpose(x), sym.reshape(x, (-1,)), sym.concatenate([x, y], axis=1), x[::-1, 1:]]
    if dtype != "bool":
        outs += [x - y, x @ sym.transpose(y), sym.where(x > y, x, y)]
    if dtype.startswith(("float", "bfloat", "complex")):
        outs += [sym.exp(x), x / y, sym.mean(x, axis=1)]
    if dtype.startswith(("float", "bfloat")):
        outs.append(sym.softmax(x, axis=1))
    a = (rng.standard_normal((3, 4)) * 3).astype(np_dtype(dtype))
    b = (rng.standard_normal((3, 4)) * 3).astype(np_dtype(dtype))
    got = uma.function([x, y], outs, backend="mlx")(a, b)
    want = uma.function([x, y], outs, backend="cpu")(a, b)
    for k, (g, w) in enumerate(zip(got, want)):
        gn = _host(g)
        assert g.dtype == (mx.bool_ if w.dtype.name == "bool" else getattr(mx, w.dtype.name)), (k, g.dtype)
        wn = np.asarray(w)
        if w.dtype.name == "bfloat16":
            wn = wn.astype(np.float32)
        assert gn.shape == wn.shape, k
        if wn.dtype.kind in "fc":
            rtol = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(dtype, 1e-12)
            np.testing.assert_allclose(gn, wn, rtol=rtol, atol=rtol, err_msg=str(k))
        else:
            np.testing.assert_array_equal(gn, wn, err_msg=str(k))


def test_training_matches_the_cpu_backend(rng):
    X = rng.standard_normal((32, 6)).astype(np.float32)
    Y = rng.integers(0, 4, 32)

    def train(backend):
        W = uma.shared(np.zeros((6, 4), np.float32), "W")
        b = uma.shared(np.zeros(4, np.float32), "b")
        x, y = sym.matrix("x", dtype="float32", shape=(None, 6)), sym.vector("y", dtype="int64")
        loss = sym.mean(sym.softmax_cross_entropy(sym.tanh(x @ W + b) + x @ W, y))
        gW, gb = uma.grad(loss, [W, b])
        step = uma.function([x, y], loss, updates=[(W, W - 0.3 * gW), (b, b - 0.3 * gb)], backend=backend)
        losses = [float(np.array(step(X, Y))) for _ in range(8)]
        return losses, W.get_value(), b.get_value()

    lm, Wm, bm = train("mlx")
    lc, Wc, bc = train("cpu")
    assert Wm.dtype == np.float32 and bm.dtype == np.float32
    np.testing.assert_allclose(lm, lc, rtol=1e-5)
    np.testing.assert_allclose(Wm, Wc, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bm, bc, rtol=1e-4, atol=1e-6)
    assert lm[-1] < lm[0]


def test_conversions_are_one_per_switch_and_none_in_a_loop():
    w = uma.shared(np.zeros(4), "w")
    on_mlx = uma.function([], [], updates={w: w + 1}, backend="mlx")
    on_cpu = uma.function([], [], updates={w: w * 2}, backend="cpu")
    uma.conversion_stats(reset=True)
    for _ in range(5):
        on_mlx()
    assert uma.conversion_stats() == {("cpu", "mlx"): {"conversions": 1, "bytes": 32}}
    on_cpu()
    on_mlx()
    stats = uma.conversion_stats()
    assert stats[("mlx", "cpu")]["conversions"] == 1 and stats[("cpu", "mlx")]["conversions"] == 2
    np.testing.assert_array_equal(w.get_value(), np.full(4, 11.0))


def test_a_bad_label_raises_uma_s_error_and_stores_nothing():
    W = uma.shared(np.ones((3, 2), np.float32), "W")
    x, y = sym.matrix("x", dtype="float32"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="mlx")
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(np.ones((2, 3), np.float32), np.array([0, 2]))
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2), np.float32))
    assert HOST in W.container.current


def test_native_arguments_are_used_and_wrong_ones_refused():
    x = sym.vector("x")
    f = uma.function([x], x * 2, backend="mlx")
    np.testing.assert_array_equal(np.array(f(mx.array(np.arange(3.0), dtype=mx.float64))), [0.0, 2.0, 4.0])
    with pytest.raises(TypeError):
        f(mx.zeros((2, 2), dtype=mx.float64))
    with pytest.raises(TypeError):
        f(mx.zeros((3,), dtype=mx.complex64))


def test_negative_strides_and_bool_bytes_reach_mlx_correctly():
    x = sym.matrix("x")
    a = np.arange(12.0).reshape(3, 4)
    r, s = uma.function([x], [x[::-1] + 0, x[:, ::-2] * 2], backend="mlx")(a)
    np.testing.assert_array_equal(np.array(r), a[::-1])
    np.testing.assert_array_equal(np.array(s), a[:, ::-2] * 2)
    b = sym.vector("b", dtype="bool")
    raw = np.frombuffer(bytes([0, 1, 2, 255]), np.uint8).view(np.bool_)  # nonzero bytes are True
    got = uma.function([b], sym.logical_not(b), backend="mlx")(uma.asarray(raw))
    np.testing.assert_array_equal(np.array(got), [True, False, False, False])


def test_the_declared_dtypes_are_those_mlx_has():
    from uma.graph.type import _ALL_DTYPES
    from uma.runtime.linkers.mlx import MlxLinker
    for name in sorted(_ALL_DTYPES):
        has = isinstance(getattr(mx, "bool_" if name == "bool" else name, None), mx.Dtype)
        assert has == (name in MlxLinker.dtypes), name


def test_an_output_that_is_also_a_stored_value_is_a_copy():
    # NumPy's view of an MLX array is writeable: writing through a returned output must not
    # change the shared variable whose new value the same expression is
    W = uma.shared(np.ones((3, 2)), name="W")
    x, g = sym.matrix("x"), sym.matrix("g")
    new = W - 0.1 * (x.T @ g)
    f = uma.function([x, g], [new, W], updates={W: new}, backend="mlx")
    for _ in range(2):  # the checked first call and the generated code
        out_new, out_old = f(np.ones((4, 3)), np.ones((4, 2)))
        stored = np.array(W.get_value())
        np.asarray(out_new)[...] = 42.0
        np.asarray(out_old)[...] = -1.0
        np.testing.assert_array_equal(W.get_value(), stored)
