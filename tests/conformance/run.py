"""numba-cuda's own test suite as cujit's conformance measure (issue 41): ``make conformance``.

The project vendors none of numba-cuda's code. numba-cuda 0.30.4 is installed from PyPI into ``.bench-venv``
(``benchmarks/setup_numba_venv.sh``, with pytest); its tests are copied from there into
``build/conformance/cujit/`` with their imports of the public API (``from numba import cuda``, ``from numba.cuda
import ...``, ``numba.cuda.random``...) rewritten to cujit's, and both suites run in that venv: numba-cuda's as it
is, then the rewritten one, under ``NUMBA_ENABLE_CUDASIM=1`` (numba-cuda's simulator, cujit's CPU target) or, with
``--gpu``, on the GPU. numba-cuda's test helpers (``numba.cuda.testing``, ``numba.cuda.tests.support``) stay
numba-cuda's. Prints per-file pass counts side by side and writes them to ``build/conformance/results.json``;
files that test numba-cuda's internals (they import modules beyond its public API) are listed, not counted.

    python tests/conformance/run.py [--gpu] [--jobs N] [--only cujit|numba] [-k EXPR]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_PYTHON = os.path.join(ROOT, ".bench-venv", "bin", "python")
OUT = os.path.join(ROOT, "build", "conformance")


def cujit_path():
    """A directory holding an importable cujit for the suite's interpreter: ``python/`` when the extension was
    copied there (the GPU machine's ``make gpu-test`` way), else a copy of the package with the extension the
    project's venv built (``make build`` installs it beside the venv's editable finder)."""
    package = os.path.join(ROOT, "python")
    if any(n.startswith("_runtime") and n.endswith(".so") for n in os.listdir(os.path.join(package, "cujit"))):
        return package
    built = subprocess.run(
        [os.path.join(ROOT, ".venv", "bin", "python"), "-c", "import cujit._core as c; print(*c.library_files())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    site = os.path.join(OUT, "site")
    if os.path.exists(site):
        shutil.rmtree(site)
    shutil.copytree(os.path.join(package, "cujit"), os.path.join(site, "cujit"))
    for library in built:  # the two extensions and the runtime library they link
        shutil.copy(library, os.path.join(site, "cujit"))
    return site


# numba.cuda's public API that cujit mirrors, as module paths: imports of these are rewritten to cujit's.
PUBLIC = {
    "numba.cuda": "cujit.cuda",
    "numba.cuda.random": "cujit.cuda.random",
    "numba.cuda.bf16": "cujit.cuda.bf16",
    "numba.cuda.fp8": "cujit.cuda.fp8",
    "numba.cuda.types": "cujit.types",
    "numba.core.types": "cujit.types",
    "numba.cuda.extending": "cujit.extending",
}
# Helpers of numba-cuda's test suite, and its configuration and errors: left numba-cuda's.
HELPERS = (
    "numba.cuda.testing",
    "numba.cuda.tests",
    "numba.cuda.core.config",
    "numba.cuda.core.errors",
    "numba.cuda.config",
    "numba.cuda.np.numpy_support",
    "numba.cuda.utils",
    "numba.core.errors",
    "numba.core.config",
    "numba.np.numpy_support",
)
# numba-cuda's compiler and driver internals: a test file importing one of these tests numba-cuda itself.
INTERNAL_MODULES = (
    "numba.cuda.core",
    "numba.cuda.compiler",
    "numba.cuda.typing",
    "numba.cuda.lowering",
    "numba.cuda.cudadrv",
    "numba.cuda.codegen",
    "numba.cuda.datamodel",
    "numba.cuda.flags",
    "numba.cuda.descriptor",
    "numba.cuda.target",
    "numba.cuda.cgutils",
    "numba.cuda.dispatcher",
    "numba.cuda.models",
    "numba.cuda.itanium_mangler",
    "numba.cuda.debuginfo",
    "numba.cuda.cext",
    "numba.cuda._internal",
    "numba.cuda.memory_management",
    "numba.cuda.simulator",
    "numba.core.ir",
    "numba.core.compiler",
    "numba.core.typing",
)
# Directories of numba-cuda's own machinery (the simulator, running without CUDA, its runtime, its benchmarks).
INTERNAL_DIRS = ("cudasim", "nocuda", "nrt", "benchmarks", "core")

_FROM = re.compile(r"^(\s*)from\s+([\w.]+)\s+import\b([^\n(]*)", re.M)
_IMPORT_AS = re.compile(r"^(\s*)import\s+([\w.]+)\s+as\s+(\w+)", re.M)


PYTHON = VENV_PYTHON  # the suite's interpreter (--python)


def rewrite(source):
    """(source with the public API's imports made cujit's, the numba modules it still imports beyond the public
    API and the test helpers)."""
    internal = set()

    def note_internal(module, imported):
        """`module` is an internal one when what is imported from it is not all test helpers."""
        if module.startswith(INTERNAL_MODULES) and not all(name.startswith(HELPERS) for name in imported):
            internal.add(module)

    def from_import(m):
        indent, module, names = m.group(1), m.group(2), m.group(3)
        if module == "numba":  # from numba import cuda / types / float32...: cuda and types become cujit's
            return m.group(0)
        target = PUBLIC.get(module)
        if target is not None:
            return f"{indent}from {target} import{names}"
        imported = [f"{module}.{n.split(' as ')[0].strip()}" for n in names.split(",") if n.strip()]
        note_internal(module, imported or [module])
        return m.group(0)

    def import_as(m):
        indent, module, alias = m.groups()
        target = PUBLIC.get(module)
        if target is not None:
            return f"{indent}import {target} as {alias}"
        note_internal(module, [module])
        return m.group(0)

    out = _FROM.sub(from_import, source)
    out = _IMPORT_AS.sub(import_as, out)

    # from numba import cuda, types, float32...: cuda and types from cujit, the rest (numba's scalars) from numba
    def split_names(m):
        indent, names = m.group(1), [n.strip() for n in m.group(2).split(",") if n.strip()]
        ours = [n for n in names if n in ("cuda", "types")]
        theirs = [n for n in names if n not in ("cuda", "types")]
        out = [f"from cujit import {', '.join(ours)}"] if ours else []
        out += [f"from numba import {', '.join(theirs)}"] if theirs else []
        return indent + "; ".join(out)

    out = re.sub(r"^(\s*)from numba import ([\w ,]+)$", split_names, out, flags=re.M)
    return out, sorted(internal)


def numba_tests_dir():
    found = subprocess.run(
        [PYTHON, "-c", "import numba_cuda, os; print(os.path.dirname(numba_cuda.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return os.path.join(found, "numba", "cuda", "tests")


def prepare(source_dir, dest, rewritten=True):
    """Copies the tests to `dest` (package ``conformance_tests``), rewritten for cujit unless ``rewritten`` is false
    (numba-cuda's side runs its copy as it is: run inside site-packages, pytest's path insertion would import numba
    from numba-cuda's tree); returns {file: internal imports}."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(source_dir, dest, ignore=shutil.ignore_patterns("__pycache__"))
    internals = {}
    for folder, _, files in os.walk(dest):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            new, internal = rewrite(text)
            if rewritten:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
            rel = os.path.relpath(path, dest)
            if name.startswith("test_"):
                internals[rel] = internal
    return internals


# The pytest fixture numba-cuda's CUDATestCase uses, defined in numba-cuda's repository (not in its wheel): the
# harness's plugin gives it, doing nothing (and lets numba-cuda import under numpy 2.5).
PLUGIN = """import numpy
import pytest

if not hasattr(numpy, "row_stack"):  # numba-cuda 0.30.4 imports numpy.row_stack, which numpy 2.5 removed
    numpy.row_stack = numpy.vstack


@pytest.fixture
def initialize_from_pytest_config():
    yield
"""


def run_suite(label, tests_dir, rootdir, gpu, jobs, keyword, report_only=False, path=()):
    """Runs pytest on `tests_dir` in the venv, with `path` ahead on PYTHONPATH (``report_only``: reads the last
    run's results); returns {file: (passed, total)}."""
    xml = os.path.join(OUT, f"{label}.xml")
    if report_only:
        return read_results(xml)
    plugin_dir = os.path.join(OUT, "plugin")
    os.makedirs(plugin_dir, exist_ok=True)
    with open(os.path.join(plugin_dir, "conformance_plugin.py"), "w") as f:
        f.write(PLUGIN)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([plugin_dir, *path] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
        PYTHONDONTWRITEBYTECODE="1",
        NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
    )
    if not gpu:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    cmd = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conformance_plugin", "--junitxml", xml]
    cmd += ["-n", str(jobs)]
    cmd += ["--rootdir", rootdir, tests_dir] + (["-k", keyword] if keyword else [])
    print(f"== {label}: {' '.join(cmd[2:])}", flush=True)
    proc = subprocess.run(cmd, env=env, cwd=rootdir, capture_output=True, text=True, timeout=3600)
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:], flush=True)
    return read_results(xml)


