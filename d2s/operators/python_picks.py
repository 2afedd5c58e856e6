"""A Python constant table indexed by a number the program computes: `LABELS[int(t)]`,
`_CHARS[i]` over a tensor's ids, `{0: "bg", 1: "fg"}[int(t)]`. Which item eager code gets
only the run decides, so the program picks it from a constant table of the items:

- strs (and None beside them): a `PickedStr` (a `ChosenStr`), the run's id into the table
  of strs (`str_arrays`); `==`, `in`, `is None`, text made of it, returning it and storing
  it on an object the caller reaches follow the run (`branch_strs`, `chosen_text`);
- Python numbers of one type (ints, floats or bools): a graph value standing for that
  Python number (`python_scalar`: returned as eager's int, float or bool);
- tensors of one dtype and shape: the run's tensor (a `switch_case` over them: gradients
  reach the item picked only, as eager's).

A list, tuple or str is indexed as Python does (negative indices count from the end; one
out of range raises eager's `IndexError` when the program runs); a dict with int keys finds
the run's key (a missing one: eager's `KeyError` when the program runs). Other items (a mix
of types, other objects) keep Python's refusal: `value_errors.container_index`'s error at
the user's line. A dict indexed by a str (or None) the run chooses among known strs
(`SCALES[label]`, `label` picked as above or by a tensor `if`) picks the same way (a str
that is no key: eager's `KeyError` when the program runs). `obj[i]` of anything else is
Python's.

    labels[int(x.argmax())]   ->   _d2s.getitem_(labels, _d2s.int_(x.argmax()))
"""
from __future__ import annotations

import runtime as rt
from runtime.ops.array_number_kinds import STR_DTYPE, string_id

from . import key_flags
from .run_raises import raise_when as _raise_when
from .str_arrays import ChosenStr, PickedStr, str_id
from .variables import is_variable

# item type -> the dtype of the graph value standing for it (Python's int and float hold
# what int64 and float64 hold: `builtins._number`)
_NUMBER_DTYPES = {int: "int64", float: "float64", bool: "bool"}
_SEQUENCES = (list, tuple, str)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def getitem_(obj, index):
    """`obj[index]` (see the module)."""
    if type(obj) is dict and isinstance(index, ChosenStr) and index.texts is not None:
        return _by_str(obj, index)
    if not (is_variable(index) and type(obj) in (*_SEQUENCES, dict)) or index.is_array or \
            index.dtype.kind not in "iub" or any(d != 1 for d in index.shape):
        return obj[index]
    items = _table(obj)
    pick = None if items is None else _picker(items)
    if pick is None:
        return obj[index]  # (Python's refusal: `value_errors.container_index`)
    i = rt.reshape(index, []).astype("int64")
    position = _position(obj, i)
    return pick(position)


NOT_PICKED = object()  # (`get_` of a table it does not pick from)


def get_(obj, key, default=None):
    """`obj.get(key, default)` of a dict and a key the run decides (a number the program
    computes among int keys, or a str picked among known strs): the run's item, `default`
    where the key is none of the dict's; NOT_PICKED where the items and `default` are not
    one kind a program picks among (`computed_keys` then decides)."""
    if type(obj) is not dict or key_flags.flags_of(obj) or any(is_variable(k) for k in obj):
        return NOT_PICKED
    if isinstance(key, ChosenStr) and key.texts is not None:
        keys = [t for t in key.texts if t in obj]
        same = rt.equal(rt.to_tensor([string_id(t) for t in keys] or [0], STR_DTYPE), key.id)
    elif is_variable(key) and not key.is_array and key.dtype.kind in "iub" and not any(
            d != 1 for d in key.shape) and obj and all(type(k) in (int, bool) for k in obj):
        keys = list(obj)
        i = rt.reshape(key, []).astype("int64")
        same = rt.equal(rt.to_tensor([int(k) for k in keys], "int64"), i)
    else:
        return NOT_PICKED
    pick = _picker([obj[k] for k in keys] + [default])
    if not keys:
        return default if pick is not None else NOT_PICKED
    found, first = rt.any(same), rt.argmax(same.astype("int32"))
    if pick is None and default is None and (pick := _picker([obj[k] for k in keys])) and \
            all(type(obj[k]) in _NUMBER_DTYPES or is_variable(obj[k]) for k in keys):
        out = pick(first)  # (numbers or tensors, None where the key is none of the dict's:
        out.none_when = rt.logical_not(found)  # `none_or_tensor`)
        return out
    if pick is None:
        return NOT_PICKED
    return pick(rt.where(found, first, rt.full([], len(keys), "int64")))


