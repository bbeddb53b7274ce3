"""compile / compile_ptx: the public API, the Numba and C ABIs (prototypes, return slots, names), options
(fastmath, lineinfo, forceinline, launch bounds) and compute capability targets.

Expected values follow numba-cuda 0.30.4 (checked with its compiler at cc 7.5 where its documentation leaves doubt).
"""

import inspect
import math
import re
import subprocess
import warnings

import pytest

from cujit import cuda, void, boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64
from cujit import errors


def add(x, y):
    return x + y


def f(x, y):
    return x + y


def f_module(x, y):
    return x + y


def kernel_body(a, b):
    c = a + b  # noqa: F841


def kernel_many(a, b, c, d, e, g, h):
    pass


def kernel_returns(a):
    return a


def zero_args():
    return 2.5


def one_arg(a):
    return a * 2


def three_args(a, b, c):
    return a + b + c


def fastmath_expr(x, y, z, d):
    return math.sqrt((x * y + z) / d)


LAMBDA = lambda a, b: a + b  # noqa: E731


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def lt(a, b):
    return a < b


def gt(a, b):
    return a > b


def le(a, b):
    return a <= b


def ge(a, b):
    return a >= b


def eq_as_uint8(a, b):
    return uint8(a == b)


def has_entry(ptx):
    return re.search(r"\.visible\s+\.entry\b", ptx) is not None


def has_func(ptx):
    return re.search(r"\.visible\s+\.func\b", ptx) is not None


def target_line(ptx):
    return re.search(r"^\s*\.target\s+([^\n]+)", ptx, re.M).group(1).strip()


# -- the machinery of conftest: ptxas and the PTX capture ----------------------------------------


def test_ptxas_is_available(ptxas):
    proc = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "ptxas" in proc.stdout + proc.stderr


@pytest.mark.parametrize("entry", ["compile", "compile_ptx", "dispatcher"])
def test_ptx_capture_covers_every_entry_point(entry, captured_count):
    before = captured_count()
    if entry == "compile":
        cuda.compile(add, (int32, int32))
    elif entry == "compile_ptx":
        cuda.compile_ptx(add, (int32, int32), device=True)
    else:
        cuda.jit("void(int32, int32)")(kernel_body)
    assert captured_count() == before + 1, "conftest's PTX capture missed a compilation; ptxas would not see it"


# -- what a user does first: a device function in each ABI, a name, a string signature -----------------------


def test_first_use_numba_abi(prototypes):
    ptx, resty = cuda.compile_ptx(add, int32(int32, int32), device=True)
    assert resty == int32
    proto = prototypes.visible(ptx)
    assert proto.kind == "func"
    assert proto.name.startswith("_ZN") and "3add" in proto.name
    assert proto.retval == "b32"
    assert proto.params == ["b64", "b32", "b32"]
    assert "NumbaEnv" in ptx
    assert target_line(ptx) == "sm_75"


def test_first_use_c_abi(prototypes):
    ptx, resty = cuda.compile_ptx(add, int32(int32, int32), device=True, abi="c")
    assert resty == int32
    proto = prototypes.visible(ptx)
    assert (proto.kind, proto.name, proto.retval, proto.params) == ("func", "add", "b32", ["b32", "b32"])
    assert "NumbaEnv" not in ptx


def test_first_use_compile_abi_name(prototypes):
    ptx, resty = cuda.compile(add, float32(float32, float32), abi_info={"abi_name": "add_f32"})
    assert resty == float32
    proto = prototypes.visible(ptx)
    assert (proto.kind, proto.name, proto.retval, proto.params) == ("func", "add_f32", "b32", ["b32", "b32"])
    assert re.search(r"\badd(\.rn)?\.f32\b", ptx)
    assert "NumbaEnv" not in ptx


