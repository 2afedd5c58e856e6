"""`sum()` of a tensor array (a list whose length is decided when the program runs: a
comprehension or loop filtered by a tensor, a list appended to under a tensor `if`), for
`builtins.sum_`: the sum of its items plus `start`, and where it is empty, eager's `start`
itself (a Python number start: a value that is that number on those runs, `number_or_tensor`;
a tensor start of the result's shape: the start; of another shape: a TypeError naming the
line, one program value having one shape)."""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor
from runtime.dtypes import convert_dtype, promote
from runtime.ops.array_number_kinds import holds_number_kinds
from runtime.ops.arrays import holds_python_numbers
from runtime.ops.combine import refuse_rows
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from . import branch_dtypes, number_or_tensor, str_arrays
from .exceptions import short_name
from .float_sum import graph_float_sum
from .number_pairs import pairs_sum
from .tensor_items import items_sum
from .variables import is_variable, user_origin, where


def array_sum(iterable, start):
    """`sum(iterable, start)` of the tensor array `iterable` (see the module)."""
    refuse_rows(iterable, "sum()")
    arr = str_arrays.not_strs(iterable, "sum()")
    if (mixed := items_sum(arr, start)) is not None:
        return mixed  # (Python numbers and tensors)
    if holds_number_kinds(arr) and type(start) in (bool, int, float):
        return pairs_sum(arr, start)  # (Python numbers of several types: each its own)
    shape = [d if d >= 0 else 1 for d in (arr._static_shape or ())]
    dtype = "int64" if arr.dtype == rt.bool else arr.dtype  # (Python's sum of bools: an int)
    tensor_start = is_variable(start) or is_tensor(start)
    # an empty array's sum is `start` itself: a value of the result's kind only when adding
    # the items changes neither its shape nor its dtype
    same = tensor_start and _keeps_shape(list(start.shape), list(arr._static_shape or ())) \
        and promote(convert_dtype(start.dtype), convert_dtype(arr.dtype)) == \
        convert_dtype(start.dtype)
    src = user_origin()
    if getattr(arr, "mixed_numbers", False) and not getattr(arr, "float_if_filled", False) \
            and type(start) in (int, bool):
        raise ConversionError(
            f"sum() ({where(src)}) of a list of Python numbers that a loop or if whose "
            "condition is a tensor grows, holding ints beside floats: Python gives an int "
            "where the items left are ints only and a float otherwise, which only the run "
            "decides. Give sum() a float start, `sum(items, 0.0)`, or append floats only "
            "(`float(v)`).", src)
    in_order = holds_python_numbers(arr) and arr.dtype.is_floating and not shape and type(
        start) in (int, float)

    def total():
        if in_order:  # Python's own order (and compensation, from 3.12): so the program's
            return graph_float_sum(arr, start, _ints_at(src) if getattr(
                arr, "mixed_numbers", False) else None)
        out = rt.sum(rt.static.array_stack(arr), axis=0)
        return start + out if tensor_start else (
            out if isinstance(start, int) and start == 0 else out + start)

    # a Python number start of a list of tensors: eager's `start` itself where the run's
    # list is empty, a tensor on the other runs (`number_or_tensor`: the call gives the
    # number where `number_when` holds)
    number_start = not tensor_start and type(start) in (bool, int, float) and not getattr(
        arr, "python_items", False) and not holds_python_numbers(arr)

    def empty():
        if same:
            return rt.assign(start) if is_tensor(start) and not is_variable(start) else start
        if getattr(arr, "python_items", False) and isinstance(start, (int, float)):
            # a list of Python numbers grown by the program: Python's `start` itself
            return rt.full([], start, dtype)
        if number_start:
            return start  # (`cond` makes it a value of the items' dtype)

        if not tensor_start:
            _raise_when_run(start, tensor_start, shape, arr, src)
        out = rt.zeros(shape, dtype)  # never read: the op above raises, or the call gives
        return out + start if tensor_start else out  # the start (`start_where_empty`)

    out = rt.static.nn.cond(rt.static.array_length(arr) > 0, total, empty)
    if tensor_start and not same:  # (returned: the start where the list is empty)
        return branch_dtypes.start_where_empty(out, start, rt.static.array_length(
            arr) == 0, _empty_error(start, True, shape, arr, src), src)
    if number_start and not same:
        out.number_when = rt.static.array_length(arr) == 0
        out.number_value = rt.full([], start, number_or_tensor.WIDE_NUMBER[
            number_or_tensor.number_rank(start)])
        out.number_value.python_scalar = True
        return out
    numbers = holds_python_numbers(arr)
    if numbers and isinstance(start, (int, float)):
        out.python_scalar = True  # the sum of Python numbers: a Python number, as eagerly
        if type(start) is int and arr.dtype.is_floating:  # (an empty list: the int start)
            out.float_when = rt.static.array_length(arr) > 0
            out.float_arrays = (arr,)
    return out


def _raise_when_run(start, tensor_start: bool, shape: list, arr, src) -> None:
    """The op that raises eager's difference where the list is empty and `start` is no number
    and not a tensor of the sum's shape."""
    raise_error(_empty_error(start, tensor_start, shape, arr, src),
                at=f"{short_name(src.filename)}:{src.lineno}" if src else "")


def _empty_error(start, tensor_start: bool, shape: list, arr, src) -> TypeError:
    """What using the sum raises where the list is empty (`_raise_when_run`)."""
    kind = f"{type(start).__name__} {start!r}" if not tensor_start else \
        f"start tensor of shape {list(start.shape)} and dtype {start.dtype}"
    return TypeError(
        f"sum() ({where(src)}) of a list whose length is decided when the program runs "
        f"(a comprehension or loop filtered by a tensor) got no item: eager Python "
        f"returns the start value here ({kind}), a tensor of shape {shape} and dtype "
        f"{arr.dtype} on other inputs, and one program cannot return both. Give sum() a "
        "tensor start value of the result's shape, e.g. `sum(items, rt.zeros([...]))`, "
        "or keep every item and mask it (rt.where).")


def _ints_at(src) -> tuple:
    """What the program raises where a `sum()` of Python ints beside floats would depend on
    which items were ints (`float_sum.graph_float_sum`), and the line."""
    message = (f"sum() ({where(src)}) of a list of Python numbers that a loop or if whose "
               "condition is a tensor grows, holding ints beside floats: from Python 3.12 "
               "sum() compensates the rounding of adding a float but not of adding an int, the "
               "program keeps the ints as floats (an int 2 and a float 2.0 look alike), and here "
               "an addition rounded whose compensation depends on which items were ints, so the "
               "last bit of eager's result does too. Append floats only (`float(v)`), or keep "
               "the ints in a separate list.")
    return message, f"{short_name(src.filename)}:{src.lineno}" if src else ""


def _keeps_shape(start: list, item: list) -> bool:
    """Whether broadcasting `item` onto `start` leaves `start`'s shape (-1: unknown)."""
    if len(item) > len(start):
        return False
    for a, b in zip(reversed(start), reversed(item)):
        if b != 1 and (a != b or a < 0):
            return False
    return True
