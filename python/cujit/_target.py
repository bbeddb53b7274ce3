"""Which target kernels compile for (issue 30): the one rule, read by the dispatcher (``cuda.jit``'s default) and by
the runtime: the process-wide target is the rule's answer when cujit's runtime (``cujit.cudadrv``) is first imported,
and when it is the CPU the runtime runs on the host driver for the whole process (installed before any driver call).

A leaf module: the standard library only, so that both may import it."""

import os

TARGETS = ("cuda", "cpu")


def default_target():
    """The target kernels compile for when jit is not told: ``CUJIT_TARGET`` ("cuda" or "cpu"), or "cpu" when
    ``NUMBA_ENABLE_CUDASIM=1`` (numba-cuda's simulator switch, read the same way for porting)."""
    chosen = os.environ.get("CUJIT_TARGET", "").strip().lower()
    if chosen:
        if chosen not in TARGETS:
            raise ValueError(f"CUJIT_TARGET={chosen!r}: the targets are {', '.join(map(repr, TARGETS))}")
        return chosen
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0"):
        return "cpu"
    return "cuda"


def resolve_target(target):
    """jit's ``target=``: None (the default target), "cuda" or "cpu"."""
    if target is None:
        return default_target()
    if not isinstance(target, str) or target.lower() not in TARGETS:
        raise ValueError(f"jit(target={target!r}): the targets are {', '.join(map(repr, TARGETS))}")
    return target.lower()


_process_target = None


def process_target():
    """The process-wide target: ``default_target()`` as it was the first time this was asked (the runtime's first
    import asks), so that the runtime's driver stays one for the whole process even if the environment changes."""
    global _process_target
    if _process_target is None:
        _process_target = default_target()
    return _process_target
