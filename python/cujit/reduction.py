"""``cuda.Reduce`` / ``cuda.reduce``: a full reduction of a 1-D array with a binary Python function.

numba-cuda's algorithm, step for step, so that results are bit-for-bit the same for operations that are not
associative (floating-point sums): blocks of 128 threads (4 warps) walk the array block-strided, each thread
folding its elements into one value; each warp then halves its 32 values in shared memory (a tree, lanes
``i`` and ``i + width``), and thread 0 folds the warps' values into the block's partial result. At most 64
such full blocks run, one more block of fewer threads takes the tail that does not fill a block, and a last
single-block launch folds the partials. ``init`` is folded into block 0's partial.

The binary function becomes a ``cuda.jit(device=True)`` device function; the kernels are ordinary cujit
kernels (one per dtype and function, kept by the class as numba-cuda keeps them), launched through the same
dispatch as users' kernels.
"""

import threading

_WARPSIZE = 32
_NUMWARPS = 4
_BLOCKSIZE = _WARPSIZE * _NUMWARPS
_MAX_FULL_BLOCKS = 2 * _WARPSIZE


def _as_device_function(functor):
    from cujit import cuda
    from cujit.dispatcher import CUDADispatcher

    if isinstance(functor, CUDADispatcher):
        if not functor.device:
            raise TypeError(
                f"Reduce needs a binary function or a device function, got the kernel {functor.__qualname__!r}"
            )
        return functor
    if not callable(functor):
        raise TypeError(f"Reduce needs a binary function (of two values, returning one), got {functor!r}")
    return cuda.jit(device=True)(functor)


