"""A function's source text as the C++ frontend reads it: the def statement (or the lambda) found from the code
object's first line, dedented, parsed with ``ast`` into the FunctionDef handed to ``_core.FunctionSource``."""

import ast
import linecache
import textwrap

from cujit import _core
from cujit.errors import UnsupportedError


def _find_lambda(text, pyfunc):
    """The ast.Lambda of `pyfunc` in `text` (the source lines holding it), with
    locations relative to `text`. A lambda may sit inside any expression, so each
    'lambda' keyword is tried with the longest suffix of the text that parses."""
    names = list(pyfunc.__code__.co_varnames[: pyfunc.__code__.co_argcount])
    start = text.find("lambda")
    while start >= 0:
        for end in range(len(text), start, -1):
            try:
                node = ast.parse(text[start:end], mode="eval").body
            except SyntaxError:
                continue
            if not isinstance(node, ast.Lambda):
                continue  # e.g. "lambda x: x, 2" parses as a tuple: try a shorter text
            if [a.arg for a in node.args.args] == names:
                line = text.count("\n", 0, start)
                col = start - (text.rfind("\n", 0, start) + 1)
                for n in ast.walk(node):
                    if hasattr(n, "lineno"):
                        if n.lineno == 1:
                            n.col_offset += col
                        if getattr(n, "end_lineno", None) == 1:
                            n.end_col_offset += col
                        n.lineno += line
                        n.end_lineno = (n.end_lineno or 1) + line
                return node
            break
        start = text.find("lambda", start + 1)
    return None


def _lambda_def(text, pyfunc):
    """A lambda becomes a FunctionDef returning its body (same source locations)."""
    node = _find_lambda(text, pyfunc)
    if node is None:
        return None
    ret = ast.Return(value=node.body)
    ast.copy_location(ret, node.body)
    fdef = ast.FunctionDef(name="<lambda>", args=node.args, body=[ret], decorator_list=[], returns=None, type_params=[])
    ast.copy_location(fdef, node)
    return fdef


def _indent(line):
    return len(line) - len(line.lstrip())


def _def_block(pyfunc):
    """The source lines of a def statement (decorators included) and its first line number, found by
    indentation from the code object's first line: much faster than inspect's tokenizer. None when the
    text does not parse as that function (the caller falls back to inspect)."""
    code = pyfunc.__code__
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    start = code.co_firstlineno - 1
    if not lines or start >= len(lines):
        return None
    indent = _indent(lines[start])
    end = start + 1
    in_header = True  # decorators and the def line itself sit at the def's own indentation
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and _indent(line) <= indent:
            if not in_header:
                break
        elif stripped and not stripped.startswith("#"):
            in_header = False
        end += 1
    block = lines[start:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or getattr(tree.body[0], "name", None) != pyfunc.__name__:
        return None
    return block, start + 1


def _source_lines(pyfunc):
    """(lines, first line number) of the def statement, or the lines holding the lambda, of ``pyfunc``."""
    found = _def_block(pyfunc) if pyfunc.__name__ != "<lambda>" else None
    if found:
        return found
    import inspect  # imported for the first lambda or def the rule above cannot read: 2 ms `import cujit` skips

    return inspect.getsourcelines(pyfunc)


def source_lines(pyfunc):
    """(lines, first line number) of the def statement, or the lines holding the lambda, of ``pyfunc``; None
    where there is no source (exec, compile(), ``python -c``, a prompt, a .pyc without its .py)."""
    try:
        return _source_lines(pyfunc)
    except (OSError, TypeError):
        return None


def parse(pyfunc, found):
    """The FunctionSource of `pyfunc`, from `found`: its source lines and first line (source_lines); None when
    the lines hold no definition of it (lines that only stand where it would: see _source._read)."""
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    lines, first_line = found
    text = textwrap.dedent("".join(lines))
    if pyfunc.__name__ == "<lambda>":
        fdef = _lambda_def(text, pyfunc)
    else:
        tree = ast.parse(text)
        fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fdef is None:
        return None
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise UnsupportedError(f"{qualname!r}: async functions cannot be compiled for CUDA")
    filename = pyfunc.__code__.co_filename  # what inspect.getsourcefile gives for a function with source
    return _core.FunctionSource(
        fdef, pyfunc.__name__, qualname, pyfunc.__module__ or "<dynamic>", filename, text.splitlines(), first_line
    )
