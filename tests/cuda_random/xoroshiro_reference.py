"""A plain-Python reference of xoroshiro128+ as numba-cuda seeds, jumps and converts it (written from the
algorithm's description, independent of cujit.cuda.random): the expected values of the random-number tests."""

import math

import numpy as np

MASK = (1 << 64) - 1


def seed_state(seed):
    z = (seed + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return [z, z]


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def next_value(state):
    s0, s1 = state
    result = (s0 + s1) & MASK
    s1 ^= s0
    state[0] = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & MASK)
    state[1] = rotl(s1, 36)
    return result


def jump(state):
    acc = [0, 0]
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for b in range(64):
            if (word >> b) & 1:
                acc[0] ^= state[0]
                acc[1] ^= state[1]
            next_value(state)
    state[:] = acc


def states(n, seed, subsequence_start=0):
    first = seed_state(seed & MASK)
    for _ in range(subsequence_start):
        jump(first)
    out = [first]
    for _ in range(1, n):
        s = list(out[-1])
        jump(s)
        out.append(s)
    return out


def unit_float64(x):
    return (x >> 11) * (1.0 / (1 << 53))


def unit_float32(x):
    return np.float32(unit_float64(x))


def normal_float32(u1, u2):
    two_pi = np.float32(2 * math.pi)
    return np.float32(np.sqrt(np.float32(-2.0) * np.log(np.float32(u1))) * np.cos(two_pi * np.float32(u2)))


def normal_float64(u1, u2):
    return math.sqrt(-2.0 * float(np.log(np.float32(u1)))) * math.cos(float(np.float64(2 * math.pi)) * float(u2))
