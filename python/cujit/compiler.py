"""Ahead-of-time compilation: ``compile`` and ``compile_ptx`` (numba-cuda's
compiler.py API), option validation with numba's errors, and signatures."""

import os
import types

from cujit import _core, _target, config, linking, toolkit
from cujit import types as _types
from cujit.linkable_code import LinkableCode
from cujit._source import Resolver, function_source
from cujit.errors import NumbaInvalidConfigWarning, entry_point


_warm_up = {"cc": None, "compiles": False, "started": False}


def warm_up(cc):
    """Builds the code generator for `cc` on a background thread (the runtime calls this when it first meets a
    device, so the first kernel launch does not wait for it), once a kernel that will compile is defined
    (``expect_compiles``): a process whose kernels all come from the disk cache or an AOT bundle never loads the
    compiler. CUJIT_WARM_UP=0 turns it off."""
    _warm_up["cc"] = tuple(cc)
    _start_warm_up()


def expect_compiles():
    """A kernel that compiles when first launched was defined (not cached, no AOT bundle in use): the warm-up
    starts once a device is met, or now if one was."""
    _warm_up["compiles"] = True
    _start_warm_up()


def _start_warm_up():
    w = _warm_up
    if w["cc"] is not None and w["compiles"] and not w["started"] and os.environ.get("CUJIT_WARM_UP", "1") != "0":
        w["started"] = True
        _core.start_warm_up(w["cc"])


#: The compute capability used when ``cc`` is not given: the lowest one that
#: CUDA 12 and 13 support (defined once, in C++). It needs no GPU (numba-cuda
#: 0.30.4 asks the current device instead, its bug B2).
DEFAULT_CC = _core.DEFAULT_CC


def _warn(*args, **kwargs):
    import warnings  # (only when there is something to warn of: not at import)

    kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1
    warnings.warn(*args, **kwargs)


def parse_signature(sig):
    """A signature string, a Signature, or a tuple of argument types -> Signature. numba's own signatures and type
    objects (a library's ``numba.types.void(numba.types.float32[:])``) are taken as cujit's."""
    if isinstance(sig, _core.Signature):
        return sig
    if isinstance(sig, str):
        return _core.parse_signature(sig)
    if _numba_signature(sig):
        ret = sig.return_type
        return _core.Signature(None if ret is None else _as_type(ret), [_as_type(t) for t in sig.args])
    if isinstance(sig, (tuple, list)):
        return _core.Signature(None, [_as_type(t) for t in sig])
    if isinstance(sig, _core.Type):
        raise TypeError(f"invalid signature: {sig!r} is a single type, not a tuple or Signature")
    raise TypeError(f"invalid signature: expected a string, a Signature or a tuple of types, got {sig!r}")


def _numba_signature(sig):
    """Whether ``sig`` is numba's (or numba-cuda's) Signature object (``numba.types.void(...)``)."""
    module = type(sig).__module__ or ""
    return module.startswith(("numba.core.typing", "numba.cuda.typing")) and hasattr(sig, "args")


_as_type = _types.signature_type


def normalize_cc(cc):
    """``cc`` as a tuple: (major, minor), or (major, minor, suffix) with a non-empty suffix."""
    if cc is None:
        return DEFAULT_CC
    if isinstance(cc, str):  # "90", "75", "100a" (nvmath passes the cc so): the last digit is the minor
        digits = cc.rstrip("af")
        if len(digits) < 2 or not digits.isdigit() or len(cc) - len(digits) > 1:
            raise ValueError(f"cc must be a (major, minor) tuple or a string such as '90' or '90a', got {cc!r}")
        cc = (int(digits[:-1]), int(digits[-1])) + ((cc[len(digits) :],) if len(cc) > len(digits) else ())
    if not isinstance(cc, (tuple, list)) or len(cc) not in (2, 3):
        raise ValueError(f"cc must be a (major, minor) or (major, minor, suffix) tuple, got {cc!r}")
    return tuple(cc) if len(cc) == 2 or cc[2] else tuple(cc[:2])


