"""The host CPU features uma's compiled code needs, checked before ``uma._core`` is loaded.

On x86-64, uma's C++ core is compiled for the x86-64-v3 instruction level (AVX, AVX2, BMI1,
BMI2, F16C, FMA, LZCNT, MOVBE: the psABI's level 3, every x86-64 CPU since about 2015);
``CMakeLists.txt`` reads :data:`X86_LEVEL` from this file. On a CPU without them the import
would die of an illegal instruction; :func:`check` raises ImportError naming the missing
features instead.
"""
from __future__ import annotations

import os
import platform

#: The -march level of uma's x86-64 builds (read by CMakeLists.txt).
X86_LEVEL = "x86-64-v3"
#: Its features, as Linux's /proc/cpuinfo names them (lzcnt is "abm").
X86_FLAGS = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe")


def missing_flags(cpuinfo: str) -> list:
    """The features of :data:`X86_FLAGS` absent from the first ``flags`` line of
    ``cpuinfo`` (the text of /proc/cpuinfo); [] when the text has no flags line."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            have = set(value.split())
            return [f for f in X86_FLAGS if f not in have]
    return []


def check(cpuinfo: str | None = None) -> None:
    """ImportError when this is an x86-64 Linux machine whose CPU lacks a feature of
    :data:`X86_LEVEL`; nothing elsewhere, when /proc/cpuinfo cannot be read, or when the
    environment sets ``UMA_SKIP_CPU_CHECK=1`` (a build for a lower ``UMA_X86_LEVEL``).
    ``cpuinfo``: the text to read instead of /proc/cpuinfo."""
    if os.environ.get("UMA_SKIP_CPU_CHECK") == "1":
        return
    if platform.machine().lower() not in ("x86_64", "amd64") or platform.system() != "Linux":
        return
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
                cpuinfo = fh.read()
        except OSError:
            return
    missing = missing_flags(cpuinfo)
    if missing:
        raise ImportError(f"uma is compiled for {X86_LEVEL} CPUs; this CPU lacks {', '.join(missing)} "
                          "(/proc/cpuinfo flags). To run uma here, build it from source with "
                          "-DUMA_X86_LEVEL=x86-64 and set UMA_SKIP_CPU_CHECK=1.")
