"""Shared test machinery.

* Every PTX string that cujit produces during a test -- in the test body or in
  its fixtures -- is assembled with ``ptxas -arch=<the PTX's .target>`` once the
  test body has run; an assembler failure fails that test with ptxas's log.
  The capture is the core's PTX observer (``cujit._core.observe_ptx``: the
  compile driver and ``_core.compile_ptx`` report every PTX they make;
  ``cuda.compile``, ``cuda.compile_ptx`` and dispatchers all go through them),
  installed at conftest import, before any test module is imported. ``test_compile_api`` checks that the
  capture sees the PTX of every public entry point.
* ``CUJIT_PTX_DIGESTS=<path>``: every observed PTX is also recorded, one line each ("symbol options-key
  sha1"), in ``<path>.<xdist worker>``: two runs of the suite (say, before and after a change to the optimiser)
  tell whether any function's PTX changed (``sort -u`` the files of each run, then ``diff`` them).
* ``ptxas`` (session fixture): the assembler's path; fails clearly if missing.
* ``register_ptx`` (fixture): hand PTX obtained some other way (e.g. from a
  subprocess) to the same assembler check.
* ``prototypes`` (fixture): parses PTX ``.func``/``.entry`` prototypes.
* The tests live in one directory per component (compiler/, runtime/, linking/, caching/, package/,
  cuda_random/); helpers shared between components (programs.py, script_runs.py, link_program_src.py) stay here,
  and this directory is put on ``sys.path`` so that every test, and every child process given this ``sys.path``,
  imports them by name. Data files are in data/, the fake libcuda in fake_cuda/.
"""

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import pytest

import cujit  # noqa: F401  (loads the extension before wrapping it)
from cujit import _core

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

