"""Robustness over random programs: a seeded generator (random_programs.py) makes small device functions
and kernels, valid and invalid, with random options; child processes compile them (fuzz_child.py), so that
a compile that kills its process is caught and reported with its source. Asserted for every program:

* no child dies (an abort or crash inside the compiler is a failure naming the program);
* every exception is one of the types users are told to expect, never a cujit bug (LoweringError,
  InternalError) or a Python internal (AttributeError, KeyError, RecursionError...);
* an error about the user's code (TypingError and its kinds, NotDefinedError) shows file:line and a caret;
* a program with a planted mistake fails, and every PTX produced assembles with ptxas;
* no program takes more than 5 s to compile, and one that has not finished after 60 s is killed and reported
  with its source (a hang is a bug: nested tuples once took twice as long per level).

CUJIT_FUZZ_SEEDS=N changes the number of programs (default 1000: a few seconds of compiles, most of the minute is ptxas).
"""

import json
import os
import queue
import subprocess
import sys
import tempfile

import pytest

from random_programs import generate
from script_runs import output_lines

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = range(int(os.environ.get("CUJIT_FUZZ_SEEDS", "1000")))
BATCHES = 2
SLOW_SECONDS = 5  # a compile slower than this fails the test
HANG_SECONDS = 60  # a child with no result for this long is killed, and its program reported

EXPECTED = {
    "cujit.errors.TypingError",
    "cujit.errors.UnsupportedError",
    "cujit.errors.NotDefinedError",
    "builtins.TypeError",
    "builtins.ValueError",
}
ABOUT_CODE = {"cujit.errors.TypingError", "cujit.errors.UnsupportedError", "cujit.errors.NotDefinedError"}


def run_children(seeds, workdir):
    """Runs the seeds in child processes; a child that dies, or stays HANG_SECONDS in one program, is (killed
    and) restarted after the program that stopped it. Returns ({seed: report}, {seed: how the child died})."""
    reports, deaths = {}, {}
    pending = list(seeds)
    while pending:
        with tempfile.TemporaryFile("w+") as stderr:
            proc = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "fuzz_child.py"), workdir, *map(str, pending)],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
            lines = output_lines(proc)
            started, hung = None, False
            while True:
                try:
                    line = lines.get(timeout=HANG_SECONDS)
                except queue.Empty:
                    proc.kill()
                    hung = True
                    break
                if line is None:
                    break
                event = json.loads(line)
                if event["event"] == "start":
                    started = event["seed"]
                else:
                    reports[event["seed"]] = event
                    started = None
            proc.wait()
            stderr.seek(0)
            errors = stderr.read()
        done = [s for s in pending if s in reports]
        if not hung and proc.returncode == 0 and len(done) == len(pending):
            break
        culprit = started if started is not None else pending[len(done)]
        deaths[culprit] = (
            f"no result after {HANG_SECONDS} s: killed"
            if hung
            else f"exit status {proc.returncode}; stderr: {errors[-2000:]}"
        )
        pending = pending[pending.index(culprit) + 1 :]
    return reports, deaths


def describe(seed):
    p = generate(seed)
    return (
        f"seed {seed}: compile {'@cuda.jit' if p.jit else 'compile_ptx'} {p.signature} {p.options}"
        f"{' (planted: ' + p.invalid + ')' if p.invalid else ''}\n{p.source}"
    )


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs(batch, tmp_path, register_ptx):
    seeds = [s for s in SEEDS if s % BATCHES == batch]
    reports, deaths = run_children(seeds, str(tmp_path))
    problems = [f"the compiler stopped its process ({how}) on\n{describe(seed)}" for seed, how in deaths.items()]
    for seed in seeds:
        r = reports.get(seed)
        if r is None:
            continue
        program = generate(seed)
        if r["seconds"] > SLOW_SECONDS:
            problems.append(f"took {r['seconds']:.1f} s to compile (over {SLOW_SECONDS} s)\n{describe(seed)}")
        if r["event"] == "ok":
            with open(r["ptx"]) as fh:
                register_ptx(fh.read())
            if program.invalid:
                problems.append(f"a planted mistake compiled without an error:\n{describe(seed)}")
            continue
        if r["type"] not in EXPECTED:
            problems.append(f"{r['type']}: {r['message']}\n{describe(seed)}")
        elif r["type"] in ABOUT_CODE and not (r["location"] and 'File "' in r["message"] and "^" in r["message"]):
            problems.append(f"{r['type']} without file:line and a caret: {r['message']}\n{describe(seed)}")
    assert not problems, f"{len(problems)} of {len(seeds)} programs went wrong:\n\n" + "\n\n".join(problems[:10])
    compiled = sum(1 for r in reports.values() if r["event"] == "ok")
    assert compiled > len(seeds) // 4, f"only {compiled} of {len(seeds)} programs compiled: the generator drifted"
