"""The ``torch`` backend (python/uma/runtime/linkers/torch): PyTorch tensors in residency
"torch", zero-copy conversions with the host, outputs that never alias stored values, uma's
semantics on every op and dtype (NumPy and uma's ``cpu`` backend are the oracles), and bad
input. The backend matrix of the other test files runs over ``uma.backends()``, which
includes ``torch`` where PyTorch is installed."""
import subprocess
import sys

import numpy as np
import pytest

import uma
from conftest import child_env
from uma import sym
from uma.runtime import HOST

torch = pytest.importorskip("torch")

def test_outputs_are_tensors_and_values_stay_tensors_between_calls():
    w = uma.shared(np.arange(3.0), "w")
    x = sym.vector("x")
    step = uma.function([x], [w * x, sym.sum(w)], updates={w: w + 1}, backend="torch")
    out, total = step(np.ones(3))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64 and tuple(out.shape) == (3,)
    assert isinstance(total, torch.Tensor) and total.shape == ()
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.0, 2.0])
    assert w.container.current == {"torch"}
    stored = w.container.copy_in("torch")
    assert isinstance(stored, torch.Tensor)
    step(np.ones(3))
    assert w.container.current == {"torch"}  # no conversion between torch calls
    np.testing.assert_array_equal(w.get_value(), [2.0, 3.0, 4.0])


def test_conversions_share_memory_both_ways():
    w = uma.shared(np.arange(4.0), "w")
    uma.function([], [], updates={w: w * 2}, backend="torch")()
    stored = w.container.copy_in("torch")
    host = w.get_value(borrow=True)  # output_filter: DLPack, no copy
    assert np.shares_memory(host, stored.numpy())
    uma.function([], [], updates={w: w + 1}, backend="cpu")()
    read = uma.function([], w * 1, backend="torch")
    np.testing.assert_array_equal(read().numpy(), np.arange(4.0) * 2 + 1)
    copy_here = w.container.copy_in("torch")  # input_filter: DLPack view of the host copy
    assert np.shares_memory(copy_here.numpy(), w.get_value(borrow=True))


def test_outputs_never_alias_inputs_or_stored_values():
    w = uma.shared(np.arange(3.0), "w")
    x = sym.vector("x")
    f = uma.function([x], [x, w, w], backend="torch")
    xt = torch.arange(3, dtype=torch.float64)
    a, b, c = f(xt)
    stored = w.container.copy_in("torch")
    for t in (a, b, c):
        assert t.data_ptr() not in (xt.data_ptr(), stored.data_ptr())
    assert b.data_ptr() != c.data_ptr()
    b += 100  # the caller owns its outputs
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0))


def test_native_tensor_arguments_are_used_in_place_and_not_written():
    x = sym.vector("x")
    f = uma.function([x], sym.exp(x) * 2, backend="torch")
    xt = torch.linspace(-1, 1, 5, dtype=torch.float64)
    before = xt.clone()
    np.testing.assert_allclose(f(xt).numpy(), np.exp(before.numpy()) * 2, rtol=1e-12)
    assert torch.equal(xt, before)


def test_a_conjugate_view_is_refused_like_on_the_cpu_backend():
    """A tensor with its conjugate bit set has no DLPack form; it gets the error every backend
    gives it (a TypeError naming the input), not PyTorch's BufferError from inside the call."""
    z = sym.vector("z", dtype="complex128")
    t = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex128).conj()
    errors = []
    for backend in ("torch", "cpu"):
        with pytest.raises(TypeError, match="input 0") as e:
            uma.function([z], sym.exp(z), backend=backend)(t)
        errors.append(type(e.value))
    assert errors[0] is errors[1]
    np.testing.assert_allclose(uma.function([z], sym.exp(z), backend="torch")(t.resolve_conj()).numpy(),
                               np.exp(np.array([1 - 2j, 3 + 4j])), rtol=1e-12)


