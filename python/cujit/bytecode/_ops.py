"""How each CPython minor version's bytecode reads, in one table per version: the opcode names `dis` gives mapped
onto the names the bytecode frontend (_reader.py) understands, and the rules of each version's arguments.
_decode.py applies them (and turns the instructions that stand for several, 3.10's stack rotations and
3.13's superinstructions, into the several). A version without a table here has no bytecode frontend: its
functions compile only from source."""

import sys

# Names absent from a table keep their own meaning; None marks an instruction that does nothing for the frontend.
_COMMON = {
    "RESUME": None,
    "NOP": None,
    "CACHE": None,
    "EXTENDED_ARG": None,
    "PRECALL": None,
    "COPY_FREE_VARS": None,
    "MAKE_CELL": None,
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_BACKWARD",
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_CLOSURE": "LOAD_FAST",
    "LOAD_DEREF": "LOAD_FAST",
    "STORE_DEREF": "STORE_FAST",
}

# 3.10's binary and in-place operators, one opcode each, as 3.11's BINARY_OP spells them.
_OPERATORS_310 = {
    "ADD": "+",
    "SUBTRACT": "-",
    "MULTIPLY": "*",
    "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//",
    "MODULO": "%",
    "POWER": "**",
    "LSHIFT": "<<",
    "RSHIFT": ">>",
    "AND": "&",
    "OR": "|",
    "XOR": "^",
    "MATRIX_MULTIPLY": "@",
}
OPERATORS = {
    (3, 10): dict(
        [(f"BINARY_{k}", v) for k, v in _OPERATORS_310.items()]
        + [(f"INPLACE_{k}", v + "=") for k, v in _OPERATORS_310.items()]
    )
}

# Instructions that stand for several of the frontend's: 3.10's stack rotations as 3.11's COPY and SWAP (name,
# argument), and 3.13's superinstructions, two locals in one argument (the first in its high four bits).
SPLIT = {
    (3, 10): {
        "DUP_TOP": (("COPY", 1),),
        "DUP_TOP_TWO": (("COPY", 2), ("COPY", 2)),
        "ROT_TWO": (("SWAP", 2),),
        "ROT_THREE": (("SWAP", 3), ("SWAP", 2)),
        "ROT_FOUR": (("SWAP", 4), ("SWAP", 3), ("SWAP", 2)),
    },
}
_SUPERINSTRUCTIONS_313 = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
}
SUPERINSTRUCTIONS = {
    (3, 13): _SUPERINSTRUCTIONS_313,
    (3, 14): dict(_SUPERINSTRUCTIONS_313, LOAD_FAST_BORROW_LOAD_FAST_BORROW=("LOAD_FAST", "LOAD_FAST")),
}

# Instructions whose argument is the constant itself (3.14's small ints), and the constants of 3.14's
# LOAD_COMMON_CONSTANT by argument, as the instruction that loaded each before (None: the frontend has none).
IMMEDIATE_CONSTANTS = {"LOAD_SMALL_INT"}
COMMON_CONSTANTS = {(3, 14): ("LOAD_ASSERTION_ERROR", None, None, None, None)}
# Instructions that differ from another only in how the interpreter counts references (3.14 borrows a local's
# reference where the value does not outlive its basic block, so where CPython's constant folding left a block
# boundary inside an expression, the same load is not borrowed): the same instruction for the recompile check.
SAME_EFFECT = {"LOAD_FAST_BORROW": "LOAD_FAST"}
# BINARY_OP's operators that were instructions of their own before (3.14's subscript: BINARY_SUBSCR).
OPERATOR_INSTRUCTIONS = {"[]": "BINARY_SUBSCR"}

TABLES = {
    (3, 10): dict(
        _COMMON,
        **{
            "JUMP_ABSOLUTE": "JUMP_ABSOLUTE",  # JUMP_FORWARD or JUMP_BACKWARD, by where it goes
            "CALL_FUNCTION": "CALL",
            "CALL_METHOD": "CALL",
            "CALL_FUNCTION_KW": "CALL_KW",
            "LOAD_METHOD": "LOAD_METHOD",
            "SETUP_WITH": "BEFORE_WITH",
            "SETUP_ASYNC_WITH": "BEFORE_WITH",
            "GEN_START": None,
        },
        **{name: "BINARY_OP" for name in OPERATORS[(3, 10)]},
    ),
    (3, 11): dict(
        _COMMON,
        **{
            "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
            "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
            "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
            "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
            "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
            "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
            "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
            "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
            "LOAD_METHOD": "LOAD_METHOD",
        },
    ),
    (3, 12): dict(
        _COMMON,
        **{
            "END_FOR": "END_FOR",
        },
    ),
    (3, 13): dict(
        _COMMON,
        **{
            "END_FOR": "END_FOR",
            "TO_BOOL": None,
            "CALL_KW": "CALL_KW",
            "PUSH_NULL": None,  # pushed after the callable, where 3.12 pushed it before: CALL needs no NULL to find it
        },
    ),
    (3, 14): dict(
        _COMMON,
        **{
            "END_FOR": "END_FOR",
            "TO_BOOL": None,
            "CALL_KW": "CALL_KW",
            "PUSH_NULL": None,
            "LOAD_FAST_BORROW": "LOAD_FAST",
            "LOAD_SMALL_INT": "LOAD_CONST",
            "NOT_TAKEN": None,
            "POP_ITER": "POP_TOP",  # after END_FOR, as 3.13's POP_TOP
            "LOAD_COMMON_CONSTANT": "LOAD_COMMON_CONSTANT",  # by its argument (COMMON_CONSTANTS)
        },
    ),
}

