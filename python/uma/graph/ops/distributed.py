"""Collectives across processes in a graph: ``all_reduce``, ``all_gather``, ``reduce_scatter``
(over :mod:`uma.distributed`, MPI through mpi4py) and ``all_reduce_bucket``, the bucketed
all-reduce of a list of gradients that a data-parallel training step uses.

The ops run on every host backend (``reference``, ``cpu``, ``numpy``) through their reference
``perform`` (the ``cpu`` linker runs them in Python between Program segments). They are never
constant-folded (a collective runs when the function is called, on every rank). Every rank must
call the compiled function the same number of times in the same order, as with MPI itself.

Before the collective the ranks' (dtype, shape) signatures are compared (one small
MPI_Allgather; :func:`uma.distributed.check_same`) and a mismatch raises
:class:`uma.distributed.CollectiveMismatch` on every rank. When the input's static shape is fully
known (every axis an int) the signature cannot change between calls, so it is checked on the
first call of the op only.

Gradients: ``all_reduce`` sum -> the sum all-reduce of the gradient, mean -> its mean
all-reduce (every rank's cost depends on the reduced value); ``max``/``min``: none
(``NotImplementedError``). ``all_gather`` -> ``reduce_scatter`` (sum) of the gradient and
``reduce_scatter`` -> ``all_gather`` of the gradient.
"""
from __future__ import annotations

import builtins as _b

from ..basic import Op, as_variable
from ..type import TensorType

_OPS = ("sum", "mean", "max", "min")


def _dist():
    from ... import distributed
    return distributed


class _Collective:
    """Mixin of the collective ops (not an op itself)."""

    foldable = False  # a collective runs at call time on every rank, never at compile time

    def _check(self, node, x, **kw):
        """The signature check: every call, or the first only when the input's shape is static."""
        static = _b.all(d is not None for d in node.inputs[0].type.shape)
        checked = self.__dict__.setdefault("_checked", set())
        if static and self.name in checked:
            return
        _dist().check_same(self.name, x, **kw)
        if static:
            checked.add(self.name)


class AllReduce(_Collective, Op):
    """The elementwise ``op`` (sum, mean, max, min) of input 0 over every process
    (MPI_Allreduce through :func:`uma.distributed.all_reduce`); same dtype and shape."""

    name = "all_reduce"
    props = ("op",)

    def __init__(self, op="sum"):
        if op not in _OPS:
            raise ValueError(f"all_reduce: op must be one of {_OPS}, got {op!r}")
        self.op = op

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype, x.shape)]

    def perform(self, node, values):
        self._check(node, values[0], op=self.op)
        return [_dist().all_reduce(values[0], self.op, check=False)]

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None]
        if self.op in ("max", "min"):
            raise NotImplementedError(f"all_reduce: op={self.op!r} has no gradient")
        return [AllReduce(self.op)(g)]


class AllGather(_Collective, Op):
    """Every process's input 0 stacked along a new leading axis in rank order
    (MPI_Allgather): shape ``(world_size,) + x.shape``; ``world_size`` is fixed when the graph
    is built."""

    name = "all_gather"
    props = ("world_size",)

    def __init__(self, world_size):
        self.world_size = int(world_size)

    def output_types(self, inputs):
        (x,) = inputs
        return [TensorType(x.dtype, (self.world_size,) + tuple(x.shape))]

    def perform(self, node, values):
        _check_world(self)
        self._check(node, values[0])
        return [_dist().all_gather(values[0], check=False)]

    def infer_shape(self, node, shapes):
        return [(self.world_size,) + tuple(shapes[0])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None]
        x = node.inputs[0]
        return [reshape_like(ReduceScatter("sum", self.world_size)(g), x)]


