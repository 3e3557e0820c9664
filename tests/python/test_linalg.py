"""uma.linalg (the Array API standard's linear algebra extension) against numpy.linalg.

Inputs are random and well conditioned; every float/complex dtype, batched stacks, empty
stacks and 0x0 matrices where NumPy takes them. Factorisations whose factors are not unique
(eigh, svd, qr) are checked through their invariants: reconstruction, orthonormality, order.
"""
import math
import re

import numpy as np
import pytest

import uma
from conftest import to_numpy

FLOATS = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}
REAL = {"float32": "float32", "complex64": "float32", "float64": "float64", "complex128": "float64"}
BATCHES = [(), (3,), (2, 3), (0,)]

GPU = uma.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")
# Tests with a `device` parameter also run on cuda arrays where a GPU is usable (cuSOLVER,
# src/kernels/cuda/cusolver.cpp), with NumPy as the oracle as on the cpu.
DEVICES = ["cpu", pytest.param("cuda", marks=needs_gpu)]


def on(x, device):
    """x (a NumPy array) as the operand of a test on `device`: itself on the cpu (uma converts
    it), a uma array on the device otherwise."""
    if device == "cpu":
        return x
    return x.to_device(device) if isinstance(x, uma.Array) else uma.asarray(np.asarray(x), device=device)


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(rng, batch, n, dtype):
    """Random (batch, n, n) matrices with a dominant diagonal (invertible, condition ~ 1)."""
    return (rand(rng, batch + (n, n), dtype) + 4 * n * np.eye(n)).astype(dtype)