def normalize_inline(inline):
    """``jit``'s ``inline``: ``"never"``, ``"always"``, or a bool (numba-cuda's older spelling, deprecated)."""
    if isinstance(inline, bool):
        _warn(
            "inline=True/False is deprecated: pass inline='always' or inline='never'", DeprecationWarning, stacklevel=3
        )
        return "always" if inline else "never"
    if inline in ("never", "always"):
        return inline
    if callable(inline):
        raise NotImplementedError(
            "inline= with a cost-model function (numba's IR-level inlining decision) is not "
            "supported by cujit: pass inline='always' or inline='never'"
        )
    raise ValueError(f"inline must be 'never' or 'always', got {inline!r}")


def normalize_launch_bounds(launch_bounds):
    if launch_bounds is None:
        return ()
    bounds = tuple(launch_bounds) if isinstance(launch_bounds, (tuple, list)) else (launch_bounds,)
    if len(bounds) > 3:
        raise ValueError(
            f"Got {len(bounds)} launch bounds: {bounds}. A maximum of three are supported: "
            "(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)"
        )
    for b in bounds:
        if not isinstance(b, int) or b < 0:
            raise TypeError(f"launch bounds must be non-negative integers, got {bounds}")
    return bounds


def make_options(
    *,
    device,
    abi,
    abi_info,
    cc,
    fastmath,
    opt,
    debug,
    lineinfo,
    launch_bounds=None,
    forceinline=False,
    inline="never",
    lto=None,
    max_registers=None,
    carveout=None,
    boundscheck=None,
):
    """The one CompileOptions of a compile, checked: every entry point builds its options here, and its
    ``key()`` is what compiles are keyed by. ``inline``: ``"never"`` or ``"always"`` (``jit`` normalises what
    users pass, see ``normalize_inline``); ``lto``, ``max_registers``, ``carveout`` (``shared_memory_carveout``)
    and ``boundscheck``: ``jit``'s."""
    if forceinline and not device:
        raise ValueError("Cannot force-inline kernels")
    if debug is None:
        debug = False
    if opt is None:
        opt = True
    if debug and opt:
        _warn(
            "debug=True with opt=True is not supported by CUDA. This may result in a crash or "
            "incorrect debugging information. Pass opt=False.",
            NumbaInvalidConfigWarning,
            stacklevel=3,
        )
    if debug and lineinfo:
        _warn(
            "debug and lineinfo are mutually exclusive. Use debug to get full debug info (this "
            "disables some optimizations), or lineinfo for line info only with code generation "
            "unaffected.",
            NumbaInvalidConfigWarning,
            stacklevel=3,
        )
    options = _core.CompileOptions()
    options.cc = normalize_cc(cc)
    _core.resolve_arch(options.cc)  # reject unsupported architectures before any work
    options.fastmath = bool(fastmath)
    options.opt = bool(opt)
    options.debug = bool(debug)
    options.lineinfo = bool(lineinfo)
    options.kernel = not device
    options.forceinline = bool(forceinline)
    options.inline_always = inline == "always"
    options.abi = abi
    if not device:
        options.launch_bounds = normalize_launch_bounds(launch_bounds)
    if abi_info:
        if not isinstance(abi_info, dict):
            raise TypeError(f"abi_info must be a dict, got {abi_info!r}")
        name = abi_info.get("abi_name")
        if name is not None:
            options.abi_name = _checked_abi_name(name)
    options.lto = _checked_lto(lto)
    options.max_registers = _checked_max_registers(max_registers)
    options.carveout = _checked_carveout(carveout)
    options.boundscheck = None if boundscheck is None else bool(boundscheck)
    return options


_CARVEOUTS = {"default": -1, "maxl1": 0, "maxshared": 100}


