"""Activity: which names a piece of code reads and writes (AutoGraph's activity analysis),
the local names, parameters and global/nonlocal declarations of a function, and the
per-statement memo (`Facts`) the whole-function analyses share.

Attribute chains on a name are qualified names (`qnames.QName`): a write to `self.count` or
`d[k]` writes `self.count` or `d`.

>>> import gast
>>> fn = gast.parse("def f(x):\\n  y = x\\n  self.n = y").body[0]
>>> sorted(written(fn.body)), sorted(read(fn.body)), sorted(local_names(fn))
(['self.n', 'y'], ['self', 'x', 'y'], ['x', 'y'])
"""
from __future__ import annotations

import contextlib
import threading
from typing import NamedTuple

import gast

from . import anno
from .qnames import qualified_name
from .walk import (
    BLOCK_FIELDS,
    COMPOUND,
    NAME_FIELDS,
    NODE_FIELDS,
    SCOPE_SET,
    STATEMENTS,
    push_children,
    walk,
)

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def target_names(target, out: set, mutations: bool = True) -> None:
    if isinstance(target, gast.Name):
        out.add(target.id)
    elif isinstance(target, (gast.Tuple, gast.List)):
        for elt in target.elts:
            target_names(elt, out, mutations)
    elif isinstance(target, gast.Starred):
        target_names(target.value, out, mutations)
    elif not mutations:
        return
    elif isinstance(target, gast.Attribute):
        qn = qualified_name(target)
        if qn is not None:
            out.add(qn)
    elif isinstance(target, gast.Subscript):
        qn = qualified_name(target.value)
        if qn is not None:
            out.add(qn)


def written(nodes) -> set[str]:
    """Names (and qualified names) bound by `nodes` in the current scope."""
    out: set[str] = set()
    for node in nodes if isinstance(nodes, list) else [nodes]:
        if isinstance(node, (gast.Name, gast.Tuple, gast.List, gast.Starred)):
            target_names(node, out)  # a target expression (e.g. of a for loop)
        else:
            written_into(node, out)
    return out


def written_into(node, out: set, facts: Facts | None = None, rules: dict | None = None) -> None:
    # Iterative, dispatching on the exact class: this runs over every statement of every
    # function several times per conversion. With `facts`, the writes of statements inside
    # `node` come from (and go to) its memo.
    root = node
    if rules is None:
        rules = _WRITES
    stack = [node]
    pop, push = stack.pop, stack.append
    name_cls = gast.Name
    fields_of = NAME_FIELDS if _WALRUS.possible else _BINDING_FIELDS
    while stack:
        node = pop()
        cls = node.__class__
        if cls is name_cls:  # binds nothing by itself (a target rule saw it); a parameter may
            if node.annotation is not None:  # have an annotation
                push(node.annotation)
            continue
        if cls in _DEFS:
            out.add(node.name)
            continue
        if cls is gast.Lambda:
            continue
        if cls in _COMPREHENSION_SET:  # only walrus targets escape a comprehension
            for sub in walk(node):
                if sub.__class__ is gast.NamedExpr:
                    target_names(sub.target, out)
            continue
        if facts is not None and cls in STATEMENTS and node is not root:
            out |= facts.written(node)
            continue
        rule = rules.get(cls)
        if rule is not None:
            rule(node, out)
        push_children(node, fields_of[cls], push)


class _Walrus(threading.local):
    possible = True  # whether the code being analysed may hold a walrus (`no_walrus`)


_WALRUS = _Walrus()


@contextlib.contextmanager
def no_walrus(absent: bool):
    """`with no_walrus(True):` the code analysed meanwhile (by this thread) holds no walrus
    (`:=`), so no expression binds a name and `written_into` looks only at statements and
    their targets, not into expressions (most of a function's nodes); `walrus_made()` ends
    that where a converter writes one."""
    outer, _WALRUS.possible = _WALRUS.possible, not absent
    try:
        yield
    finally:
        _WALRUS.possible = outer


def walrus_made() -> None:
    """A converter wrote a walrus into the code analysed now (see `no_walrus`)."""
    _WALRUS.possible = True


