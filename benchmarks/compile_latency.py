"""Compile latency, cujit against numba-cuda, side by side.

cujit's cases run in this process; numba-cuda's run in a worker process
(`.bench-venv/bin/python compile_latency.py --worker numba`, see setup_numba_venv.sh)
that executes the same case functions and prints its timings as JSON. Every compile
targets cc=(7, 5), so neither side needs a GPU. The two sides alternate for --rounds
rounds and each case reports its median round.

To add a case, append a function decorated with @case below: it takes the package
(`cujit` or `numba`, with `.cuda` imported) and returns the call to time.
"""

import argparse
import atexit
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_kernels import make_kernels  # noqa: E402

BENCH_PYTHON = os.path.join(ROOT, ".bench-venv", "bin", "python")
SETUP_SCRIPT = os.path.join(ROOT, "benchmarks", "setup_numba_venv.sh")
DISTRIBUTIONS = {"cujit": "cujit", "numba": "numba-cuda"}
CC = (7, 5)


# -- functions compiled by the cases (module level, so inspect.getsource finds them) --


def add(x, y):
    return x + y


def horner16(x):
    # 16 Horner steps, float64 multiply-adds only (no libdevice calls).
    return (
        (
            (
                (
                    (
                        (
                            (
                                (
                                    (
                                        ((((((0.5 * x + 1.0) * x - 2.0) * x + 3.0) * x - 4.0) * x + 5.0) * x - 6.0) * x
                                        + 7.0
                                    )
                                    * x
                                    - 8.0
                                )
                                * x
                                + 9.0
                            )
                            * x
                            - 10.0
                        )
                        * x
                        + 11.0
                    )
                    * x
                    - 12.0
                )
                * x
                + 13.0
            )
            * x
            - 14.0
        )
        * x
        + 15.0
    ) * x - 16.0


# -- the case registry ----------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    make_call: Callable  # (package) -> zero-argument callable to time
    min_speedup: float | None = None  # target: numba-cuda ms / cujit ms
    max_ms: float | None = None  # target: cujit ms
    repeat: int | None = None  # timed calls, if not --repeat

    @property
    def target(self):
        return f">= {self.min_speedup:g}x" if self.min_speedup else f"<= {self.max_ms:g} ms"

    def verdict(self, cujit_ms, numba_ms):
        if self.max_ms is not None:
            return "-" if cujit_ms is None else "PASS" if cujit_ms <= self.max_ms else "MISS"
        if cujit_ms is None or numba_ms is None:
            return "-"
        return "PASS" if numba_ms / cujit_ms >= self.min_speedup else "MISS"


CASES: list[Case] = []


def case(name, min_speedup=None, max_ms=None, repeat=None):
    def register(make_call):
        CASES.append(Case(name, make_call, min_speedup, max_ms, repeat))
        return make_call

    return register


@case("a) add int32, numba ABI", min_speedup=20)
def add_numba_abi(pkg):
    sig = pkg.int32(pkg.int32, pkg.int32)
    return lambda: pkg.cuda.compile_ptx(add, sig, device=True, cc=CC)


@case("b) add int32, C ABI", min_speedup=20)
def add_c_abi(pkg):
    sig = pkg.int32(pkg.int32, pkg.int32)
    return lambda: pkg.cuda.compile_ptx(add, sig, device=True, abi="c", cc=CC)


@case("c) horner16 float64", min_speedup=20)
def horner(pkg):
    sig = pkg.float64(pkg.float64)
    return lambda: pkg.cuda.compile_ptx(horner16, sig, device=True, cc=CC)


@case("e) saxpy kernel", max_ms=2)
def saxpy_kernel(pkg):
    saxpy, _ = make_kernels(pkg.cuda, pkg.float32)
    a = pkg.float32[::1]
    sig = pkg.void(a, pkg.float32, a, a)
    return lambda: pkg.cuda.compile_ptx(saxpy, sig, cc=CC)


@case("f) 16x16 tiled matmul kernel", max_ms=7)
def matmul_kernel(pkg):
    _, fast_matmul = make_kernels(pkg.cuda, pkg.float32)
    m = pkg.float32[:, ::1]
    sig = pkg.void(m, m, m)
    return lambda: pkg.cuda.compile_ptx(fast_matmul, sig, cc=CC)


@case("d) fresh process: import + add", max_ms=150, repeat=5)
def fresh_process(pkg):
    workdir = tempfile.mkdtemp(prefix="cujit-bench-")
    atexit.register(shutil.rmtree, workdir, True)
    with open(os.path.join(workdir, "bench_add.py"), "w") as f:
        f.write("def add(x, y):\n    return x + y\n")
    name = pkg.__name__
    code = (
        f"import {name}; from {name} import cuda, int32; from bench_add import add; "
        f"cuda.compile_ptx(add, int32(int32, int32), device=True, cc={CC})"
    )
    command = [sys.executable, "-c", code]
    return lambda: subprocess.run(command, cwd=workdir, check=True, capture_output=True)


# -- measuring ------------------------------------------------------------------------


def median_ms(call, repeat, warmup):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def measure(name, repeat):
    """Times every case with package `name` in this process: {case name: ms or None}."""
    pkg = importlib.import_module(name)
    if not hasattr(pkg, "cuda"):  # numba.cuda is a subpackage numba does not import
        importlib.import_module(f"{name}.cuda")
    results = {}
    for c in CASES:
        try:
            results[c.name] = median_ms(c.make_call(pkg), c.repeat or repeat, warmup=1 if c.repeat else 3)
        except Exception as e:
            stderr = getattr(e, "stderr", None) or b""  # a fresh process's traceback
            print(f"{name}: {c.name} failed: {e!r}", stderr.decode(errors="replace")[-2000:], file=sys.stderr)
            results[c.name] = None
    return {"python": platform.python_version(), "version": version(pkg), "ms": results}


