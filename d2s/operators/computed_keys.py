"""`table[key] = value` where `key` is a number the converted code computed (`int(t)`,
`t.item()`): which item eager code sets is known only when the program runs.

    table = {0: 0.5, 1: 0.25, 2: 1.0}
    table[int(logits.argmax())] = 2.0      ->   _d2s.set_item(2.0, table, _d2s.int_(...))
    {0: 0.5, int(t): 1.0}                  ->   _d2s.dict_display((0, 0.5), (_d2s.int_(t), 1.0))

While tracing, the key is a graph value that hashes by identity: stored as it is, it would be
a fourth key, and `table[0]` would read the old item silently. Instead every existing item
becomes `where(key == k, value, table[k])`, so the dict keeps its Python keys and every later
read (`table[0]`, `.get`, `in`, `len`, a loop, passing it on) sees the item eager code sees;
the program raises at the user's line when the key is none of them (eager would add one).
A dict where that cannot hold (no items, keys that are not numbers, items of other types,
dtypes or shapes than the value) is refused at the store (ConversionError).
"""
from __future__ import annotations

import operator

import runtime as rt
from runtime.core import active_builder
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from . import key_flags, key_ranks, python_picks
from .str_arrays import ChosenStr
from .traced_keys import traced
from .unbound import mark
from .variables import is_variable, user_origin, where

_NUMBERS = (bool, int, float)
_DTYPES = {bool: "bool", int: "int64", float: "float64"}
KEYED_METHODS = ("get", "pop", "setdefault", "update", "keys", "values", "items", "popitem")


def set_item(value, container, key) -> None:
    """`container[key] = value` (the operands in Python's order of evaluation)."""
    if type(container) is dict:
        if not (is_variable(key) or _computed_number(key) or isinstance(key, ChosenStr)):
            key_ranks.note_store(container, key, value)  # (the order of its keys)
        _put(container, key, value)
    else:
        container[key] = value


def get_item(container, key):
    """`container[key]` of a name bound to a dict (`builtin_calls`): given a number the
    program computes, the item whose Python key equals it (`where` over the items, which
    must be of one type), raising eager's KeyError when the program runs where none does.
    A dict with a key that exists on some paths only keeps the refusal."""
    if type(container) is dict and _computed_number(key) and container and \
            _python_keys_it_may_equal(container, key) and not key_flags.flags_of(container):
        return _get(container, key, eager="raises KeyError")  # (a key on some paths only:
    # refused, as a store under such a key is, `_put`)
    return python_picks.getitem_(container, key)  # (a str a tensor `if` chose: `d[name]`)


def aug_read(container, key) -> tuple:
    """The left side of `container[key] op= value` (`aug_item`'s first argument), read
    before Python evaluates the right side (`d[k] += f()` reads `d[k]` first: a KeyError is
    raised before `f` runs, and what `f` stores under the key is overwritten)."""
    return container, key, get_item(container, key)


def aug_item(read: tuple, op: str, value) -> None:
    """`container[key] op= value` (`op` an `operator` in-place function's name) of a name
    bound to a dict, `read` being `aug_read(container, key)`: read and stored as `get_item`
    and `set_item` do, in Python's order."""
    container, key, current = read
    set_item(getattr(operator, op)(current, value), container, key)


def dict_setdefault(obj):
    """`obj.setdefault` as converted code calls it (`key_flags.dict_setdefault`): a Python
    key's store noted as `key_ranks.note_store` notes one (when eager code first stored
    it); a key the program computes as `keyed_method` takes it (refused)."""
    inner = key_flags.dict_setdefault(obj)
    if type(obj) is not dict or active_builder() is None:
        return inner

    def setdefault(key, *default):
        if is_variable(key) or not isinstance(key, (str, int, float, tuple)):
            plain = type(inner) is type(obj.setdefault)  # (a builtin method: as `calls`)
            return (keyed_method(inner) if plain else inner)(key, *default)
        key_ranks.note_store(obj, key, None)
        out = inner(key, *default)
        key_ranks.settle(obj, key)
        return out
    return setdefault


def dict_display(*items) -> dict:
    """`{k: v, ...}` with a key that is not a constant (`builtin_calls`): the items stored in
    order as `d[k] = v` stores them; refused where a key the program computes may equal a
    Python key of the display (eager's dict has one key fewer there), unless the key holds
    one of a few values known while tracing (`_put_each`: each a key with a presence flag)."""
    for key, _ in items:
        if _computed_number(key) and _python_keys_it_may_equal(dict([
                (k, v) for k, v in items if not isinstance(k, ChosenStr)]), key) and not (
                _domain(key) is not None and key_flags.grows_here()):
            _refuse(user_origin(2), "the display has a Python key it may equal, so how many "
                    "keys the dict has is known only when the program runs", "a dict display "
                    "with a key")
    out: dict = {}
    for key, value in items:
        _put(out, key, value)
    return out


