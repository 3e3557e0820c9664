"""Packaging facts of the installed package: the version comes from one place (pyproject.toml,
through the distribution's metadata) and CHANGELOG.md has a section for it; the CUDA build
finds the nvidia-cublas wheel's library."""
import importlib.metadata as md
import os
import re

import pytest

import uma

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pyproject_version():
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        return re.search(r'^version = "([^"]+)"', fh.read(), re.M).group(1)


def test_version_is_the_installed_distributions():
    try:
        dist = md.distribution("uma")
    except md.PackageNotFoundError:
        pytest.skip("uma is not installed as a distribution (a source-tree run)")
    here = os.path.realpath(os.path.dirname(uma.__file__))
    if os.path.realpath(os.path.dirname(str(dist.locate_file("uma/__init__.py")))) != here:
        assert uma.__version__ == "0+unknown"  # a copy outside the distribution (asan-py's)
    else:
        assert uma.__version__ == dist.version == pyproject_version()


def test_changelog_has_a_section_for_the_version():
    with open(os.path.join(ROOT, "CHANGELOG.md")) as fh:
        headings = re.findall(r"^## (\S+)", fh.read(), re.M)
    assert headings and headings[0] == pyproject_version()


def test_cuda_build_uses_the_pip_cublas_library(tmp_path, monkeypatch):
    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcublas.so.13").write_bytes(b"")

    class Built:
        @staticmethod
        def built_with_cuda():
            return True

    monkeypatch.setattr(uma.cuda, "_c", Built)
    monkeypatch.setattr("sys.path", ["/nonexistent", str(tmp_path)])
    monkeypatch.setenv("UMA_CUBLAS", "")
    uma.cuda._use_pip_library("UMA_CUBLAS", "lib/libcublas.so.13")
    assert os.environ["UMA_CUBLAS"] == str(lib / "libcublas.so.13")
    monkeypatch.setenv("UMA_CUBLAS", "/chosen/libcublas.so")  # a user's choice is kept
    uma.cuda._use_pip_library("UMA_CUBLAS", "lib/libcublas.so.13")
    assert os.environ["UMA_CUBLAS"] == "/chosen/libcublas.so"


def test_cuda_build_uses_the_pip_cccl_headers(tmp_path, monkeypatch):
    """The nvidia-cuda-cccl wheel's include/cccl folder becomes $UMA_CUDA_CCCL (the headers the
    chain compiler gives NVRTC); a missing folder leaves the variable unset."""
    class Built:
        @staticmethod
        def built_with_cuda():
            return True

    monkeypatch.setattr(uma.cuda, "_c", Built)
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    monkeypatch.delenv("UMA_CUDA_CCCL", raising=False)
    # A folder in the working directory (sys.path's '' or a relative entry) is never taken.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "nvidia" / "cu13" / "include" / "cccl").mkdir(parents=True)
    monkeypatch.setattr("sys.path", ["", "rel"])
    uma.cuda._use_pip_library("UMA_CUDA_CCCL", "include/cccl")
    assert "UMA_CUDA_CCCL" not in os.environ
    monkeypatch.setattr("sys.path", ["", str(tmp_path)])
    uma.cuda._use_pip_library("UMA_CUDA_CCCL", "include/cccl")
    assert "UMA_CUDA_CCCL" not in os.environ
    cccl = tmp_path / "nvidia" / "cu13" / "include" / "cccl"
    cccl.mkdir(parents=True)
    uma.cuda._use_pip_library("UMA_CUDA_CCCL", "include/cccl")
    assert os.environ["UMA_CUDA_CCCL"] == str(cccl)


def test_cpu_check_names_the_missing_x86_features(monkeypatch):
    from uma import _cpu
    old = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx avx2 fma\n"
    assert _cpu.missing_flags(old) == ["bmi1", "bmi2", "f16c", "abm", "movbe"]
    assert _cpu.missing_flags("flags : " + " ".join(_cpu.X86_FLAGS)) == []
    monkeypatch.setattr(_cpu.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(_cpu.platform, "system", lambda: "Linux")
    monkeypatch.delenv("UMA_SKIP_CPU_CHECK", raising=False)
    with pytest.raises(ImportError, match="x86-64-v3 CPUs; this CPU lacks bmi1, bmi2, f16c, abm, movbe"):
        _cpu.check(old)
    _cpu.check("flags : " + " ".join(_cpu.X86_FLAGS))  # a CPU with every feature passes
    monkeypatch.setenv("UMA_SKIP_CPU_CHECK", "1")
    _cpu.check(old)  # a build for a lower level skips the check


def test_cmake_builds_for_the_level_the_cpu_check_names():
    from pathlib import Path

    from uma import _cpu
    root = Path(__file__).resolve().parents[2]
    cmake = (root / "CMakeLists.txt").read_text()
    assert "python/uma/_cpu.py" in cmake and "-march=${UMA_X86_LEVEL}" in cmake
    assert re.search(r'^X86_LEVEL = "x86-64-v3"$', (root / "python/uma/_cpu.py").read_text(), re.M)
    assert _cpu.X86_LEVEL == "x86-64-v3"
