"""numpy's fixed-width strings in kernels (issue 43), as numba-cuda has them (its CharSeq and UnicodeCharSeq), on
both frontends: arrays of ``S<n>`` and ``U<n>`` as kernel arguments; ``len`` of an element (trailing NULs not
counted, as numpy), comparisons between elements of different widths (numpy's, the shorter read as NUL-padded),
an element stored into an array of another width (cut, or padded with NULs), truth (not empty) and ``isascii()``. Compiled everywhere (PTX assembled by
the suite's ptxas check), run against NumPy on fresh random strings where kernels run."""

import numpy as np
import pytest

import gpu_support
from frontends import FRONTENDS, define

from cujit import cuda, types
from cujit.errors import TypingError

pytestmark = pytest.mark.parametrize("frontend", FRONTENDS)

PROGRAM = """
from cujit import cuda

def strings(s, t, lens, eq, lt, ge, copied):
    i = cuda.grid(1)
    if i < s.size:
        lens[i] = len(s[i])
        if not s[i]:  # an empty string is false
            lens[i] = -1
        if t[i]:
            if not t[i].isascii():
                lens[i] += 100
        eq[i] = s[i] == t[i]
        lt[i] = s[i] < t[i]
        ge[i] = s[i] >= t[i]
        copied[i] = t[i]
"""


def random_strings(rng, n, width, kind):
    letters = np.array(list("abcé" if kind == "U" else "abc"))
    words = ["".join(rng.choice(letters, int(rng.integers(0, width + 1)))) for _ in range(n)]
    return np.array(words if kind == "U" else [w.encode() for w in words], f"{kind}{width}")


def test_types(frontend):
    fn = define(PROGRAM, frontend)["strings"]
    s, t = types.CharSeq(4)[::1], types.CharSeq(3)[::1]
    argtypes = (s, t, types.int64[::1], types.boolean[::1], types.boolean[::1], types.boolean[::1], s)
    ptx, _ = cuda.compile_ptx(fn, argtypes, cc=(9, 0))
    assert ".entry" in ptx
    assert str(types.UnicodeCharSeq(5)) == "[unichr x 5]" and str(types.CharSeq(2)) == "[char x 2]"


def test_bytes_and_text_do_not_compare(frontend):
    fn = define("def f(s, u, out):\n    out[0] = s[0] == u[0]\n", frontend)["f"]
    with pytest.raises(TypingError) as info:
        cuda.compile_ptx(fn, (types.CharSeq(4)[::1], types.UnicodeCharSeq(4)[::1], types.boolean[::1]), cc=(9, 0))
    assert "^" in str(info.value)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
@pytest.mark.parametrize("kind", ["S", "U"])
def test_strings_run(frontend, kind):
    rng = np.random.default_rng()
    n = 64
    s, t = random_strings(rng, n, 5, kind), random_strings(rng, n, 3, kind)
    t[: n // 4] = s[: n // 4]  # some equal pairs (where s fits in t's width)
    lens, eq, lt, ge = np.zeros(n, np.int64), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.bool_)
    copied = np.zeros(n, s.dtype)
    cuda.jit(define(PROGRAM, frontend)["strings"])[2, 32](s, t, lens, eq, lt, ge, copied)
    expect = np.where(np.char.str_len(s) == 0, -1, np.char.str_len(s))
    expect += 100 * np.array([bool(w) and not w.isascii() for w in t.tolist()])
    np.testing.assert_array_equal(lens, expect)
    np.testing.assert_array_equal(eq, s == t)
    np.testing.assert_array_equal(lt, s < t)
    np.testing.assert_array_equal(ge, s >= t)
    np.testing.assert_array_equal(copied, t.astype(s.dtype))


CONSTANTS = """
from cujit import cuda

def constants(s, t, out):
    i = cuda.grid(1)
    if i < s.size:
        out[i, 0] = s[i] == b"ab"
        out[i, 1] = b"b" in s[i]
        out[i, 2] = s[i] in b"xabcx"
        out[i, 3] = b"" in s[i]
        out[i, 4] = t[i] != "aé"
        out[i, 5] = "é" in t[i]
        out[i, 6] = "ab" < t[i]
        out[i, 7] = t[i] not in "bcaé"
        out[i, 8] = len(s[i] or b"empty")
        out[i, 9] = len(t[i] and "two") + len("é")
        word = "abc"
        if i % 2:
            word = "b"
        out[i, 10] = word in t[i]
"""


def expect_constants(s, t):
    s, t = s.tolist(), t.tolist()
    rows = [
        [
            a == b"ab",
            b"b" in a,
            a in b"xabcx",
            True,
            b != "aé",
            "é" in b,
            "ab" < b,
            b not in "bcaé",
            len(a or b"empty"),
            len(b and "two") + 1,
            ("b" if i % 2 else "abc") in b,
        ]
        for i, (a, b) in enumerate(zip(s, t))
    ]
    return np.array(rows, np.int64)


def test_constants_compile(frontend):
    fn = define(CONSTANTS, frontend)["constants"]
    argtypes = (types.CharSeq(4)[::1], types.UnicodeCharSeq(3)[::1], types.int64[:, ::1])
    ptx, _ = cuda.compile_ptx(fn, argtypes, cc=(9, 0))
    assert "_cujit_str" in ptx  # the constants' characters in constant memory


def test_constant_of_the_other_kind_does_not_compare(frontend):
    fn = define('def f(s, out):\n    out[0] = s[0] == "abc"\n', frontend)["f"]
    with pytest.raises(TypingError, match=r"comparison '=='[\s\S]*\^"):
        cuda.compile_ptx(fn, (types.CharSeq(4)[::1], types.boolean[::1]), cc=(9, 0))
    fn = define('def f(s, out):\n    out[0] = b"a" in s[0]\n', frontend)["f"]
    with pytest.raises(TypingError, match=r"No implementation of 'in'[\s\S]*\^"):
        cuda.compile_ptx(fn, (types.UnicodeCharSeq(4)[::1], types.boolean[::1]), cc=(9, 0))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.KERNELS_RUN, reason="kernels do not run here")
def test_constants_run(frontend):
    rng = np.random.default_rng()
    n = 64
    s, t = random_strings(rng, n, 4, "S"), random_strings(rng, n, 3, "U")
    s[:4] = [b"ab", b"", b"abc", b"b"]
    t[:4] = ["aé", "", "é", "abc"]
    out = np.zeros((n, 11), np.int64)
    cuda.jit(define(CONSTANTS, frontend)["constants"])[2, 32](s, t, out)
    np.testing.assert_array_equal(out, expect_constants(s, t))