def _put(table: dict, key, value) -> None:
    """`table[key] = value`: by `where` for a computed key that a Python key may equal;
    refused where the dict would hold a computed key beside a Python key it may equal (a
    read by either would find its own item, eager's one item); else stored as it is. A key
    of a few values known while tracing (`int(t > 0)`) sets each of them (`_put_each`)."""
    values = _domain(key)
    if values is not None and key_flags.grows_here() and type(table) is dict:
        _put_each(table, key, value, values)
        return
    if _computed_number(key) and _python_keys_it_may_equal(table, key):
        if any(key_flags.flag_of(table, k) is not None for k in table):
            _refuse(user_origin(3), "the dict holds a key that exists on some paths only (set "
                    "under a tensor `if` or in a graph loop), which the computed key may equal")
        _store(table, key, value)
        return
    if _computed_number(key) and not _outermost():
        _refuse(user_origin(3), "inside an if whose condition is a tensor, or a graph loop, "
                "the key the dict gets (and whether it gets one) is decided when the program "
                "runs")
    held = _computed_keyed(create=_computed_number(key))
    if held is not None and _computed_number(key):
        held[id(table)] = table  # (a Python key stored later may equal it)
    elif held and held.get(id(table)) is table and not traced(key) and \
            _computed_keys_it_may_equal(table, key):
        _refuse(user_origin(3), "one of them may equal it, so which item each key reads is "
                "known only when the program runs", "an item set under a Python key",
                "beside keys computed by the converted code")
    table[key] = value  # (a dict of such keys only: `traced_keys` keeps it honest)


def _domain(key):
    """The Python values a computed key can hold, where few and known while tracing: those
    of a bool (`bool(t)`), of an int of a bool (`int(t > 0)`, `builtins.int_`), the strs a
    str chosen by a tensor `if` may be (`branch_strs`); else None."""
    if isinstance(key, ChosenStr):  # (`name = "pos"` / `"neg"` by a tensor `if`)
        return key.texts
    if type(key) is tuple or not _computed_number(key):
        return None
    if key.dtype.kind == "b":
        return (False, True)
    return getattr(key, "known_values", None)


def _put_each(table: dict, key, value, values) -> None:
    """`table[key] = value` for a key that holds one of `values` when the program runs:
    each of them is a key of the dict holding `value` where the key equals it, with a
    presence flag (`key_flags`): the old one's or that, for a key the dict had on some
    paths; that alone for a new one (a read elsewhere raises eager's KeyError). So `len`,
    `in`, `.get`, reads and the key order follow the run, also under a tensor `if` and in
    the body of a graph loop that carries flags (the branches give the flags out)."""
    src = user_origin(2)
    for v in values:
        key_ranks.note_store(table, v, None)  # (where it may be new: when first stored)
        _put_one(table, key, value, v, src)
        key_ranks.settle(table, v)


def _put_one(table: dict, key, value, v, src) -> None:
    """`_put_each` for the value `v` of the key."""
    same = key == v if isinstance(key, ChosenStr) else rt.equal(key, rt.full(
        [], v, key.dtype))
    if v not in table:
        new = _as_graph(value)
        if new is None:
            _refuse(src, f"the item is {_describe(value)}, which a presence flag cannot "
                    "go with")
        new = rt.assign(new) if new is value else new  # (one value per key: its flag)
        new.python_scalar = type(value) in _NUMBERS or getattr(value, "python_scalar",
                                                                False)
        flag = same
    else:
        old, flag = table[v], key_flags.flag_of(table, v)
        new = key_flags.unchecked(old, lambda: _choose(same, value, old, src)) \
            if is_variable(old) else _choose(same, value, old, src)
        if flag is None:
            table[v] = new
            return
        flag = rt.logical_or(flag, same)
    table[v] = new
    mark(new, flag, v, src, KeyError(v))
    key_flags.register(table, v, new, flag)


def _computed_keyed(create: bool = False) -> dict | None:
    """The dicts of the trace being built that a computed key went into as it is (id ->
    dict): only their stores under Python keys look at their keys (a store is O(1) else)."""
    b = active_builder()
    if b is None:
        return None
    found = getattr(b, "_d2s_computed_keyed", None)
    if found is None and create:
        found = b._d2s_computed_keyed = {}
    return found


