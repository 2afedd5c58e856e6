"""`try` with `except` clauses whose body raises: errors raised when the program runs reach
the `except` clauses, in Python's order (see `d2s.operators.try_except` for the operators).

    try:                                   _exc_1 = 0
        if x.sum() > 0:                    _try_1 = _d2s.try_state(lambda: (ValueError,))
            raise ValueError("pos")        try:
        y = x * 2                              if x.sum() > 0:
    except ValueError:              ->             _exc_1 = _d2s.try_raise(_try_1, ValueError("pos"))
        y = -x                                 if _d2s.try_guard(_try_1, _exc_1):
                                                   y = x * 2
                                           except ValueError:          # errors while building
                                               _d2s.try_end(_try_1)
                                               y = -x
                                           else:                       # errors when it runs
                                               _d2s.try_end(_try_1)
                                               if _d2s.try_ok(_exc_1):
                                                   pass
                                               elif _d2s.try_caught(_try_1, _exc_1, ValueError):
                                                   y = -x
                                           finally:
                                               _d2s.try_end(_try_1)
                                           _d2s.try_reraise(_try_1, _exc_1, (ValueError,))

While the body is traced the `try` is open: a run-time `raise` in a function it calls, which
one of the clauses would catch, is a `ConversionError` (only a `raise` written in the body
reaches the clauses when the program runs).
`assert test, msg` in such a body becomes `if not test: raise AssertionError(msg)` first.
Inside loops of the body, a failure also leaves the loop (`break`). Inner `try` statements are
converted first; in an enclosing `try` body, the re-raise of an error they do not catch
becomes `_exc_2 = _d2s.try_forward(_try_2, _exc_2, _try_1, _exc_1, types)`, a failure of
the enclosing body like its own `raise`.
A statement of the body that calls a function that may be user code (not the runtime's, not
a Tensor method) may fail through it: the call's value is set aside, the errors the function
handed on are collected, and the statement finishes only while nothing failed (each
statement after one that may fail in a guard of its own, flat: any length of body):

    y = helper(x)          ->   _tmp_1 = _d2s.call(helper)(x)
    rest                        _exc_1 = _d2s.try_collect(_try_1, _exc_1)
                                if _d2s.try_guard(_try_1, _exc_1):
                                    y = _tmp_1
                                if _d2s.try_guard(_try_1, _exc_1):
                                    rest

The functions called inside a `try` body are converted a second time with `ctx.errors` set:
their whole body is such a body (`_d2s.fn_state()`), and `_d2s.fn_exit(state, code)` before
the return hands their error code to the caller (`operators.try_except`).
Runs first: the passes after it convert the `if`s, `break`s and the `for` it writes.
"""
from __future__ import annotations

import copy

import gast

from ..call_policy import TENSOR_METHODS
from ..pyct import anno, origin, templates
from ..pyct.naming import RESERVED
from ..pyct.transformer import Base
from . import jumps, try_divisions
from .break_continue import _binds
from .call_trees import CallTrees
from .early_return import always_exits, try_exits
from .handler_raises import SCOPES as _SCOPES
from .handler_raises import clause_body
from .predicates import mark_test

HANDLES = (gast.Try,)  # the pass is skipped when none of these is present
CREATES = (gast.If, gast.Assign, gast.Call, gast.Raise, gast.Break)
NEEDS_ANALYSIS = True  # DEFINED_IN: names bound before a `try` (see `_pending`)



def _sites(node) -> bool:
    """Whether `node` (a statement or a list) holds a `raise X` or `assert` of this scope."""
    stack = list(node) if isinstance(node, list) else [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Raise) and n.exc is not None or isinstance(n, gast.Assert) or \
                getattr(n, "d2s_reraise", None):
            return True
        if isinstance(n, _SCOPES) or isinstance(n, gast.expr):
            continue
        stack.extend(gast.iter_child_nodes(n))
    return False


