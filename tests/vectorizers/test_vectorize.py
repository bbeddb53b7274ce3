"""cuda.vectorize, cuda.guvectorize and cuda.Reduce without a GPU: the names as users import them, the generated
kernels compiled for sm_75 and sm_90 on every dtype (conftest assembles each PTX with ptxas), the ufunc
attributes, numba-cuda's type-resolution and scheduling rules, and every argument error."""

import numpy as np
import pytest

import cujit
import vectorize_src as S
from cujit import cuda, float32, float64, types
from cujit import gufuncs, reduction, vectorizers
from cujit.errors import TypingError

from programs import run

CCS = [(7, 5), (9, 0)]


def _kernels_ptx(dispatcher, argtypes):
    """The dispatcher's kernel compiled for ``argtypes`` on each architecture: its PTX."""
    return [dispatcher.compile(tuple(argtypes), cc=cc).ptx for cc in CCS]


# ---- the names ----------------------------------------------------------------------------------------------


def test_names_resolve_as_numba_cuda_spells_them():
    from cujit.cuda import Reduce, guvectorize, reduce, vectorize

    assert cuda.vectorize is vectorize is vectorizers.vectorize
    assert cuda.guvectorize is guvectorize is gufuncs.guvectorize
    assert cuda.reduce is reduce is cuda.Reduce is Reduce is reduction.Reduce
    # numba's top-level names, for `from numba import vectorize` ports (target="cuda")
    assert cujit.vectorize is vectorize and cujit.guvectorize is guvectorize
    from cujit import vectorize as top  # noqa: F401

    with pytest.raises(AttributeError, match="no attribute 'vectorise'"):
        cujit.vectorise  # noqa: B018


