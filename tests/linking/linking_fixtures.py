"""Inputs of every link kind, built from tests/data/linking/device_functions.cu for one architecture:
``.ptx`` and ``.ltoir`` by NVRTC (cujit's own binding), ``.cubin .fatbin .o .a`` by nvcc when it exists."""

import os
import shutil
import subprocess

from cujit import _core, linking

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "linking")
SOURCE = os.path.join(DATA, "device_functions.cu")


def nvcc():
    for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and os.path.isfile(os.path.join(d, "bin", "nvcc")):
            return os.path.join(d, "bin", "nvcc")
    return shutil.which("nvcc")


def build_inputs(arch, out_dir, source=SOURCE, stem="device_functions"):
    """{extension: path} for ``arch`` ("sm_80", "sm_90a"): every kind nvcc (if present) and NVRTC can make."""
    os.makedirs(out_dir, exist_ok=True)
    made = {}
    text = open(source).read()
    ptx, _, _ = _core.nvrtc.compile(text, os.path.basename(source), arch, include_dirs=linking.nvrtc_include_dirs())
    made[".ptx"] = _write(out_dir, stem + ".ptx", ptx.encode())
    ltoir, _, _ = _core.nvrtc.compile(
        text, os.path.basename(source), arch, lto=True, include_dirs=linking.nvrtc_include_dirs()
    )
    made[".ltoir"] = _write(out_dir, stem + ".ltoir", ltoir)
    made[".cu"] = source
    compiler = nvcc()
    if compiler is None:
        return made
    sm = arch.rstrip("af")
    gencode = f"-gencode=arch=compute_{sm[3:]},code={arch}"

    def run(*args):
        subprocess.run([compiler, "-rdc=true", "-O3", *args], check=True, capture_output=True)

    run("-cubin", f"-arch={arch}", source, "-o", os.path.join(out_dir, stem + ".cubin"))
    run(
        "-fatbin", gencode, "-gencode=arch=compute_75,code=sm_75", source, "-o", os.path.join(out_dir, stem + ".fatbin")
    )
    run("-dc", gencode, source, "-o", os.path.join(out_dir, stem + ".o"))
    run("-lib", gencode, source, "-o", os.path.join(out_dir, stem + ".a"))
    for ext in (".cubin", ".fatbin", ".o", ".a"):
        made[ext] = os.path.join(out_dir, stem + ext)
    return made


def _write(out_dir, name, data):
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path
