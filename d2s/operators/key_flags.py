"""Dict keys that exist on some paths only: a key set by one branch of a tensor `if`
(`branch_keys`) holds its value on every path of the program, beside a bool graph value (its
*presence flag*) telling where eager code has the key. What reads the dict asks here: `in`
gives the flag, `len()` counts it, `.get` picks the default where it is false, and a read
of the value raises eager's `KeyError` there (a read check on the value, `unbound.mark`).

A flag belongs to the value it was found with: once the key is set again (or removed) the
dict holds another value, and the key is a plain key again.
"""
from __future__ import annotations

import copy
import types

import runtime as rt
from runtime.core import active_builder
from runtime.ops.array_number_kinds import STR_DTYPE, string_id

from .. import guards
from ..errors import ConversionError
from .variables import is_variable, user_origin, where

_MISSING = object()


def _table(create: bool = False):
    """The flags of the trace being built: id(dict) -> (dict, {key: (value, flag)})."""
    b = active_builder()
    if b is None:
        return None
    table = getattr(b, "_d2s_key_flags", None)
    if table is None and create:
        table = b._d2s_key_flags = {}
    return table


def register(d: dict, key, value, flag) -> None:
    """`d[key]` (`value`) exists where the bool graph value `flag` is true."""
    table = _table(create=True)  # (each value of the key its own: an `if` inside a loop
    # flags the value it sets, while the loop's flag stays with the value the body got)
    table.setdefault(id(d), (d, {}))[1].setdefault(key, []).append((value, flag))


def may_grow(block) -> None:
    """A tensor `if` traced in `block` (the body of a graph loop that carries flags out, a
    branch of such an `if`, or a probe trace of them: `loop_new_keys`, `branch_keys`) may set
    a dict key in one branch only: the block passes the flag out."""
    block._d2s_keys_grow = True  # (it goes with the block: a discarded probe's too)


def grows_here() -> bool:
    """Whether a tensor `if` traced now (in the current block) may give a dict key a
    presence flag: in the top-level block, or one `may_grow` named."""
    b = active_builder()
    return b is not None and grows_in(b.block)


def grows_in(block) -> bool:
    return block is block.program.global_block() or getattr(block, "_d2s_keys_grow", False)


def any_flags() -> bool:
    """Whether the trace being built gave any dict key a presence flag."""
    return bool(_table())


def flag_of(d, key):
    """The presence flag of `d[key]`, or None for a plain key (or no dict)."""
    flags = flags_of(d)
    return flags.get(key) if flags else None


def flags_of(d) -> dict:
    """{key: presence flag} of the keys of `d` (a dict, a copy of one, or a dict view's
    mapping) that exist on some paths only."""
    table = _table()
    if not table or not isinstance(d, (dict, types.MappingProxyType)):
        return {}
    return {k: flag for _, keys in table.values() for k, entries in keys.items()
            for value, flag in entries if d.get(k, _MISSING) is value}


def mark_order_undecided(key) -> None:
    """Where a dict has `key` among its keys depends on the path (a graph loop adds it on a
    trip the run decides, before another key it adds): reading the order of a dict with
    that key before others is refused (`check_order`; by the key's name, as flags go by
    value, whichever dict object holds them)."""
    b = active_builder()
    undecided = getattr(b, "_d2s_key_orders", None)
    if undecided is None:
        undecided = b._d2s_key_orders = set()
    undecided.add(key)


def mark_reordered(d: dict, keys: list, src) -> None:
    """The branches of a tensor `if` (at `src`) set the `keys` of `d` in another order each:
    eager code has them in the order of the branch the run takes, so reading the order of
    a dict with one of them before others is refused (`check_order`), and so is a dict the
    caller reaches (`refuse_reordered`: it would keep one order after every call)."""
    b = active_builder()
    table = getattr(b, "_d2s_reordered", None)
    if table is None:
        table = b._d2s_reordered = {}
    table.setdefault(id(d), (d, list(keys), src))


def order_flag(d: dict, pred, else_order: list) -> None:
    """`d`, as it is now, has its keys in the order of the if branch of a tensor `if` whose
    condition is `pred`; where it is false eager code has them in `else_order` (keys added
    later after them). Only one such decision per dict, in the top-level block (a returned
    dict reads `pred` as an output): a second one leaves it without (reading its order is
    refused)."""
    b = active_builder()
    flags = getattr(b, "_d2s_order_flags", None)
    if flags is None:
        flags = b._d2s_order_flags = {}
    top = is_variable(pred) and pred.block is b.program.global_block()
    flags[id(d)] = None if id(d) in flags or not top else (d, pred, list(d), list(else_order))


