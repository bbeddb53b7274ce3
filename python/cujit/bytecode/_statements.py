"""The bytecode frontend's statement reader: simple statements (assignments, returns, raises, expression
statements), if/elif/else and asserts, while and for loops with break/continue/else, recovered from the jumps
with the join of each branch found by post-dominators (_graph.py)."""

import ast
import dis

from cujit.bytecode import _ops as ops
from cujit.bytecode._decode import _added_by_lines, same_tree
from cujit.bytecode._conditions import _GUESS_FAILED
from cujit.bytecode._expressions import (
    _STATEMENT_ENDS,
    _STORES,
    _Aug,
    _ExpressionReader,
    _ForItem,
    _Group,
    _Slot,
    _end_after_start,
)
from cujit.bytecode._graph import _Loop

# Whether positions have columns (3.11 on); 3.10's have lines only, and tell a statement from what CPython added
# by lines (_added_by_lines).
_COLUMNS = ops.rule("columns", True)
_ROTATED_LOOPS = ops.rule("rotated_loops", True)


class _Reader(_ExpressionReader):
    """The statements of a function's body, from its instructions."""

    # -- statements --------------------------------------------------------------------------
    def function(self):
        body, how = self.region(0, None, None)
        return _conditional_stores(body)

    def stmt_at(self, node, ins):
        return self.at(node, ins)

    def assignment_at(self, node, ins, target):
        """An assignment located as its source is: it starts where its (first) target does, not its value (the
        column a debug kernel's .loc carries for the statement)."""
        node = self.stmt_at(node, ins)
        if getattr(target, "lineno", None) is not None:
            node.lineno, node.col_offset = target.lineno, target.col_offset
        return node

    def region(self, pc, stop, loop):
        """The statements from `pc` until `stop` is reached. Returns (statements, how it ends): 'stop',
        'return', 'implicit_return', 'raise', 'break', 'continue' or 'loop_end' (the last jump back)."""
        out = []
        ins = self.ins
        entry = True
        while True:
            if pc == stop:
                return out, "stop"
            if loop is not None and pc == loop.after and self.graph.block_of[pc] not in loop.body:
                # where a while loop's breaks go, reached from its body: a break CPython sent there straight
                # (the jump of a chained comparison's test to its if's body, a break)
                out.append(self.stmt_at(ast.Break(), ins[pc - 1]))
                return out, "break"
            if loop is not None and pc in loop.brks:
                # located on its own jump (or the for loop's iterator drop), else on the code before it
                own = ins[pc].op in ("JUMP_FORWARD", "POP_TOP") or pc == 0
                out.append(self.stmt_at(ast.Break(), ins[pc] if own else ins[pc - 1]))
                return out, "break"
            x = ins[pc]
            if x.op == "<end>":
                return out, "stop"
            if x.op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP"):
                t = x.target
                if loop is not None and t in loop.cont:
                    if not self.explicit_continue(x):
                        nxt = ins[x.index + 1]
                        if (
                            out
                            and nxt.op == x.op
                            and nxt.target == t
                            and self.implicit(x)
                            and ins[x.index - 1].target is None
                        ):  # (not the false arm 3.12 left after a jump)
                            self.constant_if(out, x)
                        return out, "loop_end"
                    out.append(self.stmt_at(ast.Continue(), x))
                    return out, "continue"
                if loop is not None and t in loop.brks:
                    out.append(self.stmt_at(ast.Break(), x))
                    return out, "break"
                if t == stop:
                    return out, "stop"
                if x.op != "JUMP_FORWARD":
                    self.fail(x, "a backward jump")
                pc = t
                continue
            looped = None if (loop is not None and pc == loop.start and entry) else self.loop_at(pc, loop)
            entry = False
            if looped is not None:
                stmt, nxt = looped
                out.append(stmt)
                if nxt is None:
                    return out, "return"
            else:
                nxt, how = self.statement(pc, stop, loop, out)
                if how is not None:
                    return out, how
            if nxt is not None and nxt <= pc:  # (never read the same code twice: a shape misread, not a hang)
                self.fail(ins[pc], "code the statements after it lead back to")
            pc = nxt

    def explicit_continue(self, x):
        """Whether a jump back to a loop's start is a `continue` statement (located on the keyword), not the end
        of the loop's body that CPython sent straight there."""
        if not _COLUMNS:
            return not _added_by_lines(self.ins, x)
        return (
            _spans(x, "continue")
            and not self.implicit(x)
            and not any(y.pos == x.pos and y.target is None for y in self.ins[:-1])
        )  # (an 8-column test: `a[k] > 0`)

    def constant_if(self, out, x):
        """The last statement of `out` as `if True: ... else: pass`: the jump `x` back to the loop's start right
        before another (where the code falls through to) is the end of the body of an if whose test always
        holds and whose else CPython dropped (`if 71: v = b else: ...`); the compiler reads both as the
        statement."""
        body = [out.pop()]
        first = body[0]
        node = ast.If(test=ast.Constant(value=True), body=body, orelse=[ast.Pass()])
        for n in (node, node.test, node.orelse[0]):
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(first, f))
        out.append(node)

    def implicit(self, x):
        """A jump or return CPython added (it has the location of the instruction before it)."""
        if not _COLUMNS:
            return _added_by_lines(self.ins, x)
        prev = self.ins[x.index - 1] if x.index > 0 else None
        return prev is not None and prev.pos == x.pos

    def statement(self, pc, stop, loop, out):
        """One simple statement, or an if statement, from `pc`. Returns (next pc, how the region ends or
        None)."""
        ins = self.ins
        start = pc
        stack = []
        pending = []
        while True:
            pc = self.expr(pc, stack, 0, value_start=start)
            x = ins[pc]
            op = x.op
            if op in ops.CONDITIONAL_JUMPS and len(stack) == 1 and not pending:
                return self.conditional(start, stop, loop, out)
            if op in ("RETURN_VALUE", "RETURN_CONST"):
                if op == "RETURN_CONST":
                    value = self.const(x.argval, x)
                else:
                    value = stack.pop()
                if stack:
                    self.fail(x, "a return")
                if isinstance(value, ast.Constant) and value.value is None and self.copied_break(x, loop):
                    out.append(self.stmt_at(ast.Break(), x))
                    return pc + 1, "break"
                if isinstance(value, ast.Constant) and value.value is None and self.implicit_return(x):
                    return pc + 1, "implicit_return"
                if op == "RETURN_VALUE" and "RETURN_CONST" in dis.opmap and not self.bare_return(x, value):
                    value = self.unfolded(value)  # 3.12 returns a constant with RETURN_CONST unless folding left it
                node = self.stmt_at(ast.Return(value=None if self.bare_return(x, value) else value), x)
                node.lineno, node.col_offset = self.line_of(x), x.pos.col_offset or 0
                _end_after_start(node)
                out.append(node)
                return pc + 1, "return"
            if op == "RAISE_VARARGS":
                if x.arg != 1:
                    out.append(self.stmt_at(ast.Raise(exc=None, cause=None), x))
                    return pc + 1, "raise"
                out.append(self.stmt_at(ast.Raise(exc=stack.pop(), cause=None), x))
                return pc + 1, "raise"
            if op == "POP_TOP":
                if not stack and loop is not None and loop.is_for:
                    # break out of a for loop: the iterator is dropped, then the code after the loop
                    out.append(self.stmt_at(ast.Break(), x))
                    return pc + 1, "break"
                value = stack.pop()
                if stack:
                    self.fail(x, "an expression statement")
                out.append(self.stmt_at(ast.Expr(value=value), ins[start]))
                return pc + 1, None
            if op == "GET_ITER" and ins[pc + 1].op == "FOR_ITER" and len(stack) == 1:
                out.append(self.for_loop(start, pc, stack.pop(), loop))
                return self.after_for, None
            if op in _STORES:
                pc = self.store(pc, stack, pending)
                if not stack:
                    out.append(self.assignment(pending, ins[start]))
                    return pc, None
                continue
            if (
                op == "SWAP"
                and x.argval == 2
                and len(stack) == 1
                and ins[pc + 1].op == "POP_TOP"
                and loop is not None
                and loop.is_for
            ):
                pc += 2  # `return v` in a for loop: v goes under the iterator, which is dropped
                continue
            if op == "LOAD_ASSERTION_ERROR":
                self.fail(x, "an assert")
            if op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP") and not stack:
                return pc, None
            self.fail(x, "an instruction")

    def line_of(self, x):
        return (x.pos.lineno if x.pos is not None and x.pos.lineno else self.first_line) - self.first_line + 1

    def implicit_return(self, x):
        prev = self.ins[x.index - 1] if x.index > 0 else None
        if x.pos is None or x.pos.lineno is None:
            return True
        if not _COLUMNS:
            return _added_by_lines(self.ins, x)
        width = (x.pos.end_col_offset or 0) - (x.pos.col_offset or 0)
        if prev is not None and prev.op == "LOAD_CONST" and prev.argval is None and prev.pos == x.pos:
            prev = self.ins[x.index - 2] if x.index > 1 else None
        if width in (6, 11) and any(
            y.pos == x.pos and y.op not in ("RETURN_VALUE", "RETURN_CONST", "LOAD_CONST") for y in self.ins[:-1]
        ):
            return True  # a copy located on an expression six columns wide (`k < n2`) that other code has too
        return (prev is not None and prev.pos == x.pos) or width not in (6, 11)

    def copied_break(self, x, loop):
        """Whether the `return None` `x` is a `break` out of a while loop that CPython sent straight to the
        function's implicit return (a copy of it, located on the `break`: `while True: ... if c: break` at the end
        of a kernel). Told by columns: 3.10 has none."""
        return _COLUMNS and loop is not None and not loop.is_for and _spans(x, "break")

    def bare_return(self, x, value):
        if not _COLUMNS:  # `return` and `return None` read the same: the former, more often written
            return isinstance(value, ast.Constant) and value.value is None
        return (
            isinstance(value, ast.Constant)
            and value.value is None
            and x.pos is not None
            and (x.pos.end_col_offset or 0) - (x.pos.col_offset or 0) == 6
        )

    def store(self, pc, stack, pending):
        """A store of the top value: records (value, target) in `pending`; unpacking pushes slots."""
        x = self.ins[pc]
        op = x.op
        if op == "UNPACK_SEQUENCE":
            value = stack.pop()
            group = _Group(value, x.argval, x)
            for i in reversed(range(x.argval)):
                stack.append(_Slot(group, i))
            return pc + 1
        if op in ("STORE_FAST", "STORE_GLOBAL", "STORE_NAME"):
            value = stack.pop()
            target = self.at(ast.Name(id=x.argval, ctx=ast.Store()), x)
            self.stored.add(x.argval)
        elif op == "STORE_SUBSCR":
            index, container, value = stack.pop(), stack.pop(), stack.pop()
            target = self.at(ast.Subscript(value=container, slice=index, ctx=ast.Store()), x)
        elif op == "STORE_SLICE":
            hi, lo, container, value = stack.pop(), stack.pop(), stack.pop(), stack.pop()
            s = self.slice(x, lo, hi)
            target = self.at(ast.Subscript(value=container, slice=s, ctx=ast.Store()), x)
        else:  # STORE_ATTR
            obj, value = stack.pop(), stack.pop()
            target = self.at(ast.Attribute(value=obj, attr=x.argval, ctx=ast.Store()), x)
        self.bind(value, target, pending)
        return pc + 1

    def bind(self, value, target, pending):
        if isinstance(value, _Slot):
            group = value.group
            group.targets[value.index] = target
            if all(t is not None for t in group.targets):
                tup = ast.Tuple(elts=group.targets, ctx=ast.Store())
                first = group.targets[0]
                for f in ("lineno", "col_offset"):
                    setattr(tup, f, getattr(first, f))
                tup.end_lineno, tup.end_col_offset = group.targets[-1].end_lineno, group.targets[-1].end_col_offset
                self.bind(group.value, tup, pending)
            return
        pending.append((value, target))

    def assignment(self, pending, first):
        values = []
        for v, _ in pending:
            if not any(v is w for w in values):
                values.append(v)
        if len(values) == 1:
            value = values[0]
            targets = [t for _, t in pending]
            if isinstance(value, ast.FunctionDef) and len(targets) == 1 and isinstance(targets[0], ast.Name):
                value.name = targets[0].id  # `def f(...)` in the function: MAKE_FUNCTION then its name's store
                return value
            if isinstance(value, _Aug):
                if len(targets) != 1:
                    self.fail(first, "an augmented assignment")
                target = targets[0]
                if isinstance(target, ast.Name):
                    pass
                elif isinstance(target, ast.Subscript):
                    target.value, target.slice = value.target.value, value.target.slice
                elif isinstance(target, ast.Attribute):
                    target.value = value.target.value
                node = ast.AugAssign(target=target, op=value.op, value=value.value)
                return self.assignment_at(node, first, target)
            if isinstance(value, _ForItem):
                node = ast.Assign(targets=targets, value=value)
                return node
            node = ast.Assign(targets=targets, value=value)
            return self.assignment_at(node, first, targets[0])
        # a, b = x, y: the values in the order they were computed, each with the target it went to
        values.sort(key=lambda v: getattr(v, "_serial", 0))
        targets = []
        for v in values:
            ts = [t for w, t in pending if w is v]
            if len(ts) != 1:
                self.fail(first, "an assignment")
            targets.append(ts[0])
        lhs = ast.Tuple(elts=targets, ctx=ast.Store())
        rhs = ast.Tuple(elts=values, ctx=ast.Load())
        for node, items in ((lhs, targets), (rhs, values)):
            node.lineno, node.col_offset = items[0].lineno, items[0].col_offset
            node.end_lineno, node.end_col_offset = items[-1].end_lineno, items[-1].end_col_offset
        return self.assignment_at(ast.Assign(targets=[lhs], value=rhs), first, lhs)

    def conditional(self, start, stop, loop, out):
        """An if statement (or an assert) whose condition starts at `start`."""
        read = self.statement_atoms.pop(start, None)
        atoms = read[0] if read is not None and read[1] == len(self.ternary_tests) else self.atoms(start, [])
        if not atoms:
            self.fail(self.ins[start], "a condition")
        found = self.arms(atoms)
        if found is None:
            self.fail(atoms[0][2], "a condition")
        after, false = found
        ins = self.ins
        if ins[after].op == "LOAD_ASSERTION_ERROR":
            return self.assertion(atoms, after, false, out)
        node, jump = atoms[0][1], atoms[0][2]
        if (
            after == false
            and len(atoms) == 1
            and node is not None
            and jump.target == after
            and jump.op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_NOT_NONE")
        ):
            # `if c: pass`: the test jumps past a body that left no code, to where it falls through
            test = self.test_of(node, jump)
            stmt = self.stmt_at(ast.If(test=test, body=[self.stmt_at(ast.Pass(), jump)], orelse=[]), jump)
            stmt.lineno, stmt.col_offset = test.lineno, test.col_offset
            _end_after_start(stmt)
            out.append(stmt)
            return after, None
        test = None
        for true, other in ((after, false), (false, after)):
            if (
                true != other
                and other == atoms[-1][3]
                and ins[other].op == "JUMP_FORWARD"
                and ins[other].target == true
                and self.line_of(ins[other]) == self.line_of(atoms[-1][2])
            ):
                # each way goes to `true`, one through the jump a conditional expression's true arm left when
                # CPython folded both arms away, constants that hold (`if (44 if c else 62):`): it always holds
                test = self.holds_either_way(self.structure(atoms, other, true), atoms[-1][2])
                after = false = true
                break
        if test is None:
            test = self.structure(atoms, after, false)
        node = self.stmt_at(ast.If(test=test, body=[], orelse=[]), atoms[0][2])
        node.lineno, node.col_offset = test.lineno, test.col_offset
        _end_after_start(node)
        if after == false:  # it always holds (`if x or 2:`): the code after it is its body, as the compiler reads
            node.body, how = self.region(after, stop, loop)  # it so (x tested, then the body)
            node.body = node.body or [self.stmt_at(ast.Pass(), ins[after])]
            out.append(node)
            return stop, how
        g = self.graph
        follow_block = g.ipdom(g.block_of[atoms[0][2].index], loop)
        follow = g.starts[follow_block] if follow_block is not None else None
        if follow is None and false - 1 >= after:
            # Paths that meet only at a return: an arm that jumps over the other shows where the if ends.
            skip = ins[false - 1]
            if (
                skip.op == "JUMP_FORWARD"
                and skip.target > false
                and not (
                    loop is not None
                    and (
                        skip.index in loop.brks
                        or skip.index - 1 in loop.brks
                        or skip.target in loop.brks
                        or skip.target in loop.cont
                    )
                )
            ):
                follow = skip.target
            elif (
                loop is not None
                and false not in loop.brks
                and g.block_of[false] in loop.body
                and (
                    (skip.target is None and skip.op not in ops.TERMINAL)
                    or
                    # code in the true arm goes on at the false target: a for loop that ends it (3.11), an
                    # if that ends it in a continue (an if/else's true arm never goes to its else)
                    any(ins[i].target == false for i in range(after, false - 1))
                    or (skip.op == "JUMP_FORWARD" and (skip.index in loop.brks or skip.index - 1 in loop.brks))
                )
            ):
                follow = false  # the true arm runs into the false target, or ends in a break: the if ends there
                #                 (an else after a break is the code after the if to the compiler)
            elif loop is not None and skip.op in ("JUMP_BACKWARD", "JUMP") and skip.target in loop.cont:
                # the true arm ends in a continue: a jump from it past the false arm, to code of the loop, goes
                # to the code after the if (`if x: continue` ending the arm, whose false jump goes there)
                past = [
                    ins[i].target
                    for i in range(after, false)
                    if ins[i].target is not None
                    and ins[i].target > false
                    and g.block_of[ins[i].target] in loop.body
                    and ins[i].target not in loop.brks
                ]
                follow = min(past, default=None)
        if stop is not None and follow is not None and follow > stop:
            follow = stop
        node.body, how = self.region(after, follow, loop)
        if not node.body:
            node.body = [self.stmt_at(ast.Pass(), ins[after])]
        if follow is not None:
            if false != follow:
                node.orelse, _ = self.region(false, follow, loop)
            out.append(node)
            return follow, ("stop" if follow == stop else None)
        out.append(node)
        if how in ("implicit_return", "loop_end"):
            node.orelse, how2 = self.region(false, stop, loop)
            return None, how2
        if how == "return" and node.body and node.body[-1].lineno > self.line_of(ins[false]):
            # A return placed after the whole if/else in the source, copied by CPython into this arm: the arm
            # falls through to it, the other arm ends with the original.
            orelse, how2 = self.region(false, stop, loop)
            if orelse and ast.dump(orelse[-1]) == ast.dump(node.body[-1]):
                node.body.pop()
                tail = orelse.pop()
                node.orelse = orelse
                node.body = node.body or [self.stmt_at(ast.Pass(), ins[after])]
                out.append(tail)
                return None, how2
        return false, None

    def holds_either_way(self, test, jump):
        """`True if test else True`, located at `test`."""
        arms = [self.at(ast.Constant(value=True), jump) for _ in range(2)]
        node = ast.IfExp(test=test, body=arms[0], orelse=arms[1])
        for n in [node] + arms:
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(test, f))
        node._serial = test._serial
        return node

    def assertion(self, atoms, raise_pc, skip, out):
        ins = self.ins
        test = self.structure(atoms, skip, raise_pc)
        pc = raise_pc + 1
        msg = None
        if ins[pc].op != "RAISE_VARARGS":
            call = pc
            while ins[call].op not in ("RAISE_VARARGS", "<end>"):
                call += 1
            call -= 1
            s = []
            pc = self.expr(pc, s, 0, stop=call)
            if pc != call or ins[call].op != "CALL" or ins[call + 1].op != "RAISE_VARARGS" or len(s) != 1:
                self.fail(ins[pc], "an assert")
            msg = s[0]
        node = self.stmt_at(ast.Assert(test=test, msg=msg), atoms[0][2])
        # the statement starts at its keyword: `assert ` before the test
        node.lineno, node.col_offset = test.lineno, max(0, test.col_offset - len("assert "))
        _end_after_start(node)
        out.append(node)
        return skip, None

    # -- loops -------------------------------------------------------------------------------
    def breaks_out(self, block, blocks, is_for):
        """Whether `block`, entered from inside the loop of `blocks`, is a break rather than a return or raise
        in the loop: a for loop's break drops the iterator first; a while loop's return sits on the loop's
        lines, where the code a break goes to (which CPython may put right there) comes after them."""
        g = self.graph
        start = g.starts[block]
        end = g.starts[block + 1] if block + 1 < len(g.starts) else len(self.ins) - 1
        if self.ins[end - 1].op not in ops.TERMINAL:
            return True
        if is_for:  # a return drops the iterator from under its value (SWAP 2, POP_TOP); a break just drops it
            return any(self.ins[i].op == "POP_TOP" and self.ins[i - 1].op != "SWAP" for i in range(start, end))
        last = max(
            self.line_of(self.ins[i])
            for b in blocks
            for i in range(g.starts[b], g.starts[b + 1] if b + 1 < len(g.starts) else len(self.ins) - 1)
        )
        return self.line_of(self.ins[start]) > last

    def exits(self, blocks, normal, is_for=False):
        """Where the loop made of `blocks` is left other than by its test (`normal`, an index): the blocks
        break statements enter, and the index the loop's code goes on at after a break (None: no break)."""
        g = self.graph
        entries, follows = set(), set()
        for b in blocks:
            for s in g.succ[b]:
                if s in blocks or g.starts[s] == normal or not self.breaks_out(s, blocks, is_for):
                    continue
                start = g.starts[s]
                end = g.starts[s + 1] if s + 1 < len(g.starts) else len(self.ins) - 1
                last = self.ins[end - 1]
                while (
                    last.op == "JUMP_FORWARD"
                    and end - 1 == start
                    and self.ins[last.target].op == "JUMP_FORWARD"
                    and g.block_of[last.target] not in blocks
                    and not is_for
                ):
                    # a condition's jump to the break, a jump on its own line CPython does not jump past
                    start = last.target
                    end, last = start + 1, self.ins[start]
                if last.op == "JUMP_FORWARD":  # [code before the break] [POP_TOP] JUMP_FORWARD follow
                    point = end - 2 if is_for and self.ins[end - 2].op == "POP_TOP" else end - 1
                    follows.add(last.target)
                else:  # the code after the loop, put by CPython right after the break
                    point = start
                    if is_for:
                        point = next((i for i in range(start, end) if self.ins[i].op == "POP_TOP"), None)
                        if point is None:  # (the code after a for loop every pass of which breaks)
                            continue
                    follows.add(point + 1 if is_for else point)
                entries.add(point)
        if len(follows) > 1:
            follows = {f for f in follows if f not in entries} or follows
        return entries, (min(follows) if follows else None)

    def finish_loop(self, node, normal, follow, outer):
        """The else clause (from the test's exit up to where breaks go) and the index after the loop."""
        if follow is not None and follow != normal:
            node.orelse, _ = self.region(normal, follow, outer)
            return follow
        return normal

    def for_loop(self, start, get_iter, iterable, outer):
        ins = self.ins
        g = self.graph
        header = get_iter + 1
        exhausted = ins[header].target
        normal = exhausted + 1 if ins[exhausted].op == "END_FOR" else exhausted
        latches = [i for i in range(header, exhausted) if ins[i].target == header]
        if latches:
            blocks = g.natural_loop(g.block_of[header])
        else:  # every pass ends in a break (or return): no jump back, the body is all up to the exhausted exit
            blocks = set(range(g.block_of[header], g.block_of[exhausted]))
        entries, follow = self.exits(blocks, exhausted, is_for=True)
        if not latches:  # its breaks: dropping the iterator, then a jump past the else clause (if any)
            past = [
                i
                for i in range(header + 1, exhausted)
                if ins[i].op == "JUMP_FORWARD" and ins[i].target > exhausted and ins[i - 1].op == "POP_TOP"
            ]
            entries |= {i - 1 for i in past}
            follow = min((ins[i].target for i in past), default=follow)
            for i in range(header + 1, exhausted):  # 3.12: a break runs a copy of the code after the loop
                copy = self.tail_copy(i + 1, normal) if ins[i].op == "POP_TOP" and ins[i - 1].op != "SWAP" else None
                if copy is not None:
                    entries.add(i)
                    follow = copy if follow is None else min(follow, copy)
        loop = _Loop({header}, entries, blocks)
        loop.is_for = True
        stack = [_ForItem()]
        pending = []
        pc = header + 1
        while stack:
            pc = self.expr(pc, stack, 0)
            if ins[pc].op not in _STORES:
                self.fail(ins[pc], "a for loop target")
            pc = self.store(pc, stack, pending)
        target = pending[0][1]
        latch = max(latches) if latches else exhausted
        loop.start = pc
        body, how = self.region(pc, latch, loop)
        if latches and how == "stop" and self.explicit_continue(ins[latch]):
            body.append(self.stmt_at(ast.Continue(), ins[latch]))  # a continue that ends the body
        node = ast.For(
            target=target, iter=iterable, body=body or [self.stmt_at(ast.Pass(), ins[pc])], orelse=[], type_comment=None
        )
        self.stmt_at(node, ins[start])
        node.lineno, node.col_offset = iterable.lineno, 0
        _end_after_start(node)
        self.after_for = self.finish_loop(node, normal, follow, outer)
        return node

    def tail_copy(self, pc, start):
        """Where (from `start` on) the code from `pc` to its return is repeated: the code CPython copied to `pc`
        (a small block that returns), or None."""
        end = pc
        while end < len(self.ins) - 1 and self.ins[end].target is None and self.ins[end].op not in ops.TERMINAL:
            end += 1
        if end >= len(self.ins) - 1 or self.ins[end].op not in ("RETURN_VALUE", "RETURN_CONST"):
            return None
        for k in range(start, len(self.ins) - 1 - (end - pc)):
            if self.same_code(pc, end + 1, k):
                return k
        return None

    def loop_at(self, pc, outer):
        """A while loop starting at `pc`: (statement, next pc), or None."""
        g = self.graph
        b = g.block_of[pc]
        if self.ins[pc].op == "FOR_ITER":
            return None
        if _ROTATED_LOOPS:
            rot = self.rotated(pc, outer) if self.may_test_a_loop(pc) else None
        else:
            rot = self.top_tested(pc) if b in g.latches and g.starts[b] == pc else None
        if rot is None and b in g.latches and g.starts[b] == pc:  # while True: the body starts here and jumps back here
            blocks = g.natural_loop(b)
            entries, follow = self.exits(blocks, None)
            latch = max(i for i in range(pc, len(self.ins) - 1) if self.ins[i].target == pc and g.block_of[i] in blocks)
            loop = _Loop({pc}, entries, blocks)
            loop.is_for, loop.after = False, follow
            loop.start = pc
            body, _ = self.region(pc, latch, loop)
            test = self.at(ast.Constant(value=True), self.ins[pc])
            node = self.stmt_at(
                ast.While(test=test, body=body or [self.stmt_at(ast.Pass(), self.ins[pc])], orelse=[]), self.ins[pc]
            )
            return node, follow
        if rot is None:
            return None
        atoms, body_start, false, bottom = rot
        test = self.structure(atoms, body_start, false)
        blocks = g.natural_loop(g.block_of[body_start])
        if b in g.latches and g.starts[b] == pc:  # continue statements jump back to the test
            blocks |= g.natural_loop(b)
        entries, follow = self.exits(blocks, false)
        loop = _Loop({pc}, entries, blocks)
        # where breaks go: past an else, or (CPython 3.14, whose loops leave from their test only) the test's exit
        loop.is_for, loop.after = False, follow if follow is not None or _ROTATED_LOOPS else false
        loop.start = body_start
        body, _ = self.region(body_start, bottom, loop)
        node = self.stmt_at(ast.While(test=test, body=body, orelse=[]), atoms[0][2])
        node.lineno, node.col_offset = test.lineno, 0
        _end_after_start(node)
        return node, self.finish_loop(node, false, follow, outer)

    def may_test_a_loop(self, pc):
        """Whether the code at `pc` can be a while loop's test: an expression running into the start of a body
        some later jump goes back to (a cheap look before reading it as a condition)."""
        for i in range(pc, len(self.ins) - 1):
            if i > pc and i in self.back_targets:
                return True
            if self.ins[i].op in _STATEMENT_ENDS:
                return False
        return False

    def top_tested(self, pc):
        """A while loop with its test only at the top (CPython 3.14): the test at `pc`, whose false arm leaves the
        loop, the body after it, jumping back to the test. (atoms, body start, exit, the last jump back) or None."""
        try:
            atoms = self.atoms(pc, [])
        except _GUESS_FAILED:
            return None
        found = self.arms(atoms) if atoms else None
        if found is None:
            return None
        after, false = found
        g = self.graph
        blocks = g.natural_loop(g.block_of[pc])
        if after == false or g.block_of.get(after) not in blocks or g.block_of.get(false) in blocks:
            return None
        latch = max(i for i in range(pc, len(self.ins) - 1) if self.ins[i].target == pc and g.block_of[i] in blocks)
        return (atoms, after, false, latch) if latch >= after else None

    def rotated(self, pc, outer):
        """A while loop with a test: the test at `pc`, the body, and a copy of the test at the bottom that
        jumps back to the body. (atoms, body start, exit, bottom copy start) or None."""
        try:
            atoms = self.atoms(pc, [])
        except _GUESS_FAILED:
            return None
        if atoms is None:
            return None
        found = self.arms(atoms)
        if found is None:
            return None
        after, false = found
        g = self.graph
        hb = g.block_of.get(after)
        if hb is None or hb not in g.latches or g.starts[hb] != after:
            return None
        latch_ins = max(i for i in range(after, len(self.ins) - 1) if self.ins[i].target == after)
        n = atoms[-1][3] - pc
        last = self.ins[latch_ins]
        bottom = latch_ins - n + 1 if last.op != "JUMP_BACKWARD" else latch_ins - n
        if bottom < after:
            return None
        for i in range(n - 1):
            if self.ins[pc + i].op != self.ins[bottom + i].op or self.ins[pc + i].argval != self.ins[bottom + i].argval:
                return None
        return atoms, after, false, bottom


