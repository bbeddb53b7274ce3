"""Random kernels run on the CPU target and on the GPU in one process, results compared (issue 30).

The programs are the fuzzer's (tests/compiler/random_programs.py), the valid ones:

* a kernel ``f(out, a, n)`` runs as it is, over 64 elements in blocks of 32 (every thread in bounds, so its
  ``syncthreads`` is reached by the whole block);
* a device function ``f(a, b, n)`` runs inside a kernel that stores ``f(a[i], b[i], n)`` for 64 random argument
  pairs (its result type is the one cujit infers; a function returning no scalar is left out).

Each program compiles with its own ``opt`` and without ``fastmath``/``debug``/``lineinfo`` (fastmath selects the
GPU's approximate instructions, which the host does not have). Inputs are fresh random numbers of each program's
types, the same for both targets. Integer and boolean results must be equal; floating results equal, both NaN,
or within ULPS units in the last place; a program calling a math function the two targets implement differently
(each within the ulps docs/cpu_target.md gives) is held to a relative tolerance instead, as its arithmetic can
carry an ulp's difference far (sin(x ** 5)). Where even that does not hold, the program runs twice more on the
CPU target with every transcendental function's result moved NUDGE_ULPS either way (_core._nudge_host_math): an
element whose CPU result moves beyond the tolerance then is ill-conditioned (exp(a) % 5 in float32: exp's last bits
become the result's first), on any implementation, and is left out; the outcome says how many were.

    python tests/hostrt/target_differential.py [N]     # on the GPU machine: a summary and the differing programs

Programs run in child processes, several at once, so that a crash names its program and the rest go on.
"""

import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compiler"))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: script_runs

from random_programs import generate, load_program  # noqa: E402
from script_runs import output_lines  # noqa: E402

N_ELEMENTS, BLOCK = 64, 32
HANG_SECONDS = 60
ULPS = {np.dtype(np.float16): 2, np.dtype(np.float32): 8, np.dtype(np.float64): 8}
NUMPY_TYPES = {
    "int32": np.int32,
    "int64": np.int64,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "boolean": np.bool_,
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "uint8": np.uint8,
    "uint16": np.uint16,
}

WRAPPER = """
def wrapper(out, a, b, n):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = f(a[i], b[i], n)
"""


def random_values(rng, dtype, size):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(size) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-50 if dtype.kind == "i" else 0, 100, size).astype(dtype)
    return (rng.standard_normal(size) * 4).astype(dtype)


def options_of(program):
    return {"opt": program.options.get("opt", True)}


