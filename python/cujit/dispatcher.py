"""``@cuda.jit``: dispatchers for device functions and kernels.

A device-function dispatcher types its function once per argument-type tuple
(and caller options) when a caller is compiled; the typed function is lowered
into each caller's module. Kernels compile eagerly for given signatures and
lazily otherwise; launching them comes with the runtime."""

import _thread
import types as _pytypes
import time
from _weakref import ref as _weakref  # (weakref.ref; the weakref module is not loaded at import)

from cujit import _core, _source, _target, aot_bundles, linking, telemetry
from cujit.compiler import (
    compile_request,
    core_arguments,
    expect_compiles,
    for_cc,
    make_options,
    normalize_inline,
    parse_signature,
)
from cujit.config import cache_wanted
from cujit._source import Resolver
from cujit.errors import CudaSupportError, NumbaError, TypingError, entry_point, raised_in_kernel, update_wrapper
from cujit._typeof import typeof


def _caching():
    """The disk cache, ``cujit.caching``, imported on first use for import time (see its docstring)."""
    from cujit import caching

    return caching


class _Kernel:
    """One kernel specialisation as Python sees it: the compile driver's answer (``_core.CompiledKernel``: its typed
    function and its GPU code) and launch plan. The dispatcher's C++ KernelCache owns it (the face of one of its
    specialisations) with everything made of it: a cubin per device architecture (linked in C++ from its code and
    the link inputs its calls collected, with no call back into Python) and a module and function per CUDA context,
    loaded on first use with the link inputs' setup callbacks. A face keeps its cache alive (and so its modules);
    the cache shows its faces to the collector, which frees the three together, unloading the modules (teardown
    first), once neither dispatcher nor face is in use."""

    def __init__(self, compiled):
        self._compiled = compiled
        typed = compiled.typed
        options = compiled.options
        # debug=True: the raise sites its status codes stand for (code i + 1 is site i); see raised().
        self._specialise(
            options, typed.symbol, typed.args, typed.cooperative, typed.exceptions if options.debug else ()
        )

    @property
    def _type_annotation(self):
        """numba-cuda's type annotation of a specialisation, as far as code reads it: ``typemap``, the type of each
        local variable by name (a specialisation loaded from a cache or a bundle was not typed here: empty)."""
        compiled = getattr(self, "_compiled", None)
        return _pytypes.SimpleNamespace(typemap=dict(compiled.typed.variables) if compiled is not None else {})

    def _specialise(self, options, entry, argtypes, cooperative, exceptions):
        """What every specialisation holds, compiled here or loaded from a cache or a bundle."""
        self.options = options
        self.entry = entry
        self.argtypes = tuple(argtypes)
        self.cooperative = cooperative  # a declaration it reaches needs a cooperative launch
        self.exceptions = tuple(exceptions)
        self._plan = None
        self._owner = None  # (its dispatcher's KernelCache, its tag there), set when the cache takes it
        # For kernels compiled with noalias array data (see _compile_signature): a callable giving the
        # function of the variant without it, launched instead when two array arguments overlap.
        self.if_overlap = None

    def specialisation(self, cache, tag, listed):
        """This face as its dispatcher's KernelCache takes it: how to build, load and launch it."""
        self._owner = (cache, tag)
        hooked = any(made.origin is not None for made in self.link_inputs())  # LinkableCode with callbacks
        image, image_arch = self._image_made()
        return _core.driver.Specialisation(
            self,
            entry=self.entry,
            build=self._builder(),
            image=image,
            image_arch=image_arch or "",
            include_dirs=linking.nvrtc_include_dirs(),
            hooks=self._module_hooks if hooked else None,
            carveout=self.options.carveout,
            cooperative=self.cooperative,
            raises=bool(self.exceptions),
            if_overlap=self.if_overlap,
            listed=listed,
        )

    def _builder(self):
        """How the cache builds an image of it: its GPU code, linked in C++."""
        return self.code

    def _image_made(self):
        """(cubin, its architecture) made before the cache took it (linked to write the disk cache), or Nones."""
        return self._cached_cubin, self.disk_arch

    def native(self):
        """Its specialisation in the dispatcher's KernelCache (a CachedKernel)."""
        cache, tag = self._owner
        return cache.kernel(list(self.argtypes), tag)

    def _module_hooks(self):
        """(setup, teardown) for one module of this kernel, from its link inputs' callbacks."""
        from cujit.cudadrv import modules

        return modules.hooks_for(self.link_inputs())

    @property
    def typed(self):
        return self._compiled.typed

    @property
    def code(self):
        """Its GPU code (``_core.GpuKernelCode``): PTX, or LTO-IR when it links with LTO."""
        return self._compiled.code

    @property
    def lto(self):
        return self.code.lto

    @property
    def ptx(self):
        """The kernel's PTX. An LTO kernel is linked from LTO-IR: its PTX is made when first asked for here."""
        return self.code.ptx

    @property
    def llvm_ir(self):
        return self.code.llvm_ir

    @property
    def plan(self):
        if self._plan is None:
            from cujit.cudadrv import launch

            self._plan = launch.plan_for(self.argtypes)
        return self._plan

    def function(self):
        """The CUfunction of this kernel in the current context, loaded on first use there (setup callbacks
        run then) and again after its module was unloaded (a context reset, ``unload()``)."""
        return self.native().function()

    def link_inputs(self):
        """Everything its calls collected to link (with the setup/teardown callbacks of their LinkableCode)."""
        return self.typed.link_inputs

    def reset_exception_channel(self, fn):
        """Zeroes a debug kernel's error code before a launch (docs/numba_abi.md: Exceptions)."""
        ptr, _ = fn.module.get_global(self.entry + "__errcode__")
        _core.driver.copy_htod(ptr, bytes(4), None, None)

    def raised(self, fn):
        """After a debug kernel's launch (synchronising): the exception the first failing thread raised, as
        numba-cuda reports it (its class, the message prefixed with the function, file, line and thread), or
        None when no thread raised."""
        from cujit.cudadrv import devices

        devices.synchronize()

        def load(name):
            ptr, _ = fn.module.get_global(f"{self.entry}__{name}__")
            value = bytearray(4)
            _core.driver.copy_dtoh(value, ptr, None, None)
            return int.from_bytes(value, "little")

        return raised_in_kernel(self.exceptions, load)

    # numba-cuda's resource queries (its dispatcher's get_regs_per_thread...): the loaded function's attributes in
    # the current context.
    regs_per_thread = property(lambda self: self.function().attributes.num_regs)
    shared_mem_per_block = property(lambda self: self.function().attributes.shared_size_bytes)
    max_threads_per_block = property(lambda self: self.function().attributes.max_threads_per_block)
    local_mem_per_thread = property(lambda self: self.function().attributes.local_size_bytes)
    const_mem_size = property(lambda self: self.function().attributes.const_size_bytes)

    @property
    def lto_ptx(self):
        """The PTX of its LTO link for the current device (nvJitLink -ptx over its LTO-IR inputs)."""
        from cujit.cudadrv import devices

        cc = tuple(devices.get_current_device().compute_capability)[:2]
        return self.code.link(cc, linking.nvrtc_include_dirs(), None, True).cubin.decode()

    def _disassemble(self, *flags):
        """The kernel's cubin for the current device disassembled by the toolkit's ``nvdisasm`` with ``flags``."""
        import os
        import shutil
        import subprocess
        import tempfile

        from cujit import toolkit
        from cujit.cudadrv import devices

        tool = shutil.which("nvdisasm") or next(
            (p for p in (os.path.join(r, "bin", "nvdisasm") for r in toolkit.search_roots()) if os.path.exists(p)), None
        )
        if tool is None:
            raise RuntimeError("inspect_sass needs the CUDA toolkit's nvdisasm (on PATH or under CUDA_HOME)")
        cubin = self.link(tuple(devices.get_current_device().compute_capability))
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            return subprocess.run([tool, *flags, f.name], capture_output=True, text=True, check=True).stdout

    # The kernel's SASS for the current device, and its control-flow graph (DOT), as nvdisasm gives them.
    sass = property(lambda self: self._disassemble("-c"))
    sass_cfg = property(lambda self: self._disassemble("-cfg"))

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """How many blocks of ``blockdim`` threads a cooperative launch of this kernel can have on the current
        device: every block must be resident at once (numba-cuda's ``_Kernel.max_cooperative_grid_blocks``)."""
        from cujit.cudadrv import devices

        threads = 1
        for d in blockdim if isinstance(blockdim, tuple) else (blockdim,):
            threads *= d
        per_sm = self.function().max_active_blocks_per_multiprocessor(threads, dynsmemsize)
        return per_sm * devices.get_current_device().MULTIPROCESSOR_COUNT

    def link(self, cc):
        """The cubin for a device of ``cc`` (what ``cujit.aot`` bundles): the one linked when it was compiled to
        write the disk cache, or this kernel linked now with every input its calls collected."""
        if self._cached_cubin is not None and linking.arch_for(cc) == self.disk_arch:
            return self._cached_cubin
        linked = self.code.link(tuple(cc)[:2], linking.nvrtc_include_dirs())
        linking.warn_nvrtc_logs(linked.nvrtc_logs)
        return linked.cubin

    disk_arch = None  # the architecture of the cubin linked to write the disk cache (a kernel compiled to cache)
    _cached_cubin = None