class ReduceScatter(_Collective, Op):
    """The elementwise ``op`` of input 0 over every process, split along axis 0 into
    ``world_size`` blocks; process r gets block r (MPI_Reduce_scatter_block): shape
    ``(x.shape[0] // world_size,) + x.shape[1:]``."""

    name = "reduce_scatter"
    props = ("op", "world_size")

    def __init__(self, op, world_size):
        if op not in _OPS:
            raise ValueError(f"reduce_scatter: op must be one of {_OPS}, got {op!r}")
        self.op, self.world_size = op, int(world_size)

    def output_types(self, inputs):
        (x,) = inputs
        if x.ndim == 0:
            raise ValueError("reduce_scatter: needs at least 1 dimension")
        n = x.shape[0]
        if n is not None and n % self.world_size:
            raise ValueError(f"reduce_scatter: axis 0 of length {n} is not divisible by the "
                             f"world size {self.world_size}")
        return [TensorType(x.dtype, (None if n is None else n // self.world_size,) + tuple(x.shape[1:]))]

    def perform(self, node, values):
        _check_world(self)
        self._check(node, values[0], op=self.op)
        return [_dist().reduce_scatter(values[0], self.op, check=False)]

    def infer_shape(self, node, shapes):
        n = shapes[0][0]
        if n % self.world_size:
            raise ValueError(f"reduce_scatter: axis 0 of length {n} is not divisible by the "
                             f"world size {self.world_size}")
        return [(n // self.world_size,) + tuple(shapes[0][1:])]

    def grad(self, node, output_grads):
        (g,) = output_grads
        if g is None:
            return [None]
        if self.op in ("max", "min"):
            raise NotImplementedError(f"reduce_scatter: op={self.op!r} has no gradient")
        x = node.inputs[0]
        gathered = AllGather(self.world_size)(g)  # (W, n / W, ...) -> x's shape
        if self.op == "mean":
            gathered = gathered / self.world_size
        return [reshape_like(gathered, x)]


def _check_world(op):
    n = _dist().world_size()
    if n != op.world_size:
        raise RuntimeError(f"{op.name}: the graph was built for {op.world_size} processes, "
                           f"this world has {n}")


def all_reduce(x, op="sum"):
    """``op`` (``"sum"``, ``"mean"``, ``"max"``, ``"min"``) of ``x`` over every process, on
    every process (MPI_Allreduce): ``x``'s dtype and shape. Dtypes as
    :func:`uma.distributed.all_reduce` (``TypeError`` at call time otherwise). Differentiable
    for sum and mean (the gradient is the same all-reduce of the gradient)."""
    return AllReduce(op)(as_variable(x))


def all_gather(x):
    """Every process's ``x`` stacked in rank order: shape ``(world_size,) + x.shape``
    (MPI_Allgather; the world size is read when the graph is built, :func:`uma.distributed.init`).
    Every rank must pass the same shape. Gradient: ``reduce_scatter`` (sum) of the gradient."""
    return AllGather(_dist().world_size())(as_variable(x))


def reduce_scatter(x, op="sum"):
    """``op`` of ``x`` over every process, split into ``world_size`` blocks along axis 0;
    process r gets block r (MPI_Reduce_scatter_block). ``ValueError`` when axis 0 is not
    divisible by the world size. Gradient (sum, mean): ``all_gather`` of the gradient."""
    return ReduceScatter(op, _dist().world_size())(as_variable(x))


def all_reduce_bucket(xs, op="mean"):
    """One all-reduce for a list of arrays of one dtype, as DDP buckets gradients: the
    flattened arrays are concatenated into one flat buffer, all-reduced once (``op``) and split
    back into arrays of the inputs' shapes. Returns the list of reduced arrays.

    Every input needs a static shape (each axis an int: a gradient of a shared variable built
    with ``shape=``, or a shape the graph knows) or a ``shape`` read from a shared variable:
    pass ``(variable, shape)`` pairs to give it. ``TypeError`` for mixed dtypes;
    ``ValueError`` for an unknown shape."""
    vs, shapes = [], []
    for item in xs:
        if isinstance(item, tuple):
            v, shape = as_variable(item[0]), tuple(int(d) for d in item[1])
        else:
            v = as_variable(item)
            shape = v.type.shape
            if _b.any(d is None for d in shape):
                raise ValueError(f"all_reduce_bucket: the shape of {v} is not static ({shape}); "
                                 "pass (variable, shape)")
        vs.append(v)
        shapes.append(tuple(shape))
    if not vs:
        return []
    dtypes = {v.dtype for v in vs}
    if len(dtypes) != 1:
        raise TypeError(f"all_reduce_bucket: the arrays must share one dtype, got {sorted(dtypes)}")
    sizes = [_prod(s) for s in shapes]
    flat = concatenate([reshape(v, (n,)) for v, n in zip(vs, sizes)], axis=0)
    reduced = all_reduce(flat, op)
    out, start = [], 0
    for n, s in zip(sizes, shapes):
        out.append(reshape(getitem(reduced, (slice(start, start + n),)), s))
        start += n
    return out


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# The other op modules' names, used only when a graph is built (imported last: the op modules use
# one another).
from .indexing import getitem  # noqa: E402
from .join import concatenate  # noqa: E402
from .shape import ReshapeLike, reshape  # noqa: E402


def reshape_like(g, x):
    return ReshapeLike()(g, x)