class Case:
    """One program made runnable: its kernel on each target and its arguments."""

    def __init__(self, program, workdir, rng):
        from cujit import cuda, types

        f = load_program(program, workdir)
        self.seed, self.source = program.seed, program.source
        opts = options_of(program)
        if program.kernel:
            dtype = NUMPY_TYPES[program.signature.split("(")[1].split("[")[0]]
            self.make_kernel = lambda target: cuda.jit(program.signature, target=target, **opts)(f)
            a = random_values(rng, dtype, N_ELEMENTS)
            self.out_dtype = np.dtype(dtype)
            self.host_args = [a]
        else:
            argtypes = program.signature.strip("()").split(", ")
            _, resty = cuda.compile_ptx(f, tuple(getattr(types, t) for t in argtypes), device=True, cc=(7, 5))
            name = str(resty)
            if name.startswith("Literal[int]"):  # a function returning a constant: numba's int64
                name = "int64"
            elif name.startswith("Literal[bool]"):
                name = "boolean"
            if name not in NUMPY_TYPES:
                raise NotImplementedError(f"result type {name}")
            device_f = cuda.jit(device=True, **opts)(f)
            namespace = {"cuda": cuda, "f": device_f}
            exec(compile(WRAPPER, f"<wrapper of seed {program.seed}>", "exec"), namespace)
            self.out_dtype = np.dtype(NUMPY_TYPES[name])
            sig = f"void({name}[:], {argtypes[0]}[:], {argtypes[1]}[:], int64)".replace("boolean", "b1")
            self.make_kernel = lambda target: cuda.jit(sig, target=target, **opts)(namespace["wrapper"])
            self.host_args = [random_values(rng, NUMPY_TYPES[t], N_ELEMENTS) for t in argtypes[:2]]

        self.kernels = {t: self.make_kernel(t) for t in ("cuda", "cpu")}

    def run(self, target):
        from cujit import cuda

        if target == "cuda" and os.environ.get("CUJIT_TARGET_DIFF_CPU_ONLY"):
            target = "cpu"  # no GPU here: only crashes and hangs of the CPU target are looked for
        out = np.zeros(N_ELEMENTS, self.out_dtype)
        grid = (N_ELEMENTS // BLOCK, BLOCK)
        if target == "cpu":
            args = [np.array(a) for a in self.host_args]
            self.kernels["cpu"][grid](out, *args, 5)
            return out
        d_out = cuda.to_device(out)
        self.kernels["cuda"][grid](d_out, *[cuda.to_device(a) for a in self.host_args], 5)
        return d_out.copy_to_host()

    def sensitive(self, cpu, inexact_math):
        """The elements whose CPU result moves beyond the tolerance when every transcendental function's result
        moves by NUDGE_ULPS, either way: those an ulp of a math function carries far, on any implementation."""
        from cujit import _core

        moved = set()
        for ulps in (NUDGE_ULPS, -NUDGE_ULPS):
            _core._nudge_host_math(ulps)
            try:
                kernel = self.make_kernel("cpu")
            finally:
                _core._nudge_host_math(0)
            out = np.zeros(N_ELEMENTS, self.out_dtype)
            kernel[N_ELEMENTS // BLOCK, BLOCK](out, *[np.array(a) for a in self.host_args], 5)
            moved.update(differ(cpu, out, inexact_math).tolist())
        return np.array(sorted(moved), dtype=np.int64)


# Functions whose GPU and host implementations round differently (each within its documented ulps): a program
# calling one may carry that difference on through its arithmetic (sin(x ** 5) turns an ulp of x ** 5 into
# many of the result), so its floating results are compared to a relative tolerance instead.
INEXACT_MATH = re.compile(
    r"math\.(sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|exp|expm1|log|"
    r"log2|log10|log1p|pow|hypot|erf|erfc|gamma|lgamma)\(|\*\*"
)
RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-9}
# A difference beyond those is the CPU target's fault unless moving each transcendental function's result by this
# many ulps (what the GPU's and the host's errors add up to for most functions, docs/cpu_target.md) moves the CPU's
# result as far: then the program is ill-conditioned there (exp(a) % 5 carries exp's last bits into the result's
# first), and that element is left out.
NUDGE_ULPS = 8


def differ(gpu, cpu, inexact_math=()):
    """The indices where the two results differ beyond what is allowed; `inexact_math`: the float types of a program
    calling a math function the targets implement differently (its results get their relative tolerance)."""
    if gpu.dtype.kind not in "f" and not inexact_math:
        return np.flatnonzero(gpu != cpu)
    if gpu.dtype.kind not in "f":  # an integer made from such a function's result (int(math.exp(x)))
        g, c = gpu.astype(np.float64), cpu.astype(np.float64)
        rtol = RTOL[min((np.dtype(t) for t in inexact_math), key=lambda t: t.itemsize)]
        return np.flatnonzero(np.abs(g - c) > rtol * np.maximum(np.abs(g), np.abs(c)))
    g, c = gpu.astype(np.float64), cpu.astype(np.float64)
    same = (g == c) | (np.isnan(g) & np.isnan(c))
    spacing = np.abs(np.spacing(np.maximum(np.abs(gpu), np.abs(cpu)).astype(gpu.dtype))).astype(np.float64)
    allowed = ULPS[gpu.dtype] * spacing
    if inexact_math:  # the narrowest float type the program computes in sets the tolerance
        rtol = RTOL[min((np.dtype(t) for t in inexact_math), key=lambda t: t.itemsize)]
        allowed = np.maximum(allowed, rtol * np.maximum(np.abs(g), np.abs(c)))
    close = np.isfinite(g) & np.isfinite(c) & (np.abs(g - c) <= allowed)
    return np.flatnonzero(~(same | close))


def compare(seeds, workdir=None, rng=None, announce=lambda target: None):
    """{seed: outcome} with outcomes "same", "skipped: <why>", or "differ: <detail>"."""
    import warnings

    warnings.simplefilter("ignore")  # grids of 2 blocks are deliberate here (numba's low-occupancy warning)
    rng = rng or np.random.default_rng()
    workdir = workdir or tempfile.mkdtemp(prefix="cujit_targets_")
    outcomes = {}
    for seed in seeds:
        program = generate(seed)
        if program.invalid:
            continue
        try:
            case = Case(program, workdir, rng)
        except NotImplementedError as exc:
            outcomes[seed] = f"skipped: {exc}"
            continue
        except Exception as exc:  # a program the compiler refuses is refused for both targets alike
            outcomes[seed] = f"skipped: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            continue
        try:
            announce("cuda")
            gpu = case.run("cuda")
            announce("cpu")
            cpu = case.run("cpu")
        except Exception as exc:
            outcomes[seed] = f"differ: raised {type(exc).__name__}: {exc}"
            continue
        floats = {t for t in ("float16", "float32", "float64") if t in program.source + program.signature} or {
            "float64"
        }
        floats |= {gpu.dtype.name} if gpu.dtype.kind == "f" else set()
        inexact_math = floats if INEXACT_MATH.search(case.source) else ()
        bad, sensitive = differ(gpu, cpu, inexact_math), ()
        if len(bad) and inexact_math:
            announce("cpu nudged")
            sensitive = case.sensitive(cpu, inexact_math)
            bad = np.setdiff1d(bad, sensitive)
        if len(bad):
            i = bad[0]
            outcomes[seed] = (
                f"differ: {len(bad)} of {N_ELEMENTS} elements, first at {i}: GPU {gpu[i]!r}, "
                f"CPU {cpu[i]!r}, inputs {[a[i] for a in case.host_args]}"
            )
        elif len(sensitive):
            outcomes[seed] = f"same: but for {len(sensitive)} ill-conditioned elements"
        else:
            outcomes[seed] = "same"
    return outcomes


def _child(seeds):
    """A child process's loop: "start <seed>" before each program, then its outcome as one JSON line."""
    import json

    workdir = tempfile.mkdtemp(prefix="cujit_targets_")
    for seed in seeds:
        print(json.dumps({"start": seed}), flush=True)
        outcome = compare([seed], workdir, announce=lambda t: print(json.dumps({"running": t}), flush=True))
        print(json.dumps({"seed": seed, "outcome": outcome.get(seed)}), flush=True)


def _run_shard(seeds):
    """Runs the seeds in child processes; a child that dies (a crash in a kernel or the compiler), or spends
    HANG_SECONDS in one program (the fuzzer's loops can run forever: `while w < 4: w *= 0`), is reported as that
    program's outcome, and a new child goes on after it."""
    import json
    import queue
    import subprocess

    outcomes, pending = {}, list(seeds)
    while pending:
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", *map(str, pending)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        lines, current, hung, running = output_lines(proc), None, False, None
        while True:
            try:
                line = lines.get(timeout=HANG_SECONDS)
            except queue.Empty:
                hung = True
                proc.kill()
                break
            if line is None:
                break
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            if "start" in event:
                current, running = event["start"], None
            elif "running" in event:
                running = event["running"]
            else:
                if event["outcome"] is not None:
                    outcomes[event["seed"]] = event["outcome"]
                pending.remove(event["seed"])
                current = None
        proc.wait()
        if current is None:
            if proc.returncode != 0 and pending:
                raise RuntimeError(f"a differential child failed outside a program (exit {proc.returncode})")
            break
        if hung and running == "cpu nudged":
            outcomes[current] = (
                f"differ: the CPU target with its math nudged {NUDGE_ULPS} ulps gave no result after {HANG_SECONDS} s"
            )
        elif hung and running == "cpu":  # the GPU finished it
            outcomes[current] = f"differ: the CPU target gave no result after {HANG_SECONDS} s where the GPU did"
        elif hung:
            outcomes[current] = (
                f"skipped: no result after {HANG_SECONDS} s ({running or 'compiling'}: a loop that never ends)"
            )
        else:
            outcomes[current] = f"differ: the process died (exit {proc.returncode}) running on {running or 'neither'}"
        pending.remove(current)
    return outcomes


def compare_in_processes(seeds, workers=None):
    """compare() over the seeds in `workers` child processes at once (each compiles its share and uses the GPU)."""
    import concurrent.futures

    seeds = list(seeds)
    workers = workers or max(1, min(8, (os.cpu_count() or 2) // 2))
    shards = [seeds[i::workers] for i in range(workers)]
    outcomes = {}
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for part in pool.map(_run_shard, shards):
            outcomes.update(part)
    return dict(sorted(outcomes.items()))


def main():
    if sys.argv[1:2] == ["--child"]:
        return _child([int(a) for a in sys.argv[2:]])
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1400
    outcomes = compare_in_processes(range(n))
    counts = {}
    for seed, outcome in outcomes.items():
        counts[outcome.split(":")[0]] = counts.get(outcome.split(":")[0], 0) + 1
    print(f"{n} seeds, {len(outcomes)} valid programs: {counts}")
    for seed, outcome in outcomes.items():
        if not outcome.startswith("same"):
            print(f"seed {seed}: {outcome}")


if __name__ == "__main__":
    main()
