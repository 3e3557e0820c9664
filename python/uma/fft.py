"""uma.fft: the fft extension of the Python Array API standard (2025.12,
https://data-apis.org/array-api/2025.12/extensions/fourier_transform_functions.html).

The transforms (``fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``, ``rfftn``,
``irfftn``, ``hfft``, ``ihfft``) run pocketfft (the library NumPy uses) on the cpu device and
cuFFT on cuda devices (``uma._core.fft_*``, C++ ``uma::ops::fft``), batched over every axis not
transformed. Dtypes: float32 gives complex64 and float64 complex128 (float16 and bfloat16 are
computed as float32), complex dtypes stay; ``irfft``, ``irfftn`` and ``hfft`` give the real dtype
of the input's precision. Inputs must be floating-point (the standard's rule): bool and integer
arrays are a ``TypeError``, and so are complex inputs to ``rfft``, ``rfftn`` and ``ihfft``.

``n`` (one axis) and ``s`` (several) trim or zero-pad the input along the transformed axes;
``s[i] == -1`` keeps that axis's length; ``axes=None`` transforms every axis, or the last
``len(s)`` axes when ``s`` is given (NumPy's rule; the standard asks for ``axes`` with ``s``).
``norm``: ``"backward"`` (the default: no scale forward, 1/N on the inverse), ``"ortho"``
(1/sqrt(N) both ways) or ``"forward"`` (1/N forward, none on the inverse), N the product of the
transform lengths.

Errors: ``ValueError`` "Invalid number of FFT data points (n) specified." for a length < 1, for a
repeated axis, for ``s`` and ``axes`` of different lengths and for a bad ``norm``; numpy's
``AxisError`` for an axis out of range; ``TypeError`` for the dtypes above and for a non-integer
``n``, ``s`` entry or axis. ``fftshift``, ``ifftshift`` are compositions of ``roll`` and run on
any device; ``fftfreq``, ``rfftfreq`` are computed in float64 and converted to ``dtype``.
"""
from __future__ import annotations

from . import _core
from . import _array_api as _aa

Array = _core.Array

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _x(x, name):
    return _aa._array(x, f"uma.fft.{name}")


def _int(v, what, name):
    """``v`` as a Python int of int64's range: TypeError for a bool or a non-integer (NumPy's
    rule for ``n``), ValueError naming a value past int64."""
    if isinstance(v, bool):
        raise TypeError(f"uma.fft.{name}: {what} must be an integer, got bool {v!r}")
    k = _aa._int(v, what, f"uma.fft.{name}")
    if not -2**63 <= k < 2**63:
        raise ValueError(f"uma.fft.{name}: {what} = {k} is out of the int64 range")
    return k


def _n(n, name):
    return None if n is None else _int(n, "n", name)


def _ints(v, what, name):
    """None, an int, or a sequence of ints (tuple, list, or a 1-d integer array)."""
    if v is None:
        return None
    if isinstance(v, (tuple, list)) or (hasattr(v, "__iter__") and not isinstance(v, (str, bytes))):
        return [_int(k, what, name) for k in v]
    return [_int(v, what, name)]


def _norm(norm):
    """None is ``"backward"``, as NumPy takes it (the core checks the names)."""
    return "backward" if norm is None else norm


def _one(name, x, n, axis, norm):
    return getattr(_core, f"fft_{name}")(_x(x, name), _n(n, name), _aa._int(axis, "axis", f"uma.fft.{name}"),
                                         _norm(norm))


def _many(name, x, s, axes, norm):
    return getattr(_core, f"fft_{name}")(_x(x, name), _ints(s, "s", name), _ints(axes, "axes", name),
                                         _norm(norm))


