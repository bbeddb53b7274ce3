"""Objects that bring their own link list (``__numba_cuda_link__``, ``__numba_cuda_declare__``) and the
kernels and device functions that call them, for test_link_hooks.py and test_gpu_link_hooks.py."""

import os

import numpy as np

from cujit import cuda, types

C_TYPES = {"float32": "float", "float64": "double"}
SCALE_CU = 'extern "C" __device__ int scale_{t}({c}* r, {c} x, {c} y) {{ *r = x * y; return 0; }}\n'
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "linking")


class Scale:
    """Plays a library object: a declaration per dtype whose hook generates its CUDA C on the spot."""

    def __init__(self, dtype, callbacks=None):
        t = getattr(types, dtype)
        self.dtype, self.calls, self.callbacks = dtype, [], callbacks or {}
        self.device = cuda.declare_device(f"scale_{dtype}", t(t, t))
        self.device.__numba_cuda_link__ = self.link  # an instance attribute

    def link(self, *argtypes):
        self.calls.append(tuple(str(t) for t in argtypes))
        return cuda.CUSource(
            SCALE_CU.format(t=self.dtype, c=C_TYPES[self.dtype]), name=f"scale_{self.dtype}.cu", **self.callbacks
        )


scale32, scale64 = Scale("float32"), Scale("float64")
s32, s64 = scale32.device, scale64.device


def k32(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = s32(x[i], np.float32(2))


def k64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = s64(x[i], 3.0)


def twice_in_one(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = s32(x[i], np.float32(2)) + s32(x[i], np.float32(0.5))


def unused(out, x):
    out[0] = x[0]


@cuda.jit(device=True)
def scale_by_3(v):
    return s32(v, np.float32(3))


def through_device_function(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scale_by_3(x[i])


def udf(v):
    return s32(v, np.float32(4))


# declare_device(link=callable): the hook given at declaration.
shorthand_calls = []


def _shorthand(*argtypes):
    shorthand_calls.append(tuple(str(t) for t in argtypes))
    return [os.path.join(DATA, "functions.cu")]  # a path in a list


mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)", link=_shorthand)


def calls_mul(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = mul(x[i], x[i])


class Failing:
    def __init__(self, result=None, error=None):
        self.device = cuda.declare_device("never_defined", "float32(float32)")
        self.result, self.error = result, error
        self.device.__numba_cuda_link__ = self.link

    def link(self, *argtypes):
        if self.error is not None:
            raise self.error
        return self.result


raising = Failing(error=LookupError("no code for this type"))
returns_number = Failing(result=42)
returns_bad_path = Failing(result=["code.unknown"])
d_raising, d_number, d_bad_path = raising.device, returns_number.device, returns_bad_path.device


def calls_raising(out, x):
    out[0] = d_raising(x[0])


def calls_number(out, x):
    out[0] = d_number(x[0])


def calls_bad_path(out, x):
    out[0] = d_bad_path(x[0])


class Negate:
    """Plays nvmath-python's FFT: no declaration of its own; the symbol and signature depend on the types."""

    def __init__(self):
        self.calls = []
        self.declared = {}

    def __numba_cuda_declare__(self, *argtypes):
        self.calls.append(tuple(str(t) for t in argtypes))
        name = str(argtypes[0])
        if name == "float64":
            return (f"negate_{name}", f"{name}({name})")  # (symbol, signature): no link of its own
        if name not in self.declared:
            t = getattr(types, name)
            source = f'extern "C" __device__ int negate_{name}({C_TYPES[name]}* r, {C_TYPES[name]} x) {{ *r = -x; return 0; }}'
            self.declared[name] = cuda.declare_device(f"negate_{name}", t(t), link=[cuda.CUSource(source)])
        return self.declared[name]


negate = Negate()


def calls_negate(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = negate(x[i])


# ---- for the GPU tests ----------------------------------------------------------------------------------------


class LtoScale:
    """A hook that compiles its CUDA C to LTO-IR itself (NVRTC, for the architecture it is asked about)."""

    def __init__(self, arch):
        self.arch, self.calls = arch, []
        self.device = cuda.declare_device("lto_scale", "float32(float32, float32)")
        self.device.__numba_cuda_link__ = self.link

    def link(self, *argtypes):
        from cujit import _core

        self.calls.append(argtypes)
        source = 'extern "C" __device__ int lto_scale(float* r, float x, float y) { *r = x * y + 1.0f; return 0; }'
        code, _, _ = _core.nvrtc.compile(source, "lto_scale.cu", self.arch, lto=True)
        return cuda.LTOIR(code, name="lto_scale.ltoir")


def make_lto_kernel(device):
    def lto_kernel(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = device(x[i], np.float32(2))

    return cuda.jit(lto_kernel, lto=True)


def _list_hook(*argtypes):
    mul_f32 = 'extern "C" __device__ int add_f32(float* r, float x, float y) { *r = x + y; return 0; }'
    return (os.path.join(DATA, "functions.cu"), cuda.CUSource(mul_f32, name="add.cu"))


listed_mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
listed_mul.__numba_cuda_link__ = _list_hook
listed_add = cuda.declare_device("add_f32", "float32(float32, float32)")


def calls_listed(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = listed_add(listed_mul(x[i], x[i]), x[i])


def negate_kernel(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = negate(x[i]) * 2
