"""uma.linalg: the linear algebra extension of the Python Array API standard (2025.12,
https://data-apis.org/array-api/2025.12/extensions/linear_algebra_functions.html).

Every function takes a stack of matrices ``(..., M, N)`` (vectors for ``vector_norm``,
``cross``, ``vecdot``) and works on each matrix of the stack. The factorisations
(``cholesky``, ``det``, ``eig``, ``eigvals``, ``eigh``, ``eigvalsh``, ``inv``, ``qr``,
``slogdet``, ``solve``, ``svd``, ``svdvals``) run LAPACK from OpenBLAS on the cpu device and cuSOLVER
on a cuda device (``uma._core.linalg_*``, C++ ``uma::ops::linalg``; cuSOLVER is loaded at the first
GPU factorisation, from the ``nvidia-cusolver`` wheel or the CUDA toolkit, a ``RuntimeError``
naming what is missing otherwise):
float32, float64, complex64 and complex128 are computed in their own precision; bool and
integer inputs are converted to float64 first (NumPy's rule; the standard says inputs "should"
be floating-point); float16 and bfloat16 are a ``TypeError`` (LAPACK has no such routines).
``eig`` and ``eigvals`` run on the cpu only: on a cuda array they are a ``RuntimeError`` (move it
with ``to_device('cpu')``). The other
functions are compositions of uma ops (through the factorisations where they need one:
``matrix_norm`` with ord 2, -2 or 'nuc', ``matrix_rank``, ``pinv``, ``matrix_power`` with n < 0),
and the aliases of main-namespace functions (``matmul``, ``matrix_transpose``, ``outer``,
``tensordot``, ``trace``, ``vecdot``, ``diagonal``) run on any device.

Errors: ``LinAlgError`` (a subclass of ``numpy.linalg.LinAlgError``, a ``ValueError``) naming the shape
for fewer than 2 dimensions or non-square matrices where the factorisations, ``matrix_power`` and
``pinv`` need square matrices or stacks of them (``numpy.linalg`` raises its LinAlgError there);
``ValueError`` naming the shape for the same in ``diagonal``, ``trace``, ``matrix_norm`` and
``matrix_rank`` (as NumPy); ``LinAlgError`` for a
singular matrix (``inv``, ``solve``), a matrix that is not positive definite (``cholesky``) or a
factorisation that did not converge (``eig``, ``eigvals``, ``eigh``, ``eigvalsh``, ``svd``,
``svdvals``).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

from . import _api, _core
from . import _array_api as _aa

Array = _core.Array
LinAlgError = _core.LinAlgError

__all__ = [
    "LinAlgError", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
    "cholesky", "cross", "det", "diagonal", "eig", "eigvals", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class EigResult(NamedTuple):
    """The result of ``eig``: eigenvalues (..., M) and eigenvectors (..., M, M), complex."""
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    """The result of ``eigh``: eigenvalues (..., M) and eigenvectors (..., M, M)."""
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """The result of ``qr``: Q with orthonormal columns and upper-triangular R."""
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """The result of ``slogdet``: the sign and the natural log of the absolute determinant."""
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """The result of ``svd``: U, the singular values S (descending) and Vh."""
    U: Array
    S: Array
    Vh: Array


def _x(x, name):
    return _aa._array(x, f"uma.linalg.{name}")


def _float_dtype(x):
    """The real floating dtype a norm of ``x`` has (NumPy's): float16, bfloat16 and float32 as
    they are, float32 for complex64, float64 for float64/complex128 and for bool/integer inputs
    (the default floating dtype)."""
    n = str(x.dtype)
    return _aa._by_name[n if n in ("float16", "bfloat16", "float32") else
                        "float32" if n == "complex64" else "float64"]


def _compute_dtype(x):
    """The dtype a norm of ``x`` is computed in: its result dtype, float32 for float16/bfloat16
    (as uma's half-precision ops compute)."""
    t = _float_dtype(x)
    return _aa._by_name["float32"] if str(t) in ("float16", "bfloat16") else t


def _max0(a, axis, keepdims):
    """The maximum of the non-negative ``a`` over ``axis``, 0 where that is empty (NumPy's norms:
    ``max(..., initial=0)``); the sum over an empty axis is that 0, of the right shape."""
    empty = any(a.shape[k] == 0 for k in ((axis,) if isinstance(axis, int) else axis))
    return (_api.sum if empty else _api.max)(a, axis=axis, keepdims=keepdims)


def _as_result(r, x):
    """The norm ``r`` in the result dtype of ``x``'s norms."""
    t = _float_dtype(x)
    return r if r.dtype == t else _api.astype(r, t)


# ---- the factorisations (C++, LAPACK) ----------------------------------------------------------

def cholesky(x, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix of ``x`` (..., M, M)
    (Array API standard, linalg.cholesky): lower-triangular L with x = L L^H, or with
    ``upper=True`` the upper-triangular U = L^H (x = U^H U); same shape, dtype per the module
    rule. Only the lower triangle of x is read (the upper one with ``upper=True``).
    LinAlgError when a matrix is not positive definite; ValueError for a bad shape."""
    return _core.linalg_cholesky(_x(x, "cholesky"), bool(upper))


def det(x, /):
    """The determinant of each square matrix of ``x`` (..., M, M), shape (...) (Array API
    standard, linalg.det), computed as sign * exp(logabsdet) from the LU factorisation (as NumPy);
    dtype per the module rule. ValueError for a bad shape."""
    return _core.linalg_det(_x(x, "det"))


def eig(x, /):
    """Eigenvalues and right eigenvectors of each general square matrix of ``x`` (..., M, M)
    (Array API standard 2025.12, linalg.eig; LAPACK cgeev/zgeev on the matrix as a complex one):
    ``EigResult(eigenvalues, eigenvectors)``, eigenvalues (..., M) in no particular order,
    eigenvectors (..., M, M) as columns of unit 2-norm (x v = w v), both complex of x's
    precision (complex64 for float32/complex64, complex128 otherwise; unlike numpy.linalg.eig,
    which returns real results when they are). LinAlgError when LAPACK does not converge."""
    w, v = _core.linalg_eig(_x(x, "eig"))
    return EigResult(w, v)


def eigvals(x, /):
    """The eigenvalues of each general square matrix of ``x`` (..., M, M), shape (..., M),
    complex of x's precision (Array API standard 2025.12, linalg.eigvals; as ``eig``)."""
    return _core.linalg_eigvals(_x(x, "eigvals"))


def eigh(x, /):
    """Eigenvalues and eigenvectors of each complex Hermitian or real symmetric matrix of ``x``
    (..., M, M) (Array API standard, linalg.eigh; LAPACK syevd/heevd, the lower triangle read as
    NumPy's default UPLO='L'): ``EighResult(eigenvalues, eigenvectors)``, eigenvalues (..., M)
    of the real dtype of x in ascending order, eigenvectors (..., M, M) of x's dtype as
    columns, x = Q diag(w) Q^H. LinAlgError when LAPACK does not converge."""
    w, v = _core.linalg_eigh(_x(x, "eigh"))
    return EighResult(w, v)


def eigvalsh(x, /):
    """The eigenvalues of each Hermitian matrix of ``x`` (..., M, M), ascending, shape (..., M),
    real dtype (Array API standard, linalg.eigvalsh; as ``eigh`` without the vectors)."""
    return _core.linalg_eigvalsh(_x(x, "eigvalsh"))


def inv(x, /):
    """The inverse of each square matrix of ``x`` (..., M, M), same shape (Array API standard,
    linalg.inv; LAPACK gesv against the identity, as NumPy). LinAlgError for a singular
    matrix; ValueError for a bad shape."""
    return _core.linalg_inv(_x(x, "inv"))


def qr(x, /, *, mode="reduced"):
    """The QR decomposition of each matrix of ``x`` (..., M, N) (Array API standard, linalg.qr;
    LAPACK geqrf and orgqr/ungqr): ``QRResult(Q, R)``, with K = min(M, N), Q (..., M, K) and R
    (..., K, N) for ``mode='reduced'``, Q (..., M, M) and R (..., M, N) for ``'complete'``.
    ValueError for another mode or a bad shape."""
    if not isinstance(mode, str):
        raise ValueError(f"uma.linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    q, r = _core.linalg_qr(_x(x, "qr"), mode)
    return QRResult(q, r)


def slogdet(x, /):
    """Sign and natural log of the absolute determinant of each square matrix of ``x`` (...,
    M, M) (Array API standard, linalg.slogdet): ``SlogdetResult(sign, logabsdet)``, shape (...);
    sign has x's dtype (0 for a singular matrix, |sign| = 1 otherwise, complex for complex x),
    logabsdet the real dtype (-inf for a singular matrix)."""
    s, l = _core.linalg_slogdet(_x(x, "slogdet"))
    return SlogdetResult(s, l)


def solve(x1, x2, /):
    """The solution X of x1 X = x2 for each square matrix of ``x1`` (..., M, M) (Array API
    standard 2025.12, linalg.solve; LAPACK gesv): x2 of shape (M,) is one vector for every matrix
    (result x1.shape[:-2] + (M,)); otherwise x2 is (..., M, K) and the batch shapes broadcast
    (result (..., M, K)). dtype: the promoted dtype by the module rule. LinAlgError for a
    singular matrix; ValueError for mismatched shapes."""
    return _core.linalg_solve(_x(x1, "solve"), _x(x2, "solve"))


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition x = U diag(S) Vh of each matrix of ``x`` (..., M, N)
    (Array API standard, linalg.svd; LAPACK gesdd): ``SVDResult(U, S, Vh)``, K = min(M, N), S
    (..., K) of the real dtype in descending order, U (..., M, M) and Vh (..., N, N) when
    ``full_matrices`` else (..., M, K) and (..., K, N). LinAlgError when LAPACK does not
    converge."""
    u, s, vh = _core.linalg_svd(_x(x, "svd"), bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values of each matrix of ``x`` (..., M, N), shape (..., min(M, N)),
    descending, real dtype (Array API standard, linalg.svdvals)."""
    return _core.linalg_svdvals(_x(x, "svdvals"))


# ---- compositions ----------------------------------------------------------------------------

def _matrix(x, name, square=False, error=ValueError):
    x = _x(x, name)
    if x.ndim < 2:
        raise error(f"uma.linalg.{name}: x must have at least 2 dimensions (a stack of matrices), "
                    f"got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise error(f"uma.linalg.{name}: the last two dimensions must be square, got shape {x.shape}")
    return x


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along ``axis`` (Array API standard, linalg.cross):
    the other axes broadcast; ``axis`` counts from the end, in [-min(x1.ndim, x2.ndim), -1]
    (NumPy's linalg.cross takes the same); dtype by promotion. ValueError when the axis has
    length other than 3 in either array; AxisError for an axis out of range."""
    x1, x2 = _x(x1, "cross"), _x(x2, "cross")
    a = _aa._axis_int(axis, "uma.linalg.cross")
    n = min(x1.ndim, x2.ndim)
    if not -n <= a <= -1:
        raise _aa._AxisError(a, n, msg_prefix="uma.linalg.cross (axis must be in [-N, -1])")
    if x1.shape[a] != 3 or x2.shape[a] != 3:
        raise ValueError(f"uma.linalg.cross: both arrays must have length 3 along axis {a}, "
                         f"got shapes {x1.shape} and {x2.shape}")
    x1, x2 = _aa.broadcast_arrays(x1, x2)
    nd = x1.ndim
    ax = a % nd
    c1 = [x1[_aa._along(nd, ax, i)] for i in range(3)]
    c2 = [x2[_aa._along(nd, ax, i)] for i in range(3)]
    parts = [_api.subtract(_api.multiply(c1[(i + 1) % 3], c2[(i + 2) % 3]),
                           _api.multiply(c1[(i + 2) % 3], c2[(i + 1) % 3])) for i in range(3)]
    return _api.stack(parts, ax)


def diagonal(x, /, *, offset=0):
    """The diagonal ``offset`` of each matrix of ``x`` (..., M, N) as the last axis (Array API
    standard, linalg.diagonal): a read-only view, x's dtype. ValueError for ndim < 2."""
    x = _matrix(x, "diagonal")
    return _api.diagonal(x, _aa._int(offset, "offset", "uma.linalg.diagonal"), -2, -1)


def matmul(x1, x2, /):
    """``uma.matmul`` (Array API standard, linalg.matmul is the main namespace's matmul)."""
    return _api.matmul(x1, x2)


def matrix_transpose(x, /):
    """``uma.matrix_transpose`` (Array API standard, linalg.matrix_transpose)."""
    return _aa.matrix_transpose(x)


def tensordot(x1, x2, /, *, axes=2):
    """``uma.tensordot`` (Array API standard, linalg.tensordot)."""
    return _aa.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """``uma.vecdot`` (Array API standard, linalg.vecdot): sum(conj(x1) * x2, axis)."""
    return _aa.vecdot(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays, shape (N, M), dtype by promotion (Array API
    standard, linalg.outer; as numpy.linalg.outer, ValueError for other ranks)."""
    x1, x2 = _x(x1, "outer"), _x(x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"uma.linalg.outer: x1 and x2 must be 1-dimensional, got shapes {x1.shape} and {x2.shape}")
    return _api.outer(x1, x2)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the diagonal ``offset`` of each matrix of ``x`` (..., M, N), shape (...)
    (Array API standard, linalg.trace): dtype as ``sum``'s (small integers to int64/uint64) or
    ``dtype`` (the diagonal converted first). ValueError for ndim < 2."""
    x = _matrix(x, "trace")
    return _aa.trace(x, _aa._int(offset, "offset", "uma.linalg.trace"), -2, -1, dtype=dtype)


def _as_float(x):
    """|x| in the dtype the norm is computed in (float64 for bool/integers)."""
    a = _api.abs(x)
    t = _compute_dtype(x)
    return a if a.dtype == t else _api.astype(a, t)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector p-norm of ``x`` over ``axis`` (None: all elements; an int or a tuple of ints)
    (Array API standard, linalg.vector_norm): ord a real p (sum(|x|**p)**(1/p)), inf (max |x|),
    -inf (min |x|), 0 (the count of non-zero elements); the inf-norm of nothing is 0 (NumPy).
    Result: the real floating dtype (float16, bfloat16 and float32 as they are, the first two
    computed in float32; float32 for complex64; float64 for float64/complex128, bool and
    integers), the reduced axes removed or kept as length 1. AxisError for a bad axis; ValueError for ord not a number."""
    x = _x(x, "vector_norm")
    axes = _aa._axes(axis, x.ndim, "uma.linalg.vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ValueError(f"uma.linalg.vector_norm: ord must be a real number, inf or -inf, got {ord!r}")
    a = _as_float(x)
    if ord == math.inf:
        r = _max0(a, axes, keepdims)
    elif ord == -math.inf:
        r = _api.min(a, axis=axes, keepdims=keepdims)
    elif ord == 0:
        r = _api.astype(_api.sum(_api.not_equal(a, 0), axis=axes, keepdims=keepdims), a.dtype)
    elif ord == 1:
        r = _api.sum(a, axis=axes, keepdims=keepdims)
    elif ord == 2:
        r = _api.sqrt(_api.sum(_api.multiply(a, a), axis=axes, keepdims=keepdims))
    else:
        p = float(ord)
        r = _api.power(_api.sum(_api.power(a, p), axis=axes, keepdims=keepdims), 1.0 / p)
    if axis is None and keepdims is False and r.ndim:
        r = _api.reshape(r, ())
    return _as_result(r, x)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix of ``x`` (..., M, N) (Array API standard,
    linalg.matrix_norm): ord 'fro' (Frobenius), 'nuc' (sum of singular values), 1 / -1 (max /
    min column sum of |x|), inf / -inf (max / min row sum), 2 / -2 (largest / smallest singular
    value); the max-based ones (1, inf, 2) of an empty matrix are 0, the min-based ones a
    ValueError (NumPy). Result: the real floating dtype (as ``vector_norm``), shape (...), or (..., 1, 1)
    with ``keepdims``. ValueError for another ord or ndim < 2."""
    x = _matrix(x, "matrix_norm")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise ValueError(f"uma.linalg.matrix_norm: invalid norm order {ord!r} for matrices")
    elif isinstance(ord, bool) or ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError(f"uma.linalg.matrix_norm: invalid norm order {ord!r} for matrices")
    if ord == "fro":
        a = _as_float(x)
        r = _api.sqrt(_api.sum(_api.multiply(a, a), axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = svdvals(x)
        r = _api.sum(s, axis=-1) if ord == "nuc" else _max0(s, -1, False) if ord == 2 else _api.min(s, axis=-1)
    else:
        a = _as_float(x)
        red, keep = (-2, -1) if ord in (1, -1) else (-1, -1)  # column sums, or row sums
        sums = _api.sum(a, axis=red)
        r = _max0(sums, keep, False) if ord > 0 else _api.min(sums, axis=keep)
    if keepdims:
        r = _api.reshape(r, tuple(r.shape) + (1, 1))
    return _as_result(r, x)


def matrix_power(x, n, /):
    """x raised to the integer power ``n`` for each square matrix of ``x`` (..., M, M) (Array API
    standard, linalg.matrix_power; NumPy's algorithm: repeated squaring): n = 0 gives the
    identity, n < 0 the power of ``inv(x)``. dtype: x's for n >= 0 (integers stay integers, as
    NumPy), the module rule's for n < 0. TypeError for a non-integer n; ValueError for a bad
    shape; LinAlgError for a singular matrix when n < 0."""
    x = _matrix(x, "matrix_power", square=True, error=LinAlgError)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"uma.linalg.matrix_power: exponent must be an integer, got {n!r}") from None
    if n == 0:
        m = x.shape[-1]
        eye = _core.eye(m, m, 0, x.dtype, device=x.device)
        return _api.astype(_api.broadcast_to(eye, x.shape), x.dtype)  # a fresh array of x's shape
    if n < 0:
        x = inv(x)
        n = -n
    if n == 1:
        return _api.astype(x, x.dtype)
    if n == 2:
        return _api.matmul(x, x)
    if n == 3:
        return _api.matmul(_api.matmul(x, x), x)
    z = result = None
    while n > 0:
        z = x if z is None else _api.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _api.matmul(result, z)
    return result


def _rtol(x, s, rtol, name):
    """The relative tolerance of matrix_rank and pinv as an array that broadcasts against the
    singular values' batch (..., 1): max(M, N) * eps of the real dtype when None."""
    if rtol is None:
        eps = float(_aa.finfo(s.dtype).eps)
        return max(x.shape[-2:]) * eps
    if isinstance(rtol, Array):
        return _api.expand_dims(_api.astype(rtol, s.dtype) if rtol.dtype != s.dtype else rtol, -1)
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TypeError(f"uma.linalg.{name}: rtol must be a Python float, a uma.Array or None, "
                        f"got {type(rtol).__name__} {rtol!r}")
    return float(rtol)


def matrix_rank(x, /, *, rtol=None):
    """The rank of each matrix of ``x`` (..., M, N): the number of singular values greater than
    rtol * the largest one (Array API standard, linalg.matrix_rank; NumPy 2's rule), rtol a float
    or an array broadcasting against (...) (None: max(M, N) * eps). Result int64, shape (...)."""
    x = _matrix(x, "matrix_rank")
    s = svdvals(x)
    if s.shape[-1] == 0:  # no singular value: rank 0 (NumPy's max would refuse the empty axis)
        return _core.zeros(tuple(s.shape[:-1]), "int64", device=x.device)
    tol = _api.multiply(_api.max(s, axis=-1, keepdims=True), _rtol(x, s, rtol, "matrix_rank"))
    return _api.astype(_api.sum(_api.greater(s, tol), axis=-1), "int64")


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse of each matrix of ``x`` (..., M, N), shape (..., N, M)
    (Array API standard, linalg.pinv; NumPy 2's rule): through the reduced SVD, singular values
    at most rtol * the largest one (None: max(M, N) * eps) taken as zero."""
    x = _matrix(x, "pinv", error=LinAlgError)
    u, s, vh = svd(x, full_matrices=False)
    if s.shape[-1] == 0:  # an empty matrix: its pseudo-inverse is the empty (N, M) one
        return _core.zeros(tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2]), u.dtype, device=x.device)
    cutoff = _api.multiply(_api.max(s, axis=-1, keepdims=True), _rtol(x, s, rtol, "pinv"))
    large = _api.greater(s, cutoff)
    sinv = _api.where(large, _api.divide(1, _api.where(large, s, 1)), 0)
    if sinv.dtype != s.dtype:
        sinv = _api.astype(sinv, s.dtype)
    v = matrix_transpose(_api.conj(vh))                       # (..., N, K)
    uh = matrix_transpose(_api.conj(u))                       # (..., K, M)
    return _api.matmul(_api.multiply(v, _api.expand_dims(sinv, -2)), uh)