def _computed_keys_it_may_equal(table: dict, key) -> bool:
    """Whether `table` has a computed key that the Python `key` may equal."""
    if type(key) is tuple:
        return any(type(k) is tuple and _computed_number(k) for k in table)
    return type(key) in _NUMBERS and any(
        type(k) is not tuple and _computed_number(k) for k in table)


def _outermost() -> bool:
    """Whether the trace is outside every tensor `if` and graph loop (its global block)."""
    b = active_builder()
    return b is None or b.block is b.program.global_block()


def _python_keys_it_may_equal(table: dict, key) -> bool:
    """Whether `table` has a Python key that the computed `key` may equal (a number for a
    number, a tuple for a tuple). Without one the key goes in as it is: `in` compares by value,
    `len()` and loops are refused (`traced_keys`), as are the methods below."""
    if type(key) is tuple:
        return any(type(k) is tuple for k in table)
    return any(type(k) in _NUMBERS for k in table)


def _computed_number(key) -> bool:
    """A graph value standing for a Python number (`int(t)`), or a tuple holding one."""
    if type(key) is tuple:
        return any(_computed_number(k) for k in key)
    return is_variable(key) and bool(getattr(key, "python_scalar", False))


def keyed_method(method):
    """`table.get` / `.pop` / `.setdefault` / `.update` of a dict, as converted code calls
    it (`calls.call`): given a key the program computes, `get` picks the item with `where`
    (as a store does), and the others, which may change which keys the dict has, are refused
    at the user's line; with Python keys, the method itself."""
    name, table = method.__name__, method.__self__

    def keyed(*args, **kwargs):
        if name == "popitem":  # (the last key of every path: refused where that is not
            key_flags.refuse_iteration(table, "`.popitem()`")  # the run's)
        if any(traced(k) for k in table) and (name in ("keys", "values", "items") or args and (
                not _computed_number(args[0]) or name != "update")):
            _refuse(user_origin(2), "the dict holds keys computed by the converted code, so "
                    "which items it has is known only when the program runs",
                    f"`.{name}()`", "of a dict")
        items = args[0].items() if name == "update" and args and type(args[0]) is dict else ()
        if name == "update" and any(_computed_number(k) for k, _ in items) and not kwargs:
            for k, v in items:
                set_item(v, table, k)
            return None
        if name == "get" and args and len(args) <= 2 and not kwargs and (
                (got := python_picks.get_(table, *args)) is not python_picks.NOT_PICKED):
            return got  # (`LABELS.get(int(t), "?")`: the item of the run's key, or default)
        if name in ("get", "pop", "setdefault") and args and _computed_number(args[0]):
            if name == "get" and len(args) <= 2 and not kwargs:
                return _get(table, *args)
            _refuse(user_origin(2), "it may change which keys the dict has, and which they "
                    "are is known only when the program runs", f"`.{name}()` of a key")
        if name in ("setdefault", "pop") and not kwargs:  # (of a key a tensor `if` set)
            pick = key_flags.dict_setdefault if name == "setdefault" else key_flags.dict_pop
            return pick(table)(*args)
        return method(*args, **kwargs)

    return keyed


def check_pop(table, index) -> None:
    """`table.pop(key)` (the `lists` pass's `list_pop`) of a key the program computes."""
    if type(table) is dict and (index and _computed_number(index[0]) or any(
            traced(k) for k in table)):
        _refuse(user_origin(3), "it may change which keys the dict has, and which they are is "
                "known only when the program runs", "`.pop()` of a key")


def _keys_of(table: dict, key, src, what: str) -> None:
    if type(key) is tuple or not table or any(type(k) not in _NUMBERS for k in table):
        _refuse(src, "the dict is empty or has keys that are not all Python numbers, so which "
                "item the key picks is known only when the program runs", what)


def _store(table: dict, key, value) -> None:
    src = user_origin(3)
    _keys_of(table, key, src, "an item set under a key")
    found, merged = None, {}
    for k, old in table.items():
        same = _equal(key, k)
        if same is None:
            continue
        merged[k] = _choose(same, value, old, src)
        found = same if found is None else rt.logical_or(found, same)
    if found is None:
        _refuse(src, "none of the dict's keys equals a value of the key's dtype")
    _check_known(found, src, list(table))
    table.update(merged)


