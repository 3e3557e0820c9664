"""Graph rewrites: named passes that ``uma.function``'s ``mode`` switches on and off.

A compiled function's graph goes through these passes (in this order) before its linker sees
it; each pass rewrites a :class:`~uma.graph.FunctionGraph` in place and, except
``closed_forms``, never changes a value (bit for bit, NaN, infinities and signed zeros
included):

``cse``
    common-subexpression elimination: nodes with equal ops (equal ``props``) reading the same
    variables are merged, and so are constants of equal dtype, shape and bytes.
``constant_folding``
    a node whose inputs are all constants is evaluated once (with its op's reference
    ``perform``) and replaced by a constant. A node that fails is left alone (the error
    surfaces at call time, naming the op); a result that would be much larger than the
    node's inputs (a broadcast of a small constant) is not folded.
``simplify``
    algebraic identities that are exact in IEEE 754 arithmetic and in two's complement
    (see :data:`SIMPLIFICATIONS`): ``x * 1``, ``1 * x``, ``x / 1``, ``x - (+0.0)`` and
    ``x + (-0.0)`` -> ``x``; for integers also ``x + 0``, ``x - 0`` -> ``x`` and
    ``x - x`` -> zeros; ``-(-x)`` -> ``x``; ``not(not b)`` -> ``b``; ``x - (-y)`` -> ``x + y``;
    ``x + (-y)`` and ``(-y) + x`` -> ``x - y`` (these three where ``-y`` is computed in the
    result's dtype or in a float one: ``-y`` of a narrower integer wraps before it is promoted);
    ``x - c * y`` and ``x - y * c`` -> ``x + (-c) * y`` for a float constant ``c`` (no NaN) whose
    real float product nothing else reads (an SGD update ``w - lr * g`` becomes the scaled
    update ``w + s * g`` that cuBLAS's alpha and beta compute: Note [Scaled updates] in
    kernels/cuda/cublas.cpp);
    ``transpose(transpose(x))`` -> one transpose
    (or ``x``). A rule only fires when the result has exactly the type (dtype and static
    shape) of what it replaces. Not done because they are not exact: ``x + 0.0``
    (``-0.0 + 0.0`` is ``+0.0``), ``x * 0`` (NaN, inf, -0), float ``x - x`` (NaN, inf).
``closed_forms`` (linker pass, ``cpu`` and ``cuda``)
    cross-entropy written as ``sum(one_hot(y) * log_softmax(z), axis=1)``, and the gradient
    uma derives for it, become one op each (``one_hot_cross_entropy`` and its gradient). The
    one pass here that changes values: within the accuracy rule (DESIGN.md, "Decisions"), and
    where a row's logits hold -inf beside finite values (the closed form's limit instead of the
    product's NaN; NaN, +inf and an all -inf row give NaN in both, labels outside [0, K)
    included). It fires where ``one_hot``'s dtype is the logits' (``one_hot(y, K,
    dtype=z.dtype)``; the default float64 one-hot of float32 logits keeps the product).
    ``Mode(exclude=["closed_forms"])`` keeps the graph as written.
``fusion`` (linker pass, ``cpu`` and ``cuda``)
    a chain of elementwise ops of one dtype becomes one loop over memory.
``elide_broadcasts`` (linker pass, ``cpu``)
    a ``broadcast_like`` feeding an elementwise op that broadcasts by itself is dropped.

:func:`rewrite` runs the graph passes of a :class:`Mode`. When validation is on
(``Mode(validate=True)``, or :func:`set_validation` / the environment variable
``UMA_VALIDATE_REWRITES=1`` for every mode; the tests turn it on) :func:`~uma.graph.validate`
runs after every pass and names the pass that broke an invariant.
"""
from __future__ import annotations

import os

import numpy as np

from .basic import Constant, Variable
from .fgraph import FunctionGraph, validate

__all__ = ["Mode", "GRAPH_PASSES", "LINKER_PASSES", "PASSES", "rewrite", "set_validation",
           "validation_enabled", "as_mode", "RewriteError", "SIMPLIFICATIONS"]

#: Graph passes in the order they run (a pass may appear more than once in the pipeline).
GRAPH_PASSES = ("cse", "constant_folding", "simplify")
#: Passes a linker runs while compiling (the ``cpu`` linker; the ``cuda`` linker runs
#: ``closed_forms`` and ``fusion``).
LINKER_PASSES = ("closed_forms", "elide_broadcasts", "fusion")
#: Every pass name a :class:`Mode` accepts.
PASSES = GRAPH_PASSES + LINKER_PASSES

