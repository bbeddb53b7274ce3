"""The disk cache on the GPU machine: a second process's first call, side by side with numba-cuda 0.30.4.

1. A kernel with ``link=["mul.cu"]`` and a ``declare_device`` function: cujit with ``cache=True`` (the first
   process compiles and writes, the next ones load); numba-cuda cannot cache a kernel that links files, so it
   compiles in every process.
2. The 16x16 tiled matmul with ``cache=True`` on both sides.
3. 32 processes started at once on one empty cache directory (case 1): every one correct, the kernel compiled
   once among them (the others wait for its entry and load it).

Each measurement is a fresh process: the context and the arrays are made first, then the first launch is timed up
to ``synchronize``, and the result is checked against numpy. Medians of ``--runs`` processes.

Usage (on the GPU machine): ``python3 benchmarks/cache_first_call.py --runs 5``
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAM = r"""
import json, os, sys, time, warnings
import numpy as np
side, case = sys.argv[1], sys.argv[2]
if side == "numba":
    np.row_stack = getattr(np, "row_stack", np.vstack)
    from numba import cuda, float32
else:
    from cujit import cuda, float32
    import cujit
warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))

mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

@cuda.jit(cache=side == "cujit", link=[os.path.join(HERE, "mul.cu")])  # numba-cuda refuses to cache these
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = mul(x[i], y[i])

TPB = 16

@cuda.jit(cache=True)
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tmp = float32(0.)
    for i in range(cuda.gridDim.x):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp

rng = np.random.default_rng()
if case == "link":
    x, y = rng.random(4096, dtype=np.float32), rng.random(4096, dtype=np.float32)
    d_x, d_y, d_r = cuda.to_device(x), cuda.to_device(y), cuda.device_array(4096, np.float32)
    cuda.synchronize()
    t = time.perf_counter()
    multiply[16, 256](d_r, d_x, d_y)
    cuda.synchronize()
    ms = (time.perf_counter() - t) * 1e3
    ok = bool(np.allclose(d_r.copy_to_host(), x * y))
else:
    n = 256
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    d_a, d_b, d_c = cuda.to_device(a), cuda.to_device(b), cuda.device_array((n, n), np.float32)
    cuda.synchronize()
    t = time.perf_counter()
    matmul[(n // TPB, n // TPB), (TPB, TPB)](d_a, d_b, d_c)
    cuda.synchronize()
    ms = (time.perf_counter() - t) * 1e3
    ok = bool(np.allclose(d_c.copy_to_host(), a @ b, rtol=1e-4, atol=1e-3))
stats = cujit.stats() if side == "cujit" else {}
print(json.dumps({"ms": ms, "ok": ok, "compiles": stats.get("compiles"), "hits": stats.get("cache hits"),
                  "stages": {k: round(v["seconds"] * 1e3, 3) for k, v in stats.get("stages", {}).items()}}))
"""

MUL_CU = 'extern "C" __device__ int mul_f32_f32(float* r, float x, float y) { *r = x * y; return 0; }\n'


def start(workdir, side, case, cache_dir):
    env = dict(os.environ, CUJIT_CACHE_DIR=cache_dir, NUMBA_CACHE_DIR=cache_dir, PYTHONUNBUFFERED="1")
    env.pop("CUJIT_CACHE", None)
    return subprocess.Popen(
        [sys.executable, os.path.join(workdir, "prog.py"), side, case],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result(proc):
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed:\n{out}\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def second_processes(workdir, side, case, runs):
    """The first process (which compiles, and writes when it caches), then the medians of ``runs`` more."""
    cache_dir = tempfile.mkdtemp(prefix=f"cache-{side}-{case}-")
    first = result(start(workdir, side, case, cache_dir))
    later = [result(start(workdir, side, case, cache_dir)) for _ in range(runs)]
    assert first["ok"] and all(r["ok"] for r in later), (first, later)
    return first, later


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", type=int, default=32)
    options = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="cujit-cache-bench-")
    with open(os.path.join(workdir, "prog.py"), "w") as f:
        f.write(PROGRAM)
    with open(os.path.join(workdir, "mul.cu"), "w") as f:
        f.write(MUL_CU)

    print("| case | side | first process ms | later processes ms (median) | each later |")
    print("|---|---|---|---|---|")
    for case in ("link", "matmul"):
        for side in ("cujit", "numba"):
            first, later = second_processes(workdir, side, case, options.runs)
            each = " / ".join(f"{r['ms']:.2f}" for r in later)
            print(f"| {case} | {side} | {first['ms']:.2f} | {statistics.median(r['ms'] for r in later):.2f} | {each} |")
            if side == "cujit":
                print(
                    f"  cujit later process stages (ms): {later[0]['stages']}, hits {later[0]['hits']}, "
                    f"compiles {later[0]['compiles']}"
                )

    cache_dir = tempfile.mkdtemp(prefix="cache-herd-")
    t = time.perf_counter()
    procs = [start(workdir, "cujit", "link", cache_dir) for _ in range(options.processes)]
    results = [result(p) for p in procs]
    wall = time.perf_counter() - t
    print(
        f"{options.processes} processes at once on one cache directory: {sum(r['ok'] for r in results)} correct, "
        f"{sum(r['compiles'] for r in results)} compile(s), {sum(r['hits'] for r in results)} cache hits, "
        f"first calls median {statistics.median(r['ms'] for r in results):.1f} ms, max "
        f"{max(r['ms'] for r in results):.1f} ms, all done in {wall:.1f} s"
    )


if __name__ == "__main__":
    main()
