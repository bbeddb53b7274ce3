"""The CPU target beside NumPy and NVIDIA Warp's CPU backend (issue 46), five kernels, each side in its own
process, CPU time and wall time per run (median of --repeat warm runs; the first run compiles and is left out):

* saxpy over 2^24 float32 (256 threads a block);
* a 5-point stencil over 2048 x 2048 float64 (16 x 16 blocks);
(saxpy, the stencil and the tiled matmul are bench_kernels.py's, which kernels.py times on the GPU)
* a naive matmul, 512 x 512 float32, one thread an element of C (NumPy: its BLAS);
* the tiled matmul of numba-cuda's documentation, 16 x 16 tiles in shared memory, two syncthreads a tile
  (Warp: its tile_matmul with 32 x 32 tiles; NumPy: its BLAS);
* a block-tree sum of 2^24 float64 in shared memory with a syncthreads a level, 256 threads a block, the block
  sums added on the host (Warp: one atomic add a thread; NumPy: x.sum()).

Sides: ``cujit-1`` (the CPU target on one worker: CUJIT_HOST_THREADS=1), ``cujit`` (every core), ``numpy``,
``warp`` (needs warp-lang in --warp-python's environment; it runs a kernel on one thread). Every result is
checked against NumPy's.

    python benchmarks/cpu_peers.py --warp-python .bench-venv/bin/python [--json FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

PROGRAM = r"""
import json, sys, time
import numpy as np
side, repeat = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
N, S, M, RN = 1 << 24, 2048, 512, 1 << 24
x = rng.random(N, dtype=np.float32); y = rng.random(N, dtype=np.float32); r = np.zeros(N, np.float32)
g = rng.random((S, S)); o = np.zeros((S, S))
A = rng.random((M, M), dtype=np.float32); B = rng.random((M, M), dtype=np.float32); C = np.zeros((M, M), np.float32)
v = rng.random(RN)
def stencil_interior(g):  # bench_kernels' stencil, as NumPy writes it
    return 0.2 * (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])


want_stencil = np.zeros((S, S))
want_stencil[1:-1, 1:-1] = stencil_interior(g)
want_mm = A @ B


