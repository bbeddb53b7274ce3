"""Decoding of a code object's instructions for the bytecode frontend (_reader.py): everything that depends on
the CPython minor version sits here and in the tables of _ops.py. `_decode` has co_code read into `_Ins`
records by the C++ decoder (cpp/bindings/py_bytecode.cpp), with the plan `_plan` makes of the version's table:
opcode names normalised by the table, arguments read by its rules, jump targets as instruction indices, each with
its `_Position` from co_positions. `_normalised` and `_imported_names` read instructions for the recompile check,
on their own (the check does not lean on the decoder it checks)."""

import ast
import collections
import dis
import operator
import sys
import types

from cujit.bytecode import _ops as ops
from cujit import _core


class _Ins:
    # (`loc`: the location the reader gives the nodes made of it, set by the reader; `back`: set on a jump the
    # condition reader rewrites, never by the decoder)
    __slots__ = ("index", "offset", "op", "arg", "argval", "argrepr", "target", "pos", "name", "loc", "back")

    def __repr__(self):
        return f"{self.index}:{self.op}({self.argrepr or self.argval})"


def _decode(code, table):
    """The instructions that mean something (no NOP, RESUME, caches), each with its jump target as an index.
    Read from co_code directly by the C++ decoder (dis builds much more than this needs) with the version's plan
    (_plan); an instruction that stands for several (3.10's rotations, 3.13's superinstructions) is several, and a
    version's spellings of one shape (a call with keywords, the end of a for loop, ...) are the spelling the reader
    knows (_reshaped)."""
    version = sys.version_info[:2]
    rules = ops.ARGUMENTS[version]
    kept = _plan(version, table).decode(code)  # indices and jump targets set, in this list
    if _reshape(kept):  # instructions dropped: an old index's new one (a dropped instruction's is the next kept)
        moved, count = [], 0
        for x in kept:
            moved.append(count)
            count += x.op is not None
        moved.append(count)
        kept = [x for x in kept if x.op is not None]
        for i, x in enumerate(kept):
            x.index = i
            if x.target is not None:
                x.target = moved[x.target]
    end = _Ins()
    end.index, end.offset, end.op, end.arg, end.argval, end.argrepr, end.target, end.name = (
        len(kept),
        -1,
        "<end>",
        None,
        None,
        "",
        None,
        "<end>",
    )
    end.pos = end.loc = None
    if rules["threaded_value_jumps"]:
        _unthread_value_jumps(kept)
    _merge_return_copies(kept)
    return kept + [end]


# How _decode reads each opcode's argument (_plan), by number (cpp/bindings/py_bytecode.cpp's ArgKind).
_PLAIN, _LOCAL, _CONST, _NAME, _JUMP, _BINARY, _COMPARE, _OPERATOR, _COMMON_CONSTANT, _INTRINSIC, _SPLIT, _SUPER = (
    range(12)
)
_JUMP_OPCODES = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_PLANS = {}


