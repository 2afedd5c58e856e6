"""The user functions behind the functions a graph block gets (`d2s.operators.mutation`
finds the cells a block carries by name through them)."""
from __future__ import annotations

import types


def user_functions(fns) -> list:
    """`fns` with the user functions d2s's wrappers of them close over (a `for` over a
    `range` wraps the user's body) in place of the wrappers."""
    out, stack, seen = [], list(fns), set()
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if not (getattr(fn, "__module__", None) or "").startswith("d2s.operators"):
            out.append(fn)
            continue
        for c in getattr(fn, "__closure__", None) or ():
            try:
                v = c.cell_contents
            except ValueError:
                continue
            if isinstance(v, types.FunctionType):
                stack.append(v)
    return out
