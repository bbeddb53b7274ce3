"""Loops with else, enumerate/zip, membership, the operator module, keyword arguments, print, cuda.fp16,
cuda.libdevice and grid sync on a GPU (kernels in language_src.py): single-threaded kernels against the
same Python function run on the host with numpy arrays; print's output captured from a child process; fp16 and
libdevice functions against numpy on fresh random data; grid sync with a two-phase kernel over every block a
cooperative launch can hold, and the error for one block more."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import gpu_support

import language_src as L
from cujit import cuda
from cujit.cudadrv import devices

pytestmark = gpu_support.gpu + [
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]


def run_single(fn, *arrays):
    """Runs `fn` as a one-thread kernel on copies of `arrays` and returns the device results."""
    device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in arrays]
    cuda.jit(fn)[1, 1](*device)
    return [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in device]


def host(fn, *arrays):
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    fn(*copies)
    return copies


@pytest.mark.parametrize("negative_at", [None, 0, 5])
def test_loops_with_else(rng, negative_at):
    a = rng.uniform(0, 50, 8)
    if negative_at is not None:
        a[negative_at] = -1.0
    a[3] = 150.0 if negative_at == 5 else a[3]
    out = np.zeros(4)
    got = run_single(L.loop_else, a, out)[1]
    np.testing.assert_allclose(got, host(L.loop_else, a, out)[1])


def test_enumerate_zip_and_rows(rng):
    a, b = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 5)
    m = rng.uniform(-1, 1, (3, 4))
    out = np.zeros(1 + 3 + 4)
    np.testing.assert_allclose(run_single(L.enumerate_zip, a, b, m, out)[3], host(L.enumerate_zip, a, b, m, out)[3])


@pytest.mark.parametrize("n", [6, 9, 14, 20, 31])  # r[1] needs two items in range(2, n, 3)
def test_range_values(n):
    out = np.zeros(9, dtype=np.int64)
    np.testing.assert_array_equal(run_single(L.ranges, n, out)[1], host(L.ranges, n, out)[1])


def test_membership_and_tuple_comparisons(rng):
    for a in (np.array([2.5, 3.0, 4.0]), np.array([7.0, 1.0, 3.0]), rng.integers(0, 4, 3).astype(np.float64)):
        out = np.zeros(3, dtype=np.int64)
        np.testing.assert_array_equal(run_single(L.membership, a, out)[1], host(L.membership, a, out)[1])
    for a in (rng.integers(0, 3, 4).astype(np.float64) for _ in range(8)):
        out = np.zeros(11)
        np.testing.assert_array_equal(run_single(L.tuple_compare, a, out)[1], host(L.tuple_compare, a, out)[1])


def test_operator_module(rng):
    a = rng.uniform(-3, 3, 5)
    a[3] = 2.0
    out = np.zeros(10)
    np.testing.assert_allclose(run_single(L.operator_calls, a, out)[1], host(L.operator_calls, a, out)[1])


def test_keyword_and_default_arguments(rng):
    a = rng.uniform(-3, 3, 3)
    out = np.zeros(5)
    w = L.weighted.py_func
    expected = [w(a[0]), w(a[0], z=a[1]), w(y=a[1], x=a[0]), w(a[0], a[1], a[2]), w(1, z=4)]
    np.testing.assert_allclose(run_single(L.keyword_arguments, a, out)[1], expected)


def test_math_constants():
    out = np.zeros(5)
    np.testing.assert_array_equal(run_single(L.math_constants, out)[0], host(L.math_constants, out)[0])


def test_print_output_appears_after_synchronize(rng):
    x, y = (float(np.float32(v)) for v in rng.uniform(-200, 200, 2))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.run(
        [sys.executable, L.__file__, repr(x), repr(y)], capture_output=True, text=True, env=env, timeout=120
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == [f"values: 7 {x:f} True {x > 100} -3", f"{y:f}", ""], child.stdout


def test_fp16_functions(rng):
    n = 1000
    a = rng.uniform(-4, 4, n).astype(np.float16)
    b = rng.uniform(0.25, 4, n).astype(np.float16) * rng.choice([-1, 1], n).astype(np.float16)
    out = cuda.device_array((n, 17), dtype=np.float16)
    cuda.jit(L.half_precision)[(n + 127) // 128, 128](cuda.to_device(a), cuda.to_device(b), out)
    got = out.copy_to_host().astype(np.float64)
    x, y = a.astype(np.float64), b.astype(np.float64)
    expected = [
        x + y,
        x - y,
        x * y,
        x / y,
        x * y + x,
        -x,
        abs(y),
        np.sqrt(abs(x)),
        np.exp(x),
        np.log(abs(y)),
        np.sin(x),
        np.cos(x),
        np.maximum(x, y),
        np.minimum(x, y),
        x < y,
        x >= y,
        1 / np.sqrt(abs(x)),
    ]
    for column, want in enumerate(expected):
        want = np.asarray(want, dtype=np.float64)
        finite = np.isfinite(want)
        np.testing.assert_allclose(
            got[finite, column],
            want[finite].astype(np.float16).astype(np.float64),
            rtol=2e-3,
            atol=2e-3,
            err_msg=f"column {column}",
        )


def test_libdevice_functions(rng):
    n = 512
    a = rng.uniform(-10, 10, n)
    out = cuda.device_array((n, 8))
    cuda.jit(L.libdevice_calls)[(n + 127) // 128, 128](cuda.to_device(a), out)
    got = out.copy_to_host()
    m, e = np.frexp(a)
    expected = [
        np.sin(a),
        np.sin(a),
        np.cos(a),
        m,
        e,
        (a.astype(np.float32) * 2 + 1).astype(np.float32),
        np.hypot(a, 3.0),
        np.maximum((a * 10).astype(np.int64), 3),
    ]
    for column, want in enumerate(expected):
        np.testing.assert_allclose(
            got[:, column], want, rtol=1e-6 if column != 5 else 1e-6, atol=1e-12, err_msg=f"column {column}"
        )


@pytest.mark.parametrize("dtype, rtol", [(np.complex128, 1e-11), (np.complex64, 2e-5)])
def test_cmath_functions(rng, dtype, rtol):
    n = 600
    z = (rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dtype)
    z[:4] = [0.5, -0.5, 2j, -1.5 - 0j]  # on the axes too
    out = cuda.device_array((len(L.COMPLEX_FUNCTIONS), n), dtype=dtype)
    cuda.jit(L.complex_functions)[(n + 127) // 128, 128](cuda.to_device(z), out)
    got = out.copy_to_host()
    for k, fn in enumerate(L.COMPLEX_FUNCTIONS):
        want = np.array([fn(complex(w)) for w in z])
        np.testing.assert_allclose(got[k], want, rtol=rtol, atol=rtol, err_msg=f"function {k}")


def test_cmath_parts(rng):
    n = 200
    z = rng.uniform(-5, 5, n) + 1j * rng.uniform(-5, 5, n)
    z[0] = complex(np.nan, 1)
    z[1] = complex(1, np.inf)
    got = run_single(L.complex_parts, z, np.zeros((n, 3)), np.zeros((n, 3), np.bool_), np.zeros(n, np.complex128))
    want = host(L.complex_parts, z, np.zeros((n, 3)), np.zeros((n, 3), np.bool_), np.zeros(n, np.complex128))
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_allclose(got[1][2:], want[1][2:], rtol=1e-12)
    np.testing.assert_allclose(got[3][2:], want[3][2:], rtol=1e-12, atol=1e-12)


def test_optional_results(rng):
    a = rng.permutation(50).astype(np.float64) - 10
    targets = np.concatenate([rng.choice(a, 20), rng.uniform(100, 200, 10), [0.0, -3.0]])
    rng.shuffle(targets)
    out = np.zeros(len(targets), np.int64)
    halves = np.zeros(len(targets))
    cuda.jit(L.optional_results)[1, 64](a, targets, out, halves)
    where = {v: i for i, v in enumerate(a)}
    np.testing.assert_array_equal(out, [where.get(t, -1) for t in targets])
    np.testing.assert_array_equal(halves, np.where(targets > 0, targets / 2, -99.0))


def bf16(x, mode="rn"):
    """float32 values rounded to bfloat16 (as float32) in `mode`, from their bits (finite inputs)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    upper, inexact, negative = bits >> 16, (bits & 0xFFFF) != 0, (bits >> 31) == 1
    if mode == "rn":
        upper = (bits + 0x7FFF + (upper & 1)) >> 16
    elif mode == "ru":
        upper = upper + (inexact & ~negative)
    elif mode == "rd":
        upper = upper + (inexact & negative)
    return ((upper & 0xFFFF) << 16).astype(np.uint32).view(np.float32)


