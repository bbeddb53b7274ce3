"""Calls of CUDA ufuncs, gufuncs and reductions on the fake libcuda (tests/fake_cuda), run by
test_vectorize_calls.py in a process whose CUJIT_CUDA_DRIVER is the fake: the host side end to end (arguments,
broadcasting, copies, where results go, out=, stream=, errors at call time, how many launches). The fake runs
cujit's kernels as no-ops, so values are not checked here: the GPU tests check them."""

import ctypes
import os

import numpy as np
import pytest

import vectorize_src as S
from cujit import cuda, float32, float64

pytestmark = pytest.mark.skipif("CUJIT_CUDA_DRIVER" not in os.environ, reason="run on the fake driver only")

_fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"]) if "CUJIT_CUDA_DRIVER" in os.environ else None


def launches(call):
    """How many of cujit's kernels ``call()`` launched, and what it returned."""
    _fake.fake_capture_params(0, None)
    result = call()
    return _fake.fake_launches(), result


@pytest.fixture(scope="module")
def add():
    return cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])(S.add)


def test_host_in_host_out(add):
    x = np.ones(10, np.float32)
    count, r = launches(lambda: add(x, x))
    assert count == 1 and isinstance(r, np.ndarray) and r.shape == (10,) and r.dtype == np.float32


def test_device_in_device_out(add):
    d = cuda.to_device(np.ones(10))
    r = add(d, np.ones(10))  # one device input: the result stays on the device
    assert isinstance(r, cuda.DeviceNDArray) and r.shape == (10,) and r.dtype == np.float64
    assert isinstance(add(d, 2.0), cuda.DeviceNDArray)


def test_broadcasting_and_scalars(add):
    assert add(np.ones((3, 1)), np.ones(4)).shape == (3, 4)
    assert add(cuda.to_device(np.ones((3, 1))), np.ones(4)).shape == (3, 4)
    assert add(np.ones((2, 3, 4), np.float32), np.float32(1)).shape == (2, 3, 4)
    assert add(1.0, 2.0).shape == (1,)  # scalars only: numba-cuda's one-element array
    count, r = launches(lambda: add(np.ones(0), np.ones(0)))
    assert count == 0 and r.shape == (0,)
    with pytest.raises(ValueError, match="could not be broadcast together with shapes \\(3,\\) \\(4,\\)"):
        add(np.ones(3), np.ones(4))


def test_out_host_and_device(add):
    x = np.ones((4, 5))
    out = np.empty((4, 5))
    assert add(x, x, out=out) is out
    assert add(x, x, out) is out  # numpy's positional output
    dout = cuda.device_array((4, 5))
    assert add(x, x, out=dout) is dout
    with pytest.raises(ValueError, match="out has shape \\(5, 4\\) but the broadcast inputs have shape \\(4, 5\\)"):
        add(x, x, out=np.empty((5, 4)))
    with pytest.raises(TypeError, match="out has dtype float32 but the ufunc's result for these inputs is float64"):
        add(x, x, out=np.empty((4, 5), np.float32))
    with pytest.raises(ValueError, match="must be C-contiguous"):
        add(x, x, out=cuda.device_array((5, 4)).T)
    with pytest.raises(TypeError, match="out must be a numpy or device array"):
        add(x, x, out=[0.0] * 20)


def test_streams(add):
    s = cuda.stream()
    x = np.ones(100, np.float32)
    assert add(x, x, stream=s).shape == (100,)
    d = cuda.to_device(x, stream=s)
    assert isinstance(add(d, d, stream=s), cuda.DeviceNDArray)


def test_lazy_ufunc_compiles_per_dtypes():
    f = cuda.vectorize(S.sin_scale)
    f(np.ones(3, np.float32), 2.0)
    assert f.types == ["ff->f"]
    f(np.ones(3, np.int32), 2.5)
    assert f.types == ["ff->f", "id->d"]
    f(np.ones(3, np.float32), 3.0)
    assert f.ntypes == 2
    with pytest.raises(TypeError, match="dtype datetime64"):
        f(np.zeros(3, "datetime64[s]"), 1.0)


