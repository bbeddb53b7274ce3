"""``import cujit.as_numba`` and ``python -m cujit.as_numba``: cujit standing in for numba.cuda in an unchanged
program, with numba installed and without it (issue 41; docs/as_numba.md). Runs on the CPU target."""

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import numba
    from numba import cuda, float32
    from numba.cuda.random import create_xoroshiro128p_states

    @cuda.jit("void(float32[::1])")
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = float32(2) * x[i]

    a = np.random.default_rng().random(16, dtype=np.float32)
    d = cuda.to_device(a)
    double[1, 16](d)
    assert np.array_equal(d.copy_to_host(), 2 * a)
    assert cuda.__name__ == "cujit.cuda" and create_xoroshiro128p_states.__module__ == "cujit.cuda.random"
    print("OK", numba.__version__, sys.argv[1:])
""")


def run(code_or_args, tmp_path, prelude=""):
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    env = dict(os.environ, CUJIT_TARGET="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    args = code_or_args(program) if callable(code_or_args) else code_or_args
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def test_python_m_runs_a_program_with_numba_installed(tmp_path):
    pytest.importorskip("numba")
    proc = run(lambda p: ["-m", "cujit.as_numba", str(p), "a", "b"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("OK ") and "+cujit" not in proc.stdout and "['a', 'b']" in proc.stdout


def test_without_numba_a_stand_in_gives_the_names(tmp_path):
    code = (
        "import sys, runpy; sys.modules['numba'] = None\n"  # numba is not importable
        "import cujit.as_numba as a; assert a.numba_installed is False\n"
        "from numba.core import types, errors; from numba import from_dtype, int32\n"
        "import cujit; assert types is cujit.types and errors is cujit.errors and int32 is cujit.types.int32\n"
        "runpy.run_path({!r}, run_name='__main__')\n"
    )
    proc = run(lambda p: ["-c", code.format(str(p))], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK 0.0+cujit" in proc.stdout


def test_numba_cuda_imported_first_is_named(tmp_path):
    code = (
        "import sys, types; sys.modules['numba.cuda'] = types.ModuleType('numba.cuda')\n"
        "try:\n    import cujit.as_numba\nexcept RuntimeError as e:\n    print(e)\n"
    )
    proc = run(["-c", code], tmp_path)
    assert "numba.cuda was imported before cujit.as_numba" in proc.stdout, proc.stderr[-2000:]


@pytest.mark.parametrize("package", ["stumpy", "nvmath", "numba_extension_jit"])
def test_real_packages_import_under_as_numba(package, tmp_path):
    """Libraries written for numba-cuda import with cujit standing in (skipped where they are not installed)."""
    pytest.importorskip(package)
    proc = run(["-c", f"import cujit.as_numba; import {package}; print('imported')"], tmp_path)
    assert proc.returncode == 0 and "imported" in proc.stdout, proc.stderr[-3000:]
