"""The CPU target against numba-cuda's simulator and against the GPU (issue 30).

(Issue 46's five kernels, the CPU target beside NumPy and NVIDIA Warp's CPU backend on one core and on all, are
``cpu_peers.py``'s.)

Two kernels with barriers, the same source on every side:

* ``matmul``: the tiled matrix product of numba-cuda's documentation (16x16 tiles in shared memory, two
  ``syncthreads`` per tile), float32, N x N (default 512);
* ``reduce``: a block sum with a shared tree and ``syncthreads`` per level, 256 threads per block, over 2^20
  float64 values (default), the block sums added on the host.

Sides, each in its own process (a fresh interpreter: the first call compiles, so it is reported apart):

* ``cpu``: cujit, ``cuda.jit(target="cpu")``, numpy arrays in place, every core of the machine;
* ``sim``: numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``). It interprets every CUDA thread in Python and
  would take hours on the full grid, so it runs the first ``--sim-blocks`` blocks of the same launch (every
  block does the same work in both kernels) and its time is scaled to the whole grid; the report says so;
* ``gpu``: cujit on the GPU (device arrays made before timing; each call synchronised);
* ``numba-gpu``: numba-cuda on the GPU, the same way.

Every side's result is checked: the full results against numpy (``cpu``, ``gpu``, ``numba-gpu``), the
simulator's blocks against the same blocks of numpy's. Times are the median of ``--repeat`` warm calls.

Usage (on the GPU machine, where numba-cuda is installed)::

    python benchmarks/cpu_target.py                      # every side found; --json FILE, --sides cpu,sim
    python benchmarks/cpu_target.py --numba-python .bench-venv/bin/python --sides cpu,sim   # no GPU here
"""

import argparse
import json
import os
import subprocess
import sys

KERNELS = r"""
import numpy as np

TPB = 16
RTPB = 256


def make():
    @jit_kernel
    def matmul(A, B, C):
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x
        tmp = float32(0.)
        for i in range(bpg):
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

    @jit_kernel
    def block_sums(x, out):
        buf = cuda.shared.array(RTPB, dtype=float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = RTPB // 2
        while step > 0:
            if t < step:
                buf[t] += buf[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[cuda.blockIdx.x] = buf[0]

    return matmul, block_sums
"""

PROGRAM = r"""
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack   # numba-cuda 0.30.4 reads it at import
side, n, rn, repeat, sim_blocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if side in ("cpu", "gpu"):
    from cujit import cuda, float32, float64
    target = {"cpu": "cpu", "gpu": "cuda"}[side]
    jit_kernel = cuda.jit(target=target)
else:
    from numba import cuda, float32, float64
    jit_kernel = cuda.jit
exec(KERNELS)
rng = np.random.default_rng(7)
A = rng.random((n, n), dtype=np.float32)
B = rng.random((n, n), dtype=np.float32)
x = rng.random(rn)
grid2 = ((n + TPB - 1) // TPB, (n + TPB - 1) // TPB)
rgrid = (rn + RTPB - 1) // RTPB
result = {"side": side}

start = time.perf_counter()
matmul, block_sums = make()
on_device = side in ("gpu", "numba-gpu")
sync = cuda.synchronize if on_device else (lambda: None)
if on_device:
    dA, dB, dC, dx = cuda.to_device(A), cuda.to_device(B), cuda.device_array((n, n), np.float32), cuda.to_device(x)
    dout = cuda.device_array(rgrid)
else:
    dA, dB, dC, dx = A, B, np.zeros((n, n), np.float32), x
    dout = np.zeros(rgrid)


def timed(call, times):
    out = []
    for _ in range(times):
        t0 = time.perf_counter()
        call()
        sync()
        out.append(time.perf_counter() - t0)
    return out


if side == "sim":
    # The first sim_blocks blocks of the launch (rows of tiles of C; blocks of x), scaled to the whole grid.
    rows = max(1, sim_blocks // grid2[0])
    blocks = rows * grid2[0]
    t0 = time.perf_counter()
    matmul[(grid2[0], rows), (TPB, TPB)](dA, dB, dC)   # gridDim.x = the tiles along k, as in the full launch
    mm = time.perf_counter() - t0
    want = A[:rows * TPB] @ B
    result["matmul_ok"] = bool(np.allclose(dC[:rows * TPB], want, rtol=1e-4, atol=1e-3))
    result["matmul_s"] = mm * (grid2[0] * grid2[1]) / blocks
    result["matmul_blocks_run"] = blocks
    rb = min(sim_blocks, rgrid)
    t0 = time.perf_counter()
    block_sums[rb, RTPB](dx, dout)
    rd = time.perf_counter() - t0
    result["reduce_ok"] = bool(np.allclose(dout[:rb], x[:rb * RTPB].reshape(rb, RTPB).sum(axis=1)))
    result["reduce_s"] = rd * rgrid / rb
    result["reduce_blocks_run"] = rb
    print(json.dumps(result))
    sys.exit(0)

matmul[grid2, (TPB, TPB)](dA, dB, dC)
sync()
result["first_matmul_s"] = time.perf_counter() - start
C = dC.copy_to_host() if on_device else dC
result["matmul_ok"] = bool(np.allclose(C, A @ B, rtol=1e-4, atol=1e-3))
result["matmul_s"] = sorted(timed(lambda: matmul[grid2, (TPB, TPB)](dA, dB, dC), repeat))[repeat // 2]
block_sums[rgrid, RTPB](dx, dout)
sync()
sums = dout.copy_to_host() if on_device else dout
result["reduce_ok"] = bool(np.isclose(sums.sum(), x.sum()))
result["reduce_s"] = sorted(timed(lambda: block_sums[rgrid, RTPB](dx, dout), repeat))[repeat // 2]
print(json.dumps(result))
"""


