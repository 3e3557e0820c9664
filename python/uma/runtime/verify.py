"""``uma.verify_grad``: symbolic gradients against central finite differences."""
from __future__ import annotations

import math

import numpy as np

from ..graph.basic import Constant, Variable, as_variable
from ..graph.gradient import grad
from ..graph.type import TensorType, is_float, kind_of

__all__ = ["verify_grad", "GradientError"]

#: Default tolerances by dtype (PyTensor's ``verify_grad`` table): an entry passes when its
#: absolute *or* its relative error is within tolerance.
TOLERANCE = {"float16": 5e-2, "bfloat16": 5e-2, "float32": 1e-2, "float64": 1e-4,
             "complex64": 1e-2, "complex128": 1e-4}
#: Default finite-difference steps by dtype (central differences: error ~ eps**2 + ulp/eps).
EPS = {"float16": 1e-1, "bfloat16": 1e-1, "float32": 1e-3, "float64": 1e-6,
       "complex64": 1e-3, "complex128": 1e-6}


class GradientError(AssertionError):
    """``verify_grad`` found a gradient entry out of tolerance.

    Attributes: ``arg`` (index into ``pt``), ``index`` (the entry, a tuple), ``part``
    (``"real"`` or ``"imag"`` for a complex input: which component of the gradient, else
    None), ``analytic``, ``numeric``, ``abs_err``, ``rel_err``, ``abs_tol``, ``rel_tol``,
    ``n_bad`` (entries out of tolerance in that input).
    """

    def __init__(self, arg, index, analytic, numeric, abs_err, rel_err, abs_tol, rel_tol, n_bad, size,
                 shape, dtype, part=None):
        self.arg, self.index, self.part = arg, index, part
        self.analytic, self.numeric = analytic, numeric
        self.abs_err, self.rel_err = abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol
        self.n_bad = n_bad
        if math.isfinite(analytic) and math.isfinite(numeric):
            why = (f"abs err {abs_err:.3g} > abs_tol {abs_tol:.3g} and rel err {rel_err:.3g} > rel_tol "
                   f"{rel_tol:.3g}")
        else:
            why = ("the symbolic gradient is not finite" if not math.isfinite(analytic)
                   else "the finite difference is not finite")
        which = "" if part is None else f" ({part} part)"
        super().__init__(
            f"verify_grad: the gradient with respect to input {arg} ({dtype}, shape {shape}) differs "
            f"from finite differences; worst entry {index}{which}: symbolic {analytic!r}, numeric {numeric!r} "
            f"({why}); {n_bad} of {size} entries out of tolerance")


def _as_rng(rng):
    if rng is None:
        return np.random.default_rng(42)
    if isinstance(rng, (np.random.Generator, np.random.RandomState)):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f"verify_grad: rng must be None, a seed or a NumPy Generator/RandomState, got {rng!r}")


