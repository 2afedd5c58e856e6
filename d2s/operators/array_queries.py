"""`lst.count(v)` and `lst.index(v)` of a list the program grows (appended in a graph loop, or
by one branch of a tensor `if`: a tensor array), and the items compared, which `sorted(lst)`
and `lst.sort()` order (`struct_queries`, which also sorts and searches lists of tuples).

The items are compared when the program runs, as eager code compares them one by one: the
array's items stacked (`array_pack`) against the value. Items are Python numbers (compared
as Python compares them: `1 == 1.0 == True`) or tensors of one element each (whose `==` and
`<` eager code takes the truth of). `count` and `index` give a 0-d int64 standing for the
Python int; `index` of a value not in the list raises eager's ValueError when the program
runs. `sorted` gives a new array (stable, `reverse=True` too, as Python's sort); an array of
Python numbers of several types keeps each item's type (its `[value, kind]` pairs move
together). Items of other kinds (structures, vectors) are refused at the user's line.

    lengths.count(0)  ->  sum(cast(pack(lengths) == 0, int64))
    lengths.index(2)  ->  argmax(pack(lengths) == 2), or ValueError when none is
    sorted(lengths)   ->  the rows of pack(lengths)[argsort(values)], as an array
"""
from __future__ import annotations

import sys

import numpy as np

import runtime as rt
from runtime.ops.array_number_kinds import holds_number_kinds, holds_strs
from runtime.ops.arrays import array_pack, array_written, holds_python_numbers
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from . import str_arrays, tensor_items
from .exceptions import short_name
from .variables import is_variable, user_origin, where

_NUMBERS = (bool, int, float)
# what an array keeps of its items that a sorted copy keeps too (d2s's marks on it)
_MARKS = ("python_items", "mixed_numbers", "number_sums", "keeps_float", "float_if_filled")


def array_query(array, method: str):
    """`array.<method>` for `count` and `index` of a tensor array (not of structures; `sort`:
    `struct_queries`)."""
    src = user_origin()
    _items(array, method, src)  # (refused at the user's line before the call)
    if method == "count":
        return lambda value: _count(array, value, src)
    return lambda value, start=0, stop=sys.maxsize: _index(array, value, start, stop, src)


def _count(array, value, src):
    return count_of(_equal(array, value, src))


def count_of(equal):
    """`count`: how many items are equal (a bool [n]), a value standing for a Python int."""
    return _python_int(rt.sum(rt.cast(equal, "int64")))


def _index(array, value, start, stop, src):
    return index_of(_equal(array, value, src), rt.static.array_length(array), value, start,
                    stop, src)


