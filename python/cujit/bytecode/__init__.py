"""The bytecode frontend: functions without source (built with ``exec``, typed at a prompt, installed as ``.pyc``
only, or whose file changed since import) read from their code object (``docs/bytecode.md``).

One entry: ``decompile(function)`` gives the function's tree as ``ast.parse`` gives it for its source, and
``function_source(function)`` that tree as the frontend's input (what ``_source`` hands to the compiler). The
modules beside this one are private to it: the per-version tables (``_ops``), the C++ decoder's plan
(``_decode``), the statement and expression readers, and the check that the rebuilt tree compiles back to the
same bytecode.
"""

from cujit.bytecode._reader import decompile, function_source

__all__ = ["decompile", "function_source"]
