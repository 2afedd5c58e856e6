"""Sets made by converted code, which may hold values the converted code computed.

Such a value is a graph value while tracing and compares by identity, so Python's set algebra
of a set holding one (`seen & KNOWN`) would give the trace's answer, silently. Where the
function shows that an operand may be a set, the converters hand it to `_d2s.set_op`
(`set_algebra`); where it does not (a helper's parameter, `self.a & self.b`, a set held in
a dict or returned by a helper, `sorted(s1 ^ s2)`, `self.special & seen`), Python's own
operator runs. So every set converted code makes (`set()`, `frozenset()`, a set display or
comprehension, and what algebra of them gives) is a `MadeSet` / `MadeFrozenSet`: a Python
object holding its items in a real set, not a `set` subclass, so a `set`'s or `frozenset`'s
operators and comparisons of it give NotImplemented (a frozenset's `&` uses a set subclass's
table as its own) and Python asks the made set's reflected method. Each operator and
comparing method of it refuses, at the user's line, what `set_algebra` refuses, and is
`set`'s own otherwise; a frozen one holding a computed value refuses its hash (a set of
sets, a dict key). To the code it looks like the set it stands for: `s.__class__` (so
`isinstance(s, set)`), the type's name in messages, `repr`, `==` with plain sets, copies.
What leaves the call (returned, stored where the caller sees it) is a plain `set` /
`frozenset` again (`plain`), and `type(s)` in converted code is `set` (`type_`).

    seen = set()              ->   seen = _d2s.set_()          (a MadeSet)
    {(0, 1), p}               ->   _d2s.made_set({(0, 1), p})
"""
from __future__ import annotations

import builtins
import copy
import dis
import operator
import os
import sys
import types

from . import set_algebra
from .flagged_algebra import flagged_algebra, flagged_compare
from .set_algebra import READING_METHODS, check_items, check_method, set_method
from .trace_state import current
from .traced_keys import check_decided, check_unique, set_flags, traced

# operator -> its function (`|` is never refused: a union keeps every item)
_BINARY = {"&": operator.and_, "-": operator.sub, "^": operator.xor, "|": operator.or_}
_IN_PLACE = {"&": operator.iand, "-": operator.isub, "^": operator.ixor, "|": operator.ior}
_COMPARING = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==",
              "__ne__": "!="}
_NAMES = {"&": "and", "-": "sub", "^": "xor", "|": "or"}
_KEEPING = ("union", "copy")  # (methods whose result holds what the set holds)
_GIVING = ("intersection", "difference", "symmetric_difference")  # (give a new set)
_VIEWS = (type({}.keys()), type({}.items()))  # (`set & d.keys()`: the view's own algebra)
# (the bytecode of `x op= y`: 3.11's BINARY_OP and its argument, 3.10's INPLACE_* opcodes)
_NB_OPS = [sym for _, sym in getattr(dis, "_nb_ops", ())]
_BINARY_OP = dis.opmap.get("BINARY_OP")
_INPLACE_OPCODES = {op: dis.opmap.get(f"INPLACE_{name.upper()}".replace("SUB", "SUBTRACT"))
                    for op, name in _NAMES.items()}


def _raw(x):
    """The real set behind a made set; anything else as it is."""
    return x._s if type(x) in _MADE else x


def _operand(x) -> bool:
    """An operand a set's operator takes (a set, frozenset or made one; a dict view)."""
    return type(x) in _MADE or isinstance(x, (builtins.set, builtins.frozenset, _VIEWS))


def _key(x):
    """An item looked up in a set: a set one as the frozenset a set looks up (`{1} in s`)."""
    return builtins.frozenset(x._s) if type(x) is MadeSet else x