def test_importing_cuda_loads_none_of_them(tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(
        "import json, sys\nfrom cujit import cuda\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('cujit.'))))\n"
    )
    loaded = run([script], cwd=tmp_path)
    assert not {"cujit.vectorizers", "cujit.gufuncs", "cujit.reduction"} & set(loaded)


# ---- cuda.vectorize -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", S.DTYPES)
def test_vectorize_compiles_for_every_dtype(dtype):
    name = "boolean" if dtype == "bool_" else dtype
    t = getattr(types, name)
    ufunc = cuda.vectorize([t(t, t)])(S.add if dtype != "bool_" else S.maximum)
    np_dtype = np.dtype(dtype)
    assert list(ufunc.functions) == [(np_dtype, np_dtype)]
    assert ufunc.types == [np_dtype.char * 2 + "->" + np_dtype.char]
    _, kernel = ufunc.functions[(np_dtype, np_dtype)]
    for ptx in _kernels_ptx(kernel, (t[::1], t[::1], t[::1])):
        assert ".entry" in ptx and "__vectorized_" in ptx
    # scalars passed by value: the kernel of a scalar second input
    scalar_kernel = ufunc._stager((False, True))
    for ptx in _kernels_ptx(scalar_kernel, (t[::1], t, t[::1])):
        assert ".entry" in ptx


def test_ufunc_attributes_are_numpys():
    ufunc = cuda.vectorize(
        ["float32(float32, float32)", "float64(float64, float64)", "int32(int32, int32)"], identity=0
    )(S.add)
    assert (ufunc.nin, ufunc.nout, ufunc.nargs, ufunc.ntypes) == (2, 1, 3, 3)
    assert ufunc.types == ["ff->f", "dd->d", "ii->i"]
    assert ufunc.__name__ == "add" and ufunc.__doc__ == S.add.__doc__ and ufunc.__wrapped__ is S.add
    assert ufunc.identity == 0 and ufunc.signature is None
    assert repr(ufunc) == "<cujit CUDA ufunc add (3 types)>"
    resty, kernel = ufunc.functions[(np.dtype("float64"), np.dtype("float64"))]
    assert resty == np.dtype("float64") and isinstance(kernel, cuda.CUDADispatcher)
    three = cuda.vectorize("float64(float64, float64, float64)")(S.axpb)  # one string: a list of one
    assert three.nin == 3 and three.types == ["ddd->d"]


def test_signature_forms():
    by_types = cuda.vectorize([float32(float32, float32), (float64, float64)])(S.add)
    assert by_types.types == ["ff->f", "dd->d"]
    inferred = cuda.vectorize(["(int32, int32)"])(S.divide)  # no result type: inferred (int / int is float64)
    assert inferred.types == ["ii->d"]
    declared = cuda.vectorize(["float32(int32, int32)"])(S.divide)
    assert declared.types == ["ii->f"]
    top = cujit.vectorize(["float64(float64)"], target="cuda")(S.clip01)
    assert top.types == ["d->d"]


@pytest.mark.parametrize("form", ["bare", "empty", "target"])
def test_lazy_vectorize_starts_with_no_types(form):
    if form == "bare":
        ufunc = cuda.vectorize(S.sin_scale)
    elif form == "empty":
        ufunc = cuda.vectorize()(S.sin_scale)
    else:
        ufunc = cujit.vectorize(target="cuda")(S.sin_scale)
    assert ufunc.ntypes == 0 and ufunc.types == [] and ufunc._lazy
    ufunc.add((float32, float32))  # what a call with float32 arrays compiles
    assert ufunc.types == ["ff->f"]  # math.sin of a float32 is a float32 (numba), times a float32


def test_lazy_dtypes_follow_numpy_promotion_of_python_scalars():
    f32, i32 = np.dtype("float32"), np.dtype("int32")
    lazy = vectorizers._lazy_dtypes
    assert lazy((f32, None), [None, 2.0]) == (f32, f32)
    assert lazy((i32, None), [None, 2.5]) == (i32, np.dtype("float64"))
    assert lazy((i32, None), [None, 3]) == (i32, i32)
    assert lazy((f32, None), [None, True]) == (f32, np.dtype("bool"))
    assert lazy((f32, None), [None, np.float64(1)]) == (f32, np.dtype("float64"))
    assert lazy((None, None), [1, 2.0]) == (np.dtype("int64"), np.dtype("float64"))


def test_eager_resolution_is_numba_cudas():
    f32, f64, i64 = np.dtype("float32"), np.dtype("float64"), np.dtype("int64")
    functions = {(f32, f32): None, (f64, f64): None}
    resolve = vectorizers._resolve_eager
    assert resolve(functions, (f32, f32), [], [None, None], "f") == (f32, f32)
    # a scalar takes the one signature the arrays allow
    assert resolve(functions, (f32, None), [1], [None, 2.0], "f") == (f32, f32)
    # scalars only: their own dtype first (a Python float is float64)
    assert resolve(functions, (None, None), [0, 1], [1.0, 2.0], "f") == (f64, f64)
    with pytest.raises(TypeError, match="ambiguous signature"):
        resolve(functions, (None, None), [0, 1], [1, 2], "f")  # int64 fits neither exactly, both by coercion
    with pytest.raises(
        TypeError,
        match=r"No matching version of f\(\) for input dtypes \(float32, float64\).*"
        r"exact types",
    ):
        resolve(functions, (f32, f64), [], [None, None], "f")
    with pytest.raises(TypeError, match="No matching version"):
        resolve({(i64, i64): None}, (f32, f32), [], [None, None], "f")


def test_vectorize_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"Unsupported target: parallel \(vectorize: the targets are 'cuda', 'cpu'"):
        cujit.vectorize(target="parallel")
    with pytest.raises(TypeError, match="caching is not supported"):
        cuda.vectorize(["float32(float32)"], cache=True)
    with pytest.raises(KeyError, match="does not support option: 'fastmath'"):
        cuda.vectorize(["float32(float32)"], fastmath=True)
    with pytest.raises(ValueError, match="Invalid identity value 2"):
        cuda.vectorize(["float32(float32)"], identity=2)
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        cuda.vectorize(["float64(float64)"], nopython=True)(S.clip01)
    with pytest.raises(TypeError, match="invalid type signature 'float33\\(float32\\)'"):
        cuda.vectorize(["float33(float32)"])(S.clip01)
    with pytest.raises(TypeError, match="has 2 argument\\(s\\) but 'clip01' takes 1"):
        cuda.vectorize(["float32(float32, float32)"])(S.clip01)
    with pytest.raises(TypeError, match="must be a scalar type.*got array\\(float32, 1d, A\\)"):
        cuda.vectorize([(float32[:],)])(S.clip01)
    with pytest.raises(TypeError, match="takes no arguments"):
        cuda.vectorize(["int64()"])(S.no_inputs)
    with pytest.raises(TypeError, match="expected a list of type signatures"):
        cuda.vectorize(3)
    kernel = cuda.jit(S.row_scale)
    with pytest.raises(TypeError, match="got the kernel 'row_scale'"):
        cuda.vectorize(["float32(float32)"])(kernel)