def hermitian_pd(rng, batch, n, dtype):
    a = rand(rng, batch + (n, n), dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    g = to_numpy(got)
    assert g.dtype == np.asarray(want).dtype, (g.dtype, np.asarray(want).dtype)
    assert g.shape == np.shape(want)
    np.testing.assert_allclose(g, want, rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale)


def eye_like(n, dtype):
    return np.eye(n, dtype=dtype)


# ---- namespace -----------------------------------------------------------------------------

def test_namespace_has_linalg_with_every_function():
    x = uma.asarray(np.eye(2))
    xp = x.__array_namespace__()
    assert xp.linalg is uma.linalg
    for name in ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
                 "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
                 "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]:
        assert callable(getattr(uma.linalg, name)), name
    # code written for NumPy catches it
    assert issubclass(uma.linalg.LinAlgError, np.linalg.LinAlgError)
    assert issubclass(uma.linalg.LinAlgError, ValueError)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        uma.linalg.inv(uma.asarray(np.zeros((2, 2))))


# ---- inv, solve, det, slogdet ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("device", DEVICES)
def test_inv(dtype, batch, rng, device):
    a = well_conditioned(rng, batch, 4, dtype)
    close(uma.linalg.inv(on(a, device)), np.linalg.inv(a), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("device", DEVICES)
def test_det_and_slogdet(dtype, batch, rng, device):
    a = well_conditioned(rng, batch, 3, dtype) / 4
    close(uma.linalg.det(on(a, device)), np.linalg.det(a), dtype, scale=10)
    r = uma.linalg.slogdet(on(a, device))
    want = np.linalg.slogdet(a)
    assert isinstance(r, uma.linalg.SlogdetResult) and r._fields == ("sign", "logabsdet")
    close(r.sign, want.sign, dtype)
    close(r.logabsdet, want.logabsdet, dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("device", DEVICES)
def test_singular_det_and_slogdet(dtype, device):
    a = np.array([[1, 2], [2, 4]], dtype=dtype)
    a[1] = 2 * a[0]
    s, l = uma.linalg.slogdet(on(a, device))
    assert to_numpy(s) == 0 and to_numpy(l) == -np.inf
    assert to_numpy(uma.linalg.det(on(a, device))) == 0


@pytest.mark.parametrize("device", DEVICES)
def test_zero_by_zero_matrices(device):
    a = np.zeros((2, 0, 0))
    close(uma.linalg.det(on(a, device)), np.linalg.det(a), "float64")
    s, l = uma.linalg.slogdet(on(a, device))
    ws, wl = np.linalg.slogdet(a)
    close(s, ws, "float64")
    close(l, wl, "float64")
    close(uma.linalg.inv(on(a, device)), np.linalg.inv(a), "float64")
    close(uma.linalg.cholesky(on(a, device)), np.linalg.cholesky(a), "float64")
    close(uma.linalg.eigvalsh(on(a, device)), np.linalg.eigvalsh(a), "float64")
    close(uma.linalg.svdvals(on(a, device)), np.linalg.svdvals(a), "float64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("abatch,bshape", [((), (4,)), ((), (4, 2)), ((3,), (4,)), ((3,), (3, 4, 2)),
                                            ((2, 1), (3, 4, 1)), ((3,), (4, 5)), ((0,), (4,)), ((0,), (0, 4, 2))])
@pytest.mark.parametrize("device", DEVICES)
def test_solve_shapes_as_the_standard(dtype, abatch, bshape, rng, device):
    a = well_conditioned(rng, abatch, 4, dtype)
    b = rand(rng, bshape, dtype)
    got = uma.linalg.solve(on(a, device), on(b, device))
    # the standard: a 1-d b is one vector for every matrix; otherwise batches broadcast
    want = np.linalg.solve(a, b)
    close(got, want, dtype)


def test_solve_promotes_like_numpy(rng):
    a = well_conditioned(rng, (), 3, "float32")
    for b in [np.arange(3, dtype="int64"), np.arange(3, dtype="float64"), np.arange(3.0).astype("complex64")]:
        got = uma.linalg.solve(a, b)
        want = np.linalg.solve(a, b)
        assert to_numpy(got).dtype == want.dtype
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-4)


@pytest.mark.parametrize("fn", ["inv", "solve"])
@pytest.mark.parametrize("device", DEVICES)
def test_singular_matrix_is_linalg_error(fn, device):
    a = np.array([[[1.0, 0], [0, 1]], [[1.0, 2.0], [2.0, 4.0]]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(a)
    with pytest.raises(uma.linalg.LinAlgError, match="singular") as e:
        uma.linalg.inv(on(a, device)) if fn == "inv" else uma.linalg.solve(on(a, device), on(np.ones(2), device))
    assert isinstance(e.value, ValueError)
    assert "matrix 1" in str(e.value)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
@pytest.mark.parametrize("device", DEVICES)
def test_integers_compute_in_float64_like_numpy(dtype, rng, device):
    a = (rng.integers(-3, 4, (2, 3, 3)) + 9 * np.eye(3, dtype="int64")).astype(dtype)
    if dtype == "bool":
        a = np.eye(3, dtype=bool) | (rng.random((2, 3, 3)) < 0.2) & np.triu(np.ones((3, 3), bool))
    for name in ["inv", "det", "eigvalsh", "svdvals"]:
        got, want = getattr(uma.linalg, name)(on(a, device)), getattr(np.linalg, name)(a)
        assert to_numpy(got).dtype == want.dtype == np.float64, name
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_is_a_type_error_like_numpy(dtype):
    a = uma.astype(uma.asarray(np.eye(2)), getattr(uma, dtype))
    with pytest.raises(TypeError, match="unsupported in linalg"):
        uma.linalg.inv(a)
    with pytest.raises(TypeError):
        np.linalg.inv(np.eye(2, dtype="float16"))


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh"])
def test_square_functions_refuse_bad_shapes(fn):
    f = getattr(uma.linalg, fn)
    # uma.linalg.LinAlgError (a ValueError), as NumPy raises its LinAlgError for the same inputs
    with pytest.raises(uma.linalg.LinAlgError, match=r"at least 2 dimensions.*\(3,\)"):
        f(np.ones(3))
    with pytest.raises(uma.linalg.LinAlgError, match=r"square.*\(2, 3\)"):
        f(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError):
        getattr(np.linalg, fn)(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError):
        getattr(np.linalg, fn)(np.ones(3))
    assert issubclass(uma.linalg.LinAlgError, ValueError)


@pytest.mark.parametrize("fn", ["svd", "svdvals", "qr"])
def test_rectangular_functions_refuse_vectors(fn):
    with pytest.raises(ValueError, match=r"at least 2 dimensions"):
        getattr(uma.linalg, fn)(np.ones(3))


def test_solve_refuses_mismatched_shapes():
    a = np.eye(3)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        uma.linalg.solve(a, np.ones(4))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        uma.linalg.solve(a, np.ones((2, 2)))
    with pytest.raises(ValueError):
        uma.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))


# ---- cholesky -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_cholesky(dtype, batch, upper, rng, device):
    a = hermitian_pd(rng, batch, 4, dtype)
    close(uma.linalg.cholesky(on(a, device), upper=upper), np.linalg.cholesky(a, upper=upper), dtype, scale=10)


@pytest.mark.parametrize("device", DEVICES)
def test_cholesky_not_positive_definite_is_linalg_error(device):
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(a)
    with pytest.raises(uma.linalg.LinAlgError, match="not positive definite"):
        uma.linalg.cholesky(on(a, device))


# ---- eigh, eigvalsh ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("device", DEVICES)
def test_eigh_invariants(dtype, batch, rng, device):
    a = rand(rng, batch + (5, 5), dtype)
    a = ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)
    r = uma.linalg.eigh(on(a, device))
    assert isinstance(r, uma.linalg.EighResult) and r._fields == ("eigenvalues", "eigenvectors")
    w, q = to_numpy(r.eigenvalues), to_numpy(r.eigenvectors)
    assert w.dtype == np.dtype(REAL[dtype]) and q.dtype == np.dtype(dtype)
    assert w.shape == batch + (5,) and q.shape == batch + (5, 5)
    close(r.eigenvalues, np.linalg.eigvalsh(a), dtype, scale=10)
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending
    qh = np.conj(np.swapaxes(q, -1, -2))
    np.testing.assert_allclose(q @ (w[..., None] * qh), a, rtol=0, atol=TOL[dtype] * 20)
    np.testing.assert_allclose(qh @ q, np.broadcast_to(np.eye(5), q.shape), rtol=0, atol=TOL[dtype] * 20)
    close(uma.linalg.eigvalsh(on(a, device)), np.linalg.eigvalsh(a), dtype, scale=10)


