"""Device arrays captured by a kernel (issue 42), as numba-cuda captures them: a global or closure variable
holding a device array (cujit's, CuPy's: anything with ``__cuda_array_interface__``) is read by reference, its
pointer, shape and strides frozen into the code, so the kernel sees the array's contents at each launch; caching
such a kernel (``cache=True``) is refused with numba-cuda's PicklingError. Global tuples may hold arrays. On both
frontends; run where kernels run."""

import pickle

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
from cujit import cuda

def scaled(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i]
"""


class FakeDeviceArray:
    """What the compiler reads of a device array: its CUDA array interface (no GPU needed to compile)."""

    def __init__(self, pointer, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (pointer, False),
            "strides": strides,
            "version": 3,
        }


def test_the_pointer_is_in_the_code(frontend):
    fn = define(PROGRAM, frontend, {"PRICES": FakeDeviceArray(0x7F0012345600, (5,))})["scaled"]
    ptx, _ = cuda.compile_ptx(fn, "void(float32[::1], float32[::1])", cc=(9, 0))
    assert str(0x7F0012345600) in ptx


def test_caching_such_a_kernel_is_refused(frontend, tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    scope = define(PROGRAM, frontend, {"PRICES": FakeDeviceArray(0x7F0012345600, (5,))})
    kernel = cuda.jit(cache=True, target="cuda")(scope["scaled"])
    with pytest.raises(pickle.PicklingError, match="referencing global device arrays"):
        kernel.compile("void(float32[::1], float32[::1])", cc=(9, 0))
    monkeypatch.setenv("CUJIT_CACHE", "1")  # every kernel cached by the environment: this one is not, quietly
    quiet = cuda.jit(target="cuda")(scope["scaled"])
    quiet.compile("void(float32[::1], float32[::1])", cc=(9, 0))
    assert quiet.stats.cache_misses == {} and quiet.stats.cache_hits == {}


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_the_kernel_sees_the_arrays_current_contents(frontend):
    rng = np.random.default_rng()
    prices = cuda.to_device(rng.random(64, dtype=np.float32))
    kernel = cuda.jit(define(PROGRAM, frontend, {"PRICES": prices})["scaled"])
    quantities = rng.random(64, dtype=np.float32)
    totals = cuda.device_array(64, np.float32)
    kernel[2, 32](quantities, totals)
    np.testing.assert_allclose(totals.copy_to_host(), quantities * prices.copy_to_host(), rtol=1e-6)
    new_prices = rng.random(64, dtype=np.float32)
    prices.copy_to_device(new_prices)  # changed in place: the next launch reads the new values
    kernel[2, 32](quantities, totals)
    np.testing.assert_allclose(totals.copy_to_host(), quantities * new_prices, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_a_closure_array_is_written_through(frontend):
    source = """
    from cujit import cuda

    def make(captured):
        def kernel(out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = captured[i] * 2
                captured[i] = -1.0
        return kernel
    """
    values = np.random.default_rng().random(16)
    captured = cuda.to_device(values)
    kernel = cuda.jit(define(source, frontend)["make"](captured))
    out = cuda.device_array(16)
    kernel[1, 16](out)
    np.testing.assert_allclose(out.copy_to_host(), values * 2)
    np.testing.assert_array_equal(captured.copy_to_host(), -np.ones(16))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_a_global_tuple_of_arrays(frontend):
    source = """
    from cujit import cuda

    def summed(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = PAIR[0][i] + PAIR[1][i]
    """
    rng = np.random.default_rng()
    device, host = rng.random(8), rng.random(8)
    pair = (cuda.to_device(device), host)  # a device array (by reference) and a numpy array (frozen)
    kernel = cuda.jit(define(source, frontend, {"PAIR": pair})["summed"])
    out = cuda.device_array(8)
    kernel[1, 8](out)
    np.testing.assert_allclose(out.copy_to_host(), device + host)
