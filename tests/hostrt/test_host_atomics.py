"""cuda.atomic.* on the CPU target: every operation on int32/int64/uint32/uint64 (and float32/float64 where CUDA
has it), on 1-D arrays and on n-d arrays indexed by tuples, in global and shared memory, with many threads of
many blocks (running in parallel on the worker threads) contending for the same elements; results against
numpy (the returned old values checked where they determine the answer), inc/dec with CUDA's wrap-around, float
max/min with the NaN rules cujit's GPU lowering gives them (LLVM's maxnum/minnum: a NaN operand is ignored).
No GPU needed."""

import re

import numpy as np
import pytest

from cujit import cuda

pytestmark = pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning")

INTS = [np.int32, np.int64, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]
BLOCKS, THREADS = 16, 128
N = BLOCKS * THREADS


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def values(rng, dtype, n=N):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-100, 100, n).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)


@cuda.jit(target="cpu")
def add_sub(acc, vals, bins):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.add(acc, i % bins, vals[i])
        cuda.atomic.sub(acc, (i + 1) % bins, vals[i])


@cuda.jit(target="cpu")
def max_min(mx, mn, vals, bins):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.max(mx, i % bins, vals[i])
        cuda.atomic.min(mn, i % bins, vals[i])


@cuda.jit(target="cpu")
def nan_max_min(mx, mn, vals, bins):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.nanmax(mx, i % bins, vals[i])
        cuda.atomic.nanmin(mn, i % bins, vals[i])


@cuda.jit(target="cpu")
def bitwise(a, o, x, vals, bins):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.and_(a, i % bins, vals[i])
        cuda.atomic.or_(o, i % bins, vals[i])
        cuda.atomic.xor(x, i % bins, vals[i])


def per_bin(vals, bins, reduce):
    return np.array([reduce(vals[b::bins]) for b in range(bins)])


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda t: np.dtype(t).name)
def test_add_and_sub(rng, dtype):
    vals = values(rng, dtype)
    if np.dtype(dtype).kind == "f":
        vals = np.round(vals).astype(dtype)  # whole numbers: every order of the additions gives the same sum
    acc = np.zeros(7, dtype)
    add_sub[BLOCKS, THREADS](acc, vals, 7)
    with np.errstate(over="ignore"):
        want = per_bin(vals, 7, lambda v: v.sum(dtype=dtype)) - np.roll(
            per_bin(vals, 7, lambda v: v.sum(dtype=dtype)), 1
        )
    np.testing.assert_array_equal(acc, want.astype(dtype))


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda t: np.dtype(t).name)
def test_max_and_min(rng, dtype):
    vals = values(rng, dtype)
    mx = np.full(5, vals[0], dtype)
    mn = np.full(5, vals[0], dtype)
    max_min[BLOCKS, THREADS](mx, mn, vals, 5)
    np.testing.assert_array_equal(mx, np.maximum(per_bin(vals, 5, np.max), vals[0]))
    np.testing.assert_array_equal(mn, np.minimum(per_bin(vals, 5, np.min), vals[0]))
    mx2, mn2 = mx.copy(), mn.copy()
    nan_max_min[BLOCKS, THREADS](mx2, mn2, vals, 5)  # nanmax/nanmin are max/min for integers and ordinary floats
    np.testing.assert_array_equal(mx2, mx)
    np.testing.assert_array_equal(mn2, mn)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_float_max_min_nan_rules(dtype):
    # A NaN value leaves the element as it was; a NaN element takes the value (LLVM's maxnum/minnum, which
    # cujit's GPU lowering uses too; numba-cuda's nanmax/nanmin have these rules).
    @cuda.jit(target="cpu")
    def one(ary, vals, old):
        old[0] = cuda.atomic.max(ary, 0, vals[0])
        old[1] = cuda.atomic.min(ary, 1, vals[1])
        old[2] = cuda.atomic.nanmax(ary, 2, vals[2])
        old[3] = cuda.atomic.nanmin(ary, 3, vals[3])

    nan = dtype(np.nan)
    ary = np.array([1, 1, 1, 1], dtype)
    old = np.zeros(4, dtype)
    one[1, 1](ary, np.full(4, nan, dtype), old)
    np.testing.assert_array_equal(ary, [1, 1, 1, 1])
    np.testing.assert_array_equal(old, [1, 1, 1, 1])
    ary = np.full(4, nan, dtype)
    one[1, 1](ary, np.array([2, 3, 4, 5], dtype), old)
    np.testing.assert_array_equal(ary, [2, 3, 4, 5])
    assert np.isnan(old).all()


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: np.dtype(t).name)
def test_bitwise(rng, dtype):
    vals = values(rng, dtype)
    ones = np.array(-1).astype(dtype)
    a = np.full(3, ones, dtype)
    o = np.zeros(3, dtype)
    x = np.zeros(3, dtype)
    bitwise[BLOCKS, THREADS](a, o, x, vals, 3)
    np.testing.assert_array_equal(a, per_bin(vals, 3, np.bitwise_and.reduce))
    np.testing.assert_array_equal(o, per_bin(vals, 3, np.bitwise_or.reduce))
    np.testing.assert_array_equal(x, per_bin(vals, 3, np.bitwise_xor.reduce))


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64], ids=lambda t: np.dtype(t).name)
def test_inc_and_dec_wrap_as_cuda(dtype):
    @cuda.jit(target="cpu")
    def incdec(counters, limit, old):
        i = cuda.grid(1)
        if i < old.shape[0]:
            old[i, 0] = cuda.atomic.inc(counters, 0, limit)
            old[i, 1] = cuda.atomic.dec(counters, 1, limit)

    n, limit = 1000, 7
    counters = np.array([0, 3], dtype)
    old = np.zeros((n, 2), dtype)
    incdec[8, 125](counters, dtype(limit), old)
    # inc: old >= limit ? 0 : old + 1; dec: (old == 0 or old > limit) ? limit : old - 1. Each is a cycle of
    # limit + 1 states, visited once per call in some order: the final states and the multiset of old values.
    assert counters[0] == n % (limit + 1)
    assert counters[1] == (3 - n) % (limit + 1)
    np.testing.assert_array_equal(
        np.bincount(old[:, 0].astype(np.int64), minlength=limit + 1),
        np.bincount(np.arange(n) % (limit + 1), minlength=limit + 1),
    )
    np.testing.assert_array_equal(
        np.bincount(old[:, 1].astype(np.int64), minlength=limit + 1),
        np.bincount((3 - np.arange(n)) % (limit + 1), minlength=limit + 1),
    )
    big = np.array([limit + 5, limit + 5], dtype)  # above the limit: inc wraps to 0, dec goes to the limit
    incdec[1, 1](big, dtype(limit), old[:1])
    assert list(big) == [0, limit]


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: np.dtype(t).name)
def test_exch_cas_and_compare_and_swap(dtype):
    @cuda.jit(target="cpu")
    def claim(slot, owner, lock, got):
        i = cuda.grid(1)
        if i < got.size:
            # Exactly one thread swaps 0 -> its id + 1 in slot; every thread gets the old value back.
            got[i] = cuda.atomic.cas(slot, 0, 0, i + 1)
            cuda.atomic.compare_and_swap(lock, 0, i + 1)
            cuda.atomic.exch(owner, 0, i + 1)

    n = 600
    slot, owner, lock = np.zeros(1, dtype), np.zeros(1, dtype), np.zeros(1, dtype)
    got = np.zeros(n, dtype)
    claim[5, 120](slot, owner, lock, got)
    winner = int(slot[0])
    assert 1 <= winner <= n and got[winner - 1] == 0
    assert (np.delete(got, winner - 1) == winner).all()
    assert 1 <= lock[0] <= n and 1 <= owner[0] <= n


