"""The disk cache (``docs/caching.md``): linked kernels and NVRTC results, keyed by everything that can change them.

Which compiles use it (``config.cache_wanted``): kernels of ``@cuda.jit(cache=True)``, and every kernel when
``CUJIT_CACHE=1``; ``CUJIT_CACHE=0`` turns it off everywhere. NVRTC results of a cached kernel's CUDA C++ are kept too, keyed on their
own (content, included headers, options, NVRTC), so a ``.cu`` shared by many kernels is compiled once per machine.
Where: ``CUJIT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/cujit``, else ``~/.cache/cujit``), bounded by
``CUJIT_CACHE_MAX_MB`` (default 2048) with least-recently-used eviction. Entries are written to a temp file and
renamed, checksummed, and a corrupt one is removed and recompiled (``cpp/src/cache/disk_cache.cpp``).

A kernel's key is computed before any typing, from the function and everything it can reach (``Walk``):
its source and every device function's, the values of the global and closure names the code mentions (numbers,
numpy scalars and arrays by value; objects through the attributes the code names), declarations, link items by
content, and what link hooks return for the declared types (hooks are called to know it). Then the argument
types, the options, the architecture, and the identity of cujit's build and of NVRTC, nvJitLink and libNVVM.
A hit loads the cubin: no typing, LLVM, NVRTC or nvJitLink; the link inputs' setup and teardown callbacks run as
for a fresh load. Functions the walk cannot key (an object whose state it cannot read, ``__numba_cuda_declare__``
objects) compile as usual; ``CUJIT_LOG=compile`` says why.

An entry is data only (``_core.cache.Record``, encoded and checked by the C++ store): code bytes, symbol, a return
type by its name, launch facts, the link manifest, and a debug kernel's exceptions by their importable names and
constant arguments. Reading one runs nothing it names: exception classes are looked up among the modules the
process has already imported. The directory is trusted as ssh trusts ``~/.ssh`` (``open_root``): created 0700,
refused with one warning (then no cache) when another user owns it or others may write it, and so is each entry,
unless ``CUJIT_CACHE_SHARED=1`` opts in to a cache shared by several users.

This module is imported where a compile first uses it, not with ``cujit``: what it needs (hashlib, json,
fcntl) would more than double the package's import time for programs that never cache. Whether to use it is
asked without it: ``config.cache_wanted`` and ``aot_bundles.in_use``.
"""

import fcntl
import hashlib
import json
import linecache
import os
import pickle
import re
import sys
import threading
import time
import types as pytypes
import warnings

from cujit import _core, _source, aot_bundles, linking, telemetry, toolkit
from cujit._version import __version__
from cujit.errors import NumbaWarning
from cujit.linkable_code import LinkableCode
from cujit.link_hooks import call_link_hooks, link_hooks

FORMAT = 2  # bump when what an entry holds changes (2: typed records instead of pickles)
Record = _core.cache.Record
Constant = _core.cache.Constant


class Uncacheable(Exception):
    """Why a function cannot be cached (the message names the object)."""


#: numba-cuda's refusal to cache a kernel that captures device arrays (raised for ``cache=True``).
CAPTURED_DEVICE_ARRAYS = (
    "Cannot serialize kernels or device functions referencing global device arrays. Pass the array(s) as arguments "
    "to the kernel instead."
)


class CapturedDeviceArray(Uncacheable):
    """The function captures a device array by reference: its pointer is in the code, which no other process may
    run."""


# ---- settings ------------------------------------------------------------------------------------------------


def directory():
    given = os.environ.get("CUJIT_CACHE_DIR")
    if given:
        return os.path.abspath(os.path.expanduser(given))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cujit")


def max_bytes():
    try:
        return int(float(os.environ.get("CUJIT_CACHE_MAX_MB", "2048")) * (1 << 20))
    except ValueError:
        return 2048 << 20


_stores = {}
_stores_lock = threading.Lock()
_warned = set()


def shared():
    """``CUJIT_CACHE_SHARED=1``: the directory and its entries may belong to other users (a fleet's cache)."""
    return os.environ.get("CUJIT_CACHE_SHARED", "").strip() not in ("", "0")


def store():
    """The process's DiskCache for the current ``CUJIT_CACHE_DIR``, or None once it proved unusable or
    untrusted (one warning says why)."""
    path = directory()
    with _stores_lock:
        if path in _stores:
            return _stores[path]
        disk = _core.cache.DiskCache(path, max_bytes(), shared())
        unusable = disk.open_root()
        untrusted = "" if unusable else disk.trust_problem()
        _stores[path] = None if unusable or untrusted else disk
    if unusable:
        _warn_once(path, f"cujit: the disk cache at {path} cannot be written ({unusable}); compiling without it")
    elif untrusted:
        _warn_once(
            path,
            f"cujit: not using the disk cache at {path}: {untrusted.removeprefix('cujit cache: ')}; "
            "compiling without it (a cache directory must be yours and writable by you alone, as "
            "ssh asks of ~/.ssh; CUJIT_CACHE_SHARED=1 accepts a directory shared by several users)",
        )
    return _stores[path]


