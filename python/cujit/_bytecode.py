"""The bytecode frontend: a function's ``ast.FunctionDef`` rebuilt from its code object, for functions with no
source (built with exec or compile(), run with ``python -c``, from .pyc-only installs, or whose file changed after
import). The tree is the one ``ast.parse`` gives for the function's source, so everything after it (the C++
frontend, typing, lowering) is shared with the source path and the PTX is the same.

How it reads the code: ``dis`` decodes the instructions (the opcode names per CPython version are normalised by
the tables in _bytecode_ops.py); a symbolic stack turns straight-line code into expressions and statements;
conditions, ``if``/``elif``/``else``, loops with ``break``/``continue``/``else``, ternaries, ``and``/``or`` values
and chained comparisons are recovered from the jumps, with the join of each branch found by post-dominators.
Every rebuilt tree is checked: it is compiled again with ``compile()`` and its instructions must equal the
original's, so a function is never compiled from a tree that does not do what its bytecode does; one that fails
the check is refused with an UnsupportedError that says so."""

import ast
import dis
import math
import sys
import types

from cujit import _bytecode_ops as ops
from cujit.errors import UnsupportedError


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


class _Null:
    """The NULL a call sequence pushes below a plain callable."""


_NULL = _Null()


class _Slot:
    """Item `index` of an UNPACK_SEQUENCE of `group`."""

    def __init__(self, group, index):
        self.group, self.index = group, index


class _Group:
    def __init__(self, value, count, ins):
        self.value, self.targets, self.ins = value, [None] * count, ins


class _ForItem:
    """The value FOR_ITER pushes: what the loop target is bound to."""


class _Aug:
    """``target op= value`` on its way to the store."""

    def __init__(self, target, op, value, ins):
        self.target, self.op, self.value, self.ins = target, op, value, ins


_BINARY = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
           "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
           "@": ast.MatMult}
_COMPARE = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
_UNARY = {"UNARY_NEGATIVE": ast.USub, "UNARY_INVERT": ast.Invert, "UNARY_NOT": ast.Not,
          "UNARY_POSITIVE": ast.UAdd}
_STATEMENT_ENDS = {"STORE_FAST", "STORE_GLOBAL", "STORE_NAME", "STORE_SUBSCR", "STORE_ATTR", "STORE_SLICE",
                   "UNPACK_SEQUENCE", "POP_TOP", "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "GET_ITER",
                   "FOR_ITER"}
_STORES = {"STORE_FAST", "STORE_GLOBAL", "STORE_NAME", "STORE_SUBSCR", "STORE_ATTR", "STORE_SLICE",
           "UNPACK_SEQUENCE"}
_CODE_NAMES = {"<lambda>": ast.Lambda, "<genexpr>": ast.GeneratorExp, "<listcomp>": ast.ListComp,
               "<setcomp>": ast.SetComp, "<dictcomp>": ast.DictComp}


class _Ins:
    __slots__ = ("index", "offset", "op", "arg", "argval", "argrepr", "target", "pos", "name")

    def __repr__(self):
        return f"{self.index}:{self.op}({self.argrepr or self.argval})"


class _Loop:
    def __init__(self, cont, brks, body):
        self.cont, self.brks, self.body = cont, brks, body
        self.start = None  # where the body starts: not a new loop there