class _CachedKernel(_Kernel):
    """A kernel specialisation loaded from the disk cache or a bundle: its cubin, entry symbol and link inputs, with
    no typing done. What needs the typed function (inspection, another architecture) compiles it then."""

    def __init__(self, entry, compile_fresh, argtypes, options):
        self._entry = entry
        self._compile_fresh = compile_fresh  # () -> _core.CompiledKernel
        self._fresh = None
        self._specialise(options, entry["symbol"], argtypes, entry["cooperative"], entry["exceptions"])

    @property
    def _compiled(self):
        if self._fresh is None:
            self._fresh = self._compile_fresh()
        return self._fresh

    @property
    def lto(self):  # resolved on need: resolving may look for (and load) nvJitLink and libNVVM
        return linking.resolve_lto(self.options.lto, self.options.debug, [i.kind for i in self.link_inputs()])

    def _builder(self):
        return self.link  # another architecture than the entry's: compiled then

    def _image_made(self):
        return self._entry["cubin"], self._entry["arch"]

    def link_inputs(self):
        return self._entry["link_inputs"]

    def link(self, cc):
        if linking.arch_for(cc) == self._entry["arch"]:
            return self._entry["cubin"]
        return super().link(cc)


# Nested compiles of one function with new argument types at each level (f(x) calling f(x - 0.5) with an int x)
# stop here: types that keep changing are numba's runaway recursion.
_RECURSION_TYPE_LEVELS = 8
_CO_VARARGS = 0x04  # inspect.CO_VARARGS (inspect imports ast and tokenize: not at `import cujit`)

_compile_stats = []


def _CompileStats(*fields):
    """numba's dispatcher ``stats``: the disk cache's directory (None when the dispatcher does not cache) and its hits
    and misses by argument types, counted by this process (a namedtuple, its class made on first use)."""
    if not _compile_stats:
        import collections

        _compile_stats.append(collections.namedtuple("_CompileStats", ("cache_path", "cache_hits", "cache_misses")))
    return _compile_stats[0](*fields)


def _overlapping_variant(dispatcher, signature, cc):
    """The callable a launch with overlapping arrays calls for the function of the variant without noalias;
    the variant is looked up (or compiled) on the first such launch and kept for the next."""
    ref = _weakref(dispatcher)
    variant = []

    def function():
        if not variant:
            variant.append(ref()._compile_signature(signature, cc, noalias=False))
        return variant[0].function()

    return function


