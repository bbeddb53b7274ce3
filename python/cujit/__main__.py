"""``python -m cujit``: the installed cujit's version, where it finds CUDA's libraries, and its CPU target.

python -m cujit --version    the version (the wheel's name carries the same)
python -m cujit --info       also the extension, Python, each CUDA library found (or why not), the CPU target
                             (whether this build has it, its worker threads, how to select it) and the target
                             kernels compile for in this environment
"""

import argparse
import os
import sys


def _target_lines(driver_found):
    """The CPU target's lines of --info. Reads the environment and the extension only: nothing here opens the
    CUDA driver or starts cujit's runtime."""
    from cujit import _core, _target

    host = getattr(_core, "host", None)
    if host is None or not hasattr(host, "worker_count"):
        return ["cpu target: not in this build (the extension has no host runtime)"]
    workers = host.worker_count()
    given = os.environ.get("CUJIT_HOST_THREADS", "").strip()
    try:
        from_env = int(given) > 0
    except ValueError:
        from_env = False
    source = (
        f"CUJIT_HOST_THREADS={given}"
        if from_env
        else "one per core this process may run on; CUJIT_HOST_THREADS=N sets the number"
    )
    lines = [
        f"cpu target: available; kernels compiled for this machine's CPU run on {workers} worker "
        f"thread{'s' if workers != 1 else ''} ({source}); docs/cpu_target.md",
        "cpu target: select it with CUJIT_TARGET=cpu (every kernel of the process; NUMBA_ENABLE_CUDASIM=1 "
        'too) or cuda.jit(target="cpu") (one kernel)',
    ]
    try:
        chosen = _target.default_target()
    except ValueError as e:
        return lines + [f"kernels compile for: unknown: {e}"]
    if os.environ.get("CUJIT_TARGET", "").strip():
        why = f"CUJIT_TARGET={os.environ['CUJIT_TARGET'].strip()}"
    elif not chosen.on_gpu:
        why = f"NUMBA_ENABLE_CUDASIM={os.environ.get('NUMBA_ENABLE_CUDASIM', '').strip()}"
    else:
        why = "the default: CUJIT_TARGET is not set"
    where = "the GPU" if chosen.on_gpu else "the CPU target"
    line = f"kernels compile for: {chosen.name} ({where}; {why})"
    if chosen.on_gpu and not driver_found:
        line += "; with no CUDA driver here they cannot launch: CUJIT_TARGET=cpu runs them on the CPU"
    return lines + [line]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cujit", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print cujit's version")
    parser.add_argument(
        "--info", action="store_true", help="print the version, the extension, CUDA's libraries and the CPU target"
    )
    args = parser.parse_args(argv)
    import cujit

    if args.info:
        from cujit import _core, toolkit

        print(f"cujit {cujit.__version__}")
        print(f"extension: {_core.__file__}")
        print(f"python: {sys.version.split()[0]} ({sys.executable})")
        found = {}
        for name in ("driver", "nvrtc", "nvjitlink", "nvvm"):
            found[name] = toolkit.library(name)
            print(f"{name}: {found[name].path or 'not found: ' + found[name].reason}")
        for line in _target_lines(found["driver"].found):
            print(line)
        return 0
    print(cujit.__version__ if args.version else f"cujit {cujit.__version__} (python -m cujit --help)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
