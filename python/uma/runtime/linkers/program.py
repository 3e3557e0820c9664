"""Compiling a graph into ``uma._core.Program`` s: the plan and the thunk that the ``cpu`` and
``cuda`` linkers share.

1. :func:`plan_steps` walks the graph once (:func:`~.walk.walk`) with a linker's Program
   table (``table(op, node) -> (name, attrs) | None``, the eager function's name and keyword
   arguments) and gives the linear plan: Program ops, fused elementwise chains (where the
   linker fuses) and Python steps for the nodes the Program does not run.
2. :func:`compile_program` turns the plan into a thunk: one Program for the whole graph when
   every step is a Program step (called with one ``Program.run``: no per-op Python), else
   Program segments and the Python steps between them, run in order by the walker's
   straight-line thunk. Outputs listed by ``fgraph.outputs_needing_copy()`` are copied (a
   ``copy`` op of the Program), so no output aliases an input, a constant or another output.

What differs between linkers comes in as arguments: the Program table, whether to fuse, how a
constant becomes a native value (a host or a device array, made once at compile time), the
implementation of a Python step (the linker's dispatch table) and the conversion of what a
Python step returns; and the label checks that run after every step (Note [Deferred label
checks] of ``include/uma/runtime/program.h``).
"""
from __future__ import annotations

from ...graph.basic import Constant
from .walk import straight_line, walk

__all__ = ["program_supports", "plan_steps", "compile_program", "ProgramThunk", "linker_passes",
           "mode_pass_names", "op_runner"]


def _uma():
    import uma
    return uma


def _core():
    return _uma()._core


def _runner(prog):
    """``values -> outputs`` of ``prog`` (``uma._core._program_run``: the GIL released, and a
    daemon thread ended at interpreter exit passes through it)."""
    run = _core()._program_run
    return lambda values: run(prog, values)


def linker_passes(fgraph, passes):
    """Runs on ``fgraph``, in order, each ``(name, apply)`` of ``passes`` that the function's mode
    enables (``fgraph.mode``, :func:`uma.graph.rewrite.as_mode`; a name of None always runs),
    validating the graph after each when the mode or the environment asks
    (:func:`uma.graph.rewrite.check_pass`). Returns the mode."""
    from ...graph.rewrite import as_mode, check_pass, validation_enabled
    mode = as_mode(getattr(fgraph, "mode", None))
    check = mode.validate or validation_enabled()
    for name, apply in passes:
        if name is None or mode.enabled(name):
            apply(fgraph)
            if check:
                check_pass(fgraph, name or apply.__name__)
    return mode


def _freeze(attrs):
    return tuple(sorted((k, repr(v)) for k, v in attrs.items()))


_PROBED = {}


def program_supports(name, attrs, nin) -> bool:
    """True when ``uma._core.Program`` accepts op ``name`` with ``attrs`` and ``nin`` inputs
    (probed once per name, attributes and arity)."""
    key = (name, _freeze(attrs), nin)
    ok = _PROBED.get(key)
    if ok is None:
        core = _core()
        if not hasattr(core, "Program"):
            return False
        names = getattr(core, "_program_ops", None)
        if names is not None and name not in set(names()):
            ok = False
        else:
            prog = core.Program()
            slots = [prog.add_input() for _ in range(nin)]
            try:
                prog.add_op(name, slots, dict(attrs))
                ok = True
            except Exception:
                ok = False
        _PROBED[key] = ok
    return ok


def mode_pass_names(passes):
    """A linker's ``mode_passes`` (:class:`uma.Linker`): the names among its ``(name, apply)``
    ``passes`` that are linker passes of a mode (:data:`uma.graph.rewrite.LINKER_PASSES`), then
    ``fusion``, which :func:`plan_steps` runs."""
    from ...graph.rewrite import LINKER_PASSES
    return tuple(n for n, _ in passes if n in LINKER_PASSES) + ("fusion",)


def op_runner(name, attrs, nin):
    """``values -> [output]``: the Program op ``name`` with ``attrs`` over ``nin`` inputs, run
    alone (a Program of that one step): the eager op as a Program runs it, for ops that have
    no Python binding of their own."""
    core = _core()
    prog = core.Program()
    slots = [prog.add_input() for _ in range(nin)]
    prog.set_outputs([prog.add_op(name, slots, dict(attrs))])
    run = _runner(prog)
    return lambda values: list(run(list(values)))


