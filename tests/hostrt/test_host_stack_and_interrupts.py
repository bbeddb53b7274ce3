"""The CPU target's limits a user can reach (issue 47), each once ending the process: a kernel whose locals
cannot fit a thread's stack is refused at launch with the limit and how to raise it (CUJIT_HOST_STACK_KIB), with
or without a barrier; what fits on a GPU (512 KiB of local memory) fits; a kernel spinning forever answers Ctrl-C
with KeyboardInterrupt at once and the next launch runs. No GPU needed."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cujit import _core, cuda


def local_array_kernel(n, barrier):
    @cuda.jit(target="cpu")
    def k(out):
        arr = cuda.local.array(n, dtype=np.float64)
        t = cuda.threadIdx.x
        for i in range(n):
            arr[i] = i * 0.5 + t
        if barrier:
            cuda.syncthreads()
        out[t] = arr[n - 1 - t]

    return k


@pytest.mark.parametrize("barrier", [False, True], ids=["plain", "barrier"])
@pytest.mark.parametrize("kib", [312, 500])
def test_what_fits_a_gpu_threads_local_memory_runs(kib, barrier):
    n = kib * 1024 // 8
    out = np.zeros(4)
    local_array_kernel(n, barrier)[1, 4](out)
    np.testing.assert_array_equal(out, (n - 1 - np.arange(4)) * 0.5 + np.arange(4))


@pytest.mark.parametrize("barrier", [False, True], ids=["plain", "barrier"])
@pytest.mark.parametrize("kib", [546, 80 * 1024])
def test_locals_that_cannot_fit_are_refused_at_launch(kib, barrier):
    k = local_array_kernel(kib * 1024 // 8, barrier)
    out = np.zeros(4)
    with pytest.raises(
        RuntimeError,
        match=rf"kernel '.*' needs \d+ KiB of stack per thread .* more than the "
        rf"{_core.host.thread_stack_kib()} KiB the CPU target gives each thread: "
        r".*CUJIT_HOST_STACK_KIB=\d+",
    ):
        k[1, 4](out)
    assert not out.any()  # nothing ran


def run_child(code, env=None, timeout=120):
    env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_the_limit_the_message_names_raises_it():
    child = run_child(
        """
        import numpy as np
        from cujit import _core, cuda
        n = 600 * 1024 // 8
        @cuda.jit(target="cpu")
        def k(out):
            arr = cuda.local.array(n, dtype=np.float64)
            t = cuda.threadIdx.x
            for i in range(n):
                arr[i] = i + t
            cuda.syncthreads()
            out[t] = arr[t]
        out = np.zeros(8)
        k[1, 8](out)
        assert (out == 2 * np.arange(8)).all(), out
        print(_core.host.thread_stack_kib())
    """,
        env={"CUJIT_HOST_STACK_KIB": "700"},
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["700"]


SPIN = """
    import os, signal, threading, time
    import numpy as np
    from cujit import cuda

    @cuda.jit(target="cpu")
    def spin(flag, out):
        t = cuda.grid(1)
        while flag[0] == 0:  # nobody sets it: spins forever, as on a GPU
            out[t] += 1
            if BARRIER:
                cuda.syncthreads()

    @cuda.jit(target="cpu")
    def fill(out):
        out[cuda.grid(1)] = 3

    # As in a terminal: Python's own SIGINT handler (a child of a process that ignores SIGINT, as pytest-xdist's
    # workers do, starts with it ignored, and then Ctrl-C asks nothing of a launch).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    flag, out = np.zeros(1, np.int32), np.zeros(256)
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    try:
        spin[4, 64](flag, out)
        print("returned")
    except KeyboardInterrupt:
        print("interrupted after", round(time.monotonic() - started - 0.5, 2))
    after = np.zeros(64)
    fill[1, 64](after)
    print("next launch", after.sum())
"""


@pytest.mark.parametrize("barrier", [False, True], ids=["plain", "barrier"])
def test_ctrl_c_stops_a_spinning_kernel_and_the_next_launch_runs(barrier):
    child = run_child(f"BARRIER = {barrier}\n" + textwrap.dedent(SPIN), timeout=60)
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    assert lines[0].startswith("interrupted after"), child.stdout
    assert float(lines[0].split()[-1]) < 1.0  # within a second of the SIGINT
    assert lines[1] == "next launch 192.0"


def test_a_user_sigint_handler_still_runs_and_decides():
    child = run_child(
        """
        import os, signal, threading
        import numpy as np
        from cujit import cuda

        seen = []
        signal.signal(signal.SIGINT, lambda *a: seen.append("handler") or (_ for _ in ()).throw(SystemExit(7)))

        @cuda.jit(target="cpu")
        def spin(flag, out):
            while flag[0] == 0:
                out[0] += 1

        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        spin[1, 1](np.zeros(1, np.int32), np.zeros(1))
    """,
        timeout=60,
    )
    assert child.returncode == 7, (child.returncode, child.stderr)


def test_interrupt_polls_sit_in_loops_only():
    @cuda.jit(target="cpu")
    def straight(out):  # no loop: no poll
        out[0] = 1.0

    @cuda.jit(target="cpu")
    def looping(out, n):
        for i in range(n):
            out[i] = i

    straight[1, 1](np.zeros(1))
    looping[1, 1](np.zeros(3), 3)
    # (the per-thread entry; the block's loop over its threads, __cujit_host_block, polls as any loop does)
    entry = straight.inspect_llvm(straight.signatures[0]).split("define void @__cujit_host_entry", 1)[-1]
    assert "__cujit_host_interrupt_requested" not in entry.split("\n}\n", 1)[0]
    assert "load atomic i32, ptr @__cujit_host_interrupt_requested monotonic" in looping.inspect_llvm(
        looping.signatures[0]
    )
