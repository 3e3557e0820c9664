"""Reading by index: basic indexing (:func:`getitem`: ints, slices, None, ...; a view), integer
arrays (:func:`take`) and bool masks (:class:`MaskSelect`), with their gradients.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Constant, Op, Variable, as_variable
from ..type import TensorType, kind_of
from ..._array_api import _take_along_axis_axis, _take_along_axis_shape
from ._common import _bcast_runtime, _diff, _k, _norm_axis, _uma


def _norm_index(index, shape):
    """A basic index of an array of static ``shape`` as a tuple of int / slice / None, with
    Ellipsis expanded; the index's errors are the core's rule's (``uma._core._result_shape``)."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for it in index:
        if isinstance(it, Variable):
            raise TypeError("getitem: symbolic indices are not supported (only basic indexing with "
                            "ints, slices, None and ...)")
        if it is None or it is Ellipsis:
            items.append(it)
        elif isinstance(it, slice):
            parts = []
            for p in (it.start, it.stop, it.step):
                if p is None:
                    parts.append(None)
                elif isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
                    parts.append(int(p))
                else:
                    raise IndexError(f"getitem: slice indices must be integers or None, got {p!r}")
            items.append(slice(*parts))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            items.append(int(it))
        else:
            raise IndexError(f"getitem: only integers, slices, None and ... are valid indices "
                             f"(basic indexing), got {it!r}")
    _core._result_shape("getitem", shape, index=tuple(items))
    consumed = _b.sum(1 for it in items if it is not None and it is not Ellipsis)
    ndim = len(shape)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (ndim - consumed)
    else:
        items += [slice(None)] * (ndim - consumed)
    return tuple(items)


class GetItem(Op):
    """``x[index]`` for a basic index (``index``: a tuple of ints, slices, None and Ellipsis;
    a view)."""

    name = "getitem"
    props = ("index",)
    view_of = {0: 0}

    def __init__(self, index):
        self.index = index

    def output_types(self, inputs):
        x = inputs[0]
        return [TensorType(x.dtype, _core._result_shape("getitem", x.shape, index=self.index))]

    def perform(self, node, values):
        return [values[0][self.index]]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("getitem", shapes[0], index=self.index)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x = node.inputs[0]
        if g is None or not _diff(x.dtype):
            return [None]
        return [GetItemGrad(self.index)(g, x)]


class GetItemGrad(Op):
    """zeros like input 1 with input 0 written at ``index`` (gradient of getitem; reference only)."""

    name = "getitem_grad"
    props = ("index",)

    def __init__(self, index):
        self.index = index

    def output_types(self, inputs):
        g, x = inputs
        return [TensorType(x.dtype, _core._result_shape("getitem_grad", g.shape, x.shape, index=self.index))]

    def perform(self, node, values):
        g, x = values
        # on x's device (a cuda linker's values stay on the GPU)
        z = _k().zeros(tuple(x.shape), dtype=node.outputs[0].dtype, device=getattr(x, "device", None))
        z[self.index] = g
        return [z]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("getitem_grad", *shapes, index=self.index)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        return [None if g is None else getitem(g, self.index), None]


def getitem(a, index):
    """Basic indexing ``a[index]`` (ints, slices with any step, None, ...): a view. Advanced
    indices: one integer array (list, array or integer Variable) with only full slices around
    it (``a[idx]``, ``a[:, idx]``: :func:`take` along that axis) or a bool mask over the leading
    axes (``a[mask]``: shape ``(count,) + a.shape[mask.ndim:]``).

    ``IndexError`` for an out-of-range int (when the length is static), too many indices or
    a non-basic index; ``TypeError`` for a symbolic index."""
    a = as_variable(a)
    adv = _split_advanced("getitem", index, a.ndim)
    if adv is not None:  # x[int_array], x[:, int_array], x[mask]
        kind, axis, v = adv
        return MaskSelect()(a, v) if kind == "mask" else Take(axis)(a, v)
    idx = _norm_index(index, a.shape)
    if _b.all(isinstance(it, slice) and it == slice(None) for it in idx):
        return a
    return GetItem(idx)(a)


