"""CUDA events without a GPU, on the fake libcuda (tests/fake_cuda), as users write them: ``cuda.event(timing=...)``,
``record(stream=0)``, ``synchronize()``, ``wait(stream=0)``, ``query()``, ``elapsed_time(end)`` and
``cuda.event_elapsed_time(a, b)``; numba-cuda's errors (CudaDriverError with the driver's code) with messages
that say what is wrong; events released when collected (the fake counts live ones); an event of one device used
inside ``with cuda.gpus[other]:`` leaves the thread on the device it chose. Each scenario runs in its own
process (the fake is chosen before cujit opens libcuda); the no-driver checks run in this one."""

import os
import textwrap

import pytest

from cujit import cuda, errors
from cujit.cudadrv import devices
from script_runs import run_script

PRELUDE = """
import ctypes, gc, os, threading
from cujit import cuda, errors

fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"])

def raises(cls, text, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except cls as e:
        assert text in str(e), (text, str(e))
        return e
    raise AssertionError(f"{call} did not raise {cls.__name__}")
"""


def run(fake_driver, body, devices=1):
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver, CUJIT_FAKE_DEVICES=str(devices))
    return run_script(PRELUDE + textwrap.dedent(body), "_events.py", env)


def test_events_as_users_write_them(fake_driver):
    run(
        fake_driver,
        """
        start, end = cuda.event(), cuda.event(timing=True)
        assert start.timing and end.timing and start.handle != end.handle and start != end
        s = cuda.stream()
        start.record()                         # the default stream
        start.record(s)                        # a stream, positionally
        end.record(stream=s)
        end.synchronize()
        assert end.query() is True
        ms = start.elapsed_time(end)
        assert isinstance(ms, float) and ms >= 0.0
        assert isinstance(cuda.event_elapsed_time(start, end), float)
        waits = fake.fake_stream_waits()
        end.wait()                             # the default stream waits
        end.wait(s)
        end.wait(stream=cuda.default_stream())
        end.wait(0)
        assert fake.fake_stream_waits() == waits + 4
        assert cuda.event(timing=False).timing is False and cuda.event(False).timing is False
        assert cuda.event().query() is True    # never recorded: nothing to wait for
        assert "CUDA event" in repr(start) and "no timing" in repr(cuda.event(False))
        assert start.context == cuda.current_context()
        print("OK")
    """,
    )


def test_query_while_the_work_runs(fake_driver):
    run(
        fake_driver,
        """
        start, end = cuda.event(), cuda.event()
        start.record(); end.record()
        fake.fake_events_pending(1)
        assert end.query() is False and cuda.event().query() is True
        e = raises(errors.CudaDriverError, "CUDA_ERROR_NOT_READY", cuda.event_elapsed_time, start, end)
        assert e.code == 600 and e.call == "cuEventElapsedTime" and "not done yet" in str(e)
        fake.fake_events_pending(0)
        assert end.query() is True and end.elapsed_time(end) == 0.0
        print("OK")
    """,
    )


def test_errors_name_the_problem(fake_driver):
    run(
        fake_driver,
        """
        timed, untimed, unrecorded = cuda.event(), cuda.event(timing=False), cuda.event()
        timed.record(); untimed.record()
        e = raises(errors.CudaDriverError, "the end event was created with timing=False",
                   timed.elapsed_time, untimed)
        assert e.code == 400 and e.code_name == "CUDA_ERROR_INVALID_HANDLE" and e.call == "cuEventElapsedTime"
        assert "[400] Call to cuEventElapsedTime results in CUDA_ERROR_INVALID_HANDLE" in str(e)
        raises(errors.CudaDriverError, "the start event was created with timing=False",
               cuda.event_elapsed_time, untimed, timed)
        raises(errors.CudaDriverError, "the end event was never recorded", timed.elapsed_time, unrecorded)
        raises(errors.CudaDriverError, "the start event was never recorded", unrecorded.elapsed_time, timed)
        raises(TypeError, "evtend must be an event made by cuda.event(), got float", timed.elapsed_time, 1.5)
        raises(TypeError, "evtstart must be an event made by cuda.event(), got NoneType",
               cuda.event_elapsed_time, None, timed)
        raises(TypeError, "expected a stream", timed.record, "stream 1")
        raises(TypeError, "expected a stream", timed.wait, 2.5)
        print("OK")
    """,
    )


def test_events_are_released_when_collected(fake_driver):
    run(
        fake_driver,
        """
        base = fake.fake_live_events()
        events = [cuda.event(timing=i % 2 == 0) for i in range(100)]
        for e in events:
            e.record()
        assert fake.fake_live_events() == base + 100 and len({e.handle for e in events}) == 100
        del events, e
        gc.collect()
        assert fake.fake_live_events() == base
        for _ in range(1000):                  # made and dropped in a loop: none piles up
            cuda.event().record()
        assert fake.fake_live_events() == base
        print("OK")
    """,
    )


def test_events_of_another_device(fake_driver):
    run(
        fake_driver,
        """
        e0 = cuda.event()                      # device 0's context
        with cuda.gpus[1]:
            e1 = cuda.event()
            assert e1.context.device.id == 1 and e0.context.device.id == 0
            e0.record()                        # recorded in its own context (the fake checks)
            e0.synchronize(); assert e0.query()
            e1.record()
            assert cuda.get_current_device().id == 1 and fake.fake_current_device() == 1
        e0.record(); e0.elapsed_time(e0)
        assert cuda.get_current_device().id == 0
        def in_thread():                       # another thread, another device, the same event
            cuda.select_device(1)
            e0.record(); e0.synchronize()
            assert fake.fake_current_device() == 1
        t = threading.Thread(target=in_thread)
        t.start(); t.join()
        print("OK")
    """,
        devices=2,
    )


def test_profiling(fake_driver):
    run(
        fake_driver,
        """
        assert fake.fake_profiling() == 0
        cuda.profile_start()
        assert fake.fake_profiling() == 1
        cuda.profile_stop()
        assert fake.fake_profiling() == 0
        with cuda.profiling():
            assert fake.fake_profiling() == 1
        assert fake.fake_profiling() == 0
        try:
            with cuda.profiling():
                raise ValueError("in the block")
        except ValueError:
            pass
        assert fake.fake_profiling() == 0      # stopped on the error too
        t = threading.Thread(target=cuda.profile_start)  # a thread with no context gets one first
        t.start(); t.join()
        assert fake.fake_profiling() == 1
        print("OK")
    """,
    )


no_driver = pytest.mark.skipif(devices.is_available(), reason="a CUDA driver is available here")


@no_driver
@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.event(),
        lambda: cuda.profile_start(),
        lambda: cuda.profile_stop(),
        lambda: cuda.profiling().__enter__(),
        lambda: cuda.is_supported_version(),
        lambda: cuda.runtime.get_version(),
        lambda: cuda.require_context(lambda: None)(),
    ],
)
def test_without_a_driver_these_raise_cuda_support_error(call):
    with pytest.raises(errors.CudaSupportError, match="CUDA is not available"):
        call()
