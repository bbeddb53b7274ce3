"""Arithmetic against Python (lowering/lower_expressions.cpp, typing/operator_rules.cpp):

* float `//` and `%` on a table of hard cases, float32 and float64, against CPython's divmod (on the GPU);
* a differential run of seeded random arithmetic expressions over int32/int64/float32/float64 inputs: the
  result type against numba's typing (everywhere) and the values against Python on the host (on the GPU);
* float16 operators that go through libdevice: numba's result types, PTX that ptxas accepts.

Where numba-cuda departs from Python (min/max with a NaN, 0.1 % -inf), cujit keeps Python's answer
(README, porting notes).
"""

import math
import random

import numpy as np
import pytest

import gpu_support

import numba_arithmetic as ref
from random_programs import DIFF_TYPES, arithmetic_expression
from cujit import cuda, float16, float32, float64, types

DIFF_SEEDS = range(300)


def expression_of(seed):
    rng = random.Random(seed)
    argtypes = tuple(rng.choice(DIFF_TYPES) for _ in range(3))
    return arithmetic_expression(rng), argtypes


def expression_function(text):
    namespace = {}
    exec(compile(f"def f(x, y, z):\n    return {text}\n", f"<expr {text}>", "exec"), namespace)
    return namespace["f"]


# ----------------------------------------------------------------------------------------------
# Result types (no GPU needed)
# ----------------------------------------------------------------------------------------------


def typed_result(text, argtypes):
    env = {name: (1, t) for name, t in zip("xyz", argtypes)}
    return ref.evaluate(text, env)[1]


