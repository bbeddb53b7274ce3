"""cujit demo: compile a UDF to PTX with both ABIs, show the prototypes, then run a kernel: on the GPU when one
is usable, else on the CPU target (the kernel compiled for this machine's CPU, docs/cpu_target.md)."""

import math
import re
import sys

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
        (
            "C ABI, abi_name",
            add,
            float32(float32, float32),
            dict(device=True, abi="c", abi_info={"abi_name": "add_f32"}),
        ),
        ("numba ABI, sm_90", add, "float64(float64, float64)", dict(device=True, cc=(9, 0))),
        ("C ABI, libdevice", hypot_poly, float64(float64, float64), dict(device=True, abi="c")),
    ]
    for label, fn, sig, kwargs in cases:
        ptx, resty = cuda.compile_ptx(fn, sig, **kwargs)
        target = re.search(r"\.target\s+(\S+)", ptx).group(1)
        print(f"{label:18s} -> {resty}  [{target}]\n    {prototype(ptx)}")
    return 0 if run_kernel() else 1


def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def run_kernel():
    """Launch saxpy on the GPU when one is usable (compiling above needed none), else on the CPU target."""
    import numpy as np

    rng = np.random.default_rng()
    x = rng.random(1 << 20, dtype=np.float32)
    y = rng.random(1 << 20, dtype=np.float32)
    if cuda.is_available():
        kernel = cuda.jit(saxpy)
        d_x, d_y = cuda.to_device(x), cuda.to_device(y)
        d_r = cuda.device_array_like(d_x)
        kernel[4096, 256](d_r, np.float32(2.0), d_x, d_y)
        r, where = d_r.copy_to_host(), cuda.get_current_device().name
    else:
        print("\nno GPU here (cuda.is_available() is False): running the kernel on the CPU target instead")
        print('    (cuda.jit(target="cpu"); CUJIT_TARGET=cpu does this for every kernel, docs/cpu_target.md)')
        kernel = cuda.jit(saxpy, target="cpu")
        r = np.empty_like(x)
        kernel[4096, 256](r, np.float32(2.0), x, y)  # numpy arrays in place: host memory is device memory here
        where = "the CPU target"
    ok = np.allclose(r, 2 * x + y)
    print(f"\nsaxpy on {where}: {'matches numpy' if ok else 'WRONG'}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
