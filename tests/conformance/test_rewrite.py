"""The conformance harness's rewriting of numba-cuda's tests (tests/conformance/run.py): the public API's imports
become cujit's, numba-cuda's test helpers and configuration stay numba-cuda's, internals are named."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # noqa: E402


def test_public_imports_become_cujits():
    source = (
        "from numba import cuda\n"
        "from numba import cuda, types, float32\n"
        "from numba.cuda import float64, void\n"
        "from numba.cuda.random import create_xoroshiro128p_states\n"
        "import numba.cuda as cu\n"
        "from numba.cuda.testing import CUDATestCase, skip_on_cudasim\n"
        "from numba.cuda.core import config\n"
        "    from numba import cuda\n"
    )
    out, internal = run.rewrite(source)
    lines = out.splitlines()
    assert lines[0] == "from cujit import cuda"
    assert lines[1] == "from cujit import cuda, types; from numba import float32"
    assert lines[2] == "from cujit.cuda import float64, void"
    assert lines[3] == "from cujit.cuda.random import create_xoroshiro128p_states"
    assert lines[4] == "import cujit.cuda as cu"
    assert lines[5] == "from numba.cuda.testing import CUDATestCase, skip_on_cudasim"
    assert lines[6] == "from numba.cuda.core import config"
    assert lines[7] == "    from cujit import cuda"
    assert internal == []


def test_internals_are_named():
    _, internal = run.rewrite("from numba.cuda.cudadrv import nvvm\nfrom numba.cuda.core import ir\n")
    assert internal == ["numba.cuda.core", "numba.cuda.cudadrv"]


def test_result_files_are_named_below_the_suites_root():
    assert run._test_file("numba.cuda.tests.cudapy.test_array.TestCudaArray") == "cudapy/test_array.py"
    assert run._test_file("conformance_tests.cudapy.test_array.TestCudaArray") == "cudapy/test_array.py"
