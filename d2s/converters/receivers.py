"""Which local names hold library values: a Tensor method name called on them is a Tensor's.

`meter.add(v)` and `x.add(v)` read alike; converted code leaves the second alone (a Tensor
method: nothing to convert, and `.code` stays readable) and routes the first through
`_d2s.call` like any user call (its effects are replayed, what it reads is guarded).
`call_trees` tells them apart here: a local name is a library value when every binding of
it in the function (nested functions and lambdas included: one flat look) is an expression
of library values,

    h = rt.matmul(x, w) + b      h.sum()    left alone where x, w and b are
    s = h.sum(axis=-1)           s.max()    (through h) library values
    m = Meter()                  m.add(v)   `_d2s.call(m.add)(v)`

where a library value is a constant, a name bound only to library values, a module of the
runtime, NumPy or the standard library, or what a function or class of those (or a builtin,
or a method of a library value) returns given library values only: it never returns user
code's objects. A parameter is one when its annotation is a library class
(`x: rt.Tensor`), or when `assume` holds: the converted function then lists the parameters
it assumed (`assumed`), and the caller checks them each call (`transpile.convert`), taking
the conversion that assumes nothing where one holds a user object.
"""
from __future__ import annotations

import builtins
import types

import gast

from ..call_policy import ignored_module
from ..pyct.walk import NAME_FIELDS, push_children

_PLAIN_GLOBALS = (int, float, bool, complex, str, bytes, type(None))
# the packages whose functions and module attributes give library values given library
# values (not the whole standard library: `sys.modules[...]`, `copy.copy(m)`, `pickle.load`)
_VALUE_ROOTS = frozenset(("runtime", "numpy", "math", "builtins"))
# builtins that reach user objects without being handed one
_REACHING = frozenset((globals, locals, vars, eval, exec, __import__))
_INT = gast.Constant(0, None)
_NOTHING = frozenset()
_UNSET = object()
_FILLING = frozenset(("append", "insert", "extend"))
_USES = frozenset((gast.Call, gast.Subscript))
_MATCH_NAMES = {c: field for c, field in ((getattr(gast, "MatchAs", None), "name"),
                                          (getattr(gast, "MatchStar", None), "name"),
                                          (getattr(gast, "MatchMapping", None), "rest"))
                if c is not None}
_BINDINGS = frozenset((gast.Assign, gast.AnnAssign, gast.NamedExpr, gast.AugAssign, gast.For,
                       gast.FunctionDef, gast.ClassDef, gast.AsyncFunctionDef, gast.Global,
                       gast.Nonlocal, gast.Import, gast.ImportFrom, *_MATCH_NAMES))


def library_type(cls) -> bool:
    """Whether instances of `cls` are library values (its methods are never user code)."""
    return ignored_module(getattr(cls, "__module__", None))


