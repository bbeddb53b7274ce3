"""Compile time through the two readers of a function (issue 28): from source and from the code object
(CUJIT_FRONTEND=source / bytecode), on the same functions -- the typical kernels of tests/compiler/kernels_src.py
and valid programs of the fuzzer (tests/compiler/random_programs.py). No GPU needed.

    .venv/bin/python benchmarks/bytecode_frontend.py [--repeat 20] [--programs 40] [--json FILE]
    .venv/bin/python benchmarks/bytecode_frontend.py --shapes     (compile time of long and nested shapes by size)

For each function it reports the median time of the reader alone (the tree handed to the C++ frontend, built
afresh each time) and of a whole ``compile_ptx`` (reader, typing, lowering, LLVM, PTX), and the ratio of the
bytecode path to the source path (target: at most 1.2 for the whole compile).
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "compiler"))

from cujit import _source, cuda, float32, int32  # noqa: E402

TARGET = 1.2
READERS = ("source", "bytecode")


def kernel_cases():
    import kernels_src as K

    f1, f2, i1 = float32[::1], float32[:, ::1], int32[::1]
    return [
        ("saxpy", K.saxpy, (f1, float32, f1, f1), {}),
        ("block_sum", K.block_sum, (f1, f1), {}),
        ("stencil_2d", K.stencil_2d, (f2, f2), {}),
        ("fast_matmul", K.fast_matmul, (f2, f2, f2), {}),
        ("histogram_shared", K.histogram_shared, (i1, i1), {}),
        ("warp_reduce", K.warp_reduce, (f1, f1), {}),
    ]


def program_cases(count, workdir):
    from random_programs import generate

    cases = []
    seed = 0
    while len(cases) < count and seed < 20 * count:
        program = generate(seed)
        seed += 1
        if program.invalid or program.jit:
            continue
        path = os.path.join(workdir, f"bench_prog_{program.seed}.py")
        with open(path, "w") as fh:
            fh.write(program.source)
        spec = importlib.util.spec_from_file_location(f"bench_prog_{program.seed}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        options = dict(program.options, lineinfo=False, debug=False, device=not program.kernel)
        if all(compiles(module.f, program.signature, options, reader) for reader in READERS):
            cases.append((f"program {program.seed}", module.f, program.signature, options))
    return cases


def compiles(fn, sig, options, reader):
    os.environ["CUJIT_FRONTEND"] = reader
    try:
        cuda.compile_ptx(fn, sig, cc=(7, 5), **options)
        return True
    except Exception:
        return False


def medians_ms(call, repeat):
    """The median time of `call` through each reader, the readers in turn (interleaved, so that a drift of the
    machine's speed falls on both alike), after one run each."""
    times = {reader: [] for reader in READERS}
    for reader in READERS:
        os.environ["CUJIT_FRONTEND"] = reader
        call()
    for _ in range(repeat):
        for reader in READERS:
            os.environ["CUJIT_FRONTEND"] = reader
            start = time.perf_counter()
            call()
            times[reader].append(time.perf_counter() - start)
    return {reader: 1000 * statistics.median(t) for reader, t in times.items()}


def measure(case, repeat):
    name, fn, sig, options = case

    def read():
        _source._cache.clear()
        _source.function_source(fn)

    def whole():
        _source._cache.clear()
        cuda.compile_ptx(fn, sig, cc=(7, 5), **options)

    row = {"function": name}
    for what, call in (("reader", read), ("compile", whole)):
        for reader, ms in medians_ms(call, repeat).items():
            row[f"{reader}_{what}_ms"] = ms
    row["reader_ratio"] = row["bytecode_reader_ms"] / row["source_reader_ms"]
    row["compile_ratio"] = row["bytecode_compile_ms"] / row["source_compile_ms"]
    return row


# The shapes whose reading from bytecode once grew faster than their size (issue 45): a condition of n terms
# joined by `and`, a chain of n conditional expressions, a comparison of n operands chained, n nested ifs.
SHAPES = {
    "and chain": lambda n: (
        "def f(a):\n    if " + " and ".join(f"a[{i}] > {i}" for i in range(n)) + ":\n        return 1\n    return 0\n"
    ),
    "conditional expressions": lambda n: (
        "def f(a):\n    return " + " else ".join(f"{i} if a[0] == {i}" for i in range(n)) + " else -1\n"
    ),
    "chained comparison": lambda n: "def f(a):\n    return " + " < ".join(f"a[{i}]" for i in range(n)) + "\n",
    "nested ifs": lambda n: (
        "def f(a):\n    x = 0\n"
        + "".join(" " * (4 + i) + f"if a[{i}] > 0:\n" for i in range(n))
        + " " * (4 + n)
        + "x = 1\n    return x\n"
    ),
}
SHAPE_SIZES = {"and chain": (20, 40, 80, 200, 1000, 5000), "nested ifs": (20, 40, 60, 98)}


def shape_scaling(rounds=3):
    """Seconds of ``compile_ptx`` for each shape and size, the function exec'd from text (read from its bytecode):
    the best of `rounds`."""
    rows = []
    for shape, make in SHAPES.items():
        for n in SHAPE_SIZES.get(shape, (20, 40, 80, 200)):
            best = None
            for _ in range(rounds):
                namespace = {}
                exec(compile(make(n), f"<{shape} {n}>", "exec"), namespace)
                start = time.perf_counter()
                cuda.compile_ptx(namespace["f"], "int64(float64[::1])", device=True, cc=(7, 5))
                seconds = time.perf_counter() - start
                best = seconds if best is None else min(best, seconds)
            rows.append({"shape": shape, "n": n, "seconds": best})
            print(f"{shape:<24} {n:>5} {best * 1000:10.1f} ms", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--programs", type=int, default=20)
    parser.add_argument("--shapes", action="store_true", help="only the scaling of long and nested shapes")
    parser.add_argument("--json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.shapes:
        rows = shape_scaling()
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"shapes": rows}, fh, indent=1)
        return
    with tempfile.TemporaryDirectory() as workdir:
        cases = kernel_cases() + program_cases(args.programs, workdir)
        rows = [measure(case, args.repeat) for case in cases]
    os.environ.pop("CUJIT_FRONTEND", None)
    print(
        f"{'function':<20} {'reader src ms':>13} {'reader bc ms':>12} {'ratio':>6} {'compile src ms':>14} "
        f"{'compile bc ms':>13} {'ratio':>6}"
    )
    for r in rows:
        print(
            f"{r['function']:<20} {r['source_reader_ms']:13.3f} {r['bytecode_reader_ms']:12.3f} "
            f"{r['reader_ratio']:6.2f} {r['source_compile_ms']:14.2f} {r['bytecode_compile_ms']:13.2f} "
            f"{r['compile_ratio']:6.2f}"
        )
    reader = statistics.median(r["reader_ratio"] for r in rows)
    whole = statistics.median(r["compile_ratio"] for r in rows)
    worst = max(r["compile_ratio"] for r in rows)
    total = sum(r["bytecode_compile_ms"] for r in rows) / sum(r["source_compile_ms"] for r in rows)
    print(
        f"\nratio bytecode/source: reader {reader:.2f} (median); whole compile {whole:.2f} (median), {total:.2f} "
        f"(all functions' time), worst {worst:.2f}; target {TARGET}: {'PASS' if whole <= TARGET else 'MISS'}  "
        f"(Python {sys.version.split()[0]})"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "rows": rows,
                    "median_reader_ratio": reader,
                    "median_compile_ratio": whole,
                    "total_compile_ratio": total,
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
