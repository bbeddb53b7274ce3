"""The core answers Python with typed objects, not dictionaries or positional tuples: the driver's and nvJitLink's
status, a device's properties, where a CUDA library was found, a kernel's link, a compile's code, an array argument
as a launch reads it; and the name resolver is a checked interface like Callee (a subclass missing a method the
compiler calls is a TypeError when it is defined)."""

import pytest

from cujit import _core, compiler, toolkit
from cujit._source import Resolver


def test_status_and_libraries_are_typed():
    status = _core.driver.status()
    assert isinstance(status, _core.driver.DriverStatus)
    assert isinstance(status.available, bool) and isinstance(status.reason, str)
    linker = _core.link.status()
    assert isinstance(linker, _core.link.LinkerStatus) and len(linker.version) == 2
    found = toolkit.library("nvrtc")
    assert isinstance(found, _core.toolkit.Located)
    assert found.found == bool(found.path) and isinstance(found.searched, list)
    with pytest.raises(ValueError, match="unknown library 'cudnn'"):
        toolkit.library("cudnn")


def test_a_compile_answers_its_code_typed():
    def add(a, b):
        return a + b

    sig = compiler.parse_signature("int32(int32, int32)")
    options = compiler.make_options(
        device=True, abi="numba", abi_info=None, cc=(9, 0), fastmath=False, opt=True, debug=False, lineinfo=False
    )
    typed = compiler.type_function(add, sig, options)
    compiled = _core.compile_ptx(typed, options, True)
    assert isinstance(compiled, _core.CompiledCode)
    assert compiled.kind == "ptx" and isinstance(compiled.code, str) and compiled.symbol in compiled.code
    assert "define" in compiled.llvm_ir
    lto = _core.compile_ltoir(typed, options)
    assert lto.kind == "ltoir" and isinstance(lto.code, bytes) and lto.code[:4] == bytes.fromhex("ed434e7f")


def test_objects_the_launch_does_not_read_give_none():
    assert _core.launch.read_array(object(), 0, None) is None


def test_the_resolver_is_a_checked_interface():
    assert issubclass(Resolver, _core.Resolver)
    with pytest.raises(TypeError, match="implements Resolver without its method resolve_attribute"):

        class Partial(_core.Resolver):
            def resolve(self, name):
                return None
