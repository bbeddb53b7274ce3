"""cujit reuses its TargetMachine and codegen passes across compiles in a thread.
The PTX of a function must not depend on what was compiled before it."""

import re
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import math, sys
    from cujit import cuda, float32, float64, int32, int64, void

    def add(x, y):
        return x + y

    def poly(x):
        return ((1.5 * x + 2.0) * x - 3.0) * x

    def branchy(a, b):
        if a > b:
            r = a - b
        elif a < b:
            r = b * 2
        else:
            r = a // 3
        return r if r % 2 else -r

    def mathy(x, y):
        return math.sqrt(x * y + 1.0) / math.exp(y)

    def loop(n):
        s = 0
        for i in range(n):
            s += i * i
        return s

    def kernel(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = x[i] * 2.0

    def tiled(r, x):
        s = cuda.shared.array((16, 16), float32)
        t = cuda.shared.array(0, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        s[ty, tx] = x[ty * 16 + tx]
        t[tx] = x[tx]
        cuda.syncthreads()
        acc = float32(0)
        for k in range(16):
            acc += s[ty, k] * s[k, tx] + t[k]
        r[ty * 16 + tx] = acc

    CASES = [
        (add, int32(int32, int32), {}),
        (poly, float64(float64), dict(fastmath=True)),
        (branchy, int64(int64, int64), {}),
        (mathy, float32(float32, float32), {}),
        (loop, int64(int32), dict(lineinfo=True)),
        (kernel, void(float32[::1], float32[::1]), dict(device=False, abi="numba")),
        (add, float64(float64, float64), dict(opt=False)),
        (tiled, void(float32[::1], float32[::1]), dict(device=False, abi="numba")),
        (tiled, void(float32[::1], float32[::1]), dict(device=False, abi="numba", lineinfo=True)),
    ]
    order = [int(i) for i in sys.argv[1].split(",")]
    for i in order:
        fn, sig, kw = CASES[i]
        kw = dict(dict(device=True, abi="c"), **kw)
        ptx, _ = cuda.compile_ptx(fn, sig, **kw)
        print(f"@@{i}")
        print(ptx)
""")


def _compile(tmp_path, order):
    script = tmp_path / "reuse_cases.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), ",".join(map(str, order))],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    parts = re.split(r"^@@(\d+)$", out, flags=re.M)[1:]
    return {int(parts[i]): parts[i + 1] for i in range(0, len(parts), 2)}


def _without_uid(ptx):
    """numba's uid tag counts compiles in a process: the one part allowed to differ (with the names of shared
    arrays, derived from the mangled name)."""
    return re.sub(r"_cudapy_smem_[0-9a-f]+_", "_cudapy_smem__", re.sub(r"B\d+v\d+", "B_v_", ptx))


def test_ptx_does_not_depend_on_compile_order(tmp_path, register_ptx):
    n = 9
    together = _compile(tmp_path, list(range(n)) + list(range(n - 1, -1, -1)))
    for i in range(n):
        alone = _compile(tmp_path, [i])[i]
        register_ptx(alone)
        assert _without_uid(together[i]) == _without_uid(alone), f"case {i} differs after other compiles"
