"""Test programs run in a Python process of their own, each printing its result as JSON on its last line."""

import json
import subprocess
import sys


def start(argv, env=None, cwd=None):
    """A Python process running ``argv`` (a script and its arguments), its output captured."""
    return subprocess.Popen(
        [sys.executable, *map(str, argv)], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def result(proc, timeout=300):
    """(the JSON the process printed last, its stderr); a process that failed fails the test with the end of
    its stderr."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def run(argv, env=None, cwd=None, timeout=300):
    """The JSON a Python process running ``argv`` printed last."""
    return result(start(argv, env, cwd), timeout)[0]