def read_results(xml):
    """{file: (passed, total)} from a run's JUnit XML (a test file whose collection failed is ``(collection)``)."""
    counts = {}
    if not os.path.exists(xml):
        return counts
    for case in ElementTree.parse(xml).getroot().iter("testcase"):
        failed = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        key = _test_file(case.get("classname", ""))
        passed, total = counts.get(key, (0, 0))
        counts[key] = (passed + (not failed and not skipped), total + 1)
    return counts


def _test_file(classname):
    """``cudapy.test_foo.TestFoo`` -> ``cudapy/test_foo.py`` (the path below the tests' root)."""
    parts = classname.split(".")
    for i, part in enumerate(parts):
        if part.startswith("test_"):
            roots = [j for j, p in enumerate(parts[:i]) if p in ("tests", "conformance_tests")]
            return "/".join(parts[roots[-1] + 1 if roots else 0 : i + 1]) + ".py"
    return classname or "(collection)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", action="store_true", help="run on the GPU (default: the simulator / CPU target)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", choices=["cujit", "numba"])
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (a part of the suite)")
    parser.add_argument("--report-only", action="store_true", help="report the last run's results again")
    parser.add_argument(
        "--python", default=VENV_PYTHON, help="an interpreter with numba-cuda 0.30.4 and pytest (default .bench-venv's)"
    )
    options = parser.parse_args()
    global PYTHON
    PYTHON = shutil.which(options.python) or options.python
    if not os.path.exists(PYTHON):
        sys.exit(f"no {PYTHON}: run `make conformance` (it installs numba-cuda 0.30.4 from PyPI in .bench-venv)")
    os.makedirs(OUT, exist_ok=True)
    source = numba_tests_dir()
    mode = "gpu" if options.gpu else "cpu"
    dest = os.path.join(OUT, "cujit", "conformance_tests")
    internals = prepare(source, dest) if not options.report_only else prepare(source, os.path.join(OUT, "scratch"))
    theirs = os.path.join(OUT, "numba", "conformance_tests")
    if options.only != "cujit" and not options.report_only:
        prepare(source, theirs, rewritten=False)
    results = {}
    for side, tests in (("numba", theirs), ("cujit", dest)):
        if options.only in (None, side):
            results[side] = run_suite(
                f"{side}-{mode}",
                tests,
                os.path.dirname(tests),
                options.gpu,
                options.jobs,
                options.keyword,
                options.report_only,
                # numba-cuda's side runs without cujit; cujit's imports the package found once
                [cujit_path()] if side == "cujit" and not options.report_only else [],
            )
    report(results, internals, mode)


