"""Linking with nvJitLink (``cujit._core.link``): ``link(inputs, arch)`` turns a kernel's PTX or LTO-IR and its
link inputs into a cubin for one exact architecture; ``-lto`` is passed only when an LTO-IR input is present.

nvJitLink is looked for in ``$CUDA_HOME/lib64``, ``/usr/local/cuda/lib64``, then the lib folders of NVIDIA's pip
wheels on ``sys.path`` (``nvidia/cu13/lib``, ``nvidia/nvjitlink/lib``...), then the loader's default path. When
it is missing, ``LinkerError`` names every place it looked. Link failures raise ``LinkerError`` whose message is
numba-cuda's: ``ERROR_X (n)\\nnvJitLink error log: ...``.
"""

import os
import sys

from cujit import _core

_link = _core.link

# Kinds nvJitLink accepts, and the file extensions numba-cuda maps to them (.cu goes through NVRTC first).
INPUT_KINDS = ("ptx", "cubin", "fatbin", "object", "library", "ltoir")
EXTENSION_KINDS = {".ptx": "ptx", ".cubin": "cubin", ".fatbin": "fatbin", ".o": "object", ".a": "library",
                   ".ltoir": "ltoir", ".lib": "library", ".obj": "object"}

_WHEEL_LIB_DIRS = ("nvidia/cu13/lib", "nvidia/cu12/lib", "nvidia/nvjitlink/lib", "nvidia/cuda_nvcc/lib")


def wheel_library_dirs():
    """The lib folders of NVIDIA's pip wheels under ``sys.path`` that exist, in ``sys.path`` order."""
    found = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        for sub in _WHEEL_LIB_DIRS:
            path = os.path.join(entry, sub)
            if os.path.isdir(path) and path not in found:
                found.append(path)
    return found


_paths_set = False


def _ensure_search_paths():
    global _paths_set
    if not _paths_set:
        _link.set_search_paths(wheel_library_dirs())
        _paths_set = True


def preload():
    """Starts loading nvJitLink in the background (the first link then finds it loaded)."""
    _ensure_search_paths()
    _link.preload()


def nvjitlink_status():
    """{"available", "path", "reason", "version"}; loads nvJitLink the first time."""
    _ensure_search_paths()
    return _link.status()


def nvjitlink_available():
    return bool(nvjitlink_status()["available"])


def arch_for(cc, suffix=None):
    """``sm_XY[suffix]`` for a compute capability; numba-cuda links for ``sm_90a`` and up on cc >= 9.0
    (spec §2.7), so ``suffix`` defaults to "a" there."""
    major, minor = cc[0], cc[1]
    if suffix is None:
        suffix = cc[2] if len(cc) > 2 else ("a" if major >= 9 else "")
    return f"sm_{major}{minor}{suffix}"


def input_kind_for_path(path):
    """The link input kind of a file, by extension, with numba-cuda's errors."""
    from cujit.errors import LinkerError
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("Expected path to file or a LinkableCode object")
    path = os.fspath(path)
    ext = os.path.splitext(path)[1]
    if not ext:
        raise RuntimeError("Don't know how to link file with no extension")
    kind = EXTENSION_KINDS.get(ext)
    if kind is None:
        raise RuntimeError(f"Don't know how to link file with extension {ext}")
    if not os.path.exists(path):
        raise LinkerError(f"{path} not found")
    return kind


def read_input(path):
    """(kind, bytes, file name) for a file to link."""
    kind = input_kind_for_path(path)
    with open(path, "rb") as f:
        return kind, f.read(), os.path.basename(os.fspath(path))


def link(inputs, arch, max_registers=None, lineinfo=False, debug=False, ptx=False, extra=()):
    """Links ``inputs`` — ``(kind, data, name)`` tuples with kind in ``INPUT_KINDS`` and data bytes (or str for
    PTX) — for ``arch`` ("sm_90a", or a cc tuple). Returns ``(image, info_log)``: a cubin, or PTX text
    (bytes) with ``ptx=True`` (an LTO link only). Runs without the GIL."""
    if not isinstance(arch, str):
        arch = arch_for(arch)
    _ensure_search_paths()
    return _link.link(list(inputs), arch, int(max_registers or 0), bool(lineinfo), bool(debug), bool(ptx),
                      list(extra))


def link_options(kinds, arch, max_registers=None, lineinfo=False, debug=False, ptx=False, extra=()):
    """The option list ``link`` would pass to nvJitLink for inputs of these kinds."""
    if not isinstance(arch, str):
        arch = arch_for(arch)
    return _link.link_options(list(kinds), arch, int(max_registers or 0), bool(lineinfo), bool(debug), bool(ptx),
                              list(extra))