def checked_spec(node, spec):
    """``spec`` (what a Program table gave ``node``) when the Program runs it, else None."""
    if spec is None or len(node.outputs) != 1:
        return None
    name, attrs = spec
    return spec if program_supports(name, attrs, len(node.inputs)) else None


def plan_steps(fgraph, table, fuse=True):
    """The linear plan of ``fgraph`` under the Program table ``table``: a list of steps, each
    ``("op", out_var, in_vars, name, attrs)``, ``("fused", out_var, in_vars, code, dtype)`` or
    ``("py", node)`` (run in Python).

    Fusion (``fuse=True``): a tree of elementwise nodes of one dtype D whose ops keep D
    (``_core._fusable``), where every inner result feeds exactly one node of the tree and is
    not a graph output, becomes one ``add_fused`` chain (one pass over memory, no
    intermediate arrays). A ``where`` of two D operands joins when its condition is a
    comparison of D operands read by that ``where`` alone (the ReLU gradient
    ``where(0 <= a, g, 0)``): the comparison's truth value stays in a register of the chain.
    """
    from ...graph.ops import Elemwise
    fusable = getattr(_core(), "_fusable", None)
    specs = {n: checked_spec(n, spec) for n, spec in walk(fgraph, table)}
    order = list(specs)
    outputs = set(fgraph.outputs)
    consumers = {}
    for n in order:
        for v in set(n.inputs):
            consumers[v] = consumers.get(v, 0) + 1

    def dtype_if_fusable(n):
        """The dtype of the chain ``n`` can join (its op keeps that dtype), or None."""
        if not fuse or fusable is None or specs[n] is None:
            return None
        d = n.outputs[0].dtype
        if isinstance(n.op, Elemwise):
            if any(i.dtype != d for i in n.inputs) or not fusable(n.op.name, d):
                return None
            return d
        if (n.op.name == "where" and n.inputs[1].dtype == d and n.inputs[2].dtype == d
                and condition_of(n) is not None):
            return d
        return None

    def condition_of(n):
        """The comparison computing where-node ``n``'s condition, when it can join ``n``'s
        chain (read by ``n`` alone, its operands of ``n``'s dtype), else None."""
        v = n.inputs[0]
        p = v.owner
        if (p is None or v in outputs or consumers.get(v) != 1 or specs.get(p) is None
                or not isinstance(p.op, Elemwise) or len(p.inputs) != 2):
            return None
        d = n.outputs[0].dtype
        if any(i.dtype != d for i in p.inputs) or not fusable(p.op.name, d, True):
            return None
        return p

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
            cond = condition_of(m) if m.op.name == "where" and not isinstance(m.op, Elemwise) else None
            if cond is not None and cond not in members and cond not in group_root:
                members.add(cond)
                stack.append(cond)
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
                if m.op.name == "where":
                    code.append(("where", a, b, reg[m.inputs[2]]))
                else:
                    code.append((m.op.name, a, b))
                reg[m.outputs[0]] = len(ins) + len(code) - 1
            steps.append(("fused", n.outputs[0], ins, code, n.outputs[0].dtype))
        elif specs[n] is not None:
            name, attrs = specs[n]
            steps.append(("op", n.outputs[0], list(n.inputs), name, attrs))
        else:
            steps.append(("py", n))
    return _epilogues(steps, consumers, outputs, fusable) if fuse and fusable is not None else steps


def _epilogue_head(st):
    """Whether the Program step ``st`` can be the head of an epilogue: a product, or a sum or
    mean over axes (no other attribute) that keeps its input's dtype."""
    if st[0] != "op":
        return False
    if st[3] == "matmul":
        return True
    return (st[3] in ("sum", "mean") and set(st[4]) <= {"axis", "keepdims"}
            and st[2][0].dtype == st[1].dtype)