def report(results, internals, mode):
    files = sorted(set().union(*(r.keys() for r in results.values())) if results else [])
    counted = [f for f in files if not _internal(f, internals)]
    listed = [f for f in files if _internal(f, internals)]
    sides = list(results)
    print(f"\n| file ({mode}) | " + " | ".join(f"{s} passed" for s in sides) + " | tests |")
    print("|---|" + "---|" * (len(sides) + 1))
    totals = {s: 0 for s in sides}
    for f in counted:
        row = []
        total = 0
        for s in sides:
            passed, n = results[s].get(f, (0, 0))
            totals[s] += passed
            total = max(total, n)
            row.append(str(passed))
        print(f"| {f} | " + " | ".join(row) + f" | {total} |")
    print("| **total** | " + " | ".join(str(totals[s]) for s in sides) + " | |")
    print(f"\nnot counted (numba-cuda's internals): {len(listed)} files")
    for f in listed:
        why = internals.get(f) or ["its directory"]
        print(f"  {f}: {', '.join(why[:4])}")
    with open(os.path.join(OUT, "results.json"), "w") as fh:
        json.dump({"mode": mode, "totals": totals, "results": results, "internal": listed}, fh, indent=1)


def _internal(f, internals):
    return f.split("/")[0] in INTERNAL_DIRS or bool(internals.get(f))


if __name__ == "__main__":
    main()
