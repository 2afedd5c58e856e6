"""Name analysis: which names a piece of code reads and writes, and what is live where.

Everything works on one function scope at a time; nested functions are analysed with their
own scope (`analyze` recurses into them), and their reads count as reads where they are
defined (a closure may read a name at any call).

Annotations set by `analyze(fn_node)` (see `anno`):

- `DEFINED_IN` on each statement: names possibly bound before it (parameters included).
- `LIVE_OUT` on each statement: names that may be read after it before being rebound.
- `LOOP_LIVE` on `while`/`for`: names live at the start of an iteration (loop-carried).
- `SCOPE_DECL` on function defs: `{name: 'global' | 'nonlocal'}` declared in its body.

Attribute chains on a name (`self.count`) are tracked as qualified names: a write to
`self.count` or `d[k]` writes `self.count` or `d` (the object is state that changes).

>>> import gast
>>> fn = gast.parse("def f(x):\\n  y = x\\n  return y").body[0]
>>> sorted(written(fn.body)), sorted(read(fn.body))
(['y'], ['x', 'y'])
"""
from __future__ import annotations

from typing import NamedTuple

import gast

from . import anno

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class _FieldTable(dict):
    """Node class -> the fields a walk must look into, found on first use of each class.

    Skipped are the fields that by Python's grammar hold no node (names, strings, numbers,
    constants: `_SCALAR_FIELDS`), and, for walks that only look for names (`leaves=False`),
    contexts and operators, nodes with no fields. Walks run over every node of a function
    many times per conversion, and a field not fetched is the cheapest."""

    def __init__(self, leaves: bool):
        super().__init__()
        self.leaves = leaves

    def __missing__(self, cls) -> tuple:
        skip = _SCALAR_FIELDS.get(cls.__name__, ())
        if not self.leaves:
            skip += _LEAF_FIELDS
        found = self[cls] = tuple(f for f in cls._fields if f not in skip)
        return found


_SCALAR_FIELDS = {
    "FunctionDef": ("name", "type_comment"), "AsyncFunctionDef": ("name", "type_comment"),
    "ClassDef": ("name",), "Assign": ("type_comment",), "For": ("type_comment",),
    "AsyncFor": ("type_comment",), "With": ("type_comment",), "AsyncWith": ("type_comment",),
    "AnnAssign": ("simple",), "ImportFrom": ("module", "level"), "Global": ("names",),
    "Nonlocal": ("names",), "Constant": ("value", "kind"), "Attribute": ("attr",),
    "Name": ("id", "type_comment"), "FormattedValue": ("conversion",),
    "comprehension": ("is_async",), "keyword": ("arg",), "alias": ("name", "asname"),
    "MatchSingleton": ("value",), "MatchMapping": ("rest",), "MatchClass": ("kwd_attrs",),
    "MatchStar": ("name",), "MatchAs": ("name",), "TypeVar": ("name",),
    "ParamSpec": ("name",), "TypeVarTuple": ("name",), "TypeIgnore": ("lineno", "tag"),
}  # (gast's ExceptHandler.name is a Name node, so it is walked)
_LEAF_FIELDS = ("ctx", "op", "ops")
NODE_FIELDS = _FieldTable(leaves=True)  # for walks that must reach every node
_NAME_FIELDS = _FieldTable(leaves=False)  # for walks that look for names and binding forms


def walk(node):
    """Every node under `node` (itself included), in no particular order; faster than
    `ast.walk`, which matters because analysis walks the function many times."""
    stack = [node]
    pop, push = stack.pop, stack.append
    ast_type = gast.AST
    while stack:
        n = pop()
        yield n
        for field in NODE_FIELDS[n.__class__]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)


