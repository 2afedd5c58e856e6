"""What a function reads from outside its arguments, found from its source: the names it
loads that it does not bind (globals, closure variables), and the attribute chains it loads
from those names or from its first parameter (`self.mode`, `cfg.model.depth`).

A converted program is only right for the values these had while it was traced; `d2s` guards
it with them (`d2s/guards.py`).

    >>> import gast
    >>> fn = gast.parse("def f(self, x):\\n"
    ...                 "    if self.mode == 'beam' and DEBUG:\\n"
    ...                 "        return self.fc(x) * cfg.model.scale * FLAGS['k']\\n"
    ...                 "    return x").body[0]
    >>> r = outside_reads(fn)
    >>> sorted(r.names)
    ['DEBUG', 'FLAGS', 'cfg']
    >>> for chain in sorted(r.chains, key=str): print(chain)
    ('FLAGS', Key(value='k'))
    ('cfg', 'model')
    ('cfg', 'model', 'scale')
    ('self', 'fc')
    ('self', 'mode')
"""
from __future__ import annotations

from typing import NamedTuple

import gast

from .walk import NAME_FIELDS, push_children

MAX_CHAIN = 8  # names in a guarded chain (`self.a.b.c`)
# list methods that add items without reading the list: a chain ending in one reads the
# object that holds the list, not its items (`guards.record`)
APPENDS = frozenset(("append", "extend"))


_ATTRIBUTE_LIKE = (gast.Attribute, gast.Subscript)
_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)


class Key(NamedTuple):
    """A constant subscript in a chain (`cfg["mode"]`)."""
    value: object


class Probe(NamedTuple):
    """An attribute looked up by `getattr(obj, "name", default)` or `hasattr(obj, "name")`
    (the last of a chain): whether the object has it is read too."""
    name: str


class Each(NamedTuple):
    """Every item a `for` reads from the chain before it (`for st in self.stages:`, then
    `st.mult`); `values`: of a dict (`.values()`, `.items()`)."""
    values: bool = False


class AllAttrs(NamedTuple):
    """Every attribute of the object: `getattr(obj, name)` with a computed name, `vars(obj)`."""


class Reads(NamedTuple):
    names: frozenset  # free names loaded (globals or closure variables)
    chains: frozenset  # tuples (root, attr, ...): root is a free name or the first parameter
    self_name: str | None  # the first parameter (the instance, for a method)
    # the parameters the body never rebinds: chains rooted at them read the call's arguments
    # (`cfg.scale` of `def f(x, cfg)`), guarded with the objects passed (`guards.record`)
    params: frozenset = frozenset()
    # names loaded only to append to (`log.append(v)`): the list's items are not read
    appended: frozenset = frozenset()
    # names loaded only to append to, with a constant key (`stats["n"] += 1`) or for a field
    # (`state.n += 1`, not a method call): what the function reads of them is guarded
    # (`guards.record`: chains)
    keyed: frozenset = frozenset()


