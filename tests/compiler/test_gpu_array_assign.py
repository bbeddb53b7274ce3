"""Stores into array slices on a GPU (and the CPU target) against numpy on fresh random data: scalars broadcast,
arrays copied and broadcast, views that overlap their source, conversions (kernels in array_assign_src.py)."""

import numpy as np
import pytest

import gpu_support

import array_assign_src as S
from cujit import cuda

pytestmark = gpu_support.gpu + [pytest.mark.filterwarnings("ignore::cujit.errors.NumbaPerformanceWarning")]


def on_device_and_host(fn, *args):
    """`fn` run by one GPU thread on copies of the arrays, and run by Python on other copies."""
    device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    cuda.jit(fn)[1, 1](*device)
    host = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fn(*host)
    got = [d.copy_to_host() for d in device if hasattr(d, "copy_to_host")]
    want = [h for h in host if isinstance(h, np.ndarray)]
    return got, want


CASES = [
    (S.fill, lambda r: (r.standard_normal(9), float(r.standard_normal()))),
    (S.copy_part, lambda r: (r.standard_normal(6).astype(np.float32), r.standard_normal(6).astype(np.float32))),
    (S.whole_by_empty_tuple, lambda r: (r.integers(0, 9, 5).astype(np.int32), 41.75)),
    (S.strided_rows, lambda r: (r.standard_normal(4), r.standard_normal((3, 4)).astype(np.float32))),
    (S.shift_up, lambda r: (r.standard_normal(10),)),
    (S.shift_down, lambda r: (r.integers(-99, 99, 10),)),
    (S.reversed_copy, lambda r: (r.standard_normal(7), r.standard_normal(7))),
    (S.column_broadcast, lambda r: (r.standard_normal((4, 1)), r.standard_normal((4, 6)))),
    (S.converting, lambda r: (r.integers(-500, 500, 6).astype(np.int16), r.standard_normal(5))),
]


@pytest.mark.parametrize("fn, make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_slice_stores_match_numpy(rng, fn, make):
    got, want = on_device_and_host(fn, *make(rng))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_slice_store_in_every_thread_of_a_grid(rng):
    @cuda.jit
    def rows(m, v):
        i = cuda.grid(1)
        if i < m.shape[0]:
            m[i, :] = v[i]

    m = np.zeros((300, 7))
    v = rng.standard_normal(300)
    rows[3, 128](m, v)
    np.testing.assert_array_equal(m, np.repeat(v[:, None], 7, axis=1))


def test_a_shape_numpy_cannot_broadcast_stores_nothing(rng):
    a, b = rng.standard_normal(3), rng.standard_normal(8)
    d = cuda.to_device(b)
    cuda.jit(S.reversed_copy)[1, 1](cuda.to_device(a), d)  # b[::-1] = a with 8 != 3: numba raises ValueError
    np.testing.assert_array_equal(d.copy_to_host(), b)
