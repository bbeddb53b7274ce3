"""The bytecode frontend's conditions: the conditional jumps of an if, while or assert test, or of a conditional
expression's test (`atoms`), where each goes when its value holds and when not, and the expression of and/or,
`not` and conditional expressions they make (`structure`), as CPython compiles a condition: each part jumps
where its value decides. Also the reader's exceptions. The expression reader (_expressions.py) builds on
it, and reads the values the parts test."""

import ast
import bisect
import heapq
import math

from cujit.bytecode import _ops as ops
from cujit.bytecode._decode import _Ins


class _Unreadable(Exception):
    """The bytecode has a shape this reader does not recover (a message says which)."""


class _Construct(Exception):
    """An instruction of a construct the source path rejects: the tree gets that construct's node."""

    def __init__(self, node, ins, statement=False):
        self.node, self.ins, self.statement = node, ins, statement


class _Comprehension(Exception):
    def __init__(self, ins):
        self.ins = ins


# What a guess (is this a loop's test? a conditional expression?) may end in: the guess is then wrong.
_GUESS_FAILED = (_Unreadable, _Construct, _Comprehension, IndexError, KeyError, AttributeError, TypeError)

_INVERSE = {
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE",
}


class _ConditionReader:
    """Conditions rebuilt from their jumps (a mixin of the expression reader, whose `expr` reads each part's
    value)."""

    def atoms(self, pc, stack, first_jump=None):
        """The conditional jumps of one condition from `pc`: [(start, expr, jump)], the index where the code
        after the condition starts (its fall-through), or None where `pc` starts no condition."""
        found = []
        while True:
            if self.constant_else(found, pc):  # `c if t else 0` after a constant true arm: jumps out too
                jump = self.ins[pc]
                found.append((pc, None, jump, pc + 1, jump.target, True))
                pc += 1
                continue
            s = list(stack)
            try:
                end = self.expr(pc, s, len(stack), raw=True)
            except _GUESS_FAILED:
                if found:
                    break
                raise
            x = self.ins[end]
            if x.op not in ops.CONDITIONAL_JUMPS or len(s) != len(stack) + 1 or x.target <= x.index:
                break
            node = s.pop()
            nxt = end + 1
            x, nxt = self.back_jump(found, x, nxt)
            cleanup = getattr(node, "_cleanup", None)
            if cleanup is not None and self.ins[nxt].op == "JUMP_FORWARD" and cleanup == nxt + 1:
                if self.chain_arm_ends(found, x, cleanup):  # a chained comparison ends the true arm
                    found.append((pc, node, x, cleanup + 2, self.ins[nxt].target, True))
                    pc = cleanup + 2
                    continue
                nxt = self.ins[nxt].target
            if self.arm_ends(found, x, nxt):  # the true arm of a conditional expression inside the condition
                found.append((pc, node, x, nxt + 1, self.ins[nxt].target, True))
                pc = nxt + 1
                continue
            found.append((pc, node, x, nxt, nxt, False))
            if self.constant_arm(found, x, nxt):  # `4 if c else x`: c's true arm jumps out, a constant
                jump = self.ins[nxt]
                found.append((nxt, None, jump, nxt + 1, jump.target, True))
                pc = nxt + 1
                continue
            if not self.more_atoms(found, nxt):
                break
            pc = nxt
        if not found:
            return None
        # The longest valid cut: after it, every jump goes to a later atom, the fall-through or one target.
        for k in range(len(found), 0, -1):
            if self.valid_cut(found[:k]):
                return found[:k]
        return found[:1]

    def back_jump(self, found, jump, nxt):
        """(jump, where the code after it starts) of the atom whose conditional jump is `jump`: CPython 3.12 has no
        backward conditional jumps, and turns one to the end of a loop's body (a jump back) into the inverse
        jump over a copy of that jump back (located on the jump: not a `continue`). Inside a condition that goes on past it (an earlier part jumps
        beyond), `POP_JUMP_IF_TRUE past; JUMP_BACKWARD head; past:` is read as a POP_JUMP_IF_FALSE to the jump
        back, each copy of it as the first one of the condition."""
        back = self.ins[nxt]
        if (
            jump.op not in _INVERSE
            or jump.target != nxt + 1
            or back.op != "JUMP_BACKWARD"
            or not self.implicit(back)
            or not any(t > nxt for a in found for t in (a[2].target, a[4]))
        ):
            return jump, nxt
        target = next((a[2].target for a in found if getattr(a[2], "back", None) == back.target), nxt)
        out = _Ins()
        for f in _Ins.__slots__[:-1]:  # (a decoded instruction has no `back`)
            setattr(out, f, getattr(jump, f))
        out.op, out.target, out.back = _INVERSE[jump.op], target, back.target
        return out, nxt + 1

    def arm_ends(self, found, jump, nxt):
        """Whether the JUMP_FORWARD at `nxt`, after the atom whose jump is `jump`, ends the true arm of a
        conditional expression used as a condition (`if (a if c else b):`): an earlier atom (its test) jumps
        to the code after it (the false arm), where the atom's own jump does not."""
        x = self.ins[nxt]
        return x.op == "JUMP_FORWARD" and jump.target != nxt + 1 and any(a[2].target == nxt + 1 for a in found)

    def chain_arm_ends(self, found, jump, cleanup):
        """Whether a chained comparison whose cleanup (POP_TOP, a jump on) is at `cleanup` ends the true arm of
        a conditional expression in a condition: an earlier atom (its test) jumps to the code after the
        cleanup (the false arm), where the comparison's own jump does not."""
        return (
            self.ins[cleanup + 1].op == "JUMP_FORWARD"
            and jump.target != cleanup + 2
            and self.ins[cleanup - 1].target != cleanup + 2
            and any(a[2].target == cleanup + 2 for a in found)
        )

    def constant_arm(self, found, jump, nxt):
        """Whether the JUMP_FORWARD at `nxt`, right after the conditional jump `jump` that goes past it, is a
        constant true arm of a conditional expression in the condition (`if (4 if c else x):`): it jumps out
        of the condition and the next atom, on the condition's line, follows."""
        x = self.ins[nxt]
        if x.op != "JUMP_FORWARD" or jump.target != nxt + 1 or x.target <= nxt + 1:
            return False
        after = self.ins[nxt + 1]
        line = after.pos.lineno - self.first_line + 1 if after.pos is not None and after.pos.lineno else None
        return line == found[0][1].lineno

    def constant_else(self, found, pc):
        """Whether the JUMP_FORWARD at `pc`, right after the true arm of a conditional expression in a condition
        (its value's jump, or a constant that jumps out: constant_arm), is the false arm of the same conditional
        expression, a constant (`(4 if c else 0)`, `(x if c else 100)`): the conditional expression's test jumps
        to it, and it jumps out of the condition too (the jump over the false arm CPython folded away is left
        there where more of the condition follows)."""
        x = self.ins[pc]
        return (
            bool(found)
            and found[-1][5]
            and found[-1][3] == pc
            and x.op == "JUMP_FORWARD"
            and x.target > pc + 1
            and any(a[2].target == pc for a in found if a[1] is not None)
        )

    @staticmethod
    def atom_exits(atoms):
        """Where the atoms' jumps and fall-throughs go, but to the atoms themselves."""
        starts = {a[0] for a in atoms[1:]}
        return ({a[2].target for a in atoms} | {a[4] for a in atoms[:-1]}) - starts

    def valid_cut(self, atoms):
        after = atoms[-1][3]
        # the condition falls through to its end; where it ends in a constant false arm that jumps out (`(a if
        # c else 0)`), its true arm jumps there
        if atoms[-1][4] != after and not (atoms[-1][1] is None and any(a[4] == after for a in atoms[:-1])):
            return False
        tracker = self.__dict__.get("_cut_exits")
        if tracker is None:
            tracker = self._cut_exits = _GrowingExits()
        return len(tracker.of(atoms) - {after}) <= 1

    def more_atoms(self, found, nxt):
        """Whether the condition goes on after `nxt`: it must where a jump so far lands beyond the next
        atom and before the other exit; otherwise only while the next atom is on the same line."""
        if not self.valid_cut(found):
            return True
        first_line = found[0][1].lineno
        x = self.ins[nxt]
        line = x.pos.lineno - self.first_line + 1 if x.pos is not None and x.pos.lineno else None
        return line == first_line

    def structure(self, atoms, true, false):
        """The expression of `atoms` that is true where control reaches `true` and false at `false`: and/or,
        `not` and conditional expressions nested as CPython compiles them in a condition (each part jumps
        where its value decides; a conditional expression's test goes to its arms)."""
        node = _Structure(self, atoms).search(true, false)
        if node is None:
            self.fail(atoms[0][2], "a condition")
        return node

    def dead_tail(self, constant):
        """`True or True` for the constant true arm `constant` of a conditional expression in a condition, where
        the jump over it stays in the bytecode though it goes to the next instruction: CPython leaves that jump
        when the arm is an `or` whose first value decides it (`3 or v`, its dead rest dropped), and removes it
        after a lone constant, in some places; in others both leave it, and jump elsewhere: the lone constant is
        another reading of it (_readings.py). The compiler reads both as the constant."""
        node = ast.BoolOp(op=ast.Or(), values=[constant, self.at(ast.Constant(value=True), None)])
        for n in node.values[1:] + [node]:
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(constant, f))
        node._serial = constant._serial
        node._lone = constant
        return node

    def test_of(self, node, jump):
        if jump.op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            none = self.at(ast.Constant(value=None), jump)
            return self.at(ast.Compare(left=node, ops=[ast.Is()], comparators=[none]), jump)
        return node

    def negate(self, node, jump):
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Is)
            and jump.op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
        ):
            out = ast.Compare(left=node.left, ops=[ast.IsNot()], comparators=node.comparators)
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset", "_serial"):
                setattr(out, f, getattr(node, f))
            return out
        out = ast.UnaryOp(op=ast.Not(), operand=node)
        for f in ("lineno", "col_offset", "end_lineno", "end_col_offset", "_serial"):
            setattr(out, f, getattr(node, f))
        return out

    def arms(self, atoms):
        """(true arm, false arm) of a condition: where control goes when it holds and when it does not, or None.
        The true arm usually follows the last jump; CPython 3.12 may put it at the jump's target instead and
        leave an artificial jump to the false arm after the condition."""
        after = atoms[-1][3]
        jumps = self.atom_exits(atoms) - {after}
        if not jumps:  # every jump goes where the condition falls through: it always holds (`if x or 2:`)
            return after, after
        if len(jumps) != 1:
            return None
        other = jumps.pop()
        x = self.ins[after]
        last = atoms[-1][2]
        if x.op in ("JUMP_FORWARD", "JUMP_BACKWARD") and other > after and last.target == other and self.implicit(x):
            return other, after
        return after, other