def order_of(d):
    """(the order flag, the keys' order where it is false) of a dict one tensor `if` ordered
    (`order_flag`) and that has only gained keys at its end since; else None."""
    found = (getattr(active_builder(), "_d2s_order_flags", None) or {}).get(id(d))
    if found is None or found[0] is not d or list(d)[:len(found[2])] != found[2] or \
            not _kept(found[1]):
        return None
    return found[1], tuple(found[3])


def refuse_reordered(dicts) -> None:
    """Of `dicts` (those the caller reaches after the call), one whose keys the branches of a
    tensor `if` set in another order each: a StateChangeError naming the `if`."""
    table = getattr(active_builder(), "_d2s_reordered", None) or {}
    for d in dicts:
        found = table.get(id(d))
        if found is not None and found[0] is d:
            _, keys, src = found
            raise ConversionError(
                f"the keys {keys} of a dict the caller can reach are set in another order in "
                f"each branch of an if whose condition is a tensor ({where(src)}): after the "
                "call the dict would keep one order, where eager code leaves the order of "
                "the branch taken. Set the keys in the same order in both branches (or "
                "before the if), or keep them in a dict made in the function.", origin=src)


def check_order(d, what: str, fn=None, ordered: bool = False, ranks=None) -> bool:
    """`what` (a loop over `d`, returning it from `fn`) reads the order of its keys: refused at
    the user's line (`fn`'s, for a returned dict) where eager code has them in an order the run decides. A key that existed on
    some paths only and was set again here (`d['k'] = v` after a tensor `if` set it on one
    path) sits where it was on the paths that had it and at the end on the others: True
    where the caller follows that order by the keys' `ranks` (`key_ranks.ranks_of`)."""
    b = active_builder()
    undecided = set(getattr(b, "_d2s_key_orders", ())) if b is not None else set()
    if not ordered:  # (keys a tensor `if` set in another order per branch, `mark_reordered`)
        undecided.update(k for r in getattr(b, "_d2s_reordered", {}).values() for k in r[1])
    table = _table() or {}
    if not (table or undecided) or not isinstance(d, (dict, types.MappingProxyType)) or \
            len(d) < 2:
        return False
    here, keys = b.block, list(d)[:-1]
    related = [entries for dd, entries in table.values() if _related(dd, d)]
    earlier = {k: [v for entries in related for v, _ in entries.get(k, ())
                   if _live(v, here)] for k in keys}
    key = next((k for k in keys if k in undecided or any(
        not (v is d[k] or is_variable(d[k]) and v.name == d[k].name) for v in earlier[k])),
        None)
    if key is None:
        return False
    if ranks is not None and not any(k in getattr(b, "_d2s_key_orders", ()) for k in d):
        return True  # (the order each key was first stored in, when the program runs)
    src = user_origin(3)
    code = getattr(fn, "__code__", None)
    at = where(src) if src is not None or code is None else (  # (a dict returned: the call
        f'{getattr(fn, "__qualname__", fn)}, File "{code.co_filename}", line '  # returned)
        f'{code.co_firstlineno}')
    reordered = None if ordered else next(
        (r for r in getattr(b, "_d2s_reordered", {}).values() if key in r[1]), None)
    if reordered is not None:
        raise ConversionError(
            f"{what} ({at}) reads the order of the keys of a dict whose keys "
            f"{reordered[1]} the branches of an if whose condition is a tensor "
            f"({where(reordered[2])}) set in another order each: eager code has them in the "
            "order of the branch the run takes, which one program cannot give here. Read the "
            "keys by name (`d['k']`, `'k' in d`), or set them in the same order in both "
            "branches.", origin=src)
    raise ConversionError(
        f"{what} ({at}) reads the order of the keys of a dict whose key {key!r} "
        "existed on some paths only and was set again, or was added by a loop on a trip "
        "decided when the program runs: eager code has it at the end on the paths where it "
        "was missing, which one program cannot order. Read the keys by name (`d['k']`, `'k' "
        "in d`), or set the key on every path before other keys.", origin=src)