def _by_str(obj: dict, key: ChosenStr):
    """`obj[key]` of a str (or None) the run chooses among `key.texts`: the item of the
    run's, eager's `KeyError` (raised when the program runs) where it is not a key."""
    present = [t for t in key.texts if t in obj]
    pick = _picker([obj[t] for t in present]) if present else None
    if pick is None or key_flags.flags_of(obj):  # (keys present on some runs: refused)
        return obj[key]  # (a str the run decides as a key: refused at the line)
    for text in key.texts:
        if text not in obj:
            _raise_when(rt.equal(key.id, str_id(text)), KeyError(text))
    ids = rt.to_tensor([string_id(t) for t in present], STR_DTYPE)
    return pick(rt.argmax(rt.equal(ids, key.id).astype("int32")))


def _table(obj):
    """The items `obj` may give (a dict's values in key order), or None where a dict has a
    key other than an int, or keys present on some runs only (`key_flags`)."""
    if type(obj) is not dict:
        return list(obj)
    if not obj or not all(type(k) in (int, bool) for k in obj) or key_flags.flags_of(obj):
        return None
    return list(obj.values())


def _picker(items: list):
    """A function of the run's position (a 0-d int64 graph value) giving the item eager
    code gets there, or None where the items are not one kind a program can pick among."""
    if not items:
        return lambda position: None  # (never reached: the range check raises first)
    kinds = {type(v) for v in items}
    if kinds <= {str, type(None)} and str in kinds or kinds == {type(None)}:
        texts = tuple(dict.fromkeys(items))
        ids = rt.to_tensor([string_id(v) for v in items], STR_DTYPE)
        return lambda position: PickedStr(rt.gather(ids, position), texts)
    if len(kinds) == 1 and (kind := kinds.pop()) in _NUMBER_DTYPES and not (
            kind is int and not all(_INT64[0] <= v <= _INT64[1] for v in items)):
        table = rt.to_tensor(items, _NUMBER_DTYPES[kind])

        def number(position):
            out = rt.gather(table, position)
            out.python_scalar = True
            return out
        return number
    if all(is_variable(v) or isinstance(v, rt.Tensor) for v in items) and len(
            {(v.dtype, tuple(v.shape), _marks(v)) for v in items}) == 1 and not any(
                _marks(v) is None for v in items):
        return lambda position: _switch(items, position)
    return None


def _marks(v):
    """What a graph value stands for beside a tensor (a Python number, a NumPy value), as
    the picked item keeps it; None for one no pick keeps (an array, None on some runs)."""
    if not is_variable(v):
        return ()
    if v.is_array or v.none_when is not None or v.number_when is not None:
        return None
    return tuple(m for m in _KEPT if getattr(v, m, False))


_KEPT = ("python_scalar", "numpy_array")


def _switch(items: list, position):
    """The run's item: a `switch_case` (gradients reach it only, the others' `.grad` stays
    None as eager's; `switch.call_item` does the same for callables)."""
    out = rt.static.nn.switch_case(
        position, {k: (lambda v=v: rt.assign(v)) for k, v in enumerate(items)})
    for mark in _marks(items[0]):
        setattr(out, mark, True)
    return out


def _position(obj, i):
    """The position in `_table(obj)` of the run's index `i`, with eager's error (raised
    when the program runs) where there is none."""
    if type(obj) is dict:
        keys = rt.to_tensor([int(k) for k in obj], "int64")
        same = rt.equal(keys, i)
        _raise_when(rt.logical_not(rt.any(same)), KeyError(), value=i)  # (eager's: the
        # run's key)
        return rt.argmax(same.astype("int32"))
    n = len(obj)
    what = {list: "list", tuple: "tuple", str: "string"}[type(obj)]
    _raise_when(rt.logical_or(i < -n, i >= n), IndexError(f"{what} index out of range"))
    return rt.where(i < 0, i + n, i)
