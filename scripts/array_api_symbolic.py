"""Which functions of the Array API standard's main namespace have a symbolic form in uma.

    python scripts/array_api_symbolic.py [SPEC_DIR] [--version 2025.12]

SPEC_DIR is a checkout of data-apis/array-api (default: build/array-api-tests/src/array-api,
where scripts/array_api_suite.sh puts it); the names are the ``__all__`` of the version's stub
modules (the main namespace: every module but the linalg and fft extensions, the info module,
the array object, the constants and the type stubs). For each name the script calls
``uma.<name>`` with symbolic variables (``uma.sym``) in the places its arrays go and says what
came back: ``graph`` (a Variable: a graph was built; ``gradient`` when ``uma.sym.grad`` of the
sum of its floating outputs with respect to its float inputs builds), ``value`` (a plain value such as a dtype
or a bool, computed from the variables' static types), ``no array input`` (creation from
scalars: nothing symbolic to pass), or the exception. Exit status 1 when a function that takes
arrays builds no graph and is not one of the eager-only functions (EAGER_ONLY).
"""
from __future__ import annotations

import argparse
import ast
import pathlib
import subprocess
import sys

#: functions without a symbolic form on purpose: data-dependent output shapes, not
#: differentiable (docs/DESIGN.md, 'The Array API namespace')
EAGER_ONLY = {"nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values"}

#: stub modules that are not the main namespace's functions
NOT_MAIN = {"__init__", "_types", "array_object", "constants", "data_types", "info", "linalg", "fft"}

#: functions of arrays created from Python values only
NO_ARRAY_INPUT = {"arange", "empty", "eye", "full", "linspace", "ones", "zeros", "from_dlpack", "asarray",
                  "broadcast_shapes"}


def main_namespace(spec: pathlib.Path, version: str) -> list[str]:
    """The function names of the standard's main namespace at ``version``, read from the git
    tree of ``spec`` (no checkout needed)."""
    folder = f"src/array_api_stubs/_{version.replace('.', '_')}"
    files = subprocess.run(["git", "-C", str(spec), "ls-tree", "--name-only", "HEAD", folder + "/"],
                           check=True, capture_output=True, text=True).stdout.split()
    names: list[str] = []
    for f in files:
        if pathlib.PurePosixPath(f).stem in NOT_MAIN or not f.endswith(".py"):
            continue
        text = subprocess.run(["git", "-C", str(spec), "show", f"HEAD:{f}"], check=True,
                              capture_output=True, text=True).stdout
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__":
                names += [n for n in ast.literal_eval(node.value) if n not in names]
    return sorted(names)


def calls(uma):
    """name -> a function making the call on symbolic variables."""
    s = uma.sym
    x = lambda: s.matrix("x", "float64", shape=(3, 4))  # noqa: E731
    y = lambda: s.matrix("y", "float64", shape=(3, 4))  # noqa: E731
    b = lambda: s.matrix("b", "bool", shape=(3, 4))  # noqa: E731
    i = lambda: s.matrix("i", "int64", shape=(3, 4))  # noqa: E731
    v = lambda: s.vector("v", "float64", shape=(4,))  # noqa: E731
    special = {
        "astype": lambda f: f(x(), "float32"),
        "can_cast": lambda f: f(x(), "float32"),
        "finfo": lambda f: f(x()),
        "iinfo": lambda f: f(i()),
        "isdtype": lambda f: f(x().dtype, "real floating"),
        "result_type": lambda f: f(x(), i()),
        "clip": lambda f: f(x(), 0.0, 1.0),
        "round": lambda f: f(x()),
        "where": lambda f: f(b(), x(), y()),
        "logical_and": lambda f: f(b(), b()), "logical_or": lambda f: f(b(), b()),
        "logical_xor": lambda f: f(b(), b()), "logical_not": lambda f: f(b()),
        "bitwise_and": lambda f: f(i(), i()), "bitwise_or": lambda f: f(i(), i()),
        "bitwise_xor": lambda f: f(i(), i()), "bitwise_invert": lambda f: f(i()),
        "bitwise_left_shift": lambda f: f(i(), i()), "bitwise_right_shift": lambda f: f(i(), i()),
        "matmul": lambda f: f(x(), s.matrix("w", "float64", shape=(4, 2))),
        "tensordot": lambda f: f(x(), s.matrix("w", "float64", shape=(4, 2)), axes=1),
        "vecdot": lambda f: f(x(), y()),
        "take": lambda f: f(x(), s.vector("k", "int64", shape=(2,)), axis=1),
        "take_along_axis": lambda f: f(x(), i(), axis=1),
        "broadcast_to": lambda f: f(v(), (3, 4)),
        "broadcast_arrays": lambda f: f(x(), v()),
        "concat": lambda f: f([x(), y()]), "stack": lambda f: f([x(), y()]),
        "expand_dims": lambda f: f(x(), axis=(0, -1)), "squeeze": lambda f: f(s.tensor("t", "float64", (1, 4)), axis=0),
        "moveaxis": lambda f: f(x(), 0, 1), "permute_dims": lambda f: f(x(), (1, 0)),
        "repeat": lambda f: f(x(), 2, axis=0), "reshape": lambda f: f(x(), (4, 3)),
        "roll": lambda f: f(x(), 1, axis=1), "tile": lambda f: f(x(), (2, 1)),
        "unstack": lambda f: f(x()), "flip": lambda f: f(x()),
        "meshgrid": lambda f: f(v(), v()),
        "empty_like": lambda f: f(x()), "full_like": lambda f: f(x(), 1.0),
        "ones_like": lambda f: f(x()), "zeros_like": lambda f: f(x()),
        "searchsorted": lambda f: f(v(), x()),
        "count_nonzero": lambda f: f(x()), "nonzero": lambda f: f(x()),
        "cumulative_sum": lambda f: f(x(), axis=1), "cumulative_prod": lambda f: f(x(), axis=1),
        "diff": lambda f: f(x(), axis=1),
        "isin": lambda f: f(x(), y()),
    }
    return special


