"""Every public form of the API, called as users write it: the tables below are the API, so a new form is one row.

DECORATOR_FORMS: each way numba-cuda documents to write ``cuda.jit`` for kernels and device functions, crossed
with the variants plain, ``cache=True`` and ``link=[...]`` (the link item is CUDA C++ defining the function the
body calls). Without a GPU each is compiled for sm_80, linked, and its cubin checked for the kernel; on a GPU
each kernel runs and is compared with numpy.

ENTRY_POINTS: ``compile``, ``compile_ptx``, ``compile_all``, ``declare_device`` in each ABI, and the
``*_for_current_device`` forms (GPU)."""

import os

import numpy as np
import pytest

import gpu_support

import cujit
from cujit import _core, cuda, float64, int64, void

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "api_forms")
TIMES2_CU = os.path.join(DATA, "times2.cu")
CC = (8, 0)
SIG = "void(float64[::1], int64)"
SIG32 = "void(float32[::1], int64)"
DEVICE_SIG = "float64(float64, int64)"
LTOIR_MAGIC = b"\xed\x43\x4e\x7f"

times2 = cuda.declare_device("forms_times2", "float64(float64)", abi="c")
times2_numba = cuda.declare_device("forms_times2_numba", "float64(float64)")  # numba ABI (the default)


def step(x, n):
    return x * 2.0 * n + 1.0


def step_linked(x, n):
    return times2(x) * n + 1.0


def step_linked_numba(x, n):
    return times2_numba(x) * n + 1.0


def expected(a, n):
    return a * 2.0 * n + 1.0


def kernel_calling(device_function, decorate):
    """The kernel of every row: a[i] = device_function(a[i], n), decorated by ``decorate``."""

    @decorate
    def kernel(a, n):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = device_function(a[i], n)

    return kernel


def lambda_step(linked):
    # One lambda per line: a lambda's source is the line it is on.
    if linked:
        return lambda x, n: times2(x) * n + 1.0
    return lambda x, n: x * 2.0 * n + 1.0


# -- decorator forms ---------------------------------------------------------------------------------------
# Kernel forms: the decorator under test makes the kernel (with the variant's options); it calls a plain
# @cuda.jit(device=True) function. Bare @cuda.jit takes no options: its only variant is plain.
KERNEL_FORMS = {
    "@cuda.jit": lambda **kw: cuda.jit,
    "@cuda.jit()": lambda **kw: cuda.jit(**kw),
    "@cuda.jit(sig string)": lambda **kw: cuda.jit(SIG, **kw),
    "@cuda.jit(Signature)": lambda **kw: cuda.jit(void(float64[::1], int64), **kw),
    "@cuda.jit(argument tuple)": lambda **kw: cuda.jit((float64[::1], int64), **kw),
    "@cuda.jit([sig1, sig2])": lambda **kw: cuda.jit([SIG, SIG32], **kw),
}

# Device forms: the decorator under test makes the device function (with the variant's options, so link= is
# the device function's); a plain @cuda.jit kernel calls it.
DEVICE_FORMS = {
    "@cuda.jit(device=True)": lambda fn, **kw: cuda.jit(device=True, **kw)(fn),
    "@cuda.jit(sig string, device=True)": lambda fn, **kw: cuda.jit(DEVICE_SIG, device=True, **kw)(fn),
    "@cuda.jit(Signature, device=True)": lambda fn, **kw: cuda.jit(float64(float64, int64), device=True, **kw)(fn),
    "@cuda.jit(argument tuple, device=True)": lambda fn, **kw: cuda.jit((float64, int64), device=True, **kw)(fn),
    "@cuda.jit([sig1, sig2], device=True)": lambda fn, **kw: cuda.jit(
        [DEVICE_SIG, "float32(float32, int64)"], device=True, **kw
    )(fn),
    "@cuda.jit(sig, device=True, inline=True)": lambda fn, **kw: cuda.jit(DEVICE_SIG, device=True, inline=True, **kw)(
        fn
    ),
    "cuda.jit(function, device=True)": lambda fn, **kw: cuda.jit(fn, device=True, **kw),
    "cuda.jit(lambda, device=True)": "lambda",
    "cuda.jit(device=True)(lambda)": "lambda",
    "cuda.jit(sig, device=True)(lambda)": "lambda",
}

LAMBDA_FORMS = {
    "cuda.jit(lambda, device=True)": lambda fn, **kw: cuda.jit(fn, device=True, **kw),
    "cuda.jit(device=True)(lambda)": lambda fn, **kw: cuda.jit(device=True, **kw)(fn),
    "cuda.jit(sig, device=True)(lambda)": lambda fn, **kw: cuda.jit(DEVICE_SIG, device=True, **kw)(fn),
}

VARIANTS = {
    "plain": {},
    "cache=True": {"cache": True},
    "link=": {"link": [TIMES2_CU]},
}


