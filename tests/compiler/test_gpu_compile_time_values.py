"""Types and functions as values (issue 42), run on both frontends against NumPy on fresh random data: numba-cuda's
atomic-test pattern (a number type, an atomic function, a device function and a literal size passed to a device
function), dtype-generic code (``a.dtype.type(0)``, a numpy type in a variable), and constant tuples (a shape passed
to a device function, global tuples)."""

import numpy as np
import pytest

import gpu_support
from compile_time_values_src import PROGRAM
from frontends import FRONTENDS, define

pytestmark = [*gpu_support.gpu, pytest.mark.parametrize("frontend", FRONTENDS)]


def test_types_and_functions_passed_to_a_device_function(frontend):
    scope = define(PROGRAM, frontend)
    rng = np.random.default_rng()
    ary = rng.integers(0, 32, size=32).astype(np.uint32)
    gold = np.bincount(ary, minlength=32).astype(np.uint32)
    scope["histogram_add"][1, 32](ary)
    np.testing.assert_array_equal(ary, gold)
    idx = rng.integers(0, 32, size=32).astype(np.int64)
    out = np.zeros(32)
    scope["histogram_sub"][1, 32](out, idx)
    np.testing.assert_array_equal(out, -np.bincount(idx, minlength=32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_dtype_generic_accumulator(frontend, dtype):
    kernel = define(PROGRAM, frontend)["generic_sum"]
    a = (np.random.default_rng().random(17) * 10).astype(dtype)
    out = np.zeros(2)
    kernel[1, 1](a, out)
    np.testing.assert_allclose(out[0], a.sum(dtype=dtype), rtol=1e-6)
    np.testing.assert_allclose(out[1], dtype(1.5) + a[0], rtol=1e-6)


def test_constant_tuples_as_shapes_and_globals(frontend):
    kernel = define(PROGRAM, frontend)["tuple_constants"]
    ary = np.random.default_rng().integers(0, 1000, size=(4, 8)).astype(np.uint32)
    expected = ary + 48
    out = np.zeros(3)
    kernel[1, (4, 8)](ary, out)
    np.testing.assert_array_equal(ary, expected)
    np.testing.assert_array_equal(out, [1.0, 2.5, 5.5])
