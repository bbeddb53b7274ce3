"""Where the first call of a kernel spends its time (GPU machine): typing and
codegen, nvJitLink, module load, launch. Prints one line per phase in ms."""

import time

import numpy as np

from cujit import _core, cuda
from cujit.cudadrv import launch, linker, modules
from cujit._typeof import typeof


@cuda.jit
def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def main():
    x = cuda.to_device(np.ones(1 << 20, dtype=np.float32))
    y = cuda.to_device(np.ones(1 << 20, dtype=np.float32))
    r = cuda.device_array_like(x)
    cuda.synchronize()
    args = (r, np.float32(2.0), x, y)
    marks = [("start", time.perf_counter())]
    argtypes = tuple(typeof(a) for a in args)
    marks.append(("typeof", time.perf_counter()))
    kernel = saxpy._compile_signature(_core.Signature(None, list(argtypes)))
    marks.append(("type+codegen", time.perf_counter()))
    cc = cuda.get_current_device().compute_capability
    cubin, _ = linker.link([("ptx", kernel.ptx, "<cudapy-ptx>")], cc)
    marks.append(("nvJitLink", time.perf_counter()))
    module = modules.load_module("profile-" + kernel.entry, cubin)
    fn = module.get_function(kernel.entry)
    marks.append(("load", time.perf_counter()))
    launch.launch(fn, kernel.plan, 4096, 256, 0, 0, args)
    cuda.synchronize()
    marks.append(("launch+sync", time.perf_counter()))
    for (_, t0), (name, t1) in zip(marks, marks[1:]):
        print(f"{name:14s} {(t1 - t0) * 1e3:8.2f} ms")
    print(f"{'total':14s} {(marks[-1][1] - marks[0][1]) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