def _related(flagged: dict, d) -> bool:
    """Whether `d` is the dict whose keys were flagged, or made from it (a copy, which holds
    some of its values): a dict that only has keys of the same names (a metrics dict built
    from a loss dict, `{"aux": losses.get("aux", z).item()}`) sets them in its own order."""
    if flagged is d:
        return True
    values = {id(v) for v in flagged.values()}
    return any(id(v) in values for v in d.values())


def _live(v, block) -> bool:
    """A registered value of this block (not of a discarded trace or of a block inside)."""
    return is_variable(v) and v.block is block and _kept(v)


def flagged_items(iterable):
    """[(item, its key's presence flag or None)] of a loop over a dict with such keys (or
    over its keys, values or items), else None."""
    mapping = iterable if isinstance(iterable, dict) else getattr(iterable, "mapping", None)
    flags = flags_of(mapping) if isinstance(iterable, _VIEWS + (dict,)) else {}
    if not flags:
        return None
    keys = list(mapping)
    return [(item, flags.get(keys[i])) for i, item in enumerate(list(iterable))]


def refuse_iteration(iterable, what: str = "a comprehension, or a loop with a `break` or "
                     "`return`,") -> None:
    """A comprehension, or a loop that may stop early, over such a dict (or its keys,
    values, items): the keys it visits would be decided when the program runs; refused at the
    user's line (a plain `for` runs the body of such a key under its flag: `loops`)."""
    mapping = iterable if isinstance(iterable, dict) else getattr(iterable, "mapping", None)
    if isinstance(iterable, _VIEWS + (dict,)):
        check_order(mapping, what.rstrip(","))
    flags = flags_of(mapping) if isinstance(iterable, _VIEWS + (dict,)) else {}
    if flags:
        src = user_origin(3)
        raise ConversionError(
            f"{what} over a dict whose key "
            f"{next(iter(flags))!r} exists only where a tensor `if` set it ({where(src)}): "
            "the keys it visits would be decided when the program runs. Write a `for` "
            "statement without a `break` (its body runs under the key's presence), read such "
            "keys by name (`'k' in d`, `d.get('k', default)`), or set the key on every "
            "path.", origin=src)


def refuse_returned(d, fn) -> None:
    """A returned dict (`traced_keys.refuse_traced_keys`) with such a key."""
    flags = flags_of(d)
    if flags:
        code = getattr(fn, "__code__", None)
        at = f' (File "{code.co_filename}", line {code.co_firstlineno})' if code else ""
        raise ConversionError(
            f"{getattr(fn, '__qualname__', fn)}{at} returns a dict whose key "
            f"{next(iter(flags))!r} exists only where a tensor `if` set it: a program returns "
            "the same keys on every call. Return the value and its presence (`'k' in d`) "
            "instead, or set the key on every path.")


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def flag_for(d, key, value):
    """The flag registered for `d[key]` holding `value` (the same object, or a copy of the
    same program value: a branch's values are copies, by name), or None. Not one of a
    discarded block (a probe's: its names are given out again)."""
    table = _table()
    found = table.get(id(d)) if table else None
    if found is None or found[0] is not d:
        return None
    for known, flag in reversed(found[1].get(key, ())):
        if (known is value or is_variable(value) and is_variable(known) and
                known.name == value.name) and _kept(known) and _kept(flag):
            return flag
    return None


def _kept(v) -> bool:
    """Whether `v` is no graph value or one of a block the program still has."""
    if not is_variable(v):
        return True
    block = v.block
    blocks = block.program.blocks
    return 0 <= block.idx < len(blocks) and blocks[block.idx] is block


def unchecked(value, read):
    """`read()` of `value` without its read check (`.get` and `in` decide by the flag)."""
    check = getattr(value, "on_read", None)
    value.on_read = None
    try:
        return read()
    finally:
        value.on_read = check


