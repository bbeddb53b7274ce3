"""numba-cuda's vector types: ``cuda.float32x4``, ``cuda.int8x2``... (ten base types, one to four elements)
and the CUDA C names numba-cuda aliases to them (``cuda.float4 is cuda.float32x4``, ``cuda.uchar2``,
``cuda.long3``...).

Each is a stub, as every ``cuda.*`` intrinsic is: in a kernel or device function ``float32x4(a, b, c, d)``
builds a value whose components read as ``.x .y .z .w``; the C++ intrinsic table types and lowers it. Which C
name aliases which type (``long`` is 64 bits on the hosts cujit runs on) is the signature parser's knowledge,
asked here so that the two never disagree.
"""

from cujit import _core
from cujit.intrinsics import Intrinsic

_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
# The C type names numba-cuda makes aliases of, in its order.
_C_NAMES = (
    "char",
    "short",
    "int",
    "long",
    "longlong",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "float",
    "double",
)


class VectorType(Intrinsic):
    """The stub of one vector type (numba-cuda's ``numba.cuda.float32x4``): call it in CUDA code."""

    def __init__(self, name):
        super().__init__(f"cuda.{name}")
        self.__name__ = name
        self.num_elements = int(name[-1])
        self.base_type = _core.types.lookup(name[:-2])
        self.aliases = []

    def __repr__(self):
        return f"<cujit vector type {self.__name__}>"


def _build():
    stubs = {f"{base}x{n}": VectorType(f"{base}x{n}") for base in _BASES for n in (1, 2, 3, 4)}
    names = dict(stubs)
    for n in (1, 2, 3, 4):
        for c_name in _C_NAMES:
            alias = f"{c_name}{n}"
            stub = stubs[str(_core.parse_type(alias))]
            stub.aliases.append(alias)
            names[alias] = stub
    return stubs, names


#: {name: stub} of the 40 vector types (aliases not included).
vector_types, _names = _build()
globals().update(_names)
__all__ = sorted(_names)
