"""cuda.cg.this_grid() is typed as numba-cuda's GridGroup (the type's name in typing, results and messages), and
its sync() is the only method a grid group has."""

import re

import pytest

from cujit import cuda, int32
from cujit.errors import TypingError


def the_grid():
    return cuda.cg.this_grid()


def test_this_grid_is_a_grid_group():
    _, resty = cuda.compile_ptx(the_grid, (), device=True)
    assert str(resty) == "GridGroup"


def grid_plus_one(a):
    g = cuda.cg.this_grid()
    a[0] = g + 1


def grid_unknown_method(a):
    g = cuda.cg.this_grid()
    g.size()


@pytest.mark.parametrize(
    "fn, message",
    [
        (grid_plus_one, "No implementation of operator '+' for operands (GridGroup, Literal[int](1))"),
        (grid_unknown_method, "Unknown attribute 'size' of type GridGroup"),
    ],
)
def test_messages_name_the_grid_group_type(fn, message):
    with pytest.raises(TypingError, match=re.escape(message)):
        cuda.compile_ptx(fn, (int32[:],))


def synced(a):
    g = cuda.cg.this_grid()
    a[0] = 1
    g.sync()


def test_sync_compiles():
    ptx, _ = cuda.compile_ptx(synced, (int32[:],))
    assert "cudaCGSynchronize" in ptx
