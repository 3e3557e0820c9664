"""FunctionGraph: a private copy of the subgraph between given inputs and outputs.

A compiled function owns a :class:`FunctionGraph`: the user's graph between ``inputs`` and
``outputs`` cloned (so rewrites by a linker never touch the user's variables), plus an
``update_mapping`` ``{output index: input index}`` that says which outputs are the new values
of which (shared-variable) inputs. Constants are immutable and are not cloned.
"""
from __future__ import annotations

from .basic import Apply, Constant, Variable, toposort
from .type import _fmt_shape

__all__ = ["FunctionGraph", "MissingInputError", "validate", "alias_root"]


class MissingInputError(ValueError):
    """An output depends on a root variable that is neither an input nor a constant."""


def _describe(v):
    return repr(v.name) if v.name is not None else repr(v)


class FunctionGraph:
    """The subgraph from ``inputs`` to ``outputs`` (cloned unless ``clone=False``).

    - ``inputs``: root variables (no constants, no duplicates); an input may be an
      intermediate variable of the user's graph, which is then cut there.
    - ``outputs``: variables computed from the inputs and constants
      (``MissingInputError``, a ``ValueError``, naming any other root they need).
    - ``update_mapping``: ``{output index: input index}``; the output is the new value of
      that input (a shared variable), written after the call.
    - ``memo``: original variable -> its clone (when cloned).
    """

    def __init__(self, inputs, outputs, update_mapping=None, *, clone=True):
        inputs, outputs = list(inputs), list(outputs)
        self._given_inputs, self._given_outputs = inputs, outputs
        seen = set()
        for i in inputs:
            if not isinstance(i, Variable):
                raise TypeError(f"FunctionGraph inputs must be Variables, got {i!r}")
            if isinstance(i, Constant):
                raise TypeError(f"a constant cannot be an input: {i!r}")
            if i in seen:
                raise ValueError(f"input {_describe(i)} is given more than once")
            seen.add(i)
        for o in outputs:
            if not isinstance(o, Variable):
                raise TypeError(f"FunctionGraph outputs must be Variables, got {o!r}")
        self.memo = {}
        self.update_mapping = dict(update_mapping or {})
        if clone:
            memo = {i: i.clone() for i in inputs}
            for node in toposort(outputs, stop=inputs):
                new_inputs = [self._lookup(memo, v) for v in node.inputs]
                new = node.clone_with_new_inputs(new_inputs)
                memo.update(zip(node.outputs, new.outputs))
            self.inputs = [memo[i] for i in inputs]
            self.outputs = [self._lookup(memo, o) for o in outputs]
            self.memo = memo
        else:
            self.inputs, self.outputs = inputs, outputs
            known = set(inputs)
            for node in toposort(outputs, stop=inputs):
                for v in node.inputs:
                    if v.owner is None and v not in known and not isinstance(v, Constant):
                        raise MissingInputError(self._missing_msg(v))
            for o in outputs:
                if o.owner is None and o not in known and not isinstance(o, Constant):
                    raise MissingInputError(self._missing_msg(o))
        for oi, ii in self.update_mapping.items():
            if not (0 <= oi < len(self.outputs)) or not (0 <= ii < len(self.inputs)):
                raise ValueError(f"update_mapping entry {oi}->{ii} out of range")
        self._order = None
        del self._given_inputs, self._given_outputs  # the user's graph: needed only for errors above

    def _missing_msg(self, v):
        """The message naming ``v`` and the first output that needs it: an update (named by
        the variable it updates) or an output (by its position)."""
        who = "the outputs depend"
        stop = set(self._given_inputs)
        for k, o in enumerate(self._given_outputs):
            if o is v or any(v in n.inputs for n in toposort([o], stop=stop)):
                if 0 <= self.update_mapping.get(k, -1) < len(self._given_inputs):
                    who = f"the update of {_describe(self._given_inputs[self.update_mapping[k]])} depends"
                else:
                    who = f"output {k} depends"
                break
        return (f"{who} on {_describe(v)}, which is not among the inputs; pass it "
                f"in the inputs list (or make it a shared variable)")

    def _lookup(self, memo, v):
        if v in memo:
            return memo[v]
        if isinstance(v, Constant):
            return v
        if v.owner is None:
            raise MissingInputError(self._missing_msg(v))
        raise AssertionError(f"graph is not in topological order at {v!r}")  # pragma: no cover

    # ---- queries ----------------------------------------------------------------------
    def toposort(self):
        """Apply nodes in an order where each node's inputs are computed first."""
        if self._order is None:
            self._order = toposort(self.outputs, stop=self.inputs)
        return self._order

    @property
    def apply_nodes(self):
        return list(self.toposort())

    def constants(self):
        """Constants the graph reads (each once)."""
        found = {}
        for node in self.toposort():
            for v in node.inputs:
                if isinstance(v, Constant):
                    found[v] = None
        for o in self.outputs:
            if isinstance(o, Constant):
                found[o] = None
        return list(found)

    def clients(self, var):
        """``[(node, input position)]`` that read ``var``."""
        return [(n, k) for n in self.toposort() for k, v in enumerate(n.inputs) if v is var]

    # ---- rewriting ------------------------------------------------------------------------
    def replace(self, old: Variable, new: Variable):
        """Make every reader of ``old`` (and the outputs list) use ``new``.

        ``TypeError`` if the dtype or ndim of ``new`` differs."""
        if old.type.dtype != new.type.dtype or old.type.ndim != new.type.ndim:
            raise TypeError(f"replace: {old!r} and {new!r} have different types")
        for node in self.toposort():
            node.inputs = [new if v is old else v for v in node.inputs]
        self.outputs = [new if v is old else v for v in self.outputs]
        self._order = None

    def clone(self) -> "FunctionGraph":
        fg = FunctionGraph(self.inputs, self.outputs, self.update_mapping, clone=True)
        return fg

    # ---- aliasing ---------------------------------------------------------------------------
    def outputs_needing_copy(self):
        """Output indices whose value must be copied so that no returned value or stored
        update aliases an input (shared variable or argument), a constant, or another output.

        Update outputs claim their memory first; then the function's outputs in order.
        """
        inputs = set(self.inputs)
        claimed = set()
        need = set()
        order = sorted(self.update_mapping) + [i for i in range(len(self.outputs))
                                              if i not in self.update_mapping]
        for i in order:
            root = alias_root(self.outputs[i])
            if root in inputs or isinstance(root, Constant) or root in claimed:
                need.add(i)
            else:
                claimed.add(root)
        return need

    def __repr__(self):
        lines = [f"FunctionGraph(inputs={self.inputs})"]
        for n in self.toposort():
            lines.append(f"  {n.outputs} = {n.op}({', '.join(map(str, n.inputs))})")
        lines.append(f"  outputs={self.outputs} updates={self.update_mapping}")
        return "\n".join(lines)


