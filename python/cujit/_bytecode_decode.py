"""Decoding of a code object's instructions for the bytecode frontend (_bytecode.py): everything that depends on
the CPython minor version sits here and in the tables of _bytecode_ops.py. `_decode` reads co_code into `_Ins`
records (opcode names normalised by the version's table, arguments read by its rules, jump targets as instruction
indices, each with its `_Position` from co_positions); `_normalised` and `_imported_names` read instructions for
the recompile check."""

import dis
import sys
import types

from cujit import _bytecode_ops as ops


class _Ins:
    __slots__ = ("index", "offset", "op", "arg", "argval", "argrepr", "target", "pos", "name")

    def __repr__(self):
        return f"{self.index}:{self.op}({self.argrepr or self.argval})"



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