@pytest.mark.parametrize("device", DEVICES)
def test_eigh_reads_the_lower_triangle_like_numpy(rng, device):
    a = rng.standard_normal((4, 4))  # not symmetric: the lower triangle decides
    close(uma.linalg.eigvalsh(on(a, device)), np.linalg.eigvalsh(a), "float64")


# ---- svd, svdvals ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,), (0,)])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (1, 4)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("device", DEVICES)
def test_svd_invariants(dtype, batch, shape, full, rng, device):
    a = rand(rng, batch + shape, dtype)
    r = uma.linalg.svd(on(a, device), full_matrices=full)
    assert isinstance(r, uma.linalg.SVDResult) and r._fields == ("U", "S", "Vh")
    u, s, vh = (to_numpy(t) for t in r)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    assert (u.dtype, s.dtype, vh.dtype) == (wu.dtype, ws.dtype, wvh.dtype)
    close(r.S, ws, dtype, scale=10)
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending
    k = min(shape)
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=0, atol=TOL[dtype] * 20)
    for m in (u, np.conj(np.swapaxes(vh, -1, -2))):  # orthonormal columns
        g = np.conj(np.swapaxes(m, -1, -2)) @ m
        np.testing.assert_allclose(g, np.broadcast_to(np.eye(m.shape[-1]), g.shape), rtol=0, atol=TOL[dtype] * 20)
    close(uma.linalg.svdvals(on(a, device)), np.linalg.svdvals(a), dtype, scale=10)


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (0, 0)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("device", DEVICES)
def test_svd_of_empty_matrices_like_numpy(shape, full, device):
    a = np.zeros(shape)
    for got, want in zip(uma.linalg.svd(on(a, device), full_matrices=full), np.linalg.svd(a, full_matrices=full)):
        close(got, want, "float64")


