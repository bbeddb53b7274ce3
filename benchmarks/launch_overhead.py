"""Host time per launch of a 1x32 grid (GPU machine): cujit, numba-cuda and a C cuLaunchKernel loop, each case
in its own process, best of 3 x 20 000 launches after warm-up: `python benchmarks/launch_overhead.py`.

Cases (issue 14's table): no arguments; 4 arguments (3 device arrays of the library + a float32) with cujit
device arrays, CuPy arrays, PyTorch tensors and DLPack capsules (cujit only: numba-cuda does not take them);
16 device arrays; 8 Python scalars. The C floor is benchmarks/launch_floor.cu, built here with nvcc. (Pinning every
process to one core made the figures worse, not steadier: the driver's own threads then share that core.)
`--rounds N` (3) repeats the whole set in fresh processes, interleaved, because one process's figure moves by
±0.5 µs from the next: the table shows each column's best round and every round's ratio. `--profile` also prints
where cujit's time goes, from the fast path's own timers (CUJIT_LAUNCH_PROFILE=1)."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = textwrap.dedent('''
    import os, sys, time
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
    n, best = 20000, float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            kernel[1, 32](*args)
        cuda.synchronize()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    print(f"{best:.2f}")
    if which == "cujit" and os.environ.get("CUJIT_LAUNCH_PROFILE"):
        print("PROFILE", {k: round(v, 3) for k, v in _core.launch.profile().items()}, file=sys.stderr)
''')

CASES = [("none", "no arguments", "k0"), ("device4", "4: 3 device arrays + float32", "k4"),
         ("cupy4", "4 with CuPy arrays", "k4"), ("torch4", "4 with PyTorch tensors", "k4"),
         ("dlpack4", "4 with DLPack capsules", "k4"), ("arrays16", "16 device arrays", "k16"),
         ("scalars8", "8 Python scalars (int, float)", "k8")]


def c_floor(workdir):
    """{kernel: us per launch} from the C loop, or {} without nvcc."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        return {}
    exe = os.path.join(workdir, "launch_floor")
    build = subprocess.run([nvcc, "-O2", "-o", exe, os.path.join(HERE, "launch_floor.cu"), "-lcuda"],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(build.stderr[-2000:])
        return {}
    out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
    return dict(zip(out[::2], (float(v) for v in out[1::2])))


def run_worker(script, which, case, profile):
    """us per launch from one worker process, or None (the failure printed)."""
    env = dict(os.environ, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
    if profile and which == "cujit":
        env["CUJIT_LAUNCH_PROFILE"] = "1"
    out = subprocess.run([sys.executable, script, which, case], capture_output=True, text=True, env=env)
    if profile and which == "cujit":
        for line in out.stderr.splitlines():
            if line.startswith("PROFILE"):
                print(f"  {case}: {line}")
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"  {which} {case} failed: {out.stderr.strip()[-600:]}")
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cases", default=",".join(c[0] for c in CASES))
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of fresh processes (the C loop, then every case of each library), interleaved; "
                             "the table shows each column's best round and the range of per-round ratios")
    options = parser.parse_args()
    workdir = tempfile.mkdtemp()
    script = os.path.join(workdir, "launch_worker.py")
    with open(script, "w") as f:
        f.write(WORKER)
    cases = [c for c in CASES if c[0] in options.cases.split(",")]
    floors, times = [], {(case, which): [] for case, _, _ in cases for which in ("cujit", "numba")}
    for r in range(options.rounds):
        floors.append(c_floor(workdir))
        print(f"round {r + 1}: C floor {floors[-1]}")
        for case, _, _ in cases:
            for which in ("cujit", "numba"):
                if not (which == "numba" and case == "dlpack4"):
                    times[case, which].append(run_worker(script, which, case, options.profile))
    print(f"| arguments | cujit | numba-cuda 0.30.4 | C cuLaunchKernel | cujit / C (best) | per round |")
    print("|---|---|---|---|---|---|")
    best = lambda vs: min((v for v in vs if v is not None), default=None)  # noqa: E731
    fmt = lambda v: "—" if v is None else f"{v:.2f} µs"  # noqa: E731
    for case, label, kname in cases:
        cu, nb = times[case, "cujit"], times[case, "numba"]
        cs = [f.get(kname) for f in floors]
        c = best(cs)
        ratio = f"{best(cu) / c:.2f}×" if c and best(cu) else "—"
        rounds = " / ".join(f"{u / f:.2f}" for u, f in zip(cu, cs) if u and f) or "—"
        print(f"| {label} | {fmt(best(cu))} | {fmt(best(nb))} | {fmt(c)} | {ratio} | {rounds} |")


if __name__ == "__main__":
    main()
