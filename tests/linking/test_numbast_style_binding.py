"""A numbast-style binding of a CUDA C++ header (issue 44): a C++ struct with a constructor, a method and
``operator+``, bound from Python with the extension API only. Its type is a library type (``types.Type`` with a
struct model), its C++ functions are ``cuda.declare_device`` C-ABI shims, grouped under one Python name by
``overload_declared`` (the class for its constructor, ``operator.add`` with two overloads chosen by the operand
types) and ``overload_method``; a Python value of the class is a kernel argument (``typeof_impl``) and a global
constant. The kernel compiles and links (the cubin checked for its symbols); on a GPU it runs against NumPy."""

import operator

import numpy as np
import pytest

import gpu_support
from cujit import _core, cuda, types
from cujit.extending import models, overload_declared, overload_method, register_model, typeof_impl

CC = (9, 0)

HEADER = """
struct Vec2 {
  float x, y;
  __device__ Vec2(float x_, float y_) : x(x_), y(y_) {}
  __device__ float norm2() const { return x * x + y * y; }
};
__device__ Vec2 operator+(Vec2 a, Vec2 b) { return Vec2(a.x + b.x, a.y + b.y); }
__device__ Vec2 operator+(Vec2 a, float s) { return Vec2(a.x + s, a.y + s); }
"""

# What a binding generator renders per function: a C-ABI shim (the struct by value, as nvcc passes it).
SHIMS = cuda.CUSource(
    HEADER
    + """
extern "C" __device__ Vec2 vec2_make(float x, float y) { return Vec2(x, y); }
extern "C" __device__ float vec2_norm2(Vec2 v) { return v.norm2(); }
extern "C" __device__ Vec2 vec2_add(Vec2 a, Vec2 b) { return a + b; }
extern "C" __device__ Vec2 vec2_add_scalar(Vec2 a, float s) { return a + s; }
"""
)


class Vec2:
    """The Python side of the struct: values passed to kernels and used as constants."""

    def __init__(self, x, y):
        self.x, self.y = x, y


class Vec2Type(types.Type):
    def __init__(self):
        super().__init__(name="Vec2")


vec2 = Vec2Type()


@register_model(Vec2Type)
class Vec2Model(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("x", types.float32), ("y", types.float32)])


@typeof_impl.register(Vec2)
def _typeof_vec2(val, c):
    return vec2


f32 = types.float32
make = cuda.declare_device("vec2_make", vec2(f32, f32), abi="c", link=[SHIMS])
norm2 = cuda.declare_device("vec2_norm2", f32(vec2), abi="c", link=[SHIMS])
add = cuda.declare_device("vec2_add", vec2(vec2, vec2), abi="c", link=[SHIMS])
add_scalar = cuda.declare_device("vec2_add_scalar", vec2(vec2, f32), abi="c", link=[SHIMS])

overload_declared(Vec2, make)
overload_declared(operator.add, add, add_scalar)


@overload_method(Vec2Type, "norm2")
def _vec2_norm2(v):
    return norm2


ORIGIN = Vec2(0.5, -0.25)  # a global constant of the library type


def kernel(xs, ys, given, out):
    i = cuda.grid(1)
    if i < xs.size:
        a = Vec2(xs[i], ys[i])
        b = a + Vec2(ys[i], 1.0)  # operator+ of two structs
        c = b + xs[i]  # operator+ of a struct and a float
        d = c + given + ORIGIN
        out[i, 0] = d.x
        out[i, 1] = d.y
        out[i, 2] = b.norm2()


def test_the_binding_compiles_and_links():
    compiled = cuda.jit(kernel).compile((f32[::1], f32[::1], vec2_arg(), f32[:, ::1]), cc=CC)
    cubin = compiled.link(CC)
    assert _core.link.cubin_has_symbol(cubin, compiled.entry)  # (the shims are inlined by the link's LTO)


def vec2_arg():
    from cujit import typeof

    t = typeof(Vec2(1.0, 2.0))
    assert isinstance(t, Vec2Type)
    return t


def test_no_declaration_takes_the_operands():
    from cujit.errors import TypingError

    def bad(out, given):
        out[0] = (given + given.x + given).x  # fine
        out[1] = (given + True).x  # bool converts to float32: the scalar overload
        out[2] = (given + out).x  # an array: no declaration takes it

    with pytest.raises(TypingError, match=r"operator '\+' for operands \(Vec2, array[\s\S]*\^"):
        cuda.jit(bad).compile((f32[::1], vec2_arg()), cc=CC)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="linked CUDA C++ runs only on a GPU")
@gpu_support.needs_device("linked CUDA C++")
def test_the_binding_runs():
    rng = np.random.default_rng()
    n = 200
    xs, ys = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    given = Vec2(float(rng.standard_normal()), float(rng.standard_normal()))
    out = np.zeros((n, 3), np.float32)
    cuda.jit(kernel)[4, 64](xs, ys, given, out)
    bx, by = xs + ys, ys + 1
    np.testing.assert_allclose(out[:, 0], bx + xs + np.float32(given.x) + 0.5, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, 1], by + xs + np.float32(given.y) - 0.25, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, 2], bx * bx + by * by, rtol=1e-5)


def test_the_binding_is_keyed_for_the_disk_cache():
    """The kernel's disk-cache key covers the declarations its operators and constructor choose among (their
    symbols, signatures and linked code) and the constant it reads."""
    from cujit import caching

    def key():
        walk = caching.Walk()
        walk.function(kernel)
        return walk.digest(), walk.link_inputs

    first, inputs = key()
    assert key()[0] == first and inputs  # stable, and the shims' CUDA C++ is among what it links
    ORIGIN.x += 1.0
    try:
        assert key()[0] != first
    finally:
        ORIGIN.x -= 1.0