def _spacing(d, name):
    """The sample spacing ``d`` as a float: ZeroDivisionError for 0, as NumPy's 1 / (n * d)."""
    d = float(d)
    if d == 0.0:
        raise ZeroDivisionError(f"uma.fft.{name}: the sample spacing d must be nonzero")
    return d


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform of ``x`` along ``axis`` (Array API
    standard, fft.fft): the shape of ``x`` with length ``n`` along ``axis`` (``x`` trimmed or
    zero-padded to it; default its length), complex64 for float32/complex64 input, complex128
    for float64/complex128. Errors: see the module docstring."""
    return _one("fft", x, n, axis, norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of ``fft`` along ``axis`` (Array API standard, fft.ifft): shapes and dtypes
    as ``fft``'s; ``norm="backward"`` scales by 1/n."""
    return _one("ifft", x, n, axis, norm)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over ``axes`` (Array API standard,
    fft.fftn): ``x``'s shape with lengths ``s`` along ``axes``; dtypes as ``fft``'s. Errors: see
    the module docstring."""
    return _many("fftn", x, s, axes, norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of ``fftn`` (Array API standard, fft.ifftn); ``norm="backward"`` scales by
    1/prod(s)."""
    return _many("ifftn", x, s, axes, norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional transform of the real ``x`` along ``axis``, its non-negative
    frequencies only (Array API standard, fft.rfft): length ``n // 2 + 1`` along ``axis`` (``n``
    default ``x``'s length), complex64 for float32, complex128 for float64. TypeError for
    complex input."""
    return _one("rfft", x, n, axis, norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of ``rfft`` (Array API standard, fft.irfft): a real array of length ``n``
    along ``axis`` (default ``2 * (m - 1)`` for an input of length m; the input is trimmed or
    zero-padded to ``n // 2 + 1``), float32 for complex64/float32 input, float64 for
    complex128/float64."""
    return _one("irfft", x, n, axis, norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of the real ``x`` (Array API standard, fft.rfftn): ``rfft``
    over the last of ``axes`` (length ``s[-1] // 2 + 1``), ``fft`` over the others."""
    return _many("rfftn", x, s, axes, norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of ``rfftn`` (Array API standard, fft.irfftn): a real array with lengths
    ``s`` along ``axes`` (the last default ``2 * (m - 1)``)."""
    return _many("irfftn", x, s, axes, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a signal with Hermitian symmetry given by its first half ``x`` (Array
    API standard, fft.hfft): real, length ``n`` along ``axis`` (default ``2 * (m - 1)``),
    computed as ``irfft(conj(x))`` with the forward transform's scale (NumPy)."""
    return _one("hfft", x, n, axis, norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of ``hfft`` (Array API standard, fft.ihfft): for real ``x``, complex of
    length ``n // 2 + 1`` along ``axis``, computed as ``conj(rfft(x))`` with the inverse
    transform's scale (NumPy). TypeError for complex input."""
    return _one("ihfft", x, n, axis, norm)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of ``fft`` for a signal of ``n`` samples spaced ``d`` apart (Array
    API standard, fft.fftfreq): shape (n,), ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] /
    (d * n)``, dtype ``dtype`` (a real floating dtype, default float64) on ``device``.
    ValueError for n < 1; TypeError for a non-integer (or bool) n or a dtype that is not real
    floating; ZeroDivisionError for ``d`` 0 (NumPy's)."""
    return _core.fft_fftfreq(_int(n, "n", "fftfreq"), _spacing(d, "fftfreq"), dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of ``rfft`` (Array API standard, fft.rfftfreq): shape
    (n // 2 + 1,), ``[0, 1, ..., n // 2] / (d * n)``; arguments and errors as ``fftfreq``'s."""
    return _core.fft_rfftfreq(_int(n, "n", "rfftfreq"), _spacing(d, "rfftfreq"), dtype, device)


def _shift(x, axes, inverse, name):
    x = _x(x, name)
    if axes is None:
        axes = list(range(x.ndim))
    else:
        axes = [_aa._axis(a, x.ndim, f"uma.fft.{name}") for a in _ints(axes, "axes", name)]
    if not axes:
        return x.copy()
    shifts = [-(x.shape[a] // 2) if inverse else x.shape[a] // 2 for a in axes]
    return _aa.roll(x, tuple(shifts), axis=tuple(axes))


def fftshift(x, /, *, axes=None):
    """``x`` with the zero-frequency term moved to the centre (Array API standard,
    fft.fftshift): ``roll`` by ``n // 2`` along each of ``axes`` (default all); shape and dtype
    of ``x``, any dtype and device. AxisError for an axis out of range."""
    return _shift(x, axes, False, "fftshift")


def ifftshift(x, /, *, axes=None):
    """The inverse of ``fftshift`` (Array API standard, fft.ifftshift): ``roll`` by
    ``-(n // 2)`` along each of ``axes`` (default all)."""
    return _shift(x, axes, True, "ifftshift")