def test_first_use_string_signature_cc90(prototypes):
    ptx, resty = cuda.compile_ptx(add, "float64(float64, float64)", device=True, cc=(9, 0))
    assert resty == float64
    assert target_line(ptx) == "sm_90"
    proto = prototypes.visible(ptx)
    assert proto.retval == "b32"
    assert proto.params == ["b64", "b64", "b64"]
    assert re.search(r"\badd(\.rn)?\.f64\b", ptx)


# -- kernels, device functions and the C ABI ------------------------------------------------------------


@pytest.mark.parametrize(
    "sig", [(float32, float32), void(float32, float32), "void(float32, float32)"], ids=["tuple", "Signature", "string"]
)
def test_kernel_ptx_shape(sig, prototypes):
    """A kernel is a `.visible .entry` returning void, whatever form its signature takes (scalar arguments)."""
    ptx, resty = cuda.compile_ptx(kernel_body, sig)
    assert resty == void
    assert has_entry(ptx)
    assert not has_func(ptx)
    assert "func_retval" not in ptx
    proto = prototypes.visible(ptx)
    assert proto.kind == "entry" and proto.retval is None
    assert proto.params == ["f32", "f32"]
    assert "11kernel_body" in proto.name


def test_kernel_scalar_param_types(prototypes):
    """Kernel parameters are passed by value with their natural width."""
    ptx, _ = cuda.compile_ptx(kernel_many, (boolean, int8, uint16, int32, int64, float32, float64))
    assert prototypes.visible(ptx).params == ["u8", "u8", "u16", "u32", "u64", "f32", "f64"]


def test_device_ptx_numba_abi(prototypes):
    """A Numba-ABI device function: a `.func` with a return slot and one parameter per argument."""
    ptx, resty = cuda.compile_ptx(add, (float32, float32), device=True)
    assert resty == float32
    assert has_func(ptx) and not has_entry(ptx)
    assert "func_retval0" in ptx
    assert prototypes.visible(ptx).params == ["b64", "b32", "b32"]


@pytest.mark.parametrize(
    "sig, expected",
    [
        (int32(int32, int32), int32),
        (int16(int16, int16), int16),
        ("uint32(uint32, uint32)", uint32),
        (int8(float64, float64), int8),
        (float32(int32, int32), float32),
    ],
)
@pytest.mark.parametrize("api", ["compile_ptx", "compile"])
def test_explicit_return_type_is_returned(api, sig, expected):
    """A declared return type casts the result and is what comes back."""
    if api == "compile_ptx":
        _, resty = cuda.compile_ptx(add, sig, device=True)
    else:
        _, resty = cuda.compile(add, sig)
    assert resty == expected


def test_numba_abi_param_count(prototypes):
    """Numba ABI: status return + return-slot pointer + one parameter per argument."""
    ptx, _ = cuda.compile_ptx(add, (int32, int32), device=True)
    proto = prototypes.visible(ptx)
    assert proto.retval == "b32"
    assert proto.params == ["b64", "b32", "b32"]


def test_inferred_int_promotion():
    """int32 + int32 is int64, as numba infers it."""
    _, resty = cuda.compile_ptx(add, (int32, int32), device=True)
    assert resty == int64


@pytest.mark.parametrize(
    "pyfunc, argtypes, c_params",
    [
        (zero_args, (), []),
        (one_arg, (float64,), ["b64"]),
        (add, (int16, uint8), ["b32", "b32"]),
        (three_args, (int64, int32, boolean), ["b64", "b32", "b32"]),
        (three_args, (float32, float32, float32), ["b32", "b32", "b32"]),
    ],
    ids=["0-args", "1-arg", "2-args", "3-args-mixed", "3-args-f32"],
)
def test_prototypes_both_abis(pyfunc, argtypes, c_params, prototypes):
    """Numba ABI = i32 status + return pointer + args; C ABI = value return + args (i8/i16 widened to .b32)."""
    numba_ptx, resty = cuda.compile_ptx(pyfunc, argtypes, device=True)
    numba_proto = prototypes.visible(numba_ptx)
    assert numba_proto.retval == "b32"
    assert numba_proto.params == ["b64"] + c_params
    assert len(numba_proto.params) == len(argtypes) + 1

    c_ptx, c_resty = cuda.compile(pyfunc, argtypes)
    c_proto = prototypes.visible(c_ptx)
    assert c_resty == resty
    assert c_proto.name == pyfunc.__name__
    assert c_proto.params == c_params
    assert c_proto.retval == ("b64" if resty in (int64, uint64, float64) else "b32")


