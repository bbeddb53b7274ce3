"""Host time per launch of a 1x32 grid (GPU machine): cujit, numba-cuda and a C cuLaunchKernel loop, each case
in its own process: `python benchmarks/launch_overhead.py`.

Cases (issue 14's table): no arguments; 4 arguments (3 device arrays of the library + a float32) with cujit
device arrays, CuPy arrays, PyTorch tensors and DLPack capsules (cujit only: numba-cuda does not take them);
16 device arrays; 8 Python scalars. The C floor is benchmarks/launch_floor.cu, with the parameters numba's kernel
ABI passes (a 1-D array is 7: 22 for 3 arrays and a float, 112 for 16 arrays; the driver copies each one, so
that is the floor of a numba-cuda or cujit launch; before 2026-11-28 the array cases were compared with 4 and 16
plain pointers), built here with nvcc twice:
- as a program, run in its own process once per round (best of 3 x 20 000 launches);
- as a library that every worker process loads, timing the C loop and the library's launches alternately on
  the same context, batch by batch (`--pairs` pairs of 5 000 launches each): the paired ratio, median of
  the pairs' ratios, is free of the drift between processes (the floor itself moves by ±0.7 µs from one
  process to the next on the H200s).
The library's own figure is the best of 3 x 20 000 launches after warm-up, as before. Each worker also times
Python's own share of a launch statement with the case's arguments (the loop, a subscript by `[1, 32]` and a
call of a C function that ignores them): the C loop plus that is the floor of any launch API called from Python. (Pinning every process
to one core made the figures worse, not steadier: the driver's own threads then share that core.)
`--rounds N` (3) repeats the whole set in fresh processes, interleaved. `--profile` also prints where cujit's
time goes, from the fast path's own timers (CUJIT_LAUNCH_PROFILE=1)."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    np.row_stack = np.vstack
    which, case = sys.argv[1], sys.argv[2]
    if which == "cujit":
        from cujit import cuda
    else:
        from numba import cuda

    def k0():
        pass

    def k4(a, b, c, x):
        i = cuda.grid(1)
        if i < 0:
            a[0] = b[0] + c[0] * x

    def k16(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15):
        i = cuda.grid(1)
        if i < 0:
            a0[0] = a15[0]

    def k8(p, q, r, s, t, u, v, w):
        i = cuda.grid(1)
        if i < 0 and p + q + r + s + t + u + v + w > 1e300:
            pass

    if case == "none":
        kernel, args = cuda.jit(k0), ()
    elif case == "scalars8":
        kernel, args = cuda.jit(k8), (1, 2.0, 3, 4.0, 5, 6.0, 7, 8.0)
    elif case == "arrays16":
        kernel, args = cuda.jit(k16), tuple(cuda.to_device(np.zeros(1024, np.float32)) for _ in range(16))
    else:
        kernel = cuda.jit(k4)
        if case == "device4":
            arrays = [cuda.to_device(np.zeros(1024, np.float32)) for _ in range(3)]
        elif case == "cupy4":
            import cupy as cp
            arrays = [cp.zeros(1024, cp.float32) for _ in range(3)]
        elif case in ("torch4", "dlpack4"):
            import torch
            arrays = [torch.zeros(1024, dtype=torch.float32, device="cuda") for _ in range(3)]
            if case == "dlpack4":
                arrays = [a.__dlpack__() for a in arrays]
        args = (*arrays, np.float32(2.0))
    for _ in range(200):
        kernel[1, 32](*args)
    cuda.synchronize()
    if which == "cujit":
        from cujit import _core
        _core.launch.profile(reset=True)  # the steps of warm launches only
    def batch(n):
        t = time.perf_counter()
        for _ in range(n):
            kernel[1, 32](*args)
        cuda.synchronize()
        return (time.perf_counter() - t) / n * 1e6

    best = min(batch(20000) for _ in range(3))
    # Python's own share of a launch statement: the loop, a subscript by (1, 32) and a call of a C function
    # given the same arguments that ignores them ("".format), the floor of any Python launch API.
    table, config = {(1, 32): "".format}, 32
    def python_call(n):
        t = time.perf_counter()
        for _ in range(n):
            table[1, config](*args)
        return (time.perf_counter() - t) / n * 1e6
    pycall = min(python_call(20000) for _ in range(3))
    paired = []
    floor_library, pairs = os.environ.get("LAUNCH_FLOOR_LIBRARY"), int(os.environ.get("LAUNCH_PAIRS", "0"))
    if floor_library and pairs:
        import ctypes
        floor = ctypes.CDLL(floor_library)
        floor.launch_floor_us.restype, floor.launch_floor_us.argtypes = ctypes.c_double, [ctypes.c_int] * 2
        # The C loop with the parameters numba's ABI passes for this case (a 1-D array is 7)
        n_args = {"none": 0, "arrays16": 112, "scalars8": 8}.get(case, 22)
        floor.launch_floor_us(n_args, 2000)  # its buffers, functions and warm-up
        for i in range(pairs):  # alternate which goes first
            if i % 2:
                lib = batch(5000)
                c = floor.launch_floor_us(n_args, 5000)
            else:
                c = floor.launch_floor_us(n_args, 5000)
                lib = batch(5000)
            paired.append((lib, c))
    print(json.dumps({"best": best, "paired": paired, "pycall": pycall}))
    if which == "cujit" and os.environ.get("CUJIT_LAUNCH_PROFILE"):
        print("PROFILE", {k: round(v, 3) for k, v in _core.launch.profile().items()}, file=sys.stderr)
""")