def test_vectorize_typing_errors_come_at_decoration():
    with pytest.raises(TypingError):
        cuda.vectorize(["float32(complex64, float32)"])(S.sin_scale)  # math.sin of a complex


def test_a_device_function_vectorizes_as_it_is():
    dev = cuda.jit(device=True)(S.add)
    ufunc = cuda.vectorize(["int32(int32, int32)"])(dev)
    assert ufunc._core is dev and ufunc.__name__ == "add" and ufunc.types == ["ii->i"]


def test_call_errors_before_any_device_work():
    ufunc = cuda.vectorize(["float32(float32, float32)"])(S.add)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 input\(s\) \(and an optional output\), got 1"):
        ufunc(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="unexpected keyword argument\\(s\\) 'where'"):
        ufunc(np.ones(3, np.float32), np.ones(3, np.float32), where=True)
    with pytest.raises(TypeError, match="No matching version.*float64"):
        ufunc(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="cannot convert"):
        ufunc(np.ones(3, np.float32), [object()])


def test_ufunc_reduce_checks_before_any_device_work():
    ufunc = cuda.vectorize(["float32(float32, float32)"])(S.add)
    assert ufunc.reduce(np.array([4.5], np.float32)) == np.float32(4.5)  # one element: no work
    with pytest.raises(TypeError, match="Reduction on an empty array"):
        ufunc.reduce(np.array([], np.float32))
    with pytest.raises(ValueError, match="1-D array"):
        ufunc.reduce(np.ones((2, 2), np.float32))
    unary = cuda.vectorize(["float64(float64)"])(S.clip01)
    with pytest.raises(TypeError, match="needs a binary ufunc"):
        unary.reduce(np.ones(4))


def test_kernel_source_is_in_linecache():
    import linecache

    ufunc = cuda.vectorize(["float64(float64, float64)"])(S.add)
    kernel = ufunc.functions[(np.dtype("float64"),) * 2][1]
    code = kernel.py_func.__code__
    text = "".join(linecache.getlines(code.co_filename))
    assert text.startswith("def __vectorized_add(a0, a1, out):") and "out[i] = core(a0[i], a1[i])" in text
    assert vectorizers.vectorize_source("f", (False, True)).splitlines()[-1].strip() == "out[i] = core(a0[i], a1)"
    # a lambda's name is made an identifier
    square = cuda.vectorize(["float64(float64)"])(lambda x: x * x)
    assert square.__name__ == "<lambda>" and square.types == ["d->d"]


# ---- cuda.guvectorize ---------------------------------------------------------------------------------------


