"""The ahead-of-time bundles a process has loaded (``cujit.aot``, ``docs/caching.md``), and whether a kernel compile
looks in them.

Every kernel compile asks ``in_use()``, and the answer needs no file read, so it lives here, apart from the disk
cache's machinery (``cujit.caching``: a bundle's index read with json, kernels keyed with hashlib), which is
imported only once a bundle is in use.
"""

import os
import _thread

_bundles = []  # (directory, {key: entry}), in the order loaded
_lock = _thread.allocate_lock()


def add(directory, entries):
    with _lock:
        _bundles.append((directory, entries))


def loaded():
    """The bundles loaded so far: (directory, {key: entry}) each."""
    with _lock:
        return list(_bundles)


def in_use():
    """True once a bundle is loaded, or while ``CUJIT_AOT`` names one (loaded by the next kernel compile)."""
    return bool(_bundles) or any(os.environ.get("CUJIT_AOT", "").split(os.pathsep))
