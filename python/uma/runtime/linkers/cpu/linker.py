"""The ``cpu`` linker: compiles a graph once into a ``uma._core.Program``.

Compilation (after the graph passes of the function's mode, :mod:`uma.graph.rewrite`):

1. ``elide_broadcasts`` (a mode pass): drop broadcasts that an elementwise op does itself;
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
Program's steps.
"""
from __future__ import annotations

import functools

from ....graph.basic import Constant
from ...linker import Linker, distinct
from ..reference.linker import array_result, make_evaluator
from ..walk import has_perform, straight_line, walk
from .dispatch import lower, program_op, program_supports

__all__ = ["CpuLinker", "elide_broadcasts", "lower_composites", "fold_constants", "plan_steps"]


def _uma():
    import uma
    return uma


def _checked(node, spec):
    """``spec`` (what :func:`program_op` gave ``node``) when the Program runs it, else None."""
    if spec is None or len(node.outputs) != 1:
        return None
    name, attrs = spec
    return spec if program_supports(name, attrs, len(node.inputs)) else None


def _spec(node):
    return _checked(node, program_op(node.op, node))


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


def fold_constants(fgraph):
    """Evaluate nodes whose inputs are all constants once; replace them by constants (the
    ``constant_folding`` pass of :mod:`uma.graph.rewrite`)."""
    from ....graph.rewrite import constant_folding
    constant_folding(fgraph)


def plan_steps(fgraph, fuse=True):
    """The linear plan of a (lowered, folded) graph: a list of steps, each
    ``("op", out_var, in_vars, name, attrs)``, ``("fused", out_var, in_vars, code, dtype)``
    or ``("py", node)`` (run in Python).

    Fusion (``fuse=True``): a tree of elementwise nodes of one dtype D whose ops keep D (``_core._fusable``),
    where every inner result feeds exactly one node of the tree and is not a graph output,
    becomes one ``add_fused`` chain (one pass over memory, no intermediate arrays).
    """
    from ....graph.ops import Elemwise
    core = _uma()._core
    fusable = getattr(core, "_fusable", None)
    specs = {n: _checked(n, spec) for n, spec in walk(fgraph, program_op)}
    order = list(specs)
    outputs = set(fgraph.outputs)
    consumers = {}
    for n in order:
        for v in set(n.inputs):
            consumers[v] = consumers.get(v, 0) + 1

    def dtype_if_fusable(n):
        if not fuse or fusable is None or not isinstance(n.op, Elemwise) or specs[n] is None:
            return None
        d = n.outputs[0].dtype
        if any(i.dtype != d for i in n.inputs) or not fusable(n.op.name, d):
            return None
        return d

    group_root, members_of = {}, {}
    for n in reversed(order):
        if n in group_root:
            continue
        d = dtype_if_fusable(n)
        if d is None:
            continue
        members, stack = {n}, [n]
        while stack:
            m = stack.pop()
            for v in m.inputs:
                p = v.owner
                if (p is None or p in members or p in group_root or v in outputs
                        or consumers.get(v) != 1 or dtype_if_fusable(p) != d):
                    continue
                members.add(p)
                stack.append(p)
        if len(members) > 1:
            for m in members:
                group_root[m] = n
            members_of[n] = members

    index = {n: k for k, n in enumerate(order)}
    steps = []
    for n in order:
        root = group_root.get(n)
        if root is not None and root is not n:
            continue
        if root is n:
            members = sorted(members_of[n], key=index.__getitem__)
            inner = {m.outputs[0] for m in members}
            ins, reg = [], {}
            for m in members:
                for v in m.inputs:
                    if v not in inner and v not in reg:
                        reg[v] = len(ins)
                        ins.append(v)
            code = []
            for m in members:
                a = reg[m.inputs[0]]
                b = reg[m.inputs[1]] if len(m.inputs) > 1 else 0
                code.append((m.op.name, a, b))
                reg[m.outputs[0]] = len(ins) + len(code) - 1
            steps.append(("fused", n.outputs[0], ins, code, n.outputs[0].dtype))
        elif specs[n] is not None:
            name, attrs = specs[n]
            steps.append(("op", n.outputs[0], list(n.inputs), name, attrs))
        else:
            steps.append(("py", n))
    return steps


