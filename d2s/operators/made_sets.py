"""Sets made by converted code, which may hold values the converted code computed.

Such a value is a graph value while tracing and compares by identity, so Python's set algebra
of a set holding one (`seen & KNOWN`) would give the trace's answer, silently. Where the
function shows that an operand may be a set, the converters hand it to `_d2s.set_op`
(`set_algebra`); where it does not (a helper's parameter, `self.a & self.b`, a set held in
a dict or returned by a helper, `sorted(s1 ^ s2)`), Python's own operator runs. So every set
converted code makes (`set()`, `frozenset()`, a set display or comprehension, and what
algebra of them gives) is a `MadeSet` / `MadeFrozenSet`: each operator and comparing method
of it (reflected ones too: Python tries a subclass's `__rand__` before a plain set's
`__and__`) refuses, at the user's line, what `set_algebra` refuses, and is `set`'s own
otherwise; a frozen one holding a computed value refuses its hash (a set of sets, a dict
key). What leaves the call (returned, stored where the caller sees it) is a plain `set` /
`frozenset` again (`plain`), and `type(s)` in converted code is `set` (`type_`).

    seen = set()              ->   seen = _d2s.set_()          (a MadeSet)
    {(0, 1), p}               ->   _d2s.made_set({(0, 1), p})
"""
from __future__ import annotations

import builtins
import types
from collections.abc import Set as AbstractSet

from . import set_algebra
from .set_algebra import READING_METHODS, check_items, set_method
from .traced_keys import check_unique

# operator method -> its text in messages (`|` is never refused: a union keeps every item)
_OPERATORS = {"__and__": "&", "__rand__": "&", "__sub__": "-", "__rsub__": "-",
              "__xor__": "^", "__rxor__": "^", "__or__": "|", "__ror__": "|",
              "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==",
              "__ne__": "!="}
_IN_PLACE = {"__iand__": "&=", "__isub__": "-=", "__ixor__": "^="}
_KEEPING = ("union", "copy")  # (methods whose result holds what the set holds)
_GIVING = ("intersection", "difference", "symmetric_difference")  # (give a new set)


def _operator(base: type, name: str, op: str):
    method = getattr(base, name)

    def run(self, other):
        if op != "|" and isinstance(other, AbstractSet):
            check_items(f"`{op}`", op, self, other)
        return made(method(self, other))

    run.__name__ = name
    return run


def _reading(base: type, name: str):
    def run(self, *args, **kwargs):
        out = set_method(getattr(base, name).__get__(self))(*args, **kwargs)
        return made(out) if name in _GIVING else out  # (not an item `pop` gives)

    run.__name__ = name
    return run


def _keeping(base: type, name: str):
    method = getattr(base, name)

    def run(self, *args):
        return made(method(self, *args))

    run.__name__ = name
    return run


def _text(self) -> str:
    check_unique(self, "the text")  # (`Variable(%t2: i64[])` is no item eager shows)
    return repr(builtins.frozenset(self) if isinstance(self, frozenset) else builtins.set(self))


def _methods(base: type) -> dict:
    """The methods a made set overrides of `base` (`set` or `frozenset`)."""
    out = {name: _operator(base, name, op) for name, op in _OPERATORS.items()}
    out.update((name, _reading(base, name)) for name in READING_METHODS if hasattr(base, name))
    out.update((name, _keeping(base, name)) for name in _KEEPING)
    out.update(__slots__=(), __repr__=_text, __module__=__name__,
               __class__=property(lambda self: base))  # (`s.__class__`: as eager's)
    return out


def _in_place(name: str, op: str):
    method = getattr(set, name)

    def run(self, other):
        if isinstance(other, AbstractSet):
            check_items(f"`{op}`", op, self, other)
        return method(self, other)

    run.__name__ = name
    return run


def _hash(self) -> int:
    check_unique(self, "hashing (as a set element or dict key)")
    return frozenset.__hash__(self)


