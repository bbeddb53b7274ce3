"""LTO-IR output: cuda.compile(output="ltoir") and compile_all, made by libNVVM from
cujit's optimised module (the legacy dialect below compute_100, the modern one from it), proven by nvJitLink
links whose cubins hold the kernel, with libdevice calls, NVRTC's LTO-IR, and random programs."""

import importlib.util
import math
import os
import warnings

import pytest

from cujit import _core, cuda, types
from cujit.compiler import make_options, parse_signature, type_function
from cujit.errors import TypingError, UnsupportedError, NotDefinedError
from random_programs import generate

import link_program_src as src

MAGIC = b"\xed\x43\x4e\x7f"
CCS = [(7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0)]


def add(x, y):
    return x + y


def with_math(x, y):
    return math.sin(x) * math.exp(y) + math.sqrt(abs(x)) + x**3


def test_compile_to_ltoir():
    code, resty = cuda.compile(add, "int32(int32, int32)", output="ltoir")
    assert isinstance(code, bytes) and code[:4] == MAGIC and resty == types.int32
    with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
        cuda.compile(add, "int32(int32, int32)", output="illegal")
    code, _ = cuda.compile(add, "(float32, float32)", output="ltoir", forceinline=True)
    assert code[:4] == MAGIC


def _link_lto(cc, *inputs, entry):
    arch = f"sm_{cc[0]}{cc[1]}"
    cubin, _ = _core.link.link(list(inputs), arch)  # -lto: LTO-IR inputs are present
    assert _core.link.cubin_has_symbol(cubin, entry), f"{entry} missing from the {arch} cubin"
    return cubin


@pytest.mark.parametrize("cc", CCS, ids=[f"sm_{a}{b}" for a, b in CCS])
def test_kernel_ltoir_links_with_nvrtc_ltoir(cc):
    kernel = cuda.jit(lto=True)(src.multiply_vectors).compile("void(float32[::1], float32[::1], float32[::1])", cc=cc)
    own = kernel.code.own_input(cc)
    assert own.kind == "ltoir" and own.data[:4] == MAGIC
    cubin = kernel.link(cc)  # the kernel's LTO-IR and functions.cu through NVRTC -dlto
    assert _core.link.cubin_has_symbol(cubin, kernel.entry)


@pytest.mark.parametrize("cc", [(8, 0), (9, 0), (10, 0)], ids=["sm_80", "sm_90", "sm_100"])
def test_udf_with_libdevice_calls_links_back(cc):
    ltoir, resty = cuda.compile(
        with_math, "float64(float64, float64)", output="ltoir", cc=cc, abi_info={"abi_name": "with_math_udf"}
    )
    assert resty == types.float64 and ltoir[:4] == MAGIC
    udf = cuda.declare_device("with_math_udf", "float64(float64, float64)", abi="c", link=[cuda.LTOIR(ltoir)])

    def kernel(r, x):
        r[0] = udf(x[0], x[1])

    compiled = cuda.jit(kernel).compile("void(float64[::1], float64[::1])", cc=cc)  # PTX kernel, LTO-IR input
    assert _core.link.cubin_has_symbol(compiled.link(cc), compiled.entry)


def test_compile_all_returns_the_link_items(tmp_path):
    ptx_item = tmp_path / "extra.ptx"
    ptx_item.write_text("// an extra PTX input\n")
    helper = cuda.declare_device(
        "add_cabi",
        "uint32(uint32, uint32)",
        abi="c",
        link=[os.path.join(src.DATA, "device_functions.cu"), str(ptx_item)],
    )

    def uses_helper(a, b):
        return helper(a, b) + src.times2(1.0)

    codes, resty = cuda.compile_all(uses_helper, "(uint32, uint32)")
    assert codes[0][:4] == MAGIC and resty == types.float64
    kinds = [(type(c).__name__, c.name) for c in codes[1:]]
    assert kinds == [("LTOIR", "device_functions.cu"), ("PTXSource", "extra.ptx"), ("LTOIR", "times.cu")]
    assert codes[1].data[:4] == MAGIC
    codes, _ = cuda.compile_all(uses_helper, "(uint32, uint32)", output="ptx", lineinfo=True)
    assert isinstance(codes[0], str) and ".visible .func" in codes[0]
    assert type(codes[1]).__name__ == "PTXSource" and ".file" in codes[1].data and "device_functions" in codes[1].data


def _programs(count):
    for seed in range(count):
        program = generate(seed)
        if program.jit or program.options.get("debug"):
            continue
        yield program


