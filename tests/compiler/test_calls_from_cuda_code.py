"""Functions from elsewhere called from CUDA code (issue 42), on both frontends: numba's own jit/njit functions
(compiled as device functions, as numba-cuda's documented CPU/GPU-compatible functions are), ``cuda.jit(sig,
device=True)`` of such a function, and a ``@cuda.jit`` function without ``device=True`` called from a kernel
(compiled as a device function for the call, as numba-cuda's dispatchers do). Compiled everywhere; run against
Python where kernels run."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, types

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
import numba
from cujit import cuda

@numba.njit
def add(a, b):
    return a + b

@numba.jit(nopython=True)
def scale(a, b):
    return a * b

typed_add = cuda.jit("float64(float64, float64)", device=True)(add)

@cuda.jit
def twice(x):  # a kernel's decorator, called from CUDA code
    return x * 2 + 1

@cuda.jit
def calls(out, x):
    out[0] = add(x, 1.5)
    out[1] = scale(x, 3.0)
    out[2] = typed_add(x, 2.0)
    out[3] = twice(x)
"""


@pytest.fixture
def scope(frontend):
    pytest.importorskip("numba")
    return define(PROGRAM, frontend)


def test_compiles_as_device_functions(scope):
    ptx, _ = cuda.compile_ptx(scope["calls"].py_func, "void(float64[::1], float64)", cc=(9, 0))
    assert ".entry" in ptx
    assert scope["typed_add"].py_func is scope["add"].py_func
    assert list(scope["typed_add"].overloads) == [(types.float64, types.float64)]
    assert scope["add"](1, 2) == 3  # numba's function itself is left as it was


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_runs(scope):
    x = float(np.random.default_rng().standard_normal())
    out = np.zeros(4)
    scope["calls"][1, 1](out, x)
    np.testing.assert_allclose(out, [x + 1.5, x * 3.0, x + 2.0, x * 2 + 1])
