"""``cuda.declare_device``: functions defined by linked code (CUDA C++, PTX, LTO-IR...), callable from
kernels and device functions.

A declaration names the exact link-time symbol and its signature, which must have a return type. With
``abi="numba"`` (the default) the foreign function follows numba's device ABI, ``extern "C" __device__ int
name(Ret *ret, args...)`` returning 0; with ``abi="c"`` it is a plain ``extern "C" __device__ Ret name(args...)``.
Calls convert their arguments to the declared types as numba does. ``link=`` items travel with the
declaration to every kernel that reaches it, through any depth of device functions, and are linked once.
"""

import sys
import _thread

from cujit import _core, _source
from cujit.compiler import check_abi, parse_signature
from cujit.errors import TypingError
from cujit.link_hooks import DECLARE_HOOK, call_hook, call_link_hooks, link_hooks
from cujit.linking import link_inputs, normalize_items, prefetch


def _caller_location(depth):
    frame = sys._getframe(depth + 1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class ExternFunction(_core.Callee):
    """What ``declare_device`` returns: ``.name`` (the symbol), ``.sig``, ``.link``, ``.abi``. Typing calls it
    through its Callee interface."""

    def __init__(self, name, sig, link, use_cooperative, abi, declared_at, link_hook=None):
        _core.Callee.__init__(self)
        self.name = name
        self.__qualname__ = name
        self.sig = sig
        self.link = link
        self.use_cooperative = use_cooperative
        self.abi = abi
        self.declared_at = declared_at
        self._link_hook = link_hook  # declare_device(link=callable)
        self._typed = {}  # the link inputs' identities -> the typed declaration that links them
        self._lock = _thread.allocate_lock()

    def _describe(self):
        return f'cuda.declare_device({self.name!r}, "{self.sig}") at {self.declared_at}'

    def _typed_function(self, hook_items=()):
        """The declaration as a typed function that carries its ``link=`` items and ``hook_items``."""
        inputs = link_inputs(self.link, self._describe()) + link_inputs(hook_items, self._describe())
        key = tuple(id(i) for i in inputs)
        with self._lock:
            typed = self._typed.get(key)
            if typed is None:
                typed = self._typed[key] = _core.declare_external(
                    self.name, self.sig, self.abi, inputs, self._describe(), cooperative=bool(self.use_cooperative)
                )
            return typed

    # -- called by the C++ typing of a caller ------------------------------------------------
    def _type_for_caller(self, argtypes, caller_options):
        params = self.sig.args
        if len(argtypes) != len(params):
            raise TypingError(
                f"{self.name}() takes {len(params)} argument{'' if len(params) == 1 else 's'} "
                f"({self.sig}) but {len(argtypes)} {'was' if len(argtypes) == 1 else 'were'} given"
            )
        for i, (given, declared) in enumerate(zip(argtypes, params)):
            if given != declared and _core.can_convert(given, declared) is None:
                raise TypingError(
                    f"No implementation of {self.name}({', '.join(map(str, argtypes))}): "
                    f"argument {i + 1} is {given}, which does not convert to the declared {declared} "
                    f"(declared by {self._describe()})"
                )
        hooks = link_hooks(self, self._link_hook)
        if not hooks:
            return self._typed_function()
        # Called at every compile of a call (rule 4 of docs/link_hooks.md), with the declared parameter types.
        return self._typed_function(call_link_hooks(hooks, tuple(params), self._describe()))

    def _call_parameters(self):
        return None  # positional arguments only

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
    check_abi(abi)
    if not isinstance(name, str) or not name:
        raise TypeError(f"declare_device: name must be the function's symbol (a non-empty str), got {name!r}")
    signature = parse_signature(sig)
    if signature.return_type is None:
        raise TypeError("Return type must be provided for device declarations")
    hook = link if callable(link) else None
    items = () if hook is not None else normalize_items(link)
    prefetch(items)
    return ExternFunction(name, signature, items, use_cooperative, abi, _caller_location(1), link_hook=hook)


class _DeclaringCallee(_core.Callee):
    """An object with ``__numba_cuda_declare__`` as the compiler sees it: each call is typed as a call to the
    declaration the object gives for the call's argument types."""

    def __init__(self, obj):
        _core.Callee.__init__(self)
        self.obj = obj
        self.__qualname__ = type(obj).__qualname__

    def _type_for_caller(self, argtypes, caller_options):
        who = f"{type(self.obj).__qualname__} object {self.obj!r:.60}"
        declared = call_hook(DECLARE_HOOK, getattr(self.obj, DECLARE_HOOK), argtypes, who)
        if isinstance(declared, tuple) and len(declared) == 2:
            declared = _declared(*declared)
        if not isinstance(declared, ExternFunction):
            raise TypingError(
                f"{DECLARE_HOOK} of {who} returned {type(declared).__name__}: expected a "
                "declare_device descriptor or (symbol, signature)"
            )
        return declared._type_for_caller(argtypes, caller_options)

    def _call_parameters(self):
        return None


_declared_by_pair = {}
_declared_lock = _thread.allocate_lock()


def _declared(symbol, sig):
    """The declaration of ``(symbol, signature)`` pairs ``__numba_cuda_declare__`` returns, made once each."""
    key = (symbol, str(sig))
    with _declared_lock:
        found = _declared_by_pair.get(key)
        if found is None:
            found = _declared_by_pair[key] = declare_device(symbol, sig)
        return found


_source.declaring_callee = _DeclaringCallee  # how the compiler wraps such objects (no import cycle)
