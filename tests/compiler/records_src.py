"""Kernels over numpy structured dtypes (numba's Record): field reads and writes by attribute, by name and by
position, nested records, array fields, packed records, whole-record copies and records passed to device
functions. test_records.py compiles them without a GPU; test_gpu_records.py runs them against numpy."""

import numpy as np

from cujit import cuda

POINT = np.dtype(
    [
        ("x", np.float32),
        ("y", np.float64),
        ("flag", np.bool_),
        ("n", np.int16),
        ("v", np.float32, (3,)),
        ("inner", [("a", np.int32), ("b", np.float64)]),
    ],
    align=True,
)
PACKED = np.dtype([("c", np.int8), ("d", np.float64), ("e", np.int32), ("m", np.int16, (2, 2))], align=False)


@cuda.jit(device=True)
def weight(p, scale):
    # A record as a device-function argument: read through the caller's element.
    return (p.x + p["y"]) * scale + p.inner.b


@cuda.jit(device=True)
def bump(p):
    p.n += 1  # writes through to the caller's array element


def point_kernel(points, out):
    i = cuda.grid(1)
    if i < points.shape[0]:
        p = points[i]
        out[i] = weight(p, 2.0) + p.v[0] + p.v[1] + p.v[2]
        p.v[1] = p.x * p.inner.a
        points[i]["y"] = p[0] + 1.0  # by name and by position
        p.flag = not p.flag
        bump(p)
        points[i].inner.a = i


def packed_kernel(recs, out):
    i = cuda.grid(1)
    if i < recs.shape[0]:
        r = recs[i]
        out[i] = r.c + r.d * r.e + r.m[0, 1] + r.m[1, 0]
        r.d = r.d * 2
        r.m[1, 1] = r.c
        recs[i].e = -r.e


def copy_records(src, dst):
    i = cuda.grid(1)
    if i < src.shape[0]:
        dst[i] = src[src.shape[0] - 1 - i]  # whole records, byte for byte
