"""The bytecode frontend: a function's ``ast.FunctionDef`` rebuilt from its code object, for functions with no
source (built with exec or compile(), run with ``python -c``, from .pyc-only installs, or whose file changed after
import). The tree is the one ``ast.parse`` gives for the function's source, so everything after it (the C++
frontend, typing, lowering) is shared with the source path and the PTX is the same.

How it reads the code, one module a step: _bytecode_decode.py decodes the instructions (the only version-dependent
part, with the tables of _bytecode_ops.py); _bytecode_graph.py finds basic blocks, loops and post-dominators;
_bytecode_expressions.py turns straight-line code into expressions on a symbolic stack and recovers conditions,
conditional expressions, ``and``/``or`` values and chained comparisons from the jumps; _bytecode_statements.py
rebuilds statements, ``if``/``elif``/``else`` and loops with ``break``/``continue``/``else``. This module holds
the entry points and the check.
Every rebuilt tree is checked: it is compiled again with ``compile()`` and its instructions must equal the
original's, so a function is never compiled from a tree that does not do what its bytecode does; one that fails
the check is refused with an UnsupportedError that says so."""

import ast
import sys
import types

from cujit import _bytecode_ops as ops
from cujit._bytecode_decode import (_arguments, _code_positions, _has_handlers, _imported_names, _normalised,
                                    _place_paired_names, _recompiled)
from cujit._bytecode_excerpt import Excerpt as _Excerpt
from cujit._bytecode_expressions import _Comprehension, _Construct
from cujit._bytecode_statements import _Reader
from cujit.errors import UnsupportedError

__all__ = ["decompile", "function_source"]


def _fdef(name, code, body):
    if not body:
        body = [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    fdef = ast.FunctionDef(name=name, args=_arguments(code), body=body, decorator_list=[],
                           returns=None, type_comment=None)
    if sys.version_info >= (3, 12):
        fdef.type_params = []
    fdef.lineno, fdef.col_offset, fdef.end_lineno, fdef.end_col_offset = 1, 0, 1, 0
    return fdef


def function_source(pyfunc):
    """The FunctionSource of `pyfunc` built from its code object. It has no source lines: errors name the file
    and line, and show the file's line where it still holds this code, else the statement rebuilt from the
    bytecode (_bytecode_excerpt.py)."""
    from cujit import _core
    code = pyfunc.__code__
    fdef = decompile(pyfunc)
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    return _core.FunctionSource(fdef, pyfunc.__name__, qualname, pyfunc.__module__ or "<dynamic>",
                                code.co_filename, [], code.co_firstlineno, _Excerpt(code, fdef))


def decompile(pyfunc):
    """The ast.FunctionDef of `pyfunc` rebuilt from its code object (lines relative to its first line)."""
    code = pyfunc.__code__
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    version = sys.version_info[:2]
    table = ops.table(version)
    if table is None:
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available, and cujit reads the bytecode of "
            f"CPython {ops.covered()} only (this is CPython {version[0]}.{version[1]}). Define the function in "
            "a module file.")
    name = pyfunc.__name__
    reader = _Reader(pyfunc, code, table)
    if code.co_flags & (0x20 | 0x80 | 0x200):  # a generator or coroutine: rejected at its first yield or await
        where = next((x for x in reader.ins if x.op in ("YIELD_VALUE", "SEND")), reader.ins[0])
        node = ast.Yield(value=None) if code.co_flags & 0x20 else ast.Await(value=ast.Constant(value=None))
        return _rejected(reader, name, code, node, where, False)
    try:
        if _has_handlers(code, reader.ins):
            kinds = {x.op for x in reader.ins}
            if "LOAD_FAST_AND_CLEAR" in kinds:
                raise _Comprehension(next(x for x in reader.ins if x.op == "LOAD_FAST_AND_CLEAR"))
            if "BEFORE_WITH" in kinds:
                raise _Construct(ast.With(items=[], body=[]), next(x for x in reader.ins if x.op == "BEFORE_WITH"),
                                 statement=True)
            raise _Construct(ast.Try(body=[], handlers=[], orelse=[], finalbody=[]), reader.ins[0], statement=True)
        body = reader.function()
    except _Comprehension as e:
        return _rejected(reader, name, code, ast.ListComp(elt=None, generators=[]), e.ins, False)
    except _Construct as e:
        return _rejected(reader, name, code, e.node, e.ins, e.statement)
    except Exception as exc:  # noqa: BLE001 (any shape this reader gets wrong is a refusal, never a crash)
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available and its bytecode has a shape "
            f"cujit's bytecode reader does not recover ({exc}). Define the function in a module file.") from None
    body = _dead_locals(code, reader.stored) + body
    doc = pyfunc.__doc__
    if isinstance(doc, str) and code.co_consts and code.co_consts[0] == doc and name != "<lambda>":
        docstring = ast.Expr(value=ast.Constant(value=doc))  # the first statement, as in the source
        docstring.lineno, docstring.end_lineno, docstring.col_offset, docstring.end_col_offset = 2, 2, 4, 4
        docstring.value.lineno, docstring.value.end_lineno = 2, 2
        docstring.value.col_offset, docstring.value.end_col_offset = 4, 4
        body = [docstring] + body
    fdef = _fdef(name, code, body)
    _place_paired_names(fdef)
    if reader.unsupported:  # nodes made only to be rejected (a lambda's body...) may have no location
        ast.fix_missing_locations(fdef)
    if not reader.unsupported:
        _check(fdef, code, qualname, _imported_names(reader.ins))
    return fdef


