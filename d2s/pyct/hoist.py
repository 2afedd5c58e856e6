"""Keep generated code as flat as the user's: move the functions of an `elif` out of the
branch function that holds them, when nothing they read is bound there.

A converter turns `if c: A else: B` into two local functions, and an `elif` chain into a
function inside a function inside a function: each `elif` would add a level of indentation,
and a chain of 100 conditions, which Python compiles, would exceed Python's 100 levels.

    def _if_false_2(y):                    def _if_true_1(y): ...
        def _if_true_1(y): ...             def _if_false_1(y): ...
        def _if_false_1(y): ...     ->     def _if_false_2(y):
        y = ifelse(c, _if_true_1,              y = ifelse(c, _if_true_1, _if_false_1, ...)
                   _if_false_1, ...)           return y
        return y

A def statement only binds its name (its body runs when called), so moving it to the
enclosing scope changes nothing as long as no name it reads is bound by the function it
leaves: then every name resolves to the same variable. Defaults and decorators, which run
where the def is, keep a def in place.
"""
from __future__ import annotations

import gast

from . import anno
from .activity import binding_names, local_names, params, scope_declarations

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def hoist_generated(fn: gast.FunctionDef) -> None:
    """Flatten the generated functions nested inside `fn` (in place)."""
    fn.body = _flatten(fn.body, {})


class _Run:
    """Defs `_take_out` moved out of a function, as they lie in the body around it: asked
    again at the next level as one (their names and the union of their free names), so the
    defs of an `elif` chain of n, which move up past every level, cost n checks, not n * n."""

    __slots__ = ("defs", "free", "names")

    def __init__(self, defs: list, free: set, names: set):
        self.defs, self.free, self.names = defs, free, names


def _flatten(stmts: list, free: dict) -> list:
    """`free` caches `_free` by node id: a def's body is final before it is first asked
    (inner levels are flattened first) and a def moved up is not changed again, so an `elif`
    chain of n conditions costs n walks, not n * n."""
    out = []
    for s in stmts:
        cls = s.__class__
        if cls is gast.FunctionDef or cls is gast.AsyncFunctionDef:
            s.body = _flatten(s.body, free)
            if anno.getanno(s, anno.GENERATED, False) and _branch_shell(s, free):
                moved = _take_out(s, free)
                if moved:
                    free.setdefault(_RUNS, {})[id(moved[0])] = _run_of(moved, free)
                out.extend(moved)
        elif cls is not gast.ClassDef:
            for field in _BODIES:
                inner = getattr(s, field, None)
                if not inner:
                    continue
                if isinstance(inner[0], (gast.ExceptHandler, gast.match_case)):
                    for part in inner:
                        part.body = _flatten(part.body, free)
                else:
                    setattr(s, field, _flatten(inner, free))
        out.append(s)
    return out


def _take_out(parent: gast.FunctionDef, free: dict) -> list:
    """The generated defs directly in `parent` that can move out of it (removed from it).
    (The defs of an `elif` chain move up one level at a time, all of them past each level:
    what is asked of each def at each level is kept in `free`, and the names the level binds
    come from its other statements only, each def's name aside.)"""
    moved = _take_out_runs(parent, free)
    if moved is not None:
        return moved
    candidates, others = [], []
    for s in parent.body:
        (candidates if s.__class__ is gast.FunctionDef and _movable(s, free) else
         others).append(s)
    if not candidates:
        return []
    moving = {c.name for c in candidates}
    # (as `local_names(parent) - moving`: a def binds its name only, and declares nothing)
    bound = set(params(parent))
    for s in others:
        binding_names(s, bound)
    bound = bound - set(scope_declarations(others)) - moving
    kept = {s.name for s in others if isinstance(s, _SCOPES)} - moving
    outside = bound | kept
    moved = [c for c in candidates if free[id(c)].isdisjoint(outside)]
    if len(moved) == len(candidates):  # (all move: none stays for them to read)
        parent.body = others
        return moved
    while True:  # a def that reads a def that stays stays too (to a fixed point: a def read
        staying = moving - {m.name for m in moved}  # by one that stays because of a third)
        kept_out = [m for m in moved if free[id(m)].isdisjoint(staying)]
        if len(kept_out) == len(moved):
            break
        moved = kept_out
    if moved:
        ids = {id(m) for m in moved}
        parent.body = [s for s in parent.body if id(s) not in ids]
    return moved


