"""The graph walker every linker uses.

A linker's **dispatch table** is a :func:`functools.singledispatch` function keyed on the op
class: ``table(op, node)`` returns what the linker makes of that node (for a linker that
evaluates node by node, a function ``impl(inputs) -> [outputs]`` taking and returning its
native values; for ``cpu`` and ``cuda``, the Program op the node becomes), or None where the
table has nothing for it. :func:`walk` asks the table once per node, in execution order, at
compile time; :func:`evaluator` turns the answers into the thunk that runs them
(straight-line code over numbered slots, no per-call dispatch).
"""
from __future__ import annotations

import functools
import operator

__all__ = ["walk", "evaluator", "node_steps", "straight_line", "straight_code", "by_signature", "has_perform", "perform_impl"]


def walk(fgraph, table):
    """``[(node, table(node.op, node))]`` for the nodes of ``fgraph`` in execution order."""
    return [(node, table(node.op, node)) for node in fgraph.toposort()]


def has_perform(op) -> bool:
    """Whether ``op`` defines its reference semantics (``perform``)."""
    from ...graph.basic import Op
    return type(op).perform is not Op.perform


def perform_impl(op, node):
    """The implementation of ``node`` by its op's reference ``perform`` (``uma.Array`` s in and
    out), None for an op without one."""
    return functools.partial(op.perform, node) if has_perform(op) else None


def evaluator(fgraph, table, *, constant, copy, output=None, after=()):
    """The thunk ``values -> outputs`` that evaluates ``fgraph`` node by node with the
    implementations ``table`` gives (see the module documentation).

    ``constant(c)``: the native value of a :class:`~uma.graph.Constant` (made once, here);
    ``copy(value)``: a fresh copy (for ``fgraph.outputs_needing_copy()``); ``output(var)``:
    None, or ``check(value, node) -> value`` applied to each value computed for ``var``
    (conversions, dtype checks); ``after``: more steps ``(impl, node, inputs, outputs)`` run
    after the nodes. ``NotImplementedError`` naming the op for a node the table has no
    implementation for (``uma.function`` reports those before compiling: ``Linker.unsupported``).
    """
    steps = node_steps(fgraph, table)
    steps.extend(after)
    return straight_line(fgraph.inputs, fgraph.outputs, steps, fgraph.outputs_needing_copy(),
                         constant=constant, copy=copy, output=output)


def node_steps(fgraph, table):
    """The steps ``(impl, node, node.inputs, node.outputs)`` of :func:`evaluator`, one per node of
    ``fgraph`` in execution order (the same errors)."""
    steps = []
    for node, impl in walk(fgraph, table):
        if impl is None:
            raise NotImplementedError(f"{node.op}: no implementation in the dispatch table "
                                      f"{getattr(table, '__qualname__', table)!s}")
        if not callable(impl):
            raise TypeError(f"{node.op}: the dispatch table {getattr(table, '__qualname__', table)!s} gave "
                            f"{impl!r:.80}, not a function of the node's input values")
        steps.append((impl, node, node.inputs, node.outputs))
    return steps


def straight_line(inputs, outputs, steps, copies, *, constant, copy, output=None):
    """The thunk running ``steps`` (``(impl, node, in_vars, out_vars)``: ``impl(values of
    in_vars) -> values of out_vars``) in order, with ``inputs`` bound to the call's values;
    returns the values of ``outputs``, copied (``copy``) at the positions in ``copies``.
    Constants read by a step or returned get a slot holding ``constant(c)``; ``output`` as in
    :func:`evaluator`."""
    slot = {v: k for k, v in enumerate(inputs)}
    template = [None] * len(slot)

    def slot_of(v):
        s = slot.get(v)
        if s is None:  # the only roots besides the inputs are constants
            s = slot[v] = len(template)
            template.append(constant(v))
        return s

    plan = []
    for impl, node, ins, outs in steps:
        in_slots = [slot_of(v) for v in ins]
        out_slots = []
        for v in outs:
            slot[v] = len(template)
            template.append(None)
            out_slots.append((slot[v], None if output is None else output(v)))
        plan.append((impl, node, in_slots, out_slots))
    out_slots = [(slot_of(o), k in copies) for k, o in enumerate(outputs)]
    n_in = len(inputs)

    def thunk(values):
        env = template.copy()
        env[:n_in] = values
        for impl, node, ins, outs in plan:
            results = impl([env[i] for i in ins])
            for (s, check), r in zip(outs, results):
                env[s] = r if check is None else check(r, node)
        return [copy(env[s]) if c else env[s] for s, c in out_slots]

    return thunk


