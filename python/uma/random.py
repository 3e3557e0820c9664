"""uma.random — shared random streams for compiled functions.

::

    rs = uma.random.RandomStream(seed=0)
    noise = rs.normal(0.0, 1.0, size=(3,))      # a symbolic variable
    f = uma.function([], noise)                 # gets the update that advances rs.state
    f(), f()                                    # two calls, different draws
    rs.seed(0)                                  # (or rs.state.set_value(...)): f starts over

**State.** ``rs.state`` is a shared variable: a uint64 vector ``[key0, key1, step]``. The key
comes from the seed (``numpy.random.SeedSequence(seed).generate_state(2, uint64)``); ``step``
counts the calls that advanced the stream. Every function that draws from ``rs`` gets the
update ``state -> state with step + 1`` automatically (the state's ``default_update``);
``uma.function(..., no_default_updates=True)`` turns that off, and such a function gives the
same draws on every call. The state is read at every call, so reseeding (:meth:`RandomStream.seed`
or ``rs.state.set_value``) takes effect in functions compiled earlier.

**Draws are counter-based** (Philox). Draw number ``j`` of a stream (the ``j``-th variable
made by its methods) at step ``s`` is computed by ``numpy.random.Generator(
numpy.random.Philox(key=[key0, key1], counter=[0, j, s, 0]))``: a pure function of the state
and ``j``, so the same seed gives the same draws on every backend (each linker evaluates this
function — the ``numpy`` linker directly, ``reference``/``cpu`` on zero-copy views), two draws
of one function are independent, and calls never repeat a counter. The methods' parameters
may be symbolic; ``size`` (an int or a tuple of ints) fixes the shape, otherwise the
parameters' broadcast shape (NumPy broadcasting) is used.

**Gradients.** A draw whose parameters do not depend on a ``wrt`` is a constant for
``uma.grad``. There is no gradient through a draw to its float parameters: ``uma.grad``
raises ``NotImplementedError`` naming the draw and the parameter when a ``wrt`` reaches one
(also with ``disconnected_inputs="zero"``); write the draw reparameterized instead, e.g.
``loc + scale * rs.normal(0.0, 1.0, size)``. Integer-valued draws (``bernoulli``, ``integers``,
``choice`` of integers) carry no gradient, as any integer value.
"""
from __future__ import annotations

import numpy as np

from .graph.basic import Constant, Op, Variable, as_variable, is_python_scalar
from .graph.gradient import grad_undefined
from .graph.type import TensorType, dtype_name, is_float, kind_of

__all__ = ["RandomStream", "RandomVariable", "AdvanceState", "seed_state", "philox_generator"]


def _uma():
    import uma
    return uma


def seed_state(seed) -> np.ndarray:
    """The state ``[key0, key1, 0]`` (uint64) of a stream seeded with ``seed`` (an int >= 0,
    a sequence of them, or None for fresh entropy). ``TypeError``/``ValueError`` as
    ``numpy.random.SeedSequence``."""
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"seed must be an int, got {seed!r}")
    key = np.random.SeedSequence(seed).generate_state(2, np.uint64)
    return np.array([key[0], key[1], 0], dtype=np.uint64)


def _check_state(state):
    s = np.asarray(state)
    if s.dtype != np.uint64 or s.shape != (3,):
        raise ValueError(f"random state must be a uint64 vector [key0, key1, step], got {s.dtype} {s.shape}")
    return s


def philox_generator(state, draw: int) -> np.random.Generator:
    """The NumPy generator of draw ``draw`` at ``state`` (see the module documentation)."""
    s = _check_state(state)
    counter = np.array([0, draw, s[2], 0], dtype=np.uint64)
    return np.random.Generator(np.random.Philox(key=s[:2].copy(), counter=counter))


# ======================================================================================
# ops
# ======================================================================================

class AdvanceState(Op):
    """``state -> state`` with ``step + 1`` (the default update of a stream's state)."""

    name = "random_advance"
    foldable = False

    def output_types(self, inputs):
        (s,) = inputs
        if s.dtype != "uint64" or s.ndim != 1:
            raise TypeError(f"random_advance: expects a uint64 vector state, got {s.type}")
        return [s.type]

    def compute(self, node, values):
        """The op on NumPy arrays (its definition; ``perform`` wraps it for ``uma.Array`` s)."""
        s = _check_state(values[0]).copy()
        s[2] += np.uint64(1)  # wraps after 2**64 calls
        return [s]

    def perform(self, node, values):
        uma = _uma()
        return [uma.asarray(r) for r in self.compute(node, [np.asarray(v) for v in values])]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def grad(self, node, output_grads):
        return [None]


