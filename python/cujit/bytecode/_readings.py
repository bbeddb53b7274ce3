"""Other readings of a tree the bytecode reader rebuilt (_reader.py), tried in turn where the first reading
does not compile back to the function's bytecode: spellings CPython compiles to the same instructions that the
statement reader (_statements.py), which reads the code once from the front, cannot tell apart where it
reads them. Each reading is a rewrite of a copy of the tree; every one is checked as the first is, so a rewrite
that does not give the function's own instructions is never compiled."""

import ast
import copy

from cujit.bytecode._decode import same_tree

__all__ = ["readings"]


def readings(body):
    """The statements `body` (the reader's reading) with the returns CPython copied merged (_merge_returns) and
    the other readings of that first, where that differs from `body`, then `body` and its other readings."""
    merged = copy.deepcopy(body) if _merge_returns(body, dry=True) else None  # (copies only where needed)
    for base in [merged, body] if merged is not None and _merge_returns(merged) else [body]:
        yield base
        for rewrite in _REWRITES:
            yield from rewrite(base)


def _places(stmts):
    """(block, index) of each statement of `stmts` and of the blocks inside them, in order."""
    for i, s in enumerate(stmts):
        yield stmts, i
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                yield from _places(inner)


def _rewritten(body, select, change):
    """Copies of `body` with `change(block, index)` made at the places `select(block, index)` picks: at each
    place alone, then at all of them."""
    count = sum(1 for place in _places(body) if select(*place))
    for chosen in [{k} for k in range(count)] + ([set(range(count))] if count > 1 else []):
        other = copy.deepcopy(body)
        places = [place for place in _places(other) if select(*place)]
        for k in chosen:
            change(*places[k])
        yield other


def _located(node, at):
    """`node` (and its nodes without a location) located where `at` is."""
    for n in ast.walk(node):
        if getattr(n, "lineno", None) is None and isinstance(n, (ast.stmt, ast.expr)):
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(at, f))
    return node


def _merge_returns(body, dry=False):
    """A return CPython copied to the end of a block whose code runs into the original, read as a statement of
    that block, left out: the block runs into the original (`if c: ...` then `return v`, whose return CPython
    copies into the end of the if's arm, a while loop's exit or an else). A copy is where the original is (no
    return written in the source is where another is), and the original is the return the block's end runs
    into (the next statement, or its enclosing block's). Returns whether it left any out (`dry`: whether it
    would, leaving `body` as it is)."""
    changed = _merge_walk(body, None, dry)
    if not dry:
        _fill(body)
    return changed


def _merge_walk(stmts, tail, dry):
    """_merge_returns in `stmts`, whose end runs into return `tail` (None: into no return). Whether it left any
    out."""
    changed = False
    for i, s in enumerate(stmts):
        after = tail if i == len(stmts) - 1 else stmts[i + 1] if isinstance(stmts[i + 1], ast.Return) else None
        if isinstance(s, ast.If):
            changed |= _merge_walk(s.body, after, dry)
            changed |= _merge_walk(s.orelse, after, dry)
        elif isinstance(s, (ast.While, ast.For)):
            changed |= _merge_walk(s.body, None, dry)  # (its end goes back to the loop's start)
            changed |= _merge_walk(s.orelse, after, dry)
    if (
        stmts
        and tail is not None
        and isinstance(stmts[-1], ast.Return)
        and stmts[-1] is not tail
        and same_tree(stmts[-1], tail)
    ):
        if not dry:
            stmts.pop()
        changed = True
    return changed


def _fill(stmts):
    """A `pass` in each if or loop body left empty."""
    for s in stmts:
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                _fill(inner)
        if isinstance(s, (ast.If, ast.While, ast.For)) and not s.body:
            p = ast.Pass()
            p.lineno, p.col_offset, p.end_lineno, p.end_col_offset = s.lineno, s.col_offset, s.lineno, s.col_offset
            s.body = [p]


class _Lone(ast.NodeTransformer):
    """The `True or True` the reader wrote for each chosen constant arm (its `_lone`) as that constant."""

    def __init__(self, chosen):
        self.chosen = chosen

    def visit_BoolOp(self, node):
        if getattr(node, "_lone", None) is not None and node._index in self.chosen:
            return node._lone
        return self.generic_visit(node)