def straight_code(inputs, outputs, steps, copies, *, constant, copy, finish=None, guard=None):
    """What :func:`straight_line` computes, as one generated Python function: a local name per
    value, one line per step, no per-call loop and no result checks (``output`` is not
    applied). For a thunk whose checks ran once per input signature (:func:`by_signature`).

    A step's ``impl`` may say how to call it in generated code: ``impl.direct``, a function
    with ``impl(values) == [direct(*values)]`` (a one-output step), is called as it is;
    ``impl.inline(ins, outs, namespace)`` gives the lines (unindented) that compute the values
    named ``outs`` from those named ``ins``, after adding what they call to ``namespace`` (the
    generated function's globals). ``finish``: None, or a function called once on the values
    returned, each once (``finish(*values)``, before any copy), before they are returned
    (MLX's ``mx.eval``).
    ``guard``: None, or ``(seen, first)``: the generated function is then the thunk itself,
    and starts with the check of the values' shapes: where the tuple of their shapes is not
    in the set ``seen``, it returns ``first(values, key)`` instead."""
    names = {v: f"a{k}" for k, v in enumerate(inputs)}
    namespace = {"copy": copy, "finish": finish}
    lines = ["def run(values):"]
    if inputs:
        lines.append(f"    {', '.join(names[v] for v in inputs)}, = values")
    if guard is not None:
        namespace["seen"], namespace["first"] = guard
        if inputs:
            lines.append(f"    key = ({''.join(names[v] + '.shape, ' for v in inputs)})")
            lines.append("    if key not in seen:")
            lines.append("        return first(values, key)")
        else:
            lines.append("    if not seen:")
            lines.append("        return first(values, ())")

    def name(v):
        n = names.get(v)
        if n is None:  # the only roots besides the inputs are constants
            n = names[v] = f"c{len(namespace)}"
            namespace[n] = constant(v)
        return n

    for j, (impl, _node, ins, outs) in enumerate(steps):
        arg_names = [name(v) for v in ins]
        args = ", ".join(arg_names)
        inline = getattr(impl, "inline", None)
        if inline is not None:
            out_names = [f"t{j}_{k}" for k in range(len(outs))]
            names.update(zip(outs, out_names))
            lines.extend("    " + line for line in inline(arg_names, out_names, namespace))
            continue
        direct = getattr(impl, "direct", None)  # impl(values) is [direct(*values)]
        if direct is not None and len(outs) == 1:
            namespace[f"f{j}"] = direct
            names[outs[0]] = f"t{j}_0"
            lines.append(f"    t{j}_0 = f{j}({args})")
            continue
        namespace[f"f{j}"] = impl
        lines.append(f"    r = f{j}([{args}])")
        for k, v in enumerate(outs):
            names[v] = f"t{j}_{k}"
            lines.append(f"    t{j}_{k} = r[{k}]")
    results = [f"copy({name(o)})" if k in copies else name(o) for k, o in enumerate(outputs)]
    if finish is not None and results:
        lines.append(f"    finish({', '.join(dict.fromkeys(name(o) for o in outputs))})")
    lines.append(f"    return [{', '.join(results)}]")
    exec(compile("\n".join(lines) + "\n", "<uma straight_code>", "exec"), namespace)
    return namespace["run"]


_SIGNATURES = 64  # input signatures remembered per thunk (then forgotten and checked again)


