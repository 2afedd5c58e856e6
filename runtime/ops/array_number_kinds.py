"""Tensor arrays of Python numbers of several types, each item keeping its own.

A list of Python numbers that a program grows (d2s: appended in a graph loop, or by one branch
of a tensor `if`) is a tensor array. Numbers of one type are held in its dtype (bool, int64,
float64). Where ints, floats and bools meet in one list (`lengths = [0]`, then
`lengths.append(1.5)`), each item is a float64 pair `[value, kind]` (`KINDS`): the value,
exact for every float and every int up to 2**53, and its Python type. Array ops move the pairs
as they move any item (append, insert, pop, slicing, `+`, reversed), so each item keeps its
type; `array_read` gives the value as a number whose type the run decides (`float_when`,
`bool_when`), and d2s gives each returned item eager's type.

>>> import numpy as np
>>> [number_of_pair(p) for p in (np.array([2.0, 0.0]), np.array([1.5, 1.0]),
...                              np.array([1.0, 2.0]))]
[2, 1.5, True]
"""
from __future__ import annotations

import numpy as np

from .. import core
from . import combine, logic, math, registry

KINDS = {int: 0, float: 1, bool: 2}  # the kind entry of a pair, per Python type
PAIR = (2,)  # an item's shape


# A list of Python strs that a program grows is a tensor array of int32 ids into `STRINGS`, the
# table of the (trace-time constant) strings programs put in such lists; d2s gives a returned
# array back as the list of strs. (int32: the dtype no list of Python numbers takes.)
STR_DTYPE = "int32"
STRINGS: list = []
_STRING_IDS: dict = {}


# what an item read from an array of strs is (d2s sets it: a value standing for the str, whose
# id the program has); None: reading one is a TypeError
STR_ITEM: list = [None]
# `arr[i]` of a tensor array, when set (d2s: an index past the end that a `try` catches):
# `ITEM_READ[0](array, i, array_read)`
ITEM_READ: list = [None]


def string_id(text: str) -> int:
    """The id of `text` in `STRINGS` (added on first use)."""
    i = _STRING_IDS.get(text)
    if i is None:
        i = _STRING_IDS[text] = len(STRINGS)
        STRINGS.append(text)
    return i


def holds_strs(array) -> bool:
    """Whether a static tensor array stands for a list of Python strs (ids into `STRINGS`)."""
    return bool(getattr(array, "python_items", False)) and getattr(
        array, "dtype", None) is not None and array.dtype.name == STR_DTYPE


def holds_python_numbers(array) -> bool:
    """Whether a static tensor array stands for a list of Python numbers (d2s marks a list of
    them that a graph loop or a tensor `if` grows: `python_items`, `number_sums`)."""
    return getattr(array, "python_items", False) or getattr(array, "number_sums", False)


def holds_number_kinds(array) -> bool:
    """Whether a static tensor array holds Python numbers as `[value, kind]` pairs."""
    return bool(getattr(array, "python_items", False)) and getattr(
        array, "_static_shape", None) == PAIR and array.dtype.name == "float64"


def needs_pairs(array, value) -> bool:
    """Whether the Python number `value` (or a 0-d value standing for one) goes into the array
    of Python numbers `array` as a `[value, kind]` pair: it holds pairs, or numbers of another
    type than `value`'s (an int beside floats, a float or a bool beside ints), or `value` is a
    number whose type the run decides (`float_when`, `bool_when`)."""
    if not getattr(array, "python_items", False) or holds_tensor_items(array):
        return False  # (beside tensors: `[value, code]` items)
    if type(value) in KINDS:
        kind = type(value)
    elif getattr(value, "python_scalar", False) and getattr(value, "kind", "") != "array" \
            and not tuple(value.shape):
        if value.float_when is not None or value.bool_when is not None:
            return True
        kind = _kind_of(value.dtype)
    else:
        return False
    return holds_number_kinds(array) or kind is not _kind_of(array.dtype)


def _kind_of(dtype):
    return bool if dtype.name == "bool" else float if dtype.is_floating else int


def number_pair(b, x):
    """The pair `[value, kind]` of the Python number `x` (or a 0-d value standing for one,
    whose type its dtype gives, or the run: `float_when`, `bool_when`)."""
    if type(x) in KINDS:
        return b.variable_of(_constant([float(x), float(KINDS[type(x)])]))
    x = b.variable_of(x)
    if tuple(x.shape) == PAIR:  # (a pair already: an item of another such array)
        return x
    kind = math.cast(_flag(x, "bool_when", x.dtype.name == "bool"), "float64") * 2.0 + \
        math.cast(_flag(x, "float_when", x.dtype.is_floating), "float64")
    if x.dtype.is_floating:  # (a bool flag on a float: not also a float)
        kind = logic.where(_flag(x, "bool_when", False), _full(2.0), kind)
    return combine.stack([math.cast(x, "float64"), kind])


