"""cujit's C++ core as the package sees it: one module, two extensions.

- ``cujit._runtime`` (loaded at ``import cujit``): types, compile options, the driver, the launch fast path,
  linking, the disk cache and the CPU target's runtime; no LLVM. Its names beyond the types, options and
  interfaces are registered at their first use from here (``_register_runtime``).
- ``cujit._compiler``: the frontend, typing, lowering and code generation, with LLVM linked in; loaded the first
  time one of its names is read here (the first compile), so that a process that only launches kernels from the
  disk cache or an AOT bundle never loads it.

Both link ``libcujit_runtime.so``, which holds the state they share (the interned types, the driver, the caches);
pybind11 shares their classes. ``compiler_loaded()`` says whether the compiler is in this process.
"""

import os
import sys

from cujit import _runtime


def _show(module):
    """Makes the names `module` has now this module's own."""
    globals().update((name, value) for name, value in vars(module).items() if not name.startswith("__"))


_show(_runtime)

_COMPILER = "cujit._compiler"


def compiler_loaded():
    """Whether this process has loaded the compiler (``cujit._compiler``, LLVM)."""
    return _COMPILER in sys.modules


def library_files():
    """The paths of the core's libraries (the two extensions and the runtime library they link), without loading
    the compiler: what the disk cache's toolchain identity hashes."""
    folder, name = os.path.split(_runtime.__file__)
    suffix = name[len("_runtime") :]
    return [_runtime.__file__, os.path.join(folder, "_compiler" + suffix), os.path.join(folder, "libcujit_runtime.so")]


def _runtime_names():
    """Registers the runtime's names beyond those ``import cujit`` needs (the driver, launching, memory, linking,
    the disk cache, the CPU target's runtime), once; this module then has them."""
    global _runtime_registered
    _runtime._register_runtime()  # once: it returns at once after the first call (which holds the GIL throughout)
    _show(_runtime)
    _runtime_registered = True  # last: a thread that sees it finds the names


_runtime_registered = False


def __getattr__(name):
    """A name of the runtime's not registered yet, or of the compiler's: registers or loads it (once), after which
    its names are this module's own."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _runtime_registered:
        _runtime_names()
        if name in globals():
            return globals()[name]
    from cujit import _compiler

    _show(_compiler)
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