CASES = [
    ("none", "no arguments", "k0"),
    ("device4", "4: 3 device arrays + float32", "k22"),
    ("cupy4", "4 with CuPy arrays", "k22"),
    ("torch4", "4 with PyTorch tensors", "k22"),
    ("dlpack4", "4 with DLPack capsules", "k22"),
    ("arrays16", "16 device arrays", "k112"),
    ("scalars8", "8 Python scalars (int, float)", "k8"),
]


def c_floor(workdir):
    """({kernel: us per launch} from the C loop in its own process, the path of the library build for the
    workers or None); ({}, None) without nvcc."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        return {}, None
    exe, lib = os.path.join(workdir, "launch_floor"), os.path.join(workdir, "liblaunch_floor.so")
    source = os.path.join(HERE, "launch_floor.cu")
    for cmd in (
        [nvcc, "-O2", "-o", exe, source, "-lcuda"],
        [nvcc, "-O2", "-shared", "-Xcompiler", "-fPIC", "-DLAUNCH_FLOOR_LIBRARY", "-o", lib, source, "-lcuda"],
    ):
        if not os.path.exists(cmd[cmd.index("-o") + 1]):
            build = subprocess.run(cmd, capture_output=True, text=True)
            if build.returncode != 0:
                print(build.stderr[-2000:])
                return {}, None
    out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
    return dict(zip(out[::2], (float(v) for v in out[1::2]))), lib


def run_worker(script, which, case, profile, floor_library, pairs):
    """{"best": us per launch, "paired": [(library us, C floor us)...]} from one worker process, or None (the
    failure printed)."""
    env = dict(os.environ, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0", LAUNCH_PAIRS=str(pairs))
    if floor_library:
        env["LAUNCH_FLOOR_LIBRARY"] = floor_library
    if profile and which == "cujit":
        env["CUJIT_LAUNCH_PROFILE"] = "1"
    out = subprocess.run([sys.executable, script, which, case], capture_output=True, text=True, env=env)
    if profile and which == "cujit":
        for line in out.stderr.splitlines():
            if line.startswith("PROFILE"):
                print(f"  {case}: {line}")
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"  {which} {case} failed: {out.stderr.strip()[-600:]}")
        return None


def paired_ratio(result, with_python=False):
    """The median of a worker's per-pair ratios (library / C floor, same process), or None; `with_python`: over
    the C floor plus Python's own call with the same arguments (the worker's "pycall")."""
    pairs = result["paired"] if result else []
    extra = result.get("pycall", 0) if with_python and result else 0
    return statistics.median(lib / (c + extra) for lib, c in pairs) if pairs else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cases", default=",".join(c[0] for c in CASES))
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds of fresh processes (the C loop, then every case of each library), interleaved; "
        "the table shows each column's best round and the range of per-round ratios",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=10,
        help="pairs of 5 000-launch batches, C floor and library alternately, in each worker",
    )
    options = parser.parse_args()
    workdir = tempfile.mkdtemp()
    script = os.path.join(workdir, "launch_worker.py")
    with open(script, "w") as f:
        f.write(WORKER)
    cases = [c for c in CASES if c[0] in options.cases.split(",")]
    floors, results = [], {(case, which): [] for case, _, _ in cases for which in ("cujit", "numba")}
    for r in range(options.rounds):
        floor, library = c_floor(workdir)
        floors.append(floor)
        print(f"round {r + 1}: C floor {floors[-1]}")
        for case, _, _ in cases:
            for which in ("cujit", "numba"):
                if not (which == "numba" and case == "dlpack4"):
                    results[case, which].append(
                        run_worker(script, which, case, options.profile, library, options.pairs)
                    )
    print(
        "| arguments | cujit | numba-cuda 0.30.4 | C loop, own process | cujit / C (best) "
        "| cujit / C paired, per round | numba-cuda / C paired | Python's call | cujit / (C + Python's call) paired |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    best = lambda vs: min((v for v in vs if v is not None), default=None)  # noqa: E731
    fmt = lambda v: "—" if v is None else f"{v:.2f} µs"  # noqa: E731
    ratios = lambda rs, py=False: " / ".join(f"{v:.2f}" for v in (paired_ratio(r, py) for r in rs) if v) or "—"  # noqa: E731,E501
    for case, label, kname in cases:
        cu = [r and r["best"] for r in results[case, "cujit"]]
        nb = [r and r["best"] for r in results[case, "numba"]]
        c = best([f.get(kname) for f in floors])
        ratio = f"{best(cu) / c:.2f}×" if c and best(cu) else "—"
        print(
            f"| {label} | {fmt(best(cu))} | {fmt(best(nb))} | {fmt(c)} | {ratio} "
            f"| {ratios(results[case, 'cujit'])} | {ratios(results[case, 'numba'])} "
            f"| {fmt(best([r and r.get('pycall') for r in results[case, 'cujit']]))} "
            f"| {ratios(results[case, 'cujit'], True)} |"
        )


if __name__ == "__main__":
    main()
