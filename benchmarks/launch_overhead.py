"""Host time per launch of an empty kernel with four device-array arguments (GPU machine), cujit and
numba-cuda in separate processes: `python benchmarks/launch_overhead.py`. The driver's own floor for a
launch is about 4 us; numba-cuda 0.30.4 took 32 us on an H200 host."""

import subprocess
import sys
import textwrap

WORKER = textwrap.dedent('''
    import sys, time
    import numpy as np
    np.row_stack = np.vstack
    if sys.argv[1] == "cujit":
        from cujit import cuda
    else:
        from numba import cuda

    def touch(a, b, c, d):
        i = cuda.grid(1)
        if i < 0:
            a[0] = b[0] + c[0] + d[0]

    kernel = cuda.jit(touch)
    arrays = [cuda.to_device(np.zeros(1024, np.float32)) for _ in range(4)]
    for _ in range(100):
        kernel[1, 32](*arrays)
    cuda.synchronize()
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        kernel[1, 32](*arrays)
    cuda.synchronize()
    print((time.perf_counter() - t) / n * 1e6)
''')


def main():
    for which in ("cujit", "numba"):
        with open(f"/tmp/launch_{which}.py", "w") as f:
            f.write(WORKER)
        out = subprocess.run([sys.executable, f"/tmp/launch_{which}.py", which], capture_output=True, text=True)
        value = out.stdout.strip() or out.stderr.strip()[-300:]
        print(f"{which:6s} {value} us per launch")


if __name__ == "__main__":
    main()
