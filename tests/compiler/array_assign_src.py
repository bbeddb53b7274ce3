"""Kernels that store into array slices (numba's setitem with slices), for test_array_assign.py and
test_gpu_array_assign.py; each also runs as plain Python on numpy arrays, which gives the expected result."""


def fill(a, x):
    a[:] = x


def copy_part(a, b):
    b[1:3] = a[1:3]


def whole_by_empty_tuple(r, x):
    r[()] = x


def strided_rows(a, m):
    m[1:, ::2] = a[:2]


def shift_up(b):
    b[4:] = b[3:-1]


def shift_down(b):
    b[:-1] = b[1:]


def reversed_copy(a, b):
    b[::-1] = a


def column_broadcast(col, m):
    m[:, :] = col


def converting(a, out):
    out[2:] = a[:3]
    out[0] = 1
