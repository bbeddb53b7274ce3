"""numba's typing semantics before typing (issue 42): a variable's type per assignment, unified only where versions
meet (SSA), and branches the argument types decide pruned before they are typed. Each program is read by both
frontends (source and bytecode) and compiled for the GPU; test_gpu_ssa_and_pruning.py runs them."""

import pytest

from cujit import cuda, types
from cujit.errors import TypingError
from frontends import FRONTENDS, define

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAMS = """
import numpy as np
from cujit import cuda

def strided_sum(x, out, n):
    # the issue's kernel: the loop index re-bound to a float32 after the loop
    tid = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    for s in range(tid, n, stride):
        acc += x[s]
        j = s + 1
    s = np.float32(0.0)
    s += acc
    if tid < out.size:
        out[tid] = s

def rebound(x):
    i = 3
    v = x[i]
    i = 2.5
    return v + i

def joined(c):
    if c > 0:
        y = 1
    else:
        y = 2.5
    return y

def carried(x, n):
    total = 0
    prev = 0
    for i in range(n):
        if i > 0:
            total += prev
        prev = x[i]
    return total

def loops_rebind(x):
    s = 0.0
    for v in (x, x + 1):
        s += v
    for v in ((1.5, 2.5), (3.5, 4.5)):  # the same name, another type: no read joins the two loops' versions
        s += v[0]
    return s

def conflict(c):
    if c > 0:
        y = (1, 2)
    else:
        y = 1.0
    return y

def by_ndim(a):
    if a.ndim == 2:
        return a.shape[1]
    else:
        return a.shape[0]

def by_layout(a):
    return a[0, 0] if a.layout == "C" else a[0]

def maybe_scaled(a, scale=None):
    if scale is None:
        return a[0]
    elif scale is not None and a.ndim == 1:
        return a[0] * scale[0]
    return a[0, 0]

def by_length(t):
    if len(t) == 3:
        return t[2]
    return t[0]

def find(x, v):
    for i in range(x.size):
        if x[i] == v:
            return i
    return None

def narrowed(x, out):
    i = find(x, 3.0)
    if i is not None:
        out[i] = 1.0
    j = find(x, 2.0)
    if j is None:
        out[0] = -1.0
    else:
        out[j] = 2.0

def not_pruned(a, n):
    if n == 2:
        return a.shape[0]
    return 0
"""


def ptx_and_type(frontend, name, sig):
    fn = define(PROGRAMS, frontend)[name]
    return cuda.compile_ptx(fn, sig, device=True)


def test_loop_index_rebound_after_the_loop(frontend):
    fn = define(PROGRAMS, frontend)["strided_sum"]
    ptx, _ = cuda.compile_ptx(fn, "void(float32[::1], float32[::1], int64)")
    assert ".entry" in ptx


def test_each_assignment_has_its_own_type(frontend):
    _, ret = ptx_and_type(frontend, "rebound", "(float32[::1],)")
    assert ret == types.float64  # float32 + 2.5: the index i stayed an int for x[i]


def test_versions_that_meet_unify(frontend):
    _, ret = ptx_and_type(frontend, "joined", "(int64,)")
    assert ret == types.float64
    _, ret = ptx_and_type(frontend, "carried", "(int32[::1], int64)")
    assert ret == types.int64


def test_versions_no_read_joins_stay_apart(frontend):
    assert ptx_and_type(frontend, "loops_rebind", "(int64,)")[1] == types.float64


def test_a_conflict_is_reported_where_it_is_made(frontend):
    with pytest.raises(TypingError, match="Cannot unify") as info:
        ptx_and_type(frontend, "conflict", "(int64,)")
    message = str(info.value)
    assert "'y'" in message and "y = 1.0" in message and "^" in message


def test_ndim_and_layout_prune_branches(frontend):
    assert ptx_and_type(frontend, "by_ndim", "(float32[::1],)")[1] == types.int64
    assert ptx_and_type(frontend, "by_ndim", "(float32[:, ::1],)")[1] == types.int64
    assert ptx_and_type(frontend, "by_layout", "(float32[:, ::1],)")[1] == types.float32
    assert ptx_and_type(frontend, "by_layout", "(float32[:],)")[1] == types.float32


def test_none_arguments_prune_branches(frontend):
    assert ptx_and_type(frontend, "maybe_scaled", "(float32[::1], none)")[1] == types.float32
    assert ptx_and_type(frontend, "maybe_scaled", "(float32[::1], float64[::1])")[1] == types.float64


def test_tuple_length_prunes_branches(frontend):
    assert ptx_and_type(frontend, "by_length", "(UniTuple(int32, 2),)")[1] == types.int32
    assert ptx_and_type(frontend, "by_length", "(Tuple((int32, int32, float64)),)")[1] == types.float64


def test_a_condition_on_values_is_not_pruned(frontend):
    """``n == 2`` depends on a value, not a type: both branches are typed (a float32 has no shape)."""
    with pytest.raises(TypingError, match="shape"):
        ptx_and_type(frontend, "not_pruned", "(float32, int64)")


def test_an_optional_tested_not_none_is_its_value(frontend):
    scope = define(PROGRAMS, frontend)
    scope["find"] = cuda.jit(device=True)(scope["find"])  # (the globals narrowed reads)
    ptx, _ = cuda.compile_ptx(scope["narrowed"], "void(float64[::1], float64[::1])")
    assert ".entry" in ptx