def _checked_carveout(value):
    """``shared_memory_carveout``: "default", "MaxL1", "MaxShared" (any case) or a percentage -1..100."""
    if value is None:
        return None
    if isinstance(value, str):
        percent = _CARVEOUTS.get(value.lower())
        if percent is None:
            raise ValueError(
                f"Invalid carveout value: {value!r} (use 'default', 'MaxL1', 'MaxShared' or an int from -1 to 100)"
            )
        return percent
    if isinstance(value, int) and not isinstance(value, bool):
        if not -1 <= value <= 100:
            raise ValueError("Carveout must be between -1 and 100")
        return value
    raise TypeError(f"shared_memory_carveout must be str or int, got {type(value).__name__}")


def _checked_lto(lto):
    """``lto``: True, False, or None (LTO when a kernel links CUDA C++ or LTO-IR, see linking.resolve_lto)."""
    if lto:
        for name in ("nvjitlink", "nvvm"):
            found = toolkit.library(name)
            if not found.found:
                raise RuntimeError("LTO requires nvJitLink and libNVVM, which are not available: " + found.reason)
    return None if lto is None else bool(lto)


def _checked_max_registers(value):
    """``max_registers``: a positive int, or None (nvJitLink's choice)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"max_registers must be a positive int, got {value!r}")
    return value


def _checked_abi_name(name):
    """``abi_info["abi_name"]``: the symbol other languages call, so a C identifier."""
    if not isinstance(name, str):
        raise TypeError(f"abi_info['abi_name'] must be a str, got {type(name).__name__} ({name!r})")
    if not (name.isascii() and name.isidentifier()):  # ASCII identifiers: [A-Za-z_][A-Za-z0-9_]*
        raise ValueError(
            f"abi_info['abi_name'] must be a C identifier (letters, digits and '_', not starting "
            f"with a digit), got {name!r}"
        )
    return name


def for_cc(options, cc):
    """A copy of the checked ``options`` for compute capability ``cc`` (checked too)."""
    out = options.copy()
    out.cc = normalize_cc(cc)
    _core.resolve_arch(out.cc)
    return out


def python_function(pyfunc, api="compile"):
    """The Python function to compile: `pyfunc` itself, or the function a ``@cuda.jit`` dispatcher wraps."""
    if isinstance(pyfunc, _core.Dispatcher):
        return pyfunc.py_func
    if not isinstance(pyfunc, types.FunctionType):
        raise TypeError(f"{api}() compiles a Python function (or a @cuda.jit dispatcher), got {pyfunc!r}")
    return pyfunc


def type_function(pyfunc, signature, options, links=()):
    """Frontend and typing of `pyfunc` for `signature` alone (what a caller's typing and ufunc typing need);
    `links`: its own link inputs."""
    return _core.type_function(*core_arguments(pyfunc, signature, options, links))


def core_arguments(pyfunc, signature, options, links):
    """The core's arguments for a function: its frontend input (its source or bytecode, read here), the resolver
    of its names, the signature's types, the options and its own link inputs."""
    return function_source(pyfunc), Resolver(pyfunc), list(signature.args), signature.return_type, options, list(links)


def compile_request(
    pyfunc, signature, options, links=(), target=_target.CUDA, describe="", output="", launchable=False, store=None
):
    """The compile driver's one call (``_core.compile_kernel``, cpp/src/compiler/): `pyfunc` read here (its
    source or bytecode, and the resolver of its names), then typed, checked and compiled in C++ for `target`
    (a ``Target``); `output` "ptx" or "ltoir" asks for that code (default: the target decides); `launchable`: a
    dispatcher's kernel, which cujit loads and launches (checked against the devices' limits). Returns a
    ``_core.CompiledKernel`` (its typed function, its code, the options it was compiled with); with a
    ``_core.KernelStore`` (``caching.KernelStore``), a ``_core.KernelBuild``: the kept kernel, or the one compiled
    now, linked and kept."""
    return _core.compile_kernel(
        *core_arguments(pyfunc, signature, options, links),
        target=target.name,
        output=output,
        describe=describe,
        launchable=launchable,
        store=store,
        include_dirs=linking.nvrtc_include_dirs() if store is not None else [],
    )


def check_abi(abi):
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi!s} (the ABIs are 'numba' and 'c')")


