"""Compile time grows at most linearly with the depth of every recursive structure of the language, through both
frontends (from the source, and from the bytecode of a function without it).

For each structure of depth_programs (nested tuples, chains of device functions, nested conditionals, long elif
chains, long expressions, nested loops, records within records, and/or chains, chained comparisons, chains of
conditional expressions), a child process compiles it at depth 20 and
200 (or a tenth of and at CPython's own limit for that structure, see depth_programs.PYTHON_LIMITS) and the time
at the deep end must stay within 10x the shallow one: a stage that walks a structure once per level of its
nesting shows up as 100x or more (nested tuples took 2x per level before). The child runs under a deadline,
so a hang fails the test instead of stalling the suite. The PTX of each deepest program is assembled."""

import os

import pytest

import programs
from depth_programs import PYTHON_LIMITS, STRUCTURES

HERE = os.path.dirname(os.path.abspath(__file__))
DEEP = 200


@pytest.fixture(scope="module")
def sweep():
    pairs = {
        name: (max(1, min(DEEP, PYTHON_LIMITS.get(name, DEEP)) // 10), min(DEEP, PYTHON_LIMITS.get(name, DEEP)))
        for name in STRUCTURES
    }
    depths = sorted({d for pair in pairs.values() for d in pair})
    return pairs, programs.run([os.path.join(HERE, "depth_child.py"), *depths], cwd=HERE, timeout=300)


@pytest.mark.parametrize("frontend", ["source", "bytecode"])
@pytest.mark.parametrize("structure", list(STRUCTURES))
def test_compile_time_is_linear_in_depth(structure, frontend, sweep, register_ptx):
    pairs, results = sweep
    row = results[f"{structure} ({frontend})"]
    assert row["error"] is None, row["error"]
    shallow, deep = pairs[structure]
    times = row["seconds"]
    register_ptx(row["ptx"])
    assert times[str(deep)] <= 10 * times[str(shallow)], (
        f"{structure}: {times[str(deep)] * 1e3:.2f} ms at depth {deep} vs {times[str(shallow)] * 1e3:.2f} ms at "
        f"depth {shallow}"
    )