def test_tuple_indices_and_shared_memory(rng):
    @cuda.jit(target="cpu")
    def histogram2d(xs, ys, hist):
        counts = cuda.shared.array((4, 4), np.int32)
        t = cuda.threadIdx.x
        if t < 16:
            counts[t // 4, t % 4] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        if i < xs.size:
            cuda.atomic.add(counts, (xs[i], ys[i]), 1)
        cuda.syncthreads()
        if t < 16:
            cuda.atomic.add(hist, (t // 4, t % 4), counts[t // 4, t % 4])

    xs = rng.integers(0, 4, N).astype(np.int64)
    ys = rng.integers(0, 4, N).astype(np.int32)
    hist = np.zeros((4, 4), np.int64)
    histogram2d[BLOCKS, THREADS](xs, ys, hist)
    want = np.zeros((4, 4), np.int64)
    np.add.at(want, (xs, ys), 1)
    np.testing.assert_array_equal(hist, want)


def test_float_add_of_many_threads_is_exact_for_integers(rng):
    @cuda.jit(target="cpu")
    def total(vals, out):
        i = cuda.grid(1)
        if i < vals.size:
            cuda.atomic.add(out, 0, vals[i])

    vals = rng.integers(-1000, 1000, 100_000).astype(np.float64)
    out = np.zeros(1)
    total[(vals.size + 255) // 256, 256](vals, out)
    assert out[0] == vals.sum()


def test_nanmax_and_nanmin_compile_for_the_gpu_as_max_and_min():
    # The GPU side of the rows cujit added for the CPU target's sake: the same LLVM atomics as max/min.
    def with_nan(ary, v):
        cuda.atomic.nanmax(ary, 0, v)
        cuda.atomic.nanmin(ary, 1, v)

    def plain(ary, v):
        cuda.atomic.max(ary, 0, v)
        cuda.atomic.min(ary, 1, v)

    for sig in ["void(float32[:], float32)", "void(float64[:], float64)", "void(int64[:], int64)"]:
        ptx_nan, _ = cuda.compile_ptx(with_nan, sig)
        ptx_plain, _ = cuda.compile_ptx(plain, sig)
        body = lambda ptx: re.sub(r"_ZN\w+", "NAME", ptx[ptx.index("{") :])  # noqa: E731  (names differ)
        assert body(ptx_nan) == body(ptx_plain)
