"""Runs of straight-line statements that no converter changes, kept out of the passes' way.

Most of a huge function is straight-line tensor code (`h = rt.matmul(h, w) + b`,
`s = h.sum(axis=-1)`) that every pass walks and leaves as it is. `fold` replaces each run of
two or more such statements of the function's own body by one placeholder that reads and
binds what the run does,

    h = rt.matmul(h, w) + b
    h = rt.nn.functional.relu(h) * 1.01     ->    h, s1 = b, h, rt, w
    s1 = h.sum(axis=-1, keepdim=True)

which the name analyses read as the run (the names it reads before binding them, the names
it binds) and every pass leaves alone (names only: it is never compiled); `unfold` puts
the statements back after the last pass, so the generated code is what it would have been.

A statement is plain when it binds only names (`x = ...`, `a, b = ...`, `x += ...`) or is a
call, and its expression holds only names, constants, arithmetic, attributes other than
`shape`/`size`/`name`/`dtype`, lists and tuples, and calls that `call_trees` leaves alone and no other pass
rewrites (`rt.matmul(...)`, `h.sum()` on a local tensor). Only statements of the function's
own body are folded, after the passes that move statements between blocks (`early_return`,
`try_except`, `return_statements`), so a placeholder never ends up inside a branch or a loop
body, whose analyses look into calls (`ifelse._reaching_names`).
"""
from __future__ import annotations

import math

import gast

from ..pyct import activity, anno, origin
from ..pyct.naming import RESERVED
from ..pyct.walk import BLOCK_FIELDS
from .builtin_calls import BUILTINS, COMPARING_METHODS, MODULE_FUNCTIONS, TENSOR_ATTRIBUTES
from .call_trees import CallTrees
from .lists import _CHANGING_METHODS
from .set_operands import (BINARY, WithGlobals, added_dict, set_like, set_names,
                           set_operands)

# the pass after which `fold` runs: the last one that moves statements into other blocks
AFTER_PASS = "return_statements"
RUN = "plain_run"  # anno key of a placeholder: the statements it stands for
_PLACEHOLDERS = "plain_runs"  # anno key of a folded function: how many placeholders it has

_MIN_RUN = 2  # (a single statement folded saves less than its placeholder costs)
# methods `lists` and `builtin_calls` rewrite (`get` too: `d.get(k, v)` becomes
# `_d2s.dict_get(d)(k, v)` where a tensor `if` may have set the key, on main by now)
_REWRITTEN_METHODS = frozenset(("append", "pop", "get", "setdefault", *_CHANGING_METHODS,
                                *COMPARING_METHODS))
# `builtin_calls`: read when the program runs, or as eager code reads them
_REWRITTEN_ATTRS = frozenset(("shape", "size", *TENSOR_ATTRIBUTES))


def fold(fn, ctx) -> int:
    """Replace each run of plain statements in `fn.body` by a placeholder (see the module
    doc); the number of statements folded."""
    # First what each statement reads and binds, and the function's local names from the
    # same look (`activity.local_names`: a plain statement binds the names it stores), then
    # which calls every pass leaves alone.
    scanned, local = [], set(activity.params(fn))
    sets = WithGlobals(set_names(fn), ctx.namespace)  # (`FROZEN & seen`: `builtin_calls`)
    for s in fn.body:
        found = _scan(s, sets, fn)
        if found is None:
            activity.binding_names(s, local)
        else:
            local.update(found[1])
        scanned.append(found)
    anno.setanno(fn, anno.LOCALS, frozenset(local - set(activity.scope_declarations(fn.body))))
    calls = _Calls(ctx, fn)
    generated = ctx.namer.generated | {RESERVED}  # (in the statements passes made)
    body, run, folded, lines = [], [], 0, {}
    for s, found in zip(fn.body, scanned):
        if found is not None and all(calls.left_alone(c) for c in found[2]):
            user = generated.isdisjoint(found[0]) and generated.isdisjoint(found[1])
            run.append((s, found, user))
            continue
        folded += _flush(run, body, lines)
        body.append(s)
    folded += _flush(run, body, lines)
    fn.body[:] = body
    anno.setanno(fn, _PLACEHOLDERS, len(body) - len(scanned) + folded)  # (the placeholders made)
    return folded


