"""Compile telemetry: ``cujit.stats()`` and ``CUJIT_LOG=compile``.

The C++ core times its own stages (frontend, typing, lowering, LLVM optimisation, PTX and LTO-IR emission,
NVRTC, libNVVM, nvJitLink, module load) in ``_core.telemetry``; this module adds the stages that run in Python
(the cache's key, reads and writes) and the cache's counters, and prints one line per compile when
``CUJIT_LOG`` names ``compile`` (a comma-separated list)."""

import _thread
import os
import sys
import time

from cujit import _core

_lock = _thread.allocate_lock()  # (threading's Lock; cujit does not import threading at import)
_stages = {}  # Python-side stage -> [count, seconds]
_counters = {}  # "cache hits", "cache misses", "uncacheable", "cache writes", "compiles"


class stage:
    """``with stage(name):`` adds the block's time to the Python-side stage ``name``."""

    __slots__ = ("name", "start")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.start = time.perf_counter()

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.start
        with _lock:
            entry = _stages.setdefault(self.name, [0, 0.0])
            entry[0] += 1
            entry[1] += elapsed


def count(name, n=1):
    with _lock:
        _counters[name] = _counters.get(name, 0) + n


def stats(reset=False):
    """Per-stage ``{"count", "seconds"}`` since the process started (or the last reset), and the counters:
    ``cache hits``, ``cache misses``, ``uncacheable``, ``cache writes``, ``compiles``."""
    with _lock:
        stages = {name: {"count": c, "seconds": s} for name, (c, s) in _stages.items()}
        counters = dict(_counters)
        if reset:
            _stages.clear()
            _counters.clear()
    for name, (c, s) in _core.telemetry.stages(reset).items():
        if c:
            stages[name] = {"count": c, "seconds": s}
    for name in ("cache hits", "cache misses", "uncacheable", "cache writes", "compiles"):
        counters.setdefault(name, 0)
    return {"stages": stages, **counters}


def logging_compiles():
    return "compile" in os.environ.get("CUJIT_LOG", "").split(",")


def log(what, qualname, argtypes, outcome, seconds):
    """One line on stderr per compile, when ``CUJIT_LOG=compile``."""
    if logging_compiles():
        args = ", ".join(map(str, argtypes))
        print(f"cujit: {what} {qualname}({args}): {outcome} in {seconds * 1e3:.2f} ms", file=sys.stderr, flush=True)