# ---- qr -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,), (0,)])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (3, 0), (0, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("device", DEVICES)
def test_qr_invariants(dtype, batch, shape, mode, rng, device):
    a = rand(rng, batch + shape, dtype)
    r = uma.linalg.qr(on(a, device), mode=mode)
    assert isinstance(r, uma.linalg.QRResult) and r._fields == ("Q", "R")
    q, rr = to_numpy(r.Q), to_numpy(r.R)
    wq, wr = np.linalg.qr(a, mode=mode)
    assert (q.shape, rr.shape, q.dtype, rr.dtype) == (wq.shape, wr.shape, wq.dtype, wr.dtype)
    np.testing.assert_allclose(q @ rr, a, rtol=0, atol=TOL[dtype] * 20)
    assert np.all(np.tril(rr, -1) == 0)  # upper triangular
    g = np.conj(np.swapaxes(q, -1, -2)) @ q
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(q.shape[-1]), g.shape), rtol=0, atol=TOL[dtype] * 20)
    # the factorisation is LAPACK's, as NumPy's: the same factors up to rounding
    np.testing.assert_allclose(np.abs(rr), np.abs(wr), rtol=0, atol=TOL[dtype] * 20)


def test_qr_refuses_other_modes():
    with pytest.raises(ValueError, match="mode"):
        uma.linalg.qr(np.eye(2), mode="r")


