"""Concurrent first calls on the GPU machine, cujit against numba-cuda 0.30.4, side by side in one run.

Each round makes 16 new kernels (closures over a distinct constant, so nothing is cached): 8 are first-called
one after another, 8 from 8 threads released together; the wall time of each batch is measured up to
``synchronize``. The ratio parallel / serial says whether first calls (typing, code generation, linking,
module loading) overlap; numba-cuda compiles under one global lock.

Usage (on the GPU machine): ``python3 benchmarks/concurrent_first_calls.py --rounds 5``
"""

import argparse
import json
import statistics
import threading
import time

from side_by_side import run_worker


def make_kernel(cuda, c):
    def kernel(out, x):
        i = cuda.grid(1)
        if i < out.size:
            v = x[i]
            acc = 0.0
            for j in range(8):
                acc = acc * v + c + j
            out[i] = acc / (1.0 + abs(v)) + (v * c if v > 0.5 else v - c)

    return cuda.jit(kernel)


def worker(side, rounds):
    import numpy as np

    if side == "numba":
        np.row_stack = getattr(np, "row_stack", np.vstack)
        from numba import cuda
    else:
        from cujit import cuda
    import warnings

    warnings.simplefilter("ignore")
    x = cuda.to_device(np.random.default_rng(1).random(4096))
    outs = [cuda.device_array(4096) for _ in range(8)]
    make_kernel(cuda, -1.0)[16, 256](outs[0], x)  # warm-up: the first compile of the process
    cuda.synchronize()
    serial, parallel = [], []
    for r in range(rounds):
        kernels = [make_kernel(cuda, float(r * 100 + i)) for i in range(16)]
        t0 = time.perf_counter()
        for i in range(8):
            kernels[i][16, 256](outs[i], x)
        cuda.synchronize()
        serial.append(time.perf_counter() - t0)
        barrier = threading.Barrier(9)

        def go(i):
            barrier.wait()
            kernels[8 + i][16, 256](outs[i], x)
            cuda.synchronize()

        threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        parallel.append(time.perf_counter() - t0)
    print(json.dumps({"serial_ms": [s * 1e3 for s in serial], "parallel_ms": [p * 1e3 for p in parallel]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.rounds)
        return
    print(f"{'side':<12}{'8 serial ms':>14}{'8 threads ms':>15}{'ratio':>8}")
    for side in ("numba", "cujit"):
        r = run_worker(__file__, side, args.rounds)
        s, p = statistics.median(r["serial_ms"]), statistics.median(r["parallel_ms"])
        print(
            f"{side:<12}{s:>14.1f}{p:>15.1f}{p / s:>8.3f}   (rounds: serial "
            f"{', '.join(f'{v:.0f}' for v in r['serial_ms'])}; threads {', '.join(f'{v:.0f}' for v in r['parallel_ms'])})"
        )


if __name__ == "__main__":
    main()
