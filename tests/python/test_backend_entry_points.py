"""Backends that other packages declare as entry points of the group ``uma.backends``
(python/uma/runtime/linker.py, ``backends``/``get_linker``): found without importing their
module first, so a pickled function unpickles in a fresh process; a broken declaration warns
and is skipped; one whose framework is absent (None) is not registered.

The plug-in is a real installed distribution as ``importlib.metadata`` sees one: a module and
its ``.dist-info`` folder (METADATA, entry_points.txt) on the child interpreter's path."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import child_env

PLUGIN = textwrap.dedent("""\
    from uma.runtime.linkers.reference import ReferenceLinker


    class ToyLinker(ReferenceLinker):
        name = "toy"


    def absent():
        return None  # the backend's framework is not installed here


    def not_a_linker():
        return object()


    def exits():
        raise SystemExit(3)
""")

ENTRY_POINTS = textwrap.dedent("""\
    [uma.backends]
    toy = toy_backend:ToyLinker
    absent = toy_backend:absent
    broken = toy_backend:no_such_name
    wrong = toy_backend:not_a_linker
    exits = toy_backend:exits
""")


@pytest.fixture
def plugin_path(tmp_path):
    (tmp_path / "toy_backend.py").write_text(PLUGIN)
    info = tmp_path / "toy_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return tmp_path


def _run(code, plugin_path):
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(plugin_path)])
    r = subprocess.run([sys.executable, "-W", "always::RuntimeWarning", "-c", textwrap.dedent(code)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def test_a_declared_backend_is_listed_and_broken_ones_warn(plugin_path):
    r = _run("""
        import sys, uma
        assert "toy_backend" not in sys.modules
        names = uma.backends()
        assert "toy" in names and "absent" not in names, names
        assert "broken" not in names and "wrong" not in names, names
        print("ok")
    """, plugin_path)
    assert "ok" in r.stdout
    assert "backend 'broken' of entry point 'toy_backend:no_such_name'" in r.stderr, r.stderr
    assert "backend 'wrong'" in r.stderr and "not a uma.Linker" in r.stderr, r.stderr
    assert "backend 'exits'" in r.stderr and "SystemExit" in r.stderr, r.stderr  # warned, the process goes on
    assert "'absent'" not in r.stderr


def test_a_pickled_function_finds_its_backend_in_a_fresh_process(plugin_path, tmp_path):
    path = tmp_path / "f.pkl"
    _run(f"""
        import pickle, numpy as np, uma
        w = uma.shared(np.arange(3.0), "w")
        x = uma.sym.vector("x")
        f = uma.function([x], w * x, updates={{w: w + 1}}, backend="toy")
        f(np.ones(3))
        with open({str(path)!r}, "wb") as fh:
            pickle.dump(f, fh)
    """, plugin_path)
    r = _run(f"""
        import pickle, sys, numpy as np, uma
        assert "toy_backend" not in sys.modules
        with open({str(path)!r}, "rb") as fh:
            f = pickle.load(fh)
        assert "toy_backend" in sys.modules and f.backend == "toy"
        print(np.asarray(f(np.full(3, 2.0))).tolist())
    """, plugin_path)
    assert r.stdout.strip() == str([2.0, 4.0, 6.0])


def test_an_unknown_backend_still_names_the_available_ones(plugin_path):
    r = _run("""
        import uma
        try:
            uma.function([], [], backend="nope")
        except ValueError as e:
            print(e)
    """, plugin_path)
    assert "unknown backend 'nope'" in r.stdout and "toy" in r.stdout


def test_a_folder_named_like_a_framework_registers_no_backend(tmp_path, monkeypatch):
    """The built-in framework backends are registered where the framework is a module of its
    own (found without importing it), not where a bare folder of that name is on the path (a
    project's ``torch/`` directory, which Python would import as an empty namespace package)."""
    from uma.runtime import _installed
    (tmp_path / "fw_folder_only").mkdir()
    (tmp_path / "fw_package").mkdir()
    (tmp_path / "fw_package" / "__init__.py").write_text("")
    (tmp_path / "fw_namespace").mkdir()  # as MLX: a namespace package with an extension inside
    (tmp_path / "fw_namespace" / "core.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not _installed("fw_folder_only")
    assert _installed("fw_package")
    assert _installed("fw_namespace.core") and not _installed("fw_namespace.missing")
    assert not _installed("no_such_module_anywhere")