@pytest.mark.parametrize("sig, width", [(int32(int32, int32), "b32"), (int64(int64, int64), "b64")])
def test_c_abi_name_and_width(sig, width):
    """C ABI: the function is named after the Python function and returns its result at its width."""
    ptx, _ = cuda.compile(f, sig, abi="c")
    assert re.search(rf"\.visible\s+\.func\s+\(\.param\s+\.{width}\s+func_retval0\)\s+f\(", ptx), ptx


def test_c_abi_module_scope_name(prototypes):
    """C ABI: a module-level function keeps its plain name."""
    ptx, _ = cuda.compile(f_module, int32(int32, int32), abi="c")
    assert prototypes.visible(ptx).name == "f_module"


def test_c_abi_abi_name(prototypes):
    """abi_name is used verbatim, even when it looks mangled."""
    ptx, _ = cuda.compile(f_module, int32(int32, int32), abi="c", abi_info={"abi_name": "_Z4funcii"})
    assert prototypes.visible(ptx).name == "_Z4funcii"
    assert "f_module" not in ptx


def test_c_abi_lambda_names(prototypes):
    """A lambda is named by abi_name, or else `<lambda>` escaped as numba does."""
    ptx, _ = cuda.compile(LAMBDA, (int32, int32), abi_info={"abi_name": "blah"})
    assert prototypes.visible(ptx).name == "blah"
    ptx, _ = cuda.compile(LAMBDA, (int32, int32))
    assert prototypes.visible(ptx).name == "_3clambda_3e"


def test_numba_abi_abi_name_renames_function_but_not_env(prototypes):
    """abi_name is honoured for the Numba ABI too; the env global keeps the mangled name."""
    ptx, _ = cuda.compile_ptx(add, (int32, int32), device=True, abi_info={"abi_name": "my_add"})
    proto = prototypes.visible(ptx)
    assert proto.name == "my_add"
    assert proto.params == ["b64", "b32", "b32"]
    assert re.search(r"\.common\s+\.global\s+\.align\s+8\s+\.u64\s+_ZN08NumbaEnv\w*3add\w*Eii;", ptx)


@pytest.mark.parametrize(
    "call, has_env",
    [
        (lambda: cuda.compile(add, (int32, int32)), False),
        (lambda: cuda.compile_ptx(add, (int32, int32), device=True, abi="c"), False),
        (lambda: cuda.compile_ptx(add, (int32, int32), device=True), True),
        (lambda: cuda.compile_ptx(kernel_body, (int32, int32)), True),
    ],
    ids=["compile-c", "compile_ptx-c", "numba-device", "numba-kernel"],
)
def test_numba_env_presence(call, has_env):
    """Only Numba-ABI functions carry `.common .global .align 8 .u64 _ZN08NumbaEnv...`."""
    ptx, _ = call()
    env = re.search(r"^\.common\s+\.global\s+\.align\s+8\s+\.u64\s+_ZN08NumbaEnv\w+;", ptx, re.M)
    assert (env is not None) == has_env
    assert ("NumbaEnv" in ptx) == has_env


