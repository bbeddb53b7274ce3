"""``cuda.guvectorize``: generalized ufuncs on the GPU (numba-cuda 0.30.4's ``CUDAGeneralizedUFunc``).

A layout such as ``"(m,n),(n,p)->(m,p)"`` names each argument's core dimensions; the dimensions before them
are the loop, one GPU thread per loop index, and the generated kernel calls the user's device function with
each argument's core slice (``a[i, :, :]``). A core of no dimensions passes the element (or, when the type
signature gives a 1-D array, the one-element slice ``a[i:i + 1]``, which is how outputs of ``()`` are written).

Calls follow numba-cuda: arguments are the inputs, or the inputs and outputs; ``out=`` names one output;
outputs not given are allocated; results stay on the device when any argument is a device array. Inputs whose
outer dimensions are () or (1,) are used by every loop index. The kernel is the first signature whose dtypes
match the inputs' exactly, else the first to which every input can be cast safely (host inputs are cast; a
device input that needs a cast is an error). ``guvectorize(layout)`` without type signatures compiles for the
arguments' dtypes at call time; the outputs must then be passed.
"""

import operator
import re
import threading
from collections import OrderedDict
from functools import reduce

import numpy as np

from cujit import _core
from cujit.errors import entry_point
from cujit.vectorizers import (
    as_device_array,
    check_identity,
    cujit_type,
    device_function,
    generated_function,
    identifier,
    is_device_array,
    kernel_namespace,
    parse_signature,
    python_function,
    scalar_dtype,
    type_chars,
    signature_list,
    check_target,
    synchronize_stream,
    launch_over,
)

# ---- the layout --------------------------------------------------------------------------------------------

_GROUP = re.compile(r"\(([^()]*)\)")


def _parse_groups(text, layout):
    groups, rest, end = [], [], 0
    for m in _GROUP.finditer(text):
        rest.append(text[end : m.start()])
        end = m.end()
        names = [s for s in m.group(1).split(",") if s]
        for name in names:
            if not name.isidentifier():
                raise ValueError(
                    f'bad token in signature "{name}" (in the layout {layout!r}: core dimensions are '
                    "names, as in '(m,n),(n)->(m)')"
                )
        groups.append(tuple(names))
    rest.append(text[end:])
    stray = "".join(rest).replace(",", "")
    if stray:
        raise ValueError(f'bad token in signature "{stray}" (in the layout {layout!r})')
    return groups


def parse_layout(layout):
    """``"(m,n),(n)->(m)"`` -> ([("m", "n"), ("n",)], [("m",)]). Output dimensions must appear among the
    inputs'."""
    if not isinstance(layout, str):
        raise TypeError(f"guvectorize: the layout must be a string such as '(n),()->(n)', got {layout!r}")
    text = "".join(layout.split())
    if text.count("->") != 1:
        raise ValueError(f"guvectorize: the layout {layout!r} must have one '->' between inputs and outputs")
    ins, outs = text.split("->")
    inputs, outputs = _parse_groups(ins, layout), _parse_groups(outs, layout)
    if not inputs or not outputs:
        raise ValueError(f"guvectorize: the layout {layout!r} needs at least one input and one output")
    undefined = {s for g in outputs for s in g} - {s for g in inputs for s in g}
    if undefined:
        raise NameError(f"undefined output symbols: {','.join(sorted(undefined))}")
    return inputs, outputs


# ---- scheduling a call -------------------------------------------------------------------------------------


class Schedule:
    """How a call loops: the core shapes of inputs and outputs, the loop dimensions and their product, and
    which inputs every loop index shares (outer shape () or (1,))."""

    def __init__(self, ishapes, oshapes, loopdims, pinned):
        self.ishapes, self.oshapes, self.loopdims, self.pinned = ishapes, oshapes, loopdims, pinned
        self.loopn = reduce(operator.mul, loopdims, 1)
        self.output_shapes = [tuple(loopdims) + tuple(s) for s in oshapes]


