"""Issue 42's SSA versions and pruned branches, run (on a GPU, or on the CPU target) on both frontends against
NumPy on fresh random data: the strided sum whose loop index is re-bound to a float32 after the loop, and a
dimension-generic device function with an optional argument, called with it and without."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define


pytestmark = [*gpu_support.gpu, pytest.mark.parametrize("frontend", FRONTENDS)]

PROGRAM = """
import numpy as np
from cujit import cuda

@cuda.jit
def strided_sum(x, out):
    tid = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    for s in range(tid, x.size, stride):
        acc += x[s]
    s = np.float32(0.0)
    s += acc
    if tid < out.size:
        out[tid] = s

@cuda.jit(device=True)
def first(a, scale=None):
    if a.ndim == 2:
        v = a[0, 0]
    else:
        v = a[0]
    if scale is None:
        return v
    return v * scale[0]

@cuda.jit(device=True)
def find(x, v):
    for i in range(x.size):
        if x[i] == v:
            return i
    return None

@cuda.jit
def narrowed(x, out):
    i = find(x, x[3])
    if i is not None:
        out[i] = 1.0
    j = find(x, -1.0)
    if j is None:
        out[0] = -1.0
    else:
        out[j] = 2.0

@cuda.jit
def firsts(a1, a2, scale, out):
    out[0] = first(a1)
    out[1] = first(a2)
    out[2] = first(a1, scale)
    out[3] = first(a2, scale)
"""


def test_loop_index_rebound_after_the_loop(frontend):
    kernel = define(PROGRAM, frontend)["strided_sum"]
    x = np.random.default_rng().random(1000, dtype=np.float32)
    out = np.zeros(64, np.float32)
    kernel[2, 32](x, out)
    expected = np.array([x[t::64].astype(np.float64).sum() for t in range(64)], np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_dimension_and_none_branches_pruned(frontend):
    kernel = define(PROGRAM, frontend)["firsts"]
    rng = np.random.default_rng()
    a1, a2, scale = rng.random(5), rng.random((3, 4)), rng.random(1)
    out = np.zeros(4)
    kernel[1, 1](a1, a2, scale, out)
    np.testing.assert_allclose(out, [a1[0], a2[0, 0], a1[0] * scale[0], a2[0, 0] * scale[0]])


def test_an_optional_index_tested_not_none(frontend):
    kernel = define(PROGRAM, frontend)["narrowed"]
    x = np.random.default_rng().permutation(8).astype(np.float64)
    out = np.zeros(8)
    kernel[1, 1](x, out)
    expected = np.zeros(8)
    expected[int(np.flatnonzero(x == x[3])[0])] = 1.0
    expected[0] = -1.0
    np.testing.assert_array_equal(out, expected)