def _spans(x, keyword):
    """Whether instruction `x` is located on one line, as wide as `keyword` (a statement of that keyword alone)."""
    pos = x.pos
    return (
        pos is not None
        and pos.lineno is not None
        and pos.lineno == pos.end_lineno
        and (pos.end_col_offset or 0) - (pos.col_offset or 0) == len(keyword)
    )


def _conditional_stores(body):
    """`body` with each if/else whose arms are one store to the same target at the same place read back as the
    assignment of a conditional expression, as its source was: CPython 3.12 copies the store and the code
    after it (up to a return) into each arm of `x[i] = a if c else b`, where an if/else's arms are on lines of
    their own. The code copied into both arms (the same statements at the same places) follows the
    assignment."""
    out = []
    for s in body:
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list) and getattr(s, field):
                setattr(s, field, _conditional_stores(getattr(s, field)))
        if isinstance(s, ast.If) and s.body and s.orelse:
            k = 0
            while k < min(len(s.body), len(s.orelse)) - 1 and same_tree(s.body[-1 - k], s.orelse[-1 - k]):
                k += 1
            if len(s.body) == len(s.orelse) == k + 1:
                merged = _merged_store(s.test, s.body[0], s.orelse[0])
                if merged is not None:
                    out.append(merged)
                    out.extend(s.orelse[1:])
                    continue
        out.append(s)
    return out


def _merged_store(test, a, b):
    """`t = x if test else y` from the arms `t = x` and `t = y` (one target, at one place), or None."""
    if not (
        isinstance(a, ast.Assign)
        and isinstance(b, ast.Assign)
        and len(a.targets) == len(b.targets) == 1
        and same_tree(a.targets[0], b.targets[0])
    ):
        return None
    value = ast.IfExp(test=test, body=a.value, orelse=b.value)
    value.lineno, value.col_offset = a.value.lineno, a.value.col_offset
    value.end_lineno, value.end_col_offset = b.value.end_lineno, b.value.end_col_offset
    value._serial = getattr(test, "_serial", 0)
    node = ast.Assign(targets=a.targets, value=value)
    for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(node, f, getattr(a, f))
    _end_after_start(node)
    if (node.end_lineno, node.end_col_offset) < (value.end_lineno, value.end_col_offset):
        node.end_lineno, node.end_col_offset = value.end_lineno, value.end_col_offset
    return node
