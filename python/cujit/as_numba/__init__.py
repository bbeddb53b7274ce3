"""``import cujit.as_numba``: cujit stands in for ``numba.cuda`` in this process, for libraries written for
numba-cuda that are not changed (issue 41; docs/as_numba.md).

Imported before such a library, it makes ``numba.cuda`` and its public submodules cujit's (``numba.cuda`` is
``cujit.cuda``; ``numba.cuda.random``, ``libdevice``, ``bf16``, ``fp8``, ``cudadrv``, ``cudadrv.devicearray``,
``cudadrv.driver`` the matching modules of cujit). numba's CPU side stays as it is when numba is installed; when it
is not, a ``numba`` module is made with the names a CUDA library reaches: ``cuda``, ``types``, numba's scalar types
(``numba.float32``...), ``from_dtype``, ``typeof``, and ``numba.core.types`` / ``numba.core.errors`` (cujit's).
Anything else of numba (``njit``, ``vectorize`` for the CPU, the extension API) is then an ImportError or
AttributeError naming it. This module alone knows numba's module names.

``python -m cujit.as_numba program.py args...`` runs a program so.
"""

import importlib
import sys
import types as _pytypes

import cujit
from cujit import cuda, errors, types

# numba's module names -> cujit's modules (imported when installed)
_MODULES = {
    "numba.cuda": "cujit.cuda",
    "numba.cuda.random": "cujit.cuda.random",
    "numba.cuda.libdevice": "cujit.cuda.libdevice",
    "numba.cuda.bf16": "cujit.cuda.bf16",
    "numba.cuda.fp8": "cujit.cuda.fp8",
    "numba.cuda.cudadrv": "cujit.cudadrv",
    "numba.cuda.cudadrv.devicearray": "cujit.cudadrv.devicearray",
    "numba.cuda.cudadrv.driver": "cujit.cudadrv.driver",
    "numba.cuda.types": "cujit.types",
    "numba.cuda.errors": "cujit.errors",
    "numba.cuda.extending": "cujit.extending",
}

#: Whether numba's own (CPU) package was found; False: ``numba`` is cujit's stand-in module.
numba_installed = None


def _standin_numba():
    """A ``numba`` module with the names CUDA libraries reach, when numba is not installed."""
    numba = _pytypes.ModuleType("numba", "cujit's stand-in for numba (numba is not installed): cujit.as_numba")
    numba.__path__ = []  # a package: its submodules are the entries below
    numba.cuda = cuda
    numba.types = types
    numba.from_dtype = cujit.from_dtype
    numba.typeof = cujit.typeof
    for name in types.__all__:
        setattr(numba, name, getattr(types, name))
    core = _pytypes.ModuleType("numba.core")
    core.__path__ = []
    core.types = types
    core.errors = errors
    numba.core = core
    numba.__version__ = "0.0+cujit"
    sys.modules.update({"numba": numba, "numba.core": core, "numba.core.types": types, "numba.core.errors": errors})
    return numba


def install():
    """Makes ``numba.cuda`` cujit's in this process (idempotent); returns the ``numba`` module."""
    global numba_installed
    existing = sys.modules.get("numba.cuda")
    if existing is not None and existing is not cuda:
        raise RuntimeError(
            "numba.cuda was imported before cujit.as_numba: import cujit.as_numba first (or run the program with "
            "python -m cujit.as_numba)"
        )
    try:
        numba = importlib.import_module("numba")
        numba_installed = True
    except ImportError:
        numba, numba_installed = _standin_numba(), False
    for name, target in _MODULES.items():
        module = importlib.import_module(target)
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)
    numba.cuda = cuda
    return numba


install()
