"""Objects called in kernels that bring their own link list: cujit's answer to numba-cuda issue #67
(``docs/link_hooks.md``).

- ``__numba_cuda_link__(*argtypes)``, looked up with ``getattr`` on the object a kernel calls (an instance
  attribute or a method of its class), is called whenever a call to it is compiled, with the cujit types of
  the call's arguments (for a declaration: its declared parameter types). It returns a LinkableCode, a path,
  a list or tuple of those, or None; the items are linked as ``link=`` items are.
- ``declare_device(name, sig, link=callable)`` is the same hook given at declaration.
- ``__numba_cuda_declare__(*argtypes)`` on any other object returns a ``declare_device`` descriptor, or
  ``(symbol, signature)``, for those argument types; the call is compiled as a call to it.

A hook that raises, or returns anything else, fails the compile with a ``TypingError`` that names the object
(typing adds the call's file:line and caret).
"""

import os

from cujit.errors import TypingError
from cujit.linkable_code import LinkableCode
from cujit.linking import check_item

LINK_HOOK = "__numba_cuda_link__"
DECLARE_HOOK = "__numba_cuda_declare__"


def link_hooks(obj, given=None):
    """The link hooks of ``obj``: its ``__numba_cuda_link__`` and a callable ``given`` at declaration."""
    return [hook for hook in (getattr(obj, LINK_HOOK, None), given) if hook is not None]


def call_hook(name, hook, argtypes, who):
    """``hook(*argtypes)``; what it raises becomes a ``TypingError`` naming the hook and ``who``, chained."""
    try:
        return hook(*argtypes)
    except Exception as e:
        raise TypingError(
            f"{name} of {who} raised {type(e).__name__}: {e} "
            f"(called with {', '.join(map(str, argtypes)) or 'no arguments'})"
        ) from e


def call_link_hooks(hooks, argtypes, who):
    """The items ``hooks`` give for ``argtypes`` (a tuple, in order), checked; ``who`` names the object."""
    items = []
    for hook in hooks:
        items.extend(_checked_items(call_hook(LINK_HOOK, hook, argtypes, who), who))
    return tuple(items)


def _checked_items(result, who):
    if result is None:
        return ()
    listed = result if isinstance(result, (list, tuple)) else (result,)
    for item in listed:
        if not isinstance(item, (LinkableCode, str, os.PathLike)):
            raise TypingError(
                f"{LINK_HOOK} of {who} returned {type(item).__name__} {item!r:.80}: expected a "
                "LinkableCode, a path, a list or tuple of those, or None"
            )
        try:
            check_item(item)
        except (TypeError, ValueError) as e:
            raise TypingError(f"{LINK_HOOK} of {who} returned an item cujit cannot link: {e}") from e
    return tuple(listed)
