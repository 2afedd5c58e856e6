"""Lists of Python numbers that also get tensors where a tensor decides their length (issue
35): `out = [0.0]`, then `out.append(x[i] * 2)` in a loop over a tensor range, or under a
tensor `if`. Eager's list holds the float 0.0 and float32 tensors; the program's is a tensor
array of float32 whose items are `[value, is_tensor]` pairs
(`runtime/ops/array_number_kinds.holds_tensor_items`): an item read (`out[0]`, `out[-1]`, a
`for` over it, `pop`) is the tensor on the runs where it is one and eager's Python number on
the others (`Variable.number_when`), and a returned list gives each item as eager has it.

The Python numbers are of the type Python's arithmetic gives beside the tensors: floats
beside float32 / float16 tensors, ints beside int64 ones, bools beside bool ones, each exact
in the tensors' dtype (a float the dtype cannot hold is refused when the program runs).
Anything else (an int beside float tensors, tensors of two dtypes, a tensor of rank 1) is
refused at the user's line.

    out = [0.0]                         array<f32[2]>: [[0.0, 0]]
    out.append(x[i] * 2)                array_write(stack([x[i] * 2, 1]), len(out), out)
    out[-1]                             read[0], number_when: not read[1]
"""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor
from runtime.ops.array_joins import as_tensor_items, number_codes, tensors_as_items
from runtime.ops.array_number_kinds import (
    FOREIGN_CHECK,
    INT_CODE,
    ITEM_OF,
    ITEMS_CHECK,
    NUMBER_INTO_TENSORS,
    PAIR,
    TENSOR_ITEM_DTYPES,
    holds_number_kinds,
    holds_strs,
    holds_tensor_items,
    item_code,
    number_type,
)
from runtime.ops.arrays import array_pack
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from .exceptions import short_name
from .mutation import StateChangeError
from .variables import is_variable, user_origin, where


class TensorItems:
    """What `branch_arrays.array_paths` gives for a list that is an array of Python numbers
    and tensors of `dtype` on one path (`array_at` makes the other path's list one)."""

    def __init__(self, dtype):
        self.dtype = rt.static.create_array(dtype).dtype if isinstance(dtype, str) else dtype

    def __eq__(self, other):
        return isinstance(other, TensorItems) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("tensor items", self.dtype.name))


def is_tensor_item(x) -> bool:
    """A tensor (not a value standing for a Python number) that such an array may hold."""
    if is_variable(x):
        return not x.is_array and not getattr(x, "python_scalar", False) and getattr(
            x, "number_when", None) is None and x.dtype.name in TENSOR_ITEM_DTYPES
    return is_tensor(x) and x.dtype.name in TENSOR_ITEM_DTYPES


def _numbers_array(array) -> bool:
    return bool(getattr(array, "python_items", False)) and not holds_strs(array) and not \
        holds_tensor_items(array)


def held(target, value, depth: int = 4):
    """(the array to write into, the item as it holds it) for `value` appended to the tensor
    array `target`, where `target` holds tensor items or is an array of Python numbers that
    gets a tensor; None otherwise."""
    if not (is_variable(target) and target.is_array):
        return None
    if holds_tensor_items(target):
        return target, item_of(target.dtype, value, depth + 1)
    either = _number_or_tensor(value)
    if _plain_tensors(target) and _python_number(value) and not either and not (
            _tensors_array(target) and _code_of(value, target.dtype) is not None):
        _refuse_number_beside_tensors(target, value, depth + 1)
    if _tensors_array(target) and (either or _python_number(value)):
        return converted(target, target.dtype), item_of(target.dtype, value, depth + 1)
    if either and not _numbers_array(target):
        _refuse_either(target, value, depth + 1)
    if not (_numbers_array(target) and (is_tensor_item(value) or either)):
        return None
    _numbers_fit(target, value, depth + 1)
    array = converted(target, value.dtype)
    return array, item_of(array.dtype, value, depth + 1)


def _python_number(x) -> bool:
    """A Python number, or a graph value standing for one (a graph loop's counter)."""
    return type(x) in (bool, int, float) or is_variable(x) and getattr(
        x, "python_scalar", False) and not x.is_array and not tuple(x.shape)


