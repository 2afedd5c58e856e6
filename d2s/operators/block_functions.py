"""The user functions behind the functions a graph block gets, and the closure cells of the
names the block carries by name (`d2s.operators.mutation` does not diff those)."""
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


def carried_cells(fns, names) -> set:
    """The ids of the closure cells, in the user functions behind `fns`, of the `names` a
    block carries by name."""
    out = set()
    for fn in user_functions(fns):
        code = getattr(fn, "__code__", None)
        if code is not None and fn.__closure__:
            out.update(id(c) for n, c in zip(code.co_freevars, fn.__closure__) if n in names)
    return out