def test_a_tensor_of_another_ndim_or_dtype_is_refused_like_any_argument():
    x = sym.vector("x")
    f = uma.function([x], x * 2, backend="torch")
    with pytest.raises(TypeError):
        f(torch.zeros((2, 2), dtype=torch.float64))
    with pytest.raises(TypeError):
        f(torch.zeros(3, dtype=torch.complex128))
    np.testing.assert_array_equal(f(torch.arange(3, dtype=torch.int32)).numpy(), [0.0, 2.0, 4.0])  # safe cast


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64", "int8", "uint8",
                                   "complex128", "bool"])
def test_every_dtype_gives_uma_cpu_results(dtype, rng):
    """Elementwise, reductions, shapes and matmul on each dtype: the torch backend's values are
    the cpu backend's (PyTorch where it computes as NumPy, uma's ops elsewhere)."""
    x, y = sym.matrix("x", dtype=dtype), sym.matrix("y", dtype=dtype)
    outs = [x + y, x * y, sym.maximum(x, y), x == y, x < y, sym.sum(x, axis=0), sym.max(x),
            sym.transpose(x), sym.reshape(x, (-1,)), sym.concatenate([x, y], axis=1), x[::-1, 1:]]
    if dtype != "bool":
        outs += [x - y, x @ sym.transpose(y), sym.where(x > y, x, y)]
    if dtype.startswith(("float", "bfloat", "complex")):
        outs += [sym.exp(x), x / y, sym.mean(x, axis=1)]
    from conftest import np_dtype
    a = (rng.standard_normal((3, 4)) * 3).astype(np_dtype(dtype))
    b = (rng.standard_normal((3, 4)) * 3).astype(np_dtype(dtype))
    got = uma.function([x, y], outs, backend="torch")(a, b)
    want = uma.function([x, y], outs, backend="cpu")(a, b)
    for k, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, torch.Tensor), k
        g = uma.from_dlpack(g)
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape), (k, g.dtype, w.dtype)
        gn, wn = np.asarray(g), np.asarray(w)
        if dtype == "bfloat16":
            gn, wn = gn.astype(np.float32), wn.astype(np.float32)
        if wn.dtype.kind in "fc":
            rtol = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(dtype, 1e-12)
            np.testing.assert_allclose(gn, wn, rtol=rtol, atol=rtol, err_msg=str(k))
        else:
            np.testing.assert_array_equal(gn, wn, err_msg=str(k))


def test_integer_plus_float32_is_computed_in_float64_as_numpy():
    i, f = sym.vector("i", dtype="int64"), sym.vector("f", dtype="float32")
    out = uma.function([i, f], i + f, backend="torch")(np.array([2**40 + 1]), np.array([0.5], np.float32))
    assert out.dtype == torch.float64
    assert out.item() == np.array([2**40 + 1]) + np.float32(0.5)


def test_training_matches_the_cpu_backend(rng):
    X = rng.standard_normal((32, 6))
    Y = rng.integers(0, 4, 32)

    def train(backend):
        W = uma.shared(np.zeros((6, 4)), "W")
        b = uma.shared(np.zeros(4), "b")
        x, y = sym.matrix("x", shape=(None, 6)), sym.vector("y", dtype="int64")
        loss = sym.mean(sym.softmax_cross_entropy(sym.relu(x @ W + b) + x @ W, y))
        gW, gb = uma.grad(loss, [W, b])
        step = uma.function([x, y], loss, updates=[(W, W - 0.3 * gW), (b, b - 0.3 * gb)], backend=backend)
        losses = [float(np.asarray(step(X, Y))) for _ in range(8)]
        return losses, W.get_value(), b.get_value()

    lt, Wt, bt = train("torch")
    lc, Wc, bc = train("cpu")
    np.testing.assert_allclose(lt, lc, rtol=1e-12)
    np.testing.assert_allclose(Wt, Wc, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(bt, bc, rtol=1e-10, atol=1e-14)
    assert lt[-1] < lt[0]


def test_a_bad_label_raises_uma_s_error_and_stores_nothing():
    W = uma.shared(np.ones((3, 2)), "W")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="torch")
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(np.ones((2, 3)), np.array([0, 2]))
    np.testing.assert_array_equal(W.get_value(), np.ones((3, 2)))
    assert HOST in W.container.current  # read into torch, written nowhere