def _index_var(opname, idx):
    if isinstance(idx, (list, tuple)) and len(idx) == 0:
        return Constant(np.zeros(0, np.int64))
    v = as_variable(idx)
    if kind_of(v.dtype) not in "iub":
        if isinstance(idx, (list, tuple)) and len(idx) == 0:
            return Constant(np.zeros(0, np.int64))
        raise IndexError(f"{opname}: arrays used as indices must be of integer (or boolean) type, got {v.dtype}")
    return v


def _is_index_array(it):
    if isinstance(it, Variable):
        return it.ndim > 0 or kind_of(it.dtype) == "b"
    if isinstance(it, list):
        return True
    if isinstance(it, (bool, int, slice, type(None), type(Ellipsis), np.integer, np.bool_)):
        return False
    return getattr(it, "ndim", 0) > 0


def _split_advanced(opname, index, ndim):
    """None for a basic index; else ("take", axis, indices) or ("mask", None, mask) for one
    integer/bool array with nothing but full slices around it. ``IndexError`` otherwise."""
    items = index if isinstance(index, tuple) else (index,)
    pos = [k for k, it in enumerate(items) if _is_index_array(it)]
    if not pos:
        return None
    full = slice(None)
    if len(pos) > 1 or _b.any(k != pos[0] and not (isinstance(it, slice) and it == full)
                               for k, it in enumerate(items)):
        raise IndexError(f"{opname}: only one integer or boolean array, with nothing but full slices (':') "
                         f"before and after it (x[idx], x[:, idx], x[mask]), is supported as an advanced index")
    k = pos[0]
    v = _index_var(opname, items[k])
    if v.dtype == "bool":
        if k != 0:
            raise IndexError(f"{opname}: a boolean mask is supported as the first index only (x[mask])")
        return ("mask", None, v)
    if k >= ndim:
        raise IndexError(f"{opname}: too many indices for array: array is {ndim}-dimensional, but {k + 1} "
                         f"were indexed")
    return ("take", k, v)


class Take(Op):
    """np.take along ``axis`` (None: of the flattened array) at integer indices (input 1)."""

    name = "take"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        x, idx = inputs
        if kind_of(idx.dtype) not in "iu":
            raise TypeError(f"take: indices must be integers, got dtype {idx.dtype}")
        return [TensorType(x.dtype, _core._result_shape("take", x.shape, idx.shape, axis=self.axis))]

    def perform(self, node, values):
        return [_k().take(values[0], values[1], axis=self.axis)]

    def infer_shape(self, node, shapes):
        return [_core._result_shape("take", *shapes, axis=self.axis)]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, idx = node.inputs
        if g is None or not _diff(x.dtype):
            return [None, None]
        g = _to_dtype(g, x.dtype)
        if self.axis is None:
            flat = reshape(x, (-1,))
            return [_reshape_like(UpdateSubtensor("take", True, 0)(zeros_like(flat), g, idx), x), None]
        return [UpdateSubtensor("take", True, self.axis)(zeros_like(x), g, idx), None]


def take(a, indices, axis=None):
    """np.take: elements of ``a`` at integer ``indices`` along ``axis`` (None: of the flattened
    array); shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``. ``IndexError`` (when
    the function runs) naming an out-of-bounds index. Gradient: scatter-add (np.add.at)."""
    a = as_variable(a)
    idx = _index_var("take", indices)
    ax = None if axis is None else _norm_axis("take", axis, a.ndim)
    return Take(ax)(a, idx)


class TakeAlongAxis(Op):
    """Elements of input 0 at the integer positions of input 1 along ``axis`` (Array API
    standard, take_along_axis): the eager function's checks, result shape
    (``uma._array_api._take_along_axis_shape``), negative positions and IndexError; input 0's
    dtype. Gradient: ``g`` added back at the positions read (:func:`_put_along_axis`)."""

    name = "take_along_axis"
    props = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def output_types(self, inputs):
        x, idx = inputs
        _take_along_axis_axis(x.ndim, idx.ndim, idx.dtype, kind_of(idx.dtype), self.axis, idx.shape, x.shape)
        return [TensorType(x.dtype, _take_along_axis_shape(x.shape, idx.shape, self.axis))]

    def perform(self, node, values):
        self.infer_shape(node, [tuple(v.shape) for v in values])  # PyTensor's broadcasting rule
        return [_uma().take_along_axis(values[0], values[1], axis=self.axis)]

    def infer_shape(self, node, shapes):
        a = self.axis
        static = [tuple(i.shape[:a]) + tuple(i.shape[a + 1:]) for i in node.inputs]
        return [_take_along_axis_shape(shapes[0], shapes[1], a,
                                       lambda xs, js: _bcast_runtime("take_along_axis", static, [xs, js]))]

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, idx = node.inputs
        if g is None or not _diff(x.dtype):
            return [None, None]
        return [_put_along_axis(x, idx, _to_dtype(g, x.dtype), self.axis), None]


