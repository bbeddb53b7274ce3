"""Shared by the side-by-side benchmarks: one side (cujit or numba) run in its own worker process."""

import json
import os
import subprocess
import sys


def run_worker(script, side, rounds):
    """Runs ``script --worker side --rounds N``; returns the JSON of its last line of output."""
    proc = subprocess.run(
        [sys.executable, script, "--worker", side, "--rounds", str(rounds)],
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{side} worker failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
