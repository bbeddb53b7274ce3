"""``python -m cujit``: the installed cujit's version and where it finds CUDA's libraries.

    python -m cujit --version    the version (the wheel's name carries the same)
    python -m cujit --info       also the extension, Python, and each CUDA library found (or why not)
"""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cujit", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print cujit's version")
    parser.add_argument("--info", action="store_true", help="print the version, the extension and CUDA's libraries")
    args = parser.parse_args(argv)
    import cujit
    if args.info:
        from cujit import _core, toolkit
        print(f"cujit {cujit.__version__}")
        print(f"extension: {_core.__file__}")
        print(f"python: {sys.version.split()[0]} ({sys.executable})")
        for name in ("driver", "nvrtc", "nvjitlink", "nvvm"):
            found = toolkit.library(name)
            print(f"{name}: {found.get('path') or 'not found: ' + found.get('reason', '')}")
        return 0
    print(cujit.__version__ if args.version else f"cujit {cujit.__version__} (python -m cujit --help)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