# ----------------------------------------------------------------------------------------------
# ptxas
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def find_ptxas():
    """ptxas from $CUDA_HOME/bin, /usr/local/cuda/bin or PATH; None when there is none."""
    candidates = []
    if os.environ.get("CUDA_HOME"):
        candidates.append(os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas"))
    candidates.append("/usr/local/cuda/bin/ptxas")
    on_path = shutil.which("ptxas")
    if on_path:
        candidates.append(on_path)
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


PTXAS_MISSING = (
    "ptxas was not found: looked in $CUDA_HOME/bin, /usr/local/cuda/bin and PATH. Install the "
    "CUDA toolkit (>= 12) or set CUDA_HOME; every PTX produced by the tests is assembled with it."
)


@pytest.fixture(scope="session")
def ptxas():
    path = find_ptxas()
    if path is None:
        pytest.fail(PTXAS_MISSING, pytrace=False)
    return path


_TARGET_RE = re.compile(r"^\s*\.target\s+(\w+)", re.M)


def ptx_target(ptx):
    """The architecture named by the PTX's .target directive (``sm_90a``), or None."""
    m = _TARGET_RE.search(ptx)
    return m.group(1) if m else None


@functools.lru_cache(maxsize=4096)
def _assemble_cached(digest, ptx):
    path = find_ptxas()
    if path is None:
        return False, PTXAS_MISSING
    arch = ptx_target(ptx)
    if arch is None:
        return False, "the PTX has no .target directive"
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
        fh.write(ptx)
        name = fh.name
    # PTX that calls declared (.extern) functions is relocatable code: assembled with -c, as a link does.
    relocatable = ["-c"] if re.search(r"^\.extern \.func", ptx, re.M) else []
    try:
        proc = subprocess.run(
            [path, f"-arch={arch}", *relocatable, "-o", os.devnull, name], capture_output=True, text=True, timeout=120
        )
    finally:
        os.unlink(name)
    return proc.returncode == 0, f"ptxas -arch={arch} exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def assemble(ptx):
    """(ok, log) of ``ptxas -arch=<target> [-c] -o /dev/null`` on `ptx` (cached per distinct PTX)."""
    return _assemble_cached(hashlib.sha256(ptx.encode()).hexdigest(), ptx)


# ----------------------------------------------------------------------------------------------
# PTX capture
# ----------------------------------------------------------------------------------------------

_PENDING = []  # PTX produced since the last check
CAPTURED_COUNT = [0]  # total number of PTX strings seen (for the capture self-test)

_compile_ptx = _core.compile_ptx  # (observed too: the option sweep's PTX is assembled as it is made)


# CUJIT_OPTION_SWEEP=1: every function the tests compile is compiled again under each combination of
# opt, debug, lineinfo and fastmath, and that PTX is assembled too (a check of the compiler over the whole
# suite's functions, minutes long: run by hand, see the README's test section).
_OPTION_SWEEP = os.environ.get("CUJIT_OPTION_SWEEP") == "1"
SWEPT = [0]


def _sweep_options(typed, options):
    import itertools

    for opt, debug, lineinfo, fastmath in itertools.product((False, True), repeat=4):
        if (opt, debug, lineinfo, fastmath) == (options.opt, options.debug, options.lineinfo, options.fastmath):
            continue
        variant = options.copy()
        variant.opt, variant.debug, variant.lineinfo, variant.fastmath = opt, debug, lineinfo, fastmath
        _SWEEPING[0] = True
        try:
            _compile_ptx(typed, variant, False)
        finally:
            _SWEEPING[0] = False
        SWEPT[0] += 1


_SWEEPING = [False]


_DIGESTS = os.environ.get("CUJIT_PTX_DIGESTS")


def _observe_ptx(ptx, typed, options):
    if _DIGESTS:
        with open(f"{_DIGESTS}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}", "a") as f:
            f.write(f"{typed.symbol} {options.key()} {hashlib.sha1(ptx.encode()).hexdigest()}\n")
    _PENDING.append(ptx)
    CAPTURED_COUNT[0] += 1
    if _OPTION_SWEEP and not _SWEEPING[0]:
        _sweep_options(typed, options)


_core.observe_ptx(_observe_ptx)


def _check_pending():
    """Assembles every pending PTX; returns the failure reports."""
    pending, _PENDING[:] = list(_PENDING), []
    failures = []
    for ptx in pending:
        ok, log = assemble(ptx)
        if not ok:
            head = "\n".join(ptx.splitlines()[:40])
            failures.append(f"{log}\n--- first lines of the PTX ---\n{head}")
    return failures


def _report(failures):
    return f"{len(failures)} PTX string(s) produced by this test do not assemble:\n\n" + "\n\n".join(failures)


def pytest_terminal_summary(terminalreporter):
    if _OPTION_SWEEP:
        terminalreporter.write_line(
            f"CUJIT_OPTION_SWEEP: {SWEPT[0]} extra compiles under other option combinations, each assembled with ptxas"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fails a test whose PTX (produced in its setup or body) does not assemble."""
    try:
        result = yield
    except BaseException as exc:
        failures = _check_pending()
        if failures and hasattr(exc, "add_note"):
            exc.add_note(_report(failures))
        raise
    failures = _check_pending()
    if failures:
        pytest.fail(_report(failures), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """PTX produced while tearing down (rare) is checked too, as a teardown error."""
    result = yield
    failures = _check_pending()
    if failures:
        pytest.fail(_report(failures), pytrace=False)
    return result


@pytest.fixture
def register_ptx():
    """``register_ptx(ptx)``: assemble PTX that did not come through this process's compiler."""
    return _PENDING.append


@pytest.fixture
def captured_count():
    """A callable returning how many PTX strings the capture has seen so far."""
    return lambda: CAPTURED_COUNT[0]


# ----------------------------------------------------------------------------------------------
# PTX prototypes
# ----------------------------------------------------------------------------------------------


@dataclass
class Prototype:
    kind: str  # "func" or "entry"
    linkage: str  # "visible", "extern", "weak" or "" (internal)
    name: str
    retval: str | None  # "b32", "b64", "align 8 b8[16]"... None when the function returns nothing
    params: list = field(default_factory=list)  # parameter types in order: "b64", "u32", "f32"...


_PROTO_RE = re.compile(
    r"^[ \t]*(?:\.(?P<linkage>visible|extern|weak)\s+)?\.(?P<kind>func|entry)\s*"
    r"(?:\(\s*\.param\s+(?P<ret>[^()]*?)\s*func_retval0(?P<retarr>\[\d+\])?\s*\))?\s*"
    r"(?P<name>[\w$.]+)\s*\((?P<params>[^()]*)\)",
    re.M,
)


def _param_type(decl):
    tokens = decl.split()
    assert tokens and tokens[0] == ".param", f"not a .param declaration: {decl!r}"
    body = tokens[1:-1]  # drop ".param" and the parameter's name
    if ".ptr" in body:  # LLVM 22 marks kernel pointer parameters `.u64 .ptr [.space] .align N`: hints, same ABI
        body = body[: body.index(".ptr")]
    suffix = re.search(r"\[\d+\]$", tokens[-1])
    return " ".join(t.lstrip(".") for t in body) + (suffix.group(0) if suffix else "")


def parse_prototypes(ptx):
    """Every .func/.entry prototype (definitions and declarations) of `ptx`, in order."""
    protos = []
    for m in _PROTO_RE.finditer(ptx):
        ret = None
        if m.group("ret") is not None:
            ret = " ".join(t.lstrip(".") for t in m.group("ret").split()) + (m.group("retarr") or "")
        params = [_param_type(p.strip()) for p in m.group("params").split(",") if p.strip()]
        protos.append(Prototype(m.group("kind"), m.group("linkage") or "", m.group("name"), ret, params))
    return protos


def visible_prototype(ptx):
    """The single ``.visible`` function or kernel of `ptx` (what compile/compile_ptx emit)."""
    visible = [p for p in parse_prototypes(ptx) if p.linkage == "visible"]
    assert len(visible) == 1, f"expected exactly one .visible function, found {visible}"
    return visible[0]


@pytest.fixture(scope="session")
def prototypes():
    """The PTX prototype parser: ``prototypes(ptx)`` -> [Prototype]; ``prototypes.visible(ptx)``."""
    parse = functools.partial(parse_prototypes)
    parse.visible = visible_prototype
    return parse


# ---- a host-side stand-in for libcuda (tests/fake_cuda): the runtime without a GPU ----------------------------

FAKE_DRIVER_SRC = os.path.join(TESTS_DIR, "fake_cuda", "fake_libcuda.c")


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory):
    """The fake libcuda built for this session (a path for ``CUJIT_CUDA_DRIVER``)."""
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler for the fake driver")
    lib = tmp_path_factory.mktemp("fake_cuda") / "libfakecuda.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(lib), FAKE_DRIVER_SRC, "-lpthread"], check=True, capture_output=True
    )
    return str(lib)


@pytest.fixture
def rng():
    """A numpy Generator on a fresh seed (printed, so a failure can be replayed)."""
    import numpy as np

    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return np.random.default_rng(seed)