def unfold(fn) -> None:
    """Put back the statements of every placeholder in `fn`: in its own body, where `fold`
    put them and every pass after it leaves them (a placeholder anywhere else, too)."""
    if _unfold_block(fn.body) == anno.getanno(fn, _PLACEHOLDERS, 0):
        return
    stack = [fn]
    while stack:
        node = stack.pop()
        for field in BLOCK_FIELDS:
            block = getattr(node, field, None)
            if block and block.__class__ is list:
                _unfold_block(block)
                stack.extend(block)


def _unfold_block(block: list) -> int:
    """Put back the statements of the placeholders in `block`; how many it held."""
    found = [s for s in block if anno.hasanno(s, RUN)]
    if found:
        block[:] = [t for s in block for t in anno.getanno(s, RUN, [s])]
    return len(found)


def _own_text(s, lines: dict) -> str | None:
    """The text of the user's statement `s` in the user's file, if it is all on one line that
    is still the line it was parsed from (`lines`: file name -> its lines, filled on first
    use). (A statement a pass made has the positions of its template, and its origin is
    the user statement it came from: the caller leaves out those with generated names.)"""
    src = anno.getanno(s, anno.ORIGIN, None)
    lineno = getattr(s, "lineno", None)
    if src is None or lineno is None or lineno != src.lineno or getattr(
            s, "end_lineno", None) != lineno or getattr(s, "col_offset", None) != \
            src.col_offset or getattr(s, "end_col_offset", None) is None:
        return None
    found = lines.get(src.filename)
    if found is None:
        found = lines[src.filename] = origin.user_source(src.filename)
    line = found[src.lineno - 1] if 0 < src.lineno <= len(found) else ""
    if line.strip() != src.source_line:
        return None
    if line.isascii():
        return line[s.col_offset:s.end_col_offset]
    try:  # (positions count the bytes of the UTF-8 text)
        return line.encode()[s.col_offset:s.end_col_offset].decode()
    except UnicodeDecodeError:
        return None


def _flush(run: list, body: list, lines: dict) -> int:
    """Append `run`'s statements to `body`, as one placeholder if there are enough. Those
    the user wrote (`run`: (statement, `_scan`'s answer, whether the user wrote it)) that
    are one line each will be printed as written (`anno.SOURCE_TEXT`)."""
    if len(run) < _MIN_RUN:
        body.extend(s for s, _, _ in run)
        run.clear()
        return 0
    stmts = [s for s, _, _ in run]
    exposed: dict = {}  # name -> its first Name node read before the run binds it
    bound: dict = {}  # name -> its first Name node bound
    for s, (loads, stores, _), user in run:
        text = _own_text(s, lines) if user else None
        if text is not None:
            anno.setanno(s, anno.SOURCE_TEXT, text)
        for name, node in loads.items():
            if name not in bound:
                exposed.setdefault(name, node)
        for name, node in stores.items():
            bound.setdefault(name, node)
    # (the user's own Name nodes, which no pass changes: the placeholder reads and binds
    # them where the run does, and the analyses' errors point at them)
    reads = gast.Tuple(elts=[_load(exposed[n]) for n in sorted(exposed)], ctx=gast.Load())
    if bound:
        targets = gast.Tuple(elts=[bound[n] for n in sorted(bound)], ctx=gast.Store())
        placeholder = gast.Assign(targets=[targets], value=reads, type_comment=None)
    else:
        placeholder = gast.Expr(value=reads)
    src = anno.getanno(stmts[0], anno.ORIGIN, None)
    if src is not None:
        anno.setanno(placeholder, anno.ORIGIN, src)
    anno.setanno(placeholder, RUN, stmts)
    body.append(placeholder)
    run.clear()
    return len(stmts)


