"""``cujit.vectorize(..., target="cpu")``: ufuncs whose kernels run on the CPU target, numpy arrays in and out, in
any process (no GPU, driver or stream), against numpy on fresh random data."""

import math
import warnings

import numpy as np
import pytest

import cujit
import gpu_support
from cujit import cuda


def hypot(a, b):
    return math.sqrt(a * a + b * b)


def add(a, b):
    return a + b


@pytest.fixture(scope="module")
def eager():
    return cujit.vectorize(["float64(float64, float64)", "float32(float32, float32)"], target="cpu")(hypot)


def test_eager_signatures_give_numpy_results(eager, rng):
    assert eager.target == "cpu" and eager.types == ["dd->d", "ff->f"] and eager.nin == 2
    assert repr(eager) == "<cujit ufunc hypot (target='cpu', 2 types)>"
    x, y = rng.random((3, 5)), rng.random(5)  # (3, 5) broadcast with (5,)
    got = eager(x, y)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (3, 5)
    np.testing.assert_allclose(got, np.hypot(x, y), rtol=1e-15)
    x32 = x.astype(np.float32)
    got = eager(x32, np.float32(2))  # a numpy scalar picks the float32 signature
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.hypot(x32, np.float32(2)), rtol=1e-6)
    with pytest.raises(TypeError, match=r"No matching version of hypot\(\) for input dtypes \(int64, int64\)"):
        eager(np.arange(3), np.arange(3))


def test_out_is_filled_in_place(eager, rng):
    x = rng.random((4, 6))
    out = np.zeros((4, 6))
    assert eager(x, 1.0, out=out) is out
    np.testing.assert_allclose(out, np.hypot(x, 1.0), rtol=1e-15)
    strided = np.zeros((4, 12))[:, ::2]  # not contiguous: filled from a contiguous result
    assert eager(x, 1.0, strided) is strided  # numpy's positional out
    np.testing.assert_allclose(strided, out, rtol=0)
    with pytest.raises(ValueError, match=r"out has shape \(2,\) but the broadcast inputs have shape \(4, 6\)"):
        eager(x, 1.0, out=np.zeros(2))


def test_lazy_ufunc_compiles_for_the_inputs(rng):
    ufunc = cujit.vectorize(target="cpu")(add)
    a = rng.integers(-100, 100, 50, dtype=np.int32)
    np.testing.assert_array_equal(ufunc(a, 3), a + 3)
    f = rng.random(50, dtype=np.float32)
    np.testing.assert_array_equal(ufunc(f, f), f + f)
    assert ufunc.types == ["ii->l", "ff->f"]  # int32 + int32 is int64 in numba's typing


def test_reduce_folds_on_the_host(eager, rng):
    x = rng.random(37)
    np.testing.assert_allclose(eager.reduce(x), math.sqrt((x * x).sum()), rtol=1e-13)
    assert eager.reduce(np.array([2.5])) == 2.5
    total = cujit.vectorize(["int64(int64, int64)"], target="cpu")(add)
    assert total.reduce(np.arange(1001)) == 500500


def test_no_gpu_occupancy_warning_and_no_stream(eager, monkeypatch):
    monkeypatch.delenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eager(np.ones(3), np.ones(3))
    with pytest.raises(
        TypeError,
        match=r"hypot\(\): a ufunc of target='cpu' runs on the host when it is called: "
        r"stream= is for target='cuda'",
    ):
        eager(np.ones(3), np.ones(3), stream=object())


@pytest.mark.parametrize("target", ["parallel", "gpu"])
def test_other_targets_are_named(target):
    with pytest.raises(ValueError, match=rf"Unsupported target: {target} \(vectorize: the targets are 'cuda', 'cpu'"):
        cujit.vectorize(["float64(float64, float64)"], target=target)


@pytest.mark.gpu  # device arrays: a GPU's, or the process-wide CPU target's
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="no GPU, and the CPU target is not the process's")
def test_device_inputs_are_read_on_the_host(eager, rng):
    x = rng.random(20)
    got = eager(cuda.to_device(x), 0.0)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, np.abs(x), rtol=0)
    with pytest.raises(TypeError, match="out must be a numpy array for a ufunc of target='cpu', got DeviceNDArray"):
        eager(x, 0.0, out=cuda.device_array(20))
