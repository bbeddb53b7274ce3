"""cujit demo: compile a UDF to PTX with both ABIs, show the prototypes, and
(when a GPU is present and kernels can launch) run one."""

import math
import re

from cujit import cuda, float32, float64, int32


def add(x, y):
    return x + y


def hypot_poly(x, y):
    r = math.sqrt(x * x + y * y)
    return 1.0 + r * (0.5 + r * 0.25)


def prototype(ptx):
    """The .func/.entry declaration of a PTX module: kind, return, name, parameter types."""
    m = re.search(r"\.visible\s+\.(func|entry)\s*(\(\.param\s+(\S+)\s+func_retval0\))?\s*(\S+)\(([^)]*)\)", ptx)
    kind, ret, name, params = m.group(1), m.group(3), m.group(4), m.group(5)
    types = re.findall(r"\.param\s+(\.\w+)", params)
    short = name if len(name) < 40 else name[:24] + "..." + name[-12:]
    return f".{kind} ({ret or 'void'}) {short}({', '.join(types)})"


def main():
    cases = [
        ("numba ABI", add, int32(int32, int32), dict(device=True)),
        ("C ABI", add, int32(int32, int32), dict(device=True, abi="c")),
        ("C ABI, abi_name", add, float32(float32, float32), dict(device=True, abi="c",
                                                                abi_info={"abi_name": "add_f32"})),
        ("numba ABI, sm_90", add, "float64(float64, float64)", dict(device=True, cc=(9, 0))),
        ("C ABI, libdevice", hypot_poly, float64(float64, float64), dict(device=True, abi="c")),
    ]
    for label, fn, sig, kwargs in cases:
        ptx, resty = cuda.compile_ptx(fn, sig, **kwargs)
        target = re.search(r"\.target\s+(\S+)", ptx).group(1)
        print(f"{label:18s} -> {resty}  [{target}]\n    {prototype(ptx)}")
    run_kernel()


def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def run_kernel():
    """Launch saxpy when a GPU is present (compiling above needed none)."""
    if not cuda.is_available():
        print("\nno GPU here: skipping the kernel launch (cuda.is_available() is False)")
        return
    import numpy as np
    kernel = cuda.jit(saxpy)
    rng = np.random.default_rng()
    x = cuda.to_device(rng.random(1 << 20, dtype=np.float32))
    y = cuda.to_device(rng.random(1 << 20, dtype=np.float32))
    r = cuda.device_array_like(x)
    kernel[4096, 256](r, np.float32(2.0), x, y)
    ok = np.allclose(r.copy_to_host(), 2 * x.copy_to_host() + y.copy_to_host())
    print(f"\nsaxpy on {cuda.get_current_device().name}: {'matches numpy' if ok else 'WRONG'}")


if __name__ == "__main__":
    main()
