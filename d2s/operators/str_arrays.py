"""Lists of Python strs whose length a tensor decides (appended to in one branch of a tensor
`if`, or in a loop whose condition is a tensor): a tensor array of int32 ids into the table of
the strings the trace saw (`runtime/ops/array_number_kinds.STRINGS`). The strings are
trace-time constants, so each has an id; `append`, `insert`, `pop`, `clear`, `len`, `in` of a
str and returning the list follow the run, and the call gives the list of strs back
(`running.Entry.str_lists`). An item read (`names[0]`, a `for` over the list, the value
`pop()` returns) is a `StrItem`: compared with `==`, or returned, it follows the run; its
text, `sep.join(names)` and orders of the strs would be text that exists only when the
program runs: an error at the user's line.

Used by `branch_arrays.py` (`if`), `loop_initial.py` (loops) and `lists.py` (append, insert).
"""
from __future__ import annotations

import operator

import runtime as rt
from runtime.ops.array_number_kinds import STR_DTYPE, STR_ITEM, STRINGS, holds_strs, string_id
from runtime.ops.arrays import array_pack

from ..errors import ConversionError
from . import chosen_text
from .mutation import StateChangeError
from .variables import is_variable, user_origin, where

# the dtype `branch_arrays.array_paths` gives a list of strs made an array
STRS = "strs"


def all_strs(items) -> bool:
    """Whether `items` (a non-empty list) holds Python strs only (or strs only the run
    decides: `is_str`)."""
    return bool(items) and all(is_str(x) for x in items)


def is_str(v) -> bool:
    """Whether `v` is a Python str, or a str only the run decides that has one id (a
    `StrItem` whose strs the trace saw: not a `JoinedStr` or `MadeText`, nor one the run
    may make None)."""
    return type(v) is str or isinstance(v, StrItem) and not isinstance(
        v, (JoinedStr, MadeText)) and not v.may_be_none()


def str_array(items: list):
    """A tensor array of the ids of the strs `items` (`is_str`)."""
    array = empty_str_array()
    for k, text in enumerate(items):
        array = rt.static.array_write(_id_of(text), k, array)
    return array


def _id_of(text):
    return str_id(text) if type(text) is str else text.id


def empty_str_array():
    """An empty tensor array of str ids."""
    array = rt.static.create_array(STR_DTYPE)
    array.python_items = True
    array._static_shape = ()
    return array


def str_id(text: str | None):
    """The 0-d int32 constant of `text`'s id (None has one too: `python_picks`)."""
    return rt.full([], string_id(text), STR_DTYPE)


def held_str(array, value):
    """`value` as the array `array` holds it: a str's id into an array of strs; anything else
    (or a str into an array of other items) is refused at the user's line, as one array holds
    one kind of item. Returns None where neither is a str."""
    str_array_ = holds_strs(array)
    if str_array_ and is_str(value):
        return _id_of(value)
    if not str_array_ and type(value) is not str and not isinstance(value, StrItem):
        return None
    src = user_origin(3)
    what = f"the str {value!r:.40}" if type(value) is str else "a str or None the run " \
        "decides" if isinstance(value, StrItem) else "a tensor" if is_variable(value) else \
        f"the {type(value).__name__} {value!r:.40}"
    held = "Python strs" if str_array_ else (
        "Python numbers" if getattr(array, "python_items", False) else "tensors")
    if str_array_:
        raise StateChangeError(
            f"a list of Python strs that a loop or if whose condition is a tensor grows, and "
            f"here ({where(src)}) it gets {what}: strs cannot be mixed with other values in "
            "such a list (it is a tensor array of the strs' ids, and one array holds one kind "
            "of item). Keep strs and other values in separate lists.", src)
    raise StateChangeError(
        f"strs cannot be appended to a list of {held} in a loop or if whose condition is a "
        f"tensor: here ({where(src)}) it gets {what}. Such a list is a tensor array of its "
        f"{held}, and one array holds one kind of item. Keep strs and other values in "
        "separate lists.", src)


def contains(array, value):
    """`value in array` for an array of strs: a bool graph value (False for a value that is
    not a str, as eager's `in` finds none)."""
    if type(value) is not str:
        return False
    ids = array_pack(array)  # (an empty array: a [0] tensor, any() of it False)
    out = rt.any(rt.equal(ids, str_id(value)))
    out.python_scalar = True  # (`in` gives a Python bool)
    return out