def _code_of(x, dtype):
    """The item code (`item_code`: 0 for the type Python's arithmetic gives beside tensors of
    `dtype`, another for an int or a bool beside float tensors) of the Python number `x` (or
    the graph value standing for one, exact: `item_of`); None where such an array cannot
    hold it."""
    if not is_variable(x):
        return item_code(type(x), dtype) if type(x) in (bool, int, float) else None
    if x.float_when is not None or x.bool_when is not None or getattr(
            x, "number_type_unknown", False):
        return None  # (a number whose type the run decides)
    return item_code({"b": bool, "f": float}.get(x.dtype.kind, int), dtype)


def _refuse_number_beside_tensors(array, value, depth: int) -> None:
    src = user_origin(depth)
    dtype = array.dtype
    what = type(value).__name__ if not is_variable(value) else {
        "b": "bool", "f": "float"}.get(value.dtype.kind, "int")
    holds = (f"0-d tensors of {dtype.name} and Python {number_type(dtype).__name__}s" + (
        " (and ints and bools)" if dtype.is_floating else " (and bools)" if dtype.name ==
        "int64" else "")) + " only" if _tensors_array(array) else (
        f"its tensors only (Python numbers are kept beside 0-d tensors of "
        f"{', '.join(TENSOR_ITEM_DTYPES)} only)")
    raise StateChangeError(
        f"a list of tensors of {dtype.name} whose length a tensor decides is a tensor array of "
        f"{dtype.name}, and here ({where(src)}) it gets a Python {what}: eager's list keeps "
        f"the {what} beside the tensors, and the array holds {holds}. Append a tensor "
        f"(`rt.to_tensor(v, dtype='{dtype.name}')`), or keep the numbers in a separate list.",
        src)


def _plain_tensors(array) -> bool:
    """An array of tensors (of any dtype and shape), not of Python numbers."""
    return is_variable(array) and array.is_array and not getattr(
        array, "python_items", False) and not getattr(array, "number_sums", False)


def number_into_tensors(array, value):
    """`NUMBER_INTO_TENSORS`: the array of tensors `array` that `value` (a Python number)
    is put into by `lst[i] = v` as one of tensor items; refused at the user's line where such
    an array cannot hold it."""
    if _tensors_array(array) and _code_of(value, array.dtype) is not None:
        return converted(array, array.dtype)
    _refuse_number_beside_tensors(array, value, 4)


def _tensors_array(array) -> bool:
    """An array of 0-d tensors of a dtype an array of tensor items takes."""
    return is_variable(array) and array.is_array and not getattr(
        array, "python_items", False) and not getattr(array, "number_sums", False) and \
        array.static_shape == () and array.dtype.name in TENSOR_ITEM_DTYPES


def converted(array, dtype):
    """The array of Python numbers `array` as an array of tensor items of `dtype`, its
    numbers checked to be exact in `dtype` when the program runs (eager's `[0.1]` keeps the
    float, which float32 cannot hold)."""
    if _tensors_array(array) and array.dtype == dtype:  # (tensors: `[value, True]` items)
        return tensors_as_items(array)
    out = as_tensor_items(array, dtype)
    if out is array or array.dtype == out.dtype:
        return out
    numbers = array_pack(array)
    kept = rt.cast(rt.cast(numbers, out.dtype), numbers.dtype)
    _raise_when(rt.logical_not(rt.all(kept == numbers)), ValueError(
        f"a list of Python numbers whose length a tensor decides gets tensors of "
        f"{out.dtype.name}: it is a tensor array of {out.dtype.name}, which cannot hold one "
        "of its numbers exactly (eager's list keeps the Python number). Start the list with "
        "numbers exact in that dtype (`0.5`, not `0.1`), or with a tensor "
        "(`rt.to_tensor(0.1)`)"))
    return out


