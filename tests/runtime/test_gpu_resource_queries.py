"""numba-cuda's resource queries and SASS on a GPU (issue 41): a dispatcher's get_regs_per_thread,
get_shared_mem_per_block, get_max_threads_per_block, get_local_mem_per_thread, get_const_mem_size, inspect_sass,
inspect_sass_cfg, read from the loaded kernel, beside a launch compared with numpy."""

import numpy as np

import gpu_support

from cujit import cuda

pytestmark = [*gpu_support.gpu, gpu_support.needs_device("a loaded GPU kernel's attributes and SASS")]

SIG = "void(float32[::1])"


@cuda.jit(SIG)
def reverse(x):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    cuda.syncthreads()
    x[i] = s[63 - i]


def test_resource_queries_and_sass():
    data = np.random.default_rng().random(64, dtype=np.float32)
    d = cuda.to_device(data)
    reverse[1, 64](d)
    np.testing.assert_array_equal(d.copy_to_host(), data[::-1])
    assert reverse.get_shared_mem_per_block(SIG) == 256
    regs = reverse.get_regs_per_thread()
    assert list(regs) == [(cuda.float32[::1],)] and 0 < regs[(cuda.float32[::1],)] <= 255
    assert reverse.get_max_threads_per_block(SIG) >= 64
    assert reverse.get_local_mem_per_thread(SIG) >= 0 and reverse.get_const_mem_size(SIG) >= 0
    sass = reverse.inspect_sass(SIG)
    assert "BAR" in sass and "EXIT" in sass
    assert reverse.inspect_sass_cfg(SIG).lstrip().startswith("digraph")


def test_inspect_lto_ptx():
    @cuda.jit(SIG, lto=True)
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    data = np.random.default_rng().random(32, dtype=np.float32)
    d = cuda.to_device(data)
    double[1, 32](d)
    np.testing.assert_array_equal(d.copy_to_host(), data * 2)
    ptx = double.inspect_lto_ptx(SIG)
    assert ".entry" in ptx and ".target sm_" in ptx
    assert list(double.inspect_lto_ptx()) == [(cuda.float32[::1],)]
