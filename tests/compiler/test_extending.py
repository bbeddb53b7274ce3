"""numba's extension API at the Python level (issue 44, first part), on both frontends: ``overload`` (several
overloads of one function chosen by the argument types, literal arguments offered without their values first, a
typer asked once per argument types, no overload a typing error at the call), ``overload_method`` and
``overload_attribute`` on numba's type classes, numba's Interval tutorial (a new type with ``typeof_impl``, a
struct model, ``make_attribute_wrapper``, a ``type_callable`` constructor, an attribute), and ``register_jitable`` (a Python function callable from CUDA code
and from Python); the IR-level API a clear NotImplementedError. Compiled
everywhere, run against Python where kernels run."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, extending, types
from cujit import typeof as cujit_typeof
from cujit.errors import TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

LIBRARY = """
from cujit import types
from cujit.extending import overload, overload_attribute, overload_method, register_jitable

asked = []

def scale(x, k):
    return x * k

@overload(scale)
def scale_integers(x, k):
    asked.append((x, k))
    if isinstance(x, types.Integer) and isinstance(k, types.Integer):
        def impl(x, k):
            return x * k + 1000
        return impl

@overload(scale)
def scale_floats(x, k):
    if isinstance(x, types.Float):
        def impl(x, k):
            return x * k + 0.5
        return impl

@register_jitable
def clamp(x, lo, hi):
    return min(max(x, lo), hi)

@overload_method(types.Array, "total_from")
def array_total_from(a, start):
    if a.ndim == 1:
        def impl(a, start):
            s = start
            for i in range(a.size):
                s += a[i]
            return s
        return impl

@overload_attribute(types.Float, "squared")
def float_squared(x):
    def get(x):
        return x * x
    return get

def kernel(out, f, n):
    out[0] = scale(3, 4)
    out[1] = scale(f, 2.0)
    out[2] = clamp(f * 10, 0.0, 5.0)
    out[3] = scale(n, n)
    out[4] = scale(n, 2)

def members(out, a, f):
    out[0] = a.total_from(10.0)
    out[1] = f.squared
    out[2] = (f + 1.0).squared
"""


@pytest.fixture
def library(frontend):
    return define(LIBRARY, frontend)


def test_overloads_compile(library):
    ptx, _ = cuda.compile_ptx(library["kernel"], "void(float64[::1], float64, int32)", cc=(9, 0))
    assert ".entry" in ptx
    # Each distinct argument types asked once; literal arguments first without their values (Literal[int](3) -> int64).
    asked = [(str(x), str(k)) for x, k in library["asked"]]
    assert ("int64", "int64") in asked and ("float64", "float64") in asked and ("int32", "int32") in asked
    assert len(asked) == len(set(asked))
    again = len(library["asked"])
    cuda.compile_ptx(library["kernel"], "void(float64[::1], float64, int32)", cc=(9, 0))
    assert len(library["asked"]) == again  # memoised per argument types


def test_methods_and_attributes_compile(library, frontend):
    ptx, _ = cuda.compile_ptx(library["members"], "void(float64[::1], float64[::1], float64)", cc=(9, 0))
    assert ".entry" in ptx
    fn = define("def f(o, n):\n    o[0] = n.squared\n", frontend)["f"]
    with pytest.raises(TypingError, match="Unknown attribute 'squared' of type int32"):  # Float's only
        cuda.compile_ptx(fn, (types.float64[::1], types.int32), cc=(9, 0))


def test_register_jitable_stays_a_python_function(library):
    assert library["clamp"](12, 0, 5) == 5 and library["scale"](2, 3) == 6


def test_no_overload_is_a_typing_error_at_the_call(library, frontend):
    fn = define("def f(o):\n    o[0] = scale(1j, 2)\n", frontend, {"scale": library["scale"]})["f"]
    with pytest.raises(TypingError, match=r"No implementation of function .*scale\(complex128") as info:
        cuda.compile_ptx(fn, (types.float64[::1],), cc=(9, 0))
    assert "^" in str(info.value)


def test_ir_level_api_names_the_python_level_way(frontend):
    with pytest.raises(NotImplementedError, match="overload or register_jitable"):
        extending.intrinsic  # noqa: B018
    with pytest.raises(NotImplementedError, match="not in cujit yet"):
        extending.box  # noqa: B018


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_overloads_run(library):
    rng = np.random.default_rng()
    f, n = float(rng.uniform(-1, 1)), int(rng.integers(-50, 50))
    out = np.zeros(5)
    cuda.jit(library["kernel"])[1, 1](out, f, np.int32(n))
    np.testing.assert_allclose(out, [3 * 4 + 1000, f * 2 + 0.5, min(max(f * 10, 0.0), 5.0), n * n + 1000, n * 2 + 1000])


INTERVAL = """
import operator

