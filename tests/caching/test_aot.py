"""Ahead-of-time bundles (python/cujit/aot.py) without a GPU: ``python -m cujit.aot`` builds one fatbin per kernel
specialisation holding exactly the cubins nvJitLink links for each architecture, and a program on the fake libcuda
(tests/fake_cuda, a compute 9.0 device) takes the kernel from the bundle: no typing, NVRTC or nvJitLink, setup
callbacks run; a kernel whose code changed is compiled as usual."""

import json
import os
import subprocess
import sys

import pytest

from cujit import _core, aot

import programs

MODULE = """
import numpy as np
from cujit import cuda

SRC = 'extern "C" __device__ int mul(float* r, float x, float y) {{ *r = x * y; return 0; }}\\n'
ran = []
lib = cuda.CUSource(SRC, name="mul.cu", setup_callback=lambda m: ran.append("setup"))
mul = cuda.declare_device("mul", "float32(float32, float32)", link=[lib])

@cuda.jit("void(float32[::1], float32[::1])")
def multiply(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = mul(x[i], np.float32({factor}))

@cuda.jit
def lazy(a):
    a[0] = 1
"""

PROGRAM = """
import json, sys
import numpy as np
import cujit
from cujit import cuda
import kern
r = cuda.device_array(8, np.float32)
kern.multiply[1, 8](r, cuda.to_device(np.ones(8, np.float32)))
s = cujit.stats()
print(json.dumps({"setup": kern.ran.count("setup"), "aot": s.get("aot hits", 0), "compiles": s["compiles"],
                  "stages": sorted(s["stages"])}))
"""

FATBIN_MAGIC = (0xBA55ED50).to_bytes(4, "little")


def write_module(tmp_path, factor=2):
    (tmp_path / "kern.py").write_text(MODULE.format(factor=factor))
    (tmp_path / "prog.py").write_text(PROGRAM)


def run_program(tmp_path, fake_driver, bundle):
    env = dict(
        os.environ,
        CUJIT_CUDA_DRIVER=fake_driver,
        CUJIT_AOT=str(bundle),
        NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
        PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path),
    )
    env.pop("CUJIT_CACHE", None)
    return programs.run([tmp_path / "prog.py"], env, cwd=tmp_path)


def test_bundle_holds_each_architectures_cubin(tmp_path):
    write_module(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cujit.aot",
            str(tmp_path / "kern.py"),
            "--arch",
            "sm_80,sm_90",
            "-o",
            str(tmp_path / "bundle"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "lazy: skipped (no eager signature)" in out.stdout
    index = json.loads((tmp_path / "bundle" / "index.json").read_text())
    (entry,) = [e for e in index["kernels"] if e["noalias"]]
    assert entry["archs"] == ["sm_80", "sm_90a"] and entry["links"][0][0] == "cu"
    fatbin = (tmp_path / "bundle" / entry["fatbin"]).read_bytes()
    assert fatbin[:4] == FATBIN_MAGIC
    cubins = embedded_elfs(fatbin)
    assert sorted(elf_sm(c) for c in cubins) == [80, 90]
    for cubin in cubins:
        assert _core.link.cubin_has_symbol(cubin, entry["symbols"]["sm_80" if elf_sm(cubin) == 80 else "sm_90a"])


def embedded_elfs(fatbin):
    """The ELF images inside a fatbin (uncompressed), each up to the next one (entry headers and padding after
    an image do not disturb reading it)."""
    starts, at = [], fatbin.find(b"\x7fELF")
    while at >= 0:
        starts.append(at)
        at = fatbin.find(b"\x7fELF", at + 1)
    return [fatbin[a:b] for a, b in zip(starts, starts[1:] + [len(fatbin)])]


def elf_sm(cubin):
    """The SM a cubin is for, from its ELF header's e_flags (CUDA's ELF ABI 8 and up: bits 8-15; before: 0-7)."""
    flags = int.from_bytes(cubin[0x30:0x34], "little")
    return (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF


def test_programs_take_kernels_from_the_bundle(tmp_path, fake_driver):
    write_module(tmp_path)
    index = aot.build(str(tmp_path / "kern.py"), ["sm_80", "sm_90"], str(tmp_path / "bundle"))
    sys.modules.pop("kern", None)
    assert [e["noalias"] for e in index["kernels"]] == [True, False]  # and the variant for overlapping arrays
    got = run_program(tmp_path, fake_driver, tmp_path / "bundle")
    assert got["aot"] == 1 and got["compiles"] == 0 and got["setup"] == 1, got
    assert not {"frontend", "typing", "NVRTC", "nvJitLink", "LLVM optimisation"} & set(got["stages"]), got
    write_module(tmp_path, factor=3)  # the code changed: compiled as usual
    changed = run_program(tmp_path, fake_driver, tmp_path / "bundle")
    assert changed["aot"] == 0 and changed["compiles"] == 1 and changed["setup"] == 1


def test_architecture_names_are_checked():
    with pytest.raises(ValueError, match="sm_XY"):
        aot.build("x.py", ["compute_90"])


def test_warming_a_cache(tmp_path, monkeypatch):
    write_module(tmp_path)
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUJIT_CACHE", raising=False)
    aot.build(str(tmp_path / "kern.py"), ["sm_80", "sm_90"], str(tmp_path / "bundle"), warm_cache=True)
    sys.modules.pop("kern", None)
    entries = [f for _, _, files in os.walk(tmp_path / "cache" / "kernel") for f in files]
    # two architectures, each with the variant for overlapping arrays, and the eager compile at import for the
    # current device (no GPU: the default architecture) unless it is one of the two
    from cujit import compiler, linking
    from cujit.cudadrv import devices

    eager = devices.get_current_device().compute_capability if devices.is_available() else compiler.DEFAULT_CC
    assert len(entries) == 4 + (linking.arch_for(eager) not in ("sm_80", "sm_90a"))
    assert "CUJIT_CACHE" not in os.environ