def build(form, variant):
    """The kernel for a (form, variant) row, and the argument signatures it is launched with."""
    options = VARIANTS[variant]
    linked = "link" in options
    if form in KERNEL_FORMS:
        decorate = KERNEL_FORMS[form](**options)
        device_function = cuda.jit(device=True)(step_linked if linked else step)
        kernel = kernel_calling(device_function, decorate)
        return kernel, [SIG, SIG32] if "[sig1, sig2]" in form else [SIG]
    if form in LAMBDA_FORMS:
        device_function = LAMBDA_FORMS[form](lambda_step(linked), **options)
    else:
        device_function = DEVICE_FORMS[form](step_linked if linked else step, **options)
    kernel_options = {"cache": True} if "cache" in options else {}
    return kernel_calling(device_function, cuda.jit(**kernel_options)), [SIG]


ROWS = [
    (form, variant)
    for form in [*KERNEL_FORMS, *DEVICE_FORMS]
    for variant in VARIANTS
    if form != "@cuda.jit" or variant == "plain"
]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("form, variant", ROWS, ids=[f"{f} {v}" for f, v in ROWS])
def test_form_compiles_and_links(form, variant):
    kernel, signatures = build(form, variant)
    assert isinstance(kernel, cuda.CUDADispatcher)
    for sig in signatures:
        compiled = kernel.compile(sig, cc=CC)
        cubin = compiled.link(CC)
        assert _core.link.cubin_has_symbol(cubin, compiled.entry), (form, variant, sig)
        names = [i.name for i in compiled.link_inputs()]
        assert names == (["times2.cu"] if variant == "link=" else []), names


@pytest.mark.parametrize("form", list(DEVICE_FORMS))
def test_eager_device_forms_record_their_signatures(form):
    """A device function given signatures is typed for them when decorated (numba-cuda's overloads)."""
    fn = LAMBDA_FORMS[form](lambda_step(False)) if form in LAMBDA_FORMS else DEVICE_FORMS[form](step)
    eager = "sig" in form or "Signature" in form or "tuple" in form
    assert ((float64, int64) in fn.overloads) == eager, fn.overloads
    assert fn.device


def test_a_declared_return_type_holds_in_callers():
    """``jit("float32(float32)", device=True)``: a kernel's call gets float32, as numba-cuda's overload gives,
    not the float64 the body's arithmetic would infer."""
    import declared_returns_src as src

    kernel = cuda.jit("void(float32[::1])")(src.scale)
    callee_types = [
        face.return_type
        for _, face in src.half_plus_one._kernels.specialisations()
        if isinstance(face, _core.TypedFunction)
    ]
    assert [str(t) for t in callee_types] == ["float32"], callee_types
    assert kernel.inspect_asm(kernel.signatures[0])  # compiled (and assembled by conftest)


def test_cached_form_is_read_back():
    """cache=True: a second dispatcher of the same kernel loads it from the disk cache."""
    build("@cuda.jit(sig string)", "cache=True")
    before = cujit.stats()["cache hits"]
    build("@cuda.jit(sig string)", "cache=True")
    assert cujit.stats()["cache hits"] == before + 1


@pytest.mark.gpu
@pytest.mark.parametrize("form, variant", ROWS, ids=[f"{f} {v}" for f, v in ROWS])
def test_form_runs(form, variant):
    if not gpu_support.KERNELS_RUN:
        pytest.skip("no usable GPU and not on the CPU target")
    if gpu_support.ON_CPU_TARGET and variant == "link=":
        pytest.skip("needs a GPU, not the CPU target: links CUDA C++")
    kernel, signatures = build(form, variant)
    rng = np.random.default_rng()
    for dtype in [np.float64, np.float32][: len(signatures)]:
        a = rng.standard_normal(1000).astype(dtype)
        n = int(rng.integers(-5, 6))
        d = cuda.to_device(a)
        kernel[8, 128](d, n)
        # fma contraction (on, as in nvcc) rounds x * 2 * n + 1 once where numpy rounds twice
        tol = 1e-6 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(d.copy_to_host(), expected(a, n), rtol=tol, atol=tol)


# -- entry points --------------------------------------------------------------------------------------------
step_device = cuda.jit(device=True)(step)


