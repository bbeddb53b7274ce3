"""cujit.cuda.random (xoroshiro128+) on the CPU target: the kernels of tests/cuda_random/random_src.py compiled
with ``target="cpu"`` draw the same streams as the GPU does, bit for bit for the raw 64-bit outputs and the
uniform floats (integer operations and the same conversions), and the normal floats within the ulps of the
host's logf/cosf/log/cos (docs/cpu_target.md); states from a numpy array seeded on the host, and from
create_xoroshiro128p_states in a process whose target is the CPU. Reference: tests/cuda_random's plain-Python
xoroshiro128p. No GPU needed."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

pytestmark = pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning")

RANDOM_TESTS = pathlib.Path(__file__).resolve().parents[1] / "cuda_random"
THREADS, DRAWS = 40, 6


def _load(name):
    spec = importlib.util.spec_from_file_location(f"hostrt_{name}", RANDOM_TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load("xoroshiro_reference")
K = _load("random_src")


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def host_states(n, seed, start=0):
    states = np.empty(n, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(states, seed, start)
    return states


def check_streams(raw, u32, u64, n32, n64, seed, start):
    for i, state in enumerate(ref.states(THREADS, seed, start)):
        for k in range(DRAWS):
            assert int(raw[i, k]) == ref.next_value(state)
            assert u32[i, k] == ref.unit_float32(ref.next_value(state))
            assert u64[i, k] == ref.unit_float64(ref.next_value(state))
            a, b = ref.unit_float32(ref.next_value(state)), ref.unit_float32(ref.next_value(state))
            np.testing.assert_allclose(n32[i, k], ref.normal_float32(a, b), rtol=2e-6, atol=1e-6)
            a, b = ref.unit_float32(ref.next_value(state)), ref.unit_float32(ref.next_value(state))
            np.testing.assert_allclose(n64[i, k], ref.normal_float64(a, b), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("start", [0, 3])
def test_streams_match_the_reference(rng, start):
    seed = int(rng.integers(0, 2**63))
    states = host_states(THREADS, seed, start)
    outs = [np.zeros((THREADS, DRAWS), dt) for dt in (np.uint64, np.float32, np.float64, np.float32, np.float64)]
    cuda.jit(K.draw_all, target="cpu")[2, 32](states, *outs)
    check_streams(*outs, seed, start)


def test_jump_on_the_host_target(rng):
    seed = int(rng.integers(0, 2**31))
    states = host_states(16, seed)
    out = np.zeros(16, np.uint64)
    cuda.jit(K.jump_then_draw, target="cpu")[1, 32](states, out)
    expect = []
    for s in ref.states(16, seed):
        ref.jump(s)
        expect.append(ref.next_value(s))
    assert [int(v) for v in out] == expect


def test_monte_carlo_pi(rng):
    n, samples = 256, 400
    states = host_states(n, int(rng.integers(0, 2**31)))
    hits = np.zeros(n, np.int64)
    cuda.jit(K.monte_carlo_pi, target="cpu")[(n + 63) // 64, 64](states, hits, samples)
    assert abs(4 * hits.sum() / (n * samples) - np.pi) < 0.05


SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, {tests!r})
import random_src as K
import xoroshiro_reference as ref
from cujit import cuda
from cujit.cuda.random import create_xoroshiro128p_states
states = create_xoroshiro128p_states({n}, {seed}, subsequence_start={start})
raw = cuda.device_array(({n}, {draws}), np.uint64)
u32 = cuda.device_array(({n}, {draws}), np.float32)
u64 = cuda.device_array(({n}, {draws}), np.float64)
n32 = cuda.device_array(({n}, {draws}), np.float32)
n64 = cuda.device_array(({n}, {draws}), np.float64)
cuda.jit(K.draw_all)[2, 32](states, raw, u32, u64, n32, n64)
np.savez({path!r}, raw=raw.copy_to_host(), u32=u32.copy_to_host(), u64=u64.copy_to_host(),
         n32=n32.copy_to_host(), n64=n64.copy_to_host())
"""


def test_create_states_in_a_process_whose_target_is_the_cpu(rng, tmp_path):
    seed, start = int(rng.integers(0, 2**63)), 2
    path = str(tmp_path / "draws.npz")
    env = dict(os.environ, CUJIT_TARGET="cpu")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    script = SCRIPT.format(tests=str(RANDOM_TESTS), n=THREADS, seed=seed, start=start, draws=DRAWS, path=path)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = np.load(path)
    check_streams(d["raw"], d["u32"], d["u64"], d["n32"], d["n64"], seed, start)