class _GrowingExits:
    """atom_exits of the list of atoms that atoms() grows, asked after each new atom: kept up to date as the list
    grows (the exits: jump targets, and the fall-throughs of all but the last atom, that are not the start of an
    atom but the first), so that each question costs what its new atoms add. Another list starts it afresh."""

    __slots__ = ("atoms", "count", "starts", "outside")

    def __init__(self):
        self.atoms, self.count, self.starts, self.outside = None, 0, set(), set()

    def of(self, atoms):
        if atoms is not self.atoms or len(atoms) < self.count:
            self.atoms, self.count, self.starts, self.outside = atoms, 0, set(), set()
        for k in range(self.count, len(atoms)):
            if k > 0:
                self.add(atoms[k - 1][4])  # the atom before is no longer the last: its fall-through counts
                self.starts.add(atoms[k][0])
                self.outside.discard(atoms[k][0])
            self.add(atoms[k][2].target)
        self.count = len(atoms)
        return self.outside

    def add(self, place):
        if place not in self.starts:
            self.outside.add(place)


def _spanning(node, parts):
    """`node` located from the first start to the last end of `parts` (a condition's parts need not come in
    the source's order)."""
    start = min((p.lineno, p.col_offset) for p in parts)
    end = max((p.end_lineno, p.end_col_offset) for p in parts)
    node.lineno, node.col_offset = start
    node.end_lineno, node.end_col_offset = end
    return node