class _BindingFields(dict):
    """Node class -> the fields `written_into` looks into where no expression binds a name:
    a statement's statement lists, `with` items and `except` clauses (whose own rules read
    their targets); no expression's; a match case's pattern and body, and the patterns in a
    pattern (not their expressions: a guard, a value, a mapping's keys, a class)."""

    def __missing__(self, cls) -> tuple:
        if cls in STATEMENTS or cls is gast.withitem or cls is gast.ExceptHandler:
            found = tuple(f for f in NAME_FIELDS[cls] if f in _BINDING_HOLDERS)
        elif issubclass(cls, gast.expr):
            found = ()
        else:
            found = tuple(f for f in NAME_FIELDS[cls] if f not in _PATTERN_EXPRESSIONS)
        self[cls] = found
        return found


_BINDING_HOLDERS = frozenset(BLOCK_FIELDS) | {"items"}
_PATTERN_EXPRESSIONS = frozenset(("guard", "value", "keys", "cls"))
_BINDING_FIELDS = _BindingFields()


def _targets(node, out: set) -> None:
    for t in node.targets:
        target_names(t, out)


def _target(node, out: set) -> None:
    target_names(node.target, out)


def _optional(attr: str):
    def rule(node, out: set) -> None:
        value = getattr(node, attr)
        if value is not None:
            target_names(value, out)
    return rule


def _imports(node, out: set) -> None:
    for alias in node.names:
        out.add((alias.asname or alias.name).split(".")[0])


def _match_name(node, out: set) -> None:
    if node.name:
        out.add(node.name)


def _match_rest(node, out: set) -> None:
    if node.rest:
        out.add(node.rest)


_DEFS = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef})
_COMPREHENSION_SET = frozenset(_COMPREHENSIONS)
_WRITE_SCOPES = _DEFS | _COMPREHENSION_SET | {gast.Lambda}  # `written_into` stops/narrows
_WRITES = {
    gast.Assign: _targets, gast.Delete: _targets,
    gast.AugAssign: _target, gast.AnnAssign: _target, gast.For: _target,
    gast.AsyncFor: _target, gast.NamedExpr: _target,
    gast.withitem: _optional("optional_vars"), gast.ExceptHandler: _optional("name"),
    gast.Import: _imports, gast.ImportFrom: _imports,
    gast.MatchAs: _match_name, gast.MatchStar: _match_name, gast.MatchMapping: _match_rest,
}


def _bind_targets(node, out: set) -> None:
    for t in node.targets:
        target_names(t, out, mutations=False)


def _bind_target(node, out: set) -> None:
    target_names(node.target, out, mutations=False)


def _bind_optional(attr: str):
    def rule(node, out: set) -> None:
        value = getattr(node, attr)
        if value is not None:
            target_names(value, out, mutations=False)
    return rule


# What binds a local name (`local_names`): `_WRITES` without the objects a target mutates.
_BINDS = {**_WRITES, **dict.fromkeys((gast.Assign, gast.Delete), _bind_targets),
          **dict.fromkeys((gast.AugAssign, gast.AnnAssign, gast.For, gast.AsyncFor),
                          _bind_target),
          gast.withitem: _bind_optional("optional_vars")}


def read(nodes) -> set[str]:
    """Names loaded anywhere in `nodes`, nested functions included (closures read them)."""
    out: set[str] = set()
    for node in nodes if isinstance(nodes, list) else [nodes]:
        read_into(node, out)
    return out


def read_into(node, loads: set, facts: Facts | None = None) -> None:
    """Add to `loads` the names `read(node)` gives; one iterative walk, dispatching on the
    exact class. With `facts`, the reads of statements inside `node` come from its memo."""
    stack = [node]
    pop, push = stack.pop, stack.append
    name_cls, load, aug = gast.Name, gast.Load, gast.AugAssign
    while stack:
        n = pop()
        cls = n.__class__
        if cls is name_cls:  # its other fields: the context, an annotation (parameters)
            if n.ctx.__class__ is load:
                loads.add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if facts is not None and cls in STATEMENTS and n is not node:
            loads |= facts.read(n)
            continue
        if cls in _COMPREHENSION_SET:
            _comprehension_reads(n, loads)
            continue
        if cls is gast.Lambda:
            _lambda_reads(n, loads, push)
            continue
        if cls is aug:
            target_names(n.target, loads)
        push_children(n, NAME_FIELDS[cls], push)


