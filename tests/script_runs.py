"""Runs a test scenario as a script of its own: cujit compiles functions from their source, so scenarios are
files, and each process picks its libcuda (the fake driver or the real one) before cujit opens one."""

import os
import queue
import subprocess
import sys
import tempfile
import threading


def run_script(text, suffix, env=None, expect_exit=0, timeout=600):
    """Writes `text` to a temporary ``*<suffix>`` file, runs it with this Python and returns the finished
    process; asserts its exit status (with its output's tail as the message)."""
    # In a directory of its own: the script's directory is first on its sys.path, and whatever else lies in the
    # system's temp directory (a stray bisect.py, say) must not shadow the standard library.
    with tempfile.TemporaryDirectory(prefix="cujit-script-") as folder:
        path = os.path.join(folder, "scenario" + suffix)
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == expect_exit, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def output_lines(proc):
    """A child process's stdout lines as they come (None at its end), read on a thread so the parent can wait
    for the next one with a timeout (``.get(timeout=...)``) and kill a child that hangs."""
    lines = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines
