"""cujit.cuda.random without a GPU: the package layout numba-cuda users import from, the host-side seeding
against a plain sequential reference (seeds, subsequence starts, many states), and the kernels compiled."""

import numpy as np
import pytest

import cujit
import random_src as K
import xoroshiro_reference as ref
from cujit import cuda
from cujit.cuda import random as rnd


def test_cuda_is_a_package_with_numba_cudas_random_module():
    import cujit.cuda.random as by_path
    from cujit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32  # noqa: F401

    assert cuda.random is by_path
    assert str(rnd.xoroshiro128p_type) == "Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)"
    assert rnd.xoroshiro128p_dtype.itemsize == 16


@pytest.mark.parametrize(
    "seed, start, n", [(0, 0, 5), (1, 0, 33), (12345, 3, 17), (-7, 0, 4), (2**64 - 1, 1, 3), (2**40 + 5, 70, 9)]
)
def test_host_seeding_matches_sequential_jumps(seed, start, n):
    host = np.empty(n, rnd.xoroshiro128p_dtype)
    rnd.init_xoroshiro128p_states_cpu(host, seed, start)
    expect = ref.states(n, seed, start)
    assert [[int(a), int(b)] for a, b in zip(host["s0"], host["s1"])] == expect


def test_host_seeding_of_many_states_and_far_subsequences():
    n = 5000
    host = np.empty(n, rnd.xoroshiro128p_dtype)
    rnd.init_xoroshiro128p_states_cpu(host, 99, 0)
    # Spot checks deep into the array: state i is state 0 jumped i times.
    for i in (1, 2, 1023, 1024, 1025, 4999):
        s = ref.seed_state(99)
        for _ in range(i):
            ref.jump(s)
        assert [int(host["s0"][i]), int(host["s1"][i])] == s, i
    # A subsequence start far beyond any loop: consistent with starting lower and taking later states.
    shifted = np.empty(3, rnd.xoroshiro128p_dtype)
    rnd.init_xoroshiro128p_states_cpu(shifted, 99, 4997)
    assert shifted.tobytes() == host[4997:].tobytes()
    empty = np.empty(0, rnd.xoroshiro128p_dtype)
    rnd.init_xoroshiro128p_states_cpu(empty, 1, 0)


def test_random_kernels_compile():
    states = rnd.xoroshiro128p_type[::1]
    cuda.compile_ptx(
        K.draw_all,
        (
            states,
            cujit.uint64[:, ::1],
            cujit.float32[:, ::1],
            cujit.float64[:, ::1],
            cujit.float32[:, ::1],
            cujit.float64[:, ::1],
        ),
        cc=(9, 0),
    )
    cuda.compile_ptx(K.jump_then_draw, (states, cujit.uint64[::1]), cc=(9, 0))
    ptx, _ = cuda.compile_ptx(K.monte_carlo_pi, (states, cujit.int64[::1], cujit.int64), cc=(9, 0))
    assert ".entry" in ptx
