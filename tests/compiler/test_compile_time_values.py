"""Types and functions as values (issue 42), compiled on both frontends: a device function is specialised for
numba's NumberClass, Function and Dispatcher argument types (named as numba names them) and literal sizes; a
value that is not callable is refused where it is called."""

import pytest

from cujit import cuda, types
from cujit.errors import TypingError
from compile_time_values_src import PROGRAM
from frontends import FRONTENDS, define

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)


def test_the_callee_is_specialised_for_the_values(frontend):
    scope = define(PROGRAM, frontend)
    ptx, _ = cuda.compile_ptx(scope["histogram_add"].py_func, "void(uint32[::1])")
    assert ".entry" in ptx
    (argtypes,) = scope["histogram_shared"].overloads
    names = [str(t) for t in argtypes]
    assert names[3:6] == ["class(uint32)", "Literal[int](32)", "Function(cuda.atomic.add)"]
    assert names[6].startswith("Dispatcher(cast_none")  # "#2"... for another function object of that name
    assert isinstance(argtypes[3], types.NumberClass) and isinstance(argtypes[6], types.Dispatcher)


def test_a_constant_tuple_argument_keeps_its_literals(frontend):
    scope = define(PROGRAM, frontend)
    scope["tuple_constants"].compile("void(uint32[:, ::1], float64[::1])", cc=(9, 0))
    (argtypes,) = scope["fill_shared"].overloads
    assert str(argtypes[1]) == "Tuple(Literal[int](4), Literal[int](8))"


def test_calling_a_value_that_is_not_callable(frontend):
    source = "def f(x):\n    y = x\n    return y(1)\n"
    fn = define(source, frontend)["f"]
    with pytest.raises(TypingError, match=r"cannot call a value of type float64") as info:
        cuda.compile_ptx(fn, "(float64,)", device=True)
    assert "y(1)" in str(info.value) and "^" in str(info.value)


def test_tuple_of_a_tuple_is_itself(frontend):
    fn = define("def f(x):\n    t = tuple((x, x + 1.5))\n    return t[1]\n", frontend)["f"]
    assert cuda.compile_ptx(fn, "(int64,)", device=True)[1] == types.float64


def test_numba_cudas_own_stubs_are_cujits_names(frontend):
    """numba-cuda's vector-type stub classes (numba.cuda.stubs, what its internal vector_types table hands out)
    resolve to cujit's names of the same name."""
    stub = type("float32x2", (), {"__module__": "numba.cuda.stubs"})
    fn = define("def f(x):\n    v = stub(x, x + 1)\n    return v.y\n", frontend, {"stub": stub})["f"]
    assert cuda.compile_ptx(fn, "(float32,)", device=True)[1] == types.float32