def _lambda_reads(fn, loads: set, push) -> None:
    """What a lambda reads from the enclosing scope: the names free in its body (not its
    parameters: `map(lambda p: p[0], xs)` reads no `p` of the function), and its defaults
    (pushed, to be walked as the rest of the expression)."""
    a = fn.args
    inner: set = set()
    read_into(fn.body, inner)  # (comprehensions in it keep their own names: `read_into`)
    loads |= inner - {p.id for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg,
                                       a.kwarg] if p is not None}
    for d in [*a.defaults, *(k for k in a.kw_defaults if k is not None)]:
        push(d)


def _comprehension_reads(comp, loads: set) -> None:
    """Add to `loads` what comprehension `comp` reads from its enclosing scope: its first
    iterable, and the names its other parts read that none of its `for` targets binds (those
    are the comprehension's own, as Python 3 scopes them)."""
    gens = comp.generators
    read_into(gens[0].iter, loads)
    own, inner = set(), set()
    for g in gens:
        target_names(g.target, own, mutations=False)
    parts = [g.iter for g in gens[1:]] + [c for g in gens for c in g.ifs] + [
        getattr(comp, f) for f in ("elt", "key", "value") if hasattr(comp, f)]
    for part in parts:
        read_into(part, inner)
    loads |= inner - own


def statement_names(s, loads: set, stores: set) -> set | None:
    """As `read_into(s, loads)`, also adding to `stores` every name stored anywhere in `s`, and
    returning `written(s)` from the same walk; None when `s` holds a lambda, a comprehension
    or a def, where `written` binds otherwise."""
    writes: set | None = set()
    stack = [s]
    pop, push = stack.pop, stack.append
    name_cls, load, store, aug = gast.Name, gast.Load, gast.Store, gast.AugAssign
    while stack:
        n = pop()
        cls = n.__class__
        if cls is name_cls:
            ctx = n.ctx.__class__
            if ctx is load:
                loads.add(n.id)
            elif ctx is store:
                stores.add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if writes is not None:
            if cls in _WRITE_SCOPES:
                writes = None
            else:
                rule = _WRITES.get(cls)
                if rule is not None:
                    rule(n, writes)
        if cls in _COMPREHENSION_SET:
            writes = None  # (a walrus inside binds in this scope: `written` finds it)
            _comprehension_reads(n, loads)
            _comprehension_stores(n, stores)
            continue
        if cls is gast.Lambda:
            _lambda_reads(n, loads, push)
            continue
        if cls is aug:
            target_names(n.target, loads)
        push_children(n, NAME_FIELDS[cls], push)
    return writes


def _comprehension_stores(comp, stores: set) -> None:
    """Add to `stores` every name stored anywhere in comprehension `comp` (its targets too)."""
    for n in gast.walk(comp):
        if n.__class__ is gast.Name and n.ctx.__class__ is gast.Store:
            stores.add(n.id)


def binding_names(node, out: set) -> None:
    """Add to `out` the names `node` binds in the current scope (as `written`, without the
    objects a target only mutates)."""
    written_into(node, out, rules=_BINDS)


def local_names(fn) -> set[str]:
    """THE local names of function or lambda `fn`, as Python scopes them: its parameters and
    the names it binds (assignments, loop and `with` targets, `del`, imports, nested def and
    class names, except-handler and match names, walrus targets also inside comprehensions),
    not names of objects it only mutates (`d[k] = v`, `self.x = v`), not names bound only in a
    nested function, class or comprehension, and not its global/nonlocal declarations.
    Converters read it through `locals_of` (the `LOCALS` annotation, computed once)."""
    out = set(params(fn))
    body = fn.body if fn.body.__class__ is list else [fn.body]  # (a lambda's is one expr)
    for s in body:
        binding_names(s, out)
    return out - set(scope_declarations(body))


