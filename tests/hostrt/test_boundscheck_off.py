"""What the docs say of ``boundscheck=False`` on the CPU target (README.md, docs/cpu_target.md, docs/kernels.md):
with the checks off nothing checks an index, and a wild one crashes the whole process with a segmentation fault
instead of raising; with them on (the default) the same kernel raises IndexError. Each case runs in a process of
its own. No GPU needed."""

import os
import signal

import pytest

import script_runs

WILD = """
import resource
import warnings
import numpy as np
from cujit import cuda

resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # the crash leaves no core file behind
warnings.simplefilter("ignore")
@cuda.jit(target="cpu"{option})
def wild(x, out):
    out[0] = x[1 << 40]        # 8 TiB past a 10-element array

try:
    wild[1, 1](np.zeros(10), np.zeros(1))
except IndexError as e:
    print("IndexError:", e)
    raise SystemExit(3)
print("no error")
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_BOUNDSCHECK", "CUJIT_TARGET")}
    return dict(env, **extra)


@pytest.mark.parametrize(
    "option, env",
    [(", boundscheck=False", {}), ("", {"NUMBA_BOUNDSCHECK": "0"})],
    ids=["boundscheck=False", "NUMBA_BOUNDSCHECK=0"],
)
def test_a_wild_index_without_bounds_checks_is_a_segmentation_fault(option, env):
    proc = script_runs.run_script(WILD.format(option=option), ".py", env=_env(**env), expect_exit=-signal.SIGSEGV)
    assert "no error" not in proc.stdout and "IndexError" not in proc.stdout


def test_a_wild_index_with_bounds_checks_is_an_index_error():
    proc = script_runs.run_script(WILD.format(option=""), ".py", env=_env(), expect_exit=3)
    assert (
        "IndexError: kernel 'wild': index 1099511627776 is out of bounds for axis 0 with size 10 of array 'x'"
        in proc.stdout
    ), proc.stdout