def outside_reads(fn) -> Reads:
    args = fn.args
    positional = args.posonlyargs + args.args
    self_name = positional[0].id if positional else None
    bound = set()
    loads = set()
    stores: dict = {}  # name -> how many times it is bound (parameters aside)
    chains = set()
    appended_to = set()  # ids of `xs` in `xs.append`: a list only appended to is not read
    keyed_to = set()  # ids of `d` in `d["k"]` and of `s` in `s.n` (not called: `s.total()`)
    chain_loads: dict = {}  # chain -> how many times it is loaded
    aliased = []  # (name, chain): `hist = self.history`
    loop_aliases = []  # (name, chain + Each): `for st in self.stages:`
    appends, other_loads, keyed = set(), set(), set()
    kept = []  # attributes assigned (`_kept_stores`)
    called = set()  # ids of called functions (`s.total` of `s.total()`)
    # One walk (pyct/walk.py's field tables: contexts and operators are read, not visited).
    fields_of = NAME_FIELDS
    stack = [fn]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        cls = node.__class__
        if cls is gast.Name:
            if node.ctx.__class__ is gast.Load:
                loads.add(node.id)
                (appends if id(node) in appended_to else keyed if id(node) in keyed_to
                 else other_loads).add(node.id)
            else:
                bound.add(node.id)
                if node.ctx.__class__ is not gast.Param:
                    stores[node.id] = stores.get(node.id, 0) + 1
        elif cls in _ATTRIBUTE_LIKE:
            if _keyed(node, cls, called):
                keyed_to.add(id(node.value))
            if node.ctx.__class__ is gast.Store and cls is gast.Attribute:
                kept.append(node)  # (`if t.any(): self.flag = True`: see `_kept_stores`)
            if node.ctx.__class__ is gast.Load and id(node) not in appended_to:
                if cls is gast.Attribute and node.attr in APPENDS:
                    appended_to.add(id(node.value))
                chain = _chain(node, computed=True)
                if chain is not None and len(chain) >= 2:
                    # (also a called one, `self.fc(x)`, `self.act(x)`: the layer or function
                    # it holds, by identity; a method defined in the class is not guarded)
                    chains.add(chain[:MAX_CHAIN])
                    chain_loads[chain[:MAX_CHAIN]] = chain_loads.get(chain[:MAX_CHAIN], 0) + 1
        elif cls is gast.Call:
            called.add(id(node.func))
            chains.update(_probes(node))
        elif cls is gast.For or cls is gast.comprehension:
            loop_aliases += _loop_aliases(node.target, node.iter)
        elif cls in _FUNCTIONS:
            _bind_parameters(node, bound)
        elif cls is gast.ClassDef:
            bound.add(node.name)
        elif cls is gast.Import or cls is gast.ImportFrom:
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif cls is gast.Assign and len(node.targets) == 1:
            aliased += _aliases(node.targets[0], node.value)
        elif cls is gast.AugAssign and node.target.__class__ in _ATTRIBUTE_LIKE:
            chain = _chain(node.target)  # `self.n += 1` reads self.n
            if chain is not None and len(chain) >= 2:
                chains.add(chain[:MAX_CHAIN])
        push_children(node, fields_of[cls], push)
    stored = set(stores)
    chains |= _kept_stores(kept, fn.body)
    chains |= _through_aliases(chains, aliased + loop_aliases, stores)
    appended = appends - other_loads
    for chain in {c for n, c in aliased if n in appended and len(c) < MAX_CHAIN}:
        if chain_loads[chain] == sum(c == chain for _, c in aliased):  # (a local name for a
            chains.discard(chain)  # list only appended to: the chain reads the object that
            chains.add(chain + ("append",))  # holds it, as `self.history.append(v)` does)
    free = frozenset(loads - bound)
    params = frozenset(p.id for p in positional + args.kwonlyargs) - stored
    roots = free | params | ({self_name} if self_name else set())
    chains = _read_before_written(chains, fn.body, self_name)
    return Reads(free, frozenset(c for c in chains if c[0] in roots), self_name, params,
                 frozenset(appended - stored), frozenset((keyed | appends) - other_loads - stored))


def _keyed(node, cls, called: set) -> bool:
    """`node` reads its object by a constant str key (`d["k"]`) or a field (`s.n`, not a
    method called, `s.total()`, nor an append)."""
    if cls is gast.Subscript:
        return node.slice.__class__ is gast.Constant and type(node.slice.value) is str
    return node.value.__class__ is gast.Name and id(node) not in called and \
        node.attr not in APPENDS


def _bind_parameters(node, bound: set) -> None:
    """A nested function's (or lambda's) name and parameters are bound names."""
    if node.__class__ is not gast.Lambda:
        bound.add(node.name)
    a = node.args
    for p in a.posonlyargs + a.args + a.kwonlyargs:
        bound.add(p.id)
    for p in (a.vararg, a.kwarg):
        if p is not None:
            bound.add(p.id)


def _through_aliases(chains: set, aliased: list, stores: dict) -> set:
    """Chains read through a local name bound once to a chain (`hc = cfg.model.head`, then
    `hc.scale`), as the chains they read (`cfg.model.head.scale`); aliases of aliases too."""
    alias = {n: c for n, c in aliased if stores.get(n) == 1}
    found, todo = set(), [c for c in chains if c[0] in alias]
    while todo:
        c = todo.pop()
        full = (alias[c[0]] + c[1:])[:MAX_CHAIN]
        if full not in found and full not in chains:
            found.add(full)
            if full[0] in alias and full[0] != c[0]:
                todo.append(full)
    return found