def schedule(inputs_layout, outputs_layout, ishapes):
    """numba-cuda's GUFuncEngine.schedule: binds the core dimension names to sizes and picks the loop."""
    symbols, outer, inner = {}, [], []
    for argn, (shape, names) in enumerate(zip(ishapes, inputs_layout), start=1):
        shape = tuple(shape)
        if len(shape) < len(names):
            raise ValueError(
                f"arg #{argn}: insufficient inner dimension (shape {shape}, core dimensions ({','.join(names)}))"
            )
        split = len(shape) - len(names)
        for axis, (dim, name) in enumerate(zip(shape[split:], names), start=split):
            if symbols.setdefault(name, dim) != dim:
                raise ValueError(
                    f"arg #{argn}: shape[{axis}] mismatch argument ({name}={symbols[name]} elsewhere, {dim} here)"
                )
        outer.append(shape[:split])
        inner.append(shape[split:])
    oshapes = [tuple(symbols[s] for s in names) for names in outputs_layout]
    sizes = [reduce(operator.mul, s, 1) for s in outer]
    loopdims = outer[sizes.index(max(sizes))]
    pinned = []
    for argn, d in enumerate(outer, start=1):
        if d == loopdims:
            pinned.append(False)
        elif d in ((1,), ()):
            pinned.append(True)
        else:
            raise ValueError(f"arg #{argn}: outer dimension mismatch ({d} against the loop's {loopdims})")
    return Schedule(inner, oshapes, loopdims, pinned)


# ---- the generated kernel ----------------------------------------------------------------------------------

_GUFUNC_KERNEL = """\
def __gufunc_{name}({params}):
    i = cuda.grid(1)
    if i < min({sizes}):
        core({items})
"""


def _core_index(param, core_ndim, argtype):
    if core_ndim:
        return f"{param}[{', '.join(['i'] + [':'] * core_ndim)}]"
    if argtype.kind == "array" and argtype.ndim == 1:
        return f"{param}[i:i + 1]"  # a 1-D array type with a () core: the one-element slice
    return f"{param}[i]"


def outer_types(argtypes, dims):
    """The kernel's argument types: each array type with one more (loop) dimension; a scalar type becomes a
    1-D array of it."""
    from cujit import types

    result = []
    for t, nd in zip(argtypes, dims):
        if t.kind == "array":
            result.append(types.Array(t.dtype, nd + 1, t.layout))
        elif nd > 0:
            raise ValueError(
                f"gufunc signature mismatch: ndim>0 for scalar (the type {t} is given for an argument "
                f"with {nd} core dimension(s))"
            )
        else:
            result.append(types.Array(t, 1, "A"))
    return tuple(result)


def kernel_source(name, argtypes, dims):
    params = [f"arg{i}" for i in range(len(dims))]
    return _GUFUNC_KERNEL.format(
        name=name,
        params=", ".join(params),
        sizes=", ".join(f"{p}.shape[0]" for p in params),
        items=", ".join(_core_index(p, nd, t) for p, nd, t in zip(params, dims, argtypes)),
    )


# ---- the gufunc --------------------------------------------------------------------------------------------