def version(pkg):
    try:
        return importlib.metadata.version(DISTRIBUTIONS[pkg.__name__])
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return getattr(pkg, "__version__", "?")


def measure_numba(repeat, setup):
    if not os.path.exists(BENCH_PYTHON):
        if not setup:
            print(
                "note: .bench-venv is missing, so numba-cuda is not measured; "
                "run benchmarks/setup_numba_venv.sh or pass --setup",
                file=sys.stderr,
            )
            return None
        subprocess.run(["bash", SETUP_SCRIPT], check=True)
    out = subprocess.run(
        [BENCH_PYTHON, os.path.abspath(__file__), "--worker", "numba", "--repeat", str(repeat)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_round(rounds):
    """One side's results over several rounds: each case's median round (None when never measured)."""
    rounds = [r for r in rounds if r]
    if not rounds:
        return None
    merged = dict(rounds[0], rounds=len(rounds), ms={})
    for name in rounds[0]["ms"]:
        values = [r["ms"][name] for r in rounds if r["ms"].get(name) is not None]
        merged["ms"][name] = statistics.median(values) if values else None
    return merged


def measure_cujit(repeat):
    try:
        return measure("cujit", repeat)
    except ImportError as e:
        print(f"note: cujit is not importable ({e}); build it first", file=sys.stderr)
        return None


def print_stages(repeat):
    """--stages: where cujit's time goes in each in-process case, from the compile's own stage timers (means of
    `repeat` calls after a warm-up). LLVM's share (its optimisation and the NVPTX code generator) bounds how fast
    a compile through LLVM can be."""
    import cujit
    from cujit import _core

    measured = []
    for c in CASES:
        if c.repeat:  # the fresh-process case has no in-process stages
            continue
        call = c.make_call(cujit)
        for _ in range(5):
            call()
        _core.telemetry.stages(True)
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        whole = (time.perf_counter() - start) / repeat * 1e6
        means = {k: s / repeat * 1e6 for k, (n, s) in _core.telemetry.stages(True).items() if n}
        measured.append((c.name, whole, means))
    names = list(measured[0][2])
    print("µs per call (mean of %d):" % repeat)
    print("{:<30} {:>8} ".format("case", "whole") + " ".join("{:>10}".format(n[:10]) for n in names) + "   LLVM share")
    for name, whole, means in measured:
        llvm = means.get("LLVM optimisation", 0) + means.get("PTX emission", 0)
        print(
            "{:<30} {:>8.1f} ".format(name[:30], whole)
            + " ".join("{:>10.1f}".format(means.get(n, 0)) for n in names)
            + "   {:.0%}".format(llvm / whole)
        )


# -- report ---------------------------------------------------------------------------


def machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def rows(cujit, numba):
    for c in CASES:
        ours = cujit and cujit["ms"].get(c.name)
        theirs = numba and numba["ms"].get(c.name)
        yield {
            "case": c.name,
            "cujit_ms": ours,
            "numba_cuda_ms": theirs,
            "speedup": theirs / ours if ours and theirs else None,
            "target": c.target,
            "result": c.verdict(ours, theirs),
        }


def print_report(info, cujit, numba, table):
    print(f"{info['date']}  {info['host']}  {info['cpu']} ({info['cores']} cores)")
    for label, side in (("cujit", cujit), ("numba-cuda", numba)):
        if side:
            print(f"{label} {side['version']} on Python {side['python']}")
    fmt = "{:<34} {:>10} {:>14} {:>9} {:>9} {:>6}"
    print(fmt.format("case", "cujit ms", "numba-cuda ms", "speedup", "target", "result"))
    num = lambda v, spec: "-" if v is None else format(v, spec)
    for r in table:
        print(
            fmt.format(
                r["case"],
                num(r["cujit_ms"], ".3f"),
                num(r["numba_cuda_ms"], ".3f"),
                num(r["speedup"], ".1f") + ("x" if r["speedup"] else ""),
                r["target"],
                r["result"],
            )
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["cujit", "numba"], help="measure one side only")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per case (>= 20)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds of both sides, alternating; each case reports its median round "
        "(this VM's speed drifts over minutes: alternating keeps both sides in the same drift)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--setup", action="store_true", help="create .bench-venv if missing")
    parser.add_argument("--stages", action="store_true", help="cujit's stage timers per case, then exit")
    parser.add_argument("--worker", choices=["numba"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages:
        print_stages(max(args.repeat, 200))
        return

    if args.worker:
        print(json.dumps(measure(args.worker, args.repeat)))
        return
    ours, theirs = [], []
    for _ in range(max(1, args.rounds)):
        if args.only != "numba":
            ours.append(measure_cujit(args.repeat))
        if args.only != "cujit":
            theirs.append(measure_numba(args.repeat, args.setup))
    cujit, numba = median_round(ours), median_round(theirs)
    info, table = machine(), list(rows(cujit, numba))
    print_report(info, cujit, numba, table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "cujit": cujit, "numba_cuda": numba, "cases": table}, f, indent=2)
    if not (cujit or numba):
        sys.exit("nothing was measured")


if __name__ == "__main__":
    main()