class CUDADispatcher(_core.Dispatcher):
    """``@cuda.jit``'s object: a face over its C++ KernelCache, which owns its specialisations (type key ->
    compiled kernel -> module and function per context) and their compile gates. The compiler and the launch
    fast path call it through the ``_core.Dispatcher`` interface (``_type_for_caller``, ``_call_parameters``,
    ``_select_kernel``, ``_launch_slow``)."""

    def __init__(
        self, pyfunc, device, compile_options, link=(), cache=False, fastmath=None, jit_options=None, target=None
    ):
        _core.Dispatcher.__init__(self)
        if not _subscript:
            _install_subscript()
        # Where its kernels run (device functions are typed into callers of either target): a Target, and its
        # hooks (what differs per target: the faces of its specialisations, compiling one, configuring a launch).
        self.target = target or _target.CUDA
        self._on_target = self.target.hooks()
        update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.device = device
        # jit's options, checked once (make_options); cc set per compile. With them, what is not a compile
        # option: the link items, whether to cache, and the fastmath its callers' options give way to (None:
        # theirs).
        self._compile_options = compile_options
        self._cache = cache
        self._fastmath = fastmath
        self._jit_options = dict(jit_options or {})  # as given, for numba's targetoptions view only
        self.specialized = False
        self.specializations = {}
        self._can_compile = True
        self._kernels = _core.driver.KernelCache()  # no driver call until a kernel is loaded
        self._declared_returns = {}  # a device function's signatures given to jit or compile: args -> return type
        self._configs = {}
        # The launch fast path's specialisations by compact type key (C++; see cpp/bindings/py_launch.cpp).
        self._launch_table = _core.launch.LaunchTable()
        self._link_items = tuple(link)
        import collections  # (at the first dispatcher, not at import)

        self._cache_hits, self._cache_misses = collections.Counter(), collections.Counter()
        self._extensions = _Extensions(self, (jit_options or {}).get("extensions") or ())
        if not device and not (cache_wanted(cache) or aot_bundles.in_use()):
            expect_compiles()  # the compiler's warm-up may start

    @property
    def extensions(self):
        """numba-cuda's argument handlers: objects with ``prepare_args(ty, val, stream=..., retr=...)`` returning
        ``(ty, val)``, applied to each argument of a launch from the last to the first; ``retr`` collects
        callables run after the launch. A list: appending to it takes effect at the next configuration."""
        return self._extensions

    @property
    def targetoptions(self):
        """numba's view of jit's options (a dict by name), for users; cujit reads its typed options."""
        return dict(self._jit_options)

    def _clone(self):
        """A new dispatcher of the same function and options (``specialize``)."""
        clone = type(self)(
            self.py_func,
            self.device,
            self._compile_options,
            self._link_items,
            self._cache,
            self._fastmath,
            self._jit_options,
            self.target,
        )
        clone._explicit_target = self._explicit_target
        return clone

    @property
    def _faces(self):
        """The classes of its compiled specialisations (a device function's typings are not)."""
        return self._on_target.faces

    def _links(self):
        """This function's own ``link=`` items as link inputs (files read once per version)."""
        return linking.link_inputs(self._link_items, self._describe())

    def _describe(self):
        code = self.py_func.__code__
        return f"@cuda.jit function {self.__qualname__!r} at {code.co_filename}:{code.co_firstlineno}"

    # -- called by the C++ typing of a caller ------------------------------------------------
    def _call_parameters(self):
        """Parameter names and, for each, the resolver's answer for its default value (None: no default):
        typing binds keyword and omitted arguments of calls from CUDA code with them."""
        code = self.py_func.__code__
        names = code.co_varnames[: code.co_argcount]
        defaults = self.py_func.__defaults__ or ()
        resolver = Resolver(self.py_func)
        answers = [None] * (len(names) - len(defaults)) + [resolver.classify(d) for d in defaults]
        return names, answers

    def _type_for_caller(self, argtypes, caller_options):
        # A @cuda.jit function without device=True called from CUDA code is compiled as a device function for the
        # call, as numba-cuda's dispatchers do (compile_device).
        options = caller_options.copy()
        options.kernel = False
        options.abi = "numba"
        options.abi_name = ""
        options.from_dispatcher = True
        if self._fastmath is not None:
            options.fastmath = bool(self._fastmath)
        # Inlining is the callee's own choice, not its caller's.
        options.forceinline = self._compile_options.forceinline
        options.inline_always = self._compile_options.inline_always
        tag = options.key()  # from_dispatcher tells a typing for callers from a compile of the function
        typed = self._kernels.find(argtypes, tag)
        if typed is not None:
            return typed
        if self._kernels.compiling_here:
            self._check_recursion(argtypes, tag)
            if _source.innermost_compile() == (self, (tuple(argtypes), tag)):
                return None  # a call into itself, with the types being compiled: typed against that compile
        given, takes = len(argtypes), self.py_func.__code__.co_argcount
        if given != takes:
            raise TypingError(
                f"{self.__qualname__}() takes {takes} positional argument"
                f"{'' if takes == 1 else 's'} but {given} {'was' if given == 1 else 'were'} given"
            )

        def type_it():  # the return type of a signature given for these argument types holds for callers too
            signature = _core.Signature(self._declared_returns.get(tuple(argtypes)), list(argtypes))
            # (called here, not through compiler.type_function: each level of a chain of device calls nests a
            # typing in Python, so a frame less here is a deeper chain before the recursion limit)
            with _source.compiling(self, (tuple(argtypes), tag)):
                typed = _core.type_function(*core_arguments(self.py_func, signature, options, self._links()))
            return _core.driver.Specialisation(typed)

        return self._kernels.specialise(argtypes, tag, type_it)

    def _check_recursion(self, argtypes, tag):
        """A call into this function while it compiles on this thread: self-recursion with the types being
        compiled is typed against that compile (numba types the recursive calls from the returns that do not
        depend on them); a call with other types compiles them, nested, a few levels deep at most; a call back
        through another function is refused."""
        innermost = _source.innermost_compile()
        key = (tuple(argtypes), tag)
        if innermost == (self, key):
            return
        if _source.compile_in_progress(self, key):
            if innermost is not None and innermost[0] is self:
                raise TypingError(
                    f"cannot type infer runaway recursion: {self.__qualname__!r} calls itself with argument types "
                    f"({', '.join(str(t) for t in argtypes)}) it is being compiled for, through a call with others"
                )
            caller = getattr(innermost[0], "__qualname__", "?") if innermost else "?"
            raise TypingError(
                f"{self.__qualname__!r} is called back through {caller!r} while it compiles: mutually recursive "
                "device functions are not supported (a function may call itself)"
            )
        if _source.compiles_of(self) >= _RECURSION_TYPE_LEVELS:
            raise TypingError(
                f"cannot type infer runaway recursion: {self.__qualname__!r} calls itself with new argument types "
                f"at each level ({', '.join(str(t) for t in argtypes)} at level {_RECURSION_TYPE_LEVELS})"
            )

    # -- compilation -------------------------------------------------------------------------
    def _options(self, cc=None):
        return for_cc(self._compile_options, cc)

    def _current_cc(self):
        return self._on_target.current_cc()

    def _compile_signature(self, signature, cc=None, noalias=True):
        """Compile once per (argument types, options); returns the _Kernel (or, for device functions, the
        compiled entry).

        Kernels whose arguments are arrays and scalars compile with the arrays' data `noalias` (read-only
        arrays then load through the non-coherent cache, as with `const __restrict__` in CUDA C). That holds
        unless two array arguments share bytes, which each launch checks: those launches run a variant
        compiled without it (``noalias=False``), on first need."""
        cc = cc if cc is not None else self._current_cc()
        options = self._options(cc)
        arrays = _core.noalias_arrays(list(signature.args)) if not self.device else 0
        options.noalias_arrays = noalias and arrays > 0
        tag = options.key()  # noalias_arrays tells the variant for overlapping arrays (unlisted) apart
        argtypes = list(signature.args)
        compiled = self._kernels.find(argtypes, tag)
        if compiled is not None:
            return compiled

        def compile_it():
            with _source.compiling(self, (tuple(argtypes), tag)):
                compiled = self._on_target.compile_kernel(self, signature, options)
            if options.noalias_arrays and arrays > 1:
                compiled.if_overlap = _overlapping_variant(self, signature, cc)
            if noalias and not self._can_compile:  # the new signature may be the better match for types seen
                self._launch_table.clear()
            return compiled.specialisation(self._kernels, tag, listed=noalias)

        return self._kernels.specialise(argtypes, tag, compile_it)

    def _compile_gpu_kernel(self, signature, options):
        """A kernel (or device function) specialisation for the GPU. A kernel is looked for in the AOT bundles and,
        when this dispatcher caches, the disk cache (``caching.KernelStore``, asked by the compile driver); a kernel
        to cache is compiled, linked and written under the entry's lock, so that processes starting at once compile
        it once: the others wait, then load it."""
        start = time.perf_counter()
        bundles, cache = aot_bundles.in_use(), cache_wanted(self._cache)
        if self.device or not (bundles or cache):
            return self._compiled_now(self._compile_request(signature, options), signature, start)
        arch = linking.arch_for(tuple(options.cc)[:2])  # what link() gets for the device: (major, minor)
        store = _caching().KernelStore(self, signature.args, options, arch, start, bundles, cache)
        kept = store.find()  # before the compiler is asked (or loaded): a kept kernel needs neither
        build = self._compile_request(signature, options, store) if kept is None else None
        if kept is not None or build.kept is not None:  # (build.kept: another process kept it meanwhile)
            self._cache_hits[tuple(signature.args)] += 1
            return self._kernel_from_entry(kept if kept is not None else build.kept, signature, options)
        if store.keeps():
            self._cache_misses[tuple(signature.args)] += 1
        linking.warn_nvrtc_logs(build.nvrtc_logs)
        if build.not_kept:
            telemetry.log("not cached", self.__qualname__, signature.args, f"(link: {build.not_kept})", 0.0)
        return self._compiled_now(build.compiled, signature, start, store.keeps(), build.image, arch)

    def _kernel_from_entry(self, entry, signature, options):
        return _CachedKernel(entry, self._compiler_of(signature, options, entry["symbol"]), signature.args, options)

    def _compiler_of(self, signature, options, kernel):
        """A function that compiles ``signature`` with ``options`` when called: what a kernel loaded from the disk
        cache or a bundle (``kernel`` names it) compiles again for what needs its typing. It holds this dispatcher
        weakly: the kernel's face outlives the dispatcher when a user keeps it."""
        ref = _weakref(self)

        def compile_fresh():
            dispatcher = ref()
            if dispatcher is None:
                raise RuntimeError(f"the dispatcher of cached kernel {kernel} was collected")
            return dispatcher._compile_request(signature, options)

        return compile_fresh

    def _compiled_now(self, compiled, signature, start, cached=False, image=None, arch=None):
        """The face of a kernel compiled now (``image``: its cubin for ``arch``, linked to write the disk cache)."""
        kernel = _Kernel(compiled)
        kernel._cached_cubin, kernel.disk_arch = image, arch
        telemetry.count("compiles")
        telemetry.log(
            "compiled",
            self.__qualname__,
            signature.args,
            "and cached" if cached else "not cached",
            time.perf_counter() - start,
        )
        return kernel

    def _compile_request(self, signature, options, store=None):
        """One call of the compile driver (``_core.compile_kernel``): typed, checked and compiled for this
        dispatcher's target; a GPU kernel's module is lowered and optimised once, to LTO-IR when it links with
        LTO (its PTX then made only if asked for), else to PTX. With a ``caching.KernelStore``, the driver's
        ``KernelBuild``: the kernel the store keeps, or one compiled now (and kept)."""
        return compile_request(
            self.py_func, signature, options, self._links(), self.target, self._describe(), launchable=True, store=store
        )

    @entry_point
    def compile(self, sig, cc=None):
        """Compile for `sig` (a signature or argument types); returns the kernel (numba returns its _Kernel)."""
        signature = parse_signature(sig)
        if not self.device and signature.return_type is not None and signature.return_type.kind != "none":
            raise TypeError("CUDA kernel must have void return type.")
        if self.device and signature.return_type is not None:
            self._declared_returns[tuple(signature.args)] = signature.return_type
        return self._compile_signature(signature, cc)

    def unload(self):
        """Unloads this kernel's modules from every context, running their teardown callbacks (numba-cuda's
        request #171). Compiled code stays: the next launch loads it again, and setup runs again."""
        self._kernels.unload()

    def compile_device(self, argtypes, return_type=None):
        sig = _core.Signature(return_type, list(argtypes))
        return self._compile_signature(sig).typed

    @property
    def overloads(self):
        """{argument types: compiled kernel} (a device function's: its typed functions), in compile order, as
        numba's dispatchers have it."""
        out = {}
        for argtypes, face in self._kernels.specialisations():
            if isinstance(face, self._faces):
                out[argtypes] = face.typed if self.device else face
            else:  # a device function typed for a caller
                out.setdefault(argtypes, face)
        return out

    def _kernel_for_args(self, args):
        return self._kernel_for_types(tuple(self._argument_type(i, a) for i, a in enumerate(args)))

    def _parameter_names(self):
        code = self.py_func.__code__
        return code.co_varnames[: code.co_argcount]

    def _argument_type(self, index, value):
        """The type of a launch's argument ``index``; an error typing it (a list, an int no integer type holds)
        names the argument and the kernel."""
        try:
            return typeof(value)
        except (NumbaError, ValueError, TypeError) as e:
            names = self._parameter_names()
            name = f" ({names[index]!r})" if index < len(names) else ""
            try:
                named = type(e)(f"kernel argument {index}{name} of {self._describe()}: {e}")
            except Exception:  # noqa: BLE001  (a class that takes more than a message: raised as it came)
                raise e from None
            raise named from None

    def _check_argument_count(self, given):
        """A launch's argument count against the kernel's parameters, when its kernel is chosen: the error names
        the kernel and where it is defined (a function with ``*args`` is left to typing, which locates what it
        cannot type)."""
        code = self.py_func.__code__
        names = self._parameter_names()
        if given != len(names) and not code.co_flags & _CO_VARARGS:
            raise TypeError(
                f"{self._describe()} takes {len(names)} argument{'' if len(names) == 1 else 's'} "
                f"({', '.join(names)}) but {given} {'was' if given == 1 else 'were'} given"
            )

    @entry_point
    def _select_kernel(self, argtypes):
        """The launch fast path's miss (the Dispatcher interface): the specialisation for these types."""
        return self._kernel_for_types(tuple(argtypes)).native()

    def _kernel_for_types(self, argtypes):
        """The kernel launched for arguments of these types: the overload compiled for them, the best of the
        explicit signatures, or a new compile (the launch fast path asks this on a miss)."""
        overloads = self.overloads
        kernel = overloads.get(argtypes)
        if kernel is not None:
            return kernel
        self._check_argument_count(len(argtypes))
        if not self._can_compile:
            return self._best_overload(argtypes, overloads)
        return self._compile_signature(_core.Signature(None, list(argtypes)))

    def _best_overload(self, argtypes, overloads):
        """numba's choice among explicit signatures: the one whose conversions of the argument types
        rate best (fewest unsafe, then safe, then promote conversions); a tie is ambiguous."""
        signatures = list(overloads)
        best = _core.best_overloads([list(sig) for sig in signatures], list(argtypes))
        if not best:
            listed = "".join(f"\n    ({', '.join(map(str, sig))})" for sig in signatures)
            raise TypeError(
                f"No matching definition for argument type(s) {', '.join(map(str, argtypes))}: "
                f"{self._describe()} launches only its compiled signature"
                f"{'' if len(signatures) == 1 else 's'} (it compiles no other at launch):{listed}"
            )
        if len(best) > 1:
            lines = "\n".join(f"{', '.join(map(str, signatures[i]))} -> none" for i in best)
            raise TypeError(f"Ambiguous overloading for {self._describe()} ({', '.join(map(str, argtypes))}):\n{lines}")
        return overloads[signatures[best[0]]]

    @entry_point
    def specialize(self, *args):
        """A dispatcher compiled for exactly the types of `args`, with compilation disabled."""
        if self.specialized:
            raise RuntimeError("Dispatcher already specialized")
        argtypes = tuple(typeof(a) for a in args)
        key = (self._current_cc(), argtypes)
        spec = self.specializations.get(key)
        if spec is None:
            spec = self._clone()
            spec.compile(argtypes)
            spec._can_compile = False
            spec.specialized = True
            self.specializations[key] = spec
        return spec

    def disable_compile(self, val=True):
        self._can_compile = not val

    # -- numba's Dispatcher interface, beside compile() and specialize() -----------------------------------------
    def typeof_pyval(self, val):
        """The type a launch gives the argument ``val`` (numba's Dispatcher.typeof_pyval)."""
        return typeof(val)

    @entry_point
    def _compile_for_args(self, *args, **kws):
        """The kernel for these arguments, compiled if it is not yet (what a launch does first; numba-cuda's)."""
        if kws:
            raise TypeError(f"{self._describe()}: kernels take no keyword arguments, got {', '.join(kws)}")
        return self._kernel_for_args(args)

    @property
    def nopython_signatures(self):
        """The compiled signatures, as Signature objects (a kernel's return type is void)."""
        return [
            _core.Signature(self._declared_returns.get(argtypes) or _core.types.lookup("none"), list(argtypes))
            for argtypes in self.overloads
        ]

    @property
    def stats(self):
        """numba's ``stats``: ``(cache_path, cache_hits, cache_misses)``, the counters by argument types."""
        path = _caching().directory() if cache_wanted(self._cache) else None
        return _CompileStats(path, self._cache_hits, self._cache_misses)

    @entry_point
    def recompile(self):
        """Compiles every signature compiled so far again, reading the function's globals afresh (numba's
        recompile; the disk cache, keyed by the values the function reads, then holds the new kernels)."""
        signatures = [(argtypes, self._declared_returns.get(argtypes)) for argtypes, _ in self._compiled_items()]
        self._kernels = _core.driver.KernelCache()
        self._launch_table.clear()
        self._configs.clear()
        for argtypes, returns in signatures:
            self._compile_signature(_core.Signature(returns, list(argtypes)))

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        """``kernel.configure(griddim, blockdim, ...)``: the same as ``kernel[griddim, blockdim, ...]``."""
        return self[griddim, blockdim, stream, sharedmem]

    def call(self, args, griddim, blockdim, stream=0, sharedmem=0):
        """Launches the kernel with ``args`` (a sequence) in one call."""
        return self[griddim, blockdim, stream, sharedmem](*args)

    # -- inspection --------------------------------------------------------------------------
    def _inspect(self, attribute, signature):
        entries = {argtypes: getattr(kernel, attribute) for argtypes, kernel in self._compiled_items()}
        if signature is not None:
            return entries[tuple(parse_signature(signature).args)]
        return entries

    def inspect_asm(self, signature=None):
        return self._on_target.inspect_asm(self, signature)

    def inspect_llvm(self, signature=None):
        return self._inspect("llvm_ir", signature)

    def inspect_sass(self, signature=None):
        """numba-cuda's inspect_sass: each kernel's SASS for the current device (nvdisasm)."""
        return self._inspect("sass", signature)

    def inspect_sass_cfg(self, signature=None):
        """numba-cuda's inspect_sass_cfg: each kernel's control-flow graph in DOT (``nvdisasm -cfg``)."""
        return self._inspect("sass_cfg", signature)

    def inspect_lto_ptx(self, signature=None):
        """numba-cuda's inspect_lto_ptx: each kernel's PTX after link-time optimisation with its LTO-IR inputs, for
        the current device (a kernel compiled with ``lto=True``)."""
        return self._inspect("lto_ptx", signature)

    # numba-cuda's resource queries: {signature: value}, or the value of one signature's kernel (loaded in the
    # current context; on the CPU target, what its host code uses).
    def get_regs_per_thread(self, signature=None):
        return self._inspect("regs_per_thread", signature)

    def get_shared_mem_per_block(self, signature=None):
        return self._inspect("shared_mem_per_block", signature)

    def get_max_threads_per_block(self, signature=None):
        return self._inspect("max_threads_per_block", signature)

    def get_local_mem_per_thread(self, signature=None):
        return self._inspect("local_mem_per_thread", signature)

    def get_const_mem_size(self, signature=None):
        return self._inspect("const_mem_size", signature)

    def inspect_types(self, file=None):
        lines = []
        for argtypes, kernel in self._compiled_items():
            lines.append(f"{self.__qualname__} ({', '.join(map(str, argtypes))})")
            for name, t in kernel.typed.variables:
                lines.append(f"    {name}: {t}")
        text = "\n".join(lines)
        if file is None:
            print(text)
        else:
            print(text, file=file)

    def _compiled_items(self):
        """[(argument types, _Kernel)]: the compiled specialisations (not a device function's typings)."""
        return [(argtypes, face) for argtypes, face in self._kernels.specialisations() if isinstance(face, self._faces)]

    @property
    def signatures(self):
        return list(self.overloads)

    # ``kernel[griddim, blockdim, stream, sharedmem]`` is the launch fast path's __getitem__ (installed below:
    # a configuration seen before is found in self._configs without a Python frame); it calls _configure for
    # a new one.
    def _configure(self, config):
        """The configured kernel of a new configuration. Configurations are memoised like numba's (its LRU of
        128): the checks and the low-occupancy warning run once per configuration."""
        if self.device:
            raise RuntimeError("Cannot compile a device function as a kernel")
        if len(config) not in (2, 3, 4):
            raise ValueError("must specify at least the griddim and blockdim")
        from cujit.cudadrv import launch
        from cujit.cudadrv.stream import native_stream

        self._on_target.check_runtime(self)
        grid, block, stream, sharedmem = launch.configure(*config, on_gpu=self.target.on_gpu)
        native = native_stream(stream)  # (a bad stream is an error on either target)
        configured = self._on_target.configured(self, grid, block, stream, native, sharedmem)
        if self._extensions:  # each launch prepares its arguments in Python first
            configured = _ExtendedLaunch(self, configured, stream)
        return self._remember(config, configured)

    # Whether jit was given target="cuda" (jit sets it): else the target was CUJIT_TARGET's at decoration.
    _explicit_target = False

    def _check_runtime_runs_gpu_code(self):
        """A GPU kernel cannot run where the process's runtime is the CPU target's host driver, which loads no GPU
        code: the kernel's target was chosen when it was decorated, the process's when the runtime was first
        used (most often, CUJIT_TARGET=cpu was set in between)."""
        if not _core.host.host_driver_active():
            return
        if self._explicit_target:
            why, fix = "jit(target='cuda')", "leave target= out (kernels then follow CUJIT_TARGET) or pass target='cpu'"
        else:
            why = "the target is chosen when a kernel is decorated, and CUJIT_TARGET was not 'cpu' then"
            fix = (
                "set CUJIT_TARGET=cpu before the kernel is decorated (before the module that defines it is "
                "imported), or decorate it with cuda.jit(target='cpu')"
            )
        raise CudaSupportError(
            f"{self._describe()} is a GPU kernel ({why}), but this process runs on the CPU target "
            "(CUJIT_TARGET=cpu or NUMBA_ENABLE_CUDASIM=1, read when cujit's runtime was first used), whose runtime "
            f"cannot load GPU code: {fix}"
        )

    def _remember(self, config, configured):
        """Memoises a configured kernel (unhashable configurations, lists, are not)."""
        try:
            if len(self._configs) >= 128:
                self._configs.clear()
            self._configs[config] = configured
        except TypeError:
            pass
        return configured

    @entry_point
    def _launch_slow(self, configured, args):
        """The Python path of ``kernel[...](*args)`` (the C++ fast path hands over arguments it does not pack
        itself: host arrays, In/Out/InOut, pointers, records; and debug kernels, which report exceptions)."""
        from cujit.cudadrv.launch import launch_configured

        kernel = self._kernel_for_args(args)
        fn = kernel.function()
        if kernel.exceptions:
            kernel.reset_exception_channel(fn)
        launch_configured(
            fn,
            kernel.plan,
            configured.griddim,
            configured.blockdim,
            configured.stream,
            configured._native_stream,
            configured.sharedmem,
            args,
            kernel.cooperative,
            kernel.if_overlap,
        )
        if kernel.exceptions:
            error = kernel.raised(fn)
            if error is not None:
                raise error

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        if ntasks < 0:
            raise ValueError("Can't create ForAll with negative task count: %s" % ntasks)
        tpb = tpb or 128
        blocks = max(1, (ntasks + tpb - 1) // tpb)
        return self[blocks, tpb, stream, sharedmem] if ntasks else (lambda *args: None)

    def __call__(self, *args, **kwargs):
        if self.device:
            raise TypeError(
                f"{self.__qualname__!r} is a CUDA device function; it can only be called from "
                "kernels and other device functions"
            )
        from cujit.cudadrv.launch import MISSING_LAUNCH_CONFIG_MSG

        raise ValueError(MISSING_LAUNCH_CONFIG_MSG)

    def __repr__(self):
        kind = "device function" if self.device else "kernel"
        where = "" if self.target.on_gpu or self.device else f" (target={self.target.name!r})"
        return f"<cujit CUDA {kind} {self.__qualname__}{where}>"


_subscript = []  # whether the fast path's kernel[...] is installed (at the first dispatcher: the launch path's
# names are registered at their first use, not at import)


def _install_subscript():
    _core.launch.install_subscript(CUDADispatcher)
    _subscript.append(True)


class GpuHooks:
    """The GPU target's part of a dispatcher (``Target.hooks()``; the CPU target's is ``host_target.HostHooks``):
    specialisations are ``_Kernel`` faces, compiled for the current device's compute capability through the AOT
    bundles and the disk cache, and launched by the C++ fast path."""

    faces = (_Kernel,)

    @staticmethod
    def current_cc():
        from cujit.cudadrv import devices

        if devices.gpu_available():
            return devices.get_current_device().compute_capability
        return None

    @staticmethod
    def compile_kernel(dispatcher, signature, options):
        return dispatcher._compile_gpu_kernel(signature, options)

    @staticmethod
    def check_runtime(dispatcher):
        dispatcher._check_runtime_runs_gpu_code()

    @staticmethod
    def configured(dispatcher, grid, block, stream, native, sharedmem):
        return _core.launch.ConfiguredLaunch(
            dispatcher, dispatcher._launch_table, grid, block, stream, native, sharedmem
        )

    @staticmethod
    def inspect_asm(dispatcher, signature):
        return dispatcher._inspect("ptx", signature)


class _Extensions(list):
    """A dispatcher's ``extensions``: a list whose changes forget the dispatcher's memoised configurations (the next
    one wraps its launches in ``_ExtendedLaunch``)."""

    def __init__(self, dispatcher, items):
        super().__init__(items)
        self._dispatcher = _weakref(dispatcher)

    def _changed(self):
        dispatcher = self._dispatcher()
        if dispatcher is not None:
            dispatcher._configs.clear()


def _mutator(name):
    method = getattr(list, name)

    def changed(self, *args):
        result = method(self, *args)
        self._changed()
        return result

    changed.__name__ = name
    return changed


for _name in ("append", "extend", "insert", "remove", "pop", "clear", "__setitem__", "__delitem__", "__iadd__"):
    setattr(_Extensions, _name, _mutator(_name))


class _ExtendedLaunch:
    """``kernel[config]`` of a dispatcher with extensions: each argument passes through the extensions'
    ``prepare_args`` (from the last to the first, with its type as typed from the value given), then the launch
    goes on with the prepared values; the callables they append to ``retr`` run after it, as numba-cuda does."""

    def __init__(self, dispatcher, configured, stream):
        self.dispatcher, self.configured, self.stream = dispatcher, configured, stream

    def __call__(self, *args):
        retr, prepared = [], []
        for index, value in enumerate(args):
            try:
                ty = self.dispatcher._argument_type(index, value)
            except (TypeError, NumbaError):
                ty = None  # a value only an extension turns into something a kernel takes
            for extension in reversed(self.dispatcher.extensions):
                ty, value = extension.prepare_args(ty, value, stream=self.stream, retr=retr)
            prepared.append(value)
        result = self.configured(*prepared)
        for writeback in retr:
            writeback()
        return result

    def __getattr__(self, name):  # griddim, blockdim, stream, sharedmem... of the configured launch
        return getattr(self.configured, name)


_REJECTED = {"argtypes", "restype", "bind"}
# What jit takes besides its named parameters (numba-cuda's **kws).
_EXTRA_OPTIONS = {"fastmath", "max_registers", "extensions", "boundscheck"}


def numba_py_func(obj):
    """The Python function of one of numba's own dispatchers (``numba.jit``/``njit``, CPU functions numba-cuda
    lets kernels call), else None."""
    if (type(obj).__module__ or "").startswith("numba.") and not isinstance(obj, _core.Dispatcher):
        py_func = getattr(obj, "py_func", None)
        if isinstance(py_func, type(numba_py_func)):
            return py_func
    return None


_numba_devices = {}  # id(numba's dispatcher) -> (it, the device dispatcher of its function)
_numba_devices_lock = _thread.allocate_lock()


def _device_for_numba(obj):
    """The device dispatcher a kernel calls for one of numba's jit/njit dispatchers (one per dispatcher)."""
    py_func = numba_py_func(obj)
    if py_func is None:
        return None
    with _numba_devices_lock:
        kept = _numba_devices.get(id(obj))
        if kept is None or kept[0] is not obj:
            kept = _numba_devices[id(obj)] = (obj, jit(device=True)(py_func))
        return kept[1]


_source.device_for_numba = _device_for_numba  # how the compiler types calls of such objects (no import cycle)


def _check_extra_options(kws, device, forceinline, target=_target.CUDA):
    unknown = sorted(set(kws) - _EXTRA_OPTIONS - _REJECTED)
    if unknown:
        known = sorted(
            _EXTRA_OPTIONS
            | {
                "device",
                "inline",
                "forceinline",
                "link",
                "debug",
                "opt",
                "lineinfo",
                "cache",
                "launch_bounds",
                "lto",
                "shared_memory_carveout",
                "target",
            }
        )
        raise TypeError(
            f"jit() got an unexpected keyword argument {unknown[0]!r} (cuda.jit's options: {', '.join(known)})"
        )
    for key in _REJECTED & set(kws):
        raise DeprecationWarning(
            f"Deprecated keyword argument `{key}`. Signatures should be passed as the first positional argument."
        )
    for handler in kws.get("extensions") or ():
        if not callable(getattr(handler, "prepare_args", None)):
            raise TypeError(
                f"jit(extensions=[...]): {handler!r} has no prepare_args(ty, val, stream=..., retr=...) (numba-cuda's "
                "argument handlers return the (ty, val) to launch with)"
            )
    if kws.get("boundscheck") and target.on_gpu:  # the CPU target checks bounds (on by default there)
        raise NotImplementedError("bounds checking is not supported for CUDA")


def jit(
    func_or_sig=None,
    device=False,
    inline="never",
    forceinline=False,
    link=(),
    debug=None,
    opt=None,
    lineinfo=False,
    cache=False,
    launch_bounds=None,
    lto=None,
    shared_memory_carveout=None,
    target=None,
    **kws,
):
    """numba-cuda's ``cuda.jit``: a decorator for kernels and device functions.

    ``link=``: paths or LinkableCode objects linked into every kernel (for a device function, into every
    kernel that calls it). ``lto=True``: the kernel is compiled to LTO-IR and linked with link-time
    optimisation, with CUDA C++ inputs compiled to LTO-IR too; ``lto=False`` links cujit's PTX; the default
    (None) is LTO for kernels that link CUDA C++ or LTO-IR, except with ``debug``. ``inline="always"`` and
    ``forceinline=True``: a device function is inlined into its callers (LLVM's alwaysinline).
    ``shared_memory_carveout``: the kernel's preferred shared memory share of L1 ("default", "MaxL1",
    "MaxShared" or a percentage), set on each loaded kernel. ``target="cpu"`` (or ``CUJIT_TARGET=cpu``): kernels
    compile for this machine's CPU and run on cujit's host runtime (cujit.host_target), with array indices
    bounds-checked; ``boundscheck=False`` turns the checks off, and a wild index then crashes the process with a
    segmentation fault. An option jit does not know is a TypeError."""
    explicit_target, target = target is not None, _target.resolve_target(target)
    _check_extra_options(kws, device, forceinline, target)
    link = linking.normalize_items(link)
    inline = normalize_inline(inline)
    # The compile options, checked once here (numba-cuda warns about debug with opt at decoration too).
    compile_options = make_options(
        device=device,
        abi="numba",
        abi_info=None,
        cc=None,
        fastmath=kws.get("fastmath", False),
        opt=opt,
        debug=debug,
        lineinfo=lineinfo,
        launch_bounds=launch_bounds,
        forceinline=forceinline,
        inline=inline,
        lto=lto,
        max_registers=kws.get("max_registers"),
        carveout=shared_memory_carveout,
        boundscheck=kws.get("boundscheck"),
    )
    jit_options = dict(  # numba's targetoptions, for users who read it
        kws,
        debug=debug,
        opt=opt,
        lineinfo=lineinfo,
        link=link,
        lto=compile_options.lto,
        inline=inline,
        forceinline=bool(forceinline),
        launch_bounds=launch_bounds,
        cache=cache,
        shared_memory_carveout=compile_options.carveout,
    )
    # (a device function's items are linked by its callers, with their options: the default ones assumed).
    # Not for cached kernels: their NVRTC results come from the disk cache, or none is needed on a hit.
    if not target.on_gpu:
        pass  # no GPU code to prefetch
    elif not cache_wanted(cache):
        linking.prefetch(link, None if device else compile_options.lto, compile_options)
    elif not device:
        _caching().prepare()

    @entry_point  # a list of signatures compiles at decoration
    def wrap(pyfunc, sigs=()):
        pyfunc = numba_py_func(pyfunc) or pyfunc  # numba's own jit/njit dispatcher: its Python function
        # Device functions are typed into their callers: their dispatcher serves kernels of either target.
        dispatcher = CUDADispatcher(
            pyfunc,
            device,
            compile_options,
            link,
            cache,
            kws.get("fastmath"),
            jit_options,
            _target.CUDA if device else target,
        )
        dispatcher._explicit_target = explicit_target
        for sig in sigs:
            dispatcher.compile(sig)
        if sigs and not device:
            dispatcher._can_compile = False
            dispatcher.specialized = len(sigs) == 1
        return dispatcher

    if func_or_sig is None:
        return wrap
    if callable(func_or_sig) and not isinstance(func_or_sig, _core.Type):
        return wrap(func_or_sig)
    sigs = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    import functools

    return functools.partial(wrap, sigs=sigs)  # (a lambda would be one more frame of cujit's in tracebacks)