class CUDAGeneralizedUFunc:
    """What ``cuda.guvectorize`` returns. ``kernelmap`` maps input dtypes to (output dtypes, kernel)."""

    def __init__(self, pyfunc, layout, identity=None, lazy=False):
        self.py_func = python_function(pyfunc)
        self.__name__ = self.py_func.__name__
        self.__qualname__ = getattr(self.py_func, "__qualname__", self.__name__)
        self.__doc__ = self.py_func.__doc__
        self.__wrapped__ = self.py_func
        self.signature = "".join(layout.split()) if isinstance(layout, str) else layout
        self.inputsig, self.outputsig = parse_layout(layout)
        self.identity = identity
        self.kernelmap = OrderedDict()
        self._lazy = lazy
        self._lock = threading.Lock()
        self._core = device_function(pyfunc, "guvectorize")
        argc = self.py_func.__code__.co_argcount
        if argc != self.nargs:
            raise TypeError(
                f"guvectorize: {self.__qualname__!r} takes {argc} argument(s) but the layout "
                f"{layout!r} has {self.nin} input(s) and {self.nout} output(s)"
            )

    @property
    def nin(self):
        return len(self.inputsig)

    @property
    def nout(self):
        return len(self.outputsig)

    @property
    def nargs(self):
        return self.nin + self.nout

    @property
    def ntypes(self):
        return len(self.kernelmap)

    @property
    def types(self):
        return [type_chars(ins, outs) for ins, (outs, _) in self.kernelmap.items()]

    def __repr__(self):
        return f"<cujit CUDA gufunc {self.__qualname__} {self.signature} ({self.ntypes} types)>"

    @entry_point
    def add(self, sig):
        """Compiles the gufunc for one type signature (``"void(float32[:], float32[:])"``)."""
        from cujit import cuda

        signature = parse_signature(sig, "guvectorize")
        if signature.return_type is not None and signature.return_type.kind != "none":
            raise TypeError(
                f"guvectorized functions cannot return values: signature {sig} specifies "
                f"{signature.return_type} return type"
            )
        argtypes = list(signature.args)
        dims = [len(g) for g in self.inputsig + self.outputsig]
        if len(argtypes) != len(dims):
            raise TypeError(
                f"guvectorize: signature {sig!r} has {len(argtypes)} argument(s) but the layout "
                f"{self.signature!r} has {len(dims)}"
            )
        outer = outer_types(argtypes, dims)
        dtypes = [scalar_dtype(t.dtype, "guvectorize", f"argument {i} of {sig!r}") for i, t in enumerate(outer)]
        name = f"__gufunc_{identifier(self.__name__)}"
        source = kernel_source(name[len("__gufunc_") :], argtypes, dims)
        stager = generated_function(source, name, kernel_namespace(self.py_func, self._core))
        kernel = cuda.jit(_core.Signature(None, list(outer)))(stager)
        with self._lock:
            self.kernelmap[tuple(dtypes[: self.nin])] = (tuple(dtypes[self.nin :]), kernel)
        return kernel

    def disable_compile(self):
        self._lazy = False

    def _kernel_for(self, indtypes, outputs, args):
        """(input dtypes of the kernel, output dtypes, kernel) for inputs of ``indtypes`` (``args``: the
        arguments as given, whose Python scalars cast to any type of their kind or a wider one)."""
        found = self.kernelmap.get(indtypes)
        if found is not None:
            return (indtypes,) + found
        for sig in self.kernelmap:
            if all(_can_cast(given, wanted, arg) for given, wanted, arg in zip(indtypes, sig, args)):
                return (sig,) + self.kernelmap[sig]
        if not self._lazy:
            have = "; ".join(", ".join(map(str, k)) for k in self.kernelmap) or "none"
            raise TypeError(
                f"no matching signature of {self.__name__}() for input dtypes "
                f"({', '.join(map(str, indtypes))}): it was compiled for ({have}), and no input "
                "can be cast safely to those"
            )
        if any(o is None for o in outputs):
            raise TypeError(
                f"{self.__name__}() was made by guvectorize without type signatures: pass its output "
                "array(s) too (positionally or as out=), so that it can be compiled for their dtypes"
            )
        return (indtypes,) + self._add_lazily(indtypes, tuple(np.dtype(o.dtype) for o in outputs))

    def _add_lazily(self, indtypes, outdtypes):
        from cujit import types

        argtypes = []
        for i, (d, names) in enumerate(zip(indtypes + outdtypes, self.inputsig + self.outputsig)):
            t = cujit_type(d, f"{self.__name__}() argument {i}")
            is_input = i < self.nin
            argtypes.append(t if (not names and is_input) else types.Array(t, max(len(names), 1), "A"))
        self.add(_core.Signature(None, argtypes))
        return self.kernelmap[indtypes]

    @entry_point
    def __call__(self, *args, **kws):
        return _GUFuncCall(self, args, kws).run()