def test_random_programs_to_ltoir(tmp_path):
    """Every random program that compiles to PTX also compiles to LTO-IR for compute_80 and compute_100, and
    its kernels survive nvJitLink's -lto."""
    warnings.simplefilter("ignore")
    compiled = 0
    for program in _programs(int(os.environ.get("CUJIT_LTOIR_FUZZ", "150"))):
        path = tmp_path / f"prog_{program.seed}.py"
        path.write_text(program.source)
        spec = importlib.util.spec_from_file_location(f"ltoir_prog_{program.seed}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        options = {k: v for k, v in program.options.items() if k in ("fastmath", "opt", "lineinfo")}
        try:
            cuda.compile_ptx(module.f, program.signature, device=not program.kernel, cc=(8, 0), **options)
        except (TypingError, UnsupportedError, NotDefinedError, TypeError, ValueError):
            continue
        for cc in ((8, 0), (10, 0)):
            opts = make_options(
                device=not program.kernel,
                abi="numba",
                abi_info=None,
                cc=cc,
                fastmath=options.get("fastmath", False),
                opt=options.get("opt"),
                debug=False,
                lineinfo=options.get("lineinfo", False),
            )
            typed = type_function(module.f, parse_signature(program.signature), opts)
            ltoir = _core.compile_ltoir(typed, opts).code
            assert ltoir[:4] == MAGIC, program.source
            if program.kernel:
                _link_lto(cc, ("ltoir", ltoir, "<cudapy-ltoir>"), entry=typed.symbol)
        compiled += 1
    assert compiled >= 50


def saxpy(out, x, y, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_lto_kernel_is_lowered_and_optimised_once(cc):
    """A kernel linked with LTO is compiled straight to LTO-IR from its one optimised module: no PTX made beside
    it, nothing lowered or optimised again at link time. Its PTX is made when inspect_asm asks."""
    import cujit

    kernel = cuda.jit(lto=True)(saxpy)
    cujit.stats(reset=True)
    compiled = kernel.compile("void(float32[::1], float32[::1], float32[::1], float32)", cc=cc)
    cubin = compiled.link(cc)
    stages = cujit.stats()["stages"]
    assert _core.link.cubin_has_symbol(cubin, compiled.entry)
    assert stages["lowering"]["count"] == 1 and stages["LLVM optimisation"]["count"] == 1, stages
    assert "PTX emission" not in stages, stages
    assert ".visible .entry" in compiled.ptx  # inspection still has it, made now
    assert cujit.stats()["stages"]["PTX emission"]["count"] == 1


# Legacy dialect (LLVM 7, typed pointers) below compute_100, the modern one (LLVM 20.1) from it: every family.
LTO_TARGETS = [
    (7, 5),
    (8, 0),
    (8, 9),
    (9, 0, "a"),
    (10, 0),
    (10, 0, "a"),
    (10, 0, "f"),
    (10, 3),
    (11, 0),
    (12, 0),
    (12, 0, "f"),
    (12, 1),
]


def _busy_kernel(out, counts, x):
    tile = cuda.shared.array(128, types.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tile[t] = x[i] if i < x.size else types.float32(0)
    cuda.syncthreads()
    above = cuda.syncthreads_count(tile[t] > 0)
    if cuda.syncthreads_and(tile[t] >= -1) and i < out.size:
        out[i] = tile[(t + 1) % 128] * types.float32(above) + math.sin(tile[t])
    cuda.atomic.inc(counts, 0, types.uint32(1000))
    cuda.atomic.dec(counts, 1, types.uint32(1000))
    cuda.atomic.cas(counts, 2, types.uint32(0), types.uint32(1))  # device-scoped in cujit's IR
    cuda.atomic.max(out, 0, types.float32(above))  # a CAS loop


@pytest.mark.parametrize("cc", LTO_TARGETS, ids=["sm_" + "".join(map(str, cc)) for cc in LTO_TARGETS])
def test_barriers_and_wrapping_atomics_in_both_dialects(cc):
    """bar.sync and its reductions, atom.inc/dec, device-scoped CAS (LLVM 22 spells them otherwise than either NVVM
    dialect) reach libNVVM in its spelling, and nvJitLink links the kernel for the exact architecture."""
    arch = "sm_" + "".join(map(str, cc))
    opts = make_options(
        device=False, abi="numba", abi_info=None, cc=cc, fastmath=False, opt=None, debug=False, lineinfo=False
    )
    typed = type_function(_busy_kernel, parse_signature("void(float32[::1], uint32[::1], float32[::1])"), opts)
    ltoir = _core.compile_ltoir(typed, opts).code
    assert ltoir[:4] == MAGIC
    cubin, _ = _core.link.link([("ltoir", ltoir, "<cudapy-ltoir>")], arch)
    assert _core.link.cubin_has_symbol(cubin, typed.symbol), f"{typed.symbol} missing from the {arch} cubin"