def _in_place_statement(op: str) -> bool:
    """Whether the Python code that asked a made set's reflected `op` runs `x op= s` (a set's
    own in-place operator gave NotImplemented), which changes `x` in place, as eager's."""
    f = sys._getframe(2)
    code, i = f.f_code.co_code, f.f_lasti
    if _NB_OPS:
        return code[i] == _BINARY_OP and code[i + 1] == _NB_OPS.index(op + "=")
    return code[i] == _INPLACE_OPCODES[op]


_OPCODE_OPS = {dis.opmap.get(f"{kind}_{name}"): sym for kind in ("BINARY", "INPLACE")
               for name, sym in (("AND", "&"), ("OR", "|"), ("XOR", "^"), ("SUBTRACT", "-"))
               if dis.opmap.get(f"{kind}_{name}") is not None}  # (3.10's opcodes)


def _operator_iterating():
    """The set operator (`&`, `-`, `^`; `|` keeps every item: None) whose operand's own code
    iterates a made set, from the calling instruction (a dict view's `&`, `-`, `^` take any
    iterable: `d.keys() & seen` runs the view's, comparing computed items by identity), or
    None where the set is iterated otherwise (`for`, `list()`)."""
    try:
        f = sys._getframe(2)
    except ValueError:  # (iterated from the bottom of a thread's stack)
        return None
    code, i = f.f_code.co_code, f.f_lasti
    if i < 0 or i + 1 >= len(code):
        return None
    if _NB_OPS and code[i] == _BINARY_OP:
        op = _NB_OPS[code[i + 1]].rstrip("=")
    else:
        op = _OPCODE_OPS.get(code[i])
    return op if op in ("&", "-", "^") else None


def _operator(op: str, reflected: bool):
    fn = _BINARY[op]

    def run(self, other):
        if not _operand(other):
            return NotImplemented
        if not (reflected and isinstance(other, builtins.set) and _in_place_statement(op)):
            out = flagged_algebra(op, other, self, made) if reflected else flagged_algebra(
                op, self, other, made)  # (of a set a tensor `if` decides: the run's items)
            if out is not None:
                return out
        if op != "|":
            check_items(f"`{op}`", op, self, other)
        else:  # (a union keeps every item: of a set a tensor `if` decides, the run's)
            check_decided(self, f"`{op}`")
            check_decided(other, f"`{op}`")
        if not reflected:
            return made(fn(self._s, _raw(other)))
        if isinstance(other, builtins.set) and _in_place_statement(op):
            return _IN_PLACE[op](other, self._s)  # (`tags |= seen` of a plain set: `tags`)
        return made(fn(other, self._s))

    run.__name__ = f"__{'r' if reflected else ''}{_NAMES[op]}__"
    return run


def _comparing(name: str, op: str):
    fn = getattr(operator, name)

    def run(self, other):
        if not _operand(other):
            return NotImplemented
        out = flagged_compare(op, self, other)  # (of a set a tensor `if` decides: the run's)
        if out is not None:
            return out
        check_items(f"`{op}`", op, self, other)
        return fn(self._s, _raw(other))

    run.__name__ = name
    return run


def _reading(name: str):
    def run(self, *args):
        out = None if len(args) != 1 else flagged_algebra(name, self, args[0], made) if \
            name in _GIVING else flagged_compare(name, self, args[0])
        if out is not None:  # (`s.difference(t)` of a set a tensor `if` decides)
            return out
        if not (name in ("discard", "remove") and args and _removable(self, args[0], name)):
            check_method(name, self, args)
        out = getattr(self._s, name)(*(_key(a) if name in ("discard", "remove") else _raw(a)
                                       for a in args))
        return made(out) if name in _GIVING else out  # (not an item `pop` gives)

    run.__name__ = name
    return run


def _removable(s, item, name: str) -> bool:
    """`s.discard(item)` of a set a tensor `if` decides (`branch_sets`), or `s.remove(item)` of
    an item it holds on every path: the item gone on every path (a later `if`'s branch
    doing so: the `if` combines the flags)."""
    flags = set_flags(s)
    try:
        return bool(flags) and not traced(item) and (name == "discard" or item not in flags)
    except TypeError:  # (unhashable: the method's own error)
        return False