def kernel_body(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = step_device(a[i], n)


times2_with_link = cuda.declare_device("forms_times2", "float64(float64)", link=[TIMES2_CU], abi="c")


def kernel_declaration_links(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = times2_with_link(a[i]) * n + 1.0


def check_ptx(kind, name=None):
    def check(result):
        ptx, resty = result
        assert isinstance(ptx, str) and f".visible .{kind}" in ptx, ptx[:400]
        if name:
            assert f" {name}(" in ptx

    return check


def check_ltoir(result):
    code, resty = result
    assert isinstance(code, bytes) and code[:4] == LTOIR_MAGIC


def check_all(first, kinds):
    def check(result):
        codes, resty = result
        assert isinstance(codes[0], first)
        assert [type(c).__name__ for c in codes[1:]] == kinds

    return check


def _linked_dispatcher():
    return cuda.jit(link=[TIMES2_CU])(step_linked)


ENTRY_POINTS = {
    "compile (C ABI device function)": (lambda: cuda.compile(step, DEVICE_SIG), check_ptx("func", "step")),
    "compile(abi_info=)": (
        lambda: cuda.compile(step, float64(float64, int64), abi_info={"abi_name": "my_step"}),
        check_ptx("func", "my_step"),
    ),
    "compile(abi='numba')": (lambda: cuda.compile(step, DEVICE_SIG, abi="numba"), check_ptx("func")),
    "compile(device=False)": (lambda: cuda.compile(kernel_body, SIG, device=False, abi="numba"), check_ptx("entry")),
    "compile(output='ltoir')": (lambda: cuda.compile(step, DEVICE_SIG, output="ltoir"), check_ltoir),
    "compile(dispatcher)": (lambda: cuda.compile(cuda.jit(device=True)(step), DEVICE_SIG), check_ptx("func", "step")),
    "compile_ptx (kernel)": (lambda: cuda.compile_ptx(kernel_body, SIG), check_ptx("entry")),
    "compile_ptx(device=True)": (lambda: cuda.compile_ptx(step, (float64, int64), device=True), check_ptx("func")),
    "compile_all": (lambda: cuda.compile_all(step, DEVICE_SIG), check_all(bytes, [])),
    "compile_all(output='ptx')": (lambda: cuda.compile_all(step, DEVICE_SIG, output="ptx"), check_all(str, [])),
    "compile_all(linking dispatcher, abi='c')": (
        lambda: cuda.compile_all(_linked_dispatcher(), DEVICE_SIG),
        check_all(bytes, ["LTOIR"]),
    ),
    "compile_all(linking dispatcher, abi='numba', ptx)": (
        lambda: cuda.compile_all(_linked_dispatcher(), DEVICE_SIG, abi="numba", output="ptx"),
        check_all(str, ["PTXSource"]),
    ),
    "compile_all(linking kernel, device=False)": (
        lambda: cuda.compile_all(
            kernel_calling(cuda.jit(device=True)(step_linked), cuda.jit(link=[TIMES2_CU])),
            SIG,
            device=False,
            abi="numba",
        ),
        check_all(bytes, ["LTOIR"]),
    ),
    "compile_all(declaration with link=)": (
        lambda: cuda.compile_all(kernel_declaration_links, SIG, device=False, abi="numba"),
        check_all(bytes, ["LTOIR"]),
    ),
}


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_entry_point(name):
    call, check = ENTRY_POINTS[name]
    check(call())


@pytest.mark.parametrize("abi, body", [("c", "step_linked"), ("numba", "step_linked_numba")])
def test_declare_device_in_each_abi_links(abi, body):
    device_function = cuda.jit(device=True)(globals()[body])
    kernel = kernel_calling(device_function, cuda.jit(link=[TIMES2_CU]))
    compiled = kernel.compile(SIG, cc=CC)
    assert _core.link.cubin_has_symbol(compiled.link(CC), compiled.entry)
    assert (times2 if abi == "c" else times2_numba).abi == abi


@pytest.mark.gpu
@gpu_support.needs_device("links CUDA C++ (GPU code)")
@pytest.mark.parametrize("abi, body", [("c", "step_linked"), ("numba", "step_linked_numba")])
def test_declare_device_in_each_abi_runs(abi, body):
    if not gpu_support.KERNELS_RUN:
        pytest.skip("no usable GPU and not on the CPU target")
    kernel = kernel_calling(cuda.jit(device=True)(globals()[body]), cuda.jit(link=[TIMES2_CU]))
    a = np.random.default_rng().standard_normal(500)
    d = cuda.to_device(a)
    kernel[4, 128](d, 3)
    np.testing.assert_allclose(d.copy_to_host(), expected(a, 3), rtol=1e-13, atol=1e-13)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "api, kwargs, kind",
    [
        ("compile_for_current_device", {}, "func"),
        ("compile_ptx_for_current_device", {}, "entry"),
    ],
)
def test_for_current_device(api, kwargs, kind):
    if not gpu_support.KERNELS_RUN:
        pytest.skip("no usable GPU and not on the CPU target")
    pyfunc, sig = (step, DEVICE_SIG) if kind == "func" else (kernel_body, SIG)
    ptx, _ = getattr(cuda, api)(pyfunc, sig, **kwargs)
    major, minor = cuda.get_current_device().compute_capability
    assert f".target sm_{major}{minor}" in ptx
    assert f".visible .{kind}" in ptx
