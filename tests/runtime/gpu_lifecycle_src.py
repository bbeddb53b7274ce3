"""Kernels and linked code for test_gpu_module_lifecycle.py: a CUDA C++ table that a setup callback fills
from the host, read by kernels through a declaration."""

import numpy as np

from cujit import cuda

TABLE_CU = """
__device__ float table[64];
extern "C" __device__ int table_at(float* r, int i) { *r = table[i]; return 0; }
"""


class Counts:
    """What the callbacks saw: setups and teardowns (module handles), in order."""

    def __init__(self):
        self.setups, self.teardowns = [], []


def table_lib(values, counts, tag=""):
    """A CUSource of the table whose setup writes `values` (64 float32) into it."""
    values = np.ascontiguousarray(values, dtype=np.float32)

    def setup(module):
        ptr, size = module.get_global("table")
        assert size == values.nbytes
        cuda.driver.memcpy_htod(ptr, values)
        counts.setups.append(int(module))

    def teardown(module):
        assert module.loaded
        counts.teardowns.append(int(module))

    return cuda.CUSource(TABLE_CU + f"// {tag}\n", name="table.cu", setup_callback=setup, teardown_callback=teardown)


def scale_kernel(table_at, offset=0, link=()):
    """out[i] = x[i] * table[i % 64] + offset, through the declared table_at."""

    def scale(out, x):
        i = cuda.grid(1)
        if i < len(out):
            out[i] = x[i] * table_at(i % 64) + offset

    scale.__name__ = scale.__qualname__ = f"scale_{offset}"
    return cuda.jit(link=list(link))(scale)


def expected(x, values, offset=0):
    return (x * np.resize(np.asarray(values, np.float32), len(x)) + offset).astype(x.dtype)


def launch(kernel, x):
    out = np.zeros_like(x)
    kernel[(len(x) + 127) // 128, 128](out, x)
    return out
