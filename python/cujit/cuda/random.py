"""``from cujit.cuda.random import ...``: numba-cuda's xoroshiro128+ random number generator.

One generator state per thread, held in a device array of ``xoroshiro128p_dtype`` records ({s0, s1} as uint64).
The streams are bit-identical to numba-cuda's for the same seed: state 0 is seeded by one splitmix64 step (both
words the same), jumped ``subsequence_start`` times, and state i is state i-1 jumped once (2**64 draws ahead).

The device functions are ordinary ``@cuda.jit(device=True)`` functions, called from kernels with the states
array and the thread's index. The states are initialised on the host and copied to the device, as numba-cuda
does; numba runs the jumps one after another in a CPU-compiled loop, cujit applies the jump as a linear map
over GF(2) to whole blocks of states with numpy (see ``_Jumps``), which gives the same states.
"""

import math

import numpy as np

from cujit._typeof import from_dtype
from cujit.cudadrv.devicearray import device_array
from cujit.dispatcher import jit
from cujit.types import float32, float64, int64, uint32, uint64

__all__ = [
    "xoroshiro128p_dtype",
    "xoroshiro128p_type",
    "init_xoroshiro128p_state",
    "rotl",
    "xoroshiro128p_next",
    "xoroshiro128p_jump",
    "uint64_to_unit_float32",
    "uint64_to_unit_float64",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "init_xoroshiro128p_states_cpu",
    "init_xoroshiro128p_states",
    "create_xoroshiro128p_states",
]

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = from_dtype(xoroshiro128p_dtype)

_MASK = (1 << 64) - 1
_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_SPLITMIX_MUL1 = 0xBF58476D1CE4E5B9
_SPLITMIX_MUL2 = 0x94D049BB133111EB
_JUMP_LOW, _JUMP_HIGH = 0xBEAC0467EBA5FACB, 0xD86B048B86AA9922  # the jump polynomial, in the order it is applied
_JUMP = (_JUMP_LOW, _JUMP_HIGH)
_TWO_PI = 6.283185307179586


# ---- on the device ----------------------------------------------------------------------------------------


@jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """Seeds states[index] from `seed` with one splitmix64 step."""
    index = int64(index)
    z = uint64(seed) + uint64(_SPLITMIX_GAMMA)
    z = (z ^ (z >> uint32(30))) * uint64(_SPLITMIX_MUL1)
    z = (z ^ (z >> uint32(27))) * uint64(_SPLITMIX_MUL2)
    z = z ^ (z >> uint32(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


@jit(device=True)
def rotl(x, k):
    """x rotated left by k bits (64-bit)."""
    x = uint64(x)
    k = uint32(k)
    return (x << k) | (x >> uint32(64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next 64-bit output of generator `index` (s0 + s1), advancing its state."""
    index = int64(index)
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = uint64(rotl(s0, uint32(55))) ^ s1 ^ (s1 << uint32(14))
    states[index]["s1"] = uint64(rotl(s1, uint32(36)))
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advances generator `index` by 2**64 draws."""
    index = int64(index)
    s0 = uint64(0)
    s1 = uint64(0)
    for i in range(2):
        word = uint64(_JUMP_LOW) if i == 0 else uint64(_JUMP_HIGH)
        for b in range(64):
            if word & (uint64(1) << uint32(b)):
                s0 ^= states[index]["s0"]
                s1 ^= states[index]["s1"]
            xoroshiro128p_next(states, index)
    states[index]["s0"] = s0
    states[index]["s1"] = s1


@jit(device=True)
def uint64_to_unit_float64(x):
    """The top 53 bits of x as a float64 in [0, 1)."""
    x = uint64(x)
    return (x >> uint32(11)) * (float64(1) / (uint64(1) << uint32(53)))


@jit(device=True)
def uint64_to_unit_float32(x):
    """uint64_to_unit_float64(x) rounded to float32 (as numba-cuda does)."""
    x = uint64(x)
    return float32(uint64_to_unit_float64(x))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniformly distributed in [0, 1) from generator `index`."""
    index = int64(index)
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniformly distributed in [0, 1) from generator `index`."""
    index = int64(index)
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@jit(device=True)
def _box_muller(states, index, two, two_pi):
    # Two float32 draws; `two` and `two_pi` (float32 or float64) set the precision of the rest, as numba-cuda's
    # normal_float32 and normal_float64 compute.
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-two * math.log(u1)) * math.cos(two_pi * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 from the standard normal distribution (Box-Muller on two float32 draws)."""
    return _box_muller(states, int64(index), float32(2.0), float32(_TWO_PI))


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 from the standard normal distribution (Box-Muller on two float32 draws, as numba-cuda)."""
    return _box_muller(states, int64(index), float64(2.0), float64(_TWO_PI))


# ---- on the host ------------------------------------------------------------------------------------------


def _splitmix64(seed):
    z = (seed + _SPLITMIX_GAMMA) & _MASK
    z = ((z ^ (z >> 30)) * _SPLITMIX_MUL1) & _MASK
    z = ((z ^ (z >> 27)) * _SPLITMIX_MUL2) & _MASK
    return z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & _MASK


def _step(s0, s1):
    s1 ^= s0
    return _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _MASK), _rotl(s1, 36)


def _jump_once(s0, s1):
    a0 = a1 = 0
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                a0 ^= s0
                a1 ^= s1
            s0, s1 = _step(s0, s1)
    return a0, a1


class _Jumps:
    """The jump is linear over GF(2) on the 128 state bits: J**(2**k) as a 128x128 bit matrix, and as 16 byte
    tables (256 entries of (s0, s1) each) that apply it to many states with 16 lookups. Built on first use."""

    _matrices = []  # J**(2**k), k = 0, 1, ...
    _tables = {}

    @classmethod
    def matrix(cls, k):
        if not cls._matrices:
            columns = [_jump_once(1 << j, 0) if j < 64 else _jump_once(0, 1 << (j - 64)) for j in range(128)]
            bits = np.array(
                [[(c[0] >> i) & 1 for i in range(64)] + [(c[1] >> i) & 1 for i in range(64)] for c in columns],
                dtype=np.int64,
            ).T  # bits[out, in]
            cls._matrices.append(bits)
        while len(cls._matrices) <= k:
            m = cls._matrices[-1]
            cls._matrices.append((m @ m) & 1)
        return cls._matrices[k]

    @classmethod
    def table(cls, k):
        table = cls._tables.get(k)
        if table is None:
            m = cls.matrix(k)
            weights = np.uint64(1) << np.arange(64, dtype=np.uint64)
            s0 = (m[:64].T.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)  # column j's s0 word
            s1 = (m[64:].T.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
            table = np.zeros((16, 256, 2), dtype=np.uint64)
            for byte in range(16):
                for bit in range(8):
                    size = 1 << bit
                    column = np.array([s0[byte * 8 + bit], s1[byte * 8 + bit]], dtype=np.uint64)
                    table[byte, size : 2 * size] = table[byte, :size] ^ column
            cls._tables[k] = table
        return table

    @classmethod
    def apply(cls, k, s0, s1):
        """J**(2**k) applied to the states (s0[i], s1[i])."""
        table = cls.table(k)
        out0 = np.zeros_like(s0)
        out1 = np.zeros_like(s1)
        for byte in range(16):
            word = s0 if byte < 8 else s1
            entries = table[byte, ((word >> np.uint64(8 * (byte % 8))) & np.uint64(0xFF)).astype(np.intp)]
            out0 ^= entries[:, 0]
            out1 ^= entries[:, 1]
        return out0, out1


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fills the host array `states` (of xoroshiro128p_dtype) as numba-cuda does."""
    n = states.shape[0]
    if n < 1:
        return
    seed = int(seed) & _MASK
    subsequence_start = int(subsequence_start) & _MASK
    z = _splitmix64(seed)
    s0 = np.array([z], dtype=np.uint64)
    s1 = s0.copy()
    for k in range(subsequence_start.bit_length()):
        if subsequence_start >> k & 1:
            s0, s1 = _Jumps.apply(k, s0, s1)
    all0 = np.empty(n, dtype=np.uint64)
    all1 = np.empty(n, dtype=np.uint64)
    all0[0], all1[0] = s0[0], s1[0]
    filled, k = 1, 0
    while filled < n:  # states [filled, 2*filled) are states [0, filled) jumped `filled` times
        take = min(filled, n - filled)
        all0[filled : filled + take], all1[filled : filled + take] = _Jumps.apply(k, all0[:take], all1[:take])
        filled += take
        k += 1
    states["s0"] = all0
    states["s1"] = all1


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Initialises the device array `states` for `seed`; generator i starts subsequence_start + i jumps in."""
    host = np.empty(shape=states.shape, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(host, seed, subsequence_start)
    states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of `n` generator states, initialised for `seed`."""
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
