"""Kernels drawing from cujit.cuda.random (numba-cuda's xoroshiro128p): each thread draws `draws` values of each
kind from its own generator. test_random.py compiles them; test_gpu_random.py checks the streams."""

from cujit import cuda
from cujit.cuda.random import (
    xoroshiro128p_jump,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)


def draw_all(states, raw, u32, u64, n32, n64):
    i = cuda.grid(1)
    if i < raw.shape[0]:
        for k in range(raw.shape[1]):
            raw[i, k] = xoroshiro128p_next(states, i)
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


def jump_then_draw(states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        xoroshiro128p_jump(states, i)
        out[i] = xoroshiro128p_next(states, i)


def monte_carlo_pi(states, hits, samples):
    # The documented numba-cuda example's shape: count points of the unit square inside the quarter circle.
    i = cuda.grid(1)
    if i < hits.shape[0]:
        inside = 0
        for _ in range(samples):
            x = cuda.random.xoroshiro128p_uniform_float32(states, i)
            y = cuda.random.xoroshiro128p_uniform_float32(states, i)
            if x * x + y * y <= 1.0:
                inside += 1
        hits[i] = inside