def dict_get(obj):
    """`obj.get`: of a key that exists on some paths only, the value where it exists and the
    default elsewhere (a tensor of the value's dtype and shape, or a number for a 0-d value),
    chosen when the program runs."""
    flags = flags_of(obj)
    if not flags and (type(obj) is not dict or _reached_by(obj) is None):
        return obj.get  # (the bound method: `calls` checks it, e.g. for computed keys)

    def get(key, default=None):
        flag = flags.get(key) if not is_variable(key) else None
        if flag is None and (is_variable(key) or getattr(type(key), "run_str", False)):
            return COMPUTED_GET[0](obj)(key, default)  # (`table.get(int(t))`: the run's)
        if flag is None:
            guard_membership(obj, key, key in obj)  # (`self.stats.get("n", 0)`)
            return obj.get(key, default)
        value = obj[key]
        if getattr(type(value), "run_str", False) and getattr(value, "texts", None) is not \
                None and (default is None or type(default) is str):  # (a str set on one path)
            got = unchecked(value.id, lambda: rt.where(flag, value.id, rt.full(
                [], string_id(default), STR_DTYPE)))
            return type(value)(got, tuple(dict.fromkeys((*value.texts, default))))
        if default is None and NONE_WHERE_ABSENT and is_variable(value) and not getattr(
                value, "python_scalar", False):
            return NONE_WHERE_ABSENT[0](value, flag, key)  # (`none_or_tensor`)
        other = _default_like(value, default, key)
        got = unchecked(value, lambda: rt.where(flag, value, other))
        # (a Python number under the key, and a default of its type: a number of that type)
        got.python_scalar = getattr(value, "python_scalar", False) and _number_kind(
            value.dtype) is type(default)
        if not getattr(value, "python_scalar", False) and type(default) in _WIDE:
            got.number_when = rt.logical_not(flag)  # (eager's Python default where unset)
            got.number_value = rt.full([], default, _WIDE[type(default)])
            got.number_value.python_scalar = True
        return got
    return get


_WIDE = {bool: "bool", int: "int64", float: "float64"}  # (a number's dtype: number_or_tensor)
# `d.get(k, None)` / `d.pop(k, None)` of a tensor key on some paths only: the value, None on
# the runs without the key (`none_or_tensor.none_where_absent`, set when it is imported)
NONE_WHERE_ABSENT: list = []
# `table.get` of a key the program computes (`computed_keys.keyed_method`, set when imported)
COMPUTED_GET: list = [lambda obj: obj.get]


def _reached_by(container):
    """The guard through which the trace reached `container` (`self.stats`), or None."""
    recorded = guards.recorded()
    return None if recorded is None else next(
        (g for g in recorded if g[1] == "is" and g[2] is container), None)


def guard_membership(container, key, result: bool) -> None:
    """The trace decided `key in container` as Python (a Python key; a dict or set the
    function reached through a guarded place: `name in self.cache`, `"k" in self.stats`):
    guarded by that result, so a call that finds the key added or removed traces anew, as
    eager code would decide the other way."""
    recorded = guards.recorded()
    if recorded is None or type(container) not in (dict, set) or not guards.is_data(key):
        return
    found = _reached_by(container)
    if found is None or any(g[0][0] == "member" and g[0][1] is container and g[0][2] == key
                            for g in recorded):
        return
    recorded.append((("member", container, key, f"{key!r} in {guards.describe(found)}"),
                     "eq", (bool, result)))


def _number_kind(dtype):
    return bool if dtype.name == "bool" else float if dtype.is_floating else int


def dict_setdefault(obj):
    """`obj.setdefault`: of a key that exists on some paths only, the value where it exists
    and the default elsewhere (as `dict_get` picks it), which the key then holds on every
    path (a plain key again)."""
    flags = flags_of(obj)
    if not flags:
        return obj.setdefault

    def setdefault(key, default=None):
        if is_variable(key) or flags.get(key) is None:
            return obj.setdefault(key, default)
        obj[key] = dict_get(obj)(key, default)
        return obj[key]
    return setdefault


def dict_pop(obj):
    """`obj.pop`: of a key that exists on some paths only, with a default, the value where
    it exists and the default elsewhere (as `dict_get` picks it); the key is gone after it."""
    flags = flags_of(obj)
    if not flags:
        return obj.pop

    def pop(key, *default):
        if is_variable(key) or flags.get(key) is None or len(default) != 1:
            return obj.pop(key, *default)
        value = dict_get(obj)(key, default[0])
        obj.pop(key)
        return value
    return pop


def del_item(container, key) -> None:
    """`del container[key]` (the `deletes` pass): of a dict key that exists on some paths
    only, eager's KeyError where it is absent when the program runs (its value's read
    check), as a read of it; then the key is gone."""
    if type(container) is dict and not is_variable(key) and flag_of(container, key) is not None:
        check = getattr(container[key], "on_read", None)
        if check is not None:
            check()
    del container[key]