class _GUFuncCall:
    """One call of a gufunc: numba-cuda's GUFuncCallSteps."""

    def __init__(self, gufunc, args, kws):
        self.gufunc = gufunc
        self.stream = kws.pop("stream", 0)
        out = kws.pop("out", None)
        name = gufunc.__name__
        if kws:
            raise TypeError(
                f"{name}() got unexpected keyword argument(s) {', '.join(map(repr, kws))} (a CUDA "
                "gufunc takes out= and stream=)"
            )
        nin, nout = gufunc.nin, gufunc.nout
        if out is None and len(args) not in (nin, nin + nout):

            def count(n):
                return f"{n} positional argument{'s' * (n != 1)}"

            raise TypeError(
                f"This gufunc accepts {count(nin)} (when providing input only) or {count(nin + nout)} "
                f"(when providing input and output). Got {count(len(args))}."
            )
        if out is not None and len(args) > nin:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        if out is None:
            outputs = list(args[nin:]) or [None] * nout
        elif nout == 1:
            outputs = [out]
        elif isinstance(out, tuple) and len(out) == nout:
            outputs = list(out)
        else:
            raise TypeError(f"{name}() has {nout} outputs: out= must be a tuple of {nout} arrays")
        self.outputs = [as_device_array(o) if is_device_array(o) else o for o in outputs]
        for i, o in enumerate(self.outputs):
            if o is not None and not is_device_array(o) and not isinstance(o, np.ndarray):
                raise TypeError(f"{name}(): output {i} must be a numpy or device array, got {type(o).__name__}")
        self.to_host = not any(is_device_array(a) for a in args) and not any(is_device_array(o) for o in self.outputs)
        self.given = args[:nin]
        self.inputs = [as_device_array(a) if is_device_array(a) else np.asarray(a) for a in args[:nin]]

    def run(self):
        gufunc, stream = self.gufunc, self.stream
        plan = schedule(gufunc.inputsig, gufunc.outputsig, [a.shape for a in self.inputs])
        indtypes = tuple(np.dtype(a.dtype) for a in self.inputs)
        indtypes, outdtypes, kernel = gufunc._kernel_for(indtypes, self.outputs, self.given)
        for shape, o in zip(plan.output_shapes, self.outputs):
            if o is not None and tuple(o.shape) != shape:
                raise ValueError(
                    f"{gufunc.__name__}(): output shape mismatch: got {tuple(o.shape)}, the inputs give {shape}"
                )
        self._cast_inputs(indtypes)
        outputs = self._device_outputs(plan, outdtypes)
        inputs = [a if is_device_array(a) else _to_device(a, stream) for a in self.inputs]
        params = _loop_views(plan, inputs, outputs, stream)
        launch_over(kernel, plan.loopn, stream, params)
        return self._results(outputs)

    def _cast_inputs(self, indtypes):
        for i, (want, a) in enumerate(zip(indtypes, self.inputs)):
            if np.dtype(a.dtype) != want:
                if is_device_array(a):
                    raise TypeError(
                        f"{self.gufunc.__name__}(): input {i} is a device array of dtype {a.dtype}; "
                        f"the matching signature takes {want}, and device arrays are not cast: pass "
                        f"a {want} array"
                    )
                self.inputs[i] = a.astype(want)

    def _device_outputs(self, plan, outdtypes):
        """The arrays the kernel writes: the device outputs given, new device arrays for the others (a host
        output given is filled from its device array afterwards)."""
        from cujit import cuda

        result = []
        for shape, dtype, o in zip(plan.output_shapes, outdtypes, self.outputs):
            if o is None or not is_device_array(o):
                o = cuda.device_array(shape, dtype=dtype, stream=self.stream)
            result.append(o)
        return result

    def _results(self, outputs):
        """numba-cuda's: the outputs given (host ones filled), else the new ones, on the host when every
        argument was; one array, or a tuple of them."""
        results, copied = [], False
        for dev, mine in zip(outputs, self.outputs):
            if mine is not None and not is_device_array(mine):
                dev.copy_to_host(mine, stream=self.stream)
                results.append(mine)
                copied = True
            elif mine is not None:
                results.append(mine)
            elif self.to_host:
                results.append(dev.copy_to_host(stream=self.stream))
                copied = True
            else:
                results.append(dev)
        if copied:
            synchronize_stream(self.stream)
        return results[0] if len(results) == 1 else tuple(results)