def _warn_once(path, message, stacklevel=4):
    with _stores_lock:
        first = path not in _warned
        _warned.add(path)
    if first:
        warnings.warn(message, NumbaWarning, stacklevel=stacklevel)


def _disable(disk, why):
    """A cache directory that cannot be written (read-only, full, not a directory): no cache, one warning."""
    with _stores_lock:
        if _stores.get(disk.dir) is disk:
            _stores[disk.dir] = None
    _warn_once(
        disk.dir, f"cujit: the disk cache at {disk.dir} cannot be written ({why}); compiling without it", stacklevel=5
    )


def get(section, key):
    disk = store()
    if disk is None:
        return None
    with telemetry.stage("cache read"):
        return _checked(disk, disk.get, section, key)


def put(section, key, data):
    disk = store()
    if disk is not None and not disk.put(section, key, data):
        _disable(disk, disk.last_error)


def get_record(section, key):
    """The entry's Record, or None (missing, damaged, untrusted, not a record of this format)."""
    disk = store()
    if disk is None:
        return None
    with telemetry.stage("cache read"):
        return _checked(disk, disk.get_record, section, key)


def put_record(section, key, record):
    """Writes the entry; whether it was written (and counted as a cache write)."""
    disk = store()
    if disk is None:
        return False
    if not disk.put_record(section, key, record):
        _disable(disk, disk.last_error)
        return False
    telemetry.count("cache writes")
    return True


def _checked(disk, read, section, key):
    """read(section, key), warning once when the store refused an entry another user could have written."""
    untrusted = disk.untrusted
    found = read(section, key)
    if found is None and disk.untrusted != untrusted:
        _warn_once(
            ("entry", disk.dir),
            f"cujit: {disk.last_error.removeprefix('cujit cache: ')}: not read (an "
            "entry must be yours and writable by you alone; CUJIT_CACHE_SHARED=1 "
            "accepts entries of other users); compiling instead",
        )
    return found


class EntryLock:
    """An exclusive lock on one entry across processes (``flock`` on ``<dir>/.locks/<section>-<key>``), held from
    its making until ``release()`` while the entry is compiled and written; no lock when the directory cannot hold
    one. (The store skips directories named with a dot: lock files are never evicted while held.)"""

    def __init__(self, section, key):
        disk = store()
        self._fd = None
        if disk is not None:
            try:
                os.makedirs(os.path.join(disk.dir, ".locks"), exist_ok=True)
                self._fd = os.open(os.path.join(disk.dir, ".locks", f"{section}-{key}"), os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except OSError:
                if self._fd is not None:
                    os.close(self._fd)
                self._fd = None

    def release(self):
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


# ---- the toolchain's identity ----------------------------------------------------------------------------------

_toolchain = None


def _file_identity(path):
    try:
        st = os.stat(path)
        return (os.path.basename(path), st.st_size, st.st_mtime_ns)
    except OSError:
        return (path, None)


_TOOL_LIBRARIES = ("libnvrtc", "libnvJitLink", "libnvvm")
# The package's modules whose changes can change a compiled kernel (the rest are the runtime).
_COMPILER_MODULES = (
    "bytecode/_reader.py",
    "bytecode/_conditions.py",
    "bytecode/_decode.py",
    "bytecode/_expressions.py",
    "bytecode/_graph.py",
    "bytecode/_ops.py",
    "bytecode/_readings.py",
    "bytecode/_statements.py",
    "_source.py",
    "_source_text.py",
    "_version.py",
    "caching.py",
    "compiler.py",
    "declarations.py",
    "dispatcher.py",
    "intrinsics.py",
    "link_hooks.py",
    "linkable_code.py",
    "linking.py",
    "types.py",
    "vector_types.py",
)


def _tool_libraries():
    """The NVRTC, nvJitLink and libNVVM files of the places the locator searches (``cujit.toolkit``), by name,
    size and time: their versions, known without loading them (a hit loads none of them)."""
    found = []
    for root in toolkit.search_roots():
        for sub in ("lib", "lib64", "nvvm/lib64"):
            try:
                with os.scandir(os.path.join(root, sub)) as entries:
                    found += sorted(_file_identity(e.path) for e in entries if e.name.startswith(_TOOL_LIBRARIES))
            except OSError:
                continue
    return found


_toolchain_lock = threading.Lock()


_preparing = False


def prepare():
    """Finds the toolchain's identity in the background, once per process (``jit(cache=True)`` calls it at
    decoration), so that a first call served from the cache does not wait for those file lookups."""
    global _preparing
    with _toolchain_lock:
        if _preparing or _toolchain is not None:
            return
        _preparing = True
    threading.Thread(target=toolchain_id, name="cujit-cache-prepare", daemon=True).start()


def _after_fork_in_child():
    """The prepare thread stays in the parent: a child forked while it held the lock would wait for it forever,
    so the child takes a new lock and finds the identity itself if the parent had not yet."""
    global _toolchain_lock, _preparing
    _toolchain_lock = threading.Lock()
    _preparing = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def toolchain_id():
    """cujit's version and build (the extension and the compiler's modules), Python's and numpy's versions, and
    the NVRTC, nvJitLink and libNVVM libraries the locator would load (by file identity: their versions)."""
    with _toolchain_lock:
        _find_toolchain()
    numpy = sys.modules.get("numpy")
    return _toolchain + (numpy.__version__ if numpy is not None else "")


def _find_toolchain():
    global _toolchain
    if _toolchain is None:
        package = os.path.dirname(os.path.abspath(__file__))
        parts = [__version__, sys.version, FORMAT] + [_file_identity(f) for f in _core.library_files()]
        parts += [_file_identity(os.path.join(package, f)) for f in _COMPILER_MODULES] + _tool_libraries()
        _toolchain = repr(parts)


def digest(*parts):
    h = hashlib.blake2b(digest_size=24)
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode())
        h.update(b"\x1f")
    return h.hexdigest()