def _epilogues(steps, consumers, outputs, fusable):
    """``steps`` with each product, sum or mean that only an elementwise step reads (a fused
    chain, or one op that keeps the dtype: the bias add after a matmul, the SGD update of a
    bias after its gradient's sum) merged into that step, as a ``("matmul_fused", out, [a, b,
    *rest], code, dtype)`` or ``("reduce_fused", out, [x, *rest], code, dtype, name, attrs)``
    step: the chain runs in place in the head's result, or as its store in one kernel on cuda
    (``Program.add_fused(..., head=...)``)."""
    producer = {st[1]: k for k, st in enumerate(steps) if st[0] != "py"}
    merged, dropped = {}, set()
    for k, st in enumerate(steps):
        if st[0] == "fused":
            _, out, ins, code, dtype = st
        elif (st[0] == "op" and not st[4] and len(st[2]) in (1, 2)
              and fusable(st[3], st[1].dtype) and all(v.dtype == st[1].dtype for v in st[2])):
            out, ins, dtype = st[1], st[2], st[1].dtype
            code = [(st[3], 0, 1 if len(ins) == 2 else 0)]
        else:
            continue
        for i, v in enumerate(ins):
            j = producer.get(v)
            if (j is None or j in dropped or not _epilogue_head(steps[j])
                    or v in outputs or consumers.get(v) != 1 or ins.count(v) != 1
                    or v.dtype != dtype or v.ndim != out.ndim):
                continue
            order = [i] + [r for r in range(len(ins)) if r != i]
            reg = {old: new for new, old in enumerate(order)}
            n_in = len(ins)

            def remap(r):
                return reg[r] if r < n_in else r
            new_code = [(c[0],) + tuple(remap(r) for r in c[1:]) for c in code]
            rest = [ins[r] for r in order[1:]]
            _, _, head_ins, head, head_attrs = steps[j]
            if head == "matmul":
                merged[k] = ("matmul_fused", out, list(head_ins) + rest, new_code, dtype)
            else:
                merged[k] = ("reduce_fused", out, list(head_ins) + rest, new_code, dtype, head, head_attrs)
            dropped.add(j)
            break
    return [merged.get(k, st) for k, st in enumerate(steps) if k not in dropped]


# The kinds of plan step that are fused chains (plan_steps, _epilogues).
_FUSED_KINDS = ("fused", "matmul_fused", "reduce_fused")


class _Segment:
    """A Program covering consecutive Program steps (and, in the last segment, the label
    checks)."""

    def __init__(self, constant):
        self.prog = _core().Program()
        self.constant = constant
        self.slots = {}
        self.inputs = []
        self.produced = []
        self.outputs = []

    def slot(self, var):
        s = self.slots.get(var)
        if s is None:
            if isinstance(var, Constant):
                s = self.prog.add_constant(self.constant(var))
            else:
                s = self.prog.add_input()
                self.inputs.append(var)
            self.slots[var] = s
        return s

    def add(self, step):
        kind, out, ins = step[0], step[1], step[2]
        slots = [self.slot(v) for v in ins]
        if kind == "op":
            s = self.prog.add_op(step[3], slots, step[4])
        elif kind == "reduce_fused":
            s = self.prog.add_fused(slots, step[3], step[4], head=step[5], head_attrs=step[6])
        else:
            s = self.prog.add_fused(slots, step[3], step[4], head="matmul" if kind == "matmul_fused" else "")
        self.slots[out] = s
        self.produced.append(out)

    def add_label_checks(self, checks):
        for labels, logits, op in checks:
            self.prog.add_label_check(self.slot(labels), self.slot(logits), op)


def compile_program(fgraph, steps, *, backend, constant, python_impl, python_result,
                    label_checks=()):
    """The :class:`ProgramThunk` running the plan ``steps`` (:func:`plan_steps`) of ``fgraph``.

    ``constant(c)``: the native value of a :class:`~uma.graph.Constant` (called once per
    constant, here); ``python_impl(node)``: ``impl(values) -> [outputs]`` for a Python step;
    ``python_result(var)``: ``check(value, node) -> value`` applied to what a Python step
    computes for ``var`` (conversions; see :func:`~.walk.evaluator`); ``label_checks``:
    ``[(labels_var, logits_var, op_name)]``, checked after every step and before the thunk
    returns (for cross-entropy steps queued with ``check_labels=False``); ``backend`` names
    the linker in ``uma.dprint``.
    """
    made = {}

    def const(c):
        v = made.get(c)
        if v is None:
            v = made[c] = constant(c)
        return v

    python_ops = [st[1].op.name for st in steps if st[0] == "py"]
    n_fused = sum(1 for st in steps if st[0] in _FUSED_KINDS)
    copies = fgraph.outputs_needing_copy()
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
    lines = _describe_steps(backend, steps, inputs, copies, outputs, label_checks)
    if not python_ops:
        program = _single_program(const, steps, inputs, outputs, copies, label_checks)
        return ProgramThunk(_runner(program), python_ops, n_fused, lines, program)
    run = _segmented(const, steps, inputs, outputs, copies, label_checks, python_impl, python_result)
    return ProgramThunk(run, python_ops, n_fused, lines)


