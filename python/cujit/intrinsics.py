"""Stubs for the CUDA intrinsics of ``cuda.*`` (``cuda.grid``, ``cuda.threadIdx``,
``cuda.shared.array``, ``cuda.atomic.add``, ``cuda.fp16.hadd``, ``cuda.libdevice.sinf``,
``cuda.cg.this_grid``...). They only name the intrinsic: the C++ intrinsic table
types and lowers it, and lists the paths these stubs are built from. Calling one
from Python raises."""

from cujit import _core


class Intrinsic:
    def __init__(self, path):
        self._cujit_intrinsic = path

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._cujit_intrinsic} can only be used inside a CUDA kernel or device function")

    def __repr__(self):
        return f"<cujit intrinsic {self._cujit_intrinsic}>"


def _build():
    """One stub per table path, nested as the dots say (cuda.atomic.add is atomic.add here)."""
    top = {}
    for path in _core.intrinsic_paths():
        parts = path.split(".")[1:]  # drop "cuda"
        node = top.get(parts[0])
        if node is None:
            node = top[parts[0]] = Intrinsic(f"cuda.{parts[0]}")
        for depth, part in enumerate(parts[1:], start=2):
            child = getattr(node, part, None)
            if child is None:
                child = Intrinsic("cuda." + ".".join(parts[:depth]))
                setattr(node, part, child)
            node = child
    return top


_stubs = _build()
globals().update(_stubs)
__all__ = sorted(_stubs)