def _in_place(op: str):
    fn = _IN_PLACE[op]

    def run(self, other):
        if not _operand(other) or isinstance(other, _VIEWS):
            return NotImplemented  # (`s &= d.keys()`: a new set, as eager's)
        if op in "&-" and set_flags(self):  # (items gone on every path: `set_algebra`)
            check_items(f"`{op}=`", op + "=", other)
        elif op != "|":
            check_items(f"`{op}=`", op + "=", self, other)
        else:
            check_decided(self, "`|=`")
            check_decided(other, "`|=`")
        fn(self._s, _raw(other))
        return self

    run.__name__ = f"__i{_NAMES[op]}__"
    return run


_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# the code that keeps a set's items between the traces of a block (snapshots, restores)
_KEEPING_FILES = frozenset(_HERE + f for f in ("mutation.py", "branch_sets.py",
                                               "made_sets.py", "mutation_loop.py"))


def _guard(s, what: str) -> None:
    """A read or change of a set whose items a tensor `if` decides (`branch_sets`) from
    other code than what keeps its items between traces (the user's, generated, a
    library's, an operator's on the user's behalf: `next(iter(s))`, `max(s)`, `if s:`,
    `s.add(k)`): refused at the user's line (`traced_keys.check_decided`)."""
    if id(s) in current().undecided and sys._getframe(2).f_code.co_filename not in \
            _KEEPING_FILES:
        check_decided(s, what)


def items_of(s):
    """The real set behind a made set (its items, whatever `if` decides them)."""
    return _raw(s)


class _Made:
    """What a made set and a made frozenset share (see the module doc): the items, in the
    real set `_s`."""

    __slots__ = ("__weakref__", "_s")
    _base: type

    def __len__(self) -> int:
        _guard(self, "len()")
        return len(self._s)

    def __iter__(self):
        op = _operator_iterating()
        if op is not None:  # (`d.keys() & made` through a helper's parameter: the view's
            check_items(f"`{op}`", op, self)  # own operator iterates the made set)
        _guard(self, "a read of its items")
        return iter(self._s)

    def __contains__(self, item) -> bool:
        _guard(self, "`in`")
        return _key(item) in self._s

    def __repr__(self) -> str:
        check_unique(self, "the text")  # (`Variable(%t2: i64[])` is no item eager shows)
        return repr(self._s)

    def __reduce__(self):
        _guard(self, "a copy")
        return self._base, (list(self._s),)  # (a pickle holds the plain set)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        _guard(self, "a copy")
        return made(copy.deepcopy(self._s, memo))

    def union(self, *others):
        out = flagged_algebra("|", self, others[0], made) if len(others) == 1 else None
        if out is not None:  # (of a set a tensor `if` decides: the run's items)
            return out
        _guard(self, "`.union()`")
        return made(self._s.union(*map(_raw, others)))

class MadeSet(_Made):
    """A set converted code made (see the module doc)."""

    __slots__ = ()
    _base = builtins.set
    __class__ = property(lambda self: builtins.set)  # (`isinstance(s, set)`: as eager's)
    __hash__ = None

    def __init__(self, *items):  # (`set(1, 2)`: set's own TypeError)
        self._s = builtins.set(*map(_raw, items))

    def copy(self):
        _guard(self, "`.copy()`")
        return MadeSet(self._s)

    def add(self, item) -> None:
        flags = set_flags(self)  # (of a set a tensor `if` decides: an item it holds on
        if not flags or item in flags:  # every path, or a new one, is one on every path)
            _guard(self, "`.add()`")
        self._s.add(item)

    def clear(self) -> None:
        _guard(self, "`.clear()`")
        self._s.clear()

    def update(self, *others) -> None:
        _guard(self, "`.update()`")
        self._s.update(*map(_raw, others))