# How each version's arguments read, beside its names: the shift of the name index in LOAD_GLOBAL/LOAD_ATTR (a flag
# sits in the low bit) and of the comparison in COMPARE_OP; whether its jumps' arguments are instruction indices
# (3.10) or distances; whether its positions have columns (3.11 on) or only lines (3.10: co_lines). And how its
# compiler shapes code: whether it folds constant expressions only after compiling away the tests that are
# constants in the tree (late_folding: 3.14), whether a while loop tests only at its top (3.14) or also at its
# bottom, jumping back to the body (rotated_loops: 3.10 to 3.13), and whether it threads an and/or value's jump
# into the next one's cleanup where that one tests the same value the other way (threaded_value_jumps: 3.14).
_UP_TO_313 = {
    "absolute_jumps": False,
    "columns": True,
    "late_folding": False,
    "rotated_loops": True,
    "threaded_value_jumps": False,
}
ARGUMENTS = {
    (3, 10): dict(_UP_TO_313, name_shift={}, compare_shift=0, absolute_jumps=True, columns=False),
    (3, 11): dict(_UP_TO_313, name_shift={"LOAD_GLOBAL": 1}, compare_shift=0),
    (3, 12): dict(_UP_TO_313, name_shift={"LOAD_GLOBAL": 1, "LOAD_ATTR": 1}, compare_shift=4),
    (3, 13): dict(_UP_TO_313, name_shift={"LOAD_GLOBAL": 1, "LOAD_ATTR": 1}, compare_shift=5),
    (3, 14): dict(
        _UP_TO_313,
        name_shift={"LOAD_GLOBAL": 1, "LOAD_ATTR": 1},
        compare_shift=5,
        late_folding=True,
        rotated_loops=False,
        threaded_value_jumps=True,
    ),
}
BACKWARD = {
    "JUMP_BACKWARD",
    "JUMP_BACKWARD_NO_INTERRUPT",
    "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE",
}
NAMES = {
    "LOAD_GLOBAL",
    "LOAD_ATTR",
    "LOAD_METHOD",
    "STORE_ATTR",
    "STORE_GLOBAL",
    "LOAD_NAME",
    "STORE_NAME",
    "DELETE_ATTR",
    "DELETE_GLOBAL",
    "DELETE_NAME",
    "IMPORT_NAME",
    "IMPORT_FROM",
}
LOCALS = {
    "LOAD_FAST",
    "LOAD_FAST_BORROW",
    "STORE_FAST",
    "LOAD_FAST_CHECK",
    "LOAD_FAST_AND_CLEAR",
    "LOAD_DEREF",
    "STORE_DEREF",
    "LOAD_CLOSURE",
    "DELETE_FAST",
    "DELETE_DEREF",
    "MAKE_CELL",
}
CELLS = {"LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE", "DELETE_DEREF", "LOAD_CLASSDEREF"}  # 3.10: cell and free

CONDITIONAL_JUMPS = {"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"}
VALUE_JUMPS = {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}  # 3.11: and/or keeping the value
JUMPS = CONDITIONAL_JUMPS | VALUE_JUMPS | {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP", "FOR_ITER"}
TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


def rule(name, default):
    """The running interpreter's rule `name` of ARGUMENTS, or `default` where the reader does not read it."""
    return ARGUMENTS.get(sys.version_info[:2], {}).get(name, default)


def table(version):
    """The table of `version` ((major, minor)), or None where the bytecode frontend does not read it."""
    return TABLES.get(tuple(version[:2]))


def covered():
    """The CPython versions the bytecode frontend reads, as text ("3.11, 3.12")."""
    return ", ".join(f"{major}.{minor}" for major, minor in sorted(TABLES))