def _take_out_runs(parent, free: dict) -> list | None:
    """`_take_out(parent)` where `parent` holds runs (`_Run`) and every def in it moves out
    (each run asked as one); None where it holds no run or a def may stay (then each def is
    asked)."""
    known = free.get(_RUNS)
    if not known:
        return None
    body, own, others, pieces, runs = parent.body, [], [], [], []
    i = 0
    while i < len(body):
        s = body[i]
        run = known.get(id(s))
        if run is not None and _lies_at(body, i, run):
            pieces.append(run)  # (the moving defs in order: single defs and runs)
            runs.append(run)
            i += len(run.defs)
            continue
        if s.__class__ is gast.FunctionDef and _movable(s, free):
            own.append(s)
            pieces.append(s)
        else:
            others.append(s)
        i += 1
    if not runs:
        return None
    def_names = {c.name for c in own}
    bound = set(params(parent))
    for s in others:
        binding_names(s, bound)
    kept = {s.name for s in others if isinstance(s, _SCOPES)}
    outside = {n for n in (bound - set(scope_declarations(others))) | kept
               if n not in def_names and not any(n in r.names for r in runs)}
    if not all(free[id(c)].isdisjoint(outside) for c in own) or \
            not all(r.free.isdisjoint(outside) for r in runs):
        return None
    parent.body = others
    moved = []
    for piece in pieces:
        if piece.__class__ is _Run:
            moved += piece.defs
        else:
            moved.append(piece)
    return moved


def _lies_at(body: list, i: int, run: _Run) -> bool:
    """Whether `run`'s defs lie whole in `body` from index `i` (they are moved together)."""
    end = i + len(run.defs)
    return run.defs[0] is body[i] and end <= len(body) and body[end - 1] is run.defs[-1]


def _run_of(moved: list, free: dict) -> _Run:
    """The `_Run` of `moved`: runs inside it give their sets (each run is asked once)."""
    known = free.setdefault(_RUNS, {})
    names, union, i = set(), set(), 0
    while i < len(moved):
        run = known.pop(id(moved[i]), None)
        if run is not None and _lies_at(moved, i, run):
            union, names = _joined(run.free, union), _joined(run.names, names)
            i += len(run.defs)
            continue
        union |= free[id(moved[i])]
        names.add(moved[i].name)
        i += 1
    return _Run(moved, union, names)


def _joined(a: set, b: set) -> set:
    """a | b, made by adding the smaller set to the larger (both are the caller's)."""
    if len(a) < len(b):
        a, b = b, a
    a |= b
    return a


_RUNS = "runs"  # key of `free` (whose other keys are ids): id of a run's first def -> `_Run`


def _movable(fn, free: dict) -> bool:
    """Whether the def `fn` is generated and of a form that can move (its `_free` names, then
    kept in `free`; False kept for a def that cannot)."""
    found = free.get(id(fn))
    if found is None:
        found = free[id(fn)] = _free(fn) if anno.getanno(fn, anno.GENERATED, False) and \
            _movable_form(fn) else False
    return found is not False


def _branch_shell(fn, free: dict) -> bool:
    """A branch function that only holds another `if` (the `else` of an `elif`): its defs,
    one statement that picks between them, and the return. (Runs of defs moved into it are
    passed over whole.)"""
    if not fn.name.startswith("_if_"):
        return False
    known = free.get(_RUNS) or {}
    body, rest, i = fn.body, [], 0
    while i < len(body):
        s = body[i]
        run = known.get(id(s))
        if run is not None and _lies_at(body, i, run):
            i += len(run.defs)
            continue
        if s.__class__ is not gast.FunctionDef:
            rest.append(s)
            if len(rest) > 2:
                return False
        i += 1
    if rest and rest[-1].__class__ is gast.Return:
        rest = rest[:-1]
    return len(rest) == 1 and rest[0].__class__ in (gast.Assign, gast.Expr)


def _movable_form(fn) -> bool:
    args = fn.args
    return not (fn.decorator_list or args.defaults or any(d is not None for d in
                                                           args.kw_defaults))


def _free(fn) -> set:
    """An over-approximation of the names `fn` reads from enclosing scopes: every name read
    anywhere inside it (nested scopes included) that its own scope does not bind, plus the
    names it declares nonlocal."""
    own = local_names(fn)
    used = set()
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name):
            used.add(n.id)
        elif isinstance(n, gast.Nonlocal):
            used.update(n.names)
        stack.extend(gast.iter_child_nodes(n))
    return used - own
