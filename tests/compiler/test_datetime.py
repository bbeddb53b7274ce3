"""numpy's datetime64 and timedelta64 in kernels (issue 43), as numba-cuda has them, on both frontends: arrays and
scalars as kernel arguments; datetime - datetime, datetime +- timedelta, timedeltas added, scaled by integers and
floats, divided (``/`` and ``//`` by numbers, ``/`` by a timedelta), compared; units converted to the finer one;
NaT kept NaT and unequal to everything, as numpy does; ``cuda.vectorize`` over them. Compiled everywhere (PTX
assembled by the suite's ptxas check), run against NumPy on fresh random data where kernels run."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, from_dtype, types
from cujit.errors import TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
import numpy as np
from cujit import cuda

def differences(start, end, delta):
    for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
        delta[i] = end[i] - start[i]

def against_scalars(dates, target, delta, matches, shifted):
    for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
        matches[i] = dates[i] == target
        shifted[i] = dates[i] - delta

def arithmetic(a, b, td, ratio, before):  # hours and days: converted to hours
    i = cuda.grid(1)
    if i < a.size:
        d = b[i] - a[i]
        td[i] = d * 2 + d // 3 - d * 0.5 + (-d)
        ratio[i] = d / (d + d)
        before[i] = a[i] < b[i]
"""


def dates(rng, n, unit="D"):
    base = np.datetime64("2000-01-01", unit)
    return base + rng.integers(0, 10000, n).astype(f"timedelta64[{unit}]")


def with_nat(rng, values):
    values = values.copy()
    values[rng.integers(0, values.size, 2)] = np.datetime64("NaT")
    return values


@pytest.fixture
def scope(frontend):
    return define(PROGRAM, frontend)


def test_types(scope):
    dt, td = from_dtype(np.dtype("datetime64[D]")), from_dtype(np.dtype("timedelta64[h]"))
    assert str(dt) == "datetime64[D]" and isinstance(dt, types.NPDatetime) and isinstance(td, types.NPTimedelta)
    assert types.NPDatetime("D") == dt
    ptx, _ = cuda.compile_ptx(scope["differences"], (dt[::1], dt[::1], types.NPTimedelta("D")[::1]), cc=(9, 0))
    assert ".entry" in ptx


def test_units_that_do_not_convert_are_a_typing_error(frontend):
    fn = define("def f(a, b, out):\n    out[0] = a[0] - b[0]\n", frontend)["f"]
    months, days = types.NPDatetime("M"), types.NPDatetime("D")
    with pytest.raises(TypingError, match="No implementation") as info:
        cuda.compile_ptx(fn, (months[::1], days[::1], types.NPTimedelta("D")[::1]), cc=(9, 0))
    assert "^" in str(info.value)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_differences_run(scope):
    rng = np.random.default_rng()
    start = dates(rng, 300)
    end = start + rng.integers(-500, 500, start.size).astype("timedelta64[D]")
    delta = np.zeros(start.size, "timedelta64[D]")
    cuda.jit(scope["differences"])[2, 32](start, end, delta)
    np.testing.assert_array_equal(delta, end - start)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_scalar_arguments_run(scope):
    rng = np.random.default_rng()
    values = dates(rng, 64)
    k = int(rng.integers(0, 64))
    target, delta = values[k], values[(k + 1) % 64] - values[k]
    matches, shifted = np.zeros(64, np.bool_), np.zeros(64, "datetime64[D]")
    cuda.jit(scope["against_scalars"])[1, 32](values, target, delta, matches, shifted)
    np.testing.assert_array_equal(matches, values == target)
    np.testing.assert_array_equal(shifted, values - delta)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_arithmetic_with_nat_runs(scope):
    rng = np.random.default_rng()
    a = with_nat(rng, dates(rng, 50, "h"))
    b = with_nat(rng, dates(rng, 50, "D"))
    td, ratio, before = np.zeros(50, "timedelta64[h]"), np.zeros(50), np.zeros(50, np.bool_)
    cuda.jit(scope["arithmetic"])[1, 64](a, b, td, ratio, before)
    d = b - a
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(td, d * 2 + d // 3 - d * 0.5 + (-d))
        np.testing.assert_array_equal(ratio, d / (d + d))
    np.testing.assert_array_equal(before, a < b)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_vectorize_runs(frontend):
    dt, td = from_dtype(np.dtype("datetime64[D]")), from_dtype(np.dtype("timedelta64[D]"))
    scope = define("def timediff(start, end):\n    return end - start\n", frontend)
    ufunc = cuda.vectorize([td(dt, dt)])(scope["timediff"])
    rng = np.random.default_rng()
    start = dates(rng, 100)
    end = start + rng.integers(0, 1000, 100).astype("timedelta64[D]")
    got = ufunc(start, end)
    assert got.dtype == np.dtype("timedelta64[D]")
    np.testing.assert_array_equal(got, end - start)


class _DatetimeView:
    """A __cuda_array_interface__ producer of datetime64 data (as CuPy exposes it): typestr '<M8[D]'."""

    def __init__(self, device_array):
        cai = dict(device_array.__cuda_array_interface__)
        cai["typestr"] = "<M8[D]"
        self.__cuda_array_interface__ = cai


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_datetime_arrays_through_the_cuda_array_interface_run(frontend):
    scope = define("def assign(out, arr):\n    for i in range(arr.shape[0]):\n        out[i] = arr[i]\n", frontend)
    values = dates(np.random.default_rng(), 40)
    src, dst = cuda.to_device(values.view(np.int64)), cuda.device_array(40, np.int64)
    cuda.jit(scope["assign"])[1, 1](_DatetimeView(dst), _DatetimeView(src))
    np.testing.assert_array_equal(dst.copy_to_host().view("datetime64[D]"), values)
