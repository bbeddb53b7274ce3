"""cuda.jit's options: each is implemented or refused by name, none is stored and ignored.

inline="always" and forceinline=True inline a device function into its callers (LLVM's alwaysinline) and are
recorded in numba's mangled names; shared_memory_carveout is set on every loaded kernel (checked on the fake
driver); an option jit does not know is a TypeError naming it."""

import os
import textwrap
import warnings

import pytest

import gpu_support

from cujit import _core, cuda, float64

from script_runs import run_script

SIG = "void(float64[::1])"


def plain(x):
    return x * 3.0 + 1.0


def kernel_calling(device_function, **options):
    def kernel(a):
        a[0] = device_function(a[0])

    return cuda.jit(**options)(kernel)


REFUSED = [
    (
        "unknown option",
        lambda: cuda.jit(bogus_option=123),
        TypeError,
        r"jit\(\) got an unexpected keyword argument 'bogus_option' \(cuda.jit's options: .*fastmath",
    ),
    (
        "unknown option with a function",
        lambda: cuda.jit(plain, device=True, nopython=True),
        TypeError,
        r"unexpected keyword argument 'nopython'",
    ),
    ("misspelt option", lambda: cuda.jit(SIG, fastmaths=True), TypeError, r"'fastmaths'"),
    ("compile's unknown option", lambda: cuda.compile(plain, "float64(float64)", bogus=1), TypeError, r"bogus"),
    ("extensions", lambda: cuda.jit(extensions=[object()]), TypeError, r"extensions=.*prepare_args"),
    ("boundscheck", lambda: cuda.jit(boundscheck=True), NotImplementedError, r"bounds checking"),
    ("forceinline on a kernel", lambda: cuda.jit(forceinline=True), ValueError, r"^Cannot force-inline kernels$"),
    (
        "inline cost model",
        lambda: cuda.jit(device=True, inline=lambda *a: True),
        NotImplementedError,
        r"cost-model function",
    ),
    (
        "inline misspelt",
        lambda: cuda.jit(device=True, inline="allways"),
        ValueError,
        r"inline must be 'never' or 'always', got 'allways'",
    ),
    ("carveout name", lambda: cuda.jit(shared_memory_carveout="MaxL2"), ValueError, r"Invalid carveout value: 'MaxL2'"),
    ("carveout range", lambda: cuda.jit(shared_memory_carveout=101), ValueError, r"between -1 and 100"),
    ("carveout type", lambda: cuda.jit(shared_memory_carveout=0.5), TypeError, r"must be str or int, got float"),
    ("deprecated argtypes", lambda: cuda.jit(argtypes=(float64,)), DeprecationWarning, r"Deprecated keyword"),
]


@pytest.mark.parametrize("call, error, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_options_name_themselves(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("value, percent", [("default", -1), ("MaxL1", 0), ("maxshared", 100), (50, 50), (-1, -1)])
def test_carveout_values(value, percent):
    kernel = kernel_calling(cuda.jit(device=True)(plain), shared_memory_carveout=value)
    assert kernel.targetoptions["shared_memory_carveout"] == percent


def test_inline_bool_is_deprecated_and_means_always():
    with pytest.warns(DeprecationWarning, match="inline=True/False is deprecated"):
        fn = cuda.jit(device=True, inline=True)(plain)
    assert fn.targetoptions["inline"] == "always"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda.jit(device=True, inline="never")(plain).targetoptions["inline"] == "never"


@pytest.mark.parametrize("options", [dict(forceinline=True), dict(inline="always")], ids=["forceinline", "inline"])
def test_inlined_device_function_leaves_no_call(options):
    """Without optimisation a call stays a call, unless the callee asks to be inlined."""
    called = kernel_calling(cuda.jit(device=True)(plain), opt=False).compile(SIG, cc=(8, 0))
    inlined = kernel_calling(cuda.jit(device=True, **options)(plain), opt=False).compile(SIG, cc=(8, 0))
    assert "call.uni" in called.ptx
    assert "call.uni" not in inlined.ptx


@pytest.mark.parametrize(
    "options, flag",
    [(dict(forceinline=True), "forceinline=True"), (dict(inline="always"), "inline=InlineOptions('always')")],
)
def test_inlining_is_in_numba_mangled_names(options, flag):
    """numba's flags tag records forceinline and inline, so the inlined and the plain copy of a device function
    have different symbols."""
    plain_fn = cuda.jit(device=True)(plain)
    inlined_fn = cuda.jit(device=True, **options)(plain)
    plain_typed = plain_fn._type_for_caller((float64,), plain_fn._options((8, 0)))
    inlined_typed = inlined_fn._type_for_caller((float64,), plain_fn._options((8, 0)))
    assert plain_typed.symbol != inlined_typed.symbol
    assert flag in _core.flags_summary(_options_of(inlined_fn))


def _options_of(dispatcher):
    options = dispatcher._options((8, 0))
    options.from_dispatcher = True
    return options


def test_forceinline_in_ltoir_output_marks_the_function():
    ltoir, _ = cuda.compile(plain, "float64(float64)", output="ltoir", forceinline=True)
    plain_ltoir, _ = cuda.compile(plain, "float64(float64)", output="ltoir")
    assert ltoir != plain_ltoir


def test_carveout_is_set_on_each_loaded_kernel(fake_driver):
    program = textwrap.dedent("""
        import warnings
        import numpy as np
        from cujit import cuda
        warnings.simplefilter("ignore")

        def fill(a):
            a[0] = 1.0

        for value, percent in [("MaxShared", 100), (25, 25), (None, -1)]:
            kernel = cuda.jit(shared_memory_carveout=value)(fill)
            kernel[1, 1](cuda.to_device(np.zeros(1)))
            (compiled,) = kernel.overloads.values()
            got = compiled.function().preferred_shared_memory_carveout
            assert got == percent, (value, got)
        print("OK")
    """)
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver)
    assert run_script(program, "_carveout.py", env).stdout.strip().endswith("OK")


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="no usable GPU")
@gpu_support.needs_device("the shared memory carveout of a kernel loaded by the driver")
def test_carveout_on_a_gpu():
    import numpy as np

    kernel = kernel_calling(cuda.jit(device=True)(plain), shared_memory_carveout="MaxShared")
    a = cuda.to_device(np.array([2.0]))
    kernel[1, 1](a)
    assert a.copy_to_host()[0] == 7.0
    (compiled,) = kernel.overloads.values()
    assert compiled.function().preferred_shared_memory_carveout == 100
