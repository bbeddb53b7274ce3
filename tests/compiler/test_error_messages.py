"""Errors a new user meets first: each says what is wrong, where, and what would be right.

One row per mistake: the call as a user writes it, the exception type, and what the message must contain.
Mistakes in the user's function also carry file:line, the source line and a caret under the construct."""

import re

import numpy as np
import pytest
from numpy import cumsum as numpy_cumsum

from cujit import cuda, errors, int32, float64
from cujit.linking import LinkFileNotFoundError

from source_lines import assert_located

THIS_FILE = __file__.replace(".pyc", ".py")


def add(x, y):
    return x + y


def plain_helper(x):
    return x + 1


def kernel_returns_value(a):
    a[0] = 1
    return 5


def kernel_calls_plain_function(a):
    a[0] = plain_helper(a[0])


def kernel_fills(a):
    a[0] = 1


def kernel_sums(a, out):
    out[0] = np.cumsum(a)[0]


def kernel_sums_imported(a, out):
    out[0] = numpy_cumsum(a)[0]


def kernel_draws(out):
    out[0] = np.random.rand()


external = cuda.declare_device("cujit_missing_ext", "int32(int32)", link=["/nonexistent/cujit_decl.cu"])


def kernel_calls_declaration(a):
    a[0] = external(a[0])


IDENTIFIER_RULE = r"must be a C identifier \(letters, digits and '_', not starting with a digit\)"

MISTAKES = [
    (
        "abi_name with a space",
        lambda: cuda.compile(add, "int32(int32, int32)", abi_info={"abi_name": "my add"}),
        ValueError,
        IDENTIFIER_RULE + r", got 'my add'",
    ),
    (
        "abi_name starting with a digit",
        lambda: cuda.compile(add, "int32(int32, int32)", abi_info={"abi_name": "1f"}),
        ValueError,
        IDENTIFIER_RULE + r", got '1f'",
    ),
    (
        "empty abi_name",
        lambda: cuda.compile(add, "int32(int32, int32)", abi_info={"abi_name": ""}),
        ValueError,
        IDENTIFIER_RULE + r", got ''",
    ),
    (
        "abi_name not a str",
        lambda: cuda.compile(add, "int32(int32, int32)", abi_info={"abi_name": 5}),
        TypeError,
        r"abi_info\['abi_name'\] must be a str, got int \(5\)",
    ),
    (
        "abi in capitals",
        lambda: cuda.compile(add, "int32(int32, int32)", abi="C"),
        NotImplementedError,
        r"^Unsupported ABI: C \(the ABIs are 'numba' and 'c'\)$",
    ),
    (
        "declare_device abi in capitals",
        lambda: cuda.declare_device("f", "int32(int32)", abi="Numba"),
        NotImplementedError,
        r"^Unsupported ABI: Numba \(the ABIs are 'numba' and 'c'\)$",
    ),
    (
        "misspelt type in compile_ptx",
        lambda: cuda.compile_ptx(add, "int32(int32, flaot32)", device=True),
        NameError,
        r"^name 'flaot32' is not defined; did you mean 'float32'\? \(in the signature "
        r"'int32\(int32, flaot32\)'\)$",
    ),
    (
        "misspelt type in jit",
        lambda: cuda.jit("void(flot64[:])")(kernel_fills),
        NameError,
        r"name 'flot64' is not defined; did you mean 'float64'\?",
    ),
    (
        "unknown type, nothing close",
        lambda: cuda.jit("void(quaternion)")(kernel_fills),
        NameError,
        r"^name 'quaternion' is not defined \(in the signature 'void\(quaternion\)'\)$",
    ),
    (
        "missing link file of a kernel",
        lambda: (
            cuda.jit(link=["/nonexistent/cujit_k.cu"])(kernel_fills).compile("void(int32[:])", cc=(8, 0)).link((8, 0))
        ),
        LinkFileNotFoundError,
        r"^/nonexistent/cujit_k.cu not found \(a link item of @cuda.jit function "
        r"'kernel_fills' at .*test_error_messages.py:\d+\)$",
    ),
    (
        "missing link file of a declaration",
        lambda: cuda.jit(kernel_calls_declaration).compile("void(int32[:])", cc=(8, 0)).link((8, 0)),
        LinkFileNotFoundError,
        r"^/nonexistent/cujit_decl.cu not found \(a link item of "
        r"cuda.declare_device\('cujit_missing_ext', \"int32\(int32\)\"\) at "
        r".*test_error_messages.py:\d+\)$",
    ),
]


