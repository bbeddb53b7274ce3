"""Runs C-ABI device functions on the host, for tests of their values without a GPU: each function's optimised
LLVM IR (the module cujit gives the NVPTX backend) is retargeted to x86-64, compiled by llc (LLVM 22, the
version cujit is built with) and linked into a shared library that ctypes calls. Only for code that uses no
GPU-only intrinsics (conversions, arithmetic, control flow)."""

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from cujit import compiler


def llvm_ir(pyfunc, signature):
    """The optimised LLVM IR of `pyfunc` compiled as a C-ABI device function of `signature`."""
    fn, sig, options = compiler._prepare(
        pyfunc, signature, None, False, True, False, None, None, "c", None, "ptx", False, None
    )
    return compiler.compile_request(fn, sig, options, output="ptx").code.llvm_ir


def host_functions(workdir, functions):
    """`functions`: (name, pyfunc, signature, ctypes restype, ctypes argtypes) tuples -> {name: ctypes function}.
    Skips the test when llc or a C compiler is missing."""
    llc = shutil.which("llc-22") or "/usr/lib/llvm-22/bin/llc"
    cc = shutil.which("cc") or shutil.which("gcc")
    if not os.access(llc, os.X_OK) or cc is None:
        pytest.skip("llc (LLVM 22) and a C compiler are needed to run device code on the host")
    objects = []
    for name, pyfunc, signature, _, _ in functions:
        ir = llvm_ir(pyfunc, signature)
        symbol = re.search(r"define [^@]*@(\"?[\w.$]+\"?)\(", ir).group(1)
        ir = re.sub(r'target triple = ".*"', 'target triple = "x86_64-pc-linux-gnu"', ir)
        ir = re.sub(r'target datalayout = ".*"\n', "", ir).replace(f"@{symbol}(", f"@{name}(")
        source, obj = workdir / f"{name}.ll", workdir / f"{name}.o"
        source.write_text(ir)
        subprocess.run([llc, "-O2", "-relocation-model=pic", "-filetype=obj", str(source), "-o", str(obj)], check=True)
        objects.append(str(obj))
    library = workdir / "host_functions.so"
    subprocess.run([cc, "-shared", "-o", str(library)] + objects, check=True)
    lib = ctypes.CDLL(str(library))
    out = {}
    for name, _, _, restype, argtypes in functions:
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
        out[name] = f
    return out
