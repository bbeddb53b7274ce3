"""The bytecode frontend's expression reader: a symbolic stack turns straight-line instructions into expressions;
conditional expressions, and/or values and chained comparisons are recovered from the jumps (the conditions they
test from _conditions.py). Also the placeholders the stack holds on the way to a statement (call NULLs,
unpacked slots, augmented assignments)."""

import ast
import bisect
import copy
import math
import sys
import types

from cujit.bytecode import _ops as ops
from cujit.bytecode._conditions import (
    _GUESS_FAILED,
    _Comprehension,
    _ConditionReader,
    _Construct,
    _Unreadable,
    _spanning,
    folds_to,
)
from cujit.bytecode._decode import _Ins, _decode
from cujit.bytecode._graph import _Graph


class _Null:
    """The NULL a call sequence pushes below a plain callable."""


_NULL = _Null()
_LOAD = ast.Load()  # (one for every node that loads, as ast.parse shares it)


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


_BINARY = {
    "+": ast.Add,
    "-": ast.Sub,
    "*": ast.Mult,
    "/": ast.Div,
    "//": ast.FloorDiv,
    "%": ast.Mod,
    "**": ast.Pow,
    "<<": ast.LShift,
    ">>": ast.RShift,
    "&": ast.BitAnd,
    "|": ast.BitOr,
    "^": ast.BitXor,
    "@": ast.MatMult,
}
_COMPARE = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
_UNARY = {"UNARY_NEGATIVE": ast.USub, "UNARY_INVERT": ast.Invert, "UNARY_NOT": ast.Not, "UNARY_POSITIVE": ast.UAdd}
_LATE_FOLDING = ops.rule("late_folding", False)
_STATEMENT_ENDS = {
    "STORE_FAST",
    "STORE_GLOBAL",
    "STORE_NAME",
    "STORE_SUBSCR",
    "STORE_ATTR",
    "STORE_SLICE",
    "UNPACK_SEQUENCE",
    "POP_TOP",
    "RETURN_VALUE",
    "RETURN_CONST",
    "RAISE_VARARGS",
    "GET_ITER",
    "FOR_ITER",
}
_STORES = {"STORE_FAST", "STORE_GLOBAL", "STORE_NAME", "STORE_SUBSCR", "STORE_ATTR", "STORE_SLICE", "UNPACK_SEQUENCE"}
# The instructions `expr` looks at before `pure` (stack shuffles and jumps that may be part of a value), and the
# ones `pure` may run.
_EXPR_SPECIAL = frozenset({"SWAP", "COPY"} | ops.VALUE_JUMPS | ops.CONDITIONAL_JUMPS)
_PURE = frozenset(
    {
        "LOAD_CONST",
        "LOAD_FAST",
        "LOAD_NAME",
        "LOAD_GLOBAL",
        "LOAD_ATTR",
        "LOAD_METHOD",
        "PUSH_NULL",
        "BINARY_OP",
        "BINARY_SUBSCR",
        "BINARY_SLICE",
        "BUILD_SLICE",
        "BUILD_TUPLE",
        "BUILD_LIST",
        "BUILD_SET",
        "LIST_EXTEND",
        "SET_UPDATE",
        "BUILD_MAP",
        "BUILD_CONST_KEY_MAP",
        "CALL_INTRINSIC_1",
        "COMPARE_OP",
        "IS_OP",
        "CONTAINS_OP",
        "KW_NAMES",
        "CALL",
        "COPY",
        "SWAP",
        "MAKE_FUNCTION",
        "GET_ITER",
        "LOAD_FAST_AND_CLEAR",
        "FORMAT_VALUE",
        "BUILD_STRING",
        "CONVERT_VALUE",
        "FORMAT_SIMPLE",
        "FORMAT_WITH_SPEC",
        "YIELD_VALUE",
        "RETURN_GENERATOR",
        "IMPORT_NAME",
        "BEFORE_WITH",
        "DELETE_FAST",
        "DELETE_SUBSCR",
        "DELETE_ATTR",
        "DELETE_GLOBAL",
        "DELETE_NAME",
    }
    | set(_UNARY)
)
# Instructions `pure` runs without a jump or a side effect on the reader, and ones that end a statement.
_STRAIGHT = frozenset(
    {
        "LOAD_CONST",
        "LOAD_FAST",
        "LOAD_NAME",
        "LOAD_GLOBAL",
        "LOAD_ATTR",
        "LOAD_METHOD",
        "PUSH_NULL",
        "BINARY_OP",
        "BINARY_SUBSCR",
        "COMPARE_OP",
        "BUILD_TUPLE",
        "CALL",
    }
)
_ENDS_STATEMENT = frozenset(
    {
        "STORE_FAST",
        "STORE_SUBSCR",
        "STORE_ATTR",
        "STORE_GLOBAL",
        "STORE_NAME",
        "POP_TOP",
        "RETURN_VALUE",
        "RETURN_CONST",
    }
)
# Constants that are one ast.Constant as loaded.
_PLAIN_CONSTANTS = frozenset({int, float, bool, str, bytes, type(None)})
_CODE_NAMES = {
    "<lambda>": ast.Lambda,
    "<genexpr>": ast.GeneratorExp,
    "<listcomp>": ast.ListComp,
    "<setcomp>": ast.SetComp,
    "<dictcomp>": ast.DictComp,
}


