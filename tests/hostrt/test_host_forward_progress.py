"""A loop that has no effect and never ends (issue 30; seed 133 of the target differential): the GPU's toolchain
assumes every thread makes progress and removes it, so the kernel finishes; the CPU target removes it too (its
functions are `mustprogress`, its math calls known to be pure). And the tests' nudge of the host's math results,
with which the differential tells ill-conditioned programs from wrong ones."""

import math

import numpy as np
import pytest

import gpu_support
from script_runs import run_script

from cujit import cuda

ENDLESS = """
import numpy as np
from cujit import cuda

@cuda.jit(device=True)
def f(a, b):
    w = 0
    while w < 4:           # int(a) is 0 for |a| < 1: w goes 1, 0, 1, 0 ... and nothing reads it
        w += 1
        w *= int(min(a, 5.0)) << 1
        x = math.gamma(w)  # a math call in the loop: pure, so it does not keep the loop
    return b

@cuda.jit(target="{target}")
def kernel(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = f(a[i], b[i])

a = np.random.default_rng().uniform(-0.9, 0.9, 64)
b = np.random.default_rng().standard_normal(64)
out = np.zeros(64)
if "{target}" == "cuda":
    d_out = cuda.to_device(out)
    kernel[2, 32](d_out, cuda.to_device(a), cuda.to_device(b))
    out = d_out.copy_to_host()
else:
    kernel[2, 32](out, a, b)
assert np.array_equal(out, b), (out, b)
print("finished")
""".replace("import numpy as np\nfrom cujit", "import math\nimport numpy as np\nfrom cujit")


def test_an_endless_loop_without_effects_is_removed_as_on_the_gpu():
    proc = run_script(ENDLESS.format(target="cpu"), ".py", timeout=120)
    assert "finished" in proc.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU")
@gpu_support.needs_device("the GPU's own toolchain removing the loop")
def test_gpu_removes_the_endless_loop_without_effects():
    proc = run_script(ENDLESS.format(target="cuda"), ".py", timeout=120)
    assert "finished" in proc.stdout


def _exp_kernel():
    @cuda.jit(target="cpu")
    def kernel(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = math.exp(x[i])
            out[i, 1] = math.sqrt(x[i])  # exact on both targets: never nudged
            out[i, 2] = math.floor(x[i])

    return kernel


def _run(kernel, x, dtype):
    out = np.zeros((x.size, 3), dtype)
    kernel[1, x.size](out, x)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_nudge_moves_transcendental_results_by_ulps(dtype):
    from cujit import _core

    x = np.random.default_rng().uniform(0.5, 20, 32).astype(dtype)
    plain = _run(_exp_kernel(), x, dtype)
    for ulps in (3, -2):
        _core._nudge_host_math(ulps)
        try:
            kernel = _exp_kernel()
            moved = _run(kernel, x, dtype)
        finally:
            _core._nudge_host_math(0)
        expected = plain[:, 0].copy()
        for _ in range(abs(ulps)):
            expected = np.nextafter(expected, dtype(np.inf if ulps > 0 else 0))
        assert np.array_equal(moved[:, 0], expected)
        assert np.array_equal(moved[:, 1:], plain[:, 1:])
    assert np.array_equal(_run(_exp_kernel(), x, dtype), plain)  # 0 stops it
