"""One options type: jit's and compile*'s options are one C++ CompileOptions, built and checked once
(compiler.make_options), whose key() is what a dispatcher's specialisations and the disk cache key on; cujit reads
no option by its string name (``targetoptions`` stays numba's view for users); the default architecture is
defined once."""

import re
from pathlib import Path

import pytest

import cujit
from cujit import _core, compiler, cuda

PACKAGE = Path(cujit.__file__).parent


def options(**given):
    base = dict(
        device=False, abi="numba", abi_info=None, cc=None, fastmath=False, opt=True, debug=False, lineinfo=False
    )
    return compiler.make_options(**{**base, **given})


@pytest.mark.parametrize(
    "field, value", [("lto", True), ("lto", False), ("max_registers", 32), ("boundscheck", False), ("fastmath", True)]
)
def test_the_key_covers_every_option_that_changes_code(field, value):
    assert options(**{field: value}).key() != options().key()


def test_the_carveout_is_set_at_load_not_keyed():
    with_carveout = options(carveout="MaxShared")
    assert with_carveout.carveout == 100 and options().carveout is None
    assert with_carveout.key() == options().key()


def test_jit_builds_its_options_once_and_keeps_them_typed():
    kernel = cuda.jit(lto=False, max_registers=40, shared_memory_carveout="MaxL1", fastmath=True)(lambda a: None)
    o = kernel._compile_options
    assert (o.lto, o.max_registers, o.carveout, o.fastmath) == (False, 40, 0, True)
    assert kernel.targetoptions["max_registers"] == 40  # numba's view, for users
    assert kernel.targetoptions["shared_memory_carveout"] == 0


@pytest.mark.parametrize(
    "given, error, says",
    [
        (dict(max_registers=0), ValueError, "max_registers must be a positive int"),
        (dict(max_registers="32"), ValueError, "max_registers must be a positive int"),
        (dict(shared_memory_carveout="half"), ValueError, "Invalid carveout value"),
        (dict(shared_memory_carveout=101), ValueError, "between -1 and 100"),
        (dict(forceinline=True), ValueError, "Cannot force-inline kernels"),
    ],
)
def test_bad_options_are_refused_at_decoration(given, error, says):
    with pytest.raises(error, match=says):
        cuda.jit(**given)


def test_cujit_reads_no_option_by_its_name():
    reading = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if re.search(r"targetoptions\s*(\.get\(|\[)", p.read_text())
    ]
    assert not reading, reading


def test_each_check_and_the_default_architecture_are_written_once():
    text = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    assert text.count('"Cannot force-inline kernels"') == 1
    assert not re.search(r"\(7,\s*5\)", text)
    assert compiler.DEFAULT_CC == _core.DEFAULT_CC == (7, 5)
    assert options().cc[:2] == _core.DEFAULT_CC


def test_specialisations_are_keyed_by_the_options_alone():
    kernel = cuda.jit(lambda a: None)
    sig = compiler.parse_signature("void(float32[:])")
    compiled = kernel.compile(sig, cc=(9, 0))
    assert kernel._kernels.find(list(sig.args), compiled.options.key()) is compiled
