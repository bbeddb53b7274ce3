"""Typical CUDA kernels, written as a numba-cuda user writes them (only the import differs).

Shared by the compile-only kernel tests; nothing here compiles at import time.
"""

from cujit import cuda, float32, int32

TPB = 16  # tile width of the tiled matmul (the numba docs' fast_matmul)
BLOCK = 256  # threads per block of the shared-memory reduction
NBINS = 64  # bins of the histograms
FULL_MASK = 0xFFFFFFFF


def saxpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def block_sum(out, x):
    """Shared-memory tree reduction: one partial sum per block."""
    s = cuda.shared.array(BLOCK, float32)
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
        out[cuda.blockIdx.x] = s[0]


def stencil_2d(out, a):
    """5-point Laplacian on the interior of a 2-D grid."""
    i, j = cuda.grid(2)
    n, m = a.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        out[i, j] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]


def fast_matmul(A, B, C):
    """The numba documentation's 16x16 shared-memory tiled matrix multiplication."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def histogram(hist, data):
    """Global-memory histogram with atomics."""
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i] % NBINS, 1)


def histogram_shared(hist, data):
    """Per-block histogram in shared memory, merged into the global one."""
    local_hist = cuda.shared.array(NBINS, int32)
    tid = cuda.threadIdx.x
    if tid < NBINS:
        local_hist[tid] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local_hist, data[i] % NBINS, 1)
    cuda.syncthreads()
    if tid < NBINS:
        cuda.atomic.add(hist, tid, local_hist[tid])


def warp_reduce(out, x):
    """Warp-shuffle reduction: lane 0 of each warp adds its warp's sum into out[0]."""
    i = cuda.grid(1)
    v = float32(0)
    if i < x.size:
        v = x[i]
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