def _numbers_fit(array, value, depth: int) -> None:
    """An array of Python numbers that gets a tensor: its numbers must be of the type
    Python's arithmetic gives beside the tensor (floats beside float tensors)."""
    held = "numbers of several types" if holds_number_kinds(array) else \
        f"{number_type(array.dtype).__name__}s"
    want = number_type(value.dtype)
    if number_codes(array, value.dtype) is not None and not getattr(
            array, "mixed_numbers", False):  # (ints beside float tensors: `INT_CODE`)
        return
    src = user_origin(depth)
    raise StateChangeError(
        f"a list of Python {held} that a loop or if whose condition is a tensor grows is a "
        f"tensor array of {array.dtype.name}, and here ({where(src)}) it gets a tensor of "
        f"{value.dtype.name}: one "
        f"array holds Python {want.__name__}s beside such tensors, not {held}, and eager's "
        f"list keeps each item's type. Start the list with {want.__name__}s ("
        f"{_example(want)}), or with a tensor (`[rt.to_tensor(0.0)]`).", src)


def _example(kind) -> str:
    return {float: "`[0.0]` for `[0]`", int: "`[0]`", bool: "`[False]`"}[kind]


def item_of(dtype, value, depth: int = 3):
    """The `[value, is_tensor]` item of `dtype` for `value`: a 0-d tensor of `dtype`, or a
    Python number of the array's number type (exact in `dtype`), or a graph value standing
    for one of `dtype` (a loop counter into an int64 array)."""
    kind = number_type(dtype)
    if is_tensor_item(value) and value.dtype == dtype and not tuple(value.shape):
        return rt.stack([value, rt.full([], 1, dtype)])
    code = _code_of(value, dtype) if _python_number(value) else None
    if code is not None and not is_variable(value) and _exact(value, dtype):
        return rt.to_tensor([value, code], dtype=dtype.name)
    if code and is_variable(value) and not tuple(value.shape):  # (a loop counter: an int)
        return rt.stack([_exactly(value, dtype), rt.full([], code, dtype)])
    if _number_or_tensor(value) and value.dtype == dtype and not tuple(value.shape) and \
            value.number_value.dtype.name == _WIDE[kind]:
        _raise_when(rt.logical_and(value.number_when, rt.cast(rt.cast(
            value.number_value, dtype), value.number_value.dtype) != value.number_value),
            ValueError(f"a Python {kind.__name__} that is no {dtype.name} exactly is put into "
                       f"a list of Python {kind.__name__}s and tensors of {dtype.name} whose "
                       f"length a tensor decides: it is a tensor array of {dtype.name}, "
                       "which cannot hold it (eager's list keeps the number). Use numbers "
                       f"exact in {dtype.name} (`0.5`, not `0.1`), or a tensor on every path"))
        flag = rt.cast(rt.logical_not(value.number_when), dtype)
        return rt.stack([rt.assign(value), flag])
    if is_variable(value) and getattr(value, "python_scalar", False) and not value.is_array \
            and not tuple(value.shape) and value.dtype == dtype and value.float_when is None \
            and value.bool_when is None and getattr(value, "number_when", None) is None:
        return rt.stack([value, rt.full([], 0, dtype)])
    _refuse_item(dtype, value, depth + 1)


_WIDE = {bool: "bool", int: "int64", float: "float64"}


def _exactly(value, dtype):
    """The graph value `value` (standing for a Python int or bool) cast to `dtype`, checked
    when the program runs to be exact there (an int over 2**24 is no float32)."""
    out = rt.cast(value, dtype)
    if value.dtype.name != "bool":
        _raise_when(rt.cast(out, value.dtype) != value, ValueError(
            f"a Python {_KIND_NAME.get(value.dtype.kind, 'int')} that is no {dtype.name} "
            f"exactly is put into a list holding tensors of {dtype.name} whose length a "
            f"tensor decides: it is a tensor array of {dtype.name}, which cannot hold it "
            "(eager's list keeps the number). Append a tensor, or keep such numbers in a "
            "separate list"), depth=4)
    return out


_KIND_NAME = {"b": "bool", "f": "float"}


def _number_or_tensor(x) -> bool:
    """A value that is a Python number on some runs and a tensor on others (`b = 1`, then
    `b = x.mean()` under a tensor `if`: `number_or_tensor`)."""
    return is_variable(x) and getattr(x, "number_when", None) is not None and not x.is_array


def _refuse_either(target, value, depth: int) -> None:
    src = user_origin(depth)
    raise StateChangeError(
        f"a value that is a Python number on some runs and a tensor on others (a tensor `if` "
        f"chose) is appended to a list of tensors of {target.dtype.name} whose length a "
        f"tensor decides ({where(src)}): the array would give the number back as a tensor. "
        "Make it a tensor on every path (`rt.to_tensor(...)`), or start the list with a "
        "Python number of its type (`[0.0]`).", src)