# Set by _reader: decompile, for inner functions' code objects (no import cycle).
nested_decompile = None


def _body_indent(code):
    """The columns a function's body is indented by less one level, as _ExpressionReader counts them."""
    positions = code.co_positions() if hasattr(code, "co_positions") else ()
    cols = [c for line, _, c, _ in positions if line is not None and c is not None and line > code.co_firstlineno]
    return max(0, min(cols) - 4) if cols else 0


class _ExpressionReader(_ConditionReader):
    """Expressions, conditions and conditional expressions rebuilt from the instructions (the statement reader,
    _statements.py, builds on it)."""

    def __init__(self, fn, code, table):
        self.fn, self.code = fn, code
        self.ins = _decode(code, table)
        self.graph = _Graph(self.ins)
        self.first_line = code.co_firstlineno
        # Columns count from the def's indentation, as in the dedented source the source reader parses: the
        # body's statements sit one level (4 columns) in from the def.
        cols = [
            x.pos.col_offset
            for x in self.ins[:-1]
            if x.pos.lineno is not None and x.pos.col_offset is not None and x.pos.lineno > self.first_line
        ]
        self.indent = max(0, min(cols) - 4) if cols else 0
        for x in self.ins:
            x.loc = self.location(x)
        self.unsupported = False
        self.serial = 0
        self.ternary_tests = {}  # conditional jump -> whether it is the test of a conditional expression
        self.stops = []  # where the values being read end (value)
        # the stores of statements (not a comprehension's: none where the code inlines one), in order: where the
        # code from a conditional jump to its target stores one, the jump is no conditional expression's
        inlined = any(x.op == "LOAD_FAST_AND_CLEAR" for x in self.ins)
        self.statement_stores = [] if inlined else [x.index for x in self.ins if x.op in _STORES]
        self.unreadable_arms = {}  # where conditional expressions were found unreadable -> why (ternary, ternary_arms)
        self.stored = set()  # the names the rebuilt statements assign
        # a statement's condition read while deciding it is no conditional expression: (atoms, how many jumps were
        # decided then); the if statement's reader takes it where no other jump has been decided since
        self.statement_atoms = {}
        self.back_targets = {x.target for x in self.ins[:-1] if x.target is not None and x.target <= x.index}

    # -- inner functions ---------------------------------------------------------------------
    def nested_function(self, code, defaults):
        """The FunctionDef (or Lambda) of an inner function's code object, its locations moved into this
        function's (lines from this def's, columns from this body's indentation), `defaults` (the tuple
        MAKE_FUNCTION took) as its defaults."""
        fdef = nested_decompile(
            types.SimpleNamespace(
                __code__=code,
                __name__=code.co_name,
                __doc__=None,
                __qualname__=getattr(code, "co_qualname", code.co_name),
            )
        )
        lines = code.co_firstlineno - self.first_line
        cols = _body_indent(code) - self.indent
        for node in ast.walk(fdef):
            if getattr(node, "lineno", None) is not None:
                node.lineno += lines
                node.end_lineno = (node.end_lineno or node.lineno - lines) + lines
                node.col_offset = max(0, node.col_offset + cols)
                node.end_col_offset = max(0, (node.end_col_offset or 0) + cols)
        if isinstance(defaults, ast.Tuple):
            fdef.args.defaults = list(defaults.elts)
        elif isinstance(defaults, ast.Constant) and isinstance(defaults.value, tuple):
            fdef.args.defaults = [ast.copy_location(ast.Constant(value=v), defaults) for v in defaults.value]
        if code.co_name == "<lambda>" and len(fdef.body) == 1 and isinstance(fdef.body[0], ast.Return):
            return ast.Lambda(args=fdef.args, body=fdef.body[0].value)
        return fdef

    # -- locations ---------------------------------------------------------------------------
    def at(self, node, ins):
        node.lineno, node.end_lineno, node.col_offset, node.end_col_offset = (
            ins.loc if type(ins) is _Ins else self.location(ins)
        )
        self.serial += 1
        node._serial = self.serial
        return node

    def location(self, ins):
        """(line, end line, column, end column) of the nodes made of instruction `ins`: lines count from the
        def's, columns from the body's indentation less one level."""
        first, indent = self.first_line, self.indent
        pos = ins.pos if ins is not None else None
        if pos is None:
            return 1, 1, 0, 0
        line, end_line, col, end_col = pos
        if line is None:
            line = first
        if end_line is None:
            end_line = line
        col = 0 if col is None or col < indent else col - indent
        end_col = 0 if end_col is None or end_col < indent else end_col - indent
        return line - first + 1, end_line - first + 1, col, end_col

    def fail(self, ins, what):
        raise _Unreadable(f"{what} at instruction {ins!r}" if ins is not None else what)

    # -- constants ---------------------------------------------------------------------------
    def const(self, value, ins):
        if type(value) in _PLAIN_CONSTANTS:
            node = self.at(ast.Constant(value=value), ins)
            node._loaded = True  # a constant the code loads (not one the reader decided)
            return node
        if isinstance(value, tuple):
            return self.at(ast.Tuple(elts=[self.const(v, ins) for v in value], ctx=_LOAD), ins)
        if isinstance(value, frozenset):
            self.unsupported = True
            return self.at(ast.Set(elts=[]), ins)
        if isinstance(value, types.CodeType):
            return value
        if value is Ellipsis:
            return self.at(ast.Constant(value=...), ins)
        if isinstance(value, slice):  # 3.14 folds a slice of constants (`a[1:]`, `a[::2]`): the slice it was
            bounds = [None if v is None else self.const(v, ins) for v in (value.start, value.stop, value.step)]
            return self.at(ast.Slice(lower=bounds[0], upper=bounds[1], step=bounds[2]), ins)
        if isinstance(value, complex) and (value.real != 0 or math.copysign(1.0, value.real) < 0):
            return self.complex_const(value, ins)
        node = self.at(ast.Constant(value=value), ins)
        node._loaded = True  # a constant the code loads (not one the reader decided)
        return node

    def complex_const(self, value, ins):
        """A complex constant CPython folded (`2 + 1j`, `-1j`) as the source spells it: the frontend's complex
        literals are imaginary numbers, as in the source."""
        real, imag = value.real, value.imag
        if real == 0:  # -1j: -(1j), whose real part is -0.0
            return self.at(ast.UnaryOp(op=ast.USub(), operand=self.at(ast.Constant(value=complex(0, -imag)), ins)), ins)
        left = self.at(ast.Constant(value=int(real) if real.is_integer() and abs(real) < 2**53 else real), ins)
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
        ins, pure = self.ins, self.pure
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
            if op not in _EXPR_SPECIAL:  # (most instructions: straight to pure)
                if not pure(x, stack):
                    return pc
                pc += 1
            elif op == "SWAP" and len(stack) < x.argval:  # a value swapped under a loop's iterator (a return)
                return pc
            elif (
                op == "SWAP"
                and x.argval == 2
                and ins[pc + 1].op == "COPY"
                and ins[pc + 1].argval == 2
                and ins[pc + 2].op == "COMPARE_OP"
            ):
                pc = self.chain(pc, stack)
            elif (
                op == "COPY"
                and x.argval == 1
                and ins[pc + 1].op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
                and ins[pc + 2].op == "POP_TOP"
                and ins[pc + 1].target > pc + 1
            ):
                pc = self.value_boolop(pc + 1, pc + 3, stack)
            elif op in ops.VALUE_JUMPS:
                pc = self.value_boolop(pc, pc + 1, stack)
            elif (
                op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
                and x.target > pc
                and ins[x.target - 1].op
                == ("JUMP_IF_TRUE_OR_POP" if op == "POP_JUMP_IF_FALSE" else "JUMP_IF_FALSE_OR_POP")
            ):
                # 3.11: `a and b or c` jumps from a straight to c: the and ends at the or's jump
                pc = self.value_boolop(pc, pc + 1, stack, x.target - 1)
            elif op in ops.CONDITIONAL_JUMPS:
                if len(stack) - 1 <= base and not self.lone_test(pc):
                    decided = self.ternary_tests.get(pc)
                    if decided is None and not raw:
                        self.ternary_tests[pc] = False  # while deciding, this jump reads as a condition
                        decided = self.ternary_tests[pc] = self.starts_ternary(value_start, stack[:base])
                    if not decided:
                        return pc
                pc = self.ternary(pc, stack)
            elif not pure(x, stack):
                return pc
            else:
                pc += 1
            if watch is not None and (len(stack) <= watch or stack[watch] is not watched):
                return pc

    def pure(self, x, stack):
        """Runs instruction `x` on `stack` where it is part of an expression; False where it is not."""
        op = x.op
        if op not in _PURE:
            return False
        if op == "LOAD_CONST":
            stack.append(self.const(x.argval, x))
        elif op in ("LOAD_FAST", "LOAD_NAME"):
            stack.append(self.at(ast.Name(id=x.argval, ctx=_LOAD), x))
        elif op == "LOAD_GLOBAL":
            if x.arg & 1:
                stack.append(_NULL)
            stack.append(self.at(ast.Name(id=x.argval, ctx=_LOAD), x))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            obj = stack.pop()
            node = self.at(ast.Attribute(value=obj, attr=x.argval, ctx=_LOAD), x)
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
                if _is_constant(left) and _is_constant(right):
                    right = self.unfolded(right)
                stack.append(self.at(ast.BinOp(left=left, op=_BINARY[sym](), right=right), x))
        elif op == "BINARY_SUBSCR":
            index, container = stack.pop(), stack.pop()
            if _is_constant(index) and _is_constant(container):
                index = self.unfolded(index)
            stack.append(self.at(ast.Subscript(value=container, slice=index, ctx=_LOAD), x))
        elif op == "BINARY_SLICE":
            hi, lo, container = stack.pop(), stack.pop(), stack.pop()
            s = self.slice(x, lo, hi)
            stack.append(self.at(ast.Subscript(value=container, slice=s, ctx=_LOAD), x))
        elif op == "BUILD_SLICE":
            parts = [stack.pop() for _ in range(x.argval)][::-1]
            while len(parts) < 3:
                parts.append(None)
            stack.append(self.slice(x, *parts))
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            n = x.argval
            elts = stack[len(stack) - n :] if n else []
            del stack[len(stack) - n :]
            cls = {"BUILD_TUPLE": ast.Tuple, "BUILD_LIST": ast.List, "BUILD_SET": ast.Set}[op]
            if cls is not ast.Tuple:
                self.unsupported = cls is ast.Set or self.unsupported
            if cls is ast.Tuple and elts and all(_is_constant(e) for e in elts):
                elts[-1] = self.unfolded(elts[-1])
            node = ast.Set(elts=elts) if cls is ast.Set else cls(elts=elts, ctx=_LOAD)
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
            del stack[len(stack) - n :]
            self.unsupported = True
            stack.append(self.at(ast.Dict(keys=[], values=[]), x))
        elif op in _UNARY:
            stack.append(self.at(ast.UnaryOp(op=_UNARY[op](), operand=self.unfolded(stack.pop())), x))
        elif op == "CALL_INTRINSIC_1" and x.argrepr == "INTRINSIC_UNARY_POSITIVE":
            stack.append(self.at(ast.UnaryOp(op=ast.UAdd(), operand=self.unfolded(stack.pop())), x))
        elif op == "COMPARE_OP":
            right, left = stack.pop(), stack.pop()
            sym = x.argval if isinstance(x.argval, str) else x.argrepr
            sym = sym.replace("bool(", "").rstrip(")")
            stack.append(self.at(ast.Compare(left=left, ops=[_COMPARE[sym]()], comparators=[right]), x))
        elif op in ("IS_OP", "CONTAINS_OP"):
            right, left = stack.pop(), stack.pop()
            cmp = {
                ("IS_OP", 0): ast.Is,
                ("IS_OP", 1): ast.IsNot,
                ("CONTAINS_OP", 0): ast.In,
                ("CONTAINS_OP", 1): ast.NotIn,
            }[(op, x.arg)]
            stack.append(self.at(ast.Compare(left=left, ops=[cmp()], comparators=[right]), x))
        elif op == "KW_NAMES":
            self.kw_names = self.code.co_consts[x.arg]
        elif op == "CALL":
            n = x.argval
            args = stack[len(stack) - n :] if n else []
            del stack[len(stack) - n :]
            func = stack.pop()
            if stack and stack[-1] is _NULL:
                stack.pop()
            if isinstance(func, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                stack.append(func)  # a comprehension (3.11 calls its function)
                return True
            kw = getattr(self, "kw_names", None) or ()
            self.kw_names = None
            positional = args[: len(args) - len(kw)]
            keywords = [ast.keyword(arg=k, value=v) for k, v in zip(kw, args[len(args) - len(kw) :])]
            for k, v in zip(keywords, args[len(args) - len(kw) :]):
                k.lineno, k.col_offset = v.lineno, v.col_offset
                k.end_lineno, k.end_col_offset = v.end_lineno, v.end_col_offset
            stack.append(self.at(ast.Call(func=func, args=positional, keywords=keywords), x))
        elif op == "COPY":
            stack.append(stack[-x.argval])
        elif op == "SWAP":
            stack[-1], stack[-x.argval] = stack[-x.argval], stack[-1]
        elif op == "MAKE_FUNCTION":
            code = stack.pop()
            if not isinstance(code, types.CodeType):
                self.fail(x, "a function definition")
            flags = x.argval if isinstance(x.argval, int) else 0
            popped = {}
            for bit in (8, 4, 2, 1):
                if flags & bit:
                    popped[bit] = stack.pop()
            cls = _CODE_NAMES.get(code.co_name)
            if cls in (None, ast.Lambda) and not flags & 6 and nested_decompile is not None:
                # an inner function (a def, or a lambda): its own code read as a function, placed in this one
                stack.append(self.at(self.nested_function(code, popped.get(1)), x))
                return True
            self.unsupported = True
            if cls is ast.Lambda:
                node = ast.Lambda(
                    args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                    body=ast.Constant(value=None),
                )
            elif cls is not None:
                node = cls()
            else:
                node = ast.Name(id="<function>", ctx=_LOAD)
                node._nested_def = code.co_name
            stack.append(self.at(node, x))
        elif (
            op == "GET_ITER"
            and len(stack) > 1
            and isinstance(stack[-2], (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp))
        ):
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

    def unfolded(self, node):
        """`node` as the operand of an operation CPython would fold if it were a constant: such an operation
        in the bytecode has a constant that CPython's own folding of code it dropped left there (`63 + (16.5
        if 7 else b)`). `(True and c)` compiles to the same instructions without being folded, and the
        compiler reads it as `c`."""
        if not _is_constant(node):
            return node
        out = ast.BoolOp(op=ast.And(), values=[ast.Constant(value=True), node])
        for n in (out, out.values[0]):
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(node, f))
        out._serial = node._serial
        return out

    def slice(self, ins, lower, upper, step=None):
        """The slice an instruction builds of its bounds. CPython 3.14 builds a slice of constants as one constant
        (`a[1:]`): one built at run time from constants had a bound that is no constant in the tree (`a[-1:]`),
        written as one (folds_to)."""
        bounds = [self.bound(b) for b in (lower, upper, step)]
        present = [k for k, b in enumerate(bounds) if b is not None]
        foldable = [k for k in present if folds_to(bounds[k]) is not None]
        if _LATE_FOLDING and foldable and all(_is_constant(bounds[k]) for k in present):
            k = min(foldable, key=lambda k: bounds[k].value >= 0)  # a negative bound first, as a source spells it
            bounds[k] = folds_to(bounds[k])
        return self.at(ast.Slice(lower=bounds[0], upper=bounds[1], step=bounds[2]), ins)

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
        elif (
            cleanup > pc
            and cleanup + 2 in self.stops
            and ins[cleanup].op == "SWAP"
            and ins[cleanup + 1].op == "POP_TOP"
            and self.returns_after(pc, cleanup) == cleanup
            and self.same_code(pc, cleanup, cleanup + 2)
        ):
            # the chain ends a value (`x and a < b < c`) that ends after its cleanup, where the code after the value
            # goes on: CPython 3.12 copied that code, up to its return, before the cleanup
            pc = cleanup + 2
        return pc

    def value_boolop(self, jump_pc, right_pc, stack, join=None):
        """``a and b`` / ``a or b`` as a value: the left value stays on the stack when the jump is taken."""
        j = self.ins[jump_pc]
        join = j.target if join is None else join
        left = self.unfolded(stack.pop())  # a constant here is what CPython's folding of `9 and 60` left
        is_and = "FALSE" in j.op
        base = len(stack)
        saved = list(stack)
        pc = self.value(right_pc, stack, base, join)
        if pc != join and self.ins[pc].op in ("RETURN_VALUE", "RETURN_CONST"):
            # 3.12 copied the code after the value (up to its return) into the right operand's path: the operand
            # ends where that copy starts (`return +(x and y)`)
            tail = self.returns_after(join, None)
            n = tail - join if tail is not None else 0
            if 0 < n <= pc + 1 - right_pc and self.same_code(pc + 1 - n, pc + 1, join):
                stack[:] = saved
                pc = self.value(right_pc, stack, base, pc + 1 - n)
        right = stack.pop()
        cls = ast.And if is_and else ast.Or
        values = [left] + (
            right.values
            if isinstance(right, ast.BoolOp) and isinstance(right.op, cls) and getattr(right, "_join", None) == join
            else [right]
        )
        node = ast.BoolOp(op=cls(), values=values)
        self.at(node, j)
        node.lineno, node.col_offset = left.lineno, left.col_offset
        node.end_lineno, node.end_col_offset = right.end_lineno, right.end_col_offset
        node._join = join
        stack.append(node)
        return pc

    def value(self, pc, stack, base, stop):
        """One value pushed by the code from `pc` to `stop` (ternaries included)."""
        self.stops.append(stop)
        try:
            while True:
                pc = self.expr(pc, stack, base, stop=stop)
                if pc == stop:
                    break
                x = self.ins[pc]
                if x.op in ops.CONDITIONAL_JUMPS and len(stack) == base + 1:
                    pc = self.ternary(pc, stack)
                    continue
                break
        finally:
            self.stops.pop()
        if len(stack) != base + 1:
            self.fail(self.ins[pc], "an expression")
        return pc

    def ternary(self, jump_pc, stack):
        """``a if c else b`` where the jump of `c` (or of its first part) is at `jump_pc`; the condition's
        value is on top of `stack`. Pushes the IfExp and returns where the code goes on. One found unreadable
        is not read again from the same place (as ternary_arms)."""
        key = (
            jump_pc,
            len(stack),
            tuple(self.stops),
            len(self.ternary_tests),
            getattr(stack[-1], "_cleanup", None) if stack else None,
        )
        failed = self.unreadable_arms.get(key)
        if failed is not None:
            raise copy.copy(failed)
        try:
            return self.read_ternary(jump_pc, stack)
        except _GUESS_FAILED as e:
            self.unreadable_arms[key] = _detached(e)
            raise

    def read_ternary(self, jump_pc, stack):
        first = self.ins[jump_pc]
        store = self.first_store(jump_pc + 1, first.target)
        if store is not None and not self.copied_tail(store, first.target):
            self.fail(first, "a conditional expression")  # it jumps over a statement: an if statement's test
        if first.target == jump_pc + 1 or (
            first.target == jump_pc + 2
            and self.ins[jump_pc + 1].op == "JUMP_FORWARD"
            and self.ins[jump_pc + 1].target == first.target
        ):
            return self.lone_arm(jump_pc, stack)
        node = stack.pop()
        base = len(stack)
        found = [(None, node, first, jump_pc + 1, jump_pc + 1, False)]
        pc = jump_pc + 1
        cleanup = getattr(node, "_cleanup", None)
        if cleanup is not None and self.ins[pc].op == "JUMP_FORWARD" and cleanup == pc + 1:
            pc = self.ins[pc].target
            found[0] = (None, node, first, pc, pc, False)
        while True:
            if self.constant_else(found, pc):  # `(a if c else 0)` in the test: the constant false arm jumps out
                jump = self.ins[pc]
                found.append((pc, None, jump, pc + 1, jump.target, True))
                pc += 1
                continue
            last = found[-1]
            if last[1] is not None and not last[5] and self.constant_arm(found, last[2], pc):
                jump = self.ins[pc]  # `(4 if c else x)` in the test: a constant arm jumps out
                found.append((pc, None, jump, pc + 1, jump.target, True))
                pc += 1
            s = list(stack)
            end = self.expr(pc, s, base, raw=True)
            x = self.ins[end]
            if x.op in ops.CONDITIONAL_JUMPS and len(s) == base + 1 and x.target > x.index:
                nxt = end + 1
                cleanup = getattr(s[-1], "_cleanup", None)  # a chained comparison jumps over its cleanup
                if cleanup is not None and self.ins[nxt].op == "JUMP_FORWARD" and cleanup == nxt + 1:
                    if self.chain_arm_ends(found, x, cleanup):
                        found.append((pc, s[-1], x, cleanup + 2, self.ins[nxt].target, True))
                        pc = cleanup + 2
                        continue
                    nxt = self.ins[nxt].target
                if self.arm_ends(found, x, nxt):
                    found.append((pc, s[-1], x, nxt + 1, self.ins[nxt].target, True))
                    pc = nxt + 1
                else:
                    found.append((pc, s[-1], x, nxt, nxt, False))
                    pc = nxt
                continue
            break
        found[0] = (-1,) + found[0][1:]
        # The test is the longest run of these jumps that goes to the true arm (after it) or the false arm only:
        # the later ones may be the true arm's own conditional expression.
        failure = None
        for k in range(len(found), 0, -1):
            cut = found[:k]
            pc = cut[-1][3]
            other = self.atom_exits(cut) - {pc}
            # the last part falls into the true arm, or is a constant that jumps to the false arm (`n or 0`)
            if (cut[-1][4] != pc and cut[-1][1] is not None) or len(other) != 1 or min(other) < pc:
                continue
            try:
                s, f, join = self.ternary_arms(pc, other.pop(), stack, base)
                test = self.structure(cut, pc, max(a[2].target for a in cut))
                break
            except _GUESS_FAILED as exc:
                failure = failure or exc.with_traceback(None)  # (kept with its traceback: a cycle through this frame)
        else:
            try:
                raise failure or _Unreadable(f"a conditional expression at instruction {first!r}")
            finally:
                failure = None  # (an exception this frame held as it raised it: a cycle through the frame)
        out = ast.IfExp(test=test, body=s[-1], orelse=f[-1])
        for k in ("lineno", "col_offset", "_serial"):
            setattr(out, k, getattr(s[-1], k))
        out.lineno, out.col_offset = s[-1].lineno, s[-1].col_offset
        out.end_lineno, out.end_col_offset = f[-1].end_lineno, f[-1].end_col_offset
        stack.append(out)
        return join

    def lone_test(self, pc):
        """Whether the conditional jump at `pc` is the test of a conditional expression with one arm left
        (lone_arm): it goes where it falls through, on the same line."""
        x = self.ins[pc]
        lone = x.target == pc + 1 or (
            x.target == pc + 2 and self.ins[pc + 1].op == "JUMP_FORWARD" and self.ins[pc + 1].target == x.target
        )
        return (
            lone
            and self.line_of(self.ins[x.target]) == self.line_of(x)
            and not any(y.target == x.target for y in self.ins[:pc])
        )  # (not the last part of `c or x or 1`)

    def lone_arm(self, jump_pc, stack):
        """``a if c or 1 else b`` (``b if c and 0 else a``): the test's jump goes to the next instruction, the arm
        it never takes is dropped, and the code from there is the other arm's value, as long as the longest
        value it reads (the same bytecode for `-(a if c or 1 else b)` and `-a if c or 1 else b`). The dropped
        arm is rebuilt as a copy of the other (CPython and the compiler leave it out)."""
        import copy

        jump = self.ins[jump_pc]
        test = self.test_of(stack.pop(), jump)
        base = len(stack)
        best = None
        start = jump.target
        for end in range(start + 1, len(self.ins)):
            if (
                self.ins[end - 1].op in _STATEMENT_ENDS
                or self.ins[end - 1].target is not None
                and self.ins[end - 1].target < end
            ):
                break
            s = list(stack)
            try:
                if (
                    self.value(start, s, base, end) == end
                    and len(s) == base + 1
                    and all(x is y for x, y in zip(s, stack))
                ):  # what is under it stays
                    best = (end, s[-1])
            except _GUESS_FAILED:
                continue
        if best is None:
            self.fail(jump, "a conditional expression")
        end, arm = best
        holds = jump.op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_NOT_NONE")
        if start == jump_pc + 2:  # `(False if c else 0)`: each way of the test jumps to the false arm
            serial = test._serial
            if holds:
                test = self.negate(test, jump)
            arms = [self.at(ast.Constant(value=False), jump) for _ in range(2)]
            test = _spanning(ast.IfExp(test=test, body=arms[0], orelse=arms[1]), [test])
            test._serial = serial
            holds = False
        else:
            decided = self.at(ast.Constant(value=holds), jump)
            test = _spanning(ast.BoolOp(op=ast.Or() if holds else ast.And(), values=[test, decided]), [test])
            test._serial = test.values[0]._serial
        dropped = copy.deepcopy(arm)
        out = ast.IfExp(test=test, body=arm if holds else dropped, orelse=dropped if holds else arm)
        out._serial = test._serial
        stack.append(_spanning(out, [test, arm]))
        return end

    def first_store(self, start, stop):
        """The first statement's store from `start` up to `stop`, or None."""
        k = bisect.bisect_left(self.statement_stores, start)
        if k < len(self.statement_stores) and self.statement_stores[k] < stop:
            return self.statement_stores[k]
        return None

    def copied_tail(self, store, false):
        """Whether the code from `store` (in a true arm, before the false arm at `false`) up to a return is a copy
        of the code after the false arm's value, from the false arm's first store (CPython copies the code after a
        conditional expression, up to a return, into each arm: `x = a if c else b; return x`; an arm with and/or
        in it has several copies). The copies' jumps go to their own copies of their targets: jumps compare by
        their operation only."""
        other = self.first_store(false, len(self.ins))
        if other is None:
            return False
        ins = self.ins
        for k in range(false - store):
            if other + k >= len(ins):
                return False
            a, b = ins[store + k], ins[other + k]
            if a.op != b.op or (a.target is None and a.argval != b.argval):
                return False
            if a.op in ("RETURN_VALUE", "RETURN_CONST"):
                return True
        return False

    def ternary_arms(self, pc, false, stack, base):
        """The two arms of a conditional expression whose true arm starts at `pc` and false arm at `false`:
        (true stack, false stack, the index where the code goes on). Arms found unreadable once are not read
        again from the same place (nested guesses would read them once per enclosing guess: 2**depth)."""
        key = (pc, false, len(stack), base, tuple(self.stops), len(self.ternary_tests))
        failed = self.unreadable_arms.get(key)
        if failed is not None:
            raise copy.copy(failed)
        try:
            return self.read_ternary_arms(pc, false, stack, base)
        except _GUESS_FAILED as e:
            self.unreadable_arms[key] = _detached(e)
            raise

    def read_ternary_arms(
        self, pc, false, stack, base
    ):  # The true arm: its value, then a jump over the false arm (or a copy of the code after both).
        s = list(stack)
        try:
            end = self.value(pc, s, base, false)
        except _GUESS_FAILED:
            # 3.12: each arm runs into its own copy of the code after the expression, up to a return (its
            # values may be consumed there, with what is under them: `return f(a if c else b)`)
            end, fend = self.returns_after(pc, false), self.returns_after(false, None)
            if end is None or fend is None or not self.same_code(end - 1, end, fend - 1):
                raise
            x = None
        else:
            x = self.ins[end]
        if x is None:
            pass
        elif x.op == "JUMP_FORWARD":
            join = x.target
            f = list(stack)
            fend = self.value(false, f, base, join)
            if fend != join and self.ins[fend].op == "JUMP_FORWARD" and self.ins[fend].target == join:
                join = fend  # the false arm runs into an outer arm's jump, which CPython's true arm jumps past
            elif fend != join:
                self.fail(x, "a conditional expression")
        else:
            f = list(stack)
            fend = self.value(false, f, base, None)
            if not self.same_code(end, false, fend):
                self.fail(x, "a conditional expression")
        if x is None or x.op != "JUMP_FORWARD":
            join = None if x is None else end
            # CPython copied the code after the expression into both arms: the arms end where their code starts
            # to be the same (`(a if c else b) + 1` has `+ 1` in each arm).
            same = 0
            while (
                end - same - 1 >= pc
                and fend - same - 1 >= false
                and self.same_code(end - same - 1, end - same, fend - same - 1)
            ):
                same += 1
            for back in range(same, 0, -1):
                try:
                    s2, f2 = list(stack), list(stack)
                    if (
                        self.value(pc, s2, base, end - back) == end - back
                        and self.value(false, f2, base, fend - back) == fend - back
                    ):
                        # (the same code goes on from either; the false arm's may be an enclosing value's join,
                        # where the true arm runs into a copy of the code after that value)
                        # (the same code goes on from either, but the false arm's may be where an enclosing
                        # value ends, `x or (10 if c else y)`, whose code after it the true arm has a copy of)
                        s, f, join = s2, f2, fend - back if fend - back in self.stops else end - back
                        break
                except _GUESS_FAILED:
                    continue
            if join is None:
                self.fail(self.ins[pc], "a conditional expression")
        return s, f, join

    def returns_after(self, pc, stop):
        """The index after the return that the code from `pc` runs into (before `stop`; its jumps, of and/or
        values or the conditional expressions in it, go forward), or None."""
        for i in range(pc, len(self.ins) - 1):
            x = self.ins[i]
            if i == stop or (x.target is not None and x.target <= x.index):
                return None
            if x.op in ("RETURN_VALUE", "RETURN_CONST"):
                # (a jump past it goes to another copy: a chained comparison's cleanup, SWAP 2 and POP_TOP, or a
                # conditional expression's other arm, each with its own copy of the code)
                return i + 1
            if x.op in ops.TERMINAL:
                return None
        return None

    def same_code(self, a, a_end, b):
        """Whether the instructions from `a` up to `a_end` repeat from `b` (a tail CPython copied)."""
        n = a_end - a
        if n <= 0 or b + n > len(self.ins) - 1:
            return False
        return all(
            self.ins[a + i].op == self.ins[b + i].op and self.ins[a + i].argval == self.ins[b + i].argval
            for i in range(n)
        )

    def starts_ternary(self, start, stack):
        """Whether the condition starting at `start` is the test of a conditional expression (`x = a if c else
        b`) rather than of an if statement: its true arm is one value that jumps over the false arm (or, in
        3.12, is followed by a copy of the code after the false arm)."""
        ins = self.ins
        base = len(stack)
        decided = len(self.ternary_tests)  # (the atoms are the if statement's only while no other jump is decided)
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
        k = after  # (a true arm whose straight code ends in a statement off the test's line is none: not read)
        while k < false and ins[k].op in _STRAIGHT:
            k += 1
        if not (
            k < false and ins[k].op in _ENDS_STATEMENT and self.line_of(ins[k]) != getattr(atoms[0][1], "lineno", None)
        ):
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
                    if self.same_code(end, false, fend):
                        return True
            except _GUESS_FAILED:
                pass
        if not stack and len(self.ternary_tests) == decided:  # a statement's test: the if's reader reads it next
            self.statement_atoms[start] = (atoms, decided)
        return False


def _detached(error):
    """A copy of `error` that holds no frames (its traceback and the errors it was raised in dropped): kept by the
    reader, it must not tie the reader into a reference cycle; raised again as a copy of it."""
    kept = copy.copy(error)
    kept.__traceback__ = kept.__context__ = kept.__cause__ = None
    return kept


def _is_constant(node):
    """A literal CPython's compiler folds operations of (kept on a tuple's node: a tuple nested n deep is asked at
    each of its levels as it is built)."""
    if isinstance(node, ast.Constant):
        return True
    if not isinstance(node, ast.Tuple):
        return False
    known = getattr(node, "_constant", None)
    if known is None:
        known = node._constant = all(_is_constant(e) for e in node.elts)
    return known


def _end_after_start(node):
    """A statement's start moved to its first expression: its end stays after it (compile() checks)."""
    if node.end_lineno < node.lineno or (node.end_lineno == node.lineno and node.end_col_offset < node.col_offset):
        node.end_lineno, node.end_col_offset = node.lineno, node.col_offset