class _Segment:
    """A Program covering consecutive Program steps."""

    def __init__(self, core):
        self.prog = core.Program()
        self.slots = {}
        self.inputs = []
        self.produced = []
        self.outputs = []

    def slot(self, var, uma):
        s = self.slots.get(var)
        if s is None:
            if isinstance(var, Constant):
                s = self.prog.add_constant(uma.asarray(var.value))
            else:
                s = self.prog.add_input()
                self.inputs.append(var)
            self.slots[var] = s
        return s

    def add(self, step, uma):
        kind, out, ins = step[0], step[1], step[2]
        slots = [self.slot(v, uma) for v in ins]
        if kind == "op":
            s = self.prog.add_op(step[3], slots, step[4])
        else:
            s = self.prog.add_fused(slots, step[3], step[4])
        self.slots[out] = s
        self.produced.append(out)


class CpuLinker(Linker):
    """The fast host linker (residency ``"cpu"``): one ``uma._core.Program`` per function."""

    name = "cpu"
    residency = "cpu"
    dispatch = program_op

    def unsupported(self, fgraph):
        """Ops with neither a Program op nor a reference ``perform`` (to run them in Python)."""
        return distinct(n.op for n in fgraph.toposort() if not has_perform(n.op) and _spec(n) is None)

    def compile(self, fgraph):
        from ....graph.rewrite import as_mode, check_pass, validation_enabled
        uma = _uma()
        core = getattr(uma, "_core", None)
        if core is None or not hasattr(core, "Program"):
            thunk = make_evaluator(fgraph)
            thunk.python_ops = [n.op.name for n in fgraph.toposort()]
            return _Thunk(thunk, thunk.python_ops, 0, [])
        mode = as_mode(getattr(fgraph, "mode", None))
        check = mode.validate or validation_enabled()
        if mode.enabled("elide_broadcasts"):
            elide_broadcasts(fgraph)
            if check:
                check_pass(fgraph, "elide_broadcasts")
        lower_composites(fgraph)
        if check:
            check_pass(fgraph, "lower_composites")
        if mode.enabled("constant_folding"):
            fold_constants(fgraph)
            if check:
                check_pass(fgraph, "constant_folding")
        steps = plan_steps(fgraph, fuse=mode.enabled("fusion"))
        python_ops = [st[1].op.name for st in steps if st[0] == "py"]
        n_fused = sum(1 for st in steps if st[0] == "fused")
        copies = fgraph.outputs_needing_copy()
        inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
        program = None
        if not python_ops:
            program = self._single_program(core, uma, steps, inputs, outputs, copies)
            run = program.run
        else:
            run = self._segmented(core, uma, steps, inputs, outputs, copies)
        return _Thunk(run, python_ops, n_fused, _describe_steps(steps, inputs, copies, outputs),
                      program)

    @staticmethod
    def _single_program(core, uma, steps, inputs, outputs, copies):
        seg = _Segment(core)
        for v in inputs:
            seg.slot(v, uma)
        for st in steps:
            seg.add(st, uma)
        out_slots = []
        for k, o in enumerate(outputs):
            s = seg.slot(o, uma)
            if k in copies:
                s = seg.prog.add_op("copy", [s], None)
            out_slots.append(s)
        seg.prog.set_outputs(out_slots)
        return seg.prog

    @staticmethod
    def _segmented(core, uma, steps, inputs, outputs, copies):
        """Program segments and the Python ops between them, run by the graph walker's
        straight-line thunk."""
        plan, seg = [], None
        for st in steps:
            if st[0] == "py":
                if seg is not None:
                    plan.append(seg)
                    seg = None
                plan.append(st[1])
            else:
                if seg is None:
                    seg = _Segment(core)
                seg.add(st, uma)
        if seg is not None:
            plan.append(seg)
        needed = set(outputs)
        for step in reversed(plan):
            if isinstance(step, _Segment):
                step.outputs = [v for v in step.produced if v in needed]
                step.prog.set_outputs([step.slots[v] for v in step.outputs])
            needed.update(step.inputs)
        run_steps = [(step.prog.run, None, step.inputs, step.outputs) if isinstance(step, _Segment)
                     else (functools.partial(step.op.perform, step), step, step.inputs, step.outputs)
                     for step in plan]
        python_outputs = {v for step in plan if not isinstance(step, _Segment) for v in step.outputs}
        return straight_line(inputs, outputs, run_steps, copies, constant=lambda c: uma.asarray(c.value),
                             copy=uma.Array.copy,
                             output=lambda v: array_result(v, check=False) if v in python_outputs else None)

    @staticmethod
    def python_ops(fn):
        """Names of the ops a compiled ``cpu`` function runs in Python (not in its Program)."""
        return list(fn._thunk.python_ops)

    @staticmethod
    def fused_chains(fn):
        """How many fused elementwise chains a compiled ``cpu`` function's Program has."""
        return fn._thunk.n_fused