def _get(table: dict, key, default=None, eager="returns None"):
    """`table.get(key, default)`: the item whose key equals `key`, else `default` (without
    one, the program raises where eager code would return None)."""
    src = user_origin(3)
    what = "`.get()` of a key" if eager == "returns None" else "an item read under a key"
    _keys_of(table, key, src, what)
    found, out, chosen = None, default, default is not None
    for k, item in table.items():
        same = _equal(key, k)
        if same is None:
            continue
        # (an item None among numbers: `_choose` refuses it, never taken as no item yet)
        out = _choose(same, item, out, src, "the other items are", what) if chosen else item
        chosen = True
        found = same if found is None else rt.logical_or(found, same)
    if found is None:
        return default
    if default is None:
        _check_known(found, src, list(table), eager, key if eager == "raises KeyError" and
                     is_variable(key) else None)
    return out


def _equal(key, k):
    """`key == k` as a bool graph value; None where it can never hold (an int key, 0.5)."""
    if key.dtype.kind in "iub" and isinstance(k, float) and not k.is_integer():
        return None
    return rt.equal(key, rt.full([], k, key.dtype))


def _choose(same, value, old, src, doing="the store puts", what="an item set under a key"):
    """`value` where `same`, else `old`: both numbers of one Python type, or tensors of one
    dtype and shape (the item's type must not depend on which key the program sees)."""
    a, b = _as_graph(value), _as_graph(old)
    kind = _number_type(value)
    if kind is not None and kind is _number_type(old):
        # one Python type, at the width the item has (a loop may carry a float as float32)
        dtype = b.dtype if is_variable(old) else a.dtype if is_variable(value) else \
            _DTYPES[kind]
        a, b = _held(rt.cast(a, dtype)), _held(rt.cast(b, dtype))
    if a is None or b is None or a.dtype != b.dtype or list(a.shape) != list(b.shape) or \
            _number_type(value) != _number_type(old):
        _refuse(src, f"the dict holds {_describe(old)} where {doing} {_describe(value)}, so "
                "the type of an item would depend on the key", what)
    out = rt.where(same, a, b)
    if kind is not None:
        out.python_scalar = True  # (eager code holds a Python number there)
        out.stop_gradient = True
    return out


def _held(v):
    """`v` as a graph value of its own dtype, not one standing for a Python number (whose
    dtype `where` would give way to the other operand's, as a Python float's does: a
    float64 item of a dict carried at Python's precision would become float32)."""
    if is_variable(v) and getattr(v, "python_scalar", False):
        v = rt.assign(v)
        v.python_scalar = False
    return v


def _number_type(v):
    if type(v) in _NUMBERS:
        return type(v)
    if is_variable(v) and getattr(v, "python_scalar", False):
        return {"b": bool, "f": float}.get(v.dtype.kind, int)
    return None


def _as_graph(v):
    """A tensor for `v` (a Python number as a 0-d tensor of the dtype standing for its type)."""
    if type(v) in _NUMBERS:
        return rt.full([], v, _DTYPES[type(v)])
    if is_variable(v) or isinstance(v, rt.Tensor):
        return v
    return None


def _describe(v) -> str:
    if type(v) in _NUMBERS:
        return f"a Python {type(v).__name__}"
    if is_variable(v) or isinstance(v, rt.Tensor):
        kind = " standing for a Python number" if _number_type(v) else ""
        return f"a tensor of shape {list(v.shape)} and dtype {v.dtype}{kind}"
    return f"a {type(v).__name__}"


def _check_known(found, src, keys, eager="would add it", key=None) -> None:
    """A run-time error (at the user's line) where the key is none of `keys`: where eager
    code raises KeyError too (a read, `key` given), eager's, of the run's key."""

    def unknown():
        at = f"{src.filename}:{src.lineno}" if src else ""
        if key is not None:
            raise_error(KeyError(), at=at, value=rt.reshape(key, []))
            return rt.zeros([], "bool")
        raise_error(KeyError(
            f"{where(src)}: the key computed by the converted code is none of the dict's keys "
            f"{keys}; eager code {eager}, and a converted program keeps the dict's keys"),
            at=at)
        return rt.zeros([], "bool")  # never read: the op above raises

    rt.static.nn.cond(found, lambda: rt.zeros([], "bool"), unknown)


def _refuse(src, why: str, what: str = "an item set under a key", by="computed by the "
            "converted code"):
    raise ConversionError(
        f"{what} {by} ({where(src)}): {why}. Keep the table in a tensor "
        "(`table = rt.to_tensor([...])`, then `table[i] = value`), or give the dict all its "
        "keys first, with items of one type (numbers, or tensors of one dtype and shape).", src)
key_flags.COMPUTED_GET[:] = [lambda obj: keyed_method(obj.get)]  # (`.get` of a computed key)