def index_of(equal, n, value, start, stop, src):
    """`index`: the first position in [start, stop) of the `n` items where `equal` (a bool
    [n]) holds; eager's ValueError when the program runs where none does."""
    positions = rt.arange(0, n, 1, "int64")
    inside = rt.logical_and(positions >= _bound(start, n), positions < _bound(stop, n))
    found = rt.logical_and(equal, inside)

    def first():
        return rt.argmax(rt.cast(found, "int32"))

    def missing():
        raise_error(ValueError(f"{_shown(value)} is not in list"),
                    at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros([], "int64")  # never read: the op above raises

    return _python_int(rt.static.nn.cond(rt.any(found), first, missing))


def _bound(i, n):
    """A slice bound of `list.index` (a Python int or an integer tensor) as Python reads it:
    negative from the end, then clamped to [0, n]."""
    if isinstance(i, bool) or not (isinstance(i, int) or is_variable(i) or rt.is_tensor(i)):
        raise TypeError("slice indices must be integers or have an __index__ method")
    if isinstance(i, int):
        i = min(max(i, -(2 ** 62)), 2 ** 62)
    i = rt.cast(rt.reshape(rt.to_tensor(i) if isinstance(i, int) else i, []), "int64")
    return rt.clip(rt.where(i < 0, i + n, i), 0, None)


def _equal(array, value, src, method="compare"):
    """Whether each item equals `value`, as eager code's `==` decides it, a bool [n]."""
    if holds_strs(array):  # (ids of strs: `str_arrays`)
        return str_arrays.ids_equal(array, value)
    values = _items(array, method, src)
    numbers = holds_python_numbers(array)
    if isinstance(value, _NUMBERS):
        if numbers:
            return rt.cast(values, "float64") == rt.full([], float(value), "float64")
        return values == value
    if is_variable(value) or rt.is_tensor(value):
        if value.size not in (1, -1) or value.ndim > 1:
            raise ConversionError(
                f"looking for a tensor of shape {list(value.shape)} in a list whose length "
                f"depends on a tensor ({where(src)}): eager code takes the truth of an "
                "element-wise comparison, which a tensor of several elements has none of. "
                "Look for one number (a 0-d tensor).", origin=src)
        one = rt.reshape(value, [])
        if numbers or getattr(value, "python_scalar", False):
            return rt.cast(values, "float64") == rt.cast(one, "float64")
        return values == one
    if numbers:  # (None, a string: a number equals none of them)
        return rt.zeros_like(values, "bool")
    raise ConversionError(
        f"looking for a {type(value).__name__} in a list of tensors whose length depends on a "
        f"tensor ({where(src)}): only numbers and one-element tensors are compared with its "
        "items.", origin=src)


def _items(array, method: str, src):
    """The items of `array` as a [n] tensor of the values compared (a pair's value; a
    one-element tensor's element); anything else is refused at the user's line."""
    tensor_items.refuse_use(array, f"{method}()")
    if holds_number_kinds(array):
        return array_pack(array)[:, 0]
    shape = tuple(getattr(array, "_static_shape", None) or ())
    if -1 not in shape and int(np.prod(shape, dtype=np.int64)) == 1:
        return rt.reshape(array_pack(array), [-1])
    if all(d in (1, -1) for d in shape):  # (one element each, or the run says otherwise)
        return _one_each(array_pack(array), shape, src)
    raise ConversionError(
        f"{method}() of a list of tensors of shape {list(shape)} whose length depends on a "
        f"tensor ({where(src)}): its items are compared when the program runs, and eager "
        "code takes the truth of an element-wise comparison, which a tensor of several "
        "elements has none of. Compare as tensors: `rt.stack(lst) == v`, rt.sort / "
        "rt.argsort of rt.stack(lst).", origin=src)


def _one_each(rows, shape, src):
    """The items `rows` (stacked; of a size the run decides) as one element each; an item of
    several raises eager's ValueError (`bool()` of it) when the program runs."""
    n = rt.shape(rows)[0]

    def several():
        raise_error(ValueError(
            f"bool() of a tensor with shape {list(shape)} is ambiguous: only one-element "
            "tensors convert to Python bool. Use .any() or .all() for a truth value."),
            at=f"{short_name(src.filename)}:{src.lineno}" if src else "")

    rt.static.nn.cond(rt.numel(rows) != n, several, lambda: None)
    return rt.reshape(rows, [-1])


def _array_of_rows(rows, like):
    """A new tensor array whose items are the rows of `rows` (a graph loop writes them), of
    `like`'s element type and marks."""
    out = rt.static.create_array(like.dtype)
    out._static_shape = tuple(like._static_shape)
    _mark(out, like)
    n = rt.shape(rows)[0]

    def more(i, arr):
        return i < n

    def write(i, arr):
        _mark(arr, like)
        return [i + 1, array_written(rows[i], i, arr)]

    _, out = rt.static.nn.while_loop(more, write, [rt.zeros([], "int64"), out])
    _mark(out, like)
    return out


def _mark(array, like):
    for name in _MARKS:
        if hasattr(like, name):
            setattr(array, name, getattr(like, name))


def _python_int(out):
    out = rt.cast(out, "int64")
    out.stop_gradient = True
    out.python_scalar = True
    return out


def _shown(value) -> str:
    if isinstance(value, (tuple, list, dict)):  # (an item of a list of tuples)
        return f"the {type(value).__name__}"
    return repr(value) if isinstance(value, _NUMBERS) or value is None or isinstance(
        value, str) else "the tensor"
