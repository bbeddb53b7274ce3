"""The bytecode frontend: a function's ``ast.FunctionDef`` rebuilt from its code object, for functions with no
source (built with exec or compile(), run with ``python -c``, from .pyc-only installs, or whose file changed after
import). The tree is the one ``ast.parse`` gives for the function's source, so everything after it (the C++
frontend, typing, lowering) is shared with the source path and the PTX is the same.

How it reads the code, one module a step: _decode.py decodes the instructions (the only version-dependent
part, with the tables of _ops.py); _graph.py finds basic blocks, loops and post-dominators;
_expressions.py turns straight-line code into expressions on a symbolic stack and recovers conditional
expressions, ``and``/``or`` values and chained comparisons from the jumps, and _conditions.py the
conditions they test; _statements.py rebuilds statements, ``if``/``elif``/``else`` and loops with
``break``/``continue``/``else``; _readings.py gives the other spellings of the same bytecode the first
reading may miss. This module holds the entry points and the check.
Every rebuilt tree is checked: it is compiled again with ``compile()`` and its instructions must equal the
original's, so a function is never compiled from a tree that does not do what its bytecode does; where no
reading passes the check, the function is refused with an UnsupportedError that says so."""

import ast
import copy
import functools
import sys
import types

from cujit.bytecode import _expressions, _ops as ops
from cujit.bytecode._decode import (
    _arguments,
    _code_positions,
    _has_handlers,
    _imported_names,
    _nodes,
    _normalised,
    _place_paired_names,
    _recompiled,
)
from cujit.bytecode._excerpt import Excerpt as _Excerpt
from cujit.bytecode._readings import readings
from cujit.bytecode._conditions import _Comprehension, _Construct, folded_tests
from cujit.bytecode._statements import _Reader
from cujit.errors import UnsupportedError

__all__ = ["decompile", "function_source"]


def _fdef(name, code, body):
    if not body:
        body = [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    fdef = ast.FunctionDef(
        name=name, args=_arguments(code), body=body, decorator_list=[], returns=None, type_comment=None
    )
    if sys.version_info >= (3, 12):
        fdef.type_params = []
    fdef.lineno, fdef.col_offset, fdef.end_lineno, fdef.end_col_offset = 1, 0, 1, 0
    return fdef


def function_source(pyfunc):
    """The FunctionSource of `pyfunc` built from its code object. It has no source lines: errors name the file
    and line, and show the file's line where it still holds this code, else the statement rebuilt from the
    bytecode (_excerpt.py)."""
    from cujit import _core

    code = pyfunc.__code__
    fdef = decompile(pyfunc)
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    return _core.FunctionSource(
        fdef,
        pyfunc.__name__,
        qualname,
        pyfunc.__module__ or "<dynamic>",
        code.co_filename,
        [],
        code.co_firstlineno,
        _Excerpt(code, functools.partial(decompile, _bare(pyfunc))),
    )


# The reader recurses about six calls deep per level of nested expressions (a value, its conditional expression,
# the arms, their values...): a chain of 200 conditional expressions, which CPython's parser takes, needs more
# than the default limit of 1000 frames. From CPython 3.11 on, calls between Python functions take no C stack,
# so the limit is raised (never lowered: other threads may be deep in their own calls).
_READER_RECURSION = 8000


def _room_to_recurse():
    if sys.version_info >= (3, 11) and sys.getrecursionlimit() < _READER_RECURSION:
        sys.setrecursionlimit(_READER_RECURSION)


def _bare(pyfunc):
    """What decompile reads of `pyfunc`: its code, names and docstring. An error excerpt keeps it to rebuild the
    tree, which keeps neither the function's globals alive nor follows a later change of its __code__."""
    return types.SimpleNamespace(
        __code__=pyfunc.__code__,
        __name__=pyfunc.__name__,
        __doc__=pyfunc.__doc__,
        __qualname__=getattr(pyfunc, "__qualname__", pyfunc.__name__),
    )


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
            "a module file."
        )
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
                raise _Construct(
                    ast.With(items=[], body=[]), next(x for x in reader.ins if x.op == "BEFORE_WITH"), statement=True
                )
            raise _Construct(ast.Try(body=[], handlers=[], orelse=[], finalbody=[]), reader.ins[0], statement=True)
        _room_to_recurse()
        body = reader.function()
        # (on the first reading, which every other copies)
        supers = ops.SUPERINSTRUCTIONS.get(version)
        paired = bool(supers) and any(x.name in supers for x in reader.ins)
        tested = ops.ARGUMENTS[version]["late_folding"] and any(
            x.op == "LOAD_CONST" and y.op in ops.CONDITIONAL_JUMPS for x, y in zip(reader.ins, reader.ins[1:])
        )
        nodes = _nodes(ast.Module(body=body, type_ignores=[])) if paired or tested else []
        if paired:
            _place_paired_names(nodes)
        if tested:
            folded_tests(nodes)
    except _Comprehension as e:
        return _rejected(reader, name, code, ast.ListComp(elt=None, generators=[]), e.ins, False)
    except _Construct as e:
        return _rejected(reader, name, code, e.node, e.ins, e.statement)
    except Exception as exc:  # noqa: BLE001 (any shape this reader gets wrong is a refusal, never a crash)
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available and its bytecode has a shape "
            f"cujit's bytecode reader does not recover ({exc}). Define the function in a module file."
        ) from None
    first = []
    doc = pyfunc.__doc__
    if isinstance(doc, str) and code.co_consts and code.co_consts[0] == doc and name != "<lambda>":
        docstring = ast.Expr(value=ast.Constant(value=doc))  # the first statement, as in the source
        docstring.lineno, docstring.end_lineno, docstring.col_offset, docstring.end_col_offset = 2, 2, 4, 4
        docstring.value.lineno, docstring.value.end_lineno = 2, 2
        docstring.value.col_offset, docstring.value.end_col_offset = 4, 4
        first = [docstring]
    stored_free = [v for v in code.co_freevars if v in reader.stored]
    if stored_free:  # an inner function's stores into its enclosing function's variables
        declared = ast.Nonlocal(names=stored_free)
        declared.lineno, declared.end_lineno, declared.col_offset, declared.end_col_offset = 2, 2, 4, 4
        first = first + [declared]
    dead = _dead_locals(code, reader.stored)
    failed = None
    for k, reading in enumerate(readings(body)):  # the reader's reading, then other spellings of the same bytecode
        # the dead locals where their assignments were, else first (where CPython's blocks then differ)
        tries = [_placed(dead, code, reading), _top(dead) + reading] if dead and k == 0 else [_top(dead) + reading]
        for statements in tries:
            fdef = _fdef(name, code, first + statements)
            if reader.unsupported:  # nodes made only to be rejected (a lambda's body...) may have no location
                return ast.fix_missing_locations(fdef)
            try:
                _check(fdef, code, qualname, _imported_names(reader.ins))
            except UnsupportedError as exc:
                failed = failed or exc.with_traceback(None)  # (kept with its traceback: a cycle through this frame)
                continue
            return fdef
    try:
        raise failed
    finally:
        failed = None  # (an exception this frame held as it raised it: a cycle through the frame)


