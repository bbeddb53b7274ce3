"""``python -m cujit.as_numba program.py args...``: runs a program with cujit standing in for ``numba.cuda``."""

import runpy
import sys

import cujit.as_numba  # noqa: F401  (installs itself)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