def qualified_name(node) -> str | None:
    """'a', 'a.b.c' for names and attribute chains on a name; None otherwise."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = qualified_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _target_names(target, out: set, mutations: bool = True) -> None:
    if isinstance(target, gast.Name):
        out.add(target.id)
    elif isinstance(target, (gast.Tuple, gast.List)):
        for elt in target.elts:
            _target_names(elt, out, mutations)
    elif isinstance(target, gast.Starred):
        _target_names(target.value, out, mutations)
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
            _target_names(node, out)  # a target expression (e.g. of a for loop)
        else:
            _written(node, out)
    return out


def _written(node, out: set, facts: _Facts | None = None) -> None:
    # Iterative, dispatching on the exact class: this runs over every statement of every
    # function several times per conversion. With `facts`, the writes of statements inside
    # `node` come from (and go to) its memo.
    root = node
    stack = [node]
    pop, push = stack.pop, stack.append
    ast_type, name_cls = gast.AST, gast.Name
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
                    _target_names(sub.target, out)
            continue
        if facts is not None and cls in _STATEMENTS and node is not root:
            out |= facts.written(node)
            continue
        rule = _WRITES.get(cls)
        if rule is not None:
            rule(node, out)
        for field in _NAME_FIELDS[cls]:
            v = getattr(node, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)


def _targets(node, out: set) -> None:
    for t in node.targets:
        _target_names(t, out)


def _target(node, out: set) -> None:
    _target_names(node.target, out)


def _optional(attr: str):
    def rule(node, out: set) -> None:
        value = getattr(node, attr)
        if value is not None:
            _target_names(value, out)
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
_WRITE_SCOPES = _DEFS | _COMPREHENSION_SET | {gast.Lambda}  # `_written` stops or narrows
_WRITES = {
    gast.Assign: _targets, gast.Delete: _targets,
    gast.AugAssign: _target, gast.AnnAssign: _target, gast.For: _target,
    gast.AsyncFor: _target, gast.NamedExpr: _target,
    gast.withitem: _optional("optional_vars"), gast.ExceptHandler: _optional("name"),
    gast.Import: _imports, gast.ImportFrom: _imports,
    gast.MatchAs: _match_name, gast.MatchStar: _match_name, gast.MatchMapping: _match_rest,
}


def read(nodes) -> set[str]:
    """Names loaded anywhere in `nodes`, nested functions included (closures read them)."""
    out: set[str] = set()
    for node in nodes if isinstance(nodes, list) else [nodes]:
        _names(node, out)
    return out


def _names(node, loads: set, facts: _Facts | None = None) -> None:
    """Add to `loads` the names `read(node)` gives; one iterative walk, dispatching on the
    exact class. With `facts`, the reads of statements inside `node` come from its memo."""
    stack = [node]
    pop, push = stack.pop, stack.append
    ast_type, name_cls, load, aug = gast.AST, gast.Name, gast.Load, gast.AugAssign
    while stack:
        n = pop()
        cls = n.__class__
        if cls is name_cls:  # its other fields: the context, an annotation (parameters)
            if n.ctx.__class__ is load:
                loads.add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if facts is not None and cls in _STATEMENTS and n is not node:
            loads |= facts.read(n)
            continue
        if cls is aug:
            _target_names(n.target, loads)
        for field in _NAME_FIELDS[cls]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)


def _statement_names(s, loads: set, stores: set) -> set | None:
    """As `_names(s, loads)`, also adding to `stores` every name stored anywhere in `s`, and
    returning `written(s)` from the same walk; None when `s` holds a lambda, a comprehension
    or a def, where `written` binds otherwise."""
    writes: set | None = set()
    stack = [s]
    pop, push = stack.pop, stack.append
    ast_type, name_cls, load, store, aug = gast.AST, gast.Name, gast.Load, gast.Store, \
        gast.AugAssign
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
        if cls is aug:
            _target_names(n.target, loads)
        for field in _NAME_FIELDS[cls]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)
    return writes


def local_names(fn) -> set[str]:
    """Names local to function `fn`: parameters and names it binds (not names of objects it
    only mutates, `d[k] = v`), minus its global/nonlocal declarations."""
    out = set(params(fn))
    stack = list(fn.body)
    pop, push = stack.pop, stack.append
    ast_type, name_cls, store = gast.AST, gast.Name, gast.Store
    while stack:
        n = pop()
        cls = n.__class__
        if cls is name_cls:
            if n.ctx.__class__ is store:
                out.add(n.id)
            if n.annotation is not None:
                push(n.annotation)
            continue
        if cls in _LOCAL_RULES:
            _LOCAL_RULES[cls](n, out)
        for field in _NAME_FIELDS[cls]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)
    return out - set(scope_declarations(fn.body))


def _def_name(node, out: set) -> None:
    out.add(node.name)


_LOCAL_RULES = {  # what binds a local name besides a stored Name (see `local_names`)
    gast.FunctionDef: _def_name, gast.ClassDef: _def_name,
    gast.Import: _imports, gast.ImportFrom: _imports,
    gast.MatchAs: _match_name, gast.MatchStar: _match_name,
}


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
    ast_type, name_cls = gast.AST, gast.Name
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
        for field in NODE_FIELDS[cls]:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        push(x)
            elif isinstance(v, ast_type):
                push(v)
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
        elif cls not in _SCOPE_SET:
            for field in _BLOCK_FIELDS:
                block = getattr(node, field, None)
                if block:
                    stack.extend(block)
    return out


_SCOPE_SET = frozenset(_SCOPES)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


# ---- the whole-function analysis --------------------------------------------------------------

def analyze(fn) -> None:
    """Annotate `fn` (a FunctionDef) and every function nested in it; see the module doc."""
    facts = _Facts()
    for f in [fn] + _nested_defs(fn):
        anno.setanno(f, anno.SCOPE_DECL, scope_declarations(f.body))
        _defined(f.body, frozenset(params(f)), facts)
        _live(f.body, frozenset(), facts)


def live_in(stmts: list, live_out: frozenset) -> frozenset:
    """Names live at the start of `stmts` when `live_out` are live after them (annotating
    `LIVE_OUT` and `LOOP_LIVE` below, as `analyze` does)."""
    return _live(stmts, live_out, _Facts())


def _nested_defs(fn) -> list:
    """Every FunctionDef below `fn`, at any depth (a def is a statement: only statement lists
    can hold one)."""
    out = []
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if n.__class__ is gast.FunctionDef:
            out.append(n)
        for field in _BLOCK_FIELDS:
            block = getattr(n, field, None)
            if block:
                stack.extend(block)
    return out


class _Facts:
    """What the statements of one unchanging tree write and read, each computed once.

    Liveness visits a loop body once per fixpoint round, and an inner loop's body once per
    round of each enclosing loop; definedness asks what each compound statement writes and
    then the same of every statement inside it; a function's liveness reads all of each def
    nested in it, whose statements its own analysis reads again. Here each answer is
    computed once per node and kept: a simple statement's reads, stores and writes come
    from one walk, and a compound statement's or def's writes and reads are the union of
    its header's and its statements'. Keys are the nodes themselves: nodes hash by identity
    and the dicts keep them alive, so no key stands for a recycled id. The answers hold only
    while the tree does not change, so `analyze` and `live_in` make a fresh `_Facts` per
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
            if s.__class__ not in _COMPOUND:
                self.uses(s)  # one walk for all of a simple statement's names
                found = self._writes.get(s)
            if found is None:
                found = self._writes[s] = set()
                _written(s, found, self)
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
            if node.__class__ in _STATEMENTS and node.__class__ not in _COMPOUND:
                found = self.uses(node)[0]  # a simple statement: its reads come with uses
            else:
                loads: set = set()
                _names(node, loads, self)
                found = frozenset(loads)
            self._reads[node] = found
        return found

    def uses(self, s) -> tuple:
        """(`read(s)`, `_rebound(s)`) for a simple statement, in one walk, which also gives
        `written(s)` unless `s` holds a lambda, comprehension or def."""
        found = self._uses.get(s)
        if found is None:
            loads: set = set()
            stores: set = set()
            writes = _statement_names(s, loads, stores)
            if writes is not None and s not in self._writes:
                self._writes[s] = writes
            if s.__class__ is gast.AugAssign:
                stores = set()
            found = self._uses[s] = (frozenset(loads), frozenset(stores))
        return found


