"""uma.cuda: CUDA devices.

``is_available()`` and ``device_count()`` never raise: in a build without CUDA, without a
driver or without a GPU they report ``False`` / ``0`` and ``unavailable_reason()`` says why;
creating a cuda array then raises ``RuntimeError`` naming the reason.
"""
from __future__ import annotations

import os
import sys

from . import _core

__all__ = ["is_available", "device_count", "synchronize", "built_with_cuda", "unavailable_reason", "empty_managed",
           "set_matmul_precision", "matmul_precision"]

_c = _core.cuda


def _use_pip_library(variable: str, path: str) -> None:
    """A CUDA build opens cuBLAS at its first GPU matmul, cuFFT at its first GPU transform,
    cuSOLVER at its first GPU factorisation and NVRTC at the first fused elementwise chain it
    compiles a kernel for (dlopen of ``$UMA_CUBLAS`` / ``$UMA_CUFFT`` / ``$UMA_CUSOLVER`` /
    ``$UMA_NVRTC``, then the library on the loader's path, then /usr/local/cuda); NVRTC reads
    CCCL's headers from ``$UMA_CUDA_CCCL``, then the CUDA toolkit. When the PyPI wheel holding
    ``path`` (``nvidia-cublas``, ``nvidia-cufft``, ``nvidia-cusolver``, ``nvidia-cuda-nvrtc``,
    ``nvidia-cuda-cccl``; CUDA 13: under ``site-packages/nvidia/cu13``; absolute entries of
    ``sys.path`` only, never the working directory) is installed and ``variable`` is unset, it
    is set to that file or folder here, so the CUDA wheel of uma
    needs no CUDA toolkit (without NVRTC or CCCL's headers, fused chains run on the
    interpreting kernel, with the same results); nothing is loaded at import."""
    if os.environ.get(variable) or not _c.built_with_cuda():
        return
    for d in sys.path:
        if not d or not os.path.isabs(d):  # never the working directory: a file planted there
            continue
        p = os.path.join(d, "nvidia", "cu13", path)
        if os.path.exists(p):
            os.environ[variable] = p
            return


for _variable, _path in (("UMA_CUBLAS", "lib/libcublas.so.13"), ("UMA_CUFFT", "lib/libcufft.so.12"),
                         ("UMA_CUSOLVER", "lib/libcusolver.so.12"), ("UMA_NVRTC", "lib/libnvrtc.so.13"),
                         ("UMA_CUDA_CCCL", "include/cccl")):
    _use_pip_library(_variable, _path)


def is_available() -> bool:
    """True when at least one CUDA GPU is usable by uma."""
    return _c.is_available()


def device_count() -> int:
    """Number of usable CUDA GPUs (0 without CUDA support, driver or GPU)."""
    return _c.device_count()


def synchronize(device=None) -> None:
    """Wait for every GPU operation uma queued on ``device`` (default ``"cuda:0"``).

    ``device``: an int, ``"cuda:N"`` or a ``uma.Device``. RuntimeError naming why when CUDA
    is not available.
    """
    _c.synchronize(device)


def set_matmul_precision(precision: str) -> None:
    """How float32 and complex64 matrix products run on cuda devices, for products queued
    from now on (process-wide).

    ``"highest"`` (the default, as PyTorch's): exact float32 arithmetic, the host's results
    within rounding. ``"tf32"``: the inputs rounded to TF32 (10-bit mantissa) on the tensor
    cores with float32 accumulation, JAX's default precision on Ampere and later GPUs (about
    1e-3 relative error; several times faster for large products). Host products, float64,
    float16/bfloat16 and integer products are unaffected. ValueError for any other string,
    TypeError for a value that is not a string. A
    compiled ``cuda`` function records its CUDA graphs per precision.
    """
    if not isinstance(precision, str):
        raise TypeError(f"set_matmul_precision: expected 'highest' or 'tf32', got {precision!r}")
    if precision not in ("highest", "tf32"):
        raise ValueError(f"set_matmul_precision: expected 'highest' or 'tf32', got {precision!r}")
    _c._set_matmul_tf32(precision == "tf32")


def matmul_precision() -> str:
    """The precision of float32/complex64 products on cuda devices: ``"highest"`` or ``"tf32"``
    (:func:`set_matmul_precision`)."""
    return "tf32" if _c._matmul_tf32() else "highest"


def built_with_cuda() -> bool:
    """True when this build of uma contains the CUDA code (CMake's ``UMA_CUDA=ON``, or ``AUTO``
    on a machine where an NVIDIA GPU and nvcc were found)."""
    return _c.built_with_cuda()


def unavailable_reason() -> str:
    """Why no GPU is usable (``""`` when one is)."""
    return _c.unavailable_reason()


def empty_managed(shape, dtype=None, device=None):
    """A C-contiguous ``uma.Array`` of ``shape`` in managed (unified) memory of ``device``.

    ``a.memory_kind == "managed"``: CPU and GPU address the same pages. Contents undefined;
    dtype defaults to float32. RuntimeError when CUDA is not available.
    """
    if isinstance(shape, int):
        shape = (shape,)
    return _c._empty_managed(tuple(shape), dtype, device)
