"""``__numba_cuda_link__`` on the GPU (docs/link_hooks.md), against numpy on fresh random data: a generator of CUDA
C per dtype (float32 and float64 in one process), called once per specialisation and never on cached launches, again
for a second kernel, through a device function; a hook that makes LTO-IR with ``lto=True``; a hook returning a path
and a LinkableCode; callbacks on the hook's code; an nvmath-style object (``__numba_cuda_declare__``)."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda
from cujit.cudadrv import devices

import link_hooks_src as src

pytestmark = gpu_support.gpu + [
    gpu_support.needs_device("__numba_cuda_link__ hooks supply GPU code (CUDA C++, LTO-IR) to link"),
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]


def _run(kernel, x):
    out = np.zeros_like(x)
    kernel[(len(x) + 127) // 128, 128](out, x)
    return out


def test_generated_code_per_dtype(rng):
    src.scale32.calls.clear()
    src.scale64.calls.clear()
    x32, x64 = rng.random(1000, dtype=np.float32), rng.random(700)
    k32, k64 = cuda.jit(src.k32), cuda.jit(src.k64)
    np.testing.assert_allclose(_run(k32, x32), x32 * 2, rtol=1e-6)
    np.testing.assert_allclose(_run(k64, x64), x64 * 3, rtol=1e-12)
    for _ in range(3):  # cached launches: no new call
        np.testing.assert_allclose(_run(k32, x32), x32 * 2, rtol=1e-6)
    assert src.scale32.calls == [("float32", "float32")] and src.scale64.calls == [("float64", "float64")]
    x32b = rng.random(33, dtype=np.float32)[::2]  # a new specialisation (non-contiguous): again
    np.testing.assert_allclose(_run(k32, x32b), x32b * 2, rtol=1e-6)
    assert len(src.scale32.calls) == 2
    np.testing.assert_allclose(_run(cuda.jit(src.k32), x32), x32 * 2, rtol=1e-6)  # a second kernel: again
    assert len(src.scale32.calls) == 3


def test_through_a_device_function(rng):
    x = rng.random(500, dtype=np.float32)
    np.testing.assert_allclose(_run(cuda.jit(src.through_device_function), x), x * 3, rtol=1e-6)


def test_a_hook_that_makes_ltoir(rng):
    major, minor = devices.get_current_device().compute_capability
    obj = src.LtoScale(f"sm_{major}{minor}{'a' if major >= 9 else ''}")
    x = rng.random(800, dtype=np.float32)
    np.testing.assert_allclose(_run(src.make_lto_kernel(obj.device), x), x * 2 + 1, rtol=1e-6)
    assert len(obj.calls) == 1


def test_a_hook_returning_a_path_and_a_linkable_code(rng):
    x = rng.random(640, dtype=np.float32)
    np.testing.assert_allclose(_run(cuda.jit(src.calls_listed), x), x * x + x, rtol=1e-6)


def test_callbacks_on_the_hooks_code(rng):
    seen = []
    scale = src.Scale(
        "float32",
        callbacks={
            "setup_callback": lambda m: seen.append(("setup", int(m))),
            "teardown_callback": lambda m: seen.append(("teardown", int(m))),
        },
    )
    s = scale.device

    def kernel(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = s(x[i], np.float32(5))

    k = cuda.jit(kernel)
    x = rng.random(300, dtype=np.float32)
    for _ in range(2):
        np.testing.assert_allclose(_run(k, x), x * 5, rtol=1e-6)
    assert [e[0] for e in seen] == ["setup"]
    k.unload()
    assert [e[0] for e in seen] == ["setup", "teardown"] and seen[0][1] == seen[1][1]


def test_an_object_that_declares_itself_per_type(rng):
    src.negate.calls.clear()
    x = rng.standard_normal(900).astype(np.float32)
    np.testing.assert_allclose(_run(cuda.jit(src.negate_kernel), x), -2 * x, rtol=1e-6)
    assert src.negate.calls == [("float32",)]
