"""LinkableCode (PTXSource, CUSource, Cubin, Fatbin, Object, Archive, LTOIR) and the items ``link=`` accepts: kinds,
names, data forms, callbacks, paths by extension, and the errors of bad items."""

import io
import os

import pytest

from cujit import cuda, errors, linking
from cujit.linkable_code import LinkableCode

CLASSES = {
    ".ptx": (cuda.PTXSource, "ptx", "<unnamed-ptx>"),
    ".cu": (cuda.CUSource, "cu", "<unnamed-cu>"),
    ".cubin": (cuda.Cubin, "cubin", "<unnamed-cubin>"),
    ".fatbin": (cuda.Fatbin, "fatbin", "<unnamed-fatbin>"),
    ".o": (cuda.Object, "object", "<unnamed-object>"),
    ".a": (cuda.Archive, "library", "<unnamed-archive>"),
    ".ltoir": (cuda.LTOIR, "ltoir", "<unnamed-ltoir>"),
}


@pytest.mark.parametrize("ext", sorted(CLASSES))
def test_from_path_picks_the_class_by_extension(tmp_path, ext):
    cls, kind, default_name = CLASSES[ext]
    path = tmp_path / f"code{ext}"
    path.write_bytes(b"contents")
    obj = cuda.LinkableCode.from_path(str(path))
    assert type(obj) is cls and obj.kind == kind and obj.name == "code"
    assert obj.data in (b"contents", "contents")
    assert cuda.LinkableCode.from_path_or_obj(str(path)).kind == kind
    assert cls(b"x").name == default_name


def test_from_path_or_obj_returns_objects_unchanged():
    obj = cuda.PTXSource(".version 8.0")
    assert cuda.LinkableCode.from_path_or_obj(obj) is obj


def test_from_path_checks_the_extension_before_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"Unknown extension: \.txt"):
        LinkableCode.from_path(str(tmp_path / "missing.txt"))  # missing and unknown: the extension is named
    with pytest.raises(FileNotFoundError):
        LinkableCode.from_path(str(tmp_path / "missing.ptx"))


def test_data_forms_and_lazy_streams():
    assert cuda.CUSource("int x;").data == "int x;"
    assert bytes(cuda.Cubin(bytearray(b"\x7fELF")).data) == b"\x7fELF"
    stream = io.StringIO("first")
    src = cuda.CUSource(stream, name="s.cu")
    assert src.data == "first"
    stream.seek(0, io.SEEK_END)
    stream.write(" second")
    assert src.data == "first second"  # read on each access
    assert cuda.LTOIR(io.BytesIO(b"\xed\x43\x4e\x7f")).data == b"\xed\x43\x4e\x7f"
    with pytest.raises(TypeError, match="data must be"):
        cuda.PTXSource(42)


def test_callbacks_must_be_callable():
    def f(module):
        pass

    obj = cuda.CUSource("", setup_callback=f, teardown_callback=f)
    assert obj.setup_callback is f and obj.teardown_callback is f
    with pytest.raises(TypeError, match="setup_callback must be callable"):
        cuda.CUSource("", setup_callback=1)
    with pytest.raises(TypeError, match="teardown_callback must be callable"):
        cuda.CUSource("", teardown_callback="no")


def _setup(module):
    pass


def _teardown(module):
    pass


_PTX_HELPER = cuda.PTXSource(
    "// a helper's PTX\n", name="helper_ptx", setup_callback=_setup, teardown_callback=_teardown
)
_CU_HELPER = cuda.CUSource(
    'extern "C" __device__ int twice(int* r, int x) { *r = 2 * x; return 0; }', name="twice.cu", setup_callback=_setup
)
_ptx_helper = cuda.declare_device("ptx_helper", "int32(int32)", link=[_PTX_HELPER])
_twice = cuda.declare_device("twice", "int32(int32)", link=[_CU_HELPER])


def _calls_helpers(x):
    return _ptx_helper(x) + _twice(x)


@pytest.mark.parametrize("output", ["ptx", "ltoir"])
def test_compile_all_keeps_the_callbacks(output):
    codes, _ = cuda.compile_all(_calls_helpers, "int32(int32)", output=output, abi="numba")
    by_name = {code.name: code for code in codes[1:]}
    assert by_name["helper_ptx"].setup_callback is _setup and by_name["helper_ptx"].teardown_callback is _teardown
    compiled = by_name["twice.cu"]  # CUDA C++ compiled by NVRTC: a new object, the same callbacks
    assert type(compiled) is (cuda.LTOIR if output == "ltoir" else cuda.PTXSource)
    assert compiled.setup_callback is _setup and compiled.teardown_callback is None


def test_objects_hash_by_identity():
    a, b = cuda.PTXSource("x"), cuda.PTXSource("x")
    assert a != b and len({a, b, a}) == 2


def test_link_items_are_checked_at_decoration(tmp_path):
    with pytest.raises(ValueError, match="no extension") as e:
        cuda.jit(link=["data"])
    assert isinstance(e.value, RuntimeError)  # also numba-cuda's RuntimeError
    with pytest.raises(ValueError, match=r"Don't know how to link file with extension \.cuh"):
        cuda.jit(link=["header.cuh"])
    with pytest.raises(TypeError, match="Expected path to file or a LinkableCode object"):
        cuda.jit(link=[b"\x7fELF"])
    with pytest.raises(ValueError, match=r"\.cuh"):
        cuda.declare_device("f", "int32(int32)", link="header.cuh")


def test_a_missing_file_is_named(tmp_path):
    missing = str(tmp_path / "nonexistent.a")
    with pytest.raises(FileNotFoundError, match="nonexistent.a not found") as e:
        linking.link_input(missing)
    assert isinstance(e.value, errors.LinkerError) and e.value.args == (f"{missing} not found",)


def test_one_input_per_file_version_and_per_object(tmp_path):
    path = tmp_path / "f.ptx"
    path.write_text("// one")
    first = linking.link_input(str(path))
    assert linking.link_input(str(path)) is first
    os.utime(path, ns=(1, 1))
    path.write_text("// two, longer")
    assert linking.link_input(str(path)) is not first
    src = cuda.CUSource(io.StringIO("a"))
    made = linking.link_input(src)
    assert linking.link_input(src) is made and made.kind == "cu" and made.name == "<unnamed-cu>"
    src._data.write("b")
    assert linking.link_input(src) is not made  # the text changed


def test_link_forms():
    a, b = cuda.CUSource("a"), cuda.CUSource("b")
    assert linking.normalize_items(a) == (a,)
    assert linking.normalize_items([a, b]) == (a, b)
    assert linking.normalize_items((a,)) == (a,)
    assert set(linking.normalize_items({a, b})) == {a, b}
    assert linking.normalize_items(None) == ()


def test_cache_with_link_files_is_accepted(tmp_path, monkeypatch):
    """numba-cuda refuses ("Cannot pickle CUDACodeLibrary with linking files"); cujit caches them
    (tests/caching/test_disk_cache.py)."""
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    k = cuda.jit(cache=True, link=[cuda.PTXSource(".version 8.0\n.target sm_80\n.address_size 64\n")])(lambda: None)
    assert k.targetoptions["cache"] is True
