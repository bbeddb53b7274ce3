"""Compiles each structure of depth_programs at the depths given, from its source and from its bytecode, and
prints, as JSON, the best of seven compile times (CPU time, the depths alternating) per ("structure (frontend)",
depth), the PTX of the deepest, or the error a depth raised.

Usage: depth_child.py DEPTH... (each depth is capped at the structure's Python limit)."""

import json
import linecache
import sys
import time

from cujit import cuda
from depth_programs import PYTHON_LIMITS, STRUCTURES


def load(source, tag, frontend):
    """`f` of `source`, executed with its text registered in linecache (cujit compiles from the source), or
    without (frontend "bytecode": cujit compiles from its code object)."""
    filename = f"<depth {tag} {frontend}>"
    if frontend == "source":
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"cuda": cuda}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


def compile_once(make, depth, frontend):
    source, sig = make(depth)
    fn = load(source, f"{make.__name__} {depth}", frontend)
    # CPU time of this thread (the compile runs on it): a compile preempted by other work on a busy machine
    # would read long in wall time, and the longer compiles more often.
    start = time.thread_time()
    ptx, _ = cuda.compile_ptx(fn, sig, device=isinstance(sig, str))
    return time.thread_time() - start, ptx


ROUNDS = 7
FRONTENDS = ("source", "bytecode")


def main(depths):
    results = {}
    for (name, make), frontend in [(item, f) for item in STRUCTURES.items() for f in FRONTENDS]:
        row = results[f"{name} ({frontend})"] = {"seconds": {}, "ptx": None, "error": None}
        swept = sorted({min(d, PYTHON_LIMITS.get(name, d)) for d in depths})
        try:
            # The depths alternate round by round, so a slow phase of the machine (a VM's neighbours, a
            # frequency change) weighs on each of them alike; each keeps its best round.
            for _ in range(ROUNDS):
                for depth in swept:
                    seconds, ptx = compile_once(make, depth, frontend)
                    key = str(depth)
                    row["seconds"][key] = min(seconds, row["seconds"].get(key, seconds))
                    row["ptx"] = ptx
        except Exception as e:  # noqa: BLE001  (reported with its structure and depth)
            row["error"] = f"depth {depth}: {type(e).__module__}.{type(e).__name__}: {e}"
    print(json.dumps(results))


if __name__ == "__main__":
    main([int(d) for d in sys.argv[1:]])
