"""Child process of test_random_programs.py: compiles the programs of the seeds it is given, one by one,
and reports each on stdout as one JSON line. It says "start" before a compile, so that if the process dies
inside one, the parent knows which program killed it.

    python fuzz_child.py WORKDIR SEED [SEED ...]
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from random_programs import generate, load_program  # noqa: E402


def report(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def compile_program(program, workdir):
    f = load_program(program, workdir)
    from cujit import cuda

    if program.jit:
        kernel = cuda.jit(program.signature, **program.options)(f)
        return next(iter(kernel.overloads.values())).ptx
    ptx, _ = cuda.compile_ptx(f, program.signature, device=not program.kernel, cc=(7, 5), **program.options)
    return ptx


def main():
    import warnings

    warnings.simplefilter("ignore")  # debug=True with opt=True warns, as in numba
    workdir, seeds = sys.argv[1], [int(s) for s in sys.argv[2:]]
    for seed in seeds:
        program = generate(seed)
        report(event="start", seed=seed)
        start = time.perf_counter()
        try:
            ptx = compile_program(program, workdir)
        except Exception as exc:  # reported, judged by the parent
            report(
                event="error",
                seed=seed,
                type=f"{type(exc).__module__}.{type(exc).__qualname__}",
                message=str(exc),
                location=list(getattr(exc, "cujit_location", ()) or ()),
                seconds=time.perf_counter() - start,
            )
            continue
        seconds = time.perf_counter() - start
        ptx_path = os.path.join(workdir, f"prog_{seed}.ptx")
        with open(ptx_path, "w") as fh:
            fh.write(ptx)
        report(event="ok", seed=seed, ptx=ptx_path, seconds=seconds)


if __name__ == "__main__":
    main()