@pytest.mark.parametrize("ty", [int16, int32, int64, uint32, float32])
@pytest.mark.parametrize("op", [eq, ne, lt, gt, le, ge])
def test_c_abi_bool_returns(op, ty, prototypes):
    """Comparisons return bool, widened to a .b32 return value in the C ABI."""
    ptx, resty = cuda.compile(op, (ty, ty), abi="c")
    assert resty == boolean
    assert prototypes.visible(ptx).retval == "b32"


def test_c_abi_bool_cast_to_uint8():
    """uint8(a == b) is uint8 in the C ABI."""
    _, resty = cuda.compile(eq_as_uint8, (int32, int32), abi="c")
    assert resty == uint8


def test_compile_defaults(prototypes):
    """compile() defaults to a C-ABI device function named after the Python function."""
    ptx, resty = cuda.compile(f_module, int32(int32, int32))
    assert resty == int32
    proto = prototypes.visible(ptx)
    assert (proto.kind, proto.name, proto.retval, proto.params) == ("func", "f_module", "b32", ["b32", "b32"])
    assert "NumbaEnv" not in ptx


def test_invalid_output():
    """An unknown output kind is NotImplementedError naming it."""
    with pytest.raises(NotImplementedError, match=r"^Unsupported output type: illegal$"):
        cuda.compile(add, (int32, int32), output="illegal")


@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.compile_ptx(kernel_returns, (int32,)),
        lambda: cuda.compile_ptx(kernel_returns, (float32,), device=False),
        lambda: cuda.compile(kernel_returns, (int32,), device=False, abi="numba"),
    ],
    ids=["compile_ptx-default", "compile_ptx-device-False", "compile-device-False"],
)
def test_non_void_kernel(call):
    """A kernel must return void, whichever entry point compiles it."""
    with pytest.raises(TypeError, match="must have void return type"):
        call()


def test_c_abi_kernel_rejected():
    """Kernels have no C ABI."""
    with pytest.raises(NotImplementedError, match=r"^The C ABI is not supported for kernels$"):
        cuda.compile_ptx(kernel_body, (int32, int32), abi="c")


@pytest.mark.parametrize("api", [cuda.compile, cuda.compile_ptx])
def test_unsupported_abi(api):
    """An unknown ABI is NotImplementedError naming the two there are."""
    with pytest.raises(NotImplementedError, match=r"^Unsupported ABI: fastcall \(the ABIs are 'numba' and 'c'\)$"):
        api(add, (int32, int32), device=True, abi="fastcall")


def test_forceinline_rules():
    """forceinline needs LTO-IR output and a device function."""
    with pytest.raises(ValueError, match=r"^Can only designate forced inlining in LTO-IR$"):
        cuda.compile(add, (int32, int32), forceinline=True)
    with pytest.raises(ValueError, match=r"^Can only designate forced inlining in LTO-IR$"):
        cuda.compile_ptx(add, (int32, int32), device=True, forceinline=True)
    with pytest.raises(ValueError, match=r"^Cannot force-inline kernels$"):
        cuda.compile(kernel_body, (int32, int32), device=False, abi="numba", output="ltoir", forceinline=True)


@pytest.mark.parametrize(
    "fastmath, expected, absent",
    [
        (False, ["fma.rn.f32", "div.rn.f32", "sqrt.rn.f32"], ["div.approx", "sqrt.approx", ".ftz."]),
        (True, ["fma.rn.ftz.f32", "div.approx.ftz.f32", "sqrt.approx.ftz.f32"], ["div.rn.f32", "sqrt.rn.f32"]),
    ],
    ids=["default", "fastmath"],
)
@pytest.mark.parametrize("abi", ["numba", "c"])
def test_fastmath_ptx(fastmath, expected, absent, abi):
    """FMA contraction by default; fastmath adds ftz and approximate division/sqrt."""
    ptx, resty = cuda.compile_ptx(fastmath_expr, (float32,) * 4, device=True, fastmath=fastmath, abi=abi)
    assert resty == float32
    for instr in expected:
        assert re.search(rf"\b{re.escape(instr)}\s", ptx), f"{instr} missing"
    for instr in absent:
        assert instr not in ptx


