"""Typing with the extension API (issue 44): a kernel calling 20 functions defined through
``cujit.extending.overload`` against the same kernel calling 20 plain ``@cuda.jit(device=True)`` functions.

Each round makes the functions anew (new code objects, so nothing is cached between rounds) and types the kernel
once (``compiler.type_function``: the frontend, the passes and typing of the kernel and of its 20 callees, no code
generation), alternating the two sides; each side reports its median round. No GPU is needed.

    .venv/bin/python benchmarks/extension_typing.py [--rounds 30]
"""

import argparse
import statistics
import time

from cujit import cuda, extending, types
from cujit.compiler import make_options, parse_signature, type_function

N = 20
BODY = "    return x * {k} + 1.0\n"


def plain_side(n):
    scope = {"cuda": cuda}
    for k in range(n):
        exec(f"@cuda.jit(device=True)\ndef f{k}(x):\n" + BODY.format(k=k), scope)  # noqa: S102
    return scope


def overload_side(n):
    scope = {"overload": extending.overload, "types": types}
    for k in range(n):
        source = (
            f"def f{k}(x):\n    pass\n"
            f"@overload(f{k})\ndef typer{k}(x):\n    if isinstance(x, types.Float):\n"
            f"        def impl(x):\n        " + BODY.format(k=k) + "        return impl\n"
        )
        exec(source, scope)  # noqa: S102
    return scope


def kernel_of(scope, n):
    calls = "\n".join(f"    out[{k}] = f{k}(x)" for k in range(n))
    exec(f"def kernel(out, x):\n{calls}\n", scope)  # noqa: S102
    return scope["kernel"]


def type_once(make):
    kernel = kernel_of(make(N), N)
    options = make_options(
        device=False, abi="numba", abi_info=None, cc=(7, 5), fastmath=False, opt=None, debug=False, lineinfo=False
    )
    signature = parse_signature("void(float64[::1], float64)")
    start = time.perf_counter()
    type_function(kernel, signature, options)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    plain, overloaded = [], []
    for _ in range(args.rounds):
        plain.append(type_once(plain_side))
        overloaded.append(type_once(overload_side))
    p, o = statistics.median(plain), statistics.median(overloaded)
    print(f"typing a kernel of {N} calls, median of {args.rounds} rounds:")
    print(f"  plain device functions   {p * 1e3:8.2f} ms")
    print(f"  overloaded functions     {o * 1e3:8.2f} ms   ({o / p:.2f}x)")


if __name__ == "__main__":
    main()
