"""Which target kernels compile for (issue 30): the one rule, read by the dispatcher (``cuda.jit``'s default) and by
the runtime: the process-wide target is the rule's answer when cujit's runtime (``cujit.cudadrv``) is first imported,
and when it is the CPU the runtime runs on the host driver for the whole process (installed before any driver call).

A leaf module: the standard library only, so that both may import it."""

import os


class Target:
    """A target kernels compile for, as a value (the C++ compile driver's target of the same ``name``,
    cujit/kernel_target.h): ``on_gpu`` tells whether its kernels run on a CUDA device (the runtime's driver,
    streams and device memory are the GPU's) or on cujit's host runtime."""

    __slots__ = ("name", "on_gpu", "_hooks_at")

    def __init__(self, name, on_gpu, hooks_at):
        self.name, self.on_gpu = name, on_gpu
        self._hooks_at = hooks_at  # "module:attribute" of its dispatcher hooks, imported on first need

    def hooks(self):
        """What a dispatcher does differently on this target (``dispatcher.GpuHooks``, ``host_target.HostHooks``):
        the faces of its specialisations, the compute capability it compiles for, compiling one, configuring a
        launch, its assembly."""
        import importlib

        module, _, attribute = self._hooks_at.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def __repr__(self):
        return f"<cujit target {self.name!r}>"

    def __eq__(self, other):  # equal to its name too, as the string users pass to jit(target=...)
        if isinstance(other, Target):
            return self is other
        return isinstance(other, str) and other.lower() == self.name

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return (by_name, (self.name,))


CUDA = Target("cuda", on_gpu=True, hooks_at="cujit.dispatcher:GpuHooks")
CPU = Target("cpu", on_gpu=False, hooks_at="cujit.host_target:HostHooks")
_BY_NAME = {t.name: t for t in (CUDA, CPU)}
TARGETS = tuple(_BY_NAME)


def by_name(name):
    return _BY_NAME[name]


def default_target():
    """The target kernels compile for when jit is not told: ``CUJIT_TARGET`` ("cuda" or "cpu"), or "cpu" when
    ``NUMBA_ENABLE_CUDASIM=1`` (numba-cuda's simulator switch, read the same way for porting)."""
    chosen = os.environ.get("CUJIT_TARGET", "").strip().lower()
    if chosen:
        if chosen not in TARGETS:
            raise ValueError(f"CUJIT_TARGET={chosen!r}: the targets are {', '.join(map(repr, TARGETS))}")
        return _BY_NAME[chosen]
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0"):
        return CPU
    return CUDA


def resolve_target(target):
    """jit's ``target=`` as a Target: None (the default target), "cuda" or "cpu" (or a Target)."""
    if target is None:
        return default_target()
    if isinstance(target, Target):
        return target
    if not isinstance(target, str) or target.lower() not in TARGETS:
        raise ValueError(f"jit(target={target!r}): the targets are {', '.join(map(repr, TARGETS))}")
    return _BY_NAME[target.lower()]


_process_target = None


def process_target():
    """The process-wide target: ``default_target()`` as it was the first time this was asked (the runtime's first
    import asks), so that the runtime's driver stays one for the whole process even if the environment changes."""
    global _process_target
    if _process_target is None:
        _process_target = default_target()
    return _process_target