def content_hash(made):
    return hashlib.blake2b(made.data, digest_size=16).hexdigest()


# ---- the walk: everything a function can reach, before typing -------------------------------------------------

_KNOWN_MODULES = ("math", "cmath", "numpy", "cujit.cuda")  # the modules the frontend knows by name
_code_texts = {}


def _code_text(pyfunc, portable=False):
    """What identifies a function's code without parsing it: its file (not when ``portable``: a bundle serves
    the same code wherever it is installed), its source lines (from the def line to the last line any of its
    instructions, or its nested functions', comes from; functions made by exec have them when their text is in
    linecache) and its bytecode, constants and names."""
    code = pyfunc.__code__
    text = _code_texts.get(code)
    if text is None:
        lines = _source_lines(code.co_filename, pyfunc.__globals__)
        if not lines:
            raise Uncacheable(f"the source of {pyfunc.__qualname__!r} is not available")
        first = code.co_firstlineno
        text = (
            repr(code.co_filename)
            + "\x1e"
            + repr((first, "".join(lines[first - 1 : _last_line(code)]), _code_parts(code)))
        )
        _code_texts[code] = text
    return text.split("\x1e", 1)[1] if portable else text


def _source_lines(filename, module_globals):
    """A file's lines as linecache has them, read directly when linecache has not yet (its tokenize-based reader
    costs milliseconds on a process's first call; utf-8, Python's default source encoding, is tried first)."""
    cached = linecache.cache.get(filename)
    if cached is not None and len(cached) == 4:
        return cached[2]
    try:
        with open(filename, "rb") as f:
            return f.read().decode("utf-8").splitlines(True)
    except (OSError, UnicodeDecodeError):
        return linecache.getlines(filename, module_globals)


