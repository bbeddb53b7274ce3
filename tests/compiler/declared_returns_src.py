"""A device function whose signature declares its return type, and a kernel that calls it
(tests/compiler/test_api_forms.py)."""

from cujit import cuda


@cuda.jit("float32(float32)", device=True)
def half_plus_one(x):
    return x * 0.5 + 1.0  # float64 arithmetic: the declared float32 is what callers get


def scale(a):
    a[0] = half_plus_one(a[0]) * 3.0
