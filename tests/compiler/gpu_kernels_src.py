"""Kernels run by test_gpu_kernels.py, written as a numba-cuda user writes them (only the import differs).

Module-level kernels are lazy ``@cuda.jit`` dispatchers: nothing compiles at import. Factories (``map_kernel``,
``atomic_kernel``...) build one dispatcher per scalar function / intrinsic and cache it, so parametrized tests
share compiled specialisations.
"""

import functools

import numpy as np

from cujit import cuda, float16, float32, float64, int32

import kernels_src

FULL_MASK = 0xFFFFFFFF
TPB = 16  # tile width of the tiled matmul (numba docs' fast_matmul)
BLOCK = 256  # threads per block of the shared-memory reduction
NBINS = 64  # histogram bins
TILE = 32  # tile of the shared-memory transpose
SORT_K = 8  # values per thread in the local-array sort
N_SLOTS = 16  # slots of the atomic tests (global and shared)

# Module-level arrays for cuda.const.array_like (their values are baked into the kernel).
POLY_COEFFS = np.array([0.5, -1.25, 2.0, 0.75, -3.0, 1.0, 0.125], dtype=np.float64)
CONST_TABLE = (np.arange(12, dtype=np.int32).reshape(3, 4) * 7 - 20).astype(np.int32)


# ---- elementwise kernels over a scalar function ------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def map_kernel(fn):
    """A kernel ``k(out, *inputs)`` storing ``fn(inputs[0][i], ...)`` into ``out[i]`` (1-D, grid-stride)."""
    dev = cuda.jit(device=True)(fn)
    nargs = fn.__code__.co_argcount
    if nargs == 1:

        @cuda.jit
        def map1(out, a):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, out.size, stride):
                out[i] = dev(a[i])

        return map1
    if nargs == 2:

        @cuda.jit
        def map2(out, a, b):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, out.size, stride):
                out[i] = dev(a[i], b[i])

        return map2
    if nargs == 3:

        @cuda.jit
        def map3(out, a, b, c):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, out.size, stride):
                out[i] = dev(a[i], b[i], c[i])

        return map3
    raise ValueError(f"map_kernel: {nargs} arguments")


