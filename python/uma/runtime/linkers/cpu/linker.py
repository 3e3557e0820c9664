"""The ``cpu`` linker: compiles a graph once into a ``uma._core.Program``.

Compilation (after the graph passes of the function's mode, :mod:`uma.graph.rewrite`):

1. ``closed_forms`` (a mode pass): cross-entropy written with ``one_hot`` and ``log_softmax``
   becomes its closed form and that form's gradient (:func:`closed_forms`); then
   ``elide_broadcasts`` (a mode pass): drop broadcasts that an elementwise op does itself;
2. composite ops the Program does not know (softmax, log_softmax) are lowered to primitives
   (the :func:`~.dispatch.lower` table), and constant-only subgraphs are folded again
   (``constant_folding``);
3. the graph walker asks the :func:`~.dispatch.program_op` table for every node's Program op
   (``add_op(name, slots, attrs)``, the eager function's name and keyword arguments), and
   ``fusion`` (a mode pass) turns each chain of elementwise ops of one dtype into one
   ``add_fused`` loop. A call is then one ``Program.run`` (the GIL is released) with no
   per-op Python.

An op the Program does not support (which ops it supports is probed once per op name and
attributes) is run in Python with its reference ``perform``, between Program segments;
``CpuLinker.python_ops(fn)`` lists them for a compiled function. ``uma.dprint(fn)`` shows the
Program's steps. The plan, the segments, the thunk and the running of the passes
(:func:`..program.linker_passes`) are :mod:`..program`'s, shared with the ``cuda`` linker,
which runs ``closed_forms`` and ``fusion`` of the passes above.
"""
from __future__ import annotations

import functools

from ...linker import Linker, distinct
from .. import program
from ..reference.linker import array_result, make_evaluator
from ..walk import has_perform
from .dispatch import lower, program_op

__all__ = ["CpuLinker", "closed_forms", "elide_broadcasts", "lower_composites", "fold_constants", "plan_steps"]


def _uma():
    import uma
    return uma


def _spec(node):
    return program.checked_spec(node, program_op(node.op, node))


def lower_composites(fgraph):
    """Replace nodes that the :func:`~.dispatch.lower` table lowers and the Program does not
    run by primitive ops (a node whose lowering fails stays, and runs in Python)."""
    done = set()
    changed = True
    while changed:
        changed = False
        for node in fgraph.toposort():
            if node in done or _spec(node) is not None:
                continue
            done.add(node)
            try:
                new_outputs = lower(node.op, node)
            except Exception:
                continue
            if new_outputs is None:
                continue
            for old, new in zip(node.outputs, new_outputs):
                fgraph.replace(old, new)
            changed = True
            break


def elide_broadcasts(fgraph):
    """Drop a ``broadcast_like(a, x)`` that feeds an elementwise op whose other input already
    has x's run-time shape: the op broadcasts ``a`` itself (no array of x's shape is made).

    Valid under the static broadcasting rule: when another input ``b`` of the op has x's ndim
    and no static length-1 axis where x has none, ``b`` and x have the same run-time shape.
    """
    from ....graph.ops import BroadcastLike, Elemwise, Where
    for node in fgraph.toposort():
        if not isinstance(node.op, (Elemwise, Where)):
            continue
        for k, v in enumerate(node.inputs):
            if v.owner is None or not isinstance(v.owner.op, BroadcastLike):
                continue
            a, x = v.owner.inputs
            for j, b in enumerate(node.inputs):
                if j != k and b.ndim == x.ndim and all(
                        xd == 1 or bd != 1 for xd, bd in zip(x.shape, b.shape)):
                    new_inputs = list(node.inputs)
                    new_inputs[k] = a
                    try:  # keep the graph valid: the node's static type must not change
                        same = node.op.output_types(new_inputs) == [o.type for o in node.outputs]
                    except (TypeError, ValueError):
                        same = False
                    if same:
                        node.inputs[k] = a
                    break
    fgraph._order = None