def locals_of(fn) -> frozenset:
    """`local_names(fn)`, kept on `fn` as its `LOCALS` annotation: `analysis.analyze` sets it
    on every def it analyses, and a function a converter made is analysed on first ask."""
    store = getattr(fn, anno.KEY, None)
    found = None if store is None else store.get(anno.LOCALS)
    if found is None:
        found = frozenset(local_names(fn))
        anno.setanno(fn, anno.LOCALS, found)
    return found


_FUNCTIONS = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda})


class _Settled(threading.local):
    defs = None  # def -> its `free_names`, while `settled_defs` is open (in this thread)


_SETTLED = _Settled()


@contextlib.contextmanager
def settled_defs():
    """`with settled_defs():` a def whose `free_names` is asked meanwhile does not change
    until the block ends, so the answer is kept (nodes hash by identity): a converter that
    reads only code it has finished converting (`ifelse`: the branches of an `if`, each
    `elif` a def in the one before) asks of each def as often as it nests, and each
    answer walks all of the def."""
    outer, _SETTLED.defs = _SETTLED.defs, {}
    try:
        yield
    finally:
        _SETTLED.defs = outer


def free_names(fn) -> frozenset:
    """The names function or lambda `fn` reads from enclosing scopes when it is called: names
    loaded in it, or free in functions nested in it, that are not its own locals (its
    parameters included). What its header reads (decorators, defaults) is not included."""
    settled = _SETTLED.defs
    if settled is not None:
        found = settled.get(fn)
        if found is None:
            found = settled[fn] = _free_names(fn)
        return found
    return _free_names(fn)


def _free_names(fn) -> frozenset:
    own = locals_of(fn)
    loads: set = set()
    body = fn.body if fn.body.__class__ is list else [fn.body]
    stack = list(body)
    pop, push = stack.pop, stack.append
    name_cls, load, aug = gast.Name, gast.Load, gast.AugAssign
    while stack:
        n = pop()
        cls = n.__class__
        if cls is name_cls:
            if n.ctx.__class__ is load:
                loads.add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if cls in _FUNCTIONS:  # a nested function: its header runs here
            loads |= free_names(n)
            args = n.args
            for part in (list(getattr(n, "decorator_list", ())) + list(args.defaults)
                         + [d for d in args.kw_defaults if d is not None]):
                push(part)
            continue
        if cls is aug:
            target_names(n.target, loads)
        push_children(n, NAME_FIELDS[cls], push)
    return frozenset(loads - own)


def closure_cells(fn) -> frozenset:
    """Local names of `fn` (or of functions nested in it) that a nested function or lambda
    reads: a closure sees their updates."""
    out: set[str] = set()
    for f in walk(fn):
        if not isinstance(f, gast.FunctionDef):
            continue
        nested = [n for n in walk(f) if n is not f and isinstance(n, (gast.FunctionDef,
                                                                      gast.Lambda))]
        if nested:
            out |= read(nested) & local_names(f)
    return frozenset(out)


class Survey(NamedTuple):
    """What one walk over a tree finds (see `survey`)."""

    names: set  # every Name id and FunctionDef/ClassDef name (what `Namer.for_tree` collects)
    types: set  # the classes of all its nodes, as `{type(n) for n in walk(tree)}`
    scopes: int  # how many FunctionDef and Lambda nodes it has, the tree itself included


def survey(tree) -> Survey:
    """The names, node types and scope count of `tree` in one walk: converting asks these of
    the whole function up front, and a walk per question cost more than the answers."""
    names: set = set()
    types: set = set()
    scopes = 0
    stack = [tree]
    pop, push = stack.pop, stack.append
    name_cls = gast.Name
    while stack:
        n = pop()
        cls = n.__class__
        types.add(cls)
        if cls is name_cls:  # the most common node: its context is a leaf, seen here
            names.add(n.id)
            types.add(n.ctx.__class__)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if cls in _SURVEY_SCOPES:
            scopes += 1
            if cls is not gast.Lambda:
                names.add(n.name)
        elif cls is gast.ClassDef:
            names.add(n.name)
        push_children(n, NODE_FIELDS[cls], push)
    return Survey(names, types, scopes)