def _exact(value, dtype) -> bool:
    import numpy as np
    return np.asarray(value).astype(dtype.name).item() == value


def _refuse_item(dtype, value, depth: int) -> None:
    src = user_origin(depth)
    kind = number_type(dtype).__name__
    if is_variable(value) or is_tensor(value):
        what = (f"a tensor of {value.dtype.name} and shape {list(value.shape)}" if not
                getattr(value, "python_scalar", False) else
                f"a value standing for a Python number of {value.dtype.name}")
    else:
        what = f"the {type(value).__name__} {value!r}"
    raise StateChangeError(
        f"a list that holds Python {kind}s and tensors of {dtype.name} and whose length a "
        f"tensor decides is a tensor array of {dtype.name}, and here ({where(src)}) it gets "
        f"{what}: it holds Python {kind}s exact in {dtype.name} and 0-d tensors of "
        f"{dtype.name} only, as eager's list would keep each item. Append a tensor "
        f"(`rt.to_tensor(v, dtype='{dtype.name}')`), or keep other values in a separate "
        "list.", src)


def tensor_items_array(items: list, dtype):
    """A tensor array of the Python numbers and 0-d tensors `items` (a list a tensor `if` or
    a graph loop makes an array of them)."""
    array = rt.static.create_array(dtype)
    array.python_items = True
    array._static_shape = PAIR
    for k, x in enumerate(items):
        array = rt.static.array_write(item_of(array.dtype, x), k, array)
    return array


def items_dtype(items: list):
    """The dtype of the tensors among Python numbers `items` where such a list is an array
    of tensor items (numbers of the tensors' number type, 0-d tensors of one dtype); None
    otherwise."""
    tensors = [x for x in items if is_tensor_item(x) and not tuple(x.shape)]
    numbers = [x for x in items if _python_number(x) and not _number_or_tensor(x)]
    if not tensors or not numbers or len(tensors) + len(numbers) != len(items) or len(
            {t.dtype.name for t in tensors}) != 1:
        return None
    dtype = tensors[0].dtype  # (a graph value standing for a number: a loop counter)
    return dtype if all(_code_of(x, dtype) is not None for x in numbers) else None


def paths_kind(a, b):
    """`TensorItems` where one of two branch (or loop-carried) values is an array of tensor
    items and the other an array of Python numbers or a list of numbers and tensors that
    such an array holds; None otherwise."""
    for x, y in ((a, b), (b, a)):
        if not (is_variable(x) and x.is_array and holds_tensor_items(x)):
            continue
        if is_variable(y) and y.is_array and (_numbers_array(y) or holds_tensor_items(y) and
                                                y.dtype != x.dtype or _tensors_array(y) and
                                                y.dtype == x.dtype):
            return TensorItems(x.dtype)
        if isinstance(y, list) and all(type(v) in (bool, int, float) or is_tensor_item(v)
                                       for v in y):
            return TensorItems(x.dtype)
    return None


def made(v, kind: TensorItems):
    """`v` (a list, or an array of Python numbers) as an array of tensor items."""
    if isinstance(v, list):
        return tensor_items_array(v, kind.dtype)
    if is_variable(v) and v.is_array:
        return converted(v, kind.dtype)
    return v


