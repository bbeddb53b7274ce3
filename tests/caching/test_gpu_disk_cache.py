"""The disk cache and ahead-of-time bundles on a GPU: a second process loads a kernel that links CUDA C++ from the
cache, its module's setup callback runs (it fills a table the kernel reads), and the results match numpy on fresh
random data; a bundle built by ``python -m cujit.aot`` serves a program with no compile."""

import os
import subprocess
import sys


import gpu_support

from cujit import cuda

import programs

pytestmark = gpu_support.gpu + [
    gpu_support.needs_device("cubins in the disk cache and in ahead-of-time bundles, with linked CUDA C++")
]

PROGRAM = r'''
import json, os, sys
import numpy as np
import cujit
from cujit import cuda

SRC = r"""
__device__ float table[4];
extern "C" __device__ int scaled_mul(float* r, float x, float y) { *r = x * y * table[2]; return 0; }
"""
ran = []
def setup(module):
    ptr, size = module.get_global("table")
    cuda.driver.memcpy_htod(ptr, np.array([0, 0, 3, 0], np.float32))
    ran.append("setup")
lib = cuda.CUSource(SRC, name="scaled.cu", setup_callback=setup)
scaled_mul = cuda.declare_device("scaled_mul", "float32(float32, float32)", link=[lib])
HERE = os.path.dirname(os.path.abspath(__file__))

@cuda.jit(cache=True, link=[os.path.join(HERE, "plus.cu")])
def k(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = scaled_mul(x[i], y[i])

rng = np.random.default_rng()
x, y = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
r = cuda.device_array(1000, np.float32)
k[4, 256](r, cuda.to_device(x), cuda.to_device(y))
ok = bool(np.allclose(r.copy_to_host(), x * y * 3, rtol=1e-6))
s = cujit.stats()
print(json.dumps({"ok": ok, "setup": ran.count("setup"), "hits": s["cache hits"], "compiles": s["compiles"],
                  "stages": sorted(s["stages"])}))
'''


def run(tmp_path):
    return programs.run(
        [tmp_path / "prog.py"],
        dict(os.environ, CUJIT_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0"),
    )


def test_second_process_runs_a_linked_kernel_from_the_cache(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "plus.cu").write_text('extern "C" __device__ int plus(float* r, float x) { *r = x + 1; return 0; }\n')
    first = run(tmp_path)
    assert first == {**first, "ok": True, "setup": 1, "hits": 0, "compiles": 1}
    second = run(tmp_path)
    assert second == {**second, "ok": True, "setup": 1, "hits": 1, "compiles": 0}
    assert not {"typing", "NVRTC", "nvJitLink", "LLVM optimisation"} & set(second["stages"]), second


AOT_MODULE = r"""
import numpy as np
from cujit import cuda

SRC = 'extern "C" __device__ int mul(float* r, float x, float y) { *r = x * y; return 0; }\n'
ran = []
lib = cuda.CUSource(SRC, name="mul.cu", setup_callback=lambda m: ran.append("setup"))
mul = cuda.declare_device("mul", "float32(float32, float32)", link=[lib])

@cuda.jit("void(float32[::1], float32[::1], float32[::1])")
def multiply(r, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], y[i])
"""

AOT_PROGRAM = r"""
import json
import numpy as np
import cujit
from cujit import cuda
import kern
rng = np.random.default_rng()
x, y = rng.random(5000, dtype=np.float32), rng.random(5000, dtype=np.float32)
r = cuda.device_array(5000, np.float32)
kern.multiply[20, 256](r, cuda.to_device(x), cuda.to_device(y))
s = cujit.stats()
print(json.dumps({"ok": bool(np.allclose(r.copy_to_host(), x * y)), "setup": kern.ran.count("setup"),
                  "aot": s.get("aot hits", 0), "compiles": s["compiles"], "stages": sorted(s["stages"])}))
"""


def test_an_ahead_of_time_bundle_loads_and_runs(tmp_path):
    (tmp_path / "kern.py").write_text(AOT_MODULE)
    (tmp_path / "prog.py").write_text(AOT_PROGRAM)
    major, minor = cuda.get_current_device().compute_capability
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path), NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0"
    )
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "cujit.aot",
            str(tmp_path / "kern.py"),
            "--arch",
            f"sm_80,sm_{major}{minor}",
            "-o",
            str(tmp_path / "bundle"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    got = programs.run([tmp_path / "prog.py"], dict(env, CUJIT_AOT=str(tmp_path / "bundle")), cwd=tmp_path)
    assert got == {**got, "ok": True, "setup": 1, "aot": 1, "compiles": 0}, got
    assert not {"typing", "NVRTC", "nvJitLink", "LLVM optimisation"} & set(got["stages"]), got