def _dead_locals(code, stored_names):
    """`if False: name = None` (first in the body) for each local the compiler dropped every assignment of (they
    were in code that never runs): the name stays a local, as in the source, whose builder saw the assignment
    before pruning the branch."""
    stored = stored_names
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4)
                                  + bool(code.co_flags & 8)])
    dead = [v for v in code.co_varnames if v not in stored and v not in params]
    if not dead:
        return []
    line = 1
    assigns = [ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(value=None)) for v in dead]
    node = ast.If(test=ast.Constant(value=False), body=assigns, orelse=[])
    for n in ast.walk(node):
        if isinstance(n, (ast.stmt, ast.expr)):
            n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = line, line, 0, 0
    return [node]


def _rejected(reader, name, code, node, ins, statement):
    """A tree whose only statement is the construct the source path rejects, at its location."""
    if isinstance(node, ast.Try):
        ins = _try_keyword(code) or ins
    reader.at(node, ins)
    stmt = node if statement else reader.at(ast.Expr(value=node), ins)
    return ast.fix_missing_locations(_fdef(name, code, [stmt]))


def _try_keyword(code):
    """Where a try statement starts: the NOP CPython leaves on its keyword spans the whole statement (the
    reader drops NOPs). None where there is none."""
    from cujit._bytecode_decode import _Position
    import dis
    nop = dis.opmap["NOP"]
    for (line, end_line, col, end_col), k in zip(_code_positions(code), range(0, len(code.co_code), 2)):
        if code.co_code[k] == nop and line is not None and end_line is not None and end_line > line:
            return types.SimpleNamespace(pos=_Position(line, end_line, col, end_col))
    return None


def _check(fdef, code, qualname, imported):
    """Compiles the rebuilt tree again: its instructions must be the original's."""
    try:
        again = _recompiled(fdef, code, imported)  # compile() reads the tree and leaves it as it is
    except (SyntaxError, ValueError, TypeError) as exc:
        again = None
        why = str(exc)
    else:
        why = "its instructions differ"
    if again is not None and again.co_code == code.co_code and again.co_consts == code.co_consts and \
            again.co_names == code.co_names:
        return  # the same bytes: no need to compare instruction by instruction
    if again is None or _normalised(again) != _normalised(code):
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available and the function cujit rebuilt from "
            f"its bytecode does not compile back to the same bytecode ({why}). Define the function in a module "
            "file.")