def _check_common(output, forceinline, device, abi, launch_bounds, outputs=("ptx", "ltoir")):
    if output not in outputs:
        raise NotImplementedError(f"Unsupported output type: {output}")
    if forceinline and output != "ltoir":
        raise ValueError("Can only designate forced inlining in LTO-IR")
    check_abi(abi)
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    normalize_launch_bounds(launch_bounds)


@entry_point
def compile(
    pyfunc,
    sig,
    debug=None,
    lineinfo=False,
    device=True,
    fastmath=False,
    cc=None,
    opt=None,
    abi="c",
    abi_info=None,
    output="ptx",
    forceinline=False,
    launch_bounds=None,
):
    """Compile a Python function to PTX for use from other languages.

    Defaults to a device function with the C ABI. Returns ``(code, return_type)``: PTX (``output="ptx"``), LTO-IR
    (``"ltoir"``) or the optimised LLVM IR as text (``"llvm"``, for tools that transform it and link the result back
    with ``declare_device``).
    """
    _check_common(output, forceinline, device, abi, launch_bounds, ("ptx", "ltoir", "llvm"))
    if output == "llvm":
        pyfunc, signature, options = _prepare(
            pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info, "ptx", False, launch_bounds
        )
        compiled = compile_request(pyfunc, signature, options, output="ptx")
        return compiled.code.llvm_ir, compiled.typed.return_type
    pyfunc, signature, options = _prepare(
        pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info, output, forceinline, launch_bounds
    )
    if not config.cache_wanted(False):  # CUJIT_CACHE=1 caches compile outputs too
        code, typed = _compile_prepared(pyfunc, signature, options, output)
        return code, typed.return_type
    from cujit import caching  # imported on first use, for import time: see its docstring

    key = caching.compile_key(pyfunc, signature, options, output)
    found = caching.get_compiled(key, text=output == "ptx")
    if found is not None:
        return found
    code, typed = _compile_prepared(pyfunc, signature, options, output)
    caching.put_compiled(key, code, typed.return_type)
    return code, typed.return_type


def _prepare(
    pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info, output, forceinline, launch_bounds
):
    """The function, its signature and options, checked."""
    _check_common(output, forceinline, device, abi, launch_bounds)
    pyfunc = python_function(pyfunc)
    signature = parse_signature(sig)
    options = make_options(
        device=device,
        abi=abi,
        abi_info=abi_info,
        cc=cc,
        fastmath=fastmath,
        opt=opt,
        debug=debug,
        lineinfo=lineinfo,
        launch_bounds=launch_bounds,
        forceinline=forceinline,
    )
    return pyfunc, signature, options


def _compile_prepared(pyfunc, signature, options, output, links=()):
    """The function's own code (PTX str, or LTO-IR bytes) and its typing; `links`: its own link inputs (a
    dispatcher's ``link=``)."""
    compiled = compile_request(pyfunc, signature, options, links, output=output)
    return compiled.code.code, compiled.typed


