"""nvJitLink (``cujit._core.link``) at the level of inputs: ``link(inputs, arch)`` turns ``(kind, data, name)``
tuples (PTX, cubin, fatbin, object, library, LTO-IR) into a cubin for one exact architecture; ``-lto`` is
passed only when an LTO-IR input is present. A kernel's whole link (its code, CUDA C++ through NVRTC and
every input its calls collected) is the core's (``GpuKernelCode.link``).

nvJitLink is found by the toolkit locator (``cujit.toolkit``): ``$CUDA_HOME``, NVIDIA's pip wheels,
``/usr/local/cuda``, the loader's path, or the file ``CUJIT_NVJITLINK`` names. When it is missing,
``LinkerError`` names every place it looked. Link failures raise ``LinkerError`` whose message is
numba-cuda's: ``ERROR_X (n)\\nnvJitLink error log: ...``.
"""

import os

from cujit import _core
from cujit.linking import LinkFileNotFoundError, arch_for, check_item  # noqa: F401  (arch_for re-exported)

_link = _core.link

#: Kinds nvJitLink accepts.
INPUT_KINDS = ("ptx", "cubin", "fatbin", "object", "library", "ltoir")


def preload():
    """Starts loading nvJitLink in the background (the first link then finds it loaded)."""
    _link.preload()


def nvjitlink_status():
    """A ``LinkerStatus`` (``available``, ``path``, ``reason``, ``version``); loads nvJitLink the first time."""
    return _link.status()


def nvjitlink_available():
    return bool(nvjitlink_status().available)


def input_kind_for_path(path):
    """The link input kind of a file, by extension (".cu" files go through NVRTC: not an nvJitLink kind)."""
    kind = check_item(path)
    if not os.path.exists(os.fspath(path)):
        raise LinkFileNotFoundError(f"{os.fspath(path)} not found")
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
    return _link.link(list(inputs), arch, int(max_registers or 0), bool(lineinfo), bool(debug), bool(ptx), list(extra))


def link_options(kinds, arch, max_registers=None, lineinfo=False, debug=False, ptx=False, extra=()):
    """The option list ``link`` would pass to nvJitLink for inputs of these kinds."""
    if not isinstance(arch, str):
        arch = arch_for(arch)
    return _link.link_options(
        list(kinds), arch, int(max_registers or 0), bool(lineinfo), bool(debug), bool(ptx), list(extra)
    )