_PIPELINE = ("cse", "constant_folding", "simplify", "cse")

_VALIDATE = os.environ.get("UMA_VALIDATE_REWRITES", "") not in ("", "0")


class RewriteError(AssertionError):
    """A rewrite pass produced an invalid graph (a bug in uma; raised only when validating)."""


def set_validation(on: bool) -> bool:
    """Validate the graph after every pass of every mode (``True``) or only for modes made
    with ``validate=True`` (``False``). Returns the previous setting."""
    global _VALIDATE
    old, _VALIDATE = _VALIDATE, bool(on)
    return old


def validation_enabled() -> bool:
    return _VALIDATE


class Mode:
    """Which rewrite passes a compiled function gets (PyTensor's ``Mode`` with named passes).

    ``Mode()`` enables every pass in :data:`PASSES`; ``Mode(exclude=["fusion"])`` all but
    fusion; ``Mode(include=["cse"])`` only CSE; ``Mode(include=[])`` none. ``validate=True``
    runs :func:`~uma.graph.validate` after every pass. ``ValueError`` for an unknown pass
    name (the message lists the known ones); ``TypeError`` for a name that is not a string,
    ``include``/``exclude`` that is not a name or an iterable of names, or ``validate`` that
    is not a bool.
    """

    __slots__ = ("include", "exclude", "validate")

    def __init__(self, include=None, exclude=(), *, validate=False):
        self.include = None if include is None else _names(include, "include")
        self.exclude = _names(exclude, "exclude")
        if not isinstance(validate, (bool, np.bool_)):
            raise TypeError(f"Mode: validate must be True or False, got {validate!r}")
        self.validate = bool(validate)

    def enabled(self, name: str) -> bool:
        """Whether pass ``name`` runs."""
        if name in self.exclude:
            return False
        return self.include is None or name in self.include

    @property
    def passes(self) -> tuple:
        """The enabled passes, in :data:`PASSES` order."""
        return tuple(p for p in PASSES if self.enabled(p))

    def __eq__(self, other):
        return isinstance(other, Mode) and self.passes == other.passes and self.validate == other.validate

    def __hash__(self):
        return hash((self.passes, self.validate))

    def __repr__(self):
        return f"Mode(passes={list(self.passes)}{', validate=True' if self.validate else ''})"

    def __getstate__(self):
        return (self.include, self.exclude, self.validate)

    def __setstate__(self, state):
        self.include, self.exclude, self.validate = state


def _names(names, what):
    if isinstance(names, str):
        names = [names]
    elif isinstance(names, (bytes, bytearray)) or not hasattr(names, "__iter__"):
        raise TypeError(f"Mode: {what} must be a pass name or an iterable of pass names, got {names!r}")
    out = []
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"Mode: {what} entries must be pass names (str), got {n!r}")
        if n not in PASSES:
            raise ValueError(f"Mode: unknown pass {n!r} in {what} (known: {', '.join(PASSES)})")
        out.append(n)
    return frozenset(out)


def as_mode(mode) -> Mode:
    """``mode`` as a :class:`Mode`: None -> every pass; a Mode as is; a dict of Mode keyword
    arguments (``{"exclude": ["fusion"]}``). ``TypeError`` for anything else."""
    if mode is None:
        return _DEFAULT
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, dict):
        unknown = set(mode) - {"include", "exclude", "validate"}
        if unknown:
            raise TypeError(f"mode: unknown key(s) {sorted(unknown)} (use include, exclude, validate)")
        return Mode(**mode)
    raise TypeError(f"mode must be None, a uma.Mode or a dict like {{'exclude': ['fusion']}}, got {mode!r}")


_DEFAULT = Mode()


# ======================================================================================
# the driver
# ======================================================================================

def rewrite(fgraph: FunctionGraph, mode=None) -> list:
    """Run ``mode``'s graph passes on ``fgraph`` in place; returns the names of the passes
    that ran. With validation on, :class:`RewriteError` names a pass that broke the graph."""
    mode = as_mode(mode)
    check = mode.validate or _VALIDATE
    ran = []
    for name in _PIPELINE:
        if not mode.enabled(name):
            continue
        _PASS_FUNCTIONS[name](fgraph)
        fgraph._order = None
        ran.append(name)
        if check:
            check_pass(fgraph, name)
    return ran


def check_pass(fgraph, name):
    """Validate ``fgraph`` after pass ``name`` (:class:`RewriteError` naming the pass)."""
    try:
        validate(fgraph)
    except Exception as e:
        raise RewriteError(f"rewrite pass {name!r} produced an invalid graph: {e}") from e