def _line_of(func, text):
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "kwargs",
    [dict(device=True), dict(device=True, abi="c"), dict(device=False)],
    ids=["numba-device", "c-device", "kernel"],
)
def test_lineinfo(kwargs):
    """lineinfo: .file names this test file and .loc points at the source lines."""
    func = fastmath_expr if kwargs["device"] else kernel_body
    ptx, _ = cuda.compile_ptx(func, (float32,) * len(inspect.signature(func).parameters), lineinfo=True, **kwargs)
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M))
    assert __file__ in files.values(), files
    file_id = next(k for k, v in files.items() if v == __file__)
    locs = {int(line) for fid, line in re.findall(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+", ptx, re.M) if fid == file_id}
    if kwargs["device"]:
        body_line = _line_of(func, "return math.sqrt")
        assert body_line in locs, (body_line, locs)
    else:  # the kernel's body is dead code: any of its lines will do
        lines, first = inspect.getsourcelines(func)
        assert locs & set(range(first, first + len(lines))), locs
    no_lineinfo, _ = cuda.compile_ptx(func, (float32,) * len(inspect.signature(func).parameters), **kwargs)
    assert ".loc" not in no_lineinfo and ".file" not in no_lineinfo


def test_debug_without_opt_compiles():
    with warnings.catch_warnings():
        warnings.simplefilter("error", errors.NumbaInvalidConfigWarning)
        ptx, resty = cuda.compile_ptx(fastmath_expr, (float32,) * 4, device=True, debug=True, opt=False)
    assert resty == float32
    assert re.search(r'^\s*\.file\s+\d+\s+"' + re.escape(__file__) + '"', ptx, re.M)
    assert re.search(r"^\s*\.loc\s+\d+\s+\d+", ptx, re.M)


@pytest.mark.parametrize("opt", [None, True])
def test_debug_with_opt_warns(opt):
    with pytest.warns(errors.NumbaInvalidConfigWarning, match="debug=True with opt=True"):
        cuda.compile_ptx(add, (int32, int32), device=True, debug=True, opt=opt)


def test_opt_false_compiles_unoptimised_code(prototypes):
    optimised, resty_o = cuda.compile_ptx(fastmath_expr, (float32,) * 4, device=True)
    plain, resty_p = cuda.compile_ptx(fastmath_expr, (float32,) * 4, device=True, opt=False)
    assert resty_o == resty_p == float32
    assert prototypes.visible(plain).params == prototypes.visible(optimised).params
    assert plain != optimised


def test_launch_bounds_at_most_three():
    """At most three launch bounds."""
    with pytest.raises(
        ValueError, match=re.escape("Got 4 launch bounds: (1, 2, 3, 4). A maximum of three are supported")
    ):
        cuda.compile_ptx(kernel_body, (int32, int32), launch_bounds=(1, 2, 3, 4))


@pytest.mark.parametrize(
    "cc, target",
    [
        ((7, 5), "sm_75"),
        ((7, 7), "sm_75"),
        ((8, 5), "sm_80"),
        ((8, 6), "sm_86"),
        ((8, 9), "sm_89"),
        ((9, 0), "sm_90"),
        ((9, 0, "a"), "sm_90a"),
        ((10, 0), "sm_100"),
        ((12, 0), "sm_120"),
    ],
)
@pytest.mark.parametrize("device", [True, False], ids=["device", "kernel"])
def test_cc_targets(cc, target, device):
    """The nearest supported architecture not above the requested cc."""
    func = add if device else kernel_body
    ptx, _ = cuda.compile_ptx(func, (int32, int32), device=device, cc=cc)
    assert target_line(ptx).split(",")[0].strip() == target


def test_cc_below_minimum():
    with pytest.raises(errors.CCSupportError, match=r"6\.1"):
        cuda.compile_ptx(add, (int32, int32), device=True, cc=(6, 1))
    assert issubclass(errors.CCSupportError, RuntimeError)


def test_cc_arch_specific_without_exact_arch():
    with pytest.raises(ValueError, match="Can't use arch-specific"):
        cuda.compile_ptx(add, (int32, int32), device=True, cc=(9, 1, "a"))


@pytest.mark.parametrize("api", ["compile_ptx", "compile"])
def test_default_cc(api):
    """No cc -> the documented default, no GPU needed."""
    assert cuda.DEFAULT_CC == (7, 5)
    if api == "compile_ptx":
        ptx, _ = cuda.compile_ptx(add, (int32, int32), device=True)
    else:
        ptx, _ = cuda.compile(add, (int32, int32))
    assert target_line(ptx) == "sm_75"


def _without_uids(ptx):
    return re.sub(r"B\d+v\d+", "B_v_", ptx)


@pytest.mark.parametrize(
    "disturb",
    [
        dict(device=True, debug=True, opt=True),
        dict(device=True, debug=True, opt=False),
        dict(device=False, debug=True, opt=False),
        dict(device=True, fastmath=True),
        dict(device=True, cc=(9, 0, "a")),
        dict(device=True, lineinfo=True, abi="c"),
    ],
    ids=["debug-opt", "debug", "debug-kernel", "fastmath", "cc90a", "lineinfo-c"],
)
@pytest.mark.parametrize(
    "subject",
    [dict(device=False, lineinfo=True), dict(device=True), dict(device=True, opt=False)],
    ids=["kernel-lineinfo", "device", "device-opt0"],
)
def test_options_do_not_leak_between_compilations(subject, disturb):
    """Compiling with other options in between does not change a compilation's PTX (uids aside)."""
    func = add if subject["device"] else kernel_body
    before, _ = cuda.compile_ptx(func, (int32, int32), **subject)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.NumbaInvalidConfigWarning)
        cuda.compile_ptx(add if disturb["device"] else kernel_body, (int32, int32), **disturb)
    after, _ = cuda.compile_ptx(func, (int32, int32), **subject)
    assert _without_uids(after) == _without_uids(before)


def scaled(x, y):
    return x * y + 1.0


def test_llvm_output_is_optimised_ir_a_tool_can_link_back(tmp_path):
    """output="llvm": the optimised LLVM IR of a device function as text (issue 43), which a tool may transform,
    assemble with llc and link back through declare_device."""
    import shutil

    from cujit import _core

    ir, resty = cuda.compile(
        scaled, "float64(float64, float64)", output="llvm", cc=(9, 0), abi_info={"abi_name": "scaled_udf"}
    )
    assert resty == float64 and isinstance(ir, str)
    assert 'target triple = "nvptx64-nvidia-cuda"' in ir and "define double @scaled_udf(double" in ir
    with pytest.raises(ValueError, match="forced inlining"):
        cuda.compile(scaled, "float64(float64, float64)", output="llvm", forceinline=True)
    llc = shutil.which("llc-22") or shutil.which("llc")
    if llc is None:
        pytest.skip("no llc")
    path = tmp_path / "scaled.ll"
    path.write_text(ir)
    ptx = subprocess.run(
        [llc, "-march=nvptx64", "-mcpu=sm_90", str(path), "-o", "-"], check=True, capture_output=True, text=True
    ).stdout
    udf = cuda.declare_device("scaled_udf", "float64(float64, float64)", abi="c", link=[cuda.PTXSource(ptx.encode())])

    def kernel(r, x):
        r[0] = udf(x[0], x[1])

    compiled = cuda.jit(kernel).compile("void(float64[::1], float64[::1])", cc=(9, 0))
    cubin = compiled.link((9, 0))
    assert _core.link.cubin_has_symbol(cubin, compiled.entry) and _core.link.cubin_has_symbol(cubin, "scaled_udf")