class StrItem:
    """A str read from a list of strs whose length depends on a tensor (`names[-1]`, a `for`
    over it, the value `pop()` returns): which one only the run decides; the program has its
    id. `==` / `!=` with a str (or another such item) is a bool graph value; returned, the
    call gives the str (`tracing`, `running.Entry.str_out`). Any other use (its text, `+`, a
    dict key, its truth, a str method) is refused at the user's line."""

    __slots__ = ("id",)
    run_str = True  # (`chosen_text.is_run_str`)
    what = "a str read from a list of str whose length depends on a tensor"
    advice = ("Return the list (the call gives back the list of strs), or keep an index per "
              "item into a tuple of the texts.")

    def __init__(self, id_):
        self.id = id_

    def __eq__(self, other):
        if isinstance(other, StrItem):
            out = rt.equal(self.id, other.id)
        elif type(other) is str or other is None and self.may_be_none():
            out = rt.equal(self.id, str_id(other))
        else:
            return False  # (a str equals no other value)
        out.python_scalar = True  # (`==` gives a Python bool)
        return out

    def __ne__(self, other):
        same = self.__eq__(other)
        if same is False:
            return True
        out = rt.logical_not(same)
        out.python_scalar = True
        return out

    def may_be_none(self) -> bool:
        """Whether the run may choose None (`python_picks`: `{0: "a", 1: None}[int(t)]`)."""
        return None in (getattr(self, "texts", None) or ()) or getattr(self, "none", False)

    def is_none(self):
        """`item is None`: a bool graph value where the run may choose None, else False."""
        return self.__eq__(None) if self.may_be_none() else False

    def _refuse(self, *args, **kwargs):
        src = user_origin()
        raise ConversionError(
            f"{self.what} ({where(src)}) is used as text: which str it is only the run decides, and converted code has no "
            f"text that exists only when the program runs (compare it with == or return it). "
            f"{self.advice}", src)

    __str__ = __repr__ = __format__ = __hash__ = __bool__ = __len__ = __iter__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __getitem__ = _refuse
    __add__ = __radd__ = __mul__ = __rmul__ = __mod__ = _refuse

    def __getattr__(self, name):
        if name in _STR_METHODS:  # (`s.upper()`: text)
            self._refuse()
        raise AttributeError(name)

    def shown_when_run(self):
        """Its id, which `print` (and an f-string it prints) shows as the str when the
        program runs (`debug_ops.py_print`)."""
        self.id.str_item = True
        return self.id


class JoinedStr(StrItem):
    """`sep.join(names)` of a list of strs whose length depends on a tensor: a copy of its
    array of ids and `sep`. Returned or kept on an object the caller reaches, the call gives
    the text (`running.Entry.joined`); any other use (comparing it too) is refused."""

    __slots__ = ("sep",)
    what = "the text str.join() makes of a list of str whose length depends on a tensor"

    def __init__(self, ids, sep: str):
        super().__init__(ids)
        self.sep = sep

    def __eq__(self, other):
        self._refuse()

    __ne__ = __eq__
    shown_when_run = None  # (its text: refused)

    def length(self):
        """`len()` of the text: the lengths of the strs the array holds (each a str the
        trace saw, `is_str`), summed, and the separators between them; a graph value
        standing for the Python int."""
        lengths = rt.to_tensor([len(t) if type(t) is str else 0 for t in STRINGS], "int64")
        ids = array_pack(self.id)
        n = rt.shape(ids)[0].astype("int64")
        out = rt.gather(lengths, ids.astype("int64")).sum() + rt.maximum(
            n - 1, rt.zeros([], "int64")) * len(self.sep)
        out.python_scalar = True
        return out


class MadeText(StrItem):
    """An f-string of values the converted code computes (`f"loss={loss.item():.3f}"`), made
    by a `py_format` op when the program runs; its id in `STRINGS` (equal texts, equal ids,
    so `==` is eager's). Returned or kept on an object the caller reaches, the call gives
    the text, and `print` shows it; any other use of its text is refused."""

    __slots__ = ()
    what = "an f-string of a value the converted code computes"
    advice = ("Return it, store it or print it (the call gives, and print shows, the text); "
              "for anything else, use the numbers it is made of.")


