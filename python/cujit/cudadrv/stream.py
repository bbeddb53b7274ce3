"""CUDA streams as numba-cuda has them: ``stream()``, ``default_stream()``, ``legacy_default_stream()``,
``per_thread_default_stream()``, ``external_stream(ptr)``; a ``Stream`` has ``handle``, ``synchronize()``,
``query()`` and ``auto_synchronize()``.

``stream=0`` (or ``None``) in copies and launches means numba's synchronous default; a ``Stream`` object,
even the default stream's, queues work on that stream. Objects with ``__cuda_stream__`` (cuda.core, CuPy,
PyTorch streams) are accepted wherever a stream is.
"""

import contextlib

from cujit import _core
from cujit.cudadrv.devices import Context

_drv = _core.driver


class Stream:
    """A CUDA stream. Streams cujit created are destroyed when collected; wrapped ones are not."""

    __slots__ = ("_native", "__weakref__")

    def __init__(self, native):
        self._native = native

    @property
    def handle(self):
        """The CUstream as an int (0, 1 and 2 are the default, legacy default and per-thread streams)."""
        return self._native.handle

    @property
    def context(self):
        ctx = self._native.context
        return Context(ctx) if ctx is not None else None

    def synchronize(self):
        """Waits until all work queued on this stream is done."""
        self._native.synchronize()

    def query(self):
        """True when all work queued so far is done."""
        return self._native.query()

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with stream.auto_synchronize():`` synchronizes the stream when the block ends."""
        yield self
        self.synchronize()

    def __cuda_stream__(self):
        return (0, self.handle)

    def __int__(self):
        return self.handle

    def __eq__(self, other):
        return isinstance(other, Stream) and other.handle == self.handle

    def __hash__(self):
        return hash(self.handle)

    def __repr__(self):
        names = {0: "Default CUDA stream", 1: "Legacy default CUDA stream", 2: "Per-thread default CUDA stream"}
        if self.handle in names and not self._native.owned:
            return f"<{names[self.handle]}>"
        kind = "CUDA stream" if self._native.owned else "External CUDA stream"
        return f"<{kind} {self.handle:#x}>"


def _context():
    return _drv.current_context()


def stream():
    """A new stream in the current context (numba's ``cuda.stream()``)."""
    return Stream(_drv.create_stream(False, _context()))


def default_stream():
    """The default stream (handle 0): the legacy default stream unless per-thread is compiled in."""
    return Stream(_drv.wrap_stream(0, _context()))


def legacy_default_stream():
    return Stream(_drv.wrap_stream(1, _context()))


def per_thread_default_stream():
    return Stream(_drv.wrap_stream(2, _context()))


def external_stream(ptr):
    """Wraps a CUstream made elsewhere (an int); cujit never destroys it."""
    return Stream(_drv.wrap_stream(int(ptr), _context()))


def native_stream(value):
    """The C++ stream for a ``stream=`` argument, or None for numba's synchronous ``0``/``None``."""
    if value is None or (isinstance(value, int) and value == 0):
        return None
    if isinstance(value, Stream):
        return value._native
    if isinstance(value, _drv.Stream):
        return value
    if hasattr(value, "__cuda_stream__"):
        protocol = value.__cuda_stream__
        version, handle = protocol() if callable(protocol) else protocol
        return _drv.wrap_stream(int(handle))
    if isinstance(value, int):
        return _drv.wrap_stream(value)
    handle = getattr(value, "handle", None)  # numba-style stream objects
    if handle is not None:
        return _drv.wrap_stream(int(getattr(handle, "value", handle) or 0))
    raise TypeError(
        f"expected a stream (cuda.stream(), cuda.default_stream(), 0 or an object with "
        f"__cuda_stream__), got {type(value).__name__}"
    )


def stream_handle(value):
    """The CUstream int for a ``stream=`` argument (0 for numba's default)."""
    native = native_stream(value)
    return 0 if native is None else native.handle
