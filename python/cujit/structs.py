"""Struct classes callable in CUDA code (issue 43): a class registered with a numpy structured dtype, or one whose
``__numba_cuda_struct__()`` gives it (in the spirit of ``__numba_cuda_link__``), is that record type in CUDA code,
so ``Pixel(r, g, b)`` (or ``Pixel(r=..., g=..., b=...)``) in a kernel builds a record value, its fields converted
to their types::

    class Pixel:
        def __init__(self, r, g, b):
            self.r, self.g, self.b = r, g, b

    cujit.register_struct(Pixel, np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)]))

    @cuda.jit
    def fill(out, value):
        out[cuda.grid(1)] = Pixel(value, value // 2, 0)
"""

import _thread

_registered = {}
_lock = _thread.allocate_lock()


def register_struct(cls, dtype):
    """Makes `cls` the record type of numpy structured dtype `dtype` in CUDA code (calling it builds a record)."""
    import numpy as np

    from cujit._typeof import from_dtype

    dtype = np.dtype(dtype)
    if dtype.fields is None:
        raise TypeError(f"register_struct: {dtype} is not a structured dtype (a record's fields)")
    if not isinstance(cls, type):
        raise TypeError(f"register_struct: {cls!r} is not a class")
    record = from_dtype(dtype)
    with _lock:
        _registered[cls] = record
    return cls


def record_of(cls):
    """The record type `cls` stands for in CUDA code, or None."""
    record = _registered.get(cls)
    if record is not None:
        return record
    protocol = getattr(cls, "__numba_cuda_struct__", None)
    if protocol is None:
        return None
    from cujit._typeof import from_dtype

    return from_dtype(protocol())