class ChosenStr(StrItem):
    """A str that the branches of a tensor `if` differ on (`branch_strs`). Where the strs the
    run may choose are known (`texts`), its text follows the run too (`chosen_text`):
    `mode.upper()`, `"[" + mode + "]"`, an f-string, `len(mode)`, `mode.startswith("t")`
    give the result of each of those strs, the program picking the run's (a `ChosenStr`, or
    a bool or int graph value standing for the Python one); where every str gives the same
    value (`len` of "eval" and "test"), that value. Orders (`mode < "m"`) are Python bools
    where every str agrees, else refused: `sorted` and `max` need their truth."""

    __slots__ = ("none", "texts")
    what = "a str chosen by an if whose condition is a tensor"
    advice = ("Return it or print it (the call gives, and print shows, the str); for text, "
              "keep an index into a tuple of the texts, or decide the if with a Python value.")

    def __init__(self, id_, texts=None, none: bool = False):
        super().__init__(id_)
        self.texts = texts  # (the strs the run may choose; None: not known)
        self.none = none  # (where they are not known: whether the run may choose None)

    def __getattr__(self, name):
        if name in _STR_METHODS and self.texts is not None:  # (`mode.upper()`)
            return lambda *args, **kwargs: chosen_text.text_op(
                lambda s, *a: getattr(s, name)(*a, **kwargs), f"str.{name}()", self, *args)
        return super().__getattr__(name)

    def _op(op: str):
        def run(self, *others):
            return chosen_text.text_op(getattr(operator, op), _OP_NAMES.get(op, op), self,
                                       *others)
        return run

    def _rop(op: str):
        def run(self, other):
            return chosen_text.text_op(getattr(operator, op), _OP_NAMES.get(op, op), other,
                                       self)
        return run

    def _same(fn, what: str):
        def run(self, *args):  # (must be a Python value: the one every str gives)
            return chosen_text.same_for_all(lambda s: fn(s, *args), what, self)
        return run

    __add__, __mul__, __mod__, __getitem__ = _op("add"), _op("mul"), _op("mod"), _op("getitem")
    __radd__, __rmul__ = _rop("add"), _rop("mul")
    # (orders: Python's `sorted` / `max` take their truth, so a Python bool, where all agree)
    __lt__, __le__ = _same(operator.lt, "`<`"), _same(operator.le, "`<=`")
    __gt__, __ge__ = _same(operator.gt, "`>`"), _same(operator.ge, "`>=`")
    __len__, __bool__ = _same(len, "len()"), _same(bool, "its truth")
    __contains__ = _same(operator.contains, "`in`")
    __str__, __format__ = _same(str, "str()"), _same(format, "format()")
    del _op, _rop, _same


class PickedStr(ChosenStr):
    """A str (or None) picked from a Python table by a number the converted code computes
    (`LABELS[int(t)]`: `python_picks`); as a `ChosenStr` whose `texts` are the table's."""

    __slots__ = ()
    what = "a str picked from a Python table by a number the converted code computes"
    advice = ("Return it or print it (the call gives, and print shows, the str); for text, "
              "return the index and read the table after the call.")


_OP_NAMES = {"add": "+", "mul": "*", "mod": "%", "getitem": "indexing"}


_STR_METHODS = frozenset(n for n in dir(str) if not n.startswith("_"))
STR_ITEM[0] = StrItem  # (what `runtime.ops.arrays.array_read` gives of an array of strs)


def join(method):
    """`sep.join` (the bound method): of an array of strs, a `JoinedStr` (the text exists
    when the program has run: returned or kept, the call gives it)."""
    def join_(items):
        if is_variable(items) and items.is_array and holds_strs(items):
            return JoinedStr(items[:], method.__self__)
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


def str_output(x):
    """A returned value as the program outputs it: a `StrItem`'s id, marked so the call gives
    back the str (`running.Entry.str_out`), a `JoinedStr`'s ids (`running.Entry.joined`);
    anything else as it is."""
    if isinstance(x, JoinedStr):  # (the ids of the strs, joined by `sep` after the run)
        x.id.joined_by = x.sep
        return x.id
    if not isinstance(x, StrItem):
        return x
    x.id.str_item = True
    return x.id


def item_in(item: StrItem, items):
    """`item in items` of a Python list, tuple or set: whether some str of them (or another
    `StrItem`) is `item`, a bool graph value (False where none is a str)."""
    found = [item == x for x in items if type(x) is str or isinstance(x, StrItem)]
    if not found:
        return False
    out = found[0]
    for same in found[1:]:
        out = rt.logical_or(out, same)
    out.python_scalar = True
    return out


def kept_strs(v, path: str, depth: int = 0):
    """`v`, a value a place the caller reaches holds after the trace, with a `StrItem` there
    as its marked id (`str_output`: the call writes the str back); one inside a list, tuple or
    dict there is refused."""
    if isinstance(v, StrItem) and depth == 0:
        return str_output(v)
    if isinstance(v, StrItem):
        raise ConversionError(
            f"{path} keeps a str read from a list of str whose length depends on a tensor, "
            "inside a container that outlives the call: which str it is only the run decides. "
            "Keep it at the place itself (`obj.last = names[-1]`), or return it.")
    if depth < 6 and type(v) in (list, tuple):
        for i, x in enumerate(v):
            kept_strs(x, f"{path}[{i}]", depth + 1)
    elif depth < 6 and type(v) is dict:
        for k, x in v.items():
            kept_strs(x, f"{path}[{k!r}]", depth + 1)
    return v
