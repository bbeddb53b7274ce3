"""Link items (``link=`` of ``cuda.jit`` and ``cuda.declare_device``) as link inputs of the core.

An item is a path (its extension picks the kind; ``.cu`` goes through NVRTC) or a ``LinkableCode``. Each
becomes one ``_core.LinkInput``, made once per file version or object (and again only when a ``StringIO``'s
text changed), so an item reached through several declarations and device functions is linked once. Typed
functions carry their inputs to every kernel that calls them; the core links a kernel with all of them for one
architecture (``GpuKernelCode.link``, cujit/kernel_target.h): NVRTC (cached per source and options), then
nvJitLink; ``warn_nvrtc_logs`` gives NVRTC's logs as warnings.

``lto=None`` (the default, as numba-cuda's) links with link-time optimisation when a kernel links CUDA C++ or
LTO-IR and nvJitLink and libNVVM are there, unless it is compiled for debugging: NVRTC's LTO-IR comes faster
than its PTX, and the program is assembled once instead of once per input. ``prefetch`` starts NVRTC on a
declaration's or kernel's CUDA C++ as soon as it is made, on a native thread, so that the first launch
finds it compiled, or compiling (it then waits for that compile instead of starting another).
"""

import os
import _thread

from cujit import _core, config, toolkit
from cujit.errors import LinkerError
from cujit.linkable_code import EXTENSION_KINDS, LinkableCode


class LinkFileNotFoundError(FileNotFoundError, LinkerError):
    """A file named in ``link=`` does not exist (a ``FileNotFoundError`` and numba-cuda's ``LinkerError``)."""


class LinkItemError(ValueError, RuntimeError):
    """A path in ``link=`` has no extension, or one cujit cannot link (a ``ValueError``; also the
    ``RuntimeError`` numba-cuda raised)."""


_lock = _thread.allocate_lock()
_by_path = {}
_by_object = []  # [a WeakKeyDictionary], made with the first LinkableCode (weakref is not loaded at import)


def normalize_items(link, what="link"):
    """``link=`` as a tuple of items: one item or a list/tuple/set of them; each item checked (a path's
    extension, or a LinkableCode)."""
    if link is None:
        return ()
    items = tuple(link) if isinstance(link, (list, tuple, set, frozenset)) else (link,)
    for item in items:
        check_item(item)
    return items


def check_item(item):
    if isinstance(item, LinkableCode):
        if item.kind is None:
            raise TypeError(
                f"{item!r} is a LinkableCode without a kind: use PTXSource, CUSource, Cubin, Fatbin, "
                "Object, Archive or LTOIR"
            )
        return item.kind
    if not isinstance(item, (str, os.PathLike)):
        raise TypeError(f"Expected path to file or a LinkableCode object, got {type(item).__name__}")
    path = os.fspath(item)
    ext = os.path.splitext(path)[1]
    if not ext:
        raise LinkItemError(
            f"Don't know how to link file with no extension: {path!r} (link accepts "
            f"{', '.join(sorted(EXTENSION_KINDS))} files)"
        )
    kind = EXTENSION_KINDS.get(ext)
    if kind is None:
        raise LinkItemError(
            f"Don't know how to link file with extension {ext} ({path!r}; link accepts "
            f"{', '.join(sorted(EXTENSION_KINDS))} files)"
        )
    return kind


def _callbacks(obj):
    setup, teardown = getattr(obj, "setup_callback", None), getattr(obj, "teardown_callback", None)
    return (setup, teardown) if setup or teardown else None


def link_input(item, requester=None):
    """The ``_core.LinkInput`` of one item (made once per file version or object); ``requester``: what asked
    for it (a declaration, a ``@cuda.jit`` function), named when the file is missing."""
    kind = check_item(item)
    if isinstance(item, LinkableCode):
        data = item.data
        with _lock:
            if not _by_object:
                import weakref

                _by_object.append(weakref.WeakKeyDictionary())
            cached = _by_object[0].get(item)
            if cached is not None and cached[0] == data:
                return cached[1]
        made = _core.LinkInput(kind, data, item.name, _callbacks(item))
        with _lock:
            _by_object[0][item] = (data, made)
        return made
    path = os.path.abspath(os.fspath(item))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        asked = f" (a link item of {requester})" if requester else ""
        raise LinkFileNotFoundError(f"{os.fspath(item)} not found{asked}") from None
    key = (path, st.st_mtime_ns, st.st_size)
    with _lock:
        made = _by_path.get(key)
    if made is None:
        with open(path, "rb") as f:
            data = f.read()
        made = _core.LinkInput(kind, data, os.path.basename(path))
        with _lock:
            made = _by_path.setdefault(key, made)
    return made


