"""Compiles each structure of depth_programs at the depths given and prints, as JSON, the best of five compile
times per (structure, depth), the PTX of the deepest, or the error a depth raised.

Usage: depth_child.py DEPTH... (each depth is capped at the structure's Python limit)."""

import json
import linecache
import sys
import time

from cujit import cuda
from depth_programs import PYTHON_LIMITS, STRUCTURES


def load(source, entry, tag):
    filename = f"<depth {tag}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"cuda": cuda}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[entry]


def compile_once(make, depth):
    source, entry, sig, _ = make(depth)
    fn = load(source, entry, f"{make.__name__} {depth}")
    start = time.perf_counter()
    ptx, _ = cuda.compile_ptx(fn, sig, device=isinstance(sig, str))
    return time.perf_counter() - start, ptx


def main(depths):
    results = {}
    for name, make in STRUCTURES.items():
        row = results[name] = {"seconds": {}, "ptx": None, "error": None}
        for depth in sorted({min(d, PYTHON_LIMITS.get(name, d)) for d in depths}):
            try:
                best, ptx = min(compile_once(make, depth) for _ in range(5))
            except Exception as e:  # noqa: BLE001  (reported with its structure and depth)
                row["error"] = f"depth {depth}: {type(e).__module__}.{type(e).__name__}: {e}"
                break
            row["seconds"][str(depth)] = best
            row["ptx"] = ptx
    print(json.dumps(results))


if __name__ == "__main__":
    main([int(d) for d in sys.argv[1:]])
