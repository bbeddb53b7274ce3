"""The kernels the benchmarks time, written once for both packages: call
`make_kernels(cuda, float32)` with numba's or cujit's `cuda` and `float32` (and `make_more(cuda, float32, int32)`
for the reduction, the stencil and the histogram; benchmarks/reference.cu has the same in CUDA C++)."""

TPB = 16
GRID_STRIDE_BLOCKS = 1056  # the grid-stride saxpy's grid: 8 blocks of 256 threads per SM of an H100/H200


def make_kernels(cuda, float32):
    """(saxpy, fast_matmul) as plain Python functions closing over `cuda` and `float32`."""

    def saxpy(r, a, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = a * x[i] + y[i]

    def fast_matmul(A, B, C):
        # numba's documentation example: 16x16 tiles through shared memory.
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

    return saxpy, fast_matmul


def make_grid_stride(cuda):
    """saxpy as a grid-stride loop (numba's documented idiom for a fixed grid)."""

    def saxpy_grid_stride(r, a, x, y):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, r.size, stride):
            r[i] = a * x[i] + y[i]

    return saxpy_grid_stride


RED_TPB = 256  # the reduction's block
BINS = 256  # the histogram's bins


def make_more(cuda, float32, int32):
    """(block_sum, stencil, histogram): a block-tree sum (shared memory and syncthreads, one atomic per block),
    a 5-point 2-D stencil, a histogram of bytes in shared memory merged with global atomics."""

    def block_sum(x, out):
        s = cuda.shared.array(RED_TPB, dtype=float32)
        tid = cuda.threadIdx.x
        acc = float32(0.0)
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < x.size:
            acc += x[i]
            i += stride
        s[tid] = acc
        cuda.syncthreads()
        half = RED_TPB // 2
        while half > 0:
            if tid < half:
                s[tid] += s[tid + half]
            cuda.syncthreads()
            half //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, s[0])

    def stencil(a, out):
        i, j = cuda.grid(2)
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    def histogram(data, bins):
        h = cuda.shared.array(BINS, dtype=int32)
        tid = cuda.threadIdx.x
        h[tid] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < data.size:
            cuda.atomic.add(h, data[i], 1)
            i += stride
        cuda.syncthreads()
        cuda.atomic.add(bins, tid, h[tid])

    return block_sum, stencil, histogram