def _plan(version, table):
    """The C++ decoder's plan of `version` by its `table`: for each opcode its name, the reader's name (None:
    dropped), how its argument reads and what that needs (a name's shift, a jump's direction, 3.10's cells, an
    operator, the parts of one that stands for several); the sizes of the inline caches; the names of BINARY_OP's
    operators and comparisons. Built once per table."""
    found = _PLANS.get(id(table))
    if found is not None and found[0] is table:
        return found[1]
    rules = ops.ARGUMENTS[version]
    name_shift = rules["name_shift"]
    split, supers = ops.SPLIT.get(version, {}), ops.SUPERINSTRUCTIONS.get(version, {})
    operators = ops.OPERATORS.get(version, {})
    opcodes = []
    for opcode, name in enumerate(dis.opname[:256]):
        op = table.get(name, name)
        kind, extra = _PLAIN, None
        if name in split:
            kind, extra = _SPLIT, split[name]
        elif name in supers:
            kind, extra = _SUPER, supers[name]
        elif opcode in _JUMP_OPCODES:
            # (JUMP_ABSOLUTE: JUMP_FORWARD or JUMP_BACKWARD, by where it goes; the reader follows those of JUMPS)
            kind, extra = (
                _JUMP,
                (
                    rules["absolute_jumps"] and opcode in dis.hasjabs,
                    name in ops.BACKWARD,
                    op == "JUMP_ABSOLUTE",
                    op == "JUMP_ABSOLUTE" or op in ops.JUMPS,
                ),
            )
        elif name in ("LOAD_CONST", "RETURN_CONST"):
            kind = _CONST
        elif name in ops.IMMEDIATE_CONSTANTS:
            kind = _PLAIN
        elif name == "LOAD_COMMON_CONSTANT":
            kind = _COMMON_CONSTANT
        elif name in ops.NAMES:
            # (3.10 has no NULL to push: its LOAD_GLOBAL's argument moves up past 3.11's flag bit, left clear)
            kind, extra = _NAME, (name_shift.get(name, 0), name == "LOAD_GLOBAL" and not name_shift)
        elif name in ops.LOCALS:
            kind, extra = _LOCAL, name in ops.CELLS
        elif name == "COMPARE_OP":
            kind = _COMPARE
        elif name in operators:
            kind, extra = _OPERATOR, operators[name]
        elif name == "BINARY_OP":
            kind = _BINARY
        elif name == "CALL_INTRINSIC_1":
            kind = _INTRINSIC
        opcodes.append((name, op, kind, extra))
    caches = dis._inline_cache_entries if sys.version_info >= (3, 11) else [0] * 256
    if isinstance(caches, dict):  # 3.13: by name
        caches = [caches.get(name, 0) for name in dis.opname[:256]]
    binary = [(text, ops.OPERATOR_INSTRUCTIONS.get(text)) for _, text in getattr(dis, "_nb_ops", ())]
    plan = _core.BytecodePlan(
        opcodes,
        list(caches[:256]),
        dis.opmap["EXTENDED_ARG"],
        binary,
        tuple(dis.cmp_op),
        rules["compare_shift"],
        tuple(ops.COMMON_CONSTANTS.get(version, ())),
        tuple(getattr(dis, "_intrinsic_1_descs", ())),
        _Ins,
        _Position,
    )
    _PLANS[id(table)] = (table, plan)
    return plan


def _unthread_value_jumps(kept):
    """CPython 3.14 threads the jump of an and/or value into the next one's fall-through where that one tests
    the same value the other way (`(v and 75) or 86`: v false goes straight to the cleanup before 86); such a
    jump goes to the next one's test again, as before 3.14, where the reader looks for it."""
    for x in kept:
        if (
            x.op not in ops.CONDITIONAL_JUMPS
            or x.index == 0
            or kept[x.index - 1].op != "COPY"
            or kept[x.index - 1].argval != 1
        ):
            continue
        t = x.target
        if (
            t is not None
            and x.index + 2 < t < len(kept)
            and kept[t].op == "POP_TOP"
            and kept[t - 1].op in ops.CONDITIONAL_JUMPS
            and kept[t - 1].op != x.op
            and kept[t - 2].op == "COPY"
            and kept[t - 2].argval == 1
        ):
            x.target = t - 2


def _jump_target(rules, name, opcode, arg, after):
    """The offset a jump goes to, by the version's argument `rules` (`after`: the offset after its caches)."""
    if rules["absolute_jumps"] and opcode in dis.hasjabs:
        return 2 * arg
    return after - 2 * arg if name in ops.BACKWARD else after + 2 * arg


def local_slots(code):
    """The names of a code object's local slots from CPython 3.11 on, in the numbering instructions use: its
    locals (arguments first), the cells that are not also locals, then its free variables (what CPython's private
    ``code._varname_from_oparg`` looks up, read here from the public attributes)."""
    varnames = code.co_varnames
    return varnames + tuple(c for c in code.co_cellvars if c not in varnames) + code.co_freevars


def _local(code, slots, name, arg):
    """The local (or cell, or free variable) instruction `name` with argument `arg` reads or writes; `slots`:
    local_slots(code) from CPython 3.11 on (made once per code object by the caller)."""
    if sys.version_info < (3, 11):
        return (code.co_cellvars + code.co_freevars)[arg] if name in ops.CELLS else code.co_varnames[arg]
    return slots[arg]


def _instructions(code):
    """(offset of its first EXTENDED_ARG or its own, offset, opcode, argument, offset after its caches) of each
    instruction but EXTENDED_ARG."""
    raw = code.co_code
    caches = dis._inline_cache_entries if sys.version_info >= (3, 11) else None
    if isinstance(caches, dict):  # 3.13: by name
        caches = [caches.get(name, 0) for name in dis.opname]
    extended = dis.opmap["EXTENDED_ARG"]
    arg_high, start = 0, None
    offset, n = 0, len(raw)
    while offset < n:
        opcode, arg = raw[offset], raw[offset + 1] | arg_high
        after = offset + 2 + (2 * caches[opcode] if caches else 0)
        if opcode == extended:
            arg_high = arg << 8
            start = offset if start is None else start
        else:
            yield (start if start is not None else offset), offset, opcode, arg, after
            arg_high, start = 0, None
        offset = after