def verify_grad(fun, pt, *, rng=None, eps=None, abs_tol=None, rel_tol=None, backend="reference",
                mode=None, input_shapes=None):
    """Check ``uma.grad`` of ``fun`` at ``pt`` against central finite differences.

    PyTensor's convention: ``fun(*inputs)`` maps symbolic inputs (one per entry of ``pt``, of
    that entry's dtype) to a symbolic cost; ``pt`` is a list of NumPy arrays (or scalars) where
    the gradient is checked. A 0-d float cost is used as is; any other float output ``y`` is
    reduced to ``sum(y * r)`` with a fixed random ``r`` drawn from ``rng`` (a projection that
    checks every output entry's gradient at once).

    Float and complex inputs are differentiated (gradient ``uma.grad(cost, x,
    disconnected_inputs="zero")``); integer and bool inputs are held fixed. For each entry
    ``x[i]`` of a float input the numeric derivative is ``(cost(x[i] + eps) - cost(x[i] - eps))
    / (step actually taken)`` (the perturbed values are rounded to the input's dtype, and the
    step is measured after rounding). A complex entry is perturbed along its real part and
    along its imaginary part (``x[i] +- i eps``): the two derivatives are compared with the real
    and the imaginary part of the symbolic gradient (``uma.grad``'s convention ``dC/dx + i
    dC/dy``). A complex output ``y`` is reduced to ``sum(real(y) * r1 + imag(y) * r2)``. An
    entry passes when ``|sym - num| <= abs_tol`` or ``|sym - num| / (|sym| + |num|) <=
    rel_tol``.

    Keywords: ``rng`` (None -> a fixed seed; an int seed; or a NumPy Generator/RandomState),
    ``eps`` (default by dtype, :data:`EPS`: 1e-6 for float64, 1e-3 for float32), ``abs_tol``
    and ``rel_tol`` (default the largest :data:`TOLERANCE` of the inputs' and the cost's
    dtypes: 1e-4 for float64, 1e-2 for float32), ``backend`` and ``mode`` (how the cost and
    the gradient are compiled; default the ``reference`` backend, the oracle),
    ``input_shapes`` (a list with each symbolic input's static shape, ints or None per axis;
    default the full shape of each ``pt`` entry, PyTensor's choice).

    Raises :class:`GradientError` (an ``AssertionError``) naming the input, the worst entry,
    both values and the errors; ``TypeError`` for a ``pt`` that is not a list, a cost that is
    not float, or no float input; ``ValueError`` for a cost that is not finite at ``pt``, an
    ``eps`` that is not a positive finite number or a negative or non-finite tolerance.
    Returns None.
    """
    from .function import function

    if not isinstance(pt, (list, tuple)):
        raise TypeError(f"verify_grad: pt must be a list of NumPy arrays, got {type(pt).__name__}")
    for name, val in (("eps", eps), ("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if val is None:
            continue
        ok = isinstance(val, (int, float, np.integer, np.floating)) and not isinstance(val, (bool, np.bool_))
        try:
            ok = ok and math.isfinite(float(val)) and (val > 0 if name == "eps" else val >= 0)
        except OverflowError:  # an int beyond the float range
            ok = False
        if not ok:
            need = "a positive" if name == "eps" else "a non-negative"
            raise ValueError(f"verify_grad: {name} must be {need} finite number, got {val!r}")
    values = [np.array(p, copy=True) for p in pt]
    for k, v in enumerate(values):
        if v.dtype.kind not in "biufc":
            raise TypeError(f"verify_grad: pt[{k}] has unsupported dtype {v.dtype}")
    if input_shapes is None:
        input_shapes = [v.shape for v in values]
    elif len(input_shapes) != len(values):
        raise ValueError(f"verify_grad: input_shapes has {len(input_shapes)} entries for {len(values)} inputs")
    inputs = [Variable(TensorType(v.dtype, tuple(s)), name=f"input {k}")
              for k, (v, s) in enumerate(zip(values, input_shapes))]
    wrt_idx = [k for k, v in enumerate(values) if is_float(v.dtype.name) or v.dtype.kind == "c"]
    if not wrt_idx:
        raise TypeError("verify_grad: no float or complex input to differentiate (integer and bool inputs "
                        "are held fixed)")
    rng = _as_rng(rng)

    out = as_variable(fun(*inputs))
    cplx_out = kind_of(out.dtype) == "c"
    if not (is_float(out.dtype) or cplx_out):
        raise TypeError(f"verify_grad: fun must return a float or complex variable, got dtype {out.dtype}")
    if out.ndim == 0 and not cplx_out:
        cost = out
    else:
        shape = _host(function(inputs, out, backend=backend, mode=mode)(*values), out, backend).shape
        if cplx_out:
            rdt = "float32" if out.dtype == "complex64" else "float64"
            r1, r2 = (Constant(np.asarray(rng.standard_normal(size=shape), dtype=rdt)) for _ in range(2))
            cost = (out.real * r1 + out.imag * r2).sum()
        else:
            proj = rng.standard_normal(size=shape)
            cost = (out * Constant(np.asarray(proj, dtype=out.dtype))).sum()
    wrt = [inputs[k] for k in wrt_idx]
    grads = grad(cost, wrt, disconnected_inputs="zero")
    f_cost = function(inputs, cost, backend=backend, mode=mode)
    f_grad = function(inputs, grads, backend=backend, mode=mode)

    def cost_at(vals):
        return float(np.asarray(_host(f_cost(*vals), cost, backend), dtype=np.float64))

    c0 = cost_at(values)
    if not np.isfinite(c0):
        raise ValueError(f"verify_grad: the cost is not finite at pt ({c0})")
    symbolic = [_host(g, var, backend) for g, var in zip(f_grad(*values), grads)]

    dtypes = [values[k].dtype.name for k in wrt_idx] + [cost.dtype]
    if abs_tol is None:
        abs_tol = max(TOLERANCE.get(d, 1e-4) for d in dtypes)
    if rel_tol is None:
        rel_tol = max(TOLERANCE.get(d, 1e-4) for d in dtypes)

    for k, sym_g in zip(wrt_idx, symbolic):
        x = values[k]
        if sym_g.shape != x.shape:
            raise AssertionError(f"verify_grad: the gradient of input {k} has shape {sym_g.shape}, "
                                 f"the input {x.shape}")
        step = EPS.get(x.dtype.name, 1e-6) if eps is None else eps
        parts = [("real", 1.0), ("imag", 1j)] if x.dtype.kind == "c" else [(None, 1.0)]
        for part, unit in parts:
            num = np.zeros(x.shape, dtype=np.float64)
            for i in np.ndindex(x.shape):
                plus = [v.copy() if j == k else v for j, v in enumerate(values)]
                minus = [v.copy() if j == k else v for j, v in enumerate(values)]
                if part is None:
                    base = float(x[i])
                    plus[k][i] = base + step
                    minus[k][i] = base - step
                    h = float(plus[k][i]) - float(minus[k][i])
                else:
                    base = complex(x[i])
                    plus[k][i] = base + step * unit
                    minus[k][i] = base - step * unit
                    d = complex(plus[k][i]) - complex(minus[k][i])
                    h = d.imag if part == "imag" else d.real
                if h == 0:
                    raise ValueError(f"verify_grad: eps={step!r} is too small for {x.dtype} at pt[{k}] entry {i} "
                                     f"(x + eps == x - eps there): use a larger eps")
                num[i] = (cost_at(plus) - cost_at(minus)) / h
            sym = sym_g.imag if part == "imag" else sym_g.real
            _compare(k, part, np.asarray(sym, dtype=np.float64), num, abs_tol, rel_tol, x)


def _host(value, var, backend):
    """A NumPy array of ``value``, a function output of ``backend`` for variable ``var``: the
    backend's ``output_filter`` (a GPU backend's values are on the device), then the host."""
    from .linker import get_linker
    import uma
    a = uma.asarray(get_linker(backend).output_filter(value, var.type))
    return np.asarray(a if a.device == uma.Device("cpu") else a.to_device("cpu"))


def _compare(k, part, sym_g, num, abs_tol, rel_tol, x):
    abs_err = np.abs(sym_g - num)
    with np.errstate(all="ignore"):
        denom = np.abs(sym_g) + np.abs(num)
        rel_err = np.where(denom > 0, abs_err / np.where(denom > 0, denom, 1), 0.0)
    bad = (abs_err > abs_tol) & (rel_err > rel_tol)
    bad |= ~np.isfinite(sym_g) | ~np.isfinite(num)
    if bad.any():
        with np.errstate(all="ignore"):
            badness = np.where(bad, np.minimum(abs_err / abs_tol, rel_err / rel_tol), -1.0)
        badness = np.where(np.isnan(badness), np.inf, badness)
        w = np.unravel_index(int(np.argmax(badness)), x.shape) if x.ndim else ()
        raise GradientError(k, tuple(int(j) for j in w), float(sym_g[w]), float(num[w]),
                            float(abs_err[w]), float(rel_err[w]), abs_tol, rel_tol,
                            int(bad.sum()), x.size, x.shape, x.dtype.name, part)