class TryExcept(Base):
    def __init__(self, ctx, fn=None):
        super().__init__(ctx)
        self._calls = CallTrees(ctx)  # which calls may reach user code
        self._lookups = False  # the `try` converted now may catch a run-time lookup error
        self._divisions = False  # ... or the ZeroDivisionError of a computed divisor
        if fn is not None:
            self._calls.scopes.append(fn)  # its local names: `activity.locals_of(fn)`

    def _may_fail(self, node) -> bool:
        """Whether expression `node` may fail when the program runs: it calls user code, or
        (in the body of a `try` whose clauses may catch a lookup error: `_lookups`) it reads
        a name, item or attribute, which may hold a value that exists on some paths only
        (`operators.try_except.TryState.take_read_error`)."""
        return self._user_call(node) or self._lookups and _reads_values(node) or (
            self._divisions and try_divisions.divides(node))

    def _user_call(self, node) -> bool:
        """Whether expression `node` holds a call that may run user code."""
        for n in gast.walk(node):
            if not isinstance(n, gast.Call):
                continue
            f = n.func
            if isinstance(f, gast.Attribute) and not isinstance(f.value, gast.Name) and \
                    f.attr in TENSOR_METHODS and self.ctx.receivers.expression(f.value):
                continue  # `(h > 0).all()`: a Tensor method on a computed tensor (not
                # `self.meter.add(v)`: `receivers`)
            if not self._calls._leave_alone(f):
                return True
        return False

    def _call_sites(self, node) -> bool:
        """Whether statement(s) `node` hold a call that may run user code (its scope)."""
        stack = list(node) if isinstance(node, list) else [node]
        while stack:
            n = stack.pop()
            if isinstance(n, _SCOPES):
                continue
            if isinstance(n, gast.expr):
                if self._may_fail(n):
                    return True
                continue
            stack.extend(gast.iter_child_nodes(n))
        return False

    def _needs(self, s) -> bool:
        return _sites(s) or self._call_sites(s)

    def visit_Try(self, node):
        outer_lookups, outer_divisions = self._lookups, self._divisions  # (an inner `try`
        self._lookups = outer_lookups or _may_catch_lookups(node.handlers)  # follows what an
        self._divisions = outer_divisions or try_divisions.may_catch_division(  # enclosing
            node.handlers)  # one catches)
        try:
            node = self.generic_visit(node)  # inner `try` statements first
            if not node.handlers and not (_finally_jumps(node) and _sites(node.body)):
                return node
            handlers = gast.Tuple(elts=[copy.deepcopy(h.type) if h.type is not None else
                                        templates.const(None) for h in node.handlers],
                                  ctx=gast.Load())
            return self._convert(node, handlers, f"{RESERVED}.try_end(state)")
        finally:
            self._lookups, self._divisions = outer_lookups, outer_divisions

    def _convert(self, node, handlers, end):
        if not self._needs(node.body):
            _pass_conversion_errors(node)
            return node
        exits = try_exits(node)  # before the rewrite: every path returns or raises
        code, state = self.ctx.namer.new("exc"), self.ctx.namer.new("try")
        follows = ", True" if self._lookups or self._divisions else ""  # (its reads' errors)
        pre = templates.replace(
            f"code = 0\nstate = {RESERVED}.try_state(lambda: handlers{follows})", code=code,
            state=state, handlers=handlers) + _pending(node)
        node.body = self._block(node.body, code, state, False) or [gast.Pass()]
        dispatch = self._dispatch(node, code, state)
        node.orelse = templates.replace(end, state=state) + dispatch
        for h in node.handlers:
            h.body = templates.replace(end, state=state) + h.body
        node.finalbody = templates.replace(end, state=state) + node.finalbody
        types = gast.Tuple(elts=[copy.deepcopy(h.type) if h.type is not None else
                                 templates.const(None) for h in node.handlers],
                           ctx=gast.Load())
        post = templates.replace(f"{RESERVED}.try_reraise(state, code, types)", state=state,
                                 code=code, types=types)
        post[0].d2s_reraise = (state, code, types)  # an enclosing `try` forwards it instead
        post[0].d2s_exits = exits  # the function's return pass: every path has exited
        if not node.handlers:  # (a jump in `finally` may discard any error: held till then)
            node.handlers = templates.replace(
                f"try:\n    pass\nexcept Exception as error:\n    {end}\n"
                f"    code = {RESERVED}.try_hold(state, error)", state=state, code=code,
                error=self.ctx.namer.new("error"))[0].handlers
        _pass_conversion_errors(node)
        return pre + [node] + post

    # -- the body: raises become error codes, the rest runs only while nothing failed ------

    def _hoist(self, s, code: str, state: str):
        """A statement whose own expression calls user code: (the statements computing that
        value and collecting the errors, the statement using the value), else None."""
        field = {gast.Assign: "value", gast.AugAssign: "value", gast.AnnAssign: "value",
                 gast.Return: "value", gast.If: "test", gast.For: "iter",
                 gast.Expr: "value"}.get(type(s))
        value = getattr(s, field, None) if field else None
        if value is None or not self._may_fail(value):
            return None
        collect = templates.replace(f"code = {RESERVED}.try_collect(state, code)", code=code,
                                    state=state)
        if self._lookups and not isinstance(s, gast.Expr):  # (the value it binds is read)
            tmp = self.ctx.namer.new("tmp")
            collect = templates.replace(f"code = {RESERVED}.try_collect(state, code, tmp)",
                                        code=code, state=state, tmp=tmp)
        if isinstance(s, gast.Expr):
            call = s.value
            if not isinstance(call, gast.Call) or not any(
                    self._user_call(a) for a in call.args + [k.value for k in call.keywords]):
                return [s] + _at(collect, s), None
            # `log.append(helper(x))`: the arguments first; the call only if they did not fail
            pre = []
            for i, a in enumerate(call.args):
                if self._user_call(a):
                    tmp = self.ctx.namer.new("tmp")
                    pre += templates.replace("tmp = value", tmp=tmp, value=a)
                    call.args[i] = templates.name(tmp)
            for k in call.keywords:
                if self._user_call(k.value):
                    tmp = self.ctx.namer.new("tmp")
                    pre += templates.replace("tmp = value", tmp=tmp, value=k.value)
                    k.value = templates.name(tmp)
            return _at(pre + collect, s), s
        if not self._lookups:
            tmp = self.ctx.namer.new("tmp")
        setattr(s, field, templates.name(tmp))
        return _at(templates.replace("tmp = value", tmp=tmp, value=value) + collect, s), s

    def _block(self, stmts: list, code: str, state: str, in_loop: bool) -> list:
        """`stmts` as runs of statements: the first runs as it is, each later one (after a
        statement that may have failed) only while nothing failed, one flat guard each (a
        guard nested around the rest per statement made the depth, and each `if`'s tracing,
        grow with the body: `_joined`)."""
        runs: list = [[]]
        for s in stmts:
            if isinstance(s, gast.Assert):
                msg = s.msg if s.msg is not None else None
                s = templates.replace("if not test:\n    raise AssertionError(msg)",
                                      test=s.test, msg=msg)[0] if msg is not None else \
                    templates.replace("if not test:\n    raise AssertionError",
                                      test=s.test)[0]
            if isinstance(s, gast.Raise) and s.exc is not None:
                cause = s.cause if s.cause is not None else templates.const(None)
                runs[-1] += _at(templates.replace(  # (the `raise`'s line: a bare `raise`
                    f"code = {RESERVED}.try_raise(state, exc, cause)",  # names it again)
                    code=code, state=state, exc=s.exc, cause=cause), s)
                if in_loop:
                    runs[-1].append(gast.Break())
                return self._joined(runs, code, state, in_loop)  # the rest is unreachable
            if not self._needs(s):
                runs[-1].append(s)
                continue
            if isinstance(s, gast.While) and self._may_fail(s.test):
                runs[-1] += self._while_test(s, code, state, in_loop)
                runs.append([])
                continue
            done, more = self._statement(s, code, state, in_loop, runs)
            runs[-1] += done
            if more:
                runs.append([])
        return self._joined(runs, code, state, in_loop)

    def _statement(self, s, code: str, state: str, in_loop: bool, runs: list):
        """Statement `s` that may fail: (what goes at the end of the run, whether the next
        statement starts a new one); a statement whose value is computed first (`_hoist`)
        runs in a guard of its own after it."""
        inner = getattr(s, "d2s_reraise", None)
        if inner is not None:  # an inner `try`'s uncaught error: this `try` gets it
            return templates.replace(
                f"code = {RESERVED}.try_forward(state, code, inner, inner_code, types)",
                code=code, state=state, inner=inner[0], inner_code=inner[1],
                types=copy.deepcopy(inner[2])), True
        hoisted = self._hoist(s, code, state)
        if hoisted is not None:
            runs[-1] += hoisted[0]
            s = hoisted[1]
        again = s is not None and self._needs(s)
        if again:
            self._inside(s, code, state, in_loop)
        if isinstance(s, gast.Expr):  # the call itself may fail: collect again
            s = [s] + templates.replace(f"code = {RESERVED}.try_collect(state, code)",
                                        code=code, state=state)
        if hoisted is None:
            out = [s]
            if self._call_sites(s):  # (a `while` test's call, ...)
                out += templates.replace(f"code = {RESERVED}.try_collect(state, code)",
                                         code=code, state=state)
            return out, True
        if s is None:
            return [], True
        # it runs only where computing its value did not fail (a `return` too: an `except`
        # may fall through); the value is read in the same block
        return templates.replace(f"if {RESERVED}.try_guard(state, code):\n    done",
                                 code=code, state=state,
                                 done=s if isinstance(s, list) else [s]), True

    def _joined(self, runs: list, code: str, state: str, in_loop: bool) -> list:
        """The runs of `_block`, each after the first guarded: `if _d2s.try_guard(...):`
        (in a loop, `if _d2s.try_failed(code): break` before it, also at the body's end)."""
        out = list(runs[0])
        later = [r for r in runs[1:] if r]
        if in_loop and len(runs) > 1 and not runs[-1]:
            later.append([])  # (no further iteration after a failure at the end)
        for run in later:
            if in_loop:
                out += templates.replace(f"if {RESERVED}.try_failed(code):\n    break",
                                         code=code) + run
            else:
                out += templates.replace(f"if {RESERVED}.try_guard(state, code):\n    run",
                                         code=code, state=state, run=run)
        return out

    def _while_test(self, s, code: str, state: str, in_loop: bool) -> list:
        """`while test:` whose test calls user code that may fail when the program runs: the
        test is computed (and its errors collected) before the loop, again at the end of
        the body and before each `continue`; the loop goes on only while nothing failed,
        and its `else` runs only where nothing failed (eager leaves by the exception)."""
        w = self.ctx.namer.new("test")

        def compute():
            test = copy.deepcopy(s.test)
            mark_test(test)
            return _at(templates.replace(
                f"w = {RESERVED}.truth(test)\ncode = {RESERVED}.try_collect(state, code)",
                w=w, test=test, code=code, state=state), s)

        pre = compute()
        s.body = self._block(s.body, code, state, True) or [gast.Pass()]
        _before_continue(s.body, compute)
        s.body = s.body + compute()
        if s.orelse:
            s.orelse = self._guard(s.orelse, code, state, in_loop)
        s.test = templates.replace_as_expression(f"{RESERVED}.try_ok(code) and w", code=code,
                                                 w=w)
        mark_test(s.test)
        return pre + [s]

    def _guard(self, rest, code, state, in_loop) -> list:
        """`rest` runs only while nothing failed (a loop is left with `break`)."""
        rest = self._block(rest, code, state, in_loop)
        if in_loop:  # (also at the end of the body: no further iteration)
            return templates.replace(f"if {RESERVED}.try_failed(code):\n    break",
                                     code=code) + rest
        if not rest:
            return []
        return templates.replace(f"if {RESERVED}.try_ok(code):\n    rest", code=code,
                                 rest=rest)

    def _inside(self, s, code: str, state: str, in_loop: bool) -> None:
        if isinstance(s, (gast.For, gast.While, gast.AsyncFor)):
            s.body = self._block(s.body, code, state, True) or [gast.Pass()]
            s.orelse = self._block(s.orelse, code, state, in_loop)
            return
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                setattr(s, field, self._block(block, code, state, in_loop) or [gast.Pass()])
        for h in getattr(s, "handlers", []):
            h.body = self._block(h.body, code, state, in_loop) or [gast.Pass()]
        for case in getattr(s, "cases", []):
            case.body = self._block(case.body, code, state, in_loop) or [gast.Pass()]

    # -- the dispatch when the program runs -------------------------------------------------

    def _dispatch(self, node, code: str, state: str) -> list:
        chain: list = [gast.Pass()]
        for h in reversed(node.handlers):
            types = h.type if h.type is not None else templates.const(None)
            error = templates.replace_as_expression(
                f"{RESERVED}.try_error(state, code, types)", state=state, code=code,
                types=copy.deepcopy(types))
            body = clause_body(h.body, state, code, types)
            name = None if h.name is None else \
                h.name.id if isinstance(h.name, gast.Name) else h.name
            if name is not None and _reads(body, name):  # (an unread name: nothing to bind,
                # whichever run-time error the clause catches; Python unbinds it after)
                body = templates.replace("name = error", name=name,
                                         error=copy.deepcopy(error)) + body
            chain = templates.replace(
                f"if {RESERVED}.try_caught(state, code, types):\n    body\nelse:\n    rest",
                state=state, code=code, types=copy.deepcopy(types), body=body, rest=chain)
        orelse = node.orelse or [gast.Pass()]
        return templates.replace(f"if {RESERVED}.try_ok(code):\n    orelse\nelse:\n    rest",
                                 code=code, orelse=orelse, rest=chain)