_STATEMENTS = frozenset(c for c in vars(gast).values()
                        if isinstance(c, type) and issubclass(c, gast.stmt))
_TRY_STAR = getattr(gast, "TryStar", gast.Try)


def _blocks(stmt) -> list:
    """The statement lists directly inside a compound statement."""
    get = _BLOCKS.get(stmt.__class__)
    return [] if get is None else get(stmt)


def _try_blocks(stmt) -> list:
    return [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]


_BLOCKS = {  # the statements that hold statement lists liveness and definedness go into
    gast.If: lambda s: [s.body, s.orelse], gast.While: lambda s: [s.body, s.orelse],
    gast.For: lambda s: [s.body, s.orelse], gast.AsyncFor: lambda s: [s.body, s.orelse],
    gast.With: lambda s: [s.body], gast.AsyncWith: lambda s: [s.body],
    gast.Try: _try_blocks, _TRY_STAR: _try_blocks,
    gast.Match: lambda s: [c.body for c in s.cases],
}
_LOOPS = frozenset({gast.While, gast.For, gast.AsyncFor})
# Statements whose reads `_Facts.read` gathers from their parts (the others: one walk).
_COMPOUND = frozenset(_BLOCKS) | {gast.FunctionDef, gast.ClassDef}


def _defined(stmts: list, defined: frozenset, facts: _Facts) -> frozenset:
    key = anno.KEY
    for s in stmts:
        store = getattr(s, key, None)
        if store is None:
            setattr(s, key, {anno.DEFINED_IN: defined})
        else:
            store[anno.DEFINED_IN] = defined
        w = facts.written(s)
        cls = s.__class__
        if cls in _LOOPS:
            _defined(s.body, defined | w, facts)  # later iterations see the body's bindings
            _defined(s.orelse, defined | w, facts)
        elif cls in _BLOCKS:
            # A try body starts with what was bound before the try; handlers, else and
            # finally may follow any part of it.
            inner = defined | w if cls in (gast.Try, _TRY_STAR) else defined
            for block in _BLOCKS[cls](s):
                _defined(block, defined if block is getattr(s, "body", None) and cls in (
                    gast.Try, _TRY_STAR) else inner, facts)
        if w:  # (else the same set: no copy)
            defined = defined | w
    return defined