# ---- compositions -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, -1, 0.5])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (None, True), (-1, False), ((0, 2), True), (1, False)])
def test_vector_norm(dtype, ord, axis, keepdims, rng):
    x = rand(rng, (3, 4, 5), dtype) if dtype != "int64" else rng.integers(-5, 6, (3, 4, 5))
    got = uma.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    want = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    close(got, want, "float64" if dtype == "int64" else dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(dtype, ord, keepdims, rng):
    x = rand(rng, (2, 3, 4), dtype) if dtype != "int64" else rng.integers(-5, 6, (2, 3, 4))
    got = uma.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
    want = np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
    close(got, want, "float64" if dtype == "int64" else dtype, scale=10)


def test_matrix_norm_refuses_bad_order():
    with pytest.raises(ValueError, match="order"):
        uma.linalg.matrix_norm(np.eye(2), ord=3)


@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1, -3])
def test_matrix_power(dtype, n, rng):
    if dtype == "int64":  # n >= 0 stays int64 (exact); n < 0 goes through inv, float64 (both as NumPy)
        x = rng.integers(-2, 3, (2, 3, 3)) + 8 * np.eye(3, dtype="int64")
        got = uma.linalg.matrix_power(x, n)
        want = np.linalg.matrix_power(x, n)
        assert to_numpy(got).dtype == want.dtype
        if n >= 0:
            np.testing.assert_array_equal(to_numpy(got), want)
        else:
            np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12, atol=1e-15)
        return
    x = well_conditioned(rng, (2,), 3, dtype) / 12
    close(uma.linalg.matrix_power(x, n), np.linalg.matrix_power(x, n), dtype, scale=10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("rtol", [None, 1e-3, "array"])
@pytest.mark.parametrize("device", DEVICES)
def test_matrix_rank_and_pinv(dtype, rtol, rng, device):
    a = rand(rng, (3, 5, 4), dtype)
    a[1, :, 3] = a[1, :, 0]  # rank 3
    a[2] = 0  # rank 0
    r = np.full(3, 1e-3, dtype=REAL[dtype]) if rtol == "array" else rtol
    got = uma.linalg.matrix_rank(on(a, device), rtol=on(uma.asarray(r), device) if rtol == "array" else r)
    want = np.linalg.matrix_rank(a, rtol=r)
    np.testing.assert_array_equal(to_numpy(got), want)
    assert to_numpy(got).dtype == np.int64
    if dtype.endswith("64") and dtype != "complex64" or dtype == "complex128":
        p = uma.linalg.pinv(on(a, device), rtol=on(uma.asarray(r), device) if rtol == "array" else r)
        close(p, np.linalg.pinv(a, rtol=r), dtype, scale=100)


@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128"])
@pytest.mark.parametrize("s1,s2,axis", [((3,), (3,), -1), ((4, 3), (3,), -1), ((2, 3, 4), (3, 4), -2), ((5, 3), (1, 3), -1)])
def test_cross(dtype, s1, s2, axis, rng):
    x1, x2 = rand(rng, s1, "float64"), rand(rng, s2, "float64")
    if dtype != "float64":
        x1, x2 = (x1 * 5).astype(dtype), (x2 * 5).astype(dtype)
    close(uma.linalg.cross(x1, x2, axis=axis), np.linalg.cross(x1, x2, axis=axis), "float64")


def test_cross_refuses_bad_lengths_and_axes():
    with pytest.raises(ValueError, match="length 3"):
        uma.linalg.cross(np.ones(4), np.ones(4))
    with pytest.raises(np.exceptions.AxisError):
        uma.linalg.cross(np.ones((3, 3)), np.ones((3, 3)), axis=0)


def test_aliases_of_the_main_namespace(rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 3))
    close(uma.linalg.matmul(a, b), np.linalg.matmul(a, b), "float64")
    close(uma.linalg.matrix_transpose(a), np.linalg.matrix_transpose(a), "float64")
    close(uma.linalg.tensordot(a, b[0], axes=1), np.linalg.tensordot(a, b[0], axes=1), "float64")
    close(uma.linalg.vecdot(a, a, axis=1), np.linalg.vecdot(a, a, axis=1), "float64")
    close(uma.linalg.diagonal(a, offset=1), np.linalg.diagonal(a, offset=1), "float64")
    close(uma.linalg.trace(a, offset=-1), np.linalg.trace(a, offset=-1), "float64")
    i = rng.integers(0, 5, (2, 3, 3)).astype("int16")
    got, want = uma.linalg.trace(i), np.linalg.trace(i)
    assert to_numpy(got).dtype == want.dtype
    np.testing.assert_array_equal(to_numpy(got), want)
    close(uma.linalg.outer(a[0, 0], b[0, 0]), np.linalg.outer(a[0, 0], b[0, 0]), "float64")
    with pytest.raises(ValueError, match="1-dimensional"):
        uma.linalg.outer(a, b)


# ---- devices ---------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_lapack_functions_on_a_device(device, rng):
    """Every factorisation runs on the operand's device and leaves its results there; eig and
    eigvals have no cuda kernel (RuntimeError naming the function); operands on two devices are
    a RuntimeError as for every op."""
    x = well_conditioned(rng, (2,), 3, "float64")
    a = uma.asarray(x, device=device)
    for fn in ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr", "matrix_rank", "pinv"]:
        res = getattr(uma.linalg, fn)(a)
        for r in (res if isinstance(res, tuple) else (res,)):
            assert str(r.device).startswith(device), (fn, r.device)
    close(uma.linalg.solve(a, uma.asarray(x[:, :, :1], device=device)), np.linalg.solve(x, x[:, :, :1]), "float64")
    close(uma.linalg.vector_norm(a), np.linalg.vector_norm(x), "float64")
    if device == "cpu":
        return
    for fn in ["eig", "eigvals"]:
        with pytest.raises(RuntimeError, match=f"uma.linalg.{fn} runs on the cpu device only"):
            getattr(uma.linalg, fn)(a)
    with pytest.raises(RuntimeError, match="device"):
        uma.linalg.solve(a, uma.asarray(x[:, :, :1]))


