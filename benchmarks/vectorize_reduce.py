"""cuda.vectorize and cuda.Reduce on 2^24 float32 elements, side by side with numba-cuda 0.30.4 and CuPy.

Cases (each side in fresh processes; the context and the input arrays are made before anything is timed):

* ``vectorize dev``: ``@vectorize(["float32(float32, float32)"], target="cuda")`` of ``x * y + 1`` on device arrays (the result
  stays on the device); CuPy: the same ``ElementwiseKernel``.
* ``vectorize host``: the same ufunc on numpy arrays (copies in and out included); CuPy: ``cp.asarray`` both,
  the kernel, ``cp.asnumpy``.
* ``Reduce``: ``Reduce(lambda a, b: a + b)`` of a device array to a host scalar; CuPy: ``cupy.sum`` (``float()``).

"first" is the first call in a process, from the decoration (or ``Reduce(...)``, or building the
``ElementwiseKernel``) to its result on the host or synchronised, compiling included (CuPy's kernel cache goes to
an empty temporary directory, so it compiles too); "warm" the median of ``--warm`` later calls, each synchronised.
Numbers are medians over ``--runs`` processes. The results of cujit and numba-cuda are compared (equal bit for
bit: the same algorithms in the same order) and both against numpy.

Usage (on the GPU machine)::

    .venv/bin/python benchmarks/vectorize_reduce.py --runs 5
    .venv/bin/python benchmarks/vectorize_reduce.py --numba-python .bench-venv/bin/python --json out.json

A side whose package is missing (numba-cuda, CuPy) is reported as absent.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

N = 1 << 24

PROGRAM = r"""
import json, os, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
side, warm_calls, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(2024)
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
result = {}


def timed(call):
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def warm(call, sync):
    times = []
    for _ in range(warm_calls):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


if side in ("cujit", "numba"):
    if side == "numba":
        np.row_stack = getattr(np, "row_stack", np.vstack)
        from numba import cuda, vectorize
    else:
        from cujit import cuda, vectorize  # a port of `from numba import vectorize`
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    cuda.synchronize()

    def build():
        @vectorize(["float32(float32, float32)"], target="cuda")
        def fma1(a, b):
            return a * b + 1
        out = fma1(dx, dy)
        cuda.synchronize()
        return fma1, out

    t, (fma1, out) = timed(build)
    result["vectorize dev"] = {"first": t, "warm": warm(lambda: fma1(dx, dy), cuda.synchronize)}
    vec = out.copy_to_host()
    result["vectorize host"] = {"first": None, "warm": warm(lambda: fma1(x, y), lambda: None)}

    def first_reduce():
        r = cuda.Reduce(lambda a, b: a + b)
        return r, r(dx)

    t, (reducer, total) = timed(first_reduce)
    result["Reduce"] = {"first": t, "warm": warm(lambda: reducer(dx), lambda: None)}
    result["values"] = {"vectorize": vec[:1000].tolist(), "vectorize_sum": float(vec.astype(np.float64).sum()),
                        "reduce": float(total)}
elif side == "cupy":
    import cupy as cp
    dx, dy = cp.asarray(x), cp.asarray(y)
    cp.cuda.runtime.deviceSynchronize()
    sync = cp.cuda.runtime.deviceSynchronize

    def build():
        kernel = cp.ElementwiseKernel("float32 a, float32 b", "float32 z", "z = a * b + 1", "fma1")
        out = kernel(dx, dy)
        sync()
        return kernel, out

    t, (kernel, out) = timed(build)
    result["vectorize dev"] = {"first": t, "warm": warm(lambda: kernel(dx, dy), sync)}
    vec = cp.asnumpy(out)
    result["vectorize host"] = {"first": None,
                                "warm": warm(lambda: cp.asnumpy(kernel(cp.asarray(x), cp.asarray(y))), sync)}
    t, total = timed(lambda: float(cp.sum(dx)))
    result["Reduce"] = {"first": t, "warm": warm(lambda: float(cp.sum(dx)), sync)}
    result["values"] = {"vectorize": vec[:1000].tolist(), "vectorize_sum": float(vec.astype(np.float64).sum()),
                        "reduce": total}