def test_random_expressions_type_as_numba(tmp_path):
    mismatches = []
    for seed in DIFF_SEEDS:
        text, argtypes = expression_of(seed)
        path = tmp_path / f"expr_{seed}.py"
        path.write_text(f"def f(x, y, z):\n    return {text}\n")
        namespace = {"__name__": f"expr_{seed}", "__file__": str(path)}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        _, resty = cuda.compile_ptx(namespace["f"], tuple(getattr(types, t) for t in argtypes), device=True)
        want = typed_result(text, argtypes)
        if str(resty) != want:
            mismatches.append(f"seed {seed}: {text} with {argtypes}: cujit {resty}, numba {want}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize(
    "expr, argtypes, expected",
    [
        ("x ** -1", (float16,), float32),
        ("x ** 3", (float16,), float32),
        ("x ** x", (float16,), float32),
        ("x // x", (float16,), float32),
        ("x % x", (float16,), float32),
        ("x + x", (float16,), float16),
        ("x / x", (float16,), float16),
        ("-x", (float16,), float16),
        ("abs(x)", (float16,), float16),
        ("x ** 2", (float32,), float32),
        ("x ** -2", (float64,), float64),
        ("x % 2.5", (float32,), float64),
    ],
)
def test_float_operator_result_types(expr, argtypes, expected, tmp_path):
    path = tmp_path / "f16.py"
    path.write_text(f"import math\ndef f(x):\n    return {expr}\n")
    namespace = {"__name__": "f16", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    for opt in (True, False):
        ptx, resty = cuda.compile_ptx(namespace["f"], argtypes, device=True, opt=opt)
        assert resty == expected  # (the conftest assembles the PTX with ptxas)


# ----------------------------------------------------------------------------------------------
# On the GPU
# ----------------------------------------------------------------------------------------------


def require_gpu():
    if not gpu_support.KERNELS_RUN:
        pytest.skip("no usable GPU and not on the CPU target")


INF, NAN = math.inf, math.nan
HARD_CASES = [
    (16.0, 0.8),
    (-16.0, 0.8),
    (16.0, -0.8),
    (abs((-272.6) ** 9), 16.5),
    (1e300, 1e-300),
    (1e-300, 1e300),
    (1.0, math.nextafter(1.0, 0.0)),
    (1.0, math.nextafter(1.0, 2.0)),
    (-1.0, math.nextafter(1.0, 2.0)),
    (0.0, 3.0),
    (-0.0, 3.0),
    (0.0, -3.0),
    (-0.0, -3.0),
    (3.0, 3.0),
    (-3.0, 3.0),
    (7.5, 2.0),
    (-7.5, 2.0),
    (7.5, -2.0),
    (-7.5, -2.0),
    (5.0, INF),
    (-5.0, INF),
    (5.0, -INF),
    (0.1, -INF),
    (INF, 3.0),
    (-INF, 3.0),
    (NAN, 2.0),
    (2.0, NAN),
    (5.0, 0.0),
    (-5.0, 0.0),
    (5.0, -0.0),
    (0.0, 0.0),
    (1e-310, 3.0),
    (3.0, 1e-310),
    (123456789.0, 1e-3),
    (2.0**60, 3.0),
    (-(2.0**60), 3.0),
    (0.3, 0.1),
    (-0.3, 0.1),
]


def divmod_kernel(q, m, a, b):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        m[i] = a[i] % b[i]


def same_float(got, want):
    if np.isnan(want):
        return bool(np.isnan(got))
    return got == want and np.signbit(got) == np.signbit(want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_float_floordiv_and_mod_match_python(dtype):
    require_gpu()
    rng = np.random.default_rng()
    seed = int(rng.integers(1 << 31))
    rng = np.random.default_rng(seed)
    f = ref.FLOATS[dtype]
    random_pairs = [(float(x), float(y)) for x, y in zip(rng.normal(0, 1e3, 256), rng.normal(0, 10, 256))]
    cases = [(float(f(a)), float(f(b))) for a, b in HARD_CASES + random_pairs]
    a = np.array([c[0] for c in cases], dtype=dtype)
    b = np.array([c[1] for c in cases], dtype=dtype)
    q, m = np.empty_like(a), np.empty_like(a)
    cuda.jit(divmod_kernel)[(len(a) + 127) // 128, 128](q, m, a, b)
    wrong = []
    for i in range(len(a)):
        want_q, want_m = ref.float_divmod(a[i], b[i], dtype)
        if dtype == "float64" and b[i] != 0:  # Python itself, where Python answers
            assert (want_q, want_m) == divmod(float(a[i]), float(b[i])) or np.isnan(want_q) or np.isnan(want_m)
        if not (same_float(q[i], want_q) and same_float(m[i], want_m)):
            wrong.append(f"{a[i]!r} // {b[i]!r} = {q[i]!r} (Python {want_q!r}); % = {m[i]!r} (Python {want_m!r})")
    assert not wrong, f"seed {seed}, {dtype}: {len(wrong)} wrong:\n" + "\n".join(wrong[:20])


def ulps(got, want, dtype):
    if np.isnan(want) or np.isinf(want):
        return 0 if same_float(got, want) or (np.isnan(got) and np.isnan(want)) else np.inf
    spacing = np.spacing(ref.FLOATS[dtype](abs(want))) if want != 0 else np.finfo(dtype).smallest_subnormal
    return abs(float(got) - float(want)) / float(spacing)


def inputs(rng, t, n):
    if t in ref.INT_BITS:
        v = rng.integers(-1000, 1000, n).astype(t)
        v[v == 0] = 3
        return v
    v = rng.uniform(-100, 100, n).astype(t)
    v[v == 0] = 1.5
    return v


@pytest.mark.gpu
def test_gpu_random_arithmetic_matches_python(tmp_path):
    require_gpu()
    seed = int(np.random.default_rng().integers(1 << 31))
    rng = np.random.default_rng(seed)
    n = 64
    failures, checked = [], 0
    for s in DIFF_SEEDS:
        text, argtypes = expression_of(s)
        want_type = typed_result(text, argtypes)
        xs, ys, zs = (inputs(rng, t, n) for t in argtypes)
        out = np.zeros(n, dtype=want_type)
        src = (
            f"def k(out, xs, ys, zs):\n    i = cuda.grid(1)\n    if i < out.size:\n"
            f"        x = xs[i]\n        y = ys[i]\n        z = zs[i]\n        out[i] = {text}\n"
        )
        path = tmp_path / f"kernel_{s}.py"  # cujit compiles from source: the kernel lives in a file
        path.write_text(src)
        namespace = {"cuda": cuda, "__name__": f"kernel_{s}"}
        exec(compile(src, str(path), "exec"), namespace)
        kernel = cuda.jit(namespace["k"])
        try:
            kernel[1, n](out, xs, ys, zs)
        except Exception as exc:  # reported with the expression
            failures.append(f"expression {s}: {text} {argtypes}: {type(exc).__name__}: {exc}")
            continue
        for i in range(n):
            env = {"x": (xs[i].item(), argtypes[0]), "y": (ys[i].item(), argtypes[1]), "z": (zs[i].item(), argtypes[2])}
            env = {k: (v if t in ref.INT_BITS else ref.FLOATS[t](v), t) for k, (v, t) in env.items()}
            want, t = ref.evaluate(text, env)
            if t in ref.INT_BITS:
                ok = int(out[i]) == int(want)
            else:
                ok = ulps(out[i], want, t) <= 2
            checked += 1
            if not ok:
                failures.append(
                    f"expression {s}: {text} {argtypes} at x={xs[i]!r}, y={ys[i]!r}, z={zs[i]!r}: "
                    f"GPU {out[i]!r}, Python {want!r} ({t})"
                )
                break
    assert not failures, f"seed {seed}: {len(failures)} of {len(DIFF_SEEDS)} expressions differ:\n" + "\n".join(
        failures[:20]
    )
    assert checked == n * len(DIFF_SEEDS)


def minmax_kernel(lo, hi, a, b):
    i = cuda.grid(1)
    if i < a.size:
        lo[i] = min(a[i], b[i])
        hi[i] = max(a[i], b[i])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_min_max_with_nan_as_python(dtype):
    """Python's min/max keep the first argument unless the second compares smaller/larger: a NaN first
    argument wins, a NaN second one loses (numba-cuda departs from this; README, porting notes)."""
    require_gpu()
    pairs = [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (-INF, NAN), (NAN, INF), (0.0, -0.0), (-0.0, 0.0), (2.0, 3.0)]
    a = np.array([p[0] for p in pairs], dtype=dtype)
    b = np.array([p[1] for p in pairs], dtype=dtype)
    lo, hi = np.empty_like(a), np.empty_like(a)
    cuda.jit(minmax_kernel)[1, 32](lo, hi, a, b)
    for i, (x, y) in enumerate(pairs):
        assert same_float(lo[i], min(ref.FLOATS[dtype](x), ref.FLOATS[dtype](y))), (x, y, lo[i])
        assert same_float(hi[i], max(ref.FLOATS[dtype](x), ref.FLOATS[dtype](y))), (x, y, hi[i])