def run_side(side, python, args):
    env = dict(os.environ)
    env.pop("CUJIT_TARGET", None)
    if side == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    code = PROGRAM.replace("exec(KERNELS)", "exec(" + repr(KERNELS) + ")")
    proc = subprocess.run(
        [python, "-c", code, side, str(args.n), str(args.reduce_n), str(args.repeat), str(args.sim_blocks)],
        env=env,
        capture_output=True,
        text=True,
        timeout=args.timeout,
    )
    if proc.returncode != 0:
        return {"side": side, "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--reduce-n", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sim-blocks", type=int, default=32, help="blocks of each launch the simulator runs")
    parser.add_argument("--sides", default="cpu,sim,gpu,numba-gpu")
    parser.add_argument("--numba-python", default=sys.executable, help="the interpreter with numba-cuda")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for side in args.sides.split(","):
        python = args.numba_python if side in ("sim", "numba-gpu") else sys.executable
        rows.append(run_side(side, python, args))
    cpu = next((r for r in rows if r["side"] == "cpu" and "error" not in r), None)
    print(f"{'side':10} {'matmul ms':>12} {'reduce ms':>12} {'first ms':>10}  checked   cpu is ... x faster")
    for r in rows:
        if "error" in r:
            print(f"{r['side']:10} error: {r['error']}")
            continue
        ok = "ok" if r["matmul_ok"] and r["reduce_ok"] else "WRONG"
        ratio = ""
        if cpu is not None and r is not cpu:
            ratio = f"{r['matmul_s'] / cpu['matmul_s']:.0f} / {r['reduce_s'] / cpu['reduce_s']:.0f}"
        first = f"{r['first_matmul_s'] * 1e3:10.1f}" if "first_matmul_s" in r else f"{'-':>10}"
        scaled = " (scaled)" if r["side"] == "sim" else ""
        print(f"{r['side']:10} {r['matmul_s'] * 1e3:12.2f} {r['reduce_s'] * 1e3:12.2f} {first}  {ok:8}{ratio}{scaled}")
    sim = next((r for r in rows if r["side"] == "sim" and "error" not in r), None)
    if sim is not None:
        print(
            f"simulator: {sim['matmul_blocks_run']} matmul blocks and {sim['reduce_blocks_run']} reduce blocks "
            "run, times scaled to the whole grid"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"n": args.n, "reduce_n": args.reduce_n, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