def bf16_of_double(d):
    """float64 values rounded to nearest bfloat16 (8 significant bits), exactly."""
    out = []
    for v in d:
        m, e = math.frexp(v)
        out.append(round(v * 2.0 ** (8 - e)) * 2.0 ** (e - 8) if v else 0.0)
    return np.array(out)


def test_bfloat16(rng):
    if not cuda.is_bfloat16_supported():
        pytest.skip("bfloat16 needs compute capability 8.0")
    n = 700
    a = rng.uniform(-4, 4, n).astype(np.float32)
    b = (rng.uniform(0.1, 4, n) * rng.choice([-1, 1], n)).astype(np.float32)
    a[:3] = [1.0, -2.5, 3.0]
    b[:3] = [1.0, 0.5, 3.0]  # equal pairs, ties
    out = np.zeros((16, n), np.float32)
    flags = np.zeros((3, n), np.bool_)
    ints = np.zeros((3, n), np.int64)
    cuda.jit(L.bfloat16_ops)[(n + 127) // 128, 128](a, b, out, flags, ints)
    x, y = bf16(a), bf16(b)
    exact = {
        0: x,
        1: bf16(x + y),
        2: bf16(x - y),
        3: bf16(x * y),
        4: bf16(x / y),
        5: -x,
        7: abs(x),
        8: np.maximum(x, y),
        11: bf16(np.clip(x + y, 0, 1)),
        12: bf16(a, "rz"),
        13: bf16(a, "ru"),
        14: bf16(a, "rd"),
        15: bf16_of_double(a.astype(np.float64) + b.astype(np.float64) * 1e-5),
    }
    for k, want in exact.items():
        np.testing.assert_array_equal(out[k], want, err_msg=f"row {k}")
    close = {6: x.astype(np.float64) * y + x, 9: np.sqrt(abs(x)), 10: np.exp(x)}
    for k, want in close.items():
        np.testing.assert_allclose(out[k], want, rtol=2**-7, err_msg=f"row {k}")
    np.testing.assert_array_equal(flags[0], x < y)
    np.testing.assert_array_equal(flags[1], x == y)
    assert not flags[2].any()
    p = bf16(x * y)
    np.testing.assert_array_equal(ints[0], np.rint(p))
    np.testing.assert_array_equal(ints[1], np.trunc(p))
    np.testing.assert_array_equal(ints[2], (x.view(np.uint32) >> 16).astype(np.uint16).view(np.int16))


def test_grid_sync_over_every_resident_block():
    kernel = cuda.jit("void(int32[:], int32[:])")(L.grid_sync)
    overload = kernel.overloads[(cuda.int32[:], cuda.int32[:])]
    threads = 256
    blocks = overload.max_cooperative_grid_blocks(threads)
    sms = devices.get_current_device().MULTIPROCESSOR_COUNT
    assert blocks >= sms  # at least one block per multiprocessor: more blocks than one wave of one per SM
    n = blocks * threads
    a = cuda.to_device(np.zeros(n, dtype=np.int32))
    out = cuda.to_device(np.full(n, -1, dtype=np.int32))
    kernel[blocks, threads](a, out)
    i = np.arange(n)
    np.testing.assert_array_equal(out.copy_to_host(), ((i + threads) % n) * 2 + 1)
    with pytest.raises(Exception, match="max_cooperative_grid_blocks"):
        kernel[blocks + 1, threads](a, out)
        cuda.synchronize()


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8])
def test_elif_chain_over_an_integer(rng, dtype):
    values = np.array([0, -3, 2, 7, 9, 1, 5, 200, 253], dtype=np.int64)
    values = values[(values >= np.iinfo(dtype).min) & (values <= np.iinfo(dtype).max)]
    codes = rng.choice(values, 64).astype(dtype)
    out = np.zeros(64, dtype=np.int64)
    np.testing.assert_array_equal(run_single(L.elif_dispatch, codes, out)[1], host(L.elif_dispatch, codes, out)[1])
