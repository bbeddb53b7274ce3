"""The kernels the benchmarks time, written once for both packages: call
`make_kernels(cuda, float32)` with numba's or cujit's `cuda` and `float32`."""

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