def _probes(call) -> list:
    """The chain `getattr(a.b, "name", d)` / `hasattr(a.b, "name")` reads (ending in a
    `Probe`), or with a computed name, and `vars(a.b)`, every attribute (`AllAttrs`)."""
    f = call.func
    if f.__class__ is not gast.Name or f.id not in ("getattr", "hasattr", "vars") or \
            not call.args:
        return []
    chain = _named_chain(call.args[0])
    if chain is None or len(chain) >= MAX_CHAIN:
        return []
    name = call.args[1] if len(call.args) > 1 else None
    return [chain + (Probe(name.value) if name.__class__ is gast.Constant and type(
        name.value) is str else AllAttrs(),)]


def _loop_aliases(target, it) -> list:
    """(name, chain + Each) for `for name in a.b`, `for name in a.b.values()`, `for k, name
    in a.b.items()` and `for i, name in enumerate(a.b)`."""
    values = False
    if it.__class__ is gast.Call and not it.args and it.func.__class__ is gast.Attribute and \
            it.func.attr in ("values", "items"):
        values, pairs, it = True, it.func.attr == "items", it.func.value
    else:
        pairs = it.__class__ is gast.Call and it.func.__class__ is gast.Name and \
            it.func.id == "enumerate" and len(it.args) == 1
        it = it.args[0] if pairs else it
    if pairs:
        target = target.elts[1] if target.__class__ is gast.Tuple and len(
            target.elts) == 2 else None
    chain = _named_chain(it)
    if target.__class__ is not gast.Name or chain is None or len(chain) >= MAX_CHAIN:
        return []
    return [(target.id, chain + (Each(values),))]


def _named_chain(node) -> tuple | None:
    """`_chain` of `node`, also of a plain name (`('cfg',)`)."""
    return (node.id,) if node.__class__ is gast.Name else _chain(node)


def _aliases(target, value) -> list:
    """(name, chain) for `name = a.b` (also `n, m = a.b, c.d`)."""
    if target.__class__ is gast.Tuple and value.__class__ is gast.Tuple and len(
            target.elts) == len(value.elts):
        return [p for t, v in zip(target.elts, value.elts) for p in _aliases(t, v)]
    chain = _chain(value) if target.__class__ is gast.Name else None
    return [(target.id, chain[:MAX_CHAIN])] if chain is not None and len(chain) >= 2 else []


def _chain(node, computed: bool = False) -> tuple | None:
    """`a.b.c` as ('a', 'b', 'c'), `a.b["k"]` as ('a', 'b', Key('k')) (a constant key or
    index), and where `computed`, `a.b[k]` as ('a', 'b', Each(True)) (any item); None for
    anything else (calls, computed subscripts)."""
    parts = []
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        if isinstance(node, gast.Attribute):
            parts.append(node.attr)
        elif isinstance(node.slice, gast.Constant) and type(node.slice.value) in (str, int):
            parts.append(Key(node.slice.value))
        elif computed:
            parts.append(Each(True))
        else:
            return None
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def _kept_stores(stores: list, body: list) -> set:
    """Chains of attributes assigned inside a block (`if mask.any(): self.seen = True`, a
    loop's body): on a path that does not run the assignment (a tensor `if`'s other branch,
    a graph loop of zero trips) the attribute keeps the value the call found, which the
    program holds: a value read, as `self.seen` would be. Assigned by a statement of the
    function's own body, it is not (`_written_first` may find it written first)."""
    top = {id(t) for stmt in body if stmt.__class__ in (gast.Assign, gast.AnnAssign)
           for t in (stmt.targets if stmt.__class__ is gast.Assign else [stmt.target])}
    found = set()
    for node in stores:
        if id(node) not in top:
            chain = _chain(node)
            if chain is not None and len(chain) >= 2:
                found.add(chain[:MAX_CHAIN])
    memo: dict = {}
    return {c for c in found if not _covers(body, c, memo)}


_EXITS = (gast.Return, gast.Break, gast.Continue)