def _owner_op(v, name):
    """The node computing ``v`` when its op is named ``name``, else None."""
    n = v.owner
    return n if n is not None and n.op.name == name else None


def _product_with_one_hot(v):
    """``(depth, labels, other)`` when ``v`` is ``multiply(one_hot(labels, depth), other)``
    (either order) and the one-hot rows have ``v``'s dtype, else None."""
    m = _owner_op(v, "multiply")
    if m is None or len(m.inputs) != 2:
        return None
    for a, b in (m.inputs, m.inputs[::-1]):
        oh = _owner_op(a, "one_hot")
        if oh is not None and a.dtype == v.dtype and a.ndim == 2 and oh.op.depth > 0:
            return oh.op.depth, oh.inputs[0], b
    return None


def _log_softmax_rows(v):
    """The logits z when ``v`` is ``log_softmax(z, axis=1)`` of a 2-d float z whose class
    axis is not declared length 1 (the product would broadcast it), else None."""
    n = _owner_op(v, "log_softmax")
    if (n is None or n.inputs[0].ndim != 2 or n.op.axis not in (1, -1) or n.inputs[0].dtype != v.dtype
            or n.inputs[0].shape[1] == 1):
        return None
    return n.inputs[0]


def _column(v):
    """The vector gv when ``v`` is ``gv[:, None]`` (``expand_dims(gv, 1)``, possibly through a
    ``broadcast_like``): a value constant along axis 1, else None."""
    b = _owner_op(v, "broadcast_like")
    if b is not None:
        v = b.inputs[0]
    e = _owner_op(v, "expand_dims")
    if e is None or e.op.axis not in (1, -1) or e.inputs[0].ndim != 1:
        return None
    return e.inputs[0]


def closed_forms(fgraph):
    """Cross-entropy written as a product with ``one_hot``, replaced by its closed form
    (the ``closed_forms`` pass; it changes values within the accuracy rule, DESIGN.md):

    * ``sum(one_hot(y, K) * log_softmax(z, axis=1), axis=1)`` becomes
      ``-one_hot_cross_entropy(z, y, K)`` (one pass per row instead of log_softmax, the
      product and the sum);
    * the gradient uma derives for it with respect to z,
      ``A - exp(log_softmax(z)) * sum(A, axis=1, keepdims=True)`` with
      ``A = gv[:, None] * one_hot(y, K)``, becomes ``one_hot_cross_entropy_grad(-gv, z, y, K)``
      (``gv * (one_hot - softmax(z))`` per row: the rows of ``one_hot`` sum to 1, or to 0
      for a label outside [0, K), where both forms give 0).

    A label outside [0, K) keeps one_hot's meaning (a zero row: loss 0, gradient 0; NaN where
    the product is NaN without a limit: a NaN or +inf logit in the row, every logit -inf, and
    for the gradient a NaN or infinite upstream gradient). Where K is not z's class count at
    run time the ops are the product: K = 1 broadcasts one_hot's column, another K raises the
    product's ValueError (z's class axis, not declared length 1, does not broadcast); a K that
    is not positive keeps the graph as written. Where a row of z holds -inf beside finite
    values the product gives NaN (0 * -inf) and the closed form its limit."""
    from ....graph.ops import OneHotCrossEntropy, OneHotCrossEntropyGrad, negative
    for node in fgraph.toposort():
        if len(node.outputs) != 1:
            continue
        out = node.outputs[0]
        new = None
        if node.op.name == "sum" and getattr(node.op, "axis", None) == (1,) and not node.op.keepdims:
            found = _product_with_one_hot(node.inputs[0])
            z = found and _log_softmax_rows(found[2])
            if z is not None and z.dtype == out.dtype:
                depth, labels, _ = found
                new = negative(OneHotCrossEntropy(depth)(z, labels))
        elif node.op.name == "subtract" and len(node.inputs) == 2:
            a, p = node.inputs
            m = _owner_op(p, "multiply")
            found = _product_with_one_hot(a)
            if m is not None and found is not None and a.dtype == out.dtype:
                depth, labels, col = found
                gv = _column(col)
                for e, s in (m.inputs, m.inputs[::-1]):
                    ex, sm = _owner_op(e, "exp"), _owner_op(s, "sum")
                    if (ex is None or sm is None or sm.inputs[0] is not a or sm.op.axis != (1,)
                            or not sm.op.keepdims):
                        continue
                    z = _log_softmax_rows(ex.inputs[0])
                    if z is not None and gv is not None and gv.dtype == out.dtype and z.dtype == out.dtype:
                        new = OneHotCrossEntropyGrad(depth)(negative(gv), z, labels)
                    break
        if new is not None and new.type == out.type:
            fgraph.replace(out, new)
    # -sum(-c) and -mean(-c) of the closed form c: sum(c) and mean(c); an op that reads only
    # the shape of -x (ones_like, broadcast_like's template: _core._shape_inputs) reads x instead
    from .... import _core
    for node in fgraph.toposort():
        for k in _core._shape_inputs(node.op.name):
            neg = _owner_op(node.inputs[k], "negative")
            if neg is not None:
                node.inputs[k] = neg.inputs[0]
        r = node.inputs[0].owner if node.op.name == "negative" else None
        neg = _owner_op(r.inputs[0], "negative") if r is not None and r.op.name in ("sum", "mean") else None
        # only around this pass's own closed form (a float): for integers -x wraps, and
        # -sum(-x) is not sum(x)
        if neg is not None and _owner_op(neg.inputs[0], "one_hot_cross_entropy") is not None:
            new = r.op(neg.inputs[0])
            if new.type == node.outputs[0].type:
                fgraph.replace(node.outputs[0], new)
    fgraph._order = None


