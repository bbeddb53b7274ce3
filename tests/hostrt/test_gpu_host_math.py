"""The CPU target's libdevice, atomics and cuda.random against the GPU's, in one process on the same inputs: the
math functions within the sum of the two sides' bounds (the GPU tests' bound plus the host's measured ulp,
docs/cpu_target.md), integer intrinsics, rounding-mode arithmetic and conversions, bit casts, the raw and uniform
random streams and the atomics' NaN and wrap-around rules exactly. Needs a GPU (run on the GPU machine)."""

import math

import numpy as np
import pytest

import test_host_math as H
from cujit import cuda
from cujit.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

import gpu_support

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not cuda.is_available() or gpu_support.ON_CPU_TARGET, reason="needs a GPU (compares it with the CPU target)"
    ),
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]

N = 2000


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def both(fn, out_dtype, *args):
    """fn mapped over args on the GPU and on the CPU target: (gpu, cpu)."""
    results = []
    for target in ("cuda", "cpu"):
        kernel = H.map_kernel(fn, len(args), target=target)
        out = np.zeros(len(args[0]), out_dtype)
        if target == "cuda":
            d_out = cuda.to_device(out)
            kernel[(len(out) + 127) // 128, 128](d_out, *(cuda.to_device(a) for a in args))
            out = d_out.copy_to_host()
        else:
            kernel[(len(out) + 127) // 128, 128](out, *args)
        results.append(out)
    return results


# CUDA's documented bound (the GPU tests' MAXULP tables and docs/cpu_target.md) plus the host's (1).
GPU_ULP64 = {
    "erfc": 5,
    "tgamma": 10,
    "lgamma": 4,
    "cbrt": 1,
    "exp": 1,
    "exp2": 1,
    "log": 1,
    "log2": 1,
    "log10": 1,
    "log1p": 1,
    "expm1": 1,
    "cosh": 1,
    "tanh": 1,
    "asinh": 3,
    "acosh": 3,
    "erfcx": 4,
    "normcdf": 5,
}
GPU_ULP32 = {
    "tan": 4,
    "erfc": 4,
    "tgamma": 5,
    "lgamma": 6,
    "sinh": 3,
    "asinh": 3,
    "acosh": 4,
    "atanh": 3,
    "erfcx": 4,
    "normcdf": 5,
    "pow": 4,
    "hypot": 3,
    "atan2": 3,
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(H.UNARY))
def test_unary_functions_agree(rng, name, dtype):
    _, (lo, hi), ulp8, ulp4 = H.UNARY[name]
    fn = getattr(cuda.libdevice, name if dtype is np.float64 else name + "f")
    x = H.floats(rng, dtype, lo, hi, N)
    gpu, cpu = both(fn, dtype, x)
    exact = ulp8 == 0 if dtype is np.float64 else ulp4 == 0
    bound = 0 if exact else (GPU_ULP64.get(name, 2) if dtype is np.float64 else GPU_ULP32.get(name, 2)) + 1
    if name == "sqrt" and dtype is np.float32:
        bound = 1  # libdevice's sqrtf may be the approximate one (no prec-sqrt)
    H.assert_ulp(cpu, gpu, bound, f"{name} ({np.dtype(dtype).name}): CPU target against GPU")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(H.BINARY))
def test_binary_functions_agree(rng, name, dtype):
    _, da, db, ulp = H.BINARY[name]
    fn = getattr(cuda.libdevice, name if dtype is np.float64 else name + "f")
    a, b = H.floats(rng, dtype, *da, N), H.floats(rng, dtype, *db, N)
    gpu, cpu = both(fn, dtype, a, b)
    bound = 0 if ulp == 0 else (GPU_ULP64.get(name, 2) if dtype is np.float64 else GPU_ULP32.get(name, 2)) + 1
    H.assert_ulp(cpu, gpu, bound, f"{name}: CPU target against GPU")


@pytest.mark.parametrize("name", list(H.INTEGER))
def test_integer_intrinsics_are_equal(rng, name):
    argtypes, result, _ = H.INTEGER[name]
    args = [rng.integers(np.iinfo(t).min, np.iinfo(t).max, N, dtype=t, endpoint=True) for t in argtypes]
    gpu, cpu = both(getattr(cuda.libdevice, name), result, *args)
    np.testing.assert_array_equal(cpu, gpu, err_msg=name)


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_rounding_modes_are_equal(rng, mode):
    a8, b8, c8 = (rng.uniform(-1e3, 1e3, N) for _ in range(3))
    a4, b4, c4 = a8.astype(np.float32), b8.astype(np.float32), c8.astype(np.float32)
    cases = [(f"f{op}_{mode}", np.float32, (a4, b4)) for op in ("add", "sub", "mul", "div")]
    cases += [(f"d{op}_{mode}", np.float64, (a8, b8)) for op in ("add", "mul", "div")]
    cases += [
        (f"fmaf_{mode}", np.float32, (a4, b4, c4)),
        (f"fma_{mode}", np.float64, (a8, b8, c8)),
        (f"frcp_{mode}", np.float32, (a4,)),
        (f"drcp_{mode}", np.float64, (a8,)),
        (f"fsqrt_{mode}", np.float32, (np.abs(a4),)),
        (f"dsqrt_{mode}", np.float64, (np.abs(a8),)),
        (f"double2float_{mode}", np.float32, (a8 * 1e30,)),
        (f"double2int_{mode}", np.int32, (a8 * 1e7,)),
        (f"float2ll_{mode}", np.int64, (a4 * 1e16,)),
        (f"ll2float_{mode}", np.float32, ((a8 * 1e15).astype(np.int64),)),
        (f"ull2double_{mode}", np.float64, ((a8 * 1e15).astype(np.int64).view(np.uint64),)),
    ]
    for name, dtype, args in cases:
        gpu, cpu = both(getattr(cuda.libdevice, name), dtype, *args)
        np.testing.assert_array_equal(cpu, gpu, err_msg=name)


def test_math_module_and_fp16_agree(rng):
    x = H.floats(rng, np.float32, -10, 10, N)
    for fn, bound in [(math.sin, 3), (math.exp, 3), (math.tanh, 3), (math.erf, 3), (math.log1p, 2)]:
        xs = np.abs(x) if fn is math.log1p else x
        gpu, cpu = both(fn, np.float32, xs)
        H.assert_ulp(cpu, gpu, bound, fn.__name__)
    h = H.floats(rng, np.float16, 0.1, 4, N)
    for fn in (cuda.fp16.hexp, cuda.fp16.hsin, cuda.fp16.hsqrt, cuda.fp16.hlog):
        gpu, cpu = both(fn, np.float16, h)
        H.assert_ulp(cpu, gpu, 1, str(fn))


def test_random_streams_are_equal(rng):
    from cujit.cuda.random import xoroshiro128p_next, xoroshiro128p_normal_float32, xoroshiro128p_uniform_float64

    def draws(states, raw, u64, n32):
        i = cuda.grid(1)
        if i < raw.shape[0]:
            for k in range(raw.shape[1]):
                raw[i, k] = xoroshiro128p_next(states, i)
                u64[i, k] = xoroshiro128p_uniform_float64(states, i)
                n32[i, k] = xoroshiro128p_normal_float32(states, i)

    n, k = 256, 16
    host = np.empty(n, xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(host, int(rng.integers(0, 2**63)), 0)
    outs = {}
    for target in ("cuda", "cpu"):
        states = host.copy()
        arrays = [np.zeros((n, k), t) for t in (np.uint64, np.float64, np.float32)]
        kernel = cuda.jit(draws, target=target)
        if target == "cuda":
            d = [cuda.to_device(a) for a in arrays]
            kernel[2, 128](cuda.to_device(states), *d)
            arrays = [a.copy_to_host() for a in d]
        else:
            kernel[2, 128](states, *arrays)
        outs[target] = arrays
    np.testing.assert_array_equal(outs["cpu"][0], outs["cuda"][0])
    np.testing.assert_array_equal(outs["cpu"][1], outs["cuda"][1])
    H.assert_ulp(outs["cpu"][2].ravel(), outs["cuda"][2].ravel(), 6, "normal_float32 (logf, cosf, sqrtf)")


def test_atomic_rules_are_equal():
    def rules(f, u, old):
        old[0] = cuda.atomic.max(f, 0, np.nan)
        old[1] = cuda.atomic.min(f, 1, 2.0)
        old[2] = cuda.atomic.nanmax(f, 2, 3.0)
        old[3] = cuda.atomic.nanmin(f, 3, np.nan)
        cuda.atomic.inc(u, 0, np.uint32(7))
        cuda.atomic.dec(u, 1, np.uint32(7))
        cuda.atomic.inc(u, 2, np.uint32(7))
        cuda.atomic.dec(u, 3, np.uint32(7))

    results = {}
    for target in ("cuda", "cpu"):
        f = np.array([1.0, np.nan, np.nan, 4.0])
        u = np.array([7, 0, 9, 9], np.uint32)
        old = np.zeros(4)
        kernel = cuda.jit(rules, target=target)
        if target == "cuda":
            df, du, dold = cuda.to_device(f), cuda.to_device(u), cuda.to_device(old)
            kernel[1, 1](df, du, dold)
            f, u, old = df.copy_to_host(), du.copy_to_host(), dold.copy_to_host()
        else:
            kernel[1, 1](f, u, old)
        results[target] = (f, u, old)
    for a, b in zip(results["cpu"], results["cuda"]):
        np.testing.assert_array_equal(a, b)
