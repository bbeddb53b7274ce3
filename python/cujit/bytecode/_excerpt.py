"""What an error message shows under ``file:line`` for a function read from its bytecode (_reader.py), as the
source path shows the source line and a caret: the file's line, where ``linecache`` has the file and the code in
it compiles to the function's own bytecode; otherwise the statement rebuilt from the bytecode (``ast.unparse``),
marked as such, with the caret under the rebuilt text of the sub-expression at fault. Computed only when an
error is reported (the C++ core calls the Excerpt with the error's location)."""

import ast
import linecache
import sys
import textwrap

from cujit.bytecode._decode import _code_positions  # co_positions, or 3.10's lines

REBUILT = "(rebuilt from bytecode: the function has no source)"
_COLUMNS = sys.version_info >= (3, 11)  # 3.10's code objects have lines only: the line is shown with no caret
_HEADERS = (ast.If, ast.While, ast.For)


class Excerpt:
    """``excerpt(line, col, end_line, end_col)``: the text under an error's ``file:line`` for `code`, whose tree
    the bytecode reader rebuilds with `rebuild()` (its lines count from the def's, its columns from the def's
    indentation). The tree is rebuilt at the first error that needs it: kept with every function compiled, it
    would be hundreds of objects for the garbage collector to go through, for errors most functions never have."""

    def __init__(self, code, rebuild):
        self.code, self._rebuild = code, rebuild
        self._file = self._proven = self._indent = self._fdef = None

    @property
    def fdef(self):
        if self._fdef is None:
            self._fdef = self._rebuild()
        return self._fdef

    @property
    def indent(self):
        """The columns the reader gave count from the body's indentation less one level, as in the dedented
        source (_expressions.py's reader). Found at the first error, not with every function."""
        if self._indent is None:
            code = self.code
            cols = [
                c
                for line, _, c, _ in _code_positions(code)
                if line is not None and c is not None and line > code.co_firstlineno
            ]
            self._indent = max(0, min(cols) - 4) if cols else 0
        return self._indent

    def __call__(self, line, col, end_line, end_col):
        end = end_col if end_line == line and end_col > col else col + 1
        text = self.file_line(line)
        if text is not None:
            return f"{text}\n{_caret(col, end, len(text))}" if _COLUMNS else text
        return self.rebuilt(line - self.code.co_firstlineno + 1, col, end_line - self.code.co_firstlineno + 1, end_col)

    # -- the file's own line -------------------------------------------------------------------------
    def file_line(self, line):
        """Line `line` of the function's file, from the def's indentation on, where the file holds this
        function's code; None otherwise."""
        if self._file is None:
            self._file = self._matching_lines() or ()
        lines = self._file
        if not 0 < line <= len(lines):
            return None
        text = lines[line - 1].rstrip("\r\n")
        return text[self.indent :] if text[: self.indent].isspace() or not self.indent else text.lstrip()

    def _matching_lines(self):
        code = self.code
        lines = linecache.getlines(code.co_filename)
        last = max((end for _, end, _, _ in _code_positions(code) if end is not None), default=code.co_firstlineno)
        if not lines or len(lines) < last or code.co_name == "<lambda>":
            return None
        block = textwrap.dedent("".join(lines[code.co_firstlineno - 1 : last]))
        try:
            tree = ast.parse(block)
        except SyntaxError:
            return None
        fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == code.co_name), None)
        if fdef is None:
            return None
        return lines if _compiles_to(fdef, code) else None  # else the file says something else now

    # -- the statement rebuilt from bytecode -----------------------------------------------------------
    def rebuilt(self, line, col, end_line, end_col):
        """The rebuilt statement on (relative) line `line` holding the location, and a caret under the
        sub-expression there (under the whole statement where no sub-expression sits exactly there)."""
        if self._proven is None:  # a tree made only to reject a construct is no rebuilt source
            self._proven = _compiles_to(self.fdef, self.code)
        stmt, depth = _statement_at(self.fdef, line, col) if self._proven else (None, 0)
        if stmt is None:
            return ""
        text = _header(stmt)
        pad = " " * (4 * depth + 4)  # the statement's indentation in the def
        span = None
        for node in _own_nodes(stmt):
            if (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == (line, col, end_line, end_col):
                span = _span(text, node)
                break
        start, end = span if span is not None else (0, len(text))
        caret = f"{pad}{_caret(start, end, len(text))}\n" if _COLUMNS else ""
        return f"{pad}{text}\n{caret}{REBUILT}"


def _compiles_to(fdef, code):
    """Whether `fdef` compiles to the instructions of `code`."""
    import sys

    from cujit.bytecode import _ops as _bytecode_ops
    from cujit.bytecode._decode import _decode, _imported_names, _normalised, _recompiled

    try:
        imported = _imported_names(_decode(code, _bytecode_ops.table(sys.version_info)))
        again = _recompiled(fdef, code, imported)
    except Exception:  # noqa: BLE001 (a tree that does not compile back is no source to show)
        return False
    return again is not None and again.co_code == code.co_code and _normalised(again) == _normalised(code)


def _caret(start, end, width):
    start = min(start, max(width, 0))
    return " " * start + "^" * max(1, min(end, max(width, start + 1)) - start)


def _statement_at(fdef, line, col):
    """The innermost statement starting on `line` (the last one starting at or before `col`), and how many
    statements hold it."""
    found = []

    def visit(body, depth):
        for node in body:
            if getattr(node, "lineno", None) == line:
                found.append((node, depth))
            for field in ("body", "orelse"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit(inner, depth + 1)

    visit(fdef.body, 0)
    if not found:
        return None, 0
    before = [f for f in found if f[0].col_offset <= col]
    return max(before, key=lambda f: (f[0].col_offset, f[1])) if before else found[0]


def _header(stmt):
    """A statement's text on its first line: a compound statement's header only."""
    if isinstance(stmt, ast.If):
        return f"if {ast.unparse(stmt.test)}:"
    if isinstance(stmt, ast.While):
        return f"while {ast.unparse(stmt.test)}:"
    if isinstance(stmt, ast.For):
        return f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:"
    return ast.unparse(stmt)


def _own_nodes(stmt):
    """The expressions of `stmt`, not of the statements nested in its body."""
    roots = (
        [stmt.test]
        if isinstance(stmt, (ast.If, ast.While))
        else [stmt.target, stmt.iter]
        if isinstance(stmt, ast.For)
        else [stmt]
    )
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.expr) and getattr(node, "lineno", None) is not None:
                yield node


def _span(text, node):
    """Where `node`'s text sits in `text` (the unparsed statement), or None."""
    part = ast.unparse(node)
    for candidate in (part, part[1:-1] if part.startswith("(") and part.endswith(")") else None):
        if candidate:
            at = text.find(candidate)
            if at >= 0:
                return at, at + len(candidate)
    return None