_KIND_ORDER = "b", "iu", "f", "c"


def _can_cast(given, wanted, arg):
    """numpy's safe casting; a Python scalar (weakly typed, as numpy 2 treats it) casts to any dtype of its
    kind or a later one (bool, integers, floats, complex)."""
    if isinstance(arg, (bool, int, float, complex)) and not isinstance(arg, np.generic):
        rank = next(i for i, kinds in enumerate(_KIND_ORDER) if given.kind in kinds)
        return any(wanted.kind in kinds for kinds in _KIND_ORDER[rank:])
    return bool(np.can_cast(given, wanted))


def _to_device(host, stream):
    from cujit import cuda

    return cuda.to_device(host, stream=stream)


def _loop_views(plan, inputs, outputs, stream):
    """Every argument as (loop, *core) arrays: inputs shared by the loop get stride 0 on the loop axis, others
    have their outer dimensions collapsed into one."""
    n = 1 if not plan.loopdims else plan.loopn
    params = []
    for a, core, pinned in zip(inputs, plan.ishapes, plan.pinned):
        params.append(_loop_view(a, n, tuple(core), pinned, stream))
    for o, core in zip(outputs, plan.oshapes):
        params.append(_loop_view(o, n, tuple(core), False, None))
    return params


def _loop_view(a, n, core, pinned, stream):
    """``a`` as an (n, *core) array. An input whose outer dimensions cannot be collapsed without a copy is
    copied (``stream`` given); an output is an error then, as the kernel would write to the copy."""
    from cujit.cudadrv.devicearray import DeviceNDArray

    shape = (n,) + core
    if tuple(a.shape) == shape:
        return a
    inner_strides = tuple(a.strides[a.ndim - len(core) :]) if core else ()
    if pinned or a.ndim == len(core):
        return DeviceNDArray(shape, (0,) + inner_strides, a.dtype, a.stream, a.gpu_data, ptr=a.ptr)
    try:
        return a.reshape(shape)
    except NotImplementedError:  # outer dimensions that do not collapse into one without a copy
        if stream is None:
            raise ValueError(
                f"a gufunc output of shape {tuple(a.shape)} with strides {tuple(a.strides)} cannot "
                "be looped over without a copy: pass a C-contiguous output"
            ) from None
        from cujit import cuda

        host = np.ascontiguousarray(a.copy_to_host(stream=stream)).reshape(shape)
        return cuda.to_device(host, stream=stream)


def _lazy_or_eager(args):
    if len(args) == 1:
        return [], args[0], True
    if len(args) == 2:
        return signature_list(args[0], "guvectorize"), args[1], False
    raise TypeError("guvectorize() takes one or two positional arguments")


def guvectorize(*args, target="cuda", identity=None, cache=False, writable_args=(), nopython=True, **kws):
    """``cuda.guvectorize(ftylist, layout)``: see the module docstring."""
    check_target(target, "guvectorize", targets=("cuda",))
    sigs, layout, lazy = _lazy_or_eager(args)
    identity = check_identity(identity)
    if cache:
        raise TypeError("caching is not supported (guvectorize(cache=True) for target='cuda')")
    if writable_args:
        raise TypeError("writable_args are not supported for target='cuda'")
    if not nopython:
        raise TypeError("nopython flag must be True")
    if kws:
        raise TypeError(f"The following target options are not supported: {', '.join(map(repr, kws))}")
    parse_layout(layout)

    @entry_point
    def wrap(func):
        gufunc = CUDAGeneralizedUFunc(func, layout, identity, lazy=lazy)
        for sig in sigs:
            gufunc.add(sig)
        return gufunc

    return wrap
