"""cujit.cuda.random on a GPU: every thread's stream (raw 64-bit outputs, uniform float32/64, normal float32/64)
against the plain-Python reference of xoroshiro128p computed on the host, jumps on the device, a Monte Carlo
estimate of pi, and, where numba-cuda is installed, bit-for-bit equality with numba-cuda's own streams (the same
kernel source, random_src.draw_all, compiled by numba-cuda in a child process)."""

import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpu_support

import random_src as K
import xoroshiro_reference as ref
from cujit import cuda
from cujit.cuda.random import create_xoroshiro128p_states, init_xoroshiro128p_states

pytestmark = gpu_support.gpu + [
    pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning"),
]

THREADS, DRAWS = 40, 6


def draw(seed, start=0):
    states = create_xoroshiro128p_states(THREADS, seed, subsequence_start=start)
    outs = [np.zeros((THREADS, DRAWS), dt) for dt in (np.uint64, np.float32, np.float64, np.float32, np.float64)]
    cuda.jit(K.draw_all)[1, 64](states, *outs)
    return outs


@pytest.mark.parametrize("start", [0, 5])
def test_streams_match_the_reference(rng, start):
    seed = int(rng.integers(0, 2**63))
    raw, u32, u64, n32, n64 = draw(seed, start)
    for i, state in enumerate(ref.states(THREADS, seed, start)):
        for k in range(DRAWS):
            assert int(raw[i, k]) == ref.next_value(state)
            assert u32[i, k] == ref.unit_float32(ref.next_value(state))
            assert u64[i, k] == ref.unit_float64(ref.next_value(state))
            a, b = ref.unit_float32(ref.next_value(state)), ref.unit_float32(ref.next_value(state))
            np.testing.assert_allclose(n32[i, k], ref.normal_float32(a, b), rtol=2e-6, atol=1e-6)
            a, b = ref.unit_float32(ref.next_value(state)), ref.unit_float32(ref.next_value(state))
            np.testing.assert_allclose(n64[i, k], ref.normal_float64(a, b), rtol=1e-6, atol=1e-7)


def test_device_jump_and_reinitialisation(rng):
    seed = int(rng.integers(0, 2**31))
    states = create_xoroshiro128p_states(16, seed)
    out = np.zeros(16, np.uint64)
    cuda.jit(K.jump_then_draw)[1, 32](states, out)
    expect = []
    for s in ref.states(16, seed):
        ref.jump(s)
        expect.append(ref.next_value(s))
    assert [int(v) for v in out] == expect
    init_xoroshiro128p_states(states, seed + 1)  # back to a fresh seed on the same array
    host = states.copy_to_host()
    assert [[int(a), int(b)] for a, b in zip(host["s0"], host["s1"])] == ref.states(16, seed + 1)


def test_monte_carlo_pi(rng):
    n, samples = 4096, 256
    states = create_xoroshiro128p_states(n, int(rng.integers(0, 2**31)))
    hits = np.zeros(n, np.int64)
    cuda.jit(K.monte_carlo_pi)[n // 128, 128](states, hits, samples)
    assert abs(4.0 * hits.sum() / (n * samples) - np.pi) < 0.01


NUMBA_SCRIPT = (
    textwrap.dedent("""
    import sys
    import numpy
    numpy.row_stack = numpy.vstack
    from numba import cuda
    from numba.cuda.random import (create_xoroshiro128p_states, xoroshiro128p_next, xoroshiro128p_uniform_float32,
                                   xoroshiro128p_uniform_float64, xoroshiro128p_normal_float32,
                                   xoroshiro128p_normal_float64)
    """)
    + "\n@cuda.jit\n"
    + inspect.getsource(K.draw_all)
    + textwrap.dedent("""
    seed, start, threads, draws, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    states = create_xoroshiro128p_states(threads, seed, subsequence_start=start)
    outs = [numpy.zeros((threads, draws), dt) for dt in (numpy.uint64, numpy.float32, numpy.float64, numpy.float32,
                                                         numpy.float64)]
    draw_all[1, 64](states, *outs)
    numpy.savez(path, *outs)
""")
)


@gpu_support.needs_device(
    "bit for bit against numba-cuda on the GPU; the CPU target's normal floats are within "
    "the ulps of log/cos (docs/cpu_target.md)"
)
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba-cuda is not installed here")
def test_streams_are_bit_identical_to_numba_cuda(rng, tmp_path):
    seed, start = int(rng.integers(0, 2**63)), 3
    script = tmp_path / "numba_streams.py"
    script.write_text(NUMBA_SCRIPT)
    path = str(tmp_path / "numba.npz")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, str(script), str(seed), str(start), str(THREADS), str(DRAWS), path],
        check=True,
        env=env,
        timeout=300,
    )
    theirs = np.load(path)
    ours = draw(seed, start)
    for k, mine in enumerate(ours):
        assert mine.tobytes() == theirs[f"arr_{k}"].tobytes(), ["raw", "u32", "u64", "n32", "n64"][k]
