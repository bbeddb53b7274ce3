"""Foreign-endian and object arrays never reach a kernel or the device (test_array_dtypes.py has the typeof side):
a launch, to_device, device_array_like and copies refuse them, on a GPU and on the CPU target."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda
from cujit.errors import NumbaValueError

pytestmark = gpu_support.gpu

FOREIGN = ">" if np.little_endian else "<"


@cuda.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2


@pytest.mark.parametrize("dtype", [FOREIGN + "f8", FOREIGN + "f4"])
def test_a_foreign_endian_array_never_reaches_a_kernel(dtype):
    a = np.arange(4, dtype=dtype)
    with pytest.raises(NumbaValueError, match="Unsupported array dtype"):
        double[1, 4](a)
    np.testing.assert_array_equal(a, [0, 1, 2, 3])  # untouched
    native = a.astype(a.dtype.newbyteorder("="))  # what the message says to do works
    double[1, 4](native)
    np.testing.assert_array_equal(native, [0, 2, 4, 6])


@pytest.mark.parametrize("make", [cuda.to_device, cuda.device_array_like], ids=["to_device", "device_array_like"])
def test_device_arrays_of_foreign_endian_dtypes_are_refused(make):
    with pytest.raises(NumbaValueError, match="Unsupported array dtype"):
        make(np.zeros(3, FOREIGN + "f4"))
    with pytest.raises(NumbaValueError, match="field 'b'"):
        make(np.zeros(3, [("a", "=f4"), ("b", FOREIGN + "f4")]))
    with pytest.raises(NumbaValueError, match="Python objects"):
        cuda.device_array(3, dtype=object)


def test_copy_into_a_device_array_from_a_foreign_endian_host_array_is_refused():
    dev = cuda.to_device(np.zeros(3, "=f4"))
    with pytest.raises(TypeError, match="incompatible dtype"):
        dev.copy_to_device(np.ones(3, FOREIGN + "f4"))
