"""Linking latency on the GPU machine, cujit against numba-cuda 0.30.4, side by side in one run.

1. First call of a kernel that calls a ``declare_device`` function defined in a ``link=`` CUDA C++ file, after
   the context exists: each round writes a new ``.cu`` (a unique comment, so no cache helps either side),
   declares the function, decorates a new kernel and times its first launch up to ``synchronize``.
2. ``cuda.compile(udf, "float32(float32)", output="ltoir")`` of a two-line UDF, for cc 9.0.

Each side runs in its own worker process (``--worker cujit|numba``); the driver alternates them for
``--rounds`` rounds and reports medians. cujit's worker also times the stages of its first call (the kernel's
compile, its LTO-IR, NVRTC, the nvJitLink link with the load, the launch) so the report says where the time
goes. Both sides use their defaults: LTO for a kernel that links CUDA C++ (numba-cuda: whenever nvJitLink is
there), and cujit starts NVRTC at ``declare_device``, in the background, since a context exists.

Usage (on the GPU machine): ``python3 benchmarks/link_latency.py --rounds 5``; ``--cached`` links one ``mul.cu``
in every round with cujit's disk cache on (the first call of a kernel a previous process already compiled).
"""

import argparse
import json
import os
import statistics
import tempfile
import time

from side_by_side import run_worker

HERE = os.path.dirname(os.path.abspath(__file__))
MUL_CU = """
extern "C" __device__ int mul_f32_f32(float* r, float x, float y) {{ *r = x * y; return 0; }}
// round {tag}
"""


def udf(x):
    y = x * 2.0 + 1.0
    return y * x


def make_kernel(cuda, mul):
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])
    return cuda.jit(multiply_vectors)


def worker(side, rounds):
    import numpy as np
    if side == "numba":
        np.row_stack = getattr(np, "row_stack", np.vstack)
        from numba import cuda
    else:
        from cujit import cuda
    import warnings
    warnings.simplefilter("ignore")  # the low-occupancy warning of a 1-block launch
    x = np.ones(32, np.float32)
    r = np.zeros(32, np.float32)
    d_x, d_y, d_r = cuda.to_device(x), cuda.to_device(x + 1), cuda.to_device(r)
    cuda.synchronize()  # the context exists before anything is timed
    out = {"first_call_ms": [], "ltoir_ms": [], "stages": []}
    tmp = tempfile.mkdtemp()
    shared = os.environ.get("LINK_BENCH_SHARED")  # --cached: one mul.cu for every round and process
    for i in range(rounds):
        if shared:
            path = os.path.join(shared, "mul.cu")
        else:
            path = os.path.join(tmp, f"mul_{side}_{i}_{os.getpid()}.cu")
            with open(path, "w") as f:
                f.write(MUL_CU.format(tag=f"{side} {i} {time.time_ns()}"))
        t0 = time.perf_counter()
        mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[path])
        kernel = make_kernel(cuda, mul)
        kernel[1, 32](d_r, d_x, d_y)
        cuda.synchronize()
        out["first_call_ms"].append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        code, _ = cuda.compile(udf, "float32(float32)", output="ltoir", cc=(9, 0))
        out["ltoir_ms"].append((time.perf_counter() - t0) * 1e3)
        assert code[:4] == b"\xed\x43\x4e\x7f"
        if side == "cujit" and not shared:
            out["stages"].append(cujit_stages(cuda, tmp, i))
    print(json.dumps(out))


def cujit_stages(cuda, tmp, i):
    """A first call of case 1 taken apart: the kernel's compile (typing, LLVM, PTX), its own link input (LTO-IR
    when it links with LTO), NVRTC on a new source of the same size (the declaration's own NVRTC compile runs
    in the background meanwhile), nvJitLink with the module load, and the launch up to synchronize."""
    import numpy as np
    from cujit import _core, linking
    from cujit.cudadrv import devices
    cc = devices.get_current_device().compute_capability
    path = os.path.join(tmp, f"stage_{i}_{os.getpid()}.cu")
    with open(path, "w") as f:
        f.write(MUL_CU.format(tag=f"stages {i} {time.time_ns()}"))
    x = cuda.to_device(np.ones(32, np.float32))
    stages = {}
    t0 = time.perf_counter()
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[path])
    kernel = make_kernel(cuda, mul)
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1])", cc=cc)
    t1 = time.perf_counter()
    compiled.own_code(cc)
    t2 = time.perf_counter()
    _core.nvrtc.compile(MUL_CU.format(tag=f"alone {i} {time.time_ns()}"), "alone.cu", linking.arch_for(cc),
                        lto=compiled.lto, include_dirs=linking.nvrtc_include_dirs())
    t3 = time.perf_counter()
    compiled.function()  # the link (NVRTC done by now) and the load
    t4 = time.perf_counter()
    kernel[1, 32](x, cuda.to_device(np.ones(32, np.float32)), cuda.to_device(np.ones(32, np.float32)))
    cuda.synchronize()
    t5 = time.perf_counter()
    stages.update(compile=t1 - t0, own_code=t2 - t1, nvrtc=t3 - t2, link_and_load=t4 - t3, launch=t5 - t4)
    return {k: v * 1e3 for k, v in stages.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="worker processes per side, alternated")
    ap.add_argument("--cached", action="store_true",
                    help="case 1 with one mul.cu for every round and cujit's disk cache on (CUJIT_CACHE=1, a fresh "
                         "directory): every first call after the first one's is served by the cache; numba-cuda "
                         "cannot cache a kernel that links files")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.rounds)
        return
    if args.cached:
        shared = tempfile.mkdtemp(prefix="link-bench-")
        with open(os.path.join(shared, "mul.cu"), "w") as f:
            f.write(MUL_CU.format(tag="shared"))
        os.environ.update(LINK_BENCH_SHARED=shared, CUJIT_CACHE="1", CUJIT_CACHE_DIR=os.path.join(shared, "cache"))
    results = {"cujit": [], "numba": []}
    for _ in range(args.runs):
        for side in ("numba", "cujit"):
            results[side].append(run_worker(__file__, side, args.rounds))

    def med(side, key):
        return statistics.median(v for run in results[side] for v in run[key])
    print(f"{'case':<44}{'numba-cuda ms':>15}{'cujit ms':>10}{'ratio':>8}")
    for key, label in (("first_call_ms", "first call, link=['mul.cu'] + declare_device"),
                       ("ltoir_ms", "compile(udf, output='ltoir')")):
        n, c = med("numba", key), med("cujit", key)
        print(f"{label:<44}{n:>15.2f}{c:>10.2f}{c / n:>8.3f}  (cujit {n / c:.1f}x faster)")
    stages = [s for run in results["cujit"] for s in run["stages"]]
    if stages:
        print("cujit first call by stage (median ms): " +
              ", ".join(f"{k} {statistics.median(s[k] for s in stages):.2f}" for k in stages[0]))


if __name__ == "__main__":
    main()