def test_layouts_parse_as_numba_cudas():
    assert gufuncs.parse_layout("(m,n),(n,p)->(m,p)") == ([("m", "n"), ("n", "p")], [("m", "p")])
    assert gufuncs.parse_layout(" (n) , () -> (n) ") == ([("n",), ()], [("n",)])
    assert gufuncs.parse_layout("(n,),(n,)->(),") == ([("n",), ("n",)], [()])  # commas end groups
    with pytest.raises(NameError, match="undefined output symbols: p"):
        gufuncs.parse_layout("(n)->(p)")
    with pytest.raises(ValueError, match='bad token in signature "3"'):
        gufuncs.parse_layout("(3)->()")
    with pytest.raises(ValueError, match="one '->'"):
        gufuncs.parse_layout("(n),(n)")
    with pytest.raises(ValueError, match='bad token in signature "x"'):
        gufuncs.parse_layout("(n)x->(n)")
    with pytest.raises(TypeError, match="layout must be a string"):
        gufuncs.parse_layout(None)


def test_scheduling_is_numba_cudas():
    plan = gufuncs.schedule([("m", "n"), ("n", "p")], [("m", "p")], [(10, 3, 4), (4, 5)])
    assert plan.loopdims == (10,) and plan.loopn == 10 and plan.pinned == [False, True]
    assert plan.output_shapes == [(10, 3, 5)] and plan.ishapes == [(3, 4), (4, 5)]
    plan = gufuncs.schedule([("n",), ()], [("n",)], [(2, 3, 8), (2, 3)])
    assert plan.loopdims == (2, 3) and plan.loopn == 6 and plan.output_shapes == [(2, 3, 8)]
    plan = gufuncs.schedule([("n",), ()], [("n",)], [(8,), ()])
    assert plan.loopdims == () and plan.loopn == 1 and plan.output_shapes == [(8,)]
    with pytest.raises(ValueError, match="arg #2: shape\\[0\\] mismatch argument \\(n=4 elsewhere, 5 here\\)"):
        gufuncs.schedule([("m", "n"), ("n", "p")], [("m", "p")], [(3, 4), (5, 2)])
    with pytest.raises(ValueError, match="arg #1: insufficient inner dimension"):
        gufuncs.schedule([("m", "n")], [("m",)], [(3,)])
    with pytest.raises(ValueError, match="arg #2: outer dimension mismatch"):
        gufuncs.schedule([("n",), ("n",)], [()], [(5, 3), (4, 3)])


def test_gufunc_kernel_source_indexes_the_core():
    src = gufuncs.kernel_source("f", [float32[:, :], float32, float32[:]], [2, 0, 0])
    assert "if i < min(arg0.shape[0], arg1.shape[0], arg2.shape[0]):" in src
    assert "core(arg0[i, :, :], arg1[i], arg2[i:i + 1])" in src
    assert gufuncs.outer_types([float32[:, :], float32, float32[:]], [2, 0, 0]) == (
        float32[:, :, :],
        float32[:],
        float32[:],
    )
    with pytest.raises(ValueError, match="ndim>0 for scalar"):
        gufuncs.outer_types([float32], [1])


@pytest.mark.parametrize("dtype", S.NUMBERS)
def test_guvectorize_compiles_for_every_dtype(dtype):
    t = getattr(types, dtype)
    gufunc = cuda.guvectorize([(t[:], t[:], t[:])], "(n),(n)->()")(S.dot)
    d = np.dtype(dtype)
    assert list(gufunc.kernelmap) == [(d, d)] and gufunc.types == [f"{d.char}{d.char}->{d.char}"]
    outs, kernel = gufunc.kernelmap[(d, d)]
    assert outs == (d,)
    for cc in CCS:
        ptx = kernel.compile((t[:, :], t[:, :], t[:]), cc=cc).ptx
        assert ".entry" in ptx and "__gufunc_dot" in ptx