def _last_line(code):
    last = max((line for _, _, line in code.co_lines() if line is not None), default=code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            last = max(last, _last_line(const))
    return last


def _code_parts(code):
    consts = tuple(
        _code_parts(c) if isinstance(c, pytypes.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts
    )
    return (
        code.co_code,
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_argcount,
        code.co_kwonlyargcount,
        code.co_flags,
    )


def _is_extension_type(t):
    """Whether `t` (an argument type, a global's) is or holds a library's type (cujit.extending)."""
    extending = sys.modules.get("cujit.extending")
    if extending is None or not isinstance(t, _core.Type):
        return False
    inner = t.dtype if t.kind == "array" else t
    return extending._extension_of(inner) is not None


def _extension_operator_typers():
    """[(name, typers)] of cujit.extending's overloads of the functions of ``operator`` (an operator of library
    values calls them: no name in the code says so)."""
    extending = sys.modules.get("cujit.extending")
    return extending._operator_typers() if extending is not None else []


def _extension_member_typers(name):
    """The typers of cujit.extending's overload_method/overload_attribute registered under `name` (the code may
    reach them through a value of a type they apply to)."""
    extending = sys.modules.get("cujit.extending")
    return extending._member_typers(name) if extending is not None else []


def _code_names(code):
    """Every name the code (and the functions nested in it) mentions: globals, attributes, free variables."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def _global_reads(code):
    """The names the code (and the functions nested in it) reads as globals or builtins, and its free variables:
    not the attribute names ``co_names`` holds too (``cuda.threadIdx.x`` reads no global ``x``, and a key must not
    change with one). Read from ``co_code`` (its caches are zeros there) with the opcode numbers of this Python."""
    import opcode

    reads = {opcode.opmap[n] for n in _GLOBAL_OPS if n in opcode.opmap}
    load_global = opcode.opmap["LOAD_GLOBAL"] if sys.version_info >= (3, 11) else None  # its index is arg >> 1
    extended = opcode.opmap["EXTENDED_ARG"]
    names = set(code.co_freevars)
    raw, high = code.co_code, 0
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | high
        high = arg << 8 if op == extended else 0
        if op in reads:
            names.add(code.co_names[arg >> 1 if op == load_global else arg])
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_reads(const)
    return names


_GLOBAL_OPS = ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_FROM_DICT_OR_GLOBALS")


class Walk:
    """Feeds a hash with a kernel and everything it can reach, and collects the link inputs that can reach its
    link (each with its callbacks) for a cache hit to load with."""

    def __init__(self, portable=False):
        self._portable = portable
        self._hash = hashlib.blake2b(digest_size=24)
        self._seen = {}
        self._held = []
        self._operators_walked = False
        self._extensions = False  # the walk met a library's types or overloads (operators)
        self.link_inputs = []

    def digest(self):
        return self._hash.hexdigest()

    def operators(self, argtypes=()):
        """The overloads of ``operator.*`` (an operator of library values calls them: no name in the code says so),
        where an operator may call them: the code reaches a library's types or overloads, or an argument is a
        library type's value. (Elsewhere they are left out: a key depends on no overload a process happens to
        have registered, and an AOT bundle built beside a library loads without it.)"""
        if self._operators_walked or not (self._extensions or any(map(_is_extension_type, argtypes))):
            return
        self._operators_walked = True
        for name, typers in _extension_operator_typers():
            self._add("operator", name)
            for typer in typers:
                self.typer(typer)

    def _add(self, *parts):
        for p in parts:
            self._hash.update(repr(p).encode())
            self._hash.update(b"\x1f")

    def _once(self, obj):
        """True the first time ``obj`` is met; later meetings hash its index (shared objects, cycles)."""
        index = self._seen.get(id(obj))
        if index is not None:
            self._add("seen", index)
            return False
        self._seen[id(obj)] = len(self._seen)
        self._held.append(obj)
        return True

    def function(self, pyfunc):
        if not self._once(pyfunc):
            return
        code = pyfunc.__code__
        self._add("function", pyfunc.__qualname__, _code_text(pyfunc, self._portable))
        resolver = _source.Resolver(pyfunc)
        names = _code_names(code)
        for name in sorted(names):  # an extension's methods and attributes of this name: their typers' source
            for typer in _extension_member_typers(name):
                self._add("member", name)
                self._extensions = True
                self.typer(typer)
        for name in sorted(_global_reads(code)):
            if name in resolver.closure:
                value = resolver.closure[name]
            elif name in pyfunc.__globals__:
                value = pyfunc.__globals__[name]
            else:
                continue
            self._add("name", name)
            self.value(value, resolver, names)
        for default in pyfunc.__defaults__ or ():
            self._add("default")
            self.value(default, resolver, names)

    def value(self, v, resolver, names):
        if isinstance(v, (str, bytes)):
            self._add(type(v).__name__, v)
            return
        if isinstance(v, (tuple, list)):
            self._add(type(v).__name__, len(v))
            for item in v:
                self.value(item, resolver, names)
            return
        extension = _source.extension_callee(v) if _source.extension_callee is not None else None
        if extension is not None and not isinstance(extension, _core.Dispatcher):  # overloads: their typers
            self._add("overloads", getattr(v, "__qualname__", ""))
            self._extensions = True
            for typer in extension.typers:
                self.typer(typer)
            return
        if isinstance(v, pytypes.FunctionType):
            self.function(v)
            return
        if isinstance(v, pytypes.MethodType):
            self.value(v.__self__, resolver, names)
            self.function(v.__func__)
            return
        if type(v) in (bool, int, float, complex) or v is None:  # what classify says of them: their value
            self._add(type(v).__name__, v)
            return
        if isinstance(v, _core.Type):
            self._add("type", str(v))
            return
        if isinstance(v, _core.Dispatcher):
            self.callee(v)
            return
        if isinstance(v, pytypes.ModuleType) and v.__name__ in _KNOWN_MODULES:
            self._add("module", v.__name__)
            return
        try:
            kind = resolver.classify(v)
        except Exception as e:  # noqa: BLE001  (typing will raise it where it belongs)
            raise Uncacheable(f"{v!r:.80}: {e}") from None
        tag, value = kind.kind, kind.value
        if tag in ("bool", "int", "float", "complex", "none", "builtin", "module"):
            self._add(tag, value)
        elif tag == "type":
            self._extensions = self._extensions or _is_extension_type(value)
            self._add("type", str(value))
        elif tag == "ndarray":
            array_type, shape, data = value
            self._add("ndarray", str(array_type), shape, hashlib.blake2b(data, digest_size=16).hexdigest())
        elif tag == "record":  # np.void, a library type's value: its record and bytes
            record_type, data = value
            self._extensions = self._extensions or _is_extension_type(record_type)
            self._add("record", str(record_type), hashlib.blake2b(data, digest_size=16).hexdigest())
        elif tag == "exception":
            self._add("exception", v.__module__, v.__qualname__)
        elif tag == "device":
            self.callee(value)
        elif tag == "device_array":
            raise CapturedDeviceArray(f"{v!r:.80}: a captured device array")
        else:
            self.object(v, resolver, names)

    def typer(self, t):
        """An extension's typer: its source; one cujit.extending made says what keys it instead (``_cache_key``:
        the user's typer it wraps, the declarations it chooses among, a text that says what it does)."""
        for item in getattr(t, "_cache_key", None) or (t,):
            if isinstance(item, str):
                self._add("key", item)
            elif isinstance(item, pytypes.FunctionType):
                self.function(item)
            else:
                self.callee(item)

    def callee(self, c):
        if not self._once(c):
            return
        if isinstance(c, _core.Dispatcher):
            self._add("dispatcher", c._compile_options.key(), c._fastmath)
            self.links(c._link_items)
            self.function(c.py_func)
        elif hasattr(c, "_link_hook") and hasattr(c, "sig"):  # a declare_device descriptor
            self._add("declaration", c.name, str(c.sig), c.abi, bool(c.use_cooperative))
            self.links(c.link)
            hooks = link_hooks(c, c._link_hook)
            if hooks:  # what they return for the declared types (the compile asks them the same)
                self._add("hooked")
                self.links(call_link_hooks(hooks, tuple(c.sig.args), c._describe()))
        else:
            raise Uncacheable(
                f"{c.__qualname__!r} gives its declaration per call (__numba_cuda_declare__), "
                "which the cache cannot know before typing"
            )

    def inputs_for(self, manifest):
        """The link inputs met that a recorded link used (``link_manifest``), in its order; None when one of them
        is not among them (its content changed)."""
        by_content = {(m.kind, content_hash(m)): m for m in self.link_inputs}
        try:
            return [by_content[tuple(link)] for link in manifest]
        except KeyError:
            return None

    def links(self, items):
        for made in linking.link_inputs(items):
            self._add("link", made.kind, content_hash(made))
            self.link_inputs.append(made)

    def object(self, v, resolver, names):
        """Any other object: its class, the source of its hook methods, and the attributes the code names."""
        if isinstance(v, LinkableCode):
            self.links([v])
            return
        if not self._once(v):
            return
        cls = type(v)
        self._add("object", cls.__module__, cls.__qualname__)
        for hook in ("__numba_cuda_link__", "__numba_cuda_declare__"):
            method = getattr(cls, hook, None)
            if isinstance(method, pytypes.FunctionType):
                self.function(method)
        if not isinstance(v, (pytypes.ModuleType, type)) and not hasattr(v, "__dict__"):
            raise Uncacheable(f"{cls.__qualname__} object {v!r:.60} has no state the cache can key on")
        for name in sorted(names):
            try:
                attr = getattr(v, name)
            except Exception:  # noqa: BLE001  (no such attribute: typing reports it if the code reads it)
                continue
            self._add("attr", name)
            self.value(attr, resolver, names)


# ---- kernels ----------------------------------------------------------------------------------------------------


def _specialisation_key(kind, identity, walk, argtypes, options, *more):
    """A specialisation's key: the walk, the argument types and the options' one key (noalias, lto and
    max_registers among them)."""
    walk.operators(argtypes)
    return digest(kind, identity, walk.digest(), [str(t) for t in argtypes], options.key(), *more)


def kernel_key(dispatcher, argtypes, options, arch):
    """(key, walk) of a kernel specialisation; raises Uncacheable."""
    with telemetry.stage("cache key"):
        walk = Walk()
        walk.callee(dispatcher)
        return _specialisation_key("kernel", toolchain_id(), walk, argtypes, options, arch), walk


class KernelStore(_core.KernelStore):
    """The AOT bundles and the disk cache for one kernel specialisation, as the compile driver asks them
    (cujit/compiler.h: ``build_kernel`` decides when each step runs): what is keyed by the function's names is
    answered here. ``bundles``: look in the loaded bundles (``CUJIT_AOT``, ``cujit.aot.load``); ``cache``: the
    disk cache is on for it (``cache=True`` or ``CUJIT_CACHE=1``)."""

    def __init__(self, dispatcher, argtypes, options, arch, start, bundles, cache):
        super().__init__()
        self._dispatcher, self._argtypes, self._options = dispatcher, argtypes, options
        self.arch, self._start, self._bundles = arch, start, bundles
        self.key = self._walk = None
        if cache:
            try:
                self.key, self._walk = kernel_key(dispatcher, argtypes, options, arch)
            except CapturedDeviceArray as e:
                if dispatcher._cache:  # cache=True asked for it: numba-cuda's error
                    raise pickle.PicklingError(CAPTURED_DEVICE_ARRAYS) from None
                self._log("uncacheable", "not cached", f"({e})")
            except Exception as e:  # noqa: BLE001  (Uncacheable, or an error the compile will raise in place)
                self._log("uncacheable", "not cached", f"({e})")

    def _log(self, counter, what, detail):
        telemetry.count(counter)
        telemetry.log(what, self._dispatcher.__qualname__, self._argtypes, detail, time.perf_counter() - self._start)

    def find(self):
        if self._bundles:
            self._bundles = False  # (asked once: bundles are not written while a process runs)
            entry = bundle_entry(self._dispatcher, self._argtypes, self._options, self.arch)
            if entry is not None:
                self._log("aot hits", "ahead of time", self.arch)
                return entry
        entry = get_kernel(self.key, self._walk) if self.key is not None else None
        if entry is not None:
            self._log("cache hits", "cache hit", entry["arch"])
        return entry

    def keeps(self):
        return self.key is not None

    def lock(self):
        return EntryLock("kernel", self.key)

    def link_inputs(self, compiled):
        telemetry.count("cache misses")  # (asked once a kernel to keep was compiled)
        return precompiled_sources(compiled.typed.link_inputs, self.arch, compiled.code.lto, compiled.options)

    def keep(self, compiled, image):
        with telemetry.stage("cache write"):
            put_kernel(self.key, compiled, image, self.arch)


def link_manifest(link_inputs):
    """What an entry records of the inputs its link used: (kind, content hash) each, in order."""
    return [(m.kind, content_hash(m)) for m in link_inputs]


def put_kernel(key, compiled, cubin, arch):
    """Writes the entry of a kernel compiled now (a ``_core.CompiledKernel``): the cubin and what loading and
    launching need without typing."""
    record = _kernel_record(compiled, cubin, arch)
    if record is not None:
        put_record("kernel", key, record)


def _kernel_record(compiled, code, arch):
    """The Record of a kernel compiled now with its ``code`` for ``arch``, or None: a kernel whose exceptions a
    reader could not find by name (a class defined in a function) or whose arguments are not constants of str, int,
    float, bool or None is not written."""
    typed = compiled.typed
    try:
        raises = [_raise_record(site) for site in (typed.exceptions if compiled.options.debug else ())]
    except TypeError as e:
        telemetry.count("uncacheable")
        telemetry.log("not cached", typed.symbol, typed.args, f"({e})", 0.0)
        return None
    return Record(
        Record.Kind.kernel,
        bytes(code),
        symbol=typed.symbol,
        arch=str(arch),
        cooperative=bool(typed.cooperative),
        links=link_manifest(typed.link_inputs),
        raises=raises,
    )


def get_kernel(key, walk):
    """The kernel entry for ``key`` (symbol, cooperative, exceptions, arch, cubin) with ``link_inputs``: the walk's
    inputs its link used, in the link's order (their callbacks run at load); None when there is none or it cannot
    be used (then it is compiled again and overwritten)."""
    record = get_record("kernel", key)
    if record is None or record.kind != Record.Kind.kernel:
        return None
    try:
        exceptions = tuple(_raise_site(r) for r in record.raises)
    except LookupError:  # an exception class this process has not imported: compiled again
        return None
    inputs = walk.inputs_for([tuple(link) for link in record.links])
    if inputs is None:
        return None
    return {
        "symbol": record.symbol,
        "cooperative": record.cooperative,
        "exceptions": exceptions,
        "arch": record.arch,
        "cubin": record.code,
        "link_inputs": inputs,
    }


class HostKernelStore(KernelStore):
    """The disk cache for one CPU-target kernel specialisation: entries of the section ``host``, keyed as a GPU
    kernel's with this machine (``host_machine_id``: the target, the CPU and its features) for the architecture,
    holding the kernel's object code (``_core.HostKernel.object``) and launch facts. A hit is loaded by
    ``_core.load_host_kernel``: no typing, lowering or LLVM optimisation."""

    def __init__(self, dispatcher, argtypes, options, start):
        super().__init__(dispatcher, argtypes, options, "host " + _core.host_machine_id(), start, False, True)

    def find(self):
        entry = get_host_kernel(self.key) if self.key is not None else None
        if entry is not None:
            self._log("cache hits", "cache hit", "CPU")
        return entry

    def keep(self, compiled):
        telemetry.count("cache misses")
        record = _kernel_record(compiled, compiled.code.object, self.arch)
        if record is not None:
            with telemetry.stage("cache write"):
                put_record("host", self.key, record)


def get_host_kernel(key):
    """The CPU-target kernel entry for ``key`` (symbol, cooperative, exceptions, object), or None when there is none
    or it cannot be used (then it is compiled again and overwritten)."""
    record = get_record("host", key)
    if record is None or record.kind != Record.Kind.kernel or record.links:
        return None
    try:
        exceptions = tuple(_raise_site(r) for r in record.raises)
    except LookupError:  # an exception class this process has not imported: compiled again
        return None
    return {"symbol": record.symbol, "cooperative": record.cooperative, "exceptions": exceptions, "object": record.code}


# A debug kernel's raise sites: (exception class, constant arguments, function, file, line), stored by names.


def _raise_record(site):
    cls, args, function, filename, line = site
    name = f"{cls.__module__}:{cls.__qualname__}"
    if _exception_class(name) is not cls:
        raise TypeError(f"{cls.__qualname__} cannot be found by its name in another process")
    return _core.cache.Raise(name, [_constant(a) for a in args], str(function), str(filename), int(line))


def _raise_site(record):
    cls = _exception_class(record.exception)
    if cls is None:
        raise LookupError(record.exception)
    return cls, tuple(_value(c) for c in record.args), record.function, record.filename, record.line


def _exception_class(name):
    """The exception class ``module:qualname`` among the modules this process has imported (nothing is imported
    and no attribute hook runs: the names come from a file others may have written), or None."""
    module, _, qualname = name.partition(":")
    found = sys.modules.get(module)
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        found = namespace.get(part) if namespace is not None else None  # a module's dict, a class's mappingproxy
        if found is None:
            return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


_CONSTANT_WRITERS = {
    str: (Constant.Kind.str, str),
    int: (Constant.Kind.int, str),
    float: (Constant.Kind.float, repr),
    bool: (Constant.Kind.bool, str),
    type(None): (Constant.Kind.none, lambda v: ""),
}
_CONSTANT_READERS = {
    Constant.Kind.str: str,
    Constant.Kind.int: int,
    Constant.Kind.float: float,
    Constant.Kind.bool: lambda text: text == "True",
    Constant.Kind.none: lambda text: None,
}


def _constant(value):
    writer = _CONSTANT_WRITERS.get(type(value))  # exact types: a subclass would not come back as itself
    if writer is None:
        raise TypeError(f"an exception argument of type {type(value).__name__} is not a constant a cache keeps")
    return Constant(writer[0], writer[1](value))


def _value(constant):
    return _CONSTANT_READERS[constant.kind](constant.text)


# ---- compile outputs (cuda.compile, compile_ptx, with CUJIT_CACHE=1) --------------------------------------------


def compile_key(pyfunc, signature, options, output):
    """The key of a ``compile*`` call's output, or None when the function cannot be keyed."""
    with telemetry.stage("cache key"):
        try:
            walk = Walk()
            walk.function(pyfunc)
            walk.operators(signature.args)
        except Exception as e:  # noqa: BLE001  (compiled as usual; the compile raises what belongs to it)
            telemetry.count("uncacheable")
            telemetry.log("not cached", pyfunc.__qualname__, signature.args, f"({e})", 0.0)
            return None
        return digest(
            "compile",
            toolchain_id(),
            walk.digest(),
            [str(t) for t in signature.args],
            str(signature.return_type),
            options.key(),
            output,
        )


def get_compiled(key, text):
    """(code, return type) of a cached ``compile*`` output (``text``: PTX, a str; else LTO-IR, bytes), or None."""
    record = get_record("compile", key) if key is not None else None
    if record is None or record.kind != Record.Kind.compiled:
        return None
    try:
        return_type = _core.parse_type(record.return_type)
    except Exception:  # noqa: BLE001  (not a type name: compiled again and overwritten)
        return None
    telemetry.count("cache hits")
    return (record.code.decode() if text else record.code), return_type


def put_compiled(key, code, return_type):
    """Writes a ``compile*`` output; one whose return type cujit cannot read back from its name (tuples,
    arrays) is not written."""
    try:
        readable = str(_core.parse_type(str(return_type))) == str(return_type)
    except Exception:  # noqa: BLE001
        readable = False
    if key is None or not readable:
        return
    data = code.encode() if isinstance(code, str) else bytes(code)
    put_record("compile", key, Record(Record.Kind.compiled, data, return_type=str(return_type)))


# ---- bundles built ahead of time (cujit.aot) -----------------------------------------------------------------

BUNDLE_INDEX = "index.json"
_bundles_from_env = False


def bundle_key(dispatcher, argtypes, options):
    """(key, walk) of a kernel in a bundle: the walk without files' locations, the options without the
    architecture (one entry serves several), cujit's version, not the toolchain's (loading needs no tools)."""
    walk = Walk(portable=True)
    walk.callee(dispatcher)
    o = options.copy()
    o.cc = _core.DEFAULT_CC
    return _specialisation_key("bundle", (__version__, FORMAT), walk, argtypes, o), walk


def load_bundle(path):
    """Serves the bundle at ``path``; returns its index, or None (with one warning) when the bundle could have
    been written by someone else: the directory or a file in it owned by another user than this one or root, or
    writable by others, unless ``CUJIT_CACHE_SHARED=1``. Bundles are data (JSON and fatbins) either way."""
    index_path = os.path.join(path, BUNDLE_INDEX)
    with open(index_path) as f:
        index = json.load(f)
    if not shared():
        files = [path, index_path] + [os.path.join(path, e["fatbin"]) for e in index["kernels"]]
        problem = next(filter(None, map(_core.cache.path_trust_problem, files)), "")
        if problem:
            _warn_once(
                ("bundle", os.path.abspath(path)),
                f"cujit: not using the AOT bundle at {path}: {problem.removeprefix('cujit cache: ')} (a bundle "
                "must be yours or root's and writable by nobody else; CUJIT_CACHE_SHARED=1 accepts it)",
            )
            return None
    aot_bundles.add(os.path.abspath(path), {e["key"]: e for e in index["kernels"]})
    return index


def bundle_entry(dispatcher, argtypes, options, arch):
    """A loaded bundle's entry for this specialisation on ``arch`` (``CUJIT_AOT`` names bundles too), in the
    form ``unpack_kernel`` gives (the fatbin as the cubin); None when none has it."""
    global _bundles_from_env
    if not _bundles_from_env:
        _bundles_from_env = True
        for path in filter(None, os.environ.get("CUJIT_AOT", "").split(os.pathsep)):
            load_bundle(path)
    bundles = aot_bundles.loaded()
    if not bundles:
        return None
    try:
        key, walk = bundle_key(dispatcher, argtypes, options)
    except Exception:  # noqa: BLE001  (a kernel the walk cannot key is compiled as usual)
        return None
    for directory, entries in bundles:
        entry = entries.get(key)
        inputs = walk.inputs_for(entry["links"]) if entry is not None and arch in entry["archs"] else None
        if inputs is None:
            continue
        with open(os.path.join(directory, entry["fatbin"]), "rb") as f:
            fatbin = f.read()
        return {
            "symbol": entry["symbols"][arch],
            "cooperative": entry["cooperative"],
            "exceptions": (),
            "arch": arch,
            "cubin": fatbin,
            "link_inputs": inputs,
        }
    return None


# ---- NVRTC results ------------------------------------------------------------------------------------------------

_INCLUDE = re.compile(rb'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _headers(source, name, include_dirs, found, depth=0):
    """Contents of the headers ``source`` includes that exist in its own directory or ``include_dirs``
    (recursively): what can change NVRTC's result besides the source, its options and NVRTC."""
    if depth > 16:
        return
    for header in _INCLUDE.findall(source):
        header = header.decode(errors="replace")
        for d in [os.path.dirname(name)] + list(include_dirs):
            path = os.path.join(d, header) if d else header
            if path not in found and os.path.isfile(path):
                with open(path, "rb") as f:
                    found[path] = f.read()
                _headers(found[path], path, include_dirs, found, depth + 1)
                break


def nvrtc_key(made, arch, lto, options, include_dirs):
    headers = {}
    _headers(made.data, made.name, include_dirs, headers)
    header_hashes = sorted((p, hashlib.blake2b(c, digest_size=16).hexdigest()) for p, c in headers.items())
    return digest(
        "nvrtc",
        toolchain_id(),
        content_hash(made),
        made.name,
        arch,
        lto,
        options.debug,
        options.lineinfo,
        list(include_dirs),
        header_hashes,
    )


def precompiled_sources(link_inputs, arch, lto, options):
    """``link_inputs`` with each CUDA C++ source replaced by NVRTC's result for ``arch`` (LTO-IR with ``lto``,
    else PTX; the debug and lineinfo of the CompileOptions ``options``), from the disk cache or compiled now and
    written there."""
    include_dirs = linking.nvrtc_include_dirs()
    out = []
    for made in link_inputs:
        if made.kind != "cu":
            out.append(made)
            continue
        key = nvrtc_key(made, arch, bool(lto), options, include_dirs)
        code = get("nvrtc", key)
        if code is None:
            telemetry.count("nvrtc cache misses")
            code = linking.compile_cuda_source(made, arch, lto, options)
            code = code if isinstance(code, bytes) else code.encode()
            put("nvrtc", key, code)
        else:
            telemetry.count("nvrtc cache hits")
        out.append(_core.LinkInput("ltoir" if lto else "ptx", code, made.name))
    return out