def folds_to(node):
    """The number `node` (a constant the code loads) as an expression CPython 3.14 folds to it only after its
    code generator has used the constants of the tree (`+c`, `-c`): None where `node` is no such number."""
    if not (isinstance(node, ast.Constant) and getattr(node, "_loaded", False) and type(node.value) in (int, float)):
        return None
    negative = math.copysign(1.0, node.value) < 0
    operand = ast.Constant(value=-node.value if negative else node.value)
    out = ast.UnaryOp(op=ast.USub() if negative else ast.UAdd(), operand=operand)
    for n in (out, operand):
        for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            setattr(n, f, getattr(node, f, None))
    return out


def folded_tests(nodes):
    """CPython 3.14 folds constant expressions (`3 ** 20`, `+8`) after it has compiled away the tests that are
    constants in the tree, so a constant such an expression folds to stays a test in the bytecode: each number
    the code loads and tests (an if's, a while's, a conditional expression's, an assert's, through and, or and
    not) is written as an expression that folds to it (folds_to), not as the constant CPython would compile
    away (in place; `nodes`: a tree's, _nodes)."""

    def fold(e):
        if isinstance(e, ast.BoolOp):
            e.values = [fold(v) for v in e.values]
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            e.operand = fold(e.operand)
        elif isinstance(e, ast.IfExp):
            e.body, e.orelse = fold(e.body), fold(e.orelse)
        return folds_to(e) or e

    for node in nodes:
        if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)):
            node.test = fold(node.test)


