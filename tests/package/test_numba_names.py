"""numba's names in cujit (issue 41): the exception and warning hierarchy of numba.core.errors."""

import inspect

import pytest

from cujit import errors


def test_errors_have_numbas_hierarchy():
    numba_errors = pytest.importorskip("numba.core.errors")
    checked = 0
    for name, cls in vars(numba_errors).items():
        if not (inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == "numba.core.errors"):
            continue
        ours = getattr(errors, name, None)
        assert ours is not None, f"cujit.errors lacks {name}"
        for base in cls.__bases__:
            expected = getattr(errors, base.__name__, base)
            assert issubclass(ours, expected), f"{name} is not a {base.__name__}"
        checked += 1
    assert checked >= 40


def test_cujits_own_errors_keep_their_builtin_bases():
    assert issubclass(errors.NumbaValueError, ValueError) and issubclass(errors.NumbaValueError, errors.TypingError)
    assert issubclass(errors.InternalError, RuntimeError) and issubclass(errors.LoweringError, errors.NumbaError)
    assert issubclass(errors.NumbaPerformanceWarning, errors.NumbaWarning)
    assert issubclass(errors.NumbaDeprecationWarning, DeprecationWarning)
