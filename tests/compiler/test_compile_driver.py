"""The compile driver (cpp/src/compiler/compile_kernel.cpp) and targets as objects (cujit/kernel_target.h,
``cujit._target``): one call of ``_core.compile_kernel`` types a function and answers its target's code; a dispatcher
holds a ``Target`` value and one class serves both targets; errors of any stage are located."""

import pickle

import numpy as np
import pytest

from cujit import _core, _target, compiler, cuda, errors
from cujit.dispatcher import CUDADispatcher


def saxpy(out, x, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


SIG = compiler.parse_signature("void(float32[::1], float32[::1], float32)")


def options(device=False):
    return compiler.make_options(
        device=device, abi="numba", abi_info=None, cc=(8, 0), fastmath=False, opt=True, debug=False, lineinfo=False
    )


def test_one_call_answers_the_typed_function_and_the_gpu_code(ptxas):
    compiled = compiler.compile_request(saxpy, SIG, options(), launchable=True)
    assert isinstance(compiled, _core.CompiledKernel)
    assert isinstance(compiled.code, _core.GpuKernelCode) and isinstance(compiled.code, _core.KernelCode)
    assert compiled.code.kind == "ptx" and not compiled.code.lto
    assert compiled.typed.symbol in compiled.code.ptx and ".entry" in compiled.code.ptx
    assert "define" in compiled.code.llvm_ir
    assert [str(t) for t in compiled.typed.args] == ["array(float32, 1d, C)", "array(float32, 1d, C)", "float32"]
    own = compiled.code.own_input((8, 0))
    assert own.kind == "ptx" and own.name == "<cudapy-ptx>"


def test_output_asked_for_is_made():
    compiled = compiler.compile_request(saxpy, SIG, options(), output="ltoir")
    assert compiled.code.kind == "ltoir" and compiled.code.lto
    assert isinstance(compiled.code.code, bytes) and compiled.code.code[:4] == bytes.fromhex("ed434e7f")
    assert ".entry" in compiled.code.ptx  # made from the typed function when asked for


def test_the_cpu_target_makes_host_code():
    compiled = compiler.compile_request(saxpy, SIG, options(), target=_target.CPU, launchable=True)
    assert isinstance(compiled.code, _core.HostKernel) and isinstance(compiled.code, _core.KernelCode)
    assert not compiled.options.noalias_arrays  # the CPU target's adaptation of the options
    assert "__cujit_host_entry" in compiled.code.llvm_ir


def test_an_unknown_target_is_named():
    with pytest.raises(ValueError, match="unknown compile target 'tpu'"):
        _core.compile_kernel(
            compiler.function_source(saxpy), compiler.Resolver(saxpy), list(SIG.args), None, options(), [], "tpu"
        )


def too_much_shared(out):
    s = cuda.shared.array(16384, dtype=np.float64)
    s[0] = 1.0
    out[0] = s[0]


def test_a_launchable_kernel_is_checked_where_compile_ptx_is_not():
    sig = compiler.parse_signature("void(float64[::1])")
    # cuda.compile's output is left to whoever links it (LTO-IR here: ptxas, which every test's PTX meets, refuses it)
    compiler.compile_request(too_much_shared, sig, options(), output="ltoir")
    with pytest.raises(errors.TypingError) as info:
        compiler.compile_request(too_much_shared, sig, options(), output="ltoir", launchable=True)
    assert "static shared memory" in str(info.value) and "test_compile_driver.py" in str(info.value)


def test_a_typing_error_is_located_at_its_line():
    def bad(out):
        out[0] = undefined_name  # noqa: F821

    with pytest.raises(errors.TypingError) as info:
        compiler.compile_request(bad, compiler.parse_signature("void(float32[::1])"), options())
    assert "undefined_name" in str(info.value) and "^" in str(info.value)


def test_the_cpu_target_refuses_linked_gpu_code(tmp_path):
    ptx = tmp_path / "f.ptx"
    ptx.write_text(".version 8.0\n.target sm_80\n.address_size 64\n")
    kernel = cuda.jit(link=[str(ptx)], target="cpu")(saxpy)
    with pytest.raises(NotImplementedError, match=r"links 'f\.ptx' \(ptx\).*cannot run on the CPU target"):
        kernel[1, 1](np.zeros(1, np.float32), np.zeros(1, np.float32), np.float32(1))


def test_targets_are_values():
    assert _target.resolve_target("CPU") is _target.CPU and _target.resolve_target(_target.CUDA) is _target.CUDA
    assert _target.CPU == "cpu" and _target.CUDA != "cpu" and _target.CPU != _target.CUDA
    assert pickle.loads(pickle.dumps(_target.CPU)) is _target.CPU
    assert _target.CPU.hooks().faces[0].__name__ == "HostKernel"
    assert not _target.CPU.on_gpu and _target.CUDA.on_gpu


def test_one_dispatcher_class_for_both_targets():
    on_cpu = cuda.jit(target="cpu")(saxpy)
    on_gpu = cuda.jit(target="cuda")(saxpy)
    assert type(on_cpu) is type(on_gpu) is CUDADispatcher
    assert on_cpu.target is _target.CPU and on_gpu.target is _target.CUDA
    assert repr(on_cpu).endswith("(target='cpu')>") and "target" not in repr(on_gpu)
    out, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    on_cpu[1, 8](out, x, np.float32(2))
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(NotImplementedError, match="no PTX"):
        on_cpu.inspect_asm()
    assert on_cpu.specialize(out, x, np.float32(2)).target is _target.CPU


def test_noalias_arrays_rule():
    parse = _core.parse_type
    assert _core.noalias_arrays([parse("float32[::1]"), parse("float32[::1]"), parse("float32")]) == 2
    assert _core.noalias_arrays([parse("float32[::1]"), parse("UniTuple(int32, 2)")]) == 0
    assert _core.noalias_arrays([parse("int64"), parse("complex64")]) == 0


def test_the_launch_program_from_python():
    parse = _core.parse_type
    program = _core.launch.argument_program([parse("float32[:, ::1]"), parse("complex64"), parse("voidptr")])
    kinds = [op.kind for op in program.ops]
    LeafKind = _core.launch.LeafKind
    assert kinds == [LeafKind.array, LeafKind.complex, LeafKind.pointer]
    assert [op.slot for op in program.ops] == [0, 1, 3] and len(program.slots) == 4
    assert program.ops[0].type.ndim == 2 and program.ops[2].argument == 2
    with pytest.raises(NotImplementedError, match="kernel argument 1: cujit cannot pass a value of type __nv_bfloat16"):
        _core.launch.argument_program([parse("int32"), parse("bfloat16")])


def test_every_target_lowers_the_options_one_way():
    """codegen::lowering_options: the CPU target's kernels get the debug levels the GPU's get (line tables with
    lineinfo, full debug info with debug)."""
    for flags, emission in (({"lineinfo": True}, "DebugDirectivesOnly"), ({"debug": True, "opt": False}, "FullDebug")):
        kernel = cuda.jit("void(float32[::1], float32[::1], float32)", target="cpu", **flags)(saxpy)
        ir = kernel.inspect_llvm()[tuple(SIG.args)]
        assert f"emissionKind: {emission}" in ir and "!DILocation" in ir, flags
    plain = cuda.jit("void(float32[::1], float32[::1], float32)", target="cpu")(saxpy)
    assert "DICompileUnit" not in plain.inspect_llvm()[tuple(SIG.args)]


def test_an_lto_links_ptx_for_inspection(ptxas):
    """GpuKernelCode.link(ptx=True): the LTO link's optimised PTX (what inspect_lto_ptx shows); a kernel compiled
    without LTO has none."""
    compiled = compiler.compile_request(saxpy, SIG, options(), output="ltoir", launchable=True)
    ptx = compiled.code.link((8, 0), [], None, True).cubin.decode()
    assert ".entry" in ptx and compiled.typed.symbol in ptx
    plain = compiler.compile_request(saxpy, SIG, options(), launchable=True)
    with pytest.raises(ValueError, match="LTO is not enabled"):
        plain.code.link((8, 0), [], None, True)


def test_a_cujit_type_called_with_numba_types_makes_a_signature():
    nt = pytest.importorskip("numba").types
    from cujit import types

    assert str(types.void(nt.float32[:], nt.int32)) == str(types.void(types.float32[:], types.int32))
    with pytest.raises(TypeError, match="expected a type instance"):
        types.void(3)


def test_one_rule_names_a_devices_architecture():
    """The image cache (C++) and Python's linking.arch_for name a device's architecture by one rule."""
    from cujit import linking

    assert linking.arch_for((9, 0)) == _core.device_arch(9, 0) == "sm_90a"
    assert linking.arch_for((8, 6)) == _core.device_arch(8, 6) == "sm_86"
    assert linking.arch_for((10, 0, "f")) == "sm_100f" and linking.arch_for((9, 0, "")) == "sm_90"
