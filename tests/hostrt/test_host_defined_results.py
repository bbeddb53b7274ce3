"""Results the CPU target gives where LLVM leaves them undefined, as the GPU gives them (issue 30; found by the
target differential, target_differential.py): float-to-integer conversions of NaN and out-of-range values, shifts
by amounts outside [0, width), and variables some path leaves unassigned. The expected conversions are what an
H100 gave for the same kernel (tests/hostrt/test_gpu_target_differential.py compares the targets directly)."""

import numpy as np
import pytest

import gpu_support
from cujit import cuda, float32, int32, int64, uint32, uint64

NAN = float("nan")
X = np.array([NAN, np.inf, -np.inf, 1e30, -1e30, 3.7, -3.7, 3e9, -3e9, 5e18, 1e19, 2e19, -1.0, -0.5])
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
H100 = {
    "i32": [I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 3, -3, I32_MAX, I32_MIN, I32_MAX, I32_MAX, I32_MAX, -1, 0],
    "i64": [
        I64_MIN,
        I64_MAX,
        I64_MIN,
        I64_MAX,
        I64_MIN,
        3,
        -3,
        3000000000,
        -3000000000,
        5 * 10**18,
        I64_MAX,
        I64_MAX,
        -1,
        0,
    ],
    "u32": [2**31, 2**32 - 1, 0, 2**32 - 1, 0, 3, 0, 3000000000, 0, 2**32 - 1, 2**32 - 1, 2**32 - 1, 0, 0],
    "u64": [2**63, 2**64 - 1, 0, 2**64 - 1, 0, 3, 0, 3000000000, 0, 5 * 10**18, 10**19, 2**64 - 1, 0, 0],
    "f32->i32": [0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 3, -3, I32_MAX, I32_MIN, I32_MAX, I32_MAX, I32_MAX, -1, 0],
    "f32->i64": [
        I64_MIN,
        I64_MAX,
        I64_MIN,
        I64_MAX,
        I64_MIN,
        3,
        -3,
        3000000000,
        -3000000000,
        4999999990253223936,
        I64_MAX,
        I64_MAX,
        -1,
        0,
    ],
}


@cuda.jit(target="cpu")
def conversions(x, o32, o64, u32, u64, f32s, f64s):
    i = cuda.grid(1)
    if i < x.size:
        o32[i] = int32(x[i])
        o64[i] = int64(x[i])
        u32[i] = uint32(x[i])
        u64[i] = uint64(x[i])
        y = float32(x[i])
        f32s[i] = int32(y)
        f64s[i] = int64(y)


def test_float_to_int_conversions_are_the_gpus():
    outs = [np.zeros(X.size, t) for t in (np.int32, np.int64, np.uint32, np.uint64, np.int32, np.int64)]
    conversions[1, 32](X, *outs)
    for name, out in zip(H100, outs):
        assert [int(v) for v in out] == H100[name], name


@cuda.jit(target="cpu")
def shifts(a, k, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] << k[i]
        out[i, 1] = a[i] >> k[i]


SHIFTED = np.array([5, -5, 5, -5, 1, -1, 5, -5, 5, 7], np.int64)
# Amounts whose low 32 bits alone are in range (2^32, 2^32 + 1, I64_MIN, -2^32 + 3) are out of range all the same.
AMOUNTS = np.array([70, 70, -1, -1, 63, 64, 2**32, I64_MIN, 2**32 + 1, -(2**32) + 3], np.int64)
LEFT = [0, 0, 0, 0, I64_MIN, 0, 0, 0, 0, 0]
RIGHT = [0, -1, 0, -1, 0, -1, 0, -1, 0, 0]


def test_shifts_outside_the_width_give_zero_or_the_sign():
    out = np.zeros((SHIFTED.size, 2), np.int64)
    shifts[1, 16](SHIFTED, AMOUNTS, out)
    assert out[:, 0].tolist() == LEFT
    assert out[:, 1].tolist() == RIGHT


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU")
@gpu_support.needs_device("the GPU's shift instructions")
def test_the_gpu_gives_the_same_shifts():
    gpu_shifts = cuda.jit(shifts.py_func)
    out = cuda.to_device(np.zeros((SHIFTED.size, 2), np.int64))
    gpu_shifts[1, 16](cuda.to_device(SHIFTED), cuda.to_device(AMOUNTS), out)
    assert out.copy_to_host()[:, 0].tolist() == LEFT
    assert out.copy_to_host()[:, 1].tolist() == RIGHT


@cuda.jit(target="cpu")
def maybe_unassigned(a, out):
    i = cuda.grid(1)
    if i < a.size:
        if a[i] > 0:
            v = a[i] * 2
        out[i] = v


def test_a_variable_no_path_assigned_reads_zero():
    a = np.array([3, -1, 4, 0], np.int64)
    out = np.full(4, 99, np.int64)
    maybe_unassigned[1, 4](a, out)
    assert out.tolist() == [6, 0, 8, 0]
