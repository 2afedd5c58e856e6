"""Lists that become tensor arrays at a tensor `if` or loop: which paths of the two branch
(or loop-carried) values are lists of different lengths, or a list beside an array, and the
dtype each array takes; and a value with the list at such a path made an array.

Used by `control_flow.py` (`if`), `loops.py`, `loop_initial.py` and the mutation logs.
"""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor as _is_tensor
from runtime.dtypes import convert_dtype
from runtime.ops.array_number_kinds import holds_number_kinds, holds_strs
from runtime.ops.arrays import as_pairs

from .lists import (
    PYTHON_ITEM_DTYPES,
    StructArray,
    empty_struct_array,
    is_structure,
    number_pairs,
    struct_array,
)
from .str_arrays import STRS, all_strs, str_array
from .tensor_items import TensorItems, items_dtype, made, paths_kind
from .variables import is_variable


def _tensors_of_one_type(items) -> object:
    """The dtype of a list of tensors of one dtype and rank, else None."""
    if not all(is_variable(x) or _is_tensor(x) for x in items):
        return None
    if len({str(x.dtype) for x in items}) != 1 or len({len(x.shape) for x in items}) != 1:
        return None
    return items[0].dtype if items else None


def array_paths(a, b, path):
    """Paths (keys into nested tuples / lists / dicts) where one branch value is a list and
    the other a tensor array, or both lists of tensors of different lengths."""
    like = _struct_like(a, b)  # lists of tuples / dicts of tensors (`lists.py`)
    if like is not None:
        yield path, ("struct", like)
        return
    mixed = paths_kind(a, b)  # (Python numbers and tensors: `tensor_items`)
    if mixed is not None:
        yield path, mixed
        return
    a_arr = is_variable(a) and a.is_array
    b_arr = is_variable(b) and b.is_array
    if a_arr and b_arr and _number_arrays_differ(a, b):
        yield path, NUMBER_KINDS  # (ints in one branch's array, floats in the other's)
        return
    if b_arr and _listed(a, b) or a_arr and _listed(b, a):
        lst, arr = (a, b) if b_arr and _listed(a, b) else (b, a)
        if holds_strs(arr):  # (a list of strs beside one made an array)
            if not lst or all_strs(lst):
                yield path, STRS
            return
        if getattr(arr, "python_items", False) and lst and all(
                _number_kind(x) is not None for x in lst) and (holds_number_kinds(arr) or len(
                    _kinds(lst) | {_array_kind(arr)}) > 1):
            yield path, NUMBER_KINDS
            return
        if all((is_variable(x) or _is_tensor(x)) and x.dtype == arr.dtype for x in lst) or (
                all(_number_kind(x) is not None for x in lst) and (  # Python numbers
                    getattr(arr, "python_items", False) or all(
                        PYTHON_ITEM_DTYPES[_number_kind(x)] == arr.dtype.name for x in lst))):
            yield path, arr.dtype
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
        if all_strs(a + b):  # (ids into the table of the strs the trace saw)
            yield path, STRS
            return
        dtype = _tensors_of_one_type(a + b) or _numbers_of_one_type(a + b) or \
            _numbers_beside_chosen_ones(a + b) or _numbers_of_types(a + b) or _mixed(a + b)
        if dtype is not None:
            yield path, dtype
        return
    if isinstance(a, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b)):
            yield from array_paths(x, y, path + (k,))
    elif isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            yield from array_paths(a[k], b[k], path + (k,))


def _listed(v, other) -> bool:
    """Whether `v` is a list beside the array `other`, or a tuple beside a tuple of one
    (`out = ()` in one branch, `out = tuple(kept)` of an array in the other)."""
    return isinstance(v, list) or type(v) is tuple and is_variable(other) and getattr(
        other, "_d2s_tuple", False)


def _numbers_of_one_type(items):
    """The array dtype of a list of Python numbers of one type (`PYTHON_ITEM_DTYPES`), else
    None (a bool beside a float would not stay a bool in one array)."""
    kinds = {x.__class__ for x in items}
    return PYTHON_ITEM_DTYPES[kinds.pop()] if len(kinds) == 1 and next(
        iter(kinds)) in PYTHON_ITEM_DTYPES else None


def _number_kind(x):
    """The Python type of a number, or of the number a graph value stands for (0-d, a number
    a tensor `if` chose: `Variable.python_scalar`); None for anything else."""
    if type(x) in (bool, int, float):
        return type(x)
    if not (is_variable(x) and getattr(x, "python_scalar", False)) or x.is_array or x.shape:
        return None
    if x.dtype.name == "bool":
        return bool
    return float if x.dtype.is_floating else int