def items_sum(array, start):
    """`sum(out, start)` of a list of Python numbers and tensors (None where `array` is no
    such list or `start` no Python number): as eager's left-to-right sum, a tensor of the
    array's dtype on the runs where the list holds one, else the Python number (the sum of
    the numbers at Python's precision, `number_when`)."""
    if not (is_variable(array) and array.is_array and holds_tensor_items(array)) or type(
            start) not in (bool, int, float) or array.dtype.name == "bool":
        return None
    items = array_pack(array, items=True)
    values, tensors = items[:, 0], items[:, 1] == 1
    out = rt.sum(values) + rt.full([], start, array.dtype)
    wide = "float64" if array.dtype.is_floating else "int64"
    number = rt.sum(rt.cast(values, wide)) + rt.full([], start, wide)
    number.python_scalar = True
    if type(start) is not number_type(array.dtype):  # (empty: eager's sum is `start`)
        _raise_when(rt.static.array_length(array) == 0, TypeError(
            f"sum() of a list of Python numbers and tensors whose length a tensor decides is "
            f"empty here, so eager code returns the {type(start).__name__} start "
            f"{start!r}, where the list's numbers are {number_type(array.dtype).__name__}s: "
            f"one program cannot return both. Give sum() a start of that type "
            f"(`sum(out, {number_type(array.dtype)(start)!r})`)"))
    if array.dtype.is_floating and type(start) is not float:  # (ints beside the tensors:
        _raise_when(rt.logical_not(rt.any(items[:, 1] <= 1)), TypeError(  # `INT_CODE`)
            "sum() of a list holding Python numbers and tensors whose length a tensor decides "
            "holds Python ints or bools only here (no tensor, no float), so eager code "
            "returns an int, where the list's numbers are floats on other runs: one program "
            "cannot return both. Give sum() a float start (`sum(out, 0.0)`)"))
    out.number_when = rt.logical_not(rt.any(tensors))
    out.number_value = number
    return out


def _raise_when(test, exc, depth: int = 3) -> None:
    """Raise `exc` (its message naming the user's line) when the program runs and `test`
    holds."""
    src = user_origin(depth)
    exc.args = (f"{exc.args[0]} ({where(src)})",)

    def fail():
        raise_error(exc, at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros([], "bool")

    rt.static.nn.cond(test, fail, lambda: rt.zeros([], "bool"))


def is_either(x) -> bool:
    """A 0-d value that is a Python number on some runs and a tensor of a dtype an array of
    tensor items takes on others (the first item of a list a graph loop makes)."""
    return _number_or_tensor(x) and not tuple(x.shape) and x.dtype.name in TENSOR_ITEM_DTYPES \
        and x.number_value.dtype.name == _WIDE[number_type(x.dtype)]


def refuse_use(array, what: str) -> None:
    """`what` (`count()`, `sorted()`, `max()`) of a list of Python numbers and tensors: its
    items compared as eager compares them would give each its own type, which d2s does not
    do; refused at the user's line (no-op for any other value)."""
    if not (is_variable(array) and array.is_array and holds_tensor_items(array)):
        return
    src = user_origin(3)
    raise ConversionError(
        f"{what} of a list holding Python {number_type(array.dtype).__name__}s and tensors "
        f"of {array.dtype.name} whose length a tensor decides ({where(src)}): d2s reads such "
        "a list item by item only (indexing, `for`, `pop`, `len`, `sum`). Start the list with "
        f"a tensor (`[rt.to_tensor(0.0)]` for `[0.0]`) to make it a list of tensors.",
        origin=src)


def _all_tensors(flags, what: str) -> None:
    """`ITEMS_CHECK`: raise eager's TypeError when the program runs where an item of a list
    of Python numbers and tensors that `what` (`stack()`) takes is a Python number."""
    _raise_when(rt.logical_not(rt.all(flags == 1)), TypeError(
        f"{what} of a list holding Python numbers and tensors whose length a tensor decides: "
        "an item is a Python number on this run, and eager's stack takes tensors only"))


ITEMS_CHECK[0] = _all_tensors


def _foreign_read(code, dtype) -> None:
    """`FOREIGN_CHECK`: an item read from a list of Python numbers and tensors of `dtype` is
    a Python int or bool there beside float tensors (or a bool beside int64 ones) on this
    run: the read gives the dtype's number type, so eager's type is refused (at the line
    of the read) on those runs."""
    kind = number_type(dtype).__name__
    _raise_when(code >= INT_CODE, TypeError(
        f"an item read from a list holding Python numbers and tensors of {dtype.name} "
        f"whose length a tensor decides is a Python int or bool on this run (beside "
        f"{kind}s and tensors): d2s reads such items as {kind}s, where eager code keeps "
        f"each item's type. Append `{kind}(v)` or a tensor "
        f"(`rt.to_tensor(v, dtype='{dtype.name}')`), or keep such numbers in a separate list; "
        "returning the list, `len` and `sum` of it keep eager's types"), depth=5)


FOREIGN_CHECK[0] = _foreign_read
ITEM_OF[0] = item_of
NUMBER_INTO_TENSORS[0] = number_into_tensors
