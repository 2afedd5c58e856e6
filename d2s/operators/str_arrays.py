"""Lists of Python strs whose length a tensor decides (appended to in one branch of a tensor
`if`, or in a loop whose condition is a tensor): a tensor array of int32 ids into the table of
the strings the trace saw (`runtime/ops/array_number_kinds.STRINGS`). The strings are
trace-time constants, so each has an id; `append`, `insert`, `pop`, `clear`, `len`, `in` of a
str and returning the list follow the run, and the call gives the list of strs back
(`running.Entry.str_lists`). An item read as a value (`names[0]`, a `for` over the list, the
value `pop()` returns) and `sep.join(names)` would be text that exists only when the program
runs: an error at the user's line.

Used by `branch_arrays.py` (`if`), `loop_initial.py` (loops) and `lists.py` (append, insert).
"""
from __future__ import annotations

import runtime as rt
from runtime.ops.array_number_kinds import STR_DTYPE, holds_strs, string_id
from runtime.ops.arrays import array_pack, array_popped

from ..errors import ConversionError
from .mutation import StateChangeError
from .variables import is_variable, user_origin, where

# the dtype `branch_arrays.array_paths` gives a list of strs made an array
STRS = "strs"


def all_strs(items) -> bool:
    """Whether `items` (a non-empty list) holds Python strs only."""
    return bool(items) and all(type(x) is str for x in items)


def str_array(items: list):
    """A tensor array of the ids of the Python strs `items`."""
    array = empty_str_array()
    for k, text in enumerate(items):
        array = rt.static.array_write(str_id(text), k, array)
    return array


def empty_str_array():
    """An empty tensor array of str ids."""
    array = rt.static.create_array(STR_DTYPE)
    array.python_items = True
    array._static_shape = ()
    return array


def str_id(text: str):
    """The 0-d int32 constant of `text`'s id."""
    return rt.full([], string_id(text), STR_DTYPE)


def held_str(array, value):
    """`value` as the array `array` holds it: a str's id into an array of strs; anything else
    (or a str into an array of other items) is refused at the user's line, as one array holds
    one kind of item. Returns None where neither is a str."""
    str_array_ = holds_strs(array)
    if type(value) is str and str_array_:
        return str_id(value)
    if not str_array_ and type(value) is not str:
        return None
    src = user_origin(3)
    what = f"the str {value!r:.40}" if type(value) is str else (
        "a tensor" if is_variable(value) else f"the {type(value).__name__} {value!r:.40}")
    held = "Python strs" if str_array_ else (
        "Python numbers" if getattr(array, "python_items", False) else "tensors")
    raise StateChangeError(
        f"a list that a loop or if whose condition is a tensor grows is a tensor array of its "
        f"{held}, and here ({where(src)}) it gets {what}: one array holds one kind of item. "
        "Keep strs and other values in separate lists.", src)


def contains(array, value):
    """`value in array` for an array of strs: a bool graph value (False for a value that is
    not a str, as eager's `in` finds none)."""
    if type(value) is not str:
        return False
    ids = array_pack(array)  # (an empty array: a [0] tensor, any() of it False)
    out = rt.any(rt.equal(ids, str_id(value)))
    out.python_scalar = True  # (`in` gives a Python bool)
    return out


def popped(array, index):
    """`array.pop(*index)` of an array of strs: (the shorter array, `UnreadStr`); the item
    is not read (a statement `names.pop()` discards it)."""
    i = index[0] if index else -1
    out, _ = array_popped(array, i, read=False)
    array._inplace_update(out)
    return array, UnreadStr(user_origin(3))


class UnreadStr:
    """The str `pop()` took from a list of strs whose length depends on a tensor: which one
    only the run decides, so any use of it is refused at the user's line (`refuse_item`)."""

    __slots__ = ("src",)

    def __init__(self, src):
        self.src = src

    def _refuse(self, *args, **kwargs):
        use = user_origin()
        raise ConversionError(
            f"a str that pop() ({where(self.src)}) took from a list of str whose length "
            f"depends on a tensor is used ({where(use)}): which str it is only the run "
            "decides, and converted code has no text that exists only when the program runs. "
            "Return the list (the call gives back the list of strs), or keep an index per "
            "item into a tuple of the texts.", origin=use)

    __str__ = __repr__ = __format__ = __hash__ = __bool__ = __len__ = __iter__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __getitem__ = _refuse
    __add__ = __radd__ = __mul__ = __rmul__ = __mod__ = _refuse

    def __getattr__(self, name):
        self._refuse()


def join(method):
    """`sep.join` (the bound method): of an array of strs, refused at the user's line (the
    text would exist only when the program runs)."""
    def join_(items):
        if is_variable(items) and items.is_array and holds_strs(items):
            src = user_origin()
            raise ConversionError(
                f"str.join() ({where(src)}) of a list of str whose length depends on a tensor: "
                "the text would exist only when the program runs. Return the list (the call "
                "gives back the list of strs) and join it after the call.", src)
        return method(items)
    return join_


def not_strs(array, what: str):
    """`array` itself; an array of strs is refused at the user's line where `what` would
    compare or add its items (their ids are no order of the texts)."""
    if is_variable(array) and array.is_array and holds_strs(array):
        src = user_origin()
        raise ConversionError(
            f"{what} ({where(src)}) of a list of str whose length depends on a tensor: which "
            "strs it holds only the run decides, and converted code compares no text when the "
            "program runs. Return the list and do this after the call.", src)
    return array


def ids_equal(array, value):
    """Whether each item of an array of strs is `value`, a bool [n] (False for a value that
    is not a str)."""
    ids = array_pack(array)
    if type(value) is not str:
        return ids < 0  # (no id is: all False)
    return rt.equal(ids, str_id(value))


def lists_equal(a, b):
    """`a == b` where one is an array of strs: equal lengths and items (a Python list of
    other items than strs equals it only where both are empty); None where neither is."""
    if not any(is_variable(x) and x.is_array and holds_strs(x) for x in (a, b)):
        return None
    ids = [array_pack(x) if is_variable(x) and x.is_array and holds_strs(x) else x
           for x in (a, b)]
    for k, x in enumerate(ids):
        if type(x) is list and all(type(v) is str for v in x):
            ids[k] = rt.to_tensor([string_id(v) for v in x], STR_DTYPE).reshape([len(x)])
        elif not is_variable(x):
            return False  # (not a list, or a list holding other items than strs)
    x, y = ids
    if x.dtype != y.dtype:  # (an array of other items)
        return False
    same = rt.static.nn.cond(rt.shape(x)[0] == rt.shape(y)[0],
                             lambda: rt.all(rt.equal(x, y)), lambda: rt.full([], False, "bool"))
    same.python_scalar = True
    return same
