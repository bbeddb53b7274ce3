"""CUDA events as numba-cuda has them: ``cuda.event(timing=True)`` and ``cuda.event_elapsed_time(start, end)``;
an ``Event`` has ``record(stream=0)``, ``synchronize()``, ``wait(stream=0)``, ``query()`` and
``elapsed_time(end)``.

An event is made in the calling thread's current context and is destroyed when it is collected (nothing to
close). Its calls run with its own context current and leave the thread's context as it was, so an event of
device 0 can be recorded or timed inside ``with cuda.gpus[1]:``. Driver failures raise ``CudaDriverError``
(numba's ``CudaAPIError``) with the call and the driver's code; where cujit can tell why (an event made with
``timing=False``, one never recorded), the message says so.
"""

from cujit import _core
from cujit.cudadrv.devices import Context
from cujit.cudadrv.stream import native_stream

_drv = _core.driver


class Event:
    """A CUDA event (numba-cuda's ``Event``); ``cuda.event()`` makes one."""

    __slots__ = ("_native", "__weakref__")

    def __init__(self, native):
        self._native = native

    @property
    def handle(self):
        """The CUevent as an int."""
        return self._native.handle

    @property
    def timing(self):
        """Whether the event records times (``cuda.event(timing=...)``)."""
        return self._native.timing

    @property
    def context(self):
        return Context(self._native.context)

    def record(self, stream=0):
        """Marks the point in ``stream`` (0: the default stream) after the work queued on it so far; the event
        completes when that work is done."""
        self._native.record(native_stream(stream))

    def synchronize(self):
        """Blocks the host until the work before the most recent ``record`` is done."""
        self._native.synchronize()

    def wait(self, stream=0):
        """Makes the work queued on ``stream`` (0: the default stream) from now on wait until this event
        completes; the host does not wait."""
        self._native.wait(native_stream(stream))

    def query(self):
        """True when the work before the most recent ``record`` is done (or the event was never recorded),
        False while it runs."""
        return self._native.query()

    def elapsed_time(self, evtend):
        """Milliseconds from this event to ``evtend`` (``event_elapsed_time(self, evtend)``)."""
        return event_elapsed_time(self, evtend)

    def __eq__(self, other):
        return isinstance(other, Event) and other.handle == self.handle

    def __hash__(self):
        return hash(("cujit.Event", self.handle))

    def __repr__(self):
        return f"<CUDA event {self.handle:#x}{'' if self.timing else ' (no timing)'}>"


def event(timing=True):
    """A new event in the current context (numba's ``cuda.event``). ``timing=False`` makes a lighter event
    that cannot be timed (``CU_EVENT_DISABLE_TIMING``)."""
    return Event(_drv.create_event(bool(timing), _drv.current_context()))


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events made with ``timing=True`` (numba's
    ``cuda.event_elapsed_time``); both must have completed."""
    for name, value in (("evtstart", evtstart), ("evtend", evtend)):
        if not isinstance(value, Event):
            raise TypeError(
                f"event_elapsed_time: {name} must be an event made by cuda.event(), got {type(value).__name__}"
            )
    return _drv.Event.elapsed_ms(evtstart._native, evtend._native)