def _covers(stmts: list, chain: tuple, returns: dict) -> bool:
    """Every path through `stmts` assigns `chain` before it returns or falls off the end
    (`if not self.built: ...; self.mode = "first"; return ...`, then `self.mode = "later"`):
    no path keeps the value the call found. `returns` memoizes `_returns`."""
    for st in stmts:
        cls = st.__class__
        if cls is gast.Assign and any(_chain(t) == chain for t in st.targets) or \
                cls is gast.AnnAssign and _chain(st.target) == chain:
            return True
        if cls in _EXITS:
            return False
        if cls is gast.If:
            body, orelse = _covers(st.body, chain, returns), _covers(st.orelse, chain, returns)
            if body and orelse:
                return True
            if not body and _returns(st.body, returns) or \
                    not orelse and _returns(st.orelse, returns):
                return False
        elif cls not in (gast.Expr, gast.Assign, gast.AugAssign, gast.AnnAssign) and \
                _returns([st], returns):
            return False
        elif cls is gast.For and _some_trips(st.iter) and not st.orelse and \
                _covers(st.body, chain, returns):
            return True  # (`for i in range(2):`, no `break` before the store)
    return False


def _some_trips(node) -> bool:
    """`node` is `range(k)` with a literal k >= 1, or a literal non-empty list or tuple."""
    if node.__class__ in (gast.List, gast.Tuple):
        return bool(node.elts) and not any(e.__class__ is gast.Starred for e in node.elts)
    return node.__class__ is gast.Call and node.func.__class__ is gast.Name and \
        node.func.id == "range" and len(node.args) == 1 and not node.keywords and \
        node.args[0].__class__ is gast.Constant and type(node.args[0].value) is int and \
        node.args[0].value >= 1


def _returns(stmts: list, memo: dict) -> bool:
    """A `return`, `break` or `continue` somewhere in `stmts` (not in a nested function):
    a path that may leave them early."""
    key = id(stmts[0]) if len(stmts) == 1 else tuple(map(id, stmts))
    found = memo.get(key)
    if found is None:
        stack, found = list(stmts), False
        while stack and not found:
            n = stack.pop()
            found = n.__class__ in _EXITS
            if n.__class__ not in _FUNCTIONS and n.__class__ is not gast.ClassDef:
                stack.extend(gast.iter_child_nodes(n))
        memo[key] = found
    return found


def _read_before_written(chains: set, body: list, self_name) -> set:
    """`chains` without those under a `(self, attr)` that `_written_first` finds."""
    first = _written_first(body, self_name) if self_name else set()
    return {c for c in chains if c[:2] not in first} if first else chains


def _written_first(body: list, self_name: str) -> set:
    """Chains `(self, attr)` that a statement of the function's own body (run once, first)
    assigns before any statement names `attr` (`self.mode = "big" if ... else "small"`, then
    `return h, self.mode`): the function never sees the value the attribute had when it was
    called, so that value is no read to guard (a guard would trace again for every value an
    earlier call left). Helpers called before it record their own reads."""
    # (only the statements up to the last such assignment are read: a huge function's body
    # of plain statements, none assigning `self.attr`, is not walked again)
    last = max((i for i, stmt in enumerate(body) if _self_target(stmt, self_name) is not None),
               default=-1)
    named: set = set()
    first: set = set()
    for stmt in body[:last + 1]:
        target = _self_target(stmt, self_name)
        if target is not None and None not in named and target.attr not in named and \
                target.attr not in _names(stmt.value):
            first.add((self_name, target.attr))
        named |= _names(stmt)
        if None in named:  # (no later assignment is first)
            break
    return first


def _self_target(stmt, self_name: str):
    """The target of `stmt` if it is `self.attr = ...` (one target), else None."""
    target = stmt.targets[0] if stmt.__class__ is gast.Assign and len(
        stmt.targets) == 1 else None
    if target is not None and target.__class__ is gast.Attribute and \
            target.value.__class__ is gast.Name and target.value.id == self_name:
        return target
    return None


def _names(node) -> set:
    """The attribute names and str constants in `node` (`getattr(self, "mode")` too)."""
    out = set()
    for n in gast.walk(node):
        if n.__class__ is gast.Attribute:
            out.add(n.attr)
        elif n.__class__ is gast.Constant and type(n.value) is str:
            out.add(n.value)
        elif n.__class__ is gast.Name and n.id in ("vars", "getattr", "__dict__"):
            out.add(None)  # (a computed read of any attribute: none is written first)
    return out
