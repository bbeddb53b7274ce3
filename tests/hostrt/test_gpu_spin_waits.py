"""The CPU target's spin-wait kernels on the GPU (issue 30): the kernels of spin_kernels.py, whose threads spin on
atomics, fences and nanosleep until another thread or block writes what they wait for, give on the GPU the results
test_host_spin_waits.py expects of the CPU target (fresh random inputs). Needs a GPU (Volta or later: independent
thread scheduling)."""

import numpy as np
import pytest

import gpu_support
import spin_kernels
from cujit import cuda

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU"),
    gpu_support.needs_device("the same kernels on the GPU (test_host_spin_waits.py runs them on the CPU)"),
]


@pytest.mark.parametrize("case", spin_kernels.CASES, ids=lambda c: c.name)
def test_spin_waits_on_the_gpu(case):
    before = case.make(np.random.default_rng())
    kernel = cuda.jit(target="cuda")(case.kernel)
    device = [cuda.to_device(a) for a in before]
    kernel[case.grid, case.block](*device)
    cuda.synchronize()
    spin_kernels.check(case, before, [d.copy_to_host() for d in device])