def link_inputs(items, requester=None):
    return [link_input(item, requester) for item in items]


def nvrtc_include_dirs():
    """CUDA's headers, then ``config.CUDA_NVRTC_EXTRA_SEARCH_PATHS`` (read now: it may change at run time)."""
    extra = [d for d in (config.CUDA_NVRTC_EXTRA_SEARCH_PATHS or "").split(":") if d]
    return toolkit.include_dirs() + extra


def arch_for(cc):
    """``sm_XY[suffix]`` that a kernel for ``cc`` links for: numba-cuda's ``sm_90a`` and up on cc >= 9.0."""
    if len(cc) > 2:  # a suffix asked for
        return f"sm_{cc[0]}{cc[1]}{cc[2]}"
    return _core.device_arch(cc[0], cc[1])  # the core's rule, which its image cache follows


def lto_available():
    """nvJitLink and libNVVM are found (the core's rule, which the prefetch's thread applies too)."""
    return _core.link.lto_available()


def resolve_lto(lto, debug, kinds):
    """Whether a kernel links with LTO: ``lto`` when given; for ``None``, when one of its link inputs'
    ``kinds`` is CUDA C++ or LTO-IR, it is not compiled for debugging, and the tools are there."""
    return _core.link.resolve_lto(None if lto is None else bool(lto), bool(debug), list(kinds))


def prefetch(items, lto=None, options=None):
    """Starts NVRTC on the CUDA C++ among ``items`` (a declaration's or kernel's ``link=``) on a native thread,
    with the options a kernel linking them will use (``options``, its CompileOptions: debug and lineinfo; None
    for the defaults), when a context is current (its device gives the architecture). The sources are read
    here; the compile needs no Python thread and no GIL, so it starts at once. Nothing happens without a
    context or CUDA C++; errors are left to the link, which meets them again."""
    sources = [item for item in items if check_item(item) == "cu"]
    if not sources or config.cache_wanted(False):
        return  # (with every kernel cached, NVRTC results come from the disk cache)
    context = _core.driver.current_context_or_none()
    if context is None:
        return
    arch = arch_for(_core.driver.device_info(context.device_id).compute_capability)  # read once, cached
    try:
        made = [link_input(item) for item in sources]
    except (OSError, ValueError):  # a missing or unreadable file: the link reports it
        return
    # lto=None is resolved as resolve_lto does, on the prefetch's thread: finding out whether nvJitLink and
    # libNVVM are there may load them, which need not hold up the caller
    debug, lineinfo = (options.debug, options.lineinfo) if options is not None else (False, False)
    _core.nvrtc.prefetch(
        made,
        arch,
        lto=None if lto is None else bool(lto),
        debug=debug,
        lineinfo=lineinfo,
        include_dirs=nvrtc_include_dirs(),
    )


def warn_nvrtc_logs(logs):
    for name, log in logs:
        import warnings  # (only with a log to show: not at import)

        warnings.warn(f"NVRTC log messages: {log}", UserWarning, stacklevel=4)


def compile_cuda_source(made, arch, lto, options):
    """A CUDA C++ link input (``made.kind == "cu"``) compiled by NVRTC for ``arch``, with the debug and lineinfo
    of the CompileOptions ``options``: PTX (str) or, with ``lto``, LTO-IR (bytes); NVRTC's log, when it
    compiled now, as the usual warning."""
    code, log, cached = _core.nvrtc.compile(
        made.data,
        made.name,
        arch,
        lto=lto,
        debug=options.debug,
        lineinfo=options.lineinfo,
        include_dirs=nvrtc_include_dirs(),
    )
    if log and not cached:
        warn_nvrtc_logs([(made.name, log)])
    return code