def pair_value(pair):
    """The number a pair (read from the array) stands for: its float64 value, a Python float
    where the run says so (`float_when`), a bool where it says that (`bool_when`)."""
    value, kind = pair[0], pair[1]
    value.python_scalar = True
    value.float_when = logic.equal(kind, _full(1.0))
    value.bool_when = logic.equal(kind, _full(2.0))
    return value


def number_of_pair(pair):
    """The Python number of a pair's array (a program output's item)."""
    value, kind = float(pair[0]), int(pair[1])
    return bool(value) if kind == 2 else value if kind == 1 else int(value)


def _pairs_kernel(xp, arr, kind=0):
    return [xp.stack([xp.asarray(a, "float64"), xp.asarray(kind, "float64")]) for a in arr]


# an array of numbers of one type as pairs of that kind (d2s: a list of ints that gets a float)
AS_PAIRS = registry.register(
    "array_number_pairs", kernel=_pairs_kernel, infer=lambda *a, **k: None, nondiff=True,
    amp="keep", doc="The items of arr (numbers of one Python type) as [value, kind] pairs.")


def _flag(x, name: str, default: bool):
    flag = getattr(x, name, None)
    return _full(default, "bool") if flag is None else flag


def _full(value, dtype="float64"):
    b = registry.STATE.builder
    return b.variable_of(_constant(value, dtype))


def _constant(value, dtype="float64"):
    return core.constant(np.asarray(value, dtype))


# A list of Python numbers of one type that also gets 0-d tensors of one dtype (d2s: `out =
# [0.0]`, then `out.append(x[i] * 2)` in a graph loop) is a tensor array of that dtype whose
# items are `[value, is_tensor]` pairs (`python_items`, element shape `PAIR`, a dtype no
# array of Python numbers takes): the Python numbers are floats beside float tensors, ints
# beside int64 ones, bools beside bool ones, each exact in the dtype (d2s checks); an item
# read is the tensor on the runs where it is one, and the number (`number_when`,
# `number_value`) where it is that. The second entry is the item's code (`ITEM_CODES`): 1 a
# tensor, 0 a Python number of the dtype's number type, `INT_CODE` / `BOOL_CODE` a Python int
# or bool of another type than that (a loop counter beside float32 tensors), which the
# returned list and `sum` give as eager's; an item read that is one is refused on that run
# (`FOREIGN_CHECK`: the read gives numbers of the dtype's type only).
TENSOR_ITEM_DTYPES = ("float32", "float16", "int64", "bool")
# what checks, when the program runs, that every item of such a list is a tensor (d2s sets
# it: `rt.stack(out)` raises eager's error where one is a Python number); None: refused
ITEMS_CHECK: list = [None]
TENSOR_CODE, INT_CODE, BOOL_CODE = 1, 2, 3
# what raises, when the program runs, where an item read from such a list is a Python number of
# another type than the dtype's (`INT_CODE`, `BOOL_CODE`): called with the item's code (d2s
# sets it; None: no check)
FOREIGN_CHECK: list = [None]
# what makes the `[value, code]` item of a dtype for a value (d2s sets it: `tensor_pair`
# gives its answer, a graph value standing for a Python number included); None: `tensor_pair`
ITEM_OF: list = [None]
# what gives the array of tensor items that an array of tensors becomes where `lst[i] = v`
# puts a Python number into it (d2s sets it: refused where it cannot); None: cast as before
NUMBER_INTO_TENSORS: list = [None]


def number_into_tensors(array, value) -> None:
    """Where `array[i] = value` puts a Python number (or a 0-d value standing for one)
    into an array of tensors: `array` made one of tensor items (`NUMBER_INTO_TENSORS`)."""
    if NUMBER_INTO_TENSORS[0] is not None and not holds_python_numbers(array) and (
            type(value) in KINDS or getattr(value, "kind", "") == "tensor" and getattr(
                value, "python_scalar", False) and not tuple(value.shape) and getattr(
                value, "number_when", None) is None):
        array._inplace_update(NUMBER_INTO_TENSORS[0](array, value))
        array.python_items = True