def _describe_steps(steps, inputs, copies, outputs):
    """Text lines for ``uma.dprint``: the Program's steps, fused chains spelled out."""
    names = {v: f"in{k}" for k, v in enumerate(inputs)}

    def nm(v):
        if v in names:
            return names[v]
        if isinstance(v, Constant):
            return repr(v.value.item()) if v.value.ndim == 0 else f"const{tuple(v.value.shape)}"
        names[v] = f"s{len(names) - len(inputs)}"
        return names[v]

    lines = [f"  cpu program: {len(steps)} step(s), "
             f"{sum(1 for st in steps if st[0] == 'fused')} fused chain(s), "
             f"{sum(1 for st in steps if st[0] == 'py')} Python op(s)"]
    for st in steps:
        if st[0] == "py":
            node = st[1]
            outs = ", ".join(nm(o) for o in node.outputs)
            lines.append(f"    {outs} = [python] {node.op}({', '.join(nm(v) for v in node.inputs)})")
        elif st[0] == "op":
            _, out, ins, name, attrs = st
            extra = ", ".join(f"{k}={v!r}" for k, v in attrs.items() if v is not None)
            lines.append(f"    {nm(out)} = {name}({', '.join(nm(v) for v in ins)}"
                         f"{', ' + extra if extra else ''})")
        else:
            _, out, ins, code, dtype = st
            regs = [nm(v) for v in ins]
            for op, a, b in code:
                regs.append(f"{op}({regs[a]}{', ' + regs[b] if op_arity(op) == 2 else ''})")
            lines.append(f"    {nm(out)} = fused[{dtype}] {regs[-1]}")
    for k, o in enumerate(outputs):
        lines.append(f"    out {k} = {nm(o)}{' (copied)' if k in copies else ''}")
    return lines


def op_arity(name):
    from ....graph.ops.elemwise import _elemwise
    try:
        return _elemwise(name).nin
    except Exception:
        return 2


class _Thunk:
    """The callable a CpuLinker returns (``values -> outputs``), with what it compiled to:
    ``program`` is the one ``uma._core.Program`` of the whole graph (None when some op runs in
    Python between Program segments); :class:`uma.Function` calls it from C++."""

    __slots__ = ("__call__", "python_ops", "n_fused", "lines", "program")

    def __init__(self, run, python_ops, n_fused, lines, program=None):
        self.__call__ = run
        self.python_ops = python_ops
        self.n_fused = n_fused
        self.lines = lines
        self.program = program

    def describe(self):
        return list(self.lines)
