"""The ``cpu`` linker: compiles a graph once into a ``uma._core.Program``.

Compilation:

1. composite ops the Program does not know (softmax, log_softmax) are lowered to primitives;
2. constant-only subgraphs are folded (evaluated once, at compile time);
3. every node becomes one Program op (``add_op(name, slots, attrs)``, the eager function's name
   and keyword arguments). A call is then one ``Program.run`` with no per-op Python.

An op the Program does not support (which ops it supports is probed once per op name and
attributes) is run in Python with its reference ``perform``, between Program segments;
``CpuLinker.python_ops(fn)`` lists them for a compiled function.
"""
from __future__ import annotations

from .linker import Linker
from .reference import make_evaluator

__all__ = ["CpuLinker"]


def _uma():
    import uma
    return uma


def _freeze(attrs):
    return tuple(sorted((k, repr(v)) for k, v in attrs.items()))


_PROBED = {}


def program_supports(name, attrs, nin) -> bool:
    """True when ``uma._core.Program`` accepts op ``name`` with ``attrs`` and ``nin`` inputs
    (probed once per name, attributes and arity)."""
    key = (name, _freeze(attrs), nin)
    ok = _PROBED.get(key)
    if ok is None:
        core = _uma()._core
        if not hasattr(core, "Program"):
            return False
        prog = core.Program()
        slots = [prog.add_input() for _ in range(nin)]
        try:
            prog.add_op(name, slots, dict(attrs))
            ok = True
        except Exception:
            ok = False
        _PROBED[key] = ok
    return ok


def _spec(node):
    spec = node.op.program_op(node)
    if spec is None or len(node.outputs) != 1:
        return None
    name, attrs = spec
    return spec if program_supports(name, attrs, len(node.inputs)) else None


def lower_composites(fgraph):
    """Replace nodes whose op has ``lower`` and no Program support by primitive ops."""
    changed = True
    while changed:
        changed = False
        for node in fgraph.toposort():
            if hasattr(node.op, "lower") and _spec(node) is None:
                for old, new in zip(node.outputs, node.op.lower(node)):
                    fgraph.replace(old, new)
                changed = True
                break


def fold_constants(fgraph):
    """Evaluate nodes whose inputs are all constants once; replace them by constants."""
    import numpy as np

    from ..graph.basic import Constant
    uma = _uma()
    for node in list(fgraph.toposort()):
        if node.inputs and all(isinstance(v, Constant) for v in node.inputs):
            try:
                results = node.op.perform(node, [uma.asarray(v.value) for v in node.inputs])
            except Exception:
                continue  # leave it: the error surfaces at call time, naming the op
            for var, val in zip(node.outputs, results):
                fgraph.replace(var, Constant(np.array(val, copy=True), dtype=var.type.dtype))


class _Segment:
    """A Program covering consecutive supported nodes."""

    def __init__(self, core):
        self.prog = core.Program()
        self.slots = {}
        self.inputs = []
        self.outputs = []

    def slot(self, var, uma):
        from ..graph.basic import Constant
        s = self.slots.get(var)
        if s is None:
            if isinstance(var, Constant):
                s = self.prog.add_constant(uma.asarray(var.value))
            else:
                s = self.prog.add_input()
                self.inputs.append(var)
            self.slots[var] = s
        return s


class CpuLinker(Linker):
    """The fast host linker (residency ``"cpu"``): one ``uma._core.Program`` per function."""

    name = "cpu"
    residency = "cpu"

    def compile(self, fgraph):
        uma = _uma()
        core = getattr(uma, "_core", None)
        if core is None or not hasattr(core, "Program"):
            thunk = make_evaluator(fgraph)
            thunk.python_ops = [n.op.name for n in fgraph.toposort()]
            return thunk
        lower_composites(fgraph)
        fold_constants(fgraph)
        order = fgraph.toposort()
        specs = [_spec(n) for n in order]
        copies = fgraph.outputs_needing_copy()
        inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
        consts = {c: uma.asarray(c.value) for c in fgraph.constants()}
        python_ops = [n.op.name for n, s in zip(order, specs) if s is None]

        if all(s is not None for s in specs):
            thunk = self._single_program(core, uma, order, specs, inputs, outputs, consts, copies)
        else:
            thunk = self._segmented(core, uma, order, specs, inputs, outputs, consts, copies)
        thunk.python_ops = python_ops
        return thunk

    @staticmethod
    def _single_program(core, uma, order, specs, inputs, outputs, consts, copies):
        seg = _Segment(core)
        for v in inputs:
            seg.slot(v, uma)
        for node, (name, attrs) in zip(order, specs):
            slots = [seg.slot(v, uma) for v in node.inputs]
            seg.slots[node.outputs[0]] = seg.prog.add_op(name, slots, attrs)
        # outputs computed by the program; inputs/constants returned directly are handled here
        produced = {n.outputs[0] for n in order}
        prog_outs, where = [], []
        for o in outputs:
            if o in produced:
                where.append(("p", len(prog_outs)))
                prog_outs.append(seg.slots[o])
            elif o in consts:
                where.append(("c", consts[o]))
            else:
                where.append(("i", inputs.index(o)))
        prog = seg.prog
        prog.set_outputs(prog_outs)
        run = prog.run
        simple = all(w[0] == "p" and w[1] == k for k, w in enumerate(where))
        if simple and not copies:
            def thunk(values):
                return run(values)
        elif simple:
            def thunk(values):
                res = run(values)
                for k in copies:
                    res[k] = res[k].copy()
                return res
        else:
            def thunk(values):
                res = run(values) if prog_outs else []
                out = []
                for k, (kind, x) in enumerate(where):
                    v = res[x] if kind == "p" else (x if kind == "c" else values[x])
                    out.append(v.copy() if k in copies else v)
                return out
        return thunk

    @staticmethod
    def _segmented(core, uma, order, specs, inputs, outputs, consts, copies):
        steps = []
        seg = None
        for node, spec in zip(order, specs):
            if spec is None:
                if seg is not None:
                    steps.append(seg)
                    seg = None
                steps.append(node)
                continue
            if seg is None:
                seg = _Segment(core)
            name, attrs = spec
            slots = [seg.slot(v, uma) for v in node.inputs]
            seg.slots[node.outputs[0]] = seg.prog.add_op(name, slots, attrs)
            seg.produced = getattr(seg, "produced", []) + [node.outputs[0]]
        if seg is not None:
            steps.append(seg)
        # what each segment must hand on: values read by later steps or returned
        needed = set(outputs)
        for step in reversed(steps):
            if isinstance(step, _Segment):
                step.outputs = [v for v in step.produced if v in needed]
                step.prog.set_outputs([step.slots[v] for v in step.outputs])
                needed.update(step.inputs)
            else:
                needed.update(step.inputs)

        def thunk(values):
            env = dict(consts)
            env.update(zip(inputs, values))
            for step in steps:
                if isinstance(step, _Segment):
                    res = step.prog.run([env[v] for v in step.inputs])
                    env.update(zip(step.outputs, res))
                else:
                    res = step.op.perform(step, [env[v] for v in step.inputs])
                    env.update(zip(step.outputs, res))
            return [env[o].copy() if k in copies else env[o] for k, o in enumerate(outputs)]

        return thunk

    @staticmethod
    def python_ops(fn):
        """Names of the ops a compiled ``cpu`` function runs in Python (not in its Program)."""
        return list(getattr(fn._thunk, "python_ops", []))