def _numbers_beside_chosen_ones(items):
    """The dtype of the graph values among Python numbers of one type that stand for
    numbers of that type (`nums.append(1.5)` and `nums.append(-0.25)` in the two branches
    of an inner tensor `if`), else None."""
    if len({_number_kind(x) for x in items}) != 1 or _number_kind(items[0]) is None:
        return None
    if _number_kind(items[0]) is float:  # (eager's floats: exact in float64 only)
        return PYTHON_ITEM_DTYPES[float]
    dtypes = {x.dtype.name: x.dtype for x in items if is_variable(x)}
    return next(iter(dtypes.values())) if len(dtypes) == 1 else None


# ... holding Python numbers of several types, each as a `[value, kind]` pair
# (`runtime/ops/array_number_kinds.py`)
NUMBER_KINDS = "number kinds"


def _mixed(items):
    dtype = items_dtype(items)  # (Python numbers and 0-d tensors: `tensor_items`)
    return None if dtype is None else TensorItems(dtype)


def _kinds(items) -> set:
    """The Python types of numbers (and of values standing for them; "run" for one whose
    type the run decides: `float_when`, `bool_when`)."""
    return {"run" if is_variable(x) and (x.float_when is not None or x.bool_when is not None)
            else _number_kind(x) for x in items}


def _array_kind(array):
    """The Python type of the numbers an array of them holds ("pairs": each its own)."""
    if holds_number_kinds(array):
        return "pairs"
    return bool if array.dtype.name == "bool" else float if array.dtype.is_floating else int


def _number_arrays_differ(a, b) -> bool:
    """Two arrays of Python numbers held differently: of two types, or one as pairs."""
    return all(getattr(v, "python_items", False) for v in (a, b)) and (
        _array_kind(a) != _array_kind(b))


def _numbers_of_types(items):
    """`NUMBER_KINDS` for a list of Python numbers of several types (or whose types the run
    decides), else None."""
    kinds = _kinds(items)
    return NUMBER_KINDS if items and None not in kinds and (len(kinds) > 1 or "run" in kinds) \
        else None


def _number_as(x, dtype):
    """An item of a list made an array of `dtype`: a Python number, or a graph value standing
    for one (`float(t)` of a float32 `t` in a float64 array of Python floats), in that dtype;
    anything else as it is."""
    if type(x) in (int, float, bool):
        return rt.full([], x, dtype)
    if is_variable(x) and _number_kind(x) is not None and x.dtype != convert_dtype(dtype):
        return rt.cast(x, dtype)
    return x


def _struct_like(a, b):
    """An item (or array) showing the element structure when branch values `a` and `b` are a
    list of structures and a StructArray, or two such lists of different lengths; else None."""
    if isinstance(a, list) and isinstance(b, StructArray):
        return b
    if isinstance(b, list) and isinstance(a, StructArray):
        return a
    if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
        return next((x for x in a + b if is_structure(x)), None)
    return None


def array_at(v, path, dtype):
    """`v` with the list at `path` as a tensor array (of `dtype`)."""
    if not path:
        if isinstance(dtype, TensorItems):
            return made(v, dtype)
        if dtype == STRS:
            return str_array(list(v)) if isinstance(v, (list, tuple)) else v
        if dtype == NUMBER_KINDS:  # (numbers of several types: each its own)
            return number_pairs(list(v)) if isinstance(v, list) else as_pairs(v) if \
                is_variable(v) and v.is_array else v
        if isinstance(v, list) and isinstance(dtype, tuple):  # ("struct", an item or array)
            like = dtype[1]
            return struct_array(v) if v else like.empty() if isinstance(
                like, StructArray) else empty_struct_array(like)
        if isinstance(v, list) or type(v) is tuple:  # (a tuple: beside `tuple(array)`)
            items = list(v)
            if any(is_variable(x) for x in v):  # (numbers beside graph values standing for
                items = [_number_as(x, dtype) for x in v]  # ones)
            array = rt.static.create_array(dtype, initialized_list=items)
            array._d2s_tuple = type(v) is tuple
            if v and all(_number_kind(x) is not None for x in v):
                array.python_items = True  # (a list of Python numbers: `sum` of it empty)
                kinds = {_number_kind(x) for x in v}  # (ints beside floats: `sum_`)
                array.mixed_numbers = array.dtype.is_floating and bool(kinds & {int, bool})
                array.keeps_float = array.float_if_filled = float in kinds
            return array
        return v
    key, rest = path[0], path[1:]
    if isinstance(v, dict) and key in v:
        return {k: (array_at(x, rest, dtype) if k == key else x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and isinstance(key, int) and key < len(v):
        items = [array_at(x, rest, dtype) if k == key else x for k, x in enumerate(v)]
        return type(v)(items) if type(v) in (list, tuple) or isinstance(
            v, StructArray) else type(v)(*items)  # (a namedtuple's fields)
    return v