class _Structure:
    """_ConditionReader.structure's search over how `atoms` nest, for `reader` (an object, not closures calling
    each other: those would be a reference cycle holding the reader until the garbage collector ran)."""

    def __init__(self, reader, atoms):
        self.reader, self.atoms = reader, atoms
        self.starts = [a[0] for a in atoms]
        self.memo = {}
        # Where each atom goes; for each place, the atoms that go there (in order); the atoms that only fall through.
        self.exit_sets = [frozenset(self.exits(k)) for k in range(len(atoms))]
        self.going_to = {}
        self.falling = []
        for k, places in enumerate(self.exit_sets):
            for place in places:
                self.going_to.setdefault(place, []).append(k)
            if k + 1 < len(atoms) and places == {self.starts[k + 1]}:
                self.falling.append(k)

    def search(self, t, f):
        """build(0, n, t, f), its suffixes built first (from the last): a long and/or chain then nests no deeper
        than its structure, and each part is built once (the memo; parts are built from strictly smaller
        ranges, so the order does not change what is found)."""
        n = len(self.atoms)
        for i in range(n - 1, 0, -1):
            self.build(i, n, t, f)
        return self.build(0, n, t, f)

    def ends(self, i, j, place):
        """The k in (i, j), in order, where a part [i, k) may end before `place` or the next atom: its last atom
        goes only to those (what build needs of any part: the last atom's exits are the part's targets)."""
        lists = [self.going_to.get(place, ()), self.falling]
        for k in heapq.merge(*(ks[bisect.bisect_left(ks, i) :] for ks in lists)):
            if k >= j - 1:
                return
            if self.exit_sets[k] <= {place, self.starts[k + 1]}:
                yield k + 1

    def exits(self, k):  # (where atom k goes when true, when false); a constant arm goes one way
        atom = self.atoms[k]
        jump, fall = atom[2], atom[4]
        if atom[1] is None:
            return jump.target, jump.target
        on_true = jump.op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE")
        return (jump.target, fall) if on_true else (fall, jump.target)

    def build(self, i, j, t, f, tail=True):
        # (`tail`: the jump a constant false arm leaves after atom j - 1, `x if c else 4`, is still free: an
        # enclosing conditional expression did not take it)
        key = (i, j, t, f, tail)
        if key not in self.memo:
            self.memo[key] = None
            if self.exit_sets[j - 1] <= {t, f}:  # (a part's last atom goes only to its targets)
                self.memo[key] = self.part(i, j, t, f, tail)
        return self.memo[key]

    def part(self, i, j, t, f, tail):
        atoms, starts, reader = self.atoms, self.starts, self.reader
        if j - i == 1 and atoms[i][1] is None:  # a constant arm: the way it goes
            way = self.exits(i)[0]
            return reader.at(ast.Constant(value=way == t), atoms[i][2]) if way in (t, f) and t != f else None
        if j - i == 1 and tail and atoms[i][5] and atoms[i][1] is not None and atoms[i][3] == atoms[i][4]:
            return None  # its jump to the next instruction is the trace of a constant false arm (`x if c else 4`)
        if j - i == 1:
            start, node, jump = atoms[i][:3]
            got = self.exits(i)
            if got == (t, f) and t != f:
                return reader.test_of(node, jump)
            if got == (f, t) and t != f:
                return reader.negate(reader.test_of(node, jump), jump)
            if got in ((t, t), (f, f)):  # `x or 2`, `x and 0`: CPython dropped the constant that decides
                test = reader.test_of(node, jump)
                decided = reader.at(ast.Constant(value=got == (t, t)), jump)
                decided.lineno, decided.col_offset = test.end_lineno, test.end_col_offset
                decided.end_lineno, decided.end_col_offset = test.end_lineno, test.end_col_offset
                out = ast.BoolOp(op=ast.Or() if got == (t, t) else ast.And(), values=[test, decided])
                out._serial = test._serial
                return _spanning(out, [test])
            return None
        last = atoms[j - 1]
        if j - i >= 3 and last[1] is None and atoms[j - 2][1] is None:  # `4 if c else 0`: both arms jump out
            node = self.if_exp(i, j - 2, j - 1, j, t, f, tail)
            if node is not None:
                return node
        for cls in (ast.Or, ast.And):
            for k in self.ends(i, j, t if cls is ast.Or else f):
                left = self.build(i, k, t, starts[k]) if cls is ast.Or else self.build(i, k, starts[k], f)
                right = self.build(k, j, t, f, tail) if left is not None else None
                if right is None:
                    continue
                values = []
                for v in (left, right):
                    values += v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, cls) else [v]
                node = ast.BoolOp(op=cls(), values=values)
                node._serial = values[0]._serial
                return _spanning(node, [left, right])  # (each spans its values already)
        if last[5] and last[1] is not None and last[3] in (t, f) and t != f and tail:
            # `x if c else 4`: the false arm, a constant, jumps out (a last constant part is `c or 0`)
            for k in range(i + 1, j):
                test = self.build(i, k, starts[k], last[3])
                body = self.build(k, j, t, f, False) if test is not None else None
                if body is not None:
                    orelse = reader.at(ast.Constant(value=last[3] == t), last[2])
                    if last[3] == last[4] and last[3] == t:  # the true arm's jump to the next instruction
                        orelse = reader.dead_tail(orelse)  # stays where the constant was `3 or v`
                    node = ast.IfExp(test=test, body=body, orelse=orelse)
                    node._serial = test._serial
                    return _spanning(node, [test, body])
        for k in range(i + 1, j - 1):  # test [i, k), true arm [k, m), false arm [m, j)
            for m in range(k + 1, j):
                node = self.if_exp(i, k, m, j, t, f, tail)
                if node is not None:
                    return node
        return None

    def if_exp(self, i, k, m, j, t, f, tail):
        test = self.build(i, k, self.starts[k], self.starts[m])
        body = self.build(k, m, t, f) if test is not None else None
        orelse = self.build(m, j, t, f, tail) if body is not None else None
        if orelse is None:
            return None
        node = ast.IfExp(test=test, body=body, orelse=orelse)
        node._serial = test._serial
        return _spanning(node, [test, body, orelse])
