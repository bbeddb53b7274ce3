"""The bytecode frontend's differential check over the fuzzer's programs (random_programs.py): each program is
compiled from its file (the source reader) and from the same text exec'd with no file behind it (the bytecode
reader), with lineinfo and debug off; the PTX must be the same byte for byte, and a program one reader rejects
the other must reject with the same error. Used by test_bytecode_frontend.py; run alone it prints a summary:

    python tests/compiler/bytecode_differential.py [N]
"""

import os
import re
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from random_programs import generate, load_program  # noqa: E402

# Names that follow the process's compile order, not the function: the uid in a mangled name (numba's ABI tag
# `B<n>v<uid>`), the shared-memory symbols derived from it, and the AsmPrinter's call-sequence counter.
_ORDER_DEPENDENT = [
    (re.compile(r"B\d+v\d+"), "Bv"),
    (re.compile(r"_cudapy_smem_[0-9a-f]+_"), "_cudapy_smem_"),
    (re.compile(r"callseq \d+"), "callseq"),
]


def comparable(ptx):
    for pattern, replacement in _ORDER_DEPENDENT:
        ptx = pattern.sub(replacement, ptx)
    return ptx


def _compile(program, module_f):
    from cujit import cuda

    options = dict(program.options, lineinfo=False, debug=False)
    if program.jit:
        kernel = cuda.jit(program.signature, **options)(module_f)
        return next(iter(kernel.overloads.values())).ptx
    ptx, _ = cuda.compile_ptx(module_f, program.signature, device=not program.kernel, cc=(7, 5), **options)
    return ptx


def _outcome(program, module_f):
    try:
        return "ptx", comparable(_compile(program, module_f))
    except Exception as exc:  # the two readers must agree on the error too
        return "error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def from_file(program, workdir):
    return load_program(program, workdir)


def from_text(program):
    """The program exec'd from a string: its functions have no source anywhere."""
    namespace = {"__name__": f"prog_{program.seed}"}
    exec(compile(program.source, f"<program {program.seed}>", "exec"), namespace)
    return namespace["f"]


def compare(seeds, workdir):
    """{seed: (source outcome, bytecode outcome)} for the seeds whose outcomes differ, and the number compared."""
    warnings.simplefilter("ignore")
    differing = {}
    for seed in seeds:
        program = generate(seed)
        a = _outcome(program, from_file(program, workdir))
        b = _outcome(program, from_text(program))
        if a != b:
            differing[seed] = (a, b)
    return differing


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as workdir:
        differing = compare(range(count), workdir)
    kinds = {}
    for seed, (a, b) in differing.items():
        kind = b[1][:90] if b[0] == "error" else "different PTX" if a[0] == "ptx" else "source failed: " + a[1][:60]
        kinds.setdefault(kind, []).append(seed)
    for kind, seeds in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(seeds):4d}  {kind}  e.g. seeds {seeds[:5]}")
    print(f"{count - len(differing)} of {count} programs the same through both readers")


if __name__ == "__main__":
    main()
