"""One program text as both frontends read it (issue 42's tests run each semantic on both): the source frontend
(the text registered in linecache, as a module's file is) and the bytecode reader (the same text exec'd with no
source anywhere)."""

import itertools
import linecache
import textwrap

FRONTENDS = ("source", "bytecode")
_count = itertools.count()


def define(source, frontend, namespace=None):
    """Execs ``source`` and returns its namespace; its functions have source only for the "source" frontend."""
    text = textwrap.dedent(source)
    filename = f"<{frontend} program {next(_count)}>"
    if frontend == "source":
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    elif frontend != "bytecode":
        raise ValueError(f"frontend must be one of {FRONTENDS}, not {frontend!r}")
    scope = dict(namespace or {})
    exec(compile(text, filename, "exec"), scope)
    return scope
