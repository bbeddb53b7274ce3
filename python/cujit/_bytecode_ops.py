"""How each CPython minor version's bytecode reads, in one table per version: the opcode names `dis` gives mapped
onto the names the bytecode frontend (_bytecode.py) understands. A version without a table here has no bytecode
frontend: its functions compile only from source."""

# Names absent from a table keep their own meaning; None marks an instruction that does nothing for the frontend.
_COMMON = {
    "RESUME": None, "NOP": None, "CACHE": None, "EXTENDED_ARG": None, "PRECALL": None, "COPY_FREE_VARS": None,
    "MAKE_CELL": None, "JUMP_BACKWARD_NO_INTERRUPT": "JUMP_BACKWARD", "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_CLOSURE": "LOAD_FAST", "LOAD_DEREF": "LOAD_FAST", "STORE_DEREF": "STORE_FAST",
}

TABLES = {
    (3, 11): dict(_COMMON, **{
        "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
        "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
        "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
        "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
        "LOAD_METHOD": "LOAD_METHOD",
    }),
    (3, 12): dict(_COMMON, **{
        "END_FOR": "END_FOR",
    }),
}

# How each version's arguments read, beside its names: the shift of the name index in LOAD_GLOBAL/LOAD_ATTR (a flag
# sits in the low bit) and of the comparison in COMPARE_OP.
ARGUMENTS = {
    (3, 11): {"name_shift": {"LOAD_GLOBAL": 1}, "compare_shift": 0},
    (3, 12): {"name_shift": {"LOAD_GLOBAL": 1, "LOAD_ATTR": 1}, "compare_shift": 4},
}
BACKWARD = {"JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
            "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"}
NAMES = {"LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "STORE_GLOBAL", "LOAD_NAME", "STORE_NAME",
         "DELETE_ATTR", "DELETE_GLOBAL", "DELETE_NAME", "IMPORT_NAME", "IMPORT_FROM"}
LOCALS = {"LOAD_FAST", "STORE_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "STORE_DEREF",
          "LOAD_CLOSURE", "DELETE_FAST", "DELETE_DEREF", "MAKE_CELL"}

CONDITIONAL_JUMPS = {"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"}
VALUE_JUMPS = {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}  # 3.11: and/or keeping the value
JUMPS = CONDITIONAL_JUMPS | VALUE_JUMPS | {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP", "FOR_ITER"}
TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


def table(version):
    """The table of `version` ((major, minor)), or None where the bytecode frontend does not read it."""
    return TABLES.get(tuple(version[:2]))


def covered():
    """The CPython versions the bytecode frontend reads, as text ("3.11, 3.12")."""
    return ", ".join(f"{major}.{minor}" for major, minor in sorted(TABLES))