def test_gufunc_attributes_and_signature_forms():
    gufunc = cuda.guvectorize(
        ["void(float32[:,:], float32[:,:], float32[:,:])", (float64[:, :], float64[:, :], float64[:, :])],
        "(m,n),(n,p)->(m,p)",
    )(S.matmul)
    assert (gufunc.nin, gufunc.nout, gufunc.nargs, gufunc.ntypes) == (2, 1, 3, 2)
    assert gufunc.types == ["ff->f", "dd->d"] and gufunc.signature == "(m,n),(n,p)->(m,p)"
    assert gufunc.__name__ == "matmul" and repr(gufunc) == "<cujit CUDA gufunc matmul (m,n),(n,p)->(m,p) (2 types)>"
    two = cuda.guvectorize("void(float64[:], float64[:], float64[:])", "(n)->(),()")(S.sum_and_max)
    assert (two.nin, two.nout) == (1, 2) and two.types == ["d->dd"]
    scalar_in = cujit.guvectorize([(float32[:], float32, float32[:])], "(n),()->(n)", target="cuda")(S.row_scale)
    assert scalar_in.types == ["ff->f"]
    lazy = cuda.guvectorize("(n)->(n)")(S.cumsum)
    assert lazy.ntypes == 0 and lazy._lazy


def test_lazy_gufunc_compiles_for_given_outputs_and_asks_for_them():
    lazy = cuda.guvectorize("(n),()->(n)")(S.row_scale)
    x, out = np.ones((3, 4), np.float32), np.empty((3, 4), np.float32)
    with pytest.raises(TypeError, match="pass its output array"):
        lazy._kernel_for((np.dtype("float32"), np.dtype("float32")), [None], [x, np.float32(2)])
    lazy._kernel_for((np.dtype("float32"), np.dtype("float32")), [out], [x, np.float32(2)])
    assert lazy.types == ["ff->f"]
    _, kernel = lazy.kernelmap[(np.dtype("float32"),) * 2]
    assert kernel.signatures == [(float32[:, :], float32[:], float32[:, :])]


def test_gufunc_kernel_choice_casts_safely():
    gufunc = cuda.guvectorize([(float32[:], float32, float32[:]), (float64[:], float64, float64[:])], "(n),()->(n)")(
        S.row_scale
    )
    f32, f64, i16, i64 = (np.dtype(n) for n in ("float32", "float64", "int16", "int64"))
    assert gufunc._kernel_for((f32, f32), [None], [None, None])[0] == (f32, f32)
    assert gufunc._kernel_for((i16, f32), [None], [None, None])[0] == (f32, f32)  # int16 -> float32 is safe
    assert gufunc._kernel_for((i64, f32), [None], [None, None])[0] == (f64, f64)
    assert gufunc._kernel_for((f32, f64), [None], [None, 2.0])[0] == (f32, f32)  # a Python float is weak
    with pytest.raises(TypeError, match="no matching signature.*complex128"):
        gufunc._kernel_for((np.dtype("complex128"), f32), [None], [None, None])


def test_guvectorize_errors_name_the_problem():
    with pytest.raises(TypeError, match="guvectorized functions cannot return values"):
        cuda.guvectorize(["float32(float32[:], float32, float32[:])"], "(n),()->(n)")(S.row_scale)
    with pytest.raises(TypeError, match="has 2 argument\\(s\\) but the layout"):
        cuda.guvectorize([(float32[:], float32[:])], "(n),()->(n)")(S.row_scale)
    with pytest.raises(TypeError, match="takes 3 argument\\(s\\) but the layout '\\(n\\)->\\(n\\)' has 1 input"):
        cuda.guvectorize([(float32[:], float32[:])], "(n)->(n)")(S.row_scale)
    with pytest.raises(ValueError, match="ndim>0 for scalar"):
        cuda.guvectorize([(float32, float32, float32[:])], "(n),()->(n)")(S.row_scale)
    with pytest.raises(TypeError, match="one or two positional arguments"):
        cuda.guvectorize([], "(n)->(n)", "extra")
    with pytest.raises(TypeError, match="writable_args are not supported"):
        cuda.guvectorize("(n)->(n)", writable_args=(0,))
    with pytest.raises(TypeError, match="caching is not supported"):
        cuda.guvectorize("(n)->(n)", cache=True)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        cuda.guvectorize("(n)->(n)", nopython=False)
    with pytest.raises(TypeError, match="target options are not supported: 'fastmath'"):
        cuda.guvectorize("(n)->(n)", fastmath=True)
    with pytest.raises(
        ValueError,
        match=r"Unsupported target: cpu \(guvectorize: the targets are 'cuda'; with "
        r"CUJIT_TARGET=cpu, target='cuda' runs them on the CPU target",
    ):
        cuda.guvectorize("(n)->(n)", target="cpu")
    with pytest.raises(NameError, match="undefined output symbols"):
        cuda.guvectorize("(n)->(m)")