_SURVEY_SCOPES = frozenset({gast.FunctionDef, gast.Lambda})


def params(fn) -> list[str]:
    """Parameter names of a FunctionDef or Lambda, in order (incl. *args and **kwargs)."""
    a = fn.args
    names = [p.id for p in a.posonlyargs + a.args]
    if a.vararg is not None:
        names.append(a.vararg.id)
    names += [p.id for p in a.kwonlyargs]
    if a.kwarg is not None:
        names.append(a.kwarg.id)
    return names


def scope_declarations(body: list) -> dict[str, str]:
    """`global`/`nonlocal` names declared directly in a function body (not nested scopes)."""
    out: dict[str, str] = {}
    stack = list(body)
    while stack:  # declarations are statements: only statement lists need a look
        node = stack.pop()
        cls = node.__class__
        if cls is gast.Global:
            out.update(dict.fromkeys(node.names, "global"))
        elif cls is gast.Nonlocal:
            out.update(dict.fromkeys(node.names, "nonlocal"))
        elif cls not in SCOPE_SET:
            for field in BLOCK_FIELDS:
                block = getattr(node, field, None)
                if block:
                    stack.extend(block)
    return out


class Facts:
    """What the statements of one unchanging tree write and read, each computed once.

    Liveness visits a loop body once per fixpoint round, and an inner loop's body once per
    round of each enclosing loop; definedness asks what each compound statement writes and
    then the same of every statement inside it; a function's liveness reads all of each def
    nested in it, whose statements its own analysis reads again. Here each answer is
    computed once per node and kept: a simple statement's reads, stores and writes come
    from one walk, and a compound statement's or def's writes and reads are the union of
    its header's and its statements'. Keys are the nodes themselves: nodes hash by identity
    and the dicts keep them alive, so no key stands for a recycled id. The answers hold only
    while the tree does not change, so `analyze` and `live_in` make a fresh `Facts` per
    call and drop it when they return. The sets handed out are shared: callers must not
    change them.
    """

    __slots__ = ("_reads", "_uses", "_writes")

    def __init__(self):
        self._writes: dict = {}
        self._reads: dict = {}
        self._uses: dict = {}

    def written(self, s) -> set:
        """`written(s)` for a statement `s` (and, on the way, for every statement in it)."""
        found = self._writes.get(s)
        if found is None:
            if s.__class__ not in COMPOUND:
                self.uses(s)  # one walk for all of a simple statement's names
                found = self._writes.get(s)
            if found is None:
                found = self._writes[s] = set()
                written_into(s, found, self)
        return found

    def written_all(self, stmts: list) -> set:
        """`written(stmts)` for a statement list."""
        out: set = set()
        for s in stmts:
            out |= self.written(s)
        return out

    def read(self, node) -> frozenset:
        """`read(node)`; for a compound statement or a def, the union of what its header
        reads and what its statements read (each of them computed once)."""
        found = self._reads.get(node)
        if found is None:
            if node.__class__ in STATEMENTS and node.__class__ not in COMPOUND:
                found = self.uses(node)[0]  # a simple statement: its reads come with uses
            else:
                loads: set = set()
                read_into(node, loads, self)
                found = frozenset(loads)
            self._reads[node] = found
        return found

    def uses(self, s) -> tuple:
        """(`read(s)`, `rebound(s)`) for a simple statement, in one walk, which also gives
        `written(s)` unless `s` holds a lambda, comprehension or def."""
        found = self._uses.get(s)
        if found is None:
            loads: set = set()
            stores: set = set()
            writes = statement_names(s, loads, stores)
            if writes is not None and s not in self._writes:
                self._writes[s] = writes
            if s.__class__ is gast.AugAssign:
                stores = set()
            found = self._uses[s] = (frozenset(loads), frozenset(stores))
        return found
