"""Linking latency on the GPU machine, cujit against numba-cuda 0.30.4, side by side in one run.

1. First call of a kernel that calls a ``declare_device`` function defined in a ``link=`` CUDA C++ file, after
   the context exists: each round writes a new ``.cu`` (a unique comment, so no cache helps either side),
   declares the function, decorates a new kernel and times its first launch up to ``synchronize``.
2. ``cuda.compile(udf, "float32(float32)", output="ltoir")`` of a two-line UDF, for cc 9.0.

Each side runs in its own worker process (``--worker cujit|numba``); the driver alternates them for
``--rounds`` rounds and reports medians over every round, over the first round of each worker (the first link
in a process, which loads the libraries) and over the later ones. cujit's worker also reads its stage timers
for each timed first call (NVRTC, the kernel's compile and LTO-IR, nvJitLink, the module load, and the rest of
the call) so the report says where the time goes. Both sides use their defaults: LTO for a kernel that links
CUDA C++ (numba-cuda: whenever nvJitLink is there), and cujit starts NVRTC at ``declare_device``, on a native
thread, since a context exists.

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
        import cujit
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
        if side == "cujit":
            cujit.stats(reset=True)
        t0 = time.perf_counter()
        mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=[path])
        kernel = make_kernel(cuda, mul)
        kernel[1, 32](d_r, d_x, d_y)
        cuda.synchronize()
        out["first_call_ms"].append((time.perf_counter() - t0) * 1e3)
        if side == "cujit" and not shared:
            out["stages"].append(cujit_stages(cujit.stats(), out["first_call_ms"][-1]))
        t0 = time.perf_counter()
        code, _ = cuda.compile(udf, "float32(float32)", output="ltoir", cc=(9, 0))
        out["ltoir_ms"].append((time.perf_counter() - t0) * 1e3)
        assert code[:4] == b"\xed\x43\x4e\x7f"
    print(json.dumps(out))


def cujit_stages(stats, total_ms):
    """Where one timed first call went, from cujit's own stage timers (``cujit.stats``): NVRTC (in the
    background from ``declare_device`` on, while the kernel compiles), the kernel's compile and its LTO-IR,
    nvJitLink and the module load (after NVRTC), and what is left of the call beside NVRTC, nvJitLink and the
    load: cujit's own time on the critical path (the kernel's compile is off it while NVRTC runs)."""
    ms = {name: s["seconds"] * 1e3 for name, s in stats["stages"].items()}
    compile_ms = sum(
        ms.get(k, 0.0) for k in ("frontend", "typing", "lowering", "libdevice", "LLVM optimisation", "PTX emission")
    )
    tools = ms.get("NVRTC", 0.0) + ms.get("nvJitLink", 0.0) + ms.get("module load", 0.0)
    return {
        "nvrtc": ms.get("NVRTC", 0.0),
        "compile": compile_ms,
        "ltoir": ms.get("libNVVM", 0.0),
        "nvjitlink": ms.get("nvJitLink", 0.0),
        "load": ms.get("module load", 0.0),
        "rest": total_ms - tools,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="worker processes per side, alternated")
    ap.add_argument(
        "--cached",
        action="store_true",
        help="case 1 with one mul.cu for every round and cujit's disk cache on (CUJIT_CACHE=1, a fresh "
        "directory): every first call after the first one's is served by the cache; numba-cuda "
        "cannot cache a kernel that links files",
    )
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

    def med(side, key, rounds=slice(None)):
        return statistics.median(v for run in results[side] for v in run[key][rounds])

    print(f"{'case (rounds)':<56}{'numba-cuda ms':>15}{'cujit ms':>10}{'ratio':>8}")
    for key, label in (
        ("first_call_ms", "first call, link=['mul.cu'] + declare_device"),
        ("ltoir_ms", "compile(udf, output='ltoir')"),
    ):
        # every round; the first of each worker (the first link in a process: the libraries load and
        # initialise then); the later ones
        for rounds, which in ((slice(None), "all"), (slice(0, 1), "first in process"), (slice(1, None), "later")):
            if rounds.start == 1 and args.rounds < 2:
                continue
            n, c = med("numba", key, rounds), med("cujit", key, rounds)
            print(f"{label + ' (' + which + ')':<56}{n:>15.2f}{c:>10.2f}{c / n:>8.3f}  (cujit {n / c:.1f}x faster)")
    for rounds, which in ((slice(0, 1), "first in process"), (slice(1, None), "later")):
        stages = [s for run in results["cujit"] for s in run["stages"][rounds]]
        if stages:
            print(
                f"cujit first call by stage ({which}, median ms): "
                + ", ".join(f"{k} {statistics.median(s[k] for s in stages):.2f}" for k in stages[0])
            )


if __name__ == "__main__":
    main()
