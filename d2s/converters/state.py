"""What control-flow converters share: choosing state names and writing the functions that
carry them.

A branch or loop body becomes a local function that takes the names it changes ("state") and
returns them, so the operator can run it as Python or trace it into a graph block. State names
may be plain names (`y`) or attributes of Python objects (`self.count`); an attribute travels
as a parameter with a fresh name and is stored back on the object at the top of the function.
"""
from __future__ import annotations

import gast

from ..pyct import activity, anno, definedness, liveness, templates
from ..pyct.naming import RESERVED
from ..pyct.qnames import QName, is_composite, root_of


class State:
    """The ordered state names of one construct, and how they appear in generated code."""

    def __init__(self, names: list[str], namer, defined: frozenset | None = None,
                 cells: frozenset = frozenset()):
        self.names = names
        # A name that a closure of the user's function reads (`cells`) is not shadowed by a
        # parameter: the function declares it nonlocal and stores the value passed in, so the
        # closure sees every update, as it would in the user's code.
        self.cells = [n for n in names if n in cells]
        self.params = [n if not is_composite(n) and n not in cells else
                       namer.new("_".join((root_of(n),) + QName(n).attrs)) for n in names]
        # Names not bound before the construct are not passed in (a branch binding them
        # creates them); see `undefined_in`.
        self.passed = [i for i, n in enumerate(names) if defined is None or is_composite(n)
                       or n in defined]

    def __bool__(self):
        return bool(self.names)

    def prelude(self) -> list:
        """`self.count = _self_count_1` for attribute state (first lines of each function)."""
        out = []
        for name, param in zip(self.names, self.params):
            if name != param:
                out += templates.replace("target = param", target=templates.parse_expr(name),
                                         param=param)
        return out

    def values(self):
        """The expression giving the state's current values: `y`, `(y, self.count)`, `()`."""
        elts = [templates.parse_expr(n) for n in self.names]
        if len(elts) == 1:
            return elts[0]
        return gast.Tuple(elts=elts, ctx=gast.Load())

    def args(self):
        """The tuple passed to an operator: attributes are read with `_d2s.attr` (the object
        may not have the attribute yet)."""
        elts = []
        for n in (self.names[i] for i in self.passed):
            if is_composite(n):
                q = QName(n)
                elts.append(templates.replace_as_expression(
                    f"{RESERVED}.attr(obj, name)", obj=templates.parse_expr(q.parent),
                    name=templates.const(q.attrs[-1])))
            else:
                elts.append(templates.name(n))
        return gast.Tuple(elts=elts, ctx=gast.Load())

    def names_const(self):
        return templates.const(tuple(self.names))

    def assign(self, value) -> list:
        """`y = value` / `y, z = value`, or the bare call when there is no state."""
        if not self.names:
            return [gast.Expr(value=value)]
        return templates.replace("target = value", target=self.values(), value=value)

    def function(self, name: str, body: list, *, first_params=(), returns=True) -> gast.stmt:
        """`def name(first_params..., state...): prelude; body; return state`. A state name
        not passed in and not bound on every path of `body` starts as `Undefined`."""
        tail = templates.replace("return values", values=self.values()) if returns else []
        decl = [gast.Nonlocal(names=list(self.cells))] if self.cells else []
        missing = []
        unpassed = [n for i, n in enumerate(self.names) if i not in self.passed]
        if returns and unpassed:  # (what `body` surely binds is asked only then)
            bound = definedness.surely_bound(body)
            missing = [n for n in unpassed if n not in bound]
        fn = templates.replace("def name(params):\n    body", name=name,
                               params=list(first_params) + [self.params[i]
                                                            for i in self.passed],
                               body=decl + undefined_inits(missing, frozenset())
                               + self.prelude() + body + tail)[0]
        anno.setanno(fn, anno.GENERATED, True)
        return fn


def choose(candidates: set, live: set, defined: frozenset | None = None) -> list[str]:
    """State = the candidates that are live, plus attribute/subscript state whose object is
    not itself rebound here. Sorted, so generated code is stable."""
    out = []
    for n in sorted(candidates):
        if is_composite(n):
            if root_of(n) not in candidates:
                out.append(n)
        elif n in live:
            out.append(n)
    return out


def undefined_inits(names: list[str], defined: frozenset) -> list:
    """`y = _d2s.Undefined('y')` for state names not bound on any path before here."""
    out = []
    for n in names:
        if not is_composite(n) and n not in defined:
            out += templates.replace(f"name = {RESERVED}.Undefined(label)", name=n,
                                     label=templates.const(n))
    return out


def live_in(stmts: list, live_out: frozenset) -> frozenset:
    """Names live at the start of `stmts` (re-analysed on the current, converted code)."""
    return liveness.live_in(stmts, live_out)


class ScopeTracker:
    """Mixin for converters: the state a construct may carry is limited to the enclosing
    function's local names (its `LOCALS`), minus its global/nonlocal declarations
    (`SCOPE_DECL`). Only local names can be state: a global or closure object mutated in
    place (`CACHE[k] = v`) stays what it is, and declared names are handled by the generated
    functions declaring them too (see `transpile._finalize`). A function a converter made
    (`GENERATED`) shares the scope of the user function it came from."""

    def _user_scope(self) -> tuple:
        """(local names, declarations) of the innermost function, generated bodies counting
        with the functions they sit in."""
        local: frozenset = frozenset()
        for fn in reversed(self.scopes):
            local = local | activity.locals_of(fn)
            if not anno.getanno(fn, anno.GENERATED, False):
                return local, anno.getanno(fn, anno.SCOPE_DECL, {})
        return local, {}

    def state_candidates(self, names: set) -> set:
        local, decls = self._user_scope()
        return {n for n in names - set(decls) if n in local or (
            is_composite(n) and root_of(n) in local)}

    def visit_FunctionDef(self, node):
        return self.visit_in_scope(node)