def test_negative_strides_do_not_reach_torch():
    """PyTorch 2.13's from_dlpack aborts the process on a negative stride; the backend copies
    such views first. Run in a child process so that a regression fails this test only."""
    code = ("import numpy as np, uma\n"
            "x = uma.sym.matrix('x')\n"
            "f = uma.function([x], [x[::-1], x[:, ::-2] * 2], backend='torch')\n"
            "a = np.arange(12.0).reshape(3, 4)\n"
            "r, s = f(a)\n"
            "assert (r.numpy() == a[::-1]).all() and (s.numpy() == a[:, ::-2] * 2).all()\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


# ---- checks once per input signature, native arguments, torch.compile -----------------------


def test_checks_run_once_per_signature_and_a_new_signature_is_checked_again():
    x, y = sym.vector("x"), sym.vector("y")
    acc = uma.shared(np.zeros(3), "acc")
    f = uma.function([x, y], x * y, updates={acc: acc + x}, backend="torch")
    assert f._thunk.checks_updates and f._thunk.checks_shapes
    a, b = torch.arange(3.0, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    assert f._native_args((a, b)) and not f._native_args((a, b.float()))
    for _ in range(3):  # the first call checks, the next run the generated code
        np.testing.assert_array_equal(f(a, b).numpy(), np.arange(3.0))
    with pytest.raises(ValueError, match="multiply"):
        f(a, torch.ones(4, dtype=torch.float64))
    with pytest.raises(TypeError):
        f(a, torch.ones((3, 1), dtype=torch.float64))
    np.testing.assert_array_equal(acc.get_value(), 3 * np.arange(3.0))
    # a tensor that requires grad is not native: the checked path refuses it, as before
    assert not f._native_args((a.clone().requires_grad_(True), b))
    with pytest.raises(TypeError, match="gradient"):
        f(a.clone().requires_grad_(True), b)
    np.testing.assert_array_equal(acc.get_value(), 3 * np.arange(3.0))


def test_a_bad_label_raises_before_any_update_after_the_signature_is_cached():
    W = uma.shared(np.ones((3, 2)), "W")
    x, y = sym.matrix("x"), sym.vector("y", dtype="int64")
    loss = sym.mean(sym.softmax_cross_entropy(x @ W, y))
    step = uma.function([x, y], loss, updates={W: W - uma.grad(loss, W)}, backend="torch")
    xs = torch.ones((2, 3), dtype=torch.float64)
    for _ in range(2):
        step(xs, torch.tensor([0, 1]))
    before = W.get_value()
    with pytest.raises(ValueError, match="softmax_cross_entropy"):
        step(xs, torch.tensor([0, 2]))
    np.testing.assert_array_equal(W.get_value(), before)


def _compile_works():
    try:
        torch.compile(lambda t: t + 1)(torch.ones(2))
        return True
    except Exception:  # noqa: BLE001 - no C++ compiler, or no Inductor here
        return False


def test_torch_compile_flag_runs_the_graph_through_torch_compile():
    from uma.runtime.linkers.torch import TorchLinker
    with pytest.raises(TypeError, match="compile=True"):
        TorchLinker(mode="reduce-overhead")
    if not _compile_works():
        pytest.skip("torch.compile cannot run here (Inductor needs a C++ compiler)")
    rng = np.random.default_rng(0)
    w0, xs = rng.normal(size=3), rng.normal(size=(4, 3))
    x = sym.vector("x")
    runs = {}
    for name, backend in (("compiled", TorchLinker(compile=True)), ("cpu", "cpu")):
        w = uma.shared(w0.copy(), "w")
        y = sym.sum(sym.tanh(x * w))
        f = uma.function([x], y, updates={w: w - 0.1 * uma.grad(y, w)}, backend=backend)
        arg = (lambda v: torch.from_numpy(v)) if name == "compiled" else (lambda v: v)
        runs[name] = ([float(f(arg(v))) for v in xs], w.get_value())
    np.testing.assert_allclose(runs["compiled"][0], runs["cpu"][0], rtol=1e-12)
    np.testing.assert_allclose(runs["compiled"][1], runs["cpu"][1], rtol=1e-12)