def fold_constants(fgraph):
    """Evaluate nodes whose inputs are all constants once; replace them by constants (the
    ``constant_folding`` pass of :mod:`uma.graph.rewrite`)."""
    from ....graph.rewrite import constant_folding
    constant_folding(fgraph)


def plan_steps(fgraph, fuse=True):
    """The linear plan of a (lowered, folded) graph under the cpu Program table
    (:func:`.program.plan_steps` with :func:`~.dispatch.program_op`)."""
    return program.plan_steps(fgraph, program_op, fuse=fuse)


class CpuLinker(Linker):
    """The fast host linker (residency ``"cpu"``): one ``uma._core.Program`` per function."""

    name = "cpu"
    residency = "cpu"
    dispatch = program_op
    #: The passes :meth:`compile` runs before planning (:func:`.program.linker_passes`; a name
    #: of None always runs), then ``fusion`` in the plan.
    passes = (("closed_forms", closed_forms), ("elide_broadcasts", elide_broadcasts), (None, lower_composites),
              ("constant_folding", fold_constants))
    mode_passes = program.mode_pass_names(passes)

    def unsupported(self, fgraph):
        """Ops with neither a Program op nor a reference ``perform`` (to run them in Python)."""
        return distinct(n.op for n in fgraph.toposort() if not has_perform(n.op) and _spec(n) is None)

    def compile(self, fgraph):
        uma = _uma()
        core = getattr(uma, "_core", None)
        if core is None or not hasattr(core, "Program"):
            thunk = make_evaluator(fgraph)
            names = [n.op.name for n in fgraph.toposort()]
            return program.ProgramThunk(thunk, names, 0, [])
        mode = program.linker_passes(fgraph, self.passes)
        steps = plan_steps(fgraph, fuse=mode.enabled("fusion"))
        return program.compile_program(
            fgraph, steps, backend="cpu", constant=lambda c: uma.asarray(c.value),
            python_impl=lambda node: functools.partial(node.op.perform, node),
            python_result=lambda v: array_result(v, check=False))

    @staticmethod
    def python_ops(fn):
        """Names of the ops a compiled ``cpu`` function runs in Python (not in its Program)."""
        return list(fn._thunk.python_ops)

    @staticmethod
    def fused_chains(fn):
        """How many fused elementwise chains a compiled ``cpu`` function's Program has."""
        return fn._thunk.n_fused