def _substitute(fgraph, subst):
    """Make every reader (and the outputs list) use ``subst[v]`` instead of ``v``, following
    chains. Node inputs are updated in place."""
    if not subst:
        return

    def final(v):
        while v in subst:
            v = subst[v]
        return v

    for node in fgraph.toposort():
        if any(v in subst for v in node.inputs):
            node.inputs = [final(v) for v in node.inputs]
    fgraph.outputs = [final(v) for v in fgraph.outputs]
    fgraph._order = None


# ======================================================================================
# cse
# ======================================================================================

def _const_key(c: Constant):
    v = c.value
    return (v.dtype.str, v.shape, v.tobytes())


def cse(fgraph: FunctionGraph):
    """Merge equal constants and nodes applying equal ops to the same inputs."""
    subst = {}
    consts = {}
    seen = {}

    def canon(v):
        v = subst.get(v, v)
        if isinstance(v, Constant):
            key = _const_key(v)
            first = consts.setdefault(key, v)
            if first is not v:
                subst[v] = first
            return first
        return v

    for node in fgraph.toposort():
        node.inputs = [canon(v) for v in node.inputs]
        try:
            key = (node.op, tuple(id(v) for v in node.inputs))
            hash(key)
        except TypeError:  # an op with unhashable props: never merged
            continue
        other = seen.get(key)
        if other is None:
            seen[key] = node
            continue
        if [o.type for o in other.outputs] != [o.type for o in node.outputs]:
            continue
        for old, new in zip(node.outputs, other.outputs):
            subst[old] = new
    fgraph.outputs = [canon(v) for v in fgraph.outputs]
    _substitute(fgraph, subst)


# ======================================================================================
# constant folding
# ======================================================================================

#: A folded constant may have at most this many elements more than its op's inputs together.
FOLD_GROWTH_LIMIT = 1 << 16


def constant_folding(fgraph: FunctionGraph):
    """Replace nodes whose inputs are all constants by the constants they compute."""
    import uma
    subst = {}
    for node in fgraph.toposort():
        if any(v in subst for v in node.inputs):
            node.inputs = [subst.get(v, v) for v in node.inputs]
        if not node.inputs or not all(isinstance(v, Constant) for v in node.inputs):
            continue
        if not getattr(node.op, "foldable", True):
            continue
        try:
            results = node.op.perform(node, [uma.asarray(v.value) for v in node.inputs])
            arrays = [np.array(np.asarray(r), copy=True) for r in results]
        except Exception:
            continue  # left alone: the error surfaces at call time, naming the op
        in_size = sum(v.value.size for v in node.inputs)
        if any(a.size > in_size + FOLD_GROWTH_LIMIT for a in arrays):
            continue
        news = []
        for var, a in zip(node.outputs, arrays):
            c = Constant(a, dtype=var.type.dtype)
            if c.type.dtype != var.type.dtype or not var.type.is_compatible_shape(c.value.shape):
                break
            news.append(c)
        else:
            subst.update(zip(node.outputs, news))
    _substitute(fgraph, subst)


# ======================================================================================
# exact algebraic simplifications
# ======================================================================================

def _const(v):
    return v.value if isinstance(v, Constant) else None


def _all(v, pred):
    c = _const(v)
    if c is None or c.size == 0:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(pred(c)))


def _is_one(v):
    return _all(v, lambda c: c == 1)


def _is_int_zero(v):
    return v.dtype != "bool" and v.dtype[0] in "iu" and _all(v, lambda c: c == 0)


def _is_pos_zero(v):  # +0.0 (or integer 0)
    return _all(v, lambda c: (c == 0) & ~np.signbit(c)) if v.dtype[0] == "f" else _is_int_zero(v)


def _is_neg_zero(v):
    return v.dtype[0] == "f" and _all(v, lambda c: (c == 0) & np.signbit(c))


def _op_of(v, name):
    o = v.owner
    return o if o is not None and o.op.name == name else None


def _same_type(new, old):
    return new.type == old.type


def _rule_mul_one(node, readers):
    a, b = node.inputs
    out = node.outputs[0]
    for x, c in ((a, b), (b, a)):
        if _is_one(c) and _same_type(x, out):
            return x
    return None


def _rule_div_one(node, readers):
    a, b = node.inputs
    return a if _is_one(b) and _same_type(a, node.outputs[0]) else None