def _lone_constants(body, most=3):
    """The constant false arms the reader read as `True or True` (a conditional expression's in a condition,
    whose jump over it CPython left: _expressions.py's dead_tail) as the lone constant, each choice
    of them (all at once where there are more than `most`)."""
    marked = [n for s in body for n in ast.walk(s) if getattr(n, "_lone", None) is not None]
    if not marked:
        return
    for k, n in enumerate(marked):
        n._index = k
    count = len(marked)
    choices = (
        [set(range(count))]
        if count > most
        else [{k for k in range(count) if mask >> k & 1} for mask in range(1, 1 << count)]
    )
    for chosen in choices:
        other = copy.deepcopy(body)
        yield [_Lone(chosen).visit(s) for s in other]


def _ended_blocks(body):
    """The statement before a return in an `if True:` of its own: where the source had an `if` whose test is a
    constant that holds (`if 16.5:`), CPython compiles its body alone, but the body still ends a basic block,
    so the return after it is not copied into a jump to it (from a conditional expression's arm in the
    statement before the return). The compiler reads both as the statement."""

    def change(stmts, i):
        stmts[i - 1] = _located(ast.If(test=ast.Constant(value=True), body=[stmts[i - 1]], orelse=[]), stmts[i - 1])

    return _rewritten(body, lambda stmts, i: isinstance(stmts[i], ast.Return) and i > 0, change)


def _broken_loops(body):
    """An if with no else read as the while loop it was, whose body ends in its only break (`while c: ...;
    break`, or `if 0.001: break` there): such a loop has no jump back, so the reader reads it as an if, but
    CPython 3.13 puts a jump of its own at the loop's exit where the if had none. The compiler reads both as
    the if."""

    def change(stmts, i):
        node = stmts[i]
        last = node.body[-1]
        brk = ast.Break(
            lineno=last.end_lineno,
            col_offset=last.end_col_offset,
            end_lineno=last.end_lineno,
            end_col_offset=last.end_col_offset,
        )
        stmts[i] = _located(ast.While(test=node.test, body=node.body + [brk], orelse=[]), node)

    return _rewritten(
        body,
        lambda stmts, i: isinstance(stmts[i], ast.If) and not stmts[i].orelse and not _leaves(stmts[i].body),
        change,
    )


def _leaves(stmts):
    """Whether `stmts` break or continue the loop they are in (not one of their own)."""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, ast.If) and (_leaves(s.body) or _leaves(s.orelse)):
            return True
        if isinstance(s, (ast.While, ast.For)) and _leaves(s.orelse):
            return True
    return False


def _unfolded_returns(body):
    """A return of a constant as `return True and constant`: where the source returned a value CPython folded
    to a constant (`return 54 and False`, `return 79 if 84 else x`), its block was not small enough, when
    CPython copies small returning blocks into the jumps to them, to be copied (a break's jump to it stays),
    and `True and constant` folds as late. The compiler reads both as the constant."""

    def change(stmts, i):
        value = stmts[i].value
        stmts[i].value = _located(ast.BoolOp(op=ast.And(), values=[ast.Constant(value=True), value]), value)

    return _rewritten(
        body, lambda stmts, i: isinstance(stmts[i], ast.Return) and isinstance(stmts[i].value, ast.Constant), change
    )


def _arm_continues(body):
    """A `continue` after an if/else, last in its block, read as the end of one of the if's arms (first the
    else's, then the if's): where the if/else ends a loop's body, the other arm runs into the loop's jump back
    either way, but CPython jumps from it to a `continue` written after the if/else (a statement of its own
    line) where it only jumps back from the arm's own."""

    def select(stmts, i):
        return (
            i == len(stmts) - 2
            and isinstance(stmts[i], ast.If)
            and stmts[i].orelse
            and isinstance(stmts[-1], ast.Continue)
        )

    for field in ("orelse", "body"):

        def change(stmts, i, field=field):
            getattr(stmts[i], field).append(stmts.pop())

        yield from _rewritten(body, select, change)


_REWRITES = [_lone_constants, _ended_blocks, _broken_loops, _unfolded_returns, _arm_continues]