@functools.lru_cache(maxsize=None)
def math_kernel(fn, nargs):
    """``out[i] = fn(a[i])`` / ``fn(a[i], b[i])`` with ``fn`` a math function referenced from the closure."""
    if nargs == 1:

        @cuda.jit
        def math1(out, a):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = fn(a[i])

        return math1

    @cuda.jit
    def math2(out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fn(a[i], b[i])

    return math2


# ---- scalar semantics: loops and device functions --------------------------------------------------------


def loop_mix(n, m, step):
    """for with any step (negative too), continue and break, and a while loop; valid Python as well."""
    s = 0
    for k in range(n, m, step):
        if k % 5 == 0:
            continue
        if k == 17 or k == -17:
            break
        s += k * k
    j = n
    while j > m:
        j -= 3
        if j % 11 == 0:
            break
        s ^= j
    for k in range(10, -10, -3):
        s -= k
    t = 0
    while True:
        t += 1
        if t * t > abs(n):
            break
    return s * 100 + t


@cuda.jit(device=True)
def horner(x):
    return ((2.0 * x - 3.0) * x + 0.5) * x - 7.0


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit(device=True)
def clamped_horner(x):
    return clamp(horner(x), -10.0, 10.0)


@cuda.jit(device=True)
def divmod_dev(a, b):
    return a // b, a % b


@cuda.jit(device=True)
def row_sum(a, i):
    """An array passed on to a device function."""
    s = 0.0
    for j in range(a.shape[1]):
        s += a[i, j]
    return s


@cuda.jit(device=True)
def ordered(a, b):
    if a < b:
        return a, b
    return b, a


@cuda.jit
def device_calls(out, x, ia, ib, m):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = horner(x[i])
        out[i, 1] = clamped_horner(x[i])
        q, r = divmod_dev(ia[i], ib[i])
        out[i, 2] = q
        out[i, 3] = r
        out[i, 4] = row_sum(m, i)


# ---- arrays ----------------------------------------------------------------------------------------------


@cuda.jit
def negative_index(out, ends, a):
    i = cuda.grid(1)
    n = a.size
    if i < n:
        out[i] = a[-1 - i]
    if i == 0:
        ends[0] = a[-1]
        ends[1] = a[-n]
        ends[-1] = a[n // 2]


@cuda.jit
def affine_2d(out, a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = 2 * a[i, j] + i * 1000 + j


@cuda.jit
def affine_3d(out, a):
    i, j, k = cuda.grid(3)
    n0, n1, n2 = a.shape
    if i < n0 and j < n1 and k < n2:
        out[i, j, k] = a[i, j, k] * 3 + i * 10000 + j * 100 + k


@cuda.jit
def array_attributes(out, a):
    out[0] = a.size
    out[1] = len(a)
    out[2] = a.ndim
    out[3] = a.shape[0]
    out[4] = a.shape[1]
    out[5] = a.shape[2]
    out[6] = a.strides[0]
    out[7] = a.strides[1]
    out[8] = a.strides[2]
    out[9] = a.shape[-1]
    out[10] = a.itemsize


@cuda.jit
def slice_views(out, a):
    """Slices and views inside a kernel; out has 8 columns."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        evens = row[::2]
        s = 0.0
        for k in range(evens.size):
            s += evens[k]
        out[i, 0] = s
        tail = row[1:-1]
        out[i, 1] = tail[tail.size - 1]
        out[i, 2] = row[::-1][0]
        out[i, 3] = a[:, 1][i]
        out[i, 4] = a[i:, ::3][0, 1]
        out[i, 5] = len(row[2:])
        t = 0.0
        for v in row:  # a loop over an array
            t += v
        out[i, 6] = t
        dst = out[i, 7:]  # a writable view
        dst[0] = row[-1] * 2


# ---- indices ---------------------------------------------------------------------------------------------


@cuda.jit
def thread_indices(out):
    """out[z, y, x] = the 17 index values of the thread at global position (x, y, z)."""
    x, y, z = cuda.grid(3)
    gx, gy, gz = cuda.gridsize(3)
    o = out[z, y, x]
    o[0] = cuda.threadIdx.x
    o[1] = cuda.threadIdx.y
    o[2] = cuda.threadIdx.z
    o[3] = cuda.blockIdx.x
    o[4] = cuda.blockIdx.y
    o[5] = cuda.blockIdx.z
    o[6] = cuda.blockDim.x
    o[7] = cuda.blockDim.y
    o[8] = cuda.blockDim.z
    o[9] = cuda.gridDim.x
    o[10] = cuda.gridDim.y
    o[11] = cuda.gridDim.z
    o[12] = gx
    o[13] = gy
    o[14] = gz
    o[15] = cuda.laneid
    o[16] = cuda.warpsize


@cuda.jit
def grid_stride_1d(out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] += 2 * i + 1


@cuda.jit
def grid_stride_2d(out):
    x, y = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for i in range(y, out.shape[0], sy):
        for j in range(x, out.shape[1], sx):
            out[i, j] += i * 1000 + j


@cuda.jit
def mark_threads(out):
    """Every launched thread adds 1 to its own element (out has one element per thread)."""
    x, y, z = cuda.grid(3)
    nx, ny, nz = cuda.gridsize(3)
    out[(z * ny + y) * nx + x] += 1


# ---- shared, local and constant memory -------------------------------------------------------------------


@cuda.jit
def reverse_dynamic_shared(out, a):
    """One block: a through dynamic shared memory (shape 0, size given at launch), reversed."""
    buf = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    n = a.size
    for k in range(t, n, cuda.blockDim.x):
        buf[k] = a[k]
    cuda.syncthreads()
    for k in range(t, n, cuda.blockDim.x):
        out[k] = buf[n - 1 - k]


@cuda.jit
def transpose_tiled(out, a):
    """Transpose through a padded 2-D static shared tile."""
    tile = cuda.shared.array((TILE, TILE + 1), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if by + ty < a.shape[0] and bx + tx < a.shape[1]:
        tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    if bx + ty < out.shape[0] and by + tx < out.shape[1]:
        out[bx + ty, by + tx] = tile[tx, ty]


@cuda.jit
def shared_3d(out):
    """A (2, 4, 8) shared array: each thread writes its linear id, reads the mirrored position."""
    sh = cuda.shared.array((2, 4, 8), int32)
    x, y, z = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    sh[z, y, x] = (z * 4 + y) * 8 + x
    cuda.syncthreads()
    out[z, y, x] = sh[1 - z, 3 - y, 7 - x]


@cuda.jit
def local_sort(out, a):
    """Each thread sorts its row of SORT_K values in a local array (insertion sort)."""
    buf = cuda.local.array(SORT_K, float64)
    pair = cuda.local.array((2, 3), int32)
    i = cuda.grid(1)
    if i < a.shape[0]:
        for k in range(SORT_K):
            buf[k] = a[i, k]
        for k in range(1, SORT_K):
            v = buf[k]
            j = k - 1
            while j >= 0 and buf[j] > v:
                buf[j + 1] = buf[j]
                j -= 1
            buf[j + 1] = v
        for k in range(SORT_K):
            out[i, k] = buf[k]
        pair[1, 2] = i
        pair[0, 0] = pair[1, 2] * 3
        out[i, SORT_K] = pair[0, 0]


@cuda.jit
def const_poly(out, x):
    """Horner over a constant-memory polynomial, plus a 2-D constant table lookup."""
    c = cuda.const.array_like(POLY_COEFFS)
    table = cuda.const.array_like(CONST_TABLE)
    i = cuda.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(c.size):
            acc = acc * x[i] + c[k]
        out[i] = acc + table[i % 3, i % 4]


# ---- atomics ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def atomic_kernel(op, space, dtype):
    """``op(target, idx[k], val[k])`` for every k, on ``slots`` (global) or on a shared copy of it (one block,
    loaded from and stored back to ``slots``). ``op`` is a cuda.atomic function taken from the closure."""
    if space == "global":

        @cuda.jit
        def atomic_global(slots, idx, val):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for k in range(start, idx.size, stride):
                op(slots, idx[k], val[k])

        return atomic_global

    @cuda.jit
    def atomic_shared(slots, idx, val):
        sh = cuda.shared.array(N_SLOTS, dtype)
        t = cuda.threadIdx.x
        for k in range(t, N_SLOTS, cuda.blockDim.x):
            sh[k] = slots[k]
        cuda.syncthreads()
        for k in range(t, idx.size, cuda.blockDim.x):
            op(sh, idx[k], val[k])
        cuda.syncthreads()
        for k in range(t, N_SLOTS, cuda.blockDim.x):
            slots[k] = sh[k]

    return atomic_shared


@functools.lru_cache(maxsize=None)
def exch_kernel(space, dtype):
    """Every thread exchanges its value into slot 0 and keeps the old value: olds + final = values + initial."""
    if space == "global":

        @cuda.jit
        def exch_global(slot, val, olds):
            i = cuda.grid(1)
            if i < val.size:
                olds[i] = cuda.atomic.exch(slot, 0, val[i])

        return exch_global

    @cuda.jit
    def exch_shared(slot, val, olds):
        sh = cuda.shared.array(1, dtype)
        t = cuda.threadIdx.x
        if t == 0:
            sh[0] = slot[0]
        cuda.syncthreads()
        for k in range(t, val.size, cuda.blockDim.x):
            olds[k] = cuda.atomic.exch(sh, 0, val[k])
        cuda.syncthreads()
        if t == 0:
            slot[0] = sh[0]

    return exch_shared


@functools.lru_cache(maxsize=None)
def cas_kernel(space, dtype):
    """cas(arr, i, cmp[i], val[i]) on distinct elements (deterministic), plus a CAS-loop counter on the last
    element (the loop retries with the value CAS returned, so it never depends on re-reading memory)."""
    if space == "global":

        @cuda.jit
        def cas_global(arr, cmp, val, olds):
            i = cuda.grid(1)
            if i < cmp.size:
                olds[i] = cuda.atomic.cas(arr, i, cmp[i], val[i])
                last = arr.size - 1
                seen = arr[last]
                while True:
                    got = cuda.atomic.cas(arr, last, seen, seen + 1)
                    if got == seen:
                        break
                    seen = got

        return cas_global

    @cuda.jit
    def cas_shared(arr, cmp, val, olds):
        sh = cuda.shared.array(1025, dtype)
        t = cuda.threadIdx.x
        n = arr.size
        for k in range(t, n, cuda.blockDim.x):
            sh[k] = arr[k]
        cuda.syncthreads()
        for k in range(t, cmp.size, cuda.blockDim.x):
            olds[k] = cuda.atomic.cas(sh, k, cmp[k], val[k])
            seen = sh[n - 1]
            while True:
                got = cuda.atomic.cas(sh, n - 1, seen, seen + 1)
                if got == seen:
                    break
                seen = got
        cuda.syncthreads()
        for k in range(t, n, cuda.blockDim.x):
            arr[k] = sh[k]

    return cas_shared


@functools.lru_cache(maxsize=None)
def inc_dec_kernel(space, dtype):
    """Every thread does atomic.inc(counters, 0, limit) and atomic.dec(counters, 1, limit)."""
    if space == "global":

        @cuda.jit
        def inc_dec_global(counters, limit, n):
            i = cuda.grid(1)
            if i < n:
                cuda.atomic.inc(counters, 0, limit)
                cuda.atomic.dec(counters, 1, limit)

        return inc_dec_global

    @cuda.jit
    def inc_dec_shared(counters, limit, n):
        sh = cuda.shared.array(2, dtype)
        t = cuda.threadIdx.x
        if t < 2:
            sh[t] = counters[t]
        cuda.syncthreads()
        for k in range(t, n, cuda.blockDim.x):
            cuda.atomic.inc(sh, 0, limit)
            cuda.atomic.dec(sh, 1, limit)
        cuda.syncthreads()
        if t < 2:
            counters[t] = sh[t]

    return inc_dec_shared


# ---- warp-level intrinsics and bit operations ------------------------------------------------------------


@cuda.jit
def shuffles(out, a, src, delta):
    """Row 0: shfl_sync from lane src[i]; 1: shfl_up_sync; 2: shfl_down_sync; 3: shfl_xor_sync (all lanes)."""
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        out[0, i] = cuda.shfl_sync(FULL_MASK, v, src[i])
        out[1, i] = cuda.shfl_up_sync(FULL_MASK, v, delta)
        out[2, i] = cuda.shfl_down_sync(FULL_MASK, v, delta)
        out[3, i] = cuda.shfl_xor_sync(FULL_MASK, v, delta)


@cuda.jit
def votes(out, pred):
    i = cuda.grid(1)
    if i < pred.size:
        p = pred[i] != 0
        out[0, i] = cuda.all_sync(FULL_MASK, p)
        out[1, i] = cuda.any_sync(FULL_MASK, p)
        ballot = cuda.ballot_sync(FULL_MASK, p)
        out[2, i] = ballot
        out[3, i] = cuda.popc(ballot)


@cuda.jit
def block_votes(out, pred):
    """syncthreads_count / _and / _or of each block, written by its thread 0."""
    i = cuda.grid(1)
    p = pred[i] != 0
    count = cuda.syncthreads_count(p)
    every = cuda.syncthreads_and(p)
    some = cuda.syncthreads_or(p)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x, 0] = count
        out[cuda.blockIdx.x, 1] = every
        out[cuda.blockIdx.x, 2] = some


@cuda.jit
def bit_counts(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = cuda.popc(a[i])
        out[1, i] = cuda.clz(a[i])


@cuda.jit
def fma_selp(out, a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = cuda.fma(a[i], b[i], c[i])
        out[1, i] = cuda.selp(a[i] > b[i], a[i], c[i])


# ---- complex, float16, tuples ----------------------------------------------------------------------------


@cuda.jit
def complex_ops(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = x.conjugate()
        out[5, i] = -x
        out[6, i] = abs(x)
        out[7, i] = complex(x.real * 2, y.imag)
        out[8, i] = x * x.real + y.imag


@cuda.jit
def half_ops(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[0, i] = x + y
        out[1, i] = x - y
        out[2, i] = x * y
        out[3, i] = x / y
        out[4, i] = -x
        out[5, i] = abs(x)
        out[6, i] = max(x, y)
        out[7, i] = x * float16(2) + y


@cuda.jit
def half_compare(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = a[i] < b[i]
        out[1, i] = a[i] >= b[i]
        out[2, i] = a[i] == b[i]


@cuda.jit
def tuple_ops(out, a, b, params):
    """Tuples as values (device-function returns, unpacking, constant indexing), loops over tuples, and a tuple
    passed as a kernel argument."""
    i = cuda.grid(1)
    if i < a.size:
        lo, hi = ordered(a[i], b[i])
        t = (lo, hi, lo + hi)
        s = 0.0
        for v in t:
            s += v
        out[i, 0] = t[0]
        out[i, 1] = t[1]
        out[i, 2] = t[-1]
        out[i, 3] = s
        k = 0
        for step in (1, 2, 3):
            k = k * 10 + step
        out[i, 4] = k
        scale, offset = params
        out[i, 5] = a[i] * scale + offset


# ---- typical kernels -------------------------------------------------------------------------------------

saxpy = cuda.jit(kernels_src.saxpy)  # the compile-only tests' kernel, run here


@cuda.jit
def block_sum_atomic(total, partials, x):
    """Shared-memory tree reduction per block; the block's sum goes to partials and, atomically, to total[0]."""
    s = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        s[tid] = x[i]
    else:
        s[tid] = 0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = s[0]
        cuda.threadfence()
        cuda.atomic.add(total, 0, s[0])


stencil_2d = cuda.jit(kernels_src.stencil_2d)  # the compile-only tests' kernel, run here


fast_matmul = cuda.jit(kernels_src.fast_matmul)  # the compile-only tests' kernel, run here


@cuda.jit
def histogram_global(hist, data):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i] % NBINS, 1)


@cuda.jit
def histogram_shared(hist, data):
    local_hist = cuda.shared.array(NBINS, int32)
    tid = cuda.threadIdx.x
    if tid < NBINS:
        local_hist[tid] = 0
    cuda.syncthreads()
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, data.size, stride):
        cuda.atomic.add(local_hist, data[i] % NBINS, 1)
    cuda.threadfence_block()
    cuda.syncthreads()
    if tid < NBINS:
        cuda.atomic.add(hist, tid, local_hist[tid])
        cuda.threadfence_system()


@cuda.jit
def warp_reduce(out, x):
    """Warp-shuffle reduction: lane 0 of each warp adds its warp's sum into out[0]."""
    i = cuda.grid(1)
    v = float32(0)
    if i < x.size:
        v = x[i]
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
    cuda.syncwarp()
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def shared_load_then_atomic(slots, idx, val):
    """Not decorated: the smallest kernel found whose second compilation in a thread crashed cujit."""
    sh = cuda.shared.array(N_SLOTS, float32)
    t = cuda.threadIdx.x
    sh[t] = slots[t]
    cuda.atomic.add(sh, idx[t], val[t])


# ---- dispatch --------------------------------------------------------------------------------------------


def scale_inplace(a, factor):
    """Not decorated: the dispatch tests wrap it themselves (lazily, eagerly, with several signatures)."""
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= factor


def copy_kernel(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i]


def interop_axpy(out, x, y, alpha):
    """For arrays from other libraries (CuPy, torch): out = alpha * x + y, 2-D."""
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = alpha * x[i, j] + y[i, j]