def _rule_add(node, readers):
    from . import ops
    a, b = node.inputs
    out = node.outputs[0]
    for x, c in ((a, b), (b, a)):  # x + 0 (ints), x + (-0.0) (floats)
        if (_is_int_zero(c) or _is_neg_zero(c)) and _same_type(x, out):
            return x
    for x, n in ((a, b), (b, a)):  # x + (-y) -> x - y
        neg = _op_of(n, "negative")
        if neg is not None and _negation_commutes(neg, out):
            return _typed(ops.subtract(x, neg.inputs[0]), out)
    return None


def _rule_sub(node, readers):
    from . import ops
    a, b = node.inputs
    out = node.outputs[0]
    if _is_pos_zero(b) and _same_type(a, out):  # x - (+0)
        return a
    if a is b and a.dtype[0] in "iu" and a.dtype != "bool":  # x - x (ints only)
        return _typed(ops.zeros_like(a), out)
    neg = _op_of(b, "negative")  # x - (-y) -> x + y
    if neg is not None and _negation_commutes(neg, out):
        return _typed(ops.add(a, neg.inputs[0]), out)
    # x - c * y -> x + (-c) * y for a real float product: -(c * y) is (-c) * y exactly (not for
    # complex products, where c's imaginary +0 makes a zero's sign differ)
    mul = _op_of(b, "multiply")
    if mul is not None and readers.get(b, 0) == 1 and b.dtype[0] == "f" and out.dtype[0] == "f":
        for k, c in enumerate(mul.inputs):
            if isinstance(c, Constant) and c.dtype[0] == "f" and not np.isnan(c.value).any():
                ins = list(mul.inputs)
                ins[k] = Constant(np.negative(c.value), dtype=c.dtype)
                scaled = _typed(ops.multiply(*ins), b)
                return None if scaled is None else _typed(ops.add(a, scaled), out)
    return None


def _rule_double(name):
    def rule(node, readers):
        inner = _op_of(node.inputs[0], name)
        if inner is not None and _same_type(inner.inputs[0], node.outputs[0]):
            return inner.inputs[0]
        return None
    return rule


def _rule_transpose(node, readers):
    from . import ops
    inner = _op_of(node.inputs[0], "transpose")
    if inner is None:
        return None
    x = inner.inputs[0]
    perm = tuple(inner.op.axes[a] for a in node.op.axes)
    return _typed(ops.transpose(x, perm), node.outputs[0])


def _negation_commutes(neg, out):
    """Whether ``-y`` (the node ``neg``) computed in y's dtype and then promoted to ``out``'s is
    ``-(y promoted)``: in the same dtype (two's complement wraps alike), or in a float or
    complex dtype (negation and promotion are exact). ``-y`` of uint8 200 is 56, not -200, and
    of int8 -128 is -128, so ``x + (-y)`` of a wider x is not ``x - y`` there."""
    t = neg.outputs[0].dtype
    return t == out.dtype or t[0] in "fcb" and t != "bool"


def _typed(new, old):
    """``new`` if it has ``old``'s type exactly, else None (the rule does not apply)."""
    return new if isinstance(new, Variable) and new.type == old.type else None


#: op name -> rule(node, readers) -> replacement variable or None (``readers``: variable -> the
#: number of node inputs and graph outputs that read it). Every rule is exact (see module doc).
SIMPLIFICATIONS = {
    "multiply": _rule_mul_one,
    "divide": _rule_div_one,
    "add": _rule_add,
    "subtract": _rule_sub,
    "negative": _rule_double("negative"),
    "logical_not": _rule_double("logical_not"),
    "transpose": _rule_transpose,
}


def simplify(fgraph: FunctionGraph):
    """Apply :data:`SIMPLIFICATIONS` until none fires (new nodes are simplified too)."""
    for _ in range(8):  # each sweep only shortens the graph; a few sweeps reach the fixpoint
        subst = {}
        changed = False
        readers = {}
        for v in [v for node in fgraph.toposort() for v in node.inputs] + list(fgraph.outputs):
            readers[v] = readers.get(v, 0) + 1
        for node in fgraph.toposort():
            if any(v in subst for v in node.inputs):
                node.inputs = [_final(subst, v) for v in node.inputs]
            rule = SIMPLIFICATIONS.get(node.op.name)
            if rule is None or len(node.outputs) != 1:
                continue
            new = rule(node, readers)
            if new is not None and new is not node.outputs[0]:
                subst[node.outputs[0]] = new
                changed = True
        _substitute(fgraph, subst)
        if not changed:
            break


def _final(subst, v):
    while v in subst:
        v = subst[v]
    return v


_PASS_FUNCTIONS = {"cse": cse, "constant_folding": constant_folding, "simplify": simplify}


def count_nodes(fgraph) -> int:
    """The number of apply nodes (a helper for tests and dprint)."""
    return len(fgraph.toposort())