def test_ufunc_reduce_launches_in_numba_cudas_order(add):
    count, r = launches(lambda: add.reduce(np.ones(5, np.float32)))
    assert count == 3 and isinstance(r, np.float32)  # 5 -> (4 -> 2 -> 1) + the last
    count, _ = launches(lambda: add.reduce(cuda.to_device(np.ones(8))))
    assert count == 3


@pytest.mark.parametrize("n, expected", [(100, 1), (128, 1), (1000, 3), (128 * 64 * 2, 2), (128 * 64 + 3, 3)])
def test_reduce_launches_as_numba_cuda_does(n, expected):
    r = cuda.Reduce(S.add)
    count, value = launches(lambda: r(np.ones(n, np.float32)))
    assert count == expected and type(value) is np.float32


def test_reduce_result_into_res_and_on_streams():
    r = cuda.reduce(S.add)
    res = cuda.device_array(3)
    assert r(cuda.to_device(np.ones(1000)), res=res) is None
    assert type(r(np.ones(10, np.int16), size=5, init=2, stream=cuda.stream())) is np.int16
    with pytest.raises(TypeError, match="res must be a device array"):
        r(np.ones(10), res=np.empty(1))
    with pytest.raises(ValueError, match="at least one element"):
        r(np.ones(10), res=cuda.device_array(0))
    with pytest.raises(TypeError, match="incompatible dtype"):
        r(np.ones(10), res=cuda.device_array(1, np.float32))


def test_gufunc_calls():
    matmul = cuda.guvectorize([(float32[:, :], float32[:, :], float32[:, :])], "(m,n),(n,p)->(m,p)")(S.matmul)
    a, b = np.ones((10, 3, 4), np.float32), np.ones((4, 5), np.float32)
    count, r = launches(lambda: matmul(a, b))
    assert count == 1 and isinstance(r, np.ndarray) and r.shape == (10, 3, 5) and r.dtype == np.float32
    assert isinstance(matmul(cuda.to_device(a), b), cuda.DeviceNDArray)
    out = np.empty((10, 3, 5), np.float32)
    assert matmul(a, b, out=out) is out and matmul(a, b, out) is out
    dout = cuda.device_array((10, 3, 5), np.float32)
    assert matmul(a, b, out=dout) is dout
    assert matmul(cuda.to_device(a), b, out=out) is out  # a host output of a call on the device: filled
    single = np.empty((3, 5), np.float32)
    assert matmul(cuda.to_device(a[0]), b, single) is single  # no loop dimensions
    assert matmul(np.ones((3, 4), np.int16), np.ones((4, 2), np.float32)).dtype == np.float32  # host cast
    with pytest.raises(TypeError, match="device arrays are not cast"):
        matmul(cuda.to_device(np.ones((3, 4), np.int16)), b)


def test_gufunc_scalars_outputs_and_loops():
    scale = cuda.guvectorize([(float32[:], float32, float32[:]), (float64[:], float64, float64[:])], "(n),()->(n)")(
        S.row_scale
    )
    assert scale(np.ones((2, 3, 4), np.float32), 2.0).dtype == np.float32  # a Python float fits float32
    assert scale(np.ones(4), 2.0).shape == (4,)
    assert scale(np.ones((5, 4)), np.arange(5.0)).shape == (5, 4)
    two = cuda.guvectorize([(float64[:], float64[:], float64[:])], "(n)->(),()")(S.sum_and_max)
    total, largest = two(np.ones((6, 3)))
    assert total.shape == (6,) and largest.shape == (6,)
    t, m = np.empty(6), np.empty(6)
    assert two(np.ones((6, 3)), out=(t, m)) == (t, m)
    count, _ = launches(lambda: two(np.ones((0, 3))))
    assert count == 0


def test_lazy_gufunc_compiles_for_the_outputs_given():
    cumsum = cuda.guvectorize("(n)->(n)")(S.cumsum)
    with pytest.raises(TypeError, match="pass its output array"):
        cumsum(np.ones((2, 5)))
    out = np.empty((2, 5), np.int64)
    assert cumsum(np.ones((2, 5), np.int64), out) is out
    assert cumsum.types == ["l->l"] or cumsum.types == ["q->q"]
    assert cumsum(np.ones((3, 5), np.int64)).shape == (3, 5)  # compiled now: no output needed
