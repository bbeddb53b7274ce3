"""Loading linked code: ``load_module(key, image)`` loads a cubin once per (key, context) through the C++
ModuleLoader, the one owner of loaded modules (``cuLibraryLoadData``, or ``cuModuleLoadData`` on older
drivers). ``module.get_function(name)`` gives a kernel for ``launch``; ``module.get_global(name)`` a
``(pointer, size)``; ``module.handle`` is the CUlibrary as an int, what numba-cuda's setup callbacks use with
``cuLibraryGetGlobal``.

Hooks: ``setup(module)`` runs once right after the load, before anyone else can use the module (concurrent
loaders of the same key wait); if it raises, the module is unloaded and the error propagates, so the next load
starts afresh. ``teardown(module)`` runs before the unload: on ``unload_module``, a context reset, or
interpreter exit (an ``atexit`` handler unloads every module while Python still runs).
"""

import atexit
import traceback
import warnings

from cujit import _core

_drv = _core.driver

LoadedModule = _drv.LoadedModule
Function = _drv.Function


def _ctx(context):
    if context is None:
        return _drv.current_context()
    return getattr(context, "_native", context)


def load_module(key, image, context=None, setup=None, teardown=None):
    """The module for ``key`` in ``context`` (default: the current one), loading ``image`` the first time."""
    return _drv.load_module(str(key), image, _ctx(context), setup, teardown)


def find_module(key, context=None):
    """The loaded module for ``key`` in ``context``, or None."""
    return _drv.find_module(str(key), _ctx(context))


def unload_module(key, context=None):
    """Runs the teardown hook and unloads; False when nothing was loaded for ``key`` there."""
    return _drv.unload_module(str(key), _ctx(context))


def unload_key(key):
    """Unloads ``key``'s modules in every context (e.g. when a kernel is collected); returns how many."""
    return _drv.unload_key(str(key))


def hooks_for(link_inputs):
    """(setup, teardown) for a module that links ``link_inputs``: each input's ``setup_callback`` in the order
    they were collected (the same callbacks reached twice run once), and their teardown callbacks with the same
    module object setup saw. A teardown that raises is reported as a warning with its traceback, and the
    others still run. (None, None) when no input has a callback."""
    callbacks = []
    for made in link_inputs:
        origin = made.origin  # (setup, teardown)
        if origin is not None and origin not in callbacks:  # the same callbacks twice run once
            callbacks.append(origin)
    if not callbacks:
        return None, None
    # The module object setup saw, for teardown. Dropped by teardown (or a failed setup): the module keeps
    # these hooks, so holding it longer would be a cycle through C++ that no collector sees.
    seen_by_setup = []

    def setup(module):
        seen_by_setup.append(module)
        try:
            for run, _ in callbacks:
                if run is not None:
                    run(module)
        except BaseException:
            seen_by_setup.clear()
            raise

    def teardown(module):
        module = seen_by_setup.pop() if seen_by_setup else module
        for _, run in callbacks:
            if run is None:
                continue
            try:
                run(module)
            except Exception:  # noqa: BLE001  (reported, never swallowed; the unload goes on)
                warnings.warn(
                    f"teardown_callback {run!r} of module {module.key!r} raised:\n{traceback.format_exc()}",
                    RuntimeWarning,
                    stacklevel=2,
                )

    return setup, teardown


def loaded_module_count():
    return _drv.loaded_module_count()


@atexit.register
def _unload_at_exit():
    # Teardown hooks are Python: run them while the interpreter is still whole.
    if _drv.loaded_module_count():  # checked first: never opens libcuda at exit
        try:
            _drv.unload_all_modules()
        except Exception:  # an exit handler has no one to report to
            pass
