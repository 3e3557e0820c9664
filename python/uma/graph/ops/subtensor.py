"""Functional updates (PyTensor's ``set_subtensor`` and ``inc_subtensor``): a new variable equal to
``x`` with a basic, integer-array or mask region replaced or incremented.
"""
from __future__ import annotations

import builtins as _b

import numpy as np

from ... import _core
from ..basic import Constant, Op, Variable, as_variable, is_python_scalar
from ..type import TensorType, _fmt_shape, np_dtype
from ._common import _diff, _k, _uma, _weak_constant


class UpdateSubtensor(Op):
    """Functional update of ``x`` (input 0) at an index by ``y`` (input 1): ``kind`` "basic"
    (``index`` a normalised basic index), "take" (``index`` the axis; input 2 the integer
    indices) or "mask" (input 2 the bool mask); ``inc`` adds (np.add.at) instead of setting."""

    props = ("kind", "inc", "index")
    names = ("set_subtensor", "inc_subtensor")

    def __init__(self, kind, inc, index):
        self.kind, self.inc, self.index = kind, inc, index
        self.name = "inc_subtensor" if inc else "set_subtensor"

    def output_types(self, inputs):
        x, y = inputs[0], inputs[1]
        if not _uma().can_cast(y.dtype, x.dtype, "same_kind"):
            raise TypeError(f"{self.name}: cannot cast the update of dtype {y.dtype} to the array's dtype "
                            f"{x.dtype} with casting rule 'same_kind'")
        return [TensorType(x.dtype, x.shape)]

    def perform(self, node, values):
        x, y = values[0], values[1]
        u = _k()
        fn = u.inc_subtensor if self.inc else u.set_subtensor
        if self.kind == "basic":
            return [fn(x, self.index, y)]
        if self.kind == "mask":
            return [fn(x, values[2], y)]
        return [fn(x, (slice(None),) * self.index + (values[2],), y)]

    def infer_shape(self, node, shapes):
        self._check_value_broadcast(node, shapes)
        return [tuple(shapes[0])]

    def _check_value_broadcast(self, node, shapes):
        """``y`` may be broadcast to the region only along the axes its type declares as
        length 1 (PyTensor convention: only static length-1 axes broadcast; y's gradient is
        summed over those axes alone): ``ValueError`` naming y's run-time shape and type, the
        region's shape and the axis. A mask's region has a length known only from the mask's
        values (its count): that axis is not checked here."""
        xs, ys = tuple(shapes[0]), tuple(shapes[1])
        if self.kind == "basic":
            region = _core._result_shape("getitem", xs, index=self.index)
        elif self.kind == "take":
            region = _core._result_shape("take", xs, tuple(shapes[2]), axis=self.index)
        else:
            region = (None,) + xs[len(shapes[2]):]
        static = node.inputs[1].shape
        for j in range(_b.min(len(ys), len(region))):
            yj, rj = ys[-1 - j], region[-1 - j]
            if yj == 1 and rj is not None and rj != 1 and static[-1 - j] != 1:
                raise ValueError(
                    f"{self.name}: the value has run-time shape {ys} and would be broadcast along its "
                    f"axis {len(ys) - 1 - j} to the region's shape {tuple(region)}, but its type "
                    f"{_fmt_shape(static)} does not declare that axis as length 1 (PyTensor convention: only "
                    f"static length-1 axes broadcast)")

    def _read(self, v, node):
        if self.kind == "basic":
            return getitem(v, self.index)
        if self.kind == "take":
            return Take(self.index)(v, node.inputs[2])
        return MaskSelect()(v, node.inputs[2])

    def grad(self, node, output_grads):
        (g,) = output_grads
        x, y = node.inputs[0], node.inputs[1]
        rest = [None] * (len(node.inputs) - 2)
        if g is None:
            return [None, None] + rest
        gx = gy = None
        if _diff(x.dtype):
            gx = g if self.inc else UpdateSubtensor(self.kind, False, self.index)(
                g, Constant(np.zeros((), dtype=np.float16)), *node.inputs[2:])
        if _diff(y.dtype):
            gy = self._read(g, node)
            gy = _unbroadcast(gy, y)
        return [gx, gy] + rest


def _update(name, inc, args):
    if len(args) == 2:  # PyTensor's form: set_subtensor(x[index], y)
        sub, y = args
        if not isinstance(sub, Variable) or sub.owner is None or not isinstance(
                sub.owner.op, (GetItem, Take, MaskSelect)):
            raise TypeError(f"{name}: the two-argument form needs a symbolic subtensor x[index] as its first "
                            f"argument (PyTensor's convention); use {name}(x, index, y) otherwise")
        op = sub.owner.op
        if isinstance(op, GetItem):
            x, kind, index, extra = sub.owner.inputs[0], "basic", op.index, []
        elif isinstance(op, Take):
            if op.axis is None:
                raise TypeError(f"{name}: take(x, idx) without an axis cannot be updated; use x[idx]")
            x, kind, index, extra = sub.owner.inputs[0], "take", op.axis, [sub.owner.inputs[1]]
        else:
            x, kind, index, extra = sub.owner.inputs[0], "mask", None, [sub.owner.inputs[1]]
    elif len(args) == 3:
        x, idx, y = args
        x = as_variable(x)
        adv = _split_advanced(name, idx, x.ndim)
        if adv is None:
            kind, index, extra = "basic", _norm_index(idx, x.shape), []  # the index's errors
        else:
            kind, index, v = adv
            extra = [v]
    else:
        raise TypeError(f"{name}: expected (x[index], y) or (x, index, y), got {len(args)} arguments")
    if is_python_scalar(y):
        y = _weak_constant(name, y, np_dtype(x.dtype) if x.dtype != "bfloat16" else np.dtype(np.float32))
    y = as_variable(y)
    return UpdateSubtensor(kind, inc, index)(x, y, *extra)


def set_subtensor(*args):
    """Functional update (PyTensor's ``set_subtensor``): ``set_subtensor(x[index], y)`` or
    ``set_subtensor(x, index, y)`` is a new variable equal to ``x`` with ``x[index]`` replaced
    by ``y`` (broadcast to the region; converted to x's dtype, ``TypeError`` unless
    same_kind). ``index``: basic (ints, slices, None, ...), one integer array after full slices
    (``x[:, idx]``) or a bool mask (``x[mask]``). Gradients: x gets ``g`` with the region zeroed,
    y gets ``g[index]`` (with repeated indices every copy is credited). Eager arrays take only
    the three-argument form (a view does not know its base)."""
    return _update("set_subtensor", False, args)


def inc_subtensor(*args):
    """Like :func:`set_subtensor` but adds ``y`` at ``index``; repeated integer indices
    accumulate (np.add.at). Gradients: x gets ``g``, y gets ``g[index]``."""
    return _update("inc_subtensor", True, args)


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .indexing import (  # noqa: E402
    GetItem, MaskSelect, Take, _norm_index, _split_advanced, getitem)
from .shape import _unbroadcast  # noqa: E402