def _bcast(shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


class RandomVariable(Op):
    """Draw number ``draw`` of a stream: inputs ``(state, *params)``, one output.

    ``dist``: uniform(low, high), normal(loc, scale), bernoulli(p), integers(low, high),
    choice(a) (``replace`` in ``replace``); ``size``: a tuple of ints or None (the params'
    broadcast shape); ``dtype``: the output dtype.
    """

    props = ("name", "draw", "size", "dtype", "replace")
    names = tuple(f"random_{d}" for d in ("uniform", "normal", "bernoulli", "integers", "choice"))
    foldable = False

    def __init__(self, dist, draw, size, dtype, replace=True):
        self.name = f"random_{dist}"
        self.dist = dist
        self.draw = draw
        self.size = size
        self.dtype = dtype
        self.replace = replace

    def __str__(self):
        size = "" if self.size is None else f", size={self.size}"
        return f"{self.name}{{draw={self.draw}{size}, {self.dtype}}}"

    __repr__ = __str__

    def output_types(self, inputs):
        state, params = inputs[0], inputs[1:]
        if state.dtype != "uint64" or state.ndim != 1:
            raise TypeError(f"{self.name}: the state must be a uint64 vector, got {state.type}")
        if self.dist == "choice":
            (a,) = params
            if a.ndim != 1:
                raise ValueError(f"random_choice: a must be 1-d, got ndim {a.ndim}")
            shape = () if self.size is None else self.size
            if (not self.replace and a.shape[0] is not None
                    and int(np.prod(shape, dtype=np.int64)) > a.shape[0]):
                raise ValueError(f"random_choice: cannot take {int(np.prod(shape))} samples from {a.shape[0]} "
                                 f"without replacement")
            return [TensorType(self.dtype, shape)]
        if self.size is not None:
            for p in params:
                if p.ndim > len(self.size) or any(
                        d is not None and d != 1 and d != t
                        for d, t in zip(p.shape[::-1], self.size[::-1])):
                    raise ValueError(f"{self.name}: a parameter of shape {p.shape} does not broadcast to "
                                     f"size {self.size}")
            return [TensorType(self.dtype, self.size)]
        n = max((p.ndim for p in params), default=0)
        shape = []
        for ax in range(n):
            dims = [p.shape[ax - n + p.ndim] for p in params if ax - n + p.ndim >= 0]
            known = {d for d in dims if d is not None and d != 1}
            if len(known) > 1:
                raise ValueError(f"{self.name}: parameters of shapes {[p.shape for p in params]} do not broadcast")
            shape.append(known.pop() if known else (None if None in dims else 1))
        return [TensorType(self.dtype, tuple(shape))]

    def infer_shape(self, node, shapes):
        state, params = shapes[0], shapes[1:]
        if self.dist == "choice":
            n = params[0][0]
            shape = () if self.size is None else self.size
            if self.replace and n == 0 and int(np.prod(shape, dtype=np.int64)) > 0:
                raise ValueError("random_choice: a must be non-empty")
            if not self.replace and int(np.prod(shape, dtype=np.int64)) > n:
                raise ValueError(f"random_choice: cannot take {int(np.prod(shape))} samples from {n} without "
                                 f"replacement")
            return [tuple(shape)]
        b = _bcast([tuple(p) for p in params])
        if b is None:
            raise ValueError(f"{self.name}: parameters of shapes {[tuple(p) for p in params]} do not broadcast")
        if self.size is None:
            return [b]
        if _bcast([b, self.size]) != tuple(self.size):
            raise ValueError(f"{self.name}: parameters of shape {b} do not broadcast to size {self.size}")
        return [tuple(self.size)]

    def compute(self, node, values):
        """The draw on NumPy arrays (its definition; ``perform`` wraps it for ``uma.Array`` s)."""
        state, params = values[0], [np.asarray(p) for p in values[1:]]
        gen = philox_generator(state, self.draw)
        size = self.size
        if size is None and self.dist != "choice":
            size = np.broadcast_shapes(*[p.shape for p in params])
        dt = np.dtype(self.dtype)
        d = self.dist
        if d == "uniform":
            low, high = params
            with np.errstate(all="ignore"):
                span = np.asarray(high, np.float64) - np.asarray(low, np.float64)
            if not np.isfinite(span).all() or not (span >= 0).all():
                bad = np.argmax(~(np.isfinite(span) & (span >= 0))) if span.ndim else ()
                lo, hi = np.broadcast_to(low, span.shape)[bad], np.broadcast_to(high, span.shape)[bad]
                raise ValueError(f"random_uniform: needs finite low <= high, got low={lo}, high={hi}")
            out = gen.uniform(low, high, size=size)
        elif d == "normal":
            loc, scale = params
            if (scale < 0).any():
                bad = np.asarray(scale)[np.asarray(scale) < 0].flat[0]
                raise ValueError(f"random_normal: scale must be >= 0, got {float(bad)!r}")
            out = gen.normal(loc, scale, size=size)
        elif d == "bernoulli":
            (p,) = params
            if not ((p >= 0) & (p <= 1)).all():
                bad = np.asarray(p)[~((p >= 0) & (p <= 1))].flat[0]
                raise ValueError(f"random_bernoulli: p must be in [0, 1], got {float(bad)!r}")
            out = gen.random(size=size) < p
        elif d == "integers":
            low, high = params
            if not (low < high).all():
                ok = np.asarray(low < high)
                at = np.unravel_index(np.argmin(ok), ok.shape) if ok.ndim else ()
                lo, hi = np.broadcast_to(low, ok.shape)[at], np.broadcast_to(high, ok.shape)[at]
                raise ValueError(f"random_integers: needs low < high, got low={int(lo)}, high={int(hi)}")
            out = gen.integers(low, high, size=size, dtype=np.int64)
        elif d == "choice":
            (a,) = params
            out = gen.choice(a, size=size if size is not None else None, replace=self.replace)
        else:  # pragma: no cover
            raise AssertionError(d)
        return [np.asarray(out).astype(dt, copy=False)]

    def perform(self, node, values):
        uma = _uma()
        outs = self.compute(node, [np.asarray(v) for v in values])
        return [uma.asarray(o) for o in outs]

    _params = {"uniform": ("low", "high"), "normal": ("loc", "scale"), "bernoulli": ("p",),
               "integers": ("low", "high"), "choice": ("a",)}
    _reparameterized = {
        "uniform": "write it reparameterized, low + (high - low) * rs.uniform(0.0, 1.0, size)",
        "normal": "write it reparameterized, loc + scale * rs.normal(0.0, 1.0, size)",
        "choice": "index a with sampled positions instead, a[rs.choice(len(a), size, replace)]",
    }

    def grad(self, node, output_grads):
        """None for the state, the integer parameters and every input of an integer-valued draw;
        :func:`~uma.graph.gradient.grad_undefined` for the float parameters of a float draw
        (``uma.grad`` raises ``NotImplementedError`` when a ``wrt`` reaches one)."""
        grads = [None] * len(node.inputs)
        if not is_float(node.outputs[0].dtype):
            return grads
        for k, (p, label) in enumerate(zip(node.inputs[1:], self._params[self.dist]), start=1):
            if is_float(p.dtype):
                grads[k] = grad_undefined(self.name, k, f"a random draw; {self._reparameterized[self.dist]}",
                                          input_name=label)
        return grads


# ======================================================================================
# the stream
# ======================================================================================

def _size(size, what):
    if size is None:
        return None
    if isinstance(size, Variable):
        raise TypeError(f"{what}: size must be an int or a tuple of ints (symbolic sizes are not supported)")
    if isinstance(size, (int, np.integer)) and not isinstance(size, (bool, np.bool_)):
        size = (size,)
    try:
        size = tuple(size)
    except TypeError:
        raise TypeError(f"{what}: size must be an int or a tuple of ints, got {size!r}") from None
    for d in size:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{what}: size entries must be ints, got {d!r}")
        if d < 0:
            raise ValueError(f"{what}: negative size {size}")
    size = tuple(int(d) for d in size)
    n = 1
    for d in size:
        n *= d
    if n * 8 > np.iinfo(np.int64).max:  # as np.empty: the bytes of the result must fit
        raise ValueError(f"{what}: size {size} is too big ({n} elements)")
    return size


def _param(value, dtype, what):
    """A parameter as a Variable: Python scalars become constants of ``dtype`` (weak)."""
    if is_python_scalar(value):
        if isinstance(value, complex) or (isinstance(value, float) and np.dtype(dtype).kind != "f"):
            raise TypeError(f"{what}: a Python {type(value).__name__} parameter where {dtype} is expected")
        try:
            return Constant(np.asarray(value, dtype=np.dtype(dtype)))
        except OverflowError:
            raise OverflowError(f"{what}: parameter {value} is out of range for {dtype}") from None
    v = as_variable(value)
    if v.dtype == "bool" or kind_of(v.dtype) not in "iuf":
        raise TypeError(f"{what}: parameters must be numbers, got dtype {v.dtype}")
    return v


def _float_dtype(dtype, params):
    if dtype is not None:
        dt = dtype_name(dtype)
        if dt not in ("float32", "float64"):
            raise TypeError(f"dtype must be float32 or float64, got {dt}")
        return dt
    strong = [p.dtype for p in params if isinstance(p, Variable)]
    return "float32" if strong and all(d == "float32" for d in strong) else "float64"


class RandomStream:
    """A stream of random draws for compiled functions; its state is the shared variable
    :attr:`state` (see the module documentation for the state layout and the Philox rule).

    ``seed``: an int >= 0 (or a sequence of them, or None for fresh entropy).
    Convention: PyTensor's ``RandomStream`` (one shared state here, advanced per call).
    """

    def __init__(self, seed=None):
        from .runtime.shared import shared
        self.state = shared(seed_state(seed), "random_state", shape=(3,))
        self.state.default_update = AdvanceState()(self.state)
        self._draws = 0

    def seed(self, seed):
        """Restart the stream from ``seed`` (sets :attr:`state`; functions compiled earlier
        use the new state at their next call)."""
        self.state.set_value(seed_state(seed))

    def _make(self, dist, params, size, dtype, replace=True):
        op = RandomVariable(dist, self._draws, size, dtype, replace)
        self._draws += 1
        return op(self.state, *params)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None):
        """Uniform on ``[low, high)`` (NumPy's ``Generator.uniform``): float64, or float32
        when every symbolic parameter is float32 (or ``dtype`` says). Shape ``size`` or the
        parameters' broadcast shape. ``ValueError`` at call time unless ``low <= high`` with
        ``high - low`` finite (naming the first offending pair); ``ValueError`` at once for a
        size whose float64 result would not fit in memory addressing (NumPy's limit)."""
        size = _size(size, "uniform")
        ps = [_param(low, "float64", "uniform"), _param(high, "float64", "uniform")]
        return self._make("uniform", ps, size, _float_dtype(dtype, [low, high]))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None):
        """Normal with mean ``loc`` and standard deviation ``scale`` (>= 0, else
        ``ValueError`` at call time); dtype and shape as :meth:`uniform`."""
        size = _size(size, "normal")
        ps = [_param(loc, "float64", "normal"), _param(scale, "float64", "normal")]
        return self._make("normal", ps, size, _float_dtype(dtype, [loc, scale]))

    def bernoulli(self, p=0.5, size=None):
        """1 with probability ``p`` (in [0, 1], else ``ValueError`` at call time), else 0;
        int64 (PyTensor's dtype)."""
        size = _size(size, "bernoulli")
        return self._make("bernoulli", [_param(p, "float64", "bernoulli")], size, "int64")

    def integers(self, low, high=None, size=None):
        """Integers in ``[low, high)`` (``[0, low)`` when ``high`` is None), int64
        (NumPy's ``Generator.integers``: unbiased). ``ValueError`` at call time unless
        ``low < high``; ``TypeError`` for float parameters; ``OverflowError`` for a Python int
        parameter outside int64."""
        size = _size(size, "integers")
        if high is None:
            low, high = 0, low
        ps = [_param(low, "int64", "integers"), _param(high, "int64", "integers")]
        for p in ps:
            if kind_of(p.dtype) not in "iu":
                raise TypeError(f"integers: low and high must be integers, got {p.dtype}")
        return self._make("integers", ps, size, "int64")

    def choice(self, a, size=None, replace=True):
        """Samples of ``a`` (an int ``n`` means ``arange(n)``; else a 1-d array or symbolic
        vector), with or without replacement (NumPy's ``Generator.choice``); dtype of ``a``
        (int64 for an int). Shape ``size`` (None: a single 0-d sample). ``ValueError`` when
        more samples than entries are asked for without replacement (at build time when the
        lengths are static, else at call time)."""
        size = _size(size, "choice")
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            if a < 0:
                raise ValueError(f"choice: a must be >= 0, got {a}")
            a = Constant(np.arange(int(a), dtype=np.int64))
        else:
            a = as_variable(a)
        if a.ndim != 1:
            raise ValueError(f"choice: a must be 1-d (or an int), got ndim {a.ndim}")
        if a.dtype == "bool" or (not is_float(a.dtype) and kind_of(a.dtype) not in "iu"):
            raise TypeError(f"choice: a must hold numbers, got {a.dtype}")
        return self._make("choice", [a], size, a.dtype, bool(replace))

    def __repr__(self):
        return f"RandomStream(state={self.state.get_value().tolist()})"