class MadeFrozenSet(_Made):
    """A frozenset converted code made (see the module doc)."""

    __slots__ = ()
    _base = builtins.frozenset
    __class__ = property(lambda self: builtins.frozenset)

    def __init__(self, *items):
        self._s = builtins.frozenset(*map(_raw, items))

    def __hash__(self) -> int:
        check_unique(self, "hashing (as a set element or dict key)")
        return hash(self._s)

    def copy(self):
        return self  # (as a frozenset's: the same object)


def _define(cls: type, methods: dict) -> None:
    for name, method in methods.items():
        setattr(cls, name, method)


_FROZEN_READING = ("intersection", "difference", "symmetric_difference", "issubset",
                   "issuperset", "isdisjoint")  # (of a frozenset too)
_define(_Made, {f"__{r}{_NAMES[op]}__": _operator(op, r == "r") for op in _BINARY
                for r in ("", "r")})
_define(_Made, {name: _comparing(name, op) for name, op in _COMPARING.items()})
_define(_Made, {name: _reading(name) for name in _FROZEN_READING})
_define(MadeSet, {f"__i{_NAMES[op]}__": _in_place(op) for op in _BINARY})
_define(MadeSet, {name: _reading(name) for name in sorted(READING_METHODS.difference(
    _FROZEN_READING))})
_MADE = (MadeSet, MadeFrozenSet)
for _cls in (_Made, *_MADE):  # (`unhashable type: 'set'`, `set.add() takes ...`: as eager's)
    _cls.__name__ = _cls.__qualname__ = "frozenset" if _cls is MadeFrozenSet else "set"
    for _name, _method in vars(_cls).items():
        if isinstance(_method, types.FunctionType):
            _method.__qualname__ = f"{_cls.__name__}.{_name}"


def made(x):
    """`x` as converted code holds it: a set or frozenset a made set holding it (`x` is a
    new one, or immutable: an operator's or method's result); a made set, or anything else,
    as it is (`NotImplemented`, a bool)."""
    cls = type(x)
    if cls is not builtins.set and cls is not builtins.frozenset:
        return x
    out = object.__new__(MadeSet if cls is builtins.set else MadeFrozenSet)
    out._s = x
    return out


def set_op(a, op: str, b):
    """`set_algebra.set_op`, whose new set (`FROZEN | seen`) is a made set; `tags |= seen` of
    a set converted code did not make changes that set (with the made one's items)."""
    if op[-1] == "=" and type(b) in _MADE and isinstance(a, builtins.set) and \
            type(a) is not MadeSet:
        return set_algebra.set_op(a, op, b, _raw(b))
    out = set_algebra.set_op(a, op, b)
    return out if out is a else made(out)  # (`tags |= t` of a caller's set: that set)


_IN_PLACE_FUNCTIONS = {id(fn): (fn, op + "=") for op, fn in _IN_PLACE.items()}


def in_place_function(f):
    """`operator.ior` & co. (`operator.iand`, `isub`, `ixor`) as converted code calls them, or
    None for another callable: `operator.ior(tags, seen)` of a caller's set and a set converted
    code made changes `tags` in place and gives it, as `tags |= seen` does (a set's own
    `__ior__` gives NotImplemented for a made set, and the made one's reflected `|` could not
    tell a call from the statement)."""
    found = _IN_PLACE_FUNCTIONS.get(id(f))
    if found is None or found[0] is not f:
        return None
    fn, op = found

    def run(a, b):
        if isinstance(a, builtins.set) and type(a) is not MadeSet and type(b) in _MADE:
            return set_op(a, op, b)
        return fn(a, b)

    run.__name__ = fn.__name__
    return run


def made_set(s: builtins.set):
    """A set display or comprehension of converted code (`{p, (0, 1)}`): a made set."""
    return made(s)