def _decode(code, table):
    """The instructions that mean something (no NOP, RESUME, caches), each with its jump target as an index.
    Read from co_code directly (dis builds much more than this needs), with the argument rules of the
    version's table."""
    rules = ops.ARGUMENTS[sys.version_info[:2]]
    name_shift, compare_shift = rules["name_shift"], rules["compare_shift"]
    raw = code.co_code
    positions = list(code.co_positions())
    caches = dis._inline_cache_entries
    opnames = dis.opname
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    extended = dis.opmap["EXTENDED_ARG"]
    kept, index_of, pending = [], {}, []
    arg_high = 0
    offset = 0
    n = len(raw)
    while offset < n:
        opcode, arg = raw[offset], raw[offset + 1] | arg_high
        after = offset + 2 + 2 * caches[opcode]
        pending.append(offset)
        if opcode == extended:
            arg_high = arg << 8
            offset = after
            continue
        arg_high = 0
        name = opnames[opcode]
        op = table.get(name, name)
        if op is None:
            offset = after
            continue
        x = _Ins()
        x.index, x.offset, x.op, x.arg, x.name, x.target = len(kept), offset, op, arg, name, None
        x.pos = _Position(*positions[offset // 2])
        x.argrepr = ""
        if opcode in jumps:
            x.argval = after - 2 * arg if name in ops.BACKWARD else after + 2 * arg
        elif name in ("LOAD_CONST", "RETURN_CONST"):
            x.argval = code.co_consts[arg]
        elif name in ops.NAMES:
            x.argval = code.co_names[arg >> name_shift.get(name, 0)]
        elif name in ops.LOCALS:
            x.argval = code._varname_from_oparg(arg)
        elif name == "COMPARE_OP":
            x.argval = dis.cmp_op[arg >> compare_shift]
        elif name == "BINARY_OP":
            x.argval = arg
            x.argrepr = dis._nb_ops[arg][1]
        elif name == "CALL_INTRINSIC_1":
            x.argval = arg
            x.argrepr = dis._intrinsic_1_descs[arg]
        else:
            x.argval = arg
        for off in pending:
            index_of[off] = x.index
        pending = []
        kept.append(x)
        offset = after
    end = _Ins()
    end.index, end.offset, end.op, end.arg, end.argval, end.argrepr, end.target, end.name = \
        len(kept), -1, "<end>", None, None, "", None, "<end>"
    end.pos = None
    for off in pending:
        index_of[off] = end.index
    for x in kept:
        if x.op in ops.JUMPS:
            x.target = index_of[x.argval]
    _merge_return_copies(kept)
    return kept + [end]


class _Position:
    __slots__ = ("lineno", "end_lineno", "col_offset", "end_col_offset")

    def __init__(self, lineno, end_lineno, col_offset, end_col_offset):
        self.lineno, self.end_lineno = lineno, end_lineno
        self.col_offset, self.end_col_offset = col_offset, end_col_offset

    def __eq__(self, other):
        return isinstance(other, _Position) and (self.lineno, self.end_lineno, self.col_offset,
                                                 self.end_col_offset) == (other.lineno, other.end_lineno,
                                                                          other.col_offset, other.end_col_offset)

    __hash__ = None


def _merge_return_copies(kept):
    """CPython copies a small block that returns into each place that jumps to it: jumps to such copies go to
    the first one, so that a condition's jumps meet where the source's did."""
    first = {}
    for x in kept:
        if x.target is None or x.op == "FOR_ITER":
            continue
        key = []
        i = x.target
        while i < len(kept) and len(key) < 5:
            y = kept[i]
            key.append((y.op, repr(y.argval)))
            if y.op in ("RETURN_VALUE", "RETURN_CONST"):
                break
            if y.target is not None or y.op in ops.TERMINAL:
                key = None
                break
            i += 1
        if not key or key[-1][0] not in ("RETURN_VALUE", "RETURN_CONST"):
            continue
        x.target = first.setdefault(tuple(key), x.target)


class _Graph:
    """Basic blocks, loops (natural loops of the backward jumps) and post-dominators per loop body."""

    def __init__(self, code_ins):
        self.ins = code_ins
        n = len(code_ins) - 1
        leaders = {0}
        for x in code_ins[:n]:
            if x.target is not None:
                leaders.add(x.target)
                leaders.add(x.index + 1)
            elif x.op in ops.TERMINAL:
                leaders.add(x.index + 1)
        self.starts = sorted(i for i in leaders if i <= n)
        self.block_of = {}
        for b, s in enumerate(self.starts):
            e = self.starts[b + 1] if b + 1 < len(self.starts) else n + 1
            for i in range(s, e):
                self.block_of[i] = b
        self.succ = []
        for b, s in enumerate(self.starts):
            e = self.starts[b + 1] if b + 1 < len(self.starts) else n + 1
            last = code_ins[e - 1] if e - 1 < n else None
            out = []
            if last is not None and last.op not in ops.TERMINAL:
                if last.target is not None:
                    out.append(self.block_of[last.target])
                if last.op not in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP") and e <= n:
                    out.append(self.block_of[e])
            self.succ.append(out)
        self.pred = [[] for _ in self.starts]
        for b, out in enumerate(self.succ):
            for s in out:
                self.pred[s].append(b)
        self.latches = {}  # header block -> blocks jumping back to it
        for b, out in enumerate(self.succ):
            for s in out:
                if s <= b:
                    self.latches.setdefault(s, []).append(b)

    def natural_loop(self, header):
        body = {header}
        work = [b for b in self.latches.get(header, ())]
        while work:
            b = work.pop()
            if b not in body:
                body.add(b)
                work.extend(self.pred[b])
        return body

    def ipdom(self, block, loop):
        """The block where every path from `block` meets again inside `loop` (None: they never do)."""
        holder = loop if loop is not None else self  # cached on the loop itself: ids of dead loops come back
        pd = getattr(holder, "_pdom_sets", None)
        if pd is None:
            pd = holder._pdom_sets = self._postdominators(loop)
        mine = pd.get(block)
        if mine is None:
            return None
        best = None
        for c in mine:
            if c != block and c != -1 and (best is None or len(pd[c]) > len(pd[best])):
                best = c
        return best

    def _postdominators(self, loop):
        nodes = sorted(loop.body) if loop else list(range(len(self.starts)))
        inside = set(nodes)
        cont = {self.block_of[i] for i in loop.cont} if loop else set()

        def succ(b):
            out = []
            for s in self.succ[b]:
                out.append(-1 if (s in cont or s not in inside) else s)
            return out or [-1]

        full = frozenset(nodes) | {-1}
        pd = {b: full for b in nodes}
        pd[-1] = frozenset({-1})
        changed = True
        while changed:
            changed = False
            for b in reversed(nodes):
                meet = None
                for s in succ(b):
                    meet = pd[s] if meet is None else meet & pd[s]
                new = frozenset({b}) | meet
                if new != pd[b]:
                    pd[b] = new
                    changed = True
        return pd


class _Reader:
    def __init__(self, fn, code, table):
        self.fn, self.code = fn, code
        self.ins = _decode(code, table)
        self.graph = _Graph(self.ins)
        self.first_line = code.co_firstlineno
        # Columns count from the def's indentation, as in the dedented source the source reader parses: the
        # body's statements sit one level (4 columns) in from the def.
        cols = [x.pos.col_offset for x in self.ins[:-1] if x.pos.lineno is not None and x.pos.col_offset is not None
                and x.pos.lineno > self.first_line]
        self.indent = max(0, min(cols) - 4) if cols else 0
        self.unsupported = False
        self.serial = 0
        self.ternary_tests = {}  # conditional jump -> whether it is the test of a conditional expression
        self.stored = set()  # the names the rebuilt statements assign
        self.back_targets = {x.target for x in self.ins[:-1] if x.target is not None and x.target <= x.index}

    # -- locations ---------------------------------------------------------------------------
    def at(self, node, ins):
        pos = ins.pos if ins is not None else None
        line = pos.lineno if pos is not None and pos.lineno is not None else self.first_line
        node.lineno = line - self.first_line + 1
        node.end_lineno = (pos.end_lineno if pos is not None and pos.end_lineno is not None else line) \
            - self.first_line + 1
        indent = self.indent
        node.col_offset = max(0, pos.col_offset - indent) if pos is not None and pos.col_offset is not None else 0
        node.end_col_offset = max(0, pos.end_col_offset - indent) \
            if pos is not None and pos.end_col_offset is not None else 0
        self.serial += 1
        node._serial = self.serial
        return node

    def fail(self, ins, what):
        raise _Unreadable(f"{what} at instruction {ins!r}" if ins is not None else what)

    # -- constants ---------------------------------------------------------------------------
    def const(self, value, ins):
        if isinstance(value, tuple):
            return self.at(ast.Tuple(elts=[self.const(v, ins) for v in value], ctx=ast.Load()), ins)
        if isinstance(value, frozenset):
            self.unsupported = True
            return self.at(ast.Set(elts=[]), ins)
        if isinstance(value, types.CodeType):
            return value
        if value is Ellipsis:
            return self.at(ast.Constant(value=...), ins)
        if isinstance(value, complex) and (value.real != 0 or math.copysign(1.0, value.real) < 0):
            return self.complex_const(value, ins)
        return self.at(ast.Constant(value=value), ins)

    def complex_const(self, value, ins):
        """A complex constant CPython folded (`2 + 1j`, `-1j`) as the source spells it: the frontend's complex
        literals are imaginary numbers, as in the source."""
        real, imag = value.real, value.imag
        if real == 0:  # -1j: -(1j), whose real part is -0.0
            return self.at(ast.UnaryOp(op=ast.USub(), operand=self.at(ast.Constant(value=complex(0, -imag)), ins)),
                           ins)
        left = self.at(ast.Constant(value=int(real) if real.is_integer() and abs(real) < 2 ** 53 else real), ins)
        op = ast.Sub() if math.copysign(1.0, imag) < 0 else ast.Add()
        right = self.at(ast.Constant(value=complex(0, abs(imag))), ins)
        return self.at(ast.BinOp(left=left, op=op, right=right), ins)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, pc, stack, base, stop=None, watch=None, raw=False, value_start=None):
        """Runs pure expression code from `pc` on `stack`; returns the index of the first instruction it does
        not take: `stop`, a store or other statement, a jump out of the expression, or a conditional jump that
        consumes the value at depth `base` + 1 (a condition for the caller). With `watch` (a stack index), it
        returns as soon as the item there is consumed. A conditional jump at depth `base` + 1 may be the test of
        a conditional expression whose value starts at `value_start`: that is decided once per jump (`raw`:
        not decided here, the caller is collecting a condition's jumps)."""
        ins = self.ins
        watched = stack[watch] if watch is not None else None
        if value_start is None:
            value_start = pc
        while True:
            if pc == stop:
                return pc
            if len(stack) == base:
                value_start = pc
            x = ins[pc]
            op = x.op
            if op == "SWAP" and len(stack) < x.argval:  # a value swapped under a loop's iterator (a return)
                return pc
            if op == "SWAP" and x.argval == 2 and ins[pc + 1].op == "COPY" and ins[pc + 1].argval == 2 and \
                    ins[pc + 2].op == "COMPARE_OP":
                pc = self.chain(pc, stack)
            elif op == "COPY" and x.argval == 1 and ins[pc + 1].op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") \
                    and ins[pc + 2].op == "POP_TOP" and ins[pc + 1].target > pc + 1:
                pc = self.value_boolop(pc + 1, pc + 3, stack)
            elif op in ops.VALUE_JUMPS:
                pc = self.value_boolop(pc, pc + 1, stack)
            elif op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") and x.target > pc and \
                    ins[x.target - 1].op == ("JUMP_IF_TRUE_OR_POP" if op == "POP_JUMP_IF_FALSE"
                                             else "JUMP_IF_FALSE_OR_POP"):
                # 3.11: `a and b or c` jumps from a straight to c: the and ends at the or's jump
                pc = self.value_boolop(pc, pc + 1, stack, x.target - 1)
            elif op in ops.CONDITIONAL_JUMPS:
                if len(stack) - 1 <= base:
                    decided = self.ternary_tests.get(pc)
                    if decided is None and not raw:
                        self.ternary_tests[pc] = False  # while deciding, this jump reads as a condition
                        decided = self.ternary_tests[pc] = self.starts_ternary(value_start, stack[:base])
                    if not decided:
                        return pc
                pc = self.ternary(pc, stack)
            elif not self.pure(x, stack):
                return pc
            else:
                pc += 1
            if watch is not None and (len(stack) <= watch or stack[watch] is not watched):
                return pc

    def pure(self, x, stack):
        op = x.op
        if op == "LOAD_CONST":
            stack.append(self.const(x.argval, x))
        elif op in ("LOAD_FAST", "LOAD_NAME"):
            stack.append(self.at(ast.Name(id=x.argval, ctx=ast.Load()), x))
        elif op == "LOAD_GLOBAL":
            if x.arg & 1:
                stack.append(_NULL)
            stack.append(self.at(ast.Name(id=x.argval, ctx=ast.Load()), x))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            obj = stack.pop()
            node = self.at(ast.Attribute(value=obj, attr=x.argval, ctx=ast.Load()), x)
            if op == "LOAD_METHOD" or (sys.version_info >= (3, 12) and x.arg & 1):
                stack.append(_NULL)
            stack.append(node)
        elif op == "PUSH_NULL":
            stack.append(_NULL)
        elif op == "BINARY_OP":
            right, left = stack.pop(), stack.pop()
            sym = x.argrepr
            if sym.endswith("=") and sym[:-1] in _BINARY:
                stack.append(_Aug(left, _BINARY[sym[:-1]](), right, x))
            else:
                if sym not in _BINARY:
                    self.fail(x, "an unknown operator")
                stack.append(self.at(ast.BinOp(left=left, op=_BINARY[sym](), right=right), x))
        elif op == "BINARY_SUBSCR":
            index, container = stack.pop(), stack.pop()
            stack.append(self.at(ast.Subscript(value=container, slice=index, ctx=ast.Load()), x))
        elif op == "BINARY_SLICE":
            hi, lo, container = stack.pop(), stack.pop(), stack.pop()
            s = self.at(ast.Slice(lower=self.bound(lo), upper=self.bound(hi), step=None), x)
            stack.append(self.at(ast.Subscript(value=container, slice=s, ctx=ast.Load()), x))
        elif op == "BUILD_SLICE":
            parts = [stack.pop() for _ in range(x.argval)][::-1]
            while len(parts) < 3:
                parts.append(None)
            stack.append(self.at(ast.Slice(lower=self.bound(parts[0]), upper=self.bound(parts[1]),
                                           step=self.bound(parts[2])), x))
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            n = x.argval
            elts = stack[len(stack) - n:] if n else []
            del stack[len(stack) - n:]
            cls = {"BUILD_TUPLE": ast.Tuple, "BUILD_LIST": ast.List, "BUILD_SET": ast.Set}[op]
            if cls is not ast.Tuple:
                self.unsupported = cls is ast.Set or self.unsupported
            node = ast.Set(elts=elts) if cls is ast.Set else cls(elts=elts, ctx=ast.Load())
            stack.append(self.at(node, x))
        elif op in ("LIST_EXTEND", "SET_UPDATE"):
            items = stack.pop()
            target = stack[-x.argval]
            if isinstance(items, ast.Tuple):
                target.elts.extend(items.elts)
            else:
                self.fail(x, "a starred list")
        elif op in ("BUILD_MAP", "BUILD_CONST_KEY_MAP"):
            n = x.argval * (2 if op == "BUILD_MAP" else 1) + (1 if op == "BUILD_CONST_KEY_MAP" else 0)
            del stack[len(stack) - n:]
            self.unsupported = True
            stack.append(self.at(ast.Dict(keys=[], values=[]), x))
        elif op in _UNARY:
            stack.append(self.at(ast.UnaryOp(op=_UNARY[op](), operand=stack.pop()), x))
        elif op == "CALL_INTRINSIC_1" and x.argrepr == "INTRINSIC_UNARY_POSITIVE":
            stack.append(self.at(ast.UnaryOp(op=ast.UAdd(), operand=stack.pop()), x))
        elif op == "COMPARE_OP":
            right, left = stack.pop(), stack.pop()
            sym = x.argval if isinstance(x.argval, str) else x.argrepr
            sym = sym.replace("bool(", "").rstrip(")")
            stack.append(self.at(ast.Compare(left=left, ops=[_COMPARE[sym]()], comparators=[right]), x))
        elif op in ("IS_OP", "CONTAINS_OP"):
            right, left = stack.pop(), stack.pop()
            cmp = {("IS_OP", 0): ast.Is, ("IS_OP", 1): ast.IsNot, ("CONTAINS_OP", 0): ast.In,
                   ("CONTAINS_OP", 1): ast.NotIn}[(op, x.arg)]
            stack.append(self.at(ast.Compare(left=left, ops=[cmp()], comparators=[right]), x))
        elif op == "KW_NAMES":
            self.kw_names = self.code.co_consts[x.arg]
        elif op == "CALL":
            n = x.argval
            args = stack[len(stack) - n:] if n else []
            del stack[len(stack) - n:]
            func = stack.pop()
            if stack and stack[-1] is _NULL:
                stack.pop()
            if isinstance(func, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                stack.append(func)  # a comprehension (3.11 calls its function)
                return True
            kw = getattr(self, "kw_names", None) or ()
            self.kw_names = None
            positional = args[:len(args) - len(kw)]
            keywords = [ast.keyword(arg=k, value=v) for k, v in zip(kw, args[len(args) - len(kw):])]
            for k, v in zip(keywords, args[len(args) - len(kw):]):
                k.lineno, k.col_offset = v.lineno, v.col_offset
                k.end_lineno, k.end_col_offset = v.end_lineno, v.end_col_offset
            stack.append(self.at(ast.Call(func=func, args=positional, keywords=keywords), x))
        elif op == "COPY":
            stack.append(stack[-x.argval])
        elif op == "SWAP":
            stack[-1], stack[-x.argval] = stack[-x.argval], stack[-1]
        elif op == "MAKE_FUNCTION":
            code = stack.pop()
            if sys.version_info < (3, 11) or not isinstance(code, types.CodeType):
                self.fail(x, "a function definition")
            flags = x.argval if isinstance(x.argval, int) else 0
            for bit in (8, 4, 2, 1):
                if flags & bit:
                    stack.pop()
            cls = _CODE_NAMES.get(code.co_name)
            self.unsupported = True
            if cls is ast.Lambda:
                node = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                     defaults=[]), body=ast.Constant(value=None))
            elif cls is not None:
                node = cls()
            else:
                node = ast.Name(id="<function>", ctx=ast.Load())
                node._nested_def = code.co_name
            stack.append(self.at(node, x))
        elif op == "GET_ITER" and len(stack) > 1 and isinstance(stack[-2], (ast.GeneratorExp, ast.ListComp,
                                                                              ast.SetComp, ast.DictComp)):
            stack.pop()  # the iterable handed to the comprehension's function: the CALL gives the comprehension
            comp = stack.pop()
            if stack and stack[-1] is _NULL:
                stack.pop()
            stack.append(_NULL)
            stack.append(comp)
        elif op == "LOAD_FAST_AND_CLEAR":
            self.unsupported = True
            raise _Comprehension(x)
        elif op in ("FORMAT_VALUE", "BUILD_STRING", "CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
            raise _Construct(ast.JoinedStr(values=[]), x)
        elif op in ("YIELD_VALUE", "RETURN_GENERATOR"):
            raise _Construct(ast.Yield(value=None), x)
        elif op in ("IMPORT_NAME",):
            raise _Construct(ast.Import(names=[]), x, statement=True)
        elif op in ("BEFORE_WITH",):
            raise _Construct(ast.With(items=[], body=[]), x, statement=True)
        elif op in ("DELETE_FAST", "DELETE_SUBSCR", "DELETE_ATTR", "DELETE_GLOBAL", "DELETE_NAME"):
            raise _Construct(ast.Delete(targets=[]), x, statement=True)
        else:
            return False
        return True

    @staticmethod
    def bound(node):
        """A slice bound: None where the source leaves it out."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None
        return node

    def chain(self, pc, stack):
        """``a < b < c``: SWAP 2, COPY 2, COMPARE_OP, a jump to the cleanup, the next operand and its compare."""
        ins = self.ins
        b, a = stack.pop(), stack.pop()
        first = ins[pc + 2]
        stack.append(a)
        stack.append(b)
        self.pure(first, stack)  # Compare(a op b)
        head = stack.pop()
        j = ins[pc + 3]
        if j.op == "COPY" and j.argval == 1:  # 3.12 value form: COPY 1, POP_JUMP_IF_FALSE, POP_TOP
            cleanup, pc = ins[pc + 4].target, pc + 6
        elif j.op in ("JUMP_IF_FALSE_OR_POP", "POP_JUMP_IF_FALSE"):
            cleanup, pc = j.target, pc + 4
        else:
            self.fail(j, "a chained comparison")
        stack.append(b)
        watch = len(stack) - 1
        pc = self.expr(pc, stack, watch, watch=watch)
        rest = stack.pop()
        if not isinstance(rest, ast.Compare) or rest.left is not b:
            self.fail(ins[pc], "a chained comparison")
        node = ast.Compare(left=a, ops=head.ops + rest.ops, comparators=[b] + rest.comparators)
        for f in ("lineno", "col_offset", "_serial"):
            setattr(node, f, getattr(head, f))
        node.end_lineno, node.end_col_offset = rest.end_lineno, rest.end_col_offset
        node._cleanup = cleanup
        stack.append(node)
        # 3.11's value form jumps over the cleanup (SWAP 2, POP_TOP) to the join. Where the cleanup itself jumps
        # on (the chain ends an arm of a conditional expression), the jump stays: it ends that arm.
        if ins[pc].op == "JUMP_FORWARD" and cleanup == pc + 1 and ins[cleanup + 2].op != "JUMP_FORWARD":
            pc = ins[pc].target
        return pc

    def value_boolop(self, jump_pc, right_pc, stack, join=None):
        """``a and b`` / ``a or b`` as a value: the left value stays on the stack when the jump is taken."""
        j = self.ins[jump_pc]
        join = j.target if join is None else join
        left = stack.pop()
        is_and = "FALSE" in j.op
        base = len(stack)
        pc = self.value(right_pc, stack, base, join)
        right = stack.pop()
        cls = ast.And if is_and else ast.Or
        values = [left] + (right.values if isinstance(right, ast.BoolOp) and isinstance(right.op, cls)
                           and getattr(right, "_join", None) == join else [right])
        node = ast.BoolOp(op=cls(), values=values)
        self.at(node, j)
        node.lineno, node.col_offset = left.lineno, left.col_offset
        node.end_lineno, node.end_col_offset = right.end_lineno, right.end_col_offset
        node._join = join
        stack.append(node)
        return pc

    def value(self, pc, stack, base, stop):
        """One value pushed by the code from `pc` to `stop` (ternaries included)."""
        while True:
            pc = self.expr(pc, stack, base, stop=stop)
            if pc == stop:
                break
            x = self.ins[pc]
            if x.op in ops.CONDITIONAL_JUMPS and len(stack) == base + 1:
                pc = self.ternary(pc, stack)
                continue
            break
        if len(stack) != base + 1:
            self.fail(self.ins[pc], "an expression")
        return pc

    # -- conditions --------------------------------------------------------------------------
    def atoms(self, pc, stack, first_jump=None):
        """The conditional jumps of one condition from `pc`: [(start, expr, jump)], the index where the code
        after the condition starts (its fall-through), or None where `pc` starts no condition."""
        found = []
        while True:
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
            cleanup = getattr(node, "_cleanup", None)
            if cleanup is not None and self.ins[nxt].op == "JUMP_FORWARD" and cleanup == nxt + 1:
                nxt = self.ins[nxt].target
            found.append((pc, node, x, nxt))
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

    def valid_cut(self, atoms):
        starts = {a[0] for a in atoms[1:]}
        after = atoms[-1][3]
        outside = {a[2].target for a in atoms} - starts - {after}
        return len(outside) <= 1

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
        """The expression of `atoms` that is true where control reaches `true` and false at `false`."""
        if len(atoms) == 1:
            start, node, jump, nxt = atoms[0]
            on_true = jump.op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE")
            node = self.test_of(node, jump)
            if jump.target == true:
                return node if on_true else self.negate(node, jump)
            if jump.target == false:
                return self.negate(node, jump) if on_true else node
            self.fail(jump, "a condition")
        starts = [a[0] for a in atoms]
        for cls, exit_ in ((ast.Or, true), (ast.And, false)):
            for k in range(len(atoms) - 1):
                inner = set(starts[1:k + 2])
                if all(a[2].target in inner or a[2].target == exit_ for a in atoms[:k + 1]):
                    split = starts[k + 1]
                    if cls is ast.Or:
                        left = self.structure(atoms[:k + 1], true, split)
                    else:
                        left = self.structure(atoms[:k + 1], split, false)
                    right = self.structure(atoms[k + 1:], true, false)
                    values = []
                    for v in (left, right):
                        values += v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, cls) else [v]
                    node = ast.BoolOp(op=cls(), values=values)
                    node._serial = values[0]._serial
                    return _spanning(node, values)
        self.fail(atoms[0][2], "a condition")

    def test_of(self, node, jump):
        if jump.op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            none = self.at(ast.Constant(value=None), jump)
            return self.at(ast.Compare(left=node, ops=[ast.Is()], comparators=[none]), jump)
        return node

    def negate(self, node, jump):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Is) and \
                jump.op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            node.ops = [ast.IsNot()]
            return node
        out = ast.UnaryOp(op=ast.Not(), operand=node)
        for f in ("lineno", "col_offset", "end_lineno", "end_col_offset", "_serial"):
            setattr(out, f, getattr(node, f))
        return out

    def ternary(self, jump_pc, stack):
        """``a if c else b`` where the jump of `c` (or of its first part) is at `jump_pc`; the condition's
        value is on top of `stack`. Pushes the IfExp and returns where the code goes on."""
        first = self.ins[jump_pc]
        node = stack.pop()
        base = len(stack)
        found = [(None, node, first, jump_pc + 1)]
        pc = jump_pc + 1
        cleanup = getattr(node, "_cleanup", None)
        if cleanup is not None and self.ins[pc].op == "JUMP_FORWARD" and cleanup == pc + 1:
            pc = self.ins[pc].target
            found[0] = (None, node, first, pc)
        while True:
            s = list(stack)
            end = self.expr(pc, s, base, raw=True)
            x = self.ins[end]
            if x.op in ops.CONDITIONAL_JUMPS and len(s) == base + 1 and x.target > x.index:
                found.append((pc, s[-1], x, end + 1))
                pc = end + 1
                continue
            break
        false = max(a[2].target for a in found)
        found[0] = (-1,) + found[0][1:]
        # The true arm: its value, then a jump over the false arm (or a copy of the code after both).
        s = list(stack)
        end = self.value(pc, s, base, false)
        x = self.ins[end]
        if x.op == "JUMP_FORWARD":
            join = x.target
            f = list(stack)
            fend = self.value(false, f, base, join)
            if fend != join:
                self.fail(x, "a conditional expression")
        else:
            f = list(stack)
            fend = self.value(false, f, base, None)
            if not self.same_code(end, false, fend):
                self.fail(x, "a conditional expression")
            join = end
            # CPython copied the code after the expression into both arms: the arms end where their code starts
            # to be the same (`(a if c else b) + 1` has `+ 1` in each arm).
            same = 0
            while end - same - 1 >= pc and fend - same - 1 >= false and \
                    self.same_code(end - same - 1, end - same, fend - same - 1):
                same += 1
            for back in range(same, 0, -1):
                try:
                    s2, f2 = list(stack), list(stack)
                    if self.value(pc, s2, base, end - back) == end - back and \
                            self.value(false, f2, base, fend - back) == fend - back:
                        s, f, join = s2, f2, end - back
                        break
                except _GUESS_FAILED:
                    continue
        test = self.structure(found, pc, false)
        out = ast.IfExp(test=test, body=s[-1], orelse=f[-1])
        for k in ("lineno", "col_offset", "_serial"):
            setattr(out, k, getattr(s[-1], k))
        out.lineno, out.col_offset = s[-1].lineno, s[-1].col_offset
        out.end_lineno, out.end_col_offset = f[-1].end_lineno, f[-1].end_col_offset
        stack.append(out)
        return join

    def same_code(self, a, a_end, b):
        """Whether the instructions from `a` up to `a_end` repeat from `b` (a tail CPython copied)."""
        n = a_end - a
        if n <= 0 or b + n > len(self.ins) - 1:
            return False
        return all(self.ins[a + i].op == self.ins[b + i].op and self.ins[a + i].argval == self.ins[b + i].argval
                   for i in range(n))

    # -- statements --------------------------------------------------------------------------
    def function(self):
        body, how = self.region(0, None, None)
        return body

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
            if loop is not None and pc in loop.brks:
                out.append(self.stmt_at(ast.Break(), ins[pc - 1] if pc > 0 else None))
                return out, "break"
            x = ins[pc]
            if x.op == "<end>":
                return out, "stop"
            if x.op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP"):
                t = x.target
                if loop is not None and t in loop.cont:
                    if not self.explicit_continue(x):
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
                stmt, pc = looped
                out.append(stmt)
                if pc is None:
                    return out, "return"
                continue
            pc, how = self.statement(pc, stop, loop, out)
            if how is not None:
                return out, how

    def explicit_continue(self, x):
        """Whether a jump back to a loop's start is a `continue` statement (located on the keyword), not the end
        of the loop's body that CPython sent straight there."""
        pos = x.pos
        return pos is not None and pos.lineno is not None and pos.lineno == pos.end_lineno and \
            (pos.end_col_offset or 0) - (pos.col_offset or 0) == len("continue") and not self.implicit(x)

    def implicit(self, x):
        """A jump or return CPython added (it has the location of the instruction before it)."""
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
                if isinstance(value, ast.Constant) and value.value is None and self.implicit_return(x):
                    return pc + 1, "implicit_return"
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
            if op == "SWAP" and x.argval == 2 and len(stack) == 1 and ins[pc + 1].op == "POP_TOP" and \
                    loop is not None and loop.is_for:
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
        width = (x.pos.end_col_offset or 0) - (x.pos.col_offset or 0)
        if prev is not None and prev.op == "LOAD_CONST" and prev.argval is None and prev.pos == x.pos:
            prev = self.ins[x.index - 2] if x.index > 1 else None
        return (prev is not None and prev.pos == x.pos) or width not in (6, 11)

    def bare_return(self, x, value):
        return isinstance(value, ast.Constant) and value.value is None and x.pos is not None and \
            (x.pos.end_col_offset or 0) - (x.pos.col_offset or 0) == 6

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
            s = self.at(ast.Slice(lower=self.bound(lo), upper=self.bound(hi), step=None), x)
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

    def arms(self, atoms):
        """(true arm, false arm) of a condition: where control goes when it holds and when it does not, or None.
        The true arm usually follows the last jump; CPython 3.12 may put it at the jump's target instead and
        leave an artificial jump to the false arm after the condition."""
        after = atoms[-1][3]
        jumps = {a[2].target for a in atoms} - {a[0] for a in atoms[1:]} - {after}
        if len(jumps) != 1:
            return None
        other = jumps.pop()
        x = self.ins[after]
        last = atoms[-1][2]
        if x.op in ("JUMP_FORWARD", "JUMP_BACKWARD") and other > after and last.target == other and \
                last.op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_NOT_NONE") and self.implicit(x):
            return other, after
        return after, other

    def conditional(self, start, stop, loop, out):
        """An if statement (or an assert) whose condition starts at `start`."""
        atoms = self.atoms(start, [])
        if not atoms:
            self.fail(self.ins[start], "a condition")
        found = self.arms(atoms)
        if found is None:
            self.fail(atoms[0][2], "a condition")
        after, false = found
        ins = self.ins
        if ins[after].op == "LOAD_ASSERTION_ERROR":
            return self.assertion(atoms, after, false, out)
        test = self.structure(atoms, after, false)
        node = self.stmt_at(ast.If(test=test, body=[], orelse=[]), atoms[0][2])
        node.lineno, node.col_offset = test.lineno, test.col_offset
        _end_after_start(node)
        g = self.graph
        follow_block = g.ipdom(g.block_of[atoms[0][2].index], loop)
        follow = g.starts[follow_block] if follow_block is not None else None
        if follow is None and false - 1 >= after:
            # Paths that meet only at a return: an arm that jumps over the other shows where the if ends.
            skip = ins[false - 1]
            if skip.op == "JUMP_FORWARD" and skip.target > false and not (
                    loop is not None and (skip.index in loop.brks or skip.target in loop.brks or
                                          skip.target in loop.cont)):
                follow = skip.target
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

    def starts_ternary(self, start, stack):
        """Whether the condition starting at `start` is the test of a conditional expression (`x = a if c else
        b`) rather than of an if statement: its true arm is one value that jumps over the false arm (or, in
        3.12, is followed by a copy of the code after the false arm)."""
        ins = self.ins
        base = len(stack)
        try:
            atoms = self.atoms(start, stack)
        except _GUESS_FAILED:
            return False
        if not atoms:
            return False
        found = self.arms(atoms)
        if found is None:
            return False
        after, false = found
        s = list(stack)
        try:
            end = self.value(after, s, base, false)
            arm = ins[end]
            if arm.op == "JUMP_FORWARD":
                return True
            if end != false and self.line_of(arm) == atoms[0][1].lineno:
                # 3.12 copies the code after a conditional expression into both arms
                f = list(stack)
                fend = self.value(false, f, base, None)
                return self.same_code(end, false, fend)
        except _GUESS_FAILED:
            pass
        return False

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
        last = max(self.line_of(self.ins[i]) for b in blocks
                   for i in range(g.starts[b], g.starts[b + 1] if b + 1 < len(g.starts) else len(self.ins) - 1))
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
                if last.op == "JUMP_FORWARD":  # [code before the break] [POP_TOP] JUMP_FORWARD follow
                    point = end - 2 if is_for and self.ins[end - 2].op == "POP_TOP" else end - 1
                    follows.add(last.target)
                else:  # the code after the loop, put by CPython right after the break
                    point = start
                    if is_for:
                        point = next(i for i in range(start, end) if self.ins[i].op == "POP_TOP")
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
        blocks = g.natural_loop(g.block_of[header])
        entries, follow = self.exits(blocks, exhausted, is_for=True)
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
        latch = max(i for i in range(header, exhausted) if ins[i].target == header)
        loop.start = pc
        body, _ = self.region(pc, latch, loop)
        node = ast.For(target=target, iter=iterable, body=body or [self.stmt_at(ast.Pass(), ins[pc])],
                       orelse=[], type_comment=None)
        self.stmt_at(node, ins[start])
        node.lineno, node.col_offset = iterable.lineno, 0
        _end_after_start(node)
        self.after_for = self.finish_loop(node, normal, follow, outer)
        return node

    def loop_at(self, pc, outer):
        """A while loop starting at `pc`: (statement, next pc), or None."""
        g = self.graph
        b = g.block_of[pc]
        if self.ins[pc].op == "FOR_ITER":
            return None
        rot = self.rotated(pc, outer) if self.may_test_a_loop(pc) else None
        if rot is None and b in g.latches and g.starts[b] == pc:  # while True: the body starts here and jumps back here
            blocks = g.natural_loop(b)
            entries, follow = self.exits(blocks, None)
            latch = max(i for i in range(pc, len(self.ins) - 1)
                        if self.ins[i].target == pc and g.block_of[i] in blocks)
            loop = _Loop({pc}, entries, blocks)
            loop.is_for = False
            loop.start = pc
            body, _ = self.region(pc, latch, loop)
            test = self.at(ast.Constant(value=True), self.ins[pc])
            node = self.stmt_at(ast.While(test=test, body=body or [self.stmt_at(ast.Pass(), self.ins[pc])],
                                          orelse=[]), self.ins[pc])
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
        loop.is_for = False
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
            if self.ins[pc + i].op != self.ins[bottom + i].op or self.ins[pc + i].argval != \
                    self.ins[bottom + i].argval:
                return None
        return atoms, after, false, bottom


def _spanning(node, parts):
    """`node` located from the first start to the last end of `parts` (a condition's parts need not come in
    the source's order)."""
    start = min((p.lineno, p.col_offset) for p in parts)
    end = max((p.end_lineno, p.end_col_offset) for p in parts)
    node.lineno, node.col_offset = start
    node.end_lineno, node.end_col_offset = end
    return node


def _end_after_start(node):
    """A statement's start moved to its first expression: its end stays after it (compile() checks)."""
    if node.end_lineno < node.lineno or (node.end_lineno == node.lineno and node.end_col_offset < node.col_offset):
        node.end_lineno, node.end_col_offset = node.lineno, node.col_offset


def _arguments(code):
    names = code.co_varnames
    pos = code.co_argcount
    posonly = code.co_posonlyargcount
    kwonly = code.co_kwonlyargcount
    a = ast.arguments(posonlyargs=[ast.arg(arg=n) for n in names[:posonly]],
                      args=[ast.arg(arg=n) for n in names[posonly:pos]],
                      kwonlyargs=[ast.arg(arg=n) for n in names[pos:pos + kwonly]],
                      kw_defaults=[None] * kwonly, defaults=[])
    i = pos + kwonly
    if code.co_flags & 4:
        a.vararg = ast.arg(arg=names[i])
        i += 1
    if code.co_flags & 8:
        a.kwarg = ast.arg(arg=names[i])
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            arg.lineno, arg.col_offset, arg.end_lineno, arg.end_col_offset = 1, 0, 1, 0
    return a


def _fdef(name, code, body):
    if not body:
        body = [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    fdef = ast.FunctionDef(name=name, args=_arguments(code), body=body, decorator_list=[],
                           returns=None, type_comment=None)
    if sys.version_info >= (3, 12):
        fdef.type_params = []
    fdef.lineno, fdef.col_offset, fdef.end_lineno, fdef.end_col_offset = 1, 0, 1, 0
    return fdef


def _normalised(code):
    """The instructions of `code` as comparable tuples: names, values and jump targets, no locations."""
    raw = [i for i in dis.get_instructions(code) if i.opname not in ("NOP", "RESUME", "EXTENDED_ARG", "CACHE")]
    index = {i.offset: k for k, i in enumerate(raw)}
    out = []
    for i in raw:
        if i.opname == "KW_NAMES":
            out.append((i.opname, code.co_consts[i.arg]))
        elif i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            target = i.argval
            while target not in index and target < code.co_code.__len__():
                target += 2
            out.append((i.opname, index.get(target, -1)))
        elif isinstance(i.argval, types.CodeType):
            out.append((i.opname, i.argval.co_name))
        elif i.opname in ("LOAD_CONST", "RETURN_CONST"):
            out.append((i.opname, type(i.argval).__name__, repr(i.argval)))
        else:
            out.append((i.opname, i.argrepr))
    return out


def _imported_names(instructions):
    """Globals the code calls a function of as of an imported module (CPython compiles `m.f()` differently
    where `m` comes from an import statement): the recompiled module imports them too."""
    return sorted({i.argval for i, n in zip(instructions, instructions[1:])
                   if i.op == "LOAD_GLOBAL" and i.arg & 1 and n.op == "LOAD_ATTR"
                   and not (sys.version_info >= (3, 12) and n.arg & 1)})


def _recompiled(fdef, code, imported=()):
    """The code object `fdef` compiles to, with the same free variables as `code`."""
    inner = fdef
    if code.co_freevars:
        outer = ast.FunctionDef(name="_outer", args=_arguments(code.replace(co_argcount=0, co_posonlyargcount=0,
                                                                             co_kwonlyargcount=0,
                                                                             co_flags=code.co_flags & ~12)),
                                body=[ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store()) for v in code.co_freevars],
                                                 value=ast.Constant(value=None)), inner,
                                      ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
                                decorator_list=[], returns=None, type_comment=None)
        if sys.version_info >= (3, 12):
            outer.type_params = []
        module = ast.Module(body=[outer], type_ignores=[])
    else:
        module = ast.Module(body=[inner], type_ignores=[])
    module.body[:0] = [ast.Import(names=[ast.alias(name=name)]) for name in imported]
    for node in module.body:
        if node is not fdef:
            ast.fix_missing_locations(node)
    top = compile(module, code.co_filename, "exec")
    work = [top]
    while work:
        c = work.pop()
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                if k.co_name == fdef.name and k is not top:
                    return k
                work.append(k)
    return None


def function_source(pyfunc):
    """The FunctionSource of `pyfunc` built from its code object. It has no source lines: errors name the file
    and line, with no line of text under them."""
    from cujit import _core
    code = pyfunc.__code__
    fdef = decompile(pyfunc)
    qualname = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    return _core.FunctionSource(fdef, pyfunc.__name__, qualname, pyfunc.__module__ or "<dynamic>",
                                code.co_filename, [], code.co_firstlineno)


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
        if code.co_exceptiontable:
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
    reader.at(node, ins)
    stmt = node if statement else reader.at(ast.Expr(value=node), ins)
    return ast.fix_missing_locations(_fdef(name, code, [stmt]))


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
