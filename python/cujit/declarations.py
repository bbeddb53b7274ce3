"""``cuda.declare_device``: functions defined by linked code (CUDA C++, PTX, LTO-IR...), callable from
kernels and device functions.

A declaration names the exact link-time symbol and its signature, which must have a return type. With
``abi="numba"`` (the default) the foreign function follows numba's device ABI, ``extern "C" __device__ int
name(Ret *ret, args...)`` returning 0; with ``abi="c"`` it is a plain ``extern "C" __device__ Ret name(args...)``.
Calls convert their arguments to the declared types as numba does. ``link=`` items travel with the
declaration to every kernel that reaches it, through any depth of device functions, and are linked once.
"""

import sys
import threading

from cujit import _core
from cujit.compiler import parse_signature
from cujit.errors import TypingError
from cujit.linking import link_inputs, normalize_items, prefetch


def _caller_location(depth):
    frame = sys._getframe(depth + 1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class ExternFunction:
    """What ``declare_device`` returns: ``.name`` (the symbol), ``.sig``, ``.link``, ``.abi``."""

    _cujit_callee = True  # the compiler calls _type_for_caller (marker: no import cycle)

    def __init__(self, name, sig, link, use_cooperative, abi, declared_at):
        self.name = name
        self.__qualname__ = name
        self.sig = sig
        self.link = link
        self.use_cooperative = use_cooperative
        self.abi = abi
        self.declared_at = declared_at
        self._typed = None
        self._lock = threading.Lock()

    def _describe(self):
        return f"cuda.declare_device({self.name!r}, \"{self.sig}\") at {self.declared_at}"

    def _typed_function(self):
        with self._lock:
            if self._typed is None:
                self._typed = _core.declare_external(self.name, self.sig, self.abi, link_inputs(self.link),
                                                     self._describe(), cooperative=bool(self.use_cooperative))
            return self._typed

    # -- called by the C++ typing of a caller ------------------------------------------------
    def _type_for_caller(self, argtypes, caller_options):
        params = self.sig.args
        if len(argtypes) != len(params):
            raise TypingError(f"{self.name}() takes {len(params)} argument{'' if len(params) == 1 else 's'} "
                              f"({self.sig}) but {len(argtypes)} {'was' if len(argtypes) == 1 else 'were'} given")
        for i, (given, declared) in enumerate(zip(argtypes, params)):
            if given != declared and _core.can_convert(given, declared) is None:
                raise TypingError(f"No implementation of {self.name}({', '.join(map(str, argtypes))}): "
                                  f"argument {i + 1} is {given}, which does not convert to the declared {declared} "
                                  f"(declared by {self._describe()})")
        return self._typed_function()

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name!r} is a declared device function: call it from kernels and device functions")

    def __repr__(self):
        return f"<declared device function {self.name} {self.sig} (abi={self.abi})>"


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Declares the device function ``name`` (the exact symbol) with signature ``sig``, defined by linked code.

    ``sig``: a signature string (``"float32(float32, CPointer(float32))"``) or object, with a return type.
    ``link``: items linked into every kernel that calls it (paths or LinkableCode objects).
    ``abi``: ``"numba"`` (status-returning, result through a pointer) or ``"c"``.
    ``use_cooperative``: the code needs a cooperative launch (grid-wide sync): kernels that reach it launch
    with ``cuLaunchCooperativeKernel`` and link the device runtime (``libcudadevrt.a``).
    """
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"declare_device: name must be the function's symbol (a non-empty str), got {name!r}")
    signature = parse_signature(sig)
    if signature.return_type is None:
        raise TypeError("Return type must be provided for device declarations")
    items = normalize_items(link)
    prefetch(items)
    return ExternFunction(name, signature, items, use_cooperative, abi, _caller_location(1))