# a set's dunder operator -> its text in `set_algebra`
_DUNDERS = {**{f"__{r}{name}__": op for op, name in _NAMES.items() for r in ("", "r")},
            **{f"__i{name}__": op + "=" for op, name in _NAMES.items()}, **_COMPARING}


def _plain_dunder(method):
    """`FROZEN.__and__(seen)`, `set.__ior__(tags, seen)` of a set converted code did not make:
    refused as its operator; with a made set's items, and a new set a made set."""
    op = _DUNDERS[method.__name__]

    def run(other):
        if op[0] != "|" and type(other) in _MADE:
            check_items(f"`{op}`", op, method.__self__, other)
        check_decided(other, f"`{op}`")
        return made(method(_raw(other)))

    return run


def plain_set_method(method):
    """A method of a set converted code did not make (`KNOWN.union(seen)`, as converted code
    calls it): refused where `set_algebra` refuses it; a set it gives a made set (it may hold
    the computed items of a made one)."""
    name = method.__name__
    if name in _DUNDERS:
        return _plain_dunder(method)
    checked = set_method(method) if name in READING_METHODS else method
    if name not in _KEEPING + _GIVING:
        return checked
    return lambda *args, **kwargs: made(checked(*args, **kwargs))


def unbound_set_method(method):
    """`set.intersection` & co. called with the set first (`set.intersection(seen, t)`,
    `frozenset.__or__(s, t)`): the set's own method, as `plain_set_method` or a made set's
    gives it."""
    def run(s, *args, **kwargs):
        bound = getattr(s, method.__name__) if type(s) in _MADE else plain_set_method(
            method.__get__(s))
        return bound(*args, **kwargs)

    return run


def type_(*args):
    """`type`: of a made set, `set` (`frozenset`), as eager code has it."""
    if len(args) == 1 and isinstance(args[0], _MADE):
        return builtins.set if isinstance(args[0], set) else builtins.frozenset
    return builtins.type(*args)


_WALKED = (MadeSet, MadeFrozenSet, list, tuple, dict, builtins.set, builtins.frozenset)
_KEYS = (MadeFrozenSet, tuple)  # (dict keys that may be or hold a made frozenset)


def _user_object(x) -> bool:
    """An instance of a class of the user's code with a `__dict__` (`box.tags = {1}`)."""
    return isinstance(getattr(x, "__dict__", None), dict) and not isinstance(
        x, (type, types.ModuleType, types.FunctionType, types.MethodType)) and \
        type(x).__module__.partition(".")[0] not in ("runtime", "d2s", "builtins", "numpy")


def refuse_undecided(x, what: str = "returning the set", depth: int = 0) -> None:
    """`x` (returned, stored where the caller sees it) holding a made set whose items a
    tensor `if` decides (`branch_sets`): refused (`traced_keys.check_decided`)."""
    if type(x) is MadeSet and id(x) in current().undecided:
        check_decided(x, what)
    if depth < 8 and type(x) in (list, tuple, dict):
        for v in (x.values() if type(x) is dict else x):
            refuse_undecided(v, what, depth + 1)


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
        if cls is dict:  # (a key: `{frozenset(tags): n}`)
            keys = [plain(k, memo, depth + 1) if type(k) in _KEYS else k for k in x]
            if any(a is not b for a, b in zip(keys, x)):
                items = list(zip(keys, x.values()))
                x.clear()
                x.update(items)
        return x
    if cls not in _WALKED:
        return x
    if cls is MadeSet and id(x) in current().undecided:  # (stored for the caller)
        check_decided(x, "storing the set where the caller sees it")
    items = [plain(v, memo, depth + 1) for v in x]
    changed = cls in _MADE or any(a is not b for a, b in zip(items, x))
    out = (builtins.set if isinstance(x, set) else cls if cls is tuple else
           builtins.frozenset)(items) if changed else x
    memo[id(x)] = out
    return out
