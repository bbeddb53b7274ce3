"""Stubs for the CUDA intrinsics of ``cuda.*`` (``cuda.grid``, ``cuda.threadIdx``,
``cuda.shared.array``, ``cuda.atomic.add``, ``cuda.fp16.hadd``, ``cuda.libdevice.sinf``,
``cuda.cg.this_grid``...). They only name the intrinsic: the C++ intrinsic table
types and lowers it, and lists the paths these stubs are built from. Calling one
from Python raises."""

from cujit import _core


class Intrinsic:
    def __init__(self, path, children=None):
        self._cujit_intrinsic = path
        self._children = children or {}

    def __getattr__(self, name):
        # Children are made on first use: the table has hundreds of paths (cuda.libdevice.*).
        children = self.__dict__.get("_children", {})
        if name not in children:
            raise AttributeError(f"{self._cujit_intrinsic} has no attribute {name!r}")
        child = Intrinsic(f"{self._cujit_intrinsic}.{name}", children[name])
        setattr(self, name, child)
        return child

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._cujit_intrinsic} can only be used inside a CUDA kernel or device function")

    def __repr__(self):
        return f"<cujit intrinsic {self._cujit_intrinsic}>"


def _build():
    """One stub per top-level name of the table's paths, nested as the dots say (cuda.atomic.add is
    atomic.add here)."""
    tree = {}
    for path in _core.intrinsic_paths():
        if not path.startswith("cuda."):  # cmath.* entries are reached through the cmath module
            continue
        node = tree
        for part in path.split(".")[1:]:  # drop "cuda"
            node = node.setdefault(part, {})
    return {name: Intrinsic(f"cuda.{name}", children) for name, children in tree.items()}


_stubs = _build()
globals().update(_stubs)
__all__ = sorted(_stubs)