def _put_along_axis(x, idx, g, axis):
    """The gradient of ``take_along_axis(x, idx, axis)`` for the output gradient ``g``: zeros of
    x's shape with each ``g`` element added at the position of ``x`` it was read from (repeated
    positions accumulate; summed over the axes along which x was broadcast). A graph of existing
    ops: the positions of the broadcast (batch, n) array flattened, one ``inc_subtensor`` into
    it (np.add.at), so it has gradients of its own."""
    from .compose import _length, _positions, moveaxis
    gm, xm = moveaxis(g, axis, -1), moveaxis(x, axis, -1)
    im = moveaxis(idx, axis, -1)
    im = astype(where(zeros_like(gm, dtype="bool"), im, im), "int64")  # broadcast to g's shape
    n, k = _length(xm, xm.ndim - 1), _length(gm, gm.ndim - 1)
    im = where(less(im, 0), im + n, im)
    flat_g = reshape(gm, (-1,))
    rows = floor_divide(_positions(flat_g, 0), k)  # the batch row of each element of g
    full = zeros_like(xm) + expand_dims(sum(zeros_like(gm), axis=-1), -1)  # (batch, n)
    acc = UpdateSubtensor("take", True, 0)(reshape(full, (-1,)), flat_g, rows * n + reshape(im, (-1,)))
    return moveaxis(_unbroadcast(_reshape_like(acc, full), xm), -1, axis)


def take_along_axis(x, indices, /, *, axis=-1):
    """Elements of ``x`` at ``indices`` along ``axis`` (Array API standard, take_along_axis; the
    eager ``uma.take_along_axis``): ``indices`` an integer array of ``x``'s ndim whose lengths
    off ``axis`` broadcast with ``x``'s (PyTensor's rule: only static length-1 axes broadcast);
    the result has the broadcast shape with ``indices``' length along ``axis`` and ``x``'s
    dtype. Negative indices count from the end. TypeError (non-integer indices), ValueError
    (ranks or lengths that differ) and AxisError when the graph is built; IndexError naming an
    index out of range when the function runs. Gradient: ``g`` added back at the positions read
    (repeated positions accumulate), as ``take``'s scatter-add."""
    x, idx = as_variable(x), as_variable(indices)
    a = _take_along_axis_axis(x.ndim, idx.ndim, idx.dtype, kind_of(idx.dtype), axis, idx.shape, x.shape)
    return TakeAlongAxis(a)(x, idx)


class MaskSelect(Op):
    """``x[mask]`` for a bool mask over x's leading axes: shape (count,) + x.shape[mask.ndim:]."""

    name = "mask_select"
    error_name = "getitem"  # x[mask]: its errors name the indexing, as ops::mask_select's do

    def output_types(self, inputs):
        x, m = inputs
        if m.dtype != "bool":
            raise TypeError(f"getitem: a boolean mask must have dtype bool, got {m.dtype}")
        return [TensorType(x.dtype, _core._result_shape("mask_select", x.shape, m.shape))]

    def perform(self, node, values):
        return [values[0][values[1]]]

    def infer_shape(self, node, shapes):
        raise NotImplementedError("mask_select: the result's length depends on the mask's values")

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, m = node.inputs
        if g is None or not _diff(x.dtype):
            return [None, None]
        return [UpdateSubtensor("mask", True, None)(zeros_like(x), _to_dtype(g, x.dtype), m), None]


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .convert import _to_dtype, astype  # noqa: E402
from .creation import zeros_like  # noqa: E402
from .shape import _reshape_like, _unbroadcast, expand_dims, reshape  # noqa: E402
from .reduce import sum  # noqa: E402
from .subtensor import UpdateSubtensor  # noqa: E402
from .select import where  # noqa: E402
from .elemwise import FUNCTIONS as _ELEMWISE  # noqa: E402

less, floor_divide = _ELEMWISE["less"], _ELEMWISE["floor_divide"]