# ---- eig, eigvals (general matrices; 2025.12) ---------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("batch", [(), (3,), (0,)])
def test_eig_invariants(dtype, batch, rng):
    a = rand(rng, batch + (4, 4), "float64" if dtype == "int64" else dtype)
    if dtype == "int64":
        a = rng.integers(-4, 5, batch + (4, 4))
    r = uma.linalg.eig(a)
    assert isinstance(r, uma.linalg.EigResult) and r._fields == ("eigenvalues", "eigenvectors")
    w, v = to_numpy(r.eigenvalues), to_numpy(r.eigenvectors)
    cdt = {"float32": "complex64", "complex64": "complex64"}.get(dtype, "complex128")
    assert w.dtype == v.dtype == np.dtype(cdt)
    assert w.shape == batch + (4,) and v.shape == batch + (4, 4)
    tol = TOL["float64" if dtype == "int64" else dtype] * 50
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=0, atol=tol)  # A v = w v, column by column
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), np.ones(batch + (4,)), rtol=0, atol=tol)
    want = np.linalg.eigvals(a)  # the same values, perhaps in another order: each has a close match
    for got in (w, to_numpy(uma.linalg.eigvals(a))):
        assert got.shape == want.shape
        dist = np.abs(got[..., :, None] - want[..., None, :])  # (..., got, want)
        assert np.all(dist.min(axis=-2) <= tol * 10) and np.all(dist.min(axis=-1) <= tol * 10)


def test_eig_of_a_rotation_is_complex():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    w = to_numpy(uma.linalg.eigvals(a))
    np.testing.assert_allclose(w[np.argsort(w.imag)], [-1j, 1j], atol=1e-15)


# ---- non-finite and empty inputs ------------------------------------------------------------------

NONFINITE = {"nan": [[np.nan, 1.0], [1.0, 2.0]], "inf": [[np.inf, 1.0], [1.0, 2.0]]}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", list(NONFINITE))
@pytest.mark.parametrize("name", ["svd", "svdvals", "eig", "eigvals", "matrix_rank", "pinv"])
@pytest.mark.parametrize("device", DEVICES)
def test_an_infinity_or_nan_is_a_linalg_error(name, kind, dtype, device):
    """LAPACK's SVD and general eigensolver stop the process on a NaN ("illegal value") and
    return garbage for an infinity. NumPy raises LinAlgError for both in eig/eigvals and for a
    NaN in the SVD, but returns NaN singular values (and a rank of 0, a zero pseudo-inverse) for
    an infinity; uma raises LinAlgError for every one of these, before calling LAPACK (the issue's
    rule: never garbage silently)."""
    a = np.array(NONFINITE[kind], dtype)
    if device != "cpu" and name in ("eig", "eigvals"):  # no general eigensolver on cuda
        with pytest.raises(RuntimeError, match=f"uma.linalg.{name} runs on the cpu device only"):
            getattr(uma.linalg, name)(on(a, device))
        return
    np_fn = {"svdvals": lambda v: np.linalg.svd(v, compute_uv=False)}.get(name, getattr(np.linalg, name))
    if kind == "nan" or name in ("eig", "eigvals"):
        with pytest.raises(np.linalg.LinAlgError):
            np_fn(a)
    with pytest.raises(uma.linalg.LinAlgError, match="infinity or NaN"):
        getattr(uma.linalg, name)(on(a, device))
    stack = np.stack([np.eye(2, dtype=dtype), a])  # the message names the matrix of the stack
    with pytest.raises(uma.linalg.LinAlgError, match="matrix 1 of the stack"):
        getattr(uma.linalg, name)(on(stack, device))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a", [[[np.inf, 0.0], [0.0, 1.0]], [[-np.inf, 0.0], [0.0, 2.0]],
                               [[np.nan, 1.0], [1.0, 2.0]], [[0.0, 1.0], [1.0, 0.0]]])
