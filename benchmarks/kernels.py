"""Kernel speed and first-call latency on a GPU, cujit beside numba-cuda and nvcc -O3.

Run on the GPU machine (the device tool): `python benchmarks/kernels.py [--json out.json]`.
- saxpy on 2**26 float32 (one thread per element, and a grid-stride loop on 1056 blocks of 256 threads), the
  16x16 shared-memory tiled matmul on 2048x2048 float32, a block-tree sum of 2**26 float32 (shared memory,
  syncthreads, one atomic per block), a 5-point stencil on 2048x2048 float64 and a histogram of 2**26 bytes
  (shared-memory bins, global atomics): average time of
  back-to-back launches (after warm-up) for cujit, numba-cuda and benchmarks/reference.cu built with
  `nvcc -O3 -arch=sm_<device>`; bandwidth (saxpy, 12 bytes per element) and TFLOP/s (matmul);
- first call of saxpy in a fresh process (type + compile + link + load + launch, synchronised);
- a fresh process's `import` + first `compile_ptx` of a two-line UDF.
numba-cuda 0.30.4 needs `numpy.row_stack = numpy.vstack` with numpy >= 2.5; the workers set it.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N = 1 << 26
SIZE = 2048
RUNS = 100

WORKER = textwrap.dedent(r"""
    import json, sys, time
    import numpy as np
    np.row_stack = np.vstack
    which, n, size, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    if which == "cujit":
        from cujit import cuda
        from cujit import float32
    else:
        from numba import cuda, float32
    sys.path.insert(0, sys.argv[5])
    from bench_kernels import GRID_STRIDE_BLOCKS, TPB, make_grid_stride, make_kernels
    saxpy, fast_matmul = (cuda.jit(f) for f in make_kernels(cuda, float32))
    grid_stride = cuda.jit(make_grid_stride(cuda))

    def average_ms(launch, runs):
        for _ in range(3):
            launch()
        cuda.synchronize()
        t = time.perf_counter()
        for _ in range(runs):
            launch()
        cuda.synchronize()
        return (time.perf_counter() - t) * 1e3 / runs

    rng = np.random.default_rng()
    x = cuda.to_device(rng.random(n, dtype=np.float32))
    y = cuda.to_device(rng.random(n, dtype=np.float32))
    r = cuda.device_array_like(x)
    a = np.float32(2.0)
    threads = 256
    blocks = (n + threads - 1) // threads
    saxpy_ms = average_ms(lambda: saxpy[blocks, threads](r, a, x, y), runs)
    ok_saxpy = bool(np.allclose(r.copy_to_host(), 2.0 * x.copy_to_host() + y.copy_to_host()))
    r2 = cuda.device_array_like(x)
    stride_ms = average_ms(lambda: grid_stride[GRID_STRIDE_BLOCKS, threads](r2, a, x, y), runs)
    ok_saxpy = ok_saxpy and bool(np.allclose(r2.copy_to_host(), 2.0 * x.copy_to_host() + y.copy_to_host()))
    A = cuda.to_device(rng.random((size, size), dtype=np.float32))
    B = cuda.to_device(rng.random((size, size), dtype=np.float32))
    C = cuda.device_array((size, size), dtype=np.float32)
    grid = ((size + TPB - 1) // TPB, (size + TPB - 1) // TPB)
    mm_ms = average_ms(lambda: fast_matmul[grid, (TPB, TPB)](A, B, C), max(runs // 5, 5))
    ref = A.copy_to_host().astype(np.float64) @ B.copy_to_host().astype(np.float64)
    ok_mm = bool(np.allclose(C.copy_to_host(), ref, rtol=1e-3, atol=1e-2))
    from bench_kernels import BINS, RED_TPB, make_more
    if which == "numba":
        from numba import int32
    else:
        from cujit import int32
    block_sum, stencil, histogram = (cuda.jit(f) for f in make_more(cuda, float32, int32))
    total = cuda.device_array(1, dtype=np.float32)
    sum_ms = average_ms(lambda: block_sum[GRID_STRIDE_BLOCKS, RED_TPB](x, total), runs)
    total = cuda.to_device(np.zeros(1, np.float32))
    block_sum[GRID_STRIDE_BLOCKS, RED_TPB](x, total)
    ok_more = bool(np.isclose(total.copy_to_host()[0], x.copy_to_host().astype(np.float64).sum(), rtol=1e-3))
    sa = cuda.to_device(rng.random((size, size)))
    so = cuda.device_array((size, size))
    sgrid = ((size + 15) // 16, (size + 15) // 16)
    stencil_ms = average_ms(lambda: stencil[sgrid, (16, 16)](sa, so), runs)
    h_a = sa.copy_to_host()
    expect = 0.2 * (h_a[1:-1, 1:-1] + h_a[:-2, 1:-1] + h_a[2:, 1:-1] + h_a[1:-1, :-2] + h_a[1:-1, 2:])
    ok_more = ok_more and bool(np.allclose(so.copy_to_host()[1:-1, 1:-1], expect))
    data = cuda.to_device(rng.integers(0, BINS, n, dtype=np.uint8))
    bins = cuda.device_array(BINS, dtype=np.int32)
    hist_ms = average_ms(lambda: histogram[GRID_STRIDE_BLOCKS, BINS](data, bins), runs)
    bins = cuda.to_device(np.zeros(BINS, np.int32))
    histogram[GRID_STRIDE_BLOCKS, BINS](data, bins)
    ok_more = ok_more and bool((bins.copy_to_host() == np.bincount(data.copy_to_host(), minlength=BINS)).all())
    print(json.dumps(dict(saxpy_ms=saxpy_ms, grid_stride_ms=stride_ms, matmul_ms=mm_ms, ok_saxpy=ok_saxpy,
                          ok_matmul=ok_mm, sum_ms=sum_ms, stencil_ms=stencil_ms, histogram_ms=hist_ms,
                          ok_more=ok_more)))
""")

FIRST_CALL = textwrap.dedent(r"""
    import sys, time
    t0 = time.perf_counter()
    import numpy as np
    np.row_stack = np.vstack
    if sys.argv[1] == "cujit":
        from cujit import cuda
    else:
        from numba import cuda
    x = cuda.to_device(np.ones(1 << 20, dtype=np.float32))
    y = cuda.to_device(np.ones(1 << 20, dtype=np.float32))
    r = cuda.device_array_like(x)
    cuda.synchronize()

    @cuda.jit
    def saxpy(r, a, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = a * x[i] + y[i]

    t1 = time.perf_counter()
    saxpy[4096, 256](r, np.float32(2.0), x, y)
    cuda.synchronize()
    t2 = time.perf_counter()
    assert float(r.copy_to_host()[0]) == 3.0
    print((t2 - t1) * 1e3)
""")

IMPORT_COMPILE = textwrap.dedent(r"""
    import sys, time
    t0 = time.perf_counter()
    if sys.argv[1] == "cujit":
        from cujit import cuda, int32
    else:
        import numpy as np
        np.row_stack = np.vstack
        from numba import cuda, int32
    from udf_add import add
    cuda.compile_ptx(add, int32(int32, int32), device=True, cc=(9, 0))
    print((time.perf_counter() - t0) * 1e3)
""")


def run_script(source, *args, cwd=None):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "script.py")
        with open(path, "w") as f:
            f.write(source)
        with open(os.path.join(tmp, "udf_add.py"), "w") as f:
            f.write("def add(x, y):\n    return x + y\n")
        out = subprocess.run([sys.executable, path, *map(str, args)], capture_output=True, text=True, cwd=tmp)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return out.stdout.strip().splitlines()[-1]


def nvcc_reference():
    nvcc = shutil.which("nvcc") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    from cujit import cuda

    major, minor = cuda.get_current_device().compute_capability
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "reference")
        subprocess.run(
            [nvcc, "-O3", f"-arch=sm_{major}{minor}", os.path.join(HERE, "reference.cu"), "-o", exe], check=True
        )
        out = subprocess.run([exe, str(N), str(SIZE), str(RUNS)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def median_of(source, which, repeat):
    return statistics.median(float(run_script(source, which)) for _ in range(repeat))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from cujit import cuda

    device = cuda.get_current_device()
    results = {"device": device.name, "date": time.strftime("%Y-%m-%d"), "n": N, "size": SIZE}
    results["nvcc"] = nvcc_reference()
    for which in ("cujit", "numba"):
        try:
            results[which] = json.loads(run_script(WORKER, which, N, SIZE, RUNS, HERE))
            results[which]["first_call_ms"] = median_of(FIRST_CALL, which, args.repeat)
            results[which]["import_compile_ms"] = median_of(IMPORT_COMPILE, which, args.repeat)
        except Exception as exc:  # report the other side even if one fails
            results[which] = {"error": str(exc)}
    report(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


def report(res):
    gb = 12 * N / 1e9
    flop = 2 * SIZE**3 / 1e12
    print(f"{res['device']}  {res['date']}")
    print(f"{'':28s}{'cujit':>12s}{'numba-cuda':>12s}{'nvcc -O3':>12s}{'cujit/nvcc':>12s}")
    nv = res["nvcc"]
    cu, nb = res.get("cujit", {}), res.get("numba", {})

    def row(label, key, convert, unit):
        values = [convert(d[key]) if key in d else float("nan") for d in (cu, nb, nv)]
        ratio = values[0] / values[2]
        print(f"{label:28s}" + "".join(f"{v:12.3f}" for v in values) + f"{ratio:12.3f}  {unit}")

    row("saxpy 2^26 f32", "saxpy_ms", lambda ms: gb / ms, "TB/s")
    row("grid-stride saxpy, 1056 blk", "grid_stride_ms", lambda ms: gb / ms, "TB/s")
    row("tiled matmul 2048^2 f32", "matmul_ms", lambda ms: flop / (ms / 1e3), "TFLOP/s")
    row("block-tree sum 2^26 f32", "sum_ms", lambda ms: 4 * N / 1e9 / ms, "TB/s")
    row("5-point stencil 2048^2 f64", "stencil_ms", lambda ms: 16 * SIZE**2 / 1e9 / ms, "TB/s (read+write)")
    row("histogram 2^26 bytes", "histogram_ms", lambda ms: N / 1e9 / ms, "TB/s")
    for key, label in (("first_call_ms", "first saxpy call"), ("import_compile_ms", "import + compile_ptx")):
        print(f"{label:28s}{cu.get(key, float('nan')):12.1f}{nb.get(key, float('nan')):12.1f}{'':12s}{'':12s}  ms")
    for side in ("cujit", "numba"):
        if "error" in res.get(side, {}):
            print(f"{side} failed: {res[side]['error'][:500]}")
        else:
            print(
                f"{side}: saxpy correct={res[side]['ok_saxpy']} matmul correct={res[side]['ok_matmul']} "
                f"sum, stencil, histogram correct={res[side].get('ok_more')}"
            )


if __name__ == "__main__":
    main()