@entry_point
def compile_all(
    pyfunc,
    sig,
    debug=None,
    lineinfo=False,
    device=True,
    fastmath=False,
    cc=None,
    opt=None,
    abi="c",
    abi_info=None,
    output="ltoir",
    forceinline=False,
    launch_bounds=None,
):
    """The function's code and everything it needs linked with it, for linking elsewhere.

    Returns ``(codes, return_type)``: ``codes[0]`` is the function's LTO-IR (bytes) or PTX (str); then one
    LinkableCode per link item it collected, in the order first reached: a ``@cuda.jit(link=[...])``
    dispatcher's own items, then those of the functions it declares or calls. CUDA C++ is compiled by NVRTC for
    the same ``cc`` (an ``LTOIR`` or a ``PTXSource``, with this call's ``debug``/``lineinfo``), the other kinds
    are returned as they are.
    """
    cc = normalize_cc(cc)
    links = pyfunc._links() if isinstance(pyfunc, _core.Dispatcher) else ()
    pyfunc, signature, options = _prepare(
        pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info, output, forceinline, launch_bounds
    )
    code, typed = _compile_prepared(pyfunc, signature, options, output, links)
    codes = [code]
    arch = linking.arch_for(cc if len(cc) > 2 else cc + ("",))  # the cc asked for, without numba's "a" default
    for item in typed.link_inputs:
        if item.kind == "cu":
            cls, data = (
                LinkableCode.class_for_kind(output),
                linking.compile_cuda_source(item, arch, output == "ltoir", options),
            )
        else:
            cls, data = LinkableCode.class_for_kind(item.kind), item.data
        # A LinkableCode's setup/teardown callbacks travel with its code: whoever links it elsewhere loads a module
        # that needs them run (a global initialised, a table filled) as much as a cujit kernel's module does.
        setup, teardown = item.origin or (None, None)
        codes.append(cls(data, name=item.name, setup_callback=setup, teardown_callback=teardown))
    return codes, typed.return_type


def _current_device_cc():
    driver = _core.driver  # not cujit.cudadrv: the runtime's Python sits above the compiler
    if not _target.process_target().on_gpu:
        # The runtime's rule (cujit.cudadrv installs the host driver on its first import): on the CPU target the
        # current device is the host driver's, compute capability 9.0, also when no runtime call came first.
        _core.host.use_host_driver()
    return tuple(driver.device_info(driver.current_context().device_id).compute_capability)


@entry_point
def compile_for_current_device(
    pyfunc,
    sig,
    debug=None,
    lineinfo=False,
    device=True,
    fastmath=False,
    opt=None,
    abi="c",
    abi_info=None,
    output="ptx",
    forceinline=False,
    launch_bounds=None,
):
    """``compile`` for the current device's compute capability."""
    return compile(
        pyfunc,
        sig,
        debug=debug,
        lineinfo=lineinfo,
        device=device,
        fastmath=fastmath,
        cc=_current_device_cc(),
        opt=opt,
        abi=abi,
        abi_info=abi_info,
        output=output,
        forceinline=forceinline,
        launch_bounds=launch_bounds,
    )


@entry_point
def compile_ptx_for_current_device(
    pyfunc,
    sig,
    debug=None,
    lineinfo=False,
    device=False,
    fastmath=False,
    opt=None,
    abi="numba",
    abi_info=None,
    forceinline=False,
    launch_bounds=None,
):
    """``compile_ptx`` for the current device's compute capability."""
    return compile_ptx(
        pyfunc,
        sig,
        debug=debug,
        lineinfo=lineinfo,
        device=device,
        fastmath=fastmath,
        cc=_current_device_cc(),
        opt=opt,
        abi=abi,
        abi_info=abi_info,
        forceinline=forceinline,
        launch_bounds=launch_bounds,
    )


@entry_point
def compile_ptx(
    pyfunc,
    sig,
    debug=None,
    lineinfo=False,
    device=False,
    fastmath=False,
    cc=None,
    opt=None,
    abi="numba",
    abi_info=None,
    forceinline=False,
    launch_bounds=None,
):
    """Compile a Python function to PTX; defaults to a kernel with numba's ABI.

    Returns ``(ptx, return_type)``.
    """
    return compile(
        pyfunc,
        sig,
        debug=debug,
        lineinfo=lineinfo,
        device=device,
        fastmath=fastmath,
        cc=cc,
        opt=opt,
        abi=abi,
        abi_info=abi_info,
        output="ptx",
        forceinline=forceinline,
        launch_bounds=launch_bounds,
    )