# clauses that cannot catch what a read check raises (`KeyError`, `IndexError`,
# `AttributeError`, `UnboundLocalError`, `NameError`: `operators.try_except.LOOKUP_ERRORS`)
_NOT_LOOKUPS = frozenset((
    "ValueError", "TypeError", "RuntimeError", "AssertionError", "ZeroDivisionError",
    "ArithmeticError", "OverflowError", "FloatingPointError", "StopIteration",
    "NotImplementedError", "OSError", "ImportError", "RecursionError", "MemoryError",
    "KeyboardInterrupt", "SystemExit", "UnicodeError", "ConversionError"))


def _may_catch_lookups(handlers) -> bool:
    """Whether one of the `except` clauses may catch a lookup error (a bare `except`, a
    class other than the known others, a name the converter cannot see through)."""
    for h in handlers:
        types = h.type.elts if isinstance(h.type, gast.Tuple) else [h.type]
        for t in types:
            name = t.attr if isinstance(t, gast.Attribute) else getattr(t, "id", None)
            if name not in _NOT_LOOKUPS:
                return True
    return False


def _reads_values(node) -> bool:
    """Whether expression `node` reads a name, item or attribute (not only code that the
    converters wrote: `_d2s.try_ok(code)`)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                isinstance(n.func.value, gast.Name) and n.func.value.id == RESERVED:
            continue
        if isinstance(n, (gast.Name, gast.Subscript, gast.Attribute)) and \
                isinstance(n.ctx, gast.Load):
            return True
        if isinstance(n, _SCOPES):
            continue
        stack.extend(gast.iter_child_nodes(n))
    return False


def _finally_jumps(node) -> bool:
    """Whether the `finally` of `node` may `return`, `break` or `continue`: in Python that
    discards an error the `try` body raised (the jump's value or loop goes on)."""
    return bool(node.finalbody) and (
        jumps.contains(node.finalbody, gast.Return, into_loops=True) or
        jumps.contains(node.finalbody, (gast.Break, gast.Continue), into_loops=False))


def _before_continue(stmts: list, make) -> None:
    """`make()`'s statements before each `continue` of this loop in `stmts`."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, gast.Continue):
            new = make()
            stmts[i:i] = new
            i += len(new) + 1
            continue
        if isinstance(s, (gast.For, gast.While, gast.AsyncFor)):
            _before_continue(s.orelse, make)  # (a nested loop's `continue` is its own)
        elif not isinstance(s, _SCOPES):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(s, field, None)
                if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                    _before_continue(block, make)
            for h in getattr(s, "handlers", []):
                _before_continue(h.body, make)
            for case in getattr(s, "cases", []):
                _before_continue(case.body, make)
        i += 1


def _at(stmts: list, s) -> list:
    """`stmts` (made for statement `s`) report `s`'s line, not the enclosing `try`'s."""
    src = anno.getanno(s, anno.ORIGIN, None)
    for new in stmts:
        origin.inherit(new, src)
    return stmts


def _pass_conversion_errors(node) -> None:
    """`except _d2s.ConversionError: raise` first: d2s's own errors while the body is traced
    (a construct that cannot be a graph) are not the user's, eager code never raises them,
    so no `except ValueError` / `except Exception` clause of the user may take them (it would
    trace its body in place of the `try` body for every input)."""
    handler = templates.replace(
        f"try:\n    pass\nexcept {RESERVED}.ConversionError:\n    raise")[0].handlers[0]
    node.handlers.insert(0, handler)


def _reads(stmts: list, name: str) -> bool:
    """Whether `stmts` read `name` (also in nested functions: closures)."""
    return any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Store)
               for s in stmts for n in gast.walk(s))


def _pending(node) -> list:
    """`name = _d2s.Pending('name')` before the `try` for each name the body binds, that is
    unbound before it and that every `except` clause binds: after the `try` it is bound on
    every path that goes on (the body ran to its end, or a clause caught the error; an error
    no clause catches is raised again), so the body's `if _d2s.try_guard(...)` may leave it
    unbound on the failing path (zeros stand in there, never read)."""
    defined = anno.getanno(node, anno.DEFINED_IN, frozenset())
    names, others = _stored(node.body), _stored(node.orelse + [h for h in node.handlers])
    out, after = [], _read_after(node)
    for name in sorted(n for n in names | others if n not in defined):
        every = all(any(_binds(s, name) for s in h.body) for h in node.handlers) and (
            name in names or any(_binds(s, name) for s in node.orelse))  # (else: the run's
        # dispatch hands on a name only `else` and the clauses bind, unbound before it)
        # the others start unbound (`Undefined`): the body's guards may leave them unbound
        # when the program runs, and later code may hand them on as state; one that only
        # the body reads is `Guarded` (zeros where the body's guards skip it)
        kind = "Pending" if every else "Undefined" if name in after else "Guarded"
        out += templates.replace(f"name = {RESERVED}.{kind}(label)", name=name,
                                 label=templates.const(name))
    return out


def _stored(stmts: list) -> set:
    names, stack = set(), list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            names.add(n.id)
        if not isinstance(n, _SCOPES):
            stack.extend(gast.iter_child_nodes(n))
    return names


def _read_after(node) -> set:
    """The names read after the body of `try` `node`: by a clause, `finally`, after it."""
    live = set(anno.getanno(node, anno.LIVE_OUT, None) or ())
    return live | {n.id for part in [h.body for h in node.handlers] + [node.finalbody]
                   for s in part for n in gast.walk(s) if isinstance(n, gast.Name)}


def _wrap_function(conv: TryExcept, fn) -> None:
    """The conversion for a call inside a `try` body (`ctx.errors`): the whole body is a
    `try` body whose errors go to the caller (`_d2s.fn_exit`, before the return)."""
    code, state = conv.ctx.namer.new("exc"), conv.ctx.namer.new("try")
    exits = always_exits(fn.body)
    # the caller's clauses may catch a lookup error of its reads (not in a function with a
    # `try` of its own: its converted clauses are not traced through again)
    conv._lookups = not any(isinstance(n, gast.Try) for n in gast.walk(fn))
    body = conv._block(fn.body, code, state, False) or [gast.Pass()]
    follows = "True" if conv._lookups else ""
    conv._lookups = False
    fn.body = templates.replace(f"code = 0\nstate = {RESERVED}.fn_state({follows})",
                                code=code, state=state) + body
    end = templates.replace(f"{RESERVED}.fn_exit(state, code)", state=state, code=code)
    if jumps.count_returns(fn.body):
        fn.d2s_fn_exit = (end, exits)  # the return pass puts it before the one `return`
    else:
        fn.body += end


DISCARDS_RETURN = "d2s_discards_return"  # a `pass` marking where a pending return ends


def mark_finally_jumps(node) -> None:
    """A `break` or `continue` in a `finally` clause whose `try` returns: in Python the jump
    discards the pending return (`try: return a` / `finally: continue`). Before each such
    jump goes a `pass` marked `DISCARDS_RETURN`, which the return pass makes `flag = False`
    (a `return` in the `finally` overrides the pending one by itself)."""
    for t in gast.walk(node):
        if not (isinstance(t, gast.Try) and t.finalbody and jumps.contains(
                t.body + [h for handler in t.handlers for h in handler.body] + t.orelse,
                gast.Return, into_loops=True)):
            continue
        t.finalbody = _before_jumps(t.finalbody)


def _before_jumps(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue)):
            marker = gast.Pass()
            setattr(marker, DISCARDS_RETURN, True)
            out += [gast.copy_location(marker, s), s]
            continue
        if not isinstance(s, (gast.For, gast.While, *_SCOPES)):  # (their own jumps)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, _before_jumps(getattr(s, field)))
            for handler in getattr(s, "handlers", ()):
                handler.body = _before_jumps(handler.body)
        elif isinstance(s, (gast.For, gast.While)):
            s.orelse = _before_jumps(s.orelse)  # (an else clause jumps for the outer loop)
        out.append(s)
    return out


def transform(node, ctx):
    mark_finally_jumps(node)
    fn = node if isinstance(node, gast.FunctionDef) else None
    conv = TryExcept(ctx, fn)
    node = conv.visit(node)
    if getattr(ctx, "errors", False) and fn is not None:
        # functions defined inside it too (they run while the `try` is open)
        inner = [n for n in gast.walk(node) if isinstance(n, gast.FunctionDef)
                 and n is not node and not anno.getanno(n, anno.OPAQUE, False)]
        for f in inner:
            _wrap_function(conv, f)
        _wrap_function(conv, node)
    return node