def measure(run, check):
    run()
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return {"wall_ms": sorted(walls)[repeat // 2] * 1e3, "cpu_ms": sorted(cpus)[repeat // 2] * 1e3, "ok": bool(check())}


out = {}
if side.startswith("cujit"):
    from cujit import cuda, float32, float64

    sys.path.insert(0, sys.argv[3])
    from bench_kernels import TPB, make_kernels, make_more  # the kernels the GPU benchmarks time

    saxpy, tiled = (cuda.jit(target="cpu")(f) for f in make_kernels(cuda, float32))
    stencil = cuda.jit(target="cpu")(make_more(cuda, float32, None)[1])

    @cuda.jit(target="cpu")
    def naive(A, B, C):
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            s = float32(0.0)
            for k in range(A.shape[1]):
                s += A[i, k] * B[k, j]
            C[i, j] = s

    @cuda.jit(target="cpu")
    def block_sums(x, out):
        buf = cuda.shared.array(256, dtype=float64)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = 128
        while step > 0:
            if t < step:
                buf[t] += buf[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            out[cuda.blockIdx.x] = buf[0]

    sums = np.zeros(RN // 256)
    out["saxpy"] = measure(lambda: saxpy[N // 256, 256](r, np.float32(2.5), x, y),
                           lambda: np.allclose(r, np.float32(2.5) * x + y, rtol=1e-6))
    out["stencil"] = measure(lambda: stencil[(S // 16, S // 16), (16, 16)](g, o), lambda: np.allclose(o, want_stencil))
    out["naive matmul"] = measure(lambda: naive[(M // 16, M // 16), (16, 16)](A, B, C),
                                  lambda: np.allclose(C, want_mm, rtol=1e-4))
    C[:] = 0
    out["tiled matmul"] = measure(lambda: tiled[(M // TPB, M // TPB), (TPB, TPB)](A, B, C),
                                  lambda: np.allclose(C, want_mm, rtol=1e-4))
    total = [0.0]

    def cj_sum():
        block_sums[RN // 256, 256](v, sums)
        total[0] = sums.sum()  # the block sums, added on the host

    out["block-tree sum"] = measure(cj_sum, lambda: np.isclose(total[0], v.sum()))
elif side == "numpy":
    def np_saxpy():
        np.multiply(x, np.float32(2.5), out=r)
        np.add(r, y, out=r)

    def np_stencil():
        o[1:-1, 1:-1] = stencil_interior(g)

    out["saxpy"] = measure(np_saxpy, lambda: np.allclose(r, np.float32(2.5) * x + y, rtol=1e-6))
    out["stencil"] = measure(np_stencil, lambda: np.allclose(o, want_stencil))
    out["naive matmul"] = measure(lambda: np.matmul(A, B, out=C), lambda: np.allclose(C, want_mm, rtol=1e-4))
    out["tiled matmul"] = out["naive matmul"]
    total = [0.0]
    out["block-tree sum"] = measure(lambda: total.__setitem__(0, v.sum()), lambda: np.isclose(total[0], v.sum()))
else:
    import warp as wp
    wp.config.quiet = True
    wp.init()
    TILE = 32

    @wp.kernel
    def w_saxpy(r: wp.array(dtype=wp.float32), a: wp.float32, x: wp.array(dtype=wp.float32),
                y: wp.array(dtype=wp.float32)):
        i = wp.tid()
        r[i] = a * x[i] + y[i]

    @wp.kernel
    def w_stencil(a: wp.array2d(dtype=wp.float64), o: wp.array2d(dtype=wp.float64)):
        i, j = wp.tid()
        if i > 0 and j > 0 and i < a.shape[0] - 1 and j < a.shape[1] - 1:
            o[i, j] = wp.float64(0.2) * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    @wp.kernel
    def w_naive(A: wp.array2d(dtype=wp.float32), B: wp.array2d(dtype=wp.float32), C: wp.array2d(dtype=wp.float32)):
        i, j = wp.tid()
        s = wp.float32(0.0)
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s

    @wp.kernel
    def w_tiled(A: wp.array2d(dtype=wp.float32), B: wp.array2d(dtype=wp.float32), C: wp.array2d(dtype=wp.float32)):
        i, j = wp.tid()
        acc = wp.tile_zeros(shape=(TILE, TILE), dtype=wp.float32)
        for k in range(int(A.shape[1] / TILE)):
            a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
            b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
            wp.tile_matmul(a, b, acc)
        wp.tile_store(C, acc, offset=(i * TILE, j * TILE))

    @wp.kernel
    def w_sum(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
        wp.atomic_add(out, 0, x[wp.tid()])

    dev = "cpu"
    wr, wx, wy = wp.array(r, device=dev), wp.array(x, device=dev), wp.array(y, device=dev)
    wg, wo = wp.array(g, device=dev), wp.zeros((S, S), dtype=wp.float64, device=dev)
    wA, wB, wC = wp.array(A, device=dev), wp.array(B, device=dev), wp.zeros((M, M), dtype=wp.float32, device=dev)
    wv, wt = wp.array(v, device=dev), wp.zeros(1, dtype=wp.float64, device=dev)
    out["saxpy"] = measure(lambda: wp.launch(w_saxpy, dim=N, inputs=[wr, 2.5, wx, wy], device=dev),
                           lambda: np.allclose(wr.numpy(), np.float32(2.5) * x + y, rtol=1e-6))
    out["stencil"] = measure(lambda: wp.launch(w_stencil, dim=(S, S), inputs=[wg, wo], device=dev),
                             lambda: np.allclose(wo.numpy(), want_stencil))
    out["naive matmul"] = measure(lambda: wp.launch(w_naive, dim=(M, M), inputs=[wA, wB, wC], device=dev),
                                  lambda: np.allclose(wC.numpy(), want_mm, rtol=1e-4))
    out["tiled matmul"] = measure(
        lambda: wp.launch_tiled(w_tiled, dim=(M // TILE, M // TILE), inputs=[wA, wB, wC], block_dim=64, device=dev),
        lambda: np.allclose(wC.numpy(), want_mm, rtol=1e-4))

    def w_total():
        wt.zero_()
        wp.launch(w_sum, dim=RN, inputs=[wv, wt], device=dev)

    out["block-tree sum"] = measure(w_total, lambda: np.isclose(wt.numpy()[0], v.sum()))
print(json.dumps(out))
"""

KERNELS = ["saxpy", "stencil", "naive matmul", "tiled matmul", "block-tree sum"]


def run_side(side, python, repeat):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # (idle BLAS threads spin, and CPU time would count them)
    env.pop("CUJIT_TARGET", None)
    if side == "cujit-1":
        env["CUJIT_HOST_THREADS"] = "1"
    with tempfile.TemporaryDirectory() as workdir:  # Warp compiles kernels from a file only
        program = os.path.join(workdir, "cpu_peers_side.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        proc = subprocess.run(
            [python, program, side, str(repeat), os.path.dirname(os.path.abspath(__file__))],
            env=env,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        print(f"{side}: failed: {(proc.stderr or proc.stdout).strip()[-800:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sides", default="cujit-1,cujit,numpy,warp")
    parser.add_argument("--warp-python", default=sys.executable, help="an interpreter with warp-lang installed")
    parser.add_argument("--json")
    args = parser.parse_args()
    results = {}
    for side in args.sides.split(","):
        python = args.warp_python if side == "warp" else sys.executable
        results[side] = run_side(side, python, args.repeat)
    sides = [s for s in results if results[s]]
    print(f"{os.cpu_count()} cores; ms per run: CPU time / wall time (median of {args.repeat})")
    print("| kernel | " + " | ".join(sides) + " | cujit (1 core) / Warp, CPU time | cujit (1 core) / NumPy |")
    print("|---|" + "---|" * (len(sides) + 2))
    for k in KERNELS:
        cells = []
        for s in sides:
            m = results[s][k]
            cells.append(f"{m['cpu_ms']:.1f} / {m['wall_ms']:.1f}" + ("" if m["ok"] else " WRONG"))
        ratio = lambda a, b: (  # noqa: E731
            f"{results[a][k]['cpu_ms'] / results[b][k]['cpu_ms']:.2f}" if results.get(a) and results.get(b) else "—"
        )
        print(f"| {k} | " + " | ".join(cells) + f" | {ratio('cujit-1', 'warp')} | {ratio('cujit-1', 'numpy')} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