from cujit import cuda, types
from cujit.extending import (
    make_attribute_wrapper, models, overload, overload_attribute, register_model, type_callable, typeof_impl,
)

class Interval:  # numba's extension tutorial, with the Python-level API
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

class IntervalType(types.Type):
    def __init__(self):
        super().__init__(name="Interval")

interval_type = IntervalType()

@typeof_impl.register(Interval)
def typeof_interval(val, c):
    return interval_type

@type_callable(Interval)
def type_interval(context):
    def typer(lo, hi):
        if isinstance(lo, types.Float) and isinstance(hi, types.Float):
            return interval_type
    return typer

@register_model(IntervalType)
class IntervalModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("lo", types.float64), ("hi", types.float64)]
        models.StructModel.__init__(self, dmm, fe_type, members)

make_attribute_wrapper(IntervalType, "lo", "lo")
make_attribute_wrapper(IntervalType, "hi", "high")

@overload_attribute(IntervalType, "width")
def get_width(interval):
    def getter(interval):
        return interval.hi - interval.lo
    return getter

@overload(operator.add)
def interval_add(a, b):
    if isinstance(a, IntervalType) and isinstance(b, IntervalType):
        def impl(a, b):
            return Interval(a.lo + b.lo, a.hi + b.hi)
        return impl

@overload(operator.neg)
def interval_neg(a):
    if isinstance(a, IntervalType):
        return lambda a: Interval(-a.hi, -a.lo)

@overload(operator.lt)
def interval_below(a, b):
    if isinstance(a, IntervalType) and isinstance(b, IntervalType):
        return lambda a, b: a.hi < b.lo

UNIT = Interval(0.0, 1.0)  # a constant of the library type, folded through its model

@cuda.jit(device=True)
def hull(a, b):  # a cuda.compute-style operator: reads two values of the library type, builds a third
    return Interval(min(a.lo, b.lo), max(a.hi, b.hi))

def reduce_hull(items, out):  # an array of the library type's values (records of its model)
    acc = items[0]
    for i in range(1, items.size):
        acc = hull(acc, items[i])
    out[0] = acc

def kernel(out, iv, x):
    out[0] = iv.width
    out[1] = iv.high
    built = Interval(x, x * 3.0)  # the constructor, in CUDA code
    out[2] = built.width
    out[3] = Interval(1.0, 2.5).width
    s = -(iv + UNIT)
    out[4] = s.lo
    out[5] = s.hi
    out[6] = iv < UNIT
    out[7] = UNIT < Interval(x, x) + UNIT
