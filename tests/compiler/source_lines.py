"""Where a construct sits in a test function's source, for checking error locations."""

import inspect


def source_position(pyfunc, construct):
    """(line number, line text) of the first source line of `pyfunc` containing `construct`."""
    lines, first = inspect.getsourcelines(pyfunc)
    for offset, line in enumerate(lines):
        if construct in line:
            return first + offset, line.rstrip("\n")
    raise AssertionError(f"{construct!r} not in the source of {pyfunc.__name__}")


def assert_located(text, pyfunc, construct, test_file):
    """`text` (an error message) names `test_file`:line of `construct` in `pyfunc`, shows that line and puts
    a caret under it, no further right than the construct's end."""
    lineno, line = source_position(pyfunc, construct)
    assert f"{test_file}:{lineno}" in text, text
    shown = text.splitlines()
    index = next(i for i, t in enumerate(shown) if t.strip() == line.strip())
    caret = shown[index + 1].index("^")
    assert caret <= shown[index].index(construct) + len(construct), text
    return shown[index], caret