def _single_program(constant, steps, inputs, outputs, copies, label_checks):
    seg = _Segment(constant)
    for v in inputs:
        seg.slot(v)
    for st in steps:
        seg.add(st)
    seg.add_label_checks(label_checks)
    out_slots = []
    for k, o in enumerate(outputs):
        s = seg.slot(o)
        if k in copies:
            s = seg.prog.add_op("copy", [s], None)
        out_slots.append(s)
    seg.prog.set_outputs(out_slots)
    return seg.prog


def _segmented(constant, steps, inputs, outputs, copies, label_checks, python_impl, python_result):
    """Program segments and the Python steps between them, run by the graph walker's
    straight-line thunk; the label checks run in the last segment (a Program of checks alone
    when the plan ends with a Python step)."""
    plan, seg = [], None
    for st in steps:
        if st[0] == "py":
            if seg is not None:
                plan.append(seg)
                seg = None
            plan.append(st[1])
        else:
            if seg is None:
                seg = _Segment(constant)
            seg.add(st)
    if label_checks:
        if seg is None:
            seg = _Segment(constant)
        seg.add_label_checks(label_checks)
    if seg is not None:
        plan.append(seg)
    needed = set(outputs)
    for step in reversed(plan):
        if isinstance(step, _Segment):
            step.outputs = [v for v in step.produced if v in needed]
            step.prog.set_outputs([step.slots[v] for v in step.outputs])
        needed.update(step.inputs)
    run_steps = [(_runner(step.prog), None, step.inputs, step.outputs) if isinstance(step, _Segment)
                 else (python_impl(step), step, step.inputs, step.outputs)
                 for step in plan]
    python_outputs = {v for step in plan if not isinstance(step, _Segment) for v in step.outputs}
    return straight_line(inputs, outputs, run_steps, copies, constant=constant,
                         copy=_uma().Array.copy,
                         output=lambda v: python_result(v) if v in python_outputs else None)


def _describe_steps(backend, steps, inputs, copies, outputs, label_checks):
    """Text lines for ``uma.dprint``: the Program's steps, fused chains spelled out."""
    names = {v: f"in{k}" for k, v in enumerate(inputs)}

    def nm(v):
        if v in names:
            return names[v]
        if isinstance(v, Constant):
            return repr(v.value.item()) if v.value.ndim == 0 else f"const{tuple(v.value.shape)}"
        names[v] = f"s{len(names) - len(inputs)}"
        return names[v]

    lines = [f"  {backend} program: {len(steps)} step(s), "
             f"{sum(1 for st in steps if st[0] in _FUSED_KINDS)} fused chain(s), "
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
            kind, out, ins, code, dtype = st[:5]
            regs = [nm(v) for v in ins]
            if kind == "matmul_fused":  # register 0 is the product of the first two inputs
                regs = [f"matmul({regs[0]}, {regs[1]})"] + regs[2:]
            elif kind == "reduce_fused":  # register 0 is the reduction of the first input
                extra = "".join(f", {k}={v!r}" for k, v in st[6].items() if v is not None)
                regs = [f"{st[5]}({regs[0]}{extra})"] + regs[1:]
            for op, a, b, *c in code:
                args = [regs[a]] + ([regs[b]] if op == "where" or op_arity(op) == 2 else []) + [regs[r] for r in c]
                regs.append(f"{op}({', '.join(args)})")
            lines.append(f"    {nm(out)} = fused[{dtype}] {regs[-1]}")
    for labels, logits, op in label_checks:
        lines.append(f"    check labels {nm(labels)} of {op}({nm(logits)}) after the steps")
    for k, o in enumerate(outputs):
        lines.append(f"    out {k} = {nm(o)}{' (copied)' if k in copies else ''}")
    return lines


def op_arity(name):
    from ...graph.ops.elemwise import _elemwise
    try:
        return _elemwise(name).nin
    except Exception:
        return 2


class ProgramThunk:
    """The callable a Program-compiling linker returns (``values -> outputs``), with what it
    compiled to: ``program`` is the one ``uma._core.Program`` of the whole graph (None when
    some op runs in Python between Program segments). :class:`uma.Function` calls the
    program from C++ when the linker's residency is the host's."""

    __slots__ = ("__call__", "python_ops", "n_fused", "lines", "program")

    def __init__(self, run, python_ops, n_fused, lines, program=None):
        self.__call__ = run
        self.python_ops = python_ops
        self.n_fused = n_fused
        self.lines = lines
        self.program = program

    def describe(self):
        return list(self.lines)
