"""Functions without source on a GPU: kernels built with exec (a cuDF-style template calling a user's device
function) and a `python -c` program launch and compute what numpy computes, on fresh random data."""

import subprocess
import sys

import numpy as np

import gpu_support

from cujit import cuda

pytestmark = gpu_support.gpu

TEMPLATE = """
def {name}(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {expr}
"""


@cuda.jit(device=True)
def user_udf(x, y):
    return x * x + y if x > y else y - x


def templated(name, expr, **names):
    namespace = dict(names, cuda=cuda)
    exec(TEMPLATE.format(name=name, expr=expr), namespace)
    return cuda.jit(namespace[name])


def test_templated_kernel_calling_a_user_device_function(rng):
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(a)
    kernel = templated("apply_udf", "udf(a[i], b[i])", udf=user_udf)
    kernel[8, 128](out, a, b)
    expected = np.where(a > b, a * a + b, b - a)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_exec_built_kernel_with_loops_and_branches(rng):
    namespace = {"cuda": cuda}
    exec(
        """
def clipped_sums(out, a, n):
    i = cuda.grid(1)
    if i >= out.size:
        return
    s = 0.0
    for k in range(n):
        v = a[(i + k) % a.size]
        if v > 1.0:
            continue
        elif v < -1.0:
            break
        s += v
    out[i] = s
""",
        namespace,
    )
    a = rng.standard_normal(512)
    out = np.zeros(512)
    cuda.jit(namespace["clipped_sums"])[4, 128](out, a, 7)
    expected = np.zeros(512)
    for i in range(512):
        s = 0.0
        for k in range(7):
            v = a[(i + k) % a.size]
            if v > 1.0:
                continue
            elif v < -1.0:
                break
            s += v
        expected[i] = s
    np.testing.assert_allclose(out, expected, rtol=1e-12)


PROGRAM = """
import numpy as np
from cujit import cuda
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
rng = np.random.default_rng({seed})
x, y = rng.standard_normal(300), rng.standard_normal(300)
out = np.zeros(300)
cuda.jit(axpy)[3, 128](out, 2.5, x, y)
assert np.allclose(out, 2.5 * x + y), "wrong result"
print("OK")
"""


def test_python_c_program_launches_a_kernel(rng):
    seed = int(rng.integers(0, 2**31))
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(seed=seed)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "OK" in proc.stdout