def _code_positions(code):
    """(line, end line, column, end column) of each code unit, as co_positions gives them (3.11 on); on 3.10,
    which has no columns, the lines of co_lines and None for the columns."""
    if hasattr(code, "co_positions"):
        return list(code.co_positions())
    out = [(None, None, None, None)] * (len(code.co_code) // 2)
    for start, end, line in code.co_lines():
        for unit in range(start // 2, end // 2):
            out[unit] = (line, line, None, None)
    return out


def _reshape(kept):
    """A version's spellings of one shape turned into the spelling the reader knows, 3.11's or 3.12's (in place;
    an instruction dropped gets the op None): a call with keywords (the names' tuple pushed last: KW_NAMES
    before CALL), a function's qualified name (3.10: 3.11 takes it from the code) and attributes (3.13:
    MAKE_FUNCTION's flags), a comprehension's call (3.10: CALL 1 after GET_ITER; 3.11: CALL 0), a chained
    comparison's DUP_TOP, ROT_THREE (3.10; SWAP 2, COPY 2), and the POP_TOP after END_FOR (3.13). Returns
    whether it dropped any."""
    old = sys.version_info < (3, 11)
    prev = prev2 = prev3 = None
    dropped = False
    for x in kept:
        if x.op == "CALL_KW" and prev is not None and prev.op == "LOAD_CONST" and isinstance(prev.argval, tuple):
            prev.op, x.op = "KW_NAMES", "CALL"
        elif (
            x.op == "MAKE_FUNCTION"
            and old
            and prev is not None
            and prev.op == "LOAD_CONST"
            and isinstance(prev.argval, str)
        ):
            prev.op, dropped = None, True
        elif x.op == "SET_FUNCTION_ATTRIBUTE" and prev is not None and prev.op == "MAKE_FUNCTION":
            prev.argval |= x.argval
            x.op, dropped = None, True
        elif x.op == "CALL" and x.argval == 1 and old and prev is not None and prev.op == "GET_ITER":
            x.argval = 0
        elif (
            x.op == "COMPARE_OP"
            and prev3 is not None
            and [(y.name, y.op) for y in (prev3, prev2, prev)]
            == [("DUP_TOP", "COPY"), ("ROT_THREE", "SWAP"), ("ROT_THREE", "SWAP")]
        ):
            prev3.op, prev3.argval, prev3.arg = "SWAP", 2, 2
            prev2.op, prev2.argval, prev2.arg = "COPY", 2, 2
            prev.op, dropped = None, True
        elif x.op == "POP_TOP" and prev is not None and prev.name == "END_FOR" and sys.version_info >= (3, 13):
            x.op, dropped = None, True
        if x.op is not None:
            prev3, prev2, prev = prev2, prev, x
    return dropped


def _has_handlers(code, instructions):
    """Whether the code has exception handlers (try, with, 3.12's inlined comprehensions): an exception table
    (3.11 on), or 3.10's SETUP_FINALLY / SETUP_WITH."""
    if sys.version_info >= (3, 11):
        return bool(code.co_exceptiontable)
    return any(x.name in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH") for x in instructions)


def _added_by_lines(instructions, x):
    """Whether the jump or return `x` is one CPython added (the end of a loop's body, a function's implicit
    return), told by lines alone (3.10 has no columns): it has the line of an instruction leading to it, unless
    that is a condition falling into it on the same line (`if c: continue`, whose body it is), or no line."""
    head = x
    before = instructions[x.index - 1] if x.index > 0 else None
    if (
        x.op == "RETURN_VALUE"
        and before is not None
        and before.op == "LOAD_CONST"
        and before.argval is None
        and before.pos.lineno == x.pos.lineno
    ):
        head = before
    line = head.pos.lineno
    if line is None:  # no line at all: CPython's own
        return True
    prev = instructions[head.index - 1] if head.index > 0 else None
    falls = prev is not None and prev.op not in ops.TERMINAL and prev.op not in ("JUMP_FORWARD", "JUMP_BACKWARD")
    if falls and prev.pos.lineno == line:
        return prev.op not in ops.CONDITIONAL_JUMPS
    return any(y.target == head.index and y.pos.lineno == line for y in instructions[:-1])


def _place_paired_names(nodes):
    """3.13 loads two locals with one instruction, located where the first is: the second's Name, located there
    too, gets its place from the expression it is the start or end of (`a.x`, `a[i]`, `x + y`, `f(x, y)`), where
    that expression is on one line (`nodes`: a tree's, _nodes)."""
    first, paired = {}, set()
    names, parents = [], []
    kinds = _PAIRED_PARENTS
    for n in nodes:
        cls = type(n)
        if cls is ast.Name:
            if hasattr(n, "_serial"):
                names.append(n)
        elif cls in kinds:
            parents.append(n)
    place = operator.attrgetter("lineno", "col_offset", "end_lineno", "end_col_offset")
    for n in sorted(names, key=operator.attrgetter("_serial")):
        if first.setdefault(place(n), n) is not n:
            paired.add(id(n))
    if not paired:
        return
    for parent in parents:
        if getattr(parent, "lineno", None) is None or parent.lineno != parent.end_lineno:
            continue
        starts, ends = [], []
        if isinstance(parent, (ast.Attribute, ast.Subscript)):
            starts.append(parent.value)
        if isinstance(parent, ast.Subscript):
            ends.append((parent.slice, 1))  # a[i]: i ends before the bracket
        if isinstance(parent, ast.BinOp):
            starts.append(parent.left)
            ends.append((parent.right, 0))
        if isinstance(parent, ast.Compare):
            starts.append(parent.left)
            ends.append((parent.comparators[-1], 0))
        if isinstance(parent, ast.Call) and parent.args and not parent.keywords:
            ends.append((parent.args[-1], 1))
        for n in starts:
            if id(n) in paired and isinstance(n, ast.Name) and n.lineno == parent.lineno:
                n.col_offset, n.end_col_offset = parent.col_offset, parent.col_offset + len(n.id)
                paired.discard(id(n))
        for n, closing in ends:
            if id(n) in paired and isinstance(n, ast.Name) and n.lineno == parent.lineno:
                end = parent.end_col_offset - closing
                n.col_offset, n.end_col_offset = max(0, end - len(n.id)), end
                paired.discard(id(n))


_PAIRED_PARENTS = frozenset({ast.Attribute, ast.Subscript, ast.BinOp, ast.Compare, ast.Call})


def same_tree(a, b):
    """Whether trees (or lists of them, or values) `a` and `b` are alike, locations included: what comparing their
    ``ast.dump(include_attributes=True)`` tells, without writing them out."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return all(same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields) and all(
            getattr(a, f, None) == getattr(b, f, None) for f in a._attributes
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    return a is b or repr(a) == repr(b)


def _nodes(tree):
    """Every expression and statement of `tree` (and its other nodes that hold some: arguments, keywords...), as
    ast.walk gives them (in another order, without contexts and operators), in a list built without generators."""
    out, k = [tree], 0
    fields = _CHILD_FIELDS
    while k < len(out):
        node = out[k]
        k += 1
        cls = type(node)
        names = fields.get(cls)
        if names is None:
            names = fields[cls] = tuple(
                f for f in cls._fields if f not in _NO_NODES and not (cls is ast.Constant and f == "value")
            )
        for field in names:
            value = getattr(node, field, None)
            if type(value) is list:
                out += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                out.append(value)
    return out


# The fields of a node class that never hold an expression or a statement (names, contexts, operators: the
# operators' own nodes hold nothing), and per node class those that may (_nodes).
_NO_NODES = {
    "ctx",
    "op",
    "ops",
    "id",
    "attr",
    "kind",
    "type_comment",
    "arg",
    "name",
    "conversion",
    "is_async",
    "level",
    "module",
    "simple",
}
_CHILD_FIELDS = {}


class _Position(collections.namedtuple("_Position", "lineno end_lineno col_offset end_col_offset")):
    """An instruction's location, as co_positions gives it."""

    __slots__ = ()


def _merge_return_copies(kept):
    """CPython copies a small block that returns into each place that jumps to it: a forward jump to such a copy
    goes to the first copy jumped to (in the order of the jumps) that is after it, so that a condition's jumps meet
    where the source's did (never to one before it: a jump back to a return reads as a loop)."""
    copies = {}  # a copied block's instructions -> the indices of its copies
    key_of = {}
    for x in kept:
        t = x.target
        if t is None or x.op in ("FOR_ITER", "JUMP_FORWARD") or t <= x.index or t in key_of:
            continue
        key = []
        i = t
        while i < len(kept) and len(key) < 5:
            y = kept[i]
            key.append((y.op, repr(y.argval)))
            if y.op in ("RETURN_VALUE", "RETURN_CONST"):
                break
            if y.target is not None or y.op in ops.TERMINAL:
                key = None
                break
            i += 1
        if not key or key[-1][0] not in ("RETURN_VALUE", "RETURN_CONST") or key[0][0] == "POP_TOP":
            key_of[t] = None  # (a block that drops a value first is a chained comparison's cleanup: each has its own)
            continue
        key_of[t] = key = tuple(key)
        copies.setdefault(key, []).append(t)
    for x in kept:
        key = key_of.get(x.target) if x.target is not None and x.op not in ("FOR_ITER", "JUMP_FORWARD") else None
        if key is not None and x.target > x.index:
            x.target = next(t for t in copies[key] if t > x.index)


def _normalised(code):
    """The instructions of `code` as comparable tuples: names, values and jump targets, no locations. Read from
    co_code as _decode reads it (dis.get_instructions, which builds much more, took most of the check's time)."""
    version = sys.version_info[:2]
    rules = ops.ARGUMENTS[version]
    name_shift = rules["name_shift"]
    supers = ops.SUPERINSTRUCTIONS.get(version, {})
    skipped = {dis.opmap[n] for n in ("NOP", "RESUME") if n in dis.opmap}
    raw = [r for r in _instructions(code) if r[2] not in skipped]
    index, k = {}, 0
    for start, offset, opcode, _, _ in raw:
        index[start] = index[offset] = k
        k += 2 if dis.opname[opcode] in supers else 1
    slots = local_slots(code) if version >= (3, 11) else None
    out = []
    for start, offset, opcode, arg, after in raw:
        name = dis.opname[opcode]
        if name in supers:  # which two locals 3.13 pairs follows their numbering: compared one by one
            out += [(op, slots[a]) for op, a in zip(supers[name], (arg >> 4, arg & 15))]
        elif opcode in dis.hasjrel or opcode in dis.hasjabs:
            target = _jump_target(rules, name, opcode, arg, after)
            while target not in index and target < len(code.co_code):
                target += 2
            out.append((name, index.get(target, -1)))
        elif opcode in dis.hasconst:
            value = code.co_consts[arg]
            out.append(
                (name, value.co_name)
                if isinstance(value, types.CodeType)
                else (name, type(value).__name__, repr(value))
            )
        elif opcode in dis.hasname:
            shift = name_shift.get(name, 0)
            names = code.co_names
            out.append((name, names[arg >> shift] if arg >> shift < len(names) else arg, arg & ((1 << shift) - 1)))
        elif name in ops.LOCALS:
            out.append((ops.SAME_EFFECT.get(name, name), _local(code, slots, name, arg)))
        else:
            out.append((ops.SAME_EFFECT.get(name, name), arg))
    return out


def _imported_names(instructions):
    """Globals the code calls a function of as of an imported module (CPython compiles `m.f()` differently
    where `m` comes from an import statement): the recompiled module imports them too."""
    if sys.version_info >= (3, 13):  # `m.f()` loads f without the method flag only where m is imported
        pairs = [
            (i.argval, n.arg & 1)
            for i, n in zip(instructions, instructions[1:])
            if i.op == "LOAD_GLOBAL" and n.op == "LOAD_ATTR"
        ]
        return sorted({name for name, method in pairs if not method} - {name for name, method in pairs if method})
    return sorted(
        {
            i.argval
            for i, n in zip(instructions, instructions[1:])
            if i.op == "LOAD_GLOBAL"
            and i.arg & 1
            and n.op == "LOAD_ATTR"
            and not (sys.version_info >= (3, 12) and n.arg & 1)
        }
    )


# -- the recompile check: a rebuilt tree compiled back to a code object ------------------------------------


def _arguments(code):
    names = code.co_varnames
    pos = code.co_argcount
    posonly = code.co_posonlyargcount
    kwonly = code.co_kwonlyargcount
    a = ast.arguments(
        posonlyargs=[ast.arg(arg=n) for n in names[:posonly]],
        args=[ast.arg(arg=n) for n in names[posonly:pos]],
        kwonlyargs=[ast.arg(arg=n) for n in names[pos : pos + kwonly]],
        kw_defaults=[None] * kwonly,
        defaults=[],
    )
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


def _recompiled(fdef, code, imported=()):
    """The code object `fdef` compiles to, with the same free variables as `code`."""
    inner = fdef
    if code.co_freevars:
        outer = ast.FunctionDef(
            name="_outer",
            args=_arguments(
                code.replace(co_argcount=0, co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=code.co_flags & ~12)
            ),
            body=[
                ast.Assign(
                    targets=[ast.Name(id=v, ctx=ast.Store()) for v in code.co_freevars], value=ast.Constant(value=None)
                ),
                inner,
                ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load())),
            ],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
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
