"""Where a construct sits in a test function's source, for checking error locations."""

import inspect


def source_position(pyfunc, construct):
    """(line number, line text) of the first source line of `pyfunc` containing `construct`."""
    lines, first = inspect.getsourcelines(pyfunc)
    for offset, line in enumerate(lines):
        if construct in line:
            return first + offset, line.rstrip("\n")
    raise AssertionError(f"{construct!r} not in the source of {pyfunc.__name__}")