@pytest.mark.parametrize("call, error, message", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_mistake_is_named(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert re.search(message, str(info.value)), str(info.value)
    assert "bug in cujit" not in str(info.value)


LOCATED = [
    (
        "kernel returns a value (compile_ptx)",
        lambda: cuda.compile_ptx(kernel_returns_value, (int32[:],)),
        TypeError,
        r"^CUDA kernel must have void return type \(this kernel returns Literal\[int\]\(5\)\)",
        kernel_returns_value,
        "return 5",
    ),
    (
        "kernel returns a value (jit)",
        lambda: cuda.jit(kernel_returns_value).compile((int32[:],)),
        TypeError,
        r"^CUDA kernel must have void return type",
        kernel_returns_value,
        "return 5",
    ),
    (
        "kernel declared void returns a value",
        lambda: cuda.compile_ptx(kernel_returns_value, "void(int32[:])"),
        errors.TypingError,
        r"^cannot convert the return value of type Literal\[int\]\(5\) to the declared return "
        r"type none",
        kernel_returns_value,
        "return 5",
    ),
    (
        "device function returns what the signature cannot hold",
        lambda: cuda.compile_ptx(kernel_returns_value, "int32[:](int32[:])", device=True),
        errors.TypingError,
        r"cannot convert the return value of type",
        kernel_returns_value,
        "return 5",
    ),
    (
        "plain Python function called from a kernel",
        lambda: cuda.compile_ptx(kernel_calls_plain_function, "void(float64[:])"),
        errors.TypingError,
        r"^Untyped global name 'plain_helper': cannot call it from CUDA code \(CUDA code calls "
        r"@cuda.jit\(device=True\) functions",
        kernel_calls_plain_function,
        "plain_helper(a[0])",
    ),
    (
        "numpy function cujit does not compile",
        lambda: cuda.compile_ptx(kernel_sums, "void(float64[:], float64[:])"),
        errors.TypingError,
        r"^Untyped global name 'numpy.cumsum': cannot call it from CUDA code",
        kernel_sums,
        "np.cumsum",
    ),
    (
        "numpy function imported by name",
        lambda: cuda.compile_ptx(kernel_sums_imported, "void(float64[:], float64[:])"),
        errors.TypingError,
        r"^Untyped global name 'numpy.cumsum': cannot call it",
        kernel_sums_imported,
        "numpy_cumsum",
    ),
    (
        "numpy function of a submodule (a method of its module's object)",
        lambda: cuda.compile_ptx(kernel_draws, "void(float64[:])"),
        errors.TypingError,
        r"^Untyped global name 'numpy.random.rand': cannot call it",
        kernel_draws,
        "np.random.rand",
    ),
]


@pytest.mark.parametrize(
    "call, error, message, pyfunc, construct", [m[1:] for m in LOCATED], ids=[m[0] for m in LOCATED]
)
def test_mistake_in_the_function_is_located(call, error, message, pyfunc, construct):
    with pytest.raises(error) as info:
        call()
    text = str(info.value)
    assert re.search(message, text), text
    assert "0x" not in text.splitlines()[0], text  # no <function ... at 0x...>
    assert_located(text, pyfunc, construct, THIS_FILE)


def test_valid_abi_name_is_the_symbol():
    ptx, _ = cuda.compile(add, float64(float64, float64), abi_info={"abi_name": "_add_f64"})
    assert ".visible .func  (.param .b64 func_retval0) _add_f64(" in ptx


# ---- launches -------------------------------------------------------------------------------------------------
# Run on the CPU target in this process (jit(target="cpu")); the GPU launch's are in runtime/test_launch_fast_path.py.


def kernel_two_args(a, b):
    a[0] = b


DEFINED = f"@cuda.jit function 'kernel_two_args' at {THIS_FILE}:{kernel_two_args.__code__.co_firstlineno}"
WHERE = re.escape(DEFINED)

LAUNCH_MISTAKES = [
    (
        "too few arguments",
        lambda k: k[1, 1](np.zeros(2)),
        TypeError,
        rf"^{WHERE} takes 2 arguments \(a, b\) but 1 was given$",
    ),
    (
        "too many arguments",
        lambda k: k[1, 1](np.zeros(2), 1.0, 2.0),
        TypeError,
        rf"^{WHERE} takes 2 arguments \(a, b\) but 3 were given$",
    ),
    (
        "a keyword argument",
        lambda k: k[1, 1](np.zeros(2), b=1.0),
        TypeError,
        rf"^{WHERE}: kernel launches take positional arguments only, got keyword argument 'b'$",
    ),
    (
        "a list",
        lambda k: k[1, 1](np.zeros(2), [1.0, 2.0]),
        errors.TypingError,
        rf"^kernel argument 1 \('b'\) of {WHERE}: cannot pass a value of type list to a CUDA kernel",
    ),
    (
        "an int over uint64",
        lambda k: k[1, 1](np.zeros(2), 2**64),
        ValueError,
        rf"^kernel argument 1 \('b'\) of {WHERE}: Int value is too large",
    ),
    (
        "an int under int64",
        lambda k: k[1, 1](np.zeros(2), -(2**63) - 1),
        ValueError,
        rf"^kernel argument 1 \('b'\) of {WHERE}: Int value is too large",
    ),
]


@pytest.mark.parametrize(
    "launch, error, message", [m[1:] for m in LAUNCH_MISTAKES], ids=[m[0] for m in LAUNCH_MISTAKES]
)
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_launch_mistake_names_the_kernel_and_argument(launch, error, message, eager):
    jit = cuda.jit("void(float64[:], float64)", target="cpu") if eager else cuda.jit(target="cpu")
    with pytest.raises(error) as info:
        launch(jit(kernel_two_args))
    assert re.search(message, str(info.value)), str(info.value)
    assert "HostLaunch" not in str(info.value)


def test_launch_without_a_matching_signature_lists_the_signatures():
    k = cuda.jit(["void(float64[:], float64)", "void(int32[:], int32)"], target="cpu")(kernel_two_args)
    with pytest.raises(TypeError) as info:
        k[1, 1](np.zeros(2, np.float32), 1.0)
    assert str(info.value) == (
        f"No matching definition for argument type(s) array(float32, 1d, C), float64: "
        f"{DEFINED} launches only its compiled signatures (it compiles no other at launch):\n"
        "    (array(float64, 1d, A), float64)\n"
        "    (array(int32, 1d, A), int32)"
    )
