"""The launch fast path on a GPU: every argument kind in one kernel, CuPy and PyTorch arrays (strided views,
F order, readonly, zero-size, 0-d), DLPack from both, producer-stream ordering, streams given every way, and
eight threads launching at once; results checked against numpy on fresh random data."""

import numpy as np
import pytest

import gpu_support

from cujit import cuda

from threads import run_threads

pytestmark = gpu_support.gpu

cp = pytest.importorskip("cupy") if gpu_support.GPU_AVAILABLE else None
torch = pytest.importorskip("torch") if gpu_support.GPU_AVAILABLE else None


@pytest.fixture(autouse=True)
def _no_low_occupancy_warnings(monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")


@cuda.jit
def scale(out, x, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@cuda.jit
def mixed(out, dev, cupy_in, torch_in, capsule_in, producer_in, s, n, t, z):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (
            dev[i]
            + 2 * cupy_in[i]
            + 3 * torch_in[i]
            + 4 * capsule_in[i]
            + 5 * producer_in[i]
            + s * n
            + t[0] * t[1]
            + z.imag
        )


class _DLPackOnly:
    """A producer with __dlpack__ and __dlpack_device__ only (no __cuda_array_interface__)."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __dlpack__(self, stream=None):
        return self._tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_every_argument_kind_in_one_kernel(rng):
    n = 1000
    data = [rng.random(n).astype(np.float32) for _ in range(5)]
    out = cp.empty(n, dtype=cp.float32)
    dev = cuda.to_device(data[0])
    t = torch.from_numpy(data[2]).cuda()
    capsule = torch.from_numpy(data[3]).cuda().__dlpack__()
    producer = _DLPackOnly(cp.asarray(data[4]))
    mixed[(n + 127) // 128, 128](
        out, dev, cp.asarray(data[1]), t, capsule, producer, np.float32(1.5), 3, (2, 0.5), 1 + 0.25j
    )
    expected = data[0] + 2 * data[1] + 3 * data[2] + 4 * data[3] + 5 * data[4] + np.float32(1.5) * 3 + 1.0 + 0.25
    np.testing.assert_allclose(cp.asnumpy(out), expected, rtol=1e-6)


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_cupy_and_torch_arrays_without_copies(rng):
    host = rng.random(1 << 16).astype(np.float32)
    x = cp.asarray(host)
    out = cp.empty_like(x)
    scale[256, 256](out, x, 2.0)
    np.testing.assert_allclose(cp.asnumpy(out), 2 * host, rtol=1e-6)
    t = torch.from_numpy(host).cuda()
    o = torch.empty_like(t)
    stream = torch.cuda.current_stream().cuda_stream
    scale[256, 256, stream](o, t, 2.0)
    np.testing.assert_allclose(o.cpu().numpy(), 2 * host, rtol=1e-6)
    scale[256, 256](o, t.__dlpack__(), 3.0)  # a DLPack capsule
    np.testing.assert_allclose(o.cpu().numpy(), 3 * host, rtol=1e-6)


@cuda.jit
def affine2d(out, x):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        out[i, j] = 2 * x[i, j] + 1


@cuda.jit
def total(out, x):
    out[()] = x[()] * 2


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_strided_f_order_zero_size_and_0d(rng, library):
    host = rng.random((48, 40))
    if library == "cupy":
        base = cp.asarray(host)
        views = [base[::2, 1::3], cp.asfortranarray(base), base.T, base[5:5]]
        to_host, empty_like = cp.asnumpy, cp.zeros_like
        zero_d, out0 = cp.asarray(np.float64(4.5)), cp.zeros((), cp.float64)
    else:
        base = torch.from_numpy(host).cuda()
        views = [base[::2, 1::3], base.t(), base.t().contiguous().t(), base[5:5]]
        to_host, empty_like = (lambda t: t.cpu().numpy()), torch.zeros_like
        zero_d, out0 = (
            torch.tensor(4.5, dtype=torch.float64, device="cuda"),
            torch.zeros((), dtype=torch.float64, device="cuda"),
        )
    for view in views:
        out = empty_like(view)
        affine2d[(8, 8), (8, 8)](out, view)
        np.testing.assert_allclose(to_host(out), 2 * to_host(view) + 1)
    total[1, 1](out0, zero_d)
    assert float(to_host(out0)) == 9.0


class _ReadOnly:
    def __init__(self, array):
        desc = dict(array.__cuda_array_interface__)
        desc["data"] = (desc["data"][0], True)
        self.__cuda_array_interface__ = desc
        self._keep = array


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_readonly_cai_arrays(rng):
    host = rng.random(300)
    out = cp.zeros(300)
    scale[3, 128](out, _ReadOnly(cp.asarray(host)), 4.0)
    np.testing.assert_allclose(cp.asnumpy(out), 4 * host)
    sig = [s for s in scale.signatures if str(s[1]).startswith("readonly")]
    assert sig, scale.signatures


@cuda.jit
def add_one(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_producer_stream_ordering(rng):
    """CuPy names its current stream in the CAI (v3); the launch waits for its work before reading."""
    n = 1 << 20
    host = rng.random(n).astype(np.float32)
    side = cp.cuda.Stream(non_blocking=True)
    big = cp.asarray(rng.random((2048, 2048)).astype(np.float32))
    with side:
        for _ in range(5):  # several ms of work on the side stream
            prod = big @ big
        x = cp.asarray(host) + prod[0, 0] * 0
        out = cp.empty_like(x)
        add_one[n // 256, 256](out, x)  # launched on the legacy default stream
    cuda.synchronize()
    side.synchronize()
    np.testing.assert_allclose(cp.asnumpy(out), host + 1, rtol=1e-6)
    # PyTorch (CAI v2: no stream) on its own side stream, launched on that stream.
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        t = torch.from_numpy(host).cuda(non_blocking=False) * 1
        o = torch.empty_like(t)
        add_one[n // 256, 256, ts.cuda_stream](o, t)
    ts.synchronize()
    np.testing.assert_allclose(o.cpu().numpy(), host + 1, rtol=1e-6)


class _StreamProtocol:
    def __init__(self, handle):
        self._handle = handle

    def __cuda_stream__(self):
        return (0, self._handle)


def test_streams_every_way(rng):
    host = rng.random(1024)
    x = cuda.to_device(host)
    s = cuda.stream()
    for stream in (0, s, s.handle, _StreamProtocol(s.handle), cuda.default_stream(), cuda.per_thread_default_stream()):
        out = cuda.device_array_like(x)
        scale[[4], [256], stream](out, x, 3.0)
        cuda.synchronize()
        np.testing.assert_allclose(out.copy_to_host(), 3 * host)


def test_eight_threads_launch_at_once(rng):
    n, rounds = 4096, 200
    hosts = [rng.random(n) for _ in range(8)]

    def worker(k):
        stream = cuda.stream()
        acc = cuda.to_device(np.zeros(n), stream=stream)
        x = cuda.to_device(hosts[k], stream=stream)
        for _ in range(rounds):
            add_into[n // 128, 128, stream](acc, x)
        result = acc.copy_to_host(stream=stream)
        stream.synchronize()
        return result

    results = run_threads(worker, 8, together=False)
    for k in range(8):
        np.testing.assert_allclose(results[k], rounds * hosts[k], rtol=1e-12)


@cuda.jit
def add_into(acc, x):
    i = cuda.grid(1)
    if i < x.size:
        acc[i] += x[i]


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_errors_name_the_argument():
    x = cp.zeros(10, cp.float32)
    with pytest.raises(TypeError, match="kernel argument 1: unsupported DLPack dtype"):
        scale[1, 32](x, torch.zeros(10, dtype=torch.bfloat16, device="cuda").__dlpack__(), 1.0)
    with pytest.raises(TypeError, match="kernel argument 1: a DLPack tensor on device type 1"):
        scale[1, 32](x, torch.zeros(10).__dlpack__(), 1.0)

    @cuda.jit("void(float32[:], float32[:], float32)")
    def eager(out, x, a):
        out[0] = x[0] * a

    with pytest.raises(TypeError, match="No matching definition"):
        eager[1, 1](x, cp.zeros(10, cp.float64), 1.0)


class _Protocol:
    """The same array seen only through its __cuda_array_interface__."""

    def __init__(self, obj):
        self.__cuda_array_interface__ = obj.__cuda_array_interface__


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_cupy_and_torch_readers_agree_with_their_protocol():
    from cujit import _core

    objects = [
        cp.zeros((6, 8), cp.float32)[:, ::2],
        cp.asfortranarray(cp.zeros((3, 4), cp.int16)),
        cp.zeros(0),
        cp.zeros((5, 7), cp.complex64).T,
        cp.asarray(np.float64(2.0)),
        torch.zeros(6, 3, device="cuda")[::2],
        torch.zeros(2, 5, dtype=torch.complex64, device="cuda"),
        torch.zeros(4, 2, dtype=torch.int8, device="cuda").t(),
        torch.zeros(0, device="cuda"),
        torch.zeros((), dtype=torch.bool, device="cuda"),
        torch.zeros(3, 4, device="cuda")[1:, 2:],
        torch.zeros(4, dtype=torch.bfloat16, device="cuda"),
    ]
    if hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):  # PyTorch >= 2.10: one C call reads a tensor
        assert _core.launch.reader_of(torch.Tensor) == "torch (DLPack exchange)"
    for obj in objects:
        fast, protocol = _core.launch.read_array(obj, 0, None), _core.launch.read_array(_Protocol(obj), 0, None)

        def fields(read):
            return read and (read.data, read.nitems, read.itemsize, read.shape, read.strides)

        assert fields(fast) == fields(protocol), (obj, fields(fast), fields(protocol))
        assert _core.launch.array_type(obj) == _core.launch.array_type(_Protocol(obj))
    # CuPy's Cython fields are read in place after the first array confirmed their layout, so every CuPy array
    # after the first above was read there.
    assert _core.launch.reader_of(cp.ndarray) == "cupy (in place)"


@gpu_support.needs_device("CuPy and PyTorch arrays on a GPU")
def test_tensors_that_need_grad_are_refused_as_their_protocol_does():
    t = torch.zeros(8, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        scale[1, 32](cp.zeros(8, cp.float32), t, 1.0)