def _live(stmts: list, live_out: frozenset, facts: _Facts | None = None) -> frozenset:
    if facts is None:
        facts = _Facts()
    key = anno.KEY
    live = live_out
    for s in reversed(stmts):
        store = getattr(s, key, None)
        if store is None:
            setattr(s, key, {anno.LIVE_OUT: live})
        else:
            store[anno.LIVE_OUT] = live
        rule = _LIVE_RULES.get(s.__class__)
        if rule is not None:
            live = rule(s, live, facts)
        else:  # a simple statement
            loads, rebound = facts.uses(s)
            live = (live - rebound) | loads
    return live


def _live_if(s, out: frozenset, facts: _Facts) -> frozenset:
    return facts.read(s.test) | _live(s.body, out, facts) | _live(s.orelse, out, facts)


def _live_while(s, out: frozenset, facts: _Facts) -> frozenset:
    header = out | _live(s.orelse, out, facts) | facts.read(s.test)
    for _ in range(len(facts.written_all(s.body)) + 2):  # a fixpoint; each round adds names
        new = header | _live(s.body, header, facts)
        if new == header:
            break
        header = new
    anno.setanno(s, anno.LOOP_LIVE, header)
    return header


def _live_for(s, out: frozenset, facts: _Facts) -> frozenset:
    targets = written(s.target)
    extra = anno.getanno(s, anno.EXTRA_TEST, None)  # read before each iteration
    header = out | _live(s.orelse, out, facts) | (
        facts.read(extra) if extra is not None else set())
    for _ in range(len(facts.written_all(s.body)) + 2):
        new = header | (_live(s.body, header, facts) - targets)
        if new == header:
            break
        header = new
    anno.setanno(s, anno.LOOP_LIVE, header)
    return header | facts.read(s.iter)


def _live_exit(s, out: frozenset, facts: _Facts) -> frozenset:
    return facts.read(s)  # return / raise: nothing after it runs


def _live_def(s, out: frozenset, facts: _Facts) -> frozenset:
    return (out - {s.name}) | facts.read(s)


def _live_with(s, out: frozenset, facts: _Facts) -> frozenset:
    """`with`: the body runs once, in order, after the items are evaluated."""
    live = _live(s.body, out, facts)
    for item in s.items:
        live = live | facts.read(item)
    return live


def _live_parts(s, out: frozenset, facts: _Facts) -> frozenset:
    """try / with / match: any part may run; no part surely rebinds a name."""
    live = frozenset(out)
    for block in _BLOCKS[s.__class__](s):
        live = live | _live(block, out, facts)
    for part in list(getattr(s, "items", [])) + ([s.subject] if hasattr(s, "subject") else []):
        live = live | facts.read(part)
    for c in getattr(s, "cases", []):
        if c.guard:
            live = live | facts.read(c.guard)
    return live


_LIVE_RULES = {
    gast.If: _live_if, gast.While: _live_while, gast.For: _live_for,
    gast.AsyncFor: _live_for, gast.Return: _live_exit, gast.Raise: _live_exit,
    gast.FunctionDef: _live_def, gast.ClassDef: _live_def,
    gast.With: _live_with, gast.AsyncWith: _live_with, gast.Try: _live_parts,
    _TRY_STAR: _live_parts, gast.Match: _live_parts,
}


def surely_bound(stmts: list) -> set[str]:
    """Names every path through `stmts` binds (when it completes normally)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, gast.If):
            out |= surely_bound(s.body) & surely_bound(s.orelse)
        elif isinstance(s, (gast.With, gast.AsyncWith)):
            out |= surely_bound(s.body) | written(s.items)
        elif isinstance(s, gast.Try):
            handled = [surely_bound(h.body) for h in s.handlers]
            body = surely_bound(s.body + s.orelse)
            for h in handled:
                body &= h
            out |= body | surely_bound(s.finalbody)
        elif isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            out.add(s.name)
        elif isinstance(s, (gast.Import, gast.ImportFrom)):
            out |= written(s)
        elif not _blocks(s):
            out |= _rebound(s)
    return out


def _rebound(s) -> set:
    """Names a simple statement surely rebinds (`d[k] = v` and `a.b = v` only mutate)."""
    if s.__class__ is gast.AugAssign:
        return set()
    stores: set = set()
    _statement_names(s, set(), stores)
    return stores