@pytest.mark.parametrize("device", DEVICES)
def test_det_and_slogdet_of_non_finite_matrices_are_numpy_s(a, dtype, device):
    a = np.array(a, dtype)
    s, l = uma.linalg.slogdet(on(a, device))
    ws, wl = np.linalg.slogdet(a)
    if device == "cuda" and np.isnan(a).any():
        # the sign of a NaN matrix is the LU's pivoting: cuSOLVER's pivot search passes over a
        # NaN that LAPACK's idamax keeps; the standard leaves it unspecified (only its size is 1)
        assert abs(float(to_numpy(s))) == 1.0
    else:
        np.testing.assert_array_equal(to_numpy(s), ws)
    np.testing.assert_array_equal(to_numpy(l), wl)
    np.testing.assert_array_equal(to_numpy(uma.linalg.det(on(a, device))), np.linalg.det(a))


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (2, 0, 4)])
@pytest.mark.parametrize("ord", [1, -1, 2, -2, math.inf, -math.inf, "fro", "nuc"])
def test_matrix_norms_of_empty_matrices_are_numpy_s(shape, ord):
    a = np.zeros(shape)
    try:
        want = np.linalg.matrix_norm(a, ord=ord)
    except ValueError as e:  # NumPy's min-based norms of nothing
        with pytest.raises(ValueError):
            uma.linalg.matrix_norm(uma.asarray(a), ord=ord)
        assert "zero-size" in str(e)
        return
    got = uma.linalg.matrix_norm(uma.asarray(a), ord=ord)
    np.testing.assert_array_equal(to_numpy(got), want)


@pytest.mark.parametrize("ord", [math.inf, 1, 2, 0, 3])
def test_vector_norms_of_nothing_are_numpy_s(ord):
    for shape, axis in (((3, 0), None), ((3, 0), 1), ((0,), None)):
        a = np.zeros(shape)
        got = uma.linalg.vector_norm(uma.asarray(a), axis=axis, ord=ord)
        np.testing.assert_array_equal(to_numpy(got), np.linalg.vector_norm(a, axis=axis, ord=ord))


@pytest.mark.parametrize("ord", [2, 1, math.inf, 3])
def test_float16_norms_keep_float16(ord, rng):
    a = rng.standard_normal((4, 5)).astype(np.float16)
    got = uma.linalg.vector_norm(uma.asarray(a), axis=1, ord=ord)
    want = np.linalg.vector_norm(a.astype(np.float32), axis=1, ord=ord).astype(np.float16)
    assert got.dtype == uma.float16 and np.linalg.vector_norm(a, ord=ord).dtype == np.float16
    np.testing.assert_array_equal(to_numpy(got), want)  # computed in float32, rounded once
    m = uma.linalg.matrix_norm(uma.asarray(a), ord="fro")
    assert m.dtype == uma.float16


def test_errors_name_the_function_called():
    with pytest.raises(TypeError, match="uma.linalg.det:"):
        uma.linalg.det(uma.asarray(np.ones((2, 2), np.float16)))
    with pytest.raises(TypeError, match=r"rtol must be a Python float, a uma.Array or None, got ndarray"):
        uma.linalg.matrix_rank(uma.asarray(np.eye(2)), rtol=np.array([0.1]))


@pytest.mark.parametrize("fn, args", [("matrix_power", (2,)), ("pinv", ())])
def test_matrix_power_and_pinv_shape_errors_are_linalg_errors(fn, args):
    """NumPy raises numpy.linalg.LinAlgError for these shapes: uma raises its LinAlgError."""
    for bad in ([np.ones(3)] + ([np.ones((2, 3))] if fn == "matrix_power" else [])):
        with pytest.raises(np.linalg.LinAlgError):
            getattr(np.linalg, fn)(bad, *args)
        with pytest.raises(uma.linalg.LinAlgError, match=rf"uma.linalg.{fn}: .*{re.escape(str(bad.shape))}"):
            getattr(uma.linalg, fn)(uma.asarray(bad), *args)