MadeSet = type("MadeSet", (set,), {**_methods(set), **{
    name: _in_place(name, op) for name, op in _IN_PLACE.items()}, "__hash__": None})
MadeFrozenSet = type("MadeFrozenSet", (frozenset,), {**_methods(frozenset), "__hash__": _hash})
MadeSet.__doc__ = "A set converted code made (see the module doc)."
MadeFrozenSet.__doc__ = "A frozenset converted code made (see the module doc)."
_MADE = (MadeSet, MadeFrozenSet)


def made(x):
    """`x` as converted code holds it: a set or frozenset a made set (the same object where
    it is one already); anything else as it is (`NotImplemented`, a bool)."""
    cls = type(x)
    if cls is builtins.set:
        return MadeSet(x)
    if cls is builtins.frozenset:
        return MadeFrozenSet(x)
    return x


def set_op(a, op: str, b):
    """`set_algebra.set_op`, whose new set (`FROZEN | seen`) is a made set."""
    out = set_algebra.set_op(a, op, b)
    return out if out is a else made(out)  # (`tags |= t` of a caller's set: that set)


def made_set(s):
    """A set display or comprehension of converted code (`{p, (0, 1)}`): a made set."""
    return MadeSet(s)


def plain_set_method(method):
    """A method of a set converted code did not make (`KNOWN.union(seen)`, as converted code
    calls it): refused where `set_algebra` refuses it; a set it gives a made set (it may hold
    the computed items of a made one)."""
    name = method.__name__
    checked = set_method(method) if name in READING_METHODS else method
    if name not in _KEEPING + _GIVING:
        return checked
    return lambda *args, **kwargs: made(checked(*args, **kwargs))


def unbound_set_method(method):
    """`set.intersection` & co. called with the set first (`set.intersection(seen, t)`): the
    set's own method, as `plain_set_method` or a made set's gives it."""
    def run(s, *args, **kwargs):
        bound = getattr(s, method.__name__) if isinstance(s, _MADE) else plain_set_method(
            method.__get__(s))
        return bound(*args, **kwargs)

    return run


def type_(*args):
    """`type`: of a made set, `set` (`frozenset`), as eager code has it."""
    if len(args) == 1 and isinstance(args[0], _MADE):
        return builtins.set if isinstance(args[0], set) else builtins.frozenset
    return builtins.type(*args)


_WALKED = (MadeSet, MadeFrozenSet, list, tuple, dict, builtins.set, builtins.frozenset)


def _user_object(x) -> bool:
    """An instance of a class of the user's code with a `__dict__` (`box.tags = {1}`)."""
    return isinstance(getattr(x, "__dict__", None), dict) and not isinstance(
        x, (type, types.ModuleType, types.FunctionType, types.MethodType)) and \
        type(x).__module__.partition(".")[0] not in ("runtime", "d2s", "builtins", "numpy")


def plain(x, memo: dict | None = None, depth: int = 0):
    """`x` as it leaves the call: made sets plain `set`s / `frozenset`s again (one plain
    object per made one: aliases stay aliases), also inside tuples, sets and frozensets;
    lists, dicts and the attributes of user objects changed in place (their identity is
    the caller's)."""
    memo = {} if memo is None else memo
    cls = type(x)
    if depth > 8 or id(x) in memo:
        return memo.get(id(x), x)
    if cls in (list, dict) or cls not in _WALKED and _user_object(x):
        memo[id(x)] = x
        d = x if cls in (list, dict) else vars(x)
        for k, v in list(d.items() if cls is not list else enumerate(d)):
            new = plain(v, memo, depth + 1)
            if new is not v:
                d[k] = new
        return x
    if cls not in _WALKED:
        return x
    items = [plain(v, memo, depth + 1) for v in x]
    changed = cls in _MADE or any(a is not b for a, b in zip(items, x))
    out = (builtins.set if isinstance(x, set) else cls if cls is tuple else
           builtins.frozenset)(items) if changed else x
    memo[id(x)] = out
    return out