def alias_root(var):
    """The variable whose memory ``var`` may share: follows ops' ``view_of`` back."""
    while var.owner is not None:
        vm = var.owner.op.view_of
        if var.index not in vm:
            break
        var = var.owner.inputs[vm[var.index]]
    return var


def validate(fgraph: FunctionGraph):
    """Check a FunctionGraph's invariants; raise on the first violation.

    - inputs are ownerless non-constant variables, each once (``TypeError``/``ValueError``);
    - every node reads only inputs, constants or outputs of earlier nodes
      (``MissingInputError``);
    - every node's output types are what its op infers from its inputs (``TypeError``);
    - every update output has its input's dtype and ndim, and static shapes agree
      (``TypeError``).
    """
    ins = set()
    for i in fgraph.inputs:
        if not isinstance(i, Variable) or isinstance(i, Constant):
            raise TypeError(f"validate: bad input {i!r}")
        if i in ins:
            raise ValueError(f"validate: input {_describe(i)} appears twice")
        ins.add(i)
    available = set(ins)
    for node in fgraph.toposort():
        if not isinstance(node, Apply):
            raise TypeError(f"validate: {node!r} is not an Apply node")
        for v in node.inputs:
            if v not in available and not isinstance(v, Constant):
                raise MissingInputError(FunctionGraph._missing_msg(v))
        expected = node.op.output_types(list(node.inputs))
        got = [o.type for o in node.outputs]
        if expected != got:
            raise TypeError(f"validate: node {node.op} produces {got} but its op infers {expected}")
        for o in node.outputs:
            if o.owner is not node:
                raise TypeError(f"validate: output {o!r} of {node.op} has another owner")
        available.update(node.outputs)
    for o in fgraph.outputs:
        if o not in available and not isinstance(o, Constant):
            raise MissingInputError(FunctionGraph._missing_msg(o))
    for oi, ii in fgraph.update_mapping.items():
        out, inp = fgraph.outputs[oi].type, fgraph.inputs[ii].type
        if out.dtype != inp.dtype or out.ndim != inp.ndim:
            raise TypeError(f"validate: update {oi} has type {out} but input {ii} has type {inp}")
        for a, b in zip(out.shape, inp.shape):
            if a is not None and b is not None and a != b:
                raise TypeError(f"validate: update {oi} has static shape {_fmt_shape(out.shape)} but input "
                                f"{ii} has {_fmt_shape(inp.shape)}")
