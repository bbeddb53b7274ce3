"""cuda.literal_unroll (numba's literal_unroll): a loop over a heterogeneous tuple runs its body once per element,
each copy typed with that element's type (so the loop variable may be an int in one copy, a float or an array of
another dtype in the next); `break`, `continue` and `else` keep Python's meaning; homogeneous tuples and arrays
stay ordinary loops; a constant list is taken as a tuple; outside a for loop literal_unroll is the identity. Each
kernel compiles for sm_75 and sm_90 (assembled by ptxas through conftest); misuse is a TypingError. The copies'
behaviour (break/continue/else, nested unrolled loops) is checked without a GPU by running the device function on
the host (host_ir) against Python on fresh random data."""

import ctypes
import re
import types

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import literal_unroll
from cujit import boolean, int32, int64, float32, float64, complex128, Tuple, UniTuple
from cujit.errors import TypingError
from host_ir import host_functions

CCS = [(7, 5), (9, 0)]
cc_ids = lambda cc: f"sm_{cc[0]}{cc[1]}"  # noqa: E731


def over_argument(out, t):
    i = 0
    for x in literal_unroll(t):
        out[i] = x * 2
        i += 1


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_heterogeneous_tuple_argument(cc):
    cuda.compile_ptx(over_argument, (float64[:], Tuple([int32, float32, boolean, int64])), cc=cc)


def arrays_of_different_dtypes(out, a, b, c):
    total = 0.0
    for arr in literal_unroll((a, b, c)):
        v = arr[0]  # int32, then float32, then complex128: one variable per copy
        total += abs(v)
    out[0] = total


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_each_copy_is_typed_with_its_element(cc):
    cuda.compile_ptx(arrays_of_different_dtypes, (float64[:], int32[:], float32[:], complex128[:]), cc=cc)


def the_copies(a, b):
    total = 0
    for x in literal_unroll((a, b)):
        total += x
    return total


def test_shared_variables_unify_across_copies():
    _, resty = cuda.compile_ptx(the_copies, (int32, float32), device=True)
    assert resty == float64


def jumps(out, t):
    for x in literal_unroll(t):
        if x < 0:
            continue
        if x > 100:
            break
        out[0] += x
    else:
        out[1] = 1
    for x in literal_unroll(t):
        if x > 100:
            break
        out[2] += x
    else:
        out[3] = 1


@pytest.mark.parametrize("cc", CCS, ids=cc_ids)
def test_break_continue_and_else(cc):
    cuda.compile_ptx(jumps, (float64[:], Tuple([int32, float64, int64, float32])), cc=cc)


def nested(out, t):
    for x in literal_unroll(t):
        for y in literal_unroll((x, 1.5j)):
            out[0] += y.real
        for k in range(3):
            out[1] += x * k


def test_nested_loops_inside_copies():
    cuda.compile_ptx(nested, (float64[:], Tuple([int32, float64])))


def homogeneous(out, t, arr):
    for x in literal_unroll(t):
        out[0] += x
    for y in literal_unroll(arr):
        out[1] += y


def test_homogeneous_containers_are_ordinary_loops():
    ptx, _ = cuda.compile_ptx(homogeneous, (float64[:], UniTuple(int32, 4), float32[:]))
    assert re.search(r"bra(\.uni)?\s", ptx)  # the array loop is a loop


def constant_list(out):
    for x in literal_unroll([1, 2, 3]):
        out[x] = x


def test_constant_list():
    cuda.compile_ptx(constant_list, (int64[:],))


def identity(t):
    u = literal_unroll(t)
    return u[1]


def test_identity_outside_a_loop():
    _, resty = cuda.compile_ptx(identity, (Tuple([int32, float64]),), device=True)
    assert resty == float64


def tuple_target(out, t):
    for a, b in literal_unroll(t):
        out[0] += a * b


def test_unpacking_target():
    cuda.compile_ptx(tuple_target, (float64[:], Tuple([Tuple([int32, float32]), UniTuple(int64, 2)])))


def too_many_arguments(out):
    for x in literal_unroll((1, 2), 3):
        out[0] = x


def bad_body(out, t):
    for x in literal_unroll(t):
        out[0] = x


def test_extra_arguments_are_refused():
    with pytest.raises(TypingError, match=re.escape("literal_unroll() takes exactly one argument")):
        cuda.compile_ptx(too_many_arguments, (float64[:],))


def test_a_copy_that_does_not_type_names_its_element():
    with pytest.raises(TypingError) as e:
        cuda.compile_ptx(bad_body, (float64[:], Tuple([int32, float64[:]])))
    assert "array(float64, 1d, A)" in str(e.value)
    assert "out[0] = x" in str(e.value)


def test_calling_from_python_raises():
    with pytest.raises(RuntimeError, match="only be used inside a CUDA kernel"):
        literal_unroll((1, 2))


# -- the copies' behaviour, run on the host ------------------------------------------------------------------


def jumps_value(a, b, c, d):
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    flags = 0
    for x in literal_unroll((a, b, c, d)):
        if x < 0:
            continue
        if x > 5:
            break
        s0 += x
    else:
        flags += 1
    for x in literal_unroll((a, b, c, d)):
        if x > 5:
            break
        s1 += x
    else:
        flags += 2
    for x in literal_unroll((a, b, c, d)):
        if x < 0:
            continue
        for y in literal_unroll((x, 0.5)):
            s2 += y * 2
    else:
        flags += 4
    return s0 + 10 * s1 + 100 * s2 + 1000 * flags


def test_break_continue_and_else_behave_as_python(tmp_path, rng):
    """The device function, run on the host (host_ir), against the same Python function with literal_unroll
    as the identity."""
    f = host_functions(
        tmp_path,
        [
            (
                "jumps",
                jumps_value,
                float64(int32, float64, int64, float32),
                ctypes.c_double,
                [ctypes.c_int32, ctypes.c_double, ctypes.c_int64, ctypes.c_float],
            )
        ],
    )["jumps"]
    python = types.FunctionType(jumps_value.__code__, dict(jumps_value.__globals__, literal_unroll=lambda t: t))
    for _ in range(500):
        a, c = int(rng.integers(-3, 8)), int(rng.integers(-3, 8))
        b, d = float(rng.uniform(-3, 8)), float(np.float32(rng.uniform(-3, 8)))
        assert f(a, b, c, d) == pytest.approx(python(a, b, c, d), rel=1e-12), (a, b, c, d)


def test_numbas_own_literal_unroll_is_recognised():
    """numba's literal_unroll object (numba.misc.special; numba-cuda re-exports it from numba.cuda.misc.special),
    as numba-cuda's own tests import it, is cujit's: a loop over a tuple of global arrays of different shapes."""
    special = pytest.importorskip("numba.misc.special")
    cases = (np.float64([1.0, 0.0, 2.0]), np.float64([[1.0, 1.5], [4.0, 2.0]]))
    scope = {"literal_unroll": special.literal_unroll, "cases": cases, "np": np}
    exec(
        "def kernel(out):\n    i = 0\n    for case in literal_unroll(cases):\n        out[i] = np.sum(case)\n        i += 1\n",
        scope,
    )
    ptx, _ = cuda.compile_ptx(scope["kernel"], "void(float64[::1])", cc=(9, 0))
    assert ".entry" in ptx