def item_code(kind: type, dtype):
    """The code of a Python number of type `kind` in an array of tensor items of `dtype`: 0
    for the dtype's number type, `INT_CODE` for an int and `BOOL_CODE` for a bool beside
    float tensors, `BOOL_CODE` for a bool beside int64 ones; None where the array cannot hold
    it (a float beside int64 tensors, anything but bools beside bool ones)."""
    if kind is number_type(dtype):
        return 0
    if dtype.name == "bool" or kind is float:
        return None
    return {int: INT_CODE, bool: BOOL_CODE}[kind] if dtype.is_floating else BOOL_CODE


def code_type(code: int, dtype) -> type:
    """The Python type of a number item of code `code` in such an array of `dtype`."""
    return {INT_CODE: int, BOOL_CODE: bool}.get(int(code), None) or number_type_np(dtype)


def holds_tensor_items(array) -> bool:
    """Whether a static tensor array stands for a list of Python numbers and tensors."""
    return bool(getattr(array, "python_items", False)) and getattr(
        array, "_static_shape", None) == PAIR and array.dtype.name in TENSOR_ITEM_DTYPES


def joinable(array) -> None:
    """Refuse to stack / pack an array of tensor items (its pairs are no list's values)."""
    if holds_tensor_items(array):
        raise TypeError("this use of a list holding Python numbers and tensors whose length "
                        "depends on a tensor is not supported (its items are read one by "
                        "one only): start the list with a tensor (`[rt.to_tensor(0.0)]`)")


def number_type(dtype) -> type:
    """The Python type of the numbers an array of tensor items of `dtype` holds."""
    return bool if dtype.name == "bool" else float if dtype.is_floating else int


def tensor_item(pair):
    """The item a `[value, is_tensor]` pair (read from the array) stands for: the tensor
    `pair[0]`, and on the runs where it is a Python number that number (`number_when`,
    `number_value` at Python's precision)."""
    value, flag = pair[0], pair[1]
    kind = number_type(pair.dtype)
    if FOREIGN_CHECK[0] is not None and pair.dtype.name != "bool":
        FOREIGN_CHECK[0](flag, pair.dtype)  # (a number of another type on this run: refused)
    number = math.cast(value, {bool: "bool", int: "int64", float: "float64"}[kind])
    if number is value:  # (a value of its own: the item stays a tensor)
        number = math.assign(value)
    number.python_scalar = True
    value.number_when = logic.not_equal(flag, _full(TENSOR_CODE, pair.dtype.name))
    value.number_value = number
    return value


def tensor_pair(x, like):
    """The `[value, is_tensor]` item of `like`'s dtype for `x` (a Python number of its number
    type, exact in the dtype, or a 0-d tensor of the dtype); anything else refused."""
    if ITEM_OF[0] is not None:  # (d2s: also a loop counter, checked exact when run)
        return ITEM_OF[0](like.dtype, x)
    dtype = like.dtype
    b = registry.STATE.builder
    code = item_code(type(x), dtype) if type(x) in KINDS else None
    if code is not None and np.asarray(x).astype(dtype.name).item() == x:
        return b.variable_of(_constant([x, code], dtype.name))
    if getattr(x, "kind", "") == "tensor" and not tuple(x.shape) and x.dtype == dtype and \
            not getattr(x, "python_scalar", False) and getattr(x, "number_when", None) is None:
        return combine.stack([x, b.variable_of(_constant(1, dtype.name))])
    joinable(like)  # (anything else: refused)


def number_type_np(dtype) -> type:
    """`number_type` of a NumPy dtype (a program output's)."""
    return bool if dtype.kind == "b" else float if dtype.kind == "f" else int


def _tensor_items_kernel(xp, arr, dtype="float32", code=0, codes=None):
    if codes is not None:  # (`[value, kind]` pairs: each kind's code, `KINDS` order)
        return [xp.stack([xp.asarray(a[0]).astype(dtype),
                          xp.asarray(codes[int(a[1])], dtype)]) for a in arr]
    return [xp.stack([xp.asarray(a).astype(dtype), xp.asarray(code, dtype)]) for a in arr]


# an array of Python numbers as `[value, False]` items of `dtype` (d2s: a list of them that
# gets tensors of `dtype`)
AS_TENSOR_ITEMS = registry.register(
    "array_tensor_items", kernel=_tensor_items_kernel, infer=lambda *a, **k: None,
    nondiff=True, amp="keep",
    doc="The items of arr (Python numbers, or [value, kind] pairs) as [value, code] items "
        "of dtype (code: the number's, or codes[kind] of a pair's).")