def _default_like(value, default, key):
    """`default` as a tensor like `value`, or a ConversionError at the user's line."""
    if type(default) in (bool, int, float) and not value.shape:
        return rt.full([], default, value.dtype)
    if (is_variable(default) or rt.is_tensor(default)) and default.dtype == value.dtype and \
            tuple(default.shape) == tuple(value.shape):
        return default
    src = user_origin(3)
    raise ConversionError(
        f".get({key!r}, ...) of a dict whose key {key!r} exists only where a tensor `if` set "
        f"it ({where(src)}): the default would be the result on the other paths, and one "
        f"program value has one type, dtype and shape; give a default of the value's "
        f"({value.dtype.name}, shape {list(value.shape)}).", origin=src)


def checked_call(f, out, runs=None):
    """`out` (what converted code calls for `f`): where `f` is not converted (a built-in, a
    library function, `dict.fromkeys`, `",".join`, `set.update`, `deque`), a call that is
    refused at the user's line when given a dict, or its keys, values or items, whose keys
    exist on some paths only or whose order the run decides: such a function reads the keys
    of every path, where eager code has the keys of this run (`len(dict.fromkeys(d))` one
    too many on the runs without the key). Functions that only look at the object, and dicts
    made from it (`e.update(d)`, `dict(d)`, `OrderedDict(d)`: they hold its values, which
    carry the flags), take it. `runs`: what the call runs in place of `out` (`json.dumps`
    as `json_calls.dumps`), with the same checks."""
    if not _unconverted(f, out) or _takes_dicts(f):
        return out if runs is None else runs

    def checked(*args, **kwargs):
        b = active_builder()  # (the arguments are made after `f` is looked up: checked now)
        if _table() or getattr(b, "_d2s_key_orders", None) or getattr(b, "_d2s_reordered",
                                                                      None):
            for a in (*args, *kwargs.values()):
                if isinstance(a, dict) or type(a) in _VIEWS:
                    _refuse_passed(f, a)
        return (out if runs is None else runs)(*args, **kwargs)
    return checked


_NATIVE = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodWrapperType,
           types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)


def _unconverted(f, out) -> bool:
    """Whether converted code calls `f` as it is (not its converted code)."""
    if isinstance(f, type):  # (`deque(d)`, `map(str, d)`; a user's class, a namedtuple,
        return f.__module__ in ("builtins", "collections", "itertools", "functools")
        # (a standard-library class reads or stores what it is given: `chain(d, more)`)
    return out is f or isinstance(f, _NATIVE)


def _takes_dicts(f) -> bool:
    """Functions given a dict that keep its values or only look at the object."""
    if isinstance(f, type):
        return issubclass(f, dict)
    receiver = getattr(f, "__self__", None)
    if isinstance(receiver, dict) and (type(receiver) is dict or f.__name__ == "update"):
        return True  # (`e.update(d)`, `e.get(k)`; `dict.fromkeys` is bound to the class)
    if isinstance(f, _NATIVE) and getattr(f, "__name__", "") in _STORING:
        return True  # (`self.history.append(d)`: the dict itself, read where it is read)
    try:
        return f in _LOOKING
    except TypeError:  # (an unhashable callable)
        return False


_STORING = frozenset(("append", "insert", "appendleft", "put", "put_nowait", "__setitem__",
                      "__setattr__", "setdefault"))
_LOOKING = frozenset((isinstance, issubclass, id, type, hasattr, getattr, setattr, callable,
                      copy.copy))


def _refuse_passed(f, d) -> None:
    mapping = d if isinstance(d, dict) else d.mapping
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    what = f"`{name}()`"
    check_order(mapping, what)  # (the order of its keys, where the run decides it)
    flags = flags_of(mapping)
    if not flags:
        return
    src = user_origin(3)
    raise ConversionError(
        f"{what} ({where(src)}) is given a dict whose key {next(iter(flags))!r} exists "
        "only where a tensor `if` set it: it would read the keys of every path, where eager "
        "code has the keys present on this run. Read such keys by name (`'k' in d`, "
        "`d.get('k', default)`), build the result with a `for` statement over the dict, or set "
        "the key on every path.", origin=src)