expect = x.astype(np.float64) * y + 1
result["numpy"] = {"vectorize_sum": float(expect.sum()), "reduce": float(x.astype(np.float64).sum())}
print(json.dumps(result))
"""

CASES = ("vectorize dev", "vectorize host", "Reduce")


def run_side(side, python, runs, warm_calls, n):
    """Per case, the medians over ``runs`` fresh processes; the last run's values; or the reason it failed."""
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:  # a file: cujit compiles functions from their source
            program = os.path.join(tmp, "vectorize_reduce_program.py")
            with open(program, "w") as fh:
                fh.write(PROGRAM)
            env = dict(os.environ, CUPY_CACHE_DIR=os.path.join(tmp, "cupy"), NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
            proc = subprocess.run(
                [python, program, side, str(warm_calls), str(n)], env=env, capture_output=True, text=True, timeout=600
            )
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or ["no output"]
            return {"absent": next((l for l in reversed(lines) if "Error" in l), lines[-1]).strip()}
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    summary = {}
    for case in CASES:
        summary[case] = {}
        for key in ("first", "warm"):
            values = [s[case][key] for s in samples if s[case][key] is not None]
            summary[case][key] = statistics.median(values) if values else None
    summary["values"] = samples[-1]["values"]
    summary["numpy"] = samples[-1]["numpy"]
    return summary


def _ms(seconds):
    return "—" if seconds is None else f"{seconds * 1e3:9.2f}"


def table(results):
    sides = [s for s in ("cujit", "numba", "cupy") if s in results]
    head = f"{'case':<16}" + "".join(f"{s + ' first':>14}{s + ' warm':>13}" for s in sides)
    lines = [head, "-" * len(head)]
    for case in CASES:
        row = f"{case:<16}"
        for side in sides:
            r = results[side]
            if "absent" in r:
                row += f"{'absent':>14}{'':>13}"
            else:
                row += f"{_ms(r[case]['first']):>14}{_ms(r[case]['warm']):>13}"
        lines.append(row)
    lines.append("(milliseconds; medians over fresh processes)")
    for side in sides:
        if "absent" in results[side]:
            lines.append(f"{side}: absent ({results[side]['absent']})")
    return "\n".join(lines)


def checks(results):
    """Whether the sides agree with numpy, and cujit with numba-cuda bit for bit."""
    lines = []
    cujit = results.get("cujit", {})
    for side, r in results.items():
        if "absent" in r:
            continue
        v, ref = r["values"], r["numpy"]
        vec_ok = abs(v["vectorize_sum"] - ref["vectorize_sum"]) <= 1e-5 * abs(ref["vectorize_sum"])
        red_ok = abs(v["reduce"] - ref["reduce"]) <= 1e-4 * abs(ref["reduce"])
        lines.append(
            f"{side}: vectorize {'matches' if vec_ok else 'DIFFERS FROM'} numpy, Reduce "
            f"{'matches' if red_ok else 'DIFFERS FROM'} numpy ({v['reduce']!r} vs {ref['reduce']!r})"
        )
    numba = results.get("numba", {})
    if "values" in cujit and "values" in numba:
        same_vec = cujit["values"]["vectorize"] == numba["values"]["vectorize"]
        same_red = cujit["values"]["reduce"] == numba["values"]["reduce"]
        lines.append(
            f"cujit vs numba-cuda: vectorize {'equal' if same_vec else 'DIFFERENT'}, Reduce "
            f"{'equal bit for bit' if same_red else 'DIFFERENT'} ({cujit['values']['reduce']!r} vs "
            f"{numba['values']['reduce']!r})"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per side (default 3)")
    parser.add_argument("--warm", type=int, default=20, help="warm calls per process (default 20)")
    parser.add_argument("--n", type=int, default=N, help="elements (default 2^24)")
    parser.add_argument(
        "--numba-python",
        default=None,
        help="the Python with numba-cuda (default: this one, else .bench-venv/bin/python)",
    )
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    numba_python = args.numba_python
    if numba_python is None:
        has_numba = subprocess.run([sys.executable, "-c", "import numba.cuda"], capture_output=True).returncode == 0
        bench = os.path.join(root, ".bench-venv", "bin", "python")
        numba_python = sys.executable if has_numba or not os.path.exists(bench) else bench
    results = {
        "cujit": run_side("cujit", sys.executable, args.runs, args.warm, args.n),
        "numba": run_side("numba", numba_python, args.runs, args.warm, args.n),
        "cupy": run_side("cupy", sys.executable, args.runs, args.warm, args.n),
    }
    print(f"vectorize and Reduce on {args.n} float32 elements")
    print(table(results))
    print(checks(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
