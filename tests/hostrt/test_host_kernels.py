"""The CPU target (issue 30): kernels compiled for the host by the same lowering and run on cujit's host runtime
(blocks on worker threads, a block's threads as fibers switching at syncthreads), against numpy. No GPU needed."""

import warnings

import numpy as np
import pytest

from cujit import cuda


def test_saxpy_grid1():
    @cuda.jit(target="cpu")
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    rng = np.random.default_rng()
    n = 1000
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    saxpy[(n + 127) // 128, 128](np.float32(2.5), x, y, out)
    # a * x + y contracts into one fma, as on the GPU: within an ulp of numpy's two roundings.
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=2.5e-7)


def test_thread_and_block_registers_2d():
    @cuda.jit(target="cpu")
    def ids(out):
        x, y = cuda.grid(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y, 0] = cuda.threadIdx.x
            out[x, y, 1] = cuda.threadIdx.y
            out[x, y, 2] = cuda.blockIdx.x
            out[x, y, 3] = cuda.blockIdx.y
            out[x, y, 4] = cuda.blockDim.x * 100 + cuda.blockDim.y
            out[x, y, 5] = cuda.gridDim.x * 100 + cuda.gridDim.y

    out = np.full((20, 13, 6), -1, dtype=np.int32)
    ids[(3, 4), (8, 4)](out)
    xs, ys = np.meshgrid(np.arange(20), np.arange(13), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], xs % 8)
    np.testing.assert_array_equal(out[..., 1], ys % 4)
    np.testing.assert_array_equal(out[..., 2], xs // 8)
    np.testing.assert_array_equal(out[..., 3], ys // 4)
    assert (out[..., 4] == 804).all() and (out[..., 5] == 304).all()


def test_shared_memory_reduction_with_syncthreads():
    @cuda.jit(target="cpu")
    def block_sums(x, out):
        buf = cuda.shared.array(256, dtype=np.float64)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[tid] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = cuda.blockDim.x // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = buf[0]

    rng = np.random.default_rng()
    n = 10_000
    x = rng.random(n)
    blocks = (n + 255) // 256
    out = np.zeros(blocks)
    block_sums[blocks, 256](x, out)
    padded = np.concatenate([x, np.zeros(blocks * 256 - n)])
    np.testing.assert_allclose(out, padded.reshape(blocks, 256).sum(axis=1), rtol=1e-12)


def test_shared_arrays_are_per_block_and_distinct():
    @cuda.jit(target="cpu")
    def two_buffers(out):
        a = cuda.shared.array(32, dtype=np.int32)
        b = cuda.shared.array((4, 8), dtype=np.int32)
        t = cuda.threadIdx.x
        a[t] = t + cuda.blockIdx.x * 1000
        b[t // 8, t % 8] = -t
        cuda.syncthreads()
        out[cuda.blockIdx.x, t] = a[31 - t] + b[(31 - t) // 8, (31 - t) % 8]

    out = np.zeros((6, 32), dtype=np.int32)
    two_buffers[6, 32](out)
    expected = np.arange(6)[:, None] * 1000 + np.zeros(32, dtype=np.int32)[None, :]
    np.testing.assert_array_equal(out, expected)


def test_dynamic_shared_memory():
    @cuda.jit(target="cpu")
    def reverse(x, out):
        buf = cuda.shared.array(0, dtype=np.float32)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncthreads()
        out[t] = buf[buf.size - 1 - t]

    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    reverse[1, 64, 0, 64 * 4](x, out)
    np.testing.assert_array_equal(out, x[::-1])


def test_device_function_reads_registers():
    @cuda.jit(device=True)
    def my_index():
        return cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x

    @cuda.jit(target="cpu")
    def fill(out):
        i = my_index()
        if i < out.size:
            out[i] = i * 2

    out = np.zeros(300, dtype=np.int64)
    fill[3, 128](out)
    np.testing.assert_array_equal(out, np.arange(300) * 2)


def test_eager_signature_and_inspect_llvm():
    @cuda.jit("void(float32[::1])", target="cpu")
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    x = np.zeros(10, dtype=np.float32)
    inc[1, 32](x)
    np.testing.assert_array_equal(x, np.ones(10, dtype=np.float32))
    ir = inc.inspect_llvm("void(float32[::1])")
    assert "__cujit_host_entry" in ir and "nvvm" not in ir


def test_numba_simulator_switch_selects_cpu_target(monkeypatch):
    monkeypatch.delenv("CUJIT_TARGET", raising=False)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")

    @cuda.jit
    def two(x):
        x[cuda.grid(1)] = 2

    assert two.target == "cpu"
    x = np.zeros(4, dtype=np.int16)
    two[1, 4](x)
    assert (x == 2).all()


def test_env_selects_cpu_target(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")

    @cuda.jit
    def one(x):
        x[cuda.grid(1)] = 1

    assert one.target == "cpu"
    x = np.zeros(8, dtype=np.int8)
    one[2, 4](x)
    assert (x == 1).all()


def test_bad_inputs(monkeypatch):
    with pytest.raises(ValueError, match="targets"):
        cuda.jit(target="tpu")
    monkeypatch.setenv("CUJIT_TARGET", "gpu")
    with pytest.raises(ValueError, match="CUJIT_TARGET"):
        cuda.jit(lambda x: None)
    monkeypatch.delenv("CUJIT_TARGET")

    @cuda.jit(target="cpu")
    def k(x):
        x[0] = 1

    with pytest.raises(ValueError, match=r"at most 1024|threads per block"):
        k[1, 2048](np.zeros(1))
    with pytest.raises(TypeError, match="1-d array"):
        k.compile("void(float64[::1])").launch((1, 1, 1), (1, 1, 1), 0, (np.zeros((2, 2)),))


def test_small_grids_are_not_warned_about_gpu_occupancy(monkeypatch):
    monkeypatch.delenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    monkeypatch.delenv("CUJIT_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)

    @cuda.jit(target="cpu")
    def one(x):
        x[cuda.grid(1)] = 1

    x = np.zeros(8, dtype=np.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numba's "Grid size 2 will likely result in GPU under-utilization" fails
        one[2, 4](x)
        one[(1, 1), (2, 4), 0, 0](x)
    assert (x == 1).all()


def test_laneid_and_threadfences():
    @cuda.jit(target="cpu")
    def lanes(out):
        t = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
        out[cuda.blockIdx.x, t] = cuda.laneid
        cuda.threadfence_block()
        cuda.threadfence()
        cuda.threadfence_system()

    out = np.full((2, 80), -1, dtype=np.int32)
    lanes[2, (16, 5)](out)
    np.testing.assert_array_equal(out, np.tile(np.arange(80) % 32, (2, 1)))


def test_only_kernels_with_barriers_run_their_threads_as_fibers():
    @cuda.jit(target="cpu")
    def plain(x):
        x[cuda.grid(1)] += 1

    @cuda.jit(target="cpu")
    def synced(x):
        cuda.syncthreads()
        x[cuda.grid(1)] += 1

    x = np.zeros(64, dtype=np.int32)
    plain[2, 32](x)
    synced[2, 32](x)
    assert (x == 2).all()
    assert not plain.overloads[next(iter(plain.overloads))].native.uses_barrier
    assert synced.overloads[next(iter(synced.overloads))].native.uses_barrier


def native_of(kernel):
    return kernel.overloads[next(iter(kernel.overloads))].native


def test_kernels_that_never_wait_run_a_block_as_one_loop(rng):
    @cuda.jit(target="cpu")
    def ids(out, n):
        t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
        i = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z + t
        if i < n:
            out[i] = cuda.threadIdx.x + 100 * cuda.threadIdx.y + 10000 * cuda.threadIdx.z + 1000000 * cuda.blockIdx.x

    @cuda.jit(target="cpu")
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit(target="cpu")
    def counts(x, total):
        cuda.atomic.add(total, 0, x[cuda.grid(1)])  # a spin point: threads one by one, as before

    @cuda.jit(target="cpu", debug=True, opt=False)
    def checked(x):
        x[cuda.grid(1)] += 1

    n = 3 * 30 - 7
    out = np.full(n, -1, dtype=np.int64)
    ids[3, (5, 3, 2)](out, n)
    t = np.arange(n)
    local = t % 30
    expect = local % 5 + 100 * (local // 5 % 3) + 10000 * (local // 15) + 1000000 * (t // 30)
    np.testing.assert_array_equal(out, expect)
    m = int(rng.integers(1000, 5000))
    x, y = rng.random(m, dtype=np.float32), rng.random(m, dtype=np.float32)
    got = np.zeros(m, dtype=np.float32)
    saxpy[(m + 255) // 256, 256](np.float32(1.5), x, y, got)
    np.testing.assert_allclose(got, np.float32(1.5) * x + y, rtol=2.5e-7)
    total = np.zeros(1, dtype=np.int64)
    counts[4, 64](np.ones(256, dtype=np.int64), total)
    checked[2, 32](np.zeros(64, dtype=np.int32))
    assert total[0] == 256
    assert native_of(ids).runs_as_loop and native_of(saxpy).runs_as_loop
    assert not native_of(counts).runs_as_loop and not native_of(checked).runs_as_loop
    # The loop writes the threads' ids into a copy of the context on its frame: no load of it may be marked
    # invariant (the code generator would move one above the copy's writes: stumpy's gpu_stump read garbage).
    ir = ids.inspect_llvm(ids.signatures[0])
    block = ir.split("define void @__cujit_host_block", 1)[1].split("\n}\n", 1)[0]
    assert "!invariant.load" not in block
