"""Name analysis, computed once per function: `analyze` annotates it for every converter.

The analyses live one per module: `activity` (names read and written, locals, parameters,
declarations), `definedness` (`DEFINED_IN`, `surely_bound`), `liveness` (`LIVE_OUT`,
`LOOP_LIVE`), over `walk` (fast tree walks) and `qnames` (composite names as `QName`). This
module runs them in order and keeps their names importable from one place.

Everything works on one function scope at a time; nested functions are analysed with their
own scope (`analyze` recurses into them), and their reads count as reads where they are
defined (a closure may read a name at any call).

Annotations set by `analyze(fn_node)` (see `anno`):

- `DEFINED_IN` on each statement: names possibly bound before it (parameters included).
- `LIVE_OUT` on each statement: names that may be read after it before being rebound.
- `LOOP_LIVE` on `while`/`for`: names live at the start of an iteration (loop-carried).
- `SCOPE_DECL` on function defs: `{name: 'global' | 'nonlocal'}` declared in its body.
- `LOCALS` on function defs: its local names (`activity.local_names`, the one definition of
  a local name). Converters read it through `activity.locals_of` (which analyses a function a
  converter made on first ask) and `transformer.Base.is_local` / `is_local_here`.

Attribute chains on a name (`self.count`) are tracked as qualified names: a write to
`self.count` or `d[k]` writes `self.count` or `d` (the object is state that changes).

>>> import gast
>>> fn = gast.parse("def f(x):\\n  y = x\\n  return y").body[0]
>>> sorted(written(fn.body)), sorted(read(fn.body))
(['y'], ['x', 'y'])
"""
from __future__ import annotations

from . import anno, definedness, liveness
from .activity import (  # noqa: F401
    Facts,
    Survey,
    closure_cells,
    local_names,
    locals_of,
    params,
    read,
    scope_declarations,
    survey,
    written,
)
from .definedness import surely_bound  # noqa: F401
from .liveness import live_in  # noqa: F401
from .qnames import QName, qualified_name  # noqa: F401
from .walk import NODE_FIELDS, nested_defs, walk  # noqa: F401


def analyze(fn) -> None:
    """Annotate `fn` (a FunctionDef) and every function nested in it; see the module doc."""
    facts = Facts()  # what each statement reads and writes, shared by both passes
    for f in [fn] + nested_defs(fn):
        anno.setanno(f, anno.SCOPE_DECL, scope_declarations(f.body))
        anno.setanno(f, anno.LOCALS, frozenset(local_names(f)))
        definedness.annotate(f.body, frozenset(params(f)), facts)
        liveness.annotate(f.body, frozenset(), facts)


_PER_STATEMENT = (anno.DEFINED_IN, anno.LIVE_OUT, anno.LOOP_LIVE)


def forget(fn) -> None:
    """Drop what `analyze` set on each statement of `fn` (its functions' statements too) once
    no pass reads it: the sets of names before and after each statement of a long function
    (its defined names grow by one per def a pass made before it) were 5 MB of the
    10,000-line function's tree while it was printed. `LOCALS` and `SCOPE_DECL` stay."""
    key = anno.KEY
    stack = list(fn.body)
    while stack:
        s = stack.pop()
        store = getattr(s, key, None)
        if store is not None:
            for k in _PER_STATEMENT:
                store.pop(k, None)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(s, field, None)
            if block:
                stack.extend(block)