def reduction_kernel(functor, nbtype):
    """The kernel ``reduce_blocks(arr, partials, init, use_init)`` for elements of cujit type ``nbtype``,
    folding with ``functor`` (a Python function or a device dispatcher)."""
    from cujit import cuda

    op = _as_device_function(functor)
    row_size = _WARPSIZE + 1  # a padding column, so that the warps' rows start in different banks

    @cuda.jit(device=True)
    def warp_fold(rows, value):
        """The 32 values of a warp, halved in its row of shared memory: lane 0 ends with the fold."""
        lane = cuda.threadIdx.x % _WARPSIZE
        row = rows[cuda.threadIdx.x // _WARPSIZE, :]
        row[lane] = value
        cuda.syncwarp()
        width = _WARPSIZE // 2
        while width > 0:
            if lane < width:
                row[lane] = op(row[lane], row[lane + width])
            cuda.syncwarp()
            width //= 2

    @cuda.jit(device=True)
    def fold_full_blocks(arr, partials, rows):
        """128 threads a block: each folds its block-strided elements, then the block folds its threads."""
        tid = cuda.threadIdx.x
        step = cuda.blockDim.x * cuda.gridDim.x
        first = tid + cuda.blockDim.x * cuda.blockIdx.x
        value = arr[first]
        for i in range(first + step, arr.size, step):
            value = op(value, arr[i])
        cuda.syncthreads()
        warp_fold(rows, value)
        cuda.syncthreads()
        if tid < 2:  # 4 warps: 0 folds 2, 1 folds 3, then 0 folds 1
            rows[tid, 0] = op(rows[tid, 0], rows[tid + 2, 0])
        cuda.syncwarp()
        if tid == 0:
            partials[cuda.blockIdx.x] = op(rows[0, 0], rows[1, 0])

    @cuda.jit(device=True)
    def fold_one_block(arr, partials, rows):
        """One block of ``arr.size`` (< 128) threads, one element each."""
        tid = cuda.threadIdx.x
        warp = tid // _WARPSIZE
        lane = tid % _WARPSIZE
        n = arr.size
        value = arr[tid]
        rows[warp, lane] = value
        cuda.syncthreads()
        if (warp + 1) * _WARPSIZE < n:
            warp_fold(rows, value)
        elif lane == 0:  # the last warp (full or not) folds its values one after the other
            row = rows[warp, :]
            for i in range(1, n - warp * _WARPSIZE):
                row[0] = op(row[0], row[i])
        cuda.syncthreads()
        if tid == 0:
            warps = (cuda.blockDim.x + _WARPSIZE - 1) // _WARPSIZE
            result = rows[0, 0]
            for w in range(1, warps):
                result = op(result, rows[w, 0])
            partials[cuda.blockIdx.x] = result

    def reduce_blocks(arr, partials, init, use_init):
        rows = cuda.shared.array((_NUMWARPS, row_size), dtype=nbtype)
        if cuda.blockDim.x == _BLOCKSIZE:
            fold_full_blocks(arr, partials, rows)
        else:
            fold_one_block(arr, partials, rows)
        if use_init and cuda.threadIdx.x == 0 and cuda.blockIdx.x == 0:
            partials[0] = op(partials[0], init)

    return cuda.jit(reduce_blocks)


def _launch_plan(n):
    """(full blocks, elements they cover, elements of the tail block) for ``n`` elements."""
    covered = (n // _BLOCKSIZE) * _BLOCKSIZE
    return min(covered // _BLOCKSIZE, _MAX_FULL_BLOCKS), covered, n - covered


def _is_device_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


class Reduce:
    """numba-cuda's ``cuda.Reduce(binop)``: ``Reduce(f)(arr, size=None, res=None, init=0, stream=0)`` reduces
    a 1-D host or device array with ``f``, compiled as a CUDA device function. Returns the result as a numpy
    scalar of the array's dtype, or writes it to ``res[0]`` (a device array) and returns None. The kernels are
    kept per (function, dtype) for the process, as numba-cuda keeps them."""

    _cache = {}
    _lock = threading.Lock()

    def __init__(self, functor):
        if not callable(functor):
            raise TypeError(f"Reduce needs a binary function (of two values, returning one), got {functor!r}")
        self._functor = functor

    def _compile(self, dtype):
        key = (self._functor, dtype)
        kernel = self._cache.get(key)
        if kernel is None:
            from cujit.vectorizers import cujit_type

            nbtype = cujit_type(dtype, "Reduce")
            with self._lock:
                kernel = self._cache.setdefault(key, reduction_kernel(self._functor, nbtype))
        return kernel

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        from cujit import cuda
        from cujit.vectorizers import configured

        arr = _checked_array(arr)
        if size is not None:
            arr = arr[: _checked_size(size)]
        init = arr.dtype.type(init)  # the array's type, as numba-cuda converts it
        if arr.size < 1:
            return init
        kernel = self._compile(arr.dtype)
        if not _is_device_array(arr):
            arr = cuda.to_device(arr, stream=stream)
        full_blocks, covered, tail = _launch_plan(arr.size)
        count = full_blocks + (1 if tail else 0)
        partials = cuda.device_array(count, dtype=arr.dtype, stream=stream)
        if covered:
            configured(kernel, full_blocks, _BLOCKSIZE, stream)(arr[:covered], partials[:full_blocks], init, True)
        if tail:
            configured(kernel, 1, tail, stream)(arr[covered:], partials[full_blocks:], init, not full_blocks)
        if count > 1:
            configured(kernel, 1, count, stream)(partials, partials, init, False)
        if res is not None:
            _result_view(res).copy_to_device(partials[:1], stream=stream)
            return None
        return _first_element(partials, stream)


def _checked_array(arr):
    if not hasattr(arr, "ndim") or not hasattr(arr, "dtype"):
        import numpy as np

        arr = np.asarray(arr)
    if arr.ndim != 1:
        raise TypeError(
            f"only support 1D array (Reduce got a {arr.ndim}-dimensional array of shape {tuple(arr.shape)})"
        )
    if _is_device_array(arr) and not getattr(arr, "__cuda_ndarray__", False):
        from cujit import cuda

        arr = cuda.as_cuda_array(arr)
    return arr


def _checked_size(size):
    import operator

    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"Reduce: size must be an integer, got {size!r}") from None
    if size < 0:
        raise ValueError(f"Reduce: size must not be negative, got {size}")
    return size


def _result_view(res):
    """``res[:1]`` as a cujit device array (any object with ``__cuda_array_interface__``)."""
    from cujit import cuda

    if not _is_device_array(res):
        raise TypeError(
            f"Reduce: res must be a device array (the result is written to res[0] on the device), "
            f"got {type(res).__name__}"
        )
    view = cuda.as_cuda_array(res)
    if view.ndim != 1 or view.size < 1:
        raise ValueError(
            f"Reduce: res must be a 1-D device array with at least one element, got shape {tuple(view.shape)}"
        )
    return view[:1]


def _first_element(partials, stream):
    """``partials[0]`` as a numpy scalar, copied on ``stream`` (which is then waited for)."""
    import numpy as np

    host = np.empty(1, dtype=partials.dtype)
    partials[:1].copy_to_host(host, stream=stream)
    if stream:
        stream.synchronize()
    return host[0]


reduce = Reduce  # numba-cuda exports both names