def _load(node):
    """`node`, a Name read or bound (`x += 1`), as a Name read."""
    if node.ctx.__class__ is gast.Load:
        return node
    load = gast.Name(id=node.id, ctx=gast.Load(), annotation=None, type_comment=None)
    anno.copyanno(node, load, anno.ORIGIN)
    return load


def _scan(s, sets: frozenset, fn=None) -> tuple | None:
    """({name: Name node} read, {name: Name node} bound, [calls]) of statement `s` if it
    can be plain (its calls not yet looked at), else None. (`sets`: the names that may hold
    a set, whose algebra `builtin_calls` rewrites.)"""
    cls = s.__class__
    loads: dict = {}
    stores: dict = {}
    calls: list = []
    if cls is gast.Assign:
        for t in s.targets:
            for n in t.elts if t.__class__ in (gast.Tuple, gast.List) else [t]:
                if n.__class__ is not gast.Name:
                    return None
                stores.setdefault(n.id, n)
    elif cls is gast.AugAssign:
        if s.target.__class__ is not gast.Name or s.op.__class__ in BINARY and (
                s.target.id in sets or set_like(s.value, sets)) or fn is not None and added_dict(s, fn):
            return None
        loads[s.target.id] = s.target
        stores[s.target.id] = s.target
    elif cls is not gast.Expr or s.value.__class__ is not gast.Call:
        return None
    stack = [s.value]
    while stack:
        n = stack.pop()
        c = n.__class__
        if c is gast.Name:
            if n.ctx.__class__ is not gast.Load or n.annotation is not None:
                return None
            loads.setdefault(n.id, n)
        elif c is gast.Attribute:
            if n.attr in _REWRITTEN_ATTRS:
                return None
            stack.append(n.value)
        elif c is gast.BinOp:
            if n.left.__class__ is gast.Constant and isinstance(n.left.value, str) or \
                    set_operands(n, sets):
                return None  # `"..." % args`, `seen & t` (`builtin_calls`)
            stack += (n.left, n.right)
        elif c is gast.UnaryOp:
            if n.op.__class__ is gast.Not:
                return None  # (`logical`)
            stack.append(n.operand)
        elif c is gast.Call:
            f = n.func
            if f.__class__ is not gast.Attribute or f.attr in _REWRITTEN_METHODS or any(
                    a.__class__ is gast.Starred for a in n.args):
                return None  # (a built-in, `super()` or user function called by name)
            calls.append(f)
            stack.append(f.value)
            stack += n.args
            stack += (k.value for k in n.keywords)
        elif c in (gast.List, gast.Tuple):
            if n.ctx.__class__ is not gast.Load:
                return None
            stack += n.elts
        elif c is not gast.Constant:
            return None  # (subscripts, comparisons, and/or, lambdas, comprehensions, ...)
    return loads, stores, calls


class _Calls(CallTrees):
    """`call_trees`'s judgement of the callees of `fn`'s own statements, kept per dotted
    name (`rt.nn.functional.relu`: the same object wherever `fn` calls it)."""

    def __init__(self, ctx, fn):
        super().__init__(ctx)
        self.scopes.append(fn)
        self._known: dict = {}

    def left_alone(self, f) -> bool:
        """Whether every pass leaves a call of `f` (an attribute, `_scan`) as it is."""
        parts = [f.attr]
        root = f.value
        while root.__class__ is gast.Attribute:
            parts.append(root.attr)
            root = root.value
        if root.__class__ is not gast.Name:
            return False
        key = (root.id, *parts)
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = self._judge(f, root.id)
        return found

    def _judge(self, f, root: str) -> bool:
        if not self.is_local(root) and (self.ctx.namespace.get(root) is math
                                        or root in BUILTINS):
            return False  # `math.sqrt(i)` (`builtin_calls`)
        if not self.is_local(root) and any(self.ctx.namespace.get(root) is module and
                                           f.attr in names for module, names in MODULE_FUNCTIONS):
            return False  # `np.asarray(t)`, `operator.lt(a, b)` (`builtin_calls`)
        return self._leave_alone(f)
