"""Import time of ``from cujit import cuda``, beside numba-cuda's ``from numba import cuda`` (issue 26).

Each figure is the median of ``--runs`` fresh processes (default 10), measured two ways:

- ``-X importtime``: the cumulative time of the modules the statement imported (the top-level entries that
  ``python -c pass`` does not have), as Python reports it;
- wall: the process's wall time minus that of ``python -c pass``, medians of runs taken alternately (it includes
  the interpreter's exit, so the extension's static destructors too).

cujit is measured as a wheel installs it: the working tree's ``python/cujit`` and the built extension are copied
into a temporary site directory, and the child sets aside the editable install's import hook, which imports
``importlib.util`` (about 2 ms) on the first cujit import, where a wheel has no hook. Both sides run with their
bytecode written and read (``PYTHONPYCACHEPREFIX`` in the temporary directory, one warm-up run first), as an
installed package does; this checkout's environment sets ``PYTHONDONTWRITEBYTECODE``, which would otherwise
compile every module at each run. numba-cuda runs in ``.bench-venv`` (``benchmarks/setup_numba_venv.sh``) when it
is there.

Then the modules ``from cujit import cuda`` imports, cujit's with their self time (median), and the others it
brings in with theirs. ``tests/package/test_imports.py`` checks that the disk cache, pickle, hashlib, json and numpy are
not among them; ``benchmarks/README.md`` says why each cujit module is there.

Usage: ``.venv/bin/python benchmarks/import_time.py [--runs 10] [--json out.json] [--no-numba]``
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
NUMBA_PYTHON = ROOT / ".bench-venv" / "bin" / "python"

# Run in the child before the statement: the editable install's finder (first on sys.meta_path) is set aside so
# that cujit comes from the wheel-like copy on PYTHONPATH. It costs nothing: sys is loaded at startup.
SET_ASIDE_EDITABLE = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'ScikitBuildRedirectingFinder']"
)


def wheel_layout(python, source, site):
    """Copies the package in ``source`` as a wheel lays it out (the Python files and the core's libraries, the two
    extensions and the runtime library they link, in one directory)."""
    extension = subprocess.run(
        [str(python), "-c", "import importlib.util; print(importlib.util.find_spec('cujit._runtime').origin)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = site / "cujit"
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for library in pathlib.Path(extension).parent.glob("*.so"):
        shutil.copy2(library, package)


def child_env(tmp, pythonpath=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def parse_importtime(stderr):
    """[(depth, name, self µs, cumulative µs)] from ``-X importtime`` output, in the order printed (children
    before their parent)."""
    entries = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "imported package" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|")
        stripped = name.lstrip()
        entries.append(((len(name) - len(stripped) - 1) // 2, stripped.strip(), int(self_us), int(cumulative_us)))
    return entries


def top_level(entries):
    return {name: cumulative for depth, name, _, cumulative in entries if depth == 0}


class Side:
    """One library's statement, run in fresh processes."""

    def __init__(self, label, python, statement, env, prelude=""):
        self.label, self.python, self.statement, self.env = label, str(python), statement, env
        self.code = f"{prelude}; {statement}" if prelude else statement
        self.baseline = set()

    def run(self, code, importtime=False):
        argv = [self.python] + (["-X", "importtime"] if importtime else []) + ["-c", code]
        start = time.perf_counter()
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{self.label}: {' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
        return elapsed, proc.stderr

    def measure(self, runs):
        self.run(self.code)  # warm-up: writes the bytecode
        self.run("pass")
        self.baseline = set(top_level(parse_importtime(self.run("pass", importtime=True)[1])))
        walls, bare, totals, trees = [], [], [], []
        for _ in range(runs):
            bare.append(self.run("pass")[0])
            walls.append(self.run(self.code)[0])
            entries = parse_importtime(self.run(self.code, importtime=True)[1])
            totals.append(sum(c for name, c in top_level(entries).items() if name not in self.baseline))
            trees.append(entries)
        return {
            "importtime_ms": statistics.median(totals) / 1000,
            "wall_ms": (statistics.median(walls) - statistics.median(bare)) * 1000,
            "bare_python_ms": statistics.median(bare) * 1000,
            "modules": self.imported(trees),
        }

    def imported(self, trees):
        """{module: median self ms} of what the statement imported."""
        times = {}
        for entries in trees:
            inside = False
            for depth, name, self_us, _ in reversed(entries):  # a parent is printed after its children
                if depth == 0:
                    inside = name not in self.baseline
                if inside:
                    times.setdefault(name, []).append(self_us)
        return {name: statistics.median(us) / 1000 for name, us in times.items()}


def report(label, result, runs):
    print(
        f"{label}: {result['importtime_ms']:.1f} ms (-X importtime), {result['wall_ms']:.1f} ms wall over "
        f"`python -c pass` ({result['bare_python_ms']:.1f} ms); medians of {runs} fresh processes"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--no-numba", action="store_true", help="measure cujit only")
    parser.add_argument(
        "--package",
        default=ROOT / "python" / "cujit",
        type=pathlib.Path,
        help="the cujit package directory to measure (default: the working tree's; e.g. an older "
        "commit's, from git archive), with the built extension",
    )
    args = parser.parse_args()

    results = {}
    with tempfile.TemporaryDirectory(prefix="cujit-import-time-") as tmp:
        tmp = pathlib.Path(tmp)
        wheel_layout(sys.executable, args.package, tmp / "site")
        cujit = Side(
            "from cujit import cuda",
            sys.executable,
            "from cujit import cuda",
            child_env(tmp, tmp / "site"),
            prelude=SET_ASIDE_EDITABLE,
        )
        results["cujit"] = cujit.measure(args.runs)
        report(cujit.label, results["cujit"], args.runs)
        if not args.no_numba:
            if NUMBA_PYTHON.exists():
                # numba-cuda 0.30.4 reads numpy.row_stack, gone in numpy 2.5; the venv pins numpy below 2.5.
                numba = Side("from numba import cuda", NUMBA_PYTHON, "from numba import cuda", child_env(tmp))
                results["numba-cuda"] = numba.measure(args.runs)
                report(numba.label, results["numba-cuda"], args.runs)
            else:
                print(f"numba-cuda: {NUMBA_PYTHON} is missing (bash benchmarks/setup_numba_venv.sh makes it)")

    modules = results["cujit"]["modules"]
    own = {name: ms for name, ms in modules.items() if name == "cujit" or name.startswith("cujit.")}
    others = {name: ms for name, ms in modules.items() if name not in own}
    print(f"\ncujit modules imported by `from cujit import cuda` ({len(own)}), self time:")
    for name, ms in sorted(own.items(), key=lambda item: -item[1]):
        print(f"  {name:<28} {ms:6.2f} ms")
    print(f"other modules it brings in ({len(others)}), self time {sum(others.values()):.1f} ms in all; the largest:")
    for name, ms in sorted(others.items(), key=lambda item: -item[1])[:15]:
        print(f"  {name:<28} {ms:6.2f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
