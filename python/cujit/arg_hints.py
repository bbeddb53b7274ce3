"""numba's transfer direction wrappers for kernel arguments: ``cuda.In(ary)``, ``cuda.Out(ary)``, ``cuda.InOut(ary)``.

A leaf module: typing a launch argument (``cujit._typeof``) looks through them and the launch path
(``cujit.cudadrv.launch``) copies by them, so they live below both.
"""


class ArgHint:
    def __init__(self, value):
        self.value = value


class In(ArgHint):
    """Copy the host array to the device before the launch only."""

    copy_in, copy_out = True, False


class Out(ArgHint):
    """Copy the device array back to the host after the launch only."""

    copy_in, copy_out = False, True


class InOut(ArgHint):
    """Copy in before and back after the launch (the default for host arrays)."""

    copy_in, copy_out = True, True
