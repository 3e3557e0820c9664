# uma — the two set-up commands of the README, and a few developer targets.
#
#   make demo    set up .venv, install uma (`pip install .`), train the digits MLP
#   make test    set up .venv, run every test: C++ (ctest), the installed C++ package (an
#                example project built against it), Python (pytest on the installed package), both again under ASAN+UBSAN, the memory tests under TSAN, and
#                each fuzz target for 30 s
#   make dev     fast in-tree build for developers: python/uma/_core*.so, so PYTHONPATH=python works
#   make bench   the benchmark tables (bench/bench_overview.py and bench/bench_call.py;
#                BENCH=bench/other.py for another)
#   make fuzz    build the libFuzzer targets of fuzz/ and run each FUZZ_SECONDS seconds (default 30)
#   make wheel   the wheels, repaired to manylinux by auditwheel: dist/cpu/ and, where nvcc is
#                installed, dist/cuda/ (FLAVOURS="cpu" or "cuda" for one)
#   make wheel-test  install each wheel of dist/ into a fresh venv with no compiler on PATH and
#                run the smoke test and the demo (scripts/test_wheel.sh)
#   make clean   remove build/, dist/ and the in-tree extension (keeps .venv)
#
# Variables: PYTHON (interpreter that creates the venv, default python3), VENV (default .venv),
# JOBS (parallel compile jobs, default 2), UMA_CUDA (AUTO/ON/OFF for make demo/install; default
# AUTO: the CUDA code only where a GPU is), ARGS (extra arguments for the demo or benchmark),
# BENCH (the benchmark scripts, run in turn), PHASES (subset of "cpp install python asan-cpp asan-py tsan fuzz" for
# make test), FUZZ_SECONDS (per fuzz target, for make fuzz and the fuzz phase), FLAVOURS (make
# wheel: cpu and/or cuda), WHEELS (make wheel-test: wheel files, default dist/*/uma-*.whl).

PYTHON ?= python3
VENV ?= .venv
JOBS ?= 2
ARGS ?=
BENCH ?= bench/bench_overview.py bench/bench_call.py
VPY := $(VENV)/bin/python
export VENV PYTHON JOBS

.PHONY: all demo test dev bench fuzz wheel wheel-test clean env-demo env-test env-dev env-bench env-fuzz env-wheel install help

all: help

help:
	@awk '/^#/ { print; next } { exit }' Makefile

env-demo env-test env-dev env-bench env-fuzz env-wheel: env-%:
	@bash scripts/setup_env.sh $*

# `pip install .` builds with scikit-build-core + nanobind, the pinned versions the demo profile
# put in the venv (no build isolation: nothing unpinned is downloaded).
# CMake's UMA_CUDA=AUTO compiles the CUDA code only on a machine with an NVIDIA GPU;
# `make demo UMA_CUDA=ON` compiles it wherever nvcc is (OFF: never).
install: env-demo
	$(VPY) -m pip install -q --disable-pip-version-check --no-build-isolation -c constraints.txt \
	  $(if $(UMA_CUDA),-Ccmake.define.UMA_CUDA=$(UMA_CUDA)) .

demo: install
	$(VPY) -m uma.examples.train $(ARGS)

test: env-test
	bash scripts/run_tests.sh

dev: env-dev
	PATH="$(abspath $(VENV))/bin:$$PATH" cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DUMA_BUILD_TESTS=OFF -DUMA_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(abspath $(VPY))"
	PATH="$(abspath $(VENV))/bin:$$PATH" cmake --build build/dev -j $(JOBS) --target _core
	rm -f python/uma/_core*.so
	cp build/dev/_core*.so python/uma/
	@echo "built python/uma/$$(cd build/dev && ls _core*.so): use PYTHONPATH=python $(VPY) ..."

fuzz: env-fuzz
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),30) bash scripts/fuzz.sh

bench: env-bench install
	set -e; for b in $(BENCH); do $(VPY) $$b $(ARGS); done

wheel: env-wheel
	bash scripts/build_wheels.sh $(FLAVOURS)

wheel-test:
	bash scripts/test_wheel.sh $(WHEELS)

clean:
	rm -rf build dist python/uma/_core*.so
