"""Records (numpy structured dtypes) without a GPU: numba's type names for Record and NestedArray, typeof and
from_dtype, kernels over aligned, packed and nested records compiled to PTX that ptxas assembles, stable
mangled names, and misuse located with a caret."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import cujit
import records_src as R
from cujit import _core, cuda, errors
from source_lines import assert_located

CC = (9, 0)


def test_record_type_names_follow_numba():
    rng = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
    assert str(cujit.from_dtype(rng)) == "Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)"
    packed = cujit.from_dtype(R.PACKED)
    assert str(packed) == (
        "Record(c[type=int8;offset=0],d[type=float64;offset=1],e[type=int32;offset=9],"
        "m[type=nestedarray(int16, (2, 2));offset=13];21;False)"
    )
    assert packed.size == 21 and not packed.aligned
    # Fields are listed by offset (then name), whatever order the dtype gives them.
    swapped = np.dtype({"names": ["b", "a"], "formats": [np.int32, np.int32], "offsets": [4, 0]})
    assert list(cujit.from_dtype(swapped).fields) == ["a", "b"]


def test_typeof_is_a_function_like_numba_typeof():
    points = np.zeros(4, R.POINT)
    t = cujit.typeof(points)
    assert t.kind == "array" and t.dtype == cujit.from_dtype(R.POINT) and t.layout == "C"
    assert cujit.typeof(1.5) == cujit.float64
    assert cujit.typeof(np.float32(1)) == cujit.float32
    assert cujit.from_dtype(np.float32) == cujit.float32
    assert cujit.typeof(points[0]) == cujit.from_dtype(R.POINT)  # a record scalar: its record type, as numba


def test_titled_fields_are_reachable_by_name_and_title():
    titled = np.dtype({"names": ["x"], "formats": [np.float32], "titles": ["ex"]})
    t = cujit.from_dtype(titled)
    assert sorted(t.fields) == ["ex", "x"]
    assert "title=ex" in str(t)

    def k(a, out):
        out[0] = a[0].ex + a[0]["x"]

    cuda.compile_ptx(k, (t[:], cujit.float32[:]), cc=CC)


def test_record_kernels_compile(ptxas):
    point = cujit.from_dtype(R.POINT)
    ptx, _ = cuda.compile_ptx(R.point_kernel, (point[::1], cujit.float64[::1]), cc=CC)
    # The array field v (offset 16) is read as three floats; inner.b (offset 32 + 8) as a double.
    assert re.search(r"ld\.global\.b64\s+%rd\d+, \[%rd\d+\+40\]", ptx), ptx
    packed = cujit.from_dtype(R.PACKED)
    ptx, _ = cuda.compile_ptx(R.packed_kernel, (packed[::1], cujit.float64[::1]), cc=CC)
    # A packed record's double at offset 1 and its int16 array field at offset 13 are read byte by byte.
    assert "ld.global.b8" in ptx
    assert not re.search(r"ld\.global\.(b16|b32|b64)", ptx), ptx  # LLVM 22: loads name their width only
    cuda.compile_ptx(R.copy_records, (point[::1], point[::1]), cc=CC)


def test_record_mangled_names_are_stable_and_numba_shaped():
    point = cujit.from_dtype(R.POINT)
    name = _core.mangle.mangle_type(point)
    assert re.fullmatch(r"6RecordILi\d+EE", name)
    script = (
        "import numpy as np, cujit, records_src as R; from cujit import _core; "
        "print(_core.mangle.mangle_type(cujit.from_dtype(R.POINT)))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == name


def unknown_field(a, out):
    out[0] = a[0].nope


def bad_key(a, out, k):
    out[0] = a[0][k]


def bad_store(a):
    a[0].x = (1, 2)


def position_out_of_range(a, out):
    out[0] = a[0][9]


@pytest.mark.parametrize(
    "fn, message, column_of",
    [
        (unknown_field, "Unknown attribute 'nope' of type Record(", "a[0].nope"),
        (bad_key, "a record is indexed by a constant field name or a constant integer, not by int64", "k]"),
        (bad_store, "cannot store a value of type UniTuple(int64 x 2) into a record field of type float32", "a[0].x ="),
        (position_out_of_range, "Record field index 9 out of range (6 fields)", "9]"),
    ],
)
def test_record_misuse_is_located(fn, message, column_of):
    point = cujit.from_dtype(R.POINT)
    sig = [point[::1], cujit.float64[::1]] + ([cujit.int64] if fn is bad_key else [])
    if fn is bad_store:
        sig = [point[::1]]
    with pytest.raises(errors.TypingError) as info:
        cuda.compile_ptx(fn, tuple(sig), cc=CC)
    text = str(info.value)
    assert message in text, text
    line, caret = assert_located(text, fn, column_of, __file__)
    assert line.index(column_of) <= caret, text


@pytest.mark.parametrize("cc", [(7, 5), (9, 0), (10, 0)])
def test_unaligned_float_fields_are_stored_as_integer_bits(cc):
    """A packed record's float64 field is written byte by byte from the integer of its bits (a mov.b64 the optimiser
    cannot see through): ptxas of CUDA 13.0 read LLVM 22's byte store straight from an add.f64's register as a
    float-to-u8 conversion (the byte came out 0 on an H100)."""
    r = np.zeros(4, R.PACKED)
    ptx, _ = cuda.compile_ptx(R.packed_kernel, (cujit.typeof(r), cujit.typeof(np.zeros(4))), cc=cc)
    body = ptx[ptx.index("add.f64") :]
    stored = re.findall(r"st\.global\.b8\s+\[[^\]]+\+1\],\s*(%\w+);", ptx)
    assert stored, ptx
    assert re.search(rf"mov\.b64\s+{re.escape(stored[0])},", body), "the low byte comes straight from a float op"