def test_gufunc_call_errors_before_any_device_work():
    gufunc = cuda.guvectorize([(float32[:], float32, float32[:])], "(n),()->(n)")(S.row_scale)
    x = np.ones((2, 3), np.float32)
    with pytest.raises(
        TypeError,
        match="This gufunc accepts 2 positional arguments \\(when providing input only\\) "
        "or 3 positional arguments \\(when providing input and output\\). Got 1 "
        "positional argument.",
    ):
        gufunc(x)
    with pytest.raises(ValueError, match="cannot specify argument 'out' as both positional and keyword"):
        gufunc(x, 2.0, x, out=x)
    with pytest.raises(TypeError, match="unexpected keyword argument\\(s\\) 'axis'"):
        gufunc(x, 2.0, axis=0)
    with pytest.raises(ValueError, match="arg #2: outer dimension mismatch"):
        gufunc(np.ones((4, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="output shape mismatch"):
        gufunc(x, 2.0, out=np.empty((3, 3), np.float32))
    two = cuda.guvectorize("void(float64[:], float64[:], float64[:])", "(n)->(),()")(S.sum_and_max)
    with pytest.raises(TypeError, match="out= must be a tuple of 2 arrays"):
        two(np.ones((2, 3)), out=np.empty(2))


# ---- cuda.Reduce --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", S.DTYPES)
def test_reduction_kernel_compiles_for_every_dtype(dtype):
    t = cujit.from_dtype(np.dtype(dtype))
    kernel = reduction.reduction_kernel(S.add if dtype != "bool_" else S.maximum, t)
    for cc in CCS:
        ptx = kernel.compile((t[::1], t[::1], t, types.boolean), cc=cc).ptx
        assert ".shared" in ptx and "bar.sync" in ptx


def test_reduce_keeps_kernels_per_function_and_dtype():
    reduction.Reduce._cache.clear()
    r = cuda.Reduce(S.add)
    first = r._compile(np.dtype("float32"))
    assert r._compile(np.dtype("float32")) is first and cuda.Reduce(S.add)._compile(np.dtype("float32")) is first
    assert r._compile(np.dtype("float64")) is not first


def test_reduce_launch_plan_is_numba_cudas():
    assert reduction._launch_plan(1000) == (7, 896, 104)
    assert reduction._launch_plan(100) == (0, 0, 100)
    assert reduction._launch_plan(128) == (1, 128, 0)
    assert reduction._launch_plan(1 << 24) == (64, 1 << 24, 0)
    assert reduction._launch_plan((1 << 20) + 5) == (64, 1 << 20, 5)


def test_reduce_checks_before_any_device_work():
    r = cuda.reduce(lambda a, b: a + b)
    empty = r(np.array([], np.float32), init=3)
    assert empty == 3 and type(empty) is np.float32  # numba-cuda returns init in the array's type
    assert r(np.arange(5.0), size=0, init=7) == np.float64(7)
    with pytest.raises(TypeError, match="only support 1D array"):
        r(np.ones((2, 2)))
    with pytest.raises(ValueError, match="size must not be negative"):
        r(np.ones(4), size=-1)
    with pytest.raises(TypeError, match="size must be an integer"):
        r(np.ones(4), size=2.5)
    with pytest.raises(TypeError, match="needs a binary function"):
        cuda.Reduce(3)
    with pytest.raises(TypeError, match="got the kernel"):
        reduction.reduction_kernel(cuda.jit(S.row_scale), float32)
    with pytest.raises(TypeError, match="dtype"):
        cuda.Reduce(S.add)._compile(np.dtype("datetime64[s]"))