"""


@pytest.fixture
def interval(frontend):
    return define(INTERVAL, frontend)


def test_a_library_type_compiles(interval):
    scope = interval
    t = scope["interval_type"]
    assert isinstance(t, types.Type) and isinstance(t, scope["IntervalType"]) and str(t) == "Interval"
    argtype = cujit_typeof(scope["Interval"](1.0, 2.0))
    assert isinstance(argtype, scope["IntervalType"]) and isinstance(argtype, types.Record)
    ptx, _ = cuda.compile_ptx(scope["kernel"], (types.float64[::1], argtype, types.float64), cc=(9, 0))
    assert ".entry" in ptx


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_the_interval_tutorial_runs(interval):
    rng = np.random.default_rng()
    lo, hi, x = (float(v) for v in rng.uniform(-5, 5, 3))
    out = np.zeros(8)
    cuda.jit(interval["kernel"])[1, 1](out, interval["Interval"](lo, hi), x)
    np.testing.assert_allclose(out, [hi - lo, hi, 2 * x, 1.5, -(hi + 1), -lo, hi < 0, 1 < x])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_methods_and_attributes_run(library):
    rng = np.random.default_rng()
    a, f = rng.standard_normal(7), float(rng.uniform(-2, 2))
    out = np.zeros(3)
    cuda.jit(library["members"])[1, 1](out, a, f)
    np.testing.assert_allclose(out, [10.0 + a.sum(), f * f, (f + 1.0) ** 2], rtol=1e-12)


def test_the_disk_cache_key_follows_the_overloads(library, frontend):
    """A kernel's cache key includes its overloads' typers (an overload added or edited compiles anew), and the
    typers of the methods and attributes its code names."""
    from cujit import caching

    def key(fn):
        walk = caching.Walk()
        walk.function(fn)
        return walk.digest()

    kernel, members = library["kernel"], library["members"]
    before, before_members = key(kernel), key(members)
    assert key(kernel) == before  # stable

    @extending.overload(library["scale"])
    def scale_complex(x, k):
        return None

    @extending.overload_attribute(types.Integer, "squared")
    def integer_squared(x):
        return None

    assert key(kernel) != before and key(members) != before_members


class _Celsius:
    def __init__(self, values):
        self.values = values


class _ToKelvin:
    """An argument handler (numba-cuda's extensions= protocol): a _Celsius becomes an array of kelvins."""

    def __init__(self):
        self.seen = []

    def prepare_args(self, ty, val, stream=None, retr=None):
        self.seen.append(ty)
        if isinstance(val, _Celsius):
            retr.append(lambda: setattr(val, "converted", True))
            return ty, val.values + 273.15
        return ty, val


class _DefaultIn:
    def prepare_args(self, ty, val, **kwargs):
        return ty, cuda.In(val) if isinstance(val, np.ndarray) else val


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_argument_handlers_run(frontend):
    scope = define("def twice(out, t):\n    out[0] = t[0] * 2\n\ndef set3(arr):\n    arr[0] = 3\n", frontend)
    handler = _ToKelvin()
    kernel = cuda.jit(extensions=[handler])(scope["twice"])
    celsius, out = _Celsius(np.random.default_rng().uniform(-50, 50, 1)), np.zeros(1)
    kernel[1, 1](out, celsius)
    np.testing.assert_allclose(out, (celsius.values + 273.15) * 2)
    assert celsius.converted and handler.seen[0] == types.float64[::1] and handler.seen[1] is None
    # appended after the first launch (numba-cuda's tests do so): the next launch applies it
    set3 = cuda.jit(scope["set3"])
    host = np.zeros(1, np.int64)
    set3[1, 1](host)
    assert host[0] == 3
    set3.extensions.append(_DefaultIn())
    host[0] = 0
    set3[1, 1](host)
    # In: copied to the device only (the CPU target passes host memory in place, as numba-cuda's simulator)
    assert host[0] == (3 if gpu_support.ON_CPU_TARGET else 0)


MODELS = """
import numpy as np

from cujit import cuda, types
from cujit.extending import models, overload_method, register_model, type_callable

class Tag:  # a zero-size type: a tag whose methods say what to do
    pass

class TagType(types.Type):
    def __init__(self):
        super().__init__(name="Tag")

tag_type = TagType()

@register_model(TagType)
class TagModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [])

@type_callable(Tag)
def type_tag(context):
    return lambda: tag_type

@overload_method(TagType, "apply")
def tag_apply(tag, x):
    return lambda tag, x: x * 2 + 1

class HandleType(types.Type):  # an opaque handle: passed along, never looked into
    def __init__(self):
        super().__init__(name="Handle")

handle_type = HandleType()
register_model(HandleType)(models.OpaqueModel)

@cuda.jit(device=True)
def pass_along(h, x):
    return h, x + 1

def kernel(out, x):
    t = Tag()
    out[0] = t.apply(x)
    out[1] = use(t, x)

@cuda.jit(device=True)
def use(t, x):
    return t.apply(x + 1)

POINT = np.zeros(1, [("x", np.float64), ("n", np.int32)])[0]
POINT["x"], POINT["n"] = 2.5, 7

def record_constant(out):
    out[0] = POINT.x * POINT.n
"""


@pytest.fixture
def model_library(frontend):
    return define(MODELS, frontend)


def test_zero_size_and_opaque_models(model_library):
    scope = model_library
    tag, handle = (extending._core_type(scope[n]) for n in ("tag_type", "handle_type"))
    assert tag.size == 0 and handle.size == 8 and handle.fields["opaque"][0] == types.voidptr
    ptx, _ = cuda.compile_ptx(scope["kernel"], (types.float64[::1], types.float64), cc=(9, 0))
    assert ".entry" in ptx
    ptx, resty = cuda.compile_ptx(scope["pass_along"], (handle, types.int32), device=True, cc=(9, 0))
    assert resty == types.Tuple((handle, types.int64))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_zero_size_models_and_record_constants_run(model_library):
    x = float(np.random.default_rng().uniform(-5, 5))
    out = np.zeros(2)
    cuda.jit(model_library["kernel"])[1, 1](out, x)
    np.testing.assert_allclose(out, [2 * x + 1, 2 * (x + 1) + 1])
    out = np.zeros(1)
    cuda.jit(model_library["record_constant"])[1, 1](out)
    assert out[0] == 2.5 * 7


def test_a_new_overload_applies_to_later_compiles(frontend):
    scope = define(
        "from cujit import types\n"
        "from cujit.extending import overload\n"
        "def twice(x):\n    return 2 * x\n"
        "@overload(twice)\ndef first(x):\n    if isinstance(x, types.Integer):\n        return lambda x: x + x\n"
        "def f(x):\n    return twice(x)\n",
        frontend,
    )
    _, resty = cuda.compile_ptx(scope["f"], (types.int32,), device=True, cc=(9, 0))
    assert resty == types.int64
    with pytest.raises(TypingError, match=r"No implementation of function twice\(float32\)"):
        cuda.compile_ptx(scope["f"], (types.float32,), device=True, cc=(9, 0))

    @extending.overload(scope["twice"])
    def second(x):
        return lambda x: 2.0 * x

    _, resty = cuda.compile_ptx(scope["f"], (types.float32,), device=True, cc=(9, 0))
    assert resty == types.float64


def test_overloads_from_threads(interval):
    """Eight threads type and compile kernels that use the library's overloads, type and constants at once."""
    import threading

    results, errors = {}, []
    iv = cujit_typeof(interval["Interval"](0.0, 1.0))
    signatures = [
        (out, iv, x) for out in (types.float64[::1], types.float32[::1]) for x in (types.float64, types.float32)
    ]

    def work(k):
        try:
            ptx, _ = cuda.compile_ptx(interval["kernel"], signatures[k % 4], cc=(9, 0), fastmath=k >= 4)
            results[k] = ".entry" in ptx
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(results.values()) and len(results) == 8


def test_the_disk_cache_key_follows_operator_overloads_and_record_constants(interval, model_library, frontend):
    """A kernel's key includes the typers of operator.*'s overloads (its `a + b` names none of them) where it reaches
    a library's types or overloads (not elsewhere: a plain kernel's key is the same in a process without them), and
    the bytes of the record constants it reads (a library type's value, an np.void)."""
    import operator

    from cujit import caching

    if frontend != "source":
        pytest.skip("one frontend suffices: what the key includes does not depend on it")

    def key(fn):
        walk = caching.Walk()
        walk.function(fn)
        walk.operators()
        return walk.digest()

    kernel, constant = interval["kernel"], model_library["record_constant"]
    plain = define("def plain(out, x):\n    out[0] = x + 1\n", "source")["plain"]
    before, before_constant, before_plain = key(kernel), key(constant), key(plain)

    @extending.overload(operator.mul)
    def interval_scale(a, k):
        return None

    assert key(kernel) != before and key(plain) == before_plain
    model_library["POINT"]["n"] = 8
    assert key(constant) != before_constant
    interval["UNIT"].hi = 2.0
    again = key(kernel)
    interval["UNIT"].hi = 1.0
    assert key(kernel) != again


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_an_operator_reduces_an_array_of_library_values(interval):
    from cujit._typeof import record_dtype

    record = extending._core_type(interval["interval_type"])
    dtype = record_dtype(record)
    rng = np.random.default_rng()
    items = np.zeros(33, dtype)
    items["lo"] = rng.uniform(-10, 0, 33)
    items["hi"] = items["lo"] + rng.uniform(0, 5, 33)
    out = np.zeros(1, dtype)
    cuda.jit(interval["reduce_hull"])[1, 1](items, out)
    assert out[0]["lo"] == items["lo"].min() and out[0]["hi"] == items["hi"].max()
    ptx, _ = cuda.compile_ptx(interval["reduce_hull"], (interval["interval_type"][::1],) * 2, cc=(9, 0))
    assert ".entry" in ptx