def _gradient(uma, outs):
    """', gradient' when the float inputs of the graph get a gradient of the sum of its float
    outputs, ', no gradient: ...' when uma.grad refuses, '' when no output is floating."""
    from uma.graph.basic import Constant, ancestors
    floats = [o for o in outs if o.dtype.startswith(("float", "complex"))]
    if not floats:
        return ""
    ins = [v for v in ancestors(floats) if v.owner is None and not isinstance(v, Constant)
           and v.dtype.startswith("float")]
    if not ins:
        return ""
    cost = floats[0].sum() if len(floats) == 1 else uma.sym.add(*[f.sum() for f in floats[:2]])
    try:
        uma.sym.grad(uma.sym.real(cost) if cost.dtype.startswith("complex") else cost, ins)
    except uma.graph.gradient.DisconnectedInputError:
        return ", gradient zero (the result does not depend on the input's values)"
    except Exception as e:  # noqa: BLE001 - reported
        return f", no gradient: {type(e).__name__}: {str(e).splitlines()[0][:70]}"
    return ", gradient"


def classify(uma, name, call):
    fn = getattr(uma, name, None)
    if fn is None:
        return "missing from uma"
    try:
        out = call(fn)
    except Exception as e:  # noqa: BLE001 - reported
        return f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    outs = out if isinstance(out, (tuple, list)) else [out]
    if outs and all(isinstance(o, uma.sym.Variable) for o in outs):
        return "graph" + _gradient(uma, outs)
    if any(isinstance(o, uma.sym.Variable) for o in outs):
        return "graph (partly)"
    return f"value ({type(out).__name__})"


def main(argv=None):
    root = pathlib.Path(__file__).resolve().parent.parent
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("spec", nargs="?", default=str(root / "build/array-api-tests/src/array-api"))
    p.add_argument("--version", default="2025.12")  # uma.__array_api_version__
    args = p.parse_args(argv)
    import uma
    special = calls(uma)
    unary = lambda f: f(uma.sym.matrix("x", "float64", shape=(3, 4)))  # noqa: E731
    binary = lambda f: f(uma.sym.matrix("x", "float64", shape=(3, 4)),  # noqa: E731
                         uma.sym.matrix("y", "float64", shape=(3, 4)))
    arity = {row["name"]: row["arity"] for row in uma._core._op_table()}
    arity.update({alias: arity[target] for alias, target in uma._api.ALIASES.items() if target in arity})
    missing = []
    for name in main_namespace(pathlib.Path(args.spec), args.version):
        if name in NO_ARRAY_INPUT:
            print(f"{name:22s} no array input")
            continue
        call = special.get(name) or (binary if arity.get(name) == 2 else unary)
        what = classify(uma, name, call)
        print(f"{name:22s} {what}")
        if not (what.startswith("graph") or what.startswith("value")) and name not in EAGER_ONLY:
            missing.append(name)
    print(f"\nno symbolic form: {' '.join(missing) or '(none)'}; eager only by design: {' '.join(sorted(EAGER_ONLY))}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