def _dead_locals(code, stored):
    """The locals the compiler dropped every assignment of (they were in code that never runs), in the code's
    order of its locals."""
    params = set(
        code.co_varnames[
            : code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        ]
    )
    return [v for v in code.co_varnames if v not in stored and v not in params]


def _never(names, at=None):
    """`if False: name = None` for each of `names`: the names stay locals, as in the source, whose builder
    collects a function's locals before it leaves out the branches that never run. Located at `at`'s start
    (the first line where there is none)."""
    line, col = (at.lineno, at.col_offset) if at is not None else (1, 0)
    assigns = [ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(value=None)) for v in names]
    node = ast.If(test=ast.Constant(value=False), body=assigns, orelse=[])
    for n in ast.walk(node):
        if isinstance(n, (ast.stmt, ast.expr)):
            n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = line, line, col, col
    return node


def _top(dead):
    return [_never(dead)] if dead else []


def _placed(dead, code, body):
    """A copy of `body` with the assignments of the `dead` locals where the source had them among the others,
    so the compiler numbers the function's locals as from the source: before the first assignment (in the
    order the compiler collects them: each statement's targets, then its blocks) of a local CPython numbers
    after it (co_varnames follows the source), or last."""
    body = copy.deepcopy(body)
    number = {v: k for k, v in enumerate(code.co_varnames)}
    places = [(stmts, i, s) for stmts, i, s in _assignments(body)]
    before = {}
    for v in dead:
        at = next(
            ((stmts, s) for stmts, i, s in places if any(number.get(t, -1) > number[v] for t in _targets(s))), None
        )
        before.setdefault(id(at[1]) if at else None, (at, []))[1].append(v)
    for at, names in before.values():
        if at is None:
            body.append(_never(names, body[-1] if body else None))
        else:
            stmts, s = at
            stmts.insert(next(i for i, x in enumerate(stmts) if x is s), _never(names, s))
    return body


def _assignments(stmts):
    """(block, index, statement) of each statement of `stmts` and of its blocks, in the compiler's order."""
    for i, s in enumerate(stmts):
        yield stmts, i, s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                yield from _assignments(inner)


def _targets(s):
    """The names statement `s` itself assigns."""
    targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, (ast.AugAssign, ast.For)) else []
    names, work = [], list(targets)
    while work:  # names, and the names in tuples and lists of them (not a subscript's or attribute's)
        t = work.pop(0)
        if isinstance(t, ast.Name):
            names.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            work[:0] = t.elts
    return names


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
    from cujit.bytecode._decode import _Position
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
    if (
        again is not None
        and again.co_code == code.co_code
        and again.co_consts == code.co_consts
        and again.co_names == code.co_names
    ):
        return  # the same bytes: no need to compare instruction by instruction
    if again is None or _normalised(again) != _normalised(code):
        raise UnsupportedError(
            f"cannot compile {qualname!r}: its source code is not available and the function cujit rebuilt from "
            f"its bytecode does not compile back to the same bytecode ({why}). Define the function in a module "
            "file."
        )


_expressions.nested_decompile = decompile  # inner functions' code objects are read by the same reader