class Receivers:
    """The library-value judgement of the local names of one function (`fn`, the parsed
    FunctionDef before any pass), made on the first question and remembered."""

    def __init__(self, fn, namespace, assume: bool, owner: str | None = None,
                 lines: list | None = None):
        self._namespace = namespace
        self._lines = lines  # the lines of `fn`'s file (the text of a binding: `_text`)
        self._assume = assume
        self._bindings: dict = {}  # name -> the expressions bound to it (None: not judged)
        self._params: dict = {}  # parameter name -> True (library annotation) / None
        self._known: dict = {}  # name -> frozenset of parameters it relies on, or None
        self._order: list = []  # the names in `_known`, in the order they were judged
        self._escaped: set = set()  # names read other than as `_use` reads them
        self.assumed: set = set()  # the parameters the names left alone rely on
        self._globals: dict = {}  # global name -> whether it is a library value
        self._attributes: dict = {}  # (module name, attribute) -> the attribute's value
        self._collect(fn)
        if owner is not None:  # (`self`: a user object, whose `self.fc(x)` may give anything)
            self._unknown(owner)
        for name in (*self._params, *self._bindings):  # (now: the passes rewrite the
            self._judge(name)  # expressions bound; and the tree is not kept)
        self._bindings = dict.fromkeys(self._bindings)  # (judged: the names only)

    def library(self, name: str) -> bool:
        """Whether local `name` always holds a library value (see the module doc); its
        reliance on assumed parameters is recorded in `assumed`."""
        return self._relied(self._known.get(name))

    def expression(self, node) -> bool:
        """Whether expression `node` (`(h > 0)`, `self.meter`) is a library value."""
        return self._relied(self._value(node))

    def _relied(self, found) -> bool:
        if found is None:
            return False
        self.assumed.update(found)
        return True

    # ---- the bindings -------------------------------------------------------------------------
    def _collect(self, fn) -> None:
        args = fn.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self._params[a.id] = True if self._annotated(a) else None
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self._unknown(a.id)
        handled = {id(a) for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                   args.vararg, args.kwarg)}
        stack = [fn]  # (a node is looked at before its children: a binding marks its
        pop, push = stack.pop, stack.append  # target handled before the walk meets it)
        while stack:
            node = pop()
            c = node.__class__
            if c is gast.Name:
                if id(node) in handled:
                    continue
                if node.ctx.__class__ is gast.Load:
                    self._escaped.add(node.id)  # (a list it names may be filled elsewhere)
                else:
                    self._unknown(node.id)  # a `for` target, `as`, a parameter of a nested
                    # function, an unpacked tuple, a `del`
                continue
            if c in _USES:
                self._use(node, handled)
            elif c in _BINDINGS and node is not fn:
                self._binding(node, handled)
            push_children(node, NAME_FIELDS[c], push)

    def _use(self, node, handled: set) -> None:
        """A list filled (`parts.append(v)`: v is bound to it too), read (`parts[0]`) or
        handed to the library (`len(parts)`, `rt.concat(parts)`), not let out."""
        if node.__class__ is gast.Subscript:
            if node.value.__class__ is gast.Name:
                handled.add(id(node.value))
            return
        f = node.func
        if f.__class__ is gast.Attribute and f.attr in _FILLING and \
                f.value.__class__ is not gast.Name:
            self._unknown_root(f.value)  # (`t[0].append(v)`: what `t` holds is not judged)
        elif f.__class__ is gast.Attribute and f.value.__class__ is gast.Name and \
                f.attr in _FILLING:
            handled.add(id(f.value))
            for a in node.args:
                self._fill(f.value.id, a.value if a.__class__ is gast.Starred else a)
        else:
            callee = self._resolve(f)
            if callee is not None and _library_callable(callee):
                handled.update(id(a) for a in node.args if a.__class__ is gast.Name)

    def _binding(self, node, handled: set) -> None:
        c = node.__class__
        if c is gast.Assign:
            for t in node.targets:
                if t.__class__ is gast.Name:
                    self._bind(t, node.value, handled)
                elif t.__class__ is gast.Subscript and t.value.__class__ is gast.Name:
                    self._fill(t.value.id, node.value)  # (`parts[i] = v`)
                elif t.__class__ is gast.Subscript:
                    self._unknown_root(t.value)  # (`t[0][i] = v`)
        elif c in (gast.AnnAssign, gast.NamedExpr) and node.target.__class__ is gast.Name \
                and node.value is not None:
            self._bind(node.target, node.value, handled)
        elif c is gast.AugAssign and node.target.__class__ is gast.Subscript:
            self._unknown_root(node.target)  # (`parts[0] += v`)
        elif c is gast.AugAssign and node.target.__class__ is gast.Name:
            target = node.target
            self._bind(target, gast.BinOp(gast.Name(target.id, gast.Load(), None, None),
                                          node.op, node.value), handled)
        elif c is gast.For and node.target.__class__ is gast.Name and \
                node.iter.__class__ is gast.Call and self._resolve(node.iter.func) is range:
            self._bind(node.target, _INT, handled)  # (`for i in range(n)`: ints)
        elif c in (gast.FunctionDef, gast.ClassDef, gast.AsyncFunctionDef):
            self._unknown(node.name)
        elif c in (gast.Global, gast.Nonlocal):
            for name in node.names:
                self._unknown(name)
        elif c in (gast.Import, gast.ImportFrom):
            for alias in node.names:
                self._unknown((alias.asname or alias.name).split(".")[0])
        elif c in _MATCH_NAMES and getattr(node, _MATCH_NAMES[c]) is not None:
            self._unknown(getattr(node, _MATCH_NAMES[c]))  # (`case Meter() as m`)

    def _bind(self, target, value, handled: set) -> None:
        handled.add(id(target))
        found = self._bindings.setdefault(target.id, [])
        if found is not None:
            found.append(value)

    def _fill(self, name: str, value) -> None:
        found = self._bindings.setdefault(name, [])
        if found is not None:
            found.append(value)

    def _unknown_root(self, node) -> None:
        while node.__class__ in (gast.Attribute, gast.Subscript):
            node = node.value
        if node.__class__ is gast.Name:
            self._unknown(node.id)

    def _unknown(self, name: str) -> None:
        self._bindings[name] = None

    def _annotated(self, arg) -> bool:
        kind = self._resolve(arg.annotation) if arg.annotation is not None else None
        return isinstance(kind, type) and library_type(kind)

    # ---- the judgement ------------------------------------------------------------------------
    def _judge(self, name: str):
        """frozenset of the parameters `name` relies on, or None where it may hold user code's
        object. (A name met again while judged relies on nothing more: its first binding that
        runs is not one that reads it.)"""
        if name in self._known:
            return self._known[name]
        mark = len(self._order)
        self._known[name] = frozenset()
        self._order.append(name)
        found = self._judge_bindings(name)
        for judged in self._order[mark + 1:]:  # (judged while `name` was taken as relying on
            del self._known[judged]  # nothing: judged again when asked)
        del self._order[mark + 1:]
        self._known[name] = found
        return found

    def _judge_bindings(self, name: str):
        values = self._bindings.get(name, [])
        if values is None:
            return None
        relied: set = set()
        if name in self._params:
            if self._params[name] is None:
                if not self._assume:
                    return None
                relied.add(name)
        elif name not in self._bindings:
            return None  # (not a local name)
        seen = set()  # the texts of the values judged (an unrolled model binds `h` to the
        for value in values:  # same expression thousands of times: judged once)
            if value.__class__ is gast.List:  # (filled where it is named only: `_use`)
                value = None if name in self._escaped else gast.Tuple(value.elts, gast.Load())
            else:
                text = self._text(value)
                if text is not None:
                    if text in seen:
                        continue
                    seen.add(text)
            found = None if value is None else self._value(value)
            if found is None:
                return None
            relied |= found
        return frozenset(relied)

    def _text(self, node) -> str | None:
        """The source text of expression `node` where it is on one line of the file (the same
        text is the same expression: the judgement is of names, flat), else None."""
        at = node.__dict__
        lineno = at.get("lineno")
        lines = self._lines
        if lineno is None or at.get("end_lineno") != lineno or lines is None or \
                not 0 < lineno <= len(lines):
            return None
        line = lines[lineno - 1]
        return line[at["col_offset"]:at["end_col_offset"]] if line.isascii() else None

    def _value(self, node):
        """The parameters library value `node` relies on, or None (see the module doc)."""
        c = node.__class__
        if c is gast.Constant:
            return _NOTHING
        if c is gast.Name:
            if node.id in self._bindings or node.id in self._params:
                known = self._known.get(node.id)
                return known if known is not None or node.id in self._known else \
                    self._judge(node.id)
            return _NOTHING if self._library_global(node.id) else None
        if c is gast.Attribute or c is gast.Subscript:
            return self._value(node.value)
        if c is gast.Call:
            return self._call(node)
        if c is gast.BinOp:
            return self._all((node.left, node.right))
        if c in (gast.Tuple, gast.List):  # (a list display bound to a name: `_judge_bindings`)
            return self._all([e.value if e.__class__ is gast.Starred else e for e in node.elts])
        if c is gast.UnaryOp:
            return self._value(node.operand)
        if c is gast.Compare:
            return self._all((node.left, *node.comparators))
        if c is gast.BoolOp:
            return self._all(node.values)
        if c is gast.IfExp:
            return self._all((node.test, node.body, node.orelse))
        return None

    def _call(self, node):
        f = node.func
        callee = self._resolve(f)
        if callee is not None and _library_callable(callee):
            relied = _NOTHING
        elif f.__class__ is gast.Attribute:
            relied = self._value(f.value)
            if relied is None:
                return None
        else:
            return None
        rest = self._all([a.value if a.__class__ is gast.Starred else a for a in node.args])
        if rest is None or node.keywords and \
                (rest := self._all([k.value for k in node.keywords], rest)) is None:
            return None
        return relied | rest if relied and rest else relied or rest

    def _all(self, nodes, relied=frozenset()):
        for n in nodes:
            found = self._value(n)
            if found is None:
                return None
            if found:
                relied = relied | found
        return relied

    def _library_global(self, name: str) -> bool:
        known = self._globals.get(name)
        if known is None:
            value = self._resolve(gast.Name(name, gast.Load(), None, None))
            known = self._globals[name] = isinstance(value, _PLAIN_GLOBALS) or \
                isinstance(value, types.ModuleType) and _value_module(value.__name__)
        return known

    def _resolve(self, node):
        """What a global dotted name (`rt.Tensor`, `np.sum`) is now; None elsewhere."""
        c = node.__class__
        if c is gast.Name:
            if node.id in self._bindings or node.id in self._params:
                return None
            if node.id in self._namespace:
                return self._namespace[node.id]
            return getattr(builtins, node.id, None)
        if c is gast.Attribute:
            base = self._resolve(node.value)
            if isinstance(base, types.ModuleType) and _value_module(base.__name__):
                key = (base.__name__, node.attr)  # (a module's attribute: asked once)
                found = self._attributes.get(key, _UNSET)
                if found is _UNSET:
                    found = self._attributes[key] = getattr(base, node.attr, None)
                return found
        return None


def _value_module(name: str | None) -> bool:
    return bool(name) and name.split(".")[0] in _VALUE_ROOTS


def _library_callable(obj) -> bool:
    if isinstance(obj, type):
        return library_type(obj)
    if isinstance(obj, (types.BuiltinFunctionType, types.FunctionType)):
        return obj not in _REACHING and _value_module(getattr(obj, "__module__", None)
                                                      or "builtins")
    return False