def by_signature(fgraph, checked, fast=None, *, code=None, wrap=None, shape=operator.attrgetter("shape"),
                 native_args=None, settled=None):
    """The thunk that runs ``checked`` (every result checked) for the first call with each
    combination of value shapes, and ``fast`` (no checks: :func:`straight_code`) for the next
    ones. Before ``checked`` runs, the values' shapes are checked against the inputs' types and
    uma's shape rule of every node runs (its ``ValueError`` names the op, or the composed function
    that built the node: ``infer_node_shape``), so the thunk has ``checks_shapes``
    (uma.Function leaves that check to it); after, every update's shape is
    checked against its shared variable's type, so it has ``checks_updates`` (the C++ call does
    not describe the updates again; an update that does not fit turns it off for good, and the
    call's own check raises the error). Dtypes need no check per signature: the inputs' dtypes
    are the graph's, and the backend's results have the same dtypes whatever the shapes.

    ``code``: instead of ``fast``, the keyword arguments of :func:`straight_code` (``inputs``,
    ``outputs``, ``steps``, ``copies``, ``constant``, ``copy``, ``finish``): the thunk is then
    that generated function, with the shape check as its first lines (no Python frame of its
    own; the values' shapes are their ``shape`` attributes). ``wrap``: None, or
    ``wrap(thunk) -> thunk`` applied to it (a context such as ``np.errstate``).
    ``shape(value)``: the value's shape (hashable; with ``fast``); ``native_args``: the thunk's
    ``native_args`` (see uma.Function), or None; ``settled()``: None, or False after a checked
    run that did what ``fast`` does not (a result converted to the backend's type): that
    signature is then not remembered."""
    from ...graph.basic import infer_node_shape
    inputs = list(fgraph.inputs)
    types = [v.type for v in inputs]
    updates = [(oi, fgraph.inputs[ii].type) for oi, ii in sorted(fgraph.update_mapping.items())]
    seen = set()
    constant_shapes = {c: tuple(c.value.shape) for c in fgraph.constants()}
    nodes = fgraph.toposort()
    made = []  # the thunk (set below)

    def first(values, key):
        for v, t, s in zip(inputs, types, key):
            if not t.is_compatible_shape(tuple(s)):
                raise TypeError(f"a value of shape {tuple(s)} for {v} of type {t}")
        env = dict(zip(inputs, (tuple(s) for s in key)))
        env.update(constant_shapes)
        for node in nodes:
            try:
                env.update(zip(node.outputs, infer_node_shape(node, [env[i] for i in node.inputs])))
            except NotImplementedError:
                break
        outs = checked(values)
        for oi, t in updates:
            if not t.is_compatible_shape(tuple(shape(outs[oi]))):
                made[0].checks_updates = False  # the call's own check names the problem
                return outs
        if settled is not None and not settled():
            return outs
        if len(seen) >= _SIGNATURES:
            seen.clear()
        seen.add(key)
        return outs

    if code is not None:
        if fast is not None:
            raise TypeError("by_signature: give fast or code, not both")
        thunk = straight_code(guard=(seen, first), **code)
    else:
        def thunk(values):
            key = tuple(map(shape, values))
            if key in seen:
                return fast(values)
            return first(values, key)

    if wrap is not None:
        thunk = wrap(thunk)
    made.append(thunk)
    thunk.checks_updates = True
    thunk.checks_shapes = True
    if native_args is not None:
        thunk.native_args = native_args
    return thunk


def table_register(table, applies, otherwise=lambda op, node: None):
    """The registration decorator of a backend's dispatch table ``table`` (a singledispatch
    function): ``@register(*classes)`` on ``make(node) -> impl or None`` makes ``table(op,
    node)`` give ``make(node)`` where ``applies(node)`` (the dtypes the backend computes as uma
    does), and ``otherwise(op, node)`` where it does not apply or gives None."""
    def register(*classes):
        def deco(make):
            def entry(op, node, make=make):
                impl = make(node) if applies(node) else None
                return impl if impl is not None else otherwise(op, node)
            for cls in classes:
                table.register(cls)(entry)
            return make
        return deco
    return register


def runs(fgraph, impls):
    """The nodes of ``fgraph`` in execution order cut into maximal runs of nodes that have an
    implementation (``impls``: one per node of ``fgraph.toposort()``, None where it has none)
    and single nodes that have none: ``[(nodes, fns, in_vars, out_vars, constants)]``, where
    ``fns`` is None for a single node without an implementation. For a run, ``in_vars`` are
    the non-constant variables it reads from outside, ``constants`` the constants it reads and
    ``out_vars`` those of its results that a graph output or a later step needs, in execution
    order; for a single node they are its inputs and outputs. A backend compiles each run as
    one function (``jax.jit``, ``numba.njit``) and runs the single nodes some other way."""
    from ...graph.basic import Constant
    nodes = fgraph.toposort()
    groups, cur = [], []
    for node, fn in zip(nodes, impls):
        if fn is None:
            if cur:
                groups.append(cur)
                cur = []
            groups.append([(node, None)])
        else:
            cur.append((node, fn))
    if cur:
        groups.append(cur)
    readers = {}
    for g, grp in enumerate(groups):
        for node, _ in grp:
            for v in node.inputs:
                readers.setdefault(v, set()).add(g)
    graph_outputs = set(fgraph.outputs)
    result = []
    for g, grp in enumerate(groups):
        if grp[0][1] is None:
            node = grp[0][0]
            result.append(([node], None, list(node.inputs), list(node.outputs), []))
            continue
        inside = {v: None for node, _ in grp for v in node.outputs}  # in execution order
        in_vars, constants = {}, {}
        for node, _ in grp:
            for v in node.inputs:
                if v not in inside:
                    (constants if isinstance(v, Constant) else in_vars)[v] = None
        out_vars = [v for v in inside if v in graph_outputs or readers.get(v, set()) - {g}]
        result.append(([n for n, _ in grp], [f for _, f in grp], list(in_vars), out_vars, list(constants)))
    return result
